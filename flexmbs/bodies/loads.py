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

__all__ = ["point_load", "torque_load", "spring_to_ground", "check_loads"]


def _of_time(value, what: str, maker: str) -> Callable:
    """``value`` as a function of t: a callable as it is, a number or a vector of numbers as a
    constant (declared ``affine`` = (c, 0): the compiled kernel evaluates it itself, `flexmbs.compiled.time_law`);
    ValueError naming the argument ``what`` of ``maker`` otherwise (a string, say)."""
    if callable(value):
        return value
    try:
        c = np.asarray(value, dtype=float) if np.ndim(value) else float(value)
    except (TypeError, ValueError):
        c = None
    if c is None or isinstance(value, (str, bytes)) or not np.all(np.isfinite(c)):
        raise ValueError(f"{maker}: `{what}` must be a finite number, a vector of finite numbers or a function of "
                         f"t, got {value!r} ({type(value).__name__})")
    def constant(t):
        return c
    constant.affine = (c, 0.0)          # its value c + 0 t, evaluated by the compiled kernel (flexmbs.compiled.time_law)
    return constant


def _label(load, k: int) -> str:
    """The load's name for messages: its maker (point_load, ...) or the callable's own name."""
    return f"load {k} ({getattr(load, '__name__', type(load).__name__)})"


def check_loads(body, t, q, v) -> None:
    """Evaluate each load of ``body`` once at (t, q, v) and check what it gives, so that a wrong
    load is named where the loads are first evaluated (the start of a run) rather than failing inside
    numpy at every step: the force or torque of `point_load` and `torque_load` must have the body's
    dimension (a number for a torque in 2D), and every load must return a generalized force of the
    body's n_q components.  ValueError naming the body, the load and both sizes otherwise."""
    for k, load in enumerate(body.loads):
        spec = getattr(load, "spec", None)
        if spec is not None and spec[0] in ("torque", "point"):
            kind, f = ("torque", spec[1]) if spec[0] == "torque" else ("force", spec[2])
            value = np.asarray(f(t), dtype=float)
            want = () if kind == "torque" and body.dim == 2 else (body.dim,)
            if value.shape != want:
                raise ValueError(f"body {body.name!r}: {_label(load, k)}: its {kind} at t = {t:g} has shape "
                                 f"{value.shape}; the body is {body.dim}D, so it needs shape {want}")
        Q = np.asarray(load(body, t, q, v), dtype=float)
        if Q.shape != (body.n_q,):
            raise ValueError(f"body {body.name!r}: {_label(load, k)} returns a generalized force of shape {Q.shape}; "
                             f"the body has {body.n_q} coordinates, so it must return shape ({body.n_q},)")


def point_load(s, force, local: bool = False) -> Callable:
    """A force at the body point ``s``: constant or a function of t; global, or body-fixed if ``local``."""
    s = np.asarray(s, dtype=float)
    f = _of_time(force, "force", "point_load")

    def load(body, t, q, v):
        F = np.asarray(f(t), dtype=float)
        return body.point_force(q, s, body.rotation(q) @ F if local else F)
    load.spec = ("point", s, f, bool(local))
    load.__name__ = "point_load"
    return load


def torque_load(torque, local: bool = False) -> Callable:
    """A torque, constant or a function of t; global, or body-fixed if ``local`` (3D); a float in 2D."""
    f = _of_time(torque, "torque", "torque_load")

    def load(body, t, q, v):
        T = f(t)
        if local and body.dim == 3:
            T = body.rotation(q) @ np.asarray(T, dtype=float)
        return body.torque(q, T)
    load.spec = ("torque", f, bool(local))
    load.__name__ = "torque_load"
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
    load.__name__ = "spring_to_ground"
    return load
