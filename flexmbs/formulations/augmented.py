"""Augmented formulation (AF): accelerations and multipliers from the saddle-point system.

The index-1 equations of a constrained system (docs/constrained_dynamics.md, eqs. (1)-(3))

.. code:: text

    M(q) q'' + C_q^T lam = Q(t, q, q')            Q = Q_e + Q_v
    C_q q'' = gamma_s                             gamma_s = gamma - 2 alpha C' - beta^2 C

are one linear system for (q'', lam) [1]_:

.. code:: text

    [ M    C_q^T ] [ q'' ]   [ Q       ]
    [ C_q  0     ] [ lam ] = [ gamma_s ]

It is nonsingular if and only if C_q has full row rank and M is positive definite on the
null space of C_q; M itself may be singular.  That is the case of rigid bodies in Euler
parameters (RPCF-EP): M_pp = 4 G^T J G has the null vector p, and the normalisation row
2 p^T of C_q takes it out of the null space of C_q.  The matrix is factorised by LAPACK's
LU with partial pivoting (``getrf``); its reciprocal condition number (``gecon``, 1-norm)
is checked, so that redundant constraints or a singular configuration (C_q rank-deficient)
raise a `RedundantConstraintError` instead of returning garbage: redundant constraints need
the Udwadia-Kalaba solver (`flexmbs.formulations.udwadia_kalaba`) or coordinate partitioning.

``alpha, beta = 0`` (no Baumgarte terms) is the pure index-1 system.

References
----------
.. [1] C. M. Pappalardo, D. Guida, On the computational methods for solving the
       differential-algebraic equations of motion of multibody systems, Machines 6 (2018) 20,
       eqs. (24)-(27), doi:10.3390/machines6020020.
.. [2] J. Baumgarte, Stabilization of constraints and integrals of motion in dynamical
       systems, Comput. Methods Appl. Mech. Eng. 1 (1972) 1-16.
"""
from __future__ import annotations

import numpy as np

from ..lapack import lapack
from ..lazy import LazyModule
from .stabilization import RedundantConstraintError, stabilized_gamma

__all__ = ["accelerations", "solve_saddle_point", "saddle_point_history", "solve_block_saddle_point",
           "uses_block_mass", "rounded_down", "RCOND_MIN", "HISTORY_MARGIN", "BLOCK_SADDLE_MIN"]

sparse = LazyModule("scipy.sparse")

RCOND_MIN = 1e-13       # below: the saddle-point matrix is singular to working precision
HISTORY_MARGIN = 1e4     # `saddle_point_history` solves one at a time the matrices whose estimate is within it of RCOND_MIN
BLOCK_SADDLE_MIN = 200   # n_q + n_c from which a constrained system's saddle point is solved sparse (`uses_block_mass`)


def splu(A):
    """SuperLU factors of the sparse matrix A (scipy.sparse.linalg loads at its first use)."""
    from scipy.sparse.linalg import splu as factor
    return factor(A)


def rounded_down(x: float, digits: int = 4) -> str:
    """``x`` >= 0 in e-notation, cut (not rounded) to ``digits`` significant digits of its exact
    binary value.

    A number just below a limit then never reads as the limit: 9.99996e-14 prints 9.999e-14,
    where "{:.3e}" gives 1.000e-13 (the first stage inside the window around IFToMM A02's
    singular position, docs/iftomm.md).
    """
    if not np.isfinite(x) or x <= 0.0:
        return f"{x:.{digits - 1}e}"
    from decimal import ROUND_DOWN, Decimal          # here: a run that prints no such number does not load it
    exact = Decimal(float(x))
    exponent = exact.adjusted()
    mantissa = exact.scaleb(-exponent).quantize(Decimal(10) ** (1 - digits), rounding=ROUND_DOWN)
    return f"{mantissa}e{exponent:+03d}"


def accelerations(system, t: float, q: np.ndarray, v: np.ndarray, alpha: float = 0.0,
                  beta: float = 0.0, rcond_min: float = RCOND_MIN) -> tuple[np.ndarray, np.ndarray]:
    """Accelerations q'' and multipliers lam of ``system`` at (t, q, v) by the augmented formulation.

    Parameters
    ----------
    system : flexmbs.System
        Anything with ``mass_matrix(q)``, ``forces(t, q, v)``, ``jacobian(t, q)``,
        ``gamma(t, q, v)`` (and ``residual``, ``time_derivative`` when alpha or beta is
        nonzero).
    t, q, v : float, ndarray (n_q,), ndarray (n_q,)
        Time, coordinates, velocities (v = q').
    alpha, beta : float
        Baumgarte coefficients [1/s] of gamma_s = gamma - 2 alpha C' - beta^2 C (0: none).
    rcond_min : float
        Smallest reciprocal condition number accepted for the saddle-point matrix.

    Returns
    -------
    qdd : ndarray (n_q,)
    lam : ndarray (n_c,)
        Multipliers; the generalized constraint forces are ``-C_q^T lam``.

    Raises
    ------
    RedundantConstraintError
        If the saddle-point matrix is singular (redundant constraints, or a configuration
        where C_q loses rank).
    """
    Q = system.forces(t, q, v)
    Cq = system.jacobian(t, q)
    gamma = stabilized_gamma(system, t, q, v, Cq, alpha, beta)
    if uses_block_mass(system):
        return solve_block_saddle_point(system.mass_blocks(q), Q, Cq, gamma, rcond_min=rcond_min, t=t)
    return solve_saddle_point(system.mass_matrix(q), Q, Cq, gamma, rcond_min=rcond_min, t=t)


