"""Rotations: the one place for skew matrices, cross products of arrays, Euler parameters, rotation matrices
and angles.

Conventions (derived here, checked in tests/test_rotations.py):

.. code:: text

    skew(v) y = v x y,                 axial(skew(v)) = v
    p = (e0, e) = (e0, e1, e2, e3),    |p| = 1  (Euler parameters, unit quaternion)
    A(p) = (e0^2 - e.e) I + 2 e e^T + 2 e0 skew(e)      rotation body -> global
    E(p) = [-e, skew(e) + e0 I],       G(p) = [-e, -skew(e) + e0 I]        (3 x 4 each)
    A(p) = E(p) G(p)^T,   omega = 2 E p',   omega_body = 2 G p' = A^T omega,   E p = G p = 0
    d(A u)/dp = 2 [e0 u + e x u,  (e.u) I + e u^T - u e^T - e0 skew(u)]      (3 x 4)

A(p) is a homogeneous quadratic in p, so off the unit sphere it is |p|^2 times a rotation; the
bodies use this exact polynomial, which makes every derivative an exact derivative.  E and G
carry no factor 2 (Nikravesh, Computer-Aided Analysis of Mechanical Systems, 1988, ch. 6);
Pappalardo and Guida (2018, eq. 6) write G_bar = 2 G.

Angles: Cardan (Tait-Bryan) Z-Y-X angles (psi, theta, phi) with A = Rz(psi) Ry(theta) Rx(phi)
and proper Euler Z-X-Z angles (phi, theta, psi) with A = Rz(phi) Rx(theta) Rz(psi), both
intrinsic (each rotation about the already rotated axis).
"""
from __future__ import annotations

import numpy as np

__all__ = ["skew", "tilde", "axial", "cross", "pad3", "rotation_2d", "rotation_x", "rotation_y", "rotation_z",
           "axis_angle_to_matrix", "matrix_to_axis_angle", "axis_angle_to_ep",
           "ep_to_matrix", "matrix_to_ep", "ep_normalize", "ep_E", "ep_G", "ep_EG", "ep_vector_jacobian",
           "cardan_zyx_to_matrix", "matrix_to_cardan_zyx", "cardan_zyx_kinematics",
           "euler_zxz_to_matrix", "matrix_to_euler_zxz", "as_rotation_matrix"]

_EYE = np.eye(3)


def skew(v) -> np.ndarray:
    """Skew-symmetric matrix of v: skew(v) @ y == cross(v, y); v of shape (..., 3) -> (..., 3, 3)."""
    v = np.asarray(v, dtype=float)
    if v.shape == (3,):
        a, b, c = v.tolist()
        return np.array([[0.0, -c, b], [c, 0.0, -a], [-b, a, 0.0]])
    if v.shape[-1:] != (3,):
        raise ValueError(f"skew: expected a vector with 3 components (last axis), got shape {v.shape}")
    W = np.zeros(v.shape + (3,))
    W[..., 0, 1], W[..., 0, 2], W[..., 1, 2] = -v[..., 2], v[..., 1], -v[..., 0]
    W[..., 1, 0], W[..., 2, 0], W[..., 2, 1] = v[..., 2], -v[..., 1], v[..., 0]
    return W


tilde = skew            # the papers' name (tilde(v) y = v x y)


def axial(W) -> np.ndarray:
    """Axial vector of the skew part of W (..., 3, 3): axial(skew(v)) == v."""
    W = np.asarray(W, dtype=float)
    return 0.5 * np.stack([W[..., 2, 1] - W[..., 1, 2], W[..., 0, 2] - W[..., 2, 0],
                           W[..., 1, 0] - W[..., 0, 1]], axis=-1)


def cross(a, b) -> np.ndarray:
    """a x b = skew(a) b over the last axis (3) of a and b, broadcast over the others: by components, as
    np.cross's axis handling costs more than the product at the sizes of a body's or an element's vectors, and
    without a cast, so that complex steps pass through."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def pad3(X) -> np.ndarray:
    """Coordinates (..., 1 | 2 | 3) padded with zeros to 3 components."""
    X = np.asarray(X)
    if X.shape[-1] == 3:
        return X
    return np.concatenate([X, np.zeros(X.shape[:-1] + (3 - X.shape[-1],), dtype=X.dtype)], axis=-1)


def rotation_x(a: float) -> np.ndarray:
    """Rotation by ``a`` [rad] about x."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rotation_y(a: float) -> np.ndarray:
    """Rotation by ``a`` [rad] about y."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rotation_z(a: float) -> np.ndarray:
    """Rotation by ``a`` [rad] about z."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rotation_2d(theta) -> np.ndarray:
    """Planar rotation [[cos, -sin], [sin, cos]]; theta scalar -> (2, 2), (...,) -> (..., 2, 2)."""
    c, s = np.cos(theta), np.sin(theta)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)


