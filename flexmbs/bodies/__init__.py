"""Bodies of a multibody system: the protocol, rigid bodies in two coordinate systems, flexible bodies
in the floating frame of reference."""
from .base import Body, RigidBody
from .flexible import FlexibleBody, Node
from .natural import NaturalRigidity, RigidBodyNatural
from .rigid import EulerParameterNorm, RigidBodyEP

__all__ = ["Body", "RigidBody", "RigidBodyEP", "RigidBodyNatural", "EulerParameterNorm", "NaturalRigidity",
           "FlexibleBody", "Node"]
