"""The one Newton loop: convergence, stall acceptance, errors that say what happened."""
import numpy as np
import pytest

from flexmbs.newton import NewtonError, newton


def test_quadratic_convergence_on_a_square_system():
    f = lambda x: np.array([x[0] ** 2 + x[1] ** 2 - 4.0, x[0] - x[1]])
    J = lambda x: np.array([[2 * x[0], 2 * x[1]], [1.0, -1.0]])
    x, n = newton(f, lambda x, r: np.linalg.solve(J(x), r), [1.0, 0.5], tol=1e-14)
    assert np.allclose(x, [np.sqrt(2), np.sqrt(2)], atol=1e-15) and n <= 7


def test_stalled_iteration_is_accepted_within_accept():
    """A residual that cannot go below ~1e-10 (a constant offset): accepted with accept, not without."""
    f = lambda x: np.array([x[0] - 1.0 + 1e-10 * np.sign(x[0] - 1.0 + 1e-300)])
    solve = lambda x, r: np.array([x[0] - 1.0])            # steps straight to x = 1, then dx = 0
    x, _ = newton(f, solve, [3.0], tol=1e-14, accept=1e-9)
    assert abs(x[0] - 1.0) < 1e-15
    with pytest.raises(NewtonError, match="did not converge"):
        newton(f, solve, [3.0], tol=1e-14)


def test_failure_names_the_problem_and_keeps_the_last_iterate():
    f = lambda x: np.array([x[0] ** 2 + 1.0])               # no real root
    with pytest.raises(NewtonError, match=r"circle solve did not converge.*move the start") as err:
        newton(f, lambda x, r: np.array([r[0] / (2 * x[0])]), [0.5], tol=1e-12, max_iter=20,
               name="circle solve", hint="move the start")
    assert err.value.iterations == 20 and np.isfinite(err.value.residual_norm) and err.value.x.shape == (1,)
    with pytest.raises(NewtonError, match="not finite"):
        newton(lambda x: np.array([np.nan]), lambda x, r: r, [0.0], tol=1e-12)