def uses_block_mass(system) -> bool:
    """True when the accelerations are solved with the bodies' mass blocks (`solve_block_saddle_point`),
    False for the dense saddle-point matrix (`solve_saddle_point`).

    The one place that decides, for a system that gives its blocks (``mass_blocks``: every
    `flexmbs.System`):

    - no constraints (n_c = 0): always the blocks, q'' = M^-1 Q body by body (4 to 7 us for 10 to 300
      point masses, against 0.07 to 35 ms for the dense LU);
    - with constraints: the sparse saddle point from n_q + n_c >= `BLOCK_SADDLE_MIN` on; below, the
      dense LU of the (n_q + n_c) matrix costs less than scipy's SuperLU (a fixed cost of about
      0.5 ms: 0.09 ms against 0.48 ms for a chain of 2 rigid bodies, 0.31 against 0.80 ms for 10,
      equal at 20 (n_q + n_c = 220), 5.5 against 1.5 ms for 40), and it keeps LAPACK's condition
      estimate.

    Measured by benchmarks/bench_contact_spheres.py ``--crossover`` (docs/benchmarks.md,
    section 27).
    """
    if not hasattr(system, "mass_blocks"):
        return False
    return system.n_c == 0 or system.n_q + system.n_c >= BLOCK_SADDLE_MIN


def solve_block_saddle_point(blocks, Q: np.ndarray, Cq: np.ndarray, gamma: np.ndarray,
                             rcond_min: float = RCOND_MIN, t: float | None = None
                             ) -> tuple[np.ndarray, np.ndarray]:
    """(q'', lam) of ``[[M, C_q^T], [C_q, 0]] [q''; lam] = [Q; gamma]`` without a dense M.

    ``blocks`` is M as a `flexmbs.block_mass.BlockMass`.  Without constraints (n_c = 0) q'' = M^-1 Q
    by the blocks, batched over the bodies of one kind (`BlockMass.solve`).  With constraints the
    saddle-point matrix is assembled sparse (the blocks' entries and those of C_q) and factorised
    by one sparse LU (SuperLU, `scipy.sparse.linalg.splu`): M may be singular where C_q takes its
    null space out (Euler parameters), which a Schur complement C_q M^-1 C_q^T could not take.
    Singularity: an exactly singular factor, or a ratio min|U_ii| / max|U_ii| of the LU's pivots
    below ``rcond_min`` (a cheaper indicator than LAPACK's 1-norm estimate of `solve_saddle_point`,
    the same order for these matrices), raises `RedundantConstraintError`.
    """
    n, m = blocks.n, Cq.shape[0]
    if m == 0:
        return blocks.solve(Q), np.zeros(0)
    r, c, values = blocks.sparse_triplets()
    ci, cj = np.nonzero(Cq)
    cv = Cq[ci, cj]
    A = sparse.csc_array((np.concatenate([values, cv, cv]),
                          (np.concatenate([r, n + ci, cj]), np.concatenate([c, cj, n + ci]))), shape=(n + m, n + m))
    try:
        lu = splu(A)
        pivots = np.abs(lu.U.diagonal())
        rcond = float(pivots.min() / pivots.max())
    except RuntimeError:                         # SuperLU: "Factor is exactly singular"
        lu, rcond = None, 0.0
    if not rcond >= rcond_min:
        raise _singular(rcond, rcond_min, t, "ratio of the sparse LU's smallest to largest pivot")
    x = lu.solve(np.concatenate([Q, gamma]))
    return x[:n], x[n:]


