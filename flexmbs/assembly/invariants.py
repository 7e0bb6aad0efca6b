"""Assembled inertia invariants of a body and the moving-frame terms built from them.

The constant integrals of ``elements.base`` are assembled once.  Every
time-dependent inertia term of the equations of motion is then a cheap
combination (ref. [1] eqs. (A4)-(A8), corrected: see docs/notation.md).  With
``tilde(v)`` the skew matrix of v (tilde(v) y = v x y) and e_i the unit vectors:

.. code:: text

    G_i  = int rho N^T tilde(e_i) N dV = sum_ab tilde(e_i)[a, b] S[a, b]      skew-symmetric
    g_i  = int rho N^T tilde(e_i) x dV = sum_ab tilde(e_i)[a, b] d[a, b]

    [c]          = 2 sum_i omega_i G_i                    (Coriolis, gyroscopic)
    [k(eps)]     = sum_i eps_i G_i
    [k(omega)]   = sum_ab omega_a omega_b S[a, b] - |omega|^2 [m]   (tilde(w)^2 = w w^T - |w|^2 I)
    {q^i(eps)}   = sum_i eps_i g_i
    {q^i(omega)} = sum_ab omega_a omega_b d[a, b] - |omega|^2 sum_a d[a, a]

References
----------
.. [1] S. Vlase, A. E. Nicolescu, M. Marin, Mathematics 8 (2020) 1401, doi:10.3390/math8091401.
"""
from __future__ import annotations

import numpy as np

from ..rotations import tilde
from .assembler import Assembler, is_sparse, restrict, triplet_matrix
from ..frozen import Fields
from ..lazy import LazyModule

sparse = LazyModule("scipy.sparse")

__all__ = ["BodyInvariants", "assemble_invariants", "tilde"]


_E_TILDE = [tilde(e) for e in np.eye(3)]


def _csr_or_dense(A):
    """A sum of matrices kept in its format: CSR if sparse, else the dense ndarray."""
    return sparse.csr_array(A) if is_sparse(A) else A


def _nonzero_or_none(A):
    """A, or None when every entry is zero (a sparse A without its stored zeros)."""
    if is_sparse(A):
        A = sparse.csr_array(A)
        A.eliminate_zeros()
        return None if A.nnz == 0 or abs(A).max() == 0.0 else A
    return A if np.any(A) else None


class BodyInvariants(Fields):
    """Assembled constant inertia integrals (global DOFs, or free DOFs after ``reduce``).

    The matrices are CSR arrays, or dense ndarrays for a small model (a dense `Assembler`); every
    method keeps the format it was given.  ``M`` int rho N^T N dV; ``S`` {(a, b): S[a, b]}, the
    nonzero shape integrals; ``m_O`` (3, n) int rho N dV; ``d`` (3, 3, n), d[a, b] =
    int rho N_a^T x_b dV; ``mass``; ``s`` (3,) int rho x dV; ``J`` (3, 3) int rho x x^T dV.
    Computed from them (``_derived``): ``G``, the G_i (None where identically zero), and ``g``
    (3, n).  A mutable `flexmbs.frozen.Fields`.
    """

    _derived = ("G", "g")

    def __init__(self, M: sparse.csr_array, S: dict[tuple[int, int], sparse.csr_array], m_O: np.ndarray,
                 d: np.ndarray, mass: float, s: np.ndarray, J: np.ndarray):
        self._set_fields(locals())
        self.G = []
        for et in _E_TILDE:
            terms = [et[a, b] * Sab for (a, b), Sab in self.S.items() if et[a, b] != 0.0]
            self.G.append(_nonzero_or_none(sum(terms[1:], terms[0])) if terms else None)
        self.g = np.einsum("iab,abn->in", np.array(_E_TILDE), self.d)

    @property
    def n(self) -> int:
        return self.M.shape[0]

    def add_point_masses(self, dofs: np.ndarray, N: np.ndarray, x: np.ndarray, m: np.ndarray) -> "BodyInvariants":
        """Invariants with point masses added.

        ``dofs`` (k, d): the global DOFs of each mass's node; ``N`` (k, 3, d): the displacement
        of the point from those DOFs; ``x`` (k, 3) positions; ``m`` (k,) masses [kg].
        A point mass is a mass point: S[a, b] += m N_a^T N_b, d[a, b] += m N_a^T x_b, m_O += m N.
        """
        n, dense = self.n, not is_sparse(self.M)
        S = dict(self.S)
        rows = np.repeat(dofs, dofs.shape[1], axis=1).ravel()
        cols = np.tile(dofs, (1, dofs.shape[1])).ravel()
        for a in range(3):
            for b in range(3):
                local = m[:, None, None] * N[:, a, :, None] * N[:, b, None, :]
                if not np.any(local):
                    continue
                add = triplet_matrix(local, rows, cols, (n, n), dense)
                S[(a, b)] = add if (a, b) not in S else _csr_or_dense(S[(a, b)] + add)
        m_O, d = self.m_O.copy(), self.d.copy()
        for k in range(len(m)):
            m_O[:, dofs[k]] += m[k] * N[k]
            d[:, :, dofs[k]] += m[k] * N[k][:, None, :] * x[k][None, :, None]
        diag = [S[(a, a)] for a in range(3) if (a, a) in S]
        M = _csr_or_dense(sum(diag[1:], diag[0]))
        return BodyInvariants(M, S, m_O, d, self.mass + m.sum(), self.s + m @ x,
                              self.J + np.einsum("k,ka,kb->ab", m, x, x))

    def reduce(self, free: np.ndarray) -> "BodyInvariants":
        """The invariants restricted to the DOFs ``free`` (the others are held at zero)."""
        return BodyInvariants(restrict(self.M, free), {k: restrict(v, free) for k, v in self.S.items()},
                              self.m_O[:, free], self.d[:, :, free], self.mass, self.s, self.J)

    # -- the moving-frame matrices, for analysis and implicit methods ----------------------
    def G_of(self, omega) -> sparse.csr_array:
        """int rho N^T tilde(omega) N dV = sum_i omega_i G_i (the format of M)."""
        out = sparse.csr_array((self.n, self.n)) if is_sparse(self.M) else np.zeros((self.n, self.n))
        for w, Gi in zip(omega, self.G):
            if Gi is not None and w != 0.0:
                out = out + w * Gi
        return _csr_or_dense(out)

    def k_omega(self, omega) -> sparse.csr_array:
        """[k(omega)] = int rho N^T tilde(omega)^2 N dV (symmetric, negative semidefinite)."""
        omega = np.asarray(omega, dtype=float)
        out = -float(omega @ omega) * self.M
        for (a, b), Sab in self.S.items():
            if omega[a] * omega[b] != 0.0:
                out = out + omega[a] * omega[b] * Sab
        return _csr_or_dense(out)

    def k_eps(self, eps) -> sparse.csr_array:
        """[k(eps)] = int rho N^T tilde(eps) N dV (skew-symmetric)."""
        return self.G_of(eps)

    def c(self, omega) -> sparse.csr_array:
        """Coriolis matrix [c] = 2 int rho N^T tilde(omega) N dV (skew-symmetric)."""
        return 2.0 * self.G_of(omega)

    def q_omega(self, omega) -> np.ndarray:
        """{q^i(omega)} = int rho N^T tilde(omega)^2 x dV."""
        omega = np.asarray(omega, dtype=float)
        return (np.einsum("a,b,abn->n", omega, omega, self.d)
                - float(omega @ omega) * np.einsum("aan->n", self.d))

    def q_eps(self, eps) -> np.ndarray:
        """{q^i(eps)} = int rho N^T tilde(eps) x dV."""
        return np.asarray(eps, dtype=float) @ self.g


