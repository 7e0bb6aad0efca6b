"""Scaling of model building and implicit steps with the number of DOFs: bars and Tet4 solids.

    python benchmarks/bench_scaling.py [--kind bar solid] [--max-dofs 1e6] [--steps 5]
        [--linear-solver auto|iterative|reuse|direct] [--t0 0.5] [--formulation lagrange]

Each size runs in its own process (so that its peak resident memory is its own) and builds
the model on a spin-up frame (``motion.SpinUp(10 rad/s, 1 s)``, geometric stiffening on: one
SPD factorization of K and one geometric stiffness per unit load case), then takes ``--steps``
implicit midpoint steps (``--formulation``: "lagrange", the default, or "hamilton") from ``--t0`` (default 0.5 s, mid spin-up, where the frame
changes the step matrix at every step), with the midpoint option ``linear_solver`` given by
``--linear-solver`` (flexmbs/integrators/sparse_step.py).  Each step is timed on its own, in
CPU time of the process.  Printed per size: DOFs, build time [s], peak memory [MB]
(tracemalloc: the Python/NumPy heap during the build; ru_maxrss: the whole process,
including SuperLU/CHOLMOD), the steady time per step [s] (median of the steps after the
first), the CPU time of the factorizations [s] (one-time), the first step [s], the time per
step with setup and factorizations amortised over the steps [s], the Krylov iterations
per step, and the steady wall-clock time per step [s] (what threads shorten); then the
log-log slopes (d log t / d log n) between consecutive sizes and over the whole range.

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


def steel():
    import flexmbs as fm
    return fm.Material(2.1e11, 7800.0, 0.3)


def spin_up():
    """The frame of the runs: ``SpinUp(10 rad/s, 1 s)``."""
    import flexmbs as fm
    return fm.motion.SpinUp(10.0, 1.0)


def build(kind: str, size, material, motion=None):
    """The Model of one size: a BeamEB2D cantilever of ``size`` elements (kind "bar") or a Tet4 box
    1 x 0.2 x 0.2 m of the grid ``size`` = (nx, ny, nz) (kind "solid"), of ``material``, clamped at
    its start; on the frame ``motion`` (with geometric stiffening), None: a fixed frame."""
    import flexmbs as fm
    frame = {} if motion is None else {"motion": motion}
    if kind == "bar":
        mesh = fm.generate.line(int(size), 1.0)
        return fm.Model(mesh, fm.BeamEB2D(material, 1e-4, 1e-9), fixed=[("start", "all")], **frame)
    mesh = fm.generate.box(*size, 1.0, 0.2, 0.2, cell="tetra")
    return fm.Model(mesh, fm.Tet4(material), fixed=[("xmin", "all")], **frame)


def one(kind: str, size, steps: int, h: float, solver: str = "auto", t0: float = 0.5, threads=None,
        formulation: str = "lagrange") -> dict:
    material, motion = steel(), spin_up()       # made before the timer, as the build's inputs
    tracemalloc.start()
    tic = time.perf_counter()
    md = build(kind, size, material, motion)
    build_s = time.perf_counter() - tic
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    out = dict(kind=kind, size=size, dofs=md.n_dofs, build_s=build_s, peak_heap_MB=peak,
               rss_build_MB=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    if steps:
        out.update(time_steps(md, steps, h, solver, t0, threads, formulation))
        out["rss_MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def time_steps(md, steps: int, h: float, solver: str = "auto", t0: float = 0.5, threads=None,
               formulation: str = "lagrange") -> dict:
    """Implicit midpoint steps of ``formulation`` (Lagrange or Hamilton) from rest at ``t0``, each timed on its own (CPU time of
    this process, so that other processes' load does not count; wall time too).  The default
    t0 = 0.5 s is half-way through the spin-up, where omega = 5 rad/s and eps = 20 rad/s^2 (at
    t = 0 both vanish, and the step matrix would hardly change).

    Returned: ``first_step_s`` (including the step matrix's setup and, for "reuse"/"direct",
    its first factorization), ``factor_s`` (CPU time of all factorizations), ``step_s`` (the
    median of the steps after the first: the steady cost per step), ``amortised_s`` (all
    steps' CPU time / steps), ``iterations_per_step`` (Krylov iterations after the first
    step, per step), ``n_factor`` and the solver the run ended with.
    """
    import flexmbs as fm
    from flexmbs.formulations import FORMULATIONS
    from flexmbs.integrators.midpoint import ImplicitMidpoint
    form = FORMULATIONS[formulation](md)
    zero = np.zeros(md.n_dofs)
    cpu0 = time.process_time()
    integ = ImplicitMidpoint(form, t0, form.state0(zero, zero), t0 + steps * h, h=h, linear_solver=solver,
                             matvec_threads=threads)
    setup = time.process_time() - cpu0
    cpu, wall, iters = [], [], []
    for _ in range(steps):
        c, w, it = time.process_time(), time.perf_counter(), integ.n_lin_iter
        integ.step()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
        iters.append(integ.n_lin_iter - it)
        if integ.status not in ("running", "finished"):
            raise RuntimeError(integ.message)
    st = integ._second
    later = cpu[1:] if len(cpu) > 1 else cpu
    return dict(setup_s=setup, first_step_s=cpu[0], factor_s=integ.factor_s, step_s=float(np.median(later)),
                step_wall_s=float(np.median(wall[1:] if len(wall) > 1 else wall)),
                amortised_s=(setup + sum(cpu)) / steps,
                iterations_per_step=float(np.mean(iters[1:] if len(iters) > 1 else iters)),
                iterations=iters, n_factor=integ.n_lu, solver=None if st is None else st.solver,
                matvec_threads=None if st is None else st.threads,
                formulation=formulation, threads=os.environ.get("OMP_NUM_THREADS"), fm_version=getattr(fm, "__version__", ""))


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
    p.add_argument("--linear-solver", default="auto", choices=["auto", "iterative", "reuse", "direct"],
                   help="the midpoint rule's `linear_solver` for the sparse step matrix")
    p.add_argument("--t0", type=float, default=0.5, help="time of the first step [s] (0.5: mid spin-up)")
    p.add_argument("--matvec-threads", type=int, default=None,
                   help="the midpoint option `matvec_threads` (default: 1)")
    p.add_argument("--formulation", default="lagrange", choices=["lagrange", "hamilton"],
                   help="the formulation stepped: state (delta, delta') or (delta, p)")
    p.add_argument("--timeout", type=float, default=3000, help="seconds allowed per size")
    p.add_argument("--one", nargs=2, metavar=("KIND", "SIZE"), help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.one:
        kind, size = a.one
        size = int(size) if kind == "bar" else tuple(int(s) for s in size.split("x"))
        print(json.dumps(one(kind, size, a.steps, a.h, a.linear_solver, a.t0, a.matvec_threads,
                             a.formulation)))
        return
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    for kind in a.kind:
        sizes = BAR_ELEMENTS if kind == "bar" else SOLID_GRIDS
        rows = []
        print(f"\n{kind}: {'DOFs':>9s} {'build s':>9s} {'heap MB':>9s} {'RSS MB':>9s} {'step s':>10s} "
              f"{'factor s':>9s} {'1st step':>9s} {'amort. s':>9s} {'iter':>6s} {'wall s':>9s}")
        for size in sizes:
            dofs = 3 * (size + 1) if kind == "bar" else _solid_dofs(size)
            if dofs > a.max_dofs or dofs < a.min_dofs:
                continue
            arg = str(size) if kind == "bar" else "x".join(map(str, size))
            cmd = [sys.executable, __file__, "--one", kind, arg, "--steps", str(a.steps), "--h", str(a.h),
                   "--linear-solver", a.linear_solver, "--t0", str(a.t0),
                   "--formulation", a.formulation]
            if a.matvec_threads is not None:
                cmd += ["--matvec-threads", str(a.matvec_threads)]
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
                  f"{r.get('rss_MB', r['rss_build_MB']):9.1f} {r.get('step_s', float('nan')):10.4g} "
                  f"{r.get('factor_s', float('nan')):9.3g} {r.get('first_step_s', float('nan')):9.3g} "
                  f"{r.get('amortised_s', float('nan')):9.3g} {r.get('iterations_per_step', float('nan')):6.1f} "
                  f"{r.get('step_wall_s', float('nan')):9.3g}",
                  flush=True)
        for key in ("build_s", "peak_heap_MB", "step_s"):
            local, total = _slopes(rows, key)
            print(f"{kind}: log-log slope of {key}: {total:.2f} overall; between sizes "
                  + " ".join(f"{s:.2f}" for s in local))


if __name__ == "__main__":
    main()
