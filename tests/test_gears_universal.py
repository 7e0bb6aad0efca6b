"""More joints (issue 26, item 2): the universal (Cardan) joint, gear pairs and rack-and-pinion.
Jacobians against central differences of the residual (Universal) or of the rate a(q) q' (the
velocity-level ratio constraints), gamma against the second time derivative along a path, as
tests/test_joints.py does; and the motions they impose, against closed forms."""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import RigidBody2D, RigidBodyEP
from flexmbs.bodies.loads import torque_load
from flexmbs.compiled import CompiledSystem, Unsupported, kernel_status
from flexmbs.constraints import AngleDriver, GearPair, RackPinion, Revolute, Universal
from flexmbs.constraints.planar import PlanarPrismatic, PlanarRevolute
from flexmbs.rotations import axis_angle_to_matrix
from flexmbs.system import System

from test_joints import check_constraint, make_bodies, motion


@pytest.mark.parametrize("kind", ["ep", "natural"])
def test_universal_joint_derivatives(kind):
    a, b = make_bodies(kind)
    for i, j in ((a, b), (a, None), (None, b)):
        c = Universal(i, j, at=(0.4, -0.3, 0.7), axis_i=(1, 0, 0), axis_j=(0, 0.6, 0.8))
        qs = [np.zeros(0) if x is None else x.initial_coordinates() for x in c.bodies]
        assert c.n_c == 4 and np.abs(c.residual(0.0, qs)).max() < 1e-12
        check_constraint(c)


def check_rate_constraint(c, seed=1):
    """A velocity-level row a(q) q' = 0: a against the derivative of nothing (no residual), so check
    d/dt (a q') = a q'' - gamma along a smooth path, by central differences."""
    qs0 = [b.initial_coordinates() for b in c.bodies]
    paths = [motion(q, seed + k) for k, q in enumerate(qs0)]
    t, h = 0.37, 1e-5

    def rate(s):
        return sum(B @ p[1](s) for B, p in zip(c.jacobian(s, [p[0](s) for p in paths]), paths))

    qs, vs, acc = ([p[k](t) for p in paths] for k in range(3))
    lhs = sum(B @ x for B, x in zip(c.jacobian(t, qs), acc)) - c.gamma(t, qs, vs)
    np.testing.assert_allclose((rate(t + h) - rate(t - h)) / (2 * h), lhs, atol=1e-7 * (1 + np.abs(lhs).max()))
    assert not c.holonomic and np.all(c.residual(t, qs) == 0)


def ep_pair(seed=0):
    rng = np.random.default_rng(seed)
    return [RigidBodyEP(n, 1.5, np.diag([0.2, 0.3, 0.4]), position=rng.standard_normal(3),
                        orientation=axis_angle_to_matrix(rng.standard_normal(3), rng.uniform(0.3, 2.5)),
                        centroid=0.1 * rng.standard_normal(3)) for n in ("a", "b")]


def test_gear_pair_and_rack_pinion_rates_and_gamma():
    a, b = ep_pair()
    check_rate_constraint(GearPair(a, b, -0.5, axis_i=(0, 0, 1), axis_j=(0.3, 0.4, 0.5)))
    check_rate_constraint(RackPinion(a, b, 0.2, direction=(1, 0.5, 0), point=(0.1, 0.2, 0.3), axis=(0, 1, 0)))
    p, r = RigidBody2D("p", 1.0, 0.1, position=(0.3, 0.1), angle=0.4), RigidBody2D("r", 2.0, 0.2, angle=-0.2)
    check_rate_constraint(GearPair(p, r, 2.0))
    check_rate_constraint(RackPinion(p, r, 0.1, direction=(1.0, 0.2), point=(0.1, -0.1)))


