"""Bodies of a multibody system: the protocol, rigid bodies in two coordinate systems, point masses, tree bodies."""
from . import loads
from .base import Body, RigidBody
from .natural import NaturalRigidity, RigidBodyNatural
from .point import PointMass
from .rigid import EulerParameterNorm, RigidBodyEP
from .tree import TreeBody, TreeJoint, TreePart

__all__ = ["Body", "RigidBody", "RigidBodyEP", "RigidBodyNatural", "EulerParameterNorm", "NaturalRigidity", "PointMass",
           "loads", "TreeBody", "TreeJoint", "TreePart"]
