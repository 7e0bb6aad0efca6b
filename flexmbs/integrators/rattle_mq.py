"""The generalized RATTLE step for a mass matrix that depends on q (method "rattle", `Rattle`, when
``DAETerm.mass_matrix_constant`` is False).

The system is Hamilton's H(q, p) = 1/2 p^T Mbar(q)^-1 p + U(q) with holonomic constraints
C(q, t) = 0, Mbar the mass matrix made positive definite along the Euler parameters
(`flexmbs.formulations.constrained_hamiltonian`: Mbar = M on the constraint manifold), so that

.. code:: text

    H_p(q, p) = Mbar(q)^-1 p = v,      -H_q(q, p) = K(q, v) + Q_a,      K(q, v) = dTbar/dq at fixed v

(at fixed p, d/dq (1/2 p^T Mbar^-1 p) = -1/2 v^T Mbar_q v = -dTbar/dq at fixed v; Q_a = -U_q the
active forces).  RATTLE for H (Hairer, Lubich and Wanner, Geometric Numerical Integration, 2nd ed.,
sec. VII.1.4, eq. (1.26)), derived from the discrete variational principle / the composition of the
symplectic Euler method with its adjoint on the constraint manifold, with G = C_q and the
half-multipliers Lam = h/2 lam_n, nu = h/2 mu_n, is

.. code:: text

    P     = p_n + h/2 (K(q_n, Mbar(q_n)^-1 P) + Q_a,n) - G(q_n)^T Lam             (P = p_{n+1/2}, implicit)
    q_{n+1} = q_n + h/2 (Mbar(q_n)^-1 P + Mbar(q_{n+1})^-1 P)                     (trapezoid of H_p)
    0     = C(q_{n+1}, t_{n+1})
    p_{n+1} = P + h/2 (K(q_{n+1}, Mbar(q_{n+1})^-1 P) + Q_a,n+1) - G(q_{n+1})^T nu
    0     = G(q_{n+1}) Mbar(q_{n+1})^-1 p_{n+1} + C_t(q_{n+1}, t_{n+1})           (hidden constraint)

The state stays x = (q, v); the step carries p_{n+1} to the next (with ``compensated``; otherwise,
and after a corrected state, p_n = Mbar(q_n) v_n) and returns v_{n+1} = Mbar(q_{n+1})^-1 p_{n+1}.  The
unknowns of Newton are the increments dP = P - p_n and dq = q_{n+1} - q_n, and q_{n+1} = q_n + dq,
p_{n+1} = p_n + dp are summed with Kahan's compensation (`flexmbs.integrators.rattle.compensated_sum`):
so the residual r2 = dq - h/2 (...) has no cancellation, and the round-off of the sums, eps |q| and
eps |p| a step, does not accumulate (the p <-> v conversion each step would add eps |p| again).  For constant M the first three lines decouple
into the explicit kick-drift of `Rattle`'s constant-M path (which that path keeps, unchanged).

Newton.  The first three lines are solved together for (P, q_{n+1}, Lam), residuals r1, r2, C,
with the matrix (one dense solve of size 2 n + n_c a correction)

.. code:: text

    [ I - h/2 D_n^T Mbar_n^-1          0                          G_n^T ] [dP  ]   [-r1]
    [ -h/2 (Mbar_n^-1 + Mbar_{n+1}^-1)  I + h/2 Mbar_{n+1}^-1 D_{n+1}  0     ] [dq  ] = [-r2]
    [ 0                                G_{n+1}                    0     ] [dLam]   [-C ]

where D = d(Mbar(q) v)/dq at fixed v (so dK/dv = D^T and d(Mbar^-1 P)/dq = -Mbar^-1 D), at
(q_n, Mbar_n^-1 P) and (q_{n+1}, Mbar_{n+1}^-1 P).  The bodies do not give D: it is taken by
forward differences of Mbar (`momentum_derivative`, 2 n evaluations), and only once a correction
leaves more than ``SLOW`` = 0.1 of the last (scaled) residual.  Until then the D terms, of size
h |q'| |dM/dq| / |M| beside the identity, are dropped (a simplified Newton converging linearly at
that rate): measured 3.3 corrections a step on the triple pendulum at h = 1e-2 s without D, while
a top spinning at 30 rad/s (h |omega| = 0.3) needs D from its second correction on.  D enters
only the matrix, not the equations: the solution is the same.  It stops when all three hold at once:

.. code:: text

    |C|_inf <= tol_C = max(newton_tol, 64 eps max(|q|_inf, 1))                  (the constant-M path's)
    |r2|_inf <= max(newton_tol, 64 eps) max(|q_{n+1}|_inf, 1)
    |r1|_inf <= max(newton_tol, 64 eps) max(|P|_inf, |p_n|_inf, h/2 |K|_inf, h/2 |Q_a,n|_inf)

and fails after ``newton_max_iter`` iterations with a message (reduce h).  The last two lines are
linear in nu (one n_c x n_c solve with G Mbar^-1 G^T); forces that depend on v are iterated as in
the constant-M path (fixed point on Q_a(t_{n+1}, q_{n+1}, v_{n+1})).

Properties: with Q_a = -U_q(q) and scleronomic constraints the map (q_n, p_n) -> (q_{n+1}, p_{n+1})
is symplectic on the constraint manifold and symmetric (HLW Theorems VII.1.3 and VII.1.4), order 2,
its energy error bounded over long runs; tests/test_rattle_mq.py checks the order, the
reversibility, the bounded energy error against index3-alpha and the constraints at every step.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor
from scipy.linalg import cho_solve as _cho_solve

from .rattle import (ROUND_OFF, StepFailed, compensated_sum, forces_fixed_point, hidden_constraint_multiplier,
                     hidden_constraint_projection)

__all__ = ["GeneralizedRattleStep"]

SLOW = 0.1      # a Newton correction that leaves more than this share of the last scaled residual: add D


def cho_solve(factor, b):
    """M^-1 b from M's Cholesky factor (the states are checked finite by the step itself)."""
    return _cho_solve(factor, b, check_finite=False)


