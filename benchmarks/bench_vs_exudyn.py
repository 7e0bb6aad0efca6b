"""flexmbs and Exudyn side by side on the rotating bar, the spin-up beam and the slider-crank, in one run.

    python benchmarks/bench_vs_exudyn.py [--only rotating-bar,spinup,slider-crank] [--repeats 5]
        [--target 8.7e-6 | --exudyn-h H] [--ffrf-h 2.5e-7] [--ffrf-t-end 0.1]

Parts (``--only``, comma-separated; default all): ``rotating-bar`` (the README job against both
Exudyn models of the bar; ``rotating-bar-lean`` or ``rotating-bar-ffrf`` for one of them),
``spinup``, ``slider-crank``.  Every line of timings ends with the load average.

**flexmbs, rotating bar**: the README's main job as a whole process, ``python
cases/rotating_bar.py --damping 0.02 --out DIR`` (10 elements, 0.1 s, undamped and damped runs,
results.npz, results.h5, plots), timed from outside (median of ``--repeats``), with the tip
error it prints.

**Exudyn, rotating bar, lean model** (optional: ``pip install exudyn``, the ``bench`` extra):
the same two runs of the same finite element model.  The bar's steady rotating-frame equations

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

**Exudyn, rotating bar, floating frame (FFRF)**: Exudyn's ``ObjectFFRF`` of the same mesh.  The
flexmbs bar has one axial DOF per node; ObjectFFRF takes 3-DOF point nodes, so the mesh is its
11 nodes as ``NodePoint`` s at the flexmbs node positions with the mass matrix M_1 (x) I_3 (the
consistent mass of the same two-node bar elements, interpolating x, y and z alike; M_1 the
flexmbs bar's mass matrix on all nodes) and the stiffness K_1 (x) diag(1, 0, 0) (the flexmbs
axial stiffness), and the transverse coordinates y, z of every node fixed to zero in the body
frame by ``CoordinateConstraint`` s: the axial-only bar of flexmbs.  Node 1 (at the axis) is
clamped, x = y = z = 0.  The reference frame is a ``NodeRigidBodyEP`` at the axis whose
position and Euler parameters e_1, e_2 are constrained to zero and whose e_3 follows
sin(Omega t / 2) (a ``CoordinateConstraint`` with an offset user function; e_0 follows from
the Euler-parameter constraint), starting with e_3' = Omega / 2: the prescribed rotation at
Omega from t = 0, the bar at rest in the frame.  ObjectFFRF computes its inertia terms (the
centrifugal and Coriolis forces included) from the mass matrix and the node positions; for
this prescribed rotation its axial equations are M_1 u'' + (K_1 - Omega^2 M_1) u = Omega^2 M_1 x
+ F(t), the flexmbs model's, so the exact modal solution is its reference too.  The tip force
is a ``LoadCoordinate`` on the tip's body-frame x coordinate; the damped run has the damping
matrix alpha M_3 + beta K_3 with the flexmbs model's Rayleigh coefficients.  Same integrator
settings as the lean model.  Runs: a probe at ``--ffrf-probe-h`` (2e-6 s), issue 15's step
``--ffrf-h`` (2.5e-7 s, undamped), and the step of matched accuracy (undamped and damped).
The lean and the FFRF model are the same linear equations under the same integrator, so the
lean model (2 us per step) finds that step and the FFRF runs check its error.
``--ffrf-t-end`` < 0.1 measures a shorter interval and scales its times to 0.1 s (its errors
are then those of the shorter interval).

**Error measure** (both codes, the bar): max over the 1001 output times of |u_tip -
u_tip,exact| divided by max |u_tip,exact|, u_tip,exact from the eigenvectors of the same
linear model (`flexmbs.integrators.exact.modal_response`).

**Spin-up beam** (Kane, Ryan and Banerjee 1987; ../shared/BENCHMARKS.md sec. 3): flexmbs's
prescribed model, ``cases/spinup_beam.py`` with its defaults (10 ``BeamEB2D`` elements on the
spin-up frame with geometric stiffening, generalized-alpha rho_inf = 0.9, h = 0.01 s, 20 s),
timed in-process as build + run.  Exudyn: 10 ``ANCFCable2D`` elements with the same EA, EI,
rho A, root at the hub axis (two coordinate constraints), the root slope clamped along the
hub's x axis, cos(theta(t)) r'_y - sin(theta(t)) r'_x = 0 with the spin-up angle theta(t)
(an ``ObjectConnectorCoordinateVector`` with a constraint and a Jacobian user function);
generalized-alpha with rho_inf = 0.9 and a full Newton (faster here than the modified one),
Newton's absolute tolerance 1e-6 N (with the default 1e-10 the residual of the resting beam
stalls at round-off and Exudyn cuts the step tens of thousands of times).  Exudyn's floating
frame is not used: ObjectFFRF and ObjectFFRFreducedOrder carry a constant stiffness matrix,
without the stress stiffness of the centrifugal tension, and the spin-up beam without
geometric stiffening diverges (Omega_s = 6 rad/s exceeds the first bending frequency
3.798 rad/s); the ANCF element has it through its nonlinear axial strain.  Tip deflection:
v = cos(theta) Y_tip - sin(theta) X_tip in the rotating frame, every 0.01 s.  Each code's step
error is measured against its own run at h = 5e-4 s; Exudyn's step is the largest
0.01 s / k whose error is at most flexmbs's.  Printed: both histories' difference relative to
the peak, the tip minima, the CPU times and their ratio.

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
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

# one BLAS thread, as the cases set it: CPU times then measure one core, and the small dense solves
# of both codes run faster on one thread
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

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
    s = _exudyn_settings(exu, T_END, h, 1.0, modified_newton=True)
    s.solution.sensors.writePeriod = DT_OUT
    tic, c0 = time.perf_counter(), time.process_time()
    mbs.SolveDynamic(s, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    wall = time.perf_counter() - tic
    EXUDYN_CPU.append(time.process_time() - c0)
    data = np.asarray(mbs.GetSensorStoredData(sensor))
    return data[:, 0], data[:, 1 + tip], wall


def bar_mesh_matrices(p: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(M_1, K_1, X): mass and stiffness matrices of the bar's axial DOFs on all nodes (no support;
    the same Bar2 elements, mesh and material as `rotating_bar.build`) and the node positions (n, 3)."""
    from flexmbs import Bar2, Material, Model, generate
    rho = p["mass"] / (p["area"] * p["length"])
    free = Model(generate.line(p["elements"], p["length"]), Bar2(Material(E=p["youngs"], rho=rho), p["area"]))
    dense = (lambda A: np.asarray(A.toarray() if hasattr(A, "toarray") else A, dtype=float))
    X = np.zeros((free.mesh.n_nodes, 3))
    X[:, :free.mesh.points.shape[1]] = free.mesh.points
    return dense(free.M), dense(free.K), X


