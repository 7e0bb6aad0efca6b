"""The n x n step matrix of the implicit midpoint rule for a sparse body on a moving frame.

For the state x = (delta, delta') of Lagrange and Gibbs-Appell, ``[m] delta'' = f(t, delta,
delta')`` with ``df/d delta = -K_eff(t)``, ``df/d delta' = -C_eff(t)`` and f affine in the
state, the midpoint step with dq = q1 - q0, dv = v1 - v0 is (eliminating dq = h v0 + h dv / 2
from the 2n x 2n system: the Schur complement on its identity block, the same rule)

.. code:: text

    S(t_mid) dv = f(t_mid, q0 + h v0 / 2, v0),     S = M/h + C_eff/2 + h K_eff/4
    q1 = q0 + h v0 + h dv / 2,   v1 = v0 + dv

(f(t, q0 + h v0/2, v0) = f(t, q0, v0) - h/2 K_eff v0: the right-hand side needs no matrix.)
Hamilton's equations in (delta, p) step with the same matrix without h/4 [k(eps)] (``eps=False``;
the derivation is in `flexmbs.integrators.midpoint`), unknown dq = delta1 - delta0.
On a moving frame S(t) changes at every step, but only through the coefficients of a few
constant matrices (``Model.frame_terms``): S(t) = sum_k s_k(t) A_k with
s_k = [k = M]/h + b_k/2 + h a_k/4, formed on one sparsity pattern (`flexmbs.sparse_sum`).

Its symmetric part H = M/h + C/2 + h/4 ([k] + K_geo + [k(omega)]) is positive definite for
any step small enough to resolve the frame motion; its skew part Z = sum_i (omega_i + h eps_i /
4) G_i is of relative size h |omega| (|H^-1 Z| <= h |omega| in the M-norm, G_i being bounded
by M).  The solvers:

- ``"iterative"``: BiCGSTAB preconditioned by the diagonal of S (Jacobi), from the previous
  step's dv.  No factorization at all.  S is well conditioned when the step is small against
  the mesh's highest frequency: its eigenvalues relative to M/h lie in [1, 1 + (h w_max)^2/4]
  (omega_max^2 of K, M), so the iteration count grows like h w_max, not with the mesh size at a
  fixed h w_max.  If a solve needs more than ``iterative_max_iter`` iterations, or stalls
  above the tolerance (round-off of an ill-conditioned S), the run switches to ``"reuse"``.
- ``"reuse"``: one factorization of H (`flexmbs.sparse_solve.spd_factor`: CHOLMOD or SuperLU
  with a minimum-degree ordering of A^T + A) as the right preconditioner of GMRES, whose
  iteration then converges like (h |omega|)^k; refactorized (at the current step) only when a
  solve needs more than ``reuse_max_iter`` iterations.
- ``"direct"``: SuperLU of S whenever its coefficients change.

References
----------
.. [1] Y. Saad, Iterative Methods for Sparse Linear Systems, 2nd ed., SIAM (2003), secs. 6.5,
       9.3.2 (right-preconditioned GMRES) and 7.4.2 (BiCGSTAB), doi:10.1137/1.9780898718003.
"""
from __future__ import annotations

import logging
import time

import numpy as np

from ..sparse_sum import SparseSum
from ..lazy import LazyModule

sparse = LazyModule("scipy.sparse")

__all__ = ["SecondOrderStepMatrix", "gmres_right", "bicgstab_right", "mass_solve"]

log = logging.getLogger("flexmbs")


