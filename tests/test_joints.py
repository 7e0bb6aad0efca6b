"""Joints and drivers: Jacobian blocks, C_t and gamma against finite differences, for both rigid
body kinds, body-to-body and body-to-ground; reactions against statics; bad input."""
import numpy as np
import pytest

from flexmbs.bodies import RigidBodyEP, RigidBodyNatural
from flexmbs.constraints import (AngleDriver, CoordinateDriver, Cylindrical, Distance, Fixed, PointOnLine,
                                 Prismatic, Revolute, Spherical)
from flexmbs.rotations import axis_angle_to_matrix
from flexmbs.system import System

KINDS = {"ep": RigidBodyEP, "natural": RigidBodyNatural}
P = np.array([0.4, -0.3, 0.7])
P2 = np.array([1.1, 0.5, -0.2])
AXIS = np.array([0.3, -0.5, 0.8])


def law(t):
    return 0.2 + np.sin(1.3 * t), 1.3 * np.cos(1.3 * t), -1.69 * np.sin(1.3 * t)


JOINTS = {
    "spherical": lambda i, j: Spherical(i, j, at=P),
    "revolute": lambda i, j: Revolute(i, j, at=P, axis=AXIS),
    "cylindrical": lambda i, j: Cylindrical(i, j, at=P, axis=AXIS),
    "prismatic": lambda i, j: Prismatic(i, j, at=P, axis=AXIS),
    "fixed": lambda i, j: Fixed(i, j, at=P),
    "point_on_line": lambda i, j: PointOnLine(i, j, at=P, axis=AXIS),
    "distance": lambda i, j: Distance(i, j, at_i=P, at_j=P2),
    "angle_driver": lambda i, j: AngleDriver(i, j, AXIS, law),
}


def make_bodies(kind, seed=0):
    rng = np.random.default_rng(seed)
    cls = KINDS[kind]
    out = []
    for name in ("a", "b"):
        A = axis_angle_to_matrix(rng.standard_normal(3), rng.uniform(0.3, 2.5))
        out.append(cls(name, 1.5, [0.2, 0.3, 0.4], position=rng.standard_normal(3), orientation=A,
                       centroid=0.1 * rng.standard_normal(3)))
    return out


def motion(q0, seed):
    """A smooth path q(t) through q0 (not on the constraints: the identities hold for any path)."""
    rng = np.random.default_rng(seed)
    d1, d2 = 0.2 * rng.standard_normal((2, q0.size))

    def q(t):
        return q0 + d1 * np.sin(t) + d2 * (1.0 - np.cos(2.0 * t))

    def v(t):
        return d1 * np.cos(t) + 2.0 * d2 * np.sin(2.0 * t)

    def a(t):
        return -d1 * np.sin(t) + 4.0 * d2 * np.cos(2.0 * t)

    return q, v, a


def check_constraint(c, seed=1):
    """C_q blocks, C_t and gamma of one constraint against central differences."""
    qs0 = [np.zeros(0) if b is None else b.initial_coordinates() for b in c.bodies]
    sizes = [q.size for q in qs0]
    paths = [motion(q, seed + k) for k, q in enumerate(qs0)]
    t = 0.37
    qs = [p[0](t) for p in paths]
    vs = [p[1](t) for p in paths]
    acc = [p[2](t) for p in paths]
    blocks = c.jacobian(t, qs)
    assert [B.shape for B in blocks] == [(c.n_c, n) for n in sizes]
    h = 1e-6
    for k, (q, B) in enumerate(zip(qs, blocks)):
        fd = np.zeros_like(B)
        for i in range(q.size):
            qp = [x.copy() for x in qs]
            qm = [x.copy() for x in qs]
            qp[k][i] += h
            qm[k][i] -= h
            fd[:, i] = (c.residual(t, qp) - c.residual(t, qm)) / (2 * h)
        assert np.allclose(B, fd, atol=1e-7 * (1 + np.abs(B).max(initial=0.0))), (c.name, k)

    def C_of(s):
        return c.residual(s, [p[0](s) for p in paths])

    def w_of(s):
        qq, vv = [p[0](s) for p in paths], [p[1](s) for p in paths]
        return sum(B @ x for B, x in zip(c.jacobian(s, qq), vv)) + c.time_derivative(s, qq)

    h = 1e-5
    assert np.allclose((C_of(t + h) - C_of(t - h)) / (2 * h), w_of(t), atol=1e-7), c.name
    dw = (w_of(t + h) - w_of(t - h)) / (2 * h)                  # = C_q q'' - gamma
    lhs = sum(B @ x for B, x in zip(blocks, acc)) - c.gamma(t, qs, vs)
    assert np.allclose(dw, lhs, atol=1e-6 * (1 + np.abs(lhs).max())), (c.name, dw, lhs)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("joint", list(JOINTS))
def test_joint_derivatives(kind, joint):
    a, b = make_bodies(kind)
    for i, j in ((a, b), (a, None), (None, b)):
        c = JOINTS[joint](i, j)
        if joint != "angle_driver":                 # built on the initial configuration: satisfied there
            qs = [np.zeros(0) if x is None else x.initial_coordinates() for x in c.bodies]
            assert np.abs(c.residual(0.0, qs)).max() < 1e-12
        check_constraint(c)


