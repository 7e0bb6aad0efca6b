"""Volterra's equations in quasi-velocities, full (p equations) and reduced by ignorable coordinates (p - s).

Seed 001 (Nooshabadi and Pishkenari), eqs. (2), (41), (45)-(67), derived again.  With the
linear momentum P_i = m_i V_i and the angular momentum H_i = I_i omega_i (about the centre of
mass, global) of every part, and the partial velocities dV_i/du = B_i W,
domega_i/du = D_i W, Volterra's equations are

.. code:: text

    d/dt (dT/du) - sum_i [ (d/dt (B_i W))^T P_i + (d/dt (D_i W))^T H_i ] = U,     U = W^T Q_e

(from d'Alembert's principle, sum_i (F_i - m_i a_i) . dV_i/du_j = 0, with
m_i a_i . V_ij = d/dt(P_i . V_ij) - P_i . d/dt V_ij, and Euler's H_i' = T_i for the parts).
dT/du = sum_i (B_i W)^T P_i + (D_i W)^T H_i =: pi(t, q, u) is linear in u,
pi = M_u u + N_u, so d/dt pi = M_u u' + A with A = dpi/dq q' + dpi/dt at fixed u:

.. code:: text

    M_u u' = U + K - A,   M_u = W^T M W,   K = sum_i (d/dt(B_i W))^T P_i + (d/dt(D_i W))^T H_i

Unlike Kane's equations no acceleration of a part is formed: only momenta and the rates of
the partial velocities.  A and d/dt(B_i W) come from one complex step of pi and B_i W along
(1, q') at fixed u.

The reduced form (the paper's proposal) uses the quasi-velocities of a `QuasiVelocities`
with ignorable coordinates: q' = W_NI u_NI + X_NI holds the conserved momenta
M_I q' = G_I exactly, and the same equations are written for the p - s non-ignorable
quasi-velocities only (the s equations of the ignorable coordinates are the conservation
laws themselves, already integrated).  The virtual velocities W_NI are admissible
(a W_NI = 0) and together with the ignorable directions e_I span all admissible ones
(M_I W_NI = 0 and M_22 > 0 make them independent), so nothing is lost.
"""
from __future__ import annotations

import numpy as np

from ..bodies.tree import COMPLEX_STEP
from .quasi_velocities import QuasiVelocities, QuasiVelocityError, QuasiVelocityForm, parts_mass_matrix

__all__ = ["Volterra", "ReducedVolterra"]


class Volterra(QuasiVelocityForm):
    """Volterra's equations in the quasi-velocities of a `QuasiVelocities` (module docstring)."""

    name = "volterra"

    def derivatives(self, t, q, u):
        """(q', u') at (t, q, u): `quasi_accelerations` at this one state."""
        qd, kin, Wc, Xc = self._complex_step(t, q, u)
        Qe = self.terms.active_forces(t, q, qd)
        return qd, self.quasi_accelerations(u[None], qd[None], kin, Wc[None], Xc[None], Qe[None])[0]

    def quasi_accelerations(self, u, qd, kin, Wc, Xc, Qe):
        """u' (k, p) of Volterra's equations (module docstring) at k states at once, from the kinematics of the
        parts (k, n_p, ...) and W, X (k, m, p), (k, m) at the complex step along q' (k, m), Qe (k, m) the active
        forces."""
        h = COMPLEX_STEP
        mass, Bc, Dc, Ic = kin
        W, B, D, I = Wc.real, Bc.real, Dc.real, Ic.real
        BWc = Bc @ Wc[:, None]                                      # partial velocities, complex (k, n_p, 3, p)
        DWc = Dc @ Wc[:, None]
        qdc = np.einsum("kmp,kp->km", Wc, u) + Xc                   # q'(q, u) at fixed u
        P = mass[:, None] * np.einsum("kpxm,km->kpx", B, qd)        # linear momenta (k, n_p, 3)
        H = np.einsum("kpxy,kpy->kpx", I, np.einsum("kpxm,km->kpx", D, qd))      # angular momenta
        Pc = mass[:, None] * np.einsum("kpxm,km->kpx", Bc, qdc)
        Hc = np.einsum("kpxy,kpy->kpx", Ic, np.einsum("kpxm,km->kpx", Dc, qdc))
        pi_c = np.einsum("kpxa,kpx->ka", BWc, Pc) + np.einsum("kpxa,kpx->ka", DWc, Hc)
        A = pi_c.imag / h                                           # dpi/dq q' + dpi/dt at fixed u
        K = (np.einsum("kpxa,kpx->ka", BWc.imag, P) + np.einsum("kpxa,kpx->ka", DWc.imag, H)) / h
        BW, DW = BWc.real, DWc.real
        Mu = parts_mass_matrix(mass, BW, DW, I)                        # W^T M W
        U = np.einsum("kma,km->ka", W, Qe)
        return np.linalg.solve(Mu, (U + K - A)[..., None])[..., 0]


class ReducedVolterra(Volterra):
    """Volterra's equations for the non-ignorable quasi-velocities u_NI (state q, u_NI; p - s equations).

    Parameters
    ----------
    system : flexmbs.System
    qv : QuasiVelocities, optional
        Quasi-velocities with ignorable coordinates; default: built from ``ignorable`` and
        ``options``.
    ignorable : "auto" or sequence of int/str
        The ignorable coordinates (detected, or declared and checked).
    **options
        Y, Z of `QuasiVelocities` (p - s rows); default: a null-space basis.
    """

    name = "volterra-reduced"

    def __init__(self, system, qv: QuasiVelocities | None = None, ignorable="auto", **options):
        if qv is None:
            qv = QuasiVelocities(system, ignorable=ignorable, **options)
        if not qv.s:
            raise QuasiVelocityError("the reduced Volterra form needs ignorable coordinates, and none were "
                                     "found (or declared) for this system; use the volterra formulation")
        super().__init__(system, qv)

    def momenta(self, q, qdot) -> np.ndarray:
        """The momenta M_I q' of the ignorable coordinates (conserved: equal to qv.G)."""
        return self.system.mass_matrix(q)[self.qv.ignorable] @ qdot
