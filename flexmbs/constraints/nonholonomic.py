"""Nonholonomic (velocity-level) constraints a(q, t) q' + b(q, t) = 0.

A nonholonomic constraint restricts the velocities, not the positions: it has no residual
C(q, t), and the position solves (`System.assemble`'s Newton, coordinate partitioning) must
leave it out.  In the constraint protocol it gives

.. code:: text

    jacobian        -> a(q, t)            (the rows that multiply q')
    time_derivative -> b(q, t)            (so that "C_q q' + C_t" = a q' + b is its violation)
    gamma           -> -(a' q' + b')      (a q'' = gamma, differentiated once in time)
    residual        -> zeros              (no position-level equation)

and ``holonomic = False``.  The multipliers enter the equations of motion as for a holonomic
constraint, M q'' + a^T lam = Q (the constraint forces -a^T lam do no work on admissible
velocities: d'Alembert-Lagrange with virtual displacements a dq = 0).

Two kinds:

`VelocityConstraint`
    a and b given as functions of (t, q) of one body's coordinates (e.g. the cart-pendulum
    wheel of seed 001, eq. (69)); gamma by a complex step of a q' + b along (1, q').  The
    functions must be written with analytic numpy operations (they get complex q).
`KnifeEdge`
    a blade at the body-fixed point s with body-fixed direction e, in the plane with normal
    n_plane (default global z): the velocity of s has no component along the in-plane normal of
    the blade, n = n_plane x (A e), i.e. n . v_s = 0 (a skate, a knife edge, the contact
    point of a rolling disk in its plane).  gamma analytically from the body's markers:
    gamma = -(n' . v_s + n . (J_s' q')).
"""
from __future__ import annotations

import numpy as np

from .base import Constraint

__all__ = ["VelocityConstraint", "KnifeEdge", "nonholonomic_constraints", "require_holonomic"]


def nonholonomic_constraints(system) -> list:
    """The constraints of ``system`` with ``holonomic == False``."""
    return [c for c in getattr(system, "constraints", ()) if not getattr(c, "holonomic", True)]


def require_holonomic(system, what: str) -> None:
    """Raise a ValueError naming the nonholonomic constraints that ``what`` cannot handle."""
    names = [c.name for c in nonholonomic_constraints(system)]
    if names:
        raise ValueError(f"{what} works on holonomic constraints C(q, t) = 0 only, but the system has the "
                         f"nonholonomic (velocity-level) constraint(s) {names}, which have no position-level "
                         "equation. Use stabilization='none' or 'baumgarte' (velocity-level only), or a "
                         "quasi-velocity formulation (maggi, kane, volterra) that satisfies them exactly.")


class VelocityConstraint(Constraint):
    """a(t, q) q' + b(t, q) = 0 on the coordinates of one body.

    Parameters
    ----------
    body : Body
    a : callable
        ``a(t, q) -> (n_c, n_q)`` array (complex-safe: analytic numpy operations only).
    b : callable, optional
        ``b(t, q) -> (n_c,)``; default zero (a homogeneous, catastatic constraint).
    name : str
    """

    holonomic = False

    def __init__(self, body, a, b=None, name: str = "velocity constraint"):
        if not callable(a) or (b is not None and not callable(b)):
            raise ValueError(f"constraint {name!r}: `a` (and `b`) must be callables of (t, q)")
        self.name = name
        self.bodies = (body,)
        self._a, self._b = a, b
        self.rheonomic = b is not None          # b(t, q) may do work (lam . b)
        A0 = np.asarray(a(0.0, body.initial_coordinates()))
        if A0.ndim != 2 or A0.shape[1] != body.n_q:
            raise ValueError(f"constraint {name!r}: `a(t, q)` must return an (n_c, {body.n_q}) array for body "
                             f"{body.name!r}, got shape {A0.shape}")
        self.n_c = A0.shape[0]

    def a(self, t, q) -> np.ndarray:
        return np.asarray(self._a(t, q))

    def b(self, t, q) -> np.ndarray:
        if self._b is None:
            return np.zeros(self.n_c, dtype=np.result_type(np.asarray(q).dtype, float, np.asarray(t).dtype))
        return np.asarray(self._b(t, q))

    def residual(self, t, qs) -> np.ndarray:
        return np.zeros(self.n_c)

    def jacobian(self, t, qs) -> list:
        return [self.a(t, qs[0])]

    def time_derivative(self, t, qs) -> np.ndarray:
        return self.b(t, qs[0])

    def gamma(self, t, qs, vs) -> np.ndarray:
        """-(a' q' + b') by one complex step of (a q' + b) along (t, q) -> (t + i h, q + i h q')."""
        from ..bodies.tree import COMPLEX_STEP       # here: a System run reads this module, not the tree bodies
        h = COMPLEX_STEP
        q, v = np.asarray(qs[0], dtype=float), np.asarray(vs[0], dtype=float)
        tc, qc = t + 1j * h, q + 1j * h * v
        return -(self.a(tc, qc) @ v + self.b(tc, qc)).imag / h


class KnifeEdge(Constraint):
    """A knife edge (skate, blade) at the body-fixed point ``s`` along the body-fixed direction ``e``.

    The point s may slide along the blade and the body may turn, but s has no velocity across
    the blade in the plane with normal ``plane_normal``: n . v_s = 0, n = plane_normal x (A e).
    """

    holonomic = False
    n_c = 1

    def __init__(self, body, s, e, plane_normal=(0.0, 0.0, 1.0), name: str = "knife edge"):
        self.name = name
        self.bodies = (body,)
        self.s = s
        self.e = np.asarray(e, dtype=float)
        self.k = np.asarray(plane_normal, dtype=float)
        if self.e.shape != (3,) or self.k.shape != (3,) or abs(self.e @ self.k) > 1e-12 or \
                not np.linalg.norm(self.e) > 0 or not np.linalg.norm(self.k) > 0:
            raise ValueError(f"constraint {name!r}: `e` (blade direction) and `plane_normal` must be nonzero "
                             f"orthogonal 3-vectors, got e = {e!r}, plane_normal = {plane_normal!r}")
        self.k = self.k / np.linalg.norm(self.k)

    def _normal(self, q):
        body = self.bodies[0]
        return np.cross(self.k, body.vector(q, self.e)), np.cross(self.k, body.vector_jacobian(q, self.e).T).T

    def residual(self, t, qs) -> np.ndarray:
        return np.zeros(1)

    def jacobian(self, t, qs) -> list:
        body, q = self.bodies[0], qs[0]
        n, _ = self._normal(q)
        return [(n @ body.point_jacobian(q, self.s))[None, :]]

    def time_derivative(self, t, qs) -> np.ndarray:
        return np.zeros(1)

    def gamma(self, t, qs, vs) -> np.ndarray:
        body, q, v = self.bodies[0], qs[0], vs[0]
        n, dn = self._normal(q)
        vs_ = body.point_jacobian(q, self.s) @ v
        return -np.array([(dn @ v) @ vs_ + n @ body.point_bias(q, v, self.s)])
