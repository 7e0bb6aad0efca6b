"""Lagrange's equations of a body on a moving frame, state x = (delta, delta').

Kinetic energy of the body (body-frame components, y = x + N delta):

.. code:: text

    T = 1/2 int rho |v_O + tilde(omega) y + N delta'|^2 dV

    dT/d delta'          = m_O^T v_O + sum_i omega_i g_i + G(omega) delta + [m] delta'   (= p)
    d/dt (dT/d delta')   = [m] delta'' + m_O^T (a_O - tilde(omega) v_O) + sum_i eps_i g_i
                           + G(eps) delta + G(omega) delta'
    dT/d delta           = -(m_O^T tilde(omega) v_O + {q^i(omega)} + [k(omega)] delta + G(omega) delta')

    d/dt (dT/d delta') - dT/d delta + ([k] + K_geo(t)) delta + C delta' = {q} + m_O^T R^T g

with v_O and a_O in body components (d/dt of R^T v_O = R^T a_O - tilde(omega) R^T v_O).
The terms in v_O cancel; the sum is ref. [1] eq. (10) with the factor 2 of the
Coriolis term restored.

References
----------
.. [1] S. Vlase, A. E. Nicolescu, M. Marin, Mathematics 8 (2020) 1401, doi:10.3390/math8091401.
"""
from __future__ import annotations

from typing import ClassVar

from .base import VelocityFormulation
from ._common import tilde


AFFINE_MAX_DOFS = 200     # the affine form keeps ~25 dense n x (2n + 1) matrices: small models only


class Lagrange(VelocityFormulation):
    """Second-order Lagrange equations written as x' = (delta', delta'')."""

    name: ClassVar[str] = "lagrange"
    _affine = None                    # the affine second-order form, built when first asked for

    def generalized_force(self, t, delta, delta_dot):
        """f(t, delta, delta') with [m] delta'' = f (everything but the d/dt of [m] delta')."""
        md = self.model
        fs = md.frame(t)
        w, e = fs.omega, fs.eps
        W = tilde(w)
        WW = W @ W
        vO, aO, g_L = fs.v_O_local, fs.a_O_local, fs.R.T @ md.gravity
        Wv = W @ vO
        # term 1: dT/d delta = -(m_O^T tilde(w) v_O + q(omega) + k(omega) delta + G(omega) delta')
        # term 2: d/dt of the frame part of dT/d delta' = m_O^T (a_O - tilde(w) v_O) + eps.g
        #         + G(eps) delta + G(omega) delta'
        # the m_O^T-terms of both are summed in 3-space before the projection with m_O^T
        transport = -Wv - (aO - Wv) + g_L                   # term 1 - term 2 (origin) + gravity
        f = md.m_O.T @ transport - md.d_sum(WW) - e @ md.g
        f -= md.S_dot(WW, delta) + md.G_dot(e, delta) + 2.0 * md.G_dot(w, delta_dot)
        # term 3: elastic, damping, applied loads
        return f + md.q_ext(t) - md.K_dot(t, delta) - md.damping_force(delta_dot)

    @property
    def second_order(self):
        """The (delta, delta') second-order form; small dense models also get Lagrange's affine
        form (the same equations as constant matrices times time coefficients)."""
        form = super().second_order
        affine = self._affine_form()
        return form if affine is None else form.replace(affine=affine())

    def _affine_form(self):
        """For small dense models, the callable that builds (once) and returns Lagrange's affine
        form (`flexmbs.formulations.affine.AffineSecondOrder`); None for larger or sparse ones."""
        if not (self.model.dense and self.n <= AFFINE_MAX_DOFS):
            return None
        return self._affine_second_order

    def _affine_second_order(self):
        if self._affine is None:
            from .affine import AffineSecondOrder
            self._affine = AffineSecondOrder(self.model)
        return self._affine
