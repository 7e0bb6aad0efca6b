"""Triple spherical pendulum of rigid bars (Pappalardo and Guida 2018, sec. 4): index-1 integration.

Three rigid bars, each 4 x 0.4 x 0.4 m (half-dimensions L = 2 m, H = W = 0.2 m), joined by
spherical joints: body 1 to the ground at A, body 2 to body 1 at B, body 3 to body 2 at C;
gravity 9.81 m/s^2 along -Z.  Masses and inertias from Table 1 of the paper (m = 2, 3, 4 kg;
I_xx, I_yy, I_zz = (0.053, 2.693, 2.693), (0.080, 4.040, 4.040), (0.107, 5.387, 5.387)
kg m^2 about the centroid in body axes, no products of inertia: the values of a uniform box,
m (H^2 + W^2)/3 and m (L^2 + W^2)/3 with the half-dimensions, rounded).  The paper's initial
configuration is shown only in a figure; issue 12 documents the one used here: all three bars
horizontal, body 1 along +X from A = (0, 0, 0) to B = (4, 0, 0), body 2 along +Y from B to
C = (4, 4, 0), body 3 along +X from C to the tip D = (8, 4, 0), each body frame at its
centroid with its x axis along the bar, released from rest.  The motion is chaotic.

Choices: ``--coordinates`` natural (NACF, 12 coordinates and 6 rigidity constraints per body)
or euler-parameters (RPCF-EP, 7 coordinates and the normalisation); ``--solver`` augmented or
udwadia-kalaba; ``--stabilization`` none, baumgarte or coordinate-partitioning (the paper's
RGCP, Newton tolerance 1e-9); ``--integrator`` any of flexmbs (the paper: AB4 with h = 1e-3 s).
Each run is one `flexmbs.run` (formulation "lagrange" for the augmented solver,
"udwadia-kalaba" for Udwadia-Kalaba, with the stabilisation as its option; index3-alpha and
rattle run the formulation "index3", the index-3 equations with their own Newton iteration, where
neither solver nor stabilisation enters: give ``--stabilization none``).  rattle (symplectic: the
energy error stays bounded over long runs, docs/benchmarks.md secs. 16 and 29) runs both: explicit
with the constant mass matrix of natural coordinates, with a Newton iteration per step for the
M(q) of Euler parameters.  In both coordinate systems the accelerations and the partitioning take
M, Q, C and C_q from the compiled kernel (`flexmbs.formulations.evaluations`; summary.json's
``kernel`` "compiled"; natural coordinates since issue 22: csrc ``natural_*``), and so do
index3-alpha's steps.
The position and velocity constraint violations are
evaluated at every output.  Fixed-step integrators step onto every output time; adaptive ones
(RK45, DOP853, Radau, BDF) give the outputs between their steps from their dense interpolant,
which coordinate partitioning does not correct (there the violations are those of the
interpolant, e.g. 1e-8 with Radau at rtol = 1e-6).

Writes DIR/results.h5 (the run "triple_pendulum": `flexmbs.load_results`), DIR/results.npz (t,
tip (n_t, 3) and tip_velocity (n_t, 3) of D in the global frame, energy (n_t,) [J],
constraint_position and constraint_velocity (n_t,): 2-norms of C and of C_q q' + C_t),
DIR/summary.json (max_constraint_position, max_constraint_velocity, max_energy_error =
max |E(t) - E(0)| [J], solve_s (wall, the integration), solve_cpu_s (CPU of the whole
`flexmbs.run`: the integration and the recording of the outputs), cpu_per_step_ms, n_rhs (the
integrator's evaluations of the accelerations), ...) and the plots tip_x.png, tip_y.png,
tip_z.png (position and velocity of D, the paper's Figs. 3-5) and trajectory.png (Fig. 6).

``--table`` runs the paper's four combinations (two coordinate systems x two solvers) with AB4,
h = 1e-3 s, coordinate partitioning and ``--t-end``, and writes the analogues of Table 2
(constraint violations: table2.csv, table2.md) and Table 3 (CPU times of the process: table3.csv,
table3.md), each run's results in DIR/<coordinates>-<solver>/ (and as the run
"<coordinates>-<solver>" of DIR/results.h5), and the plots comparing the two
coordinate systems (Udwadia-Kalaba, as in the paper's figures).

Reference: C. M. Pappalardo, D. Guida, On the computational methods for solving the
differential-algebraic equations of motion of multibody systems, Machines 6 (2018) 20,
doi:10.3390/machines6020020.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

import flexmbs as fm
from flexmbs.analysis import output_times
from flexmbs.bodies import RigidBodyEP, RigidBodyNatural
from flexmbs.bodies.motion import marker_motion
from flexmbs.case import (CaseError, check_parameters, recording_into, resolve, run_command, system_run_options,
                          write_results)
from flexmbs.compiled import Unsupported
from flexmbs.constraints import Spherical
from flexmbs.formulations.index1 import SOLVERS
from flexmbs.formulations.registry import INDEX3_METHODS, system_methods
from flexmbs.formulations.stabilization import STABILIZATIONS, CoordinatePartitioning, make_stabilization, violations
from flexmbs.integrators import INTEGRATORS
from flexmbs.pipes import call_quietly
from flexmbs.system import System

HALF_LENGTH, HALF_HEIGHT, HALF_WIDTH = 2.0, 0.2, 0.2          # L, H, W [m]
MASSES = (2.0, 3.0, 4.0)                                       # Table 1 [kg]
INERTIAS = ((0.053, 2.693, 2.693), (0.080, 4.040, 4.040), (0.107, 5.387, 5.387))   # Table 1 [kg m^2]
GRAVITY = (0.0, 0.0, -9.81)
COORDINATES = {"natural": RigidBodyNatural, "euler-parameters": RigidBodyEP}
ROT_Z90 = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])   # body x axis along +Y

DEFAULTS = dict(coordinates="natural", solver="udwadia-kalaba", stabilization="coordinate-partitioning",
                integrator="AB4", h=1e-3, rtol=1e-8, t_end=20.0, dt_out=0.01, table=False, plots=True)
RUN_TIME = "about 1 min"     # at the defaults on a 2-core machine (--help says it): 49 s wall, 19 s CPU at load 6.7
                             # on the compiled path (issue 22, docs/benchmarks.md 20.5)
HELP = dict(coordinates="rigid-body coordinates", solver="acceleration solver",
            stabilization="constraint stabilisation after every step", integrator="time integrator",
            h="step of fixed-step integrators (first trial step of adaptive ones) [s]",
            rtol="relative tolerance of adaptive integrators (atol = rtol / 100)", t_end="duration [s]",
            dt_out="output interval [s]",
            table="run the paper's four combinations (AB4, h = 1e-3 s, coordinate partitioning) and "
                  "write the Table 2 and Table 3 analogues", plots="write the plots")
SUMMARY = {"max_constraint_position": "max |C|", "max_constraint_velocity": "max |C_q q' + C_t|",  # flexmbs.sweep
           "max_energy_error": "max |E(t) - E(0)| [J]"}
CHOICES = dict(coordinates=list(COORDINATES), solver=list(SOLVERS), stabilization=list(STABILIZATIONS),
               integrator=system_methods())
TABLE_RUN = dict(integrator="AB4", h=1e-3, stabilization="coordinate-partitioning")
TIP = np.array([HALF_LENGTH, 0.0, 0.0])                        # D in body 3's coordinates
FORMULATION = {"augmented": "lagrange", "udwadia-kalaba": "udwadia-kalaba"}   # solver -> flexmbs.run's formulation


def build(coordinates: str = "natural") -> System:
    """The triple pendulum in the initial configuration of the module docstring."""
    Body = COORDINATES[coordinates]
    L = HALF_LENGTH
    frames = (((L, 0.0, 0.0), np.eye(3)), ((2 * L, L, 0.0), ROT_Z90), ((3 * L, 2 * L, 0.0), np.eye(3)))
    bodies = [Body(f"bar{i + 1}", m, J, position=pos, orientation=A)
              for i, (m, J, (pos, A)) in enumerate(zip(MASSES, INERTIAS, frames))]
    A, B, C = (0.0, 0.0, 0.0), (2 * L, 0.0, 0.0), (2 * L, 2 * L, 0.0)
    joints = [Spherical(None, bodies[0], at=A, name="A"), Spherical(bodies[0], bodies[1], at=B, name="B"),
              Spherical(bodies[1], bodies[2], at=C, name="C")]
    return System(bodies, joints, gravity=GRAVITY)


def tip(system: System, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Global position and velocity of the tip D for states q, v of shape (n_t, n_q), all outputs at once
    (`flexmbs.bodies.motion.marker_motion`): r_D = R + A(p) s_D and r_D' = R' + V(p, s_D) p' with the
    body's own A(p) (`flexmbs.rotations.ep_to_matrix`, not normalised: the body's `point` and
    `point_jacobian`), or r_D = S q + r_0 for natural coordinates."""
    body = system.bodies[2]
    sl = system.slice(body)
    return marker_motion(body, q[:, sl], v[:, sl], TIP)


