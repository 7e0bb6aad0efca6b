"""Bodies of a multibody system: the protocol, rigid bodies in two coordinate systems, point masses,
planar rigid bodies, flexible bodies in the floating frame of reference, corotational beams, tree bodies."""
from . import loads
from .base import Body, RigidBody
from .corotational import CorotationalBeam2D, CorotationalBeam3D
from .flexible import FlexibleBody, Interface, Node
from .natural import NaturalRigidity, RigidBodyNatural
from .planar import RigidBody2D
from .point import PointMass
from .rigid import EulerParameterNorm, RigidBodyEP
from .tree import TreeBody, TreeJoint, TreePart

__all__ = ["Body", "RigidBody", "RigidBodyEP", "RigidBodyNatural", "EulerParameterNorm", "NaturalRigidity", "PointMass",
           "RigidBody2D", "loads", "FlexibleBody", "Node", "Interface", "CorotationalBeam2D", "CorotationalBeam3D",
           "TreeBody", "TreeJoint", "TreePart"]
