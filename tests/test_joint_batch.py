"""The System's joint batch (flexmbs/constraints/batch.py) on a mixed system: rigid bodies in Euler
parameters and in natural coordinates, a flexible body joined at mesh nodes and at a frame point,
the ground; every joint kind, an angle driver.

- C_q of the System against central differences of C, C_t and gamma against differences of
  C_q q' + C_t along a smooth path (the same identities as tests/test_joints.py, here for the
  stacked evaluation with many joints, shared markers and padded columns);
- each joint's rows of the System's C, C_q and gamma equal the joint evaluated alone (a batch of
  one: the same formulas, so equal to round-off);
- `System.constraint_terms` gives what `residual` and `jacobian` give;
- `System.quadratic_velocity_jacobian` against differences of the bodies' Q_v.
"""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import FlexibleBody, Node, RigidBodyEP, RigidBodyNatural
from flexmbs.constraints import (AngleDriver, Cylindrical, Distance, Fixed, PointOnLine, Prismatic, Revolute,
                                 Spherical)
from flexmbs.rotations import axis_angle_to_matrix
from flexmbs.system import System


def law(t):
    return 0.1 + 0.7 * np.sin(1.1 * t), 0.77 * np.cos(1.1 * t), -0.847 * np.sin(1.1 * t)


def mixed_system():
    rng = np.random.default_rng(3)
    a = RigidBodyEP("a", 1.2, [0.2, 0.3, 0.4], position=[0.2, 0.1, -0.3], centroid=[0.05, -0.02, 0.01],
                    orientation=axis_angle_to_matrix([0.3, 1.0, -0.2], 0.7))
    b = RigidBodyEP("b", 0.8, [0.1, 0.2, 0.25], position=[1.3, -0.2, 0.4],
                    orientation=axis_angle_to_matrix([1.0, 0.2, 0.4], -0.5))
    c = RigidBodyNatural("c", 1.5, [0.3, 0.2, 0.4], position=[0.7, 0.8, 0.1],
                         orientation=axis_angle_to_matrix(rng.standard_normal(3), 1.1))
    beam = fm.BeamEB3D(fm.Material(2e5, 1000.0, 0.3), 1e-3, 1e-7, 2e-7, 3e-7)
    x = np.linspace(0.0, 1.0, 4)
    mesh = fm.Mesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(3), np.arange(1, 4)])},
                   node_sets={"start": np.array([0])})
    f = FlexibleBody(fm.Model(mesh, beam, fixed=[("start", "all")]), "f", position=[0.2, -0.5, 0.3],
                     orientation=axis_angle_to_matrix([0.0, 0.3, 1.0], 0.4))
    tip = f.point(f.initial_coordinates(), Node(3))
    mid = f.point(f.initial_coordinates(), Node(2))
    axis = np.array([0.3, -0.5, 0.8])
    joints = [Revolute(None, a, at=[0.2, 0.1, -0.3], axis=[0, 0, 1], name="r0"),
              AngleDriver(None, a, [0, 0, 1], law, name="drive"),
              Spherical(a, f, s_j=Node(0), name="s"),
              Cylindrical(f, b, s_i=Node(3), at=tip, axis=axis, name="cyl"),
              PointOnLine(c, f, at=mid, s_j=Node(2), axis=axis, name="pol"),
              Distance(b, c, name="dist"),
              Prismatic(None, c, at=[0.7, 0.8, 0.1], axis=axis, name="pri"),
              Fixed(b, None, at=[1.0, 0.0, 0.0], name="weld")]
    return System([a, f, b, c], joints), joints


def path(system, seed=1):
    rng = np.random.default_rng(seed)
    q0 = system.initial_coordinates()
    d1, d2 = 0.05 * rng.standard_normal((2, q0.size))
    return (lambda t: q0 + d1 * np.sin(t) + d2 * (1 - np.cos(2 * t)),
            lambda t: d1 * np.cos(t) + 2 * d2 * np.sin(2 * t),
            lambda t: -d1 * np.sin(t) + 4 * d2 * np.cos(2 * t))


