"""Time the five formulations of issue 13 on the three examples of seed 001 (cases/).

    OMP_NUM_THREADS=1 python benchmarks/bench_quasi_velocities.py [--t-end 50] [--rtol 1e-10] [--repeats 3]

For each example (cart pendulum, three free bodies, satellite with boom) and formulation
(lagrange, maggi, kane, volterra, volterra-reduced), the same DOP853 integration over
``--t-end`` seconds at ``--rtol`` (atol = rtol / 100) from the same initial state:

- ``cpu_s``: CPU time of the integration (``time.process_time``, robust to other work on the
  machine): `simulate` of the formulation built by the registry with the case's options
  (`system_formulation`, cases/_comparison.py's `registry_formulation`), without the outputs'
  post-processing, the results file or the work integral of the energy check, the smallest of
  ``--repeats`` runs;
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
from _comparison import FORMULATIONS, equations_per_evaluation, registry_formulation  # noqa: E402

from flexmbs.analysis import output_times  # noqa: E402
from flexmbs.formulations.registry import system_formulation  # noqa: E402
from flexmbs.integrators import simulate  # noqa: E402

EXAMPLES = {"cart pendulum": (cart_pendulum, 0.01), "three bodies": (three_bodies, 0.1),
            "satellite": (satellite_boom, 0.1)}


def formulation(model, name: str):
    """The formulation ``name`` of the case's System with the case's quasi-velocities."""
    entry, options = registry_formulation(model, name, "DOP853")
    return system_formulation(entry, model.system, **options)


def integration(model, name: str, rtol: float, t_end: float, dt_out: float) -> tuple[float, object, object]:
    """(CPU seconds, Solution, formulation) of one DOP853 integration of the case's outputs."""
    form = formulation(model, name)
    x0 = form.state0()
    cpu = time.process_time()
    sol = simulate(form, (0.0, t_end), x0, method="DOP853", t_eval=output_times(t_end, dt_out), rtol=rtol,
                   atol=rtol * 1e-2)
    return time.process_time() - cpu, sol, form


def rhs_time(model, name: str, repeats: int) -> float:
    """Mean seconds of one rhs evaluation at the initial state, smallest of the repeats."""
    form = formulation(model, name)
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
        for name in FORMULATIONS:
            runs = [integration(case.build(), name, args.rtol, args.t_end, dt_out) for _ in range(args.repeats)]
            best, sol, form = min(runs, key=lambda r: r[0])
            n_equations = equations_per_evaluation(name, form, case.build().system)
            one = rhs_time(case.build(), name, args.repeats)
            print(f"| {label} | {name} | {form.n_state} | {n_equations} | {sol.n_rhs} | "
                  f"{best:.2f} | {1e6 * best / sol.n_rhs:.0f} | {1e6 * one:.0f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
