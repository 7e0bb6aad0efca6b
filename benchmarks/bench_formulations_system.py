"""The coupled slider-crank (cases/slider_crank.py --coupled, 8 elements, two revolutions) by each System
formulation: Lagrange (index-3 DAE "index3" and index-1 "lagrange"), Gibbs-Appell, Hamilton and Maggi.

    python benchmarks/bench_formulations_system.py [--runs index3:index3-alpha gibbs-appell:index3-alpha ...]
    python benchmarks/bench_formulations_system.py --quick     # a smoke test of the script, not a measurement

Each run is `flexmbs.run` of the case's System at the case's outputs (0.5 degree of crank angle) with the
step h = 5e-5 s (aligned to 2.91e-5 s) and, for index3-alpha, rho_inf = 0.9.  Printed per run (one JSON
line): the peak mid-span deflection and its crank angle (`slider_crank.peak`), the largest energy balance
error |E - E(t0) - W| in J (`Results.energy_balance_error`), the CPU time of the whole
`flexmbs.run` (process time: the machine is shared, wall time is not a measure), the steps, evaluations,
Jacobians and factorizations.  docs/benchmarks.md, section 18.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))

import slider_crank  # noqa: E402

import flexmbs as fm  # noqa: E402
from flexmbs.mechanisms import chord_deflection  # noqa: E402

RUNS = ("index3:index3-alpha", "index3:index3-alpha:numpy", "gibbs-appell:index3-alpha", "lagrange:midpoint",
        "gibbs-appell:midpoint", "hamilton:midpoint", "maggi:midpoint")


def measure(spec: str, revolutions: float, h: float, history: bool = False) -> dict:
    """One run of ``spec`` = "formulation:method[:kernel]" over ``revolutions`` turns of the crank (``history``:
    with the mid-span deflection at the outputs, "w" [m])."""
    name, method, *kernel = spec.split(":")
    p = dict(slider_crank.DEFAULTS, coupled=True, revolutions=revolutions)
    system, rod, model = slider_crank.build_coupled(elements=p["elements"])
    t_end = 2.0 * np.pi * revolutions / p["crank_speed"]
    options = dict(h=h)
    if method == "index3-alpha":
        options.update(rho_inf=p["rho_inf"], **({"kernel": kernel[0]} if kernel else {}))
    cpu, wall = time.process_time(), time.perf_counter()
    res = fm.run(system, formulation=name, method=method, t_end=t_end,
                 t_eval=slider_crank.solver_options(p, t_end)["t_eval"], store=False, **options)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    w = chord_deflection(model, res.bodies[rod.name].delta, [p["rod_length"] / 2])[:, 0]
    peak, angle = slider_crank.peak({"midspan_deflection": w, "crank_angle": p["crank_speed"] * res.t})
    balance = float(np.abs(res.energy_balance_error()).max())
    return dict(run=spec, status=res.status, peak_mm=1e3 * peak, angle_deg=angle, balance_J=balance, cpu_s=cpu,
                wall_s=wall,
                **{k: res.stats[k] for k in ("n_steps", "n_rhs", "n_jac", "n_lu")}, kernel=res.metadata.get("kernel"),
                **({"w": w} if history else {}))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", default=list(RUNS), help="formulation:method[:kernel] ...")
    parser.add_argument("--h", type=float, default=5e-5)
    parser.add_argument("--quick", action="store_true", help="0.01 revolution (a smoke test, not a measurement)")
    args = parser.parse_args(argv)
    for spec in args.runs:
        print(json.dumps(measure(spec, 0.01 if args.quick else 2.0, args.h)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
