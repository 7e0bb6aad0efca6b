"""Bodies of a multibody system: the protocol, rigid bodies in two coordinate systems, point masses."""
from .base import Body, RigidBody
from .natural import NaturalRigidity, RigidBodyNatural
from .point import PointMass
from .rigid import EulerParameterNorm, RigidBodyEP
from .tree import TreeBody, TreeJoint, TreePart

__all__ = ["Body", "RigidBody", "RigidBodyEP", "RigidBodyNatural", "EulerParameterNorm", "NaturalRigidity", "PointMass",
           "TreeBody", "TreeJoint", "TreePart"]
