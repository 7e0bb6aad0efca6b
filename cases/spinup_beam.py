"""Spin-up of a cantilever beam: geometric stiffening (Kane, Ryan and Banerjee 1987).

A uniform beam, L = 10 m, EI = 1.4e4 N m^2, EA = 2.8e7 N, rho A = 1.2 kg/m (E = 7e10 Pa,
rho = 3000 kg/m^3, A = 4e-4 m^2, I = 2e-7 m^4), is clamped at the axis of a hub that
turns in the beam's plane (about z) with

.. code:: text

    Omega(t) = (Omega_s / T_s) (t - (T_s / (2 pi)) sin(2 pi t / T_s))    t < T_s,   Omega_s after

(`flexmbs.motion.SpinUp`), from rest and undeformed.  The quantity compared is the tip's
transverse (chordwise) deflection v(L, t) in the rotating frame; negative lags behind.

The case runs the model with geometric stiffening (the stress stiffness of the centrifugal
tension, docs/rotating_beams.md) and, for comparison, without it.  Without stiffening the
linear floating-frame model is unstable as soon as Omega exceeds the first bending
frequency (3.798 rad/s): that run ends with status 'diverged', which is reported as the
expected physics of that model, not as an error.

Writes DIR/results.npz of the requested model (stiffened unless --no-stiffening: t,
displacement (n_t, n_nodes, 2) in the rotating frame, nodes), DIR/tip_deflection.png (both
models on the same axes, the diverging one clipped and marked where it diverged),
DIR/summary.json (tip minimum value and time, statuses) and, with --energies,
DIR/energy.png.

--coupled: the hub a rigid body (J_hub = hub_inertia) on a revolute joint, driven by an AngleDriver
with the spin-up law, the beam a FlexibleBody clamped to it (`flexmbs.run`, index3-alpha, step h; run
"coupled" of DIR/results.h5 under `flexmbs run`); with --torque the hub is driven by the torque
(J_hub + rho A L^3 / 3) Omega'(t) instead.  results.npz then adds
hub_angle, hub_speed, drive_torque, clamp_torque and law_speed; the prescribed model is run too and
compared (summary.json, tip_deflection.png, hub_speed.png; docs/coupled.md).  --coupled-stiffening
chooses the beam's geometric stiffening: "omega" (default; exact for a beam spun in its plane) or
"axial-strain" (the axial force of each element from its own axial strain).

Step size: generalized-alpha (midpoint for Hamilton's equations) with h = 0.01 s; against
h = 2.5e-4 s the tip history differs by at most 4.4e-5 m (7.6e-5 of its peak), second order
in h (docs/rotating_beams.md).

Reference: T. R. Kane, R. R. Ryan, A. K. Banerjee, Dynamics of a cantilever beam attached
to a moving base, J. Guidance Control Dyn. 10(2) (1987) 139-151.  Parameters and spin law as
in BENCHMARKS.md sec. 3 (the published curve itself is not available).
"""
from __future__ import annotations

import os

if __name__ == "__main__":       # before numpy loads: the small dense LUs run faster on one BLAS thread
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import logging  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from flexmbs import BeamEB2D, Material, Model, generate, natural_frequencies, run as run_model  # noqa: E402
from flexmbs.case import (CaseError, check_parameters, command_line, parse_case_args, prepare_output,  # noqa: E402
                          record_output, resolve, write_summary)
from flexmbs.formulations import FORMULATIONS  # noqa: E402
from flexmbs.integrators import INTEGRATORS  # noqa: E402
from flexmbs.motion import SpinUp  # noqa: E402
from flexmbs.pipes import call_quietly

LENGTH, YOUNGS, DENSITY, AREA, INERTIA = 10.0, 7.0e10, 3000.0, 4.0e-4, 2.0e-7
DIVERGENCE_LIMIT = 1e3      # |state| [m, m/s, kg m/s] beyond which the run is declared diverged