@pytest.mark.parametrize("kind", list(KINDS))
def test_internal_constraints_and_coordinate_driver(kind):
    a, _ = make_bodies(kind)
    for c in a.internal_constraints() + [CoordinateDriver(a, 2, law)]:
        check_constraint(c)


def test_angle_driver_measures_the_relative_angle():
    a, b = make_bodies("ep")
    d = AngleDriver(a, b, AXIS, 0.7)
    qa, qb = a.initial_coordinates(), b.initial_coordinates()
    k = AXIS / np.linalg.norm(AXIS)
    R = axis_angle_to_matrix(k, 0.7)                      # turn b by 0.7 rad about the axis
    A = R @ b.rotation(qb)
    b2 = RigidBodyEP("b2", 1.0, [1, 1, 1], orientation=A)
    assert abs(d.residual(0.0, [qa, b2.initial_coordinates()])[0]) < 1e-12
    assert abs(d.residual(0.0, [qa, qb])[0] + np.sin(0.7)) < 1e-12     # sin(theta - f) at theta = 0


@pytest.mark.parametrize("kind", list(KINDS))
def test_fixed_joint_reaction_is_the_weight_and_its_moment(kind):
    """A body welded to the ground at P: the joint carries m g and the moment of the weight."""
    m, g = 2.0, np.array([0.0, 0.0, -9.81])
    A = axis_angle_to_matrix([1.0, 2.0, 0.5], 0.8)
    body = KINDS[kind]("beam", m, [0.1, 0.2, 0.25], position=(1.0, 0.5, 0.0), orientation=A,
                       centroid=(0.3, 0.0, 0.1))
    joint = Fixed(body, None, at=P)
    sys = System([body], [joint], gravity=g)
    q = sys.initial_coordinates()
    v = np.zeros(sys.n_q)
    M, C = sys.mass_matrix(q), sys.jacobian(0.0, q)
    K = np.block([[M, C.T], [C, np.zeros((sys.n_c, sys.n_c))]])
    sol = np.linalg.solve(K, np.concatenate([sys.forces(0.0, q, v), sys.gamma(0.0, q, v)]))
    assert np.abs(sol[:sys.n_q]).max() < 1e-10                 # static
    r = sys.reactions(0.0, q, sol[sys.n_q:])[joint.name]
    R = r["rotation"]
    assert np.allclose(r["origin"], P)
    F, T = R @ r["bodies"]["beam"]["force"], R @ r["bodies"]["beam"]["torque"]
    rC = body.point(q, body.centroid)
    assert np.allclose(F, -m * g, atol=1e-10)                   # joint force balances the weight
    assert np.allclose(T, -np.cross(rC - P, m * g), atol=1e-10)  # and its moment about P


