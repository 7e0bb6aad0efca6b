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
from .quasi_velocities import QuasiVelocityForm

__all__ = ["Kane"]


class Kane(QuasiVelocityForm):
    """Kane's equations in the quasi-velocities of a `QuasiVelocities` (module docstring)."""

    name = "kane"

    def derivatives(self, t, q, u):
        h = COMPLEX_STEP
        qd, mass, Wc, Xc, Bc, Dc, Ic = self._complex_step(t, q, u)
        W, c = Wc.real, (Wc.imag @ u + Xc.imag) / h
        B, D, I = Bc.real, Dc.real, Ic.real
        Bd_qd = Bc.imag @ qd / h                                    # B_i' q'  (n_p, 3)
        Dd_qd = Dc.imag @ qd / h
        BW = B @ W                                                  # (n_p, 3, p) partial velocities
        DW = D @ W                                                  # partial angular velocities
        omega = D @ qd
        Iw = np.einsum("pxy,py->px", I, omega)
        a_bias = B @ c + Bd_qd                                      # acceleration with u' = 0
        alpha_bias = D @ c + Dd_qd
        inertia = (np.einsum("p,pxa,px->a", mass, BW, a_bias)
                   + np.einsum("pxa,px->a", DW, np.einsum("pxy,py->px", I, alpha_bias) + np.cross(omega, Iw)))
        Mu = np.einsum("p,pxa,pxb->ab", mass, BW, BW) + np.einsum("pxa,pxy,pyb->ab", DW, I, DW)
        U = W.T @ self.terms.active_forces(t, q, qd)
        return qd, np.linalg.solve(Mu, U - inertia)
