"""IFToMM benchmark A04: the Bricard mechanism, an over-constrained closed chain with one degree of freedom.

Five rods of 1 m and 1 kg (cuboids 1 x 0.1 x 0.1 m), joined to each other and to the ground
by six revolute joints at P0 ... P5 = (0,0,0), (1,0,0), (1,-1,0), (1,-1,1), (0,-1,1), (0,0,1) m
with axes y, z, x, y, z, x; rod i spans P_i -> P_{i+1} (i = 0 ... 4), the ground closes
P5 -> P0.  Gravity 9.81 m/s^2 along -y, released from rest.  Gruebler's count gives
6 x 5 - 6 x 5 = 0 degrees of freedom, yet the mechanism moves with one: one of its 30 joint
equations is redundant.  `System.mobility` finds it from the rank of C_q (reported:
degrees of freedom 1, 1 redundant constraint, named).

The rods are rigid bodies in Euler parameters (`RigidBodyEP`, 7 coordinates each, the
normalisation as internal constraint) with 3D `Revolute` joints: 35 coordinates and 35
equations of rank 34.  With the redundant row the saddle-point matrix is singular, so the
augmented formulation refuses it; two methods that handle redundancy run it:

- ``index3-alpha`` (default): the index-3 generalized-alpha method (`flexmbs.run` formulation
  "index3") with the regularised multiplier block -eps I (chosen automatically when C_q is
  rank deficient), the motion unaffected, the redundant multiplier left at zero;
- ``udwadia-kalaba``: the index-1 Udwadia-Kalaba equations (formulation "udwadia-kalaba":
  Moore-Penrose pseudo-inverse), with DOP853 and coordinate partitioning (``--integrator``,
  ``--rtol``).

Geometry and data: IFToMM MBS benchmark library, problem A04 (lim.ii.udc.es/mbsbenchmark),
as encoded in Exudyn's ``bricardMechanism.py`` (../shared/BENCHMARKS.md sec. 6e); no
published reference history was retrievable, so the checks are the mobility, energy
conservation and the agreement of the two methods.

Writes DIR/results.h5 (the run "bricard": `flexmbs.load_results`), DIR/results.npz (t, P3
(n_t, 3): the position of the joint point P3 (rod 2's end), energy (n_t,),
constraint_position (n_t,)), DIR/summary.json (mobility report, energy change, time per step,
the step taken h_used) and p3.png.
"""
from __future__ import annotations

import sys

import numpy as np

import flexmbs as fm
from flexmbs.bodies import RigidBodyEP
from flexmbs.analysis import output_times
from flexmbs.case import (check_parameters, recording_into, resolve, run_command, system_run_options,
                          write_run_histories)
from flexmbs.constraints import Revolute
from flexmbs.formulations.registry import system_methods
from flexmbs.pipes import call_quietly
from flexmbs.system import System

DEFAULTS = dict(t_end=2.0, h=1e-3, rho_inf=0.9, dt_out=0.01, method="index3-alpha", integrator="DOP853",
                rtol=1e-9, plots=True)
RUN_TIME = "about 3 s"     # at the defaults on a 2-core machine (--help says it; measured, issue 20)
HELP = dict(t_end="duration [s] (the OpenSim port runs 10 s)", h="step of index3-alpha [s]",
            rho_inf="spectral radius at infinite frequency of index3-alpha", dt_out="output interval [s]",
            method="index3-alpha or udwadia-kalaba (index 1)", integrator="integrator of the udwadia-kalaba route",
            rtol="tolerance of the udwadia-kalaba route", plots="write the plot")
SUMMARY = {"max_energy_change": "max |E(t) - E(0)| [J]", "max_constraint_position": "max |C| [m]"}   # flexmbs.sweep
CHOICES = dict(method=["index3-alpha", "udwadia-kalaba"], integrator=system_methods("udwadia-kalaba"))

POINTS = np.array([[0, 0, 0], [1, 0, 0], [1, -1, 0], [1, -1, 1], [0, -1, 1], [0, 0, 1]], dtype=float)
AXES = np.eye(3)[[1, 2, 0, 1, 2, 0]]                  # y, z, x, y, z, x
MASS, LENGTH, SIDE = 1.0, 1.0, 0.1


def _frame(d):
    """Rotation matrix with x along d (a unit coordinate direction) and y, z completing it."""
    x = d / np.linalg.norm(d)
    e = np.eye(3)[int(np.argmin(np.abs(x)))]
    y = e - (e @ x) * x
    y /= np.linalg.norm(y)
    return np.column_stack([x, y, np.cross(x, y)])


