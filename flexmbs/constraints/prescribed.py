"""PrescribedFrame: a body's reference frame (R, p) driven along a `FrameMotion`.

For a body whose coordinates start with R (3, global origin) and Euler parameters p (4), e.g.
`RigidBodyEP` or `FlexibleBody`, and a motion giving at time t the rotation A_f(t), the origin
r_O(t), v_O(t), a_O(t) and the body-frame omega(t), eps(t) (`flexmbs.motion.FrameState`):

.. code:: text

    p_f = EP(A_f),   p_f' = 1/2 G(p_f)^T omega,   p_f'' = 1/2 (G(p_f')^T omega + G(p_f)^T eps)

    C   = [R - r_O(t);  G(p_f(t)) p]                      (6 rows)
    C_q = [[I, 0], [0, G(p_f)]]                           (zero on every other coordinate)
    C_t = [-v_O;  G(p_f') p]
    gamma = [a_O;  -2 G(p_f') p' - G(p_f'') p]

G(p_f) p is the vector part of the relative rotation p_f^* p, zero when p = +-p_f; with the
body's normalisation p.p = 1 the seven equations fix (R, p) (the derivatives of p_f follow
from omega_body = 2 G(p) p' with G G^T = I and G p = 0).  G is linear in its argument, so
C_q does not depend on q, (C_q q')_q = 0 and C_qt = [[0, 0], [0, G(p_f')]].

Reactions: the generalized force of the multipliers on (R, p) is -(lam_R, G(p_f)^T lam_r);
the force on the frame's origin is F = -lam_R (global), and the torque about it,
from Q_p = 2 G(p)^T T_body, is T_body = -1/2 G(p) G(p_f)^T lam_r (= -lam_r / 2 at p = p_f).
"""
from __future__ import annotations

import numpy as np

from ..motion import FrameMotion
from ..rotations import ep_G, matrix_to_ep
from .base import Constraint

__all__ = ["PrescribedFrame"]


class PrescribedFrame(Constraint):
    """Drives coordinates 0..6 (R, p) of ``body`` along ``motion`` (6 equations).

    Parameters
    ----------
    body : Body
        A body whose q starts with (R, p): `RigidBodyEP`, `FlexibleBody`.
    motion : flexmbs.motion.FrameMotion
    name : str, optional
    """

    n_c = 6
    rheonomic = True

    def __init__(self, body, motion: FrameMotion, name: str | None = None):
        if not isinstance(motion, FrameMotion):
            raise TypeError(f"`motion` must be a flexmbs.motion.FrameMotion, got {type(motion).__name__}")
        if getattr(body, "dim", None) != 3 or getattr(body, "n_q", 0) < 7:
            raise ValueError(f"PrescribedFrame needs a 3D body with coordinates (R, p, ...) (n_q >= 7), got "
                             f"{body!r}")
        self.bodies = (body,)
        self.motion = motion
        self.name = f"{body.name}.prescribed_frame" if name is None else name
        self._last = self._cache = None

    def reference(self, t):
        """(FrameState, p_f, p_f', p_f'') at t; p_f keeps the sign of the previous call's."""
        if self._cache is not None and self._cache[0] == t:
            return self._cache[1]
        fs = self.motion.state(t)
        p = matrix_to_ep(fs.R)
        if self._last is not None and p @ self._last < 0.0:
            p = -p                                        # the continuous branch of p_f(t)
        self._last = p
        Gp = ep_G(p)
        pd = 0.5 * Gp.T @ fs.omega
        pdd = 0.5 * (ep_G(pd).T @ fs.omega + Gp.T @ fs.eps)
        self._cache = (t, (fs, p, pd, pdd))
        return fs, p, pd, pdd

    def residual(self, t, qs) -> np.ndarray:
        q = qs[0]
        fs, p, _, _ = self.reference(t)
        return np.concatenate([q[:3] - fs.r_O, ep_G(p) @ q[3:7]])

    def jacobian(self, t, qs) -> list:
        _, p, _, _ = self.reference(t)
        J = np.zeros((6, len(qs[0])))
        J[:3, :3] = np.eye(3)
        J[3:, 3:7] = ep_G(p)
        return [J]

    def time_derivative(self, t, qs) -> np.ndarray:
        fs, _, pd, _ = self.reference(t)
        return np.concatenate([-fs.v_O, ep_G(pd) @ qs[0][3:7]])

    def gamma(self, t, qs, vs) -> np.ndarray:
        fs, _, pd, pdd = self.reference(t)
        q, v = qs[0], vs[0]
        return np.concatenate([fs.a_O, -2.0 * ep_G(pd) @ v[3:7] - ep_G(pdd) @ q[3:7]])

    def frame_loads(self, t, qs, lam) -> tuple[np.ndarray, np.ndarray]:
        """(force on the frame's origin, global; torque about it, body components) from lam."""
        _, p, _, _ = self.reference(t)
        lam = np.asarray(lam, dtype=float)
        return -lam[:3], -0.5 * ep_G(qs[0][3:7]) @ ep_G(p).T @ lam[3:]
