"""Energies and powers shared by all formulations (they are computed from delta and delta')."""
from __future__ import annotations

import numpy as np

from ..frozen import FrozenFields
from ..rotations import tilde  # noqa: F401  (kept importable here: the one skew matrix is rotations.skew)


class Energies(FrozenFields):
    """Energies [J] and powers [W] at one instant.

    T: kinetic energy int rho |v|^2 / 2 dV of the body (frame motion included);
    T2, T1, T0: its parts quadratic, linear and free of delta'; V: strain energy
    delta^T [k] delta / 2; V_geo = delta^T K_geo(t) delta / 2 (geometric stiffening);
    V_g: gravity potential; jacobi = T2 - T0 + V + V_geo + V_g (constant when the Lagrangian
    has no explicit time dependence, e.g. constant spin, no loads, no damping);
    P_loads = q . delta'; P_damping = delta'^T C delta'; P_frame = int rho (a - g) . v_rig dV;
    P_stiffening = -delta'^T K_geo(t) delta, the power of the geometric-stiffness force.
    Frozen (`flexmbs.frozen`).
    """

    def __init__(self, T: float, T2: float, T1: float, T0: float, V: float, V_geo: float, V_g: float,
                 jacobi: float, P_loads: float, P_damping: float, P_frame: float, P_stiffening: float):
        self._set_fields(locals())

    @property
    def E(self) -> float:
        """Total mechanical energy T + V + V_g."""
        return self.T + self.V + self.V_g


def energies(model, t, delta, delta_dot, delta_ddot) -> Energies:
    fs = model.frame(t)
    w, vO = fs.omega, fs.v_O_local
    W = tilde(w)
    sy = model.inv.s + model.m_O @ delta
    Y = model.moments(delta, delta)
    T2 = 0.5 * delta_dot @ (model.M_op @ delta_dot)
    T1 = vO @ (model.m_O @ delta_dot) + delta_dot @ (w @ model.g + model.G_dot(w, delta))
    T0 = 0.5 * model.mass * vO @ vO + vO @ (W @ sy) + 0.5 * w @ ((np.trace(Y) * np.eye(3) - Y) @ w)
    K_delta = model.K_op @ delta
    V = 0.5 * delta @ K_delta
    Kg_delta = model.K_dot(t, delta) - K_delta
    V_geo = 0.5 * delta @ Kg_delta
    V_g = -model.gravity @ (model.mass * fs.r_O + fs.R @ sy)
    return Energies(T=T2 + T1 + T0, T2=T2, T1=T1, T0=T0, V=V, V_geo=V_geo, V_g=V_g,
                    jacobi=T2 - T0 + V + V_geo + V_g, P_stiffening=-float(delta_dot @ Kg_delta),
                    P_loads=float(model.q_ext(t) @ delta_dot),
                    P_damping=float(delta_dot @ model.damping_force(delta_dot)),
                    P_frame=model.rigid_velocity_power(t, delta, delta_dot, delta_ddot))
