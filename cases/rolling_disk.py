"""Rolling disk: a disk rolling without slip on level ground under a constant torque (issue 26,
item 4), against the closed form of its uniform acceleration.

A planar disk (`flexmbs.bodies.RigidBody2D`, mass m, radius r, moment of inertia I about its centre;
default a uniform disk, I = m r^2 / 2) stands on the ground y = 0 with its centre at height r,
gravity g = 9.81 m/s^2 along -y.  Two constraints hold it, on its coordinates q = (x, y, phi):

- contact: y = r (`flexmbs.constraints.CoordinateDriver`, the centre stays at the height r);
- rolling without slip: the contact point does not move, x' + r phi' = 0
  (`flexmbs.constraints.VelocityConstraint`, a velocity-level row: in the plane it integrates to
  x + r phi = const, but written at the velocity level as a rolling contact is in 3D).

A torque tau turns the disk clockwise (-tau about z), so it rolls towards +x.  With the friction
force F at the contact (along +x, the constraint's force), the centre's and the rotation's
equations m x'' = F and I phi'' = -tau + r F with x'' = -r phi'' give

.. code:: text

    x'' = a = tau / (r (m + I / r^2)),     x(t) = a t^2 / 2,     F = m a

(the rolling-disk closed form; its friction must stay below mu m g, F / (m g) is in the summary).
Energy: T + V_g grows by the torque's work W_loads = tau (x / r); ``energy_balance_error`` is the
largest |E(t) - E(0) - W_loads| (`Results.energy_balance_error`).

Velocity-level rows run on the index-1 formulation (lagrange: DOP853, RK45, Radau, BDF; the
index-3 methods refuse them, docs/multibody.md, "Gears and the Cardan joint").

Writes DIR/results.npz (t [s], x (n_t,) [m]: the centre's displacement along the ground, x_ref: the
closed form, phi (n_t,) [rad], energy (n_t,) [J], W_loads (n_t,) [J]) and DIR/summary.json (the
error against the closed form, the rolling error max |x + r phi|, the energy balance, the friction
needed and the time per step), and response.png.
"""
from __future__ import annotations

import sys

import numpy as np

import flexmbs as fm
from flexmbs.analysis import output_times
from flexmbs.bodies import RigidBody2D
from flexmbs.bodies.loads import torque_load
from flexmbs.case import (check_parameters, recording_into, resolve, run_command, system_run_options,
                          write_run_histories)
from flexmbs.constraints import CoordinateDriver, VelocityConstraint
from flexmbs.pipes import call_quietly
from flexmbs.system import System

DEFAULTS = dict(mass=2.0, radius=0.3, inertia=0.0, torque=1.5, t_end=2.0, dt_out=0.01, method="DOP853", rtol=1e-10,
                plots=True)
RUN_TIME = "about 2 s"     # at the defaults on a 2-core machine (measured 0.5 s CPU for the run)
HELP = dict(mass="disk mass m [kg]", radius="disk radius r [m]",
            inertia="moment of inertia about the centre I [kg m^2]; 0: a uniform disk, m r^2 / 2",
            torque="driving torque tau (clockwise: the disk rolls towards +x) [N m]", t_end="duration [s]",
            dt_out="output interval [s]", method="integrator (index-1 formulation lagrange)",
            rtol="tolerance of the adaptive methods", plots="write the plot")
SUMMARY = {"max_error_x": "max |x - a t^2 / 2| [m]", "energy_balance_error": "max |E - E0 - W_loads| [J]"}
CHOICES = dict(method=["DOP853", "RK45", "Radau", "BDF"])
GRAVITY = 9.81


def moment_of_inertia(p: dict) -> float:
    """I [kg m^2]: the given one, or m r^2 / 2 (a uniform disk) for 0."""
    return p["inertia"] if p["inertia"] > 0 else 0.5 * p["mass"] * p["radius"] ** 2


def acceleration(p: dict) -> float:
    """a = tau / (r (m + I / r^2)) [m/s^2] (module docstring)."""
    r = p["radius"]
    return p["torque"] / (r * (p["mass"] + moment_of_inertia(p) / r ** 2))


