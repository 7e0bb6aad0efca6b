"""Bad input to `flexmbs.io.paraview.write_system_xdmf` (issue 21, item 5): each row is the call
and the message it now prints (a ValueError/TypeError naming the argument, what was expected and
what was given), and no file is left behind."""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.bodies import PointMass, RigidBody2D
from flexmbs.io.paraview import write_system_xdmf
from flexmbs.system import System


def system():
    return System([RigidBody2D("plate", 1.0, 0.01), PointMass("ball", 0.5, (0.0, 1.0))])


T = np.array([0.0, 0.5])
Q = np.zeros((2, 5))
TRIANGLE = (np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), [("triangle", np.array([[0, 1, 2]]))])

ROWS = [
    ("system is a list", dict(system=[1]), TypeError, "`system` must be a flexmbs.System, got list"),
    ("t is 2-D", dict(t=np.zeros((2, 1))), ValueError, "`t` must be a 1-D array of output times, got shape (2, 1)"),
    ("t has a NaN", dict(t=[0.0, np.nan]), ValueError, "`t` must be finite, got 1 non-finite values"),
    ("q of the state x = (q, v)", dict(q=np.zeros((2, 10))), ValueError,
     "`q` must have shape (len(t), system.n_q) = (2, 5) (the coordinates; of a state x = (q, v) pass "
     "x[:, :system.n_q]), got (2, 10)"),
    ("q with an inf", dict(q=np.array([[0.0] * 5, [np.inf] + [0.0] * 4])), ValueError,
     "`q` has 1 non-finite values (a failed run: pass the outputs before the failure)"),
    ("no outputs", dict(t=np.zeros(0), q=np.zeros((0, 5))), ValueError, "`t` is empty: there is no output to write"),
    ("every = 0", dict(every=0), ValueError, "`every` must be a positive integer, got 0"),
    ("every = 1.5", dict(every=1.5), ValueError, "`every` must be a positive integer, got 1.5"),
    ("shapes is a list", dict(shapes=[TRIANGLE]), TypeError,
     "`shapes` must be a dict {body name: meshio.Mesh or (points, cells)}, got list"),
    ("shape of an unknown body", dict(shapes={"crank": TRIANGLE}), ValueError,
     "`shapes` names no body of the system: ['crank']; bodies: ['plate', 'ball']"),
    ("shape is a string", dict(shapes={"plate": "box"}), TypeError,
     "`shapes['plate']` must be a meshio.Mesh or (points, cells), got str"),
    ("shape points 1-D", dict(shapes={"plate": (np.zeros(3), [("vertex", np.array([[0]]))])}), ValueError,
     "`shapes['plate']`: the points must be a finite (n, 2) or (n, 3) array, got shape (3,)"),
    ("shape cell beyond the points", dict(shapes={"plate": (TRIANGLE[0], {"triangle": np.array([[0, 1, 3]])})}),
     ValueError, "`shapes['plate']`: the 'triangle' cells must be an integer (n, k) array of point indices in "
                 "[0, 2], got int64 (1, 3)"),
    ("shape cells of floats", dict(shapes={"plate": (TRIANGLE[0], [("triangle", np.array([[0.0, 1.0, 2.0]]))])}),
     ValueError, "`shapes['plate']`: the 'triangle' cells must be an integer (n, k) array of point indices in "
                 "[0, 2], got float64 (1, 3)"),
    ("shape without cells", dict(shapes={"plate": (TRIANGLE[0], [])}), ValueError, "`shapes['plate']` has no cells"),
]


@pytest.mark.parametrize("call, kwargs, error, message", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input_message(tmp_path, call, kwargs, error, message):
    args = dict(system=system(), t=T, q=Q, path=tmp_path / "mech.xdmf")
    args.update(kwargs)
    with pytest.raises(error) as info:
        write_system_xdmf(**args)
    assert str(info.value) == message
    assert not list(tmp_path.iterdir())
