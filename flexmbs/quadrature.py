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

__all__ = ["gauss_legendre", "gauss_legendre_points", "gauss_jacobi_01", "quadrature", "CELL_DIM", "CELL_MEASURE"]

CELL_DIM = {"line": 1, "quad": 2, "hexahedron": 3, "triangle": 2, "tetra": 3}
CELL_MEASURE = {"line": 2.0, "quad": 4.0, "hexahedron": 8.0, "triangle": 0.5, "tetra": 1.0 / 6.0}


def _n_points(degree: int) -> int:
    if not isinstance(degree, (int, np.integer)) or degree < 0:
        raise ValueError(f"`degree` must be a non-negative integer, got {degree!r}")
    return max(1, (int(degree) + 2) // 2)


# n -> (points, weights) of the n-point Gauss-Legendre rule, as `np.polynomial.legendre.leggauss(n)`
# of numpy 2.4.6 gave them (the repr of each float; tests/test_quadrature.py checks them against
# leggauss to 1e-15 and their exactness to degree 2n - 1): the rules a run uses without importing
# numpy.polynomial, which imports its six polynomial classes (about 20 ms of CPU; docs/benchmarks.md 13.3)
_LEGENDRE = {
    1: ([0.0],
        [2.0]),
    2: ([-0.5773502691896257, 0.5773502691896257],
        [1.0, 1.0]),
    3: ([-0.7745966692414834, 0.0, 0.7745966692414834],
        [0.5555555555555557, 0.8888888888888888, 0.5555555555555557]),
    4: ([-0.8611363115940526, -0.33998104358485626, 0.33998104358485626, 0.8611363115940526],
        [0.34785484513745357, 0.6521451548625464, 0.6521451548625464, 0.34785484513745357]),
    5: ([-0.906179845938664, -0.5384693101056831, 0.0, 0.5384693101056831, 0.906179845938664],
        [0.23692688505618928, 0.4786286704993663, 0.5688888888888887, 0.4786286704993663, 0.23692688505618928]),
    6: ([-0.9324695142031519, -0.6612093864662645, -0.2386191860831969, 0.2386191860831969, 0.6612093864662645, 0.9324695142031519],
        [0.17132449237917027, 0.3607615730481387, 0.46791393457269104, 0.46791393457269104, 0.3607615730481387, 0.17132449237917027]),
    7: ([-0.9491079123427586, -0.7415311855993945, -0.4058451513773972, 0.0, 0.4058451513773972, 0.7415311855993945, 0.9491079123427586],
        [0.12948496616886973, 0.27970539148927687, 0.3818300505051187, 0.4179591836734693, 0.3818300505051187, 0.27970539148927687, 0.12948496616886973]),
    8: ([-0.9602898564975362, -0.7966664774136267, -0.525532409916329, -0.18343464249564978, 0.18343464249564978, 0.525532409916329, 0.7966664774136267, 0.9602898564975362],
        [0.10122853629037706, 0.22238103445337443, 0.3137066458778869, 0.36268378337836166, 0.36268378337836166, 0.3137066458778869, 0.22238103445337443, 0.10122853629037706]),
    9: ([-0.9681602395076261, -0.8360311073266358, -0.6133714327005904, -0.3242534234038089, 0.0, 0.3242534234038089, 0.6133714327005904, 0.8360311073266358, 0.9681602395076261],
        [0.08127438836157416, 0.18064816069485737, 0.2606106964029356, 0.3123470770400029, 0.33023935500125984, 0.3123470770400029, 0.2606106964029356, 0.18064816069485737, 0.08127438836157416]),
    10: ([-0.9739065285171717, -0.8650633666889845, -0.6794095682990244, -0.4333953941292472, -0.14887433898163122, 0.14887433898163122, 0.4333953941292472, 0.6794095682990244, 0.8650633666889845, 0.9739065285171717],
        [0.06667134430868814, 0.1494513491505804, 0.219086362515982, 0.2692667193099965, 0.2955242247147528, 0.2955242247147528, 0.2692667193099965, 0.219086362515982, 0.1494513491505804, 0.06667134430868814]),
}


def gauss_legendre_points(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The n-point Gauss-Legendre rule on [-1, 1] (exact to degree 2n - 1): points ascending and
    weights, as ``np.polynomial.legendre.leggauss(n)`` (from `_LEGENDRE` up to 10 points)."""
    if n in _LEGENDRE:
        x, w = _LEGENDRE[n]
        return np.array(x), np.array(w)
    return np.polynomial.legendre.leggauss(n)


def gauss_legendre(degree: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre rule on [-1, 1] exact for polynomials of ``degree``."""
    return gauss_legendre_points(_n_points(degree))


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
