"""Constraints of a multibody system: the protocol, joints, drivers and velocity-level (nonholonomic) constraints."""
from .base import Constraint, ConstraintError, Ground
from .driving import AngleDriver, CoordinateDriver
from .nonholonomic import KnifeEdge, VelocityConstraint
from .mean_axis import MeanAxisConditions
from .joints import (Cylindrical, Distance, Fixed, Joint, PointOnLine, Prismatic, Revolute, Screw, Spherical,
                     Translational, Universal)
from .gears import GearPair, RackPinion
from .planar import PlanarPrismatic, PlanarRevolute
from .prescribed import PrescribedFrame

__all__ = ["Constraint", "ConstraintError", "Ground", "Joint", "Spherical", "Revolute", "Cylindrical",
           "Prismatic", "Translational", "Fixed", "PointOnLine", "Distance", "CoordinateDriver", "AngleDriver",
           "PlanarRevolute", "PlanarPrismatic", "PrescribedFrame", "VelocityConstraint", "KnifeEdge",
           "MeanAxisConditions", "Universal", "GearPair", "RackPinion", "Screw", "JointLimit", "JointFriction"]


def __getattr__(name: str):
    """`JointLimit` and `JointFriction` (flexmbs.constraints.limits), imported on first use: they are
    force elements (`flexmbs.forces`), which imports this package's base module, so importing them
    here at once would make the two packages import each other."""
    if name in ("JointLimit", "JointFriction"):
        from . import limits
        return getattr(limits, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
