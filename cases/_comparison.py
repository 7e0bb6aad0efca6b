"""The formulation comparison of seed 001 (Tables 2, 3, 6): the helpers the cases
cart_pendulum, three_bodies and satellite_boom share (not a case: its name starts with "_").

A case imports it as a sibling module (``from _comparison import ...``): the directory of a
case is on ``sys.path`` however the case runs (``flexmbs run CASE`` and ``flexmbs sweep`` put it
there, ``python cases/CASE.py`` runs from it), in the source tree and in the installed wheel
(``flexmbs/cases``).

A model is a `QVModel`: the System (one TreeBody in the paper's coordinates), the
quasi-velocities of the paper (Y, Y_reduced) and the ignorable coordinates.  `run_formulation`
runs one formulation of `flexmbs.formulations.registry` through ``flexmbs.run`` (so that each
run is streamed into the results file of the active recording, ``flexmbs run CASE`` writes
DIR/results.h5, as a run named after the formulation) and evaluates, at every output time,

- ``q`` (n_t, m): the coordinates in the paper's order (integrated directly: angles continuous);
- ``energy_error`` (n_t,): T + V - int_0^t Q_e . q' dt - (T + V)(0), the work of the applied
  forces integrated along the solution (3-point Gauss on the dense output, `simulate`'s
  ``integrand``; see `work_of_applied_loads`);
- ``momentum`` (n_t, 3): the total linear momentum sum_i m_i V_i;
- ``constraint_error`` (n_t,): |a q' + b|_2 of the kinematic constraints, when there are any.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import flexmbs
from flexmbs import plots
from flexmbs.analysis import output_times
from flexmbs.bodies.tree import TreeBody
from flexmbs.formulations.quasi_velocities import applied_forces, constraint_rows, system_kinematics
from flexmbs.formulations.registry import system_formulation
from flexmbs.integrators import INTEGRATORS, simulate

__all__ = ["QVModel", "FORMULATIONS", "registry_formulation", "run_formulation", "write_run", "compare",
           "write_table", "write_rows", "equations_per_evaluation", "plot_runs", "LABELS"]

LABELS = {"lagrange": "Lagrange", "maggi": "Maggi", "kane": "Kane (Gibbs-Appell)", "volterra": "Volterra",
          "volterra-reduced": "Reduced Volterra"}
#: the five formulations of the comparison, each a System's formulation of `flexmbs.formulations.registry`
FORMULATIONS = tuple(LABELS)


@dataclass
class QVModel:
    """A model of seed 001 for the formulation comparison."""

    system: object
    coordinates: tuple
    Y: object = None
    Y_reduced: object = None
    ignorable: object = "auto"
    extra: dict = field(default_factory=dict)      # name -> f(t, q, qdot) -> (n_t,) extra outputs
    scalars: dict = field(default_factory=dict)    # name -> f(t, q, qdot) -> float, put in the summary


def registry_formulation(model: QVModel, formulation: str, integrator: str) -> tuple[str, dict]:
    """(name, formulation_options) of the registry entry that runs ``formulation`` of the comparison.

    lagrange is the registry's index-1 augmented formulation without stabilisation, or with
    index3-alpha the System's own index-3 equations ("index3"); maggi, kane and volterra take the
    model's quasi-velocities Y, volterra-reduced its Y_reduced and ignorable coordinates.
    """
    if formulation not in FORMULATIONS:
        raise ValueError(f"`formulation` must be one of {', '.join(FORMULATIONS)}, got {formulation!r}")
    if formulation == "lagrange":
        return ("index3", {}) if integrator == "index3-alpha" else ("lagrange", dict(stabilization="none"))
    if formulation == "volterra-reduced":
        return formulation, dict(Y=model.Y_reduced, ignorable=model.ignorable)
    return formulation, dict(Y=model.Y)


def equations_per_evaluation(name: str, form, system) -> int:
    """The size of the linear system solved per evaluation of the equations: the quasi-velocity
    forms and Maggi's give it (``n_equations``: p - s, p or m); Lagrange's augmented matrix
    [[M, C_q^T], [C_q, 0]] (and index-3's), Gibbs-Appell's [[M_GA, C_q^T], [C_q, 0]] and Hamilton's
    velocity-level saddle point [[M, a^T], [a, 0]] have m + r rows."""
    saddle = ("lagrange", "index3", "udwadia-kalaba", "gibbs-appell", "hamilton")
    return system.n_q + system.n_c if name in saddle else int(form.n_equations)


def applied_power(system, t, q, qd):
    """Q_e . q' without gravity (gravity is in the potential energy)."""
    g = system.gravity
    system.gravity = None
    try:
        return float(applied_forces(system, t, q, qd) @ qd)
    finally:
        system.gravity = g


def has_applied_loads(system) -> bool:
    """Whether the bodies may have applied loads besides gravity: False only when every body is a
    TreeBody without ``applied`` forces, whose work is then zero (any other body: True, and
    `applied_power` computes its loads' power or says that it cannot)."""
    return not all(isinstance(body, TreeBody) and body.applied is None for body in system.bodies)


def work_of_applied_loads(system, form, integrator: str, t_eval, solver: dict) -> np.ndarray:
    """W(t_k) = int_0^t_k Q_e . q' dt [J] at the outputs t_eval, along the solution of ``form``.

    The integral is `simulate`'s ``integrand`` (3-point Gauss on the dense output of every step):
    a quadrature of the outputs alone is not accurate enough (on satellite_boom at dt_out = 0.1 s
    the trapezoid rule is off by 2e-6 J and Simpson's by 2e-10 J, against an energy error of
    7e-10 J).  ``flexmbs.run`` does not return simulate's integrals, so this integrates the same
    formulation from the same state a second time, with the integrand; without applied loads
    (gravity is potential energy) the work is zero and nothing is integrated.
    """
    if not has_applied_loads(system) or len(t_eval) < 2:         # no loads, or no step taken
        return np.zeros(len(t_eval))

    def power(t, x):
        q, qd = form.physical(t, np.atleast_2d(x))          # (1, m) from every formulation
        return np.array([applied_power(system, t, q[0], qd[0])])

    sol = simulate(form, (0.0, float(t_eval[-1])), form.state0(), method=integrator, t_eval=t_eval,
                   integrand=power, **solver)
    return sol.integrals[:, 0]


def run_formulation(model: QVModel, formulation: str, integrator: str = "DOP853", rtol: float = 1e-10,
                    t_end: float = 50.0, dt_out: float = 0.1, h: float = 1e-3):
    """One run through ``flexmbs.run`` (streamed into the active recording's results file as the
    run ``formulation``): (results dict of arrays, summary dict)."""
    system = model.system
    name, options = registry_formulation(model, formulation, integrator)
    form = system_formulation(name, system, **options)     # the run's formulation: its sizes, the work
    t_eval = output_times(t_end, dt_out)      # ends exactly at t_end, whatever the round-off of dt_out
    adaptive = INTEGRATORS[integrator].adaptive
    solver = dict(rtol=rtol, atol=rtol * 1e-2) if adaptive else dict(h=h)

    cpu = time.process_time()
    res = flexmbs.run(system, formulation=name, method=integrator, t_end=t_end, t_eval=t_eval,
                      formulation_options=options, name=formulation,
                      metadata=dict(coordinates=list(model.coordinates)), **solver)
    cpu = time.process_time() - cpu
    q, qd = res.q, (res.v if res.q_dot is None else res.q_dot)
    energy = res.energies["total"]
    work = work_of_applied_loads(system, form, integrator, res.t, solver)
    energy_error = energy - work - energy[0]
    mass, B, D, I = system_kinematics(system, q)
    momentum = np.einsum("p,kpxm,km->kx", mass, B.real, qd)
    results = dict(t=res.t, q=q, qdot=qd, energy_error=energy_error, momentum=momentum)
    if system.n_c:
        results["constraint_error"] = np.array([np.linalg.norm(a @ v + b) for a, b, v in
                                                ((*constraint_rows(system, t, qi), vi)
                                                 for t, qi, vi in zip(res.t, q, qd))])
    for key, f in model.extra.items():
        results[key] = f(res.t, q, qd)
    dP = np.abs(momentum - momentum[0])
    summary = dict(formulation=formulation, integrator=integrator, rtol=rtol if adaptive else None,
                   h=None if adaptive else h, t_end=t_end, status=res.status, message=res.message,
                   n_state_variables=int(form.n_state), n_equations=equations_per_evaluation(name, form, system),
                   coordinates=list(model.coordinates), solve_s=res.stats["solve_s"], solve_cpu_s=cpu,
                   n_steps=res.stats["n_steps"], n_rhs=res.stats["n_rhs"],
                   max_energy_error=float(np.abs(energy_error).max()),
                   max_momentum_error=float(dP.max()), max_momentum_error_x=float(dP[:, 0].max()),
                   initial_energy=float(energy[0]), initial_momentum=momentum[0].tolist())
    if "constraint_error" in results:
        summary["max_constraint_error"] = float(results["constraint_error"].max())
    for key in model.extra:
        summary[f"max_{key}"] = float(np.abs(results[key]).max())
    for key, f in model.scalars.items():
        value = float(f(res.t, q, qd))
        summary[key] = value if np.isfinite(value) else None      # None: not measurable in this run (JSON null)
    if formulation == "volterra-reduced":
        summary["ignorable"] = [model.coordinates[k] for k in form.qv.ignorable]
    return results, summary


def write_run(out, results: dict, summary: dict) -> None:
    """DIR/results.npz and DIR/summary.json (`flexmbs.case.write_results`)."""
    from flexmbs.case import write_results
    write_results(out, results, summary)


def compare(model_factory, out=None, *, integrator="DOP853", rtol=1e-10, t_end=50.0, dt_out=0.1, h=1e-3,
            formulations=FORMULATIONS):
    """All formulations from the same initial state; returns ({name: results}, {name: summary})."""
    runs, summaries = {}, {}
    for name in formulations:
        res, summ = run_formulation(model_factory(), name, integrator=integrator, rtol=rtol, t_end=t_end,
                                    dt_out=dt_out, h=h)
        runs[name], summaries[name] = res, summ
        if out is not None:
            write_run(Path(out) / name, res, summ)
    ref = runs["volterra-reduced"] if "volterra-reduced" in runs else runs[formulations[0]]
    for name in runs:
        summaries[name]["max_q_difference_to_reduced"] = float(np.abs(runs[name]["q"] - ref["q"]).max())
    return runs, summaries


def write_table(out, stem: str, summaries: dict, caption: str) -> None:
    """DIR/<stem>.csv and .md: the analogue of the paper's result tables."""
    out = Path(out)
    has_c = any("max_constraint_error" in s for s in summaries.values())
    cols = ["n_state_variables", "n_equations", "solve_cpu_s", "solve_s", "n_rhs", "max_energy_error"]
    cols += ["max_constraint_error"] if has_c else []
    cols += ["max_momentum_error_x", "max_momentum_error", "max_q_difference_to_reduced"]
    header = ["formulation"] + cols
    fmt = {"n_state_variables": "{:d}", "n_equations": "{:d}", "n_rhs": "{:d}", "solve_cpu_s": "{:.3f}",
           "solve_s": "{:.3f}"}
    rows = [[LABELS[n]] + [fmt.get(c, "{:.2e}").format(s[c]) for c in cols] for n, s in summaries.items()]
    write_rows(out, stem, header, rows, caption)


def write_rows(out, stem: str, header: list, rows: list, caption: str) -> None:
    """DIR/<stem>.csv (``header`` then ``rows``, each a list of formatted strings) and DIR/<stem>.md (``caption``
    and the same rows as a Markdown table)."""
    out = Path(out)
    (out / f"{stem}.csv").write_text(",".join(header) + "\n" + "".join(",".join(r) + "\n" for r in rows))
    md = [f"{caption}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    md += ["| " + " | ".join(r) + " |" for r in rows]
    (out / f"{stem}.md").write_text("\n".join(md) + "\n")


def plot_runs(out, runs: dict, coordinates, title: str, stems: dict) -> None:
    """Coordinates (of the reduced Volterra run) and the error histories of every run.

    ``stems``: "coordinates", "energy", "momentum", "constraint" -> file stem (paper's figure).
    """
    out = Path(out)
    ref = runs.get("volterra-reduced", next(iter(runs.values())))
    panels = [(c, [dict(t=ref["t"], y=ref["q"][:, k], label="reduced Volterra")]) for k, c in enumerate(coordinates)]
    plots.save(plots.history_panels(panels, title=f"{title}: generalized coordinates"),
               out / f"{stems['coordinates']}.png")
    panels = {"energy": ("abs(energy error) [J]", "energy error", lambda r: r["energy_error"]),
              "momentum": ("abs(P_x - P_x(0)) [N s]", "linear momentum error (X)",
                           lambda r: r["momentum"][:, 0] - r["momentum"][0, 0]),
              "constraint": ("abs(a q' + b)", "constraint error", lambda r: r.get("constraint_error"))}
    for key, (ylabel, what, get) in panels.items():
        if key not in stems or any(get(r) is None for r in runs.values()):
            continue
        curves = [dict(t=r["t"], y=np.maximum(np.abs(get(r)), 1e-18), label=LABELS[n]) for n, r in runs.items()]
        fig = plots.history_panels([(ylabel, curves)], title=f"{title}: {what} (floored at 1e-18)")
        fig.axes[0].set_yscale("log")
        plots.save(fig, out / f"{stems[key]}.png")


#: the parameters every comparison case shares (a case adds its own and its duration)
COMMON_DEFAULTS = dict(formulation="volterra-reduced", integrator="DOP853", rtol=1e-10, h=1e-2, t_end=50.0,
                       dt_out=0.1, table=False, plots=True)


def common_help(table: str) -> dict:
    """Help texts of `COMMON_DEFAULTS`; ``table`` names the paper's table the case reproduces."""
    return dict(formulation="equations of motion", integrator="time integrator",
                rtol="relative tolerance of adaptive integrators (atol = rtol / 100)",
                h="step of fixed-step integrators [s]", t_end="duration [s]", dt_out="output interval [s]",
                table=f"run all five formulations and write the {table} analogue", plots="write the plots")


def common_choices() -> dict:
    """The formulations, and every integrator that can step a System (not ``exact``)."""
    from flexmbs.formulations.registry import system_methods
    return dict(formulation=list(FORMULATIONS), integrator=system_methods())


def check_common(p: dict, defaults: dict, choices: dict) -> None:
    """The checks every comparison case shares (by parameter name)."""
    from flexmbs.case import CaseError, check_parameters
    check_parameters(p, defaults, choices=choices, positive=("rtol", "t_end", "dt_out", "h"))
    if p["dt_out"] > p["t_end"]:
        raise CaseError("dt_out", f"must not exceed t_end = {p['t_end']} s")
    if p["integrator"] == "generalized-alpha" and (p["table"] or p["formulation"] != "lagrange"):
        raise CaseError("integrator", "generalized-alpha integrates a second-order form M q'' = f(t, q, q'), which "
                                      "only the lagrange formulation gives (the others have quasi-velocities or "
                                      "Maggi's projected equations); use DOP853, RK45, Radau, BDF, midpoint or AB4")
    if p["integrator"] == "index3-alpha" and (p["table"] or p["formulation"] != "lagrange"):
        raise CaseError("integrator", "index3-alpha integrates the System's own index-3 equations (Lagrange with "
                                      "multipliers at index 3), not the quasi-velocity or Maggi forms; use it with "
                                      "formulation=lagrange, or DOP853, RK45, Radau, BDF, midpoint or AB4")


def run_case(build, p: dict, out, *, stem: str, caption: str, title: str, stems: dict):
    """A comparison case: one formulation, or all of them (``p["table"]``); returns the summary(ies)."""
    opts = dict(integrator=p["integrator"], rtol=p["rtol"], t_end=p["t_end"], dt_out=p["dt_out"], h=p["h"])
    if p["table"]:
        runs, summaries = compare(build, out, **opts)
        if out is not None:
            write_table(out, stem, summaries, caption)
            if p["plots"]:
                plot_runs(out, runs, build().coordinates, title, stems)
        return summaries
    model = build()
    results, summary = run_formulation(model, p["formulation"], **opts)
    if out is not None:
        write_run(out, results, summary)
        if p["plots"]:
            plot_runs(out, {p["formulation"]: results}, model.coordinates, title, stems)
    return summary


def print_summary(summary: dict) -> None:
    """One run's summary or a table's, on stdout."""
    if "formulation" in summary:
        summary = {summary["formulation"]: summary}
    for name, s in summary.items():
        extra = f", max |a q' + b| = {s['max_constraint_error']:.2e}" if "max_constraint_error" in s else ""
        print(f"{LABELS[name]:>20}: {s['status']}, {s['n_state_variables']} states, {s['n_equations']} equations, "
              f"solve {s['solve_s']:.2f} s, max |energy error| = {s['max_energy_error']:.2e} J, "
              f"max |P - P0| = {s['max_momentum_error']:.2e} N s{extra}")


def case_main(name: str, doc: str, defaults: dict, help: dict, choices: dict, check, run, argv=None,
              report=None, run_time: str | None = None) -> int:
    """The command line of a comparison case: parse, run one formulation or the table, print the
    summary (and ``report(summary)``, the case's own lines, when given); exit status 0 when every
    run finished.  ``run_time``: the case's ``RUN_TIME``."""
    from flexmbs.case import run_command
    summary, params, out, _, seconds = run_command(name, doc, run, argv, defaults, help=help, choices=choices,
                                                   check=check, run_time=run_time)
    print_summary(summary)
    if report is not None:
        report(summary)
    print(f"  wrote {out} in {seconds:.1f} s")
    runs = summary.values() if params["table"] else [summary]
    return 0 if all(s["status"] == "finished" for s in runs) else 1
