"""Issue 22, item 3 (speed): controllers sampled from inside the compiled kernel's steps
(`flexmbs.control.KernelSampling`): the sensors the kernel evaluates in C give the Python sensors'
values at the same states, a sensor it does not evaluate is read in Python within the same call,
and one kernel call runs many samples."""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs import control
from flexmbs.bodies import RigidBodyEP
from flexmbs.compiled import CompiledSystem, kernel_status
from flexmbs.constraints import Revolute
from flexmbs.system import System

pytestmark = pytest.mark.skipif(not kernel_status().installed, reason="the compiled kernel is not installed")
AXIS = np.array([0.0, 1.0, 0.0])


def double_pendulum(loads):
    """Two rods (1 kg, 1 m) in a chain about y: the upper from the ground at the origin, the lower from
    the upper's tip (tilted 0.4 rad, so that the joint angle and the rates are not trivial);
    (System, upper joint, lower joint)."""
    c, s = np.cos(0.4), np.sin(0.4)
    upper = RigidBodyEP("upper", 1.0, np.diag([1 / 12, 1 / 12, 1e-4]), position=(0.0, 0.0, -0.5))
    lower = RigidBodyEP("lower", 1.0, np.diag([1 / 12, 1 / 12, 1e-4]), position=(0.5 * s, 0.0, -1.0 - 0.5 * c),
                        orientation=np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]), loads=loads)
    top = Revolute(None, upper, at=(0.0, 0.0, 0.0), axis=AXIS, name="top")
    mid = Revolute(upper, lower, at=(0.0, 0.0, -1.0), axis=AXIS, name="mid")
    return System([upper, lower], [top, mid], gravity=(0.0, 0.0, -9.81)), top, mid


def sensors(mid, lower):
    return {"angle": control.joint_angle(mid), "rate": control.joint_rate(mid),
            "r": control.body_position(lower, (0.1, 0.0, -0.5)), "v": control.body_velocity(lower, (0.1, 0.0, -0.5)),
            "w": control.body_angular_velocity(lower)}


def test_kernel_sensors_give_the_python_sensors_values_at_the_same_states():
    """Outputs at the sample times: each sensed value the kernel computed in C equals the Python
    sensor's `read` of the state written at that output (round-off)."""
    tau = control.Output("torque")
    system, _, mid = double_pendulum([tau.torque(AXIS)])
    lower = system.bodies[1]
    sense = sensors(mid, lower)
    c = control.Controller(1e-3, sense, tau, lambda t, s: -2.0 * s["rate"] - 5.0 * (s["angle"] - 0.2))
    res = fm.run(system, method="index3-alpha", h=2.5e-4, t_end=0.05, dt_out=1e-3, controllers=[c], store=False,
                 kernel="compiled")
    assert res.status == "finished" and res.metadata["kernel"] == "compiled"
    rec = c.record
    assert len(rec["t"]) == 50
    np.testing.assert_allclose(rec["t"], res.t[:50], atol=1e-15)
    for s in sense.values():
        s.reset()
    for k in range(50):
        state = control.State(system, res.q[k], res.v[k])
        for name, s in sense.items():
            np.testing.assert_allclose(rec["sensed"][name][k], s.read(state), rtol=0, atol=1e-13,
                                       err_msg=f"sensor {name} at sample {k}")
    assert np.ptp(rec["sensed"]["angle"]) > 1e-3 and np.abs(rec["sensed"]["rate"]).max() > 1e-2


def test_a_sensor_the_kernel_does_not_evaluate_is_read_in_python_within_the_call():
    tau = control.Output("torque")
    system, top, mid = double_pendulum([tau.torque(AXIS)])
    custom = control.Sensor("z of upper", (system.bodies[0],), lambda state: float(state.q[2]))
    assert custom.kernel is None
    c = control.Controller(1e-3, {"z": custom, "rate": control.joint_rate(mid)}, tau,
                           lambda t, s: -3.0 * s["rate"])
    res = fm.run(system, method="index3-alpha", h=5e-4, t_end=0.02, dt_out=1e-3, controllers=[c], store=False,
                 kernel="compiled")
    assert res.status == "finished" and res.metadata["kernel"] == "compiled"
    np.testing.assert_allclose(c.record["sensed"]["z"], res.q[:20, 2], rtol=0, atol=1e-15)


def test_one_kernel_call_runs_many_samples(monkeypatch):
    """The kernel no longer returns at every sample: 400 samples in a few calls (the first call is
    64 steps, the next ones sized to CHUNK_SECONDS)."""
    calls = []
    steps = CompiledSystem.steps

    def counted(self, *args, **kwargs):
        calls.append(len(args[6]))
        return steps(self, *args, **kwargs)
    monkeypatch.setattr(CompiledSystem, "steps", counted)
    tau = control.Output("torque")
    system, top, _ = double_pendulum([tau.torque(AXIS)])
    c = control.Controller(1e-3, {"angle": control.joint_angle(top)}, tau, lambda t, s: -s["angle"])
    res = fm.run(system, method="index3-alpha", h=2.5e-4, t_end=0.4, dt_out=0.01, controllers=[c], store=False,
                 kernel="compiled")
    assert res.status == "finished" and len(c.record["t"]) == 400
    assert sum(calls) == 1600 and len(calls) <= 10, calls


@pytest.mark.parametrize("kernel", ["compiled", "numpy"])
def test_a_sensor_that_fails_outside_a_users_law_raises_on_both_paths(kernel):
    """Not a law's error (those stop the run with a message, tests/test_failures_control.py): a sensor's
    own exception leaves the kernel's call and the run, as on the numpy path."""
    calls = []

    def broken(state):                  # fails at the fourth sample, within the kernel's call
        calls.append(1)
        if len(calls) == 4:
            raise KeyError("no such coordinate")
        return 0.0
    tau = control.Output("torque")
    system, top, _ = double_pendulum([tau.torque(AXIS)])
    c = control.Controller(1e-3, {"bad": control.Sensor("broken", (system.bodies[0],), broken)}, tau,
                           lambda t, s: 0.0)
    with pytest.raises(KeyError, match="no such coordinate"):
        fm.run(system, method="index3-alpha", h=5e-4, t_end=0.01, dt_out=1e-3, controllers=[c], store=False,
               kernel=kernel)
    assert len(calls) == 4
