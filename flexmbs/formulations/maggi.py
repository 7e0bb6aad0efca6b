"""Maggi's equations: state (q, q'), m equations without multipliers.

Projecting Lagrange's equations M q'' + a^T lam = Q (Q = Q_e + Q_v) onto the admissible
velocities W (a W = 0, `flexmbs.formulations.quasi_velocities`) removes the multipliers,
W^T (M q'' - Q) = 0: p equations.  With the r constraints at acceleration level,
a q'' = gamma, they determine q'':

.. code:: text

    [ W^T M ]          [ W^T Q ]
    [ a     ]  q''  =  [ gamma ]          (m x m)

As in seed 001 (Table 2: 2 m state variables, m equations), the state is (q, q'): the
constraints hold at the acceleration level only, so their velocity-level violation drifts
with the integration error as in the Lagrange formulation (no stabilisation).  W needs no
time derivative here.
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

from .base import forward_difference_jacobian
from .quasi_velocities import (SINGULAR_HINT, QuasiVelocities, QuasiVelocityForm, constraint_rows,
                               least_squares_history)

__all__ = ["Maggi", "MaggiQuasiVelocities", "maggi_accelerations"]


class Maggi:
    """Maggi's equations on a `System` (module docstring); W from a `QuasiVelocities`."""

    name = "maggi"
    mass_matrix_constant = True
    linear = False
    second_order = None
    second_state = "delta_dot"

    def __init__(self, system, qv: QuasiVelocities | None = None, jacobian_refresh: float = 1e-2, **qv_options):
        self.system = system
        self.qv = QuasiVelocities(system, **qv_options) if qv is None else qv
        self.m = system.n_q
        self.n_state = 2 * self.m
        self.n_equations = self.m
        self.n_rhs = 0
        self.jacobian_refresh = float(jacobian_refresh)
        self._I = sparse.identity(self.n_state, format="csr")
        from .index1 import HistoryKernel
        self.history_kernel = HistoryKernel(system)       # the kernel of `multiplier_history`, chosen when first asked

    def state0(self, q0=None, v0=None, t0: float = 0.0, assemble: bool = False) -> np.ndarray:
        """x0 = (q0, q0'), by default the reference state of the quasi-velocities, checked against the
        constraints (refused if inconsistent, or assembled with ``assemble=True``:
        ``System.initial_state``); q0' is then projected onto the velocities the quasi-velocities
        admit (the momenta of ignorable coordinates held)."""
        q0 = self.qv.q0 if q0 is None else q0
        v0 = self.qv.v0 if v0 is None else v0
        q0, v0 = self.system.initial_state(t0, q0, v0, assemble=assemble)
        return np.concatenate([q0, self.qv.admissible(t0, q0, v0)])

    @staticmethod
    def physical(t, x):
        x = np.atleast_2d(x)
        n = x.shape[-1] // 2
        return x[:, :n], x[:, n:]

    def accelerations(self, t, q, v) -> np.ndarray:
        """q'' at (t, q, v): `maggi_accelerations` of the System's M, Q, a and gamma there."""
        W, _ = self.qv.maps(t, q)
        return maggi_accelerations(self.system.mass_matrix(q), self.system.forces(t, q, v), W,
                                   constraint_rows(self.system, t, q)[0], self.system.gamma(t, q, v))

    def rhs(self, t, x):
        self.n_rhs += 1
        q, v = x[:self.m], x[self.m:]
        return np.concatenate([v, self.accelerations(t, q, v)])

    def multipliers(self, t, x) -> np.ndarray:
        """lam at the state x (the reactions are System.reactions(t, q, lam)): Maggi's equations eliminate
        the multipliers, so they are recovered from the rows of Lagrange's equations that W^T drops,
        a^T lam = Q - M q'' with q'' Maggi's (least squares over the m rows; exact where a has full rank)."""
        q, v = x[:self.m], x[self.m:]
        residual = self.system.forces(t, q, v) - self.system.mass_matrix(q) @ self.accelerations(t, q, v)
        return np.linalg.lstsq(constraint_rows(self.system, t, q)[0].T, residual, rcond=None)[0]

    def multiplier_history(self, t, x) -> np.ndarray:
        """lam (N, n_c) at the states x (N, n_state) and times t (N,), e.g. the outputs of a run: `multipliers`'
        equations on all the states at once, in chunks of `flexmbs.formulations.index1.HISTORY_CHUNK` states,

        .. code:: text

            [ W^T M ]        [ W^T Q ]
            [ a     ] q'' =  [ gamma ]          (stacked solve, `maggi_accelerations`)
            a^T lam = Q - M q''                 (stacked least squares, `residual_multipliers`)

        with M, Q, a = C_q, gamma of all the states of a chunk from one kernel call when the System is compiled
        (`flexmbs.formulations.index1.system_terms_history`), else from the System's numpy state by state, and W
        of all of them by one stacked solve (`QuasiVelocities.maps_history`).  The same lam as `multipliers`
        state by state, to round-off."""
        from .index1 import chunked_multiplier_history
        return chunked_multiplier_history(self, self._stacked_multipliers, t, x, SINGULAR_HINT)

    def _stacked_multipliers(self, t, x) -> np.ndarray:
        """lam (N, n_c) of one chunk of `multiplier_history`."""
        from .index1 import system_terms_history
        q, v = x[:, :self.m], x[:, self.m:]
        M, Q, a, gamma, b = system_terms_history(self.system, self.history_kernel, t, q, v)
        W, _ = self.qv.maps_history(t, q, a, b, M=M)
        qdd = maggi_accelerations(M, Q, W, a, gamma)
        return residual_multipliers(M, Q, a, qdd)

    def forcing_full(self, t, x):
        return self.rhs(t, x)

    def mass_matrix_full(self, t=None):
        return self._I

    def jacobian(self, t, x):
        return forward_difference_jacobian(self.rhs, t, x)

    def jacobian_key(self, t):
        return int(np.floor(t / self.jacobian_refresh))

    def term(self):
        """What the integrators see (`flexmbs.formulations.terms.ODETerm`): x' = (v, q''), M_full = I,
        the difference Jacobian, no second-order form, the index-3 form of the same System
        (index3-alpha, state (q, q')) and its start and range checks."""
        from .constrained import ConstrainedProblem
        from .terms import ODETerm, system_checks
        return ODETerm(name=self.name, n_state=self.n_state, rhs=self.rhs, jacobian=self.jacobian,
                       jacobian_key=self.jacobian_key, linear=self.linear,
                       dae=ConstrainedProblem(self.system).term(), **system_checks(self.system, self.physical))


