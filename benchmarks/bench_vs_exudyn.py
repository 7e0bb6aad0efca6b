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
    """(t, tip displacement, solve wall time [s]) of the Exudyn GenericODE2 model (module docstring)."""
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
    tic = time.perf_counter()
    mbs.SolveDynamic(s, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    wall = time.perf_counter() - tic
    data = np.asarray(mbs.GetSensorStoredData(sensor))
    return data[:, 0], data[:, 1 + tip], wall


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="runs of the flexmbs process (median)")
    ap.add_argument("--exudyn-h", type=float, default=None, help="Exudyn's time step [s] (default: from --target)")
    ap.add_argument("--target", type=float, default=8.7e-6, help="tip error Exudyn's step is chosen for")
    a = ap.parse_args(argv)
    print(f"machine: {platform.processor() or platform.machine()}, {platform.system()}, python "
          f"{platform.python_version()}, numpy {np.__version__}")

    median, times, cpu, out = flexmbs_process(a.repeats)
    m = re.search(r"undamped.*?tip error ([0-9.e+-]+)", out)
    err = float(m.group(1)) if m else float("nan")
    solves = [float(x) for x in re.findall(r"solve ([0-9.]+) s", out)]
    print(f"flexmbs  README job (whole process, 2 runs + files + plots): median {median:.2f} s wall of "
          f"{', '.join(f'{x:.2f}' for x in times)}, median CPU {cpu:.2f} s; tip error {err:.1e}; "
          f"in-process solves {' + '.join(f'{x:.3f}' for x in solves)} s (method 'exact', energies and works)")

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
    for damping in ((0.0, 0.02) if not walls else (0.02,)):
        model = rb.build(**phys, damping=damping)
        t, u, wall = exudyn_run(model, h, p["period"])
        walls.append(wall)
        t_ref, u_ref = exact_tip(model)
        u_at = np.interp(t_ref, t, u)
        errors.append(float(np.max(np.abs(u_at - u_ref)) / np.max(np.abs(u_ref))))
    print(f"Exudyn {exudyn.__version__} GenericODE2, generalized-alpha (rho_inf = 1), h = {h:.4g} s: "
          f"solve {walls[0]:.2f} s + {walls[1]:.2f} s (undamped + damped); tip error {errors[0]:.1e} (undamped), {errors[1]:.1e} (damped)")
    print(f"ratios: Exudyn's two solves / flexmbs whole process = {sum(walls) / median:.1f} (wall), "
          f"{sum(walls) / cpu:.1f} (CPU); / flexmbs's two solves = {sum(walls) / max(sum(solves), 1e-9):.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