def test_system_batch_derivatives_against_finite_differences():
    system, _ = mixed_system()
    q, v, a = path(system)
    t = 0.41
    J = system.jacobian(t, q(t))
    fd = np.empty_like(J)
    h = 1e-6
    for j in range(system.n_q):
        e = np.zeros(system.n_q)
        e[j] = h
        fd[:, j] = (system.residual(t, q(t) + e) - system.residual(t, q(t) - e)) / (2 * h)
    assert np.allclose(J, fd, atol=1e-7 * (1 + np.abs(J).max()))

    def w(s):                                     # C' = C_q q' + C_t along the path
        return system.jacobian(s, q(s)) @ v(s) + system.time_derivative(s, q(s))

    h = 1e-5
    assert np.allclose((system.residual(t + h, q(t + h)) - system.residual(t - h, q(t - h))) / (2 * h), w(t),
                       atol=1e-7)
    lhs = J @ a(t) - system.gamma(t, q(t), v(t))  # C'' = C_q q'' - gamma
    assert np.allclose((w(t + h) - w(t - h)) / (2 * h), lhs, atol=1e-6 * (1 + np.abs(lhs).max()))


def test_system_rows_equal_each_joint_alone_and_one_pass_equals_two():
    system, joints = mixed_system()
    q, v, _ = path(system, seed=5)
    t = 0.9
    C, J = system.constraint_terms(t, q(t))
    assert np.array_equal(C, system.residual(t, q(t)))
    assert np.array_equal(J, system.jacobian(t, q(t)))
    g, Ct = system.gamma(t, q(t), v(t)), system.time_derivative(t, q(t))
    for c in joints:
        rows = system.rows(c)
        qs = [np.zeros(0) if b is None else q(t)[system.slice(b)] for b in c.bodies]
        vs = [np.zeros(0) if b is None else v(t)[system.slice(b)] for b in c.bodies]
        scale = 1 + np.abs(J).max()
        assert np.allclose(C[rows], c.residual(t, qs), rtol=0, atol=1e-14 * scale), c.name
        for b, blk in zip(c.bodies, c.jacobian(t, qs)):
            if b is not None:
                assert np.allclose(J[rows, system.slice(b)], blk, rtol=0, atol=1e-14 * scale), c.name
        assert np.allclose(g[rows], c.gamma(t, qs, vs), rtol=1e-12, atol=1e-12), c.name
        assert np.allclose(Ct[rows], c.time_derivative(t, qs), rtol=1e-12, atol=1e-14), c.name


def central_jacobian(fun, x, h=1e-6):
    """Central differences (fun(x + h e_j) - fun(x - h e_j)) / 2h, column by column."""
    cols = []
    for j in range(len(x)):
        e = np.zeros(len(x))
        e[j] = h
        cols.append((fun(x + e) - fun(x - e)) / (2 * h))
    return np.column_stack(cols)


def test_quadratic_velocity_jacobian_against_finite_differences():
    system, _ = mixed_system()
    q, v, _ = path(system, seed=7)
    t = 0.3
    qq, vv = q(t), 3.0 * v(t) + 0.5

    def Qv(x):
        out = np.zeros(system.n_q)
        for b in system.bodies:
            if hasattr(b, "quadratic_velocity_jacobian"):
                sl = system.slice(b)
                out[sl] = b.quadratic_velocity(qq[sl], x[sl])
        return out

    D = system.quadratic_velocity_jacobian(qq, vv)
    fd = central_jacobian(Qv, vv)
    assert np.abs(D).max() > 0
    assert np.allclose(D, fd, atol=1e-7 * (1 + np.abs(D).max()))


@pytest.mark.parametrize("dense_below", [400, 0], ids=["dense invariants", "sparse invariants"])
def test_flexible_quadratic_velocity_jacobian_dense_and_sparse(dense_below):
    """The FlexibleBody's analytic dQ_v/dv against central differences of its Q_v, with the
    invariants S[a, b] stacked dense and as CSR (Model.dense_below)."""
    x = np.linspace(0.0, 1.0, 5)
    mesh = fm.Mesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(4), np.arange(1, 5)])},
                   node_sets={"start": np.array([0])})
    beam = fm.BeamEB3D(fm.Material(2e5, 1000.0, 0.3), 1e-3, 1e-7, 2e-7, 3e-7)
    f = FlexibleBody(fm.Model(mesh, beam, fixed=[("start", "all")], dense_below=dense_below), "f")
    assert f.model.dense == (dense_below > 0)
    rng = np.random.default_rng(2)
    q = f.initial_coordinates() + 0.01 * rng.standard_normal(f.n_q)
    v = rng.standard_normal(f.n_q)
    D = f.quadratic_velocity_jacobian(q, v)
    fd = central_jacobian(lambda x: f.quadratic_velocity(q, x), v)
    assert np.allclose(D, fd, atol=1e-8 * (1 + np.abs(D).max()))
