"""FMI 2.0 co-simulation export (issue 27, item 4): the FMU of a System simulated by an independent
importer (fmpy's `simulate_fmu`) against the same System run directly by `flexmbs.run` with a
controller that holds the same inputs, and against the pendulum's equation of motion.

The model: a uniform rod (m = 1 kg, l = 1 m) on a revolute joint about +y, gravity -z, its joint
torque tau the FMU's input:

.. code:: text

    J_O theta'' = -m g l_c sin(theta) + tau(t),   J_O = m l^2 / 3,  l_c = l / 2

fmpy sets each input to its table's linear interpolation at the communication point t_k before
fmi2DoStep(t_k, dt) (checked on a one-line slave while writing this test), so the torque held on
(t_k, t_k + dt] is tau_table(t_k).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pythonfmu")
fmpy = pytest.importorskip("fmpy")

from flexmbs import control, fmi                                   # noqa: E402
from flexmbs.analysis import run                                    # noqa: E402
from flexmbs.bodies import RigidBodyEP                              # noqa: E402
from flexmbs.constraints import Revolute                            # noqa: E402
from flexmbs.system import System                                   # noqa: E402

CASES = Path(__file__).resolve().parents[1] / "cases"
STEP, H, STOP = 0.01, 1e-3, 1.0                   # the FMU's sample period, index3-alpha's step, the stop time
OUTPUTS = ["pin.angle", "pin.rate", "rod.position"]
# the torque table [s, N m] fmpy interpolates (kinks at 0.3 and 0.6 s, on communication points)
TABLE = np.array([(0.0, 0.0), (0.3, 2.0), (0.6, -1.5), (1.0, 0.5)], dtype=[("time", float), ("torque", float)])


def pendulum(torque, mass=1.0, length=1.0, g=9.81):
    """The rod on its pin, its joint torque the held input ``torque`` (a flexmbs.control.Output)."""
    m, l = mass, length
    axis = np.array([0.0, 1.0, 0.0])
    rod = RigidBodyEP("rod", m, np.diag([m * l * l / 12, m * l * l / 12, 1e-4 * m * l * l]),
                      position=(0.0, 0.0, -l / 2), loads=[torque.torque(axis)])
    pin = Revolute(None, rod, at=(0.0, 0.0, 0.0), axis=axis, name="pin")
    return System([rod], [pin], gravity=(0.0, 0.0, -g))


def held_table(t, dt):
    """tau held on (t_k, t_k + dt]: the table at t_k = the communication point at or before t."""
    t_k = np.floor(np.asarray(t) / dt + 1e-9) * dt
    return np.interp(t_k, TABLE["time"], TABLE["torque"])


def direct_run(dt):
    """The same System run by flexmbs.run, a controller of period STEP holding tau(t_k) of the
    master's steps dt: the outputs at every sample."""
    tau = control.Output("torque")
    system = pendulum(tau)
    pin, rod = system.constraint("pin"), system.body("rod")
    sensors = {"pin.angle": control.joint_angle(pin), "pin.rate": control.joint_rate(pin),
               "rod.position": control.body_position(rod)}
    c = control.Controller(STEP, sensors, tau, lambda t, sensed: float(held_table(t, dt)), name="direct")
    res = run(system, formulation="index3", method="index3-alpha", h=H, t_end=STOP,
              t_eval=np.linspace(0.0, STOP, round(STOP / STEP) + 1), controllers=[c], store=False)
    assert res.status == "finished", res.message
    return c.record, res


@pytest.fixture(scope="module")
def fmu(tmp_path_factory):
    return fmi.export(pendulum, tmp_path_factory.mktemp("fmu") / "pendulum.fmu", inputs={"torque": "N.m"},
                      outputs=OUTPUTS, step=STEP, h=H, stop_time=STOP)


@pytest.fixture(scope="module")
def simulated(fmu):
    return fmpy.simulate_fmu(str(fmu), start_time=0.0, stop_time=STOP, output_interval=STEP, input=TABLE)


def fmu_outputs(result) -> dict:
    return {"pin.angle": result["pin.angle"], "pin.rate": result["pin.rate"],
            "rod.position": np.column_stack([result[f"rod.position[{k}]"] for k in (1, 2, 3)])}


def test_fmu_in_fmpy_matches_the_direct_run(simulated):
    record, res = direct_run(STEP)
    out = fmu_outputs(simulated)
    assert np.allclose(simulated["time"], np.linspace(0.0, STOP, 101), rtol=0, atol=1e-12)
    # the samples t_k = 0 .. STOP - STEP, then the end of the run (no sample at t_end)
    q_end = res.bodies["rod"]
    expected = {"pin.angle": np.append(record["sensed"]["pin.angle"], np.arctan2(q_end.rotation[-1, 0, 2],
                                                                                 q_end.rotation[-1, 2, 2])),
                "pin.rate": np.append(record["sensed"]["pin.rate"], q_end.angular_velocity[-1, 1]),
                "rod.position": np.vstack([record["sensed"]["rod.position"], q_end.position[-1]])}
    for name, value in expected.items():
        err = np.max(np.abs(out[name] - value))
        assert err <= 1e-8, f"{name}: FMU vs direct run differ by {err:.3g}"
    assert np.max(np.abs(record["outputs"]["torque"] - held_table(record["t"], STEP))) == 0.0
    assert abs(out["pin.angle"][-1]) > 0.1                     # the torque moved it


