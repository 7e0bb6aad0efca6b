"""The coupled slider-crank's joint reactions, drive torque and works' integrand inside its command (issue 22).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_reactions.py [--rounds 3] [--warm 7] [--checkout LABEL=DIR ...]

For each checkout (default: the one holding this script; ``--checkout before=DIR`` adds e.g. an older
commit unpacked by ``git archive COMMIT | tar -x -C DIR``), in a new interpreter with DIR first on
sys.path: the command ``flexmbs run slider_crank -q --set coupled=true --no-plots`` run in-process with
`System.reaction_history` (the five joints and the drive torque, one call) and `System.power_history`
(the works' integrand at the step points, a few calls) timed by ``time.process_time`` as the command
meets them (first calls: fresh arrays), then ``reaction_history`` again on the run's outputs, the least
of ``--warm`` calls.  Each checkout's modules are read as bytecode from a cache of its own
(PYTHONPYCACHEPREFIX, written by an untimed first run), so that a lazy import inside a timed call
is not compiled there.  Rounds alternate between the checkouts; the least of each column is printed.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r'''
import sys, time
root, out, warm = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path[:0] = [root, root + "/cases"]
import flexmbs.system as S
spent = {"reaction_history": 0.0, "power_history": 0.0}
def timed(name):
    orig = getattr(S.System, name)
    def call(*args, **kwargs):
        tic = time.process_time()
        try:
            return orig(*args, **kwargs)
        finally:
            spent[name] += time.process_time() - tic
    setattr(S.System, name, call)
for name in spent:
    timed(name)
from flexmbs.cli import main
main(["run", "slider_crank", "-q", "--set", "coupled=true", "--no-plots", "--out", out])
command = dict(spent)
import slider_crank
from flexmbs import io
res = io.load_results(out + "/results.h5", "coupled")
system = slider_crank.build_coupled(elements=int(res.metadata["parameters"]["elements"]))[0]
names = ["drive"] + [c for c, _ in slider_crank.JOINT_BODIES]
times = []
for _ in range(warm):
    tic = time.process_time()
    system.reaction_history(res.t, res.q, res.multipliers, names)
    times.append(time.process_time() - tic)
print(f"{command['reaction_history']:.6f} {command['power_history']:.6f} {min(times):.6f} {len(res.t)}")
'''


def measure(root: Path, warm: int, pycache: str) -> list[float]:
    """[reaction_history in the command, power_history in the command, reaction_history warm, outputs]; the
    modules' bytecode read from (and at the first call written to) ``pycache``, as an installed package's."""
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONPYCACHEPREFIX=pycache)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        done = subprocess.run([sys.executable, "-c", CHILD, str(root), out, str(warm)], cwd=root, env=env,
                              capture_output=True, text=True, check=True)
    return [float(v) for v in done.stdout.split()[-4:]]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warm", type=int, default=7)
    parser.add_argument("--checkout", action="append", default=[], metavar="LABEL=DIR")
    args = parser.parse_args(argv)
    checkouts = [tuple(c.split("=", 1)) for c in args.checkout] + [("this", str(ROOT))]
    best = {label: None for label, _ in checkouts}
    with tempfile.TemporaryDirectory() as cache:
        pycache = {label: str(Path(cache) / label) for label, _ in checkouts}
        for label, root in checkouts:                       # untimed: writes the bytecode, warms the files
            measure(Path(root), 1, pycache[label])
        for _ in range(args.rounds):
            for label, root in checkouts:
                got = measure(Path(root), args.warm, pycache[label])
                best[label] = got if best[label] is None else [min(a, b) for a, b in zip(best[label], got)]
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"Measured: {stamp}, `benchmarks/bench_reactions.py --rounds {args.rounds} --warm {args.warm}`, "
          f"load average {os.getloadavg()[0]:.1f}; CPU [ms], the least of the rounds\n")
    print("| checkout | reaction_history in the command | power_history in the command | "
          "reaction_history warm | outputs |")
    print("|---|---:|---:|---:|---:|")
    for label, (react, power, warm, n) in best.items():
        print(f"| {label} | {1e3 * react:.1f} | {1e3 * power:.1f} | {1e3 * warm:.1f} | {int(n)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
