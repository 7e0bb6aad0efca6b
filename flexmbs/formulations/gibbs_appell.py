"""Gibbs-Appell equations: the gradient of the acceleration energy, state x = (delta, delta').

The acceleration of a point of the body in body-frame components (y = x + N delta):

.. code:: text

    a = a_O + (tilde(eps) + tilde(omega)^2) y + 2 tilde(omega) N delta' + N delta''

The acceleration energy S = 1/2 int rho |a|^2 dV has the gradient

.. code:: text

    dS/d delta'' = int rho N^T a dV
                 = [m] delta'' + m_O^T a_O + sum_ab A[a, b] (d[a, b] + S[a, b] delta)
                   + 2 G(omega) delta',          A = tilde(eps) + tilde(omega)^2

and Gibbs-Appell's equations dS/d delta'' = Q with
Q = {q} + m_O^T R^T g - ([k] + K_geo(t)) delta - C delta'
(ref. [1] eqs. (31)-(45)).  One differentiation, of a quadratic form in delta''.

References
----------
.. [1] S. Vlase et al., review of Lagrange, Gibbs-Appell, Maggi and Hamilton equations for FE
       models of elastic multibody systems (../shared/seeds/004).
"""
from __future__ import annotations

from typing import ClassVar


from .lagrange import Lagrange
from ._common import tilde


class GibbsAppell(Lagrange):
    """Gibbs-Appell equations; same state and second-order structure as Lagrange."""

    name: ClassVar[str] = "gibbs-appell"

    def generalized_force(self, t, delta, delta_dot):
        """f = Q - (dS/d delta'' - [m] delta''): generalized forces minus inertia of the frame field."""
        md = self.model
        fs = md.frame(t)
        W = tilde(fs.omega)
        A = tilde(fs.eps) + W @ W                      # the frame's acceleration operator on y
        # generalized inertia force of the acceleration field, without [m] delta''
        inertia = (md.m_O.T @ (fs.a_O_local - fs.R.T @ md.gravity) + md.d_sum(A) + md.S_dot(A, delta)
                   + 2.0 * md.G_dot(fs.omega, delta_dot))
        Q = md.q_ext(t) - md.K_dot(t, delta) - md.damping_force(delta_dot)
        return Q - inertia