DEFAULTS = dict(omega_s=6.0, t_s=15.0, t_end=20.0, elements=10, formulation="lagrange", integrator=None,
                h=0.01, rtol=1e-6, no_stiffening=False, dt_out=0.01, energies=False, plots=True,
                coupled=False, torque=False, hub_inertia=40.0, rho_inf=0.9, coupled_stiffening="omega")
RUN_TIME = "about 3 s"     # at the defaults on a 2-core machine (--help says it; measured, issue 20)
HELP = dict(omega_s="final spin rate Omega_s [rad/s]", t_s="spin-up time T_s [s]", t_end="end time [s]",
            elements="number of beam elements", formulation="equations of motion",
            integrator="time integrator (default: generalized-alpha, midpoint for hamilton)",
            h="step of the fixed-step methods [s]", rtol="relative tolerance of adaptive methods",
            no_stiffening="write the results of the model without geometric stiffening",
            dt_out="output interval [s]", energies="also compute the energy balance (slower)",
            plots="write the plots",
            coupled="coupled model: a rigid hub on a revolute joint, driven by an AngleDriver with the spin-up "
                    "law, the beam a FlexibleBody clamped to it (index3-alpha, step h)",
            torque="with --coupled: drive the hub by the torque (J_hub + rho A L^3 / 3) Omega'(t) instead of "
                   "the driving constraint (a free hub)",
            hub_inertia="hub moment of inertia about its axis [kg m^2] (coupled model)",
            rho_inf="spectral radius at infinite frequency of index3-alpha (coupled model)",
            coupled_stiffening="geometric stiffening of the coupled beam: 'omega', the Model's stiffening with the "
                               "beam's angular velocity (exact here: the hub's angular acceleration loads the beam "
                               "transversely), or 'axial-strain', by each element's own axial strain")
SUMMARY = {"stiffened/tip_min": "min tip deflection of the stiffened run [m]",   # flexmbs.sweep
           "unstiffened/tip_min": "min tip deflection of the unstiffened run [m]",
           "tip_min": "min tip deflection of the coupled model (--coupled) [m]"}
CHOICES = dict(formulation=sorted(FORMULATIONS), integrator=sorted(INTEGRATORS),
               coupled_stiffening=["omega", "axial-strain"])


def build(elements=10, omega_s=6.0, t_s=15.0, stiffening=True) -> Model:
    """The beam on the spinning hub as a Model."""
    beam = BeamEB2D(Material(E=YOUNGS, rho=DENSITY), AREA, INERTIA)
    return Model(generate.line(elements, LENGTH), beam, motion=SpinUp(omega_s, t_s),
                 fixed=[("start", "all")], stiffening=stiffening)


def first_bending_frequency(elements=10) -> float:
    """omega_1 [rad/s] of the non-rotating cantilever (3.5160 sqrt(EI / (rho A L^4)) = 3.798)."""
    beam = BeamEB2D(Material(E=YOUNGS, rho=DENSITY), AREA, INERTIA)
    model = Model(generate.line(elements, LENGTH), beam, fixed=[("start", "all")])
    return float(natural_frequencies(model, n_modes=1)[0][0])


def default_integrator(formulation: str) -> str:
    """Generalized-alpha on (delta, delta') states; the implicit midpoint rule for Hamilton's (delta, p)."""
    return "midpoint" if FORMULATIONS[formulation].second_state == "p" else "generalized-alpha"


def solver_options(p: dict) -> dict:
    """Arguments of `flexmbs.run` for the case parameters ``p``."""
    method = p["integrator"] or default_integrator(p["formulation"])
    opts = dict(formulation=p["formulation"], method=method, t_end=p["t_end"], dt_out=p["dt_out"],
                divergence_limit=DIVERGENCE_LIMIT)
    if INTEGRATORS[method].adaptive:
        opts["rtol"] = p["rtol"]
    else:
        opts["h"] = p["h"]
    if method in ("midpoint", "generalized-alpha"):
        opts["linear"] = True          # the moving-frame equations are affine in the state: one solve per step
    return opts


