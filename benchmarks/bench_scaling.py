"""Scaling of model building and implicit steps with the number of DOFs: bars and Tet4 solids.

    python benchmarks/bench_scaling.py [--kind bar solid] [--max-dofs 1e6] [--steps 5]

Each size runs in its own process (so that its peak resident memory is its own) and builds
the model on a spin-up frame (``motion.SpinUp``, geometric stiffening on: one SPD
factorization of K and one geometric stiffness per unit load case), then takes ``--steps``
implicit midpoint steps (Lagrange; the frame's omega changes at every step, so the n x n
Schur matrix changes at every step: for sparse models it is solved by Jacobi-preconditioned
BiCGSTAB, see flexmbs/integrators/midpoint.py).  Printed per size: DOFs, build time [s],
peak memory [MB] (tracemalloc: the Python/NumPy heap during the build; ru_maxrss: the whole
process, including SuperLU/CHOLMOD), time per step [s]; then the log-log slopes
(d log t / d log n) between consecutive sizes and over the whole range.

Bars: BeamEB2D cantilevers of n elements (3 DOFs per node), 10 .. 3e5 elements.
Solids: Tet4 boxes 1 x 0.2 x 0.2 m clamped at x = 0 (the grid refined in all directions).
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

import numpy as np

BAR_ELEMENTS = [10, 100, 1_000, 10_000, 100_000, 300_000]
SOLID_GRIDS = [(5, 1, 1), (10, 2, 2), (20, 4, 4), (40, 8, 8), (62, 13, 13), (90, 18, 18), (130, 26, 26),
               (200, 40, 40)]                # 60 .. 1.01e6 DOFs


def _solid_dofs(g):
    nx, ny, nz = g
    return 3 * (nx + 1) * (ny + 1) * (nz + 1)


def one(kind: str, size, steps: int, h: float) -> dict:
    import flexmbs as fm
    steel = fm.Material(2.1e11, 7800.0, 0.3)
    motion = fm.motion.SpinUp(10.0, 1.0)
    tracemalloc.start()
    tic = time.perf_counter()
    if kind == "bar":
        mesh = fm.generate.line(int(size), 1.0)
        md = fm.Model(mesh, fm.BeamEB2D(steel, 1e-4, 1e-9), motion=motion, fixed=[("start", "all")])
    else:
        mesh = fm.generate.box(*size, 1.0, 0.2, 0.2, cell="tetra")
        md = fm.Model(mesh, fm.Tet4(steel), motion=motion, fixed=[("xmin", "all")])
    build = time.perf_counter() - tic
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    out = dict(kind=kind, size=size, dofs=md.n_dofs, build_s=build, peak_heap_MB=peak,
               rss_build_MB=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    if steps:
        res = fm.run(md, formulation="lagrange", method="midpoint", h=h, t_end=steps * h, dt_out=steps * h,
                     compute_energies=False)
        out["step_s"] = res.stats["solve_s"] / res.stats["n_steps"]
        out["n_lu"] = res.stats["n_lu"]
        out["rss_MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _slopes(rows, key):
    n = np.array([r["dofs"] for r in rows], float)
    y = np.array([r.get(key, np.nan) for r in rows], float)
    ok = np.isfinite(y) & (y > 0)
    n, y = n[ok], y[ok]
    if len(n) < 2:
        return [], float("nan")
    local = list(np.diff(np.log(y)) / np.diff(np.log(n)))
    return local, float(np.diff(np.log(y[[0, -1]]))[0] / np.diff(np.log(n[[0, -1]]))[0])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kind", nargs="+", default=["bar", "solid"], choices=["bar", "solid"])
    p.add_argument("--max-dofs", type=float, default=1.1e6)
    p.add_argument("--min-dofs", type=float, default=0)
    p.add_argument("--steps", type=int, default=5, help="implicit steps timed per size (0: none)")
    p.add_argument("--h", type=float, default=1e-5, help="step [s]")
    p.add_argument("--timeout", type=float, default=3000, help="seconds allowed per size")
    p.add_argument("--one", nargs=2, metavar=("KIND", "SIZE"), help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.one:
        kind, size = a.one
        size = int(size) if kind == "bar" else tuple(int(s) for s in size.split("x"))
        print(json.dumps(one(kind, size, a.steps, a.h)))
        return
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    for kind in a.kind:
        sizes = BAR_ELEMENTS if kind == "bar" else SOLID_GRIDS
        rows = []
        print(f"\n{kind}: {'DOFs':>9s} {'build s':>9s} {'heap MB':>9s} {'RSS MB':>9s} {'step s':>10s}")
        for size in sizes:
            dofs = 3 * (size + 1) if kind == "bar" else _solid_dofs(size)
            if dofs > a.max_dofs or dofs < a.min_dofs:
                continue
            arg = str(size) if kind == "bar" else "x".join(map(str, size))
            cmd = [sys.executable, __file__, "--one", kind, arg, "--steps", str(a.steps), "--h", str(a.h)]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
            except subprocess.TimeoutExpired:
                print(f"{kind}: {dofs:9d}  more than {a.timeout:g} s: stopped")
                break
            if proc.returncode != 0:
                print(f"{kind}: {dofs:9d}  failed: {proc.stderr.strip().splitlines()[-1:]}")
                break
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            rows.append(r)
            print(f"{kind}: {r['dofs']:9d} {r['build_s']:9.3f} {r['peak_heap_MB']:9.1f} "
                  f"{r.get('rss_MB', r['rss_build_MB']):9.1f} {r.get('step_s', float('nan')):10.4g}", flush=True)
        for key in ("build_s", "peak_heap_MB", "step_s"):
            local, total = _slopes(rows, key)
            print(f"{kind}: log-log slope of {key}: {total:.2f} overall; between sizes "
                  + " ".join(f"{s:.2f}" for s in local))


if __name__ == "__main__":
    main()
