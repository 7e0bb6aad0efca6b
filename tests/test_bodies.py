"""Rigid bodies: M and Q_v against a finite-difference Lagrange derivation from T, the same kinetic
energy in both coordinate systems, markers, loads, free spin, bad input."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from flexmbs.bodies import RigidBodyEP, RigidBodyNatural
from flexmbs.rotations import axis_angle_to_matrix, ep_E, matrix_to_ep
from flexmbs.system import System

KINDS = {"ep": RigidBodyEP, "natural": RigidBodyNatural}
J_C = np.array([[0.30, 0.02, -0.05], [0.02, 0.45, 0.04], [-0.05, 0.04, 0.60]])      # products of inertia


def body(kind, centroid=(0.0, 0.0, 0.0), **kw):
    return KINDS[kind]("b", 2.5, J_C, centroid=centroid, **kw)


def path(n, seed):
    rng = np.random.default_rng(seed)
    q0, d1, d2 = rng.standard_normal((3, n))

    def q(t):
        return q0 + 0.3 * d1 * np.sin(t) + 0.2 * d2 * np.cos(1.7 * t)

    def v(t):
        return 0.3 * d1 * np.cos(t) - 0.34 * d2 * np.sin(1.7 * t)

    def a(t):
        return -0.3 * d1 * np.sin(t) - 0.578 * d2 * np.cos(1.7 * t)

    return q, v, a


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("centroid", [(0.0, 0.0, 0.0), (0.3, -0.2, 0.15)])
def test_mass_matrix_and_quadratic_velocity_from_lagrange(kind, centroid):
    """d/dt dT/dq' - dT/dq = M q'' - Q_v along any path, with T = 1/2 q'^T M(q) q' (finite differences)."""
    b = body(kind, centroid)
    q, v, a = path(b.n_q, 5)
    t, h = 0.6, 1e-5

    def T(qq, vv):
        return 0.5 * vv @ b.mass_matrix(qq) @ vv

    p = lambda s: b.mass_matrix(q(s)) @ v(s)                     # dT/dq'
    dp = (p(t + h) - p(t - h)) / (2 * h)
    dTdq = np.array([(T(q(t) + h * e, v(t)) - T(q(t) - h * e, v(t))) / (2 * h) for e in np.eye(b.n_q)])
    lagrange = dp - dTdq
    Qv = b.forces(t, q(t), v(t), None)
    expected = b.mass_matrix(q(t)) @ a(t) - Qv
    assert np.allclose(lagrange, expected, atol=1e-7 * (1 + np.abs(expected).max()))
    if kind == "natural":
        assert not np.any(Qv)
        assert np.array_equal(b.mass_matrix(q(0.0)), b.mass_matrix(q(1.0)))


def rigid_motion(t):
    """A rigid motion: centroid path, rotation, their rates (global omega)."""
    k = np.array([0.3, 1.0, -0.4]) / np.linalg.norm([0.3, 1.0, -0.4])
    A = axis_angle_to_matrix(k, 0.8 * t + 0.3 * t * t) @ axis_angle_to_matrix([1, 0, 0], 0.4)
    w = (0.8 + 0.6 * t) * k
    rc = np.array([np.cos(t), 2 * t, 0.5 * t * t])
    vc = np.array([-np.sin(t), 2.0, t])
    return rc, vc, A, w


@pytest.mark.parametrize("centroid", [(0.0, 0.0, 0.0), (0.3, -0.2, 0.15)])
def test_kinetic_energy_is_the_same_in_both_coordinate_systems(centroid):
    rc, vc, A, w = rigid_motion(0.7)
    c = np.array(centroid)
    R, Rd = rc - A @ c, vc - np.cross(w, A @ c)                   # reference point O
    T_exact = 0.5 * 2.5 * vc @ vc + 0.5 * w @ (A @ J_C @ A.T) @ w
    for kind in KINDS:
        b = body(kind, centroid, position=R, orientation=A, velocity=Rd, angular_velocity=w)
        q, v = b.initial_coordinates(), b.initial_velocities()
        assert np.allclose(b.angular_velocity(q, v), w)
        assert np.allclose(b.point_velocity(q, v, c), vc)
        assert np.isclose(b.energy(q, v, None)[0], T_exact, rtol=1e-13)
        assert np.isclose(b.energy(q, v, (0, 0, -9.81))[1], 2.5 * 9.81 * rc[2], rtol=1e-13)


