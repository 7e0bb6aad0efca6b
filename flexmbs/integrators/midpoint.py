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
``(h, jacobian_key(t_mid))`` of the term and reused while the key does not change (equal keys
must mean equal J and M_full); ``n_lu``
counts new factorizations only, ``n_jac`` the Jacobian evaluations.  Per step: two
evaluations of ``forcing_full`` (the right-hand side and the residual check).

Options: ``newton_tol`` (1e-10): the residual is small when ``|R|_inf <= newton_tol`` times
the size of its terms, or the Newton correction when ``|delta|_inf <= newton_tol |x|_inf``
(the residual of a linear solve can stay at the round-off of F);
``newton_max_iter`` (4): corrections allowed with the step's first Jacobian.  The corrections
are a simplified Newton iteration (the Jacobian of the step start, or of an earlier step while
``jacobian_key`` repeats: Index1 keeps one for ``jacobian_refresh`` = 10 ms), so they converge
linearly, the slower the staler J and the larger h.  When they have not converged after
``newton_max_iter``, or a correction grows (the rate |delta_k| / |delta_k-1| >= 1, Hairer and
Wanner, Solving ODEs II, sec. IV.8), the Jacobian is evaluated again at the step's current
midpoint (t_mid, x0 + dx/2), refactorized, and ``newton_max_iter`` more corrections follow from
the current dx (as scipy's Radau retries a step with a current Jacobian).  Only then the step
fails, with a message naming ``h`` and ``newton_max_iter`` and their values.  Measured on the
pinned corotational pendulum of cases/flexible_pendulum.py at h = 1e-3 s: the first Jacobian
alone needed up to 5 corrections (the run failed at t = 0.476 s with 4, residual 1.02e-10 of
its terms); with the refresh it runs with 608 Jacobians in 600 steps;
``linear_solver`` ("auto"): how the n x n matrix S is solved.  For a sparse model with the
state (delta, delta') (Lagrange, Gibbs-Appell) S = M/h + C_eff(t)/2 + h K_eff(t)/4 is formed at
every step from constant matrices on one sparsity pattern (`flexmbs.integrators.sparse_step`),
and the right-hand side is f(t_mid, q0 + h v0/2, v0), so no 2n x 2n matrix exists at all
(sparse Hamilton models likewise, with S_H below):
"iterative" solves it by BiCGSTAB preconditioned with its diagonal (no factorization; it
switches to "reuse" when a solve needs more than ``iterative_max_iter`` (500) iterations or
stalls above the tolerance),
"reuse" by GMRES preconditioned with one factorization of the symmetric part of an earlier S
(sparse SPD: CHOLMOD or SuperLU, ``flexmbs.sparse_solve``), refactorized only when a solve
needs more than ``reuse_max_iter`` (8) iterations, "direct" by SuperLU whenever S changes; all
to the relative residual ``iterative_tol`` (1e-13).  "auto" is "iterative" when the frame
makes S change in time, and for a steady frame "direct" (one factorization for the whole run)
below ``DIRECT_BELOW`` (50 000) DOFs, "iterative" above.  When only omega(t), eps(t) change,
S(t) differs from a factorized one by terms of relative size h omega (Coriolis) and
(h omega)^2, so "reuse" runs a spin-up on one factorization; "iterative" is cheaper while h
is small against the mesh's highest frequency (measured in docs/benchmarks.md).  Sparse
Hamilton models, state (delta, p), take the same solvers on their own n x n matrix (below).
Other models (dense storage, or formulations without such a form: Maggi, Kane, index-1,
augmented, ...; and ``reduced=False``) use the Schur complement of the 2n x 2n matrix:
"direct" factorizes it
whenever it changes, "reuse" solves it by BiCGSTAB preconditioned with a factorization of the
symmetric part of an earlier one, "iterative" by Jacobi-BiCGSTAB; there "auto" is "reuse" for
sparse S of at least ``REUSE_ABOVE`` (5 000) unknowns, else "direct";
``linear`` (None): True when F is affine in x and ``jacobian`` exact, so that the first solve
is the step and the residual check (the second ``forcing_full``) is skipped; None takes the
term's ``linear``;
``reduced`` (True): for a linear term with an ``affine`` second-order form (small Lagrange
models, `flexmbs.formulations.affine`), step
the n x n system that remains after eliminating dq = h v0 + h dv / 2 (a Schur complement on
the identity block of the 2n x 2n system; the same rule, not an approximation):

.. code:: text

    (M + h/2 C(t_mid) + h^2/4 K(t_mid)) dv = h (g(t_mid) - K(t_mid) (q0 + h v0 / 2) - C(t_mid) v0)
    q1 = q0 + h v0 + h dv / 2,   v1 = v0 + dv

with K, C, g combined from constant matrices and the coefficients gamma(t_mid), which are
computed for blocks of ``REDUCED_BLOCK`` steps at once (vectorised frame kinematics); the LU
(LAPACK getrf/getrs) is reused while gamma and h repeat.

Sparse Hamilton models.  The descriptor form of `flexmbs.formulations.hamilton`, x = (q, p)
with q = delta, is

.. code:: text

    [m] q'                 = F1(t, x) = p - b(t) - G(omega) q
    (G(omega) + C) q' + p' = F2(t, q) = f2(t) - K(t) q,     K = [k] + K_geo(t) + [k(omega)]

(no [k(eps)]: p holds G(omega) q, whose time derivative brings it).  Its 2n x 2n midpoint
matrix A = M_full/h - J/2 has the diagonal block in the second row, A22 = I/h:

.. code:: text

    A = [[m/h + G/2,        -I/2],
         [(G + C)/h + K/2,   I/h]]       (G, K at t_mid)

Row 2 of A (dq, dp) = F(t_mid, x0) gives dp = h F2 - (G + C) dq - h K dq / 2; put into row 1,
(m/h + G/2) dq - h F2/2 + (G + C) dq/2 + h K dq/4 = F1, i.e.

.. code:: text

    S_H dq = F1(t_mid, x0) + h F2(t_mid, q0) / 2,     S_H = M/h + G(omega) + C/2 + h K / 4
    dp = h F2(t_mid, q0) - (G + C + h K / 2) dq,   (G + C + h K / 2) dq = 2 (S_H - M/h) dq - G dq

S_H is Lagrange's S = M/h + C_eff/2 + h K_eff/4 (C_eff = C + 2 G(omega)) without the h/4
[k(eps)] term: the same constant matrices on the same pattern, combined with
``Model.frame_coefficients(t, eps=False)``, solved by the same `sparse_step` solvers.  No
factorization of M and no 2n x 2n matrix is needed: the elimination divides only by the
identity block.  (Eliminating dq instead would need m^-1.)  dp is the back-substitution in row
2 (row 2 exact, row 1 to the solver's residual r: the error of dp is (G + C + h K/2) S_H^-1 r,
of relative size h |omega| + (h w_max)^2 against r; taking dp from row 1 instead would make it
2 r).  Per step: one ``forcing_full``, the solve, and the products S_H dq, M dq and G dq
(S_H is formed anyway; K dq and C dq follow from it); the right-hand side F1 + h F2/2 and the guess
(the previous dq) need no matrix.  On a steady frame b and G are constant, p is a constant
linear map of (delta, delta'), and the run equals Lagrange's to round-off; on a moving frame
the two differ by O(h^2) (tests/test_hamilton_midpoint.py).  Measured at 9 720 DOFs (Tet4
box on a spin-up, h = 1e-5 s, docs/benchmarks.md sec. 12): 0.019-0.027 s of CPU per step
(Lagrange: 0.019-0.020 s), against 0.051-0.058 s for the 2n x 2n Schur path it replaces.

References
----------
.. [1] E. Hairer, C. Lubich, G. Wanner, Geometric Numerical Integration, 2nd ed., Springer
       (2006), secs. IV.2 and VI.3, doi:10.1007/3-540-30666-8.
"""
from __future__ import annotations

import numpy as np

from ..lapack import lapack
from .base import Integrator, Factorization, _linear_option, as_operator
from .sparse_step import SecondOrderStepMatrix, _Jacobi, bicgstab_right
from ..lazy import LazyModule

sparse = LazyModule("scipy.sparse")

__all__ = ["ImplicitMidpoint"]

REDUCED_BLOCK = 512              # steps whose coefficients gamma(t_mid) are computed together
DIRECT_BELOW = 50_000            # steady sparse models below: one SuperLU of the step matrix


class ImplicitMidpoint(Integrator):
    """Implicit midpoint rule, fixed step, order 2, symplectic; one sparse LU reused.

    ``method="midpoint"``; needs ``h``.  The equations and the Newton iteration are in the
    module docstring above.

    Other Parameters
    ----------------
    newton_tol : float, default 1e-10
        The step's residual is small when ``|R|_inf <= newton_tol`` times the size of its
        terms, or the Newton correction when ``|delta|_inf <= newton_tol |x|_inf``.
    newton_max_iter : int, default 4
        Newton corrections allowed with the step's first Jacobian, and again after it is
        evaluated anew at the step's midpoint; then the step fails (module docstring).
    linear : bool or None, default None
        True: the equations are affine in the state with an exact Jacobian, so the first solve
        is the step and the residual check is skipped; None: the term's ``linear``.
    reduced : bool, default True
        For a linear term with an ``affine`` second-order form (small
        Lagrange models), step the n x n Schur complement of the 2n x 2n system (the same
        rule); False: always the 2n x 2n system.
    linear_solver : {"auto", "direct", "reuse", "iterative"}, default "auto"
        How the n x n step matrix is solved (module docstring): "direct" factorizes it
        whenever it changes; "reuse" keeps a factorization of the symmetric part of an
        earlier one as a Krylov preconditioner; "iterative" uses its diagonal (Jacobi) and
        factorizes nothing.  "auto": sparse Lagrange/Gibbs-Appell/Hamilton models take "iterative"
        on a time-varying frame, "direct" on a steady one (below ``DIRECT_BELOW`` DOFs);
        other models "reuse" for sparse models of at least ``REUSE_ABOVE`` DOFs, else "direct".
    iterative_tol : float, default 1e-13
        Relative residual of the Krylov solves.
    reuse_max_iter : int, default 8
        Iterations allowed with a reused preconditioner before it is refactorized.
    iterative_max_iter : int, default 500
        Jacobi-BiCGSTAB iterations allowed per solve before the run switches to "reuse"
        (sparse Lagrange/Gibbs-Appell/Hamilton models).
    matvec_threads : int or None, default None
        Threads for the products with a sparse step matrix of more than a million stored
        entries (sparse Lagrange/Gibbs-Appell/Hamilton), at most 8; None: 1.
    divergence_limit : float, default 1e12
        The run stops with status "diverged" when ``|x|_inf`` exceeds it.
    """

    name = "midpoint"
    order = 2
    adaptive = False
    needs = "first_order"
    requires = ("jacobian",)
    method_options = {"newton_tol": 1e-10, "newton_max_iter": 4, "linear": None, "reduced": True,
                      "linear_solver": "auto", "iterative_tol": 1e-13, "reuse_max_iter": 8,
                      "iterative_max_iter": 500, "matvec_threads": None}

    def _setup(self) -> None:
        self._M = self._J = self._J_key = None
        self._M_src = self._M_conv = None
        self._lu = self._lu_key = None
        self._newton_tol = float(self.options["newton_tol"])
        self._newton_max_iter = int(self.options["newton_max_iter"])
        self._linear = _linear_option(self.options["linear"], self.term)
        solver = self.options["linear_solver"]
        if solver not in ("auto", "direct", "reuse", "iterative"):
            raise ValueError(f"`linear_solver` must be 'auto', 'direct', 'reuse' or 'iterative', got {solver!r}")
        self._solver = solver
        self._iterative_tol = float(self.options["iterative_tol"])
        self._reuse_max_iter = int(self.options["reuse_max_iter"])
        self._iterative_max_iter = int(self.options["iterative_max_iter"])
        if self._reuse_max_iter < 1 or self._iterative_max_iter < 1:
            raise ValueError("`reuse_max_iter` and `iterative_max_iter` must be at least 1, got "
                             f"{self.options['reuse_max_iter']!r} and {self.options['iterative_max_iter']!r}")
        threads = self.options["matvec_threads"]
        if threads is not None and not (isinstance(threads, (int, np.integer)) and threads >= 1):
            raise ValueError(f"`matvec_threads` must be None or an integer >= 1, got {threads!r}")
        self.n_lin_iter = 0
        self.factor_s = 0.0
        self._affine = None
        if self.options["reduced"] and self._linear and self.term.affine is not None:
            self._affine = self.term.affine()
        if self._affine is not None:
            af = self._affine
            self._n = af.n
            self._basis = af.basis.reshape(len(af.basis), -1)       # (n_gamma, n (2n + 1))
            self._gammas = np.zeros((0, len(af.basis)))
            self._gamma_first = 0                                    # step index of _gammas[0]
            self._lu_gamma = None
            getrf, getrs = lapack(("getrf", "getrs"), af.M)
            self._getrf, self._getrs = getrf, getrs
        self._second = self._second_order_step_matrix()
        self._dv_prev = None

    def _second_order_step_matrix(self):
        """The n x n step matrix of the term's sparse (delta, delta') or (delta, p) step
        (`flexmbs.formulations.terms.SparseStep`, `sparse_step`), or None."""
        step = self.term.sparse_step
        self._canonical = step is not None and step.canonical
        if self._affine is not None or not self._linear or not self.options["reduced"] \
                or step is None or step.compiled:
            return None
        model = step.model
        solver = self._solver
        if solver == "auto":                      # a step matrix that changes: no factorization
            solver = "direct" if model.steady and model.n_dofs < DIRECT_BELOW else "iterative"
        return SecondOrderStepMatrix(model, solver, self._iterative_tol, self._reuse_max_iter,
                                     self._iterative_max_iter, self.options["matvec_threads"],
                                     eps=not self._canonical)

    def _step_second_order(self, t_next: float, h: float) -> tuple[bool, str | None]:
        """One step of the sparse n x n form (`sparse_step`): S(t_mid) dv = f(t_mid, q0 + h v0/2, v0)."""
        n = self.term.n_state // 2
        q0, v0 = self.x[:n], self.x[n:]
        t_mid = self.t + 0.5 * h
        self.n_rhs += 1
        b = self.term.sparse_step.force(t_mid, q0 + (0.5 * h) * v0, v0)
        st = self._second
        dv = st.solve(h, t_mid, b, self._dv_prev)
        self.n_lu, self.n_jac, self.n_lin_iter, self.factor_s = st.n_factor, st.n_matrix, st.iterations, st.factor_s
        self._dv_prev = dv
        self.t, self.x = t_next, np.concatenate([q0 + h * v0 + (0.5 * h) * dv, v0 + dv])
        return True, None

    def _step_canonical(self, t_next: float, h: float) -> tuple[bool, str | None]:
        """One step of the sparse n x n form of Hamilton's equations (module docstring):
        S_H(t_mid) dq = F1 + h F2 / 2 at (t_mid, x0), dp = h F2 - (G + C + h K / 2) dq."""
        step = self.term.sparse_step
        n = self.term.n_state // 2
        x = self.x
        t_mid = self.t + 0.5 * h
        self.n_rhs += 1
        F = step.forcing(t_mid, x)
        F1, F2 = F[:n], F[n:]
        st = self._second
        dq = st.solve(h, t_mid, F1 + (0.5 * h) * F2, self._dv_prev)
        GCK_dq = 2.0 * (st.dot(dq) - step.model.M @ dq / h) - step.gyroscopic_dot(t_mid, dq)
        dp = h * F2 - GCK_dq
        self.n_lu, self.n_jac, self.n_lin_iter, self.factor_s = st.n_factor, st.n_matrix, st.iterations, st.factor_s
        self._dv_prev = dq
        self.t, self.x = t_next, np.concatenate([x[:n] + dq, x[n:] + dp])
        return True, None

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
        return self.term.forcing(t, x)

    def _factor(self, h: float, t_mid: float, x: np.ndarray):
        """LU of M_full/h - J(t_mid)/2, reused while (h, jacobian_key(t_mid)) is unchanged.

        M_full(t_mid) and J(t_mid) are re-evaluated when the Jacobian key changes.
        """
        jkey = self.term.jacobian_key(t_mid)
        if self._lu is None or (h, jkey) != self._lu_key:
            if self._J is None or jkey != self._J_key:
                self._J = as_operator(self.term.jacobian(t_mid, x))
                self._M = self._as_J(self._mass_matrix_full(t_mid))
                self._J_key = jkey
                self.n_jac += 1
            prev = self._lu                                   # its preconditioner serves the same h
            precond = prev.preconditioner if prev is not None and self._lu_key[0] == h else None
            self._lu = SchurFactorization(self._M / h - 0.5 * self._J, self.term.n_state // 2, self._solver,
                                          self._iterative_tol, precond, self._reuse_max_iter)
            self._lu_key = (h, jkey)
            self.n_lu += 1
        return self._lu

    def _gamma(self, t_mid: float, h: float) -> np.ndarray:
        """gamma(t_mid) of the affine form, from a block computed for the next steps at once."""
        k = self.n_steps
        if h != self.h:                                   # the last, shortened step
            self._gammas, self._basis_active = np.zeros((0, len(self._basis))), self._basis
            return self._affine.coefficients([t_mid])[0]
        i = k - self._gamma_first
        if not 0 <= i < len(self._gammas):
            ks = np.arange(k, k + REDUCED_BLOCK)
            times = self.t0 + (ks + 0.5) * self.h
            times = times[times < self.t_end]
            gammas = self._affine.coefficients(times if len(times) else [t_mid])
            active = np.flatnonzero(np.any(gammas != 0.0, axis=0))      # e.g. planar: omega_z only
            self._gammas, self._basis_active = gammas[:, active], self._basis[active]
            self._gamma_first, i = k, 0
        gamma = self._gammas[i]
        if not np.isfinite(gamma).all():       # a law of the block computed ahead: name it at t_mid
            model = self._affine.model
            model.motion.state(t_mid)
            model.load_factors(t_mid)
        return gamma

    def _step_reduced(self, t_next: float, h: float) -> tuple[bool, str | None]:
        """One step of the n x n form (module docstring)."""
        n = self._n
        x = self.x
        gamma = self._gamma(self.t + 0.5 * h, h)
        KCg = (gamma @ self._basis_active).reshape(n, 2 * n + 1)
        K, C, g = KCg[:, :n], KCg[:, n:2 * n], KCg[:, 2 * n]
        if self._lu_gamma is None or h != self._lu_h or gamma.shape != self._lu_gamma.shape or \
                not (gamma == self._lu_gamma).all():
            lu, piv, info = self._getrf(self._affine.M + (0.5 * h) * C + (0.25 * h * h) * K)
            if info != 0:
                return False, (f"the implicit midpoint matrix M + h/2 C + h^2/4 K is singular at t = {self.t:.6g}; "
                               "reduce `h`")
            self._lu, self._lu_gamma, self._lu_h = (lu, piv), gamma, h
            self.n_lu += 1
            self.n_jac += 1
        q0, v0 = x[:n], x[n:]
        self.n_rhs += 1
        dv, info = self._getrs(*self._lu, h * (g - K @ (q0 + (0.5 * h) * v0) - C @ v0))
        self.t, self.x = t_next, np.concatenate([q0 + h * v0 + (0.5 * h) * dv, v0 + dv])
        return True, None

    def _step_impl(self) -> tuple[bool, str | None]:
        step = self._next_step()
        if step is None:
            return False, self._underflow_message()
        t_next, h = step
        if self._affine is not None:
            return self._step_reduced(t_next, h)
        if self._second is not None:
            return (self._step_canonical if self._canonical else self._step_second_order)(t_next, h)
        t, x = self.t, self.x
        t_mid = t + 0.5 * h
        lu = self._factor(h, t_mid, x)
        F0 = self._F(t_mid, x)
        dx = lu.solve(F0)
        if self._linear:
            self.t, self.x = t_next, x + dx
            return True, None
        dx, R_max, done = self._newton(h, t_mid, x, dx, F0, lu)
        if not done:                        # a Jacobian from an earlier state: one at this step's midpoint
            lu = self._refresh(h, t_mid, x + 0.5 * dx)
            dx, R_max, done = self._newton(h, t_mid, x, dx, F0, lu)
        if not done:
            return False, (f"Newton iterations of the implicit midpoint rule did not converge at t = {t:.6g} "
                           f"with h = {h:.3g} s (residual {R_max:.3g} after `newton_max_iter` = "
                           f"{self._newton_max_iter} corrections, then {self._newton_max_iter} more with the "
                           "Jacobian evaluated at the step's midpoint). The formulation is nonlinear in x at this "
                           f"step size: reduce `h` (now {h:.3g} s) or raise `newton_max_iter` (now "
                           f"{self._newton_max_iter}).")
        self.t, self.x = t_next, x + dx
        return True, None

    def _newton(self, h: float, t_mid: float, x: np.ndarray, dx: np.ndarray, F0: np.ndarray, lu):
        """Simplified-Newton corrections of dx on R(dx) = M_full dx / h - F(t_mid, x + dx/2) with the
        factorization ``lu``: (dx, |R|_inf, converged).

        Converged: ``|R|_inf <= newton_tol`` times the size of its terms, or a correction
        ``|delta|_inf <= newton_tol |x|_inf`` (module docstring).  Not converged: a non-finite
        residual (the base class's guard reports it), ``newton_max_iter`` corrections spent, or a
        correction larger than the one before (the iteration diverges: Hairer and Wanner, Solving
        ODEs II, sec. IV.8, its rate theta = |delta_k| / |delta_k-1| >= 1).
        """
        delta_prev = np.inf
        for n_corrections in range(self._newton_max_iter + 1):
            M_dx_h = self._M @ dx / h
            F_mid = self._F(t_mid, x + 0.5 * dx)
            R = M_dx_h - F_mid
            if not np.all(np.isfinite(R)):
                return dx, np.inf, True     # non-finite state: reported by the base guard
            R_max = np.abs(R).max()
            if R_max <= self._newton_tol * max(np.abs(M_dx_h).max(), np.abs(F_mid).max(), np.abs(F0).max()):
                return dx, R_max, True
            if n_corrections == self._newton_max_iter:
                return dx, R_max, False
            delta = lu.solve(R)
            dx = dx - delta
            delta_max = np.abs(delta).max()
            if delta_max <= self._newton_tol * max(np.abs(x).max(), np.abs(x + dx).max()):
                return dx, R_max, True
            if delta_max >= delta_prev:
                return dx, R_max, False
            delta_prev = delta_max
        return dx, R_max, False

    def _refresh(self, h: float, t_mid: float, x_mid: np.ndarray):
        """A new Jacobian J(t_mid, x_mid) and the LU of M_full/h - J/2, cached under the current
        key (later steps with that key take it: it is the latest state's)."""
        jkey = self.term.jacobian_key(t_mid)
        self._J = as_operator(self.term.jacobian(t_mid, x_mid))
        self._M = self._as_J(self._mass_matrix_full(t_mid))
        self._J_key = jkey
        self.n_jac += 1
        self._lu = SchurFactorization(self._M / h - 0.5 * self._J, self.term.n_state // 2, self._solver,
                                      self._iterative_tol, None, self._reuse_max_iter)
        self._lu_key = (h, jkey)
        self.n_lu += 1
        return self._lu


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
            self.base = _Jacobi(self.S.diagonal())       # ZeroDivisionError on a zero diagonal entry
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
        for attempt in range(2):
            x, k, ok = bicgstab_right(self.S, self.base.solve, b, None, self.tol, self.max_iter)
            self.iterations += k
            if ok:
                return x
            if self.jacobi or attempt:
                break
            self.base = self._factor()          # the old preconditioner is too far from S
        if self.jacobi:
            self.jacobi, self.max_iter = False, 50
            self.base = self._factor()
            return self.solve(b)
        return Factorization(self.S).solve(b)


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
        self._krylov = None                             # the _Iterative solver of S, if S is solved so
        if solver == "auto":
            solver = "reuse" if sparse.issparse(S) and S.shape[0] >= REUSE_ABOVE else "direct"
        if solver in ("reuse", "iterative") and sparse.issparse(S):
            try:
                self._krylov = _Iterative(S, tol, precond, reuse_max_iter, jacobi=solver == "iterative")
            except ZeroDivisionError:
                self._krylov = None
        self._S = self._krylov if self._krylov is not None else Factorization(S)
        self._keep_preconditioner()

    def _keep_preconditioner(self) -> None:
        """The factorization preconditioning the Krylov solves of S ("reuse"), handed to the next S."""
        if self._krylov is not None and not self._krylov.jacobi:
            self.preconditioner = self._krylov.base

    def solve(self, b: np.ndarray) -> np.ndarray:
        if self._full is not None:
            return self._full.solve(b)
        out = self._solve(b)
        self._keep_preconditioner()
        return out

    def _solve(self, b: np.ndarray) -> np.ndarray:
        n = self.n
        b1, b2 = (b[n:], b[:n]) if self._swap else (b[:n], b[n:])
        y1 = self._Dinv * b1
        x2 = self._S.solve(b2 - self._A21 @ y1)
        x1 = y1 - self._Dinv * (self._A12 @ x2)
        return np.concatenate([x2, x1] if self._swap else [x1, x2])