def _singular(rcond: float, rcond_min: float, t: float | None, measure: str) -> RedundantConstraintError:
    """The error of a singular saddle-point matrix, with its ``measure`` of the condition ``rcond``."""
    where = "" if t is None else f" at t = {t:.6g}"
    return RedundantConstraintError(
        f"The saddle-point matrix [[M, C_q^T], [C_q, 0]] of the augmented formulation is singular"
        f"{where} ({measure} {rounded_down(rcond)}, below the limit {rcond_min:g}): "
        "the constraint Jacobian C_q has dependent rows (redundant constraints, or a singular configuration), "
        "or M is not positive definite on its null space. See System.mobility for the redundant "
        "constraints; use solver='udwadia-kalaba' (pseudo-inverse) or remove them.")


def solve_saddle_point(M: np.ndarray, Q: np.ndarray, Cq: np.ndarray, gamma: np.ndarray,
                       rcond_min: float = RCOND_MIN, t: float | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
    """(q'', lam) from ``[[M, C_q^T], [C_q, 0]] [q''; lam] = [Q; gamma]`` by LAPACK LU.

    Raises `RedundantConstraintError` when the reciprocal condition number of the matrix is
    below ``rcond_min``.
    """
    n, m = M.shape[0], Cq.shape[0]
    A = np.empty((n + m, n + m))
    A[:n, :n] = M
    A[:n, n:] = Cq.T
    A[n:, :n] = Cq
    A[n:, n:] = 0.0
    b = np.concatenate([Q, gamma])
    getrf, getrs, gecon, lange = lapack(("getrf", "getrs", "gecon", "lange"), A)
    anorm = lange("1", A)                # the 1-norm, max_j sum_i |A_ij|, of the matrix factorised
    lu, piv, info = getrf(A, overwrite_a=True)
    rcond = 0.0 if info > 0 else gecon(lu, anorm, norm="1")[0]
    if not rcond >= rcond_min:           # also catches NaN
        raise _singular(rcond, rcond_min, t, "reciprocal condition number")
    x, info = getrs(lu, piv, b, overwrite_b=True)
    return x[:n], x[n:]


def saddle_point_history(M: np.ndarray, Q: np.ndarray, Cq: np.ndarray, gamma: np.ndarray,
                         rcond_min: float = RCOND_MIN, t: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(q'', lam), (N, n) and (N, m), of N stacked systems ``[[M, C_q^T], [C_q, 0]] [q''; lam] = [Q; gamma]``
    (M (N, n, n), Q (N, n), C_q (N, m, n), gamma (N, m)): one `numpy.linalg.solve` on the stacked
    (N, n + m, n + m) matrices, for the multipliers at the outputs of a run.

    The check of `solve_saddle_point` (LAPACK's ``gecon``), which numpy does not give, is begun as ``gecon``
    begins it: the same solve takes a second right-hand side e / (n + m), e the vector of ones, the first
    iterate of the Hager-Higham estimator of ||A^-1||_1 that ``gecon`` refines (LAPACK ``dlacn2``); with the
    solution's own ratio ||x||_1 / ||b||_1 it is a lower bound of ||A^-1||_1, so

    .. code:: text

        rcond_est = 1 / (||A||_1 max(||A^-1 e||_1 / (n + m), ||x||_1 / ||b||_1))  >=  rcond

    The matrices with rcond_est below `HISTORY_MARGIN` times ``rcond_min`` (the first iterate is within a
    factor of the order of n + m of ||A^-1||_1 but for contrived matrices), and all of them when one is exactly
    singular, are solved again one at a time by `solve_saddle_point`, which gives each its value or its
    error (the `RedundantConstraintError` naming the time ``t[k]``): the same as a loop over the outputs."""
    N, n, m = M.shape[0], M.shape[1], Cq.shape[1]
    A = np.zeros((N, n + m, n + m))
    A[:, :n, :n] = M
    A[:, :n, n:] = np.swapaxes(Cq, 1, 2)
    A[:, n:, :n] = Cq
    b = np.empty((N, n + m, 2))
    b[:, :n, 0], b[:, n:, 0], b[:, :, 1] = Q, gamma, 1.0 / (n + m)
    try:
        X = np.linalg.solve(A, b)
        norm_inv = np.maximum(np.abs(X[..., 1]).sum(axis=1),
                              np.abs(X[..., 0]).sum(axis=1) / np.maximum(np.abs(b[..., 0]).sum(axis=1), 1e-300))
        rcond = 1.0 / (np.abs(A).sum(axis=1).max(axis=1) * norm_inv)
    except np.linalg.LinAlgError:           # one of them exactly singular
        X, rcond = np.empty_like(b), np.zeros(N)
    x = X[..., 0]
    for k in np.flatnonzero(~(rcond >= HISTORY_MARGIN * rcond_min)):         # NaN too
        x[k] = np.concatenate(solve_saddle_point(M[k], Q[k], Cq[k], gamma[k], rcond_min,
                                                 None if t is None else float(t[k])))
    return x[:, :n], x[:, n:]
