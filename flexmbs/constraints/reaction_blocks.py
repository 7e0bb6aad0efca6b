"""Joint reactions at many outputs at once (`flexmbs.System.reaction_history`).

At output k, the generalized force of constraint c on body b is Q_b = -C_q,c,b^T lam_c, written
as a force F at the body's reaction point s_b, a torque T and the body's internal-constraint
forces mu (`Constraint.reaction`):

.. code:: text

    Q_b = B_b [F; T; mu],    B_b = [J_P(s_b)^T, J_theta^T, C_int,q^T]    (n_q_b x (6 + n_int))
    [F; T; mu] = B_b^+ Q_b   (least squares)

For the joints of primitives (`flexmbs.constraints.batch.JointBatch`) between frame bodies
(coordinates (R, p, ...), points r = R + A(p) (y0 + Phi q[e]): ``frame_marker``, as `RigidBodyEP`
and `FlexibleBody`) and the ground, in 3D, every block has a leading axis of outputs:

.. code:: text

    C_q,c       JointBatch.jacobian_history (the chosen joints' rows only)
    J_P(s_b)    [I, V(p, y), A(p) Phi] of the stacked frame markers
    J_theta^T   (0, 2 E(p)^T, 0): the virtual work T . dtheta with dtheta = 2 E(p) dp (`RigidBodyEP.torque`)
    C_int,q     each internal constraint's ``batch`` evaluator on the body's q stacked over outputs
                (the batched one-body constraints are scleronomic: `flexmbs.System.time_derivative`)
    frame       origin r_i(s_i), rotation A(p_i) R_i of side i (`Joint.frame`)

The joints stacked here (`unstacked_reason`) act at their reaction points: their point rows take the
markers s_b and their direction rows the frame's directions (no elastic columns), so Q_b lies in the
range of B_b and x is the solution of any rows of B_b of full column rank.  For a body whose only
internal constraint is the Euler-parameter norm (C_int,q = (0, 2 p^T, 0): `RigidBodyEP`, a
`FlexibleBody` on its tangent frame) the rows of R and p give it in closed form (`frame_reaction`):

.. code:: text

    rows R:  Q_R = F                                   (J_P's R columns: I; J_theta, C_int: 0)
    rows p:  Q_p = V(p, y_s)^T F + 2 E(p)^T T + 2 p mu
    with E p = 0 and E E^T = |p|^2 I:  T = E w / (2 |p|^2),  mu = p . w / (2 |p|^2),  w = Q_p - V^T F

(w is inverted exactly; the least squares of the rows of R, p and e gives the same x to round-off).
The other bodies (mean-axis conditions among their internal constraints, or |p|^2 <= `QR_RTOL`) take
the least-squares solution of all outputs by one batched QR per body (`least_squares`).
`unstacked_reason` is the one place that says which constraints are not stacked, and why.
"""
from __future__ import annotations

import numpy as np

from ..rotations import ep_E, ep_to_matrix
from .base import Constraint, force_and_torque
from .batch import JointBatch, evaluated_by_batch
from .joints import Joint

__all__ = ["ReactionBlocks", "unstacked_reason", "least_squares", "frame_reaction", "norm_only"]

# a stacked QR solve is taken where min |R_kk| > QR_RTOL max |R_kk| (B_b well conditioned: its
# solution equals the pseudo-inverse's to ~cond(B_b) eps); the other outputs get the pseudo-inverse
QR_RTOL = 1e-8


def unstacked_reason(constraint) -> str | None:
    """Why `ReactionBlocks` cannot stack the reaction blocks of ``constraint`` over outputs, or None if
    it can.  Such a constraint's reactions are computed one output at a time (`Constraint.reaction_basis`
    and one C_q per output), and `flexmbs.System.reaction_history` warns, naming it and this reason."""
    kind = type(constraint)
    if not evaluated_by_batch(constraint):
        return f"{kind.__name__} is not a joint of primitives (its C_q comes from its own `jacobian`)"
    if (kind.frame is not Joint.frame or kind.reaction_points is not Joint.reaction_points
            or kind.reaction_basis is not Constraint.reaction_basis):
        return f"{kind.__name__} defines its own frame, reaction points or reaction basis"
    if constraint.dim != 3:
        return "it is a 2D joint (the stacked markers are those of 3D frame bodies)"
    for b in constraint.bodies:
        if b is None:
            continue
        if not hasattr(b, "frame_marker"):
            return (f"body {b.name!r} ({type(b).__name__}) has no frame markers (q = (R, p, ...), "
                    "points R + A(p) (y0 + Phi q[e]))")
        for c in b.internal_constraints():
            if "batch" not in type(c).__dict__:
                return f"the internal constraint {c.name!r} of body {b.name!r} has no `batch` evaluator"
    return None


