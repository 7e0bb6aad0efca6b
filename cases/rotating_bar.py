"""Rotating bar with a sinusoidal axial tip force (Vlase, Nicolescu and Marin 2020, sec. 4a).

A bar of length L = 1 m, mass 1 kg and section A = 0.2 cm^2 (so rho = 50 000 kg/m^3),
E = 210 GPa, rotates in its plane at Omega = 15 rad/s about an axis through its end
(node 1).  An axial force F sin(2 pi t / T) with T = pi/100 s acts at the free end.
The bar starts undeformed and at rest in the rotating frame, so it also vibrates
about its centrifugal equilibrium.  Ten two-node bar elements, axial DOFs only.

Accuracy: the default integrator "exact" propagates the steady model's x' = A x + c + B f(t)
with matrix exponentials (flexmbs.integrators.exact), so the only error is round-off: the tip
displacement agrees with the exact modal solution to about 1e-12 of its peak.  The case prints
this error for every run (max over the outputs of |u_tip - u_tip,exact| / max |u_tip,exact|).

Writes DIR/results.h5 (both runs, streamed while they run: flexmbs.load_results),
DIR/results.npz (t, displacement (n_t, n_nodes, 2) in the rotating frame,
node 1 at the axis, nodes), the paper's Figs. 2-4 as PNG (axial displacement of nodes
3, 7, 10 without and, if --damping > 0, with Rayleigh damping; all nodes) and the
energy balance.

Reference: S. Vlase, A. E. Nicolescu, M. Marin, New analytical model used in finite
element analysis of solids mechanics, Mathematics 8 (2020) 1401, doi:10.3390/math8091401.
"""
from __future__ import annotations

import os

# the matrices of this case are small (20 x 20): BLAS threads cost more than they give, and on a
# busy machine far more (a 23 x 23 matrix exponential: 35 us on one thread, 15 ms with threads)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import contextlib
import sys
from pathlib import Path

import numpy as np

from flexmbs import Bar2, Material, Model, NodalLoad, generate, natural_frequencies, run as run_model
from flexmbs.case import check_parameters, resolve, run_command, write_summary
from flexmbs.formulations import FORMULATIONS
from flexmbs.integrators import INTEGRATORS
from flexmbs.integrators.exact import reference_error
from flexmbs.io import recording
from flexmbs.model import rayleigh_coefficients
from flexmbs.motion import ConstantRotation
from flexmbs.pipes import call_quietly
from flexmbs.signals import Harmonic

DEFAULTS = dict(elements=10, length=1.0, mass=1.0, area=0.2e-4, youngs=210e9, omega=15.0, force=1.0,
                period=np.pi / 100, damping=0.0, formulation="lagrange", integrator="exact", rtol=1e-6,
                t_end=0.1, dt_out=1e-4, h=2.5e-6, plots=True)
RUN_TIME = "about 3 s"     # at the defaults on a 2-core machine (--help says it; measured, issue 20)
HELP = dict(elements="number of bar elements", length="bar length L [m]", mass="bar mass [kg]",
            area="section area A [m^2]", youngs="Young's modulus E [Pa]", omega="spin rate Omega [rad/s]",
            force="tip force amplitude [N]", period="force period [s] (pi/100 accepted)",
            damping="Rayleigh damping ratio at the first two axial modes (0: none)",
            formulation="equations of motion", integrator="time integrator", rtol="relative tolerance",
            t_end="end time [s]", dt_out="output interval [s]",
            h="step size of the fixed-step integrators (midpoint, generalized-alpha, AB4, index3-alpha) [s]",
            plots="write the PNG plots")
SUMMARY = {"tip_max_um": "max |tip displacement| of the main run [um]"}   # flexmbs.sweep (+ peak_displacement)
CHOICES = dict(formulation=sorted(FORMULATIONS), integrator=sorted(INTEGRATORS))

PLOTTED_NODES = (3, 7, 10)        # 1-based, node 1 at the axis (the paper's Figs. 2-3)


def build(elements=10, length=1.0, mass=1.0, area=0.2e-4, youngs=210e9, omega=15.0, force=1.0,
          period=np.pi / 100, damping=0.0) -> Model:
    """The rotating bar as a Model (damping: Rayleigh ratio at the first two axial modes)."""
    rho = mass / (area * length)
    element = Bar2(Material(E=youngs, rho=rho), area)
    mesh = generate.line(elements, length)
    load = NodalLoad("end", "u", force, Harmonic(2.0 * np.pi / period))
    kwargs = dict(motion=ConstantRotation(omega), fixed=[("start", "all")], loads=[load])
    model = Model(mesh, element, **kwargs)
    if damping > 0:
        w, _ = natural_frequencies(model, n_modes=2)
        model = Model(mesh, element, damping=rayleigh_coefficients(damping, w[0], w[1]), **kwargs)
    return model


