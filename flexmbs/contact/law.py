"""The contact law: a normal force with a coefficient of restitution and regularised Coulomb friction.

Symbols (docs/notation.md): delta >= 0 the penetration, delta' its rate (> 0 approaching), n the
unit normal, v_t the tangential relative velocity, m* the effective mass of the pair.

.. code:: text

    f_n = max(0, k delta^n + d(delta, delta'))                   normal force (never adhesive)
        d = c delta^((n-1)/2) delta',  c = 2 zeta sqrt(k m*)      damping="scaled" (default)
        d = k delta^n chi delta'                                  damping="hunt-crossley"
    F_t = -mu f_n v_t / sqrt(|v_t|^2 + v_eps^2)                   friction (regularised Coulomb)
    U_c = k delta^(n+1) / (n+1)                                   stored energy
    P_c = (f_n - k delta^n) delta' + mu f_n |v_t|^2 / sqrt(|v_t|^2 + v_eps^2)  >= 0   dissipated power

The stiffness k is given, or Hertz's k = 4/3 E* sqrt(R*) (n = 3/2) of two spheres of one material
(E* = E / (2 (1 - nu^2)), 1/R* = 1/R_a + 1/R_b; a plane or a box face has R = inf).

Restitution.  "scaled" (Tsuji, Tanaka and Ishida 1992, doi:10.1016/0032-5910(92)88030-L; the damping
of Chrono's SMC contact): with delta = L x and t = T tau, T^2 = m* / (k L^(n-1)), the equation
m* delta'' = -f_n becomes x'' = -max(0, x^n + 2 zeta x^((n-1)/2) x') whatever L, so the coefficient
of restitution e = -x'(end) / x'(0) depends on zeta and n only, not on the impact speed.
`restitution_of_damping` integrates that equation (scipy DOP853, rtol 1e-12) to the instant the
force vanishes; `damping_of_restitution` inverts it.  For n = 1 it has a closed form (derived in
`linear_restitution`), which tests/test_contact_law.py checks.

"hunt-crossley" (Hunt and Crossley 1975, doi:10.1115/1.3423596): its restitution depends on the
impact speed v0 only through x = chi v0.  From m* v dv/d(delta) = -k delta^n (1 + chi v),
integrated over the contact (delta from 0 back to 0, v from v0 to -e v0):

.. code:: text

    chi v - ln(1 + chi v) is the same at v0 and at -e v0,   i.e.   ln((1 + x) / (1 - e x)) = (1 + e) x

(derived here; the closed form behind Lankarani and Nikravesh 1990's approximation
chi = 3 (1 - e^2) / (4 v0) for e near 1, doi:10.1115/1.2912617).  chi is solved from it for the
given ``impact_velocity``: an impact at that speed rebounds with e exactly, a slower one with more.

Friction.  The regularised law has no state, so it sticks only approximately: under a tangential
load F_t with |F_t| = r mu f_n (r < 1) a contact slides at the creep speed
v_creep = v_eps r / sqrt(1 - r^2) (the speed at which the law gives that force); the box of
cases/incline_block.py creeps 1e-4 m/s times r / sqrt(1 - r^2) with the default v_eps.  docs/design.md
"Contact" says why this law and not a tangential spring with slip history.
"""
from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["ContactLaw", "restitution_of_damping", "damping_of_restitution", "linear_restitution",
           "hunt_crossley_chi", "hunt_crossley_restitution", "DAMPING_MODELS"]

DAMPING_MODELS = ("scaled", "hunt-crossley")


def linear_restitution(zeta: float) -> float:
    """e of the linear spring-dashpot (n = 1, 0 <= zeta < 1/sqrt(2)), the force clamped at 0.

    .. code:: text

        x'' + 2 zeta x' + x = 0, x(0) = 0, x'(0) = 1:  x = exp(-zeta t) sin(w t) / w,  w = sqrt(1 - zeta^2)
        the force x + 2 zeta x' = -x'' vanishes first at  tan(w t_s) = 2 zeta w / (2 zeta^2 - 1),
        t_s = (pi - atan(2 zeta w / (1 - 2 zeta^2))) / w,   e = -x'(t_s)

    (the same as Schwager and Poeschel 2007, doi:10.1103/PhysRevE.75.051304)."""
    w = math.sqrt(1.0 - zeta * zeta)
    ts = (math.pi - math.atan2(2.0 * zeta * w, 1.0 - 2.0 * zeta * zeta)) / w
    return -math.exp(-zeta * ts) * (math.cos(w * ts) - zeta / w * math.sin(w * ts))