def least_squares(B, Q) -> np.ndarray:
    """x (n_t, k) minimising |B x - Q| per output: B (n_t, m, k), Q (n_t, m).

    A square B (m = k: a rigid body's 7 coordinates against [F; T; mu], 3 + 3 + 1) is solved exactly,
    x = B^-1 Q (`square_solve`), where its condition number is below 1 / `QR_RTOL`.  Otherwise one
    batched QR, B = U R and x = R^-1 U^T Q, where B is well conditioned (`QR_RTOL`); elsewhere the
    pseudo-inverse with lstsq's cut-off eps max(m, k) s_max (`Constraint.reaction`), the minimum-norm
    solution of a rank-deficient B."""
    x = np.empty(B.shape[::2])
    good = np.zeros(len(B), dtype=bool)
    if B.shape[1] == B.shape[2]:
        good = square_solve(B, Q, x)
    if good.any() and not good.all():
        x[~good] = qr_least_squares(B[~good], Q[~good])
    elif not good.any():
        x[:] = qr_least_squares(B, Q)
    return x


def qr_least_squares(B, Q) -> np.ndarray:
    """`least_squares` by one batched QR (and the pseudo-inverse where R's diagonal says B is ill
    conditioned, `QR_RTOL`)."""
    U, R = np.linalg.qr(B)
    d = np.abs(np.diagonal(R, axis1=1, axis2=2))
    good = d.min(axis=1) > QR_RTOL * d.max(axis=1)
    x = np.empty(B.shape[::2])
    if good.any():
        x[good] = np.linalg.solve(R[good], np.einsum("tmk,tm->tk", U[good], Q[good])[..., None])[..., 0]
    if not good.all():
        cut = np.finfo(float).eps * max(B.shape[1:])
        x[~good] = np.einsum("tkm,tm->tk", np.linalg.pinv(B[~good], rcond=cut), Q[~good])
    return x


def square_solve(B, Q, x) -> np.ndarray:
    """Writes x = B^-1 Q into the rows of x (n_t, k) where the square B (n_t, k, k) has the condition
    number |B|_inf |B^-1|_inf < 1 / `QR_RTOL`; returns those rows (bool (n_t,)), none if some B is
    exactly singular.  One batched LU inverse: about a sixth of the time of numpy's QR per output
    for 7 x 7, the same solution to cond(B) eps."""
    try:
        inv = np.linalg.inv(B)
    except np.linalg.LinAlgError:
        return np.zeros(len(B), dtype=bool)
    cond = np.abs(B).sum(axis=2).max(axis=1) * np.abs(inv).sum(axis=2).max(axis=1)
    good = cond < 1.0 / QR_RTOL
    x[good] = np.einsum("tkm,tm->tk", inv[good], Q[good])
    return good


def norm_only(body) -> bool:
    """True for a body whose one internal constraint is the Euler-parameter norm (C_int,q = (0, 2 p^T, 0)):
    its stacked reactions take `frame_reaction`, the others `least_squares`."""
    from ..bodies.rigid import EulerParameterNorm
    internal = body.internal_constraints()
    return len(internal) == 1 and type(internal[0]) is EulerParameterNorm


def frame_reaction(Q, V, p) -> tuple[np.ndarray, np.ndarray]:
    """(x (..., 7), solved (...) bool): x = [F; T; mu] of Q_b = B_b x from the rows of R and p of a body
    whose one internal constraint is the Euler-parameter norm (module docstring):

    .. code:: text

        F = Q_R,   w = Q_p - V^T F,   T = E(p) w / (2 |p|^2),   mu = p . w / (2 |p|^2)

    Q (..., 7) the body's generalized constraint force on its columns R and p, V (..., 3, 4) = d(A(p) y_s)/dp
    at the reaction point, p (..., 4) the body's Euler parameters (any norm); the leading axes (outputs,
    and the (joint, body) pairs of `ReactionBlocks`) broadcast.  The [2 E^T, 2 p] block has the
    singular values 2 |p|: ``solved`` is False where |p|^2 <= `QR_RTOL` (there x is left to `least_squares`)."""
    n2 = 2.0 * np.einsum("...a,...a->...", p, p)
    solved = n2 > 2.0 * QR_RTOL
    scale = 1.0 / np.where(solved, n2, 1.0)
    F = Q[..., :3]
    w = Q[..., 3:7] - np.einsum("...ai,...a->...i", V, F)
    x = np.empty(Q.shape[:-1] + (7,))
    x[..., :3] = F
    x[..., 3:6] = np.einsum("...ij,...j->...i", ep_E(p), w) * scale[..., None]
    x[..., 6] = np.einsum("...a,...a->...", p, w) * scale
    return x, solved