def maggi_accelerations(M, Q, W, a, gamma) -> np.ndarray:
    """q'' of Maggi's equations (module docstring), one state (M (m, m), Q (m,), W (m, p), a (r, m), gamma (r,))
    or k states stacked (a leading axis k on each):

    .. code:: text

        [ W^T M ]        [ W^T Q ]
        [ a     ] q'' =  [ gamma ]
    """
    Wt = np.swapaxes(W, -1, -2)
    A = np.concatenate([Wt @ M, a], axis=-2)
    rhs = np.concatenate([(Wt @ Q[..., None])[..., 0], gamma], axis=-1)
    return np.linalg.solve(A, rhs[..., None])[..., 0]


def residual_multipliers(M, Q, a, qdd) -> np.ndarray:
    """lam (k, r) of k stacked states from the rows of Lagrange's equations that Maggi's drop (M (k, m, m),
    Q (k, m), a (k, r, m), q'' (k, m)):

    .. code:: text

        a^T lam = Q - M q''        (least squares, `least_squares_history`: lstsq's solution)
    """
    return least_squares_history(np.swapaxes(a, 1, 2), Q - np.einsum("kij,kj->ki", M, qdd))


class MaggiQuasiVelocities(QuasiVelocityForm):
    """Maggi's equations with the state (q, u): p equations, the constraints held exactly.

    Substituting q'' = W u' + W' u + X' into W^T (M q'' - Q) = 0:

    .. code:: text

        W^T M W u' = W^T (Q - M (W' u + X'))

    with Lagrange's M and Q = Q_e + Q_v of the bodies (any body kind) and W', X' from one
    complex step.  The same equations as Kane's, computed from M and Q instead of the parts.
    Not one of the five names of the cases (whose ``maggi`` keeps the paper's state (q, q')).
    """

    name = "maggi-quasi-velocities"
    needs_parts = False

    def multipliers(self, t, x) -> np.ndarray:
        """lam at the state x: `multiplier_history` at this one state."""
        return self.multiplier_history([t], x)[0]

    def _stacked_multipliers(self, t, x) -> np.ndarray:
        """lam (N, n_c) of one chunk of `multiplier_history`, from the rows of Lagrange's equations that W^T drops:

        .. code:: text

            W^T M W u' = W^T (Q - M c),   c = W' u + X',   q'' = W u' + c
            a^T lam = Q - M q''                                       (least squares, `residual_multipliers`)

        W, X and W', X' from one complex step of the chunk (`complex_step_history`), M and Q at (q, q') from the
        kernel's `terms_history` or the System's numpy (`flexmbs.formulations.index1.system_terms_history`)."""
        from ..bodies.tree import COMPLEX_STEP
        from .index1 import system_terms_history
        q, u = x[:, :self.m], x[:, self.m:]
        qd, _, Wc, Xc, a = self.complex_step_history(t, q, u)
        M, Q = system_terms_history(self.system, self.history_kernel, t, q, qd)[:2]
        W, c = Wc.real, (np.einsum("kmp,kp->km", Wc.imag, u) + Xc.imag) / COMPLEX_STEP
        Wt = np.swapaxes(W, 1, 2)
        u_dot = np.linalg.solve(Wt @ M @ W, (Wt @ (Q - np.einsum("kij,kj->ki", M, c))[..., None]))[..., 0]
        qdd = np.einsum("kmp,kp->km", W, u_dot) + c
        return residual_multipliers(M, Q, a, qdd)

    def derivatives(self, t, q, u):
        W, X = self.qv.maps(t, q)
        qd = W @ u + X
        _, _, Wd, Xd = self.qv.maps_and_rates(t, q, qd)
        M = self.system.mass_matrix(q)
        Q = self.system.forces(t, q, qd)
        return qd, np.linalg.solve(W.T @ M @ W, W.T @ (Q - M @ (Wd @ u + Xd)))
