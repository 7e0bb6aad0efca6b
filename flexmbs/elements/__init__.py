"""Finite elements, one module each; all share the interface of `base.Element`.

Each public name is imported from its module at its first use (`flexmbs.lazy.lazy_package`): a
run of a beam loads neither the solids nor the plate's element (issue 22, start-up)."""

from ..lazy import lazy_package

# public name -> the module it comes from
_PUBLIC = {
    **dict.fromkeys(("Element", "InertiaIntegrals", "MassPoints", "Material", "SBlock", "inertia_from_points"),
                    "flexmbs.elements.base"),
    "Bar2": "flexmbs.elements.bar2", "BeamEB2D": "flexmbs.elements.beam2d", "BeamEB3D": "flexmbs.elements.beam3d",
    **dict.fromkeys(("LagrangeElement", "isotropic_H", "plane_stress_H"), "flexmbs.elements.lagrange"),
    "Tri3": "flexmbs.elements.tri3", "Quad4": "flexmbs.elements.quad4", "Tet4": "flexmbs.elements.tet4",
    "Tet10": "flexmbs.elements.tet10", "Hex8": "flexmbs.elements.hex8", "PlateMITC4": "flexmbs.elements.plate",
}

__all__ = ["Element", "InertiaIntegrals", "MassPoints", "Material", "SBlock", "inertia_from_points",
           "Bar2", "BeamEB2D", "BeamEB3D", "LagrangeElement", "Tri3", "Quad4", "Tet4", "Tet10", "Hex8", "PlateMITC4",
           "isotropic_H", "plane_stress_H"]

__getattr__, __dir__ = lazy_package(__name__, _PUBLIC)
