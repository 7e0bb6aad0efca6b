"""Build time and memory of a spinning Tet4 box `Model` with geometric stiffening (its pre-stress).

    /usr/bin/time -f "%e s %M KB" python benchmarks/bench_prestress.py [--grid 90x18x18] [--save out.npz]
        [--modes N]

The box is 1.0 x 0.2 x 0.2 m of steel tetrahedra (`flexmbs.generate.box`, 6 per cell), clamped
at x = 0, on a `SpinUp(10 rad/s, 1 s)` frame: the build assembles K, M, the inertia invariants
and solves K u = f for the frame's unit inertia loads (the pre-stress), then assembles one
geometric stiffness per unit case.  Printed: free DOFs, the build time [s] (wall clock and CPU),
the pre-stress solver that ran, and the peak resident memory [MB] of the process (ru_maxrss).
``--save`` writes K_geo,j x for a fixed random x (one column per unit case) to compare the
geometric stiffness of two versions of the code (docs/benchmarks.md, section 12); ``--modes N``
then times `flexmbs.reduction.reduce(model, N)` (its frequencies go into the .npz too).
Run it with the flexmbs to measure first on PYTHONPATH (the script's own directory comes first).
"""
from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from bench_build import grid            # the same --grid parsing as the build benchmark


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grid", default=(90, 18, 18), type=grid, help="cells nx x ny x nz (default 90x18x18: 97 470 DOFs)")
    p.add_argument("--save", default=None, help="write K_geo,j x to this .npz")
    p.add_argument("--modes", type=int, default=0, help="then reduce the model to N free-interface modes "
                   "(+ static modes) and time it (default 0: no reduction)")
    a = p.parse_args(argv)
    import flexmbs as fm
    nx, ny, nz = a.grid
    mesh = fm.generate.box(nx, ny, nz, 1.0, 0.2, 0.2, cell="tetra")
    el = fm.Tet4(fm.Material(2.1e11, 7800.0, 0.3))
    wall, cpu = time.perf_counter(), time.process_time()
    model = fm.Model(mesh, el, fixed=[("xmin", "all")], motion=fm.motion.SpinUp(10.0, 1.0))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    solver = getattr(model, "prestress_info", None) or "direct (spd_factor)"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"grid {nx}x{ny}x{nz}: {model.n_dofs} free DOFs, build {wall:.1f} s wall, {cpu:.1f} s CPU, "
          f"{len(model._Kg)} unit geometric stiffnesses, pre-stress by {solver}, peak RSS {rss:.0f} MB")
    extra = {}
    if a.modes:
        from flexmbs.reduction import reduce
        wall, cpu = time.perf_counter(), time.process_time()
        red = reduce(model, a.modes)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        f = np.sqrt(np.maximum(red.omega2, 0.0)) / (2 * np.pi)
        extra["f_hz"] = f
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"reduce(model, {a.modes}): {red.n_dofs} coordinates in {wall:.1f} s wall, {cpu:.1f} s CPU; lowest "
              f"frequencies [Hz] {np.array2string(f[:a.modes], precision=8)}; peak RSS {rss:.0f} MB")
    if a.save:
        x = np.random.default_rng(0).standard_normal(model.n_dofs)
        np.savez(a.save, keys=np.array([str(k) for k in model._Kg_keys]),
                 Kgx=np.column_stack([Kg @ x for Kg in model._Kg]), **extra)


if __name__ == "__main__":
    main()
