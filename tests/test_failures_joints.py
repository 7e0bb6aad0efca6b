"""Bad input to the screw joint, the joint limits and the joint friction (issue 26, item 2;
flexmbs/constraints/joints.py, flexmbs/constraints/limits.py): each row is (what is given, the
message it now prints)."""
import numpy as np
import pytest

from flexmbs.bodies import RigidBody2D, RigidBodyEP
from flexmbs.constraints import JointFriction, JointLimit, Revolute, Screw, Spherical
from flexmbs.constraints.planar import PlanarPrismatic

A = RigidBodyEP("a", 1.0, np.eye(3) * 0.1)
PIN = Revolute(None, A, axis=(0, 0, 1), name="pin")
SLIDE = PlanarPrismatic(None, RigidBody2D("b", 1.0, 0.1), axis=(1.0, 0.0), name="slide")

ROWS = [
    (lambda: Screw(None, A, axis=(0, 0, 1), pitch=0.0),
     "joint 'Screw(ground, a)': `pitch` must be a finite nonzero number (the sliding per turn [m]; negative for a "
     "left-handed screw), got 0.0"),
    (lambda: Screw(None, A, axis=(0, 0, 1), pitch="fine"),
     "joint 'Screw(ground, a)': `pitch` must be a finite nonzero number (the sliding per turn [m]; negative for a "
     "left-handed screw), got 'fine'"),
    (lambda: Screw(None, A, axis=(0, 0, 1), pitch=np.inf),
     "joint 'Screw(ground, a)': `pitch` must be a finite nonzero number"),
    (lambda: Screw(None, A, pitch=0.1),
     "joint 'Screw(ground, a)': Screw needs `axis` (a global direction), got None"),
    (lambda: JointLimit(Spherical(None, A), lower=-1.0, stiffness=1e4),
     "JointLimit: `joint` must be a Revolute, Prismatic, PlanarRevolute or PlanarPrismatic joint (one free "
     "coordinate), got Spherical('Spherical(ground, a)': ground, 'a') (Spherical)"),
    (lambda: JointLimit(PIN, stiffness=1e4),
     "JointLimit 'JointLimit(pin)': give `lower`, `upper` or both (the stops' positions of the joint's coordinate "
     "[rad]), got neither"),
    (lambda: JointLimit(SLIDE, lower=0.2, stiffness=1e4),
     "JointLimit 'JointLimit(slide)': the start (coordinate 0) must lie between the stops, got lower = 0.2, "
     "upper = None [m]"),
    (lambda: JointLimit(PIN, upper=4.0, stiffness=1e4),
     "JointLimit 'JointLimit(pin)': a revolute joint's stops must lie within half a turn of the start, -pi < "
     "lower, upper < pi (its angle is measured in (-pi, pi]), got lower = None, upper = 4.0"),
    (lambda: JointLimit(PIN, upper="far", stiffness=1e4),
     "JointLimit 'JointLimit(pin)': `upper` must be a number, got 'far' (str)"),
    (lambda: JointLimit(PIN, upper=np.nan, stiffness=1e4),
     "JointLimit 'JointLimit(pin)': `upper` must be finite, got nan"),
    (lambda: JointLimit(PIN, upper=1.0, stiffness=0.0),
     "JointLimit 'JointLimit(pin)': `stiffness` must be a finite number > 0, got 0.0"),
    (lambda: JointLimit(PIN, upper=1.0, stiffness=1e4, restitution=1.5),
     "JointLimit 'JointLimit(pin)': `restitution` must be a finite number >= 0 and <= 1, got 1.5"),
    (lambda: JointLimit(PIN, upper=1.0, stiffness=1e4, exponent=0.5),
     "JointLimit 'JointLimit(pin)': `exponent` must be a finite number >= 1, got 0.5"),
    (lambda: JointLimit(PIN, upper=1.0, stiffness=1e4, transition_speed=-1.0),
     "JointLimit 'JointLimit(pin)': `transition_speed` must be a finite number > 0, got -1.0"),
    (lambda: JointFriction(PIN, -0.1),
     "JointFriction 'JointFriction(pin)': `friction` must be a finite number > 0, got -0.1"),
    (lambda: JointFriction(PIN, 0.1, creep_speed=None),
     "JointFriction 'JointFriction(pin)': `creep_speed` must be a number, got None (NoneType)"),
    (lambda: JointFriction("pin", 0.1),
     "JointFriction: `joint` must be a Revolute, Prismatic, PlanarRevolute or PlanarPrismatic joint (one free "
     "coordinate), got 'pin' (str)"),
]


@pytest.mark.parametrize("call, message", ROWS, ids=[m[:60] for _, m in ROWS])
def test_bad_input_is_refused_with_a_message_naming_it(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert str(err.value).startswith(message), str(err.value)
