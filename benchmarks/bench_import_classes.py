"""The dataclasses a command creates at import, what each costs, and the command's CPU in alternation.

    python benchmarks/bench_import_classes.py [--checkout LABEL=DIR ...] [--rounds 15] [--row triple-index3]

For each checkout (default: this one, ``this=.``), in processes with the bytecode cache warm
(`bench_whole_process.flexmbs_env`: PYTHONPATH=DIR, one BLAS thread, a .pyc cache):

1. the row's ``python -m flexmbs run ...`` command with ``dataclasses._process_class`` timed
   (perf_counter around each call): the classes created and the time of each, the least of three
   runs of the total;
2. the flexmbs.* modules' own import times (``-X importtime``, the sum of their self times, least
   of ``--rounds``);
3. the command's CPU time (user + system, ``os.wait4``) in strict alternation of the checkouts,
   ``--rounds`` each: least, lower quartile and median.

Why: Python 3.11 compiles each dataclass's generated methods with ``exec`` at every import (the
bytecode cache does not hold them); docs/design.md "Hot-import classes are plain classes".
"""
from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_whole_process as whole  # noqa: E402

# run in the child: time every dataclass created, then run the command as `python -m flexmbs` would
PROBE = """
import atexit, dataclasses, runpy, sys, time
made = []
process_class = dataclasses._process_class
def timed(cls, *args, **kwargs):
    t0 = time.perf_counter()
    result = process_class(cls, *args, **kwargs)
    made.append((time.perf_counter() - t0, cls.__module__ + "." + cls.__qualname__))
    return result
dataclasses._process_class = timed
atexit.register(lambda: print(repr(made), file=sys.stderr))
sys.argv = ["flexmbs"] + sys.argv[1:]
runpy.run_module("flexmbs", run_name="__main__")
"""


def created_classes(args: list[str], cwd: Path, env: dict) -> list[tuple[float, str]]:
    """(seconds, module.Class) of each dataclass the command created."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *args[2:]], cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"the probed command failed in {cwd}: {proc.stderr.strip().splitlines()[-1:]}")
    return eval(proc.stderr.strip().splitlines()[-1])  # noqa: S307 - our own repr of a list of tuples


def own_import_ms(args: list[str], cwd: Path, env: dict) -> float:
    """The sum of the flexmbs.* modules' self import times [ms] (``-X importtime``)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", *args], cwd=cwd, env=env, capture_output=True, text=True)
    return sum(int(m.group(1)) for m in re.finditer(r"import time:\s+(\d+) \|\s+\d+ \|\s+flexmbs", proc.stderr)) / 1e3


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", action="append", type=whole.checkout_arg, default=None,
                        help="LABEL=DIR of a checkout to measure (repeatable; default this=the checkout of this file)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--row", default="triple-index3", choices=sorted(whole.ROWS))
    ns = parser.parse_args(argv)
    checkouts = dict(ns.checkout or [("this", whole.ROOT)])
    row = whole.ROWS[ns.row]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        envs = {k: whole.flexmbs_env(d, tmp / f"pyc_{k}") for k, d in checkouts.items()}
        args = {k: row.flexmbs_args(tmp / f"out_{k}") for k in checkouts}
        for k, d in checkouts.items():
            whole.run_process(args[k], d, envs[k])                        # warm: bytecode and file cache
            runs = [created_classes(args[k], d, envs[k]) for _ in range(3)]
            best = min(runs, key=lambda made: sum(t for t, _ in made))
            print(f"{k}: {len(best)} dataclasses created, {sum(t for t, _ in best) * 1e3:.1f} ms "
                  "(least of 3 runs' totals):")
            for t, name in sorted(best, reverse=True):
                print(f"    {t * 1e3:5.2f} ms  {name}")
        imports = {k: [] for k in checkouts}
        cpu = {k: [] for k in checkouts}
        for _ in range(ns.rounds):
            for k, d in checkouts.items():
                imports[k].append(own_import_ms(args[k], d, envs[k]))
                seconds, _, failed = whole.run_process(args[k], d, envs[k])
                if failed:
                    raise SystemExit(f"{k}: {failed}")
                cpu[k].append(seconds)
        for k in checkouts:
            q = statistics.quantiles(cpu[k], n=4)
            print(f"{k}: flexmbs.* own imports {min(imports[k]):.1f} ms (least of {ns.rounds}); CPU least "
                  f"{min(cpu[k]):.3f} / lower quartile {q[0]:.3f} / median {statistics.median(cpu[k]):.3f} s")
    print(f"load average at the end {whole.load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
