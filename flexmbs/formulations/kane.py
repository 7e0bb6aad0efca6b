"""Kane's equations (Gibbs-Appell) in quasi-velocities: state (q, u), p equations.

With q' = W u + X (`flexmbs.formulations.quasi_velocities`), the velocity of part i's centre
of mass is V_i = B_i q' and its angular velocity omega_i = D_i q', so its partial
velocities are dV_i/du = B_i W and domega_i/du = D_i W.  Kane's equations [1]_ (equivalently
Gibbs-Appell's, dS/du' = U with the acceleration energy S) say that the generalized active
forces balance the generalized inertia forces:

.. code:: text

    sum_i (B_i W)^T (m_i a_i - F_i) + (D_i W)^T (I_i alpha_i + omega_i x I_i omega_i - T_i) = 0

with the accelerations of the parts, differentiated along the motion
(q'' = W u' + W' u + X'),

.. code:: text

    a_i = B_i q'' + B_i' q',      alpha_i = D_i q'' + D_i' q'

so that (I_i global, about the centre of mass; F_i, T_i applied forces and torques, given
as generalized forces Q_e = sum_i B_i^T F_i + D_i^T T_i, gravity m_i g included):

.. code:: text

    M_u u' = W^T Q_e - sum_i [ (B_i W)^T m_i (B_i c + B_i' q')
                              + (D_i W)^T (I_i (D_i c + D_i' q') + omega_i x I_i omega_i) ]
    M_u = W^T M W,   c = W' u + X'

B_i', D_i', W', X' come from one complex step along q'.  Nothing here uses M' or dT/dq:
the inertia forces are those of the parts (docs/quasi_velocities.md).

References
----------
.. [1] T. R. Kane, D. A. Levinson, Dynamics: Theory and Applications, McGraw-Hill, 1985, ch. 6.
"""
from __future__ import annotations

import numpy as np

from ..bodies.tree import COMPLEX_STEP
from .quasi_velocities import QuasiVelocityForm, parts_mass_matrix

__all__ = ["Kane"]


class Kane(QuasiVelocityForm):
    """Kane's equations in the quasi-velocities of a `QuasiVelocities` (module docstring)."""

    name = "kane"

    def derivatives(self, t, q, u):
        """(q', u') at (t, q, u): `quasi_accelerations` at this one state."""
        qd, kin, Wc, Xc = self._complex_step(t, q, u)
        Qe = self.terms.active_forces(t, q, qd)
        return qd, self.quasi_accelerations(u[None], qd[None], kin, Wc[None], Xc[None], Qe[None])[0]

    def quasi_accelerations(self, u, qd, kin, Wc, Xc, Qe):
        """u' (k, p) of Kane's equations (module docstring) at k states at once, from the kinematics of the parts
        (k, n_p, ...) and W, X (k, m, p), (k, m) at the complex step along q' (k, m), Qe (k, m) the active forces."""
        h = COMPLEX_STEP
        mass, Bc, Dc, Ic = kin
        W, c = Wc.real, (np.einsum("kmp,kp->km", Wc.imag, u) + Xc.imag) / h   # c = W' u + X'
        B, D, I = Bc.real, Dc.real, Ic.real
        Bd_qd = np.einsum("kpxm,km->kpx", Bc.imag, qd) / h                   # B_i' q'  (k, n_p, 3)
        Dd_qd = np.einsum("kpxm,km->kpx", Dc.imag, qd) / h
        BW = B @ W[:, None]                                                 # (k, n_p, 3, p) partial velocities
        DW = D @ W[:, None]                                                 # partial angular velocities
        omega = np.einsum("kpxm,km->kpx", D, qd)
        Iw = np.einsum("kpxy,kpy->kpx", I, omega)
        a_bias = np.einsum("kpxm,km->kpx", B, c) + Bd_qd                      # acceleration with u' = 0
        alpha_bias = np.einsum("kpxm,km->kpx", D, c) + Dd_qd
        inertia = (np.einsum("p,kpxa,kpx->ka", mass, BW, a_bias)
                   + np.einsum("kpxa,kpx->ka", DW, np.einsum("kpxy,kpy->kpx", I, alpha_bias) + np.cross(omega, Iw)))
        Mu = parts_mass_matrix(mass, BW, DW, I)                        # W^T M W
        U = np.einsum("kma,km->ka", W, Qe)
        return np.linalg.solve(Mu, (U - inertia)[..., None])[..., 0]
