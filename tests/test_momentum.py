"""System.momentum and System.rigid_motion_velocities (docs/multibody.md, "Momentum and rigid motions").

References: the closed forms of a rigid body's momentum (m v_C; (r_C - O) x m v_C + A J_C A^T omega,
Goldstein, Classical Mechanics, 3rd ed., sec. 5.1) and of a particle's ((r - O) x m v), the floating
frame's linear momentum m R' + d/dt(A s_y) (Shabana, Dynamics of Multibody Systems, 3rd ed., sec. 5.4,
from the inertia invariants), finite differences of actually moved coordinates, and the conservation
of the momentum of a free system (Noether; Goldstein sec. 2.6, 13.7).
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import FlexibleBody, PointMass, RigidBody2D, RigidBodyEP, RigidBodyNatural
from flexmbs.bodies.corotational import CorotationalBeam2D, CorotationalBeam3D
from flexmbs.constraints import Revolute, Spherical
from flexmbs.elements.corotational3d import rotation_vector_matrix
from flexmbs.rotations import axis_angle_to_matrix, ep_to_matrix, matrix_to_axis_angle, rotation_x, rotation_z
from flexmbs.system import InconsistentStateError, System

MAT = fm.Material(E=1e7, rho=1000.0, nu=0.3)
O = np.array([0.3, -0.2, 0.5])


def _quat_product(a, b):
    """Hamilton product a * b of quaternions (scalar first), written out (not via ep_E)."""
    return np.concatenate([[a[0] * b[0] - a[1:] @ b[1:]], a[0] * b[1:] + b[0] * a[1:] + np.cross(a[1:], b[1:])])


def _moved_frame(q, R, t):
    """(R, p): the frame after the global motion r -> O + R (r - O) + t; p -> p_R * p."""
    out = np.array(q, dtype=float)
    out[:3] = O + R @ (q[:3] - O) + t
    axis, angle = matrix_to_axis_angle(R)
    out[3:7] = _quat_product(np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis]), q[3:7])
    return out


def _moved_natural(q, R, t):
    return np.concatenate([O + R @ (q[:3] - O) + t, (R @ q[3:12].reshape(3, 3).T).T.ravel()])


def _moved_corotational3d(q, R, t):
    Q = np.array(q, dtype=float).reshape(-1, 6)
    Q[:, :3] = O + (Q[:, :3] - O) @ R.T + t
    for k in range(len(Q)):                               # psi of R R(psi_k): |psi| < pi here
        axis, angle = matrix_to_axis_angle(R @ rotation_vector_matrix(Q[k, 3:]))
        Q[k, 3:] = angle * axis
    return Q.ravel()


def _flexible():
    md = fm.Model(fm.generate.line(2, 1.0, dim=3), fm.BeamEB3D(MAT, area=1e-3, Iy=1e-7, Iz=2e-7, J=2e-7,
                                                                rotary_inertia=True))
    return FlexibleBody(md, "flex", position=(0.2, 0.1, -0.3), orientation=rotation_x(0.4) @ rotation_z(1.1),
                        reference="mean-axis")


def _spatial_bodies():
    """(body, q, moved(q, R, t)) for each spatial body kind, at a generic state."""
    ori = rotation_x(0.3) @ rotation_z(0.7)
    ep = RigidBodyEP("ep", 2.0, [1.0, 2.0, 2.5], position=(1, 2, 3), orientation=ori)
    nat = RigidBodyNatural("nat", 2.0, [1.0, 2.0, 2.5], position=(1, 2, 3), orientation=ori)
    pm = PointMass("pm", 1.5, (0.4, -1.0, 2.0))
    flex = _flexible()
    qf = flex.initial_coordinates()
    qf[7:] = 1e-3 * np.arange(1, flex.n_q - 6)
    beam = CorotationalBeam3D.line("c3", (0, 0, 0), (1, 0, 0), 2, MAT, 1e-3, 1e-7, 2e-7, 2e-7)
    qc = beam.initial_coordinates() + 0.05 * np.sin(np.arange(beam.n_q))
    return [(ep, ep.initial_coordinates(), _moved_frame), (nat, nat.initial_coordinates(), _moved_natural),
            (pm, pm.initial_coordinates(), lambda q, R, t: O + R @ (q - O) + t),
            (flex, qf, _moved_frame), (beam, qc, _moved_corotational3d)]


@pytest.mark.parametrize("k", range(5), ids=["RigidBodyEP", "RigidBodyNatural", "PointMass", "FlexibleBody",
                                             "CorotationalBeam3D"])
def test_spatial_generators_are_the_rates_of_moved_coordinates(k):
    body, q, moved = _spatial_bodies()[k]
    X = body.rigid_motion_generators(q, O)
    h = 1e-6
    for j, e in enumerate(np.eye(3)):                     # central differences of the moved coordinates
        dt = (moved(q, np.eye(3), h * e) - moved(q, np.eye(3), -h * e)) / (2 * h)
        dr = (moved(q, axis_angle_to_matrix(e, h), 0.0) - moved(q, axis_angle_to_matrix(e, -h), 0.0)) / (2 * h)
        np.testing.assert_allclose(X[:, j], dt, rtol=0, atol=1e-8)
        np.testing.assert_allclose(X[:, 3 + j], dr, rtol=0, atol=1e-8)


@pytest.mark.parametrize("kind", ["RigidBody2D", "PointMass", "CorotationalBeam2D"])
def test_planar_generators_are_the_rates_of_moved_coordinates(kind):
    o = O[:2]
    if kind == "RigidBody2D":
        body, per = RigidBody2D("b", 2.0, 0.3, position=(1.0, 2.0), angle=0.4), 3
    elif kind == "PointMass":
        body, per = PointMass("p", 1.0, (1.0, 2.0)), 2
    else:
        body, per = CorotationalBeam2D.line("c", (0.0, 0.0), (1.0, 0.5), 2, MAT, 1e-3, 1e-7), 3
    q = body.initial_coordinates() + 0.1 * np.cos(np.arange(body.n_q))

    def moved(a, t):
        Q = q.reshape(-1, per).copy()
        Q[:, :2] = o + (Q[:, :2] - o) @ np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]).T + t
        if per == 3:
            Q[:, 2] += a
        return Q.ravel()

    X, h = body.rigid_motion_generators(q, o), 1e-6
    for j, e in enumerate(np.eye(2)):
        np.testing.assert_allclose(X[:, j], (moved(0.0, h * e) - moved(0.0, -h * e)) / (2 * h), atol=1e-8)
    np.testing.assert_allclose(X[:, 2], (moved(h, 0.0) - moved(-h, 0.0)) / (2 * h), atol=1e-8)


def test_rigid_body_momentum_is_the_closed_form():
    """m v_C and (r_C - O) x m v_C + A J_C A^T omega (Goldstein sec. 5.1), centroid off the reference point,
    both rigid-body kinds."""
    for cls in (RigidBodyEP, RigidBodyNatural):
        b = cls("b", 2.0, [1.0, 2.0, 2.5], position=(1, 2, 3), orientation=rotation_x(0.3) @ rotation_z(0.7),
                centroid=(0.1, -0.2, 0.3), velocity=(0.1, 0.2, 0.3), angular_velocity=(0.5, -0.2, 1.1))
        s = System([b])
        q, v = s.initial_coordinates(), s.initial_velocities()
        A, w = b.rotation(q), b.angular_velocity(q, v)
        rc, vc = b.point(q, b.centroid), b.point_velocity(q, v, b.centroid)
        P, H = s.momentum(q, v, point=O)
        np.testing.assert_allclose(P, 2.0 * vc, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(H, np.cross(rc - O, 2.0 * vc) + A @ b.inertia_centroid @ A.T @ w, rtol=1e-13)


def test_point_mass_momentum_is_r_cross_mv_in_3d_and_2d():
    for r, v, point in (((1.0, 2.0, 3.0), (0.4, -0.5, 0.6), O), ((1.0, 2.0), (0.4, -0.5), O[:2])):
        s = System([PointMass("p", 1.5, r, velocity=v)])
        P, H = s.momentum(np.array(r), np.array(v), point=point)
        np.testing.assert_allclose(P, 1.5 * np.array(v), rtol=1e-15)
        d = np.array(r) - point
        expected = np.cross(d, 1.5 * np.array(v)) if len(r) == 3 else 1.5 * (d[0] * v[1] - d[1] * v[0])
        assert np.allclose(H, expected, rtol=1e-14)
    assert isinstance(H, float)                           # 2D: the z component


def test_flexible_body_linear_momentum_from_the_invariants():
    """P = m R' + d/dt(A s_y), s_y = s + m_O delta (Shabana sec. 5.4): A' s_y + A m_O delta'."""
    body = _flexible()
    s = System([body])
    q = body.initial_coordinates()
    q[7:] = 1e-3 * np.arange(1, body.n_q - 6)
    v = s.rigid_motion_velocities(q, (0.3, -1.0, 2.0), velocity=(0.1, 0.2, 0.3))
    v[7:] = 1e-2 * np.cos(np.arange(body.n_q - 7))
    md = body.model
    A, w = body.rotation(q), body.angular_velocity(q, v)
    s_y = md.inv.s + md.m_O @ q[7:]
    expected = md.mass * v[:3] + np.cross(w, A @ s_y) + A @ (md.m_O @ v[7:])
    np.testing.assert_allclose(s.momentum(q, v).linear, expected, rtol=1e-13, atol=1e-15)