class GeneralizedRattleStep:
    """One step of RATTLE for H(q, p) with M(q) (module docstring).

    Parameters
    ----------
    term : flexmbs.formulations.terms.DAETerm
        Its constraints and C_t.
    hamiltonian : flexmbs.formulations.constrained_hamiltonian.ConstrainedHamiltonian
        Mbar(q), K(q, v) = dTbar/dq, Q_a(t, q, v).
    tol : float
        ``newton_tol``.
    max_iter : int
        ``newton_max_iter``.
    compensated : bool
        ``compensated``: carry p_{n+1} to the next step (instead of Mbar(q_n) v_n from the stored v_n)
        and sum q_{n+1} = q_n + dq, p_{n+1} = p_n + dp with `compensated_sum`.

    Attributes
    ----------
    n_rhs, n_newton : int
        Evaluations of Q_a (and K) and simplified-Newton corrections so far.
    """

    def __init__(self, term, hamiltonian, tol: float, max_iter: int, compensated: bool = True):
        self.term, self.ham = term, hamiltonian
        self.tol, self.max_iter, self.compensated = tol, max_iter, compensated
        self._carried = None                  # (q_{n+1}, v_{n+1}, p_{n+1}, compensations of q and p) of the last step
        self.tol_rel = max(tol, ROUND_OFF)
        self.n_rhs = self.n_newton = self.n_mass_derivatives = 0
        self._factored = None                 # (q, Mbar(q), Cholesky factor) of the last q factored

    def active_forces(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Q_a(t, q, v), counted."""
        self.n_rhs += 1
        return np.asarray(self.ham.active_forces(t, q, v), dtype=float)

    def mass(self, q: np.ndarray):
        """(Mbar(q), its Cholesky factor), reused for the q of the last call (the next step's q_n is
        this step's q_{n+1}); `StepFailed` if Mbar(q) is not positive definite."""
        if self._factored is not None and np.array_equal(self._factored[0], q):
            return self._factored[1:]
        M = self.ham.mass_matrix(q)
        try:
            factor = cho_factor(M, check_finite=False)
        except np.linalg.LinAlgError:
            raise StepFailed("the mass matrix Mbar(q) (M with the Euler parameters' term) is not positive definite "
                             "here: the positions have left the range of the model (a step above the stability "
                             "limit of stiff forces) or a body lacks mass or inertia in some direction; reduce `h`, "
                             "or use method 'index3-alpha'") from None
        self._factored = (q.copy(), M, factor)
        return M, factor

    def forget(self) -> None:
        """Drop the momentum and compensations carried from the last step (the state was corrected)."""
        self._carried = None

    def start(self, q0, v0):
        """(p_n, compensation of q_n, of p_n): those the last step carried when it ended at (q0, v0), else
        Mbar(q_n) v_n and none."""
        c = self._carried
        if c is not None and np.array_equal(c[0], q0) and np.array_equal(c[1], v0):
            return c[2:]
        return self.mass(q0)[0] @ v0, np.zeros(len(q0)), np.zeros(len(q0))

    def step(self, t1: float, h: float, q0, v0, Qa0, G0, lam0):
        """(q_{n+1}, v_{n+1}, Q_a,n+1, G_{n+1}, lam_n) from the state (q0, v0) with its forces Q_a,n and
        constraint rows G_n, starting Newton at the last step's multipliers lam0; None if the
        constraints or forces are not finite; `StepFailed` if Newton does not converge."""
        p0, carry_q, carry_p = self.start(q0, v0)
        found = self._positions(t1, h, q0, v0, p0, carry_q, Qa0, G0, lam0)
        if found is None:
            return None
        q1, carry_q, dP, v_half1, Lam, G1 = found
        found = self._momenta(t1, h, q1, p0, dP, v_half1, G1, v0)
        if found is None:
            return None
        dp, Qa1 = found
        p1, carry_p = compensated_sum(p0, dp, carry_p)
        v1 = cho_solve(self.mass(q1)[1], p1)
        self._carried = (q1, v1, p1, carry_q, carry_p) if self.compensated else None
        return q1, v1, Qa1, G1, 2.0 * Lam / h

    def _positions(self, t1, h, q0, v0, p0, carry_q, Qa0, G0, lam0):
        """(q_{n+1}, its compensation, dP = P - p_n, Mbar_{n+1}^-1 P, Lam, G_{n+1}) by Newton's iteration
        (module docstring) on the increments dP and dq = q_{n+1} - q_n (q_{n+1} = q_n + dq summed with
        `compensated_sum`: no cancellation in the residuals)."""
        ham, n, n_c = self.ham, len(q0), G0.shape[0]
        M0, F0 = self.mass(q0)
        M0inv = cho_solve(F0, np.eye(n))
        Lam = 0.5 * h * lam0
        dP = 0.5 * h * (ham.kinetic_energy_gradient(q0, v0) + Qa0) - G0.T @ Lam     # explicit start
        dq = h * (M0inv @ (p0 + dP))
        full = False                               # with the derivatives of M, once slow contraction asks for them
        previous = np.inf
        for k in range(self.max_iter + 1):
            P = p0 + dP
            q1, carry_q1 = compensated_sum(q0, dq, carry_q)
            v_half0 = M0inv @ P
            K0 = ham.kinetic_energy_gradient(q0, v_half0)
            r1 = dP - 0.5 * h * (K0 + Qa0) + G0.T @ Lam
            _, F1 = self.mass(q1)
            M1inv = cho_solve(F1, np.eye(n))
            v_half1 = M1inv @ P
            r2 = dq - 0.5 * h * (v_half0 + v_half1)
            C1, G1 = self.term.constraints(t1, q1)
            norms = [float(np.abs(r).max(initial=0.0)) for r in (C1, r2, r1)]
            if not np.isfinite(norms).all():
                return None
            q_scale = max(1.0, float(np.abs(q1).max()))
            p_scale = max(float(np.abs(P).max()), float(np.abs(p0).max()), 0.5 * h * float(np.abs(K0).max()),
                          0.5 * h * float(np.abs(Qa0).max(initial=0.0)))
            bounds = (max(self.tol, ROUND_OFF * q_scale), self.tol_rel * q_scale, self.tol_rel * p_scale)
            ratio = max(r / b if b > 0 else (np.inf if r > 0 else 0.0) for r, b in zip(norms, bounds))
            if ratio <= 1.0:
                return q1, carry_q1, dP, v_half1, Lam, G1
            if k == self.max_iter:
                break
            full = full or ratio > SLOW * previous
            previous = ratio
            D = (self.momentum_derivative(q0, v_half0), self.momentum_derivative(q1, v_half1)) if full else None
            try:
                ddP, ddq, dLam = self._correction(h, M0inv, M1inv, G0, G1, D, r1, r2, C1)
            except np.linalg.LinAlgError:
                raise StepFailed("the matrix of Newton's iteration is singular: the constraints are redundant or "
                                 "the configuration is singular (C_q loses rank). RATTLE needs independent "
                                 "constraints; use method 'index3-alpha' (option `regularization`)") from None
            dP, dq, Lam = dP + ddP, dq + ddq, Lam + dLam
            self.n_newton += 1
        names = ("|C|_inf", "the drift residual |r2|_inf", "the momentum residual |r1|_inf")
        worst = max(range(3), key=lambda i: norms[i] / bounds[i])
        raise StepFailed(f"Newton's iteration for (p_{{n+1/2}}, q_{{n+1}}, lam) did not converge in "
                         f"`newton_max_iter` = {self.max_iter} iterations ({names[worst]} = {norms[worst]:.3g} > "
                         f"{bounds[worst]:.3g}, from `newton_tol` = {self.tol:.3g}): reduce `h` or raise "
                         "`newton_max_iter`")

    def momentum_derivative(self, q, v) -> np.ndarray:
        """D = d(Mbar(q) v)/dq at fixed v (n, n), by forward differences (n evaluations of Mbar, step
        sqrt(eps) max(|q|_inf, 1)): only the iteration matrix uses it (dK/dv = D^T, d(Mbar^-1 P)/dq =
        -Mbar^-1 D), so its error changes the rate of convergence, not the solution."""
        eps = np.sqrt(np.finfo(float).eps) * max(1.0, float(np.abs(q).max()))
        p = self.mass(q)[0] @ v
        D = np.empty((len(q), len(q)))
        for k in range(len(q)):
            shifted = q.copy()
            shifted[k] += eps
            D[:, k] = (self.ham.mass_matrix(shifted) @ v - p) / eps
        self.n_mass_derivatives += 1
        return D

    @staticmethod
    def _correction(h, M0inv, M1inv, G0, G1, D, r1, r2, C1):
        """(dP, dq, dLam) of the Newton system in (P, q_{n+1}, Lam) (module docstring); D = (D_n, D_{n+1})
        at (q_n, Mbar_n^-1 P) and (q_{n+1}, Mbar_{n+1}^-1 P), or None: the simplified matrix without
        the derivatives of M."""
        n, n_c = len(r1), len(C1)
        J = np.zeros((2 * n + n_c, 2 * n + n_c))
        J[:n, :n] = np.eye(n)
        J[n:2 * n, :n] = -0.5 * h * (M0inv + M1inv)
        J[n:2 * n, n:2 * n] = np.eye(n)
        if D is not None:
            J[:n, :n] -= 0.5 * h * D[0].T @ M0inv
            J[n:2 * n, n:2 * n] += 0.5 * h * M1inv @ D[1]
        J[:n, 2 * n:] = G0.T
        J[2 * n:, n:2 * n] = G1
        d = np.linalg.solve(J, -np.concatenate([r1, r2, C1]))
        return d[:n], d[n:2 * n], d[2 * n:]

    def _momenta(self, t1, h, q1, p0, dP, v_half1, G1, v0):
        """(p_{n+1} - p_n, Q_a(t_{n+1}, q_{n+1}, v_{n+1})): the second half kick projected onto the hidden
        constraint G_{n+1} Mbar^-1 p_{n+1} + C_t = 0 (p_{n+1} = p_n + dP + h/2 (K_{n+1} + Q_a,n+1) -
        G_{n+1}^T nu), iterated on the forces' dependence on v (in the velocities, as the constant-M path).

        .. code:: text

            u       = Mbar_{n+1}^-1 (p_n + dP + h/2 (K_{n+1} + Q_a,n+1))     the unprojected velocity (the kick)
            nu      = (G Mbar^-1 G^T)^-1 (G u + C_t)                         from G Mbar^-1 p_{n+1} + C_t = 0
            p_{n+1} - p_n = dP + h/2 (K_{n+1} + Q_a,n+1) - G^T nu

        nu is the multiplier of the fixed point's last kick: forces independent of v (or repeating) end the
        iteration with the Q_a its last kick used, whose velocity is taken as it is; forces that changed in the
        last iteration need one kick more (their own), as the equations say."""
        n_c = G1.shape[0]
        _, F1 = self.mass(q1)
        kicked = dP + 0.5 * h * self.ham.kinetic_energy_gradient(q1, v_half1)
        Ct = np.asarray(self.term.time_derivative(t1, q1), dtype=float).reshape(n_c)
        Minv_GT = cho_solve(F1, G1.T) if n_c else np.zeros((len(q1), 0))
        multiplier = hidden_constraint_multiplier(G1, Minv_GT, Ct, mass="Mbar")

        last = []                       # (Q, kick(Q)) of the last kick

        def kick(Q):
            """u - v_n of the unprojected second half kick."""
            last[:] = Q, cho_solve(F1, p0 + kicked + 0.5 * h * Q) - v0
            return last[1]
        dv1 = 2.0 * (v_half1 - v0)
        found = forces_fixed_point(kick, hidden_constraint_projection(multiplier, Minv_GT, v0),
                                   lambda v: self.active_forces(t1, q1, v), self.active_forces(t1, q1, v0 + dv1),
                                   dv1, v0, self.tol, self.max_iter)
        if found is None:
            return None
        Qa1 = found[1]
        du = last[1] if np.array_equal(last[0], Qa1) else kick(Qa1)
        return kicked + 0.5 * h * Qa1 - G1.T @ multiplier(v0 + du), Qa1
