"""Cart with a two-link pendulum and a wheel (velocity) constraint (seed 001, sec. 3.1, Table 2).

The paper takes this example's data from another paper; the data here are chosen (issue 13)
and stated.  The system moves in a vertical plane, gravity g = 9.81 m/s^2 along -Y.  A cart
(a point mass m_c = 2 kg) slides along X; link 1 (a uniform bar, m_1 = 1 kg, l = 1 m) is hinged to the cart
at A, the cart's reference point; link 2 (m_2 = 1 kg, l = 1 m) is hinged to link 1 at B, where
a motor acts between the links (torque tau: generalized force (tau, -tau, 0), eq. (70)); a
wheel of mass m_w = 0.2 kg at the tip C rolls without side slip along BC.  Coordinates
q = (theta_1, theta_2, x) (eq. 68): the links' absolute angles from the downward vertical
(counterclockwise positive: link k points along (sin theta_k, -cos theta_k)) and the cart's
position.  The wheel lets C move relative to the cart only along BC:

    l cos(theta_1 - theta_2) theta_1' + l theta_2' = 0        (eq. 69)

Initial state (chosen): theta_1 = 0.3, theta_2 = -0.3 rad, x = 0; theta_1' = 0.5 rad/s,
theta_2' = -cos(0.6) 0.5 rad/s (from eq. 69), x' = 0.2 m/s; tau = 0 (as in the paper), 50 s.
Gravity does not depend on x, so x stays ignorable.

Eq. (69) is integrable: it involves two coordinates only, and with phi = theta_1 - theta_2 it
reads phi' = (1 + cos phi) theta_1', i.e. d/dt [tan(phi / 2) - theta_1] = 0.  The constraint is
holonomic, tan((theta_1 - theta_2) / 2) - theta_1 = const (for |phi| < pi); it is integrated
here as the paper writes it, at the velocity level, and its integral is monitored:
``constraint_integral_error`` is the drift of tan(phi / 2) - theta_1.

Period of the swing (docs/quasi_velocities.md derives it): x is cyclic, so with the X momentum
P_x conserved the motion on the constraint curve is one degree of freedom, theta_1, with the
energy P_x^2 / (2 M) + J(theta_1) theta_1'^2 / 2 + V(theta_1) (Routh; M the total mass).  For
small oscillations about theta = 0 (theta_2' = -theta_1') the period is the closed form

    T_0 = 2 pi sqrt(J_0 / K_0),  J_0 = 2 m l^2 / 3 - m^2 l^2 / M,  K_0 = g l (2 m + 2 m_w),

0.8477 s with these data; at the case's amplitude (theta_1 from -0.322 to 0.312 rad) the energy
integral T = 2 int sqrt(J / (2 (E - V))) dtheta_1 between the turning points gives 1.0007 s.
The summary holds both and the period measured in the run (``period_measured_s``: the mean time
between upward crossings of theta_1 through its mean), and the command line prints them.

Quasi-velocities (eq. 71): u = (theta_1' - theta_2', x'); x is ignorable and
u_NI = theta_2' - theta_1'.  Energy (tau = 0: kinetic plus gravity) and the X momentum are
conserved.

Writes DIR/results.npz (t, q (n_t, 3), qdot, energy_error [J], momentum (n_t, 3) [N s],
constraint_error (n_t,) = |a q' + b|, constraint_integral_error) and DIR/summary.json;
``--table`` runs the five formulations and writes table2.csv/.md, each run in
DIR/<formulation>/ and fig02_energy.png, fig03_constraint.png, fig04_momentum.png,
fig05_coordinates.png.
Each run goes through ``flexmbs.run``: under ``flexmbs run`` it is also a run of DIR/results.h5,
named after its formulation (cases/_comparison.py).
"""
from __future__ import annotations

import functools
import sys

import numpy as np

from flexmbs.bodies.tree import TreeBody, TreeJoint, TreePart
from flexmbs.case import resolve
from flexmbs.pipes import call_quietly
from flexmbs.constraints.nonholonomic import VelocityConstraint
from _comparison import (COMMON_DEFAULTS, LABELS, QVModel, case_main, check_common,
                         common_choices, common_help, run_case)
from flexmbs.system import System

M_CART, M_LINK, M_WHEEL, L = 2.0, 1.0, 0.2, 1.0                     # [kg, kg, kg, m] (chosen)
COORDINATES = ("theta1", "theta2", "x")
GRAVITY = (0.0, -9.81, 0.0)
Q0 = (0.3, -0.3, 0.0)
V0 = (0.5, -0.5 * np.cos(0.6), 0.2)


def wheel_rows(t, q):
    """a of eq. (69), (1, 3) (complex-safe)."""
    c = L * np.cos(q[0] - q[1])
    return np.array([[c, L + 0 * c, 0 * c]])


def constraint_integral(t, q, qdot):
    """tan((theta_1 - theta_2) / 2) - theta_1 minus its initial value (the integral of eq. 69)."""
    f = np.tan(0.5 * (q[:, 0] - q[:, 1])) - q[:, 0]
    return f - f[0]


