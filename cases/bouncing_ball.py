"""Bouncing ball: a ball dropped on a plane, its rebound heights against the coefficient of
restitution (issue 26, item 4).

A rigid ball (`RigidBodyEP`, mass 1 kg, radius 0.1 m) is released at rest with its lowest point
``drop_height`` above the ground plane z = 0, under gravity 9.81 m/s^2 along -z.  Contact between
`flexmbs.contact.Sphere` and `flexmbs.contact.Plane`: Hertz's f = k delta^(3/2) with the given
``stiffness`` and the scaled dashpot of `flexmbs.contact.ContactLaw`, which rebounds every normal
impact with the coefficient of restitution e = ``restitution`` whatever its speed.  In flight the
ball falls freely, so an impact at v_k sends it back up with e v_k and

.. code:: text

    h_k = (e v_k)^2 / (2 g) = e^2 h_(k-1) = e^(2k) h_0          (h: the lowest point above the plane)

The contact is not instantaneous: gravity acts during the impact (t_c = 0.6 ms at the defaults),
which lowers each rebound a little more than e^2, the more so the slower the impact (measured at
the defaults, 2026-11-27: relative errors 3.3e-4, 7.8e-4, 1.4e-3, 2.1e-3 for rebounds 1 to 4; an
elastic ball, e = 1, rebounds to 2e-6 of h_0).

Energy: T + V_g + U (U the contact's elastic energy, in ``energies["strain"]``) falls by the work the
dashpot dissipates (``W_damping``), (1 - e^2) of the kinetic energy at each impact.  The run's works
are integrated at every step of the integrator (Gauss on its dense output), so
``energy_balance_error`` is the integrator's: 0.011 J of the 8.75 J dissipated at the defaults, 0.010 J
with outputs every dt_out only (when the works were the trapezoidal rule over the outputs: 0.074 J,
and 8.8 J with the impacts falling between outputs).  The outputs are still dense (``impact_dt``)
within 5 ms of each impact the closed form predicts (t_1 = sqrt(2 h_0 / g), then every
2 e^k v_0 / g), for the plots and the apex heights of the sub-millisecond impacts.

Writes DIR/results.npz (t [s], height (n_t,): the centre above the plane [m], apex_times,
apex_heights (the k-th rebound's apex of the lowest point) and apex_heights_ref (e^(2k) h_0)
[m], energy (n_t,), W_damping (n_t,) [J]), DIR/summary.json (the rebound heights, their errors,
the energy balance, the time per step) and height.png.
"""
from __future__ import annotations

import sys

import numpy as np

import flexmbs as fm
from flexmbs.analysis import output_times
from flexmbs.bodies import RigidBodyEP
from flexmbs.case import (check_parameters, recording_into, resolve, run_command, system_run_options,
                          write_run_histories)
from flexmbs.contact import Contact, ContactLaw, Plane, Sphere
from flexmbs.pipes import call_quietly
from flexmbs.system import System

DEFAULTS = dict(restitution=0.8, drop_height=1.0, stiffness=1e9, mass=1.0, radius=0.1, t_end=2.6, dt_out=1e-3,
                impact_dt=2e-5, method="RK45", rtol=1e-8, plots=True)
RUN_TIME = "about 15 s"     # at the defaults on a shared 2-core machine (measured 11.8 s CPU, 26 s wall, 2026-11-27)
HELP = dict(restitution="coefficient of restitution e of the ball on the plane", drop_height="height of the "
            "ball's lowest point above the plane at release [m]", stiffness="Hertz contact stiffness k [N/m^1.5]",
            mass="mass of the ball [kg]", radius="radius of the ball [m]", t_end="duration [s]",
            dt_out="output interval [s]", impact_dt="output interval within 5 ms of each impact [s]", method="integrator (adaptive: RK45, DOP853, Radau, BDF)",
            rtol="tolerance of the adaptive integrator", plots="write the plot")
SUMMARY = {"max_rel_error_apex": "max |h_k - e^(2k) h_0| / (e^(2k) h_0) over the rebounds"}
CHOICES = dict(method=["RK45", "DOP853", "Radau", "BDF"])
GRAVITY = 9.81


def build(p: dict) -> System:
    """The ball at rest, its lowest point ``drop_height`` above the plane z = 0."""
    m, r = p["mass"], p["radius"]
    ball = RigidBodyEP("ball", m, 0.4 * m * r * r * np.eye(3), position=(0.0, 0.0, r + p["drop_height"]))
    law = ContactLaw(stiffness=p["stiffness"], restitution=p["restitution"])
    return System([ball], gravity=(0.0, 0.0, -GRAVITY), forces=[Contact([Sphere(ball, r), Plane(None, (0, 0, 1))],
                                                                         law, name="ground")])


def rebound_heights(p: dict, n: int) -> np.ndarray:
    """h_k = e^(2k) h_0, k = 1 .. n: the closed form (module docstring)."""
    return p["drop_height"] * p["restitution"] ** (2 * np.arange(1, n + 1))


