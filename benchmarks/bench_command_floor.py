"""The floor of a command: the interpreter and the imports a run needs, against a whole row of bench_whole_process.

    python benchmarks/bench_command_floor.py [--row slider-crank] [--rounds 9] [--no-exudyn]

Times, in turns over ``--rounds`` rounds (the least CPU of each kept, as bench_whole_process.py
does, with the same bytecode cache and one BLAS thread), the processes

- ``python -c pass``: the interpreter;
- ``python -c "import numpy"`` and ``"import numpy, h5py"``: the core dependencies every run with a
  results file imports;
- the same with the flexmbs modules a compiled System run imports (`RUN_MODULES`);
- the row's flexmbs command and, with Exudyn installed, its Exudyn script,

so that a target for the whole command can be set against what no change inside flexmbs removes
(docs/benchmarks.md 20.10, "Where the slider-crank's target stands").
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_whole_process as whole  # noqa: E402

#: what `flexmbs run` of a compiled System case imports besides numpy and h5py
RUN_MODULES = ("flexmbs.system", "flexmbs.compiled", "flexmbs.integrators", "flexmbs.io.store", "flexmbs.analysis",
               "flexmbs.cli")


def commands(row: str, out: Path, exudyn: bool) -> dict[str, tuple[list[str], dict]]:
    """{label: (python's arguments, environment)} of the processes timed."""
    env = whole.flexmbs_env(whole.ROOT, out / "pycache")
    jobs = {"python": (["-c", "pass"], env), "+ numpy": (["-c", "import numpy"], env),
            "+ numpy, h5py": (["-c", "import numpy, h5py"], env),
            "+ numpy, h5py, flexmbs run modules": (["-c", "import numpy, h5py, " + ", ".join(RUN_MODULES)], env),
            f"flexmbs {row}": (whole.ROWS[row].flexmbs_args(out / "run"), env)}
    if exudyn:
        jobs[f"Exudyn {row}"] = (whole.exudyn_args(row, out / "exudyn", whole.ROWS[row].exudyn_h, whole.ROWS[row].plots),
                                 whole.exudyn_env(out / "pycache"))
    return jobs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--row", type=lambda text: whole.rows_arg(text)[0], default="slider-crank",
                    help=f"a row of bench_whole_process.py ({', '.join(whole.ROWS)})")
    ap.add_argument("--rounds", type=int, default=9,
                    help="rounds; the least CPU of each process is kept (default 9)")
    ap.add_argument("--no-exudyn", dest="exudyn", action="store_false", help="leave Exudyn's script out")
    a = ap.parse_args(argv)
    if a.rounds < 1:
        ap.error(f"--rounds expects a positive integer, got {a.rounds}")
    exudyn = a.exudyn and whole.exudyn_version() is not None
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, load average {os.getloadavg()[0]:.1f}; "
          f"least of {a.rounds} rounds, in turns")
    with tempfile.TemporaryDirectory() as tmp:
        jobs = commands(a.row, Path(tmp), exudyn)
        best = {label: float("inf") for label in jobs}
        for label, (args, env) in jobs.items():                  # warm-up: the bytecode and the file cache
            _, _, failed = whole.run_process(args, whole.ROOT, env)
            if failed:
                raise SystemExit(f"{label}: {failed}")
        for _ in range(a.rounds):
            for label, (args, env) in jobs.items():
                cpu, _, failed = whole.run_process(args, whole.ROOT, env)
                if failed:
                    raise SystemExit(f"{label}: {failed}")
                best[label] = min(best[label], cpu)
    print("| process | CPU [s] |\n|---|---:|")
    for label, cpu in best.items():
        print(f"| {label} | {cpu:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