def _two_bodies_on_a_spherical_joint():
    a = RigidBodyEP("a", 2.0, [0.1, 0.5, 0.5], position=(0.5, 0, 0))
    b = RigidBodyNatural("b", 1.0, [0.2, 0.3, 0.4], position=(1.0, 0.4, 0), orientation=rotation_z(np.pi / 2))
    return System([a, b], [Spherical(a, b, at=(1.0, 0.0, 0.0), name="ball")])


def test_rigid_motion_velocities_satisfy_the_joints_and_are_accepted():
    s = _two_bodies_on_a_spherical_joint()
    q = s.initial_coordinates()
    v = s.rigid_motion_velocities(q, (1.0, -2.0, 3.0), velocity=(0.5, 0.0, -0.2), point=(1.0, 0.0, 0.0))
    assert np.abs(s.jacobian(0.0, q) @ v).max() < 1e-14
    q0, v0 = s.initial_state(0.0, q, v)                   # accepted as it is
    assert np.array_equal(v0, v)
    for body in s.bodies:                                 # each body moves with the given rigid motion
        sl = s.slice(body)
        np.testing.assert_allclose(body.angular_velocity(q[sl], v[sl]), (1.0, -2.0, 3.0), rtol=1e-14)
        r = body.point(q[sl], np.zeros(3))
        np.testing.assert_allclose(body.point_velocity(q[sl], v[sl], np.zeros(3)),
                                   np.array([0.5, 0.0, -0.2]) + np.cross((1.0, -2.0, 3.0), r - (1.0, 0.0, 0.0)),
                                   rtol=1e-14, atol=1e-15)
    grounded = System(s.bodies, [Spherical(s.bodies[0], None, at=(0.0, 0.0, 0.0), name="pin")])
    with pytest.raises(InconsistentStateError, match="'pin' violated at the velocity level"):
        grounded.initial_state(0.0, q, grounded.rigid_motion_velocities(q, (0.0, 0.0, 1.0), point=(1.0, 0.0, 0.0)))