def gmres_right(A, psolve, b: np.ndarray, x0: np.ndarray | None, rtol: float, maxiter: int):
    """GMRES on A x = b, right-preconditioned (A P^-1 y = b, x = P^-1 y), no restart [1]_.

    Returns (x, iterations, converged).  The residual it controls, |b - A x| <= rtol |b|, is
    the true residual (in exact arithmetic), not a preconditioned one; each iteration costs
    one ``psolve`` and one product with A.
    """
    bnorm = np.linalg.norm(b)
    x = np.zeros_like(b) if x0 is None else np.array(x0, dtype=float)
    if bnorm == 0.0:
        return np.zeros_like(b), 0, True
    r = b - A @ x if x0 is not None else b.copy()
    beta = np.linalg.norm(r)
    if beta <= rtol * bnorm:
        return x, 0, True
    V, Z = [r / beta], []
    H = np.zeros((maxiter + 1, maxiter))
    cs, sn = np.zeros(maxiter), np.zeros(maxiter)
    g = np.zeros(maxiter + 1)
    g[0] = beta
    k, converged = 0, False
    for j in range(maxiter):
        z = psolve(V[j])
        w = A @ z
        Z.append(z)
        for _ in range(2):                          # Gram-Schmidt, repeated once (no loss of orthogonality)
            Vj = np.array(V)
            hj = Vj @ w
            w -= hj @ Vj
            H[:j + 1, j] += hj
        hnext = np.linalg.norm(w)
        H[j + 1, j] = hnext
        for i in range(j):                          # the earlier Givens rotations
            H[i, j], H[i + 1, j] = cs[i] * H[i, j] + sn[i] * H[i + 1, j], -sn[i] * H[i, j] + cs[i] * H[i + 1, j]
        d = np.hypot(H[j, j], H[j + 1, j])
        cs[j], sn[j] = (H[j, j] / d, H[j + 1, j] / d) if d > 0 else (1.0, 0.0)
        H[j, j], H[j + 1, j] = d, 0.0
        g[j + 1], g[j] = -sn[j] * g[j], cs[j] * g[j]
        k = j + 1
        if abs(g[j + 1]) <= rtol * bnorm or hnext == 0.0:
            converged = True
            break
        V.append(w / hnext)
    from scipy.linalg import solve_triangular
    y = solve_triangular(H[:k, :k], g[:k])
    x += y @ np.array(Z)
    return x, k, converged


def bicgstab_right(A, psolve, b: np.ndarray, x0: np.ndarray | None, rtol: float, maxiter: int):
    """BiCGSTAB on A x = b, right-preconditioned [1]_ (sec. 7.4.2, with x = P^-1 y).

    Returns (x, iterations, converged).  Converged means the true residual |b - A x| <= rtol
    |b| (checked with one product when the recurred residual says so; if round-off made the
    two differ, the iteration restarts from x).  Each iteration costs two ``psolve`` and two
    products with A.  Its breakdown tests are relative, so any scaling of b works.
    """
    bnorm = np.linalg.norm(b)
    if bnorm == 0.0:
        return np.zeros_like(b), 0, True
    tol = rtol * bnorm
    x = np.zeros_like(b) if x0 is None else np.array(x0, dtype=float)
    r = b - A @ x if x0 is not None else b.copy()
    k = 0
    for _ in range(3):                             # restarts when the recurred residual drifted
        if np.linalg.norm(r) <= tol:
            return x, k, True
        rhat = r.copy()
        rhat_norm = np.linalg.norm(rhat)
        p = v = None
        rho_old = alpha = omega = 1.0
        while k < maxiter:
            k += 1
            rho = rhat @ r
            if not abs(rho) > 1e-30 * rhat_norm * np.linalg.norm(r):
                break                               # breakdown: restart from x
            if p is None:
                p = r.copy()
            else:
                p -= omega * v
                p *= (rho / rho_old) * (alpha / omega)
                p += r
            phat = psolve(p)
            v = A @ phat
            alpha = rho / (rhat @ v)
            r -= alpha * v                          # s
            x += alpha * phat
            if np.linalg.norm(r) <= tol:
                break
            shat = psolve(r)
            t = A @ shat
            tt = t @ t
            omega = (t @ r) / tt if tt > 0.0 else 0.0
            x += omega * shat
            r -= omega * t
            if np.linalg.norm(r) <= tol or omega == 0.0:
                break
            rho_old = rho
        r = b - A @ x                               # the true residual
        if np.linalg.norm(r) <= tol:
            return x, k, True
        if k >= maxiter:
            break
    return x, k, False


THREADED_NNZ = 1_000_000          # step matrices with more stored entries: products in threads
_POOL = None


def _threads(requested) -> int:
    """Threads for the products with S: ``requested`` (None: 1), at most 8."""
    return 1 if requested is None else max(1, min(int(requested), 8))