def _unit(axis, name="axis") -> np.ndarray:
    k = np.asarray(axis, dtype=float)
    n = np.linalg.norm(k) if k.shape == (3,) else 0.0
    if not n > 0 or not np.isfinite(n):
        raise ValueError(f"`{name}` must be a finite nonzero 3-vector, got {axis!r}")
    return k / n


def axis_angle_to_matrix(axis, angle) -> np.ndarray:
    """Rodrigues: A = I + sin(a) K + (1 - cos(a)) K^2, K = skew(unit axis); ``angle`` a number
    (A is (3, 3)) or an array of angles (A is (..., 3, 3))."""
    K = skew(_unit(axis))
    a = np.asarray(angle, dtype=float)[..., None, None]
    return _EYE + np.sin(a) * K + (1.0 - np.cos(a)) * (K @ K)


def matrix_to_axis_angle(A) -> tuple[np.ndarray, float]:
    """(unit axis, angle in [0, pi]) of a rotation matrix (via its Euler parameters)."""
    p = matrix_to_ep(A)
    s = np.linalg.norm(p[1:])
    if s < 1e-300:
        return np.array([1.0, 0.0, 0.0]), 0.0
    return p[1:] / s, float(2.0 * np.arctan2(s, p[0]))


def axis_angle_to_ep(axis, angle: float) -> np.ndarray:
    """Euler parameters p = (cos(a/2), sin(a/2) k)."""
    k = _unit(axis)
    return np.concatenate([[np.cos(0.5 * angle)], np.sin(0.5 * angle) * k])


def _real_or_complex(x) -> np.ndarray:
    """x as a float array, or as a complex one if it is complex (the complex steps of the Kane and
    Volterra formulations pass complex coordinates through these maps, which are polynomials in p)."""
    x = np.asarray(x)
    return x if np.iscomplexobj(x) else x.astype(float, copy=False)


def ep_to_matrix(p) -> np.ndarray:
    """A(p) = (e0^2 - e.e) I + 2 e e^T + 2 e0 skew(e) (a rotation for |p| = 1, else |p|^2 times one).

    p of shape (4,) or (..., 4) -> (3, 3) or (..., 3, 3).
    """
    p = _real_or_complex(p)
    if p.ndim > 1:
        E, G = ep_EG(p)
        return E @ G.swapaxes(-1, -2)                            # A = E G^T
    e0, e1, e2, e3 = p.tolist()
    d = e0 * e0 - e1 * e1 - e2 * e2 - e3 * e3
    return np.array([[d + 2.0 * e1 * e1, 2.0 * (e1 * e2 - e0 * e3), 2.0 * (e1 * e3 + e0 * e2)],
                     [2.0 * (e1 * e2 + e0 * e3), d + 2.0 * e2 * e2, 2.0 * (e2 * e3 - e0 * e1)],
                     [2.0 * (e1 * e3 - e0 * e2), 2.0 * (e2 * e3 + e0 * e1), d + 2.0 * e3 * e3]])


class LastRotation:
    """ep_to_matrix(p) kept for the last p given (compared by dtype and bytes, so a hit returns the
    same numbers).  The returned matrix is shared: read it, do not modify it."""

    def __init__(self):
        self._last = None

    def __call__(self, p) -> np.ndarray:
        if not isinstance(p, np.ndarray):
            return ep_to_matrix(p)
        key = (p.dtype.str, p.tobytes())
        last = self._last
        if last is not None and last[0] == key:
            return last[1]
        A = ep_to_matrix(p)
        self._last = (key, A)
        return A


def matrix_to_ep(A) -> np.ndarray:
    """Euler parameters of a rotation matrix (Shepperd's method: largest of the four squares).

    The result has e0 >= 0 (p and -p give the same rotation).
    """
    A = np.asarray(A, dtype=float)
    tr = np.trace(A)
    sq = np.array([1.0 + tr, 1.0 + 2.0 * A[0, 0] - tr, 1.0 + 2.0 * A[1, 1] - tr, 1.0 + 2.0 * A[2, 2] - tr])
    k = int(np.argmax(sq))
    p = np.empty(4)
    p[k] = 0.5 * np.sqrt(sq[k])
    f = 0.25 / p[k]
    if k == 0:
        p[1:] = f * np.array([A[2, 1] - A[1, 2], A[0, 2] - A[2, 0], A[1, 0] - A[0, 1]])
    elif k == 1:
        p[0], p[2], p[3] = f * (A[2, 1] - A[1, 2]), f * (A[0, 1] + A[1, 0]), f * (A[0, 2] + A[2, 0])
    elif k == 2:
        p[0], p[1], p[3] = f * (A[0, 2] - A[2, 0]), f * (A[0, 1] + A[1, 0]), f * (A[1, 2] + A[2, 1])
    else:
        p[0], p[1], p[2] = f * (A[1, 0] - A[0, 1]), f * (A[0, 2] + A[2, 0]), f * (A[1, 2] + A[2, 1])
    return -p if p[0] < 0 else p


