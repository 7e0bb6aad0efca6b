"""Eight-node trilinear hexahedron on [-1, 1]^3, meshio/VTK node order.

.. code:: text

    phi_n = (1 + xi xi_n) (1 + eta eta_n) (1 + zeta zeta_n) / 8
    nodes (-1,-1,-1) (1,-1,-1) (1,1,-1) (-1,1,-1) (-1,-1,1) (1,-1,1) (1,1,1) (-1,1,1)

Quadrature: 2 x 2 x 2 Gauss for stiffness (full integration) and mass (exact on
parallelepipeds).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from .lagrange import SolidLagrange, multilinear


class Hex8(SolidLagrange):
    """Trilinear hexahedron with DOFs (u, v, w) per node."""

    cell_type: ClassVar[str] = "hexahedron"
    ref_cell: ClassVar[str] = "hexahedron"
    n_nodes: ClassVar[int] = 8
    ref_nodes: ClassVar[np.ndarray] = np.array(
        [[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1], [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]],
        dtype=float)
    centroid: ClassVar[tuple[float, ...]] = (0.0, 0.0, 0.0)
    degree: ClassVar[int] = 1
    mass_degree: ClassVar[int] = 2
    stiffness_degree: ClassVar[int] = 2

    @staticmethod
    def shape(xi):
        return multilinear(Hex8._xi(xi), Hex8.ref_nodes)[0]

    @staticmethod
    def dshape(xi):
        return multilinear(Hex8._xi(xi), Hex8.ref_nodes)[1]
