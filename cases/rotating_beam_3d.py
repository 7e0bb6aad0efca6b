"""3D rotating cantilever with a flapwise tip load: flap and chord response together.

The Kane beam (L = 10 m, EI = 1.4e4 N m^2 in both bending planes, EA = 2.8e7 N,
rho A = 1.2 kg/m), modelled with 3D Euler-Bernoulli beam elements along the body x
axis, is clamped at radius R = hub_ratio L on a hub that spins up about z with the
law of Kane, Ryan and Banerjee (1987) (`flexmbs.motion.SpinUp`, Omega_s in T_s; T_s = 0:
steady spin Omega_s from t = 0).  A flapwise (out-of-plane, z) force F f(t) acts at the
tip, f rising smoothly from 0 to 1 over ``load_ramp`` seconds (f = (1 - cos(pi t/T_r))/2).

Two bending directions, one model:

- chordwise (v, in the plane of rotation): the angular acceleration makes the beam lag
  (v < 0) during the spin-up; its stiffness is raised by the centrifugal tension and
  lowered by the centrifugal softening, lambda_c^2 = lambda_f^2 - gamma^2;
- flapwise (w, along the spin axis): the tip load bends the beam, and the centrifugal
  tension stiffens it (Southwell), so the flap deflection shrinks as the hub speeds up.
  At Omega = 6 rad/s the first flap and chord frequencies are 7.508 and 4.513 rad/s
  (BENCHMARKS.md sec. 2.4).

In the linear floating-frame model with geometric stiffening the two directions are
uncoupled (principal axes along y and z, spin about z); they are shown together with the
quasi-static response of the frame frozen at each time (`flexmbs.modal.static_solution`:
K_eff(t) delta = f(t), stiffening, softening and the angular acceleration's load included).

Writes DIR/results.npz (t, displacement (n_t, n_nodes, 3) in the rotating frame, nodes),
DIR/tip.png (tip w and v with their quasi-static values), DIR/summary.json.
"""
from __future__ import annotations

import os

if __name__ == "__main__":       # before numpy loads: the small dense LUs run faster on one BLAS thread
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from flexmbs import BeamEB3D, Material, Model, NodalLoad, generate, run as run_model  # noqa: E402
from flexmbs.case import CaseError, check_parameters, resolve, run_command, write_summary  # noqa: E402
from flexmbs.formulations import FORMULATIONS  # noqa: E402
from flexmbs.integrators import INTEGRATORS  # noqa: E402
from flexmbs.modal import static_solution  # noqa: E402
from flexmbs.model import rayleigh_coefficients  # noqa: E402
from flexmbs.modal import natural_frequencies  # noqa: E402
from flexmbs.motion import ConstantRotation, SpinUp  # noqa: E402
from flexmbs.pipes import call_quietly

LENGTH, YOUNGS, DENSITY, AREA, INERTIA = 10.0, 7.0e10, 3000.0, 4.0e-4, 2.0e-7

DEFAULTS = dict(elements=10, omega_s=6.0, t_s=15.0, t_end=20.0, tip_load=10.0, load_ramp=2.0, hub_ratio=0.0,
                damping=0.0, formulation="lagrange", integrator=None, h=0.01, rtol=1e-6, dt_out=0.01, plots=True)
RUN_TIME = "about 4 s"     # at the defaults on a 2-core machine (--help says it; measured, issue 20)
HELP = dict(elements="number of beam elements", omega_s="final spin rate Omega_s [rad/s]",
            t_s="spin-up time T_s [s] (0: steady spin)", t_end="end time [s]", tip_load="flapwise tip force F [N]",
            load_ramp="time over which the tip force rises to F [s] (0: applied at once)",
            hub_ratio="hub radius / beam length",
            damping="Rayleigh damping ratio at the first two distinct bending frequencies (0: none)",
            formulation="equations of motion",
            integrator="time integrator (default: generalized-alpha, midpoint for hamilton)",
            h="step of the fixed-step methods [s]", rtol="relative tolerance of adaptive methods",
            dt_out="output interval [s]", plots="write tip.png")
SUMMARY = {"tip_v_min": "min tip v (chordwise) [m]", "tip_w_max": "max tip w (flapwise) [m]"}   # flexmbs.sweep
CHOICES = dict(formulation=sorted(FORMULATIONS), integrator=sorted(INTEGRATORS))


def load_factor(load_ramp: float):
    """f(t): 0 -> 1 over ``load_ramp`` seconds, (1 - cos(pi t / T_r)) / 2, then 1."""
    if load_ramp <= 0:
        return None
    return lambda t: 0.5 * (1.0 - np.cos(np.pi * t / load_ramp)) if t < load_ramp else 1.0


def build(elements=10, omega_s=6.0, t_s=15.0, tip_load=10.0, load_ramp=2.0, hub_ratio=0.0,
          damping=0.0) -> Model:
    """The 3D beam on the spinning hub with the flapwise tip load, as a Model."""
    beam = BeamEB3D(Material(E=YOUNGS, rho=DENSITY, nu=0.3), AREA, Iy=INERTIA, Iz=INERTIA, J=2 * INERTIA)
    mesh = generate.line(elements, LENGTH, dim=3, origin=(hub_ratio * LENGTH, 0.0, 0.0))
    motion = SpinUp(omega_s, t_s) if t_s > 0 else ConstantRotation(omega_s)
    kwargs = dict(motion=motion, fixed=[("start", "all")],
                  loads=[NodalLoad("end", "w", tip_load, load_factor(load_ramp))] if tip_load else [])
    model = Model(mesh, beam, **kwargs)
    if damping > 0:                    # at the first two distinct bending frequencies (flap = chord at rest)
        w, _ = natural_frequencies(Model(mesh, beam, fixed=[("start", "all")]), n_modes=4)
        w_2 = w[np.flatnonzero(w > 1.01 * w[0])[0]]
        model = Model(mesh, beam, damping=rayleigh_coefficients(damping, w[0], w_2), **kwargs)
    return model