def tip_minimum(results) -> tuple[float, float]:
    """(value [m], time [s]) of the minimum tip deflection v(L, t) over the outputs."""
    v = results.displacement[:, -1, 1]
    i = int(np.argmin(v))
    return float(v[i]), float(results.t[i])


def check(p: dict) -> None:
    """Refuse values the case cannot run with, naming the parameter (`flexmbs.case.check_parameters`)."""
    check_parameters(p, DEFAULTS, choices=CHOICES, positive=("t_s", "hub_inertia"))
    if p["torque"] and not p["coupled"]:
        raise CaseError("torque", "a torque-driven hub needs the coupled model: add --coupled")
    if not 0.0 <= p["rho_inf"] < 1.0:
        raise CaseError("rho_inf", f"must lie in [0, 1), got {p['rho_inf']!r}")
    if (p["integrator"] is not None and INTEGRATORS[p["integrator"]].needs == "second_order"
            and FORMULATIONS[p["formulation"]].second_state != "delta_dot"):
        raise CaseError("integrator", f"{p['integrator']!r} needs (delta, delta') states; the formulation "
                                      f"{p['formulation']!r} has momenta: use 'midpoint' or leave the default")


def run(out=None, **params):
    """Run the case; returns {"stiffened": Results, "unstiffened": Results} (--coupled: `run_coupled`'s)."""
    p = resolve("spinup_beam", DEFAULTS, params, check)
    if p["coupled"]:
        return run_coupled(out, p)
    solver = solver_options(p)
    requested = "unstiffened" if p["no_stiffening"] else "stiffened"
    runs = {}
    for name, stiffening in (("stiffened", True), ("unstiffened", False)):
        model = build(p["elements"], p["omega_s"], p["t_s"], stiffening=stiffening)
        runs[name] = run_model(model, compute_energies=p["energies"] and name == requested,
                               metadata={"case": "spinup_beam", "parameters": p, "run": name}, **solver)
    if out is not None:
        write(runs, Path(out), p)
    return runs


def summarize(runs, p: dict) -> dict:
    """Tip minimum and status of each run, the first bending frequency and the verdict."""
    omega_1 = first_bending_frequency(p["elements"])
    out = {"parameters": p, "requested": "unstiffened" if p["no_stiffening"] else "stiffened",
           "first_bending_frequency": omega_1, "method": runs["stiffened"].metadata["method"]}
    for name, r in runs.items():
        v_min, t_min = tip_minimum(r)
        out[name] = {"status": r.status, "message": r.message, "t_last": float(r.t[-1]),
                     "tip_min": v_min, "tip_min_time": t_min, "solve_s": r.stats["solve_s"],
                     "n_steps": r.stats["n_steps"]}
    out["unstiffened_expected_to_diverge"] = bool(p["omega_s"] > omega_1)
    return out


def write(runs, out: Path, p: dict):
    out.mkdir(parents=True, exist_ok=True)
    main = runs["unstiffened" if p["no_stiffening"] else "stiffened"]
    main.save_npz(out / "results.npz")
    if p.get("plots", True):
        _plot(runs, main, out, p)
    summary = summarize(runs, p)
    summary["stats"] = {name: r.stats for name, r in runs.items()}
    write_summary(out, summary)


def _plot(runs, main, out: Path, p: dict):
    from flexmbs import plots
    curves = [dict(t=r.t, y=r.displacement[:, -1, 1], label=f"{name}", status=r.status)
              for name, r in (("with stiffening", runs["stiffened"]), ("without stiffening", runs["unstiffened"]))]
    plots.save(plots.clipped_histories(curves, ylabel="tip transverse deflection v(L, t) [m]", title=(
        f"Spin-up to {p['omega_s']:g} rad/s in {p['t_s']:g} s, {p['elements']} elements")),
        out / "tip_deflection.png")
    if main.energies:
        plots.save(plots.energy_balance(main, title="Energy balance"), out / "energy.png")


