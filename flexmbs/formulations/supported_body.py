"""One body with constant mass and some coordinates held fixed, for `flexmbs.simulate`.

Supports that fix coordinates (a pin fixes a node's x and y, a clamp also its rotation) are
imposed by elimination instead of by constraint equations: with f the free coordinates,

.. code:: text

    M_ff q_f'' = Q_f(t, q, q'),      q_fixed = their initial values,   q_fixed' = 0

State x = (q_f, q_f'); first-order form M_full x' = F(t, x) with M_full = diag(I, M_ff) and
F = (q_f', Q_f); second-order form for generalized-alpha with K = -dQ_f/dq_f (the body's own
`stiffness` when it has one: Q = Q_g - f_int, gravity constant and Q_v = 0 for a constant mass;
else central differences) and C = -dQ_f/dq_f' (zero: no damping).  The equations are
nonlinear (``linear = False``): the implicit integrators iterate, and ``jacobian_key(t) = t``
makes them evaluate a fresh Jacobian at every step.
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

from .base import SecondOrderForm

__all__ = ["SupportedBody"]


class SupportedBody:
    """Formulation of one constant-mass body with the coordinates ``fixed`` held at their q0 values.

    Parameters
    ----------
    body : Body
        With ``constant_mass`` (e.g. `CorotationalBeam2D`).
    fixed : sequence of int
        Indices of the body's coordinates held fixed.
    gravity : array (dim,), optional
    q0 : array (n_q,), optional
        Configuration that gives the fixed values (default the body's initial coordinates).
    """

    name = "supported-body"
    second_state = "delta_dot"
    mass_matrix_constant = True
    linear = False

    def __init__(self, body, fixed=(), gravity=None, q0=None):
        if not getattr(body, "constant_mass", False):
            raise ValueError(f"SupportedBody: body {body.name!r} must have a constant mass matrix "
                             "(constant_mass = True)")
        fixed = np.unique(np.asarray(fixed, dtype=int))
        if fixed.size and (fixed.min() < 0 or fixed.max() >= body.n_q):
            raise ValueError(f"SupportedBody: `fixed` must hold coordinate indices in [0, {body.n_q}), got "
                             f"{fixed.tolist()}")
        self.body, self.gravity = body, (None if gravity is None else np.asarray(gravity, dtype=float))
        self.q_ref = body.initial_coordinates() if q0 is None else np.array(q0, dtype=float)
        self.free = np.setdiff1d(np.arange(body.n_q), fixed)
        self.n = len(self.free)
        self.n_state = 2 * self.n
        M = np.asarray(body.mass_matrix(self.q_ref))
        self.M = M[np.ix_(self.free, self.free)]
        self._M_inv = np.linalg.inv(self.M)
        self.n_rhs = 0

    # -- state ----------------------------------------------------------------------------------
    def state0(self, q0=None, v0=None, t0: float = 0.0) -> np.ndarray:
        """x(t0) from the body's full q0, v0 (default its initial coordinates and velocities)."""
        q = self.q_ref if q0 is None else np.asarray(q0, dtype=float)
        v = self.body.initial_velocities() if v0 is None else np.asarray(v0, dtype=float)
        return np.concatenate([q[self.free], v[self.free]])

    def physical(self, t, x) -> tuple[np.ndarray, np.ndarray]:
        """(q, v) of the whole body from x (n_state,) or (n_t, n_state)."""
        x = np.asarray(x, dtype=float)
        lead = x.shape[:-1]
        q = np.broadcast_to(self.q_ref, lead + (self.body.n_q,)).copy()
        v = np.zeros(lead + (self.body.n_q,))
        q[..., self.free] = x[..., :self.n]
        v[..., self.free] = x[..., self.n:]
        return q, v

    def _Q(self, t, qf, vf) -> np.ndarray:
        q, v = self.q_ref.copy(), np.zeros(self.body.n_q)
        q[self.free], v[self.free] = qf, vf
        return self.body.forces(t, q, v, self.gravity)[self.free]

    def _K(self, t, qf, vf) -> np.ndarray:
        q = self.q_ref.copy()
        q[self.free] = qf
        if hasattr(self.body, "stiffness") and not self.body.loads:
            return self.body.stiffness(q)[np.ix_(self.free, self.free)]
        h = 1e-6 * max(1.0, np.abs(qf).max())
        return -np.column_stack([(self._Q(t, qf + h * e, vf) - self._Q(t, qf - h * e, vf)) / (2 * h)
                                 for e in np.eye(self.n)])

    # -- the formulation contract ---------------------------------------------------------------
    def rhs(self, t, x) -> np.ndarray:
        self.n_rhs += 1
        return np.concatenate([x[self.n:], self._M_inv @ self._Q(t, x[:self.n], x[self.n:])])

    def forcing_full(self, t, x) -> np.ndarray:
        return np.concatenate([x[self.n:], self._Q(t, x[:self.n], x[self.n:])])

    def mass_matrix_full(self, t=None):
        return sparse.csr_array(sparse.block_diag((sparse.identity(self.n), self.M), format="csr"))

    def jacobian(self, t, x=None) -> np.ndarray:
        J = np.zeros((self.n_state, self.n_state))
        J[:self.n, self.n:] = np.eye(self.n)
        J[self.n:, :self.n] = -self._K(t, x[:self.n], x[self.n:])
        return J

    def jacobian_key(self, t):
        return float(t)

    @property
    def second_order(self) -> SecondOrderForm:
        zero = np.zeros((self.n, self.n))
        return SecondOrderForm(M=self.M, f=self._Q, K=self._K, C=lambda t, q, v: zero, key=lambda t: float(t))

    def term(self):
        """What the integrators see (`flexmbs.formulations.terms.ODETerm`): the free coordinates'
        first-order form, nonlinear, with its second-order form."""
        from .terms import ODETerm
        return ODETerm(name=self.name, n_state=self.n_state, rhs=self.rhs, forcing=self.forcing_full,
                       mass_matrix_full=self.mass_matrix_full, jacobian=self.jacobian,
                       jacobian_key=self.jacobian_key, linear=self.linear, second_order=self.second_order)

    def energy(self, x) -> np.ndarray:
        """Total energy T + V_gravity + U_strain at the states x (n_t, n_state) or (n_state,)."""
        q, v = self.physical(0.0, np.atleast_2d(x))
        out = np.array([sum(self.body.energy(qk, vk, self.gravity)) + self.body.strain_energy(qk)
                        for qk, vk in zip(q, v)])
        return out if np.ndim(x) == 2 else out[0]
