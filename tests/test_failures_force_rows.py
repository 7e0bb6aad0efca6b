"""Bad input of `System.force_history` (issue 22, item 1): rows (description/call, message it now prints)."""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import PointMass


def system() -> fm.System:
    """One point mass under gravity: n_q = 3."""
    return fm.System([PointMass("m", 1.0, position=(0.0, 0.0, 0.0))], [], gravity=(0.0, 0.0, -9.81))


ROWS = [
    ("q one row without the rows axis", lambda s: s.force_history([0.0], np.zeros(3), np.zeros((1, 3))),
     r"System.force_history: `q` must be an array \(1, 3\): one row of n_q = 3 numbers at each of the 1 times `t`, "
     r"got shape \(3,\)"),
    ("v of the wrong width", lambda s: s.force_history([0.0, 1.0], np.zeros((2, 3)), np.zeros((2, 4))),
     r"System.force_history: `v` must be an array \(2, 3\): one row of n_q = 3 numbers at each of the 2 times "
     r"`t`, got shape \(2, 4\)"),
    ("fewer times than rows", lambda s: s.force_history([0.0], np.zeros((2, 3)), np.zeros((2, 3))),
     r"`q` must be an array \(1, 3\).*got shape \(2, 3\)"),
    ("times that are not numbers", lambda s: s.force_history("soon", np.zeros((1, 3)), np.zeros((1, 3))),
     r"System.force_history: `t` must be the times, a vector of numbers, got 'soon'"),
    ("q of text", lambda s: s.force_history([0.0], [["a", "b", "c"]], np.zeros((1, 3))),
     r"System.force_history: `q` must be an array \(1, 3\) of numbers, got \[\['a', 'b', 'c'\]\]"),
]


@pytest.mark.parametrize("what, call, message", ROWS, ids=[r[0] for r in ROWS])
def test_force_history_bad_input_names_the_argument(what, call, message):
    with pytest.raises(ValueError, match=message):
        call(system())


def test_force_history_of_a_point_mass_is_its_weight_on_every_row():
    """Q = m g on every row (closed form: a point mass has no quadratic-velocity forces)."""
    Q = system().force_history([0.0, 1.0], np.ones((2, 3)), np.ones((2, 3)))
    np.testing.assert_array_equal(Q, [[0.0, 0.0, -9.81]] * 2)