@pytest.mark.parametrize("kind", list(KINDS))
def test_markers_loads_and_rates(kind):
    rng = np.random.default_rng(2)
    A = axis_angle_to_matrix(rng.standard_normal(3), 1.1)
    b = body(kind, (0.1, 0.2, 0.3), position=(1, 2, 3), orientation=A, angular_velocity=(0.3, -1.0, 2.0),
             velocity=(1, 0, 0))
    q, v = b.initial_coordinates(), b.initial_velocities()
    s, F, T = rng.standard_normal((3, 3))
    assert np.allclose(b.point(q, s), [1, 2, 3] + A @ s)
    assert np.allclose(b.vector(q, s), A @ s) and np.allclose(b.rotation(q), A)
    w = b.angular_velocity(q, v)
    assert np.isclose(b.point_force(q, s, F) @ v, F @ b.point_velocity(q, v, s))     # power of a force
    assert np.isclose(b.torque(q, T) @ v, T @ w)                                      # power of a torque
    h = 1e-6
    fd = np.column_stack([(b.point(q + h * e, s) - b.point(q - h * e, s)) / (2 * h) for e in np.eye(b.n_q)])
    assert np.allclose(b.point_jacobian(q, s), fd, atol=1e-8)
    fd = np.column_stack([(b.vector(q + h * e, s) - b.vector(q - h * e, s)) / (2 * h) for e in np.eye(b.n_q)])
    assert np.allclose(b.vector_jacobian(q, s), fd, atol=1e-8)


def free_motion(kind, omega, centroid=(0.0, 0.0, 0.0), t_end=2.0, gravity=None, v0=(0, 0, 0), J=None):
    """A free body by the augmented formulation (M and C_q of its internal constraints) and DOP853."""
    A0 = axis_angle_to_matrix([1.0, 1.0, 0.0], 0.5)
    b = KINDS[kind]("free", 2.5, J_C if J is None else J, centroid=centroid, orientation=A0,
                    angular_velocity=omega, velocity=v0)
    sys = System([b], gravity=gravity)
    n = sys.n_q

    def rhs(t, x):
        q, v = x[:n], x[n:]
        M, C = sys.mass_matrix(q), sys.jacobian(t, q)
        K = np.block([[M, C.T], [C, np.zeros((sys.n_c, sys.n_c))]])
        acc = np.linalg.solve(K, np.concatenate([sys.forces(t, q, v), sys.gamma(t, q, v)]))[:n]
        return np.concatenate([v, acc])

    x0 = np.concatenate([sys.initial_coordinates(), sys.initial_velocities()])
    sol = solve_ivp(rhs, (0.0, t_end), x0, method="DOP853", rtol=1e-11, atol=1e-12, dense_output=True)
    return b, sys, sol, A0


@pytest.mark.parametrize("kind", list(KINDS))
def test_free_body_spinning_about_a_principal_axis(kind):
    """Spin about a principal axis (of an unsymmetric body) stays a steady rotation: A(t) = Rot(k, w t) A0."""
    lam, V = np.linalg.eigh(J_C)
    A0 = axis_angle_to_matrix([1.0, 1.0, 0.0], 0.5)
    k = A0 @ V[:, 2]                                      # the major axis, global
    b, sys, sol, A0 = free_motion(kind, 3.0 * k)
    q = sol.y[:sys.n_q, -1]
    v = sol.y[sys.n_q:, -1]
    assert np.allclose(b.rotation(q), axis_angle_to_matrix(k, 3.0 * 2.0) @ A0, atol=1e-8)
    assert np.allclose(b.angular_velocity(q, v), 3.0 * k, atol=1e-8)


@pytest.mark.parametrize("kind", list(KINDS))
def test_free_tumbling_body_conserves_energy_and_angular_momentum(kind):
    """General spin, reference point off the centroid, gravity: T + V and H_C constant; the centroid is
    in free fall."""
    c = np.array([0.3, -0.2, 0.15])
    w0 = np.array([1.0, -2.0, 0.5])
    b, sys, sol, A0 = free_motion(kind, w0, centroid=c, gravity=(0, 0, -9.81), v0=(1.0, 0.0, 2.0))
    n = sys.n_q
    E, H = [], []
    for x in sol.y.T[::10]:
        q, v = x[:n], x[n:]
        E.append(sum(sys.energy(q, v)))
        A = b.rotation(q)
        H.append(A @ J_C @ A.T @ b.angular_velocity(q, v))
    E, H = np.array(E), np.array(H)
    assert np.ptp(E) < 1e-8 * abs(E).max()
    assert np.abs(H - H[0]).max() < 1e-8
    q0, q = sol.y[:n, 0], sol.y[:n, -1]
    rc0 = b.point(q0, c)
    vc0 = b.point_velocity(q0, sol.y[n:, 0], c)
    assert np.allclose(b.point(q, c), rc0 + 2.0 * vc0 + 0.5 * np.array([0, 0, -9.81]) * 4.0, atol=1e-8)


