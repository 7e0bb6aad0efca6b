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
from .quasi_velocities import QuasiVelocities, QuasiVelocityForm, constraint_rows

__all__ = ["Maggi", "MaggiQuasiVelocities"]


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
        M = self.system.mass_matrix(q)
        Q = self.system.forces(t, q, v)
        W, _ = self.qv.maps(t, q)
        A = np.vstack([W.T @ M, constraint_rows(self.system, t, q)[0]])
        return np.linalg.solve(A, np.concatenate([W.T @ Q, self.system.gamma(t, q, v)]))

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

    def derivatives(self, t, q, u):
        W, X = self.qv.maps(t, q)
        qd = W @ u + X
        _, _, Wd, Xd = self.qv.maps_and_rates(t, q, qd)
        M = self.system.mass_matrix(q)
        Q = self.system.forces(t, q, qd)
        return qd, np.linalg.solve(W.T @ M @ W, W.T @ (Q - M @ (Wd @ u + Xd)))
