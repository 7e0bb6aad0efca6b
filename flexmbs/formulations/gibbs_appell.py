"""Gibbs-Appell equations from the accelerations of the body's mass points, state x = (delta, delta').

Mass point p (mass m_p, undeformed position x_p, displacement Phi_p delta: see
``assembly/mass_points.py``) is at y_p = x_p + Phi_p delta in the frame.  Its absolute
acceleration, in body-frame components (R^T times the global one; docs/theory.md sec. 1), is

.. code:: text

    a_p = a_O + eps x y_p + omega x (omega x y_p) + 2 omega x Phi_p delta' + Phi_p delta''

The acceleration energy of the body is S = 1/2 sum_p m_p a_p . a_p (rotation-invariant, so
body components serve).  a_p is affine in delta'' with the Jacobian d a_p / d delta'' = Phi_p,
so the gradient is

.. code:: text

    dS/d delta'' = sum_p Phi_p^T m_p a_p = [m] delta'' + sum_p Phi_p^T m_p a_p^0,
    [m] = sum_p m_p Phi_p^T Phi_p,       a_p^0 = a_p(delta'' = 0)

and Gibbs-Appell's equations dS/d delta'' = Q, with the generalized forces
Q = sum_p Phi_p^T m_p g_L + {q} - ([k] + K_geo(t)) delta - C delta' (gravity g_L = R^T g acts on
every mass point; nodal loads, elastic, geometric-stiffness and damping forces as in Lagrange),
are solved as

.. code:: text

    [m] delta'' = {q} - ([k] + K_geo(t)) delta - C delta' - sum_p Phi_p^T m_p (a_p^0 - g_L)

(ref. [1] eqs. (31)-(45), derived again in docs/theory.md sec. 4).  Per evaluation: two sparse
products for the point displacements and velocities, the point accelerations a_p^0 of all
points at once, and one sparse product Phi^T for the gradient; no inertia invariant is used.
This costs more than the invariant route of Lagrange (which combines a few precomputed n-vectors
and n x n matrices): there are more mass points than DOFs (2 to 24 per element).

The Jacobian of the right-hand side (implicit integrators, the compiled form) is the exact
derivative of the same expression: d/d delta of sum_p Phi_p^T m_p A y_p is sum_ab A_ab S[a, b]
with A = tilde(eps) + tilde(omega)^2, and d/d delta' of the Coriolis term is 2 G(omega); these
are the sums over the same mass points that ``Model.frame_stiffness`` and ``Model.frame_damping``
hold, checked against finite differences of this module's forcing in tests/test_gibbs_appell.py.

References
----------
.. [1] S. Vlase et al., review of Lagrange, Gibbs-Appell, Maggi and Hamilton equations for FE
       models of elastic multibody systems (../shared/seeds/004).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..assembly.mass_points import body_mass_points
from .base import VelocityFormulation
from ._common import tilde


class GibbsAppell(VelocityFormulation):
    """Gibbs-Appell equations evaluated from the mass points' accelerations.

    ``evaluation="auto"`` (and ``"terms"``) evaluates the point accelerations at every call;
    ``"compiled"`` (steady models only) forms the constant-coefficient system once from this
    formulation's forcing and Jacobian, which is then the same linear system as Lagrange's.
    """

    name: ClassVar[str] = "gibbs-appell"
    compile_auto: ClassVar[bool] = False

    def __init__(self, model, evaluation: str = "auto"):
        self.points = body_mass_points(model)
        super().__init__(model, evaluation)

    def frame_acceleration(self, t, delta, delta_dot):
        """a_p^0 - g_L (n_p, 3): point accelerations without the Phi delta'' part, minus gravity."""
        md, pts = self.model, self.points
        fs = md.frame(t)
        W = tilde(fs.omega)
        A = tilde(fs.eps) + W @ W
        u, v = pts.displacements(delta, delta_dot)
        y = pts.x + u
        return (fs.R.T @ (fs.a_O - md.gravity)) + y @ A.T + 2.0 * (v @ W.T)

    def point_accelerations(self, t, delta, delta_dot, delta_ddot):
        """Absolute accelerations a_p of all mass points (n_p, 3), body-frame components."""
        md, pts = self.model, self.points
        fs = md.frame(t)
        W = tilde(fs.omega)
        A = tilde(fs.eps) + W @ W
        u, v, w = pts.displacements(delta, delta_dot, delta_ddot)
        return fs.a_O_local + (pts.x + u) @ A.T + 2.0 * (v @ W.T) + w

    def acceleration_energy(self, t, delta, delta_dot, delta_ddot) -> float:
        """S = 1/2 sum_p m_p |a_p|^2 [J/s^2]."""
        a = self.point_accelerations(t, delta, delta_dot, delta_ddot)
        return 0.5 * float(self.points.m @ np.einsum("pa,pa->p", a, a))

    def generalized_force(self, t, delta, delta_dot):
        """f = Q - sum_p Phi_p^T m_p a_p^0, so that [m] delta'' = f is dS/d delta'' = Q."""
        md, pts = self.model, self.points
        inertia = pts.generalized(pts.m[:, None] * self.frame_acceleration(t, delta, delta_dot))
        return md.q_ext(t) - md.K_dot(t, delta) - md.damping_force(delta_dot) - inertia