def timing(elements=(10, 40), repeats=3, **params) -> list[dict]:
    """Median wall times of the stiffened spin-up per formulation and element count (no energies).

    ``build_s``: the Model (assembly, unit cases of the stiffening); ``solve_s``: the integration;
    ``total_s``: build + `flexmbs.run` (formulation, integration, post-processing).
    """
    p = {**DEFAULTS, **params}
    rows = []
    for n in elements:
        for name in FORMULATIONS:
            solver = solver_options({**p, "formulation": name})
            builds, solves, totals = [], [], []
            for _ in range(repeats):
                tic = time.perf_counter()
                model = build(n, p["omega_s"], p["t_s"])
                builds.append(time.perf_counter() - tic)
                res = run_model(model, compute_energies=False, **solver)
                totals.append(time.perf_counter() - tic)
                solves.append(res.stats["solve_s"])
            v_min, t_min = tip_minimum(res)
            rows.append(dict(elements=n, formulation=name, method=solver["method"], status=res.status,
                             build_s=float(np.median(builds)), solve_s=float(np.median(solves)),
                             total_s=float(np.median(totals)), n_steps=res.stats["n_steps"],
                             tip_min=v_min, tip_min_time=t_min))
    return rows


# -- coupled model ----------------------------------------------------------------------------------
def rigid_beam_inertia() -> float:
    """rho A L^3 / 3 [kg m^2]: the undeformed beam's moment of inertia about the hub axis (400)."""
    return DENSITY * AREA * LENGTH**3 / 3.0


def torque_law(omega_s, t_s, hub_inertia):
    """T(t) = (J_hub + rho A L^3 / 3) Omega'(t): the torque that gives the spin-up law to a rigid beam."""
    law, J = SpinUp(omega_s, t_s).law, hub_inertia + rigid_beam_inertia()
    return lambda t: np.array([0.0, 0.0, J * law(t)[2]])


def build_coupled(elements=10, omega_s=6.0, t_s=15.0, stiffening=True, torque=False, hub_inertia=40.0,
                  coupled_stiffening="omega"):
    """(System, hub, beam, model): the hub a RigidBodyEP on a revolute joint about z, the beam a
    FlexibleBody clamped to it at its root node (Fixed joint at Node(0): tangent frame), and the
    hub driven by an AngleDriver with the spin-up law, or by `torque_law` (``torque``).  With
    ``stiffening`` the beam is stiffened by ``coupled_stiffening`` (`FlexibleBody`'s ``stiffening``:
    "omega" or "axial-strain"); the Model (the prescribed model) keeps its own stiffening."""
    from flexmbs.bodies import FlexibleBody, Node, RigidBodyEP
    from flexmbs.bodies.loads import torque_load
    from flexmbs.constraints import AngleDriver, Fixed, Revolute
    from flexmbs.system import System
    model = build(elements, omega_s, t_s, stiffening)
    z = np.array([0.0, 0.0, 1.0])
    loads = [torque_load(torque_law(omega_s, t_s, hub_inertia))] if torque else ()
    hub = RigidBodyEP("hub", 10.0, np.diag([0.5 * hub_inertia, 0.5 * hub_inertia, hub_inertia]), loads=loads)
    if coupled_stiffening not in CHOICES["coupled_stiffening"]:
        raise CaseError("coupled_stiffening", f"must be one of {CHOICES['coupled_stiffening']}, "
                                              f"got {coupled_stiffening!r}")
    beam = FlexibleBody(model, "beam", stiffening=coupled_stiffening if stiffening else "none")
    constraints = [Revolute(None, hub, at=np.zeros(3), axis=z, name="bearing"),
                   Fixed(hub, beam, s_j=Node(0), name="clamp")]
    if not torque:
        constraints.append(AngleDriver(None, hub, z, SpinUp(omega_s, t_s).law, name="drive"))
    return System([hub, beam], constraints), hub, beam, model


