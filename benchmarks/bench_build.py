"""Time and memory to build a Tet4 box `Model` (assembly only, fixed frame), one process per grid.

    python benchmarks/bench_build.py [--grids 40x8x8 90x18x18 200x40x40]
    python benchmarks/bench_build.py --quick          # a smoke test of the script, not a measurement

Each grid is a 1.0 x 0.2 x 0.2 m steel box of tetrahedra (`flexmbs.generate.box`, 6 per cell),
clamped at x = 0.  Printed per grid: elements, free DOFs, the build time of `flexmbs.Model`
[s] (wall clock), the peak of the Python/NumPy heap during the build [MB] (tracemalloc) and
the process's peak resident memory [MB] (ru_maxrss, so each grid runs in its own process),
then the log-log slopes of time and heap against the DOFs from the first grid to the last
(docs/benchmarks.md, section 12).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
import tracemalloc
from datetime import datetime, timezone
from pathlib import Path

import numpy as np


def build(nx: int, ny: int, nz: int) -> dict:
    """Build the box of an nx x ny x nz grid in this process; its sizes, time and memory."""
    import flexmbs as fm
    mesh = fm.generate.box(nx, ny, nz, 1.0, 0.2, 0.2, cell="tetra")
    tracemalloc.start()
    tic = time.perf_counter()
    model = fm.Model(mesh, fm.Tet4(fm.Material(2.1e11, 7800.0, 0.3)), fixed=[("xmin", "all")])
    seconds = time.perf_counter() - tic
    heap = tracemalloc.get_traced_memory()[1] / 2 ** 20
    tracemalloc.stop()
    return dict(grid=f"{nx} x {ny} x {nz}", elements=int(sum(len(c) for c in mesh.cells.values())),
                dofs=int(model.n_dofs), build_s=seconds, heap_mb=heap,
                rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def grid(text: str) -> tuple[int, int, int]:
    """'40x8x8' -> (40, 8, 8)."""
    try:
        nx, ny, nz = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a grid is three cell counts like 40x8x8, got {text!r}") from None
    if min(nx, ny, nz) < 1:
        raise argparse.ArgumentTypeError(f"a grid needs at least one cell in each direction, got {text!r}")
    return nx, ny, nz


def same_flexmbs() -> dict:
    """The environment of a grid's process: this one's, with the directory of the flexmbs this
    process imports first on PYTHONPATH (a worktree's copy, not another installed one)."""
    import flexmbs
    root = str(Path(flexmbs.__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grids", type=grid, nargs="+", default=[(40, 8, 8), (90, 18, 18), (200, 40, 40)])
    ap.add_argument("--quick", action="store_true", help="two small grids: a smoke test, not a measurement")
    ap.add_argument("--one", type=grid, help=argparse.SUPPRESS)         # one grid, in this process (JSON)
    a = ap.parse_args(argv)
    if a.one:
        print(json.dumps(build(*a.one)))
        return 0
    grids = [(4, 2, 2), (8, 2, 2)] if a.quick else a.grids
    args = sys.argv[1:] if argv is None else argv
    print(f"Measured: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"`python benchmarks/bench_build.py {' '.join(args)}`, {platform.machine()}, python "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}")
    rows = []
    for g in grids:
        out = subprocess.run([sys.executable, __file__, "--one", "x".join(map(str, g))], check=True,
                             capture_output=True, text=True, env=same_flexmbs()).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    print("\n| grid | elements | free DOFs | build [s] | heap peak [MB] | RSS [MB] |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['grid']} | {r['elements']} | {r['dofs']} | {r['build_s']:.3g} | {r['heap_mb']:.0f} | "
              f"{r['rss_mb']:.0f} |")
    if len(rows) > 1:
        span = np.log(rows[-1]["dofs"] / rows[0]["dofs"])
        print(f"\nlog-log slopes from {rows[0]['dofs']} to {rows[-1]['dofs']} DOFs: time "
              f"{np.log(rows[-1]['build_s'] / rows[0]['build_s']) / span:.2f}, heap "
              f"{np.log(rows[-1]['heap_mb'] / rows[0]['heap_mb']) / span:.2f}")
    if a.quick:
        print("quick mode: a smoke test of the script, not a measurement (run without --quick)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
