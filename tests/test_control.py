"""Issue 22, item 3: digital controllers (`flexmbs.control`): the law called exactly at the sample
times with the state there, its outputs held (zero-order hold) between samples, the compiled and
the numpy path alike, and the controlled pendulum case against its static balance."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs import control
from flexmbs.bodies import RigidBodyEP
from flexmbs.bodies.loads import torque_load
from flexmbs.compiled import kernel_status
from flexmbs.constraints import Revolute
from flexmbs.system import System

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import controlled_pendulum  # noqa: E402

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason="the compiled kernel is not installed")
AXIS = np.array([0.0, 1.0, 0.0])


def pendulum(loads):
    """A uniform rod (1 kg, 1 m) hanging from a revolute joint about y at the origin; (System, joint)."""
    rod = RigidBodyEP("rod", 1.0, np.diag([1 / 12, 1 / 12, 1e-4]), position=(0.0, 0.0, -0.5), loads=loads)
    pin = Revolute(None, rod, at=(0.0, 0.0, 0.0), axis=AXIS, name="pin")
    return System([rod], [pin], gravity=(0.0, 0.0, -9.81)), pin


def pd(pin, tau, period, kp=400.0, kd=20.0, target=0.5, calls=None):
    def law(t, sensed):
        if calls is not None:
            calls.append((t, sensed["angle"]))
        return kp * (target - sensed["angle"]) - kd * sensed["rate"]
    return control.Controller(period, {"angle": control.joint_angle(pin), "rate": control.joint_rate(pin)}, tau, law,
                              name="pd")


def angle_of(res) -> np.ndarray:
    """The rod's angle about y from its rotation A = R_y(theta) at the outputs."""
    A = res.bodies["rod"].rotation
    return np.arctan2(A[:, 0, 2], A[:, 2, 2])


@pytest.mark.parametrize("kernel", ["compiled", "numpy"])
def test_law_is_called_at_the_sample_times_with_the_state_there(kernel):
    """T = 2 ms, h = 0.5 ms (4 steps a sample), 25 samples in 0.05 s (t_k < t_end): the law sees the
    angle of the outputs at t_k (dt_out = T: the same states), and the torque is held from t_k on."""
    if kernel == "compiled" and not kernel_status().installed:
        pytest.skip("the compiled kernel is not installed")
    tau = control.Output("torque")
    system, pin = pendulum([tau.torque(AXIS)])
    calls = []
    c = pd(pin, tau, 2e-3, calls=calls)
    res = fm.run(system, method="index3-alpha", h=5e-4, t_end=0.05, dt_out=2e-3, controllers=[c], store=False,
                 kernel=kernel)
    assert res.status == "finished" and res.metadata["kernel"] == kernel and res.metadata["h"] == 5e-4
    t = np.array([c_[0] for c_ in calls])
    np.testing.assert_allclose(t, 2e-3 * np.arange(25), rtol=0, atol=1e-15)
    np.testing.assert_allclose([c_[1] for c_ in calls], angle_of(res)[:25], rtol=0, atol=1e-14)
    rec = c.record
    np.testing.assert_array_equal(rec["t"], t)
    u = rec["outputs"]["torque"]
    np.testing.assert_allclose(u, 400.0 * (0.5 - rec["sensed"]["angle"]) - 20.0 * rec["sensed"]["rate"], rtol=1e-15)
    # held, left-continuous: u_k on (t_k, t_k + T], u_0 at t0
    tk = rec["t"][1:-1]
    np.testing.assert_array_equal(tau.held(tk + 1e-4), u[1:-1])
    np.testing.assert_array_equal(tau.held(tk + 2e-3), u[1:-1])
    np.testing.assert_array_equal(tau.held(tk), u[:-2])
    assert tau.held([0.0])[0] == u[0]
    assert res.metadata["controllers"] == [{"name": "pd", "period": 2e-3, "act": ["torque"],
                                            "sense": {"angle": "joint_angle('pin')", "rate": "joint_rate('pin')"}}]