def quasi_static_tip(model: Model, times) -> np.ndarray:
    """Tip (v, w) [m] of K_eff(t) delta = f(t, 0, 0) at each time, (n_t, 2)."""
    tip = model.mesh.nodes("end")[0]
    out = []
    for t in times:
        u = model.displacement_field(static_solution(model, float(t)))
        out.append(u[tip, 1:3])
    return np.array(out)


def check(p: dict) -> None:
    """Refuse values the case cannot run with, naming the parameter (`flexmbs.case.check_parameters`)."""
    check_parameters(p, DEFAULTS, choices=CHOICES, nonnegative=("t_s", "load_ramp", "hub_ratio"))
    if (p["integrator"] is not None and INTEGRATORS[p["integrator"]].needs == "second_order"
            and FORMULATIONS[p["formulation"]].second_state != "delta_dot"):
        raise CaseError("integrator", f"{p['integrator']!r} needs (delta, delta') states; the formulation "
                                      f"{p['formulation']!r} has momenta: use 'midpoint' or leave the default")


def run(out=None, **params):
    """Run the case; returns the Results (tip: displacement[:, -1, 1] = v, [:, -1, 2] = w)."""
    p = resolve("rotating_beam_3d", DEFAULTS, params, check)
    method = p["integrator"] or ("midpoint" if FORMULATIONS[p["formulation"]].second_state == "p"
                                 else "generalized-alpha")
    model = build(**{k: p[k] for k in ("elements", "omega_s", "t_s", "tip_load", "load_ramp", "hub_ratio",
                                        "damping")})
    opts = dict(rtol=p["rtol"]) if INTEGRATORS[method].adaptive else dict(h=p["h"])
    if method in ("midpoint", "generalized-alpha"):
        opts["linear"] = True          # the moving-frame equations are affine in the state: one solve per step
    res = run_model(model, formulation=p["formulation"], method=method, t_end=p["t_end"], dt_out=p["dt_out"],
                    compute_energies=False, metadata={"case": "rotating_beam_3d", "parameters": p}, **opts)
    if out is not None:
        write(res, model, Path(out), p)
    return res


def summarize(res, model: Model, p: dict, quasi=None) -> dict:
    v, w = res.displacement[:, -1, 1], res.displacement[:, -1, 2]
    i_v = int(np.argmin(v))
    q_end = quasi_static_tip(model, [res.t[-1]])[0] if quasi is None else quasi[-1]
    return {"parameters": p, "status": res.status, "message": res.message,
            "tip_v_min": float(v[i_v]), "tip_v_min_time": float(res.t[i_v]),
            "tip_w_max": float(w.max()), "tip_w_end": float(w[-1]), "tip_v_end": float(v[-1]),
            "quasi_static_tip_v_end": float(q_end[0]), "quasi_static_tip_w_end": float(q_end[1]),
            "static_tip_w_at_rest": p["tip_load"] * LENGTH**3 / (3 * YOUNGS * INERTIA),
            "stats": res.stats}


def write(res, model: Model, out: Path, p: dict):
    out.mkdir(parents=True, exist_ok=True)
    res.save_npz(out / "results.npz")
    if not p.get("plots", True):
        write_summary(out, summarize(res, model, p))
        return
    from flexmbs import plots
    tq = np.linspace(res.t[0], res.t[-1], 81)
    quasi = quasi_static_tip(model, tq)
    panels = []
    for comp, name, what in ((2, "w", "flapwise"), (1, "v", "chordwise")):
        panels.append((f"tip {name} ({what}) [m]", [
            dict(t=res.t, y=res.displacement[:, -1, comp], label="dynamic"),
            dict(t=tq, y=quasi[:, comp - 1], label="quasi-static (frame frozen at t)", style="--")]))
    plots.save(plots.history_panels(panels, title=(
        f"3D beam, spin-up to {p['omega_s']:g} rad/s in {p['t_s']:g} s, flapwise tip load {p['tip_load']:g} N")),
        out / "tip.png")
    write_summary(out, summarize(res, model, p, quasi))


def main(argv=None):
    res, p, out, _, seconds = run_command("rotating_beam_3d", __doc__, run, argv, DEFAULTS, help=HELP,
                                          choices=CHOICES, check=check, run_time=RUN_TIME)
    s = json.loads((out / "summary.json").read_text())
    print(f"3D rotating beam: Omega_s = {p['omega_s']:g} rad/s, T_s = {p['t_s']:g} s, {p['elements']} elements, "
          f"flapwise tip load {p['tip_load']:g} N, {p['formulation']} + {res.metadata['method']}: {res.status}")
    print(f"  chordwise tip v: min {s['tip_v_min']:.4f} m at t = {s['tip_v_min_time']:.2f} s; at t_end "
          f"{s['tip_v_end']:.4f} m (quasi-static {s['quasi_static_tip_v_end']:.4f} m)")
    print(f"  flapwise tip w:  max {s['tip_w_max']:.4f} m; at t_end {s['tip_w_end']:.4f} m (quasi-static "
          f"{s['quasi_static_tip_w_end']:.4f} m; at rest F L^3 / (3 EI) = {s['static_tip_w_at_rest']:.4f} m)")
    print(f"  wrote {out}/results.npz and plots in {seconds:.1f} s")
    return 0 if res.success else 1


if __name__ == "__main__":
    sys.exit(call_quietly(main))
