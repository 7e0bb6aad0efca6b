"""Block on an incline: Coulomb friction that sticks below the friction angle and slides above it
(issue 26, item 4), against the closed form.

A rigid block (`RigidBody2D`, mass 1 kg, 0.2 m x 0.1 m) rests on a plane inclined by ``angle``
(the ground, `flexmbs.contact.Plane` through the origin) with its long side on it, under gravity
9.81 m/s^2 along -y, released at rest.  Its two lower corners (`flexmbs.contact.Box`) touch the
plane with a linear spring (k = ``stiffness``, exponent 1), a dashpot for restitution 0.5 and the
regularised Coulomb friction of `flexmbs.contact.ContactLaw` (mu = ``mu``, slip speed
``slip_velocity``).  Rigid-body statics and dynamics give, with s the distance slid down the incline,

.. code:: text

    tan(angle) <= mu:  it sticks,  s = 0
    tan(angle) >  mu:  it slides,  s = a t^2 / 2,   a = g (sin(angle) - mu cos(angle))

The regularised law cannot hold s = 0 exactly: under the tangential load r mu f_n (r = tan(angle) / mu
< 1) it creeps at v_creep = v_eps r / sqrt(1 - r^2) (`ContactLaw.creep_speed`), so a sticking block
slides at most about v_creep t_end, the bound the case checks (``creep_bound``).  Sliding from rest
(v = a t), the law gives mu f_n (1 - v / sqrt(v^2 + v_eps^2)) less than Coulomb, which adds
mu g cos(angle) (v_eps / a) int_0^inf (1 - x / sqrt(1 + x^2)) dx = mu g cos(angle) v_eps / a to the
speed, so s exceeds the closed form by that times t (2.5e-4 m at 35 deg, mu 0.5, t = 1 s; measured
2.6e-4 m).  The block starts in its static penetration (m g cos(angle) / (2 k) at each corner).

Integrator: the friction is stiff while it sticks (dF_t/dv = mu f_n / v_eps), so the default is the
adaptive implicit Radau (docs/design.md, "Contact").

Writes DIR/results.npz (t [s], s (n_t,): the distance slid down the incline [m], s_ref (n_t,): the
closed form [m], energy (n_t,), W_damping (n_t,) [J]), DIR/summary.json (the regime, the error
against the closed form, the creep bound, the energy balance, the time per step) and slide.png.
"""
from __future__ import annotations

import sys

import numpy as np

import flexmbs as fm
from flexmbs.analysis import output_times
from flexmbs.bodies.planar import RigidBody2D
from flexmbs.case import (check_parameters, recording_into, resolve, run_command, system_run_options,
                          write_run_histories)
from flexmbs.contact import Box, Contact, ContactLaw, Plane
from flexmbs.pipes import call_quietly
from flexmbs.system import System

DEFAULTS = dict(angle=20.0, mu=0.5, stiffness=1e6, slip_velocity=1e-4, t_end=1.0, dt_out=0.01, method="Radau",
                rtol=1e-6, plots=True)
RUN_TIME = "about 10 s"     # at the defaults on a shared 2-core machine (measured 4.3 s CPU, 12 s wall, 2026-11-27)
HELP = dict(angle="inclination of the plane [deg]", mu="Coulomb friction coefficient",
            stiffness="contact stiffness of each corner [N/m]", slip_velocity="slip speed v_eps of the "
            "regularised friction [m/s]", t_end="duration [s]", dt_out="output interval [s]",
            method="integrator (adaptive implicit for sticking: Radau, BDF, index3-alpha-adaptive; RK45 is slow "
                   "there)", rtol="tolerance of the adaptive integrator", plots="write the plot")
SUMMARY = {"max_error_s": "max |s - closed form| [m]"}
CHOICES = dict(method=["Radau", "BDF", "index3-alpha-adaptive", "RK45", "DOP853"])
GRAVITY = 9.81
MASS, HALF = 1.0, (0.1, 0.05)            # the block [kg], its half sizes along and across the incline [m]


def directions(angle_deg: float) -> tuple[np.ndarray, np.ndarray]:
    """(down, n): the unit vector down the incline and the plane's outward normal."""
    a = np.radians(angle_deg)
    return np.array([-np.cos(a), -np.sin(a)]), np.array([-np.sin(a), np.cos(a)])


def build(p: dict) -> System:
    """The block at rest on the incline, sunk by its static penetration."""
    down, n = directions(p["angle"])
    a = np.radians(p["angle"])
    sink = MASS * GRAVITY * np.cos(a) / (2.0 * p["stiffness"])
    inertia = MASS * (4 * HALF[0] ** 2 + 4 * HALF[1] ** 2) / 12.0
    block = RigidBody2D("block", MASS, inertia, position=n * (HALF[1] - sink), angle=a)
    law = ContactLaw(stiffness=p["stiffness"], exponent=1.0, restitution=0.5, friction=p["mu"],
                     slip_velocity=p["slip_velocity"])
    contact = Contact([Box(block, HALF), Plane(None, n)], law, name="incline")
    return System([block], gravity=(0.0, -GRAVITY), forces=[contact])