@needs_kernel
def test_held_outputs_act_as_the_same_staircase_given_as_a_load_of_time():
    """The law u_k = sin(50 t_k) (no state) held by the controller, and the same left-continuous
    staircase written as a torque of time, give the same run to round-off: the outputs are held
    between the samples and the steps end at them."""
    period = 2.5e-3
    tau = control.Output("torque")
    other = torque_load(lambda t: 0.2 * math.cos(30.0 * t) * AXIS)      # a load of time beside it (its column first)
    held_system, _ = pendulum([other, tau.torque(AXIS)])
    c = control.Controller(period, {}, tau, lambda t, sensed: math.sin(50.0 * t))

    def staircase(t):
        k = max(math.ceil(t / period - 1e-9) - 1, 0)
        return math.sin(50.0 * k * period) * AXIS
    load_system, _ = pendulum([other, torque_load(staircase)])
    options = dict(method="index3-alpha", h=5e-4, t_end=0.1, dt_out=5e-3, store=False)
    held = fm.run(held_system, controllers=[c], **options)
    given = fm.run(load_system, **options)
    assert held.metadata["kernel"] == given.metadata["kernel"] == "compiled"
    np.testing.assert_allclose(held.q, given.q, rtol=0, atol=1e-13)
    assert np.ptp(angle_of(held)) > 1e-3                          # the torque did move the rod


@needs_kernel
def test_compiled_and_numpy_paths_give_the_same_controlled_run():
    runs = {}
    for kernel in ("compiled", "numpy"):
        tau = control.Output("torque")
        system, pin = pendulum([tau.torque(AXIS)])
        c = pd(pin, tau, 1e-3)
        runs[kernel] = (fm.run(system, method="index3-alpha", h=5e-4, t_end=0.2, dt_out=0.01, controllers=[c],
                               store=False, kernel=kernel), c.record)
    (a, ra), (b, rb) = runs["compiled"], runs["numpy"]
    assert a.metadata["kernel"] == "compiled" and b.metadata["kernel"] == "numpy"
    np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-11)
    np.testing.assert_allclose(ra["outputs"]["torque"], rb["outputs"]["torque"], rtol=0, atol=1e-8)
    assert np.abs(angle_of(a)[-1]) > 0.3                          # it moved towards the target 0.5 rad


@needs_kernel
def test_controlled_pendulum_reaches_its_static_balance(tmp_path):
    """cases/controlled_pendulum.py, a shorter ramp: once the reference holds still the angle is the
    root of m g l_c sin(theta) = K_p (theta_1 - theta) (brentq), to 1e-9 rad; the summary and the
    results say what ran and what the torque was."""
    import h5py
    result = controlled_pendulum.run(out=tmp_path, t_ramp=0.3, t_end=1.3, plots=False)
    s = result["summary"]
    assert s["status"] == "finished" and s["kernel"] == "compiled" and s["samples"] == 1300
    p = dict(controlled_pendulum.DEFAULTS, t_ramp=0.3)
    theta_s = controlled_pendulum.static_angle(p)
    assert abs(4.905 * math.sin(theta_s) - 400.0 * (p["theta_1"] - theta_s)) < 1e-12
    assert s["static_error"] < 1e-9 and abs(result["angle"][-1] - theta_s) < 1e-9
    assert 1e-3 < s["rms_error"] < s["max_error"] < 0.5          # the lag of a PD law behind a 0.3 s ramp
    with np.load(tmp_path / "results.npz") as npz:
        assert {"t", "angle", "reference", "torque"} <= set(npz.files)
        np.testing.assert_allclose(npz["torque"][-1], 400.0 * (p["theta_1"] - theta_s), rtol=1e-8)
    with h5py.File(tmp_path / "results.h5", "r") as f:
        np.testing.assert_array_equal(f["controlled_pendulum/controls/torque"][()], result["torque"])
    back = fm.load_results(tmp_path / "results.h5")
    assert back.status == "finished" and len(back.t) == len(result["t"])


