"""Time the five formulations of issue 13 on the three examples of seed 001 (cases/).

    OMP_NUM_THREADS=1 python benchmarks/bench_quasi_velocities.py [--t-end 50] [--rtol 1e-10] [--repeats 3]

For each example (cart pendulum, three free bodies, satellite with boom) and formulation
(lagrange, maggi, kane, volterra, volterra-reduced), the same DOP853 integration over
``--t-end`` seconds at ``--rtol`` (atol = rtol / 100) from the same initial state:

- ``cpu_s``: CPU time of the integration (``time.process_time``, robust to other work on the
  machine; the time spent in the work integral of the energy check is excluded), the smallest
  of ``--repeats`` runs;
- ``n_rhs``: evaluations of the equations of motion (the step count follows the accuracy, which
  differs a little between formulations because their state variables differ);
- ``per_rhs_us``: cpu_s / n_rhs, the cost of one evaluation [microseconds];
- ``rhs_us``: the cost of one evaluation measured alone at the initial state (mean over at
  least 0.3 s of calls, smallest of the repeats).

The paper reports 0.48-1.93 s per run in MATLAB (ode45 with fixed output steps).  Prints a
Markdown table.
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import cart_pendulum  # noqa: E402
import satellite_boom  # noqa: E402
import three_bodies  # noqa: E402

from flexmbs.formulation_comparison import run_formulation  # noqa: E402
from flexmbs.formulations.multibody_forms import FORMULATION_NAMES, make_formulation  # noqa: E402

EXAMPLES = {"cart pendulum": (cart_pendulum, 0.01), "three bodies": (three_bodies, 0.1),
            "satellite": (satellite_boom, 0.1)}


def rhs_time(model, name: str, repeats: int) -> float:
    """Mean seconds of one rhs evaluation at the initial state, smallest of the repeats."""
    form = make_formulation(name, model.system, Y=model.Y, Y_reduced=model.Y_reduced, ignorable=model.ignorable)
    x0 = form.state0()
    best = np.inf
    for _ in range(repeats):
        n, start = 0, time.process_time()
        while time.process_time() - start < 0.3:
            form.rhs(0.0, x0)
            n += 1
        best = min(best, (time.process_time() - start) / n)
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=50.0)
    parser.add_argument("--rtol", type=float, default=1e-10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}")
    print(f"# DOP853, rtol = {args.rtol:g}, t_end = {args.t_end:g} s, smallest of {args.repeats} runs\n")
    print("| example | formulation | states | equations | n_rhs | cpu_s | per_rhs_us | rhs_us |")
    print("|---|---|---|---|---|---|---|---|")
    for label, (case, dt_out) in EXAMPLES.items():
        for name in FORMULATION_NAMES:
            best, summ = np.inf, None
            for _ in range(args.repeats):
                _, s = run_formulation(case.build(), name, rtol=args.rtol, t_end=args.t_end, dt_out=dt_out)
                if s["solve_cpu_s"] < best:
                    best, summ = s["solve_cpu_s"], s
            one = rhs_time(case.build(), name, args.repeats)
            print(f"| {label} | {name} | {summ['n_state_variables']} | {summ['n_equations']} | {summ['n_rhs']} | "
                  f"{best:.2f} | {1e6 * best / summ['n_rhs']:.0f} | {1e6 * one:.0f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
