"""Cost per step of the IFToMM cases: index3-alpha, and the index-1 augmented route for Andrews' squeezer.

    python benchmarks/bench_iftomm.py [--repeats 3]

CPU time (process time) and wall time of `flexmbs.simulate` alone (no output processing),
per step, median of the repeats; the error of each run against its reference.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import andrews_squeezer  # noqa: E402
import bricard  # noqa: E402
import double_four_bar  # noqa: E402
import pendulum_a01  # noqa: E402

from flexmbs.formulations.index1 import Index1  # noqa: E402
from flexmbs.integrators import ConstrainedProblem, simulate  # noqa: E402


def runs():
    """(name, problem, x0, t_end, simulate options, error(sol))."""
    s, body = pendulum_a01.build()
    q = s.initial_coordinates()
    p = ConstrainedProblem(s)
    yield ("A01 pendulum, index3-alpha h = 1e-3, 10 s", p, p.state0(q, 0 * q), 10.0,
           dict(method="index3-alpha", h=1e-3),
           lambda sol: np.abs(sol.x[-1, :2] - pendulum_a01.exact([10.0])[0]).max())
    s, q0, v0, crank = double_four_bar.build()
    p = ConstrainedProblem(s)
    yield ("A02 double four-bar (N = 2), index3-alpha h = 1e-3, 10 s", p, p.state0(q0, v0), 10.0,
           dict(method="index3-alpha", h=1e-3),
           lambda sol: np.abs(crank.point(sol.x[-1, :3], np.array([0.5, 0.0]))
                              - double_four_bar.exact([0.0, 10.0])[0][-1]).max())
    s, _ = andrews_squeezer.build()
    q = s.initial_coordinates()
    p = ConstrainedProblem(s)

    def andrews_error(sol):
        return np.abs(andrews_squeezer.angles_of(s, sol.x[-1, :s.n_q]) - andrews_squeezer.Q_REF).max()
    yield ("A03 Andrews, index3-alpha h = 1e-5, 0.03 s", p, p.state0(q, 0 * q), 0.03,
           dict(method="index3-alpha", h=1e-5), andrews_error)
    yield ("A03 Andrews, index-1 augmented + DOP853 rtol 1e-10", Index1(s), np.concatenate([q, 0 * q]), 0.03,
           dict(method="DOP853", rtol=1e-10, atol=1e-13), andrews_error)
    s, rods = bricard.build()
    q = s.initial_coordinates()
    p = ConstrainedProblem(s)
    yield ("A04 Bricard, index3-alpha h = 1e-3, 1 s", p, p.state0(q, 0 * q), 1.0,
           dict(method="index3-alpha", h=1e-3, rho_inf=0.9), lambda sol: float("nan"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    print("| run | steps | CPU per step [us] | wall per step [us] | error |")
    print("|---|---:|---:|---:|---:|")
    for name, problem, x0, t_end, options, error in runs():
        cpu, wall = [], []
        for _ in range(args.repeats):
            c0, w0 = time.process_time(), time.perf_counter()
            sol = simulate(problem, (0.0, t_end), x0, t_eval=[0.0, t_end], **options)
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
        n = max(sol.n_steps, 1)
        print(f"| {name} | {sol.n_steps} | {1e6 * np.median(cpu) / n:.0f} | {1e6 * np.median(wall) / n:.0f} | "
              f"{error(sol):.2e} |", flush=True)


if __name__ == "__main__":
    main()