def output_grid(p: dict) -> np.ndarray:
    """The output times: every dt_out, and every impact_dt within 5 ms of each impact of the closed form
    (module docstring)."""
    g, e = GRAVITY, p["restitution"]
    v0 = np.sqrt(2 * g * p["drop_height"])
    k = np.arange(200)
    impacts = v0 / g + np.concatenate([[0.0], np.cumsum(2 * e ** (k[1:]) * v0 / g)])
    impacts = impacts[impacts < p["t_end"]]
    dense = (impacts[:, None] + np.arange(-5e-3, 5e-3, p["impact_dt"])[None, :]).ravel()
    t = np.union1d(output_times(p["t_end"], p["dt_out"]), dense[(dense > 0) & (dense < p["t_end"])])
    return t[np.concatenate([[True], np.diff(t) > 1e-12])]


def apexes(t, z) -> tuple[np.ndarray, np.ndarray]:
    """(times, heights) of the local maxima of z after the first impact, each refined by the parabola
    through the output and its two neighbours (exact for free flight)."""
    k = np.flatnonzero((z[1:-1] > z[:-2]) & (z[1:-1] >= z[2:])) + 1
    z0, z1, z2 = z[k - 1], z[k], z[k + 1]
    dt = t[k + 1] - t[k]
    curv = z0 - 2 * z1 + z2
    shift = 0.5 * (z0 - z2) / curv
    return t[k] + shift * dt, z1 - 0.25 * (z0 - z2) * shift


def check(p: dict) -> None:
    check_parameters(p, DEFAULTS, choices=CHOICES, positive=("drop_height", "stiffness", "mass", "radius", "t_end",
                                                               "dt_out", "impact_dt", "rtol"))
    if not 0 < p["restitution"] <= 1:
        raise ValueError(f"`restitution` must be in (0, 1], got {p['restitution']!r}")


def run(out=None, **params):
    """Run the case; returns a dict with t, height, the apexes and their closed form, energy,
    W_damping and the summary.  With ``out``, the run streams into DIR/results.h5 as "bouncing_ball"."""
    p = resolve("bouncing_ball", DEFAULTS, params, check)
    system = build(p)
    with recording_into(out):
        res = fm.run(system, t_end=p["t_end"], t_eval=output_grid(p), name="bouncing_ball",
                     metadata={"case": "bouncing_ball", "parameters": p},
                     **system_run_options(p["method"], h=p["dt_out"], rtol=p["rtol"]))
    height = res.q[:, 2]
    t_apex, z_apex = apexes(res.t, height - p["radius"])
    ref = rebound_heights(p, len(z_apex))
    rel = np.abs(z_apex - ref) / ref
    balance = res.energy_balance_error()
    solve_s, n_steps = res.stats["solve_s"], res.stats["n_steps"]
    summary = dict(parameters=p, status=res.status, message=res.message, n_steps=n_steps, solve_s=solve_s,
                   time_per_step_s=solve_s / max(n_steps, 1), rebounds=len(z_apex),
                   apex_heights=z_apex.tolist(), apex_heights_ref=ref.tolist(), rel_errors_apex=rel.tolist(),
                   max_rel_error_apex=float(rel.max()) if len(rel) else float("nan"),
                   dissipated_J=float(res.energies["W_damping"][-1]),
                   energy_balance_error=float(np.abs(balance).max()))
    result = dict(t=res.t, height=height, apex_times=t_apex, apex_heights=z_apex, apex_heights_ref=ref,
                  energy=res.energies["total"], W_damping=res.energies["W_damping"], summary=summary)
    if out is not None:
        write_run_histories(out, result, p, history_figures)
    return result


def history_figures(result, p: dict) -> dict:
    """height.png, drawn by `write_run_histories` when plots are wanted."""
    t = result["t"]
    panels = [("centre above the plane [m]", [dict(t=t, y=result["height"], label="height")]),
              ("energy [J]", [dict(t=t, y=result["energy"], label="T + V_g + U"),
                              dict(t=t, y=result["energy"] + result["W_damping"], label="... + W_damping")])]
    return {"height.png": dict(panels=panels, title=f"bouncing ball, e = {p['restitution']}")}


def main(argv=None):
    result, params, out, _, _ = run_command("bouncing_ball", __doc__, run, argv, DEFAULTS, run_time=RUN_TIME,
                                            help=HELP, choices=CHOICES, check=check)
    s = result["summary"]
    print(f"bouncing ball, e = {s['parameters']['restitution']}, dropped from {s['parameters']['drop_height']} m "
          f"({s['parameters']['method']}): {s['status']}; {s['rebounds']} rebounds")
    for k, (h, r) in enumerate(zip(s["apex_heights"], s["apex_heights_ref"]), start=1):
        print(f"  rebound {k}: {h:.6f} m, e^{2 * k} h_0 = {r:.6f} m, error {abs(h - r) / r:.2e}")
    print(f"  dissipated {s['dissipated_J']:.4g} J; energy balance error {s['energy_balance_error']:.2e} J; "
          f"{s['n_steps']} steps, {1e6 * s['time_per_step_s']:.0f} us per step; wrote {out}/results.npz")
    return 0 if s["status"] == "finished" else 1


if __name__ == "__main__":
    sys.exit(call_quietly(main))
