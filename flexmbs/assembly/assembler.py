"""DOF numbering and sparse assembly of element arrays.

Global DOF of node ``i``, local DOF ``j``: ``i * dofs_per_node + j`` (node-major).
Element arrays are batched with the element axis first and are scattered with one
COO -> CSR conversion (duplicates summed), no Python loop over elements.
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

__all__ = ["Assembler"]


class Assembler:
    """Scatter element arrays of one cell block into global sparse arrays.

    Parameters
    ----------
    cells : ndarray, shape (n_el, n_nodes)
        Connectivity.
    n_nodes : int
        Number of nodes of the mesh.
    dofs_per_node : int
    """

    def __init__(self, cells, n_nodes: int, dofs_per_node: int):
        cells = np.asarray(cells, dtype=np.int64)
        self.dofs_per_node = int(dofs_per_node)
        self.n_dofs = int(n_nodes) * self.dofs_per_node
        self.element_dofs = (cells[:, :, None] * self.dofs_per_node
                             + np.arange(self.dofs_per_node)).reshape(len(cells), -1)

    def matrix(self, local, rows=None, cols=None) -> sparse.csr_array:
        """Global (n_dofs, n_dofs) CSR array from element matrices (n_el, r, c).

        ``rows`` and ``cols`` (local DOF indices) restrict the element matrix to a
        sub-block of the element DOFs; by default all DOFs.
        """
        local = np.asarray(local)
        edofs = self.element_dofs
        I = edofs if rows is None else edofs[:, rows]
        J = edofs if cols is None else edofs[:, cols]
        if local.shape != (len(edofs), I.shape[1], J.shape[1]):
            raise ValueError(f"`local` must have shape {(len(edofs), I.shape[1], J.shape[1])}, "
                             f"got {local.shape}")
        ii = np.broadcast_to(I[:, :, None], local.shape).ravel()
        jj = np.broadcast_to(J[:, None, :], local.shape).ravel()
        A = sparse.coo_array((local.ravel(), (ii, jj)), shape=(self.n_dofs, self.n_dofs))
        return A.tocsr()

    def vector(self, local, rows=None) -> np.ndarray:
        """Global (n_dofs,) vector from element vectors (n_el, r)."""
        local = np.asarray(local)
        I = self.element_dofs if rows is None else self.element_dofs[:, rows]
        if local.shape != I.shape:
            raise ValueError(f"`local` must have shape {I.shape}, got {local.shape}")
        return np.bincount(I.ravel(), weights=local.ravel(), minlength=self.n_dofs)

    def gather(self, x) -> np.ndarray:
        """Element DOF values (n_el, n_e) from a global vector (n_dofs,)."""
        x = np.asarray(x)
        if x.shape[0] != self.n_dofs:
            raise ValueError(f"`x` must have length {self.n_dofs}, got {x.shape[0]}")
        return x[self.element_dofs]
