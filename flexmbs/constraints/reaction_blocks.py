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

and the least-squares solutions of all outputs are one batched QR per body (`least_squares`).
`unstacked_reason` is the one place that says which constraints are not stacked, and why.
"""
from __future__ import annotations

import numpy as np

from ..rotations import ep_E, ep_to_matrix
from .base import Constraint, Ground, force_and_torque
from .batch import JointBatch, _Markers, evaluated_by_batch
from .joints import Joint

__all__ = ["ReactionBlocks", "unstacked_reason", "least_squares"]

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
        self.joints = JointBatch(self.constraints, starts, rows, n_q, first, 3)
        self.own_rows = [slice(r, r + c.n_c) for r, c in zip(rows, self.constraints)]
        self.markers = _Markers(3, n_q)
        self.point = [[self.markers.add(Ground(3) if b is None else b, start, s, False)
                       for b, start, s in zip(c.bodies, st, c.s)] for c, st in zip(self.constraints, starts)]
        self.markers.build()
        self.bodies = list({id(b): b for c in self.constraints for b in c.bodies if b is not None}.values())

    def body_columns(self, t0, q) -> dict:
        """{body name: [J_theta^T, C_int,q^T] (n_t, n_q_b, 3 + n_int)}: the columns of B_b that are the same
        for every joint on the body, at q (n_t, n_q) (`torque_and_internal_columns`, stacked)."""
        out = {}
        for b in self.bodies:
            qb = q[:, self.system.slice(b)]
            internal = b.internal_constraints()
            cols = np.zeros((len(q), b.n_q, 3 + sum(c.n_c for c in internal)))
            cols[:, 3:7, :3] = 2.0 * np.swapaxes(ep_E(qb[:, 3:7]), 1, 2)
            first = 3
            for c in internal:
                # the batch evaluator of stacked bodies, here one body stacked over the outputs; a constant
                # C_q (mean-axis conditions) comes back once, (1, n_c, width), and is broadcast
                width = min(getattr(type(c), "batch_columns", b.n_q), b.n_q)
                Cq = np.broadcast_to(type(c).batch([c]).jacobian(t0, qb[:, :width]), (len(q), c.n_c, width))
                cols[:, :width, first:first + c.n_c] = np.swapaxes(Cq, 1, 2)
                first += c.n_c
            out[b.name] = cols
        return out

    def evaluate(self, t, q, lam) -> dict:
        """`flexmbs.System.reaction_history`'s entries of these joints at t (n_t,), q (n_t, n_q) and the
        system's multipliers lam (n_t, n_c)."""
        n_t = len(t)
        tail = JointBatch.extend(np.zeros(0))                  # the ground's constant coordinates
        QE = np.concatenate((q, np.broadcast_to(tail, (n_t, len(tail)))), axis=1)
        Cq = self.joints.jacobian_history(t, QE)
        r, J = self.markers.evaluate_stacked(QE)
        shared = self.body_columns(float(t[0]), q)
        cols = self.markers.cols
        out = {}
        for c, own, marks in zip(self.constraints, self.own_rows, self.point):
            # the generalized constraint force -C_q^T lam of this joint, all coordinates
            Q = -np.einsum("tcq,tc->tq", Cq[:, own], lam[:, self.system.rows(c)])
            side = c.bodies[0]
            if side is None:
                R = np.repeat(c.R[0][None], n_t, axis=0)
            else:
                R = ep_to_matrix(q[:, self.system.slice(side)][:, 3:7]) @ c.R[0]
            bodies = {}
            for b, k in zip(c.bodies, marks):
                if b is None:
                    continue
                sl = self.system.slice(b)
                local = cols[k] - sl.start
                keep = (local >= 0) & (local < b.n_q)
                rest = shared[b.name]
                B = np.zeros((n_t, b.n_q, 3 + rest.shape[2]))
                B[:, local[keep], :3] = np.swapaxes(J[:, k][:, :, keep], 1, 2)        # J_P(s_b)^T
                B[:, :, 3:] = rest
                bodies[b.name] = force_and_torque(least_squares(B, Q[:, sl]), R, 3)
            out[c.name] = {"origin": r[:, marks[0]], "rotation": R, "bodies": bodies}
        return out