def test_spun_free_rigid_pair_conserves_the_angular_momentum_vector():
    """Two bodies on a spherical joint, spun in one call about a non-principal axis (they tumble):
    H and P constant to the integrator tolerance (DOP853, rtol 1e-10; measured over 1 s: |H| = 3.05 N m s
    drifts by 1.8e-10, P by 4e-16, while body a's angular velocity changes by 1.23 rad/s)."""
    s = _two_bodies_on_a_spherical_joint()
    q0 = s.initial_coordinates()
    v0 = s.rigid_motion_velocities(q0, (1.0, 2.0, 0.5), velocity=(0.1, 0.0, 0.0))
    res = fm.run(s, method="DOP853", rtol=1e-10, atol=1e-12, q0=q0, v0=v0, t_end=1.0, t_eval=np.linspace(0.0, 1.0, 5))
    assert res.success, res.message
    mom = [s.momentum(q, v, point=O) for q, v in zip(res.q, res.v)]
    H, P = np.array([m.angular for m in mom]), np.array([m.linear for m in mom])
    w = res.bodies[s.bodies[0].name].angular_velocity
    assert np.abs(w - w[0]).max() > 0.1                   # the bodies do not just keep spinning
    assert np.abs(H - H[0]).max() < 1e-8 * np.linalg.norm(H[0])
    assert np.abs(P - P[0]).max() < 1e-10 * np.linalg.norm(P[0])


