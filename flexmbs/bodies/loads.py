"""Applied loads on one body, for a body's ``loads`` argument: ``load(body, t, q, v) -> Q`` (n_q,).

Written with the body protocol only (point, point_force, torque, rotation, ...), so each
works on every kind of body, 2D or 3D.

.. code:: text

    point_load:       Q = J_P(s)^T F(t)                   (F global, or body-fixed: A F)
    torque_load:      Q = torque(q, T(t))                 (T global, or body-fixed: A T; a float in 2D)
    spring_to_ground: d = r_P - anchor, l = |d|, e = d / l,
                      F_P = -(k (l - l0) + c l') e,  l' = e . r_P',   Q = J_P^T F_P

Each load carries its kind and data in the attribute ``spec`` (("torque", T, local),
("point", s, F, local), ("spring", s, anchor, k, l0, c), with T and F functions of t), from
which `flexmbs.compiled` evaluates it in C; a load without ``spec`` (any other callable) is
evaluated only on the numpy path.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["point_load", "torque_load", "spring_to_ground"]


def _of_time(value) -> Callable:
    if callable(value):
        return value
    c = np.asarray(value, dtype=float) if np.ndim(value) else float(value)
    return lambda t: c


def point_load(s, force, local: bool = False) -> Callable:
    """A force at the body point ``s``: constant or a function of t; global, or body-fixed if ``local``."""
    s = np.asarray(s, dtype=float)
    f = _of_time(force)

    def load(body, t, q, v):
        F = np.asarray(f(t), dtype=float)
        return body.point_force(q, s, body.rotation(q) @ F if local else F)
    load.spec = ("point", s, f, bool(local))
    return load


def torque_load(torque, local: bool = False) -> Callable:
    """A torque, constant or a function of t; global, or body-fixed if ``local`` (3D); a float in 2D."""
    f = _of_time(torque)

    def load(body, t, q, v):
        T = f(t)
        if local and body.dim == 3:
            T = body.rotation(q) @ np.asarray(T, dtype=float)
        return body.torque(q, T)
    load.spec = ("torque", f, bool(local))
    return load


def spring_to_ground(s, anchor, stiffness: float, rest_length: float, damping: float = 0.0) -> Callable:
    """A linear spring (and dashpot) from the body point ``s`` to the fixed global point ``anchor``."""
    s, anchor = np.asarray(s, dtype=float), np.asarray(anchor, dtype=float)
    k, l0, c = float(stiffness), float(rest_length), float(damping)
    if not (k >= 0 and l0 >= 0 and c >= 0):
        raise ValueError(f"spring_to_ground: stiffness, rest_length and damping must be >= 0, got {k}, {l0}, {c}")

    def load(body, t, q, v):
        d = body.point(q, s) - anchor
        length = float(np.linalg.norm(d))
        if length == 0.0:
            raise ValueError(f"spring_to_ground on body {body.name!r}: the spring has zero length (its direction "
                             "is undefined)")
        e = d / length
        rate = float(e @ (body.point_jacobian(q, s) @ v)) if c else 0.0
        return body.point_force(q, s, -(k * (length - l0) + c * rate) * e)
    load.spec = ("spring", s, anchor, k, l0, c)
    return load