def run_coupled(out, p: dict) -> dict:
    """The coupled model by `flexmbs.run` (index3-alpha, step h; run "coupled" of the results file) and
    the prescribed fast path at the same outputs (run "prescribed").

    Returns {"coupled": Results, "prescribed": Results, "hub": dict of the hub's arrays} (`hub_histories`)."""
    stiff = not p["no_stiffening"]
    system, hub, beam, model = build_coupled(p["elements"], p["omega_s"], p["t_s"], stiff, p["torque"],
                                             p["hub_inertia"], p["coupled_stiffening"])
    n_out = int(round(p["t_end"] / p["dt_out"]))
    coupled = run_model(system, method="index3-alpha", h=p["h"], t_end=p["t_end"],
                        t_eval=np.linspace(0.0, p["t_end"], n_out + 1), rho_inf=p["rho_inf"],
                        divergence_limit=DIVERGENCE_LIMIT, metadata={"case": "spinup_beam", "parameters": p},
                        name="coupled")
    solver = solver_options({**p, "coupled": False})
    prescribed = run_model(model, compute_energies=False, metadata={"case": "spinup_beam", "parameters": p,
                                                                     "run": "prescribed"}, **solver)
    runs = {"coupled": coupled, "prescribed": prescribed, "hub": hub_histories(system, hub, coupled, p)}
    if out is not None:
        write_coupled(runs, Path(out), p)
    return runs


def hub_histories(system, hub, res, p: dict) -> dict:
    """The hub's arrays at the outputs of the coupled run ``res``: hub_angle (unwrapped angle of its
    frame about z) and hub_speed (omega_z) from ``res.bodies``, the torques about z of the drive
    (the torque law with --torque) and of the clamp on the beam (minus the clamp's on the hub, from
    the index-3 steps' own multipliers), and the spin-up law's angle and speed."""
    from flexmbs.mechanisms.coupled import axial_torque
    R = res.bodies[hub.name].rotation
    if p["torque"]:
        drive = np.array([torque_law(p["omega_s"], p["t_s"], p["hub_inertia"])(ti)[2] for ti in res.t])
    else:
        drive = axial_torque(system, system.constraint("drive"), hub, res.t, res.q, res.multipliers)
    law = np.array([SpinUp(p["omega_s"], p["t_s"]).angle(ti)[:2] for ti in res.t]).reshape(len(res.t), 2)
    return dict(hub_angle=np.unwrap(np.arctan2(R[:, 1, 0], R[:, 0, 0])),
                hub_speed=res.bodies[hub.name].angular_velocity[:, 2], drive_torque=drive,
                clamp_torque=-axial_torque(system, system.constraint("clamp"), hub, res.t, res.q, res.multipliers),
                law_angle=law[:, 0], law_speed=law[:, 1])


def summarize_coupled(runs, p: dict) -> dict:
    c, f, hub = runs["coupled"], runs["prescribed"], runs["hub"]
    tip = c.displacement[:, -1, 1]
    v_min, t_min = tip_minimum(c)
    out = {"parameters": p, "model": "coupled, " + ("torque-driven hub" if p["torque"] else "driven hub"),
           "stiffening": "none" if p["no_stiffening"] else p["coupled_stiffening"],
           "status": c.status, "message": c.message, "solve_s": c.stats["solve_s"], "n_steps": c.stats["n_steps"],
           "kernel": c.metadata.get("kernel"),
           "tip_min": v_min, "tip_min_time": t_min,
           "prescribed_tip_min": tip_minimum(f)[0], "prescribed_tip_min_time": tip_minimum(f)[1]}
    m = min(len(f.t), len(c.t))
    out["tip_difference_max"] = float(np.abs(f.displacement[:m, -1, 1] - tip[:m]).max())
    out["hub_speed_final"] = float(hub["hub_speed"][-1])
    out["hub_speed_minus_law_max"] = float(np.abs(hub["hub_speed"] - hub["law_speed"]).max())
    out["hub_angle_minus_law_final"] = float(hub["hub_angle"][-1] - hub["law_angle"][-1])
    out["drive_torque_peak"] = float(np.abs(hub["drive_torque"]).max())
    return out


