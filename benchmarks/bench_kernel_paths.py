"""CPU time per step of index3-alpha on the numpy path and on the compiled kernel, in one run, for
the systems the kernel took on in issue 22 item 4: Andrews' squeezer (IFToMM A03: a motor torque
and a spring to the ground on planar bodies), h = 1e-5 s over 0.03 s.

    python benchmarks/bench_kernel_paths.py [--repeats 3]
    python benchmarks/bench_kernel_paths.py --quick     # a smoke test of the script, not a measurement

Printed per path: the steps, LUs, the median CPU time (process time) of `flexmbs.simulate` per step
over ``--repeats`` runs, and the error of q(0.03) against the published reference (Hairer and
Wanner's test set, ``andrews_squeezer.Q_REF``).  docs/benchmarks.md, section 7.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import andrews_squeezer  # noqa: E402

from flexmbs.integrators import ConstrainedProblem, simulate  # noqa: E402


def measure(kernel: str, repeats: int, t_end: float) -> dict:
    """Median CPU seconds per step of ``repeats`` runs of Andrews' squeezer on path ``kernel``."""
    system, _ = andrews_squeezer.build()
    problem = ConstrainedProblem(system)
    q0 = system.initial_coordinates()
    x0 = problem.state0(q0, 0 * q0)
    times, sol = [], None
    for _ in range(repeats):
        tic = time.process_time()
        sol = simulate(problem, (0.0, t_end), x0, method="index3-alpha", h=1e-5, kernel=kernel)
        times.append(time.process_time() - tic)
    error = np.abs(andrews_squeezer.angles_of(system, sol.x[-1, :system.n_q]) - andrews_squeezer.Q_REF).max()
    return dict(path=sol.kernel, steps=sol.n_steps, lu=sol.n_lu, per_step=float(np.median(times)) / sol.n_steps,
                error=float(error), status=sol.status)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="3 ms runs, one repeat: a smoke test")
    args = parser.parse_args(argv)
    t_end, repeats = (3e-3, 1) if args.quick else (0.03, args.repeats)
    print(f"Measured: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"`{' '.join(['python', 'benchmarks/bench_kernel_paths.py', *(argv or sys.argv[1:])])}`, "
          f"{platform.machine()}, python {platform.python_version()}, numpy {np.__version__}, load average "
          f"{os.getloadavg()[0]:.1f}; CPU time of simulate, median of {repeats} run(s)")
    print()
    print("| run | path | steps | LUs | CPU per step [us] | error of q(t_end) [rad] |")
    print("|---|---|---:|---:|---:|---:|")
    for kernel in ("numpy", "compiled"):
        r = measure(kernel, repeats, t_end)
        print(f"| A03 Andrews' squeezer, h = 1e-5 s, {t_end:g} s | {r['path']} | {r['steps']} | {r['lu']} | "
              f"{1e6 * r['per_step']:.1f} | {r['error']:.3g} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
