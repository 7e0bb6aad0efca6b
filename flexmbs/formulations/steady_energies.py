"""Energies and powers of a steady model for many states at once.

The same quantities as `flexmbs.formulations.energies` (see `Energies` for their meaning),
for a model whose frame state is constant (``model.steady``: constant spin or fixed frame,
origin at rest, no gravity in a rotating frame), evaluated for N states in one call with
matrix products over the batch instead of a Python call per state.  With the frame
quantities omega, v_O, alpha = R^T (a_O - g), A = tilde(eps) + tilde(omega)^2 constant:

.. code:: text

    sy      = s + m_O delta                                   int rho y dV
    Y[a, b] = J[a, b] + d[b, a] . delta + d[a, b] . delta + delta^T S[a, b] delta
    T2 = delta'^T M delta' / 2
    T1 = v_O . m_O delta' + delta' . (omega . g + G(omega) delta)
    T0 = m |v_O|^2 / 2 + v_O . tilde(omega) sy + (|omega|^2 tr Y - omega^T Y omega) / 2
    V = delta^T K delta / 2,  V_geo = delta^T K_geo delta / 2,  V_g = -g . (m r_O + R sy)
    P_frame = v_O . (m alpha + A sy + 2 tilde(omega) m_O delta' + m_O delta'')
              + omega . (sy x alpha + c(A, Y) + 2 c(tilde(omega), Y_yv) + c(I, Y_ya))

with c(B, Y)_i = eps_ijk B_kl Y_jl and Y_yv, Y_ya the moments of delta with delta' and
delta'' without the x x term (`Model.moments`).  Checked against the one-state functions
in tests/test_exact.py.

The four powers are quadratic polynomials of (delta, delta', delta'', f); when these are
linear maps of one vector y (with a component fixed to 1 for the constant terms),
`SteadyEnergies.power_forms` gives them as symmetric matrices, P_c = y^T Q_c y, from the
model's matrices in one pass (method "exact" integrates them in closed form).  With
omega . c(B, Y) = sum_jl M(B)_jl Y_jl, M(B)_jl = omega_i eps_ijk B_kl, every moment term is
linear in the entries of Y, and Y[a, b] = J_ab + d[a, b] . delta + d[b, a] . beta
+ delta^T S_ab beta (`Model.moments`).
"""
from __future__ import annotations

import numpy as np

from ._common import tilde

__all__ = ["SteadyEnergies"]

EPS = np.zeros((3, 3, 3))                                  # Levi-Civita symbol eps_ijk
EPS[0, 1, 2] = EPS[1, 2, 0] = EPS[2, 0, 1] = 1.0
EPS[0, 2, 1] = EPS[2, 1, 0] = EPS[1, 0, 2] = -1.0


