"""Constraints of a multibody system: the protocol, joints and drivers."""
from .base import Constraint, ConstraintError, Ground
from .driving import AngleDriver, CoordinateDriver
from .joints import Cylindrical, Distance, Fixed, Joint, PointOnLine, Prismatic, Revolute, Spherical, Translational
from .planar import PlanarPrismatic, PlanarRevolute
from .prescribed import PrescribedFrame

__all__ = ["Constraint", "ConstraintError", "Ground", "Joint", "Spherical", "Revolute", "Cylindrical",
           "Prismatic", "Translational", "Fixed", "PointOnLine", "Distance", "CoordinateDriver", "AngleDriver",
           "PlanarRevolute", "PlanarPrismatic", "PrescribedFrame"]
