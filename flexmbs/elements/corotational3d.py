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
internal force.  Internal force f = dU/dp and tangent K = d^2U/dp^2 are computed exactly by
second-order forward differentiation (`_jet`), vectorised over the elements, so K is the exact
Hessian in these coordinates (rotation vectors: Newton corrections add to psi).  In the
reference configuration K equals the linear `BeamEB3D` stiffness.  The construction of the
element frame from the chord and the nodal triads follows Crisfield [1]_ (vol. 2, ch. 17).

References
----------
.. [1] M. A. Crisfield, Non-linear Finite Element Analysis of Solids and Structures, vol. 2,
       Wiley (1997), ch. 17.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._jet import Jet, cross, dot, sqrt, variables

__all__ = ["Corotational3D", "corotational_3d", "reference_frames", "rotation_vector_matrix", "rotary_kinetic_energy"]

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


def rotation_vector_matrix(psi) -> np.ndarray:
    """R = exp(psi~) for rotation vectors psi (..., 3) -> (..., 3, 3)."""
    psi = np.asarray(psi, dtype=float)
    A, _, _, B, _, _ = _rodrigues_coefficients(np.einsum("...i,...i->...", psi, psi))
    W = np.zeros(psi.shape + (3,))
    W[..., 0, 1], W[..., 0, 2], W[..., 1, 2] = -psi[..., 2], psi[..., 1], -psi[..., 0]
    W = W - np.swapaxes(W, -1, -2)
    return np.eye(3) + A[..., None, None] * W + B[..., None, None] * (W @ W)


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
    n = len(X0)
    p = np.concatenate([x[:, 0], psi[:, 0], x[:, 1], psi[:, 1]], axis=1)
    v = variables(p, hessian=tangent)
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


def _c_coefficient(s):
    """C(s) = (1 - A(s)) / s = (r - sin r) / r^3 and its first two s-derivatives."""
    s = np.asarray(s, dtype=float)
    A, dA, d2A, _, _, _ = _rodrigues_coefficients(s)
    small = s < _SERIES_BELOW
    ss = np.where(small, 1.0, s)
    C = (1.0 - A) / ss
    dC = -(dA + C) / ss
    d2C = -(d2A + 2.0 * dC) / ss
    series = (1 / 6 - s / 120 + s ** 2 / 5040 - s ** 3 / 362880, -1 / 120 + s / 2520 - s ** 2 / 120960,
              1 / 2520 - s / 60480)
    return tuple(np.where(small, a, b) for a, b in zip(series, (C, dC, d2C)))


def rotary_kinetic_energy(psi, psi_dot, J0):
    """Jet of T = 1/2 Omega^T J0 Omega in the variables (psi, psi_dot) (n, 6), one node per row.

    Omega = R^T omega = T(psi)^T psi' = psi' - B(s) psi x psi' + C(s) psi x (psi x psi') is the
    angular velocity of the section in its reference axes (omega = T(psi) psi' the global one),
    J0 (n, 3, 3) the rotary inertia in the reference axes.  The Hessian's psi'-psi' block is the
    mass matrix, and -H[psi', psi] psi' + dT/dpsi the quadratic-velocity vector.
    """
    v = variables(np.concatenate([psi, psi_dot], axis=1))
    p, pd = v[:3], v[3:]
    s = dot(p, p)
    _, _, _, B0, B1, B2 = _rodrigues_coefficients(s.v)
    B = s.apply(B0, B1, B2)
    C = s.apply(*_c_coefficient(s.v))
    a = cross(p, pd)
    b = cross(p, a)
    Om = [pd[k] - B * a[k] + C * b[k] for k in range(3)]
    T = 0.0
    for i in range(3):
        for j in range(3):
            T = T + 0.5 * J0[:, i, j] * (Om[i] * Om[j])
    return T
