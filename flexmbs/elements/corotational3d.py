"""Spatial corotational Euler-Bernoulli beam element (statics): large rotations, small strains.

Element coordinates p = (x_1, psi_1, x_2, psi_2) (12): global nodal positions and the nodal
rotation vectors psi_i (total rotation from the reference configuration, R_i = exp(psi_i~),
Rodrigues: R a = a + A(s) psi x a + B(s) psi x (psi x a), s = psi . psi,
A = sin(sqrt s)/sqrt s, B = (1 - cos(sqrt s))/s, by series for s < 1e-3).

Frames.  E_0 = [e1_0, e2_0, e3_0]: the element's reference frame (e1_0 along the chord, e2_0,
e3_0 the principal axes of the section).  Each node carries it rotated, t_ij = R_i e_j0.  The
element frame follows the chord and the mean of the nodes' second axes:

.. code:: text

    e1 = (x_2 - x_1) / L,   m = (t_12 + t_22) / 2,   e3 = e1 x m / |e1 x m|,   e2 = e3 x e1

Local (deformational) quantities: u_l = L - L_0 and the nodal rotations relative to the element
frame, measured by the skew part of E^T T_i (equal to the rotation vector to first order, and
small by assumption):

.. code:: text

    theta_ix = (e3 . t_i2 - e2 . t_i3) / 2,  theta_iy = (e1 . t_i3 - e3 . t_i1) / 2,
    theta_iz = (e2 . t_i1 - e1 . t_i2) / 2

Strain energy of the linear element in the element frame (axial, torsion, bending in the
e1-e2 plane with EI_z, in the e1-e3 plane with EI_y):

.. code:: text

    U = EA u_l^2 / (2 L_0) + GJ (theta_1x - theta_2x)^2 / (2 L_0)
        + (EI_z / L_0) (2 theta_1z^2 + 2 theta_1z theta_2z + 2 theta_2z^2)
        + (EI_y / L_0) (2 theta_1y^2 + 2 theta_1y theta_2y + 2 theta_2y^2)

A rigid motion rotates the chord and every t_ij alike, so E^T T_i and U are unchanged: no
internal force.  The internal force f = dU/dp is written out by the chain rule (first derivatives
of the element frame and the nodal triads, `_force_closed_form`), vectorised over the elements; the
tangent K = d^2U/dp^2 is computed exactly by second-order forward differentiation (`_jet`), also
vectorised over the elements, so K is the exact Hessian in these coordinates (rotation vectors:
Newton corrections add to psi) and its gradient part equals f to round-off.  In the
reference configuration K equals the linear `BeamEB3D` stiffness.  The construction of the
element frame from the chord and the nodal triads follows Crisfield [1]_ (vol. 2, ch. 17).

References
----------
.. [1] M. A. Crisfield, Non-linear Finite Element Analysis of Solids and Structures, vol. 2,
       Wiley (1997), ch. 17.
.. [2] A. Cardona, M. Geradin, A beam finite element non-linear theory with finite rotations,
       Int. J. Numer. Meth. Engng 26 (1988) 2403-2438.
.. [3] A. Ibrahimbegovic, On the choice of finite rotation parameters, Comput. Methods Appl.
       Mech. Engrg. 149 (1997) 49-71.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..rotations import cross as cross_arrays, skew   # the arrays' (_jet.cross: the jets')
from ._jet import Jet, cross, dot, sqrt, variables

__all__ = ["Corotational3D", "RotaryInertia", "corotational_3d", "reference_frames", "rotary_inertia",
           "rotary_inertia_tangent", "rotation_and_tangent", "rotation_tangent_and_rate", "rotation_vector_matrix", "tangent_operator", "tangent_operator_rate"]

_SERIES_BELOW = 1e-3


def _rodrigues_coefficients(s):
    """A(s) = sin(r)/r, B(s) = (1 - cos r)/s with r = sqrt s, and their first two s-derivatives."""
    s = np.asarray(s, dtype=float)
    small = s < _SERIES_BELOW
    ss = np.where(small, 1.0, s)
    r = np.sqrt(ss)
    A = np.sin(r) / r
    B = (1.0 - np.cos(r)) / ss
    dA = (np.cos(r) - A) / (2.0 * ss)
    dB = (0.5 * A - B) / ss
    d2A = (-0.5 * A - 3.0 * dA) / (2.0 * ss)
    d2B = (0.5 * dA - 2.0 * dB) / ss
    series = (1 - s / 6 + s ** 2 / 120 - s ** 3 / 5040, -1 / 6 + s / 60 - s ** 2 / 1680 + s ** 3 / 90720,
              1 / 60 - s / 840 + s ** 2 / 30240,
              0.5 - s / 24 + s ** 2 / 720 - s ** 3 / 40320, -1 / 24 + s / 360 - s ** 2 / 13440 + s ** 3 / 907200,
              1 / 360 - s / 6720 + s ** 2 / 302400)
    closed = (A, dA, d2A, B, dB, d2B)
    return tuple(np.where(small, a, b) for a, b in zip(series, closed))


def _closed_form_coefficients(s):
    """A, B, C = sin r / r, (1 - cos r) / s, (r - sin r) / r^3 (r = sqrt s) and the s-derivatives B', C'
    in one pass (series below s = 1e-3, as `_rodrigues_coefficients`), for the closed forms.  Complex s
    (the complex step of `rotary_inertia_tangent`) takes the branch of its real part; every expression
    here is analytic there, so the imaginary parts carry the derivatives."""
    s = np.asarray(s)
    if not np.iscomplexobj(s):
        s = s.astype(float, copy=False)
    small = s.real < _SERIES_BELOW
    ss = np.where(small, 1.0, s)
    r = np.sqrt(ss)
    sin, cos = np.sin(r), np.cos(r)
    A = sin / r
    B = (1.0 - cos) / ss
    C = (1.0 - A) / ss
    dA = (cos - A) / (2.0 * ss)
    closed = (A, B, C, (0.5 * A - B) / ss, -(dA + C) / ss)
    if not small.any():
        return closed
    series = (1 - s / 6 + s ** 2 / 120 - s ** 3 / 5040, 0.5 - s / 24 + s ** 2 / 720 - s ** 3 / 40320,
              1 / 6 - s / 120 + s ** 2 / 5040 - s ** 3 / 362880, -1 / 24 + s / 360 - s ** 2 / 13440 + s ** 3 / 907200,
              -1 / 120 + s / 2520 - s ** 2 / 120960)
    return tuple(np.where(small, a, b) for a, b in zip(series, closed))


def _coefficients_of(psi):
    """(s, A, B, C, B', C') of rotation vectors psi (..., 3), s = psi . psi (`_closed_form_coefficients`)."""
    s = np.einsum("...i,...i->...", psi, psi)
    return (s,) + _closed_form_coefficients(s)


def _rotation_and_tangent(psi, k):
    s, A, B, C = (c[..., None, None] for c in k[:4])
    W = skew(psi)
    W2 = psi[..., :, None] * psi[..., None, :] - s * np.eye(3)
    return np.eye(3) + A * W + B * W2, np.eye(3) + B * W + C * W2


def rotation_and_tangent(psi) -> tuple[np.ndarray, np.ndarray]:
    """(R(psi), T(psi)) (..., 3, 3) from one evaluation of the coefficients: with W = psi~,
    W^2 = psi psi^T - s I, R = I + A W + B W^2 and T = I + B W + C W^2 (`tangent_operator`)."""
    psi = np.asarray(psi, dtype=float)
    return _rotation_and_tangent(psi, _coefficients_of(psi))


def rotation_vector_matrix(psi) -> np.ndarray:
    """R = exp(psi~) for rotation vectors psi (..., 3) -> (..., 3, 3)."""
    return rotation_and_tangent(psi)[0]


def _rotate(psi, a):
    """R(psi) a with psi three Jets and a a constant (n, 3) array."""
    s = dot(psi, psi)
    A0, A1, A2, B0, B1, B2 = _rodrigues_coefficients(s.v)
    A, B = s.apply(A0, A1, A2), s.apply(B0, B1, B2)
    a = [a[:, 0], a[:, 1], a[:, 2]]
    pa = cross(psi, a)
    ppa = cross(psi, pa)
    return [a[k] + A * pa[k] + B * ppa[k] for k in range(3)]


def reference_frames(X0, orientation=None) -> np.ndarray:
    """E_0 (n_el, 3, 3), columns e1_0, e2_0, e3_0, by the rule of `BeamEB3D`: e2_0 = the part of
    ``orientation`` normal to e1_0, normalised (default: e2_0 = z x e1_0 / |z x e1_0|, or x x e1_0 for a
    beam along z), e3_0 = e1_0 x e2_0."""
    X0 = np.asarray(X0, dtype=float)
    d = X0[:, 1] - X0[:, 0]
    e1 = d / np.linalg.norm(d, axis=1)[:, None]
    if orientation is None:
        ref = np.broadcast_to(np.array([0.0, 0.0, 1.0]), e1.shape).copy()
        along_z = np.linalg.norm(np.cross(ref, e1), axis=1) < 1e-6
        ref[along_z] = (1.0, 0.0, 0.0)
        e2 = np.cross(ref, e1)
    else:
        o = np.broadcast_to(np.asarray(orientation, dtype=float), e1.shape)
        e2 = o - np.einsum("ei,ei->e", o, e1)[:, None] * e1
    norm = np.linalg.norm(e2, axis=1)
    if np.any(norm < 1e-6):
        raise ValueError("reference_frames: `orientation` is parallel to elements "
                         f"{np.flatnonzero(norm < 1e-6).tolist()}; give a vector across the beam")
    e2 = e2 / norm[:, None]
    return np.stack([e1, e2, np.cross(e1, e2)], axis=2)


class Corotational3D(NamedTuple):
    """Element quantities of `corotational_3d` (n_el elements)."""

    energy: np.ndarray        # (n_el,) strain energy U [J]
    force: np.ndarray         # (n_el, 12) internal force dU/dp
    stiffness: np.ndarray     # (n_el, 12, 12) tangent d^2U/dp^2
    local: np.ndarray         # (n_el, 7) u_l, theta_1 (x, y, z), theta_2 (x, y, z)


def corotational_3d(X0, E0, x, psi, EA, GJ, EIy, EIz, *, tangent: bool = True) -> Corotational3D:
    """Strain energy, internal forces and tangent stiffness of spatial corotational beams.

    Parameters
    ----------
    X0 : array (n_el, 2, 3)
        Reference nodal positions [m].
    E0 : array (n_el, 3, 3)
        Reference element frames (columns e1_0, e2_0, e3_0), e.g. `reference_frames`.
    x, psi : arrays (n_el, 2, 3)
        Current nodal positions [m] and rotation vectors [rad].
    EA, GJ, EIy, EIz : float or array (n_el,)
        Axial [N], torsional [N m^2] and bending [N m^2] stiffness.
    tangent : bool
        Also compute the tangent (else ``stiffness`` is None, about ten times cheaper).
    """
    X0, E0 = np.asarray(X0, dtype=float), np.asarray(E0, dtype=float)
    x, psi = np.asarray(x, dtype=float), np.asarray(psi, dtype=float)
    if not tangent:
        return _force_closed_form(X0, E0, x, psi, EA, GJ, EIy, EIz)
    n = len(X0)
    p = np.concatenate([x[:, 0], psi[:, 0], x[:, 1], psi[:, 1]], axis=1)
    v = variables(p)
    x1, p1, x2, p2 = v[0:3], v[3:6], v[6:9], v[9:12]
    L0 = np.linalg.norm(X0[:, 1] - X0[:, 0], axis=1)
    d = [x2[k] - x1[k] for k in range(3)]
    L = sqrt(dot(d, d))
    e1 = [dk / L for dk in d]
    t1 = [_rotate(p1, E0[:, :, j]) for j in range(3)]
    t2 = [_rotate(p2, E0[:, :, j]) for j in range(3)]
    m = [0.5 * (t1[1][k] + t2[1][k]) for k in range(3)]
    c = cross(e1, m)
    e3 = [ck / sqrt(dot(c, c)) for ck in c]
    e2 = cross(e3, e1)

    def local(t):
        return (0.5 * (dot(e3, t[1]) - dot(e2, t[2])), 0.5 * (dot(e1, t[2]) - dot(e3, t[0])),
                0.5 * (dot(e2, t[0]) - dot(e1, t[1])))

    (a_x, a_y, a_z), (b_x, b_y, b_z) = local(t1), local(t2)
    ul = L - L0
    const = [np.broadcast_to(np.asarray(k, dtype=float), (n,)) / L0 for k in (EA, GJ, EIy, EIz)]
    ka, kt, ky, kz = const
    tw = a_x - b_x
    U = (0.5 * ka * (ul * ul) + 0.5 * kt * (tw * tw)
         + kz * (2.0 * (a_z * a_z) + 2.0 * (a_z * b_z) + 2.0 * (b_z * b_z))
         + ky * (2.0 * (a_y * a_y) + 2.0 * (a_y * b_y) + 2.0 * (b_y * b_y)))
    loc = np.stack([q.v for q in (ul, a_x, a_y, a_z, b_x, b_y, b_z)], axis=1)
    return Corotational3D(U.v, U.g, U.H, loc)


def _axial_of_skew(S):
    """theta = axial vector of (S - S^T)/2 over the 3x3 axes (1, 2) of S (n, 3, 3, ...):
    ((S_32 - S_23)/2, (S_13 - S_31)/2, (S_21 - S_12)/2)."""
    return 0.5 * np.stack([S[:, 2, 1] - S[:, 1, 2], S[:, 0, 2] - S[:, 2, 0], S[:, 1, 0] - S[:, 0, 1]], axis=1)


def _force_closed_form(X0, E0, x, psi, EA, GJ, EIy, EIz) -> Corotational3D:
    """U, f = dU/dp and the local quantities of `corotational_3d` (tangent=False) by the chain rule in
    closed form, all elements at once (arrays (n_el, 3, 12) of first derivatives, p = (x_1, psi_1,
    x_2, psi_2)):

    .. code:: text

        d e1 = (I - e1 e1^T) (d x_2 - d x_1) / L,        d t_ij = -t_ij~ T(psi_i) d psi_i
        d m = (d t_12 + d t_22) / 2,   c = e1 x m,     d c = -m~ d e1 + e1~ d m
        d e3 = (I - e3 e3^T) d c / |c|,                d e2 = -e1~ d e3 + e3~ d e1
        S_i = E^T T_i (S_kj = e_k . t_ij),  theta_i = axial((S_i - S_i^T) / 2),
        d S_kj = t_ij . d e_k + e_k . d t_ij

    then f = sum over the local quantities of dU/d(local) d(local)/dp.  Equal to the jets' gradient
    to round-off (tests/test_corotational3d_closed.py); the jets stay for the Hessian.
    """
    n = len(X0)
    L0 = np.linalg.norm(X0[:, 1] - X0[:, 0], axis=1)
    d = x[:, 1] - x[:, 0]
    L = np.linalg.norm(d, axis=1)
    e1 = d / L[:, None]
    R, Tn = rotation_and_tangent(psi)                         # (n, 2, 3, 3) each
    t = np.einsum("nicd,nde->niec", R, E0)                    # t[:, i, j] = R_i e_j0, (n, 2, 3 j, 3 comp)
    I3 = np.eye(3)
    De1 = np.zeros((n, 3, 12))
    P1 = (I3 - e1[:, :, None] * e1[:, None, :]) / L[:, None, None]
    De1[:, :, 0:3], De1[:, :, 6:9] = -P1, P1
    Dt = np.zeros((n, 2, 3, 3, 12))                           # d t_ij / dp
    Dt[:, 0, :, :, 3:6] = -skew(t[:, 0]) @ Tn[:, 0, None]
    Dt[:, 1, :, :, 9:12] = -skew(t[:, 1]) @ Tn[:, 1, None]
    m = 0.5 * (t[:, 0, 1] + t[:, 1, 1])
    Dm = 0.5 * (Dt[:, 0, 1] + Dt[:, 1, 1])
    c = cross_arrays(e1, m)
    cn = np.linalg.norm(c, axis=1)
    e3 = c / cn[:, None]
    Dc = -skew(m) @ De1 + skew(e1) @ Dm
    De3 = (I3 - e3[:, :, None] * e3[:, None, :]) @ Dc / cn[:, None, None]
    e2 = cross_arrays(e3, e1)
    De2 = -skew(e1) @ De3 + skew(e3) @ De1
    E = np.stack([e1, e2, e3], axis=1)                        # (n, 3 k, 3 comp)
    DE = np.stack([De1, De2, De3], axis=1)                    # (n, 3 k, 3 comp, 12)
    S = np.einsum("nkc,nijc->nikj", E, t)                     # (n, 2, 3 k, 3 j)
    DS = np.einsum("nijc,nkcv->nikjv", t, DE) + np.einsum("nkc,nijcv->nikjv", E, Dt)
    theta = np.stack([_axial_of_skew(S[:, i]) for i in range(2)], axis=1)       # (n, 2, 3)
    Dtheta = np.stack([_axial_of_skew(DS[:, i]) for i in range(2)], axis=1)     # (n, 2, 3, 12)
    ka, kt, ky, kz = (np.broadcast_to(np.asarray(k, dtype=float), (n,)) / L0 for k in (EA, GJ, EIy, EIz))
    ul = L - L0
    (ax, ay, az), (bx, by, bz) = theta[:, 0].T, theta[:, 1].T
    tw = ax - bx
    U = (0.5 * ka * ul * ul + 0.5 * kt * tw * tw + 2.0 * kz * (az * az + az * bz + bz * bz)
         + 2.0 * ky * (ay * ay + ay * by + by * by))
    dU = np.stack([np.stack([kt * tw, ky * (4.0 * ay + 2.0 * by), kz * (4.0 * az + 2.0 * bz)], axis=1),
                   np.stack([-kt * tw, ky * (2.0 * ay + 4.0 * by), kz * (2.0 * az + 4.0 * bz)], axis=1)], axis=1)
    f = np.einsum("nia,niav->nv", dU, Dtheta)
    f[:, 0:3] -= (ka * ul)[:, None] * e1
    f[:, 6:9] += (ka * ul)[:, None] * e1
    loc = np.concatenate([ul[:, None], theta.reshape(n, 6)], axis=1)
    return Corotational3D(U, f, None, loc)


def tangent_operator(psi) -> np.ndarray:
    """T(psi) = I + B(s) psi~ + C(s) psi~^2 (s = psi . psi), the map of the rotation vector's rate to the
    global angular velocity, omega = T(psi) psi' (Cardona and Geradin 1988 [2]_, Ibrahimbegovic 1997
    [3]_); T(psi)^T psi' = R^T omega = Omega, the angular velocity in the reference axes.
    psi (3,) -> (3, 3), (..., 3) -> (..., 3, 3)."""
    return rotation_and_tangent(psi)[1]


def tangent_operator_rate(psi, psi_dot, sign: float = 1.0) -> np.ndarray:
    """(d/dt T(psi)^(T)) psi' at fixed psi', for sign = +1 (T) or -1 (T^T), rows (n, 3).

    T(psi) a = a + sign B(s) psi x a + C(s) psi x (psi x a); with s' = 2 psi . psi' and a = psi'
    (psi' x psi' = 0):

    .. code:: text

        (d/dt T) psi' = 2 s_d (sign B'(s) psi x psi' + C'(s) psi x (psi x psi')) + C(s) psi' x (psi x psi')

    with s_d = psi . psi' and B', C' the s-derivatives.  sign = +1: omega' = T psi'' + this (the
    global angular acceleration); sign = -1: Omega' = T^T psi'' + this.
    """
    psi, pd = np.asarray(psi, dtype=float), np.asarray(psi_dot, dtype=float)
    return _tangent_operator_rate(psi, pd, _coefficients_of(psi), sign)


def rotation_tangent_and_rate(psi, psi_dot, sign: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(R(psi), T(psi), (d/dt T(psi)^(T)) psi') of `rotation_and_tangent` and `tangent_operator_rate` from one
    evaluation of the coefficients A, B, C, B', C' of s = psi . psi (what a node's angular acceleration
    omega' = T psi'' + (d/dt T) psi' and a turned vector R u need together)."""
    psi, pd = np.asarray(psi, dtype=float), np.asarray(psi_dot, dtype=float)
    k = _coefficients_of(psi)
    return (*_rotation_and_tangent(psi, k), _tangent_operator_rate(psi, pd, k, sign))


def _tangent_operator_rate(psi, pd, k, sign):
    sd = np.einsum("...i,...i->...", psi, pd)[..., None]
    C, dB, dC = (c[..., None] for c in (k[3], k[4], k[5]))
    a = cross_arrays(psi, pd)
    return 2.0 * sd * (sign * dB * a + dC * cross_arrays(psi, a)) + C * cross_arrays(pd, a)


class RotaryInertia(NamedTuple):
    """Rotary-inertia terms of nodal sections (n nodes), `rotary_inertia`."""

    energy: np.ndarray        # (n,) 1/2 Omega . J0 Omega [J]
    mass: np.ndarray          # (n, 3, 3) M_psi = T J0 T^T
    quadratic: np.ndarray     # (n, 3) Q_v = -T (J0 Omega'_v + Omega x J0 Omega)


def rotary_inertia(psi, psi_dot, J0) -> RotaryInertia:
    """Kinetic energy, mass matrix and quadratic-velocity vector of sections with rotation vectors psi
    (n, 3), rates psi' (n, 3) and rotary inertia J0 (n, 3, 3) in the reference axes, in closed form.

    Omega = T(psi)^T psi' (`tangent_operator`) is the section's angular velocity in its reference axes,
    so T = 1/2 Omega^T J0 Omega = 1/2 psi'^T M_psi psi' with M_psi = T J0 T^T.  Lagrange's equations in
    psi are T(psi) times Euler's, T (J0 Omega' + Omega x J0 Omega) = Q_psi, with
    Omega' = T^T psi'' + (d/dt T^T) psi' (`tangent_operator_rate`, sign -1); so

    .. code:: text

        M_psi psi'' = Q_psi + Q_v,   Q_v = -M_psi' psi' + dT/dpsi = -T(psi) (J0 (d/dt T^T) psi' + Omega x J0 Omega)

    (equal to the second derivatives of T by forward-mode jets that they replaced, recorded at commit
    61e9540: tests/test_corotational3d_closed.py).
    """
    psi, pd, J0 = np.asarray(psi, dtype=float), np.asarray(psi_dot, dtype=float), np.asarray(J0, dtype=float)
    if psi.ndim != 2 or psi.shape[1] != 3 or pd.shape != psi.shape or J0.shape != psi.shape + (3,):
        raise ValueError(f"rotary_inertia: expected psi (n, 3), psi_dot (n, 3) and J0 (n, 3, 3), got shapes "
                         f"{psi.shape}, {pd.shape} and {J0.shape}")
    k = _coefficients_of(psi)
    T = _rotation_and_tangent(psi, k)[1]
    Om = np.einsum("nji,nj->ni", T, pd)                      # T^T psi'
    h = np.einsum("nij,nj->ni", J0, Om)
    Jd = np.einsum("nij,nj->ni", J0, _tangent_operator_rate(psi, pd, k, -1.0))
    M = T @ J0 @ np.swapaxes(T, 1, 2)
    Qv = -np.einsum("nij,nj->ni", T, Jd + cross_arrays(Om, h))
    return RotaryInertia(0.5 * np.einsum("ni,ni->n", Om, h), M, Qv)


def _times_tangent(psi, k, b, sign):
    """T(psi) b (sign +1) or T(psi)^T b (sign -1) = b + sign B psi x b + C psi x (psi x b), rows (..., 3),
    by cross products only (so complex psi works: `rotary_inertia_tangent`)."""
    B, C = k[2][..., None], k[3][..., None]
    a = cross_arrays(psi, b)
    return b + sign * B * a + C * cross_arrays(psi, a)


def _rotary_residual(psi, pd, acc, J0):
    """M_psi psi'' - Q_v per node (..., n, 3) at psi'' = acc, with no matrices:

    .. code:: text

        M_psi acc - Q_v = T (J0 T^T acc + J0 (d/dt T^T) psi' + Omega x J0 Omega),   Omega = T^T psi'

    (`rotary_inertia`); psi, pd may be complex (`rotary_inertia_tangent`)."""
    k = _coefficients_of(psi)
    Om = _times_tangent(psi, k, pd, -1.0)
    rate = _tangent_operator_rate(psi, pd, k, -1.0)
    inner = np.einsum("nij,...nj->...ni", J0, _times_tangent(psi, k, acc, -1.0) + rate) \
        + cross_arrays(Om, np.einsum("nij,...nj->...ni", J0, Om))
    return _times_tangent(psi, k, inner, 1.0)


_COMPLEX_STEP = 1e-30


def rotary_inertia_tangent(psi, psi_dot, psi_ddot, J0) -> tuple[np.ndarray, np.ndarray]:
    """(K_psi, C_psi) (n, 3, 3): the rotary terms' part of an implicit step's tangent, per node,

    .. code:: text

        K_psi = d(M_psi(psi) psi'' - Q_v(psi, psi'))/dpsi   at fixed psi', psi''
        C_psi = -dQ_v/dpsi'                                  at fixed psi

    with M_psi psi'' - Q_v = T (J0 T^T psi'' + J0 (d/dt T^T) psi' + Omega x J0 Omega) (`rotary_inertia`,
    `_rotary_residual`), T = I + B psi~ + C psi~^2 (`tangent_operator`).  Differentiated exactly by the
    complex step, r'(x) e_j = Im r(x + i h e_j) / h with h = 1e-30: the imaginary part is the first-order
    jet of the same closed forms (every operation in them is analytic, the coefficients B(s), C(s),
    B'(s), C'(s) included), with no difference of nearby values, so it is exact to round-off whatever h.
    The six directions (three of psi, three of psi') are one batched evaluation over all nodes: a node's
    terms depend on its own psi, psi' only.
    """
    psi, pd, acc, J0 = (np.asarray(x, dtype=float) for x in (psi, psi_dot, psi_ddot, J0))
    if psi.ndim != 2 or psi.shape[1] != 3 or pd.shape != psi.shape or acc.shape != psi.shape \
            or J0.shape != psi.shape + (3,):
        raise ValueError(f"rotary_inertia_tangent: expected psi, psi_dot, psi_ddot (n, 3) and J0 (n, 3, 3), got "
                         f"shapes {psi.shape}, {pd.shape}, {acc.shape} and {J0.shape}")
    step = 1j * _COMPLEX_STEP * np.eye(6)[:, None, :]               # (direction, 1, psi | psi')
    r = _rotary_residual(psi + step[..., :3], pd + step[..., 3:], acc, J0).imag / _COMPLEX_STEP
    D = np.moveaxis(r, 0, -1)                                          # (n, 3 rows, 6 directions)
    return D[..., :3], D[..., 3:]
