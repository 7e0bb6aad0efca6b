"""Constraint stabilisation of the index-1 equations: none, Baumgarte, coordinate partitioning.

Integrating the index-1 equations (C_q q'' = gamma) keeps C'' = 0 only: the position and
velocity violations C and C' = C_q q' + C_t drift (linearly and quadratically in time, from
the integrator's local errors).  Three choices (docs/constrained_dynamics.md):

``none``
    plain index-1 integration; the violations are monitored, not corrected.
``baumgarte`` [1]_
    gamma_s = gamma - 2 alpha C' - beta^2 C replaces gamma, so that the violations obey
    C'' + 2 alpha C' + beta^2 C = 0 (critically damped for alpha = beta) instead of C'' = 0:
    the drift stays bounded, not zero.  A change of the right-hand side only.
``coordinate-partitioning`` (robust generalized coordinate partitioning, RGCP [2]_, [3]_)
    after every accepted step of the integrator (`CoordinatePartitioning.correct`):

    1. partition: LU with full (complete) pivoting of C_q (n_c x n_q) picks r = rank C_q
       pivot columns, the dependent coordinates w, and r pivot rows, the independent
       constraint equations (the other n_c - r rows are redundant and dropped); the other
       n_q - r coordinates u are independent (they keep the integrator's values).  The
       partition is kept while its pivots stay good: at each step the LU with partial
       pivoting of C_w = C_q[rows, w] gives rho = min|U_ii| / max|C_q[rows, :]| (its smallest
       pivot relative to the size of the constraint rows), and the partition is chosen again
       when rho falls below ``repartition_ratio`` times its value at the choice.
    2. positions: Newton-Raphson on the dependent coordinates, C_w(q) dw = -C_rows(q), with u
       fixed.  Stopping rule: one correction is always made (it reuses the LU of step 1 and
       brings a violation delta to O(delta^2), i.e. round-off after a normal step); further
       iterations, each with a new Jacobian, are made while ||C||_inf > tol (1e-9 by
       default) after the last correction, at most ``max_iter`` (when ||C||_inf <= tol before
       the first correction, the residual after it is O(tol^2) and is not evaluated again).
       So the position violation left is round-off after every ordinary step and at most
       ``tol`` after a violent one.
    3. velocities: the dependent velocities from C_w w' = -(C_t + C_u u') at the corrected
       positions (new Jacobian): the velocity violation is round-off.

References
----------
.. [1] J. Baumgarte, Stabilization of constraints and integrals of motion in dynamical
       systems, Comput. Methods Appl. Mech. Eng. 1 (1972) 1-16.
.. [2] R. A. Wehage, E. J. Haug, Generalized coordinate partitioning for dimension reduction
       in analysis of constrained dynamic systems, J. Mech. Des. 104 (1982) 247-255.
.. [3] C. M. Pappalardo, D. Guida, On the computational methods for solving the
       differential-algebraic equations of motion of multibody systems, Machines 6 (2018) 20,
       sec. 4 (RGCP with Newton-Raphson tolerance 1e-9), doi:10.3390/machines6020020.
"""
from __future__ import annotations

import numpy as np

from ..constraints.base import ConstraintError
from ..frozen import FrozenFields
from ..lapack import lapack
from ..newton import newton

__all__ = ["RedundantConstraintError", "stabilized_gamma", "violations", "full_pivot_lu",
           "Partition", "NoStabilization", "Baumgarte", "CoordinatePartitioning", "STABILIZATIONS",
           "make_stabilization"]


class RedundantConstraintError(ConstraintError, ArithmeticError):
    """The constraint Jacobian has dependent rows where the method needs full row rank.

    Also an ArithmeticError, so that an integrator meeting it in a step (a singular
    configuration reached during the motion) stops with status "failed" and keeps its results.
    """


def stabilized_gamma(system, t: float, q: np.ndarray, v: np.ndarray, Cq: np.ndarray,
                     alpha: float = 0.0, beta: float = 0.0, C: np.ndarray | None = None) -> np.ndarray:
    """gamma_s = gamma - 2 alpha (C_q q' + C_t) - beta^2 C  (gamma alone when alpha = beta = 0); C the
    residual at (t, q) when already evaluated (None: ``system.residual``)."""
    gamma = system.gamma(t, q, v)
    if alpha:
        gamma = gamma - 2.0 * alpha * (Cq @ v + system.time_derivative(t, q))
    if beta:
        gamma = gamma - beta * beta * (system.residual(t, q) if C is None else C)
    return gamma


def violations(system, t: float, q: np.ndarray, v: np.ndarray) -> tuple[float, float]:
    """(||C||_2, ||C_q q' + C_t||_2): position and velocity constraint violations."""
    C = system.residual(t, q)
    Cdot = system.jacobian(t, q) @ v + system.time_derivative(t, q)
    return float(np.linalg.norm(C)), float(np.linalg.norm(Cdot))