class _RowBlocks:
    """y = S x by row blocks of equal stored entries, computed in threads (SciPy's CSR product
    runs without the GIL); the blocks are views of S's arrays, set up once per pattern."""

    def __init__(self, indptr, indices, n_cols: int, k: int):
        cuts = np.searchsorted(indptr, np.linspace(0, indptr[-1], k + 1)[1:-1])
        rows = np.unique(np.concatenate([[0], cuts, [len(indptr) - 1]]))
        self.shape = (len(indptr) - 1, n_cols)
        self._parts = [(r0, r1, indptr[r0], indptr[r1], (indptr[r0:r1 + 1] - indptr[r0]).astype(indptr.dtype),
                        indices[indptr[r0]:indptr[r1]]) for r0, r1 in zip(rows[:-1], rows[1:])]
        self._blocks = None

    def set_data(self, data):
        self._blocks = [sparse.csr_array((data[a0:a1], idx, ptr), shape=(r1 - r0, self.shape[1]), copy=False)
                        for r0, r1, a0, a1, ptr, idx in self._parts]
        return self

    def __matmul__(self, x):
        global _POOL
        if _POOL is None:
            from concurrent.futures import ThreadPoolExecutor
            _POOL = ThreadPoolExecutor(8, thread_name_prefix="flexmbs-matvec")
        futures = [_POOL.submit(B.__matmul__, x) for B in self._blocks[1:]]
        first = self._blocks[0] @ x
        return np.concatenate([first] + [f.result() for f in futures])


class _Jacobi:
    def __init__(self, d):
        if np.any(d == 0.0) or not np.all(np.isfinite(d)):
            raise ZeroDivisionError("a zero or non-finite diagonal entry")
        self.inv = 1.0 / d

    def solve(self, r):
        return self.inv * r


def mass_solve(M, b: np.ndarray, tol: float = 1e-13) -> np.ndarray:
    """M^-1 b for a sparse consistent mass matrix by Jacobi-preconditioned CG (M is SPD and,
    scaled by its diagonal, well conditioned for any mesh size: a few tens of iterations);
    a factorization if CG does not converge."""
    from scipy.sparse.linalg import LinearOperator, cg
    scale = np.abs(b).max()
    if scale == 0.0:
        return np.zeros_like(b)
    inv = 1.0 / M.diagonal()
    x, info = cg(M, b / scale, rtol=tol, atol=0.0, maxiter=1000,
                 M=LinearOperator(M.shape, matvec=lambda r: inv * r, dtype=float))
    if info == 0:
        return x * scale
    from ..sparse_solve import spd_factor
    return spd_factor(M).solve(b)