def test_gear_pair_turns_the_driven_gear_at_the_ratio_and_shares_the_torque():
    """Spur gears on fixed axles, a torque T on gear 1: omega_2 = n omega_1 with n = -r_1/r_2, and
    (J_1 + n^2 J_2) omega_1' = T (closed form of the reduced inertia).  Lagrange (index 1) with DOP853:
    NOTE index3-alpha does not impose velocity-level rows (it Newton-solves their zero residual), so
    it drifts off the ratio (measured 1.7 % at t = 0.5 s, the same at h = 1e-3 and 1e-4)."""
    J1, J2, n, T = 0.02, 0.08, -0.5, 0.3
    g1 = RigidBodyEP("g1", 1.0, np.diag([0.01, 0.01, J1]), loads=[torque_load((0, 0, T))])
    g2 = RigidBodyEP("g2", 2.0, np.diag([0.04, 0.04, J2]), position=(0.3, 0, 0))
    s = System([g1, g2], [Revolute(None, g1, at=(0, 0, 0), axis=(0, 0, 1), name="axle1"),
                          Revolute(None, g2, at=(0.3, 0, 0), axis=(0, 0, 1), name="axle2"),
                          GearPair(g1, g2, n, axis_i=(0, 0, 1), axis_j=(0, 0, 1), name="mesh")])
    res = fm.run(s, method="DOP853", rtol=1e-10, atol=1e-12, t_end=0.5, dt_out=0.05, store=False)
    w1 = np.array([g1.angular_velocity(q[:7], v[:7])[2] for q, v in zip(res.q, res.v)])
    w2 = np.array([g2.angular_velocity(q[7:], v[7:])[2] for q, v in zip(res.q, res.v)])
    np.testing.assert_allclose(w1, T / (J1 + n * n * J2) * res.t, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(w2, n * w1, rtol=1e-6, atol=1e-9)


def test_rack_pinion_moves_the_rack_at_r_omega():
    """A planar pinion (J) on an axle drives a rack (m) on a prismatic joint, a torque T on the pinion:
    x' = r theta', (J + m r^2) theta'' = T."""
    J, m, r, T = 0.01, 2.0, 0.05, 0.2
    pin = RigidBody2D("pinion", 0.5, J, loads=[torque_load(T)])
    rack = RigidBody2D("rack", m, 0.1, position=(0.0, -r))
    s = System([pin, rack], [PlanarRevolute(None, pin, at=(0.0, 0.0)),
                             PlanarPrismatic(None, rack, axis=(1.0, 0.0)),
                             RackPinion(pin, rack, r, direction=(-1.0, 0.0))])
    res = fm.run(s, method="DOP853", rtol=1e-10, atol=1e-12, t_end=0.5, dt_out=0.05, store=False)
    alpha = T / (J + m * r * r)
    np.testing.assert_allclose(res.v[:, 2], alpha * res.t, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(res.v[:, 3], -r * res.v[:, 2], rtol=1e-6, atol=1e-9)


def test_cardan_joint_transmits_the_cardan_law():
    """Two shafts on bearings at the bend angle beta, joined by a universal joint, the input turned by
    a driver (0 degrees of freedom): with the input fork starting in the plane of the shafts and both
    angles measured from the start, the forks stay perpendicular, a . b = 0 with a = (0, cos phi_1,
    sin phi_1) and b = cos phi_2 z + sin phi_2 (e_2 x z), so tan(phi_2) = tan(phi_1) / cos(beta)
    (the Hooke joint's law; its speed ratio swings between cos(beta) and 1 / cos(beta))."""
    beta = np.radians(30.0)
    e2 = np.array([np.cos(beta), np.sin(beta), 0.0])
    s1 = RigidBodyEP("in", 1.0, np.diag([0.01, 0.02, 0.02]))
    s2 = RigidBodyEP("out", 1.0, np.diag([0.01, 0.02, 0.02]))
    s = System([s1, s2], [Revolute(None, s1, at=(0, 0, 0), axis=(1, 0, 0), name="bearing1"),
                          Revolute(None, s2, at=(0, 0, 0), axis=e2, name="bearing2"),
                          Universal(s1, s2, at=(0, 0, 0), axis_i=(0, 1, 0), axis_j=(0, 0, 1), name="cardan"),
                          AngleDriver(None, s1, (1, 0, 0), lambda t: (t, 1.0, 0.0), name="motor")])
    q = s.initial_coordinates()
    side = np.cross(e2, [0.0, 0.0, 1.0])
    for t in np.linspace(0.1, 1.4, 6):
        q, v, a = s.kinematics(t, q)
        R1, R2 = s1.rotation(q[:7]), s2.rotation(q[7:])
        phi1 = np.arctan2(R1[2, 1], R1[1, 1])
        phi2 = np.arctan2(R2[:, 2] @ side, R2[2, 2])
        assert phi1 == pytest.approx(t, abs=1e-10)
        assert np.tan(phi2) == pytest.approx(np.tan(phi1) / np.cos(beta), rel=1e-9)


def test_compiled_kernel_refuses_gears():
    g1, g2 = ep_pair()
    with pytest.raises(Unsupported, match="constraint 'GearPair\\(a, b\\)' \\(GearPair\\) is not evaluated"):
        CompiledSystem(System([g1, g2], [GearPair(g1, g2, 2.0, axis_i=(0, 0, 1), axis_j=(0, 0, 1))]))


@pytest.mark.skipif(not kernel_status().installed, reason="the compiled kernel is not installed")
def test_universal_joint_runs_on_the_compiled_kernel_as_on_numpy():
    """Universal is a joint of the primitives point and dot1, packed into the kernel's joint batch: two
    shafts spinning through a bent Cardan joint give the same states on both paths (measured 1.2e-13)."""
    beta = np.radians(30.0)
    e2 = np.array([np.cos(beta), np.sin(beta), 0.0])
    runs = []
    for kernel in ("compiled", "numpy"):
        s1 = RigidBodyEP("in", 1.0, np.diag([0.01, 0.02, 0.02]), angular_velocity=(5, 0, 0))
        # d phi_2 / d phi_1 = 1 / cos(beta) at the start (the input fork in the plane of the shafts)
        s2 = RigidBodyEP("out", 1.0, np.diag([0.01, 0.02, 0.02]), angular_velocity=5 / np.cos(beta) * e2)
        s = System([s1, s2], [Revolute(None, s1, at=(0, 0, 0), axis=(1, 0, 0), name="bearing1"),
                              Revolute(None, s2, at=(0, 0, 0), axis=e2, name="bearing2"),
                              Universal(s1, s2, at=(0, 0, 0), axis_i=(0, 1, 0), axis_j=(0, 0, 1), name="cardan")])
        runs.append(fm.run(s, method="index3-alpha", h=1e-3, t_end=0.2, dt_out=0.05, store=False, kernel=kernel))
    np.testing.assert_allclose(runs[0].q, runs[1].q, atol=1e-10)