def ep_normalize(p) -> np.ndarray:
    """p / |p|."""
    p = np.asarray(p, dtype=float)
    return p / np.linalg.norm(p)


def ep_E(p) -> np.ndarray:
    """E(p) = [-e, skew(e) + e0 I] (3 x 4, or (..., 3, 4)): global angular velocity omega = 2 E p'."""
    p = _real_or_complex(p)
    if p.ndim > 1:                                               # linear in p: p @ basis
        return _linear(p, _E_BASIS, (3, 4))
    e0, e1, e2, e3 = p.tolist()
    return np.array([[-e1, e0, -e3, e2], [-e2, e3, e0, -e1], [-e3, -e2, e1, e0]])


def ep_G(p) -> np.ndarray:
    """G(p) = [-e, -skew(e) + e0 I] (3 x 4, or (..., 3, 4)): body angular velocity omega_body = 2 G p'."""
    p = _real_or_complex(p)
    if p.ndim > 1:
        return _linear(p, _G_BASIS, (3, 4))
    e0, e1, e2, e3 = p.tolist()
    return np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])


def _linear(x, basis, shape: tuple) -> np.ndarray:
    """x (..., k) @ basis (k, m) as one (N, k) @ (k, m) product, reshaped to (...,) + shape: numpy
    multiplies a stack of more than two axes by a matrix as many small products (4 times slower
    for (4224, 2, 4) @ (4, 24))."""
    return (x.reshape(-1, x.shape[-1]) @ basis).reshape(x.shape[:-1] + shape)


def ep_EG(p) -> tuple[np.ndarray, np.ndarray]:
    """(E(p), G(p)) of stacked p (..., 4), each (..., 3, 4), from one product with their bases (the
    same numbers as `ep_E` and `ep_G`: every entry is one term +-e_i)."""
    EG = _linear(p, _EG_BASIS, (2, 3, 4))
    return EG[..., 0, :, :], EG[..., 1, :, :]


def ep_vector_jacobian(p, u) -> np.ndarray:
    """d(A(p) u)/dp = 2 [e0 u + e x u, (e.u) I + e u^T - u e^T - e0 skew(u)] (3 x 4), linear in p.

    p (4,) or (..., 4), u (3,) or (..., 3) -> (3, 4) or (..., 3, 4).
    """
    p, u = _real_or_complex(p), _real_or_complex(u)
    if p.ndim > 1 or u.ndim > 1:                                 # bilinear: (p u^T) @ basis
        pu = p[..., :, None] * u[..., None, :]
        return _linear(pu.reshape(pu.shape[:-2] + (12,)), _VJ_BASIS, (3, 4))
    e0, e1, e2, e3 = p.tolist()
    u1, u2, u3 = u.tolist()
    d = e1 * u1 + e2 * u2 + e3 * u3
    return np.array([
        [2.0 * (e0 * u1 + e2 * u3 - e3 * u2), 2.0 * d, 2.0 * (e1 * u2 - u1 * e2 + e0 * u3), 2.0 * (e1 * u3 - u1 * e3 - e0 * u2)],
        [2.0 * (e0 * u2 + e3 * u1 - e1 * u3), 2.0 * (e2 * u1 - u2 * e1 - e0 * u3), 2.0 * d, 2.0 * (e2 * u3 - u2 * e3 + e0 * u1)],
        [2.0 * (e0 * u3 + e1 * u2 - e2 * u1), 2.0 * (e3 * u1 - u3 * e1 + e0 * u2), 2.0 * (e3 * u2 - u3 * e2 - e0 * u1), 2.0 * d]])


_E_BASIS = np.stack([ep_E(e) for e in np.eye(4)]).reshape(4, 12)
_G_BASIS = np.stack([ep_G(e) for e in np.eye(4)]).reshape(4, 12)
_EG_BASIS = np.concatenate([_E_BASIS, _G_BASIS], axis=1)         # (4, 24)
_VJ_BASIS = np.stack([ep_vector_jacobian(e, f) for e in np.eye(4) for f in np.eye(3)]).reshape(12, 12)