def _cross_moment(B: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """c_i = eps_ijk B_kl Y_jl for Y (3, 3, N): (3, N)."""
    T = np.tensordot(B, Y, axes=([1], [1]))               # T[k, j] = B_kl Y_jl
    return np.stack([T[2, 1] - T[1, 2], T[0, 2] - T[2, 0], T[1, 0] - T[0, 1]])


class SteadyEnergies:
    """Batched energies and powers of a steady ``model`` (module docstring).

    Arrays of states are (N, n) (rows: states); results are (N,) per quantity.
    """

    def __init__(self, model):
        if not model.steady:
            raise ValueError("SteadyEnergies needs a steady model (constant frame state)")
        self.model = md = model
        fs = md.frame(0.0)
        self.w, self.vO = np.asarray(fs.omega, float), np.asarray(fs.v_O_local, float)
        self.W = tilde(self.w)
        self.A = tilde(fs.eps) + self.W @ self.W
        self.alpha = fs.R.T @ (fs.a_O - md.gravity)
        self.g_r = md.gravity @ fs.R                        # g . R (constant where g != 0: fixed frame)
        self.g_rO = float(md.gravity @ (md.mass * fs.r_O))
        self.Gw = md.G_matrix(self.w)
        self.wg = self.w @ md.g

    def _Kg(self, D: np.ndarray) -> np.ndarray:
        """K_geo D for D (n, N)."""
        md = self.model
        return md.K_dot(0.0, D) - md.K_op @ D

    def _moments(self, D, B, with_x_second: bool):
        """Y (3, 3, N) of `Model.moments` for columns D, B (n, N)."""
        md = self.model
        n = D.shape[0]
        Y = (md.d.reshape(9, n) @ B).reshape(3, 3, -1).transpose(1, 0, 2).copy()   # d[b, a] . beta
        for (a, b), Sab in md.S_op.items():
            Y[a, b] += np.einsum("nN,nN->N", D, Sab @ B)
        if with_x_second:
            Y += md.inv.J[:, :, None] + (md.d.reshape(9, n) @ D).reshape(3, 3, -1)
        return Y

    def evaluate(self, delta, delta_dot, delta_ddot, f) -> dict[str, np.ndarray]:
        """Every field of `Energies` for N states: delta, delta_dot, delta_ddot (N, n) and the
        load factors f (N, k)."""
        md = self.model
        D, Dd, Ddd = (np.asarray(a, dtype=float).T for a in (delta, delta_dot, delta_ddot))
        w, vO, W = self.w, self.vO, self.W
        sy = md.inv.s[:, None] + md.m_O @ D
        Y = self._moments(D, D, True)
        T2 = 0.5 * np.einsum("nN,nN->N", Dd, md.M_op @ Dd)
        T1 = vO @ (md.m_O @ Dd) + self.wg @ Dd + np.einsum("nN,nN->N", Dd, self.Gw @ D)
        trY = Y[0, 0] + Y[1, 1] + Y[2, 2]
        T0 = (0.5 * md.mass * (vO @ vO) + (vO @ W) @ sy
              + 0.5 * ((w @ w) * trY - np.einsum("a,abN,b->N", w, Y, w)))
        V = 0.5 * np.einsum("nN,nN->N", D, md.K_op @ D)
        KgD = self._Kg(D)
        V_geo = 0.5 * np.einsum("nN,nN->N", D, KgD)
        V_g = -(self.g_rO + self.g_r @ sy)
        q = md.Q @ np.asarray(f, dtype=float).T if md.Q.shape[1] else np.zeros_like(Dd)
        P_damping = (np.einsum("nN,nN->N", Dd, md.C_op @ Dd) if md.C_op is not None
                     else np.zeros(Dd.shape[1]))
        mO_dd = md.m_O @ Dd
        p1 = vO @ (md.mass * self.alpha[:, None] + self.A @ sy + 2.0 * W @ mO_dd + md.m_O @ Ddd)
        torque = (np.cross(sy.T, self.alpha).T + _cross_moment(self.A, Y)
                  + 2.0 * _cross_moment(W, self._moments(D, Dd, False))
                  + _cross_moment(np.eye(3), self._moments(D, Ddd, False)))
        return dict(T=T2 + T1 + T0, T2=T2, T1=T1, T0=T0, V=V, V_geo=V_geo, V_g=V_g,
                    jacobi=T2 - T0 + V + V_geo + V_g, P_loads=np.einsum("nN,nN->N", q, Dd),
                    P_damping=P_damping, P_frame=p1 + w @ torque,
                    P_stiffening=-np.einsum("nN,nN->N", Dd, KgD))

    def power_forms(self, D, V, Acc, F, one) -> np.ndarray:
        """Q (4, m, m), symmetric, with (P_loads, P_damping, P_frame, P_stiffening) = y^T Q_c y
        for delta = D y, delta' = V y, delta'' = Acc y (each (n, m)), the load factors
        f = F y ((k, m)) and one . y = 1 ((m,)): the powers of `evaluate` as quadratic forms,

        .. code:: text

            P_loads = (V y)^T Q_f (F y),   P_damping = (V y)^T C (V y),
            P_stiffening = -(V y)^T K_geo (D y),
            P_frame = p1 + omega . (sy x alpha) + sum_ab [M(A) Y + 2 M(W) Y_yv + M(I) Y_ya]_ab

        (module docstring); a linear term v . y is the form sym(one v^T), a constant c the
        form c one one^T."""
        md = self.model
        w, vO = self.w, self.vO
        one = np.asarray(one, dtype=float)
        P_loads = V.T @ (md.Q @ F) if md.Q.shape[1] else np.zeros((len(one),) * 2)
        P_damping = V.T @ (md.C_op @ V) if md.C_op is not None else np.zeros_like(P_loads)
        P_stiffening = -V.T @ self._Kg(D)
        # P_frame: constant and linear terms, then the moments' bilinear ones
        const = vO @ (md.mass * self.alpha) + (vO @ self.A + np.cross(self.alpha, w)) @ md.inv.s
        lin = ((vO @ self.A + np.cross(self.alpha, w)) @ md.m_O) @ D + (2.0 * vO @ self.W @ md.m_O) @ V \
            + (vO @ md.m_O) @ Acc
        P_frame = np.zeros_like(P_loads)
        for B, P, Qm, scale, x_second in ((self.A, D, D, 1.0, True), (self.W, D, V, 2.0, False),
                                          (np.eye(3), D, Acc, 1.0, False)):
            c, v, bil = self._moment_form(np.einsum("i,ijk,kl->jl", w, EPS, B), P, Qm, x_second)
            const, lin, P_frame = const + scale * c, lin + scale * v, P_frame + scale * bil
        P_frame = P_frame + np.outer(one, lin) + const * np.outer(one, one)
        Q = np.stack([P_loads, P_damping, P_frame, P_stiffening])
        return 0.5 * (Q + Q.transpose(0, 2, 1))

    def _moment_form(self, M, P, Qm, with_x_second: bool):
        """(constant, linear (m,), bilinear (m, m)) of sum_ab M_ab Y_ab with Y the moments
        `_moments` of delta = P y and beta = Qm y (P, Qm (n, m))."""
        md = self.model
        lin = np.einsum("ab,ban->n", M, md.d) @ Qm
        const = 0.0
        if with_x_second:
            const = float(np.sum(M * md.inv.J))
            lin = lin + np.einsum("ab,abn->n", M, md.d) @ P
        SQ = sum((M[a, b] * (Sab @ Qm) for (a, b), Sab in md.S_op.items() if M[a, b] != 0.0),
                 np.zeros_like(Qm))
        return const, lin, P.T @ SQ
