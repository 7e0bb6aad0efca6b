"""Joints of planar (2D) models: revolute and prismatic (translational).

Distance (one row, dimension-free in principle) and point-on-line of
`flexmbs.constraints.joints` are written for 3D bodies; the planar models here need only
the revolute and the prismatic joint.

Written with the marker methods of the body protocol only (point, point_jacobian,
point_bias, vector, vector_jacobian, vector_bias), so they join any two bodies of dimension
2 (``None`` is the ground).  With P_k the joint point on body k and a_k a body-fixed unit
direction, E = [[0, -1], [1, 0]] and a x b = a_1 b_2 - a_2 b_1:

.. code:: text

    revolute      C = P_i - P_j                                   (2 rows)
                  C_q = [J_i, -J_j],  gamma = b_j - b_i           (b_k = point_bias: r_P'' = J q'' + b)

    prismatic     C_1 = n_i . (P_j - P_i),  n_i = A_i E a           (P_j stays on the line of body i)
                  C_2 = (A_i a) x (A_j a_j)                       (no relative rotation; a_j = A_j0^T A_i0 a)
                  C_1'' = n'' . d + 2 n' . d' + n . d'',  d = P_j - P_i
                  (a x b)'' = a'' x b + 2 a' x b' + a x b''

gamma collects minus the velocity-quadratic parts (the terms without q'').  Nikravesh,
Computer-Aided Analysis of Mechanical Systems, Prentice Hall (1988), secs. 3.3-3.4 (planar
revolute and translational joints in absolute coordinates; the rotation row is written there
with the relative angle, here as a cross product of body-fixed unit vectors, zero at the same
configurations near the assembly and differentiable without angle wrapping).
"""
from __future__ import annotations

import numpy as np

from .base import Constraint, Ground, body_label, check_body_pair, joint_point

__all__ = ["PlanarJoint", "PlanarRevolute", "PlanarPrismatic"]


def _cross(a, b) -> float:
    return float(a[0] * b[1] - a[1] * b[0])


def _cross_rows(J, b) -> np.ndarray:
    """d(a x b)/dq for da/dq = J (2, n) at fixed b: J[0] b_1 - J[1] b_0."""
    return J[0] * b[1] - J[1] * b[0]


class PlanarJoint(Constraint):
    """Base of the planar joints: two sides (body of dim 2 or the ground) and a joint point.

    Parameters
    ----------
    body_i, body_j : Body or None
        The joined bodies (dim 2); None is the ground (not both).
    at : (2,) array_like, optional
        Global position of the joint point in the initial configuration (the bodies'
        constructor coordinates); default the reference point of body_i (of body_j if
        body_i is the ground), or the point given by s_i.
    s_i, s_j : (2,) array_like, optional
        The joint point in body coordinates of body_i / body_j (global for the ground),
        instead of ``at``; both must give the same global point initially (ValueError
        naming the joint otherwise).
    name : str, optional
    tol : float
        Relative tolerance of the coincidence check.
    """

    n_c = 2

    def __init__(self, body_i, body_j=None, *, at=None, s_i=None, s_j=None, name=None, tol: float = 1e-8):
        cls = type(self).__name__
        name = check_body_pair(cls, body_i, body_j, name)
        for b, arg in ((body_i, "body_i"), (body_j, "body_j")):
            if b is not None and getattr(b, "dim", None) != 2:
                raise ValueError(f"{cls}: `{arg}` must be a planar body (dim 2), got {b!r} "
                                 "(3D joints: flexmbs.constraints.joints)")
        self.bodies = (body_i, body_j)
        self.name = name
        self._side = tuple(Ground(2) if b is None else b for b in self.bodies)
        given = [None if v is None else self._vec2(v, n) for v, n in ((s_i, "s_i"), (s_j, "s_j"))]
        self.at, self.s, self._A0 = joint_point(self.name, 2, self.bodies, self._side, given,
                                                None if at is None else self._vec2(at, "at"), tol)

    def _vec2(self, x, what):
        a = np.asarray(x, dtype=float)
        if a.shape != (2,) or not np.all(np.isfinite(a)):
            raise ValueError(f"joint {getattr(self, 'name', type(self).__name__)!r}: `{what}` must be "
                             f"2 finite numbers, got {x!r}")
        return a

    def _label(self, k):
        return body_label(self.bodies[k])

    def reaction_points(self) -> list:
        return [None if b is None else self.s[k] for k, b in enumerate(self.bodies)]

    def frame(self, t, qs):
        """At the joint point of body i, with body i's axes."""
        side = self._side[0]
        return side.point(qs[0], self.s[0]), side.rotation(qs[0])


