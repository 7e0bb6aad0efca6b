"""Time per implicit midpoint step of the kinematically driven slider-crank (cases/slider_crank.py).

    python benchmarks/bench_mechanism_step.py [--elements 8] [--repeats 3] [--generic]

The case's defaults: 8 planar beam elements (24 unknowns), two crank revolutions at 150 rad/s,
h = 1e-5 s shrunk to the 0.5-degree output grid (8640 steps).  Prints the median wall and
CPU (process) time per step of the solve, and the peak mid-span deflection as a check that
every variant computes the same motion.  ``--generic`` switches off the reduced n x n step
(option ``reduced=False``: the 2n x 2n system assembled from the formulation's Jacobian).
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))

import flexmbs as fm                                   # noqa: E402
import slider_crank as sc                              # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--generic", action="store_true", help="the 2n x 2n step (reduced=False)")
    a = ap.parse_args(argv)
    p = {**sc.DEFAULTS, "elements": a.elements}
    t_end = 2.0 * np.pi * p["revolutions"] / p["crank_speed"]
    phys = {k: p[k] for k in ("elements", "crank", "rod", "offset", "width", "youngs", "density", "crank_speed",
                              "slider_mass", "stiffening", "guide_correction")}
    opts = sc.solver_options(p, t_end)
    if a.generic:
        opts["reduced"] = False
    wall, cpu = [], []
    for _ in range(a.repeats):
        model = sc.build(**phys, t_end=t_end)        # a fresh model: no cached frame states
        c0 = time.process_time()
        res = fm.run(model, compute_energies=False, store=False, **opts)
        cpu.append((time.process_time() - c0) / res.stats["n_steps"])
        wall.append(res.stats["solve_s"] / res.stats["n_steps"])
    extras = {"crank_angle": np.array([model.crank(t)[0] for t in res.t]),
              "midspan_deflection": fm.mechanisms.chord_deflection(model, res.delta, [p["rod"] / 2])[:, 0]}
    value, angle = sc.peak(extras)
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}, "
          f"numpy {np.__version__}")
    print(f"slider-crank, {a.elements} elements ({model.n_dofs} DOFs, {2 * model.n_dofs} states), "
          f"{res.stats['n_steps']} midpoint steps{' (generic 2n x 2n)' if a.generic else ''}: "
          f"{1e6 * np.median(wall):.1f} us/step wall, {1e6 * np.median(cpu):.1f} us/step CPU "
          f"(median of {a.repeats}); peak mid-span deflection {1e3 * value:+.6f} mm at {angle:.3f} deg")


if __name__ == "__main__":
    main()
