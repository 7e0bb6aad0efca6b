"""Generalized-alpha method of Chung and Hulbert [1]_ on the second-order form ``M q'' = f(t, q, v)``.

Needs the term's ``second_order`` (formulations whose state is (delta, delta'): Lagrange,
Gibbs-Appell, Index1, SupportedBody).  With the algorithmic acceleration ``a`` (an auxiliary variable, not exactly
q''(t_k) [2]_) and ``rho_inf`` in [0, 1], the spectral radius at infinite frequency:

.. code:: text

    alpha_m = (2 rho_inf - 1) / (rho_inf + 1)     alpha_f = rho_inf / (rho_inf + 1)
    gamma = 1/2 - alpha_m + alpha_f               beta = (1 - alpha_m + alpha_f)^2 / 4

    q1 = q0 + h v0 + h^2 ((1/2 - beta) a0 + beta a1)
    v1 = v0 + h ((1 - gamma) a0 + gamma a1)
    M ((1 - alpha_m) a1 + alpha_m a0) = f(t_f, (1 - alpha_f) q1 + alpha_f q0, (1 - alpha_f) v1 + alpha_f v0)
    t_f = t0 + (1 - alpha_f) h,   M a(t_start) = f(t_start, q(t_start), v(t_start))

Order 2 in q and v; rho_inf = 1 has no numerical damping (spectral radius 1 at every h),
rho_inf < 1 damps the high frequencies while keeping second order.  The balance is linear in
``a1`` when f is affine in (q, v), with the effective matrix

.. code:: text

    S = (1 - alpha_m) M + (1 - alpha_f) (gamma h C(t_f) + beta h^2 K(t_f)),  K = -df/dq, C = -df/dv

factorized by sparse LU and reused while ``(h, second_order.key(t_f))`` is unchanged (sparse
Lagrange/Gibbs-Appell models: formed from constant matrices and solved like the midpoint
rule's step matrix, `flexmbs.integrators.sparse_step`, with the same options
``linear_solver``, ``iterative_tol``, ``reuse_max_iter``, ``iterative_max_iter``,
``matvec_threads``; M^-1 by Jacobi-CG, no LU of M); the
residual is checked and corrected by Newton steps with S if it is not small (options
``newton_tol`` = 1e-10, ``newton_max_iter`` = 4, as for the midpoint rule); with the option
``linear`` True (None: the term's ``linear``) f is taken as
affine with exact K and C, the first solve is the step and the check (one f) is skipped.  ``n_lu`` also
counts the one LU of M (initial acceleration, dense output); ``n_rhs`` counts evaluations of f.

The output state is x = (q, v).  Dense output: cubic Hermite with x' = (v, M^{-1} f(t, q, v)).

References
----------
.. [1] J. Chung, G. M. Hulbert, A time integration algorithm for structural dynamics with
       improved numerical dissipation: the generalized-alpha method, J. Appl. Mech. 60 (1993)
       371-375, doi:10.1115/1.2900803.
.. [2] M. Arnold, O. Bruls, Convergence of the generalized-alpha scheme for constrained
       mechanical systems, Multibody Syst. Dyn. 18 (2007) 185-202, doi:10.1007/s11044-007-9084-0.
"""
from __future__ import annotations

import numpy as np

from .base import Integrator, Factorization, _linear_option, as_operator

__all__ = ["GeneralizedAlpha"]


