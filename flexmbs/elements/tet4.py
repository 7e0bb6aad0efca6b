"""Four-node linear tetrahedron (constant strain), nodes at the vertices of the unit simplex.

.. code:: text

    phi = [1 - xi - eta - zeta, xi, eta, zeta]      node order (meshio/VTK "tetra")

Quadrature: stiffness degree 0 (1 point, exact), mass degree 2 (exact on every tetrahedron).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from .lagrange import LinearSimplex, SolidLagrange


class Tet4(LinearSimplex, SolidLagrange):
    """Linear tetrahedron with DOFs (u, v, w) per node."""

    cell_type: ClassVar[str] = "tetra"
    ref_cell: ClassVar[str] = "tetra"
    n_nodes: ClassVar[int] = 4
    ref_nodes: ClassVar[np.ndarray] = np.vstack([np.zeros(3), np.eye(3)])
    centroid: ClassVar[tuple[float, ...]] = (0.25, 0.25, 0.25)
    degree: ClassVar[int] = 1
    mass_degree: ClassVar[int] = 2
    stiffness_degree: ClassVar[int] = 0
    affine: ClassVar[bool] = True

