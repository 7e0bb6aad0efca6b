"""rotations: skew, Euler parameters, E/G matrices, angles, Rodrigues; cross-checks with scipy."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from flexmbs import rotations as rot

rng = np.random.default_rng(12)


def random_ep():
    p = rng.standard_normal(4)
    return p / np.linalg.norm(p)


def test_skew_and_axial():
    v, y = rng.standard_normal(3), rng.standard_normal(3)
    assert np.allclose(rot.skew(v) @ y, np.cross(v, y))
    assert np.allclose(rot.axial(rot.skew(v)), v)
    V = rng.standard_normal((5, 3))
    assert np.allclose(rot.skew(V)[2], rot.skew(V[2]))          # batched
    assert rot.tilde is rot.skew
    with pytest.raises(ValueError, match="3 components"):
        rot.skew([1.0, 2.0])


def test_one_skew_matrix_everywhere():
    """The old copies are now the one in rotations."""
    from flexmbs.assembly import invariants
    from flexmbs.formulations import _common
    assert invariants.tilde is rot.skew and _common.tilde is rot.skew


def test_cross_over_the_last_axis_is_the_one_of_the_tree_and_the_beams():
    """`rotations.cross` is np.cross over the last axis, broadcast, and keeps complex steps; the tree bodies and
    the 3D corotational beams take it (their copies were one)."""
    from flexmbs.bodies import tree
    from flexmbs.elements import corotational3d
    a, b = rng.standard_normal((4, 1, 3)), rng.standard_normal((5, 3))
    assert np.allclose(rot.cross(a, b), np.cross(a, b)) and rot.cross(a, b).shape == (4, 5, 3)
    z = a + 1e-20j * b[0]
    assert np.allclose(rot.cross(z, b).imag * 1e20, np.broadcast_to(np.cross(b[0], b), (4, 5, 3)), atol=1e-12)
    assert tree.cross is rot.cross and corotational3d.cross_arrays is rot.cross


def test_ep_matrix_against_scipy_and_roundtrip():
    for _ in range(20):
        p = random_ep()
        A = rot.ep_to_matrix(p)
        B = Rotation.from_quat([p[1], p[2], p[3], p[0]]).as_matrix()     # scipy: scalar last
        assert np.allclose(A, B, atol=1e-14)
        q = rot.matrix_to_ep(A)
        assert np.allclose(q, p if p[0] >= 0 else -p, atol=1e-14)
    for angle in (0.0, np.pi, -np.pi + 1e-9):          # Shepperd branches near 180 degrees
        for axis in np.eye(3):
            A = rot.axis_angle_to_matrix(axis, angle)
            assert np.allclose(rot.ep_to_matrix(rot.matrix_to_ep(A)), A, atol=1e-13)


def test_E_G_identities():
    p, pd = random_ep(), rng.standard_normal(4)
    E, G = rot.ep_E(p), rot.ep_G(p)
    assert np.allclose(E @ G.T, rot.ep_to_matrix(p))
    assert np.allclose(E @ p, 0) and np.allclose(G @ p, 0)
    assert np.allclose(E @ E.T, np.eye(3)) and np.allclose(G @ G.T, np.eye(3))
    pd -= (pd @ p) * p                                  # tangent: p.p' = 0
    A = rot.ep_to_matrix(p)
    h = 1e-6
    Ad = (rot.ep_to_matrix(p + h * pd) - rot.ep_to_matrix(p - h * pd)) / (2 * h)
    w, wb = 2 * E @ pd, 2 * G @ pd
    assert np.allclose(Ad, rot.skew(w) @ A, atol=1e-8)        # A' = skew(omega) A
    assert np.allclose(wb, A.T @ w)


def test_ep_vector_jacobian_finite_difference():
    p, u = rng.standard_normal(4), rng.standard_normal(3)   # off the unit sphere too: exact derivative
    J = rot.ep_vector_jacobian(p, u)
    h = 1e-6
    fd = np.column_stack([(rot.ep_to_matrix(p + h * e) @ u - rot.ep_to_matrix(p - h * e) @ u) / (2 * h)
                          for e in np.eye(4)])
    assert np.allclose(J, fd, atol=1e-8)


def test_axis_angle():
    k, a = rng.standard_normal(3), 1.234
    A = rot.axis_angle_to_matrix(k, a)
    assert np.allclose(A, Rotation.from_rotvec(a * k / np.linalg.norm(k)).as_matrix())
    kk, aa = rot.matrix_to_axis_angle(A)
    assert np.isclose(aa, a) and np.allclose(kk, k / np.linalg.norm(k))
    assert np.allclose(rot.ep_to_matrix(rot.axis_angle_to_ep(k, a)), A)
    with pytest.raises(ValueError, match="axis"):
        rot.axis_angle_to_matrix([0, 0, 0], 1.0)


def test_cardan_and_euler_angles_against_scipy():
    ang = np.array([0.3, -0.7, 1.1])
    A = rot.cardan_zyx_to_matrix(ang)
    assert np.allclose(A, Rotation.from_euler("ZYX", ang).as_matrix())          # intrinsic Z-Y-X
    assert np.allclose(rot.matrix_to_cardan_zyx(A), ang)
    B = rot.euler_zxz_to_matrix(ang)
    assert np.allclose(B, Rotation.from_euler("ZXZ", ang).as_matrix())
    assert np.allclose(rot.matrix_to_euler_zxz(rot.euler_zxz_to_matrix([0.3, 0.7, 1.1])), [0.3, 0.7, 1.1])
    assert np.allclose(rot.euler_zxz_to_matrix(rot.matrix_to_euler_zxz(B)), B)
    # gimbal lock: the matrix is still reproduced
    G = rot.cardan_zyx_to_matrix([0.4, np.pi / 2, 0.0])
    assert np.allclose(rot.cardan_zyx_to_matrix(rot.matrix_to_cardan_zyx(G)), G)
    Z = rot.euler_zxz_to_matrix([0.4, 0.0, 0.3])
    assert np.allclose(rot.euler_zxz_to_matrix(rot.matrix_to_euler_zxz(Z)), Z)


def test_cardan_kinematics_is_the_derivative():
    f = lambda t: np.array([0.3 + t + t * t, -0.2 + 0.5 * np.sin(t), 1.0 - 2 * t])
    t, h = 0.4, 1e-5
    df = (f(t + h) - f(t - h)) / (2 * h)
    ddf = (f(t + h) - 2 * f(t) + f(t - h)) / h**2
    A, w, eps = rot.cardan_zyx_kinematics(f(t), df, ddf)
    Ad = (rot.cardan_zyx_to_matrix(f(t + h)) - rot.cardan_zyx_to_matrix(f(t - h))) / (2 * h)
    assert np.allclose(A.T @ Ad, rot.skew(w), atol=1e-8)        # body angular velocity
    w2 = lambda s: rot.cardan_zyx_kinematics(f(s), (f(s + h) - f(s - h)) / (2 * h), ddf)[1]
    assert np.allclose((w2(t + 1e-4) - w2(t - 1e-4)) / 2e-4, eps, atol=1e-5)


def test_as_rotation_matrix_bad_input():
    assert np.allclose(rot.as_rotation_matrix(None), np.eye(3))
    with pytest.raises(ValueError, match="proper rotation"):
        rot.as_rotation_matrix(np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="3 x 3"):
        rot.as_rotation_matrix([1.0, 0.0])


def test_pad3():
    assert rot.pad3(np.ones((4, 2))).shape == (4, 3)


def test_batched_euler_parameter_functions():
    P, U = rng.standard_normal((5, 4)), rng.standard_normal((5, 3))
    for f in (rot.ep_to_matrix, rot.ep_E, rot.ep_G):
        assert np.allclose(f(P)[3], f(P[3]))
    assert np.allclose(rot.ep_vector_jacobian(P, U)[2], rot.ep_vector_jacobian(P[2], U[2]))
    assert np.allclose(rot.ep_vector_jacobian(P, U[0])[4], rot.ep_vector_jacobian(P[4], U[0]))


def test_rotation_2d_is_the_z_rotation():
    th = np.array([0.3, -1.2])
    assert np.allclose(rot.rotation_2d(th)[1], rot.rotation_z(-1.2)[:2, :2])
    assert rot.rotation_2d(0.5).shape == (2, 2)


def test_last_rotation_follows_its_argument_in_place_changes_included():
    from flexmbs.rotations import LastRotation, ep_to_matrix
    A = LastRotation()
    p = np.array([0.9, 0.1, -0.3, 0.2])
    p /= np.linalg.norm(p)
    np.testing.assert_array_equal(A(p), ep_to_matrix(p))
    p[1], p[2] = p[2], p[1]                          # same array, other values: recomputed
    np.testing.assert_array_equal(A(p), ep_to_matrix(p))
    np.testing.assert_array_equal(A(list(p)), ep_to_matrix(p))
