"""IFToMM benchmark A01: the planar simple pendulum, against its closed form.

A lumped mass of 1 kg on a massless link of 1 m, pinned to the ground at the origin, in the
vertical plane under gravity 9.81 m/s^2 along -y, released at rest from the horizontal with
x(P1) = +1 m.  Modelled as one `RigidBody2D` with its centroid at the mass and I_G = 0 (the
link and mass as one body) and a `PlanarRevolute` to the ground at the pivot: 3 coordinates,
2 constraints, integrated by `flexmbs.run`: by default on the index-1 route (formulation
"lagrange": the augmented accelerations) with DOP853 at rtol 1e-10 (atol = rtol / 100), or any
other integrator of flexmbs on it, or with the index-3 generalized-alpha method (``index3-alpha``,
formulation "index3").

Accuracy target (issue 25): P1 within ``ACCURACY`` = 1e-6 m of the closed form at every output
(``max_error_P1``).  The defaults reach 2.8e-10 m over 10 s (measured, 2026-11-27;
docs/benchmarks.md sec. 17); index3-alpha at h = 1e-3 s reaches 1.2e-4 m and at h = 1e-4 s still
1.2e-6 m (second order), so the default is the error-controlled DOP853.  The run writes the error
it reached to summary.json (``accuracy_error``, ``accuracy_measure``, ``accuracy_target`` and
``meets_target``), and the case and `flexmbs run` print it as one line (`flexmbs.cli.accuracy_line`).

Closed form (../shared/BENCHMARKS.md sec. 6b): with k = sin(pi/4), K = K(k) the complete
elliptic integral of the first kind and sn Jacobi's elliptic function (parameter m = k^2),

.. code:: text

    theta(t) = 2 asin(k sn(K - sqrt(g/L) t, k)),    P1 = L (sin theta, -cos theta),   period 4 sqrt(L/g) K

Data: IFToMM MBS benchmark library, problem A01,
http://lim.ii.udc.es/mbsbenchmark/dist/A01/A01_specification.xml (duration 2000 s in the
specification; 10 s by default here, ``--t-end 2000`` for the full run).

Writes DIR/results.h5 (the run "pendulum_a01": `flexmbs.load_results`), DIR/results.npz (t, P1
(n_t, 2), P1_velocity (n_t, 2), P1_exact (n_t, 2), energy (n_t,), constraint_position (n_t,)),
DIR/summary.json (error of P1 at t_end and its maximum, energy change, time per step, the step
taken h_used) and p1.png.
"""
from __future__ import annotations

import sys

import numpy as np
from scipy.special import ellipj, ellipk

import flexmbs as fm
from flexmbs.bodies.planar import RigidBody2D
from flexmbs.analysis import output_times
from flexmbs.cli import accuracy_line
from flexmbs.case import (check_parameters, recording_into, resolve, run_command, system_run_options,
                          write_run_histories)
from flexmbs.constraints.planar import PlanarRevolute
from flexmbs.formulations.registry import system_methods
from flexmbs.pipes import call_quietly
from flexmbs.system import System

DEFAULTS = dict(length=1.0, mass=1.0, g=9.81, t_end=10.0, h=1e-3, rho_inf=0.8, dt_out=0.01,
                integrator="DOP853", rtol=1e-10, plots=True)
RUN_TIME = "about 4 s"     # at the defaults on a 2-core machine (--help says it; measured, issue 25)
ACCURACY = 1e-6            # max |P1 - exact| [m] the defaults must reach (issue 25, item 4)
HELP = dict(length="link length L [m]", mass="lumped mass [kg]", g="gravity [m/s^2]", t_end="duration [s]",
            h="step of the fixed-step methods [s]", rho_inf="spectral radius at infinite frequency of index3-alpha",
            dt_out="output interval [s]",
            integrator="any method of flexmbs.integrators on the index-1 augmented form (default DOP853), or "
                       "index3-alpha on the index-3 equations",
            rtol="tolerance of adaptive methods", plots="write the plot")
SUMMARY = {"max_error_P1": "max |P1 - exact| [m]", "max_energy_change": "max |E(t) - E(0)| [J]",   # flexmbs.sweep
           "max_constraint_position": "max |C| [m]"}
CHOICES = dict(integrator=system_methods())


def exact(t, length=1.0, g=9.81):
    """P1 (n_t, 2) of the closed form for the release from x = +L at rest."""
    k = np.sin(np.pi / 4)
    theta = 2.0 * np.arcsin(k * ellipj(ellipk(k * k) - np.sqrt(g / length) * np.asarray(t, float), k * k)[0])
    return length * np.column_stack([np.sin(theta), -np.cos(theta)])


