"""The mass matrix of a System as what it is: block diagonal over the bodies.

.. code:: text

    M = diag(M_1, ..., M_n_b)            M_b (n_q,b x n_q,b): body b's own mass matrix

Bodies couple only through constraints and forces, so M^-1 Q is one small solve per body, and the
bodies of one kind (point masses, rigid bodies in Euler parameters, planar bodies) are stacked:
a group holds its blocks as one array (n_g, n_b, n_b) and is solved in one batched call, without a
Python loop over bodies.  Constant groups keep their inverse (diagonal blocks, e.g. m I of point
masses: the reciprocal of the diagonal, so that M^-1 Q is a product).  The augmented formulation
uses it through `flexmbs.formulations.augmented.solve_block_saddle_point` (docs/design.md,
"Block-diagonal mass").
"""
from __future__ import annotations

import numpy as np

from .frozen import FrozenFields
from .lazy import LazyModule

sparse = LazyModule("scipy.sparse")

__all__ = ["MassGroup", "BlockMass", "constant_inverse"]


class MassGroup(FrozenFields):
    """Bodies of one kind: ``idx`` (n_g, n_b) their coordinates in q, ``blocks`` (n_g, n_b, n_b) their
    mass matrices, ``names`` (n_g,) their bodies' names (for messages), ``inverse`` the constant
    inverse when the blocks are constant (`constant_inverse`; None: solved at each call).  Frozen."""

    def __init__(self, idx: np.ndarray, blocks: np.ndarray, names: tuple, inverse: np.ndarray | None = None):
        self._set_fields(locals())


def constant_inverse(blocks: np.ndarray) -> np.ndarray | None:
    """The inverse of constant blocks (n_g, n_b, n_b), kept for every solve: their diagonals' reciprocals
    (n_g, n_b) when every block is diagonal (m I of point masses), else the inverse blocks
    (n_g, n_b, n_b); None when a block is singular (`BlockMass.solve` then names its body)."""
    diag = np.diagonal(blocks, axis1=1, axis2=2)
    if np.array_equal(blocks, diag[:, :, None] * np.eye(blocks.shape[1])):
        return 1.0 / diag if np.all(diag != 0.0) else None
    try:
        return np.linalg.inv(blocks)
    except np.linalg.LinAlgError:
        return None


class BlockMass(FrozenFields):
    """M (n, n) = diag over ``groups`` (a tuple of `MassGroup`); every coordinate in exactly one group.  Frozen."""

    def __init__(self, n: int, groups: tuple):
        self._set_fields(locals())

    def dense(self) -> np.ndarray:
        """M as a dense (n, n) array (for comparisons; the solves never form it)."""
        M = np.zeros((self.n, self.n))
        for g in self.groups:
            M[g.idx[:, :, None], g.idx[:, None, :]] = g.blocks
        return M

    def sparse_triplets(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, cols, values) of the blocks' entries, each (sum over groups of n_g n_b^2,)."""
        rows = [np.broadcast_to(g.idx[:, :, None], g.blocks.shape).ravel() for g in self.groups]
        cols = [np.broadcast_to(g.idx[:, None, :], g.blocks.shape).ravel() for g in self.groups]
        return (np.concatenate(rows), np.concatenate(cols),
                np.concatenate([np.asarray(g.blocks, dtype=float).ravel() for g in self.groups]))

    def solve(self, b: np.ndarray) -> np.ndarray:
        """M^-1 b for b (n,): per group x[idx] = M_g^-1 b[idx], batched over the group's bodies.

        Raises `numpy.linalg.LinAlgError` naming the body whose block is singular (an ArithmeticError of
        the run: the integrators stop with status "failed" and keep the outputs so far)."""
        x = np.empty(self.n)
        for g in self.groups:
            bg = b[g.idx]
            if g.inverse is not None:
                x[g.idx] = g.inverse * bg if g.inverse.ndim == 2 else np.einsum("gij,gj->gi", g.inverse, bg)
                continue
            try:
                x[g.idx] = np.linalg.solve(g.blocks, bg[:, :, None])[:, :, 0]
            except np.linalg.LinAlgError:
                raise np.linalg.LinAlgError(self._singular_message(g)) from None
        return x

    @staticmethod
    def _singular_message(g: MassGroup) -> str:
        """Which bodies' mass blocks are singular, and what to change."""
        det = np.linalg.det(g.blocks)
        bad = [g.names[k] for k in np.flatnonzero(~(np.abs(det) > 0.0))] or list(g.names)
        return (f"the mass matrix of body {', '.join(repr(n) for n in bad[:5])}{' ...' if len(bad) > 5 else ''} "
                "is singular and no constraint takes its null space out (M q'' = Q has no unique solution): "
                "give the body a positive mass and inertia (every coordinate must carry inertia), or constrain its "
                "massless coordinates")