def test_reference_point_offset_gives_the_same_motion():
    """The same physical body with its frame at the centroid or at another point moves the same way."""
    w0 = np.array([0.5, 1.5, -1.0])
    c = np.array([0.3, -0.2, 0.15])
    b1, s1, sol1, A0 = free_motion("ep", w0)
    b2, s2, sol2, _ = free_motion("ep", w0, centroid=c, v0=np.cross(w0, -A0 @ c))
    # b2's frame origin is at position 0, so its centroid is at A0 c: compare centroid paths and rotations
    q1, q2 = sol1.y[:7, -1], sol2.y[:7, -1]
    assert np.allclose(b1.rotation(q1), b2.rotation(q2), atol=1e-9)
    assert np.allclose(b1.point(q1, np.zeros(3)) + A0 @ c, b2.point(q2, c), atol=1e-9)


def test_inertia_at_reference_point_and_products():
    c = np.array([0.3, -0.2, 0.15])
    J_O = J_C + 2.5 * ((c @ c) * np.eye(3) - np.outer(c, c))
    a = RigidBodyEP("a", 2.5, J_C, centroid=c)
    b = RigidBodyEP("b", 2.5, J_O, centroid=c, inertia_at="reference")
    assert np.allclose(a.inertia_reference, b.inertia_reference)
    assert np.allclose(b.inertia_centroid, J_C)
    n = RigidBodyNatural("n", 2.5, J_C, centroid=c)
    # second moments Y = int s s^T dm from J_O: tr(Y) I - Y = J_O
    Y = n.second_moments
    assert np.allclose(np.trace(Y) * np.eye(3) - Y, J_O)


def test_euler_parameter_velocities():
    A = axis_angle_to_matrix([0, 1, 1], 0.9)
    w = np.array([0.2, -0.4, 1.1])
    b = RigidBodyEP("b", 1.0, [1, 2, 2.5], orientation=A, angular_velocity=w)
    q, v = b.initial_coordinates(), b.initial_velocities()
    p, pd = q[3:], v[3:]
    assert np.isclose(p @ pd, 0.0) and np.allclose(2 * ep_E(p) @ pd, w)
    assert np.allclose(p, matrix_to_ep(A))


