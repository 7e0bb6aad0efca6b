"""Implicit midpoint rule on ``M_full x' = F(t, x)``.

.. code:: text

    M_full (x1 - x0) / h = F(t_mid, (x0 + x1)/2),        t_mid = t0 + h/2

(``M_full(t_mid)`` where the formulation's M_full depends on time, in a descriptor form)

Order 2, A-stable, no numerical damping; it conserves every quadratic invariant of the flow
and is symplectic for Hamilton's canonical equations in (q, p) [1]_, so the energy of a linear
undamped model is conserved to round-off over any number of periods.

With ``dx = x1 - x0`` and ``J = dF/dx`` (exact: the formulations are linear in x), Newton's
method on ``R(dx) = M_full dx / h - F(t_mid, x0 + dx/2)`` from ``dx = 0`` reads

.. code:: text

    (M_full / h - J / 2) dx = F(t_mid, x0)                      one solve, exact if F is affine
    (M_full / h - J / 2) delta = R(dx),  dx <- dx - delta        only if |R(dx)| is not small

The 2n x 2n matrix ``A = M_full / h - J / 2`` has a diagonal block in every formulation (the
identity of ``delta' = v`` times 1/h: A11 = I/h for Lagrange and Gibbs-Appell, A22 = I/h for
Hamilton's descriptor form); it is eliminated (Schur complement), so that only an n x n matrix
is factorized and solved per step:

.. code:: text

    A = [[D, A12], [A21, A22]], D diagonal:   S = A22 - A21 D^-1 A12
    x2 = S^-1 (b2 - A21 D^-1 b1),   x1 = D^-1 (b1 - A12 x2)

(Lagrange: S = M/h + C/2 + h K/4 with C, K the damping and stiffness of J; the step is the same
as with the full system, to round-off.)  Without such a block the full LU is used.

The factorization (``scipy.sparse.linalg.splu`` or LAPACK) is cached with the key
``(h, formulation.jacobian_key(t_mid))`` and reused while the key does not change (equal keys
must mean equal J and M_full); ``n_lu``
counts new factorizations only, ``n_jac`` the Jacobian evaluations.  Per step: two
evaluations of ``forcing_full`` (the right-hand side and the residual check).

Options: ``newton_tol`` (1e-10): the residual is small when ``|R|_inf <= newton_tol`` times
the size of its terms, or the Newton correction when ``|delta|_inf <= newton_tol |x|_inf``
(the residual of a linear solve can stay at the round-off of F);
``newton_max_iter`` (4): corrections allowed before the step fails;
``linear_solver`` ("auto"): "direct" factorizes the n x n Schur matrix S (LAPACK or SuperLU)
whenever it changes; "reuse" keeps a factorization of the symmetric part of an earlier S
(sparse SPD: CHOLMOD or SuperLU, ``flexmbs.sparse_solve``) and solves each new S by BiCGSTAB
preconditioned with it, to the relative residual ``iterative_tol`` (1e-13), refactorizing only
when it needs more than ``reuse_max_iter`` (8) iterations; "iterative" uses the diagonal of S
(Jacobi) as the preconditioner and factorizes nothing.  "auto" is "reuse" for sparse S of at least
``REUSE_ABOVE`` (5 000) unknowns, else "direct".  When only the frame's omega(t), eps(t) change,
S(t) = M/h + C/2 + h K/4 + (h/4 ([k(omega)] + [k(eps)] + K_geo(t)) + G(omega)) differs from the
factorized one by terms of relative size (h omega)^2 and h omega, so a few iterations suffice
and a spin-up is run on one factorization;
``linear`` (None): True when F is affine in x and ``jacobian`` exact, so that the first solve
is the step and the residual check (the second ``forcing_full``) is skipped; None takes the
formulation's attribute ``linear`` (False if it has none).

References
----------
.. [1] E. Hairer, C. Lubich, G. Wanner, Geometric Numerical Integration, 2nd ed., Springer
       (2006), secs. IV.2 and VI.3, doi:10.1007/3-540-30666-8.
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

from .base import Integrator, Factorization, _linear_option, as_operator

__all__ = ["ImplicitMidpoint"]


class ImplicitMidpoint(Integrator):
    """Implicit midpoint rule, fixed step, order 2, symplectic; one sparse LU reused."""

    name = "midpoint"
    order = 2
    adaptive = False
    needs = "first_order"
    method_options = {"newton_tol": 1e-10, "newton_max_iter": 4, "linear": None,
                      "linear_solver": "auto", "iterative_tol": 1e-13, "reuse_max_iter": 8}

    def _setup(self) -> None:
        self._M = self._J = self._J_key = None
        self._M_src = self._M_conv = None
        self._lu = self._lu_key = None
        self._newton_tol = float(self.options["newton_tol"])
        self._newton_max_iter = int(self.options["newton_max_iter"])
        self._linear = _linear_option(self.options["linear"], self.formulation)
        solver = self.options["linear_solver"]
        if solver not in ("auto", "direct", "reuse", "iterative"):
            raise ValueError(f"`linear_solver` must be 'auto', 'direct', 'reuse' or 'iterative', got {solver!r}")
        self._solver = solver
        self._iterative_tol = float(self.options["iterative_tol"])
        self._reuse_max_iter = int(self.options["reuse_max_iter"])

    def _as_J(self, M):
        """M_full in the storage of J (dense with a dense J), converted once per distinct M_full.

        A sparse M_full next to a dense J would be densified again in every ``M/h - J/2``.
        """
        if M is not self._M_src:
            M_op = as_operator(M)
            self._M_src, self._M_conv = M, (M_op.toarray() if sparse.issparse(M_op)
                                            and not sparse.issparse(self._J) else M_op)
        return self._M_conv

    def _F(self, t: float, x: np.ndarray) -> np.ndarray:
        self.n_rhs += 1
        return self.formulation.forcing_full(t, x)

    def _factor(self, h: float, t_mid: float, x: np.ndarray):
        """LU of M_full/h - J(t_mid)/2, reused while (h, jacobian_key(t_mid)) is unchanged.

        M_full(t_mid) and J(t_mid) are re-evaluated when the Jacobian key changes.
        """
        jkey = self.formulation.jacobian_key(t_mid)
        if self._lu is None or (h, jkey) != self._lu_key:
            if self._J is None or jkey != self._J_key:
                self._J = as_operator(self.formulation.jacobian(t_mid, x))
                self._M = self._as_J(self._mass_matrix_full(t_mid))
                self._J_key = jkey
                self.n_jac += 1
            prev = self._lu                                   # its preconditioner serves the same h
            precond = prev.preconditioner if prev is not None and self._lu_key[0] == h else None
            self._lu = SchurFactorization(self._M / h - 0.5 * self._J, self.formulation.n, self._solver,
                                          self._iterative_tol, precond, self._reuse_max_iter)
            self._lu_key = (h, jkey)
            self.n_lu += 1
        return self._lu

    def _step_impl(self) -> tuple[bool, str | None]:
        step = self._next_step()
        if step is None:
            return False, self._underflow_message()
        t_next, h = step
        t, x = self.t, self.x
        t_mid = t + 0.5 * h
        lu = self._factor(h, t_mid, x)
        F0 = self._F(t_mid, x)
        dx = lu.solve(F0)
        for n_corrections in range(0 if self._linear else self._newton_max_iter + 1):
            M_dx_h = self._M @ dx / h
            F_mid = self._F(t_mid, x + 0.5 * dx)
            R = M_dx_h - F_mid
            if not np.all(np.isfinite(R)):
                break                       # non-finite state: reported by the base guard
            R_max = np.abs(R).max()
            if R_max <= self._newton_tol * max(np.abs(M_dx_h).max(), np.abs(F_mid).max(), np.abs(F0).max()):
                break
            if n_corrections == self._newton_max_iter:
                return False, (f"Newton iterations of the implicit midpoint rule did not converge at "
                               f"t = {t:.6g} (residual {R_max:.3g} after {n_corrections} "
                               "corrections). The formulation is probably nonlinear in x: reduce `h` "
                               "or raise `newton_max_iter`.")
            delta = lu.solve(R)
            dx = dx - delta
            if np.abs(delta).max() <= self._newton_tol * max(np.abs(x).max(), np.abs(x + dx).max()):
                break
        self.t, self.x = t_next, x + dx
        return True, None


def _blocks(A, n: int):
    if sparse.issparse(A):
        A = sparse.csr_array(A)
        return A[:n][:, :n], A[:n][:, n:], A[n:][:, :n], A[n:][:, n:]
    return A[:n, :n], A[:n, n:], A[n:, :n], A[n:, n:]


def _diagonal(B):
    """The diagonal of B if B is diagonal (no other nonzero) and has no zero on it, else None."""
    if sparse.issparse(B):
        B = sparse.coo_array(B)
        if np.any((B.row != B.col) & (B.data != 0.0)):
            return None
        d = B.diagonal()
    else:
        d = np.diag(B).copy()
        if np.count_nonzero(B) != np.count_nonzero(d):
            return None
    return d if np.all(d != 0.0) else None


REUSE_ABOVE = 5_000


class _Iterative:
    """BiCGSTAB on a sparse S preconditioned by ``base`` (a factorization of the symmetric part
    of an earlier S) or by its diagonal (``base`` None: Jacobi); a new factorization of the
    symmetric part of S as preconditioner when it needs more than ``max_iter`` iterations."""

    def __init__(self, S, tol: float, base=None, max_iter: int = 8, jacobi: bool = False):
        self.S = sparse.csr_array(S)
        self.tol, self.max_iter, self.iterations, self.n_factor = tol, max_iter, 0, 0
        self.jacobi = jacobi
        if jacobi:
            d = self.S.diagonal()
            if np.any(d == 0.0):
                raise ZeroDivisionError("zero on the diagonal")
            inv = 1.0 / d
            self.base = _Diagonal(inv)
            self.max_iter = 200
        else:
            self.base = base if base is not None else self._factor()

    def _factor(self):
        from ..sparse_solve import SPDFactorizationError, spd_factor
        self.n_factor += 1
        try:
            return spd_factor(0.5 * (self.S + self.S.T))
        except SPDFactorizationError:
            return Factorization(self.S)

    def solve(self, b: np.ndarray) -> np.ndarray:
        from scipy.sparse.linalg import LinearOperator, bicgstab
        for attempt in range(2):
            P = LinearOperator(self.S.shape, matvec=self.base.solve, dtype=float)
            count = [0]
            x, info = bicgstab(self.S, b, rtol=self.tol, atol=0.0, maxiter=self.max_iter, M=P,
                               callback=lambda xk: count.__setitem__(0, count[0] + 1))
            self.iterations += count[0]
            if info == 0:
                return x
            if self.jacobi or attempt:
                break
            self.base = self._factor()          # the old preconditioner is too far from S
        if self.jacobi:
            self.jacobi, self.max_iter = False, 50
            self.base = self._factor()
            return self.solve(b)
        return Factorization(self.S).solve(b)


class _Diagonal:
    def __init__(self, inv):
        self.inv = inv

    def solve(self, b):
        return self.inv * b


class SchurFactorization:
    """Solve of the 2n x 2n ``A`` by the Schur complement on a diagonal diagonal block.

    One n x n `Factorization` (LAPACK or SuperLU) of S; falls back to the full LU when neither
    diagonal block of A is diagonal.
    """

    def __init__(self, A, n: int, solver: str = "direct", tol: float = 1e-13, precond=None,
                 reuse_max_iter: int = 8):
        self.n = n
        self.preconditioner = None
        blocks = _blocks(A, n)
        self._swap = False
        D = _diagonal(blocks[0])
        if D is None:
            D = _diagonal(blocks[3])
            self._swap = D is not None
        if D is None:
            self._full = Factorization(A)
            return
        self._full = None
        A11, A12, A21, A22 = blocks
        if self._swap:                                  # eliminate the second block instead
            A11, A12, A21, A22 = A22, A21, A12, A11
        self._Dinv = 1.0 / D
        self._A12, self._A21 = A12, A21
        if sparse.issparse(A12):
            S = sparse.csr_array(A22 - A21 @ (sparse.diags_array(self._Dinv) @ A12))
        else:
            D12 = _diagonal(A12)
            if D12 is not None:                         # Lagrange: A12 = -I/2, a column scaling
                S = A22 - A21 * (self._Dinv * D12)[None, :]
            else:
                S = A22 - A21 @ (self._Dinv[:, None] * A12)
        self._S = None
        if solver == "auto":
            solver = "reuse" if sparse.issparse(S) and S.shape[0] >= REUSE_ABOVE else "direct"
        if solver in ("reuse", "iterative") and sparse.issparse(S):
            try:
                self._S = _Iterative(S, tol, precond, reuse_max_iter, jacobi=solver == "iterative")
            except ZeroDivisionError:
                self._S = None
        if self._S is None:
            self._S = Factorization(S)
        if isinstance(self._S, _Iterative) and not self._S.jacobi:
            self.preconditioner = self._S.base

    def solve_stats(self):
        return getattr(self._S, "iterations", 0), getattr(self._S, "n_factor", 0)

    def solve(self, b: np.ndarray) -> np.ndarray:
        if self._full is not None:
            return self._full.solve(b)
        out = self._solve(b)
        if isinstance(self._S, _Iterative) and not self._S.jacobi:
            self.preconditioner = self._S.base
        return out

    def _solve(self, b: np.ndarray) -> np.ndarray:
        n = self.n
        b1, b2 = (b[n:], b[:n]) if self._swap else (b[:n], b[n:])
        y1 = self._Dinv * b1
        x2 = self._S.solve(b2 - self._A21 @ y1)
        x1 = y1 - self._Dinv * (self._A12 @ x2)
        return np.concatenate([x2, x1] if self._swap else [x1, x2])
