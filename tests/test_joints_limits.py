"""Joint limits and joint friction (issue 26, item 2; flexmbs/constraints/limits.py): the joint
coordinate's Jacobian against central differences; a pendulum rebounding from its stop and a slider
from its end stop with the restitution asked; a pendulum with joint friction stopping where the
Coulomb energy balance says, then creeping at the stated rate, or staying put below the friction
torque; the stops' and the friction's dissipated work in the energy balance."""
import numpy as np
import pytest
from scipy.optimize import brentq

import flexmbs as fm
from flexmbs.bodies import RigidBody2D
from flexmbs.constraints import JointFriction, JointLimit, Prismatic, Revolute
from flexmbs.constraints.planar import PlanarPrismatic, PlanarRevolute
from flexmbs.system import System

from test_joints import AXIS, P, make_bodies, motion


def planar_pair():
    return (RigidBody2D("a", 1.0, 0.1, position=(0.3, 0.1), angle=0.4),
            RigidBody2D("b", 2.0, 0.2, position=(0.3, 0.1), angle=-0.2))


def joints():
    out = []
    for kind in ("ep", "natural"):
        a, b = make_bodies(kind)
        for i, j in ((a, b), (a, None), (None, b)):
            out += [Revolute(i, j, at=P, axis=AXIS), Prismatic(i, j, at=P, axis=AXIS)]
    a, b = planar_pair()
    for i, j in ((a, b), (None, b)):
        out += [PlanarRevolute(i, j, at=(0.3, 0.1)), PlanarPrismatic(i, j, axis=(0.6, 0.8), at=(0.3, 0.1))]
    return out


@pytest.mark.parametrize("joint", joints(), ids=lambda j: f"{type(j).__name__}-{j.name}")
def test_joint_coordinate_is_zero_at_the_start_and_its_jacobian_matches_differences(joint):
    f = JointFriction(joint, 1.0)
    qs0 = [np.zeros(0) if b is None else b.initial_coordinates() for b in joint.bodies]
    assert abs(f.measures(qs0)[0][0]) < 1e-12
    paths = [motion(q, 3 + k) for k, q in enumerate(qs0)]
    qs = [p[0](0.3) for p in paths]
    G = f.measures(qs)[1]
    h = 1e-6
    for k, q in enumerate(qs):
        fd = np.zeros_like(G[k])
        for i in range(q.size):
            qp, qm = [x.copy() for x in qs], [x.copy() for x in qs]
            qp[k][i] += h
            qm[k][i] -= h
            fd[0, i] = (f.measures(qp)[0][0] - f.measures(qm)[0][0]) / (2 * h)
        np.testing.assert_allclose(G[k], fd, atol=1e-7 * (1 + np.abs(G[k]).max(initial=0.0)))


def pendulum(forces_of, theta0=0.0, omega0=0.0, m=1.0, L=1.0, g=9.81):
    """A bar (m, L) on a pin at the origin at theta0 from the horizontal (counter-clockwise), turning at
    omega0, gravity -y; ``forces_of(pin)`` gives the force elements."""
    c = 0.5 * L * np.array([np.cos(theta0), np.sin(theta0)])
    bar = RigidBody2D("bar", m, m * L * L / 12, position=c, angle=theta0,
                      velocity=omega0 * np.array([-c[1], c[0]]), angular_velocity=omega0)
    pin = PlanarRevolute(None, bar, at=(0.0, 0.0), name="pin")
    return System([bar], [pin], gravity=(0.0, -g), forces=forces_of(pin))


def rebound_ratio(e, n, k, inertia, omega, torque):
    """omega_+ / omega_- of a rotor (inertia, impact speed omega) pressed into a stop (k delta^n loading,
    e^2 k delta^n unloading) by a constant torque: energy in, k delta_m^(n+1)/(n+1) = T_- + torque
    delta_m; energy out, T_+ = e^2 k delta_m^(n+1)/(n+1) - torque delta_m (closed form, the torque
    taken constant over the contact's few milliradians)."""
    T = 0.5 * inertia * omega ** 2
    d = brentq(lambda x: k * x ** (n + 1) / (n + 1) - T - torque * x, 0.0, 1.0)
    return np.sqrt((e * e * k * d ** (n + 1) / (n + 1) - torque * d) / T)


@pytest.mark.parametrize("restitution, exponent, method, rel", [
    (0.6, 1.0, dict(method="DOP853", rtol=1e-9, atol=1e-12), 1e-4),       # measured 2.4e-5
    (0.3, 1.5, dict(method="index3-alpha", h=5e-5), 5e-3)])              # measured 2.4e-3 (its damping)
