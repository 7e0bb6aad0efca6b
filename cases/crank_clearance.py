"""Slider-crank with a clearance joint: the pin between the connecting rod and the slider is a
journal in a bearing hole (circle-in-circle contact, issue 26, item 4), against the zero-clearance
limit.

A planar slider-crank (`RigidBody2D` bodies, no gravity): crank r = 0.05 m (0.3 kg) pinned at the
origin, connecting rod l = 0.12 m (0.2 kg) pinned to the crank, slider 0.15 kg on the x axis
(`PlanarPrismatic`).  The rod's end B is not pinned to the slider: the rod carries a bearing hole
(`flexmbs.contact.Hole`, radius R) and the slider a journal (`flexmbs.contact.Sphere`, radius
R - ``clearance``), in contact by Hertz's law (k = ``stiffness`` N/m^1.5, restitution
``restitution``).  The crank is driven from rest to ``crank_speed`` in 0.1 s (theta = w t^2 / (2 T),
then w (t - T / 2)).  The configuration of the same mechanism with an ideal joint (clearance 0) is
the closed form

.. code:: text

    x_ideal(theta) = r cos(theta) + sqrt(l^2 - r^2 sin(theta)^2)           the slider's position

and the journal's centre J (on the x axis) stays within e = clearance + delta_max of the hole's
centre H (delta_max the largest penetration).  H is the rod's end: x_H = r cos(theta) +
sqrt(l^2 - (r sin(theta) - y_H)^2) with |y_H| <= e, and |dx_H/dy_H| <= r / sqrt(l^2 - r^2), so

.. code:: text

    |x - x_ideal| <= |x_J - x_H| + |x_H - x_ideal| <= e (1 + r / sqrt(l^2 - r^2))   (= 1.458 e)

the bound the case checks (``within_bound``); the deviation shrinks with the clearance (the
zero-clearance limit; tests/test_contact_cases.py runs two clearances).  Published runs of this mechanism with larger
speeds (Flores, Ambrosio, Claro and Lankarani, "Kinematics and Dynamics of Multibody Systems with
Imperfect Joints", Springer 2008, doi:10.1007/978-3-540-74361-3, ch. 4: crank 0.05 m, rod 0.12 m,
clearance 0.5 mm at the rod-slider joint) show the same free-flight, impact and following modes;
their accelerations are not reproduced here.

Integrator: adaptive RK45 on the index-1 equations (the impacts shorten its step).  NOTE: at
stiffness 1e9 and rtol 1e-7 a trial stage through an impact reached a state where the augmented
matrix was singular and the run stopped (status "failed", outputs kept); rtol 1e-9 or the softer
default stiffness run through.

Writes DIR/results.npz (t [s], theta (n_t,) [rad], x (n_t,) the slider's position [m], x_ideal (n_t,)
the closed form [m], eccentricity (n_t,): the journal's distance from the hole's centre [m],
contact_force (n_t,) [N]) and DIR/summary.json (the largest deviation from the ideal joint, the bound,
the number of steps, the time per step) and clearance.png.
"""
from __future__ import annotations

import sys

import numpy as np

import flexmbs as fm
from flexmbs.analysis import output_times
from flexmbs.bodies.planar import RigidBody2D
from flexmbs.case import (check_parameters, recording_into, resolve, run_command, system_run_options,
                          write_run_histories)
from flexmbs.constraints.driving import CoordinateDriver
from flexmbs.constraints.planar import PlanarPrismatic, PlanarRevolute
from flexmbs.contact import Contact, ContactLaw, Hole, Sphere
from flexmbs.pipes import call_quietly
from flexmbs.system import System

DEFAULTS = dict(clearance=5e-4, crank_speed=4 * np.pi, stiffness=1e7, restitution=0.9, t_end=0.6, dt_out=1e-3,
                method="RK45", rtol=1e-7, plots=True)
RUN_TIME = "about 20 s"     # at the defaults on a shared 2-core machine (measured 14 s CPU, 19 s wall, 2026-11-27)
HELP = dict(clearance="radial clearance of the rod-slider joint, hole radius minus journal radius [m]",
            crank_speed="crank speed after the spin-up [rad/s]", stiffness="Hertz contact stiffness [N/m^1.5]",
            restitution="coefficient of restitution of the journal on the bearing", t_end="duration [s]",
            dt_out="output interval [s]", method="integrator (adaptive: RK45, DOP853, Radau, BDF)",
            rtol="tolerance of the adaptive integrator", plots="write the plot")
SUMMARY = {"max_deviation": "max |x - x_ideal| [m]"}
CHOICES = dict(method=["RK45", "DOP853", "Radau", "BDF"])
CRANK, ROD, HOLE = 0.05, 0.12, 0.01              # lengths [m], the bearing hole's radius [m]
MASSES = (0.3, 0.2, 0.15)                       # crank, rod, slider [kg]
SPIN_UP = 0.1                                   # [s]


def drive(w: float):
    """theta(t) = w t^2 / (2 T) for t < T, then w (t - T / 2): (theta, theta', theta'')."""
    def law(t):
        if t < SPIN_UP:
            return w * t * t / (2 * SPIN_UP), w * t / SPIN_UP, w / SPIN_UP
        return w * (t - SPIN_UP / 2), w, 0.0
    return law