def test_revolute_reaction_has_no_torque_about_its_axis():
    body = RigidBodyEP("link", 1.0, [0.01, 0.1, 0.1], position=(0.5, 0.0, 0.0))
    joint = Revolute(body, None, at=(0, 0, 0), axis=(0, 1, 0))
    sys = System([body], [joint], gravity=(0, 0, -9.81))
    q, v = sys.initial_coordinates(), np.zeros(sys.n_q)
    M, C = sys.mass_matrix(q), sys.jacobian(0.0, q)
    K = np.block([[M, C.T], [C, np.zeros((sys.n_c, sys.n_c))]])
    sol = np.linalg.solve(K, np.concatenate([sys.forces(0.0, q, v), sys.gamma(0.0, q, v)]))
    T = sys.reactions(0.0, q, sol[sys.n_q:])[joint.name]["bodies"]["link"]["torque"]
    assert abs(T[2]) < 1e-10                                     # z of the joint frame = the axis
    # the link (I_O = 0.1 + 0.25 = 0.35) falls with alpha = m g L / I_O about +y
    w_dot = 2 * (np.array([[-0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]) @ sol[3:7])
    assert np.isclose(w_dot[1], 9.81 * 0.5 / 0.35)


def test_bad_input_names_the_joint():
    a, b = make_bodies("ep")
    with pytest.raises(ValueError, match=r"joint 'hinge'.*do not coincide"):
        Spherical(a, b, s_i=(0, 0, 0), s_j=(0, 0, 0), name="hinge")
    with pytest.raises(ValueError, match="needs `axis`"):
        Revolute(a, b, at=P)
    with pytest.raises(ValueError, match="ground"):
        Spherical(None, None, at=P)
    with pytest.raises(ValueError, match="same body"):
        Spherical(a, a, at=P)
    with pytest.raises(ValueError, match="index"):
        CoordinateDriver(a, 7, 0.0)


@pytest.mark.parametrize("dim", [2, 3])
def test_dimension_generic_joints_on_point_masses(dim):
    """Distance and Spherical work in 2D and 3D (here on point masses); the axis joints are 3D only."""
    from flexmbs.bodies import PointMass
    a = PointMass("a", 1.0, np.arange(1.0, dim + 1))
    b = PointMass("b", 2.0, -np.arange(1.0, dim + 1), velocity=np.ones(dim))
    for c in (Distance(a, b), Distance(None, b, at_i=np.zeros(dim)), Spherical(a, b, at=a.position),
              Spherical(None, a, at=a.position)):
        assert c.n_c == (dim if isinstance(c, Spherical) else 1)
        check_constraint(c)
    if dim == 2:
        with pytest.raises(ValueError, match="dimension"):
            Spherical(a, make_bodies("ep")[0], at=P)
        with pytest.raises(ValueError, match="dimension"):
            Revolute(a, None, at=a.position, axis=(0, 0, 1))


def rigid_velocity(body, q, omega, v_point, point):
    """q' of a rigid motion with global angular velocity omega and velocity v_point at the global ``point``."""
    A = body.rotation(q)
    R = body.point(q, np.zeros(3))
    vR = v_point + np.cross(omega, R - point)
    if isinstance(body, RigidBodyEP):
        from flexmbs.rotations import ep_E
        return np.concatenate([vR, 0.5 * ep_E(q[3:7]).T @ omega])
    return np.concatenate([vR, np.cross(omega, A.T).ravel()])


FREE = {   # joint -> (dof to ground, motions it allows: (omega, v at P))
    "spherical": (3, [(np.eye(3)[k], np.zeros(3)) for k in range(3)]),
    "revolute": (1, [(AXIS, np.zeros(3))]),
    "cylindrical": (2, [(AXIS, np.zeros(3)), (np.zeros(3), AXIS)]),
    "prismatic": (1, [(np.zeros(3), AXIS)]),
    "fixed": (0, []),
    "point_on_line": (4, [(np.zeros(3), AXIS)] + [(np.eye(3)[k], np.zeros(3)) for k in range(3)]),
    "distance": (5, [(np.eye(3)[k], np.zeros(3)) for k in range(3)]),
}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("joint", list(FREE))
def test_each_joint_frees_what_it_should(kind, joint):
    """Degrees of freedom of a body on the joint to the ground, and the rigid motions it allows (C_q q' = 0)
    and forbids (a rotation about an axis normal to AXIS, a translation normal to AXIS)."""
    a, _ = make_bodies(kind)
    c = JOINTS[joint](None, a) if joint != "distance" else Distance(None, a, at_i=P2, at_j=P)
    sys = System([a], [c])
    q = sys.initial_coordinates()
    dof, allowed = FREE[joint]
    assert sys.mobility(0.0, q)["dof"] == dof
    J = sys.jacobian(0.0, q)
    for w, vP in allowed:
        assert np.abs(J @ rigid_velocity(a, q, w, vP, P)).max() < 1e-12
    n = np.cross(AXIS, [1.0, 0.0, 0.0])
    forbidden = {"revolute": [(n, 0 * n), (0 * n, n)], "prismatic": [(AXIS, 0 * n), (0 * n, n)],
                 "cylindrical": [(n, 0 * n), (0 * n, n)], "point_on_line": [(0 * n, n)], "spherical": [(0 * n, n)],
                 "fixed": [(n, 0 * n), (0 * n, n)], "distance": [(0 * n, P - P2)]}[joint]
    for w, vP in forbidden:
        assert np.abs(J @ rigid_velocity(a, q, w, vP, P)).max() > 1e-3


@pytest.mark.parametrize("kind", list(KINDS))
def test_reactions_between_two_bodies_are_equal_and_opposite(kind):
    a, b = make_bodies(kind)
    c = Revolute(a, b, at=P, axis=AXIS)
    sys = System([a, b], [c])
    q = sys.initial_coordinates()
    lam = np.random.default_rng(4).standard_normal(c.n_c)
    r = c.reaction(0.0, [q[sys.slice(a)], q[sys.slice(b)]], lam)["bodies"]
    assert np.allclose(r["a"]["force"], -r["b"]["force"], atol=1e-12)
    assert np.allclose(r["a"]["torque"], -r["b"]["torque"], atol=1e-12)
    assert abs(r["a"]["torque"][2]) < 1e-12                    # none about the hinge axis (joint z)


def test_joints_accept_a_bodys_own_marker_objects():
    """A marker that is not a vector (a flexible body's mesh node) is passed to the body untouched."""
    from flexmbs.bodies import PointMass

    class Tip:                                           # a marker object this test body understands
        pass

    class Stick(PointMass):
        def _s(self, s):
            return np.array([0.5, 0.0, 0.0]) if isinstance(s, Tip) else s

        def point(self, q, s):
            return super().point(q, self._s(s))

    a = Stick("stick", 1.0, (0.0, 0.0, 0.0))
    c = Spherical(a, None, s_i=Tip(), s_j=(0.5, 0.0, 0.0))
    assert np.allclose(c.residual(0.0, [a.initial_coordinates(), np.zeros(0)]), 0.0)
    with pytest.raises(ValueError, match="do not coincide"):
        Spherical(a, None, s_i=Tip(), s_j=(0.6, 0.0, 0.0))