def period(length=1.0, g=9.81):
    """4 sqrt(L/g) K(k), k = sin(pi/4) [s]."""
    return 4.0 * np.sqrt(length / g) * ellipk(0.5)


def build(length=1.0, mass=1.0, g=9.81):
    """(System, body): the mass at (L, 0), pinned at the origin."""
    body = RigidBody2D("pendulum", mass, 0.0, position=(length, 0.0))
    return System([body], [PlanarRevolute(None, body, at=(0.0, 0.0), name="pivot")], gravity=(0.0, -g)), body


def check(p: dict) -> None:
    check_parameters(p, DEFAULTS, choices=CHOICES, positive=("length", "mass", "t_end", "h", "dt_out", "rtol"),
                     nonnegative=("g",))


def run(out=None, **params):
    """Run the case; returns a dict with t, P1, P1_velocity, P1_exact, energy and the summary.
    With ``out``, the run streams into DIR/results.h5 as "pendulum_a01"."""
    p = resolve("pendulum_a01", DEFAULTS, params, check)
    system, body = build(p["length"], p["mass"], p["g"])
    with recording_into(out):
        res = fm.run(system, t_end=p["t_end"], t_eval=output_times(p["t_end"], p["dt_out"]),
                     v0=np.zeros(system.n_q), name="pendulum_a01",
                     metadata={"case": "pendulum_a01", "parameters": p},
                     **system_run_options(p["integrator"], h=p["h"], rtol=p["rtol"], rho_inf=p["rho_inf"]))
    pendulum = res.bodies["pendulum"]
    P1, P1v = pendulum.position[:, :2], pendulum.velocity[:, :2]       # the centroid is the mass
    P1e = exact(res.t, p["length"], p["g"])
    energy = res.energies["total"]
    cpos = system.residual_norms(res.t, res.q)
    err = np.abs(P1 - P1e).max(axis=1)
    solve_s, n_steps = res.stats["solve_s"], res.stats["n_steps"]
    summary = dict(parameters=p, status=res.status, message=res.message, h_used=res.metadata["h"], n_steps=n_steps,
                   solve_s=solve_s, time_per_step_s=solve_s / max(n_steps, 1), t_final=float(res.t[-1]),
                   P1_final=P1[-1].tolist(), P1_exact_final=P1e[-1].tolist(), error_P1_final=float(err[-1]),
                   max_error_P1=float(err.max()), energy_change=float(energy[-1] - energy[0]),
                   max_energy_change=float(np.abs(energy - energy[0]).max()),
                   max_constraint_position=float(cpos.max()), period_s=float(period(p["length"], p["g"])),
                   accuracy_error=float(err.max()), accuracy_target=ACCURACY,
                   accuracy_measure="max_t |P1 - closed form| [m]", meets_target=bool(err.max() <= ACCURACY))
    result = dict(t=res.t, P1=P1, P1_velocity=P1v, P1_exact=P1e, energy=energy, constraint_position=cpos,
                  summary=summary)
    if out is not None:
        write_run_histories(out, result, p, history_figures)
    return result


def history_figures(result, p: dict) -> dict:
    """p1.png, drawn by `write_run_histories` when plots are wanted."""
    t = result["t"]
    panels = [(f"P1 {c} [m]", [dict(t=t, y=result["P1"][:, i], label=p["integrator"]),
                                dict(t=t, y=result["P1_exact"][:, i], label="closed form", style="--")])
              for i, c in enumerate("xy")]
    panels.append(("|P1 - exact|_inf [m]", [dict(t=t, y=np.abs(result["P1"] - result["P1_exact"]).max(axis=1),
                                                 label="error")]))
    return {"p1.png": dict(panels=panels, title="IFToMM A01: simple pendulum")}


def main(argv=None):
    result, params, out, _, _ = run_command("pendulum_a01", __doc__, run, argv, DEFAULTS, run_time=RUN_TIME,
                                            help=HELP, choices=CHOICES, check=check)
    s = result["summary"]
    print(f"pendulum A01, {params['integrator']}: {s['status']}")
    print(f"  P1(t = {s['t_final']:g}) = ({s['P1_final'][0]:.9f}, {s['P1_final'][1]:.9f}), closed form "
          f"({s['P1_exact_final'][0]:.9f}, {s['P1_exact_final'][1]:.9f}), error {s['error_P1_final']:.2e} m")
    accuracy = accuracy_line(out / "summary.json")      # the line `flexmbs run` prints
    if accuracy:
        print(f"  {accuracy}")
    print(f"  energy change {s['energy_change']:.2e} J, {s['n_steps']} steps, "
          f"{1e6 * s['time_per_step_s']:.0f} us per step; wrote {out}/results.npz")
    return 0 if s["status"] == "finished" else 1


if __name__ == "__main__":
    sys.exit(call_quietly(main))
