"""Constraints of a multibody system: the protocol, joints, drivers and velocity-level (nonholonomic) constraints.

Each public name is imported from its module at its first use (`flexmbs.lazy.lazy_package`): a run
that reads a driver's law (`flexmbs.constraints.base`) or a System with revolute joints loads
neither the gears, the planar joints nor the tree bodies of the nonholonomic constraints.
`JointLimit` and `JointFriction` (`flexmbs.constraints.limits`) are force elements
(`flexmbs.forces`, which imports this package's base module) and load the same way."""
from ..lazy import lazy_package

# public name -> the module it comes from
_PUBLIC = {
    "Constraint": "flexmbs.constraints.base", "ConstraintError": "flexmbs.constraints.base",
    "Ground": "flexmbs.constraints.base",
    "AngleDriver": "flexmbs.constraints.driving", "CoordinateDriver": "flexmbs.constraints.driving",
    "KnifeEdge": "flexmbs.constraints.nonholonomic", "VelocityConstraint": "flexmbs.constraints.nonholonomic",
    "MeanAxisConditions": "flexmbs.constraints.mean_axis",
    **{name: "flexmbs.constraints.joints" for name in ("Cylindrical", "Distance", "Fixed", "Joint", "PointOnLine",
                                                       "Prismatic", "Revolute", "Screw", "Spherical", "Translational",
                                                       "Universal")},
    "GearPair": "flexmbs.constraints.gears", "RackPinion": "flexmbs.constraints.gears",
    "PlanarPrismatic": "flexmbs.constraints.planar", "PlanarRevolute": "flexmbs.constraints.planar",
    "PrescribedFrame": "flexmbs.constraints.prescribed",
    "JointLimit": "flexmbs.constraints.limits", "JointFriction": "flexmbs.constraints.limits",
}

__all__ = ["Constraint", "ConstraintError", "Ground", "Joint", "Spherical", "Revolute", "Cylindrical",
           "Prismatic", "Translational", "Fixed", "PointOnLine", "Distance", "CoordinateDriver", "AngleDriver",
           "PlanarRevolute", "PlanarPrismatic", "PrescribedFrame", "VelocityConstraint", "KnifeEdge",
           "MeanAxisConditions", "Universal", "GearPair", "RackPinion", "Screw", "JointLimit", "JointFriction"]

__getattr__, __dir__ = lazy_package(__name__, _PUBLIC)