class SecondOrderStepMatrix:
    """S(t) = w_M M + w_C C_eff(t) + w_K K_eff(t) of a sparse model (midpoint: M/h + C_eff/2 +
    h K_eff/4), formed and solved per step.

    Parameters
    ----------
    model : flexmbs.Model
        A sparse model (``frame_terms``, ``frame_coefficients``).
    solver : {"iterative", "reuse", "direct"}
        See the module docstring.
    tol : float
        Relative residual |b - S x| <= tol |b| of the Krylov solves.
    reuse_max_iter, iterative_max_iter : int
        Iterations allowed per solve with a reused factorization / with Jacobi.
    weights : callable or None
        h -> (w_M, w_C, w_K), the weights of M, C_eff and K_eff in S; None: the midpoint
        rule's (1/h, 1/2, h/4).  Generalized-alpha passes (1 - alpha_m, (1 - alpha_f) gamma h,
        (1 - alpha_f) beta h^2).
    threads : int or None
        Threads for the products with S when it has more than ``THREADED_NNZ`` stored
        entries (row blocks; SciPy's CSR product releases the GIL); None: 1.  Measured on 2
        shared cores, 2 threads were slower than 1 (docs/benchmarks.md, section 12).
    eps : bool
        False: K_eff(t) without [k(eps)] (``Model.frame_coefficients(t, eps=False)``), the
        step matrix of Hamilton's equations (`flexmbs.integrators.midpoint`).

    Counters: ``n_matrix`` step matrices formed, ``n_factor`` factorizations, ``iterations``
    Krylov iterations in all, ``factor_s`` seconds spent factorizing.
    """

    def __init__(self, model, solver: str, tol: float = 1e-13, reuse_max_iter: int = 8,
                 iterative_max_iter: int = 500, threads: int | None = None, weights=None,
                 eps: bool = True):
        if solver not in ("iterative", "reuse", "direct"):
            raise ValueError(f"`solver` must be 'iterative', 'reuse' or 'direct', got {solver!r}")
        mats, skew = model.frame_terms()
        self.model = model
        self.eps = bool(eps)
        self._weights = weights if weights is not None else (lambda h: (1.0 / h, 0.5, 0.25 * h))
        self._sum = SparseSum(mats)
        self._skew = np.asarray(skew, bool)
        self.solver = solver
        self.tol, self.reuse_max_iter, self.iterative_max_iter = tol, int(reuse_max_iter), int(iterative_max_iter)
        self.n_matrix = self.n_factor = self.iterations = 0
        self.factor_s = 0.0
        self._c = self._S = self._direct = self._pre = self._jacobi = None
        k = _threads(threads) if self._sum.nnz > THREADED_NNZ else 1
        self.threads = k
        self._op = None if k == 1 else _RowBlocks(self._sum.indptr, self._sum.indices, self._sum.shape[1], k)
        self._S_op = None

    def coefficients(self, h: float, t: float) -> np.ndarray:
        """s_k(t) of S(t) = w_M M + w_C C_eff(t) + w_K K_eff(t) = sum_k s_k A_k."""
        wM, wC, wK = self._weights(h)
        a, b = self.model.frame_coefficients(t, eps=self.eps)
        c = wK * a + wC * b
        c[0] += wM
        return c

    def matrix(self, h: float, t: float) -> sparse.csr_array:
        """S(t) for the step h (formed only when its coefficients change)."""
        c = self.coefficients(h, t)
        if self._c is None or not np.array_equal(c, self._c):
            self._S = self._sum.matrix(c)
            self._S_op = self._S if self._op is None else self._op.set_data(self._S.data)
            self._c = c
            self._direct = self._jacobi = None
            self.n_matrix += 1
        return self._S

    def dot(self, x: np.ndarray) -> np.ndarray:
        """S x with the step matrix formed last (by ``matrix`` or ``solve``)."""
        return self._S_op @ x

    def solve(self, h: float, t: float, b: np.ndarray, x0: np.ndarray | None = None) -> np.ndarray:
        """dv = S(t)^-1 b, from the guess x0."""
        S = self.matrix(h, t)
        if self.solver == "direct":
            return self._solve_direct(S, b)
        if self.solver == "iterative":
            x = self._solve_jacobi(S, b, x0)
            if x is not None:
                return x
            log.info("implicit step: Jacobi-preconditioned BiCGSTAB did not reach the relative residual %.3g "
                     "within %d iterations at t = %.6g; switching to a factorization of the step matrix's "
                     "symmetric part as preconditioner", self.tol, self.iterative_max_iter, t)
            self.solver = "reuse"
        return self._solve_reuse(S, b, x0)

    # -- the three solvers ----------------------------------------------------------------------
    def _timed_factor(self, make):
        tic = time.process_time()
        out = make()
        self.factor_s += time.process_time() - tic
        self.n_factor += 1
        return out

    def _solve_direct(self, S, b):
        if self._direct is None:
            from scipy.sparse.linalg import splu
            self._direct = self._timed_factor(lambda: splu(
                sparse.csc_matrix(S), permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.01,
                options={"SymmetricMode": True}))
        return self._direct.solve(b)

    def _solve_jacobi(self, S, b, x0):
        if self._jacobi is None:
            try:
                self._jacobi = _Jacobi(S.diagonal())
            except ZeroDivisionError:
                return None
        x, k, ok = bicgstab_right(self._S_op, self._jacobi.solve, b, x0, self.tol, self.iterative_max_iter)
        self.iterations += k
        return x if ok else None

    def _factor_symmetric(self):
        from ..sparse_solve import SPDFactorizationError, spd_factor
        from .base import Factorization
        c = np.where(self._skew, 0.0, self._c)
        H = self._sum.matrix(c)
        try:
            self._pre = self._timed_factor(lambda: spd_factor(H))
        except SPDFactorizationError:          # not positive definite: an LU of S itself
            self._pre = self._timed_factor(lambda: Factorization(self._S))

    def _solve_reuse(self, S, b, x0):
        if self._pre is None:
            self._factor_symmetric()
        x, k, ok = gmres_right(self._S_op, self._pre.solve, b, x0, self.tol, self.reuse_max_iter)
        self.iterations += k
        if ok:
            return x
        self._factor_symmetric()               # S has moved too far from the factorized one
        x, k, ok = gmres_right(self._S_op, self._pre.solve, b, x, self.tol, max(self.reuse_max_iter, 50))
        self.iterations += k
        if ok:
            return x
        return self._solve_direct(S, b)
