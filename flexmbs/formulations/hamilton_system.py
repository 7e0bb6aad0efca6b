"""Hamilton's canonical equations of a `flexmbs.System`, with momenta augmented by velocity-level
multipliers (Bayo and Ledesma [1]_); the derivation is in docs/formulations_system.md.

With T = 1/2 q'^T M(q) q' and the constraint rows at the velocity level a(t, q) q' + b(t, q) = 0
(holonomic: a = C_q, b = C_t), Lagrange's equations with multipliers,
d/dt (M q') - dT/dq + a^T lam = Q_a, take the first-order form, with sigma' = lam,

.. code:: text

    p = M q' + a^T sigma                                    (the state: x = (q, p))
    [ M  a^T ] [ q'    ]   [ p  ]
    [ a  0   ] [ sigma ] = [ -b ]                           q' and sigma from (q, p)
    p' = dT/dq + Q_a + a'^T sigma                           a' = d a / dt along (1, q')

so the constraints hold at the velocity level at every evaluation (the positions drift with the
integration error, as the index-1 forms' velocities do), and M may be singular where the saddle-point
matrix is not (rigid bodies in Euler parameters).  At the start sigma = 0 and p = M q', the canonical
momentum dL/dq'.  dT/dq and Q_a are the bodies' own (`flexmbs.formulations.body_terms`); a' comes
from one complex step of the constraint rows (`flexmbs.formulations.quasi_velocities.constraint_rows`).
No term of this form holds Lagrange's Q_v.

References
----------
.. [1] E. Bayo, R. Ledesma, Augmented Lagrangian and mass-orthogonal projection methods for
       constrained multibody dynamics, Nonlinear Dynamics 9 (1996) 113-130, doi:10.1007/BF01833296.
.. [2] S. Vlase et al., review of Lagrange, Gibbs-Appell, Maggi and Hamilton equations for FE models
       of elastic multibody systems (../shared/seeds/004), sec. 5.3 (eq. (46): p = dL/d(delta')).
"""
from __future__ import annotations

from typing import Hashable

import numpy as np
from scipy import sparse

from .augmented import saddle_point_history, solve_saddle_point
from .base import forward_difference_jacobian
from .body_terms import HAMILTON, BodyTerms
from .index1 import HistoryKernel, chunked_multiplier_history, history_chunks, system_terms_history

__all__ = ["HamiltonSystem"]

SINGULAR_SADDLE = ("the saddle point [[M, C_q^T], [C_q, 0]] is singular there (redundant constraints, or M singular "
                   "on the admissible velocities)")       # `multiplier_history`'s


