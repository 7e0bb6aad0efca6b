"""CPU time of the ParaView export of a System run (`flexmbs.io.export_paraview`: paraview.xdmf, its .h5
and paraview_final.vtu), checkouts against each other in the same minutes.

    python benchmarks/bench_paraview_export.py [--repeats 25] [--rounds 3] [--checkout before=DIR ...]

Two runs, made once per process: the triple pendulum (Euler parameters, index3-alpha, t_end 2 s, 201
outputs: three rigid boxes with their axes, three joints) and the coupled slider-crank (the case's
defaults, 1441 outputs: a floating-frame rod with its axial force between two rigid bodies).  Each
checkout's export runs in its own process (``PYTHONPATH=DIR``, so DIR/flexmbs and DIR/cases are
used): ``first`` is the process time of its first export (the writer's imports included but h5py's,
which ``flexmbs run`` has imported for results.h5 before: what that command pays; the triple
pendulum's, which runs first), ``least`` the least of ``--repeats`` more into the same directory;
bytecode cached (a temporary PYTHONPYCACHEPREFIX per checkout, written by an untimed first process).
The rounds run the checkouts in turns, so the load of a shared machine falls on all of them alike;
each column is the least over the rounds.  An older checkout: ``git archive COMMIT | tar -x -C DIR``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(sys.argv[1]) / "cases"))
import h5py                      # as in `flexmbs run`, which has written results.h5 before the export
import flexmbs as fm
repeats, out = int(sys.argv[2]), Path(sys.argv[3])


def triple():
    import triple_pendulum
    system = triple_pendulum.build("euler-parameters")
    return fm.run(system, formulation="index3", method="index3-alpha", h=1e-3, t_end=2.0, dt_out=0.01, store=False)


def slider_crank():
    import slider_crank
    return slider_crank.run(out=out / "case", coupled=True, plots=False)[0]


runs = {"triple pendulum": triple(), "coupled slider-crank": slider_crank()}
from flexmbs.io import export_paraview
times = {}
for name, results in runs.items():
    tic = time.process_time()
    export_paraview(results, out / name)
    first = time.process_time() - tic
    least = float("inf")
    for _ in range(repeats):
        tic = time.process_time()
        export_paraview(results, out / name)
        least = min(least, time.process_time() - tic)
    times[name] = {"outputs": len(results.t), "first": first, "least": least}
print(json.dumps(times))
"""


def measure(directory: Path, repeats: int, cache: Path) -> dict:
    """{run: {outputs, first, least}} of one process with the flexmbs of ``directory``, its bytecode
    read from (and at the first process written to) ``cache``, as an installed package's is."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(directory), OPENBLAS_NUM_THREADS="1", PYTHONPYCACHEPREFIX=str(cache))
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run([sys.executable, "-c", CHILD, str(directory), str(repeats), out], env=env,
                              cwd=directory, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def checkout_arg(text: str) -> tuple[str, Path]:
    label, _, directory = text.partition("=")
    if not label or not directory or not (Path(directory) / "flexmbs" / "__init__.py").is_file():
        raise argparse.ArgumentTypeError(f"--checkout expects LABEL=DIR with DIR/flexmbs/__init__.py, got {text!r}")
    return label, Path(directory).resolve()


def count_arg(option: str):
    """The type of an option that counts: an int of at least 1."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < 1:
            raise argparse.ArgumentTypeError(f"{option} must be an integer of at least 1, got {text!r}")
        return value
    return parse


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=count_arg("--repeats"), default=25, help="exports after the first, per process")
    ap.add_argument("--rounds", type=count_arg("--rounds"), default=3, help="processes per checkout, in turns")
    ap.add_argument("--checkout", type=checkout_arg, action="append", default=[],
                    help="LABEL=DIR: another checkout as a column (e.g. before=/tmp/before)")
    args = ap.parse_args(argv)
    checkouts = [*args.checkout, ("this", ROOT)]
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()}, {os.cpu_count()} cores, "
          f"python {platform.python_version()}, load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}; "
          f"process time, least of {args.rounds} rounds ({args.repeats} exports after the first in each)")
    best: dict = {}
    caches = {label: Path(tempfile.mkdtemp(prefix=f"pyc_{label}_")) for label, _ in checkouts}
    for label, directory in checkouts:                  # untimed: writes the bytecode, warms the file cache
        measure(directory, 1, caches[label])
    for _ in range(args.rounds):
        for label, directory in checkouts:
            for name, t in measure(directory, args.repeats, caches[label]).items():
                row = best.setdefault(name, {"outputs": t["outputs"]})
                for key in ("first", "least"):
                    row[label, key] = min(row.get((label, key), float("inf")), t[key])
    head = " | ".join(f"{label} {key} [ms]" for label, _ in checkouts for key in ("first", "least"))
    print(f"\n| run | outputs | {head} |\n|---|---:|" + "---:|" * (2 * len(checkouts)))
    for name, row in best.items():
        cells = " | ".join(f"{1e3 * row[label, key]:.1f}" for label, _ in checkouts for key in ("first", "least"))
        print(f"| {name} | {row['outputs']} | {cells} |")


if __name__ == "__main__":
    main()