class ReactionBlocks:
    """The reactions of some joints of a system at stacked outputs (module docstring).

    Parameters
    ----------
    system : flexmbs.System
    constraints : sequence of Joint
        Joints of ``system`` with ``unstacked_reason(c) is None`` (ValueError otherwise).
    """

    def __init__(self, system, constraints):
        bad = [f"{c.name!r}: {unstacked_reason(c)}" for c in constraints if unstacked_reason(c) is not None]
        if bad:
            raise ValueError("ReactionBlocks: `constraints` must be joints whose reactions can be stacked over "
                             f"outputs (`unstacked_reason` None), got {'; '.join(bad)}")
        self.system, self.constraints = system, list(constraints)
        n_q = system.n_q
        starts = [[None if b is None else system.slice(b).start for b in c.bodies] for c in self.constraints]
        rows, first = [], 0
        for c in self.constraints:
            rows.append(first)
            first += c.n_c
        # the joints' rows and their reaction points (`Joint.reaction_points`: the points s) on one set of markers
        self.joints = JointBatch(self.constraints, starts, rows, n_q, first, 3, reaction_points=True)
        # S[j, row] = 1 for the rows of joint j: -C_q^T lam of each joint is -(S * lam) C_q
        self.rows_of_joint = np.zeros((len(self.constraints), first))
        for j, (r0, c) in enumerate(zip(rows, self.constraints)):
            self.rows_of_joint[j, r0:r0 + c.n_c] = 1.0
        self.lam_rows = np.concatenate([np.arange(system.n_c)[system.rows(c)] for c in self.constraints])
        self.markers = self.joints.markers
        self.point = self.joints.reaction_markers
        # every (joint j, body b) pair with its reaction marker k: those of `norm_only` bodies stacked for one
        # `frame_reaction` (their joint, marker and the columns R, p of b), the others by `least_squares`
        self.pairs = [(j, b, k) for j, c in enumerate(self.constraints)
                      for b, k in zip(c.bodies, self.point[j]) if b is not None]
        self.closed = np.array([norm_only(b) for _, b, _ in self.pairs], dtype=bool)
        closed = [pair for pair, is_closed in zip(self.pairs, self.closed) if is_closed]
        self.closed_joint = np.array([j for j, _, _ in closed], dtype=np.int64)
        self.closed_marker = np.array([k for _, _, k in closed], dtype=np.int64)
        self.closed_cols = np.array([system.slice(b).start + np.arange(7) for _, b, _ in closed],
                                    dtype=np.int64).reshape(-1, 7)
        # their -C_q^T lam on the columns R, p from the rows' pieces (`JointBatch.row_jacobians`, (row, side)
        # flattened): ``closed_pieces`` [pair, piece] = 1 for the pieces of the pair's joint on its body, and
        # the multiplier of each piece
        row_joint = np.repeat(np.arange(len(self.constraints)), [c.n_c for c in self.constraints])[self.joints.rows]
        self.lam_of_piece = np.repeat(self.lam_rows[self.joints.rows], 2)
        self.closed_pieces = np.zeros((len(closed), len(self.joints.rows), 2))
        for m, (j, b, _) in enumerate(closed):
            for side, body in enumerate(self.constraints[j].bodies):
                if body is b:
                    self.closed_pieces[m, row_joint == j, side] = 1.0
        self.closed_pieces = self.closed_pieces.reshape(len(closed), 2 * len(self.joints.rows))
        # the frame of each joint: A(p_i) R_i on body i, R_i on the ground
        self.frame_body = np.array([c.bodies[0] is not None for c in self.constraints], dtype=bool)
        self.frame_p = np.array([system.slice(c.bodies[0]).start + np.arange(3, 7) for c in self.constraints
                                 if c.bodies[0] is not None], dtype=np.int64).reshape(-1, 4)
        self.frame_R = np.array([c.R[0] for c in self.constraints])

    def body_columns(self, t0, q, body) -> np.ndarray:
        """[J_theta^T, C_int,q^T] (n_t, n_q_b, 3 + n_int) of ``body``: the columns of B_b that are the same
        for every joint on the body, at q (n_t, n_q) (`torque_and_internal_columns`, stacked)."""
        qb = q[:, self.system.slice(body)]
        internal = body.internal_constraints()
        cols = np.zeros((len(q), body.n_q, 3 + sum(c.n_c for c in internal)))
        cols[:, 3:7, :3] = 2.0 * np.swapaxes(ep_E(qb[:, 3:7]), 1, 2)
        first = 3
        for c in internal:
            # the batch evaluator of stacked bodies, here one body stacked over the outputs; a constant
            # C_q (mean-axis conditions) comes back once, (1, n_c, width), and is broadcast
            width = min(getattr(type(c), "batch_columns", body.n_q), body.n_q)
            Cq = np.broadcast_to(type(c).batch([c]).jacobian(t0, qb[:, :width]), (len(q), c.n_c, width))
            cols[:, :width, first:first + c.n_c] = np.swapaxes(Cq, 1, 2)
            first += c.n_c
        return cols

    def basis(self, body, k, J, shared) -> np.ndarray:
        """B_b = [J_P(s_b)^T, J_theta^T, C_int,q^T] (n_t, n_q_b, 6 + n_int) of ``body`` at its reaction marker
        k, from the stacked marker Jacobians J (n_t, n_markers, 3, W) and its `body_columns` ``shared``."""
        sl = self.system.slice(body)
        local = self.markers.cols[k] - sl.start
        keep = (local >= 0) & (local < body.n_q)
        B = np.zeros((len(J), body.n_q, 3 + shared.shape[2]))
        B[:, local[keep], :3] = np.swapaxes(J[:, k][:, :, keep], 1, 2)        # J_P(s_b)^T
        B[:, :, 3:] = shared
        return B

    def frames(self, q) -> np.ndarray:
        """R (n_t, n_joints, 3, 3): each joint's rotation A(p_i) R_i (R_i on the ground) at q (n_t, n_q)."""
        R = np.repeat(self.frame_R[None], len(q), axis=0)
        if len(self.frame_p):
            R[:, self.frame_body] = ep_to_matrix(q[:, self.frame_p]) @ self.frame_R[self.frame_body]
        return R

    def joint_forces(self, t, QE, lam, markers, pieces) -> np.ndarray:
        """Q (n_t, n_joints, n_q): the generalized constraint force -C_q^T lam of each joint on all coordinates,
        from the joints' C_q (`JointBatch.jacobian_history` of the ``pieces`` already computed)."""
        Cq = self.joints.jacobian_history(t, QE, markers, pieces)
        return -(self.rows_of_joint * lam[:, None, self.lam_rows]) @ Cq

    def evaluate(self, t, q, lam) -> dict:
        """`flexmbs.System.reaction_history`'s entries of these joints at t (n_t,), q (n_t, n_q) and the
        system's multipliers lam (n_t, n_c): x = [F; T; mu] by one `frame_reaction` of all the (joint, body)
        pairs on `norm_only` bodies, the others (and the rows it leaves) by `least_squares` of the stacked
        B_b (`basis`)."""
        n_t = len(t)
        tail = JointBatch.extend(np.zeros(0))                  # the ground's constant coordinates
        QE = np.concatenate((q, np.broadcast_to(tail, (n_t, len(tail)))), axis=1)
        r, J = self.markers.evaluate_stacked(QE)
        P = self.joints.row_jacobians(t, QE, (r, J))                          # (n_t, n_rows, 2, W)
        Q = None
        if not self.closed.all():
            Q = self.joint_forces(t, QE, lam, (r, J), P)
        R = self.frames(q)
        # the pairs' -C_q^T lam on the columns R, p of their bodies, from the pieces alone
        Q_closed = -(self.closed_pieces * lam[:, None, self.lam_of_piece]) @ P[..., :7].reshape(n_t, -1, 7)
        x_closed, solved = frame_reaction(Q_closed, J[:, self.closed_marker, :, 3:7], q[:, self.closed_cols[:, 3:]])
        closed_entries = force_and_torque(x_closed, R[:, self.closed_joint], 3)
        out = [{"origin": r[:, marks[0]], "rotation": R[:, j], "bodies": {}} for j, marks in enumerate(self.point)]
        shared, m = {}, 0
        for (j, b, k), is_closed in zip(self.pairs, self.closed):
            if is_closed:
                x, rest = x_closed[:, m], ~solved[:, m]
                entry = {key: value[:, m] for key, value in closed_entries.items()}
                m += 1
            else:
                x = np.empty((n_t, 6 + sum(c.n_c for c in b.internal_constraints())))
                rest = np.ones(n_t, dtype=bool)
            if rest.any():
                if Q is None:
                    Q = self.joint_forces(t, QE, lam, (r, J), P)
                if b.name not in shared:
                    shared[b.name] = self.body_columns(float(t[0]), q, b)
                sl = self.system.slice(b)
                x[rest] = least_squares(self.basis(b, k, J[rest], shared[b.name][rest]), Q[rest, j, sl])
                entry = force_and_torque(x, R[:, j], 3)
            out[j]["bodies"][b.name] = entry
        return {c.name: entry for c, entry in zip(self.constraints, out)}