def pendulum_ode_angles() -> np.ndarray:
    """theta(t_k) of J_O theta'' = -m g l_c sin(theta) + tau_k, integrated by DOP853 (rtol 1e-12) from
    sample to sample with the held torques tau_k = tau_table(t_k)."""
    from scipy.integrate import solve_ivp
    m, l, g = 1.0, 1.0, 9.81
    J_O, w = m * l * l / 3, m * g * l / 2
    y, theta = np.zeros(2), [0.0]
    for k in range(round(STOP / STEP)):
        tau = float(held_table(k * STEP, STEP))
        sol = solve_ivp(lambda t, y: [y[1], (tau - w * math.sin(y[0])) / J_O], (k * STEP, (k + 1) * STEP), y,
                        method="DOP853", rtol=1e-12, atol=1e-12)
        y = sol.y[:, -1]
        theta.append(y[0])
    return np.array(theta)


def cosimulated_angles(h: float) -> np.ndarray:
    """The FMU's core (`flexmbs.fmi.CoSimulation`) stepped here as fmpy steps it, index3-alpha at h."""
    sim = fmi.CoSimulation(pendulum, {"torque": "N.m"}, ["pin.angle"], step=STEP, h=h)
    theta = [sim.start(0.0, STOP)["pin.angle"]]
    for k in range(round(STOP / STEP)):
        sim.inputs["torque"] = float(held_table(k * STEP, STEP))
        theta.append(sim.advance(k * STEP, STEP)["pin.angle"])
    assert sim.status == "finished"
    return np.array(theta)


def test_fmu_angle_follows_the_pendulum_equation(simulated):
    """The FMU's angle against the equation of motion: the error is index3-alpha's, first order in h
    because every sample changes the held torque (a jump in the load, which the generalized-alpha
    acceleration carries into the next step): measured 7.8e-4 rad at h = 1 ms, 3.9e-4 at 0.5 ms (a
    constant torque gives 6.2e-7 and 1.5e-7: second order)."""
    theta = pendulum_ode_angles()
    err = np.max(np.abs(simulated["pin.angle"] - theta))
    assert err < 1e-3, f"max |theta_FMU - theta_ODE| = {err:.3g} rad"
    half = np.max(np.abs(cosimulated_angles(H / 2) - theta))
    assert 1.8 < err / half < 2.2, f"errors {err:.3g} (h), {half:.3g} (h/2): not first order"
    L = np.hypot(simulated["rod.position[1]"], simulated["rod.position[3]"])
    assert np.allclose(L, 0.5, rtol=0, atol=1e-12)                 # the centroid stays l/2 from the pin


def test_master_step_of_two_samples_holds_the_input_over_both(fmu):
    """dt = 2 T: the FMU samples twice per step, the input held over both (a direct run holding
    tau(t_2k) over (t_2k, t_2k + 2T])."""
    result = fmpy.simulate_fmu(str(fmu), start_time=0.0, stop_time=STOP, output_interval=2 * STEP, input=TABLE)
    record, _ = direct_run(2 * STEP)
    angle = record["sensed"]["pin.angle"][::2]
    assert np.max(np.abs(result["pin.angle"][:-1] - angle)) <= 1e-8
    other = fmpy.simulate_fmu(str(fmu), start_time=0.0, stop_time=STOP, output_interval=STEP, input=TABLE)
    assert np.max(np.abs(result["pin.angle"] - other["pin.angle"][::2])) > 1e-4     # a different input history


def test_model_description_declares_causality_variability_units(fmu):
    md = fmpy.read_model_description(str(fmu), validate=True)        # fmpy checks it against the FMI 2.0 schema
    assert md.fmiVersion == "2.0" and md.coSimulation is not None
    variables = {v.name: v for v in md.modelVariables}
    expected = {"torque": ("input", "N.m"), "pin.angle": ("output", "rad"), "pin.rate": ("output", "rad/s"),
                **{f"rod.position[{k}]": ("output", "m") for k in (1, 2, 3)}}
    assert set(variables) == set(expected)
    for name, (causality, unit) in expected.items():
        v = variables[name]
        assert (v.causality, v.variability, v.type, v.unit) == (causality, "continuous", "Real", unit), name
    assert float(variables["torque"].start) == 0.0
    units = {u.name: u.baseUnit for u in md.unitDefinitions}
    assert (units["N.m"].kg, units["N.m"].m, units["N.m"].s) == (1, 2, -2)
    assert (units["rad/s"].rad, units["rad/s"].s) == (1, -1)
    assert float(md.defaultExperiment.stepSize) == STEP and float(md.defaultExperiment.stopTime) == STOP
    assert [u.variable.name for u in md.outputs] == ["pin.angle", "pin.rate"] + [f"rod.position[{k}]"
                                                                                 for k in (1, 2, 3)]