def write_coupled(runs, out: Path, p: dict):
    """results.npz (t, the beam's displacement and nodes, hub_angle, hub_speed, drive_torque, clamp_torque,
    law_speed), summary.json and the plots tip_deflection.png, hub_speed.png of the coupled model."""
    out.mkdir(parents=True, exist_ok=True)
    c, hub = runs["coupled"], runs["hub"]
    np.savez_compressed(out / "results.npz", t=c.t, displacement=c.displacement, nodes=c.nodes,
                        **{k: np.asarray(hub[k]) for k in ("hub_angle", "hub_speed", "drive_torque", "clamp_torque",
                                                           "law_speed")})
    write_summary(out, summarize_coupled(runs, p))
    if p.get("plots", True):
        from flexmbs import plots
        f = runs["prescribed"]
        curves = [dict(t=c.t, y=c.displacement[:, -1, 1], label="coupled", status=c.status),
                  dict(t=f.t, y=f.displacement[:, -1, 1], label="prescribed (fast path)", status=f.status)]
        plots.save(plots.clipped_histories(curves, ylabel="tip transverse deflection v(L, t) [m]", title=(
            f"Spin-up, coupled hub ({'torque' if p['torque'] else 'driven'}), {p['elements']} elements")),
            out / "tip_deflection.png")
        curves = [dict(t=c.t, y=hub["hub_speed"], label="hub speed", status=c.status),
                  dict(t=c.t, y=hub["law_speed"], label="spin-up law", status="finished")]
        plots.save(plots.clipped_histories(curves, ylabel="hub speed [rad/s]", title="Hub speed"),
                   out / "hub_speed.png")


def describe_coupled(runs, p: dict) -> tuple[list[str], int]:
    s = summarize_coupled(runs, p)
    lines = [f"  coupled ({s['model']}, stiffening {s['stiffening']}): {s['status']}, tip deflection min {s['tip_min']:.4f} m at "
             f"t = {s['tip_min_time']:.2f} s ({s['n_steps']} steps, solve {s['solve_s']:.1f} s)",
             f"  prescribed fast path: tip min {s['prescribed_tip_min']:.4f} m at t = "
             f"{s['prescribed_tip_min_time']:.2f} s; max |difference| of the tip deflection "
             f"{s['tip_difference_max']:.3g} m",
             f"  hub speed at t_end {s['hub_speed_final']:.4f} rad/s; max |hub speed - law| "
             f"{s['hub_speed_minus_law_max']:.3g} rad/s; hub angle - law at t_end "
             f"{s['hub_angle_minus_law_final']:.4g} rad; peak drive torque {s['drive_torque_peak']:.4g} N m"]
    return lines, 0 if s["status"] == "finished" else 1


