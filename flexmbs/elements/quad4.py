"""Four-node bilinear plane-stress quadrilateral on [-1, 1]^2, meshio/VTK node order.

.. code:: text

    phi_n = (1 + xi xi_n) (1 + eta eta_n) / 4      nodes (-1,-1) (1,-1) (1,1) (-1,1)

Quadrature: 2 x 2 Gauss for stiffness (full integration) and mass (exact on parallelograms).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from .lagrange import PlaneStressLagrange, multilinear


class Quad4(PlaneStressLagrange):
    """Bilinear plane-stress quadrilateral with DOFs (u, v) per node."""

    cell_type: ClassVar[str] = "quad"
    ref_cell: ClassVar[str] = "quad"
    n_nodes: ClassVar[int] = 4
    ref_nodes: ClassVar[np.ndarray] = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    centroid: ClassVar[tuple[float, ...]] = (0.0, 0.0)
    degree: ClassVar[int] = 1
    mass_degree: ClassVar[int] = 2
    stiffness_degree: ClassVar[int] = 2

    @staticmethod
    def shape(xi):
        return multilinear(Quad4._xi(xi), Quad4.ref_nodes)[0]

    @staticmethod
    def dshape(xi):
        return multilinear(Quad4._xi(xi), Quad4.ref_nodes)[1]
