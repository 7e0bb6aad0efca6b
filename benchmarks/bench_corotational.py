"""Do corotational beams need the compiled step, and what it gives them  (issue 22, item 4; docs/benchmarks.md, 22.2)

The flexible pendulum of cases/flexible_pendulum.py (L = 1 m, b = 2 cm, E = 50 MPa, rho = 1000 kg/m^3,
released horizontally under gravity, pinned at node 0), 8 elements, index3-alpha (rho_inf = 0.99 as the
case) at h = 1 ms over 1 s (1000 steps), outputs every 10 ms, solved by each model in turn:

- ``corot2d``: `CorotationalBeam2D` (n_q = 27) on a `Spherical` joint, on the compiled step (csrc
  ``corot2d_bodies``, the pin as a planar revolute row) and on the numpy path (its first 200 steps);
- ``corot3d``: the same beam as a `CorotationalBeam3D` (n_q = 54, the beam in the x-y plane, gravity -y), on
  the compiled step (csrc ``corot3d_bodies``, the pin as point rows of the joint batch on the node's marker),
  and ``corot3d numpy`` on the numpy path (its first 100 steps);
- ``ffrf``: a `FlexibleBody` of 8 BeamEB2D elements (with rotary inertia) clamped at node 0 in its Model, on a
  `Revolute` joint (n_q = 31): the floating frame at comparable size, on the compiled step and on the numpy
  path (its linear elastic coordinates do not follow this very flexible beam: a cost, not an accuracy,
  comparison);
- ``exudyn``: Exudyn's ``ANCFCable2D`` pendulum of 8 elements with the same EA, EI, rho A, its node 0's
  position held by two CoordinateConstraints, generalized-alpha (rho_inf 0.99, full Newton, dense LU) at
  the same h (optional: the ``bench`` extra).

Each solve is timed in-process (CPU seconds of ``flexmbs.run(..., store=False)``: the steps and the outputs),
best of ``--repeats``; ``--command`` also times the whole command ``flexmbs run flexible_pendulum --no-plots
--no-paraview`` in a child process, with the case's default integrator (midpoint, index-1 form) and with
``--set integrator=index3-alpha`` (CPU of the child: start-up, solve, outputs, energies, summary); ``--whole-3d``
times the whole process of the 3D beam's pendulum (the case has no 3D model): a child ``python
benchmarks/bench_corotational.py --child-3d DIR`` imports flexmbs, builds the System and runs it by index3-alpha
to 1 s with its 101 outputs and energies streamed into DIR/results.h5 (best of ``--repeats`` after an untimed
first run, its bytecode cached: `whole_3d_cpu`).  Prints one line per model: steps, CPU
seconds, microseconds per step.

    python benchmarks/bench_corotational.py [--repeats 3] [--command] [--whole-3d] [--models corot3d,...]
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "cases"), str(ROOT / "benchmarks")]

ELEMENTS, LENGTH, SIDE, YOUNGS, DENSITY, GRAVITY = 8, 1.0, 0.02, 5e7, 1000.0, 9.81
H, T_END, DT_OUT, RHO_INF = 1e-3, 1.0, 0.01, 0.99
AREA, INERTIA = SIDE * SIDE, SIDE ** 4 / 12.0


def corotational_2d(youngs=YOUNGS):
    import flexmbs as fm
    from flexmbs.bodies.corotational import CorotationalBeam2D, Node
    from flexmbs.constraints.joints import Spherical
    beam = CorotationalBeam2D.line("pendulum", (0.0, 0.0), (LENGTH, 0.0), ELEMENTS,
                                   fm.Material(E=youngs, rho=DENSITY), AREA, INERTIA)
    return fm.System([beam], [Spherical(None, beam, s_j=Node(0), name="pin")], gravity=(0.0, -GRAVITY))


def corotational_3d(youngs=YOUNGS):
    import flexmbs as fm
    from flexmbs.bodies.corotational import CorotationalBeam3D, Node
    from flexmbs.constraints.joints import Spherical
    beam = CorotationalBeam3D.line("pendulum", (0.0, 0.0, 0.0), (LENGTH, 0.0, 0.0), ELEMENTS,
                                   fm.Material(E=youngs, rho=DENSITY, nu=0.3), AREA, INERTIA, INERTIA,
                                   0.141 * SIDE ** 4)
    return fm.System([beam], [Spherical(None, beam, s_j=Node(0), name="pin")], gravity=(0.0, -GRAVITY, 0.0))


def floating_frame(youngs=YOUNGS):
    import flexmbs as fm
    from flexmbs.bodies import Node
    from flexmbs.constraints import Revolute
    element = fm.BeamEB2D(fm.Material(E=youngs, rho=DENSITY), area=AREA, I=INERTIA, rotary_inertia=True)
    body = fm.FlexibleBody(fm.Model(fm.generate.line(ELEMENTS, LENGTH), element, fixed=[("start", "all")]),
                           "pendulum")
    return fm.System([body], [Revolute(body, None, s_i=Node(0), axis=(0.0, 0.0, 1.0), name="pin")],
                     gravity=(0.0, -GRAVITY, 0.0))


def flexmbs_solve(build, kernel: str, repeats: int, t_end: float, youngs: float) -> tuple[float, int, str, int]:
    """(best CPU seconds of the run to ``t_end`` with Young's modulus ``youngs``, steps, the path that ran, n_q)."""
    import flexmbs as fm
    best, steps, path = np.inf, 0, ""
    for _ in range(repeats):
        system = build(youngs)
        c0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # the floating frame's range warning: expected here
            res = fm.run(system, formulation="index3", method="index3-alpha", h=H, t_end=t_end, dt_out=DT_OUT,
                         rho_inf=RHO_INF, store=False, kernel=kernel)
        cpu = time.process_time() - c0
        assert res.success, res.message
        best, steps, path = min(best, cpu), res.stats["n_steps"], res.metadata["kernel"]
    return best, steps, path, system.n_q


def exudyn_solve(repeats: int, youngs: float) -> tuple[float, int]:
    """(best CPU seconds of SolveDynamic, steps) of Exudyn's ANCFCable2D pendulum (module docstring)."""
    import exudyn as exu
    from exudyn.itemInterface import (CoordinateConstraint, MarkerBodyMass, MarkerNodeCoordinate, NodePoint2DSlope1,
                                      NodePointGround, ObjectANCFCable2D, LoadMassProportional)
    from bench_vs_exudyn import _exudyn_settings
    best, steps = np.inf, 0
    for _ in range(repeats):
        le = LENGTH / ELEMENTS
        SC = exu.SystemContainer()
        mbs = SC.AddSystem()
        nodes = [mbs.AddNode(NodePoint2DSlope1(referenceCoordinates=[i * le, 0.0, 1.0, 0.0]))
                 for i in range(ELEMENTS + 1)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            cables = [mbs.AddObject(ObjectANCFCable2D(nodeNumbers=[nodes[i], nodes[i + 1]], physicsLength=le,
                                                      physicsMassPerLength=DENSITY * AREA,
                                                      physicsBendingStiffness=youngs * INERTIA,
                                                      physicsAxialStiffness=youngs * AREA))
                      for i in range(ELEMENTS)]
        for c in cables:
            mbs.AddLoad(LoadMassProportional(markerNumber=mbs.AddMarker(MarkerBodyMass(bodyNumber=c)),
                                             loadVector=[0.0, -GRAVITY, 0.0]))
        ground = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=mbs.AddNode(NodePointGround()), coordinate=0))
        for c in (0, 1):                                         # the pin: node 0's x, y held
            mbs.AddObject(CoordinateConstraint(markerNumbers=[ground, mbs.AddMarker(
                MarkerNodeCoordinate(nodeNumber=nodes[0], coordinate=c))]))
        mbs.Assemble()
        s = _exudyn_settings(exu, T_END, H, RHO_INF, modified_newton=False)
        c0 = time.process_time()
        mbs.SolveDynamic(s, solverType=exu.DynamicSolverType.GeneralizedAlpha)
        best, steps = min(best, time.process_time() - c0), int(s.timeIntegration.numberOfSteps)
    return best, steps