def build(p: dict) -> tuple[System, Contact]:
    """The mechanism at theta = 0, the journal at the centre of its hole, all at rest."""
    mc, mr, ms = MASSES
    crank = RigidBody2D("crank", mc, mc * CRANK ** 2 / 12, position=(CRANK / 2, 0.0))
    rod = RigidBody2D("rod", mr, mr * ROD ** 2 / 12, position=(CRANK + ROD / 2, 0.0))
    slider = RigidBody2D("slider", ms, 1e-5, position=(CRANK + ROD, 0.0))
    joints = [PlanarRevolute(crank, None, at=(0.0, 0.0), name="pivot"),
              PlanarRevolute(crank, rod, at=(CRANK, 0.0), name="pin"),
              PlanarPrismatic(slider, None, axis=(1.0, 0.0), at=(CRANK + ROD, 0.0), name="slide"),
              CoordinateDriver(crank, 2, drive(p["crank_speed"]), name="drive")]
    law = ContactLaw(stiffness=p["stiffness"], restitution=p["restitution"])
    contact = Contact([Hole(rod, HOLE, at=(ROD / 2, 0.0)), Sphere(slider, HOLE - p["clearance"])], law,
                      name="clearance")
    return System([crank, rod, slider], joints, forces=[contact]), contact


def x_ideal(theta) -> np.ndarray:
    """The slider's position with an ideal joint (module docstring)."""
    theta = np.asarray(theta, dtype=float)
    return CRANK * np.cos(theta) + np.sqrt(ROD ** 2 - (CRANK * np.sin(theta)) ** 2)


def check(p: dict) -> None:
    check_parameters(p, DEFAULTS, choices=CHOICES, positive=("clearance", "crank_speed", "stiffness", "t_end",
                                                               "dt_out", "rtol"))
    if not p["clearance"] < HOLE:
        raise ValueError(f"`clearance` must be smaller than the hole's radius {HOLE} m, got {p['clearance']!r}")
    if not 0 < p["restitution"] <= 1:
        raise ValueError(f"`restitution` must be in (0, 1], got {p['restitution']!r}")


def run(out=None, **params):
    """Run the case; returns a dict with t, theta, x, x_ideal, eccentricity, contact_force and the
    summary.  With ``out``, the run streams into DIR/results.h5 as "crank_clearance"."""
    p = resolve("crank_clearance", DEFAULTS, params, check)
    system, contact = build(p)
    with recording_into(out):
        res = fm.run(system, t_end=p["t_end"], t_eval=output_times(p["t_end"], p["dt_out"]), name="crank_clearance",
                     metadata={"case": "crank_clearance", "parameters": p},
                     **system_run_options(p["method"], h=p["dt_out"], rtol=p["rtol"]))
    crank, rod, slider = system.bodies
    theta = res.q[:, system.slice(crank)][:, 2]
    qr, qs = res.q[:, system.slice(rod)], res.q[:, system.slice(slider)]
    centre = qr[:, :2] + 0.5 * ROD * np.column_stack([np.cos(qr[:, 2]), np.sin(qr[:, 2])])
    ecc = np.linalg.norm(qs[:, :2] - centre, axis=1)
    x = qs[:, 0]
    ref = x_ideal(theta)
    force = np.nan_to_num(np.linalg.norm(res.contacts["clearance"]["normal_force"][:, 0], axis=1))
    depth = float(np.nanmax(res.contacts["clearance"]["depth"], initial=0.0))
    deviation = float(np.abs(x - ref).max())
    bound = (p["clearance"] + depth) * (1.0 + CRANK / np.sqrt(ROD ** 2 - CRANK ** 2))
    solve_s, n_steps = res.stats["solve_s"], res.stats["n_steps"]
    summary = dict(parameters=p, status=res.status, message=res.message, n_steps=n_steps, solve_s=solve_s,
                   time_per_step_s=solve_s / max(n_steps, 1), max_deviation=deviation,
                   bound=bound, within_bound=bool(deviation <= bound),
                   max_penetration=depth, max_contact_force=float(force.max()),
                   impacts=int(np.sum((force[1:] > 0) & (force[:-1] == 0))))
    result = dict(t=res.t, theta=theta, x=x, x_ideal=ref, eccentricity=ecc, contact_force=force, summary=summary)
    if out is not None:
        write_run_histories(out, result, p, history_figures)
    return result


def history_figures(result, p: dict) -> dict:
    """clearance.png, drawn by `write_run_histories` when plots are wanted."""
    t = result["t"]
    panels = [("x - x_ideal [m]", [dict(t=t, y=result["x"] - result["x_ideal"], label="slider")]),
              ("journal eccentricity [m]", [dict(t=t, y=result["eccentricity"], label="eccentricity")]),
              ("contact force [N]", [dict(t=t, y=result["contact_force"], label="|F_n|")])]
    return {"clearance.png": dict(panels=panels, title=f"slider-crank, clearance {p['clearance']} m")}


def main(argv=None):
    result, params, out, _, _ = run_command("crank_clearance", __doc__, run, argv, DEFAULTS, run_time=RUN_TIME,
                                            help=HELP, choices=CHOICES, check=check)
    s = result["summary"]
    print(f"slider-crank with a {s['parameters']['clearance']} m clearance at the slider pin "
          f"({s['parameters']['method']}): {s['status']}; {s['impacts']} contact phases")
    print(f"  largest |x - x_ideal| {s['max_deviation']:.3e} m (bound (clearance + penetration)(1 + r/sqrt(l^2 - r^2)) "
          f"{s['bound']:.3e} m: {'within' if s['within_bound'] else 'OUTSIDE'}); largest contact force "
          f"{s['max_contact_force']:.3g} N")
    print(f"  {s['n_steps']} steps, {1e6 * s['time_per_step_s']:.0f} us per step; wrote {out}/results.npz")
    return 0 if s["status"] == "finished" else 1


if __name__ == "__main__":
    sys.exit(call_quietly(main))
