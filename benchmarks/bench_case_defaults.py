"""The multibody cases with accuracy targets at their defaults (issue 25, item 4): error and time per run.

    python benchmarks/bench_case_defaults.py [--repeats 3]

Runs ``run(plots=False)`` of cases/andrews_squeezer.py, cases/double_four_bar.py and
cases/pendulum_a01.py at their DEFAULTS (no output directory: the integration, the references and
the summary) and prints the error each reaches against its target, the steps, and the CPU time
(process time) and wall time per run, median of the repeats.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import andrews_squeezer  # noqa: E402
import double_four_bar  # noqa: E402
import pendulum_a01  # noqa: E402


def error_of(name: str, s: dict) -> float:
    """The error the case's target is stated for (its summary)."""
    if name == "andrews_squeezer":
        return s["error_0.03"]
    if name == "pendulum_a01":
        return s["max_error_P1"]
    return max(max(e.values()) for e in s["errors_at_target_times"].values())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    print("| case | method | error reached | target | steps | CPU per run [s] | wall per run [s] |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, case in (("andrews_squeezer", andrews_squeezer), ("double_four_bar", double_four_bar),
                       ("pendulum_a01", pendulum_a01)):
        cpu, wall = [], []
        for _ in range(args.repeats):
            c, w = time.process_time(), time.perf_counter()
            s = case.run(plots=False)["summary"]
            cpu.append(time.process_time() - c)
            wall.append(time.perf_counter() - w)
        p = s["parameters"]
        method = p.get("integrator", "index3-alpha")
        method += f" h = {p['h']:g}" if method in ("index3-alpha", "rattle") else f" rtol = {p['rtol']:g}"
        print(f"| {name} | {method} | {error_of(name, s):.2e} | {s['accuracy_target']:g} | {s['n_steps']} | "
              f"{statistics.median(cpu):.2f} | {statistics.median(wall):.2f} |")


if __name__ == "__main__":
    main()
