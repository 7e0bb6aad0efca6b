"""Finite elements, one module each; all share the interface of `base.Element`."""
from .base import Element, InertiaIntegrals, MassPoints, Material, SBlock, inertia_from_points
from .bar2 import Bar2
from .beam2d import BeamEB2D
from .beam3d import BeamEB3D
from .lagrange import LagrangeElement, isotropic_H, plane_stress_H
from .tri3 import Tri3
from .quad4 import Quad4
from .tet4 import Tet4
from .tet10 import Tet10
from .hex8 import Hex8
from .plate import PlateMITC4

__all__ = ["Element", "InertiaIntegrals", "MassPoints", "Material", "SBlock", "inertia_from_points",
           "Bar2", "BeamEB2D", "BeamEB3D", "LagrangeElement", "Tri3", "Quad4", "Tet4", "Tet10", "Hex8", "PlateMITC4",
           "isotropic_H", "plane_stress_H"]