@needs_kernel
def test_a_load_of_the_state_runs_on_the_numpy_path_and_says_why():
    """The old way, the PD law as a load(body, t, q, v): still possible, on the numpy path, and the
    run's metadata says why (the same reason the compiled kernel gives)."""
    def load(body, t, q, v):
        A = body.rotation(q)
        return body.torque(q, (400.0 * (0.5 - math.atan2(A[0, 2], A[2, 2])) - 20.0 * body.angular_velocity(q, v)[1]) * AXIS)
    system, _ = pendulum([load])
    res = fm.run(system, method="index3-alpha", h=1e-3, t_end=0.01, dt_out=1e-3, store=False)
    assert res.status == "finished" and res.metadata["kernel"] == "numpy"
    assert res.metadata["kernel_reason"] == (
        "body 'rod': its load 0 is a user callable, which the compiled kernel cannot evaluate (flexmbs.bodies.loads' "
        "torque_load, point_load and spring_to_ground it can; a law of the state sampled by a "
        "flexmbs.control.Controller it can too)")


@pytest.mark.parametrize("kernel", ["compiled", "numpy"])
def test_two_controllers_at_two_rates_and_the_body_sensors(kernel):
    """A 1 ms controller driving the torque and a 2 ms one driving a vector force at the tip, both
    with body sensors: each is sampled at its own times; the sensed position, velocity and angular
    velocity are the body's own at those outputs (`Results.bodies`)."""
    if kernel == "compiled" and not kernel_status().installed:
        pytest.skip("the compiled kernel is not installed")
    tau, push = control.Output("torque"), control.Output("push", shape=(3,))
    system, pin = pendulum([tau.torque(AXIS), push.force((0.0, 0.0, -0.5))])
    rod = system.bodies[0]
    fast = pd(pin, tau, 1e-3)
    slow = control.Controller(2e-3, {"r": control.body_position(rod), "v": control.body_velocity(rod, (0.0, 0.0, -0.5)),
                                     "w": control.body_angular_velocity(rod)}, push,
                              lambda t, s: {"push": np.array([0.5, 0.0, 0.0]) - 0.1 * s["v"]}, name="slow")
    res = fm.run(system, method="index3-alpha", h=5e-4, t_end=0.02, dt_out=1e-3, controllers=[fast, slow], store=False,
                 kernel=kernel)
    assert res.status == "finished" and res.metadata["kernel"] == kernel
    np.testing.assert_allclose(fast.record["t"], 1e-3 * np.arange(20), atol=1e-15)
    np.testing.assert_allclose(slow.record["t"], 2e-3 * np.arange(10), atol=1e-15)
    body = res.bodies["rod"]
    sensed = slow.record["sensed"]
    np.testing.assert_allclose(sensed["r"], body.position[:20:2], atol=1e-14)
    np.testing.assert_allclose(sensed["w"], body.angular_velocity[:20:2], atol=1e-12)
    # r_P' = J_P(q) q' (the body's point velocity from its coordinate rates; with omega = 2 E p' it differs by
    # the O(h^2) error of the velocity-level Euler-parameter constraint, which index 3 does not impose)
    tip_v = [rod.point_velocity(q, v, np.array([0.0, 0.0, -0.5])) for q, v in zip(res.q[:20:2], res.v[:20:2])]
    np.testing.assert_allclose(sensed["v"], tip_v, atol=1e-14)
    assert slow.record["outputs"]["push"].shape == (10, 3)


def test_held_values_are_in_the_results_and_read_back_from_the_file(tmp_path):
    """`Results.controls` holds each output's held value at the output times (u_k on (t_k, t_k + T]),
    in memory and read back by `flexmbs.load_results` (datasets controls/NAME)."""
    period = 2.5e-3
    tau = control.Output("torque")
    system, _ = pendulum([tau.torque(AXIS)])
    c = control.Controller(period, {}, tau, lambda t, sensed: math.sin(50.0 * t))
    res = fm.run(system, controllers=[c], method="index3-alpha", h=5e-4, t_end=0.05, dt_out=5e-3,
                 store=tmp_path / "results.h5")
    k = np.maximum(np.ceil(res.t / period - 1e-9) - 1, 0)
    np.testing.assert_allclose(np.ravel(res.controls["torque"]), np.sin(50.0 * k * period), atol=1e-15)
    back = fm.load_results(tmp_path)
    np.testing.assert_array_equal(back.controls["torque"], res.controls["torque"])
