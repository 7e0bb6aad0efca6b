"""Bad input to the screw joint, the joint limits and the joint friction (issue 26, item 2;
flexmbs/constraints/joints.py, flexmbs/constraints/limits.py): each row is (what is given, the
message it now prints)."""
import numpy as np
import pytest

from flexmbs.bodies import RigidBodyEP
from flexmbs.constraints import Screw

A = RigidBodyEP("a", 1.0, np.eye(3) * 0.1)

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
]


@pytest.mark.parametrize("call, message", ROWS, ids=[m[:60] for _, m in ROWS])
def test_bad_input_is_refused_with_a_message_naming_it(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert str(err.value).startswith(message), str(err.value)
