"""flexmbs: dynamics of flexible multibody systems by the finite element method.

The data flow: mesh -> elements -> assembly -> model -> formulation -> integrator ->
results -> plots.
"""
__version__ = "0.1.0"

from .mesh import Mesh, MeshError, generate
from .elements import Bar2, BeamEB2D, BeamEB3D, Element, Hex8, Material, Quad4, Tet4, Tet10, Tri3
from .model import DistributedLoad, Model, NodalLoad, SurfaceLoad, rayleigh_coefficients
from . import motion, rotations
from .formulations import FORMULATIONS, GibbsAppell, Hamilton, Lagrange
from .integrators import INTEGRATORS, simulate
from .modal import natural_frequencies, static_solution
from . import reduction
from .reduction import ReducedModel
from .results import Results
from .analysis import run
from .bodies import FlexibleBody, Node, RigidBodyEP, RigidBodyNatural
from .constraints import PrescribedFrame
from .system import System
from . import io, progress
from .io import load_results

__all__ = ["Mesh", "MeshError", "generate", "Element", "Material", "Bar2", "BeamEB2D", "BeamEB3D", "Tri3", "Quad4", "Tet4", "Tet10", "Hex8", "Model",
           "NodalLoad", "DistributedLoad", "SurfaceLoad", "rayleigh_coefficients", "motion", "FORMULATIONS", "Lagrange", "GibbsAppell",
           "Hamilton", "INTEGRATORS", "simulate", "natural_frequencies", "static_solution", "Results",
           "run", "io", "progress", "load_results", "rotations", "System", "RigidBodyEP", "RigidBodyNatural",
           "FlexibleBody", "Node", "PrescribedFrame", "reduction", "ReducedModel", "__version__"]
