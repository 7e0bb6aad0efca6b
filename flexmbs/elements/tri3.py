"""Three-node plane-stress triangle (constant strain), nodes at the vertices of the unit simplex.

.. code:: text

    phi = [1 - xi - eta, xi, eta]          node order (0, 0), (1, 0), (0, 1)   (meshio "triangle")

Quadrature: stiffness degree 0 (1 point, exact), mass degree 2 (exact on every triangle).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from .lagrange import LinearSimplex, PlaneStressLagrange


class Tri3(LinearSimplex, PlaneStressLagrange):
    """Linear plane-stress triangle (CST) with DOFs (u, v) per node."""

    cell_type: ClassVar[str] = "triangle"
    ref_cell: ClassVar[str] = "triangle"
    n_nodes: ClassVar[int] = 3
    ref_nodes: ClassVar[np.ndarray] = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    centroid: ClassVar[tuple[float, ...]] = (1.0 / 3.0, 1.0 / 3.0)
    degree: ClassVar[int] = 1
    mass_degree: ClassVar[int] = 2
    stiffness_degree: ClassVar[int] = 0
    affine: ClassVar[bool] = True