@functools.lru_cache(maxsize=256)
def restitution_of_damping(zeta: float, n: float) -> float:
    """e of f = max(0, x^n + 2 zeta x^((n-1)/2) x') (the dimensionless "scaled" law, module docstring):
    x(0) = 0, x'(0) = 1, integrated to where the bracket x^((n+1)/2) + 2 zeta x' first vanishes
    (after it, the force stays zero and the bodies fly apart), e = -x' there."""
    from scipy.integrate import solve_ivp
    if zeta == 0.0:
        return 1.0
    a = 0.5 * (n - 1.0)

    def rhs(t, y):
        x = max(y[0], 0.0)
        return [y[1], -max(0.0, x ** n + 2.0 * zeta * x ** a * y[1])]

    def release(t, y):
        return max(y[0], 0.0) ** (0.5 * (n + 1.0)) + 2.0 * zeta * y[1]
    release.terminal, release.direction = True, -1
    sol = solve_ivp(rhs, (0.0, 50.0), [0.0, 1.0], method="DOP853", rtol=1e-12, atol=1e-14, events=release)
    return float(-sol.y_events[0][0][1]) if sol.t_events[0].size else 0.0


@functools.lru_cache(maxsize=256)
def damping_of_restitution(e: float, n: float) -> float:
    """zeta with `restitution_of_damping`(zeta, n) = e (0 < e <= 1), by Brent's method."""
    from scipy.optimize import brentq
    if e >= 1.0:
        return 0.0
    hi = 0.5
    while restitution_of_damping(hi, n) > e:
        hi *= 2.0
    return float(brentq(lambda z: restitution_of_damping(z, n) - e, 0.0, hi, xtol=1e-13, rtol=1e-12))


def _hunt_crossley_residual(x: float, e: float) -> float:
    """ln((1 + x) / (1 - e x)) - (1 + e) x (log1p: accurate for small x)."""
    return math.log1p(x) - math.log1p(-e * x) - (1.0 + e) * x


def hunt_crossley_chi(e: float, impact_velocity: float) -> float:
    """chi [s/m] of the Hunt-Crossley law with restitution e at the impact speed v0: x = chi v0 the root
    in (0, 1/e) of ln((1 + x) / (1 - e x)) = (1 + e) x (module docstring; the residual is negative for
    small x, +inf at 1/e)."""
    from scipy.optimize import brentq
    if e >= 1.0:
        return 0.0
    hi = (1.0 - 1e-12) / e if e > 0 else 1e6
    x = brentq(_hunt_crossley_residual, 1e-6 * min(1.0, hi), hi, args=(e,), xtol=1e-15, rtol=1e-14)
    return x / impact_velocity


def hunt_crossley_restitution(chi: float, v0: float) -> float:
    """e of the Hunt-Crossley law at the impact speed v0: the root in (0, min(1, 1/x)) of
    ln((1 + x) / (1 - e x)) = (1 + e) x, x = chi v0 (the residual is ln(1 + x) - x < 0 at e = 0)."""
    from scipy.optimize import brentq
    x = chi * v0
    if x == 0.0:
        return 1.0
    return float(brentq(lambda e: _hunt_crossley_residual(x, e), 0.0, min(1.0, (1.0 - 1e-12) / x), xtol=1e-15))


def _number(value, what: str, low: float, high: float = math.inf, open_low: bool = False) -> float:
    """``value`` as a float in [low, high] ((low, high] if open_low); ValueError naming `what`."""
    try:
        x = None if isinstance(value, (bool, str, bytes)) else float(value)
    except (TypeError, ValueError):
        x = None
    ok = x is not None and math.isfinite(x) and (x > low if open_low else x >= low) and x <= high
    if not ok:
        interval = f"{'(' if open_low else '['}{low:g}, {high:g}]"
        raise ValueError(f"ContactLaw: `{what}` must be a finite number in {interval}, got {value!r}")
    return x


