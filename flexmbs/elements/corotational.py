"""Planar corotational Euler-Bernoulli beam element: large rotations, small strains.

Each element carries a frame that follows its chord; in that frame the deformation is small
and the linear Euler-Bernoulli element applies.  Derived here after the formulation of
Crisfield [1]_ (vol. 1, sec. 7.3) and Felippa and Haugen [2]_.

Element degrees of freedom p = (x_1, y_1, theta_1, x_2, y_2, theta_2): global nodal positions
and the rotations of the nodal cross-sections from the reference configuration.  With the
reference chord X_2 - X_1 = L_0 (cos beta_0, sin beta_0) and the current chord

.. code:: text

    d = x_2 - x_1 = L (c, s),   c = cos beta, s = sin beta

the local (deformational) displacements are

.. code:: text

    u_l = L - L_0,    theta_il = theta_i - (beta - beta_0)   (i = 1, 2; wrapped to (-pi, pi])

and the strain energy is that of the linear element in the chord frame (Hermite cubic
bending, linear axial displacement):

.. code:: text

    U = EA u_l^2 / (2 L_0) + (EI / L_0) (2 theta_1l^2 + 2 theta_1l theta_2l + 2 theta_2l^2)
    f_l = (N, M_1, M_2) = K_l (u_l, theta_1l, theta_2l),
    K_l = diag(EA / L_0, (2 EI / L_0) [[2, 1], [1, 2]])

Variations, with r = (-c, -s, 0, c, s, 0) and z = (s, -c, 0, -s, c, 0):

.. code:: text

    du_l = r . dp,   d beta = z . dp / L,   dtheta_il = dtheta_i - z . dp / L
    B = [r;  e_3 - z / L;  e_6 - z / L]                     (3 x 6)
    f = dU/dp = B^T f_l                                     (internal force)
    dr = z d beta,   dz = -r d beta,   d(1 / L) = -r . dp / L^2
      => d(z / L) = -(r z^T + z r^T) dp / L^2
    K = df/dp = B^T K_l B + N z z^T / L + (M_1 + M_2) (r z^T + z r^T) / L^2

K is the exact second derivative of U (symmetric); tests/test_corotational.py checks it
against central differences of f.  In the reference configuration (u_l = 0, theta_il = 0) the
geometric terms vanish and K equals the linear Euler-Bernoulli stiffness (`BeamEB2D`).

References
----------
.. [1] M. A. Crisfield, Non-linear Finite Element Analysis of Solids and Structures, vol. 1,
       Wiley (1991), sec. 7.3 (the simple corotational beam).
.. [2] C. A. Felippa, B. Haugen, A unified formulation of small-strain corotational finite
       elements: I. Theory, Comput. Methods Appl. Mech. Eng. 194 (2005) 2285-2335,
       doi:10.1016/j.cma.2004.07.035.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Corotational2D", "corotational_2d", "wrap_angle"]


def wrap_angle(a):
    """a wrapped to (-pi, pi] (elementwise)."""
    return a - 2.0 * np.pi * np.ceil((a - np.pi) / (2.0 * np.pi))


class Corotational2D(NamedTuple):
    """Element quantities of `corotational_2d` (n_el elements)."""

    energy: np.ndarray        # (n_el,) strain energy U [J]
    force: np.ndarray         # (n_el, 6) internal force f = dU/dp
    stiffness: np.ndarray     # (n_el, 6, 6) tangent K = d^2U/dp^2 (None if not asked)
    local: np.ndarray         # (n_el, 3) (u_l, theta_1l, theta_2l)
    stress: np.ndarray        # (n_el, 3) (N, M_1, M_2): axial force [N], end moments [N m]
    length: np.ndarray        # (n_el,) current chord length L
    angle: np.ndarray         # (n_el,) current chord angle beta


def corotational_2d(X0, x, theta, EA, EI, *, tangent: bool = True) -> Corotational2D:
    """Strain energy, internal forces and tangent stiffness of planar corotational beams.

    Parameters
    ----------
    X0 : array (n_el, 2, 2)
        Reference nodal positions of each element [m].
    x : array (n_el, 2, 2)
        Current nodal positions [m].
    theta : array (n_el, 2)
        Nodal cross-section rotations from the reference configuration [rad].
    EA, EI : float or array (n_el,)
        Axial [N] and bending [N m^2] stiffness.
    tangent : bool
        Also compute the tangent stiffness.
    """
    X0, x, theta = np.asarray(X0, float), np.asarray(x, float), np.asarray(theta, float)
    D0 = X0[:, 1] - X0[:, 0]
    L0 = np.hypot(D0[:, 0], D0[:, 1])
    beta0 = np.arctan2(D0[:, 1], D0[:, 0])
    d = x[:, 1] - x[:, 0]
    L = np.hypot(d[:, 0], d[:, 1])
    c, s = d[:, 0] / L, d[:, 1] / L
    beta = np.arctan2(d[:, 1], d[:, 0])
    rigid = beta - beta0
    ul = L - L0
    t1 = wrap_angle(theta[:, 0] - rigid)
    t2 = wrap_angle(theta[:, 1] - rigid)
    ka = np.broadcast_to(np.asarray(EA, float), L0.shape) / L0
    kb = 2.0 * np.broadcast_to(np.asarray(EI, float), L0.shape) / L0
    N = ka * ul
    M1 = kb * (2.0 * t1 + t2)
    M2 = kb * (t1 + 2.0 * t2)
    U = 0.5 * (N * ul + M1 * t1 + M2 * t2)
    n = len(L0)
    zero = np.zeros(n)
    r = np.stack([-c, -s, zero, c, s, zero], axis=1)
    z = np.stack([s, -c, zero, -s, c, zero], axis=1)
    zL = -z / L[:, None]
    B1 = zL.copy()
    B1[:, 2] += 1.0
    B2 = zL.copy()
    B2[:, 5] += 1.0
    f = N[:, None] * r + M1[:, None] * B1 + M2[:, None] * B2
    K = None
    if tangent:
        K = (ka[:, None, None] * r[:, :, None] * r[:, None, :]
             + kb[:, None, None] * (2.0 * B1[:, :, None] * B1[:, None, :] + B1[:, :, None] * B2[:, None, :]
                                    + B2[:, :, None] * B1[:, None, :] + 2.0 * B2[:, :, None] * B2[:, None, :])
             + (N / L)[:, None, None] * z[:, :, None] * z[:, None, :]
             + ((M1 + M2) / L ** 2)[:, None, None] * (r[:, :, None] * z[:, None, :] + z[:, :, None] * r[:, None, :]))
    return Corotational2D(U, f, K, np.stack([ul, t1, t2], axis=1), np.stack([N, M1, M2], axis=1), L, beta)
