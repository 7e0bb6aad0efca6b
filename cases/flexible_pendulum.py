"""Pinned flexible pendulum released horizontally under gravity: corotational beam and floating frame.

A straight beam of length L (square section, side b), pinned at one end (node 0: x, y held, the
section free to rotate) lies horizontal and at rest at t = 0 and falls under gravity.  The
default beam (L = 1 m, b = 2 cm, E = 50 MPa, rho = 1000 kg/m^3: EI = 0.67 N m^2, weight
3.9 N) bends strongly while it swings.  Model: planar corotational Euler-Bernoulli elements
(`flexmbs.bodies.corotational`, consistent linear-interpolation mass with rotary inertia), the
pin imposed by a joint (``--pin joint``, the default: a 2D `Spherical` joint on Node(0) in a
`flexmbs.System` run by ``flexmbs.run``, index-1 augmented formulation with coordinate
partitioning, or, with ``--integrator index3-alpha``, the index-3 equations by
generalized-alpha, rho_inf = 0.99) or by eliminating node 0's translations (``--pin
eliminated``, `flexmbs.formulations.supported_body.SupportedBody`: the same trajectory to 1e-11
m in about the same CPU time now that the System's terms are compiled, but one body without its
pinned coordinates is not a System, so it runs by ``simulate`` and writes no results.h5), the implicit
midpoint rule (energy-conserving to O(h^2), no numerical damping; generalized-alpha with
rho_inf = 1 is the same scheme).  The conservative system keeps T + V_gravity + U_strain.

Models side by side (``--models corotational,floating-frame,mean-axis``): the floating-frame model is a
`flexmbs.FlexibleBody` (BeamEB2D elements with rotary inertia, tangent frame at node 0, linear
elastic coordinates) on a revolute joint at Node(0), index-1 augmented formulation with
coordinate partitioning, DOP853 (``--rtol``).  Its elastic displacements are linear in the
frame, so it follows the corotational model only while the deflection relative to the root
section stays small: a stiffer beam (``--youngs 5e9``) for agreement, the default for the
difference (docs/corotational.md gives both).  ``mean-axis`` is the same body on a free-free
mesh with the mean-axis reference conditions (``FlexibleBody(..., reference="mean-axis")``):
the two floating frames differ by terms of second order in the deflection, and on the default
flexible beam the mean axes, which take up the beam's mean rotation, stay with the corotational
model where the tangent frame drifts (docs/corotational.md).

Writes DIR/results.npz with ``t`` (n_t,), ``tip`` (n_t, 2) tip position [m], ``energy`` (n_t,)
total energy [J] and its parts ``kinetic``, ``gravity``, ``strain``, ``positions`` (n_t, n_nodes,
2), ``nodes`` (n_nodes, 2) of the first model, and ``tip_<model>``, ``energy_<model>`` of each;
DIR/summary.json; plots tip.png, energy.png, snapshots.png.  Under ``flexmbs run`` every model
that is a System (all but ``--pin eliminated``) is also a run of DIR/results.h5, named after the
model.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

import flexmbs
from flexmbs import Material, System, simulate
from flexmbs.bodies.corotational import CorotationalBeam2D, Node
from flexmbs.pipes import call_quietly
from flexmbs.case import CaseError, check_parameters, resolve, run_command, write_summary
from flexmbs.constraints.joints import Spherical
from flexmbs.formulations.registry import system_formulation
from flexmbs.formulations.supported_body import SupportedBody

DEFAULTS = dict(models=["corotational"], elements=8, length=1.0, side=0.02, youngs=5e7, density=1000.0, gravity=9.81,
                pin="joint", integrator="midpoint", rho_inf=0.99, h=1e-3, rtol=1e-7, t_end=1.0, dt_out=0.01, plots=True)
RUN_TIME = ("about 4 s (one model, its default; with --models corotational,floating-frame,mean-axis "
            "about 5 min, most of it the floating frame's DOP853)")
# 2 cores; measured, issues 20, 21 (pin joint), 22 (compiled step: 3-4 s CPU, docs/benchmarks.md 22.2)
HELP = dict(models="models side by side (comma-separated): corotational, floating-frame (tangent frame at the pin), "
                   "mean-axis (floating frame on mean axes)",
            elements="number of beam elements", length="beam length L [m]", side="side b of the square section [m]",
            youngs="Young's modulus E [Pa]", density="density rho [kg/m^3]", gravity="g [m/s^2] (downward)",
            pin="the pin: 'joint' (Spherical joint on Node(0), a System: index-1 form or index3-alpha, in results.h5) "
                "or 'eliminated' (node 0's x, y removed: faster, not a System, no results.h5)",
            integrator="implicit integrator of the corotational model: midpoint, generalized-alpha with rho_inf = 1 "
                       "(the same scheme), or index3-alpha (with --pin joint: the index-3 equations of the System)",
            rho_inf="spectral radius at infinite frequency of index3-alpha",
            h="time step of the corotational model [s]",
            rtol="relative tolerance of DOP853 for the floating-frame model", t_end="end time [s]", dt_out="output interval [s]", plots="write the PNG plots")
SUMMARY = {"max_energy_error": "max over the models of max |E - E0| / (m g L / 2)"}   # flexmbs.sweep
CHOICES = dict(integrator=["midpoint", "generalized-alpha", "index3-alpha"], pin=["eliminated", "joint"])


class Pendulum(NamedTuple):
    """One model of the pendulum: its formulation, how to integrate it and what to read from q, v.

    ``system``, ``formulation``, ``formulation_options``: the `flexmbs.System` and the registry's
    formulation that ``form`` is (`system_formulation`), run by ``flexmbs.run``; None for the
    eliminated pin (`SupportedBody`: one body without its pinned coordinates, not a System),
    integrated by ``simulate``."""

    form: object
    x0: np.ndarray
    method: str
    options: dict
    tip: Callable                # q -> tip position (2,)
    positions: Callable          # q -> nodal positions (n_nodes, 2)
    energies: Callable           # (q, v) -> (kinetic, gravity, strain)
    nodes: np.ndarray            # reference nodal positions (n_nodes, 2)
    mass: float
    system: object = None
    formulation: str | None = None
    formulation_options: dict | None = None


def _corotational(p) -> Pendulum:
    """Corotational beam, pinned at node 0 (coordinates eliminated or a joint); the chosen implicit integrator."""
    b = p["side"]
    beam = CorotationalBeam2D.line("pendulum", (0.0, 0.0), (p["length"], 0.0), p["elements"],
                                   Material(E=p["youngs"], rho=p["density"]), b * b, b ** 4 / 12.0)
    g = (0.0, -p["gravity"])
    if p["pin"] == "joint":
        system = System([beam], [Spherical(None, beam, s_j=Node(0), name="pin")], gravity=g)
        if p["integrator"] == "index3-alpha":
            form = system_formulation("index3", system)
            x0 = form.state0(system.initial_coordinates(), system.initial_velocities())
            return Pendulum(form, x0, "index3-alpha", dict(h=p["h"], rho_inf=p["rho_inf"]), tip=lambda q: q[-3:-1],
                            positions=beam.positions, energies=system.energy, nodes=beam.nodes, mass=beam.mass,
                            system=system, formulation="index3", formulation_options={})
    options = dict(h=p["h"], newton_max_iter=20) | (dict(rho_inf=1.0) if p["integrator"] == "generalized-alpha" else {})
    energies = lambda q, v: (*beam.energy(q, v, g), beam.strain_energy(q))      # noqa: E731
    if p["pin"] == "joint":
        partitioning = dict(stabilization="coordinate-partitioning")
        form = system_formulation("lagrange", system, **partitioning)
        return Pendulum(form, form.state0(), p["integrator"], options, tip=lambda q: q[-3:-1],
                        positions=beam.positions, energies=energies, nodes=beam.nodes, mass=beam.mass, system=system,
                        formulation="lagrange", formulation_options=partitioning)
    form = SupportedBody(beam, fixed=[0, 1], gravity=g)
    return Pendulum(form, form.state0(), p["integrator"], options, tip=lambda q: q[-3:-1], positions=beam.positions,
                    energies=energies, nodes=beam.nodes, mass=beam.mass)


def _floating_frame(p, reference: str = "supports") -> Pendulum:
    """FlexibleBody (floating frame: BeamEB2D elements with rotary inertia, the linear elastic
    coordinates of `flexmbs.Model`) on a revolute joint (axis z) at Node(0); index-1 augmented
    formulation with coordinate partitioning, DOP853 with ``rtol``.  ``reference``: "supports" (node 0
    clamped in the Model: the tangent frame at the pin) or "mean-axis" (free-free mesh, mean axes)."""
    import flexmbs as fm
    from flexmbs.constraints import Revolute
    b, n = p["side"], p["elements"]
    element = fm.BeamEB2D(Material(E=p["youngs"], rho=p["density"]), area=b * b, I=b ** 4 / 12.0, rotary_inertia=True)
    fixed = [("start", "all")] if reference == "supports" else []
    body = fm.FlexibleBody(fm.Model(fm.generate.line(n, p["length"]), element, fixed=fixed), "pendulum",
                           reference=reference)
    g = np.array([0.0, -p["gravity"], 0.0])
    system = System([body], [Revolute(body, None, s_i=Node(0), axis=(0.0, 0.0, 1.0), name="pin")], gravity=g)
    partitioning = dict(stabilization="coordinate-partitioning")
    form = system_formulation("lagrange", system, **partitioning)
    nodes = [Node(k) for k in range(n + 1)]
    return Pendulum(form, form.state0(), "DOP853", dict(rtol=p["rtol"], atol=1e-3 * p["rtol"]),
                    tip=lambda q: body.point(q, nodes[-1])[:2],
                    positions=lambda q: np.array([body.point(q, k)[:2] for k in nodes]),
                    energies=system.energy, nodes=np.asarray(body.model.mesh.points)[:, :2],
                    mass=p["density"] * b * b * p["length"], system=system, formulation="lagrange",
                    formulation_options=partitioning)


MODELS = {"corotational": _corotational, "floating-frame": _floating_frame,
          "mean-axis": lambda p: _floating_frame(p, "mean-axis")}


def check(p: dict) -> None:
    """Refuse values the case cannot run with, naming the parameter."""
    check_parameters(p, DEFAULTS, choices=CHOICES, positive=("length", "side", "youngs", "density"),
                     nonnegative=("gravity",))
    models = [p["models"]] if isinstance(p["models"], str) else list(p["models"])
    bad = [m for m in models if m not in MODELS]
    if not models or bad:
        raise CaseError("models", f"must be a list of {', '.join(MODELS)}, got {p['models']!r}")
    if p["integrator"] == "index3-alpha" and p["pin"] != "joint":
        raise CaseError("integrator", "index3-alpha integrates the constrained System: use it with --pin joint")
    if not 0.0 <= p["rho_inf"] < 1.0:
        raise CaseError("rho_inf", f"must lie in [0, 1) (index3-alpha refuses 1), got {p['rho_inf']!r}")
    if p["h"] > p["dt_out"]:
        raise CaseError("h", f"the time step must not exceed dt_out = {p['dt_out']:g} s, got {p['h']:g} s")


def integrate(name: str, model: Pendulum, t_eval) -> tuple[dict, np.ndarray, np.ndarray]:
    """(run: t, status, message, success, n_steps, n_rhs, n_lu, kernel), q and v at t_eval of one model.

    A System's model runs through ``flexmbs.run`` from the bodies' own state (under ``flexmbs run``
    a run of DIR/results.h5 named after the model, with the beam's nodes); the eliminated pin by
    ``simulate``."""
    if model.system is None:
        sol = simulate(model.form, (0.0, t_eval[-1]), model.x0, method=model.method, t_eval=t_eval,
                       **model.options)
        q, v = model.form.physical(sol.t, sol.x)
        return (dict(t=sol.t, status=sol.status, message=sol.message, success=sol.success, n_steps=sol.n_steps,
                     n_rhs=sol.n_rhs, n_lu=sol.n_lu, kernel=sol.kernel), q, v)
    res = flexmbs.run(model.system, formulation=model.formulation, method=model.method, t_end=float(t_eval[-1]),
                      t_eval=t_eval, formulation_options=model.formulation_options, name=name, **model.options)
    return (dict(t=res.t, status=res.status, message=res.message, success=res.success, n_steps=res.stats["n_steps"],
                 n_rhs=res.stats["n_rhs"], n_lu=res.stats["n_lu"], kernel=res.metadata.get("kernel")),
            res.q, res.v if res.q_dot is None else res.q_dot)


def simulate_model(name: str, p: dict) -> dict:
    """Run one model; a dict of the output arrays and the solver statistics."""
    model = MODELS[name](p)
    n_out = int(round(p["t_end"] / p["dt_out"]))
    t_eval = np.linspace(0.0, n_out * p["dt_out"], n_out + 1)
    tic = time.perf_counter()
    sol, q, v = integrate(name, model, t_eval)
    kinetic, gravity, strain = np.array([model.energies(qk, vk) for qk, vk in zip(q, v)]).reshape(-1, 3).T
    energy = kinetic + gravity + strain
    weight_scale = model.mass * p["gravity"] * p["length"] / 2.0            # m g L / 2 (J)
    return dict(tip=np.array([model.tip(qk) for qk in q]), positions=np.array([model.positions(qk) for qk in q]),
                nodes=model.nodes, energy=energy, kinetic=kinetic, gravity=gravity, strain=strain, **sol,
                seconds=time.perf_counter() - tic,
                energy_error=float(np.max(np.abs(energy - energy[0])) / max(weight_scale, 1e-300)))


def run(out=None, **params):
    """Run the case; returns {model name: its outputs (dict)}."""
    p = resolve("flexible_pendulum", DEFAULTS, params, check)
    models = [p["models"]] if isinstance(p["models"], str) else list(p["models"])
    runs = {m: simulate_model(m, p) for m in models}
    if out is not None:
        write(runs, Path(out), p)
    return runs


def write(runs, out: Path, p: dict):
    out.mkdir(parents=True, exist_ok=True)
    first = next(iter(runs.values()))
    arrays = {k: first[k] for k in ("t", "tip", "energy", "kinetic", "gravity", "strain", "positions", "nodes")}
    for name, r in runs.items():
        key = name.replace("-", "_")
        arrays[f"tip_{key}"], arrays[f"energy_{key}"] = r["tip"], r["energy"]
    np.savez(out / "results.npz", **arrays)
    worst = next((r for r in runs.values() if r["status"] != "finished"), first)    # the first that did not finish
    summary = {"parameters": p, "status": worst["status"], "message": worst["message"],
               "max_energy_error": max(r["energy_error"] for r in runs.values()),
               "models": {name: {k: r[k] for k in ("status", "message", "n_steps", "n_rhs", "n_lu",
                                                   "kernel", "seconds", "energy_error")}
                          for name, r in runs.items()}}
    write_summary(out, summary)
    if not p.get("plots", True):
        return
    from flexmbs import plots
    plots.save(plots.history_panels([
        ("tip x [m]", [dict(t=r["t"], y=r["tip"][:, 0], label=name) for name, r in runs.items()]),
        ("tip y [m]", [dict(t=r["t"], y=r["tip"][:, 1], label=name) for name, r in runs.items()])],
        title="Pinned flexible pendulum: tip position"), out / "tip.png")
    panels = [(f"{name}: energy [J]", [dict(t=r["t"], y=r[k], label=k) for k in ("energy", "kinetic", "gravity", "strain")])
              for name, r in runs.items()]
    plots.save(plots.history_panels(panels, title="Energy: total = kinetic + gravity + strain"), out / "energy.png")
    from matplotlib.figure import Figure
    fig = Figure(figsize=(6.0, 5.0), layout="constrained")
    ax = fig.add_subplot()
    r = first
    for k in np.linspace(0, len(r["t"]) - 1, 11).astype(int):
        ax.plot(r["positions"][k, :, 0], r["positions"][k, :, 1], "-o", ms=2, lw=1.0, label=f"t = {r['t'][k]:.2f} s")
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    ax.set_title(f"{next(iter(runs))}: deformed shapes")
    plots.save(fig, out / "snapshots.png")


def main(argv=None):
    runs, args, out, _, seconds = run_command("flexible_pendulum", __doc__, run, argv, DEFAULTS, help=HELP,
                                              choices=CHOICES, check=check, run_time=RUN_TIME)
    print(f"flexible pendulum: {args['elements']} elements, {args['integrator']}, h = {args['h']:g} s, "
          f"t_end = {args['t_end']:g} s")
    for name, r in runs.items():
        print(f"  {name:14s} {r['status']}: tip at t_end = ({r['tip'][-1, 0]:.4f}, {r['tip'][-1, 1]:.4f}) m, "
              f"max |E - E0| / (m g L / 2) = {r['energy_error']:.2e}, {r['n_steps']} steps in {r['seconds']:.2f} s")
    print(f"  wrote {out}/results.npz and plots in {seconds:.1f} s")
    return 0 if all(r["success"] for r in runs.values()) else 1


if __name__ == "__main__":
    sys.exit(call_quietly(main))
