"""The motion of the bodies' markers and frames at many rows at once, from the coordinates and
velocities Q, V (n_t, n_q of the body): the closed forms of the body kinds that have one (module
functions' docstrings), any other body through the body protocol (`flexmbs.bodies.base.Body`) one
row at a time.  Used by the works of a run: the force elements' measures
(`flexmbs.forces.ForceElement.measure_history`) and the bodies' loads' powers
(`flexmbs.bodies.loads`).
"""
from __future__ import annotations

import numpy as np

from ..rotations import ep_E, ep_to_matrix, ep_vector_jacobian
from .base import LinearInertia
from .planar import RigidBody2D
from .point import PointMass

__all__ = ["marker_motion", "rotation_history", "angular_velocity_history"]


def marker_motion(body, Q, V, marker, vector: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """(x (n_t, dim), x' (n_t, dim), or None when V is None): the global position r_P of the body point
    ``marker`` (with ``vector``: the global components A u of the body direction ``marker``) and its
    rate, at the rows of Q, V (n_t, n_q of ``body``), all rows at once for the bodies whose markers
    have a closed form over rows:

    .. code:: text

        ground (None, or n_q = 0: `Ground`) x = s (u),  x' = 0
        frame bodies (3D, frame_marker)  y = y0 + Phi q[cols],  r = R + A(p) y,
                                         r' = R' + V(p, y) p' + A(p) Phi q'[cols]     (V = d(A y)/dp)
                                         u: A(p) u,  V(p, u) p'     (RigidBodyEP, FlexibleBody)
        RigidBody2D, q = (x, y, theta)   r = (x, y) + R(theta) s,  r' = (x', y') + theta' R(theta) E s
                                         u: R(theta) u,  theta' R(theta) E u        (E s = (-s_y, s_x))
        points of `LinearInertia` bodies r = S q + r_0 with a constant S = point_jacobian,  r' = S q'
                                         (PointMass, RigidBodyNatural, CorotationalBeam2D nodes)

    and any other body (or direction) through the body protocol one row at a time, r = point(q, s),
    r' = point_jacobian(q, s) q'.  The same numbers as the protocol's, to round-off."""
    Q = np.asarray(Q, dtype=float)
    n_t = len(Q)
    if body is None or body.n_q == 0:
        x = np.broadcast_to(np.asarray(marker, dtype=float), (n_t, len(marker)))
        return x, None if V is None else np.zeros(x.shape)
    V = None if V is None else np.asarray(V, dtype=float)
    if n_t == 0:
        return np.zeros((0, body.dim)), None if V is None else np.zeros((0, body.dim))
    if body.dim == 3 and hasattr(body, "frame_marker"):
        return _frame_motion(body, Q, V, marker, vector)
    if isinstance(body, RigidBody2D):
        c, s = np.cos(Q[:, 2]), np.sin(Q[:, 2])
        m = np.asarray(marker, dtype=float)
        Rm = np.stack([c * m[0] - s * m[1], s * m[0] + c * m[1]], axis=1)          # R(theta) m
        x = Rm if vector else Q[:, :2] + Rm
        if V is None:
            return x, None
        turn = V[:, 2:3] * np.stack([-Rm[:, 1], Rm[:, 0]], axis=1)                 # theta' R E m = theta' e_z x R m
        return x, turn if vector else V[:, :2] + turn
    if isinstance(body, LinearInertia) and not vector:
        S = np.asarray(body.point_jacobian(Q[0], marker), dtype=float)
        r0 = np.asarray(body.point(Q[0], marker), dtype=float) - S @ Q[0]
        return Q @ S.T + r0, None if V is None else V @ S.T
    where = body.vector if vector else body.point
    jac = body.vector_jacobian if vector else body.point_jacobian
    x = np.array([where(q, marker) for q in Q], dtype=float).reshape(n_t, body.dim)
    if V is None:
        return x, None
    return x, np.array([jac(q, marker) @ v for q, v in zip(Q, V)], dtype=float).reshape(n_t, body.dim)


def _frame_motion(body, Q, V, marker, vector: bool):
    """`marker_motion` of a 3D body with ``frame_marker`` (q = (R, p, ...)): A(p) and V(p, y) of all
    rows at once (`flexmbs.rotations`)."""
    P = Q[:, 3:7]
    A = ep_to_matrix(P)                                                  # (n_t, 3, 3)
    if vector:
        u = np.asarray(marker, dtype=float)
        x = A @ u
        return x, None if V is None else (ep_vector_jacobian(P, np.broadcast_to(u, x.shape)) @ V[:, 3:7, None])[..., 0]
    y0, cols, Phi = body.frame_marker(marker)
    y = y0 + Q[:, cols] @ Phi.T if len(cols) else np.broadcast_to(np.asarray(y0, dtype=float), (len(Q), 3))
    x = Q[:, :3] + (A @ y[..., None])[..., 0]
    if V is None:
        return x, None
    xd = V[:, :3] + (ep_vector_jacobian(P, y) @ V[:, 3:7, None])[..., 0]
    if len(cols):
        xd += (A @ (V[:, cols] @ Phi.T)[..., None])[..., 0]
    return x, xd


def rotation_history(body, Q) -> np.ndarray:
    """A(q) (n_t, dim, dim), body -> global, at the rows of Q: its columns are the global components
    A e_k of the body's axes, `marker_motion` of the directions e_k (all rows at once for the frame
    bodies and planar rigid bodies); the identity for a point mass."""
    Q = np.asarray(Q, dtype=float)
    if isinstance(body, PointMass):
        return np.broadcast_to(np.eye(body.dim), (len(Q), body.dim, body.dim))
    return np.stack([marker_motion(body, Q, None, e, vector=True)[0] for e in np.eye(body.dim)], axis=-1)


def angular_velocity_history(body, Q, V) -> np.ndarray:
    """The global angular velocity at the rows of Q, V: (n_t, 3) in 3D, (n_t,) in 2D (a rate about the
    plane's normal), all rows at once for

    .. code:: text

        frame bodies (3D, frame_marker, q = (R, p, ...))  omega = 2 E(p) p'    (RigidBodyEP, FlexibleBody)
        RigidBody2D, q = (x, y, theta)                    omega = theta'
        PointMass                                         omega = 0

    and any other body through its ``angular_velocity(q, v)`` one row at a time.  These are the
    bodies' own formulas, so T . omega equals the power torque(q, T) . q' of a torque T to round-off."""
    Q, V = np.asarray(Q, dtype=float), np.asarray(V, dtype=float)
    shape = (len(Q), 3) if body.dim == 3 else (len(Q),)
    if body.dim == 3 and hasattr(body, "frame_marker"):
        return 2.0 * np.einsum("tij,tj->ti", ep_E(Q[:, 3:7]), V[:, 3:7])
    if isinstance(body, RigidBody2D):
        return V[:, 2].copy()
    if isinstance(body, PointMass):
        return np.zeros(shape)
    return np.array([body.angular_velocity(q, v) for q, v in zip(Q, V)], dtype=float).reshape(shape)
