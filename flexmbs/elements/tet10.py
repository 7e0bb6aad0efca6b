"""Ten-node quadratic tetrahedron (isoparametric), meshio/VTK node order.

With the barycentric coordinates L = [1 - xi - eta - zeta, xi, eta, zeta]:

.. code:: text

    phi_i = L_i (2 L_i - 1)                       vertices i = 0..3
    phi_k = 4 L_i L_j                             mid-edge nodes k = 4..9 on edges
                                                  (0,1) (1,2) (2,0) (0,3) (1,3) (2,3)

Quadrature: stiffness degree 2, mass degree 4 (both exact on straight-sided tetrahedra).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from .lagrange import SolidLagrange, barycentric

EDGES = np.array([[0, 1], [1, 2], [2, 0], [0, 3], [1, 3], [2, 3]])
_VERTICES = np.vstack([np.zeros(3), np.eye(3)])


class Tet10(SolidLagrange):
    """Quadratic tetrahedron with DOFs (u, v, w) per node."""

    cell_type: ClassVar[str] = "tetra10"
    ref_cell: ClassVar[str] = "tetra"
    n_nodes: ClassVar[int] = 10
    ref_nodes: ClassVar[np.ndarray] = np.vstack([_VERTICES, 0.5 * (_VERTICES[EDGES[:, 0]]
                                                                   + _VERTICES[EDGES[:, 1]])])
    centroid: ClassVar[tuple[float, ...]] = (0.25, 0.25, 0.25)
    degree: ClassVar[int] = 2
    mass_degree: ClassVar[int] = 4
    stiffness_degree: ClassVar[int] = 2

    @staticmethod
    def shape(xi):
        L, _ = barycentric(Tet10._xi(xi))
        return np.concatenate([L * (2.0 * L - 1.0), 4.0 * L[:, EDGES[:, 0]] * L[:, EDGES[:, 1]]], axis=1)

    @staticmethod
    def dshape(xi):
        L, dL = barycentric(Tet10._xi(xi))
        i, j = EDGES[:, 0], EDGES[:, 1]
        vertex = (4.0 * L - 1.0)[:, :, None] * dL[None]
        edge = 4.0 * (L[:, i, None] * dL[None, j] + L[:, j, None] * dL[None, i])
        return np.concatenate([vertex, edge], axis=1)
