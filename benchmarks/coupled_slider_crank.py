"""Timing of the coupled slider-crank (cases/slider_crank.py --coupled): 8 elements, two revolutions.

Prints the wall time of the integration, the steps, the time per step and a profile of where
the time goes (cumulative time of the main functions of a shorter run, cProfile).  Usage:

    PYTHONPATH=. python benchmarks/coupled_slider_crank.py [--revolutions R] [--elements N]
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))

import slider_crank  # noqa: E402

from flexmbs.mechanisms.coupled import integrate  # noqa: E402

PARTS = {"index3_alpha.py:_step_impl": "step (all)", "system.py:mass_matrix": "mass matrix",
         "system.py:forces": "forces (Q_v, elastic, loads)", "system.py:jacobian": "constraint Jacobian C_q",
         "system.py:residual": "constraint residual C", "index3_alpha.py:_tangents": "finite-difference K_t, C_t",
         "index3_alpha.py:_factor": "build + LU of the iteration matrix"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=8)
    ap.add_argument("--revolutions", type=float, default=2.0)
    ap.add_argument("--h", type=float, default=slider_crank.DEFAULTS["h_coupled"])
    ap.add_argument("--profile-revolutions", type=float, default=0.25, help="length of the profiled run")
    a = ap.parse_args(argv)
    system, _, _ = slider_crank.build_coupled(elements=a.elements)
    import numpy as np
    t_end = 2 * np.pi * a.revolutions / 150.0
    p = {**slider_crank.DEFAULTS}
    t_eval = slider_crank.solver_options(p, t_end)["t_eval"]
    tic, cpu = time.perf_counter(), time.process_time()
    sol = integrate(system, t_end, a.h, t_eval=t_eval)
    wall, cpu = time.perf_counter() - tic, time.process_time() - cpu
    print(f"{a.elements} elements, {a.revolutions:g} revolutions: {sol.n_steps} steps, wall {wall:.2f} s, CPU "
          f"{cpu:.2f} s, {1e3 * cpu / sol.n_steps:.2f} ms CPU per step ({sol.status})")
    t_prof = 2 * np.pi * a.profile_revolutions / 150.0
    prof = cProfile.Profile()
    prof.enable()
    integrate(system, t_prof, a.h, t_eval=t_eval[t_eval <= t_prof])
    prof.disable()
    stats = pstats.Stats(prof).stats
    total = None
    for (path, _, func), (_, _, _, ct, _) in stats.items():
        key = f"{Path(path).name}:{func}"
        if key in PARTS:
            if key.endswith("_step_impl"):
                total = ct
            print(f"  {PARTS[key]:38s} {ct:8.2f} s")
    if total:
        print(f"  (profiled run: cumulative times; the profiler adds overhead; step total {total:.2f} s)")


if __name__ == "__main__":
    main()