def describe(runs, p: dict) -> tuple[list[str], int]:
    """Lines reporting both runs, and the exit code (0 unless a run failed unexpectedly)."""
    s = summarize(runs, p)
    omega_1 = s["first_bending_frequency"]
    lines, code = [], 0
    for name, label in (("stiffened", "with stiffening"), ("unstiffened", "without stiffening")):
        r, info = runs[name], s[name]
        if r.status == "finished":
            lines.append(f"  {label:19s} finished: tip deflection min {info['tip_min']:.4f} m at "
                         f"t = {info['tip_min_time']:.2f} s, solve {info['solve_s']:.2f} s")
            if name == "unstiffened" and s["unstiffened_expected_to_diverge"]:
                lines.append(f"  {'':19s} (Omega_s > omega_1 = {omega_1:.3f} rad/s: the response grows, but has "
                             "not reached the divergence limit by t_end)")
        elif r.status == "diverged" and name == "unstiffened" and s["unstiffened_expected_to_diverge"]:
            lines.append(f"  {label:19s} diverged at t = {info['t_last']:.2f} s, as expected: without geometric "
                         f"stiffening the linear model loses its chordwise stiffness once Omega passes the "
                         f"first bending frequency omega_1 = {omega_1:.3f} rad/s (Omega_s = {p['omega_s']:g}).")
        else:
            lines.append(f"  {label:19s} {r.status} at t = {info['t_last']:.2f} s: {r.message}")
            code = 1 if name == s["requested"] or r.status == "failed" else code
    return lines, code


def main(argv=None):
    parser = command_line("spinup_beam", __doc__, DEFAULTS, run_time=RUN_TIME, help=HELP, choices=CHOICES, check=check)
    parser.add_argument("--timing", action="store_true",
                        help="instead: time the stiffened run, each formulation, 10 and 40 elements, median of 3")
    args, out, options = parse_case_args(parser, argv)
    if options.timing:
        params = {k: v for k, v in args.items() if k not in ("elements", "formulation", "integrator")}
        print(f"spin-up to {args['omega_s']:g} rad/s, {args['t_end']:g} s, with stiffening, no energies; "
              "median of 3 [s]")
        print(f"{'elements':>8s}  {'formulation':13s} {'method':18s} {'build':>7s} {'solve':>7s} {'total':>7s}  "
              "tip minimum")
        for r in timing(**params):
            print(f"{r['elements']:8d}  {r['formulation']:13s} {r['method']:18s} {r['build_s']:7.3f} "
                  f"{r['solve_s']:7.3f} {r['total_s']:7.3f}  {r['tip_min']:.6f} m at {r['tip_min_time']:.2f} s "
                  f"({r['status']})")
        return 0
    flexmbs_log = logging.getLogger("flexmbs")
    level = flexmbs_log.level
    if not options.verbose:
        flexmbs_log.setLevel(logging.ERROR)      # the expected divergence is reported below
    tic = time.perf_counter()
    out, before = prepare_output(out, parser=parser)
    try:
        runs = run(out=out, **args)
    finally:
        flexmbs_log.setLevel(level)              # main() may run inside another program (tests, sweeps)
    record_output(out, before)
    p = {**DEFAULTS, **args}
    if p["coupled"]:
        print(f"spin-up beam, coupled: Omega_s = {p['omega_s']:g} rad/s, T_s = {p['t_s']:g} s, "
              f"{p['elements']} elements, index3-alpha (h = {p['h']:g} s, rho_inf = {p['rho_inf']:g}), "
              f"{p['t_end']:g} s")
        lines, code = describe_coupled(runs, p)
        print("\n".join(lines))
        print(f"  wrote {out}/results.npz and plots in {time.perf_counter() - tic:.1f} s")
        return code
    method = runs["stiffened"].metadata["method"]
    step = f"h = {p['h']:g} s" if not INTEGRATORS[method].adaptive else f"rtol = {p['rtol']:g}"
    print(f"spin-up beam: Omega_s = {p['omega_s']:g} rad/s, T_s = {p['t_s']:g} s, {p['elements']} elements, "
          f"{p['formulation']} + {method} ({step}), {p['t_end']:g} s")
    lines, code = describe(runs, p)
    print("\n".join(lines))
    print(f"  wrote {out}/results.npz ({'without' if p['no_stiffening'] else 'with'} stiffening) and plots "
          f"in {time.perf_counter() - tic:.1f} s")
    return code


if __name__ == "__main__":
    sys.exit(call_quietly(main))