class HamiltonSystem:
    """Hamilton's equations of a `System` in (q, p) (module docstring).

    Parameters
    ----------
    system : flexmbs.System
    jacobian_refresh : float
        Seconds between Jacobian updates (forward differences) for the implicit integrators.
    """

    name = "hamilton"
    second_state = "p"
    mass_matrix_constant = True
    linear = False
    second_order = None

    def __init__(self, system, jacobian_refresh: float = 1e-2):
        self.body_terms = BodyTerms(system, HAMILTON, self.name)
        if not (np.isfinite(jacobian_refresh) and jacobian_refresh > 0):
            raise ValueError(f"`jacobian_refresh` must be a positive time [s], got {jacobian_refresh!r}.")
        self.system = system
        self.n = system.n_q
        self.n_state = 2 * self.n
        self.n_rhs = 0
        self.jacobian_refresh = float(jacobian_refresh)
        self._I = sparse.identity(self.n_state, format="csr")
        self.history_kernel = HistoryKernel(system)       # the kernel of `multiplier_history`, chosen when first asked

    def state0(self, q0=None, v0=None, t0: float = 0.0, assemble: bool = False) -> np.ndarray:
        """x0 = (q0, M(q0) q0') (sigma = 0), the start checked (or assembled) by ``System.initial_state``;
        a singular saddle-point matrix (redundant constraints) raises `RedundantConstraintError`."""
        q0, v0 = self.system.initial_state(t0, q0, v0, assemble=assemble)
        x0 = np.concatenate([q0, self.system.mass_matrix(q0) @ v0])
        self.velocities(t0, q0, x0[self.n:])
        return x0

    def velocities(self, t: float, q: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q', sigma) of ``[[M, a^T], [a, 0]] [q'; sigma] = [p; -b]``."""
        s = self.system
        return solve_saddle_point(s.mass_matrix(q), p, s.jacobian(t, q), -s.time_derivative(t, q), t=t)

    def physical(self, t, x) -> tuple[np.ndarray, np.ndarray]:
        """(q, q') from states x (2 n,) or (n_t, 2 n) at times t."""
        x = np.asarray(x, dtype=float)
        X = np.atleast_2d(x)
        t = np.broadcast_to(np.asarray(t, dtype=float), (len(X),))
        q = X[:, :self.n]
        qd = np.concatenate([np.zeros((0, self.n))] + [self.velocity_history(t[c], q[c], X[c, self.n:]) for c in
                                                        history_chunks(len(X), self.system.n_q + self.system.n_c)])
        return (q[0], qd[0]) if x.ndim == 1 else (q, qd)

    def velocity_history(self, t, q, p) -> np.ndarray:
        """q' (N, n_q) of `velocities` at N states (t (N,), q, p (N, n_q)) at once: M, a = C_q, b = C_t of all of
        them (one kernel call when the System is compiled, `flexmbs.formulations.index1.system_terms_history`),
        then the stacked saddle points ``[[M, a^T], [a, 0]] [q'; sigma] = [p; -b]``
        (`flexmbs.formulations.augmented.saddle_point_history`)."""
        M, _, Cq, _, Ct = system_terms_history(self.system, self.history_kernel, t, q, np.zeros_like(q))
        return saddle_point_history(M, p, Cq, -Ct, t=t)[0]

    def constraint_rate(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """a' = d a(t, q) / dt along (1, q'), (n_c, n_q), by central differences of ``System.jacobian``
        with the step eps = 1e-6 max(1, |q|) / max(1, |q'|)."""
        eps = 1e-6 * max(1.0, np.abs(q).max()) / max(1.0, np.abs(qd).max())
        jac = self.system.jacobian
        return (jac(t + eps, q + eps * qd) - jac(t - eps, q - eps * qd)) / (2.0 * eps)

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """x' = (q', dT/dq + Q_a + a'^T sigma)."""
        self.n_rhs += 1
        q, p = x[:self.n], x[self.n:]
        qd, sigma = self.velocities(t, q, p)
        pd = self.body_terms.kinetic_energy_gradient(q, qd) + self.body_terms.active_forces(t, q, qd)
        if sigma.size:
            pd += self.constraint_rate(t, q, qd).T @ sigma
        return np.concatenate([qd, pd])

    def multipliers(self, t: float, x: np.ndarray) -> np.ndarray:
        """lam = sigma' at the state x (the reactions are System.reactions(t, q, lam)): the time derivative
        of the velocity equations ``[[M, a^T], [a, 0]] [q'; sigma] = [p; -b]`` along the motion,

        .. code:: text

            [ M  a^T ] [ q''    ]   [ dT/dq + Q_a - M' q' ]
            [ a  0   ] [ sigma' ] = [ -a' q' - b'         ]

        (p' - a'^T sigma = dT/dq + Q_a), M' q', a' and b' by central differences along (1, q')."""
        s, n = self.system, self.n
        q, p = x[:n], x[n:]
        qd, _ = self.velocities(t, q, p)
        eps = 1e-6 * max(1.0, np.abs(q).max()) / max(1.0, np.abs(qd).max())
        ahead, behind = (t + eps, q + eps * qd), (t - eps, q - eps * qd)
        M_dot_qd = (s.mass_matrix(ahead[1]) - s.mass_matrix(behind[1])) @ qd / (2.0 * eps)
        a_dot = (s.jacobian(*ahead) - s.jacobian(*behind)) / (2.0 * eps)
        b_dot = (s.time_derivative(*ahead) - s.time_derivative(*behind)) / (2.0 * eps)
        top = self.body_terms.kinetic_energy_gradient(q, qd) + self.body_terms.active_forces(t, q, qd) - M_dot_qd
        return solve_saddle_point(s.mass_matrix(q), top, s.jacobian(t, q), -a_dot @ qd - b_dot, t=t)[1]

    def multiplier_history(self, t, x) -> np.ndarray:
        """lam = sigma' (N, n_c) at the states x (N, n_state) and times t (N,), e.g. the outputs of a run, all at once
        (in chunks of `flexmbs.formulations.index1.HISTORY_CHUNK` states).  `multipliers`' equations with their
        right-hand sides written out: differentiating p = M q' + a^T sigma along the motion, p' - a'^T sigma
        = dT/dq + Q_a (`rhs`) gives M q'' + a^T sigma' = dT/dq - M' q' + Q_a = Q, Lagrange's generalized forces
        (Q_v = dT/dq - M' q' for T = 1/2 q'^T M q'), and differentiating a q' + b = 0 gives a q'' = -a' q' - b'
        = gamma, so

        .. code:: text

            [ M  a^T ] [ q'    ]   [ p  ]                                 q' of the state (stacked solve)
            [ a  0   ] [ sigma ] = [ -b ]
            [ M  a^T ] [ q''    ]   [ Q     ]                             lam = sigma' (stacked solve)
            [ a  0   ] [ sigma' ] = [ gamma ]

        with M, a = C_q, b = C_t at (t, q) and Q, gamma at (t, q, q') of all the states of a chunk from one kernel
        call each when the System is compiled (`flexmbs.formulations.index1.system_terms_history`), else from the
        System's numpy state by state; both solves `flexmbs.formulations.augmented.saddle_point_history`.  Q and
        gamma are exact where `multipliers` takes M' q', a' and b' by central differences (relative error about
        1e-10), so the two agree to that.  The second solve is the augmented Lagrange formulation's own (the same
        stacked saddle point on the same terms): what is Hamilton's here is q' from p; `multipliers`, sigma
        differentiated along Hamilton's flow, is the independent computation the tests compare it with."""
        return chunked_multiplier_history(self, self._stacked_multipliers, t, x, SINGULAR_SADDLE)

    def _stacked_multipliers(self, t, x) -> np.ndarray:
        """lam (N, n_c) of one chunk of `multiplier_history`."""
        q = x[:, :self.n]
        qd = self.velocity_history(t, q, x[:, self.n:])
        M, Q, Cq, gamma, _ = system_terms_history(self.system, self.history_kernel, t, q, qd)
        return saddle_point_history(M, Q, Cq, gamma, t=t)[1]

    def forcing_full(self, t: float, x: np.ndarray) -> np.ndarray:
        """F(t, x) = x' (M_full = I)."""
        return self.rhs(t, x)

    def mass_matrix_full(self, t: float | None = None):
        """The identity (q' is solved for in `rhs`)."""
        return self._I

    def jacobian(self, t: float, x: np.ndarray) -> np.ndarray:
        """d(x')/dx by forward differences of `rhs`."""
        return forward_difference_jacobian(self.rhs, t, x)

    def jacobian_key(self, t: float) -> Hashable:
        """Changes every `jacobian_refresh` seconds."""
        return int(np.floor(t / self.jacobian_refresh))

    def term(self):
        """What the integrators see (`flexmbs.formulations.terms.ODETerm`): x' = (q', p'), M_full = I, the
        difference Jacobian, no second-order form (the state holds momenta), the System's start and
        range checks."""
        from .terms import ODETerm, system_checks
        return ODETerm(name=self.name, n_state=self.n_state, rhs=self.rhs, jacobian=self.jacobian,
                       jacobian_key=self.jacobian_key, linear=self.linear, **system_checks(self.system, self.physical))