def constraint_violations(system: System, t: np.ndarray, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(||C||_2, ||C_q q' + C_t||_2) at every output, (n_t, 2): C, C_q and C_t of all outputs from one
    call of the compiled kernel (`flexmbs.compiled.CompiledSystem.terms_history`), else (a kernel
    that does not evaluate this System, or predates that entry) one
    `flexmbs.formulations.stabilization.violations` per output."""
    try:
        _, _, C, Cq, _, Ct = system.compiled().terms_history(t, q, v)
    except Unsupported:
        return np.array([violations(system, tk, qk, vk) for tk, qk, vk in zip(t, q, v)]).reshape(-1, 2)
    Cdot = np.einsum("tij,tj->ti", Cq, v) + Ct
    return np.stack([np.linalg.norm(C, axis=1), np.linalg.norm(Cdot, axis=1)], axis=1)


def check(p: dict) -> None:
    """Refuse values the case cannot run with, naming the parameter."""
    check_parameters(p, DEFAULTS, choices=CHOICES, positive=("h", "t_end", "dt_out"))
    if p["integrator"] in INDEX3_METHODS and not p["table"] and p["stabilization"] != "none":
        raise CaseError("stabilization", f"{p['integrator']} solves the index-3 equations and keeps C = 0 itself; "
                                         f"use stabilization=none with it, got {p['stabilization']!r}")


def simulate_case(coordinates, solver, stabilization, integrator, h, rtol, t_end, dt_out, name=None):
    """One run by `flexmbs.run`, streamed into the active recording (`flexmbs.io.recording`) as
    ``name`` (default "<coordinates>-<solver>"): (results dict, summary dict)."""
    system = build(coordinates)
    stab = make_stabilization(stabilization)            # kept here: its counters go into the summary
    options = system_run_options(integrator, h=h, rtol=rtol, index1=FORMULATION[solver],
                                 formulation_options=dict(stabilization=stab))
    cpu = time.process_time()
    res = fm.run(system, t_end=t_end, t_eval=output_times(t_end, dt_out), name=name or f"{coordinates}-{solver}",
                 metadata=dict(case="triple_pendulum", coordinates=coordinates, solver=solver,
                               stabilization=stabilization), **options)
    cpu = time.process_time() - cpu
    pos, vel = tip(system, res.q, res.v)
    viol = constraint_violations(system, res.t, res.q, res.v)
    energy = res.energies["total"]
    results = dict(t=res.t, tip=pos, tip_velocity=vel, energy=energy, constraint_position=viol[:, 0],
                   constraint_velocity=viol[:, 1])
    partitioned = isinstance(stab, CoordinatePartitioning)
    if integrator in INDEX3_METHODS:          # its own Newton on the index-3 equations: no acceleration solver
        solver = f"index-3 ({integrator})"
    solve_s, n_steps = res.stats["solve_s"], res.stats["n_steps"]
    summary = dict(coordinates=coordinates, solver=solver, stabilization=stabilization, integrator=integrator,
                   h=h if not INTEGRATORS[integrator].adaptive else None,
                   rtol=rtol if INTEGRATORS[integrator].adaptive else None, t_end=t_end,
                   status=res.status, message=res.message, n_q=system.n_q, n_c=system.n_c,
                   max_constraint_position=float(viol[:, 0].max()),
                   max_constraint_velocity=float(viol[:, 1].max()),
                   max_energy_error=float(np.abs(energy - energy[0]).max()),
                   solve_s=solve_s, solve_cpu_s=cpu, n_steps=n_steps, n_rhs=res.stats["n_rhs"],
                   time_per_step_ms=1e3 * solve_s / max(n_steps, 1),
                   cpu_per_step_ms=1e3 * cpu / max(n_steps, 1),
                   n_partitions=stab.n_partitions if partitioned else None,
                   n_newton=stab.n_newton if partitioned else None)
    return results, summary


def write(out: Path, results: dict, summary: dict) -> None:
    """DIR/results.npz and DIR/summary.json of one run."""
    write_results(out, results, summary)


def plot_tip(out: Path, runs: dict[str, dict]) -> None:
    """tip_x/y/z.png (position and velocity of D) and trajectory.png for the labelled runs."""
    from flexmbs import plots
    for k, axis in enumerate("xyz"):
        panels = [(f"{axis.upper()}_D [m]", [dict(t=r["t"], y=r["tip"][:, k], label=label) for label, r in runs.items()]),
                  (f"{axis.upper()}'_D [m/s]", [dict(t=r["t"], y=r["tip_velocity"][:, k], label=label)
                                               for label, r in runs.items()])]
        plots.save(plots.history_panels(panels, title=f"Triple pendulum: tip D, {axis.upper()}"),
                   out / f"tip_{axis}.png")
    plots.save(plots.trajectory_3d({label: r["tip"] for label, r in runs.items()},
                                   title="Triple pendulum: trajectory of the tip D"), out / "trajectory.png")


def table(out, t_end: float, dt_out: float, plots_on: bool = True) -> dict:
    """The four combinations; writes table2/table3 .csv/.md and each run; returns the summaries."""
    summaries, runs = {}, {}
    for coordinates in COORDINATES:
        for solver in SOLVERS:
            key = f"{coordinates}-{solver}"
            res, summ = simulate_case(coordinates, solver, rtol=1e-8, t_end=t_end, dt_out=dt_out, name=key,
                                      **TABLE_RUN)
            summaries[key], runs[key] = summ, res
            if out is not None:
                write(Path(out) / key, res, summ)
    if out is not None:
        write_tables(Path(out), summaries)
        if plots_on:
            plot_tip(Path(out), {"NACF (UKE)": runs["natural-udwadia-kalaba"],
                                 "RPCF-EP (UKE)": runs["euler-parameters-udwadia-kalaba"]})
    return summaries


LABEL = {"natural": "NACF", "euler-parameters": "RPCF-EP", "augmented": "AF", "udwadia-kalaba": "UKE"}


def write_tables(out: Path, s: dict) -> None:
    """Table 2 (max constraint violations) and Table 3 (computing times) as CSV and Markdown."""
    keys = [(c, so) for c in COORDINATES for so in SOLVERS]
    rows2 = [(LABEL[c], LABEL[so], s[f"{c}-{so}"]["max_constraint_position"],
              s[f"{c}-{so}"]["max_constraint_velocity"], s[f"{c}-{so}"]["max_energy_error"]) for c, so in keys]
    (out / "table2.csv").write_text("coordinates,solver,max_constraint_position,max_constraint_velocity,"
                                    "max_energy_error_J\n" + "".join(f"{a},{b},{x:.3e},{y:.3e},{z:.3e}\n"
                                                                      for a, b, x, y, z in rows2))
    md = ["| coordinates | solver | max ‖C‖ | max ‖C_q q' + C_t‖ | max abs(E - E0) [J] |", "|---|---|---|---|---|"]
    md += [f"| {a} | {b} | {x:.2e} | {y:.2e} | {z:.2e} |" for a, b, x, y, z in rows2]
    (out / "table2.md").write_text("\n".join(md) + "\n")
    cpu = {k: s[f"{k[0]}-{k[1]}"]["solve_cpu_s"] for k in keys}
    fastest = min(cpu.values())
    rows3 = [(LABEL[c], LABEL[so], s[f"{c}-{so}"]["solve_s"], cpu[(c, so)],
              s[f"{c}-{so}"]["cpu_per_step_ms"], cpu[(c, so)] / cpu[("natural", so)], cpu[(c, so)] / fastest)
             for c, so in keys]
    (out / "table3.csv").write_text(
        "coordinates,solver,solve_s,solve_cpu_s,cpu_per_step_ms,relative_to_NACF_same_solver,relative_to_fastest\n"
        + "".join(f"{a},{b},{w:.3f},{c:.3f},{p:.4f},{r1:.3f},{r2:.3f}\n" for a, b, w, c, p, r1, r2 in rows3))
    md = ["| coordinates | solver | wall [s] | CPU [s] | CPU per step [ms] | CPU / NACF (same solver) | CPU / fastest |",
          "|---|---|---|---|---|---|---|"]
    md += [f"| {a} | {b} | {w:.2f} | {c:.2f} | {p:.3f} | {r1:.2f} | {r2:.2f} |" for a, b, w, c, p, r1, r2 in rows3]
    (out / "table3.md").write_text("\n".join(md) + "\n")


def run(out=None, **params):
    """One run (or the four of ``table=True``); returns the summary (dict of summaries for the table)."""
    p = resolve("triple_pendulum", DEFAULTS, params, check)
    if p["table"]:
        with recording_into(out):
            return table(out, p["t_end"], p["dt_out"], p["plots"])
    args = {k: p[k] for k in ("coordinates", "solver", "stabilization", "integrator", "h", "rtol", "t_end",
                              "dt_out")}
    with recording_into(out):
        results, summary = simulate_case(**args, name="triple_pendulum")
    if out is not None:
        write(Path(out), results, summary)
        if p["plots"]:
            plot_tip(Path(out), {f"{LABEL[p['coordinates']]} ({LABEL[p['solver']]})": results})
    return summary


def main(argv=None):
    summary, params, out, _, seconds = run_command("triple_pendulum", __doc__, run, argv, DEFAULTS, help=HELP,
                                                   choices=CHOICES, check=check, run_time=RUN_TIME)
    if params["table"]:
        print((out / "table2.md").read_text())
        print((out / "table3.md").read_text())
        ok = all(s["status"] == "finished" for s in summary.values())
    else:
        s = summary
        print(f"triple pendulum, {s['coordinates']} + {s['solver']} + {s['stabilization']}, {s['integrator']}: "
              f"{s['status']} ({s['n_steps']} steps, solve {s['solve_s']:.2f} s, CPU {s['cpu_per_step_ms']:.3f} ms/step)")
        print(f"  max |C| = {s['max_constraint_position']:.2e}, max |C'| = {s['max_constraint_velocity']:.2e}, "
              f"max |E - E0| = {s['max_energy_error']:.2e} J")
        ok = s["status"] == "finished"
    print(f"  wrote {out} in {seconds:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(call_quietly(main))