@pytest.mark.parametrize("kind", list(KINDS))
def test_bad_input_names_the_body(kind):
    cls = KINDS[kind]
    with pytest.raises(ValueError, match=r"body 'disk'.*positive definite"):
        cls("disk", 1.0, [1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match=r"body 'disk'.*J1 \+ J2 >= J3"):
        cls("disk", 1.0, [1.0, 1.0, 3.0])
    with pytest.raises(ValueError, match=r"body 'disk'.*symmetric"):
        cls("disk", 1.0, [[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match=r"body 'disk'.*mass"):
        cls("disk", 0.0, [1, 1, 1])
    with pytest.raises(ValueError, match=r"body 'disk'.*rotation"):
        cls("disk", 1.0, [1, 1, 1], orientation=2 * np.eye(3))
    with pytest.raises(ValueError, match=r"body 'disk'.*inertia_at"):
        cls("disk", 1.0, [1, 1, 1], inertia_at="corner")
    # about the reference point, a tensor that is positive definite there but not at the centroid
    with pytest.raises(ValueError, match=r"body 'disk'.*centre of mass"):
        cls("disk", 1.0, [0.1, 1.0, 1.0], centroid=(0, 0, 1.0), inertia_at="reference")


def test_quadratic_velocity_agrees_with_the_paper_up_to_the_normalisation_direction():
    """Pappalardo and Guida 2018, eq. 8 (with G_bar = 2 G): Q_v = (m A W U w, -2 G^T W J_O w), W = skew(w),
    U = skew(u_C).  On the unit sphere with p.p' = 0 it equals ours except along (0, p), a direction the
    multiplier of p.p - 1 = 0 absorbs."""
    c = np.array([0.3, -0.2, 0.15])
    b = RigidBodyEP("b", 2.5, J_C, centroid=c, orientation=axis_angle_to_matrix([1, 2, 3], 0.7),
                    angular_velocity=[1, -2, 0.5], velocity=[1, 0, 2])
    q, v = b.initial_coordinates(), b.initial_velocities()
    from flexmbs.rotations import ep_G, skew
    p, pd = q[3:], v[3:]
    A, G = b.rotation(q), ep_G(p)
    w = 2 * G @ pd
    W, U = skew(w), skew(c)
    paper = np.concatenate([2.5 * A @ W @ U @ w, -2 * G.T @ W @ b.inertia_reference @ w])
    d = b.quadratic_velocity(q, v) - paper
    assert np.allclose(d[:3], 0.0, atol=1e-12)
    assert np.allclose(d[3:], (d[3:] @ p) * p, atol=1e-12) and abs(d[3:] @ p) > 1.0


@pytest.mark.parametrize("kind", list(KINDS))
def test_loads_torque_spin_up_and_point_force(kind):
    """A body-fixed torque T about the major principal axis spins the free body up: omega = T t / I3;
    an off-centre force's generalized force has the power F . v_P; loads enter forces() and the System."""
    from flexmbs.bodies.loads import point_load, torque_load
    lam, V = np.linalg.eigh(J_C)
    A0 = axis_angle_to_matrix([1.0, 1.0, 0.0], 0.5)
    body = KINDS[kind]("free", 2.5, J_C, orientation=A0, loads=[torque_load(0.7 * V[:, 2], local=True)])
    sys = System([body])
    n = sys.n_q

    def rhs(t, x):
        q, v = x[:n], x[n:]
        M, C = sys.mass_matrix(q), sys.jacobian(t, q)
        K = np.block([[M, C.T], [C, np.zeros((sys.n_c, sys.n_c))]])
        return np.concatenate([v, np.linalg.solve(K, np.concatenate([sys.forces(t, q, v), sys.gamma(t, q, v)]))[:n]])

    x0 = np.concatenate([sys.initial_coordinates(), sys.initial_velocities()])
    x = solve_ivp(rhs, (0.0, 1.5), x0, method="DOP853", rtol=1e-11, atol=1e-12).y[:, -1]
    assert np.allclose(body.angular_velocity(x[:n], x[n:]), 0.7 * 1.5 / lam[2] * (A0 @ V[:, 2]), atol=1e-9)
    F, s = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.1, -0.2])
    pushed = KINDS[kind]("p", 1.0, [1, 1, 1], angular_velocity=(0.2, 0.5, -1.0), velocity=(1, 2, 3),
                         loads=[point_load(s, lambda t: F * t)])
    q, v = pushed.initial_coordinates(), pushed.initial_velocities()
    Q = pushed.forces(2.0, q, v, None) - pushed.forces(0.0, q, v, None)
    assert np.isclose(Q @ v, 2.0 * F @ pushed.point_velocity(q, v, s))
    with pytest.raises(ValueError, match="callable"):
        KINDS[kind]("bad", 1.0, [1, 1, 1], loads=[3.0])


def test_spring_to_ground_oscillates_at_sqrt_k_over_m():
    """A point mass on a spring (and a Distance-free 1D motion): period 2 pi sqrt(m/k); damping decays it."""
    from flexmbs.bodies import PointMass
    from flexmbs.bodies.loads import spring_to_ground
    m, k, l0 = 2.0, 50.0, 1.0
    p = PointMass("m", m, (1.2, 0.0), loads=[spring_to_ground((0.0, 0.0), (0.0, 0.0), k, l0)])
    sys = System([p])
    sol = solve_ivp(lambda t, x: np.concatenate([x[2:], sys.forces(t, x[:2], x[2:]) / m]), (0, 2 * np.pi * np.sqrt(m / k)),
                    np.concatenate([p.initial_coordinates(), p.initial_velocities()]), method="DOP853", rtol=1e-11, atol=1e-12)
    assert np.allclose(sol.y[:2, -1], [1.2, 0.0], atol=1e-8)              # back after one period
    damped = PointMass("m", m, (1.2, 0.0), velocity=(0.0, 0.0),
                       loads=[spring_to_ground((0.0, 0.0), (0.0, 0.0), k, l0, damping=1.0)])
    assert damped.forces(0.0, damped.initial_coordinates(), np.array([1.0, 0.0]), None)[0] == pytest.approx(-k * 0.2 - 1.0)
