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
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

__all__ = ["spd_factor", "SPDFactorizationError", "cholmod_available"]


class SPDFactorizationError(ValueError):
    """The matrix could not be factorized as symmetric positive definite."""


def cholmod_available() -> bool:
    try:
        import sksparse.cholmod  # noqa: F401
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
