"""Driving constraints: a coordinate, or a relative angle about an axis, as a function of time.

A law f is a callable t -> (f(t), f'(t), f''(t)) (as the angle laws of `flexmbs.motion`), or
a number for a constant.

.. code:: text

    CoordinateDriver:  C = q_k - f(t),   C_q = e_k,   C_t = -f',   gamma = f''

    AngleDriver: with x_i, y_i, z_i the joint frame on body_i and x_j on body_j (equal at the
    initial configuration), the relative angle theta about z_i has sin(theta) = y_i.x_j,
    cos(theta) = x_i.x_j, and
    C = cos(f) y_i.x_j - sin(f) x_i.x_j  (= sin(theta - f) while x_j stays normal to z_i)
    C_t = -f' (sin(f) y_i.x_j + cos(f) x_i.x_j)
    gamma = -(cos(f) b_1 - sin(f) b_2) + 2 f' (sin(f) g_1' + cos(f) g_2')
            + f'' (sin(f) g_1 + cos(f) g_2) + f'^2 (cos(f) g_1 - sin(f) g_2)

with g_1 = y_i.x_j, g_2 = x_i.x_j and b_k the bias of g_k'' (the dot-1 gamma of joints.py
with its sign reversed).  The sine form is smooth through every angle (no 2 pi jumps) and has
unit slope at theta = f; its second root theta = f + pi is repelling only within pi/2, so
positions are assembled from within pi/2 of the law (in time steps, by continuation).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .base import Constraint
from .joints import Joint

__all__ = ["CoordinateDriver", "AngleDriver", "as_law"]


def as_law(f, name: str = "f") -> Callable:
    """A law t -> (value, first derivative, second derivative) from a callable or a constant."""
    if callable(f):
        return f
    try:
        c = float(f)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a callable t -> (f, f', f'') or a number, got {f!r}") from None
    return lambda t: (c, 0.0, 0.0)


def _eval(law, t, name):
    out = law(t)
    try:
        a, b, c = out
    except (TypeError, ValueError):
        raise ValueError(f"driver {name!r}: its law must return (f(t), f'(t), f''(t)), got {out!r}") from None
    return float(a), float(b), float(c)


class CoordinateDriver(Constraint):
    """Prescribes coordinate ``index`` of ``body``: q_index = f(t).

    Parameters
    ----------
    body : Body
    index : int
        Index into the body's coordinates (0 <= index < body.n_q).
    f : callable or float
        t -> (f, f', f''), or a constant.
    name : str, optional
    """

    n_c = 1

    def __init__(self, body, index: int, f, name=None):
        if body is None:
            raise ValueError("CoordinateDriver: `body` must be a body, got None")
        if not (isinstance(index, (int, np.integer)) and 0 <= index < body.n_q):
            raise ValueError(f"CoordinateDriver: `index` must be an integer in [0, {body.n_q}) for body "
                             f"{body.name!r}, got {index!r}")
        self.bodies = (body,)
        self.index = int(index)
        self.law = as_law(f)
        self.name = name if name is not None else f"CoordinateDriver({body.name}[{index}])"

    def residual(self, t, qs) -> np.ndarray:
        return np.array([qs[0][self.index] - _eval(self.law, t, self.name)[0]])

    def jacobian(self, t, qs) -> list:
        J = np.zeros((1, self.bodies[0].n_q))
        J[0, self.index] = 1.0
        return [J]

    def time_derivative(self, t, qs) -> np.ndarray:
        return np.array([-_eval(self.law, t, self.name)[1]])

    def gamma(self, t, qs, vs) -> np.ndarray:
        return np.array([_eval(self.law, t, self.name)[2]])


class AngleDriver(Joint):
    """Prescribes the rotation angle of body_j relative to body_i about ``axis``: theta = f(t).

    theta is measured from the initial configuration (theta = 0 there), positive by the right
    hand about ``axis`` (a global direction in the initial configuration; it should be the axis
    of a revolute or cylindrical joint between the same bodies).

    Parameters
    ----------
    body_i, body_j : Body or None
        None is the ground.
    axis : array (3,)
    f : callable or float
        t -> (f, f', f''), or a constant angle [rad].
    name : str, optional
    """

    _rows = (("angle",),)
    _needs_axis = True
    _check_coincidence = False

    def __init__(self, body_i, body_j, axis, f, name=None):
        super().__init__(body_i, body_j, axis=axis, name=name)
        self.n_c = 1
        self.law = as_law(f)

    def _g(self, qs, vs, order):
        side, R = self._side, self.R
        xi, yi, xj = R[0][:, 0], R[0][:, 1], R[1][:, 0]
        a = [side[0].vector(qs[0], xi), side[0].vector(qs[0], yi), side[1].vector(qs[1], xj)]
        if order == 0:
            return a
        V = [side[0].vector_jacobian(qs[0], xi), side[0].vector_jacobian(qs[0], yi),
             side[1].vector_jacobian(qs[1], xj)]
        if order == 1:
            return a, V
        ad = [V[0] @ vs[0], V[1] @ vs[0], V[2] @ vs[1]]
        b = [side[0].vector_bias(qs[0], vs[0], xi), side[0].vector_bias(qs[0], vs[0], yi),
             side[1].vector_bias(qs[1], vs[1], xj)]
        return a, V, ad, b

    def residual(self, t, qs) -> np.ndarray:
        f = _eval(self.law, t, self.name)[0]
        x_i, y_i, x_j = self._g(qs, None, 0)
        return np.array([np.cos(f) * (y_i @ x_j) - np.sin(f) * (x_i @ x_j)])

    def jacobian(self, t, qs) -> list:
        f = _eval(self.law, t, self.name)[0]
        c, s = np.cos(f), np.sin(f)
        (x_i, y_i, x_j), (Vxi, Vyi, Vxj) = self._g(qs, None, 1)
        Ji = (c * (x_j @ Vyi) - s * (x_j @ Vxi))[None, :]
        Jj = ((c * y_i - s * x_i) @ Vxj)[None, :]
        return [Ji, Jj]

    def time_derivative(self, t, qs) -> np.ndarray:
        f, fd, _ = _eval(self.law, t, self.name)
        x_i, y_i, x_j = self._g(qs, None, 0)
        return np.array([-fd * (np.sin(f) * (y_i @ x_j) + np.cos(f) * (x_i @ x_j))])

    def gamma(self, t, qs, vs) -> np.ndarray:
        f, fd, fdd = _eval(self.law, t, self.name)
        c, s = np.cos(f), np.sin(f)
        (x_i, y_i, x_j), _, (dxi, dyi, dxj), (bxi, byi, bxj) = self._g(qs, vs, 2)
        g1, g2 = y_i @ x_j, x_i @ x_j
        g1d, g2d = dyi @ x_j + y_i @ dxj, dxi @ x_j + x_i @ dxj
        b1 = byi @ x_j + 2.0 * dyi @ dxj + y_i @ bxj
        b2 = bxi @ x_j + 2.0 * dxi @ dxj + x_i @ bxj
        return np.array([-(c * b1 - s * b2) + 2.0 * fd * (s * g1d + c * g2d) + fdd * (s * g1 + c * g2)
                         + fd * fd * (c * g1 - s * g2)])