def assemble_invariants(element, X, cells, n_nodes: int, chunk: int = 50_000,
                        assembler: Assembler | None = None) -> BodyInvariants:
    """Assemble the inertia invariants of all cells of one element type.

    Elements are processed in chunks of ``chunk`` to bound the memory of the batched
    element arrays; within a chunk everything is vectorised.  Blocks S[a, b] that are one
    scalar node-level array placed in the DOF components (a, b) (Lagrange solids share one
    ``m_phi`` between all of them) are summed once on the node pattern of ``assembler``.
    """
    asm = Assembler(cells, n_nodes, element.dofs_per_node) if assembler is None else assembler
    n, dpn = asm.n_dofs, element.dofs_per_node
    nn = asm.cells.shape[1]
    S: dict[tuple[int, int], sparse.csr_array] = {}
    scalar: dict[tuple[int, int], np.ndarray] = {}
    m_O = np.zeros((3, n))
    d = np.zeros((3, 3, n))
    mass, s, J = 0.0, np.zeros(3), np.zeros((3, 3))
    node_rows = [np.arange(nn) * dpn + a for a in range(dpn)]
    for start in range(0, len(cells), chunk):
        sl = slice(start, start + chunk)
        edofs = asm.element_dofs[sl]
        ii = element.inertia_integrals(X[sl])
        done: dict[int, np.ndarray] = {}
        for block in ii.S:
            key = (block.a, block.b)
            placed = (block.local.shape[1:] == (nn, nn) and block.a < dpn and block.b < dpn
                      and np.array_equal(block.rows, node_rows[block.a])
                      and np.array_equal(block.cols, node_rows[block.b]))
            if placed:
                if id(block.local) not in done:
                    done[id(block.local)] = asm.scalar(block.local, start)
                data = done[id(block.local)]
                scalar[key] = data if key not in scalar else scalar[key] + data
                continue
            full = np.zeros((len(edofs), edofs.shape[1], edofs.shape[1]))
            full[:, block.rows[:, None], block.cols[None, :]] = block.local
            data = asm.block_data(full, np.arange(edofs.shape[1]), np.arange(edofs.shape[1]), start)
            A = asm.to_matrix(data, drop_zeros=True)
            S[key] = A if key not in S else _csr_or_dense(S[key] + A)
        for a in range(3):
            m_O[a] += np.bincount(edofs.ravel(), weights=ii.m_O[:, a].ravel(), minlength=n)
            for b in range(3):
                if np.any(ii.d[:, a, b]):
                    d[a, b] += np.bincount(edofs.ravel(), weights=ii.d[:, a, b].ravel(), minlength=n)
        mass += ii.mass.sum()
        s += ii.s.sum(axis=0)
        J += ii.J.sum(axis=0)
    for key, data in scalar.items():
        A = asm.place(data, *key)
        S[key] = A if key not in S else _csr_or_dense(S[key] + A)
    diag = [S[(a, a)] for a in range(3) if (a, a) in S]
    M = _csr_or_dense(sum(diag[1:], diag[0]))
    return BodyInvariants(M, {k: _csr_or_dense(v) for k, v in S.items()}, m_O, d, mass, s, J)