def test_spun_free_flexible_body_conserves_the_angular_momentum_vector():
    """A free mean-axis beam spun in one call about a skew axis: the centrifugal load bends it, H stays
    (measured over 0.2 s: |H| = 1.035 N m s drifts by 8e-16; delta up to 1.7e-5)."""
    body = _flexible()
    s = System([body])
    q0 = s.initial_coordinates()
    v0 = s.rigid_motion_velocities(q0, (0.5, 3.0, 1.0))
    res = fm.run(s, method="DOP853", rtol=1e-9, atol=1e-11, q0=q0, v0=v0, t_end=0.2, t_eval=np.linspace(0.0, 0.2, 5))
    assert res.success, res.message
    H = np.array([s.momentum(q, v).angular for q, v in zip(res.q, res.v)])
    assert np.abs(res.q[:, 7:]).max() > 1e-6             # it deforms
    assert np.abs(H - H[0]).max() < 1e-8 * np.linalg.norm(H[0])


def test_spun_free_planar_chain_conserves_its_angular_momentum():
    """2D: a rigid bar and a corotational beam on a planar revolute, spun in one call about z through
    O plus a drift velocity; the spin (a float) and P stay to the integrator tolerance (DOP853; measured
    over 0.1 s: H = 3.94 N m s drifts by 3e-15, P by 9e-16, while the bar's spin goes from 3.0 to 3.29 rad/s)."""
    from flexmbs.constraints.planar import PlanarRevolute
    bar = RigidBody2D("bar", 2.0, 0.2, position=(0.5, 0.0))
    beam = CorotationalBeam2D.line("beam", (1.0, 0.0), (1.0, 1.0), 2, fm.Material(E=1e6, rho=1e3), 1e-3, 1e-7)
    s = System([bar, beam], [PlanarRevolute(bar, beam, at=(1.0, 0.0), name="hinge")])
    q0 = s.initial_coordinates()
    v0 = s.rigid_motion_velocities(q0, 3.0, velocity=(0.2, -0.1), point=O[:2])
    assert np.abs(s.jacobian(0.0, q0) @ v0).max() < 1e-14
    res = fm.run(s, method="DOP853", rtol=1e-10, atol=1e-12, q0=q0, v0=v0, t_end=0.1, t_eval=np.linspace(0.0, 0.1, 4))
    assert res.success, res.message
    mom = [s.momentum(q, v, point=O[:2]) for q, v in zip(res.q, res.v)]
    H, P = np.array([m.angular for m in mom]), np.array([m.linear for m in mom])
    assert all(isinstance(m.angular, float) for m in mom)                 # 2D: the z component
    assert np.abs(H - H[0]).max() < 1e-8 * abs(H[0])
    assert np.abs(P - P[0]).max() < 1e-10 * np.linalg.norm(P[0])
    w = res.bodies["bar"].angular_velocity[:, 2]                         # the bar's angular velocity
    print(f"H {H[0]:.6f} N m s, drift {np.ptp(H):.1e}; P drift {np.abs(P - P[0]).max():.1e}; "
          f"bar spin {w.min():.3f}..{w.max():.3f} rad/s")
    assert np.ptp(w) > 0.1                                               # the hinge lets the two trade spin
