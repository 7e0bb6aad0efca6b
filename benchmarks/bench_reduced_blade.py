"""A ~1e5-DOF Tet4 blade on a spinning hub: full model vs modal reduction.

    python benchmarks/bench_reduced_blade.py [--grid 200 20 8] [--modes 5 10 20] [--t-short 0.01]

The blade: an aluminium plate 1.0 x 0.1 x 0.02 m (E = 70 GPa, rho = 2700 kg/m^3, nu = 0.33)
meshed by ``flexmbs.mesh.generate.box`` into Tet4 (no Gmsh file is needed), clamped at its
root x = 0 to a hub that spins up about z, Omega(t) from 0 to 20 rad/s in T_s = 0.5 s
(``motion.SpinUp``), with a flapwise (z) tip force of 20 N total at 60 Hz on the tip face
and geometric stiffening.  Implicit midpoint, Lagrange, h = 1e-4 s.

1. build the full model (timed);
2. for each mode count N: ``flexmbs.reduction.reduce`` (N free-interface modes + the static
   responses to the frame's unit inertia loads and to the tip load), timed;
3. the reduced models run 1 s of motion (10 000 steps), timed;
4. error against the full model on a short run (``--t-short``): the tip displacement
   (flapwise w and chordwise v at the tip face's first node) of each reduced model vs the full
   model's, max |difference| / max |full| over the run.
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import time

import numpy as np

import flexmbs as fm
from flexmbs.reduction import reduce


def blade_model(grid, omega=20.0, t_spin=0.5, force=20.0, freq=60.0):
    mesh = fm.generate.box(*grid, 1.0, 0.1, 0.02, cell="tetra")
    tip_nodes = mesh.nodes("xmax")
    load = fm.NodalLoad("xmax", "w", force / len(tip_nodes), lambda t: np.sin(2 * np.pi * freq * t))
    el = fm.Tet4(fm.Material(7.0e10, 2700.0, 0.33))
    return fm.Model(mesh, el, motion=fm.motion.SpinUp(omega, t_spin), fixed=[("xmin", "all")],
                    loads=[load])


def tip_history(res, node):
    return res.displacement[:, node, 1:3]             # (n_t, 2): v (chordwise), w (flapwise)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grid", nargs=3, type=int, default=[200, 20, 8])
    p.add_argument("--modes", nargs="+", type=int, default=[5, 10, 20])
    p.add_argument("--t-end", type=float, default=1.0, help="reduced runs [s]")
    p.add_argument("--t-short", type=float, default=0.01, help="full-model comparison run [s] (0: none)")
    p.add_argument("--h", type=float, default=1e-4)
    a = p.parse_args(argv)
    print(f"# {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    tic = time.perf_counter()
    full = blade_model(tuple(a.grid))
    print(f"full model: {full.n_dofs} DOFs, {len(full.cells)} Tet4, built in {time.perf_counter() - tic:.1f} s")
    node = int(full.mesh.nodes("xmax")[0])
    kw = dict(formulation="lagrange", method="midpoint", h=a.h, compute_energies=False)

    reduced = {}
    for n in a.modes:
        tic = time.perf_counter()
        reduced[n] = reduce(full, n)
        print(f"reduced N = {n}: {reduced[n].n_dofs} coordinates (N modes + static modes), "
              f"lowest frequency {np.sqrt(reduced[n].omega2[0]) / 2 / np.pi:.2f} Hz, built in "
              f"{time.perf_counter() - tic:.1f} s", flush=True)

    for n, red in reduced.items():
        tic = time.perf_counter()
        res = fm.run(red, t_end=a.t_end, dt_out=0.01, **kw)
        w = tip_history(res, node)
        print(f"reduced N = {n}: {a.t_end:g} s of motion ({res.stats['n_steps']} steps) in "
              f"{time.perf_counter() - tic:.1f} s (solve {res.stats['solve_s']:.1f} s); "
              f"tip w at the end {w[-1, 1]:.4e} m, max |w| {np.abs(w[:, 1]).max():.4e} m", flush=True)

    if a.t_short <= 0:                                 # no comparison run
        print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
        return
    tic = time.perf_counter()
    ref = fm.run(full, t_end=a.t_short, dt_out=a.t_short / 20, **kw)
    t_full = time.perf_counter() - tic
    w_ref = tip_history(ref, node)
    print(f"full model: {a.t_short:g} s ({ref.stats['n_steps']} steps) in {t_full:.1f} s "
          f"({ref.stats['solve_s'] / ref.stats['n_steps']:.3f} s per step); "
          f"max |w| {np.abs(w_ref[:, 1]).max():.4e} m, max |v| {np.abs(w_ref[:, 0]).max():.4e} m")
    for n, red in reduced.items():
        res = fm.run(red, t_end=a.t_short, dt_out=a.t_short / 20, **kw)
        w = tip_history(res, node)
        err = np.abs(w - w_ref).max(axis=0) / np.abs(w_ref).max(axis=0)
        print(f"reduced N = {n}: error of the tip displacement vs the full model over {a.t_short:g} s: "
              f"flapwise w {err[1]:.2e}, chordwise v {err[0]:.2e}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