def exudyn_ffrf_run(model, h: float, p: dict, t_end: float = T_END):
    """(t, tip displacement, solve wall [s], solve CPU [s], setup wall [s]) of Exudyn's
    floating-frame model of the rotating bar (module docstring, "Exudyn FFRF")."""
    import exudyn as exu
    from exudyn.itemInterface import (CoordinateConstraint, LoadCoordinate, MarkerNodeCoordinate, NodePoint,
                                      NodePointGround, NodeRigidBodyEP, ObjectFFRF, SensorNode)
    tic = time.perf_counter()
    M1, K1, X = bar_mesh_matrices(p)
    omega, omega_f = float(p["omega"]), 2.0 * math.pi / p["period"]
    M3 = np.kron(M1, np.eye(3))                      # a 3D two-node bar: the same interpolation in x, y, z
    K3 = np.kron(K1, np.diag([1.0, 0.0, 0.0]))       # axial stiffness only; y, z are constrained below

    def container(A):
        c = exu.MatrixContainer()
        c.SetWithDenseMatrix(A, useDenseMatrix=False)
        return c

    damping = exu.MatrixContainer()
    if model.damping is not None:                    # Rayleigh alpha M + beta K of the flexmbs model
        alpha, beta = model.damping
        damping = container(alpha * M3 + beta * K3)
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    # the frame: at the axis, Euler parameters (cos(phi/2), 0, 0, sin(phi/2)), phi' = Omega from t = 0
    frame = mbs.AddNode(NodeRigidBodyEP(referenceCoordinates=[0, 0, 0, 1, 0, 0, 0],
                                        initialVelocities=[0, 0, 0, 0, 0, 0, 0.5 * omega]))
    nodes = [mbs.AddNode(NodePoint(referenceCoordinates=list(x))) for x in X]
    mbs.AddObject(ObjectFFRF(nodeNumbers=[frame] + nodes, massMatrixFF=container(M3), stiffnessMatrixFF=container(K3),
                             dampingMatrixFF=damping))
    ground = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=mbs.AddNode(NodePointGround()), coordinate=0))

    def fix(node, c, **kw):
        marker = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=node, coordinate=c))
        mbs.AddObject(CoordinateConstraint(markerNumbers=[ground, marker], **kw))

    for c in (0, 1, 2, 4, 5):                        # frame origin at rest, rotation about z only
        fix(frame, c)
    fix(frame, 6, offsetUserFunction=lambda mbs, t, item, offset: math.sin(0.5 * omega * t))
    for c in range(3):                               # node 1 clamped at the axis
        fix(nodes[0], c)
    for node in nodes[1:]:                           # axial motion only, as the flexmbs bar
        fix(node, 1)
        fix(node, 2)
    tip = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nodes[-1], coordinate=0))
    mbs.AddLoad(LoadCoordinate(markerNumber=tip, load=float(p["force"]),
                               loadUserFunction=lambda mbs, t, load: load * math.sin(omega_f * t)))
    sensor = mbs.AddSensor(SensorNode(nodeNumber=nodes[-1], storeInternal=True,
                                      outputVariableType=exu.OutputVariableType.Coordinates))
    mbs.Assemble()
    s = _exudyn_settings(exu, t_end, h, 1.0, modified_newton=True)
    s.solution.sensors.writePeriod = DT_OUT
    setup = time.perf_counter() - tic
    tic, c0 = time.perf_counter(), time.process_time()
    mbs.SolveDynamic(s, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    wall, cpu = time.perf_counter() - tic, time.process_time() - c0
    data = np.asarray(mbs.GetSensorStoredData(sensor))
    return data[:, 0], data[:, 1], wall, cpu, setup


def _exudyn_settings(exu, t_end: float, h: float, rho_inf: float, modified_newton: bool):
    """Generalized-alpha, fixed step h, no files, dense LU (Exudyn's settings used here)."""
    s = exu.SimulationSettings()
    s.timeIntegration.endTime = t_end
    s.timeIntegration.numberOfSteps = int(round(t_end / h))
    s.timeIntegration.generalizedAlpha.spectralRadius = rho_inf
    s.timeIntegration.newton.useModifiedNewton = modified_newton
    s.timeIntegration.verboseMode = 0
    s.solution.file.write = False
    s.show.statistics = False
    s.show.computationTime = False
    s.linearSolver.solverType = exu.LinearSolverType.EXUdense
    return s


def tip_error(t_ref, u_ref, t, u) -> float:
    """max |u - u_ref| / max |u_ref| over the reference times up to the last time of ``t``."""
    m = t_ref <= t[-1] + 1e-12
    return float(np.max(np.abs(np.interp(t_ref[m], t, u) - u_ref[m])) / np.max(np.abs(u_ref)))


# -- spin-up beam ------------------------------------------------------------------------------------
SPIN = dict(omega_s=6.0, t_s=15.0, t_end=20.0, elements=10, dt_out=0.01)
SPIN_REF_H = 5e-4                 # the converged runs of both codes (docs/rotating_beams.md sec. 2.1)


def spin_angle(t: float, omega_s: float = SPIN["omega_s"], t_s: float = SPIN["t_s"]) -> float:
    """Hub angle of the spin-up law (../shared/BENCHMARKS.md sec. 3.2)."""
    if t >= t_s:
        return omega_s * (t - t_s / 2.0)
    c = t_s / (2.0 * math.pi)
    return omega_s / t_s * (t * t / 2.0 + c * c * (math.cos(t / c) - 1.0))


def flexmbs_spinup(h: float | None = None, t_end: float | None = None):
    """(t, tip deflection v(L, t), wall [s], CPU [s], steps) of cases/spinup_beam.py's stiffened
    prescribed model with its default solver settings (step ``h``, end ``t_end`` if given); times:
    build + run."""
    import spinup_beam as sb
    p = {**sb.DEFAULTS, **({} if h is None else {"h": h}), **({} if t_end is None else {"t_end": t_end})}
    tic, c0 = time.perf_counter(), time.process_time()
    model = sb.build(p["elements"], p["omega_s"], p["t_s"], stiffening=True)
    res = fm.run(model, compute_energies=False, store=False, **sb.solver_options(p))
    wall, cpu = time.perf_counter() - tic, time.process_time() - c0
    return res.t, res.displacement[:, -1, 1], wall, cpu, res.stats["n_steps"]


def exudyn_spinup_ancf(h: float, elements: int = SPIN["elements"], t_end: float = SPIN["t_end"],
                       rho_inf: float = 0.9):
    """(t, tip deflection v(L, t), solve wall [s], solve CPU [s], steps) of the Exudyn ANCF model
    of the spin-up beam (module docstring)."""
    import exudyn as exu
    from exudyn.itemInterface import (CoordinateConstraint, MarkerNodeCoordinate, MarkerNodeCoordinates,
                                      NodePoint2DSlope1, NodePointGround, ObjectANCFCable2D,
                                      ObjectConnectorCoordinateVector, SensorNode)
    from spinup_beam import AREA, DENSITY, INERTIA, LENGTH, YOUNGS
    le = LENGTH / elements
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    nodes = [mbs.AddNode(NodePoint2DSlope1(referenceCoordinates=[i * le, 0.0, 1.0, 0.0])) for i in range(elements + 1)]
    with warnings.catch_warnings():                  # the parameter names of Exudyn < 1.12 (deprecated, accepted)
        warnings.simplefilter("ignore", DeprecationWarning)
        for i in range(elements):
            mbs.AddObject(ObjectANCFCable2D(nodeNumbers=[nodes[i], nodes[i + 1]], physicsLength=le,
                                            physicsMassPerLength=DENSITY * AREA, physicsBendingStiffness=YOUNGS * INERTIA,
                                            physicsAxialStiffness=YOUNGS * AREA))
    n_ground = mbs.AddNode(NodePointGround())
    ground = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n_ground, coordinate=0))
    for c in (0, 1):                                 # root at the hub axis
        root = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nodes[0], coordinate=c))
        mbs.AddObject(CoordinateConstraint(markerNumbers=[ground, root]))

    def clamp(mbs, t, item, q, q_t, velocity_level):   # root slope along the hub's x axis
        a = spin_angle(t)
        return [math.cos(a) * q[3] - math.sin(a) * q[2]]

    def clamp_jacobian(mbs, t, item, q, q_t, velocity_level):
        a = spin_angle(t)
        return np.array([[0.0, 0.0, -math.sin(a), math.cos(a)]])

    mbs.AddObject(ObjectConnectorCoordinateVector(
        markerNumbers=[mbs.AddMarker(MarkerNodeCoordinates(nodeNumber=nodes[0])),
                       mbs.AddMarker(MarkerNodeCoordinates(nodeNumber=n_ground))],
        scalingMarker0=np.zeros((1, 4)), constraintUserFunction=clamp, jacobianUserFunction=clamp_jacobian))
    sensor = mbs.AddSensor(SensorNode(nodeNumber=nodes[-1], storeInternal=True,
                                      outputVariableType=exu.OutputVariableType.Position))
    mbs.Assemble()
    s = _exudyn_settings(exu, t_end, h, rho_inf, modified_newton=False)
    s.timeIntegration.newton.absoluteTolerance = 1e-6   # N: forces are 1e2-1e3 N; see the module docstring
    s.solution.sensors.writePeriod = SPIN["dt_out"]
    tic, c0 = time.perf_counter(), time.process_time()
    mbs.SolveDynamic(s, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    wall, cpu = time.perf_counter() - tic, time.process_time() - c0
    data = np.asarray(mbs.GetSensorStoredData(sensor))
    angle = np.array([spin_angle(t) for t in data[:, 0]])
    v = np.cos(angle) * data[:, 2] - np.sin(angle) * data[:, 1]
    return data[:, 0], v, wall, cpu, int(s.timeIntegration.numberOfSteps)


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
    s = _exudyn_settings(exu, t_end, h, 1.0, modified_newton=True)
    s.solution.sensors.writePeriod = math.radians(degrees_out) / omega
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


PARTS = ("rotating-bar", "rotating-bar-lean", "rotating-bar-ffrf", "spinup", "slider-crank")


def parse_parts(text: str) -> set[str]:
    """The parts named in ``--only`` ("rotating-bar" means both Exudyn models of the bar)."""
    parts = {x.strip() for x in text.split(",") if x.strip()}
    unknown = parts - set(PARTS)
    if unknown or not parts:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of {', '.join(PARTS)}; "
                                         f"got {text!r}")
    if "rotating-bar" in parts:
        parts |= {"rotating-bar-lean", "rotating-bar-ffrf"}
    return parts - {"rotating-bar"}


