"""Lagrange against Hamilton on the coupled slider-crank at matched measured error (issue 23, item 4).

    python benchmarks/bench_lagrange_hamilton.py [--steps 1e-4 5e-5 2.5e-5] [--revolutions 2]
    python benchmarks/bench_lagrange_hamilton.py --quick      # a smoke test of the script, not a measurement

A tight reference (Lagrange's index-3 DAE by index3-alpha, compiled, at h = 5e-5 / 16 s before alignment) and,
at each step of ``--steps``: Lagrange's index-3 DAE by index3-alpha (compiled and numpy), Lagrange's index-1
equations and Hamilton's canonical equations by the implicit midpoint rule.  Printed per run (one JSON line):
the peak mid-span deflection, its error and the largest deflection error over the outputs (both relative to
the reference's peak), CPU time, steps, evaluations, Jacobians and factorizations
(`bench_formulations_system.measure`).  docs/benchmarks.md, section 18.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_formulations_system import measure  # noqa: E402

SPECS = ("index3:index3-alpha", "index3:index3-alpha:numpy", "lagrange:midpoint", "hamilton:midpoint")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", nargs="+", type=float, default=[1e-4, 5e-5, 2.5e-5])
    parser.add_argument("--runs", nargs="+", default=list(SPECS), help="formulation:method[:kernel] ...")
    parser.add_argument("--revolutions", type=float, default=2.0)
    parser.add_argument("--quick", action="store_true", help="0.01 revolution, one step (a smoke test)")
    args = parser.parse_args(argv)
    revolutions, steps = (0.01, args.steps[:1]) if args.quick else (args.revolutions, args.steps)
    ref = measure("index3:index3-alpha", revolutions, 5e-5 / 16, history=True)
    w_ref, peak_ref = ref.pop("w"), ref["peak_mm"] * 1e-3
    print(json.dumps(dict(ref, run="reference " + ref["run"], h=5e-5 / 16)), flush=True)
    for h in steps:
        for spec in args.runs:
            row = measure(spec, revolutions, h, history=True)
            w = row.pop("w")
            row.update(h=h, peak_error=abs(row["peak_mm"] * 1e-3 - peak_ref) / abs(peak_ref),
                       max_error=float(np.abs(w - w_ref).max() / abs(peak_ref)))
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
