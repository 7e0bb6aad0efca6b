"""Bodies of a multibody system: the protocol, rigid bodies in two coordinate systems."""
from .base import Body, RigidBody
from .natural import NaturalRigidity, RigidBodyNatural
from .planar import RigidBody2D
from .rigid import EulerParameterNorm, RigidBodyEP

__all__ = ["Body", "RigidBody", "RigidBodyEP", "RigidBodyNatural", "EulerParameterNorm", "NaturalRigidity", "RigidBody2D"]
