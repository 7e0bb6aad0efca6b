"""Long runs of the coupled slider-crank: the whole command, and its reactions and ParaView export alone.

    python benchmarks/bench_onepass.py [--revolutions 2 40] [--rounds 3] [--checkout before=DIR ...]
    python benchmarks/bench_onepass.py --parts DIR/results.h5 [--checkout before=DIR ...]
    python benchmarks/bench_onepass.py --quick          # a smoke test of the script, not a measurement

Whole command: ``flexmbs -q run slider_crank --set coupled=true --set revolutions=R --no-plots
[--no-paraview]`` in a new interpreter per run under ``/usr/bin/time -f "%U %S %e %M"`` (user and
system CPU [s], wall [s], peak RSS [kB]), with the working directory at the checkout so that its
flexmbs comes first on sys.path (default: the checkout holding this script; ``--checkout
LABEL=DIR`` adds another, e.g. an older commit unpacked with ``git archive COMMIT | tar -x -C
DIR``).  Within a round the runs alternate between the checkouts, so the load of a shared machine
falls on all of them alike.

Parts (``--parts``): on the run "coupled" of a results file, in a new interpreter per checkout,
`System.reaction_history` of the five joints and `flexmbs.io.export_paraview`, each with its CPU
time (``time.process_time``) and its tracemalloc peak above what was allocated before the call,
per output (docs/benchmarks.md, sec. 11.5).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PARTS = r'''
import gc, sys, time, tracemalloc
root, h5, out = sys.argv[1:4]
sys.path[:0] = [root, root + "/cases"]
import slider_crank
from flexmbs import io
res = io.load_results(h5, "coupled")
system = slider_crank.build_coupled(elements=int(res.metadata["parameters"]["elements"]))[0]
names = ["drive"] + [c for c, _ in slider_crank.JOINT_BODIES]
n = len(res.t)
for label, call in (("reaction_history", lambda: system.reaction_history(res.t, res.q, res.multipliers, names)),
                    ("export_paraview", lambda: io.export_paraview(res, out))):
    tic = time.process_time()
    call()
    cpu = time.process_time() - tic
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    call()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    print(f"{label}: {n} outputs, CPU {cpu:.2f} s, peak {peak / n:.0f} B per output")
'''


def whole(label: str, checkout: Path, revolutions, paraview: bool, out: Path, quick: bool) -> str:
    """One line: label, revolutions, ParaView or not, then /usr/bin/time's user, sys, wall, peak RSS."""
    args = [sys.executable, "-m", "flexmbs", "-q", "run", "slider_crank", "--set", "coupled=true",
            "--set", f"revolutions={revolutions}", "--no-plots", "--out", str(out)]
    if quick:
        args += ["--set", "elements=2"]
    if not paraview:
        args.append("--no-paraview")
    timed = subprocess.run(["/usr/bin/time", "-f", "%U %S %e %M", *args], cwd=checkout, capture_output=True,
                           text=True, check=True)
    series = "ParaView" if paraview else "none"
    return f"{label:>8} {revolutions:>6} {series:>8}  {timed.stderr.strip().splitlines()[-1]}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--revolutions", type=float, nargs="+", default=[2, 40])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--checkout", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--parts", type=Path, metavar="RESULTS_H5")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    checkouts = {"this": ROOT}
    for given in args.checkout:
        label, _, where = given.partition("=")
        if not (label and where and (Path(where) / "flexmbs" / "__init__.py").is_file()):
            parser.error(f"`--checkout` must be LABEL=DIR with DIR a flexmbs source tree (DIR/flexmbs/__init__.py), "
                         f"got {given!r}")
        checkouts[label] = Path(where).resolve()
    if args.parts is not None and not args.parts.is_file():
        parser.error("`--parts` must be a results file of the coupled slider-crank (DIR/results.h5), "
                     f"got {str(args.parts)!r}, which does not exist")
    if args.rounds < 1 or any(not r > 0 for r in args.revolutions):
        parser.error(f"`--rounds` must be at least 1 and `--revolutions` positive, got {args.rounds} and "
                     f"{args.revolutions}")
    with tempfile.TemporaryDirectory() as tmp:
        if args.parts is not None:
            for label, checkout in checkouts.items():
                done = subprocess.run([sys.executable, "-c", PARTS, str(checkout), str(args.parts.resolve()),
                                       str(Path(tmp) / label)], capture_output=True, text=True, check=True)
                print("\n".join(f"{label:>8} {line}" for line in done.stdout.splitlines()))
            return 0
        revolutions = [0.05] if args.quick else args.revolutions
        print(f"{'checkout':>8} {'revs':>6} {'series':>8}  user sys wall [s] peak RSS [kB]")
        for _ in range(args.rounds):
            for r in revolutions:
                for paraview in (True, False):
                    for label, checkout in checkouts.items():
                        print(whole(label, checkout, r, paraview, Path(tmp) / label, args.quick), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
