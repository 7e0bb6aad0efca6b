"""Linear combinations of constant sparse matrices, all on one sparsity pattern.

.. code:: text

    A(c) = sum_k c_k A_k

The union pattern P of the A_k (CSR, sorted indices) is formed once, and with it the
position in P of every stored entry of every A_k.  Terms that share a pattern (e.g. M and
the geometric stiffnesses of Lagrange solids, all on the node pattern times I_3) are a group,
combined on their own pattern and placed once.  A new combination is then one pass over the
stored entries of the terms with c_k != 0, written into P's data array: no sparse addition,
no sorting of indices, no format conversion, and every A(c) has the same pattern (so its
matrix-vector product, its diagonal and any factorization see one structure).

Used for the step matrix of implicit methods on a moving frame, whose time dependence is
entirely in a few coefficients (omega_i, eps_i, omega_a omega_b, the geometric stiffness
factors: ``Model.frame_terms``).
"""
from __future__ import annotations

import numpy as np
from .lazy import LazyModule

sparse = LazyModule("scipy.sparse")

__all__ = ["SparseSum"]


class SparseSum:
    """``A(c) = sum_k c_k A_k`` for the square sparse matrices ``mats`` (same shape).

    ``data(c)`` gives the data array on the common pattern, ``matrix(c)`` the CSR array.
    """

    def __init__(self, mats):
        if not mats:
            raise ValueError("`mats` must hold at least one sparse matrix, got none")
        mats = [sparse.csr_array(A) for A in mats]
        shape = mats[0].shape
        for k, A in enumerate(mats):
            if A.shape != shape:
                raise ValueError(f"`mats[{k}]` has shape {A.shape}, expected {shape} like mats[0]")
            A.sum_duplicates()                       # canonical: sorted, no duplicates
        self.shape = shape
        # the union pattern: a sum of structures with positive values (no cancellation)
        ones = [sparse.csr_array((np.ones(A.nnz), A.indices, A.indptr), shape=shape) for A in mats]
        P = ones[0]
        for O in ones[1:]:
            P = P + O
        P = sparse.csr_array(P)
        P.sum_duplicates()
        self.indptr, self.indices = P.indptr, P.indices
        self.nnz = P.nnz
        idx_type = np.int32 if self.nnz < 2**31 else np.int64
        base = sparse.csr_array((np.ones(self.nnz), self.indices, self.indptr), shape=shape)
        # terms with one pattern form a group: combined on their own pattern, then placed once
        self._groups = []                         # (term numbers, data arrays, positions or None)
        for k, A in enumerate(mats):
            for ks, datas, rep, _ in self._groups:
                if rep.nnz == A.nnz and np.array_equal(rep.indptr, A.indptr) and \
                        np.array_equal(rep.indices, A.indices):
                    ks.append(k)
                    datas.append(A.data)
                    break
            else:
                self._groups.append(([k], [A.data], A, None))
        for g, (ks, datas, A, _) in enumerate(self._groups):
            pos = None
            if not (A.nnz == self.nnz and np.array_equal(A.indptr, self.indptr)
                    and np.array_equal(A.indices, self.indices)):
                # P's entries carry 1, A's entries their number + 2: the sum has P's pattern
                # and tells, at each position of P, which entry of A (if any) lands there
                marker = sparse.csr_array((np.arange(A.nnz, dtype=float) + 2.0, A.indices, A.indptr),
                                          shape=shape)
                Q = sparse.csr_array(base + marker)
                Q.sum_duplicates()
                if Q.nnz != self.nnz:             # cannot happen for a union pattern
                    raise RuntimeError("internal error: a term's pattern is not inside the union pattern")
                lab = Q.data - 1.0
                at = np.flatnonzero(lab >= 1.5)
                pos = np.empty(A.nnz, dtype=idx_type)
                pos[lab[at].astype(np.int64) - 2] = at
            self._groups[g] = (np.array(ks), datas, A.nnz, pos)
        self.n_terms = len(mats)

    def data(self, c, out: np.ndarray | None = None) -> np.ndarray:
        """The data array of ``sum_k c_k A_k`` on the common pattern."""
        c = np.asarray(c, dtype=float)
        if c.shape != (self.n_terms,):
            raise ValueError(f"`c` must have {self.n_terms} coefficients, got shape {c.shape}")
        if out is None:
            out = np.zeros(self.nnz)
        else:
            out[:] = 0.0
        for ks, datas, nnz, pos in self._groups:
            cg = c[ks]
            if not cg.any():
                continue
            part = out if pos is None else np.zeros(nnz)
            for ck, d in zip(cg, datas):
                if ck != 0.0:
                    part += ck * d
            if pos is not None:
                out[pos] += part
        return out

    def matrix(self, c) -> sparse.csr_array:
        """``sum_k c_k A_k`` as a CSR array with the common pattern (explicit zeros kept)."""
        A = sparse.csr_array((self.data(c), self.indices, self.indptr), shape=self.shape)
        A.has_sorted_indices = True
        return A
