"""The elastica: exact large deflection of a cantilever under a vertical (dead) tip load.

A cantilever of length L and bending stiffness EI, clamped horizontally at s = 0, carries the
tip load P (fixed direction, normal to the undeformed beam).  Inextensible, shear-free
(Euler-Bernoulli).  With theta(s) the slope angle and alpha = P L^2 / EI, the moment balance
EI theta' = P (x_tip - x(s)) gives EI theta'' = -P cos theta, theta(0) = 0, theta'(L) = 0, whose
first integral is theta'^2 = (2 P / EI) (sin theta_0 - sin theta), theta_0 the tip slope.  The
substitution 1 + sin theta = 2 k^2 sin^2 phi, k^2 = (1 + sin theta_0) / 2, turns the length and
the tip coordinates into elliptic integrals (F, E of the first and second kind, modulus k,
phi_0 = asin(1 / (k sqrt 2))):

.. code:: text

    sqrt(alpha) = K(k) - F(phi_0, k)                                (fixes k)
    x_tip / L   = sqrt(2 sin theta_0 / alpha) = sqrt(2 (2 k^2 - 1) / alpha)
    v_tip / L   = 1 - 2 (E(k) - E(phi_0, k)) / sqrt(alpha)          (downward deflection)

This is the solution of Bisshopp and Drucker [1]_ (their eqs. for the horizontal and vertical
tip displacement), derived again here; Mattiasson [2]_ tabulates it for alpha up to 10.

References
----------
.. [1] K. E. Bisshopp, D. C. Drucker, Large deflection of cantilever beams, Quart. Appl. Math.
       3 (1945) 272-275, doi:10.1090/qam/13360.
.. [2] K. Mattiasson, Numerical results from large deflection beam and frame problems analysed
       by means of elliptic integrals, Int. J. Numer. Methods Eng. 17 (1981) 145-153,
       doi:10.1002/nme.1620170113.
"""
from __future__ import annotations

import numpy as np
import scipy.optimize
import scipy.special

__all__ = ["cantilever_tip"]


def _load_parameter(k: float) -> float:
    m = k * k
    phi0 = np.arcsin(min(1.0, 1.0 / (k * np.sqrt(2.0))))
    return float(scipy.special.ellipk(m) - scipy.special.ellipkinc(phi0, m))


def cantilever_tip(alpha: float) -> tuple[float, float, float]:
    """(x_tip / L, v_tip / L, theta_0) of the elastica for alpha = P L^2 / EI > 0.

    x_tip: horizontal tip position from the clamp, v_tip: downward tip deflection, theta_0: tip
    slope [rad].  k is found by Brent's method to round-off.
    """
    alpha = float(alpha)
    if not (np.isfinite(alpha) and alpha > 0):
        raise ValueError(f"cantilever_tip: `alpha` = P L^2 / EI must be positive and finite, got {alpha!r}")
    root = np.sqrt(alpha)
    lo, hi = 1.0 / np.sqrt(2.0), 1.0 - 1e-16
    if _load_parameter(hi) < root:
        raise ValueError(f"cantilever_tip: alpha = {alpha:g} is beyond the range resolved in double precision")
    k = scipy.optimize.brentq(lambda k: _load_parameter(k) - root, lo, hi, xtol=1e-15, rtol=1e-15)
    m = k * k
    phi0 = np.arcsin(min(1.0, 1.0 / (k * np.sqrt(2.0))))
    sin0 = 2.0 * m - 1.0
    x = np.sqrt(2.0 * sin0 / alpha)
    v = 1.0 - 2.0 * (scipy.special.ellipe(m) - scipy.special.ellipeinc(phi0, m)) / root
    return float(x), float(v), float(np.arcsin(sin0))
