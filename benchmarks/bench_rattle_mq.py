"""RATTLE with a mass matrix M(q) against index3-alpha over long runs: energy and angular momentum.

    python benchmarks/bench_rattle_mq.py [--case triple|satellite|both] [--t-end 1000]
        [--h-triple 1e-2] [--h-satellite 1e-2] [--t-end-satellite T] [--modes 2] [--newton-tol 1e-10]
        [--out DIR]

Two systems with M(q), each integrated by `flexmbs.run` with methods "rattle" (the generalized
RATTLE, flexmbs/integrators/rattle_mq.py) and "index3-alpha" (rho_inf 1, its default) at the same
fixed step, outputs every second:

* the triple pendulum of cases/triple_pendulum.py with its Euler-parameter bodies (``build(
  "euler-parameters")``, released from its documented start): E = T + V_g and the angular momentum
  about the vertical through the fixed pivot A (gravity along -Z, A at the origin: L_z is conserved);
* the flexible satellite of cases/flexible_satellite.py in free flight (``torque`` false: E and the
  angular momentum vector L about the centre of mass are conserved), spinning at 0.1 rad/s about
  its principal axis, its plate panels reduced to ``--modes`` cantilever modes WITHOUT the static
  modes (those are stiff, up to 4.8 kHz with the case's defaults, and RATTLE evaluates the forces
  explicitly: h < 2 / omega_max; with 2 modes omega_max = 70 rad/s).

Prints for each method the CPU time (process time of the run), the steps, max |C| over the outputs,
and for |E(t) - E(0)| [J] and |L(t) - L(0)| [N m s] (absolute: the pendulum starts at rest, L(0) = 0;
the satellite's |L(0)| is printed with E(0)) the maximum over the run, over its first
tenth and over its last tenth, as rows of the table of docs/benchmarks.md sec. 29.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import flexible_satellite  # noqa: E402
import triple_pendulum  # noqa: E402

import flexmbs as fm  # noqa: E402
from flexmbs.reduction import reduce  # noqa: E402

METHODS = ("rattle", "index3-alpha")


def triple() -> tuple:
    """(System, q0, v0, L(q, v)) of the triple pendulum in Euler parameters: L = L_z about A."""
    system = triple_pendulum.build("euler-parameters")
    return system, None, None, lambda q, v: system.momentum(q, v).angular[2:]


def satellite(modes: int) -> tuple:
    """(System, q0, v0, L(q, v)) of the free satellite spinning about its principal axis closest to z."""
    p = dict(flexible_satellite.DEFAULTS, torque=False)
    panel = reduce(flexible_satellite.panel_model(p), modes, static_modes=False)
    axis, _ = flexible_satellite.principal_spin_axis(flexible_satellite.build(panel, p))
    system = flexible_satellite.build(panel, p, axis)
    q0 = system.initial_coordinates()
    return (system, q0, system.rigid_motion_velocities(q0, p["spin_rate"] * axis),
            lambda q, v: system.momentum(q, v).angular)


def long_run(make, method: str, h: float, t_end: float, newton_tol: float) -> dict:
    """One run: CPU seconds, steps, max |C|, and the errors of E and L at the outputs."""
    system, q0, v0, momentum = make()
    options = {"newton_tol": newton_tol} if method == "rattle" else {}
    cpu = time.process_time()
    res = fm.run(system, q0=q0, v0=v0, method=method, h=h, t_end=t_end, dt_out=1.0, store=False, **options)
    cpu = time.process_time() - cpu
    E = res.energies["total"]
    L = np.array([momentum(q, v) for q, v in zip(res.q, res.v)])
    dL = np.linalg.norm(L - L[0], axis=1)
    C = max(float(np.abs(system.residual(t, q)).max()) for t, q in zip(res.t, res.q))
    return dict(t=res.t, dE=np.abs(E - E[0]), dL=dL, E0=float(E[0]), L0=float(np.linalg.norm(L[0])), cpu_s=cpu, n_steps=res.stats["n_steps"],
                max_C=C, status=res.status, message=res.message)


def tenths(t: np.ndarray, err: np.ndarray) -> tuple[float, float, float]:
    """(max over the run, over its first tenth, over its last tenth)."""
    t_end = t[-1]
    return float(err.max()), float(err[t <= 0.1 * t_end].max()), float(err[t >= 0.9 * t_end].max())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=("triple", "satellite", "both"), default="both")
    ap.add_argument("--t-end", type=float, default=1000.0)
    ap.add_argument("--t-end-satellite", type=float, default=None, help="default: --t-end")
    ap.add_argument("--h-triple", type=float, default=1e-2)
    ap.add_argument("--h-satellite", type=float, default=1e-2)
    ap.add_argument("--modes", type=int, default=2)
    ap.add_argument("--newton-tol", type=float, default=1e-10, help="rattle's newton_tol")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    cases = []
    if args.case in ("triple", "both"):
        cases.append(("triple pendulum (Euler parameters), L_z about A", triple, args.h_triple, args.t_end))
    if args.case in ("satellite", "both"):
        cases.append((f"free satellite ({args.modes} modes per panel, no static modes), |L|",
                      lambda: satellite(args.modes), args.h_satellite, args.t_end_satellite or args.t_end))
    print("| system | method | h [s] | t_end [s] | steps | CPU [s] | max abs(C) | max abs(dE) [J] | first tenth | "
          "last tenth | max abs(dL) [N m s] | first tenth | last tenth |")
    print("|---" * 13 + "|")
    saved = {}
    for label, make, h, t_end in cases:
        for m in METHODS:
            r = long_run(make, m, h, t_end, args.newton_tol)
            print(f"{label}, {m}: E(0) = {r['E0']:.6g} J, |L(0)| = {r['L0']:.6g} N m s", file=sys.stderr)
            if r["status"] != "finished":
                print(f"{label}, {m}: {r['message']}", file=sys.stderr)
            e, l_ = tenths(r["t"], r["dE"]), tenths(r["t"], r["dL"])
            print(f"| {label} | {m} | {h:g} | {r['t'][-1]:g} | {r['n_steps']} | {r['cpu_s']:.1f} | {r['max_C']:.1e} | "
                  + " | ".join(f"{x:.2e}" for x in e + l_) + " |", flush=True)
            saved.update({f"{label.split(' (')[0]}_{m}_{k}": r[k] for k in ("t", "dE", "dL")})
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        np.savez(args.out / "rattle_mq.npz", **saved)


if __name__ == "__main__":
    main()