def full_pivot_lu(A: np.ndarray, rank_rtol: float = 1e-10
                  ) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """Gaussian elimination with complete pivoting of a rectangular A (m x n).

    At elimination step k the entry of largest magnitude of the remaining block is brought
    to (k, k) by a row and a column exchange.  Elimination stops when that entry is below
    ``rank_rtol * max|A|``: the number of steps made is the numerical rank r.

    Returns
    -------
    rows, cols : ndarray (m,), (n,)
        Row and column orders: ``rows[:r]`` are independent rows, ``cols[:r]`` the pivot
        columns (the dependent coordinates when A = C_q).
    r : int
    pivots : ndarray (r,)
        Magnitudes of the pivots.
    """
    A = np.array(A, dtype=float)
    m, n = A.shape
    rows, cols = np.arange(m), np.arange(n)
    scale = np.abs(A).max(initial=0.0)
    pivots = []
    for k in range(min(m, n)):
        block = np.abs(A[k:, k:])
        i, j = np.unravel_index(np.argmax(block), block.shape)
        p = block[i, j]
        if not p > rank_rtol * scale:
            break
        i, j = i + k, j + k
        A[[k, i]] = A[[i, k]]
        rows[[k, i]] = rows[[i, k]]
        A[:, [k, j]] = A[:, [j, k]]
        cols[[k, j]] = cols[[j, k]]
        A[k + 1:, k] /= A[k, k]
        A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])
        pivots.append(p)
    return rows, cols, len(pivots), np.array(pivots)


class Partition(FrozenFields):
    """Dependent coordinates, independent constraint rows and the pivot quality at the choice."""

    # dependent: (r,) coordinate indices w
    # independent: (n_q - r,) coordinate indices u
    # rows: (r,) constraint equations used
    # redundant: (n_c - r,) constraint equations dropped
    # quality: min|U_ii| of LU(C_w) / max|C_q[rows]| at the choice
    def __init__(self, dependent: np.ndarray, independent: np.ndarray, rows: np.ndarray, redundant: np.ndarray,
                 quality: float):
        self._set_fields(locals())

    def dependent_block(self, Cq: np.ndarray) -> np.ndarray:
        """C_w = C_q[rows, dependent] (`used_block`)."""
        return self.used_block(Cq, self.dependent)

    def independent_block(self, Cq: np.ndarray) -> np.ndarray:
        """C_u = C_q[rows, independent] (`used_block`)."""
        return self.used_block(Cq, self.independent)

    def used_block(self, Cq: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """C_q[rows, columns]: the used rows of the given columns (the columns alone, a cheaper copy, when every
        row is used)."""
        if not self.redundant.size:
            return Cq.take(columns, axis=1)
        return Cq[np.ix_(self.rows, columns)]

    def used_rows(self, rows: np.ndarray) -> np.ndarray:
        """The rows of the constraint equations used (``rows`` itself when none is redundant): C[rows] of a
        residual C (n_c,), C_q[rows] of a Jacobian."""
        return rows if not self.redundant.size else rows[self.rows]


class NoStabilization:
    """Plain index-1 integration: violations are monitored, not corrected."""

    name = "none"
    alpha = beta = 0.0

    def correct(self, system, t, q, v):
        return None


class Baumgarte(NoStabilization):
    """Baumgarte terms gamma - 2 alpha C' - beta^2 C in the acceleration equations [1]_.

    Parameters
    ----------
    alpha, beta : float
        Coefficients [1/s], non-negative; alpha = beta is the critically damped choice.
    """

    name = "baumgarte"

    def __init__(self, alpha: float = 10.0, beta: float = 10.0):
        for value, label in ((alpha, "alpha"), (beta, "beta")):
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"Baumgarte `{label}` must be a non-negative number [1/s], got {value!r}.")
        self.alpha, self.beta = float(alpha), float(beta)


