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
[Q_s, C_q^T] in one solve; K^+ e from the eigen-decomposition of K (LAPACK ``syevd``, K^+ applied
to e without being formed: `pinv_symmetric_solve`), eigenvalues below ``rtol * max(eig)`` are
treated as zero (`kept_eigenvalues`, the one cut-off) (their number is the number of redundant constraint equations, `kinetic_rank`).
The outputs' multipliers of a run are the same equations on the stacked matrices of all outputs
(`udwadia_kalaba_history`).

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

__all__ = ["accelerations", "solve_udwadia_kalaba", "pinv_symmetric_solve", "kinetic_rank", "kept_eigenvalues",
           "udwadia_kalaba_history", "PINV_RTOL"]

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
    """(q'', lam) of ``M q'' + C_q^T lam = Q, C_q q'' = gamma`` by the Udwadia-Kalaba equations (module
    docstring): Cholesky of M_s by LAPACK (``potrf``, ``potrs`` with the right-hand sides [Q_s, C_q^T] in one
    call), lam = -K^+ e by `pinv_symmetric_solve`."""
    if not weight > 0:
        raise ValueError(f"`weight` of M + w C_q^T C_q must be positive, got {weight!r}.")
    n = M.shape[0]
    CqT = Cq.T
    Ms = M + weight * (CqT @ Cq)
    rhs = np.empty((n, 1 + Cq.shape[0]))
    np.multiply(CqT @ gamma, weight, out=rhs[:, 0])
    rhs[:, 0] += Q
    rhs[:, 1:] = CqT
    potrf, potrs = lapack(("potrf", "potrs"), Ms)
    c, info = potrf(Ms, lower=False, overwrite_a=True)
    if info != 0:
        raise _not_positive_definite(t, info)
    X, _ = potrs(c, rhs, lower=False, overwrite_b=True)
    a, Y = X[:, 0], X[:, 1:]                      # a = M_s^-1 Q_s, Y = M_s^-1 C_q^T
    lam = pinv_symmetric_solve(Cq @ Y, Cq @ a - gamma, rtol)       # -K^+ e = K^+ (C_q a - gamma)
    return a - Y @ lam, lam


def _not_positive_definite(t: float | None, column: int) -> np.linalg.LinAlgError:
    """The error of a failed Cholesky factorization of M + C_q^T C_q (at ``column``, at time ``t``)."""
    where = "" if t is None else f" at t = {t:.6g}"
    return np.linalg.LinAlgError(
        f"M + C_q^T C_q is not positive definite{where} (Cholesky failed at column {column}): some "
        "motion has neither mass nor a constraint (a coordinate without inertia left free); check "
        "the bodies' inertia and the constraints.")


def kept_eigenvalues(w: np.ndarray, rtol: float = PINV_RTOL) -> np.ndarray:
    """The eigenvalues of K the pseudo-inverse keeps, ``w > rtol max(w, 0)``, bool of w's shape: w (..., m) in
    ascending order (eigh, syevd) of one K or of a stack; the others count as zero (redundant constraints)."""
    return w > rtol * np.maximum(w[..., -1:], 0.0)


def pinv_symmetric_solve(K: np.ndarray, b: np.ndarray, rtol: float = PINV_RTOL) -> np.ndarray:
    """K^+ b for K symmetric positive semi-definite up to round-off (its lower triangle is used):

    .. code:: text

        K = V diag(w) V^T  (LAPACK syevd),   K^+ b = V_k ((V_k^T b) / w_k),   k: w_k > rtol max(w)

    the Moore-Penrose pseudo-inverse of K applied to b without forming K^+ (two matrix-vector products); k:
    `kept_eigenvalues`."""
    if K.size == 0:
        return np.zeros(K.shape[1])
    syevd, = lapack(("syevd",), K)
    w, V, info = syevd(K, compute_v=1, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"the eigen-decomposition of the kinetic matrix K = C_q M_s^-1 C_q^T did not "
                                    f"converge (LAPACK syevd info {info}): K has non-finite entries")
    keep = kept_eigenvalues(w, rtol)
    if keep.all():
        return V @ ((V.T @ b) / w)
    Vk = V[:, keep]
    return Vk @ ((Vk.T @ b) / w[keep])


def kinetic_rank(M: np.ndarray, Cq: np.ndarray, weight: float = 1.0, rtol: float = PINV_RTOL) -> int:
    """Rank of the kinetic matrix K = C_q M_s^{-1} C_q^T (= rank of C_q): independent constraints."""
    Ms = M + weight * (Cq.T @ Cq)
    K = Cq @ np.linalg.solve(Ms, Cq.T)
    return int(np.count_nonzero(kept_eigenvalues(np.linalg.eigvalsh(0.5 * (K + K.T)), rtol)))


def udwadia_kalaba_history(M: np.ndarray, Q: np.ndarray, Cq: np.ndarray, gamma: np.ndarray, weight: float = 1.0,
                           rtol: float = PINV_RTOL, t: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(q'', lam), (N, n) and (N, m), of N stacked systems M (N, n, n), Q (N, n), C_q (N, m, n), gamma (N, m):
    the equations of `solve_udwadia_kalaba` on all of them at once (numpy's stacked Cholesky as its check,
    solve and eigh), for the multipliers at the outputs of a run.  ``t`` (N,): the times, named by the
    error of a Cholesky that fails (the first such output)."""
    if not weight > 0:
        raise ValueError(f"`weight` of M + w C_q^T C_q must be positive, got {weight!r}.")
    CqT = np.swapaxes(Cq, 1, 2)
    Ms = M + weight * (CqT @ Cq)
    try:
        np.linalg.cholesky(Ms)                  # the check of `solve_udwadia_kalaba`'s Cholesky
    except np.linalg.LinAlgError:
        raise _first_not_positive_definite(Ms, t) from None
    rhs = np.concatenate([(Q + weight * (CqT @ gamma[..., None])[..., 0])[..., None], CqT], axis=2)
    X = np.linalg.solve(Ms, rhs)                # one stacked LU (numpy has no stacked triangular solve)
    a, Y = X[..., 0], X[..., 1:]
    K = Cq @ Y
    w, V = np.linalg.eigh(K)                                   # its lower triangle, as syevd's
    keep = kept_eigenvalues(w, rtol)
    inv_w = np.divide(1.0, w, out=np.zeros_like(w), where=keep)
    e = gamma - (Cq @ a[..., None])[..., 0]
    lam = -(V @ (inv_w * (np.swapaxes(V, 1, 2) @ e[..., None])[..., 0])[..., None])[..., 0]
    return a - (Y @ lam[..., None])[..., 0], lam


def _first_not_positive_definite(Ms: np.ndarray, t: np.ndarray | None) -> np.linalg.LinAlgError:
    """The error of `solve_udwadia_kalaba` at the first of the stacked M_s (N, n, n) whose Cholesky fails."""
    potrf, = lapack(("potrf",), Ms)
    for k, A in enumerate(Ms):
        info = potrf(A, lower=False)[1]
        if info != 0:
            return _not_positive_definite(None if t is None else float(t[k]), info)
    return np.linalg.LinAlgError("M + C_q^T C_q is not positive definite at some output (numpy's Cholesky failed, "
                                 "LAPACK's did not): check the outputs for non-finite states")
