"""Bad inputs of the histories batched in the thirteenth round (issue 22, item 1): a user's force law that
declares ``vectorized``, a controller's held output read at an array of times.  Rows (call, message)."""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.bodies import RigidBodyEP
from flexmbs.control import ControlError, Output
from flexmbs.forces import ForceLaw
from flexmbs.user_functions import UserFunctionError


def vectorized(f):
    f.vectorized = True
    return f


def law_rows(law):
    """``law`` (declared vectorized) of a ForceLaw between two bodies, its power at 5 rows."""
    a = RigidBodyEP("a", 1.0, np.eye(3))
    b = RigidBodyEP("b", 1.0, np.eye(3), position=(1.0, 0.0, 0.0))
    f = ForceLaw(a, (0, 0, 0), b, (0, 0, 0), law, name="law")
    q = np.tile(np.concatenate([a.initial_coordinates(), b.initial_coordinates()]), (5, 1))
    q[:, 7] += np.linspace(0.0, 0.4, 5)
    t = np.linspace(0.0, 0.4, 5)
    return f.power_history(t, [q[:, :7], q[:, 7:]], [np.ones((5, 7)), np.ones((5, 7))])


def one_force_a_row(t, d, d_dot):
    """A 'vectorized' law that returns one force whatever it is given."""
    return np.zeros(3)


def nan_late(t, d, d_dot):
    """Finite at one state and at t < 0.25, NaN after."""
    return np.where(np.asarray(t)[..., None] > 0.25, np.nan, -d)


def idle():
    return Output("u")


def held():
    u = Output("u")
    u._start(None, 0.01)
    u._hold(0.0, 1.0)
    return u


CASES = [
    ("a vectorized law returning one force for all rows", lambda: law_rows(vectorized(one_force_a_row)), ValueError,
     r"ForceLaw 'law': `law` declares `vectorized` and must return forces of shape \(5, 3\) \(one of shape \(3,\) "
     r"at each of the 5 times\), got shape \(3,\)"),
    ("a vectorized law giving NaN from t = 0.3", lambda: law_rows(vectorized(nan_late)), UserFunctionError,
     r"ForceLaw 'law': its law gave NaN or inf at t = 0\.3;"),
    ("a vectorized law that raises", lambda: law_rows(vectorized(lambda t, d, dd: 1 / 0 if np.ndim(t) else -d)),
     UserFunctionError, r"ForceLaw 'law': its law \(vectorized, at 5 times\) raised ZeroDivisionError at t = 0"),
    ("an Output read at an array of times outside a run", lambda: idle()(np.array([0.0, 0.1])), ControlError,
     r"control output 'u' is read at t = 0\.1 outside a controlled run \(no Controller has sampled it\)"),
    ("an Output read at an array of times reaching beyond its hold", lambda: held()(np.array([0.0, 0.05])),
     ControlError, r"control output 'u' is read at t = 0\.05, beyond its hold interval \(0, 0\.01\]"),
]


@pytest.mark.parametrize("what, call, error, message", CASES, ids=[c[0] for c in CASES])
def test_failure_messages(what, call, error, message):
    with pytest.raises(error, match=message):
        call()