def cardan_zyx_to_matrix(angles) -> np.ndarray:
    """A = Rz(psi) Ry(theta) Rx(phi) of Z-Y-X Cardan angles (psi, theta, phi)."""
    psi, th, ph = np.asarray(angles, dtype=float)
    return rotation_z(psi) @ rotation_y(th) @ rotation_x(ph)


def matrix_to_cardan_zyx(A) -> np.ndarray:
    """(psi, theta, phi) with theta in [-pi/2, pi/2]; at theta = +-pi/2 (gimbal lock) phi = 0."""
    A = np.asarray(A, dtype=float)
    th = np.arcsin(np.clip(-A[2, 0], -1.0, 1.0))
    if abs(A[2, 0]) > 1.0 - 1e-12:
        return np.array([np.arctan2(-A[0, 1], A[1, 1]), th, 0.0])
    return np.array([np.arctan2(A[1, 0], A[0, 0]), th, np.arctan2(A[2, 1], A[2, 2])])


def cardan_zyx_kinematics(ang, dang, ddang):
    """A, omega (body), eps = omega' (body) of Z-Y-X angles (psi, theta, phi) and their derivatives.

    omega_body = phi' e_x + theta' Rx^T e_y + psi' (Ry Rx)^T e_z, written out:
    (phi' - psi' s_th,  theta' c_ph + psi' c_th s_ph,  -theta' s_ph + psi' c_th c_ph).
    """
    psi, th, ph = ang
    dpsi, dth, dph = dang
    ddpsi, ddth, ddph = ddang
    cth, sth, cph, sph = np.cos(th), np.sin(th), np.cos(ph), np.sin(ph)
    omega = np.array([dph - dpsi * sth, dth * cph + dpsi * cth * sph, -dth * sph + dpsi * cth * cph])
    eps = np.array([
        ddph - ddpsi * sth - dpsi * dth * cth,
        ddth * cph - dth * dph * sph + ddpsi * cth * sph - dpsi * dth * sth * sph + dpsi * dph * cth * cph,
        -ddth * sph - dth * dph * cph + ddpsi * cth * cph - dpsi * dth * sth * cph - dpsi * dph * cth * sph,
    ])
    return cardan_zyx_to_matrix((psi, th, ph)), omega, eps


def euler_zxz_to_matrix(angles) -> np.ndarray:
    """A = Rz(phi) Rx(theta) Rz(psi) of proper Euler Z-X-Z angles (phi, theta, psi)."""
    ph, th, ps = np.asarray(angles, dtype=float)
    return rotation_z(ph) @ rotation_x(th) @ rotation_z(ps)


def matrix_to_euler_zxz(A) -> np.ndarray:
    """(phi, theta, psi) with theta in [0, pi]; at theta = 0 or pi (gimbal lock) psi = 0."""
    A = np.asarray(A, dtype=float)
    th = np.arccos(np.clip(A[2, 2], -1.0, 1.0))
    if abs(A[2, 2]) > 1.0 - 1e-12:
        return np.array([np.arctan2(A[1, 0], A[0, 0]), th, 0.0])
    return np.array([np.arctan2(A[0, 2], -A[1, 2]), th, np.arctan2(A[2, 0], A[2, 1])])


def as_rotation_matrix(orientation, name: str = "orientation") -> np.ndarray:
    """A rotation matrix from a 3 x 3 rotation matrix or 4 Euler parameters (normalised); None: I."""
    if orientation is None:
        return _EYE.copy()
    o = np.asarray(orientation, dtype=float)
    if o.shape == (4,):
        n = np.linalg.norm(o)
        if not (np.isfinite(n) and n > 0):
            raise ValueError(f"`{name}`: Euler parameters must be a finite nonzero 4-vector, got {orientation!r}")
        return ep_to_matrix(o / n)
    if o.shape != (3, 3) or not np.all(np.isfinite(o)):
        raise ValueError(f"`{name}` must be a 3 x 3 rotation matrix or 4 Euler parameters, got shape {o.shape}")
    err = np.max(np.abs(o.T @ o - _EYE))
    if err > 1e-9 or np.linalg.det(o) < 0:
        raise ValueError(f"`{name}` must be a proper rotation matrix (A^T A = I, det A = +1); "
                         f"got |A^T A - I| = {err:.3g}, det A = {np.linalg.det(o):.6g}")
    return o.copy()
