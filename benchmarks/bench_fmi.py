"""Cost and agreement of the FMI co-simulation FMU (issue 27, item 4; docs/benchmarks.md sec. 24).

    python benchmarks/bench_fmi.py

The rod on its pin of tests/test_fmi.py, its joint torque the FMU's input (the torque table of
that test), 1 s at a sample period T = 1 ms with index3-alpha at h = 1 ms: wall time of the
export, of fmpy's `simulate_fmu` (1000 communication steps, extraction and instantiation
included), of the FMU's core `flexmbs.fmi.CoSimulation` stepped in Python, and of the same System
run directly by `flexmbs.run` with a controller holding the same torques; the largest difference
of the FMU's outputs from the direct run's samples.
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import test_fmi as case  # noqa: E402

import fmpy  # noqa: E402

from flexmbs import control, fmi  # noqa: E402
from flexmbs.analysis import run  # noqa: E402

T, STOP = 1e-3, 1.0
N = round(STOP / T)


def direct():
    tau = control.Output("torque")
    system = case.pendulum(tau)
    c = control.Controller(T, {"pin.angle": control.joint_angle(system.constraint("pin"))}, tau,
                           lambda t, sensed: float(case.held_table(t, T)))
    run(system, formulation="index3", method="index3-alpha", h=T, t_end=STOP, t_eval=np.array([0.0, STOP]),
        controllers=[c], store=False)
    return c.record["sensed"]["pin.angle"]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tic = time.perf_counter()
        path = fmi.export(case.pendulum, Path(tmp) / "pendulum.fmu", inputs={"torque": "N.m"}, outputs=case.OUTPUTS,
                          step=T, stop_time=STOP)
        print(f"export: {time.perf_counter() - tic:.3f} s")
        tic = time.perf_counter()
        result = fmpy.simulate_fmu(str(path), start_time=0.0, stop_time=STOP, output_interval=T, input=case.TABLE)
        print(f"fmpy.simulate_fmu, {N} steps: {time.perf_counter() - tic:.3f} s")
    sim = fmi.CoSimulation(case.pendulum, {"torque": "N.m"}, case.OUTPUTS, step=T)
    tic = time.perf_counter()
    sim.start(0.0, STOP)
    for k in range(N):
        sim.inputs["torque"] = float(case.held_table(k * T, T))
        sim.advance(k * T, T)
    print(f"CoSimulation, {N} steps: {time.perf_counter() - tic:.3f} s")
    tic = time.perf_counter()
    angle = direct()
    print(f"flexmbs.run with a controller, {N} samples: {time.perf_counter() - tic:.3f} s")
    err = np.max(np.abs(result["pin.angle"][:-1] - angle))
    print(f"max |angle_FMU - angle_direct| over the samples: {err:.2e} rad")


if __name__ == "__main__":
    main()
