"""Udwadia-Kalaba equations (UKE): accelerations by the Moore-Penrose pseudo-inverse.

With the auxiliary matrix and force (docs/constrained_dynamics.md, sec. "Udwadia-Kalaba")

.. code:: text

    M_s = M + w C_q^T C_q                  Q_s = Q + w C_q^T gamma_s          (w > 0, default 1)

the equations M q'' + C_q^T lam = Q, C_q q'' = gamma_s give M_s q'' + C_q^T lam = Q_s, so

.. code:: text

    a   = M_s^{-1} Q_s                     unconstrained-like acceleration
    e   = gamma_s - C_q a                  constraint error of a
    K   = C_q M_s^{-1} C_q^T               kinetic matrix (symmetric, positive semi-definite)
    lam = -K^+ e                           K^+: Moore-Penrose pseudo-inverse
    q'' = a - M_s^{-1} C_q^T lam

(the paper's eq. (30) [1]_ with v = lam, F = K^+, Q_c = -C_q^T lam; its typeset signs were
re-derived here).  M_s is positive definite whenever M is positive definite on the null space
of C_q, which holds for the singular Euler-parameter mass matrix (its null vector p is
constrained by the normalisation row) and for redundant constraints.  With redundant
(consistent) constraints K is singular, e lies in its range (gamma_s is in the range of C_q),
and K^+ gives the multipliers of least norm: the accelerations are unique, the multipliers
are not, and those returned are the minimum-norm ones.  Where both apply the result equals
the augmented formulation's to round-off (tests/test_constrained_dynamics.py).

Linear algebra: Cholesky of M_s (LAPACK ``potrf``/``potrs``) with the right-hand sides
[Q_s, C_q^T] in one solve; K^+ from the eigen-decomposition of K (``numpy.linalg.eigh``),
eigenvalues below ``rtol * max(eig)`` are treated as zero (their number is the number of
redundant constraint equations, `kinetic_rank`).

References
----------
.. [1] C. M. Pappalardo, D. Guida, On the computational methods for solving the
       differential-algebraic equations of motion of multibody systems, Machines 6 (2018) 20,
       eqs. (28)-(30), doi:10.3390/machines6020020.
.. [2] F. E. Udwadia, R. E. Kalaba, A new perspective on constrained motion, Proc. R. Soc.
       Lond. A 439 (1992) 407-410.
.. [3] F. E. Udwadia, P. Phohomsiri, Explicit equations of motion for constrained mechanical
       systems with singular mass matrices and applications to multi-body dynamics,
       Proc. R. Soc. A 462 (2006) 2097-2117, doi:10.1098/rspa.2006.1662 (singular M).
.. [4] F. E. Udwadia, A. D. Schutte, Equations of motion for general constrained systems in
       Lagrangian mechanics, Acta Mech. 213 (2010) 111-129, doi:10.1007/s00707-009-0272-2
       (the auxiliary system with M + C_q^T C_q).
"""
from __future__ import annotations

import numpy as np

from ..lapack import lapack
from .stabilization import stabilized_gamma

__all__ = ["accelerations", "solve_udwadia_kalaba", "kinetic_rank", "PINV_RTOL"]

PINV_RTOL = 1e-10      # relative cut-off of the eigenvalues of K in its pseudo-inverse


def accelerations(system, t: float, q: np.ndarray, v: np.ndarray, alpha: float = 0.0,
                  beta: float = 0.0, weight: float = 1.0, rtol: float = PINV_RTOL
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Accelerations q'' and multipliers lam of ``system`` at (t, q, v) by the Udwadia-Kalaba equations.

    Parameters
    ----------
    system : flexmbs.System
        As for `flexmbs.formulations.augmented.accelerations`.
    t, q, v : float, ndarray (n_q,), ndarray (n_q,)
    alpha, beta : float
        Baumgarte coefficients [1/s] (0: none).
    weight : float
        w > 0 in M_s = M + w C_q^T C_q (the result does not depend on it up to round-off).
    rtol : float
        Relative eigenvalue cut-off of the pseudo-inverse of K.

    Returns
    -------
    qdd : ndarray (n_q,)
    lam : ndarray (n_c,)
        Minimum-norm multipliers (unique when the constraints are independent).
    """
    M = system.mass_matrix(q)
    Q = system.forces(t, q, v)
    Cq = system.jacobian(t, q)
    gamma = stabilized_gamma(system, t, q, v, Cq, alpha, beta)
    return solve_udwadia_kalaba(M, Q, Cq, gamma, weight=weight, rtol=rtol, t=t)


def solve_udwadia_kalaba(M: np.ndarray, Q: np.ndarray, Cq: np.ndarray, gamma: np.ndarray,
                         weight: float = 1.0, rtol: float = PINV_RTOL, t: float | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """(q'', lam) of ``M q'' + C_q^T lam = Q, C_q q'' = gamma`` by the Udwadia-Kalaba equations."""
    if not weight > 0:
        raise ValueError(f"`weight` of M + w C_q^T C_q must be positive, got {weight!r}.")
    n = M.shape[0]
    Ms = M + weight * (Cq.T @ Cq)
    rhs = np.empty((n, 1 + Cq.shape[0]))
    rhs[:, 0] = Q + weight * (Cq.T @ gamma)
    rhs[:, 1:] = Cq.T
    potrf, potrs = lapack(("potrf", "potrs"), Ms)
    c, info = potrf(Ms, lower=False)
    if info != 0:
        where = "" if t is None else f" at t = {t:.6g}"
        raise np.linalg.LinAlgError(
            f"M + C_q^T C_q is not positive definite{where} (Cholesky failed at column {info}): some "
            "motion has neither mass nor a constraint (a coordinate without inertia left free); check "
            "the bodies' inertia and the constraints.")
    X, _ = potrs(c, rhs, lower=False)
    a, Y = X[:, 0], X[:, 1:]                      # a = M_s^-1 Q_s, Y = M_s^-1 C_q^T
    e = gamma - Cq @ a
    K = Cq @ Y
    lam = -pinv_symmetric(0.5 * (K + K.T), rtol) @ e
    return a - Y @ lam, lam


def pinv_symmetric(K: np.ndarray, rtol: float = PINV_RTOL) -> np.ndarray:
    """Moore-Penrose pseudo-inverse of a symmetric positive semi-definite matrix (eigh)."""
    if K.size == 0:
        return K.T.copy()
    w, V = np.linalg.eigh(K)
    keep = w > rtol * max(w[-1], 0.0)
    Vk = V[:, keep]
    return (Vk / w[keep]) @ Vk.T


def kinetic_rank(M: np.ndarray, Cq: np.ndarray, weight: float = 1.0, rtol: float = PINV_RTOL) -> int:
    """Rank of the kinetic matrix K = C_q M_s^{-1} C_q^T (= rank of C_q): independent constraints."""
    Ms = M + weight * (Cq.T @ Cq)
    K = Cq @ np.linalg.solve(Ms, Cq.T)
    w = np.linalg.eigvalsh(0.5 * (K + K.T))
    return int(np.sum(w > rtol * max(w[-1], 0.0))) if w.size else 0


