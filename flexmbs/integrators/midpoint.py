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

The sparse LU of ``M_full / h - J / 2`` (``scipy.sparse.linalg.splu``) is cached with the key
``(h, formulation.jacobian_key(t_mid))`` and reused while the key does not change (equal keys
must mean equal J and M_full); ``n_lu``
counts new factorizations only, ``n_jac`` the Jacobian evaluations.  Per step: two
evaluations of ``forcing_full`` (the right-hand side and the residual check).

Options: ``newton_tol`` (1e-10): the residual is small when ``|R|_inf <= newton_tol`` times
the size of its terms, or the Newton correction when ``|delta|_inf <= newton_tol |x|_inf``
(the residual of a linear solve can stay at the round-off of F);
``newton_max_iter`` (4): corrections allowed before the step fails;
``linear`` (None): True when F is affine in x and ``jacobian`` exact, so that the first solve
is the step and the residual check (the second ``forcing_full``) is skipped; None takes the
formulation's attribute ``linear`` (False if it has none);
``reduced`` (True): for a linear formulation with the state (q, v) whose second-order form has
an ``affine`` part (small Lagrange models, `flexmbs.formulations.affine`), step
the n x n system that remains after eliminating dq = h v0 + h dv / 2 (a Schur complement on
the identity block of the 2n x 2n system; the same rule, not an approximation):

.. code:: text

    (M + h/2 C(t_mid) + h^2/4 K(t_mid)) dv = h (g(t_mid) - K(t_mid) (q0 + h v0 / 2) - C(t_mid) v0)
    q1 = q0 + h v0 + h dv / 2,   v1 = v0 + dv

with K, C, g combined from constant matrices and the coefficients gamma(t_mid), which are
computed for blocks of ``REDUCED_BLOCK`` steps at once (vectorised frame kinematics); the LU
(LAPACK getrf/getrs) is reused while gamma and h repeat.

References
----------
.. [1] E. Hairer, C. Lubich, G. Wanner, Geometric Numerical Integration, 2nd ed., Springer
       (2006), secs. IV.2 and VI.3, doi:10.1007/3-540-30666-8.
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

from .base import Integrator, Factorization, _lapack_lu, _linear_option, as_operator

__all__ = ["ImplicitMidpoint"]

REDUCED_BLOCK = 512              # steps whose coefficients gamma(t_mid) are computed together


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
        Newton corrections allowed before the step fails.
    linear : bool or None, default None
        True: the equations are affine in the state with an exact Jacobian, so the first solve
        is the step and the residual check is skipped; None: the formulation's attribute
        ``linear`` (False if it has none).
    reduced : bool, default True
        For a linear formulation in (q, v) with an ``affine`` second-order form (small
        Lagrange models), step the n x n Schur complement of the 2n x 2n system (the same
        rule); False: always the 2n x 2n system.
    divergence_limit : float, default 1e12
        The run stops with status "diverged" when ``|x|_inf`` exceeds it.
    """

    name = "midpoint"
    order = 2
    adaptive = False
    needs = "first_order"
    method_options = {"newton_tol": 1e-10, "newton_max_iter": 4, "linear": None, "reduced": True}

    def _setup(self) -> None:
        self._M = self._J = self._J_key = None
        self._M_src = self._M_conv = None
        self._lu = self._lu_key = None
        self._newton_tol = float(self.options["newton_tol"])
        self._newton_max_iter = int(self.options["newton_max_iter"])
        self._linear = _linear_option(self.options["linear"], self.formulation)
        self._affine = None
        if self.options["reduced"] and self._linear and getattr(self.formulation, "second_state", None) == "delta_dot":
            so = getattr(self.formulation, "second_order", None)
            self._affine = getattr(so, "affine", None) if so is not None else None
        if self._affine is not None:
            af = self._affine
            self._n = af.n
            self._basis = af.basis.reshape(len(af.basis), -1)       # (n_gamma, n (2n + 1))
            self._gammas = np.zeros((0, len(af.basis)))
            self._gamma_first = 0                                    # step index of _gammas[0]
            self._lu_gamma = None
            getrf, getrs = _lapack_lu(af.M)
            self._getrf, self._getrs = getrf, getrs

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
            self._lu = Factorization(self._M / h - 0.5 * self._J)
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
        return self._gammas[i]

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
