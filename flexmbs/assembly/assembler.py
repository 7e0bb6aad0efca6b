"""DOF numbering and sparse assembly of element arrays, in linear time and memory.

Global DOF of node ``i``, local DOF ``j``: ``i * dofs_per_node + j`` (node-major).

The sparsity pattern is computed once, at the level of nodes: the node pairs (n, m) that
share an element, sorted row-major (the CSR order of a node graph), and for every element
entry (e, n, m) its position ``pos[e, n, m]`` in that list.  Assembling an element array
is then one ``np.bincount`` over that map (a sum of duplicates in a known order, no sort)
followed by a block (BSR, dofs_per_node x dofs_per_node blocks) to CSR conversion:

.. code:: text

    data[pos[e, n, m], a, b] += local[e, n d + a, m d + b]        d = dofs_per_node

A ``dense`` assembler (small models: `flexmbs.model.Model` decides, below its ``dense_below``
free DOFs) sums the same ``data`` by the same ``np.bincount`` and only writes the summed blocks
into a dense ndarray instead of a CSR array: A[n d + a, m d + b] = data[k, a, b] for the block k
of the node pair (n, m).  The entries are the same floating-point numbers either way, and a
dense assembly never imports scipy (about 0.2 s of CPU: docs/benchmarks.md section 13).

Element arrays can be given as a function of a slice of elements (``matrix_from``), so that
no more than ``chunk`` elements' dense blocks exist at a time.  Scalar node-level arrays
(the ``phi phi^T`` mass of Lagrange solids, their geometric stiffness) are assembled on the
node pattern alone (``scalar``) and placed in the DOF components with ``place``.
"""
from __future__ import annotations

import sys

import numpy as np
from ..lazy import LazyModule

sparse = LazyModule("scipy.sparse")

__all__ = ["Assembler", "element_dofs", "is_sparse", "dense_array", "restrict", "triplet_matrix", "csr_parts"]


def is_sparse(A) -> bool:
    """True for a scipy.sparse array or matrix.  Never imports scipy: no object can be sparse
    before scipy.sparse is loaded, so a dense model's run keeps scipy out of the process."""
    module = sys.modules.get("scipy.sparse")
    return module is not None and module.issparse(A)


def dense_array(A) -> np.ndarray:
    """A as a dense float ndarray, from a dense or a scipy.sparse matrix."""
    return A.toarray() if is_sparse(A) else np.asarray(A, dtype=float)


