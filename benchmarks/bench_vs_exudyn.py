"""flexmbs and Exudyn side by side on the rotating bar, at matched accuracy, in one run.

    python benchmarks/bench_vs_exudyn.py [--repeats 5] [--target 8.7e-6 | --exudyn-h 2.5e-7]

**flexmbs**: the README's main job as a whole process, ``python cases/rotating_bar.py --damping
0.02 --out DIR`` (10 elements, 0.1 s, undamped and damped runs, results.npz, results.h5, plots),
timed from outside (median of ``--repeats``), with the tip error it prints.

**Exudyn** (optional: ``pip install exudyn``, the ``bench`` extra): the same two runs of the same
finite element model.  The bar's steady rotating-frame equations

.. code:: text

    M q'' + C_eff q' + K_eff q = f_0 + Q sin(2 pi t / T)

(M, K_eff = [k] + K_geo + [k(Omega)], C_eff = C + 2 G(Omega) and the centrifugal load f_0 taken
from the flexmbs model) are an ``ObjectGenericODE2`` on one ``NodeGenericODE2``, the harmonic
tip force a ``LoadCoordinate`` with a load user function, integrated by Exudyn's implicit
generalized-alpha solver with spectral radius 1 (the trapezoidal rule, no numerical damping)
and a modified Newton (the Jacobian of the linear system is factorized once), fixed step
``--exudyn-h``, or by default the largest step h = 1e-4 s / k (k integer) whose tip error is
below ``--target`` (8.7e-6, the error of Exudyn's floating-frame model at h = 2.5e-7 s in
issue 15), estimated from a probe run at h = 2e-6 s with the method's order 2.  The tip
displacement is recorded by a node sensor every 1e-4 s.

**Error measure** (both codes): max over the 1001 output times of |u_tip - u_tip,exact| divided
by max |u_tip,exact|, u_tip,exact from the eigenvectors of the same linear model
(`flexmbs.integrators.exact.modal_response`), for the undamped run.

**Slider-crank** (``--no-slider-crank`` skips it): ``cases/slider_crank.py`` with its defaults
(8 beam elements on the rod's chord frame, two revolutions, implicit midpoint, 8640 steps)
against an Exudyn model of the same mechanism written here: 8 ``ANCFCable2D`` elements for
the rod, a rigid crank pinned at O and driven at 150 rad/s by a velocity-level coordinate
constraint, the rod pinned to the crank, its end B on the line y = 0 carrying the slider
mass; all initial velocities those of the rigid mechanism at the dead centre.  Exudyn's
generalized-alpha with spectral radius 1 and a modified Newton, at flexmbs's step and at
half of it (its own convergence).  Compared: the largest positive and negative mid-span
deflection relative to the chord (node 4 against the line through nodes 0 and 8), and the
wall and CPU time of the solve.  The two models differ (ANCF: nonlinear, the true slider;
flexmbs: linear elastic motion on the rigid frame with the guide correction), so they agree
to the modelling difference, not to round-off.

Without Exudyn the script says so and times flexmbs only.
"""
from __future__ import annotations

import argparse
import math
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))

import flexmbs as fm                                              # noqa: E402
from flexmbs.formulations import Lagrange                         # noqa: E402
from flexmbs.integrators.exact import modal_response              # noqa: E402
import rotating_bar as rb                                         # noqa: E402

T_END, DT_OUT = 0.1, 1e-4
EXUDYN_CPU: list[float] = []


def flexmbs_process(repeats: int) -> tuple[float, list[float], float, str]:
    """Median wall time [s] of the README job as a whole process, all times, the median CPU
    time (user + system, of the child process) and its output."""
    import resource
    times, cpus, out = [], [], ""
    env_cmd = [sys.executable, str(ROOT / "cases" / "rotating_bar.py"), "--damping", "0.02"]
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as d:
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            tic = time.perf_counter()
            run = subprocess.run(env_cmd + ["--out", d], capture_output=True, text=True, check=True)
            times.append(time.perf_counter() - tic)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
            out = run.stdout
    return float(np.median(times)), times, float(np.median(cpus)), out


def exact_tip(model) -> tuple[np.ndarray, np.ndarray]:
    form = Lagrange(model)
    t = fm.analysis.output_times(T_END, DT_OUT)
    x = modal_response(form, np.zeros(form.n_state), t)
    return t, model.displacement_field(x[:, :form.n])[:, -1, 0]


