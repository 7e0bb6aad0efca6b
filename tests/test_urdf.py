"""URDF import (issue 27, item 3): the shipped arm (cases/data/arm.urdf) becomes a System of RigidBodyEP
links; held at rest under gravity by drivers, its joint torques are the static closed form

    tau_k = -a_k . sum_{links i beyond joint k} (c_i - p_k) x m_i g

(a_k the joint's axis, p_k its origin, c_i the link's centroid, all in world components at the zero joint
values), to 1e-8 relative; the links' inertias are the URDF's turned by the rpy of their <inertial>."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.constraints import AngleDriver, Distance
from flexmbs.io.urdf import read_urdf, read_urdf_joints, read_urdf_shapes, rpy_matrix
from flexmbs.system import System

ARM = Path(__file__).resolve().parents[1] / "cases" / "data" / "arm.urdf"
G = np.array([0.0, 0.0, -9.81])
BEYOND = {"shoulder": ("upper_arm", "forearm", "wrist", "tool"), "elbow": ("forearm", "wrist", "tool")}


def world(system, name):
    """(reference point, rotation, centroid) of body ``name`` in world components at the start."""
    body = system.body(name)
    q = body.initial_coordinates()
    return body.point(q, np.zeros(3)), body.rotation(q), body.point(q, body.centroid)


def held_arm():
    """The arm with AngleDrivers (angle 0) on the shoulder and elbow and the slide held by a Distance
    between the forearm and the wrist along the slide's axis (a force along it only)."""
    arm = read_urdf(ARM)
    joints = {c.name: c for c in arm.constraints if c.name in ("shoulder", "elbow", "slide")}
    drivers = [AngleDriver(c.bodies[0], c.bodies[1], c.frame(0.0, [b.initial_coordinates() if b else None
                                                                    for b in c.bodies])[1][:, 2], 0.0,
                           name=f"hold {c.name}") for c in (joints["shoulder"], joints["elbow"])]
    forearm, wrist = arm.body("forearm"), arm.body("wrist")
    p, R, _ = world(arm, "wrist")
    axis = R[:, 0]                                          # the slide's axis is the wrist frame's x
    hold = Distance(forearm, wrist, at_i=p, at_j=p + 0.05 * axis, name="hold slide")
    bodies = [b for b in arm.bodies]
    return System(bodies, list(arm.constraints[arm.n_internal:]) + drivers + [hold], gravity=G)


def static_multipliers(system):
    """lam of the equilibrium at rest: C_q^T lam = Q(t, q, 0) (M q'' + C_q^T lam = Q with q'' = 0)."""
    q = system.initial_coordinates()
    C_q = system.jacobian(0.0, q)
    Q = system.forces(0.0, q, np.zeros_like(q))
    lam, *_ = np.linalg.lstsq(C_q.T, Q, rcond=None)
    return q, lam, np.linalg.norm(C_q.T @ lam - Q) / np.linalg.norm(Q)


def closed_form_torque(system, joint: str, origin, axis) -> float:
    moment = sum(np.cross(world(system, link)[2] - origin, system.body(link).mass * G) for link in BEYOND[joint])
    return -axis @ moment


