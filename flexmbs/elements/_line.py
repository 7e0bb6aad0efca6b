"""Geometry and shape functions shared by the two-node line elements.

Reference coordinate xi in [-1, 1], s = (1 + xi) / 2 in [0, 1], x = X0 + s L e1.
Hermite cubics (transverse deflection w and slope w' = dw/dx):

.. code:: text

    w(s) = H1 w1 + H2 L w1' + H3 w2 + H4 L w2'
    H1 = 1 - 3 s^2 + 2 s^3,  H2 = s - 2 s^2 + s^3,  H3 = 3 s^2 - 2 s^3,  H4 = -s^2 + s^3
"""
from __future__ import annotations

import numpy as np

from ..quadrature import gauss_legendre
from ..rotations import pad3  # noqa: F401  (elements import pad3 from here)


def axis(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit axis e1 (n_el, 3) and length L (n_el,) of two-node elements X (n_el, 2, dim)."""
    X3 = pad3(X)
    dX = X3[:, 1] - X3[:, 0]
    L = np.linalg.norm(dX, axis=1)
    if np.any(L <= 0):
        bad = int(np.flatnonzero(L <= 0)[0])
        raise ValueError(f"element {bad} has zero length: both nodes at {X3[bad, 0].tolist()}")
    return dX / L[:, None], L


def linear(xi):
    """Linear Lagrange functions and their xi-derivatives, each (n_p, 2)."""
    xi = np.asarray(xi, dtype=float).reshape(-1)
    phi = np.stack([(1 - xi) / 2, (1 + xi) / 2], axis=1)
    dphi = np.tile([-0.5, 0.5], (len(xi), 1))
    return phi, dphi


def hermite(xi):
    """Hermite cubics H1..H4 of s and their first and second s-derivatives, each (n_p, 4)."""
    s = (1.0 + np.asarray(xi, dtype=float).reshape(-1)) / 2.0
    H = np.stack([1 - 3 * s**2 + 2 * s**3, s - 2 * s**2 + s**3, 3 * s**2 - 2 * s**3, -s**2 + s**3], 1)
    dH = np.stack([-6 * s + 6 * s**2, 1 - 4 * s + 3 * s**2, 6 * s - 6 * s**2, -2 * s + 3 * s**2], 1)
    d2H = np.stack([-6 + 12 * s, -4 + 6 * s, 6 - 12 * s, -2 + 6 * s], 1)
    return H, dH, d2H


def gauss_points(degree: int):
    """Gauss-Legendre points on [-1, 1] for ``degree`` and weights for integrating over s in [0, 1]."""
    xi, w = gauss_legendre(degree)
    return xi, w / 2.0


def axial_force(P_mean, X, e1, L, rho_A, body_force, xi):
    """Axial force P at reference points ``xi`` from the element's mean force and axial load.

    Equilibrium of the bar, dP/dx = -f(x), with f = rho A e1 . b(x) the axial load per length
    of a body force b per unit mass that varies linearly along the element:

    .. code:: text

        P(s) = P_mean - (F(s) - mean F),   F(s) = L (f0 s + (f1 - f0) s^2 / 2),   mean F = L (f0/2 + (f1 - f0)/6)

    With nodally exact axial displacements (linear elements, consistent loads) ``P_mean`` =
    EA (u2 - u1) / L is the element mean of the exact P and the result is exact.
    """
    s = (1.0 + np.asarray(xi, dtype=float)) / 2.0
    P = np.broadcast_to(np.asarray(P_mean, dtype=float)[:, None], (len(L), len(s))).copy()
    if body_force is not None:
        b = np.asarray(body_force(pad3(X)), dtype=float)           # (n_el, 2, 3) at the nodes
        f = rho_A * np.einsum("ed,end->en", e1, b)                   # axial load per length
        f0, df = f[:, :1], f[:, 1:] - f[:, :1]
        F = L[:, None] * (f0 * s + df * s**2 / 2)
        P -= F - L[:, None] * (f0 / 2 + df / 6)
    return P
