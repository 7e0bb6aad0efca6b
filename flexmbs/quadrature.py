"""Quadrature rules on the reference cells.

Every rule returns ``(xi, w)`` with ``xi`` of shape ``(n_qp, d)`` (reference
coordinates) and ``w`` of shape ``(n_qp,)``, and integrates polynomials of total
degree ``<= degree`` exactly on its reference cell:

==============  ====================================  ==================
cell            reference domain                       measure (sum of w)
==============  ====================================  ==================
``line``        [-1, 1]                                2
``quad``        [-1, 1]^2                              4
``hexahedron``  [-1, 1]^3                              8
``triangle``    xi, eta >= 0, xi + eta <= 1            1/2
``tetra``       xi, eta, zeta >= 0, sum <= 1           1/6
==============  ====================================  ==================

Lines, quadrilaterals and hexahedra use Gauss-Legendre points and their tensor
products (n points are exact to degree 2n - 1).  Triangles and tetrahedra use
the collapsed-coordinate (conical product) rules of Stroud [1]: the simplex is
mapped onto the cube by the Duffy transformation and the Jacobian factors
(1 - u) and (1 - u)^2 (1 - v) are absorbed in Gauss-Jacobi weights, which keeps
the rules exact to degree 2n - 1 with all points inside the cell and all
weights positive.

References
----------
.. [1] A. H. Stroud, *Approximate Calculation of Multiple Integrals*,
       Prentice-Hall, 1971, sec. 2.4 (conical product formulas).
"""
from __future__ import annotations

import numpy as np

__all__ = ["gauss_legendre", "gauss_jacobi_01", "quadrature", "CELL_DIM", "CELL_MEASURE"]

CELL_DIM = {"line": 1, "quad": 2, "hexahedron": 3, "triangle": 2, "tetra": 3}
CELL_MEASURE = {"line": 2.0, "quad": 4.0, "hexahedron": 8.0, "triangle": 0.5, "tetra": 1.0 / 6.0}


def _n_points(degree: int) -> int:
    if not isinstance(degree, (int, np.integer)) or degree < 0:
        raise ValueError(f"`degree` must be a non-negative integer, got {degree!r}")
    return max(1, (int(degree) + 2) // 2)


def gauss_legendre(degree: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre rule on [-1, 1] exact for polynomials of ``degree``."""
    x, w = np.polynomial.legendre.leggauss(_n_points(degree))
    return x, w


def gauss_jacobi_01(degree: int, alpha: int) -> tuple[np.ndarray, np.ndarray]:
    """Rule on [0, 1] for the weight (1 - u)^alpha, exact for polynomials of ``degree``."""
    from scipy.special import roots_jacobi        # deferred: only triangles and tetrahedra
    t, w = roots_jacobi(_n_points(degree), alpha, 0)
    return 0.5 * (1.0 + t), w / 2.0 ** (alpha + 1)


def _tensor(rules: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    grids = np.meshgrid(*[r[0] for r in rules], indexing="ij")
    weights = np.meshgrid(*[r[1] for r in rules], indexing="ij")
    xi = np.stack([g.ravel() for g in grids], axis=1)
    w = np.prod(np.stack([g.ravel() for g in weights], axis=1), axis=1)
    return xi, w


def quadrature(cell: str, degree: int) -> tuple[np.ndarray, np.ndarray]:
    """Points ``xi`` (n_qp, d) and weights ``w`` (n_qp,) exact to ``degree`` on ``cell``.

    Examples
    --------
    >>> xi, w = quadrature("triangle", 2)
    >>> float(w.sum())
    0.5
    """
    if cell not in CELL_DIM:
        raise ValueError(f"`cell` must be one of {sorted(CELL_DIM)}, got {cell!r}")
    if cell in ("line", "quad", "hexahedron"):
        rule = gauss_legendre(degree)
        return _tensor([rule] * CELL_DIM[cell])
    # collapsed coordinates: the extra degree of the Jacobian is carried by the Jacobi weight
    if cell == "triangle":
        (u, wu), (v, wv) = gauss_jacobi_01(degree, 1), gauss_jacobi_01(degree, 0)
        uv, w = _tensor([(u, wu), (v, wv)])
        u, v = uv.T
        return np.stack([u, (1.0 - u) * v], axis=1), w
    (u, wu), (v, wv), (s, ws) = (gauss_jacobi_01(degree, 2), gauss_jacobi_01(degree, 1),
                                 gauss_jacobi_01(degree, 0))
    uvs, w = _tensor([(u, wu), (v, wv), (s, ws)])
    u, v, s = uvs.T
    return np.stack([u, (1.0 - u) * v, (1.0 - u) * (1.0 - v) * s], axis=1), w