def test_arm_links_and_joints_are_the_urdfs():
    arm = read_urdf(ARM)
    assert [b.name for b in arm.bodies] == ["upper_arm", "forearm", "wrist", "tool"]     # "world": the ground
    assert [c.name for c in arm.constraints[arm.n_internal:]] == ["shoulder", "elbow", "slide", "tool_mount"]
    p, R, c = world(arm, "upper_arm")
    np.testing.assert_allclose(p, [0.0, 0.0, 0.5], atol=1e-15)
    np.testing.assert_allclose(R, rpy_matrix([0.0, 0.2, 0.0]), atol=1e-15)
    np.testing.assert_allclose(c, p + R @ [0.2, 0.0, 0.01], atol=1e-15)
    J = np.array([[0.002, 0.0001, 0.0], [0.0001, 0.03, 0.0], [0.0, 0.0, 0.031]])
    Ri = rpy_matrix([0.1, 0.2, 0.3])
    np.testing.assert_allclose(arm.body("upper_arm").inertia_centroid, Ri @ J @ Ri.T, atol=1e-15)
    p2, R2, _ = world(arm, "forearm")                       # T_forearm = T_upper T_origin(elbow)
    np.testing.assert_allclose(p2, p + R @ [0.4, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(R2, R @ rpy_matrix([0.0, -0.5, 0.3]), atol=1e-15)
    limits = {j.name: j.limits for j in read_urdf_joints(ARM)}
    assert limits["shoulder"]["effort"] == 50.0 and limits["elbow"] == {}


def test_held_arm_joint_torques_at_rest_are_the_static_closed_form():
    system = held_arm()
    q, lam, residual = static_multipliers(system)
    assert residual < 1e-12                                 # an equilibrium: the drivers hold the arm
    reactions = system.reactions(0.0, q, lam, names=["hold shoulder", "hold elbow"])
    for joint in ("shoulder", "elbow"):
        child = BEYOND[joint][0]
        frame = reactions[f"hold {joint}"]
        axis = frame["rotation"][:, 2]
        torque = frame["bodies"][child]["torque"][2]        # on the child, about the joint's axis
        origin = world(system, child)[0]                    # the joint's origin: the child's link frame's
        exact = closed_form_torque(system, joint, origin, axis)
        assert abs(torque - exact) <= 1e-8 * abs(exact), (joint, torque, exact)


def test_held_arm_stays_at_rest_under_gravity():
    res = fm.run(held_arm(), method="index3-alpha", t_end=0.02, h=1e-3, dt_out=1e-3, store=False)
    assert res.success
    np.testing.assert_allclose(res.q[-1], res.q[0], atol=1e-9)


def test_visual_mesh_and_box_become_shapes():
    shapes = read_urdf_shapes(ARM)
    points, cells = shapes["upper_arm"]                     # arm_link.stl, in the link frame
    np.testing.assert_allclose(points.min(axis=0), [0.0, -0.02, -0.02])
    np.testing.assert_allclose(points.max(axis=0), [0.4, 0.02, 0.02])
    assert cells[0][0] == "triangle" and len(cells[0][1]) == 12
    points, cells = shapes["forearm"]
    np.testing.assert_allclose(points.max(axis=0), [0.15, 0.02, 0.02])
    assert set(shapes) == {"upper_arm", "forearm"}


def test_free_arm_falls_with_its_energy_balanced():
    """Let go under gravity (no drivers), T + V_g stays constant: no loads, drivers or damping."""
    res = fm.run(read_urdf(ARM), method="index3-alpha", t_end=0.2, h=1e-3, dt_out=1e-2, store=False)
    assert res.success
    assert res.energies["kinetic"][-1] > 0.1                # it fell [J]
    assert np.abs(res.energy_balance_error()).max() < 1e-4 * abs(res.energies["total"][0])


BAR = """<robot name="bar">
  <link name="world"/>
  <link name="bar">
    <inertial><origin xyz="0.5 0 0"/><mass value="1.0"/>
      <inertia ixx="1e-4" ixy="0" ixz="0" iyy="0.0834" iyz="0" izz="0.0834"/></inertial>
  </link>
  <joint name="hinge" type="revolute">
    <parent link="world"/><child link="bar"/><axis xyz="0 1 0"/>
    <limit lower="-0.1" upper="0.3" effort="10" velocity="5"/>
  </joint>
</robot>
"""


def hinge_angle(res) -> np.ndarray:
    """The bar's rotation about +y from its centroid's height: z_c = -0.5 sin(theta) (1 kg, centroid 0.5 m)."""
    z = res.bodies["bar"].position[:, 2] + np.einsum("tij,j->ti", res.bodies["bar"].rotation, [0.5, 0.0, 0.0])[:, 2]
    return np.arcsin(-z / 0.5)


def test_urdf_limits_become_joint_stops_the_bar_rebounds_from(tmp_path):
    """A horizontal bar on a hinge falls (theta grows about +y) onto its URDF upper limit 0.3 rad: with
    ``limits`` it stops there, within the stop's penetration (k = 1e4 N m/rad; the impact energy
    E = m g 0.5 sin 0.3 = 1.449 J and gravity's torque, at most m g 0.5 = 4.905 N m, go into 1/2 k delta^2:
    delta <= (4.905 + sqrt(4.905^2 + 2 k E)) / k = 0.01752 rad), and rebounds with the restitution
    asked: the stop stores 1/2 I w_0^2 + tau delta while pressed in (E = 1/2 I w_0^2, tau = m g 0.5 cos 0.3
    gravity's torque, delta the largest penetration) and gives back e^2 of it, less tau delta, while
    springing back (JointLimit's hysteretic law), so the bar leaves the stop with
    1/2 I w_r^2 = e^2 E - (1 - e^2) tau delta and rises to theta_r, m g 0.5 (sin 0.3 - sin theta_r)
    = 1/2 I w_r^2; without ``limits`` the bar swings on past the limit."""
    path = tmp_path / "bar.urdf"
    path.write_text(BAR)
    system = read_urdf(path, limits=dict(stiffness=1e4, restitution=0.5))
    assert [f.name for f in system.force_elements] == ["limit(hinge)"]
    res = fm.run(system, method="index3-alpha", t_end=0.6, h=1e-4, dt_out=2.5e-4, store=False)
    theta = hinge_angle(res)
    k = int(np.argmax(theta))
    assert 0.3 < theta[k] < 0.3 + 0.0176
    theta_r = theta[k:].min()                                                     # the top of the rebound
    E, tau, delta = 9.81 * 0.5 * np.sin(0.3), 9.81 * 0.5 * np.cos(0.3), theta[k] - 0.3
    rebound = 0.25 * E - 0.75 * tau * delta                                       # e = 0.5
    assert abs(9.81 * 0.5 * (np.sin(0.3) - np.sin(theta_r)) - rebound) < 1e-2 * rebound
    # the works are a trapezoidal sum over the outputs: 2.4e-4 J of the 1.45 J the stop dissipates at
    # dt_out = 2.5e-4 s (1.1e-3 J at 5e-4 s, 2.0e-3 J at 1e-3 s, measured)
    assert np.abs(res.energy_balance_error()).max() < 1e-3 * res.energies["W_damping"][-1]
    free = fm.run(read_urdf(path), method="index3-alpha", t_end=0.6, h=1e-4, dt_out=1e-3, store=False)
    assert hinge_angle(free).max() > 0.6
