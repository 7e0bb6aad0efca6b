"""Factorizations of sparse symmetric positive definite matrices, computed once and reused.

``spd_factor(A)`` returns an object with ``solve(b)`` (b: (n,) or (n, k)):

- CHOLMOD's supernodal Cholesky A = L L^T (fill-reducing ordering) when scikit-sparse is
  installed (the optional extra ``flexmbs[sparse]``);
- otherwise SciPy's SuperLU in its symmetric mode: a minimum-degree ordering of A^T + A
  (``permc_spec="MMD_AT_PLUS_A"``) with diagonal pivots preferred (``diag_pivot_thresh=0``),
  which for an SPD matrix is a Cholesky-like LDU with the same fill as Cholesky on that
  ordering.  SciPy's default (COLAMD on A^T A, partial pivoting) fills a 3D stiffness several
  times more: see docs/design.md, "Large models".

``SPDFactorizationError`` is raised when the matrix is not positive definite (CHOLMOD) or
exactly singular (SuperLU).

``spd_solve(A, B)`` solves A X = B for a few right-hand sides without keeping a factor, and
without any factor at all for large A when CHOLMOD is missing: the pre-stress of a large solid
(docs/design.md, "Pre-stress without a factorization").  Below `DIRECT_BELOW` unknowns it uses
``spd_factor`` (exact, and the fill of a small factor costs nothing); above, CHOLMOD where
installed, otherwise conjugate gradients preconditioned by smoothed-aggregation algebraic
multigrid (pyamg, the optional extra ``flexmbs[amg]``) with the body's rigid-body modes as its
near null space, or by Jacobi without pyamg.  Each column is solved to the relative residual
|A x - b| <= rtol |b| (2-norms), rtol = `CG_RTOL` by default.
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

__all__ = ["spd_factor", "spd_solve", "solve_backend", "spd_preconditioner", "SPDFactorizationError",
           "IterativeSolveError", "cholmod_available", "amg_available", "DIRECT_BELOW", "CG_RTOL", "SOLVE_BACKENDS"]

DIRECT_BELOW = 20_000          # unknowns: smaller SPD systems are factorized (exact, small fill)
DIRECT_PROFILE = 5e7           # larger ones too when n x (bandwidth after reverse Cuthill-McKee) is below this:
                               # a beam or a long thin mesh, whose factor is narrow (a 1e5-element beam: about
                               # 1e7) and whose CG converges slowly (its condition number grows as n^4)
CG_RTOL = 1e-10                # relative residual of each conjugate-gradient solve
RESTARTS = 3                   # CG restarts from the true residual when the recurred one drifted
SOLVE_BACKENDS = ("auto", "direct", "cholmod", "superlu", "amg-cg", "jacobi-cg")


class SPDFactorizationError(ValueError):
    """The matrix could not be factorized as symmetric positive definite."""


def cholmod_available() -> bool:
    try:
        import sksparse.cholmod  # noqa: F401
    except Exception:  # pragma: no cover - depends on the installation
        return False
    return True


class IterativeSolveError(RuntimeError):
    """Conjugate gradients did not reach the tolerance."""


def amg_available() -> bool:
    try:
        import pyamg  # noqa: F401
    except Exception:  # pragma: no cover - depends on the installation
        return False
    return True


class _SuperLU:
    def __init__(self, A):
        from scipy.sparse.linalg import splu
        try:
            self._lu = splu(sparse.csc_matrix(A), permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                            options={"SymmetricMode": True})
        except RuntimeError as exc:
            raise SPDFactorizationError(str(exc)) from None
        self.backend = "superlu"

    def solve(self, b):
        return self._lu.solve(np.asarray(b, dtype=float))


class _Cholmod:  # pragma: no cover - needs scikit-sparse
    def __init__(self, A):
        from sksparse.cholmod import CholmodNotPositiveDefiniteError, cholesky
        try:
            self._f = cholesky(sparse.csc_matrix(A))
        except CholmodNotPositiveDefiniteError as exc:
            raise SPDFactorizationError(str(exc)) from None
        self.backend = "cholmod"

    def solve(self, b):
        return self._f(np.asarray(b, dtype=float))


def spd_factor(A, backend: str = "auto"):
    """Factorization of the sparse SPD matrix ``A`` with ``solve(b)``; ``backend`` "auto"
    (CHOLMOD if installed, else SuperLU), "cholmod" or "superlu"."""
    if backend not in ("auto", "cholmod", "superlu"):
        raise ValueError(f"`backend` must be 'auto', 'cholmod' or 'superlu', got {backend!r}")
    if backend == "cholmod" or (backend == "auto" and cholmod_available()):
        return _Cholmod(A)
    return _SuperLU(A)


def rcm_profile(A) -> float:
    """n x b, b the bandwidth of A after reverse Cuthill-McKee: a bound on the entries of a banded
    factor, and so on what a factorization of A costs in memory."""
    from scipy.sparse.csgraph import reverse_cuthill_mckee
    A = sparse.csr_array(A)
    p = reverse_cuthill_mckee(sparse.csr_matrix(A), symmetric_mode=True)
    inv = np.empty_like(p)
    inv[p] = np.arange(len(p))
    C = A.tocoo()
    bandwidth = int(np.abs(inv[C.row] - inv[C.col]).max()) if C.nnz else 0
    return float(A.shape[0]) * (bandwidth + 1)


def solve_backend(n: int, backend: str = "auto", A=None) -> str:
    """The backend that ``backend`` means for n unknowns: "cholmod", "superlu", "amg-cg" or
    "jacobi-cg" ("auto": see the module docstring, and with the matrix ``A`` given, a direct solve
    also above `DIRECT_BELOW` when its profile after reverse Cuthill-McKee is below `DIRECT_PROFILE`;
    "direct": CHOLMOD if installed, else SuperLU)."""
    if backend not in SOLVE_BACKENDS:
        raise ValueError(f"`backend` must be one of {list(SOLVE_BACKENDS)}, got {backend!r}")
    if backend == "direct":
        return "cholmod" if cholmod_available() else "superlu"
    if backend != "auto":
        return backend
    if n < DIRECT_BELOW or cholmod_available() or (A is not None and rcm_profile(A) < DIRECT_PROFILE):
        return "cholmod" if cholmod_available() else "superlu"
    return "amg-cg" if amg_available() else "jacobi-cg"


def spd_preconditioner(A, backend: str, near_null=None):
    """P ~ A^-1 as a LinearOperator: one V-cycle of smoothed-aggregation AMG ("amg-cg", with
    ``near_null`` (n, m) as its near null space) or Jacobi, diag(A)^-1 ("jacobi-cg")."""
    from scipy.sparse.linalg import LinearOperator
    n = A.shape[0]
    if backend == "amg-cg":
        import pyamg
        ml = pyamg.smoothed_aggregation_solver(sparse.csr_matrix(A), B=near_null, symmetry="symmetric",
                                               strength="symmetric", max_coarse=500)
        return ml.aspreconditioner(cycle="V")
    d = A.diagonal()
    if np.any(d <= 0):
        raise SPDFactorizationError(f"the matrix has {int(np.sum(d <= 0))} diagonal entries <= 0: not positive "
                                    "definite")
    dinv = 1.0 / d
    return LinearOperator((n, n), matvec=lambda x: dinv * np.ravel(x), matmat=lambda X: dinv[:, None] * X,
                          dtype=float)


def spd_solve(A, B, backend: str = "auto", rtol: float = CG_RTOL, near_null=None, maxiter: int | None = None,
              preconditioner=None):
    """(X, info): the solution of A X = B (B: (n,) or (n, k)) for the sparse SPD matrix A.

    ``backend``: "auto" (module docstring), "direct" (CHOLMOD or SuperLU), "cholmod", "superlu",
    "amg-cg" (needs pyamg) or "jacobi-cg".  ``near_null`` (n, m): vectors A nearly annihilates,
    e.g. the rigid-body modes of a solid, for the multigrid's coarse spaces; ``preconditioner``:
    one built before by `spd_preconditioner` for the same A (CG backends).  ``info`` names the
    solver that ran and, for CG, the largest number of iterations of a column.  A CG solve that
    does not reach ``rtol`` within ``maxiter`` (default max(1000, n)) iterations, after up to
    `RESTARTS` restarts from the true residual, raises `IterativeSolveError` with the residual
    reached.
    """
    B = np.asarray(B, dtype=float)
    n = A.shape[0]
    name = solve_backend(n, backend, A)
    if name in ("cholmod", "superlu"):
        return spd_factor(A, name).solve(B), name
    if name == "amg-cg" and not amg_available():
        raise ValueError("`backend` 'amg-cg' needs pyamg: pip install 'flexmbs[amg]'")
    from scipy.sparse.linalg import cg
    A = sparse.csr_array(A)
    P = spd_preconditioner(A, name, near_null) if preconditioner is None else preconditioner
    cols = B.reshape(n, -1)
    X = np.zeros_like(cols)
    maxiter = max(1000, n) if maxiter is None else int(maxiter)
    most = 0
    for j in range(cols.shape[1]):
        b = cols[:, j]
        if not np.any(b):
            continue
        count = [0]
        for _restart in range(RESTARTS + 1):
            # CG's recurred residual drifts from b - A x by about eps cond(A): restarting from x
            # with the true residual (iterative refinement) reaches the tolerance in a few more
            X[:, j], status = cg(A, b, x0=X[:, j], rtol=rtol, atol=0.0, M=P, maxiter=maxiter,
                                 callback=lambda xk: count.__setitem__(0, count[0] + 1))
            res = float(np.linalg.norm(A @ X[:, j] - b) / np.linalg.norm(b))
            if status != 0 or not np.isfinite(res) or res <= rtol:
                break
        if status != 0 or not np.isfinite(res) or res > 10 * rtol:
            raise IterativeSolveError(
                f"conjugate gradients ({name}) stopped after {count[0]} iterations at the relative residual "
                f"{res:.3g} (tolerance {rtol:g}) for right-hand side {j}: the matrix may be singular or badly "
                "conditioned; install the extra flexmbs[amg] (pyamg) or scikit-sparse, or use backend='direct'")
        most = max(most, count[0])
    return X.reshape(B.shape), f"{name} ({most} iterations, rtol {rtol:g})"