def test_pendulum_rebounds_from_its_stop_with_the_restitution_asked(restitution, exponent, method, rel):
    """A horizontal bar swinging down at 3 rad/s into a stop 0.05 rad below.  Outside the contact
    T + V_g is conserved: with V_s the gravity energy at the stop, the rebound-to-impact speed ratio is
    sqrt((E_after - V_s) / (E_0 - V_s)), e up to the work of gravity during the contact
    (`rebound_ratio`: 2.6 % for k = 1e5 and n = 1, e = 0.6)."""
    m, L, g, stop = 1.0, 1.0, 9.81, -0.05
    k = 1e5 if exponent == 1 else 3e6
    s = pendulum(lambda pin: [JointLimit(pin, lower=stop, stiffness=k, restitution=restitution, exponent=exponent,
                                         name="stop")], omega0=-3.0)
    res = fm.run(s, t_end=0.045, dt_out=2e-4, store=False, **method)
    assert res.status == "finished", res.message
    phi = res.q[:, 2]
    assert phi.min() < stop and phi[-1] > stop                  # it hit the stop and came off it
    E, Vs = res.energies["total"], -m * g * 0.5 * L * np.sin(-stop)
    e = np.sqrt((E[-1] - Vs) / (E[0] - Vs))
    inertia = m * L * L / 3
    omega = np.sqrt(2 * (E[0] - Vs) / inertia)
    expected = rebound_ratio(restitution, exponent, k, inertia, omega, m * g * 0.5 * L * np.cos(stop))
    assert e == pytest.approx(expected, rel=rel)
    assert abs(expected - restitution) < 0.1 * restitution      # gravity's part is small
    # the stop's lost energy is its dissipated work (the works accumulated at every step)
    assert res.energies["W_damping"][-1] == pytest.approx(E[0] - E[-1], rel=2e-2)


def test_slider_rebounds_from_its_end_stop_with_the_restitution_asked():
    """A block sliding at 2 m/s along a frictionless guide (no force along it) into its end stop
    0.1 m ahead leaves it at -e 2 m/s and then slides freely."""
    e, v0 = 0.5, 2.0
    block = RigidBody2D("block", 3.0, 0.1, velocity=(v0, 0.0))
    guide = PlanarPrismatic(None, block, axis=(1.0, 0.0), name="guide")
    s = System([block], [guide], gravity=(0.0, -9.81),
               forces=[JointLimit(guide, upper=0.1, stiffness=1e6, restitution=e)])
    res = fm.run(s, method="DOP853", rtol=1e-9, atol=1e-12, t_end=0.1, dt_out=1e-3, store=False)
    assert res.q[:, 0].max() > 0.1
    np.testing.assert_allclose(res.v[-10:, 0], -e * v0, rtol=1e-3)
    assert res.energies["total"][-1] == pytest.approx(e * e * res.energies["total"][0], rel=2e-3)


def coulomb_stop_angle(theta0, mgl, Tf):
    """The angle theta1 (from the vertical, on the other side) where a pendulum released from rest at
    theta0 (from the vertical) first stops: m g l (cos theta1 - cos theta0) = Tf (theta0 - theta1)
    (its potential energy lost is the friction's work over the arc)."""
    return brentq(lambda x: mgl * (np.cos(x) - np.cos(theta0)) - Tf * (theta0 - x), -theta0, 0.0)


def test_pendulum_with_joint_friction_stops_where_the_coulomb_balance_says_and_creeps_at_the_stated_rate():
    """Released 0.5 rad from the vertical with a friction torque 0.2 m g l: it swings to theta1
    (`coulomb_stop_angle`), where gravity's torque m g l sin|theta1| < Tf, and sticks, creeping at
    v_c atanh(m g l sin|theta1| / Tf) (flexmbs.constraints.limits)."""
    m, L, g, vc = 1.0, 1.0, 9.81, 1e-4
    mgl, theta0 = m * g * 0.5 * L, 0.5
    Tf = 0.2 * mgl
    s = pendulum(lambda pin: [JointFriction(pin, Tf, creep_speed=vc, name="bearing")], theta0=theta0 - np.pi / 2)
    res = fm.run(s, method="index3-alpha-adaptive", rtol=1e-6, t_end=1.5, dt_out=1e-2, store=False)
    assert res.status == "finished", res.message
    theta = theta0 + res.q[:, 2] - res.q[0, 2]
    theta1 = coulomb_stop_angle(theta0, mgl, Tf)
    creep = vc * np.arctanh(mgl * np.sin(-theta1) / Tf)
    rest = res.t > 1.2                                          # it came to rest at 0.83 s
    assert np.abs(theta[rest] - theta1).max() < creep * 1.5 + 1e-6
    assert np.polyfit(res.t[rest], theta[rest], 1)[0] == pytest.approx(creep, rel=2e-2)
    assert np.abs(res.energy_balance_error()).max() < 1e-3 * res.energies["W_damping"][-1]


def test_pendulum_held_below_the_friction_torque_stays_put():
    """Released 0.1 rad from the vertical with a friction torque 0.2 m g l > m g l sin(0.1): it does
    not swing; it creeps at v_c atanh(sin(0.1) / 0.2) towards the vertical."""
    m, L, g, vc = 1.0, 1.0, 9.81, 1e-4
    mgl, theta0 = m * g * 0.5 * L, 0.1
    s = pendulum(lambda pin: [JointFriction(pin, 0.2 * mgl, creep_speed=vc)], theta0=theta0 - np.pi / 2)
    res = fm.run(s, method="index3-alpha-adaptive", rtol=1e-6, t_end=0.5, dt_out=1e-2, store=False)
    theta = theta0 + res.q[:, 2] - res.q[0, 2]
    creep = vc * np.arctanh(np.sin(theta0) / 0.2)
    assert np.abs(theta - (theta0 - creep * res.t)).max() < 0.05 * creep * res.t[-1]