def load_average() -> str:
    try:
        return "load average " + ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except (OSError, AttributeError):
        return "load average unknown"


def bar_part(a, parts: set[str], have_exudyn: bool) -> None:
    """The README job (flexmbs, whole process) against Exudyn's lean and FFRF models."""
    median, times, proc_cpu, out = flexmbs_process(a.repeats)
    m = re.search(r"undamped.*?tip error ([0-9.e+-]+)", out)
    err = float(m.group(1)) if m else float("nan")
    solves = [float(x) for x in re.findall(r"solve ([0-9.]+) s", out)]
    print(f"flexmbs  README job (whole process, 2 runs + files + plots): median {median:.2f} s wall of "
          f"{', '.join(f'{x:.2f}' for x in times)}, median CPU {proc_cpu:.2f} s; tip error {err:.1e}; "
          f"in-process solves {' + '.join(f'{x:.3f}' for x in solves)} s (method 'exact', energies and works) "
          f"[{load_average()}]")
    if not have_exudyn:
        return
    import exudyn
    p = rb.DEFAULTS
    phys = {k: p[k] for k in ("elements", "length", "mass", "area", "youngs", "omega", "force", "period")}
    models = {"undamped": rb.build(**phys), "damped": rb.build(**phys, damping=0.02)}
    refs = {name: exact_tip(model) for name, model in models.items()}
    # the step of matched accuracy: the lean and the FFRF model are the same linear equations under the
    # same integrator, so the lean model (2 us per step) finds the step and the FFRF run checks it
    h, walls, errors = a.exudyn_h, [], []
    if h is None:                                   # probe, then order-2 estimates of the step
        h_try = 2e-6
        for _ in range(6):
            t, u, wall = exudyn_run(models["undamped"], h_try, p["period"])
            e = tip_error(*refs["undamped"], t, u)
            print(f"Exudyn lean at h = {h_try:.4g} s: undamped tip error {e:.2e} ({wall:.2f} s wall, "
                  f"{EXUDYN_CPU[-1]:.2f} s CPU)")
            if e <= a.target:
                break
            h_try = DT_OUT / math.ceil(DT_OUT / (0.95 * h_try * math.sqrt(a.target / e)))
        h, walls, errors = h_try, [wall], [e]
    if "rotating-bar-lean" in parts:
        cpus = EXUDYN_CPU[-1:] if walls else []
        for name in (("undamped", "damped") if not walls else ("damped",)):
            t, u, wall = exudyn_run(models[name], h, p["period"])
            walls.append(wall)
            cpus.append(EXUDYN_CPU[-1])
            errors.append(tip_error(*refs[name], t, u))
        print(f"Exudyn {exudyn.__version__} lean (GenericODE2), generalized-alpha (rho_inf = 1), h = {h:.4g} s: "
              f"solve {walls[0]:.2f} s + {walls[1]:.2f} s wall, {cpus[0]:.2f} s + {cpus[1]:.2f} s CPU (undamped + "
              f"damped); tip error {errors[0]:.1e} (undamped), {errors[1]:.1e} (damped) [{load_average()}]")
        print(f"ratios (lean): Exudyn's two solves / flexmbs whole process = {sum(walls) / median:.1f} (wall), "
              f"{sum(cpus) / proc_cpu:.1f} (CPU); Exudyn's two solves / flexmbs's two solves (wall) = "
              f"{sum(walls) / max(sum(solves), 1e-9):.0f}")
    if "rotating-bar-ffrf" not in parts:
        return
    scale = T_END / a.ffrf_t_end
    note = "" if scale == 1.0 else f" (0-{a.ffrf_t_end:g} s measured, times scaled by {scale:g} to 0.1 s)"
    ffrf = {}
    for hh in dict.fromkeys([a.ffrf_probe_h, a.ffrf_h, h]):
        for name in (("undamped", "damped") if hh == h else ("undamped",)):
            t, u, wall, cpu, setup = exudyn_ffrf_run(models[name], hh, p, a.ffrf_t_end)
            ffrf[hh, name] = (tip_error(*refs[name], t, u), wall * scale, cpu * scale)
            e, w, c = ffrf[hh, name]
            print(f"Exudyn {exudyn.__version__} FFRF, generalized-alpha (rho_inf = 1), h = {hh:.4g} s, {name}: "
                  f"tip error {e:.2e}; solve {w:.2f} s wall, {c:.2f} s CPU ({1e6 * c / (T_END / hh):.0f} us CPU "
                  f"per step; model set-up {1e3 * setup:.0f} ms){note} [{load_average()}]")
    # the flexmbs process again, under the load the FFRF runs had (CPU times grow with the load too)
    median2, times2, proc_cpu2, _ = flexmbs_process(a.repeats)
    print(f"flexmbs  README job again, after the FFRF runs: median {median2:.2f} s wall of "
          f"{', '.join(f'{x:.2f}' for x in times2)}, median CPU {proc_cpu2:.2f} s [{load_average()}]")
    e_h, w_h, c_h = ffrf[a.ffrf_h, "undamped"]
    (e_u, w_u, c_u), (e_d, w_d, c_d) = ffrf[h, "undamped"], ffrf[h, "damped"]
    for label, (ex_w, ex_c) in ((f"FFRF at h = {a.ffrf_h:g} s (issue 15's setting), one run, tip error {e_h:.1e}",
                                 (w_h, c_h)),
                                (f"FFRF at {'matched accuracy' if max(e_u, e_d) <= a.target else '--exudyn-h, NOT matched'}"
                                 f", h = {h:.4g} s, two runs, tip errors {e_u:.1e} undamped and {e_d:.1e} damped "
                                 f"(target {a.target:g}; flexmbs {err:.1e})",
                                 (w_u + w_d, c_u + c_d))):
        print(f"ratio ({label}{note}): Exudyn / flexmbs whole process (2 runs, timed before / after the FFRF runs) = "
              f"{ex_w / median:.1f} / {ex_w / median2:.1f} (wall), {ex_c / proc_cpu:.1f} / {ex_c / proc_cpu2:.1f} "
              f"(CPU); flexmbs / Exudyn = {proc_cpu / ex_c:.3f} / {proc_cpu2 / ex_c:.3f} (CPU)")


