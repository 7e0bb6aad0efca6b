"""Bad input to the multipliers of all outputs at once (`augmented.saddle_point_history`,
`udwadia_kalaba.udwadia_kalaba_history`): the error of the per-state solve, naming the output's time."""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.formulations.augmented import saddle_point_history
from flexmbs.formulations.stabilization import RedundantConstraintError
from flexmbs.formulations.udwadia_kalaba import udwadia_kalaba_history

T = np.array([0.1, 0.7, 0.9])


def stack(M, Cq, bad=None, at=1):
    """Three copies of (M, Q, C_q, gamma), output ``at`` with M replaced by ``bad``."""
    Ms = np.array([M, M, M])
    if bad is not None:
        Ms[at] = bad
    return Ms, np.ones((3, M.shape[0])), np.array([Cq] * 3), np.zeros((3, Cq.shape[0]))


M2, CQ = np.diag([1.0, 2.0]), np.array([[1.0, 0.0]])


def singular_output():
    """[[M, C_q^T], [C_q, 0]] with M = diag(1, s), C_q = [1, 0] at the second output: rcond = s / 2 = 5e-15."""
    saddle_point_history(*stack(M2, CQ, np.diag([1.0, 1e-14])), t=T)


def exactly_singular_output():
    """M = diag(1, 0) at the second output: the stacked LU fails; each output is solved alone, the second raises."""
    saddle_point_history(*stack(M2, CQ, np.diag([1.0, 0.0])), t=T)


def indefinite_output():
    """M = diag(1, -1) at the third output: M + C_q^T C_q = diag(2, -1) has no Cholesky factor."""
    udwadia_kalaba_history(*stack(M2, CQ, np.diag([1.0, -1.0]), at=2), t=T)


FAILURES = [
    ("saddle point near singular at one output", singular_output, RedundantConstraintError,
     r"is singular at t = 0\.7 \(reciprocal condition number 4\.999e-15, below the limit 1e-13\)"),
    ("saddle point exactly singular at one output", exactly_singular_output, RedundantConstraintError,
     r"is singular at t = 0\.7 \(reciprocal condition number 0\.000e\+00, below the limit 1e-13\)"),
    ("Udwadia-Kalaba: M + C_q^T C_q indefinite at one output", indefinite_output, np.linalg.LinAlgError,
     r"M \+ C_q\^T C_q is not positive definite at t = 0\.9 \(Cholesky failed at column 2\)"),
    ("Udwadia-Kalaba: weight 0", lambda: udwadia_kalaba_history(*stack(M2, CQ), weight=0.0), ValueError,
     r"`weight` of M \+ w C_q\^T C_q must be positive, got 0\.0"),
]


@pytest.mark.parametrize("call, error, message", [row[1:] for row in FAILURES], ids=[row[0] for row in FAILURES])
def test_a_failing_output_is_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_the_other_outputs_are_solved_with_the_stack():
    """Well-conditioned outputs: the stacked solve's values, those of numpy's dense solve of each."""
    qdd, lam = saddle_point_history(*stack(M2, CQ), t=T)
    x = np.linalg.solve(np.array([[1.0, 0, 1], [0, 2, 0], [1, 0, 0]]), [1.0, 1.0, 0.0])
    assert np.allclose(qdd, x[:2], rtol=1e-14, atol=0) and np.allclose(lam[:, 0], x[2], rtol=1e-14, atol=0)