class CoordinatePartitioning(NoStabilization):
    """Robust generalized coordinate partitioning after every accepted step (module docstring).

    Parameters
    ----------
    tol : float
        Newton-Raphson tolerance on ||C||_inf (1e-9, as in [3]_).
    max_iter : int
        Newton iterations allowed after the first correction.
    repartition_ratio : float
        The partition is chosen again when the smallest pivot of C_w relative to the constraint
        rows (rho, module docstring) falls below this fraction
        of its value at the choice.
    rank_rtol : float
        Relative pivot threshold of the rank decision in `full_pivot_lu`.

    Attributes
    ----------
    partition : Partition or None
    n_partitions, n_corrections, n_newton : int
        Partitions chosen, corrections made, Newton iterations beyond the first correction.
    """

    name = "coordinate-partitioning"

    def __init__(self, tol: float = 1e-9, max_iter: int = 20, repartition_ratio: float = 0.5,
                 rank_rtol: float = 1e-10):
        if not (np.isfinite(tol) and tol > 0):
            raise ValueError(f"`tol` of the coordinate partitioning must be positive, got {tol!r}.")
        if not 0 < repartition_ratio < 1:
            raise ValueError(f"`repartition_ratio` must lie in (0, 1), got {repartition_ratio!r}.")
        self.tol, self.max_iter = float(tol), int(max_iter)
        self.repartition_ratio, self.rank_rtol = float(repartition_ratio), float(rank_rtol)
        self.partition: Partition | None = None
        self.n_partitions = self.n_corrections = self.n_newton = 0

    def choose(self, Cq: np.ndarray) -> Partition:
        """A new partition from the full-pivoting LU of C_q."""
        rows, cols, r, _ = full_pivot_lu(Cq, self.rank_rtol)
        dep, rows_r = np.sort(cols[:r]), np.sort(rows[:r])
        lu = _getrf(Cq[np.ix_(rows_r, dep)])[:2]
        self.partition = Partition(dependent=dep, independent=np.sort(cols[r:]), rows=rows_r,
                                   redundant=np.sort(rows[r:]), quality=_pivot_ratio(lu[0], Cq[rows_r]))
        self.n_partitions += 1
        return self.partition

    def _factor(self, Cq: np.ndarray):
        """LU of C_w under the current partition, chosen again first when its pivots degraded."""
        if self.partition is None:
            self.choose(Cq)
        p = self.partition
        lu, piv, info = _getrf(p.dependent_block(Cq))
        if info != 0 or _pivot_ratio(lu, p.used_rows(Cq)) < self.repartition_ratio * p.quality:
            p = self.choose(Cq)
            lu, piv, info = _getrf(p.dependent_block(Cq))
        return lu, piv

    def correct(self, system, t: float, q: np.ndarray, v: np.ndarray):
        """(q, v) brought onto C = 0 and C_q q' + C_t = 0 by the dependent coordinates."""
        if not system.n_c:
            return None
        q, v = q.copy(), v.copy()
        lu = self._factor(system.jacobian(t, q))
        p = self.partition
        dep = p.dependent
        C = system.residual(t, q)
        q[dep] -= _getrs(lu, p.used_rows(C))                    # the first correction, always
        self.n_corrections += 1

        def residual(w):
            q[dep] = w
            return p.used_rows(system.residual(t, q))

        def solve(w, r):
            q[dep] = w
            return np.linalg.solve(p.dependent_block(system.jacobian(t, q)), r)

        # Before the correction |C| <= tol means after it O(tol^2): not evaluated again.
        if np.abs(C).max(initial=0.0) > self.tol and np.abs(system.residual(t, q)).max(initial=0.0) > self.tol:
            w, n_iter = newton(residual, solve, q[dep].copy(), tol=self.tol, max_iter=self.max_iter,
                               norm=lambda r: np.abs(r).max(initial=0.0),
                               name=f"coordinate partitioning at t = {t:.6g}",
                               hint="the step left the constraint manifold too far: reduce the step "
                                    "size `h` (or `rtol`), or raise `max_iter`")
            q[dep] = w
            self.n_newton += n_iter
        Cq = system.jacobian(t, q)
        lu = self._factor(Cq)
        p = self.partition
        rhs = p.used_rows(system.time_derivative(t, q)) + p.independent_block(Cq) @ v[p.independent]
        v[p.dependent] = -_getrs(lu, rhs)
        return q, v


STABILIZATIONS = {"none": NoStabilization, "baumgarte": Baumgarte,
                  "coordinate-partitioning": CoordinatePartitioning}


def make_stabilization(stabilization, **options):
    """A stabilisation object from its name (options go to its constructor) or as given."""
    if isinstance(stabilization, NoStabilization):
        if options:
            raise ValueError("stabilisation options are given to the constructor of an object, not here")
        return stabilization
    if stabilization is None:
        stabilization = "none"
    if stabilization not in STABILIZATIONS:
        raise ValueError(f"`stabilization` must be one of {', '.join(repr(s) for s in STABILIZATIONS)}, "
                         f"got {stabilization!r}.")
    return STABILIZATIONS[stabilization](**options)


def _pivot_ratio(lu: np.ndarray, rows: np.ndarray) -> float:
    """min |U_ii| of the LU of C_w relative to the largest entry of the constraint rows used."""
    if not lu.size:
        return 1.0
    scale = np.abs(rows).max()
    return float(np.abs(lu.diagonal()).min() / scale) if scale > 0 else 0.0


def _getrf(A: np.ndarray):
    return lapack(("getrf",), A)[0](A)


def _getrs(lu, b: np.ndarray) -> np.ndarray:
    if b.size == 0:
        return b.copy()
    return lapack(("getrs",), lu[0])[0](lu[0], lu[1], b)[0]
