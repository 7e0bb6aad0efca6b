"""Driving constraints: a coordinate, or a relative angle about an axis, as a function of time.

A law f is a callable t -> (f(t), f'(t), f''(t)) (as the angle laws of `flexmbs.motion`), or
a number for a constant.  A law with the attribute ``vectorized = True`` also takes an array of
times and returns its three values as arrays of that shape (or numbers): the histories of the
outputs call it once per block (`flexmbs.constraints.base.law_history`); any other law is called
once per time.

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

from .base import Constraint, law_values as _eval
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
    def constant(t):
        return c, 0.0, 0.0

    constant.vectorized = True                 # numbers broadcast to any array of times
    return constant


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
    rheonomic = True

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
    rheonomic = True
    _needs_axis = True
    _check_coincidence = False

    def __init__(self, body_i, body_j, axis, f, name=None):
        super().__init__(body_i, body_j, axis=axis, name=name)
        self.n_c = 1
        self.law = as_law(f)
        # evaluated as the "angle" row of `flexmbs.constraints.batch.JointBatch`: a dot1 row
        # (A_i u(t)) . x_j with u(t) = cos(f) y_i - sin(f) x_i (the formulas above)