class PlanarRevolute(PlanarJoint):
    """Pin joint in the plane: the joint point of body i coincides with that of body j (2 rows)."""

    def residual(self, t, qs):
        a, b = self._side
        return a.point(qs[0], self.s[0]) - b.point(qs[1], self.s[1])

    def jacobian(self, t, qs):
        a, b = self._side
        return [a.point_jacobian(qs[0], self.s[0]), -b.point_jacobian(qs[1], self.s[1])]

    def gamma(self, t, qs, vs):
        a, b = self._side
        return b.point_bias(qs[1], vs[1], self.s[1]) - a.point_bias(qs[0], vs[0], self.s[0])


class PlanarPrismatic(PlanarJoint):
    """Translational joint in the plane: body j slides along a body-fixed line of body i (2 rows).

    Parameters
    ----------
    body_i, body_j : Body or None
        Guide (i) and slider (j); None is the ground.
    axis : (2,) array_like
        Global direction of the line in the initial configuration (normalised here).
    at, s_i, s_j, name, tol
        As `PlanarJoint`: a point of the line, fixed on both bodies.
    """

    def __init__(self, body_i, body_j=None, *, axis, at=None, s_i=None, s_j=None, name=None, tol: float = 1e-8):
        super().__init__(body_i, body_j, at=at, s_i=s_i, s_j=s_j, name=name, tol=tol)
        a = self._vec2(axis, "axis")
        norm = np.linalg.norm(a)
        if not norm > 0:
            raise ValueError(f"joint {self.name!r}: `axis` must be a non-zero direction, got {axis!r}")
        a = a / norm
        self.a = [A.T @ a for A in self._A0]                     # the axis in each body's coordinates
        self.n_i = np.array([-self.a[0][1], self.a[0][0]])        # E a_i, normal to the line on body i

    def residual(self, t, qs):
        A, B = self._side
        d = B.point(qs[1], self.s[1]) - A.point(qs[0], self.s[0])
        return np.array([A.vector(qs[0], self.n_i) @ d,
                         _cross(A.vector(qs[0], self.a[0]), B.vector(qs[1], self.a[1]))])

    def jacobian(self, t, qs):
        A, B = self._side
        (qi, qj), (si, sj), (ai, aj) = qs, self.s, self.a
        d = B.point(qj, sj) - A.point(qi, si)
        n = A.vector(qi, self.n_i)
        Jn = A.vector_jacobian(qi, self.n_i)
        Ji, Jj = A.point_jacobian(qi, si), B.point_jacobian(qj, sj)
        u, w = A.vector(qi, ai), B.vector(qj, aj)
        Ju, Jw = A.vector_jacobian(qi, ai), B.vector_jacobian(qj, aj)
        row1_i = d @ Jn - n @ Ji
        row1_j = n @ Jj
        row2_i = _cross_rows(Ju, w)                  # d(u x w)/dq_i = du x w
        row2_j = -_cross_rows(Jw, u)                 # u x dw = -(dw x u)
        return [np.vstack([row1_i, row2_i]), np.vstack([row1_j, row2_j])]

    def gamma(self, t, qs, vs):
        A, B = self._side
        (qi, qj), (vi, vj), (si, sj), (ai, aj) = qs, vs, self.s, self.a
        Ji, Jj = A.point_jacobian(qi, si), B.point_jacobian(qj, sj)
        d = B.point(qj, sj) - A.point(qi, si)
        dd = Jj @ vj - Ji @ vi
        db = B.point_bias(qj, vj, sj) - A.point_bias(qi, vi, si)
        n = A.vector(qi, self.n_i)
        nd = A.vector_jacobian(qi, self.n_i) @ vi
        nb = A.vector_bias(qi, vi, self.n_i)
        u, w = A.vector(qi, ai), B.vector(qj, aj)
        ud, wd = A.vector_jacobian(qi, ai) @ vi, B.vector_jacobian(qj, aj) @ vj
        ub, wb = A.vector_bias(qi, vi, ai), B.vector_bias(qj, vj, aj)
        g1 = nb @ d + 2.0 * (nd @ dd) + n @ db
        g2 = _cross(ub, w) + 2.0 * _cross(ud, wd) + _cross(u, wb)
        return -np.array([g1, g2])
