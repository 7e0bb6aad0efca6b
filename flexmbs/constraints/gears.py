"""Gear pairs and rack-and-pinion couplings: velocity-level ratio constraints a(q) q' = 0.

Both are nonholonomic in form (``holonomic = False``, as `flexmbs.constraints.nonholonomic`):
the ratio is imposed on the rates, so a run keeps it at the velocity and acceleration levels
and the angles follow by integration (no position-level equation to drift back to).  With
omega_k = W_k(q) q'_k the angular velocity of body k (global) and e_k = A_k u_k a body-fixed
axis, the rows of a are read off the body protocol: the generalized force of a torque T is
W^T T (`Body.torque`), so e . omega = torque(q, e) . q'.

.. code:: text

    GearPair:      C_v = e_j . omega_j - n e_i . omega_i                     (omega_j = n omega_i about the axes)
    RackPinion:    C_v = d . r_s' - r e_p . omega_p                           (the rack's point s moves
                                                                             r omega_p along d)
    gamma:         -(d/dt a) q' = n (e_i' . omega_i + e_i . beta_i) - (e_j' . omega_j + e_j . beta_j)
                   r (e_p' . omega_p + e_p . beta_p) - (d' . r_s' + d . beta_s)        (RackPinion)

with e' = V_e q' (`Body.vector_jacobian`), beta_s the point's bias (`Body.point_bias`) and
beta = (d omega / dq) q' at fixed q' the rate of omega that does not multiply q''.  beta is taken
by a central difference of ``angular_velocity`` along q' (`angular_velocity_bias`): exact for the
bodies whose omega is linear in q (Euler parameters, omega = 2 E(p) p'; planar bodies, beta = 0),
O(h^2) otherwise.  No identity of the rotations (e' = omega x e) is used, so gamma is -(d/dt a) q'
along any path, also off the Euler-parameter norm (tests/test_gears_universal.py).

For external spur gears of pitch radii r_i, r_j on parallel axes, n = -r_i / r_j; internal
gears n = +r_i / r_j; bevel gears: the axes as they are, n = -r_i / r_j with the cone radii.
"""
from __future__ import annotations

import numpy as np

from .base import Constraint, check_body_pair

__all__ = ["GearPair", "RackPinion", "angular_velocity_bias"]


def angular_velocity_bias(body, q, v):
    """beta = (d omega / dq) q' at fixed q' (global; a number in 2D): by a central difference of
    ``body.angular_velocity`` along q' with the step h = 1e-6 / max(1, |q'|_inf) (module docstring)."""
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    h = 1e-6 / max(1.0, float(np.abs(v).max(initial=0.0)))
    wp, wm = body.angular_velocity(q + h * v, v), body.angular_velocity(q - h * v, v)
    return (np.asarray(wp, dtype=float) - np.asarray(wm, dtype=float)) / (2.0 * h) if body.dim == 3 \
        else (float(wp) - float(wm)) / (2.0 * h)


def _axis(value, what: str, owner: str, dim: int):
    """A body-fixed unit axis: (3,) nonzero in 3D; None (the plane's normal) in 2D."""
    if dim == 2:
        if value is not None:
            raise ValueError(f"{owner}: `{what}` is for 3D bodies (planar ones turn about z), got {value!r}")
        return None
    try:
        a = None if value is None or isinstance(value, (str, bytes)) else np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        a = None
    if a is None or a.shape != (3,) or not np.all(np.isfinite(a)) or not np.linalg.norm(a) > 0:
        raise ValueError(f"{owner}: `{what}` must be a nonzero finite 3-vector in the body's coordinates, "
                         f"got {value!r}")
    return a / np.linalg.norm(a)


def _number(value, what: str, owner: str, positive: bool = False) -> float:
    from ..bodies.base import real_number
    x = real_number(value, what, owner)
    if not np.isfinite(x) or (positive and not x > 0) or (not positive and x == 0):
        raise ValueError(f"{owner}: `{what}` must be a finite {'positive' if positive else 'nonzero'} number, "
                         f"got {value!r}")
    return x


def _pair(cls: str, body_i, body_j, name):
    if body_i is None or body_j is None:
        raise ValueError(f"{cls}: both bodies must be given (a coupling with the ground is a driver or a joint), "
                         f"got {body_i!r} and {body_j!r}")
    name = check_body_pair(cls, body_i, body_j, name)
    if body_i.dim != body_j.dim:
        raise ValueError(f"{cls} {name!r}: both bodies must have the same dimension, got {body_i.dim} and {body_j.dim}")
    return name