def static_elongation(x, length=1.0, mass=1.0, area=0.2e-4, youngs=210e9, omega=15.0):
    """Closed form u(x) = sin(kx)/(k cos kL) - x, k = Omega sqrt(rho/E) (centrifugal softening incl.)."""
    k = omega * np.sqrt(mass / (area * length) / youngs)
    return np.sin(k * x) / (k * np.cos(k * length)) - x


def check(p: dict) -> None:
    """Refuse values the case cannot run with, naming the parameter (`flexmbs.case.check_parameters`)."""
    check_parameters(p, DEFAULTS, choices=CHOICES, positive=("length", "mass", "area", "youngs", "period"))


def run(out=None, **params):
    """Run the case; returns a dict of Results ('undamped' and, with damping, 'damped')."""
    p = resolve("rotating_bar", DEFAULTS, params, check)
    phys = {k: p[k] for k in ("elements", "length", "mass", "area", "youngs", "omega", "force", "period")}
    fixed_step = not INTEGRATORS[p["integrator"]].adaptive and p["integrator"] != "exact"
    solver = dict(formulation=p["formulation"], method=p["integrator"], rtol=p["rtol"], t_end=p["t_end"],
                  dt_out=p["dt_out"], h=p["h"] if fixed_step else None)
    meta = {"case": "rotating_bar", "parameters": p}
    # with --out, every run streams into DIR/results.h5 while it runs (flexmbs.load_results reads it)
    with recording(Path(out) / "results.h5") if out is not None else contextlib.nullcontext():
        models = {"undamped": build(**phys)}
        if p["damping"] > 0:
            models["damped"] = build(**phys, damping=p["damping"])
        runs = {}
        for name, model in models.items():
            runs[name] = run_model(model, metadata={**meta, "run": name}, **solver)
            # error estimate: tip displacement against the exact modal solution (max over the
            # outputs, relative to the peak; flexmbs.integrators.exact.reference_error)
            runs[name].stats["tip_error"] = reference_error(model, runs[name]) if len(runs[name].t) > 1 else np.nan
    if out is not None:
        write(runs, Path(out), p)
    return runs


def write(runs, out: Path, p: dict):
    out.mkdir(parents=True, exist_ok=True)
    main = runs["damped" if "damped" in runs else "undamped"]
    main.save_npz(out / "results.npz")
    _summary(main, out, p)
    if not p.get("plots", True):
        return
    from flexmbs import plots
    idx = [n - 1 for n in PLOTTED_NODES if n - 1 < main.displacement.shape[1]]
    plots.save(plots.node_histories(runs["undamped"], idx, title=(
        f"Axial displacement, nodes {', '.join(str(i + 1) for i in idx)}, without damping")),
        out / "nodes_3_7_10_undamped.png")
    if "damped" in runs:
        plots.save(plots.node_histories(runs["damped"], idx, title=(
            f"Axial displacement, nodes {', '.join(str(i + 1) for i in idx)}, damping ratio {p['damping']}")),
            out / "nodes_3_7_10_damped.png")
    plots.save(plots.all_nodes(main, title="Axial displacement of all nodes"), out / "all_nodes.png")
    plots.save(plots.energy_balance(main, title="Energy balance"), out / "energy.png")


def _summary(main, out: Path, p: dict):
    summary = {"parameters": p, "status": main.status, "message": main.message,
               "tip_max_um": float(1e6 * np.abs(main.displacement[:, -1, 0]).max()),
               "static_tip_um": float(1e6 * static_elongation(p["length"], p["length"], p["mass"], p["area"],
                                                                p["youngs"], p["omega"])),
               "stats": {k: v for k, v in main.stats.items()}}
    write_summary(out, summary)


def main(argv=None):
    runs, args, out, _, seconds = run_command("rotating_bar", __doc__, run, argv, DEFAULTS, run_time=RUN_TIME,
                                              help=HELP, choices=CHOICES, check=check)
    main_run = runs["damped" if "damped" in runs else "undamped"]
    tol = "" if args["integrator"] == "exact" else f" (rtol {args['rtol']:g})"
    print(f"rotating bar: {args['elements']} elements, Omega = {args['omega']} rad/s, "
          f"{args['formulation']} + {args['integrator']}{tol}")
    for name, r in runs.items():
        print(f"  {name:9s} {r.status}: tip |u| max = {1e6 * np.abs(r.displacement[:, -1, 0]).max():.4f} µm, "
              f"tip error {r.stats['tip_error']:.1e} of the peak against the exact modal solution, "
              f"solve {r.stats['solve_s']:.3f} s")
    print(f"  static centrifugal tip elongation (closed form): "
          f"{1e6 * static_elongation(args['length'], args['length'], args['mass'], args['area'], args['youngs'], args['omega']):.4f} µm")
    print(f"  wrote {out}/results.npz and plots in {seconds:.1f} s")
    return 0 if main_run.success else 1


if __name__ == "__main__":
    sys.exit(call_quietly(main))