def exudyn_run(model, h: float, period: float) -> tuple[np.ndarray, np.ndarray, float]:
    """(t, tip displacement, solve wall time [s]) of the Exudyn GenericODE2 model (module
    docstring); the CPU time of the solve is added to ``EXUDYN_CPU``."""
    import exudyn as exu
    from exudyn.itemInterface import (LoadCoordinate, MarkerNodeCoordinate, NodeGenericODE2,
                                      ObjectGenericODE2, SensorNode)
    n = model.n_dofs
    M = np.asarray(model.M.toarray() if hasattr(model.M, "toarray") else model.M)
    K = np.asarray(model.frame_stiffness(0.0))
    C = np.asarray(model.frame_damping(0.0))
    C = np.zeros((n, n)) if np.isscalar(C) else C
    f0 = Lagrange(model).generalized_force(0.0, np.zeros(n), np.zeros(n)) - model.q_ext(0.0)
    tip = int(np.flatnonzero(model.Q[:, 0])[0])
    amplitude = float(model.Q[tip, 0])
    omega_f = 2.0 * math.pi / period

    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    node = mbs.AddNode(NodeGenericODE2(referenceCoordinates=[0.0] * n, initialCoordinates=[0.0] * n,
                                       initialCoordinates_t=[0.0] * n, numberOfODE2Coordinates=n))
    mbs.AddObject(ObjectGenericODE2(nodeNumbers=[node], massMatrix=M, stiffnessMatrix=K, dampingMatrix=C,
                                    forceVector=list(f0)))
    marker = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=node, coordinate=tip))
    mbs.AddLoad(LoadCoordinate(markerNumber=marker, load=amplitude,
                               loadUserFunction=lambda mbs, t, load: load * math.sin(omega_f * t)))
    sensor = mbs.AddSensor(SensorNode(nodeNumber=node, storeInternal=True,
                                      outputVariableType=exu.OutputVariableType.Coordinates))
    mbs.Assemble()
    s = exu.SimulationSettings()
    s.timeIntegration.endTime = T_END
    s.timeIntegration.numberOfSteps = int(round(T_END / h))
    s.timeIntegration.generalizedAlpha.spectralRadius = 1.0
    s.timeIntegration.newton.useModifiedNewton = True
    s.timeIntegration.verboseMode = 0
    s.solution.file.write = False
    s.solution.sensors.writePeriod = DT_OUT
    s.show.statistics = False
    s.show.computationTime = False
    s.linearSolver.solverType = exu.LinearSolverType.EXUdense
    tic, c0 = time.perf_counter(), time.process_time()
    mbs.SolveDynamic(s, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    wall = time.perf_counter() - tic
    EXUDYN_CPU.append(time.process_time() - c0)
    data = np.asarray(mbs.GetSensorStoredData(sensor))
    return data[:, 0], data[:, 1 + tip], wall


def flexmbs_slider_crank() -> tuple[float, float, int, np.ndarray, np.ndarray]:
    """(solve wall [s], solve CPU [s], steps, crank angle [deg], mid-span deflection [m]) of
    cases/slider_crank.py with its defaults."""
    import slider_crank as sc
    p = dict(sc.DEFAULTS)
    t_end = 2.0 * np.pi * p["revolutions"] / p["crank_speed"]
    phys = {k: p[k] for k in ("elements", "crank", "rod", "offset", "width", "youngs", "density", "crank_speed",
                              "slider_mass", "stiffening", "guide_correction")}
    model = sc.build(**phys, t_end=t_end)
    c0 = time.process_time()
    res = fm.run(model, compute_energies=False, store=False, **sc.solver_options(p, t_end))
    cpu = time.process_time() - c0
    w = fm.mechanisms.chord_deflection(model, res.delta, [p["rod"] / 2])[:, 0]
    return res.stats["solve_s"], cpu, res.stats["n_steps"], np.degrees(p["crank_speed"] * res.t), w


def exudyn_slider_crank(h: float, elements: int = 8, revolutions: float = 2.0, degrees_out: float = 0.5):
    """(solve wall [s], solve CPU [s], steps, crank angle [deg], mid-span deflection [m]) of the
    Exudyn ANCF slider-crank (module docstring); Simeon's data as in cases/slider_crank.py."""
    import exudyn as exu
    from exudyn.itemInterface import (CoordinateConstraint, MarkerBodyPosition, MarkerNodeCoordinate,
                                      MarkerNodePosition, MassPoint2D, NodePoint2D, NodePoint2DSlope1,
                                      NodePointGround, NodeRigidBody2D, ObjectANCFCable2D, ObjectGround,
                                      RevoluteJoint2D, RigidBody2D, SensorNode)
    r, l, width, E, rho, omega, m_s = 0.15, 0.30, 0.008, 2e11, 7870.0, 150.0, 0.075552
    A, I = width**2, width**4 / 12.0
    le = l / elements
    w_rod = -r * omega / l                          # rod angular velocity at the dead centre
    t_end = 2.0 * math.pi * revolutions / omega
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    mG = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=mbs.AddNode(NodePointGround(referenceCoordinates=[0, 0, 0])),
                                            coordinate=0))
    nodes = [mbs.AddNode(NodePoint2DSlope1(referenceCoordinates=[r + i * le, 0.0, 1.0, 0.0],
                                           initialVelocities=[0.0, r * omega + w_rod * i * le, 0.0, w_rod]))
             for i in range(elements + 1)]
    for i in range(elements):
        mbs.AddObject(ObjectANCFCable2D(nodeNumbers=[nodes[i], nodes[i + 1]], physicsLength=le,
                                        physicsMassPerLength=rho * A, physicsBendingStiffness=E * I,
                                        axialStiffness=E * A))

    def coordinate(node, c):
        return mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=node, coordinate=c))

    ground = mbs.AddObject(ObjectGround(referencePosition=[0, 0, 0]))
    n_crank = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[r / 2, 0.0, 0.0],
                                          initialVelocities=[0.0, r / 2 * omega, omega]))
    crank = mbs.AddObject(RigidBody2D(physicsMass=1.0, physicsInertia=0.01, nodeNumber=n_crank))
    pin_O = [mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[0, 0, 0])),
             mbs.AddMarker(MarkerBodyPosition(bodyNumber=crank, localPosition=[-r / 2, 0, 0]))]
    pin_A = [mbs.AddMarker(MarkerBodyPosition(bodyNumber=crank, localPosition=[r / 2, 0, 0])),
             mbs.AddMarker(MarkerNodePosition(nodeNumber=nodes[0]))]
    mbs.AddObject(RevoluteJoint2D(markerNumbers=pin_O))
    mbs.AddObject(RevoluteJoint2D(markerNumbers=pin_A))
    mbs.AddObject(CoordinateConstraint(markerNumbers=[mG, coordinate(n_crank, 2)], velocityLevel=True, offset=omega))
    mbs.AddObject(CoordinateConstraint(markerNumbers=[mG, coordinate(nodes[-1], 1)]))       # B on y = 0
    n_slider = mbs.AddNode(NodePoint2D(referenceCoordinates=[r + l, 0.0], initialVelocities=[0.0, 0.0]))
    mbs.AddObject(MassPoint2D(mass=m_s, nodeNumber=n_slider))
    mbs.AddObject(CoordinateConstraint(markerNumbers=[coordinate(n_slider, 0), coordinate(nodes[-1], 0)]))
    mbs.AddObject(CoordinateConstraint(markerNumbers=[mG, coordinate(n_slider, 1)]))
    sensors = [mbs.AddSensor(SensorNode(nodeNumber=nodes[i], storeInternal=True,
                                        outputVariableType=exu.OutputVariableType.Position))
               for i in (0, elements // 2, elements)]
    mbs.Assemble()
    s = exu.SimulationSettings()
    s.timeIntegration.endTime = t_end
    s.timeIntegration.numberOfSteps = int(round(t_end / h))
    s.timeIntegration.generalizedAlpha.spectralRadius = 1.0
    s.timeIntegration.newton.useModifiedNewton = True
    s.timeIntegration.verboseMode = 0
    s.solution.file.write = False
    s.solution.sensors.writePeriod = math.radians(degrees_out) / omega
    s.show.statistics = False
    s.show.computationTime = False
    s.linearSolver.solverType = exu.LinearSolverType.EXUdense
    c0, tic = time.process_time(), time.perf_counter()
    mbs.SolveDynamic(s, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    wall, cpu = time.perf_counter() - tic, time.process_time() - c0
    a, m, b = (np.asarray(mbs.GetSensorStoredData(k))[:, 1:3] for k in sensors)
    t = np.asarray(mbs.GetSensorStoredData(sensors[0]))[:, 0]
    d = b - a
    w = (d[:, 0] * (m - a)[:, 1] - d[:, 1] * (m - a)[:, 0]) / np.linalg.norm(d, axis=1)
    return wall, cpu, s.timeIntegration.numberOfSteps, np.degrees(omega * t), w


def _extremes(angle, w) -> str:
    i, j = int(np.argmax(w)), int(np.argmin(w))
    return f"max {1e3 * w[i]:+.5f} mm at {angle[i]:.1f} deg, min {1e3 * w[j]:+.5f} mm at {angle[j]:.1f} deg"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="runs of the flexmbs process (median)")
    ap.add_argument("--exudyn-h", type=float, default=None, help="Exudyn's time step [s] (default: from --target)")
    ap.add_argument("--target", type=float, default=8.7e-6, help="tip error Exudyn's step is chosen for")
    ap.add_argument("--no-slider-crank", dest="slider_crank", action="store_false", help="skip the slider-crank")
    a = ap.parse_args(argv)
    print(f"machine: {platform.processor() or platform.machine()}, {platform.system()}, python "
          f"{platform.python_version()}, numpy {np.__version__}")

    median, times, proc_cpu, out = flexmbs_process(a.repeats)
    m = re.search(r"undamped.*?tip error ([0-9.e+-]+)", out)
    err = float(m.group(1)) if m else float("nan")
    solves = [float(x) for x in re.findall(r"solve ([0-9.]+) s", out)]
    print(f"flexmbs  README job (whole process, 2 runs + files + plots): median {median:.2f} s wall of "
          f"{', '.join(f'{x:.2f}' for x in times)}, median CPU {proc_cpu:.2f} s; tip error {err:.1e}; "
          f"in-process solves {' + '.join(f'{x:.3f}' for x in solves)} s (method 'exact', energies and works)")

    if a.slider_crank:
        sc_wall, sc_cpu, n, angle, w = flexmbs_slider_crank()
        print(f"flexmbs  slider-crank (cases/slider_crank.py defaults): solve {sc_wall:.2f} s wall, {sc_cpu:.2f} s CPU, "
              f"{n} steps ({1e6 * sc_cpu / n:.0f} us CPU per step); {_extremes(angle, w)}")
    try:
        import exudyn
    except ImportError:
        print("Exudyn is not installed (pip install exudyn, or the 'bench' extra): its side is skipped.")
        return 0
    p = rb.DEFAULTS
    phys = {k: p[k] for k in ("elements", "length", "mass", "area", "youngs", "omega", "force", "period")}
    h, walls, errors = a.exudyn_h, [], []
    if h is None:                                   # probe, then order-2 estimates of the step
        h_try, model = 2e-6, rb.build(**phys)
        t_ref, u_ref = exact_tip(model)
        for _ in range(4):
            t, u, wall = exudyn_run(model, h_try, p["period"])
            e = float(np.max(np.abs(np.interp(t_ref, t, u) - u_ref)) / np.max(np.abs(u_ref)))
            print(f"Exudyn at h = {h_try:.4g} s: undamped tip error {e:.2e} ({wall:.2f} s)")
            if e <= a.target:
                break
            h_try = DT_OUT / math.ceil(DT_OUT / (0.95 * h_try * math.sqrt(a.target / e)))
        h, walls, errors = h_try, [wall], [e]
    cpus = EXUDYN_CPU[-1:] if walls else []
    for damping in ((0.0, 0.02) if not walls else (0.02,)):
        model = rb.build(**phys, damping=damping)
        t, u, wall = exudyn_run(model, h, p["period"])
        walls.append(wall)
        cpus.append(EXUDYN_CPU[-1])
        t_ref, u_ref = exact_tip(model)
        u_at = np.interp(t_ref, t, u)
        errors.append(float(np.max(np.abs(u_at - u_ref)) / np.max(np.abs(u_ref))))
    print(f"Exudyn {exudyn.__version__} GenericODE2, generalized-alpha (rho_inf = 1), h = {h:.4g} s: "
          f"solve {walls[0]:.2f} s + {walls[1]:.2f} s wall, {cpus[0]:.2f} s + {cpus[1]:.2f} s CPU (undamped + damped); tip error {errors[0]:.1e} (undamped), {errors[1]:.1e} (damped)")
    print(f"ratios: Exudyn's two solves / flexmbs whole process = {sum(walls) / median:.1f} (wall), "
          f"{sum(cpus) / proc_cpu:.1f} (CPU); Exudyn's two solves / flexmbs's two solves (wall) = "
          f"{sum(walls) / max(sum(solves), 1e-9):.0f}")
    if a.slider_crank:
        h = 2.0 * np.pi * 2.0 / 150.0 / n          # flexmbs's step
        for hh in (h, h / 2):
            ex_wall, ex_cpu, ex_n, ex_angle, ex_w = exudyn_slider_crank(hh)
            print(f"Exudyn {exudyn.__version__} ANCF slider-crank, h = {hh:.4g} s: solve {ex_wall:.2f} s wall, "
                  f"{ex_cpu:.2f} s CPU ({1e6 * ex_cpu / ex_n:.0f} us CPU per step); {_extremes(ex_angle, ex_w)}")
            if hh == h:
                ratio_wall, ratio_cpu = ex_wall / sc_wall, ex_cpu / sc_cpu
        print(f"ratios (slider-crank, same step): Exudyn / flexmbs = {ratio_wall:.1f} (wall), {ratio_cpu:.1f} (CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