def small_oscillation_period(g: float = -GRAVITY[1]) -> float:
    """T_0 = 2 pi sqrt(J_0 / K_0) [s], the period of small swings about theta = 0 (closed form).

    On the constraint curve near theta = 0, eq. (69) gives theta_2' = -theta_1', so the link
    centroids move horizontally by x' + (l/2) theta_1', the wheel by x' alone, and the links
    turn at +-theta_1'.  T = (1/2) [M x'^2 + 2 b_0 x' theta_1' + a_0 theta_1'^2] with
    M = m_c + 2 m + m_w, b_0 = m l, a_0 = 2 m l^2 / 4 + 2 m l^2 / 12 = 2 m l^2 / 3.  x is cyclic:
    at fixed P_x = M x' + b_0 theta_1' the kinetic energy is P_x^2 / (2 M) + J_0 theta_1'^2 / 2
    with J_0 = a_0 - b_0^2 / M (Routh).  The heights of the link centroids and the wheel,
    -(l/2) cos theta_1, -l cos theta_1 - (l/2) cos theta_2 and -l cos theta_1 - l cos theta_2,
    give V = g l [(2 m + m_w) theta_1^2 / 2 + (m/2 + m_w) theta_2^2 / 2] + const = K_0 theta_1^2 / 2,
    K_0 = g l (2 m + 2 m_w).  The wheel's mass enters K_0 and M, not a_0 (it moves with the cart).
    """
    total = M_CART + 2 * M_LINK + M_WHEEL
    J0 = 2 * M_LINK * L ** 2 / 3 - (M_LINK * L) ** 2 / total
    K0 = g * L * (2 * M_LINK + 2 * M_WHEEL)
    return float(2 * np.pi * np.sqrt(J0 / K0))


def swing_inertia_and_potential(theta1, curve: float, g: float = -GRAVITY[1]):
    """(J(theta_1), V(theta_1)): the inertia of theta_1 at fixed P_x and the potential energy along
    the constraint curve tan((theta_1 - theta_2) / 2) - theta_1 = ``curve`` (module docstring).

    theta_2 = theta_1 - 2 arctan(theta_1 + curve) and r = theta_2' / theta_1' = -cos phi; with
    T = (1/2) [M x'^2 + 2 b x' theta_1' + a theta_1'^2], J = a - b^2 / M (the general form of
    `small_oscillation_period`'s J_0)."""
    theta1 = np.asarray(theta1, dtype=float)
    u = theta1 + curve                                             # tan(phi / 2)
    theta2 = theta1 - 2 * np.arctan(u)
    r = (u * u - 1) / (u * u + 1)                                   # -cos phi
    inner = M_LINK / 2 + M_LINK + M_WHEEL        # mass moment about A of link 1, link 2 and the wheel, / l
    outer = M_LINK / 2 + M_WHEEL                 # mass moment about B of link 2 and the wheel, / l
    inertia = M_LINK * L ** 2 / 12
    a = ((M_LINK / 4 + M_LINK + M_WHEEL) * L ** 2 + (M_LINK / 4 + M_WHEEL) * L ** 2 * r * r
         + 2 * outer * L ** 2 * np.cos(theta1 - theta2) * r + inertia * (1 + r * r))
    b = inner * L * np.cos(theta1) + outer * L * np.cos(theta2) * r
    total = M_CART + 2 * M_LINK + M_WHEEL
    V = -g * L * (inner * np.cos(theta1) + outer * np.cos(theta2))
    return a - b * b / total, V


def energy_integral_period(q0=Q0, v0=V0) -> float:
    """T = 2 int_{theta_-}^{theta_+} sqrt(J / (2 (E - V))) dtheta_1 [s], the period of the swing
    that starts at (q0, v0) (x' plays no part: P_x is conserved), between the turning points
    theta_+- where V = E; the substitution theta_1 = c + w sin s removes the inverse square roots
    at the turning points (scipy's quad)."""
    from scipy.integrate import quad
    from scipy.optimize import brentq, minimize_scalar
    curve = np.tan((q0[0] - q0[1]) / 2) - q0[0]
    J_start, V_start = swing_inertia_and_potential(q0[0], curve)
    E = float(0.5 * J_start * v0[0] ** 2 + V_start)
    potential = lambda th: float(swing_inertia_and_potential(th, curve)[1])    # noqa: E731
    rest = minimize_scalar(potential, bounds=(-1.0, 1.0), method="bounded").x
    lo = brentq(lambda th: E - potential(th), rest - 1.0, rest)
    hi = brentq(lambda th: E - potential(th), rest, rest + 1.0)
    c, w = (lo + hi) / 2, (hi - lo) / 2

    def integrand(s):
        J, V = swing_inertia_and_potential(c + w * np.sin(s), curve)
        return float(np.sqrt(J / (2 * max(E - V, 0.0)))) * w * np.cos(s)

    return 2 * quad(integrand, -np.pi / 2, np.pi / 2, limit=200)[0]