def spinup_part(a, have_exudyn: bool) -> None:
    """The spin-up beam: flexmbs's prescribed model (defaults) against Exudyn's ANCF beam on a driven clamp."""
    t_ref, v_ref, w_ref, c_ref, n_ref = flexmbs_spinup(SPIN_REF_H)
    t, v, wall, cpu, n = flexmbs_spinup()
    e_fm = tip_error(t_ref, v_ref, t, v)
    i = int(np.argmin(v))
    print(f"flexmbs  spin-up beam (cases/spinup_beam.py defaults: 10 BeamEB2D, stiffening, generalized-alpha "
          f"rho_inf 0.9, h = 0.01 s, {n} steps): build + run {wall:.2f} s wall, {cpu:.2f} s CPU; tip minimum "
          f"{v[i]:.6f} m at {t[i]:.2f} s; step error {e_fm:.1e} of the peak against h = {SPIN_REF_H:g} s "
          f"({n_ref} steps, {c_ref:.2f} s CPU) [{load_average()}]")
    if not have_exudyn:
        return
    import exudyn
    tx_ref, vx_ref, _, cx_ref, nx_ref = exudyn_spinup_ancf(SPIN_REF_H)
    print(f"Exudyn {exudyn.__version__} ANCF spin-up, h = {SPIN_REF_H:g} s ({nx_ref} steps): solve {cx_ref:.2f} s CPU; "
          f"tip minimum {vx_ref.min():.6f} m at {tx_ref[np.argmin(vx_ref)]:.2f} s")
    h = 0.01
    for _ in range(6):                               # the largest h = 0.01 s / k at flexmbs's step error
        tx, vx, wx, cx, nx = exudyn_spinup_ancf(h)
        ex = tip_error(tx_ref, vx_ref, tx, vx)
        j = int(np.argmin(vx))
        print(f"Exudyn {exudyn.__version__} ANCF spin-up, h = {h:.4g} s ({nx} steps): solve {wx:.2f} s wall, "
              f"{cx:.2f} s CPU; tip minimum {vx[j]:.6f} m at {tx[j]:.2f} s; step error {ex:.1e} of the peak "
              f"[{load_average()}]")
        if ex <= e_fm:
            break
        h = SPIN["dt_out"] / math.ceil(SPIN["dt_out"] / (0.95 * h * math.sqrt(e_fm / ex)))
    d_conv = tip_error(t_ref, v_ref, tx_ref, vx_ref)
    print(f"agreement: max |v_Exudyn - v_flexmbs| / max |v| = {d_conv:.1e} (converged runs, h = {SPIN_REF_H:g} s), "
          f"{tip_error(t, v, tx, vx):.1e} (matched runs); tip minima {v_ref.min():.6f} m (flexmbs) and "
          f"{vx_ref.min():.6f} m (Exudyn ANCF) against -0.574409 m at 6.76 s (docs/rotating_beams.md, 10 "
          f"elements; ../shared/BENCHMARKS.md sec. 3 gives no published value)")
    print(f"ratio (spin-up at matched accuracy, errors {e_fm:.1e} flexmbs, {ex:.1e} Exudyn): Exudyn solve / flexmbs "
          f"build + run = {wx / wall:.1f} (wall), {cx / cpu:.1f} (CPU)")