class _RateRow(Constraint):
    """One velocity-level row a(q) q' = 0: no residual, no C_t."""

    holonomic = False
    n_c = 1

    def residual(self, t, qs) -> np.ndarray:
        return np.zeros(1)

    def time_derivative(self, t, qs) -> np.ndarray:
        return np.zeros(1)

    def _rate_row(self, body, q, e):
        """e . omega as a row on q' (torque(q, e)); 2D: omega itself (e None)."""
        return body.torque(q, 1.0 if e is None else body.vector(q, e))

    def _axis_rate_bias(self, body, q, v, e):
        """The part of d/dt (e . omega) that does not multiply q'': e' . omega + e . beta (2D: beta)."""
        beta = angular_velocity_bias(body, q, v)
        if e is None:
            return beta
        return float((body.vector_jacobian(q, e) @ v) @ body.angular_velocity(q, v) + body.vector(q, e) @ beta)


class GearPair(_RateRow):
    """Gear pair: omega_j . e_j = ratio omega_i . e_i (1 velocity-level equation).

    Parameters
    ----------
    body_i, body_j : Body
        The gears (both bodies: a gear turning against the ground is a driver).
    ratio : float, nonzero
        n = omega_j / omega_i about the axes: -r_i / r_j for external spur gears.
    axis_i, axis_j : array (3,)
        The gears' axes in their bodies' coordinates (3D); None in 2D.
    """

    def __init__(self, body_i, body_j, ratio, axis_i=None, axis_j=None, name=None):
        self.name = _pair("GearPair", body_i, body_j, name)
        owner = f"GearPair {self.name!r}"
        self.bodies = (body_i, body_j)
        self.ratio = _number(ratio, "ratio", owner)
        self.axes = [_axis(axis_i, "axis_i", owner, body_i.dim), _axis(axis_j, "axis_j", owner, body_j.dim)]

    def jacobian(self, t, qs) -> list:
        (bi, bj), (ei, ej) = self.bodies, self.axes
        return [-self.ratio * self._rate_row(bi, qs[0], ei)[None], self._rate_row(bj, qs[1], ej)[None]]

    def gamma(self, t, qs, vs) -> np.ndarray:
        (bi, bj), (ei, ej) = self.bodies, self.axes
        return np.array([self.ratio * self._axis_rate_bias(bi, qs[0], vs[0], ei)
                         - self._axis_rate_bias(bj, qs[1], vs[1], ej)])


class RackPinion(_RateRow):
    """Rack and pinion: the rack's point s moves along its direction d at r omega_p . e_p
    (1 velocity-level equation).

    Parameters
    ----------
    pinion, rack : Body
    radius : float > 0
        The pinion's pitch radius r [m].
    direction : array (dim,)
        d, the rack's direction in its body's coordinates (normalised).
    point : array (dim,) or a body's marker
        s, the rack's point whose velocity is coupled (its pitch point), in its body's coordinates.
    axis : array (3,)
        e_p, the pinion's axis in its body's coordinates (3D); None in 2D.
    """

    def __init__(self, pinion, rack, radius, direction, point=None, axis=None, name=None):
        self.name = _pair("RackPinion", pinion, rack, name)
        owner = f"RackPinion {self.name!r}"
        self.bodies = (pinion, rack)
        dim = rack.dim
        self.radius = _number(radius, "radius", owner, positive=True)
        self.axis = _axis(axis, "axis", owner, dim)
        try:
            d = None if isinstance(direction, (str, bytes)) else np.asarray(direction, dtype=float)
        except (TypeError, ValueError):
            d = None
        if d is None or d.shape != (dim,) or not np.all(np.isfinite(d)) or not np.linalg.norm(d) > 0:
            raise ValueError(f"{owner}: `direction` must be a nonzero finite vector of {dim} components in the "
                             f"rack's coordinates, got {direction!r}")
        self.direction = d / np.linalg.norm(d)
        self.point = np.zeros(dim) if point is None else point

    def jacobian(self, t, qs) -> list:
        pinion, rack = self.bodies
        d = rack.vector(qs[1], self.direction)
        return [-self.radius * self._rate_row(pinion, qs[0], self.axis)[None],
                (d @ rack.point_jacobian(qs[1], self.point))[None]]

    def gamma(self, t, qs, vs) -> np.ndarray:
        pinion, rack = self.bodies
        q, v = qs[1], vs[1]
        d = rack.vector(q, self.direction)
        d_dot = rack.vector_jacobian(q, self.direction) @ v
        r_dot = rack.point_jacobian(q, self.point) @ v
        return np.array([self.radius * self._axis_rate_bias(pinion, qs[0], vs[0], self.axis)
                         - d @ rack.point_bias(q, v, self.point) - d_dot @ r_dot])
