"""The mass points of a whole body: where its mass sits and how they move with the free DOFs.

Every element integrates its inertia over a set of mass points (``Element.mass_points``:
position x, weight rho dV, displacement interpolation N), and a model's point masses are
mass points of their own.  Gathered over the body and restricted to the free DOFs:

.. code:: text

    u_p = Phi_p delta          (3 x n block p of the sparse (3 n_p, n) matrix Phi)
    y_p = x_p + Phi_p delta     position of mass point p in the body frame

so that every inertia integral is a sum over points, e.g. [m] = Phi^T diag(m_p) Phi, and
the acceleration of each point is one sparse product away (``formulations.gibbs_appell``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .assembler import Assembler
from ..lazy import LazyModule

sparse = LazyModule("scipy.sparse")

__all__ = ["BodyMassPoints", "body_mass_points"]


@dataclass(frozen=True)
class BodyMassPoints:
    """All mass points of a body (free DOFs only).

    ``Phi`` (3 n_p, n) CSR: row 3 p + a is the displacement component a of point p per DOF;
    ``x`` (n_p, 3): undeformed positions in the body frame; ``m`` (n_p,): masses [kg].
    ``dense``: the products use dense copies of Phi and Phi^T (small bodies: faster).
    """

    Phi: sparse.csr_array
    x: np.ndarray
    m: np.ndarray
    dense: bool = False

    def __post_init__(self):
        op = (lambda A: A.toarray()) if self.dense else sparse.csr_array  # noqa: E731
        object.__setattr__(self, "_Phi", op(self.Phi))
        object.__setattr__(self, "_PhiT", op(self.Phi.T))

    @property
    def n_points(self) -> int:
        return len(self.m)

    def displacements(self, *vectors) -> list[np.ndarray]:
        """Point vectors (n_p, 3) = Phi v for each DOF vector v, with one sparse product."""
        V = np.column_stack(vectors)
        U = self._Phi @ V
        return [U[:, k].reshape(-1, 3) for k in range(V.shape[1])]

    def generalized(self, forces: np.ndarray) -> np.ndarray:
        """Generalized force Phi^T f of point forces f (n_p, 3)."""
        return self._PhiT @ forces.reshape(-1)


def body_mass_points(model, dense: bool | None = None) -> BodyMassPoints:
    """Mass points of ``model`` (a `flexmbs.Model`, or a ReducedModel: Phi times its basis): its
    elements' and its point masses.

    ``dense``: keep dense copies of Phi for the products (default: as the model, ``model.dense``).
    """
    el = model.element
    pts = el.mass_points(model.X)
    n_el, n_q = pts.w.shape
    asm = Assembler(model.cells, model.mesh.n_nodes, el.dofs_per_node)
    n_free = len(model.free)                         # the mesh's free DOFs (a ReducedModel's: its full model's)
    to_free = np.full(model.n_full, -1, dtype=np.int64)
    to_free[model.free] = np.arange(n_free)
    # element e, point q, component a, element DOF j  ->  row 3 (e n_q + q) + a, column free(edof[e, j])
    rows = (3 * np.arange(n_el * n_q).reshape(n_el, n_q, 1, 1) + np.arange(3).reshape(1, 1, 3, 1))
    cols = to_free[asm.element_dofs][:, None, None, :]
    vals = pts.N
    rows, cols = np.broadcast_arrays(rows, cols, vals)[:2]
    keep = (cols >= 0) & (vals != 0.0)
    R, C, V = [rows[keep]], [cols[keep]], [vals[keep]]
    x, m = [pts.x.reshape(-1, 3)], [pts.w.reshape(-1)]
    extra = getattr(model, "point_mass_data", None)
    if extra is not None:                            # point masses: (dofs, N, x, m), full DOFs
        dofs, N, xp, mp = extra
        base = n_el * n_q
        r = 3 * (base + np.arange(len(mp))).reshape(-1, 1, 1) + np.arange(3).reshape(1, 3, 1)
        c = to_free[dofs][:, None, :]
        r, c = np.broadcast_arrays(r, c, N)[:2]
        k = (c >= 0) & (N != 0.0)
        R.append(r[k])
        C.append(c[k])
        V.append(N[k])
        x.append(np.asarray(xp, dtype=float))
        m.append(np.asarray(mp, dtype=float))
    x, m = np.concatenate(x), np.concatenate(m)
    Phi = sparse.csr_array(sparse.coo_array((np.concatenate(V), (np.concatenate(R), np.concatenate(C))),
                                            shape=(3 * len(m), n_free)))
    if model.basis is not None:                      # a ReducedModel: the points move with delta = basis q
        Phi = sparse.csr_array(Phi @ model.basis)
    return BodyMassPoints(Phi, x, m, model.dense if dense is None else bool(dense))
