"""`flexmbs.constraints.reaction_blocks.least_squares`: a square B (a rigid body's 7 coordinates
against [F; T; mu]) solved by one batched inverse (`square_solve`), the others by QR, the
ill-conditioned ones by the pseudo-inverse: each path against numpy's lstsq output by output."""
import numpy as np
import pytest

from flexmbs.constraints.reaction_blocks import least_squares, qr_least_squares, square_solve


def lstsq_rows(B, Q):
    """The reference: numpy's lstsq (SVD, rcond eps max(m, k)) output by output."""
    cut = np.finfo(float).eps * max(B.shape[1:])
    return np.array([np.linalg.lstsq(b, q, rcond=cut)[0] for b, q in zip(B, Q)])


@pytest.mark.parametrize("m", [7, 31])
def test_well_conditioned_rows_equal_lstsq(m):
    rng = np.random.default_rng(1)
    B = rng.standard_normal((50, m, 7)) + 3.0 * np.eye(m, 7)
    Q = rng.standard_normal((50, m))
    np.testing.assert_allclose(least_squares(B, Q), lstsq_rows(B, Q), rtol=0, atol=1e-11)
    np.testing.assert_allclose(least_squares(B, Q), qr_least_squares(B, Q), rtol=0, atol=1e-11)


def test_square_rows_singular_or_ill_conditioned_take_the_minimum_norm_solution():
    """Rows 1 (a repeated column: singular) and 2 (cond 1e12) are not inverted: the pseudo-inverse's
    minimum-norm solution, as lstsq gives; the well-conditioned rows are solved exactly."""
    rng = np.random.default_rng(2)
    B = rng.standard_normal((4, 7, 7)) + 3.0 * np.eye(7)
    B[1, :, 6] = B[1, :, 5]
    B[2, :, 6] = B[2, :, 5] * (1.0 + 1e-12)
    Q = rng.standard_normal((4, 7))
    x = np.empty((4, 7))
    assert square_solve(B, Q, x).tolist() == [False, False, False, False]     # B[1] is exactly singular
    good = square_solve(B[[0, 2, 3]], Q[[0, 2, 3]], x[:3])
    assert good.tolist() == [True, False, True]
    ref = lstsq_rows(B, Q)
    got = least_squares(B, Q)
    np.testing.assert_allclose(got[[0, 3]], ref[[0, 3]], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got[1], ref[1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(B[0] @ got[0], Q[0], rtol=0, atol=1e-12)
