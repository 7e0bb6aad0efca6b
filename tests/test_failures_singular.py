"""A singular saddle-point matrix stops the index-1 augmented formulation with a message that
names the matrix, the time and its reciprocal condition number below the limit.

The number is cut, not rounded, to four significant digits: the first stage inside the window
when DOP853 crawls towards IFToMM A02's singular position (docs/iftomm.md) has a value just
below the limit 1e-13, which read "1e-13 < 1e-13" with "{:.3g}" and "1.000e-13" with "{:.3e}".
"""
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs.formulations.augmented import rounded_down, solve_saddle_point
from flexmbs.formulations.index1 import Index1
from flexmbs.formulations.stabilization import RedundantConstraintError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import double_four_bar  # noqa: E402


def a02_at_the_horizontal():
    """Every crank of the double four-bar horizontal (phi = pi/2): C_q loses rank."""
    system, *_ = double_four_bar.build()
    Index1(system, solver="augmented").accelerations(1.22816, *double_four_bar.branch_state(np.pi / 2, 3.0))


def just_below_the_limit():
    """[[M, C_q^T], [C_q, 0]] with M = diag(1, s), C_q = [1, 0]: ||A||_1 = 2, ||A^-1||_1 = 1/s, so the
    reciprocal condition number is s / 2 = 9.9999e-14, just below the default limit 1e-13."""
    solve_saddle_point(np.diag([1.0, 2 * 9.9999e-14]), np.zeros(2), np.array([[1.0, 0.0]]), np.zeros(1), t=0.5)


SINGULAR = [
    ("A02 at the horizontal", a02_at_the_horizontal,
     r"The saddle-point matrix \[\[M, C_q\^T\], \[C_q, 0\]\] of the augmented formulation is singular at "
     r"t = 1\.22816 \(reciprocal condition number \d\.\d{3}e-\d+, below the limit 1e-13\): the constraint "
     r"Jacobian C_q has dependent rows \(redundant constraints, or a singular configuration\)"),
    ("just below the limit", just_below_the_limit,
     r"singular at t = 0\.5 \(reciprocal condition number 9\.999e-14, below the limit 1e-13\)"),
]


@pytest.mark.parametrize("call, message", [row[1:] for row in SINGULAR], ids=[row[0] for row in SINGULAR])
def test_a_singular_saddle_point_matrix_is_named(call, message):
    with pytest.raises(RedundantConstraintError, match=message):
        call()


@pytest.mark.parametrize("x, text", [(9.99996e-14, "9.999e-14"), (1e-13, "1.000e-13"), (0.375, "3.750e-01"),
                                     (123456.0, "1.234e+05"), (0.0, "0.000e+00"), (float("nan"), "nan")])
def test_a_number_below_a_limit_is_printed_below_it(x, text):
    """Cut toward zero (Python's Decimal of the exact binary value), never rounded up."""
    assert rounded_down(x) == text
