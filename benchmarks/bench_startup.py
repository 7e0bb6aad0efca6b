"""CPU time of starting flexmbs: imports and short commands, each as a whole new process.

    python benchmarks/bench_startup.py [--rounds 5] [--checkout before=DIR ...]
    python benchmarks/bench_startup.py --quick          # a smoke test of the script, not a measurement

Each command runs in a new interpreter with the flexmbs of a checkout first on PYTHONPATH
(default: the checkout holding this script; ``--checkout LABEL=DIR`` adds another, e.g. an
older commit unpacked with ``git archive COMMIT | tar -x -C DIR``).  The time is the process's
CPU time, user + system (``resource.getrusage(RUSAGE_CHILDREN)`` around the child), the least
of ``--rounds`` rounds; within a round the commands and checkouts run in turns, so the load of
a shared machine falls on all of them alike.  ``python -c pass`` and ``import numpy`` are
measured in the same rounds as the yardsticks.

Two columns per checkout: ``source``, flexmbs compiled from its .py files at every start (no
.pyc, as with PYTHONDONTWRITEBYTECODE=1 on the project's machine and an editable install), and
``.pyc``, every module's bytecode cached (PYTHONPYCACHEPREFIX, warmed once), as after
``pip install``.  ``flexmbs run rotating_bar --no-plots`` runs the case at its default
parameters (results.h5, ParaView files, no PNG) into a temporary directory
(docs/benchmarks.md, "Start-up").
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def commands(out: Path, quick: bool) -> dict[str, list[str]]:
    """label -> the arguments of the interpreter."""
    run = ["-m", "flexmbs", "run", "rotating_bar", "--no-plots", "--out", str(out)]
    if quick:
        run += ["--set", "elements=3", "--set", "t_end=1e-3", "--set", "dt_out=5e-4"]
    return {"python -c pass": ["-c", "pass"],
            "import numpy": ["-c", "import numpy"],
            "import flexmbs": ["-c", "import flexmbs"],
            "from flexmbs import Model, run": ["-c", "from flexmbs import Model, run"],
            "flexmbs --version": ["-m", "flexmbs", "--version"],
            "flexmbs cases": ["-m", "flexmbs", "cases"],
            "flexmbs run rotating_bar --no-plots": run}


def environment(checkout: Path, pyc: Path | None) -> dict:
    """The child's environment: the checkout's flexmbs first; bytecode cached under ``pyc`` or never written."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "OPENBLAS_NUM_THREADS": "1"}
    env.pop("PYTHONPYCACHEPREFIX", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if pyc is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env["PYTHONPYCACHEPREFIX"] = str(pyc)
    return env


def cpu_seconds(args: list[str], cwd: Path, env: dict) -> float:
    """User + system CPU time of one child process running ``python ARGS``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"`python {' '.join(args)}` in {cwd} failed ({proc.returncode}):\n{proc.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def checkout_arg(text: str) -> tuple[str, Path]:
    label, sep, directory = text.partition("=")
    if not sep or not label or not (Path(directory) / "flexmbs" / "__init__.py").is_file():
        raise argparse.ArgumentTypeError(f"--checkout expects LABEL=DIR with DIR/flexmbs/__init__.py, got {text!r}")
    return label, Path(directory).resolve()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="rounds; the least time of each is kept (default 5)")
    ap.add_argument("--checkout", action="append", type=checkout_arg, default=[], metavar="LABEL=DIR",
                    help="another source tree to measure (repeatable)")
    ap.add_argument("--quick", action="store_true", help="one round, a tiny run: checks the script only")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds must be at least 1, got {args.rounds}")
    rounds = 1 if args.quick else args.rounds
    checkouts = dict(args.checkout) | {"this": ROOT}
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.1f}, least of {rounds} rounds")
    with tempfile.TemporaryDirectory(prefix="bench_startup_") as tmp:
        tmp = Path(tmp)
        cmds = commands(tmp / "out", args.quick)
        modes = {"source": None, ".pyc": tmp / "pyc"}
        envs = {(c, m): environment(path, None if pyc is None else pyc / c) for c, path in checkouts.items()
                for m, pyc in modes.items()}
        for (c, m), env in envs.items():         # warm the bytecode caches (and the file system's)
            for argv_ in cmds.values():
                cpu_seconds(argv_, checkouts[c], env)
        best = {}
        for _ in range(rounds):
            for label, argv_ in cmds.items():
                for (c, m), env in envs.items():
                    t = cpu_seconds(argv_, checkouts[c], env)
                    best[label, c, m] = min(best.get((label, c, m), float("inf")), t)
    columns = [(c, m) for c in checkouts for m in modes]
    print("\n| command | " + " | ".join(f"{c}, {m} [s]" for c, m in columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for label in cmds:
        print(f"| `{label}` | " + " | ".join(f"{best[label, c, m]:.3f}" for c, m in columns) + " |")
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