def slider_crank_part(have_exudyn: bool) -> None:
    sc_wall, sc_cpu, n, angle, w = flexmbs_slider_crank()
    print(f"flexmbs  slider-crank (cases/slider_crank.py defaults): solve {sc_wall:.2f} s wall, {sc_cpu:.2f} s CPU, "
          f"{n} steps ({1e6 * sc_cpu / n:.0f} us CPU per step); {_extremes(angle, w)} [{load_average()}]")
    if not have_exudyn:
        return
    import exudyn
    h = 2.0 * np.pi * 2.0 / 150.0 / n              # flexmbs's step
    for hh in (h, h / 2):
        ex_wall, ex_cpu, ex_n, ex_angle, ex_w = exudyn_slider_crank(hh)
        print(f"Exudyn {exudyn.__version__} ANCF slider-crank, h = {hh:.4g} s: solve {ex_wall:.2f} s wall, "
              f"{ex_cpu:.2f} s CPU ({1e6 * ex_cpu / ex_n:.0f} us CPU per step); {_extremes(ex_angle, ex_w)}")
        if hh == h:
            ratio_wall, ratio_cpu = ex_wall / sc_wall, ex_cpu / sc_cpu
    print(f"ratios (slider-crank, same step): Exudyn / flexmbs = {ratio_wall:.1f} (wall), {ratio_cpu:.1f} (CPU)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", type=parse_parts, default=set(PARTS) - {"rotating-bar"},
                    help=f"comma-separated parts to run, of: {', '.join(PARTS)} (default: all; 'rotating-bar' "
                         "runs the flexmbs job against both Exudyn models)")
    ap.add_argument("--repeats", type=int, default=5, help="runs of the flexmbs process (median)")
    ap.add_argument("--exudyn-h", type=float, default=None,
                    help="Exudyn's time step for the bar at matched accuracy [s] (default: from --target)")
    ap.add_argument("--target", type=float, default=8.7e-6, help="tip error Exudyn's step is chosen for")
    ap.add_argument("--ffrf-h", type=float, default=2.5e-7, help="step of the FFRF run at issue 15's setting [s]")
    ap.add_argument("--ffrf-probe-h", type=float, default=2e-6, help="step of the FFRF probe run [s]")
    ap.add_argument("--ffrf-t-end", type=float, default=T_END,
                    help="interval the FFRF runs measure [s]; times are scaled to 0.1 s, errors are over it")
    ap.add_argument("--no-slider-crank", dest="slider_crank", action="store_false", help="skip the slider-crank")
    a = ap.parse_args(argv)
    # Exudyn 1.12 renamed the physics* parameters; the old names, used here for older versions, still work
    warnings.filterwarnings("ignore", message=r"Object\w+: the parameter \w+ is deprecated", category=DeprecationWarning)
    parts = set(a.only) - (set() if a.slider_crank else {"slider-crank"})
    if not 0.0 < a.ffrf_t_end <= T_END:
        ap.error(f"--ffrf-t-end must lie in (0, {T_END:g}] s, got {a.ffrf_t_end!r}")
    print(f"machine: {platform.processor() or platform.machine()}, {platform.system()}, python "
          f"{platform.python_version()}, numpy {np.__version__}; {load_average()}")
    try:
        import exudyn  # noqa: F401
        have_exudyn = True
    except ImportError:
        have_exudyn = False
        print("Exudyn is not installed (pip install exudyn, or the 'bench' extra): its side is skipped.")
    if parts & {"rotating-bar-lean", "rotating-bar-ffrf"}:
        bar_part(a, parts, have_exudyn)
    if "spinup" in parts:
        spinup_part(a, have_exudyn)
    if "slider-crank" in parts:
        slider_crank_part(have_exudyn)
    return 0


if __name__ == "__main__":
    sys.exit(main())
