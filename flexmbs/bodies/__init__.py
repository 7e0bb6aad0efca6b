"""Bodies of a multibody system: the protocol, rigid bodies in two coordinate systems, point masses,
planar rigid bodies, flexible bodies in the floating frame of reference, corotational beams, tree bodies.

Each public name is imported from its module at its first use (`flexmbs.lazy.lazy_package`): a
System of rigid bodies loads neither the flexible bodies nor the corotational beams."""

from ..lazy import lazy_package

# public name -> the module it comes from (a name equal to its module's last part is the module)
_PUBLIC = {
    "Body": "flexmbs.bodies.base", "RigidBody": "flexmbs.bodies.base",
    "CorotationalBeam2D": "flexmbs.bodies.corotational", "CorotationalBeam3D": "flexmbs.bodies.corotational",
    "FlexibleBody": "flexmbs.bodies.flexible", "Interface": "flexmbs.bodies.flexible", "Node": "flexmbs.bodies.flexible",
    "NaturalRigidity": "flexmbs.bodies.natural", "RigidBodyNatural": "flexmbs.bodies.natural",
    "RigidBody2D": "flexmbs.bodies.planar", "PointMass": "flexmbs.bodies.point",
    "EulerParameterNorm": "flexmbs.bodies.rigid", "RigidBodyEP": "flexmbs.bodies.rigid",
    "TreeBody": "flexmbs.bodies.tree", "TreeJoint": "flexmbs.bodies.tree", "TreePart": "flexmbs.bodies.tree",
    "loads": "flexmbs.bodies.loads",
}

__all__ = ["Body", "RigidBody", "RigidBodyEP", "RigidBodyNatural", "EulerParameterNorm", "NaturalRigidity", "PointMass",
           "RigidBody2D", "loads", "FlexibleBody", "Node", "Interface", "CorotationalBeam2D", "CorotationalBeam3D",
           "TreeBody", "TreeJoint", "TreePart"]

__getattr__, __dir__ = lazy_package(__name__, _PUBLIC)
