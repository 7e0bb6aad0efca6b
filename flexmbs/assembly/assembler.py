"""DOF numbering and sparse assembly of element arrays, in linear time and memory.

Global DOF of node ``i``, local DOF ``j``: ``i * dofs_per_node + j`` (node-major).

The sparsity pattern is computed once, at the level of nodes: the node pairs (n, m) that
share an element, sorted row-major (the CSR order of a node graph), and for every element
entry (e, n, m) its position ``pos[e, n, m]`` in that list.  Assembling an element array
is then one ``np.bincount`` over that map (a sum of duplicates in a known order, no sort)
followed by a block (BSR, dofs_per_node x dofs_per_node blocks) to CSR conversion:

.. code:: text

    data[pos[e, n, m], a, b] += local[e, n d + a, m d + b]        d = dofs_per_node

Element arrays can be given as a function of a slice of elements (``matrix_from``), so that
no more than ``chunk`` elements' dense blocks exist at a time.  Scalar node-level arrays
(the ``phi phi^T`` mass of Lagrange solids, their geometric stiffness) are assembled on the
node pattern alone (``scalar``) and placed in the DOF components with ``place``.
"""
from __future__ import annotations

import numpy as np
from ..lazy import LazyModule

sparse = LazyModule("scipy.sparse")

__all__ = ["Assembler", "element_dofs"]


def element_dofs(cells, dofs_per_node: int) -> np.ndarray:
    """The DOF map: full DOF indices of every element (n_el, nodes x dofs_per_node), node-major
    (node k's DOFs at k dofs_per_node + 0 .. dofs_per_node - 1)."""
    cells = np.asarray(cells, dtype=np.int64)
    return (cells[:, :, None] * dofs_per_node + np.arange(dofs_per_node)).reshape(len(cells), -1)


