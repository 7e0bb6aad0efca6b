"""The controlled pendulum (cases/controlled_pendulum.py) three ways: a sampled PD `Controller`, the same
PD law as a load of the state (the old way), and a torque of time only of the same size.

    python benchmarks/bench_controlled_pendulum.py [--repeats 3] [--h 2.5e-4 1e-3]
    python benchmarks/bench_controlled_pendulum.py --quick     # a smoke test of the script, not a measurement
    python benchmarks/bench_controlled_pendulum.py --ways sampled feedforward   # without the slow numpy path

Each run is the case's `run` at its defaults (3 s, 1 kHz sampling) but for ``h`` and ``control``
("sampled", "continuous", "feedforward"), without output files; printed per step size and way: the
path index3-alpha took, the steps, the samples, the CPU time of `flexmbs.run`'s integration
(``stats["solve_s"]``, the least of ``--repeats`` runs; the machine is shared) and the ratio to the
run with the torque of time only.  docs/benchmarks.md, section 15.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))

import controlled_pendulum  # noqa: E402

WAYS = ("sampled", "feedforward", "continuous")


def measure(h: float, control: str, repeats: int, t_end: float) -> dict:
    """The least solve time of ``repeats`` runs of the case with step ``h`` and torque ``control``."""
    best = None
    for _ in range(repeats):
        s = controlled_pendulum.run(h=h, control=control, t_end=t_end, plots=False)["summary"]
        if best is None or s["solve_s"] < best["solve_s"]:
            best = s
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--h", type=float, nargs="+", default=[2.5e-4, 1e-3])
    parser.add_argument("--quick", action="store_true", help="0.05 s runs, one repeat: a smoke test")
    parser.add_argument("--ways", nargs="+", choices=WAYS, default=list(WAYS),
                        help="which torques to run (feedforward is always run: the ratios' base)")
    args = parser.parse_args(argv)
    t_end = 0.05 if args.quick else controlled_pendulum.DEFAULTS["t_end"]
    repeats = 1 if args.quick else args.repeats
    print(f"Measured: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"`{' '.join(['python', 'benchmarks/bench_controlled_pendulum.py', *(argv or sys.argv[1:])])}`, "
          f"{platform.machine()}, python {platform.python_version()}, numpy {np.__version__}, load average "
          f"{os.getloadavg()[0]:.1f}; CPU time of the integration, least of {repeats} run(s)")
    print()
    print("| h [s] | torque | path | steps | samples | solve [s] | per step [us] | / time-only |")
    print("|---:|---|---|---:|---:|---:|---:|---:|")
    for h in args.h:
        rows = {way: measure(h, way, repeats, t_end) for way in WAYS if way in args.ways or way == "feedforward"}
        base = rows["feedforward"]["solve_s"]
        for way, s in rows.items():
            print(f"| {s['h_used']:g} | {way} | {s['kernel']} | {s['n_steps']} | {s['samples']} | {s['solve_s']:.3f} | "
                  f"{1e6 * s['solve_s'] / max(s['n_steps'], 1):.1f} | {s['solve_s'] / base:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