def command_cpu(*settings: str) -> float:
    """CPU seconds of the child process ``flexmbs run flexible_pendulum --no-plots --no-paraview -q`` with the
    ``--set`` ``settings`` (e.g. "integrator=index3-alpha"), run from this source tree."""
    flexmbs = Path(sys.executable).with_name("flexmbs")
    sets = [x for kv in settings for x in ("--set", kv)]
    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([str(flexmbs), "run", "flexible_pendulum", "--no-plots", "--no-paraview", "-q", "--cases",
                        str(ROOT / "cases"), "--out", out, *sets], check=True, capture_output=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def whole_3d(out: str) -> None:
    """The whole run of the 3D beam's pendulum (``--child-3d``): index3-alpha to T_END, outputs every DT_OUT into
    out/results.h5."""
    import flexmbs as fm
    res = fm.run(corotational_3d(), formulation="index3", method="index3-alpha", h=H, t_end=T_END, dt_out=DT_OUT,
                 rho_inf=RHO_INF, store=Path(out) / "results.h5")
    if not res.success:
        raise SystemExit(f"the 3D pendulum failed: {res.message}")


def whole_3d_cpu(repeats: int = 1) -> float:
    """CPU seconds of the child process that runs `whole_3d` (start-up, build, solve, outputs, results.h5), the
    least of ``repeats`` after an untimed first run; the child reads its modules' bytecode from a temporary
    PYTHONPYCACHEPREFIX written by that first run, as an installed package's (`bench_whole_process.flexmbs_env`:
    with PYTHONDONTWRITEBYTECODE=1 each process would compile flexmbs again, about 0.4-0.8 s of CPU here)."""
    from bench_whole_process import flexmbs_env, run_process
    with tempfile.TemporaryDirectory() as tmp:
        env = flexmbs_env(ROOT, Path(tmp) / "pycache")
        args = [str(Path(__file__).resolve()), "--child-3d", tmp]
        best = np.inf
        for k in range(repeats + 1):
            cpu, _, failed = run_process(args, ROOT, env)
            if failed:
                raise SystemExit(f"the 3D pendulum's child process failed: {failed}")
            best = best if k == 0 else min(best, cpu)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--command", action="store_true", help="also time the whole `flexmbs run` command")
    ap.add_argument("--whole-3d", action="store_true", help="also time the whole process of the 3D beam's pendulum")
    ap.add_argument("--models", default="corot2d,corot2d numpy,corot3d,corot3d numpy,ffrf compiled,ffrf numpy",
                    help="comma-separated rows to run (default all)")
    ap.add_argument("--child-3d", metavar="DIR", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child_3d:
        return whole_3d(a.child_3d)
    known = ("corot2d", "corot2d numpy", "corot3d", "corot3d numpy", "ffrf compiled", "ffrf numpy")
    chosen = [m.strip() for m in a.models.split(",") if m.strip()]
    unknown = [m for m in chosen if m not in known]
    if unknown:
        ap.error(f"--models: unknown {unknown}; expected some of {list(known)}")
    print(f"flexible pendulum, {ELEMENTS} elements, index3-alpha h = {H:g} s to {T_END:g} s; best of {a.repeats}; "
          f"load average {os.getloadavg()[0]:.2f}")
    # the corotational 3D beam's numpy path: 100 steps; the floating frame leaves its range (and index3-alpha
    # stops at t = 0.999 s) on the default E = 50 MPa beam: all models also at E = 5 GPa (the case's agreement setting)
    rows = [("corot2d", corotational_2d, "compiled", T_END), ("corot2d numpy", corotational_2d, "numpy", 0.2),
            ("corot3d", corotational_3d, "compiled", T_END), ("corot3d numpy", corotational_3d, "numpy", 0.1),
            ("ffrf compiled", floating_frame, "compiled", T_END), ("ffrf numpy", floating_frame, "numpy", T_END)]
    rows = [r for r in rows if r[0] in chosen]
    try:
        import exudyn
    except ImportError:
        exudyn = None
        print("exudyn: not installed (pip install '.[bench]')")
    for youngs in (YOUNGS, 100 * YOUNGS):
        print(f"E = {youngs:g} Pa")
        for name, build, kernel, t_end in rows:
            if name.startswith("ffrf") and youngs == YOUNGS:
                continue
            cpu, steps, path, n_q = flexmbs_solve(build, kernel, a.repeats, t_end, youngs)
            print(f"  {name:14s} n_q = {n_q:3d} ({path:8s}): {steps:4d} steps, {cpu:7.3f} s CPU, "
                  f"{1e6 * cpu / steps:8.1f} us/step")
        if exudyn is not None:
            cpu, steps = exudyn_solve(a.repeats, youngs)
            print(f"  exudyn {exudyn.__version__} ANCFCable2D n_q = {4 * (ELEMENTS + 1)}: {steps} steps, {cpu:.3f} s "
                  f"CPU, {1e6 * cpu / steps:.1f} us/step")
    if a.whole_3d:
        print(f"whole process of the 3D beam's pendulum (index3-alpha to {T_END:g} s, results.h5): "
              f"{whole_3d_cpu(a.repeats):.2f} s CPU (best of {a.repeats}, bytecode cached)")
    if a.command:
        for settings in ((), ("integrator=index3-alpha",)):
            said = " ".join(f"--set {x}" for x in settings)
            print(f"whole command `flexmbs run flexible_pendulum --no-plots --no-paraview {said}`: "
                  f"{command_cpu(*settings):.2f} s CPU")


if __name__ == "__main__":
    main()