class Assembler:
    """Scatter element arrays of one cell block into global sparse arrays.

    Parameters
    ----------
    cells : ndarray, shape (n_el, n_nodes)
        Connectivity.
    n_nodes : int
        Number of nodes of the mesh.
    dofs_per_node : int
    chunk : int
        Elements per batch in ``matrix_from`` (bounds the memory of dense element blocks).
    """

    def __init__(self, cells, n_nodes: int, dofs_per_node: int, chunk: int = 50_000):
        self.cells = np.asarray(cells, dtype=np.int64)
        self.n_nodes = int(n_nodes)
        self.dofs_per_node = int(dofs_per_node)
        self.n_dofs = self.n_nodes * self.dofs_per_node
        self.chunk = int(chunk)
        self.element_dofs = element_dofs(self.cells, self.dofs_per_node)
        self._pattern = None

    # -- the node pattern, once ----------------------------------------------------------------
    def pattern(self):
        """(indptr, indices, pos) of the node graph; pos (n_el, nn, nn) indexes its entries."""
        if self._pattern is None:
            c = self.cells
            n_el, nn = c.shape
            keys = (c[:, :, None] * self.n_nodes + c[:, None, :]).ravel()
            order = np.argsort(keys, kind="stable")
            sk = keys[order]
            new = np.empty(len(sk), bool)
            new[:1] = True
            np.not_equal(sk[1:], sk[:-1], out=new[1:])
            rank = np.cumsum(new) - 1
            del new
            pos = np.empty(len(keys), np.int64)
            pos[order] = rank
            del order, rank
            uk = sk[np.r_[True, sk[1:] != sk[:-1]]] if len(sk) else sk
            del sk
            rows, indices = np.divmod(uk, self.n_nodes)
            indptr = np.zeros(self.n_nodes + 1, np.int64)
            np.cumsum(np.bincount(rows, minlength=self.n_nodes), out=indptr[1:])
            self._pattern = (indptr, indices.astype(np.int64), pos.reshape(n_el, nn, nn))
        return self._pattern

    @property
    def nnz_blocks(self) -> int:
        return len(self.pattern()[1])

    # -- matrices --------------------------------------------------------------------------------
    def _block_index(self, pos, rows, cols):
        """Flat positions in the (nnzb, d, d) block data of the local entries (rows x cols)."""
        d = self.dofs_per_node
        rn, ra = np.divmod(np.asarray(rows), d)
        cn, cb = np.divmod(np.asarray(cols), d)
        return (pos[:, rn[:, None], cn[None, :]] * (d * d) + (ra[:, None] * d + cb[None, :]))

    def _block_data(self, local, rows, cols, start: int = 0):
        pos = self.pattern()[2][start:start + len(local)]
        idx = self._block_index(pos, rows, cols)
        return np.bincount(idx.ravel(), weights=np.asarray(local, dtype=float).ravel(),
                           minlength=self.nnz_blocks * self.dofs_per_node ** 2)

    def _to_csr(self, data, restricted: bool) -> sparse.csr_array:
        indptr, indices, _ = self.pattern()
        d = self.dofs_per_node
        A = sparse.bsr_array((data.reshape(-1, d, d), indices, indptr),
                             shape=(self.n_dofs, self.n_dofs)).tocsr()
        A = sparse.csr_array(A)
        if restricted:
            A.eliminate_zeros()
        A.has_sorted_indices = True
        return A

    def matrix(self, local, rows=None, cols=None) -> sparse.csr_array:
        """Global (n_dofs, n_dofs) CSR array from element matrices (n_el, r, c).

        ``rows`` and ``cols`` (local DOF indices) restrict the element matrix to a
        sub-block of the element DOFs; by default all DOFs.
        """
        local = np.asarray(local)
        n_e = self.element_dofs.shape[1]
        r = np.arange(n_e) if rows is None else np.asarray(rows)
        c = np.arange(n_e) if cols is None else np.asarray(cols)
        if local.shape != (len(self.cells), len(r), len(c)):
            raise ValueError(f"`local` must have shape {(len(self.cells), len(r), len(c))}, "
                             f"got {local.shape}")
        data = np.zeros(self.nnz_blocks * self.dofs_per_node ** 2)
        for s in range(0, len(local), self.chunk):
            data += self._block_data(local[s:s + self.chunk], r, c, s)
        return self._to_csr(data, rows is not None or cols is not None)

    def matrix_from(self, func, X) -> sparse.csr_array:
        """Global CSR array of the element matrices ``func(X[chunk])`` (n_chunk, n_e, n_e),
        computed ``chunk`` elements at a time."""
        data = np.zeros(self.nnz_blocks * self.dofs_per_node ** 2)
        n_e = self.element_dofs.shape[1]
        r = np.arange(n_e)
        for s in range(0, len(X), self.chunk):
            data += self._block_data(func(X[s:s + self.chunk]), r, r, s)
        return self._to_csr(data, False)

    def scalar(self, local, start: int = 0) -> np.ndarray:
        """Node-pattern data (nnzb,) of scalar node-level element arrays (n_el, nn, nn)."""
        pos = self.pattern()[2][start:start + len(local)]
        return np.bincount(pos.ravel(), weights=np.asarray(local, dtype=float).ravel(),
                           minlength=self.nnz_blocks)

    def place(self, data: np.ndarray, a: int, b: int) -> sparse.csr_array:
        """CSR array with the node-level matrix ``data`` in the DOF components (a, b):
        A[n d + a, m d + b] = data[n, m]."""
        indptr, indices, _ = self.pattern()
        d = self.dofs_per_node
        counts = np.diff(indptr)
        row_counts = np.zeros((self.n_nodes, d), np.int64)
        row_counts[:, a] = counts
        full_ptr = np.zeros(self.n_dofs + 1, np.int64)
        np.cumsum(row_counts.ravel(), out=full_ptr[1:])
        A = sparse.csr_array((np.asarray(data, dtype=float), indices * d + b, full_ptr),
                             shape=(self.n_dofs, self.n_dofs))
        A.has_sorted_indices = True
        return A

    def diagonal_place(self, data: np.ndarray) -> sparse.csr_array:
        """CSR array of data (x) I_d: A[n d + a, m d + a] = data[n, m] for every a."""
        indptr, indices, _ = self.pattern()
        d = self.dofs_per_node
        counts = np.diff(indptr)
        full_ptr = np.zeros(self.n_dofs + 1, np.int64)
        np.cumsum(np.repeat(counts, d), out=full_ptr[1:])
        # rows n d + a take node row n's columns, shifted to component a
        starts = np.repeat(indptr[:-1], d)
        comp = np.tile(np.arange(d), self.n_nodes)
        lens = np.repeat(counts, d)
        take = np.repeat(starts - full_ptr[:-1], lens) + np.arange(full_ptr[-1])
        cols = indices[take] * d + np.repeat(comp, lens)
        A = sparse.csr_array((np.asarray(data, dtype=float)[take], cols, full_ptr),
                             shape=(self.n_dofs, self.n_dofs))
        A.has_sorted_indices = True
        return A

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