class ContactLaw:
    """Normal force with restitution and regularised Coulomb friction (module docstring).

    Parameters
    ----------
    stiffness : float, optional
        k [N/m^n]; or give ``youngs_modulus`` for Hertz's k = 4/3 E* sqrt(R*) (n = 3/2).
    youngs_modulus, poisson_ratio : float, optional
        E [Pa] and nu of both bodies' material (Hertz stiffness from the contact's radii).
    exponent : float
        n >= 1 (3/2: Hertz; 1: a linear spring).
    restitution : float
        e in [0, 1], the coefficient of restitution of a normal impact.
    damping : "scaled" or "hunt-crossley"
        The dashpot (module docstring): "scaled" gives e at every impact speed and needs the
        pair's effective mass; "hunt-crossley" gives e at ``impact_velocity``.
    impact_velocity : float, optional
        v0 [m/s] of "hunt-crossley".
    friction : float
        mu >= 0, the Coulomb friction coefficient.
    slip_velocity : float
        v_eps > 0 [m/s], the regularisation speed of friction (the creep speed scale).
    effective_mass : float, optional
        m* [kg] of every pair ("scaled"); default from the bodies' masses, 1/m* = 1/m_a + 1/m_b
        (the ground: 1/m = 0).
    """

    def __init__(self, stiffness=None, *, youngs_modulus=None, poisson_ratio=0.3, exponent=1.5, restitution=1.0,
                 damping="scaled", impact_velocity=None, friction=0.0, slip_velocity=1e-4, effective_mass=None):
        if (stiffness is None) == (youngs_modulus is None):
            raise ValueError("ContactLaw: give either `stiffness` [N/m^n] or `youngs_modulus` [Pa] (Hertz), got "
                             f"stiffness={stiffness!r}, youngs_modulus={youngs_modulus!r}")
        self.exponent = _number(exponent, "exponent", 1.0, 10.0)
        self.stiffness = None if stiffness is None else _number(stiffness, "stiffness", 0.0, open_low=True)
        self.youngs_modulus = None if youngs_modulus is None else _number(youngs_modulus, "youngs_modulus", 0.0,
                                                                          open_low=True)
        self.poisson_ratio = _number(poisson_ratio, "poisson_ratio", -1.0, 0.5, open_low=True)
        if self.youngs_modulus is not None and self.exponent != 1.5:
            raise ValueError(f"ContactLaw: Hertz's stiffness (`youngs_modulus`) is for exponent 1.5, got exponent "
                             f"{exponent!r}; give `stiffness` for another exponent")
        self.restitution = _number(restitution, "restitution", 0.0, 1.0, open_low=True)
        if damping not in DAMPING_MODELS:
            raise ValueError(f"ContactLaw: `damping` must be one of {list(DAMPING_MODELS)}, got {damping!r}")
        self.damping = damping
        self.friction = _number(friction, "friction", 0.0)
        self.slip_velocity = _number(slip_velocity, "slip_velocity", 0.0, open_low=True)
        self.effective_mass = None if effective_mass is None else _number(effective_mass, "effective_mass", 0.0,
                                                                          open_low=True)
        self.zeta = self.chi = 0.0
        if damping == "hunt-crossley":
            if impact_velocity is None:
                raise ValueError("ContactLaw: damping 'hunt-crossley' needs `impact_velocity` [m/s], the impact speed "
                                 "at which the restitution is `restitution`")
            self.impact_velocity = _number(impact_velocity, "impact_velocity", 0.0, open_low=True)
            self.chi = hunt_crossley_chi(self.restitution, self.impact_velocity)
        else:
            if impact_velocity is not None:
                raise ValueError("ContactLaw: `impact_velocity` is for damping 'hunt-crossley' (the 'scaled' dashpot "
                                 f"gives the restitution at every impact speed), got {impact_velocity!r}")
            self.impact_velocity = None
            self.zeta = damping_of_restitution(self.restitution, self.exponent)

    def pair_stiffness(self, radius) -> np.ndarray:
        """k (n_c,) of contacts of effective radii R* (n_c,) [m] (inf: two flat faces)."""
        radius = np.asarray(radius, dtype=float)
        if self.stiffness is not None:
            return np.full(radius.shape, self.stiffness)
        e_star = self.youngs_modulus / (2.0 * (1.0 - self.poisson_ratio ** 2))
        return 4.0 / 3.0 * e_star * np.sqrt(radius)

    def normal(self, delta, delta_dot, k, m_eff):
        """(f_n, df_n/d delta, df_n/d delta', f_elastic) (each (n_c,)) at penetrations delta > 0 and rates
        delta' of contacts of stiffness k and effective mass m* (module docstring)."""
        n = self.exponent
        dn = delta ** n
        elastic = k * dn
        if self.damping == "scaled":
            a = 0.5 * (n - 1.0)
            c = 2.0 * self.zeta * np.sqrt(k * m_eff) if self.zeta else np.zeros_like(k)    # e = 1: no mass needed
            da = delta ** a
            f = elastic + c * da * delta_dot
            # derivatives for the tangent only: delta^(a-1) floored so that it stays finite at first touch
            df_dd = n * k * delta ** (n - 1.0) + a * c * np.maximum(delta, 1e-9) ** (a - 1.0) * delta_dot
            df_dv = c * da
        else:
            f = elastic * (1.0 + self.chi * delta_dot)
            df_dd = n * k * delta ** (n - 1.0) * (1.0 + self.chi * delta_dot)
            df_dv = elastic * self.chi
        on = f > 0.0
        return np.where(on, f, 0.0), np.where(on, df_dd, 0.0), np.where(on, df_dv, 0.0), elastic

    def energy(self, delta, k) -> np.ndarray:
        """U_c = k delta^(n+1) / (n+1) [J] (n_c,)."""
        n = self.exponent
        return k * delta ** (n + 1.0) / (n + 1.0)

    def tangential(self, f_n, v_t):
        """(F_t (n_c, dim), s (n_c,)): F_t = -mu f_n v_t / s, s = sqrt(|v_t|^2 + v_eps^2)."""
        s = np.sqrt(np.einsum("ki,ki->k", v_t, v_t) + self.slip_velocity ** 2)
        return -(self.friction * f_n / s)[:, None] * v_t, s

    def creep_speed(self, ratio: float) -> float:
        """v_creep [m/s] = v_eps r / sqrt(1 - r^2): the sliding speed at which the law holds a tangential
        load r mu f_n (r < 1), the bound on how fast a "sticking" contact creeps."""
        return self.slip_velocity * ratio / math.sqrt(1.0 - ratio * ratio)

    def __repr__(self):
        k = f"stiffness={self.stiffness:g}" if self.stiffness is not None else f"youngs_modulus={self.youngs_modulus:g}"
        return (f"ContactLaw({k}, exponent={self.exponent:g}, restitution={self.restitution:g}, "
                f"damping={self.damping!r}, friction={self.friction:g})")
