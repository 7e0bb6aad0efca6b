"""Hamilton's canonical equations, state x = (delta, p).

With the Lagrangian L = T - V - V_geo of ``lagrange.py`` (V_geo = delta^T K_geo(t) delta / 2,
the geometric stiffening, when the model has it) the momentum conjugate to delta is

.. code:: text

    p = dL/d delta' = [m] delta' + b(t) + G(omega) delta,      b = m_O^T v_O + sum_i omega_i g_i

and the Hamiltonian H = p . delta' - L gives (ref. [1] eq. (13), corrected: -[k] delta,
not -[k] delta / 2, and the gyroscopic term from dT/d delta)

.. code:: text

    delta' =  dH/dp     = [m]^-1 (p - b - G(omega) delta)
    p'     = -dH/d delta + Q_nc
           = -(m_O^T tilde(omega) v_O + {q^i(omega)} + [k(omega)] delta + G(omega) delta')
             - ([k] + K_geo(t)) delta + {q} + m_O^T R^T g - C delta'

For implicit integrators the same equations are written with the delta' coupling on the
left, a sparse descriptor form  [[m, 0], [G + C, I]] x' = F(t, x).

References
----------
.. [1] S. Vlase, A. E. Nicolescu, M. Marin, Mathematics 8 (2020) 1401, doi:10.3390/math8091401.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from .base import Formulation
from ._common import tilde
from ..lazy import LazyModule

sparse = LazyModule("scipy.sparse")


class Hamilton(Formulation):
    """First-order Hamilton equations in (delta, p)."""

    name: ClassVar[str] = "hamilton"
    second_state: ClassVar[str] = "p"
    mass_matrix_constant: ClassVar[bool] = False

    def _b(self, fs):
        return self.model.m_O.T @ fs.v_O_local + fs.omega @ self.model.g

    def momentum(self, t, delta, delta_dot):
        """p = [m] delta' + b(t) + G(omega) delta."""
        fs = self.model.frame(t)
        return self.model.M_op @ delta_dot + self._b(fs) + self.model.G_dot(fs.omega, delta)

    def state0(self, delta0, delta_dot0, t0=0.0):
        delta0, delta_dot0 = np.asarray(delta0, float), np.asarray(delta_dot0, float)
        return np.concatenate([delta0, self.momentum(t0, delta0, delta_dot0)])

    def velocity(self, t, delta, p):
        """delta' = dH/dp."""
        fs = self.model.frame(t)
        return self._M_solver.solve(p - self._b(fs) - self.model.G_dot(fs.omega, delta))

    def _p_dot(self, fs, t, delta, delta_dot):
        md = self.model
        W = tilde(fs.omega)
        WW = W @ W
        # -dH/d delta: transport, centrifugal and gyroscopic terms of dT/d delta, elastic force
        minus_dH_ddelta = (md.m_O.T @ (fs.R.T @ md.gravity - W @ fs.v_O_local) - md.d_sum(WW)
                           - md.S_dot(WW, delta) - md.G_dot(fs.omega, delta_dot) - md.K_dot(t, delta))
        return minus_dH_ddelta + md.q_ext(t) - md.damping_force(delta_dot)

    def rhs(self, t, x):
        if self._compiled is not None:
            return super().rhs(t, x)
        self.n_rhs += 1
        delta, p = x[:self.n], x[self.n:]
        fs = self.model.frame(t)
        delta_dot = self._M_solver.solve(p - self._b(fs) - self.model.G_dot(fs.omega, delta))
        return np.concatenate([delta_dot, self._p_dot(fs, t, delta, delta_dot)])

    def physical(self, t, x):
        x = np.asarray(x)
        if x.ndim == 1:
            return x[:self.n], self.velocity(t, x[:self.n], x[self.n:])
        if self.model.steady and len(x):              # b and G(omega) constant: one batched solve
            md, fs = self.model, self.model.frame(0.0)
            delta = x[:, :self.n]
            rhs = x[:, self.n:].T - self._b(fs)[:, None] - md.G_matrix(fs.omega) @ delta.T
            return delta, np.asarray(self._M_solver.solve(rhs)).T
        v = np.array([self.velocity(ti, xi[:self.n], xi[self.n:]) for ti, xi in zip(np.atleast_1d(t), x)])
        return x[:, :self.n], v

    # -- descriptor form for implicit methods ----------------------------------------------------
    def mass_matrix_full(self, t=None):
        """[[m, 0], [G(omega) + C, I]]: dense for small models, CSR otherwise."""
        t = 0.0 if t is None else t
        md = self.model
        GC = md.G_matrix(md.frame(t).omega) + (md.C_damp if not md.dense else
                                                (0.0 if md.C_op is None else md.C_op))
        if md.dense:
            n = self.n
            return np.block([[md.M_op, np.zeros((n, n))], [GC, np.eye(n)]])
        I = sparse.identity(self.n, format="csr")
        return sparse.csr_array(sparse.block_array([[md.M, None], [GC, I]], format="csr"))

    def forcing_full(self, t, x):
        md = self.model
        delta, p = x[:self.n], x[self.n:]
        fs = md.frame(t)
        W = tilde(fs.omega)
        F1 = p - self._b(fs) - md.G_dot(fs.omega, delta)
        F2 = (md.m_O.T @ (fs.R.T @ md.gravity - W @ fs.v_O_local) - md.d_sum(W @ W)
              - md.S_dot(W @ W, delta) - md.K_dot(t, delta) + md.q_ext(t))
        return np.concatenate([F1, F2])

    def sparse_step(self):
        """Hamilton's descriptor form stepped as S_H dq = F1 + h F2 / 2 (`flexmbs.integrators.midpoint`)."""
        from .terms import SparseStep
        return SparseStep(model=self.model, canonical=True, forcing=self.forcing_full,
                          gyroscopic_dot=self.gyroscopic_dot, compiled=self._compiled is not None)

    def gyroscopic_dot(self, t, v):
        """G(omega(t)) v = sum_i omega_i G_i v, product by product (``Model.G_dot`` would build and
        cache the combined matrix when omega recurs: wasted work when it is new at every step)."""
        md = self.model
        out = np.zeros_like(v, dtype=float)
        for wi, Gi in zip(md.frame(t).omega, md.G_op):
            if Gi is not None and wi != 0.0:
                out += wi * (Gi @ v)
        return out

    def jacobian(self, t, x=None):
        """[[-G(omega), I], [-([k] + K_geo + [k(omega)]), 0]]: dense for small models, CSR otherwise."""
        md = self.model
        G = md.G_matrix(md.frame(t).omega)
        K = md.frame_stiffness(t, eps=False)
        if md.dense:
            n = self.n
            return np.block([[-G, np.eye(n)], [-K, np.zeros((n, n))]])
        I = sparse.identity(self.n, format="csr")
        return sparse.csr_array(sparse.block_array([[-G, I], [-K, None]], format="csr"))