def closed_form(t, p: dict) -> np.ndarray:
    """s(t) [m] (module docstring): 0 below the friction angle, a t^2 / 2 above it."""
    a = np.radians(p["angle"])
    acc = GRAVITY * (np.sin(a) - p["mu"] * np.cos(a))
    return 0.5 * max(acc, 0.0) * np.asarray(t, dtype=float) ** 2


def creep_bound(p: dict) -> float:
    """v_creep t_end [m]: how far the regularised friction lets a sticking block creep."""
    r = np.tan(np.radians(p["angle"])) / p["mu"]
    return p["slip_velocity"] * r / np.sqrt(1.0 - r * r) * p["t_end"] if r < 1 else float("inf")


def check(p: dict) -> None:
    check_parameters(p, DEFAULTS, choices=CHOICES, positive=("stiffness", "slip_velocity", "t_end", "dt_out", "rtol"),
                     nonnegative=("mu",))
    if not 0 <= p["angle"] < 90:
        raise ValueError(f"`angle` must be in [0, 90) degrees, got {p['angle']!r}")


def run(out=None, **params):
    """Run the case; returns a dict with t, s, s_ref, energy, W_damping and the summary.  With ``out``,
    the run streams into DIR/results.h5 as "incline_block"."""
    p = resolve("incline_block", DEFAULTS, params, check)
    system = build(p)
    down, _ = directions(p["angle"])
    with recording_into(out):
        res = fm.run(system, t_end=p["t_end"], t_eval=output_times(p["t_end"], p["dt_out"]), name="incline_block",
                     metadata={"case": "incline_block", "parameters": p},
                     **system_run_options(p["method"], h=p["dt_out"], rtol=p["rtol"]))
    s = (res.q[:, :2] - res.q[0, :2]) @ down
    ref = closed_form(res.t, p)
    sticks = np.tan(np.radians(p["angle"])) <= p["mu"]
    solve_s, n_steps = res.stats["solve_s"], res.stats["n_steps"]
    bound = creep_bound(p)
    summary = dict(parameters=p, status=res.status, message=res.message, n_steps=n_steps, solve_s=solve_s,
                   time_per_step_s=solve_s / max(n_steps, 1), regime="sticks" if sticks else "slides",
                   friction_angle_deg=float(np.degrees(np.arctan(p["mu"]))),
                   s_end=float(s[-1]), s_end_ref=float(ref[-1]), max_error_s=float(np.abs(s - ref).max()),
                   creep_bound=bound, within_creep_bound=bool(not sticks or abs(s[-1]) <= 1.1 * bound),
                   dissipated_J=float(res.energies["W_damping"][-1]),
                   energy_balance_error=float(np.abs(res.energy_balance_error()).max()))
    result = dict(t=res.t, s=s, s_ref=ref, energy=res.energies["total"], W_damping=res.energies["W_damping"],
                  summary=summary)
    if out is not None:
        write_run_histories(out, result, p, history_figures)
    return result


def history_figures(result, p: dict) -> dict:
    """slide.png, drawn by `write_run_histories` when plots are wanted."""
    t = result["t"]
    panels = [("slid down the incline [m]", [dict(t=t, y=result["s"], label="s"),
                                             dict(t=t, y=result["s_ref"], label="closed form")]),
              ("error [m]", [dict(t=t, y=result["s"] - result["s_ref"], label="s - closed form")])]
    return {"slide.png": dict(panels=panels, title=f"block on a {p['angle']} deg incline, mu = {p['mu']}")}


def main(argv=None):
    result, params, out, _, _ = run_command("incline_block", __doc__, run, argv, DEFAULTS, run_time=RUN_TIME,
                                            help=HELP, choices=CHOICES, check=check)
    s = result["summary"]
    p = s["parameters"]
    print(f"block on a {p['angle']} deg incline, mu = {p['mu']} (friction angle {s['friction_angle_deg']:.2f} deg, "
          f"{p['method']}): {s['status']}; it {s['regime']}")
    print(f"  s(t_end) = {s['s_end']:.3e} m, closed form {s['s_end_ref']:.3e} m, largest error {s['max_error_s']:.2e} m"
          + (f" (creep bound {s['creep_bound']:.2e} m)" if s["regime"] == "sticks" else ""))
    print(f"  dissipated {s['dissipated_J']:.4g} J; energy balance error {s['energy_balance_error']:.2e} J; "
          f"{s['n_steps']} steps, {1e6 * s['time_per_step_s']:.0f} us per step; wrote {out}/results.npz")
    return 0 if s["status"] == "finished" else 1


if __name__ == "__main__":
    sys.exit(call_quietly(main))
