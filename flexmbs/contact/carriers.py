"""The bodies that carry contact shapes, evaluated all at once on their stacked coordinates.

A contact element sees its bodies' coordinates stacked, q = (q_1, ..., q_B) (the order of
``Contact.bodies``).  Three kinds of body are evaluated vectorised, with no loop over bodies:

.. code:: text

    frame   (RigidBodyEP, FlexibleBody)  q_b = (R, p, ...):  r = R + A(p) (y0 + Phi q_b[cols])
            dr/dq_b = [I, d(A y)/dp, A Phi]  at y = A^T (r - R)        (y0, cols, Phi: `frame_marker`)
    planar  (RigidBody2D)                 q_b = (x, y, theta): r = R + A(theta) y
            dr/dq_b = [I, e_z x (r - R)]
    point   (PointMass)                   q_b = r:            dr/dq_b = I

and the ground (index B) does not move.  A contact point r of a body is a material point there
(its velocity J v_b, its generalized force J^T F), so the Jacobian is taken at r itself; only the
nodes of a flexible body carry ``Phi`` (their deformation).
"""
from __future__ import annotations

import numpy as np

from ..rotations import ep_to_matrix, ep_vector_jacobian

__all__ = ["Carriers", "FRAME", "PLANAR", "POINT", "GROUND"]

FRAME, PLANAR, POINT, GROUND = 0, 1, 2, 3


def body_kind(body, dim: int) -> int:
    """FRAME, PLANAR or POINT of a body; ValueError naming the body kinds contact takes otherwise."""
    from ..bodies.planar import RigidBody2D
    from ..bodies.point import PointMass
    if isinstance(body, RigidBody2D):
        return PLANAR
    if isinstance(body, PointMass):
        return POINT
    if dim == 3 and hasattr(body, "frame_marker") and body.n_q >= 7:
        return FRAME
    raise ValueError(f"Contact: body {body.name!r} is a {type(body).__name__}; contact shapes ride on "
                     "RigidBodyEP, FlexibleBody, RigidBody2D and PointMass bodies (whose points the contact "
                     "evaluates all at once)")


class Carriers:
    """The frames and point Jacobians of the bodies ``bodies`` (module docstring); index len(bodies)
    is the ground."""

    def __init__(self, bodies, dim: int):
        self.dim = dim
        self.bodies = list(bodies)
        self.kind = np.array([body_kind(b, dim) for b in self.bodies] + [GROUND], dtype=int)
        sizes = np.array([b.n_q for b in self.bodies], dtype=int)
        self.start = np.concatenate([[0], np.cumsum(sizes)]).astype(int)     # start[B] = n_q of the stack
        self.n_q = int(self.start[-1])
        self.mass = np.array([float(getattr(b, "mass", np.nan)) for b in self.bodies] + [np.inf])
        self.width = {FRAME: 7, PLANAR: 3, POINT: dim, GROUND: 0}
        self._of = {k: np.flatnonzero(self.kind == k) for k in (FRAME, PLANAR, POINT)}
        self._eye = np.eye(dim)
        self._kinds = [(code, width) for code, width in ((FRAME, 7), (PLANAR, 3), (POINT, dim))
                       if self._of[code].size]

    def frames(self, q) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(R (B+1, dim), A (B+1, dim, dim), p (B+1, 4)) of every body at the stacked q (n_q,) (the ground:
        0, I); at the rows of q (n_t, n_q) (a block of outputs) the frames of all rows, (n_t (B+1), ...):
        body b of row k at index k (B+1) + b (`body_of`)."""
        d, B = self.dim, len(self.bodies)
        Q = np.asarray(q, dtype=float).reshape(-1, self.n_q)
        n_t = len(Q)
        R, p = np.zeros((n_t, B + 1, d)), np.zeros((n_t, B + 1, 4))
        A = np.broadcast_to(np.eye(d), (n_t, B + 1, d, d)).copy()
        f = self._of[FRAME]
        if f.size:
            s = self.start[f]
            R[:, f] = Q[:, s[:, None] + np.arange(3)]
            p[:, f] = Q[:, s[:, None] + np.arange(3, 7)]
            A[:, f] = ep_to_matrix(p[:, f].reshape(-1, 4)).reshape(n_t, len(f), 3, 3)
        f = self._of[PLANAR]
        if f.size:
            s = self.start[f]
            R[:, f] = Q[:, s[:, None] + np.arange(2)]
            c, sn = np.cos(Q[:, s + 2]), np.sin(Q[:, s + 2])
            A[:, f] = np.stack([np.stack([c, -sn], -1), np.stack([sn, c], -1)], -2)
        f = self._of[POINT]
        if f.size:
            s = self.start[f]
            R[:, f] = Q[:, s[:, None] + np.arange(d)]
        return R.reshape(-1, d), A.reshape(-1, d, d), p.reshape(-1, 4)

    def body_of(self, index) -> tuple[np.ndarray, np.ndarray]:
        """(body b, row k) of the indices k (B+1) + b into the frames of a block of rows (`frames`); (index, 0)
        for one state."""
        row, body = np.divmod(index, len(self.bodies) + 1)
        return body, row

    def points(self, frames, body, y) -> np.ndarray:
        """r = R_b + A_b y (k, dim) of body-frame points y (k, dim) of bodies ``body`` (k,)."""
        R, A, _ = frames
        return R[body] + np.einsum("kij,kj->ki", A[body], y)

    def jacobians(self, frames, body, r, node_cols=None, node_phi=None) -> tuple[np.ndarray, np.ndarray]:
        """(cols (k, m), J (k, dim, m)): dr/dq of the material points at r (k, dim) of bodies ``body``
        (k,), over the columns ``cols`` of the stacked q (unused columns: index 0 with J = 0).
        ``node_cols`` (k, w), ``node_phi`` (k, 3, w): the flexible nodes' deformation columns (body
        offsets) and Phi (zero for the others).  With the frames of a block of rows, ``body`` holds the
        indices k (B+1) + b (`body_of`) and ``cols`` index the rows' coordinates stacked, q (n_t n_q,)."""
        R, A, p = frames
        d, k = self.dim, len(body)
        w = 0 if node_cols is None else node_cols.shape[1]
        m = max(self.width[FRAME] + w if self._of[FRAME].size else 0, 3 if self._of[PLANAR].size else 0, d)
        cols, J = np.zeros((k, m), dtype=int), np.zeros((k, d, m))
        b_of, row = self.body_of(body)
        kind = self.kind[b_of]
        start = self.start[b_of] + row * self.n_q
        for code, width in self._kinds:                 # the kinds present: at most three
            i = np.flatnonzero(kind == code) if len(self._kinds) > 1 or (b_of == len(self.bodies)).any() \
                else np.arange(k)
            if not i.size:
                continue
            cols[i, :width] = start[i, None] + np.arange(width)
            J[i, :, :d] = self._eye
            if code == FRAME:
                b = body[i]
                y = np.einsum("kji,kj->ki", A[b], r[i] - R[b])                 # A^T (r - R)
                J[i, :, 3:7] = ep_vector_jacobian(p[b], y)
                if w:
                    cols[i, 7:7 + w] = start[i, None] + node_cols[i]
                    J[i, :, 7:7 + w] = np.einsum("kij,kjw->kiw", A[b], node_phi[i])
            elif code == PLANAR:
                rel = r[i] - R[body[i]]
                J[i, 0, 2], J[i, 1, 2] = -rel[:, 1], rel[:, 0]
        return cols, J