def measured_period(t, q, qdot) -> float:
    """The mean time [s] between successive upward crossings of theta_1 through its mean over the
    run (crossing times interpolated linearly between outputs); NaN with fewer than two crossings
    (the summary then holds None)."""
    theta = q[:, 0] - q[:, 0].mean()
    k = np.flatnonzero((theta[:-1] < 0) & (theta[1:] >= 0))
    if len(k) < 2:
        return float("nan")
    crossing = t[k] - theta[k] * (t[k + 1] - t[k]) / (theta[k + 1] - theta[k])
    return float((crossing[-1] - crossing[0]) / (len(crossing) - 1))


def build(torque: float = 0.0) -> QVModel:
    """The cart pendulum in the coordinates of eq. (68), initial state of the module docstring."""
    J = TreeJoint
    joints = [J("cart", "prismatic", (1, 0, 0), "x"),
              J("A", "revolute", (0, 0, 1), "theta1", parent="cart"),
              J("B", "revolute", (0, 0, 1), {"theta2": 1.0, "theta1": -1.0}, parent="A", offset=(0.0, -L, 0.0))]
    bar = (M_LINK * L ** 2 / 12, 0.0, M_LINK * L ** 2 / 12)            # slender bars along their local -y
    parts = [TreePart("cart", "cart", M_CART), TreePart("link1", "A", M_LINK, bar, centroid=(0.0, -L / 2, 0.0)),
             TreePart("link2", "B", M_LINK, bar, centroid=(0.0, -L / 2, 0.0)),
             TreePart("wheel", "B", M_WHEEL, centroid=(0.0, -L, 0.0))]
    applied = (lambda t, q, v: np.array([torque, -torque, 0.0])) if torque else None
    body = TreeBody("cart pendulum", COORDINATES, joints, parts, q0=Q0, v0=V0, applied=applied)
    wheel = VelocityConstraint(body, wheel_rows, name="wheel")
    return QVModel(System([body], [wheel], gravity=GRAVITY), COORDINATES,
                   Y=np.array([[1.0, -1.0, 0.0], [0.0, 0.0, 1.0]]),
                   Y_reduced=np.array([[-1.0, 1.0, 0.0]]), ignorable=("x",),
                   extra={"constraint_integral_error": constraint_integral}, scalars=period_scalars(torque))


def period_scalars(torque: float) -> dict:
    """The periods put into the summary: measured, and (without a motor torque, which makes the
    energy change) the two closed forms from the run's initial state."""
    out = {"period_measured_s": measured_period}
    if not torque:
        out.update(period_energy_integral_s=lambda t, q, qdot: energy_integral_period(q[0], qdot[0]),
                   period_small_oscillation_s=lambda t, q, qdot: small_oscillation_period())
    return out


def print_periods(summary: dict) -> None:
    """The period of the swing of each run, measured and in closed form (module docstring)."""
    runs = [summary] if "formulation" in summary else list(summary.values())
    for s in runs:
        closed = ""
        if "period_energy_integral_s" in s:
            closed = (f"; closed form at this amplitude (energy integral) {s['period_energy_integral_s']:.4f} s, "
                      f"small oscillations 2 pi sqrt(J0/K0) = {s['period_small_oscillation_s']:.4f} s")
        measured = ("not measured (fewer than two swings in the run)" if s["period_measured_s"] is None
                    else f"{s['period_measured_s']:.4f} s measured")
        print(f"{LABELS[s['formulation']]:>20}: period of theta_1 {measured}{closed}")


DEFAULTS = dict(COMMON_DEFAULTS, h=1e-3, dt_out=0.01, torque=0.0)
RUN_TIME = "about 1 min"     # at the defaults on a 2-core machine (--help says it; measured, issue 20)
HELP = dict(common_help("Table 2"), torque="motor torque tau between the links [N m]")
SUMMARY = {"max_energy_error": "max |E(t) - E(0)| [J]", "max_constraint_error": "max |a q' + b|",   # flexmbs.sweep
           "max_constraint_integral_error": "max drift of tan(phi / 2) - theta_1",
           "max_momentum_error_x": "max |P_x(t) - P_x(0)| [N s]"}
CHOICES = common_choices()
STEMS = dict(coordinates="fig05_coordinates", energy="fig02_energy", momentum="fig04_momentum",
             constraint="fig03_constraint")


def check(p):
    check_common(p, DEFAULTS, CHOICES)


def run(out=None, **params):
    """One formulation (or all five with ``table=True``); returns the summary (or summaries)."""
    p = resolve("cart_pendulum", DEFAULTS, params, check)
    return run_case(functools.partial(build, p["torque"]), p, out, stem="table2", title="Cart pendulum",
                    stems=STEMS,
                    caption="Cart with a two-link pendulum and the wheel constraint (seed 001, Table 2 analogue): "
                            "max over the run of |energy error| [J], |a q' + b| (constraint), |P_x - P_x(0)| "
                            "and |P - P(0)| [N s], largest coordinate difference to the reduced Volterra run; "
                            "CPU time of the run (outputs recorded included) and wall time of the integration [s].")


def main(argv=None):
    return case_main("cart_pendulum", __doc__, DEFAULTS, HELP, CHOICES, check, run, argv, report=print_periods,
                     run_time=RUN_TIME)


if __name__ == "__main__":
    sys.exit(call_quietly(main))