def test_cosimulation_without_inputs_follows_the_a01_closed_form():
    """An FMU's core with outputs only: the IFToMM A01 pendulum (cases/pendulum_a01.py), its mass
    point against the closed form (../shared/BENCHMARKS.md sec. 6b) to index3-alpha's error."""
    sys.path.insert(0, str(CASES))
    import pendulum_a01
    sim = fmi.CoSimulation(a01_system, {}, ["pendulum.position"], step=0.01, h=1e-3)
    P = [list(sim.start(0.0, 0.5).values())]
    P += [list(sim.advance(k * 0.01, 0.01).values()) for k in range(50)]
    sim.close()
    t = np.linspace(0.0, 0.5, 51)
    err = np.max(np.abs(np.array(P) - pendulum_a01.exact(t)))
    assert sim.status == "finished" and err < 1e-4, f"max |P1 - exact| = {err:.3g} m"


def a01_system():
    import pendulum_a01
    return pendulum_a01.build()[0]


def test_cli_exports_the_case_fmu_and_fmpy_runs_it(tmp_path, capsys):
    """`flexmbs fmu controlled_pendulum --set length=2`: a constant torque tau from rest gives
    theta = tau / (m g l_c) (1 - cos(omega t)), omega^2 = m g l_c / J_O = 3 g / (2 l), to O(theta^3)."""
    from flexmbs.cli import main
    out = tmp_path / "cp.fmu"
    assert main(["--cases", str(CASES), "fmu", "controlled_pendulum", "--out", str(out), "--set", "length=2"]) == 0
    assert "wrote" in capsys.readouterr().out
    tau, l = 0.05, 2.0
    table = np.array([(0.0, tau), (1.0, tau)], dtype=[("time", float), ("torque", float)])
    result = fmpy.simulate_fmu(str(out), start_time=0.0, stop_time=0.2, output_interval=1e-3, input=table)
    t = result["time"]
    exact = tau / (9.81 * l / 2) * (1 - np.cos(np.sqrt(3 * 9.81 / (2 * l)) * t))
    err = np.max(np.abs(result["pin.angle"] - exact))
    assert err < 2e-7, f"max |theta - closed form| = {err:.3g} rad"


def servo(angle, k=50.0, c=10.0):
    """The rod without gravity, its pin driven by a servo torque k (angle(t) - theta) - c theta' to the
    held set-point ``angle`` (a load of the state: the numpy path)."""
    axis = np.array([0.0, 1.0, 0.0])

    def torque(body, t, q, v):
        A = body.rotation(q)                                       # R_y(theta): A[0, 2] = sin, A[2, 2] = cos
        theta = math.atan2(A[0, 2], A[2, 2])
        return body.torque(q, (k * (angle(t) - theta) - c * float(body.angular_velocity(q, v)[1])) * axis)
    rod = RigidBodyEP("rod", 1.0, np.diag([1 / 12, 1 / 12, 1e-4]), position=(0.0, 0.0, -0.5), loads=[torque])
    return System([rod], [Revolute(None, rod, at=(0.0, 0.0, 0.0), axis=axis, name="pin")])


def test_a_set_point_input_drives_a_servo_to_it():
    """A set-point input (rad) of a servo: J_O theta'' + c theta' + k theta = k u with u = 0.3 held from
    t = 0 (overdamped: c = 10 > 2 sqrt(k J_O) = 8.2); its step response from rest,
    theta = u (1 + (r_2 exp(r_1 t) - r_1 exp(r_2 t)) / (r_1 - r_2)), r the roots of J_O r^2 + c r + k,
    at t = 0.4 s to index3-alpha's error at h = 2 ms (measured 1.1e-6 rad)."""
    sim = fmi.CoSimulation(servo, {"angle": "rad"}, ["pin.angle"], step=0.02, h=2e-3)
    sim.start(0.0, 0.4)
    sim.inputs["angle"] = 0.3
    for k in range(20):
        theta = sim.advance(k * 0.02, 0.02)["pin.angle"]
    sim.close()
    r = np.roots([1 / 3, 10.0, 50.0]).real
    exact = 0.3 * (1 + (r[1] * np.exp(0.4 * r[0]) - r[0] * np.exp(0.4 * r[1])) / (r[0] - r[1]))
    assert exact > 0.2 and abs(theta - exact) < 1e-5, f"theta(0.4 s) = {theta:.9f}, closed form {exact:.9f}"
