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


def pad3(X: np.ndarray) -> np.ndarray:
    """Coordinates padded with zeros to 3 components."""
    if X.shape[-1] == 3:
        return X
    return np.concatenate([X, np.zeros(X.shape[:-1] + (3 - X.shape[-1],))], axis=-1)


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
