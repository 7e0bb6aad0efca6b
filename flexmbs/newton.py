"""The one Newton loop of flexmbs.

.. code:: text

    x_{k+1} = x_k - dx_k,     J(x_k) dx_k = r(x_k)      (solve(x_k, r_k) returns dx_k)

Stopping rule: converged as soon as ``norm(r) <= tol``.  The iteration also stops when the
step is at the round-off of x (``max|dx| <= step_tol (1 + max|x|)``: quadratic convergence has
stalled) or after ``max_iter`` steps; it then returns if ``norm(r) <= accept`` (default ``tol``)
and raises `NewtonError` otherwise.  A non-finite residual raises at once.  The caller
supplies ``solve``, so the same loop serves square systems (LU), minimum-norm steps (least
squares on an underdetermined Jacobian) and factorizations reused across iterations.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["NewtonError", "newton", "max_norm"]

_EPS = np.finfo(float).eps


class NewtonError(ArithmeticError):
    """Newton's method did not converge.

    Attributes: ``x`` (last iterate), ``residual`` (its residual), ``residual_norm``,
    ``iterations``, ``name`` (what was being solved).
    """

    def __init__(self, message: str, x=None, residual=None, residual_norm: float = np.nan,
                 iterations: int = 0, name: str = "Newton"):
        super().__init__(message)
        self.x, self.residual, self.residual_norm = x, residual, residual_norm
        self.iterations, self.name = iterations, name


def max_norm(r) -> float:
    """max |r_i| (0 for an empty vector)."""
    r = np.asarray(r)
    return float(np.max(np.abs(r))) if r.size else 0.0


def newton(residual: Callable, solve: Callable, x0, *, tol: float, max_iter: int = 30,
           norm: Callable = max_norm, accept: float | None = None, step_tol: float = 4.0 * _EPS,
           name: str = "Newton", hint: str = "") -> tuple[np.ndarray, int]:
    """Solve residual(x) = 0 by Newton's method; return (x, number of steps taken).

    Parameters
    ----------
    residual : callable x -> r
    solve : callable (x, r) -> dx
        The Newton step for J(x) dx = r (the update is x - dx).  It may raise its own error
        (e.g. a singular Jacobian) which propagates unchanged.
    x0 : array
        Starting point (copied).
    tol : float
        Target: stop as soon as ``norm(r) <= tol``.
    max_iter : int
        Steps before `NewtonError`.
    norm : callable r -> float
        Residual norm (default max |r_i|).
    accept : float, optional
        Largest residual accepted when the iteration stalls at round-off or reaches
        ``max_iter`` (default ``tol``).
    step_tol : float
        A step with max|dx| <= step_tol (1 + max|x|) counts as stalled.
    name, hint : str
        What is solved and what to change, both put in the `NewtonError` message.
    """
    accept = tol if accept is None else accept
    x = np.array(x0, dtype=float)
    r = residual(x)
    rn = norm(r)
    k = 0
    while True:
        if rn <= tol:
            return x, k
        if not np.isfinite(rn):
            break
        if k >= max_iter:
            if rn <= accept:
                return x, k
            break
        dx = solve(x, r)
        x = x - dx
        k += 1
        r = residual(x)
        rn = norm(r)
        if np.max(np.abs(dx), initial=0.0) <= step_tol * (1.0 + np.max(np.abs(x), initial=0.0)):
            if rn <= accept:
                return x, k
            break
    why = ("the residual is not finite" if not np.isfinite(rn) else
           f"the residual norm is {rn:.3g} > {accept:.3g} after {k} iterations")
    raise NewtonError(f"{name} did not converge: {why}" + (f"; {hint}" if hint else ""),
                      x=x, residual=r, residual_norm=rn, iterations=k, name=name)
