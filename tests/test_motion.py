"""Reference motions: omega and eps against finite differences of R, origin derivatives, splines."""
import numpy as np
import pytest

from flexmbs.motion import (AxisRotation, ConstantRotation, Fixed, GeneralMotion, PlanarMotion, SpinUp,
                            TabulatedMotion)


def _general():
    return GeneralMotion(
        position=lambda t: (np.array([np.sin(t), t**2, 0.3 * t]), np.array([np.cos(t), 2 * t, 0.3]),
                            np.array([-np.sin(t), 2.0, 0.0])),
        angles=lambda t: (np.array([0.7 * t, 0.3 * np.sin(2 * t), 0.2 * t**2]),
                          np.array([0.7, 0.6 * np.cos(2 * t), 0.4 * t]),
                          np.array([0.0, -1.2 * np.sin(2 * t), 0.4])))


def _planar():
    return PlanarMotion(lambda t: (np.cos(t), -np.sin(t), -np.cos(t)), lambda t: (t**3, 3 * t**2, 6 * t),
                        lambda t: (np.sin(1.5 * t), 1.5 * np.cos(1.5 * t), -2.25 * np.sin(1.5 * t)))


MOTIONS = {
    "constant": ConstantRotation(3.0, axis=(1.0, 2.0, 2.0)),
    "axis-law": AxisRotation(lambda t: (np.sin(t), np.cos(t), -np.sin(t)), axis=(0, 1, 0)),
    "spin-up": SpinUp(6.0, 15.0),
    "planar": _planar(),
    "general": _general(),
}


def _vee(W):
    return np.array([W[2, 1], W[0, 2], W[1, 0]])


@pytest.mark.parametrize("name", MOTIONS)
@pytest.mark.parametrize("t", [0.4, 1.3, 14.9])
def test_angular_velocity_and_acceleration_match_finite_differences(name, t):
    m = MOTIONS[name]
    h = 1e-5
    s = m.state(t)
    np.testing.assert_allclose(s.R.T @ s.R, np.eye(3), atol=1e-13)
    assert np.linalg.det(s.R) == pytest.approx(1.0)
    R_dot = (m.state(t + h).R - m.state(t - h).R) / (2 * h)
    np.testing.assert_allclose(_vee(s.R.T @ R_dot), s.omega, atol=1e-8 * (1 + abs(s.omega).max()))
    eps_fd = (m.state(t + h).omega - m.state(t - h).omega) / (2 * h)
    np.testing.assert_allclose(s.eps, eps_fd, atol=1e-7 * (1 + abs(s.eps).max()))
    np.testing.assert_allclose((m.state(t + h).r_O - m.state(t - h).r_O) / (2 * h), s.v_O, atol=1e-7)
    np.testing.assert_allclose((m.state(t + h).v_O - m.state(t - h).v_O) / (2 * h), s.a_O, atol=1e-7)


def test_spin_up_law_is_continuous_at_the_end_of_the_ramp():
    m = SpinUp(6.0, 15.0)
    before, after = m.state(15.0 - 1e-9), m.state(15.0 + 1e-9)
    assert before.omega[2] == pytest.approx(after.omega[2], abs=1e-7) == pytest.approx(6.0)
    assert before.eps[2] == pytest.approx(0.0, abs=1e-7)
    # angle continuous: the two branches agree at T_s
    a1, _, _ = m._law(15.0 - 1e-12)
    a2, _, _ = m._law(15.0)
    assert a1 == pytest.approx(a2, abs=1e-9)


def test_tabulated_motion_recovers_an_analytic_motion():
    ref = _planar()
    t = np.linspace(0.0, 2.0, 401)
    states = [ref.state(ti) for ti in t]
    P = np.array([s.r_O[:2] for s in states])
    theta = np.array([np.sin(1.5 * ti) for ti in t])
    tab = TabulatedMotion(t, P, theta)
    for ti in (0.5, 1.0, 1.7):
        s, r = tab.state(ti), ref.state(ti)
        np.testing.assert_allclose(s.R, r.R, atol=1e-10)
        np.testing.assert_allclose(s.omega, r.omega, atol=1e-7)
        np.testing.assert_allclose(s.eps, r.eps, atol=1e-4)
        np.testing.assert_allclose(s.v_O, r.v_O, atol=1e-7)
        np.testing.assert_allclose(s.a_O, r.a_O, atol=1e-4)
    with pytest.raises(ValueError, match="outside"):
        tab.state(2.5)


def test_fixed_frame_and_keys():
    s = Fixed().state(3.0)
    assert np.all(s.R == np.eye(3)) and not np.any(s.omega)
    assert ConstantRotation(2.0).matrix_key(0.0) == ConstantRotation(2.0).matrix_key(5.0)
    spin = SpinUp(6.0, 15.0)
    assert spin.matrix_key(1.0) != spin.matrix_key(2.0)


@pytest.mark.parametrize("kwargs, match", [
    (dict(t=[0, 1, 1, 2], positions=np.zeros((4, 2)), angles=np.zeros(4)), "`t`"),
    (dict(t=[0, 1, 2, 3], positions=np.zeros((4, 4)), angles=np.zeros(4)), "`positions`"),
    (dict(t=[0, 1, 2, 3], positions=np.zeros((4, 2)), angles=np.zeros((4, 2))), "`angles`"),
])
def test_tabulated_motion_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TabulatedMotion(**kwargs)


def test_bad_axis_and_law():
    with pytest.raises(ValueError, match="`axis`"):
        ConstantRotation(1.0, axis=(0, 0, 0))
    with pytest.raises(TypeError, match="`angle`"):
        AxisRotation(3.0)
    with pytest.raises(TypeError, match="`theta`"):
        PlanarMotion(lambda t: (0, 0, 0), lambda t: (0, 0, 0), 1.0)


@pytest.mark.parametrize("name", MOTIONS)
def test_states_and_frame_history_equal_the_states_one_by_one(name):
    """`states` (vectorised for axis rotations and planar motions) and `frame_history` against
    `state` at each time, on both sides of the spin-up's end (15 s)."""
    from flexmbs.motion import euler_parameters, frame_history
    m = MOTIONS[name]
    t = np.array([0.0, 0.4, 1.3, 14.9, 15.0, 17.2])
    s, h = m.states(t), frame_history(m, t)
    for k, ti in enumerate(t):
        one = m.state(float(ti))
        for field in ("R", "omega", "eps", "r_O", "v_O", "a_O"):
            np.testing.assert_allclose(getattr(s, field)[k], getattr(one, field), rtol=0, atol=1e-13)
        for key, field in (("rotation", "R"), ("omega", "omega"), ("origin", "r_O"), ("origin_velocity", "v_O")):
            np.testing.assert_allclose(h[key][k], getattr(one, field), rtol=0, atol=1e-13)
        np.testing.assert_allclose(h["euler_parameters"][k], euler_parameters(one.R), rtol=0, atol=1e-15)