def build():
    """(System, rods): five Euler-parameter rods and six revolute joints, at rest."""
    J_axial = MASS * 2 * SIDE**2 / 12.0
    J_trans = MASS * (LENGTH**2 + SIDE**2) / 12.0
    rods = []
    for i in range(5):
        a, b = POINTS[i], POINTS[i + 1]
        rods.append(RigidBodyEP(f"rod{i}", MASS, [J_axial, J_trans, J_trans], position=0.5 * (a + b),
                                orientation=_frame(b - a)))
    sides = [None] + rods + [None]                     # joint k joins sides k and k + 1
    joints = [Revolute(sides[k], sides[k + 1], at=POINTS[k], axis=AXES[k], name=f"P{k}") for k in range(6)]
    return System(rods, joints, gravity=(0.0, -9.81, 0.0)), rods


def check(p: dict) -> None:
    check_parameters(p, DEFAULTS, choices=CHOICES, positive=("t_end", "h", "dt_out", "rtol"))


def run(out=None, **params):
    """Run the case; returns a dict with t, P3, energy, constraint_position and the summary.
    With ``out``, the run streams into DIR/results.h5 as "bricard"."""
    p = resolve("bricard", DEFAULTS, params, check)
    system, rods = build()
    q0 = system.initial_coordinates()
    mob = system.mobility(0.0, q0)
    method = "index3-alpha" if p["method"] == "index3-alpha" else p["integrator"]
    with recording_into(out):
        res = fm.run(system, t_end=p["t_end"], t_eval=output_times(p["t_end"], p["dt_out"]), v0=np.zeros(system.n_q),
                     name="bricard", metadata={"case": "bricard", "parameters": p},
                     **system_run_options(method, h=p["h"], rtol=p["rtol"], rho_inf=p["rho_inf"],
                                          index1="udwadia-kalaba",
                                          formulation_options=dict(stabilization="coordinate-partitioning")))
    rod2 = res.bodies["rod2"]
    q2 = q0[system.slice(rods[2])]
    local = rods[2].rotation(q2).T @ (POINTS[3] - q2[:3])              # P3 in rod 2's frame
    P3 = rod2.position + rod2.rotation @ local
    energy = res.energies["total"]
    cpos = system.residual_norms(res.t, res.q)
    solve_s, n_steps = res.stats["solve_s"], res.stats["n_steps"]
    summary = dict(parameters=p, status=res.status, message=res.message, h_used=res.metadata["h"], n_steps=n_steps,
                   solve_s=solve_s, time_per_step_s=solve_s / max(n_steps, 1),
                   mobility=dict(n_q=mob["n_q"], n_c=mob["n_c"], rank=mob["rank"], dof=mob["dof"],
                                 redundant=mob["redundant"]),
                   P3_final=P3[-1].tolist(), energy_change=float(energy[-1] - energy[0]),
                   max_energy_change=float(np.abs(energy - energy[0]).max()),
                   max_constraint_position=float(cpos.max()))
    result = dict(t=res.t, P3=P3, energy=energy, constraint_position=cpos, summary=summary)
    if out is not None:
        write_run_histories(out, result, p, history_figures)
    return result


def history_figures(result, p: dict) -> dict:
    """p3.png, drawn by `write_run_histories` when plots are wanted."""
    t = result["t"]
    panels = [("P3 [m]", [dict(t=t, y=result["P3"][:, i], label=c) for i, c in enumerate("xyz")]),
              ("energy change [J]", [dict(t=t, y=result["energy"] - result["energy"][0], label="E - E(0)")])]
    return {"p3.png": dict(panels=panels, title=f"IFToMM A04: Bricard mechanism, {p['method']}")}


def main(argv=None):
    result, params, out, _, _ = run_command("bricard", __doc__, run, argv, DEFAULTS, run_time=RUN_TIME, help=HELP,
                                            choices=CHOICES, check=check)
    s = result["summary"]
    m = s["mobility"]
    n_red = len(m["redundant"])
    print(f"Bricard mechanism: {m['n_q']} coordinates, {m['n_c']} constraint equations, rank {m['rank']}: "
          f"{m['dof']} degree{'s' if m['dof'] != 1 else ''} of freedom, {n_red} redundant "
          f"constraint{'s' if n_red != 1 else ''}" + (f" ({', '.join(m['redundant'])})" if n_red else ""))
    print(f"  {params['method']}: {s['status']}; P3(t = {result['t'][-1]:g}) = "
          f"({', '.join(f'{x:.6f}' for x in s['P3_final'])}), energy change {s['energy_change']:.2e} J")
    print(f"  {s['n_steps']} steps, {1e6 * s['time_per_step_s']:.0f} us per step; wrote {out}/results.npz")
    return 0 if s["status"] == "finished" else 1


if __name__ == "__main__":
    sys.exit(call_quietly(main))