def csr_parts(A) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indptr, indices, data): the CSR arrays of the dense or sparse matrix A without stored zeros,
    column indices sorted in each row (what the compiled kernel reads).  A dense A's nonzeros are
    taken in row-major order (``np.nonzero``), which is that order."""
    if is_sparse(A):
        A = sparse.csr_array(A)
        A.eliminate_zeros()
        A.sort_indices()
        return A.indptr, A.indices, A.data
    A = np.asarray(A, dtype=float)
    rows, cols = np.nonzero(A)
    indptr = np.zeros(A.shape[0] + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=A.shape[0]), out=indptr[1:])
    return indptr, cols, A[rows, cols]


def restrict(A, idx: np.ndarray):
    """A[idx][:, idx]: of a dense ndarray by ``np.ix_``, of a sparse one as CSR in O(nnz) (one
    map of the kept columns).  The result has A's format."""
    idx = np.asarray(idx, dtype=np.int64)
    if not is_sparse(A):
        A = np.asarray(A, dtype=float)
        return A if len(idx) == A.shape[0] else A[np.ix_(idx, idx)]
    A = sparse.csr_array(A)
    n = A.shape[0]
    if len(idx) == n:
        return A
    new = np.full(n, -1, np.int64)
    new[idx] = np.arange(len(idx))
    B = sparse.csr_array(A[idx])                          # row selection: C-level, O(nnz)
    cols = new[B.indices]
    keep = cols >= 0
    row = np.repeat(np.arange(len(idx)), np.diff(B.indptr))
    counts = np.bincount(row[keep], minlength=len(idx))
    indptr = np.zeros(len(idx) + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    out = sparse.csr_array((B.data[keep], cols[keep], indptr), shape=(len(idx), len(idx)))
    out.has_sorted_indices = bool(A.has_sorted_indices)
    return out


def triplet_matrix(values, rows, cols, shape: tuple[int, int], dense: bool):
    """The matrix sum_k values[k] e_rows[k] e_cols[k]^T (duplicates summed): a dense ndarray
    (``dense``; one ``np.bincount`` over the flat positions rows n_cols + cols) or CSR."""
    values, rows, cols = (np.asarray(v).ravel() for v in (values, rows, cols))
    if dense:
        flat = np.bincount(rows * shape[1] + cols, weights=values.astype(float), minlength=shape[0] * shape[1])
        return flat.reshape(shape)
    return sparse.csr_array(sparse.coo_array((values, (rows, cols)), shape=shape))


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
    dense : bool
        Global matrices as dense ndarrays (small models) instead of CSR arrays.
    """

    def __init__(self, cells, n_nodes: int, dofs_per_node: int, chunk: int = 50_000, dense: bool = False):
        self.dense = bool(dense)
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

    def block_data(self, local, rows, cols, start: int = 0) -> np.ndarray:
        """Summed block data (nnzb d d,) of the element matrices ``local`` (n, r, c) of the
        elements start .. start + n, entries (rows x cols) of the element DOFs."""
        pos = self.pattern()[2][start:start + len(local)]
        idx = self._block_index(pos, rows, cols)
        return np.bincount(idx.ravel(), weights=np.asarray(local, dtype=float).ravel(),
                           minlength=self.nnz_blocks * self.dofs_per_node ** 2)

    def node_rows(self) -> np.ndarray:
        """(nnzb,): the row node of each entry of the node pattern (its column node: ``indices``)."""
        indptr = self.pattern()[0]
        return np.repeat(np.arange(self.n_nodes), np.diff(indptr))

    def to_matrix(self, data, drop_zeros: bool = False):
        """The global matrix of block data (nnzb d d,): a dense ndarray (``dense``) or CSR (sorted
        indices; ``drop_zeros``: without stored zeros, e.g. of a sub-block of the element DOFs)."""
        indptr, indices, _ = self.pattern()
        d = self.dofs_per_node
        if self.dense:
            A = np.zeros((self.n_nodes, d, self.n_nodes, d))
            A[self.node_rows(), :, indices, :] = data.reshape(-1, d, d)   # each node pair once
            return A.reshape(self.n_dofs, self.n_dofs)
        A = sparse.bsr_array((data.reshape(-1, d, d), indices, indptr),
                             shape=(self.n_dofs, self.n_dofs)).tocsr()
        A = sparse.csr_array(A)
        if drop_zeros:
            A.eliminate_zeros()
        A.has_sorted_indices = True
        return A

    def matrix(self, local, rows=None, cols=None):
        """Global (n_dofs, n_dofs) matrix (`to_matrix`: dense or CSR) from element matrices (n_el, r, c).

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
            data += self.block_data(local[s:s + self.chunk], r, c, s)
        return self.to_matrix(data, rows is not None or cols is not None)

    def matrix_from(self, func, X):
        """Global matrix (`to_matrix`: dense or CSR) of the element matrices ``func(X[chunk])`` (n_chunk, n_e, n_e),
        computed ``chunk`` elements at a time."""
        data = np.zeros(self.nnz_blocks * self.dofs_per_node ** 2)
        n_e = self.element_dofs.shape[1]
        r = np.arange(n_e)
        for s in range(0, len(X), self.chunk):
            data += self.block_data(func(X[s:s + self.chunk]), r, r, s)
        return self.to_matrix(data)

    def scalar(self, local, start: int = 0) -> np.ndarray:
        """Node-pattern data (nnzb,) of scalar node-level element arrays (n_el, nn, nn)."""
        pos = self.pattern()[2][start:start + len(local)]
        return np.bincount(pos.ravel(), weights=np.asarray(local, dtype=float).ravel(),
                           minlength=self.nnz_blocks)

    def place(self, data: np.ndarray, a: int, b: int):
        """The matrix (dense or CSR) with the node-level matrix ``data`` in the DOF components (a, b):
        A[n d + a, m d + b] = data[n, m]."""
        indptr, indices, _ = self.pattern()
        d = self.dofs_per_node
        if self.dense:
            A = np.zeros((self.n_nodes, d, self.n_nodes, d))
            A[self.node_rows(), a, indices, b] = data
            return A.reshape(self.n_dofs, self.n_dofs)
        counts = np.diff(indptr)
        row_counts = np.zeros((self.n_nodes, d), np.int64)
        row_counts[:, a] = counts
        full_ptr = np.zeros(self.n_dofs + 1, np.int64)
        np.cumsum(row_counts.ravel(), out=full_ptr[1:])
        A = sparse.csr_array((np.asarray(data, dtype=float), indices * d + b, full_ptr),
                             shape=(self.n_dofs, self.n_dofs))
        A.has_sorted_indices = True
        return A

    def diagonal_place(self, data: np.ndarray):
        """The matrix (dense or CSR) data (x) I_d: A[n d + a, m d + a] = data[n, m] for every a."""
        indptr, indices, _ = self.pattern()
        d = self.dofs_per_node
        if self.dense:
            A = np.zeros((self.n_nodes, d, self.n_nodes, d))
            a = np.arange(d)
            A[self.node_rows()[:, None], a, indices[:, None], a] = np.asarray(data, dtype=float)[:, None]
            return A.reshape(self.n_dofs, self.n_dofs)
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