class GeneralizedAlpha(Integrator):
    """Chung-Hulbert generalized-alpha, fixed step, order 2, on the second-order form.

    ``method="generalized-alpha"``; needs ``h`` and a term with ``second_order``
    (Lagrange, Gibbs-Appell, Index1, SupportedBody).  The scheme is in the module docstring above.

    Other Parameters
    ----------------
    rho_inf : float, default 0.9
        Spectral radius at infinite frequency, in [0, 1]: 1 no numerical damping, smaller
        values damp the high frequencies more.
    newton_tol : float, default 1e-10
        The step's residual is small when ``|R|_inf <= newton_tol`` times the size of its
        terms, or the Newton correction when ``|delta|_inf <= newton_tol |x|_inf``.
    newton_max_iter : int, default 4
        Newton corrections allowed before the step fails.
    linear : bool or None, default None
        True: the equations are affine in the state with an exact Jacobian, so the first solve
        is the step and the residual check is skipped; None: the term's ``linear``.
    linear_solver : {"auto", "direct", "reuse", "iterative"}, default "auto"
        Sparse Lagrange/Gibbs-Appell models with ``linear``: how S is solved, as for
        `ImplicitMidpoint` ("auto": Jacobi-BiCGSTAB on a time-varying frame, one SuperLU on a
        steady one below 50 000 DOFs).  Other models: a sparse or dense LU.
    iterative_tol : float, default 1e-13
        Relative residual of the Krylov solves (as for `ImplicitMidpoint`).
    reuse_max_iter : int, default 8
        Iterations allowed with a reused preconditioner before it is refactorized.
    iterative_max_iter : int, default 500
        Jacobi-BiCGSTAB iterations allowed per solve before the run switches to "reuse".
    matvec_threads : int or None, default None
        Threads for the products with a step matrix of more than a million stored entries
        (None: 1).
    divergence_limit : float, default 1e12
        The run stops with status "diverged" when ``|x|_inf`` exceeds it.
    """

    name = "generalized-alpha"
    order = 2
    adaptive = False
    needs = "second_order"
    requires = ("second_order",)
    method_options = {"rho_inf": 0.9, "newton_tol": 1e-10, "newton_max_iter": 4, "linear": None,
                      "linear_solver": "auto", "iterative_tol": 1e-13, "reuse_max_iter": 8,
                      "iterative_max_iter": 500, "matvec_threads": None}

    def _setup(self) -> None:
        rho_inf = float(self.options["rho_inf"])
        if not 0.0 <= rho_inf <= 1.0:
            raise ValueError(f"`rho_inf` must lie in [0, 1], got {self.options['rho_inf']!r}.")
        self.rho_inf = rho_inf
        self.alpha_m = (2 * rho_inf - 1) / (rho_inf + 1)
        self.alpha_f = rho_inf / (rho_inf + 1)
        self.gamma = 0.5 - self.alpha_m + self.alpha_f
        self.beta = 0.25 * (1 - self.alpha_m + self.alpha_f) ** 2
        self._newton_tol = float(self.options["newton_tol"])
        self._newton_max_iter = int(self.options["newton_max_iter"])
        self._linear = _linear_option(self.options["linear"], self.term)

        self._so = self.term.second_order
        self._M = as_operator(self._so.M)
        self.n = self._M.shape[0]
        if 2 * self.n != self.term.n_state:
            raise ValueError(f"the second-order form's M is {self.n} x {self.n}, but the state has "
                             f"{self.term.n_state} components (expected 2 n).")
        self.n_lin_iter = 0
        self.factor_s = 0.0
        self._second = self._second_order_step_matrix()
        if self._second is None:
            self._M_lu = Factorization(self._M)
            self.n_lu += 1
        self._S_lu = self._S_key = None
        self._KC = self._KC_key = None
        q, v = self.x[:self.n], self.x[self.n:]
        self._a = self._M_solve(self._f(self.t, q, v))           # M a0 = f(t0, q0, v0)
        self._xdot_new = np.concatenate([v, self._a])

    def _second_order_step_matrix(self):
        """The sparse step matrix S of the term's (delta, delta') `SparseStep` (`sparse_step`; its
        weights: this method's), or None."""
        from .midpoint import DIRECT_BELOW
        step = self.term.sparse_step
        solver = self.options["linear_solver"]
        if solver not in ("auto", "direct", "reuse", "iterative"):
            raise ValueError(f"`linear_solver` must be 'auto', 'direct', 'reuse' or 'iterative', got {solver!r}")
        threads = self.options["matvec_threads"]
        if threads is not None and not (isinstance(threads, (int, np.integer)) and threads >= 1):
            raise ValueError(f"`matvec_threads` must be None or an integer >= 1, got {threads!r}")
        if int(self.options["reuse_max_iter"]) < 1 or int(self.options["iterative_max_iter"]) < 1:
            raise ValueError("`reuse_max_iter` and `iterative_max_iter` must be at least 1, got "
                             f"{self.options['reuse_max_iter']!r} and {self.options['iterative_max_iter']!r}")
        if not self._linear or step is None or step.canonical:
            return None
        model = step.model
        from .sparse_step import SecondOrderStepMatrix
        if solver == "auto":
            solver = "direct" if model.steady and model.n_dofs < DIRECT_BELOW else "iterative"
        am, af, gamma, beta = self.alpha_m, self.alpha_f, self.gamma, self.beta
        return SecondOrderStepMatrix(model, solver, float(self.options["iterative_tol"]),
                                     int(self.options["reuse_max_iter"]), int(self.options["iterative_max_iter"]),
                                     threads, weights=lambda h: (1 - am, (1 - af) * gamma * h, (1 - af) * beta * h * h))

    def _M_solve(self, b: np.ndarray) -> np.ndarray:
        if self._second is None:
            return self._M_lu.solve(b)
        from .sparse_step import mass_solve
        return mass_solve(self._M, b, float(self.options["iterative_tol"]))

    def _f(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        self.n_rhs += 1
        return self._so.f(t, q, v)

    def _xdot(self, t: float, x: np.ndarray) -> np.ndarray:
        """x' = (v, M^{-1} f(t, q, v)) for the Hermite dense output."""
        q, v = x[:self.n], x[self.n:]
        return np.concatenate([v, self._M_solve(self._f(t, q, v))])

    def _factor(self, h: float, t_f: float, q: np.ndarray, v: np.ndarray):
        """LU of S = (1 - alpha_m) M + (1 - alpha_f)(gamma h C + beta h^2 K), keyed by (h, key(t_f))."""
        if self._second is not None:
            return _SparseSolve(self, h, t_f)
        key = self._so.key(t_f)
        if self._S_lu is None or (h, key) != self._S_key:
            if self._KC is None or key != self._KC_key:
                self._KC = (as_operator(self._so.K(t_f, q, v)), as_operator(self._so.C(t_f, q, v)))
                self._KC_key = key
                self.n_jac += 1
            K, C = self._KC
            S = ((1 - self.alpha_m) * self._M
                 + (1 - self.alpha_f) * (self.gamma * h * C + self.beta * h * h * K))
            self._S_lu = Factorization(S)
            self._S_key = (h, key)
            self.n_lu += 1
        return self._S_lu

    def _step_impl(self) -> tuple[bool, str | None]:
        step = self._next_step()
        if step is None:
            return False, self._underflow_message()
        t_next, h = step
        n, am, af, gamma, beta = self.n, self.alpha_m, self.alpha_f, self.gamma, self.beta
        q0, v0, a0 = self.x[:n], self.x[n:], self._a
        q_pred = q0 + h * v0 + h * h * (0.5 - beta) * a0      # q1 = q_pred + beta h^2 a1
        v_pred = v0 + h * (1 - gamma) * a0                    # v1 = v_pred + gamma h a1
        t_f = self.t + (1 - af) * h

        def balance(a1):
            """M a_m - f at t_f, and the sizes of its two terms."""
            q1, v1 = q_pred + beta * h * h * a1, v_pred + gamma * h * a1
            M_a = self._M @ ((1 - am) * a1 + am * a0)
            f = self._f(t_f, (1 - af) * q1 + af * q0, (1 - af) * v1 + af * v0)
            return M_a - f, max(np.abs(M_a).max(), np.abs(f).max())

        q_fp, v_fp = (1 - af) * q_pred + af * q0, (1 - af) * v_pred + af * v0
        lu = self._factor(h, t_f, q_fp, v_fp)
        a1 = lu.solve(self._f(t_f, q_fp, v_fp) - am * (self._M @ a0))
        for n_corrections in range(0 if self._linear else self._newton_max_iter + 1):
            R, scale = balance(a1)
            if not np.all(np.isfinite(R)):
                break                       # non-finite state: reported by the base guard
            R_max = np.abs(R).max()
            if R_max <= self._newton_tol * scale:
                break
            if n_corrections == self._newton_max_iter:
                return False, (f"Newton iterations of generalized-alpha did not converge at "
                               f"t = {self.t:.6g} (residual {R_max:.3g} after {n_corrections} "
                               "corrections). The second-order form is probably nonlinear: reduce `h` "
                               "or raise `newton_max_iter`.")
            delta = lu.solve(R)
            a1 = a1 - delta
            x_size = max(np.abs(self.x).max(), np.abs(q_pred + beta * h * h * a1).max(),
                         np.abs(v_pred + gamma * h * a1).max())
            if max(beta * h * h, gamma * h) * np.abs(delta).max() <= self._newton_tol * x_size:
                break
        self.t = t_next
        self.x = np.concatenate([q_pred + beta * h * h * a1, v_pred + gamma * h * a1])
        self._a = a1
        return True, None


class _SparseSolve:
    """S(t_f)^-1 for one step of generalized-alpha through `sparse_step` (guess: a0)."""

    def __init__(self, integ: GeneralizedAlpha, h: float, t_f: float):
        self.integ, self.h, self.t_f = integ, h, t_f

    def solve(self, b: np.ndarray) -> np.ndarray:
        it, st = self.integ, self.integ._second
        x = st.solve(self.h, self.t_f, b, it._a)
        it.n_lu, it.n_jac, it.n_lin_iter, it.factor_s = st.n_factor, st.n_matrix, st.iterations, st.factor_s
        return x
