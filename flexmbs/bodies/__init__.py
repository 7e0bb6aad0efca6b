"""Bodies of a multibody system: the protocol, rigid bodies in two coordinate systems, point masses,
planar rigid bodies, flexible bodies in the floating frame of reference, tree bodies."""
from . import loads
from .base import Body, RigidBody
from .flexible import FlexibleBody, Node
from .natural import NaturalRigidity, RigidBodyNatural
from .planar import RigidBody2D
from .point import PointMass
from .rigid import EulerParameterNorm, RigidBodyEP
from .tree import TreeBody, TreeJoint, TreePart

__all__ = ["Body", "RigidBody", "RigidBodyEP", "RigidBodyNatural", "EulerParameterNorm", "NaturalRigidity", "PointMass",
           "RigidBody2D", "loads", "FlexibleBody", "Node", "TreeBody", "TreeJoint", "TreePart"]