def build(p: dict) -> System:
    """The disk at rest on the ground, its contact height and its rolling row, the torque."""
    r = p["radius"]
    disk = RigidBody2D("disk", p["mass"], moment_of_inertia(p), position=(0.0, r), loads=[torque_load(-p["torque"])])
    contact = CoordinateDriver(disk, 1, r, name="contact")
    rolling = VelocityConstraint(disk, lambda t, q: np.array([[1.0, 0.0, r]]), name="rolling")
    return System([disk], [contact, rolling], gravity=(0.0, -GRAVITY))


def check(p: dict) -> None:
    check_parameters(p, DEFAULTS, choices=CHOICES, positive=("mass", "radius", "t_end", "dt_out", "rtol"))
    if not p["inertia"] >= 0:
        raise ValueError(f"`inertia` must be >= 0 (0: a uniform disk), got {p['inertia']!r}")


def run(out=None, **params):
    """Run the case; returns a dict with t, x, x_ref, phi, energy, W_loads and the summary.  With
    ``out``, the run streams into DIR/results.h5 as "rolling_disk"."""
    p = resolve("rolling_disk", DEFAULTS, params, check)
    system = build(p)
    with recording_into(out):
        res = fm.run(system, t_end=p["t_end"], t_eval=output_times(p["t_end"], p["dt_out"]), name="rolling_disk",
                     metadata={"case": "rolling_disk", "parameters": p},
                     **system_run_options(p["method"], h=p["dt_out"], rtol=p["rtol"]))
    x, phi = res.q[:, 0], res.q[:, 2]
    a = acceleration(p)
    x_ref = 0.5 * a * res.t ** 2
    balance = res.energy_balance_error()
    solve_s, n_steps = res.stats["solve_s"], res.stats["n_steps"]
    summary = dict(parameters=p, status=res.status, message=res.message, n_steps=n_steps, solve_s=solve_s,
                   time_per_step_s=solve_s / max(n_steps, 1), acceleration=a,
                   max_error_x=float(np.abs(x - x_ref).max()),
                   rolling_error=float(np.abs(x + p["radius"] * phi).max()),
                   friction_ratio=a / GRAVITY, work_of_torque_J=float(res.energies["W_loads"][-1]),
                   energy_balance_error=float(np.abs(balance).max()))
    result = dict(t=res.t, x=x, x_ref=x_ref, phi=phi, energy=res.energies["total"], W_loads=res.energies["W_loads"],
                  summary=summary)
    if out is not None:
        write_run_histories(out, result, p, history_figures)
    return result


def history_figures(result, p: dict) -> dict:
    """response.png, drawn by `write_run_histories` when plots are wanted."""
    t = result["t"]
    panels = [("centre displacement x [m]", [dict(t=t, y=result["x"], label="x"),
                                             dict(t=t, y=result["x_ref"], label="a t^2 / 2")]),
              ("error [m]", [dict(t=t, y=result["x"] - result["x_ref"], label="x - a t^2 / 2")])]
    return {"response.png": dict(panels=panels, title=f"disk rolling under {p['torque']} N m, {p['method']}")}


def main(argv=None):
    result, params, out, _, _ = run_command("rolling_disk", __doc__, run, argv, DEFAULTS, run_time=RUN_TIME,
                                            help=HELP, choices=CHOICES, check=check)
    s = result["summary"]
    print(f"disk rolling under a torque ({s['parameters']['method']}): {s['status']}; a = tau / (r (m + I/r^2)) = "
          f"{s['acceleration']:.6g} m/s^2")
    print(f"  largest error of x against a t^2 / 2: {s['max_error_x']:.2e} m; rolling |x + r phi| {s['rolling_error']:.2e} "
          f"m; friction needed {s['friction_ratio']:.3g} m g")
    print(f"  torque's work {s['work_of_torque_J']:.6g} J; energy balance error {s['energy_balance_error']:.2e} J; "
          f"{s['n_steps']} steps, {1e6 * s['time_per_step_s']:.0f} us per step; wrote {out}/results.npz")
    return 0 if s["status"] == "finished" else 1


if __name__ == "__main__":
    sys.exit(call_quietly(main))
