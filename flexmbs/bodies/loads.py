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

Each also gives its power P = q' . Q at all the rows of a block at once (the works of a run,
`flexmbs.bodies.base.Body.powers`), ``load.power_history(body, t, Q, V, what) -> P (n_t,)``, from the
marker's velocity and the body's angular velocity over rows (`flexmbs.bodies.motion`):

.. code:: text

    point_load:       P = F(t) . r_P'                   (body-fixed: (A F) . r_P')
    torque_load:      P = T(t) . omega                  (body-fixed: (A T) . omega; 2D: T theta')
    spring_to_ground: P = F_P . r_P' = -(k (l - l0) + c l') l'

F(t) and T(t) are taken at all times at once for a constant (``affine``) and by one call with the
array of times for a function that declares ``vectorized = True``; any other function of t, once
per time (`values_of_time`).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..lazy import LazyModule
from ..user_functions import evaluate, non_finite

motion = LazyModule("flexmbs.bodies.motion")     # the rates over rows, imported at the first power (flexmbs.lazy)

__all__ = ["point_load", "torque_load", "spring_to_ground", "check_loads", "values_of_time"]


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


def values_of_time(f, t, what: str, shape: tuple, wrong_shape: Callable | None = None) -> np.ndarray:
    """The values (n_t, *shape) of a function of time ``f`` (a load's force or torque from `_of_time`, a
    force element's actuator) at the times t (n_t,): offset + rate t at all times for one that declares
    ``affine`` = (offset, rate) (a constant), one call ``f(t)`` with the array t for one that declares
    ``vectorized = True`` (it must return shape (n_t, *shape)), else ``f`` once per time.  ``what``
    names the function in the errors: a `UserFunctionError` where ``f`` raises or gives NaN or inf
    (with the time), ValueError where a value has another shape than ``shape`` (the error
    ``wrong_shape(t, value)`` gives, if given, for a value of one time)."""
    t = np.asarray(t, dtype=float).reshape(-1)
    n_t = len(t)
    affine = getattr(f, "affine", None)
    if affine is not None and np.shape(affine[0]) == shape and np.shape(affine[1]) in ((), shape):
        offset, rate = (np.asarray(x, dtype=float) for x in affine)
        return offset + t.reshape((n_t,) + (1,) * len(shape)) * rate
    if n_t == 0:
        return np.zeros((0,) + shape)
    if getattr(f, "vectorized", False):
        values = np.asarray(evaluate(f"{what} (vectorized, at {n_t} times)", float(t[0]), f, t), dtype=float)
        if values.shape != (n_t,) + shape:
            raise ValueError(f"{what} declares `vectorized` and must return an array of shape {(n_t,) + shape} (a "
                             f"value of shape {shape} at each of the {n_t} times), got shape {values.shape}")
    else:
        raw = [evaluate(what, tk, f, tk) for tk in t.tolist()]
        numbers = [_numbers(x) for x in raw]
        bad = next((k for k, x in enumerate(numbers) if x is None or x.shape != shape), None)
        if bad is not None:
            if wrong_shape is not None:
                raise wrong_shape(float(t[bad]), raw[bad])
            raise ValueError(f"{what} must give numbers of shape {shape} at each t, got {raw[bad]!r} (shape "
                             f"{np.shape(raw[bad])}) at t = {t[bad]:g}")
        values = np.array(numbers).reshape((n_t,) + shape)
    finite = np.isfinite(values.reshape(n_t, -1)).all(axis=1)
    if not finite.all():
        raise non_finite(what, float(t[np.argmin(finite)]))
    return values


def _numbers(x) -> np.ndarray | None:
    """x as an array of floats, None if it is not numbers (a string, a dict)."""
    if isinstance(x, (str, bytes)):
        return None
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        return None


def _global(body, Q, local: bool, X) -> np.ndarray:
    """X (n_t, dim) in global components: A X at each row for body-fixed ones (``local``), else X."""
    return (motion.rotation_history(body, Q) @ X[..., None])[..., 0] if local else X


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

    def power_history(body, t, Q, V, what: str = "point_load") -> np.ndarray:
        """P = F . r_P' (n_t,) at the times t and the rows of Q, V: F (A F if ``local``) of all times,
        r_P' of all rows (`marker_motion`)."""
        F = _global(body, Q, local, values_of_time(f, t, what, (body.dim,)))
        return np.einsum("ti,ti->t", F, motion.marker_motion(body, Q, V, s)[1])
    load.power_history = power_history
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

    def power_history(body, t, Q, V, what: str = "torque_load") -> np.ndarray:
        """P = T . omega (n_t,) at the times t and the rows of Q, V (2D: T theta'): T (A T if ``local``,
        3D) of all times, omega of all rows (`angular_velocity_history`)."""
        omega = motion.angular_velocity_history(body, Q, V)
        if body.dim == 2:
            return values_of_time(f, t, what, ()) * omega
        return np.einsum("ti,ti->t", _global(body, Q, local, values_of_time(f, t, what, (3,))), omega)
    load.power_history = power_history
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
            raise _zero_length(body)
        e = d / length
        rate = float(e @ (body.point_jacobian(q, s) @ v)) if c else 0.0
        return body.point_force(q, s, -(k * (length - l0) + c * rate) * e)

    def power_history(body, t, Q, V, what: str = "spring_to_ground") -> np.ndarray:
        """P = F_P . r_P' = -(k (l - l0) + c l') l' (n_t,) with l' = d . r_P' / l, d = r_P - anchor, at
        the rows of Q, V (r_P, r_P' of all rows: `marker_motion`); the spring's law is constant."""
        r, r_dot = motion.marker_motion(body, Q, V, s)
        d = r - anchor
        length = np.sqrt(np.einsum("ti,ti->t", d, d))
        if np.any(length == 0.0):
            raise _zero_length(body)
        rate = np.einsum("ti,ti->t", d, r_dot) / length
        return -(k * (length - l0) + c * rate) * rate
    load.power_history = power_history
    load.spec = ("spring", s, anchor, k, l0, c)
    load.__name__ = "spring_to_ground"
    return load


def _zero_length(body) -> ValueError:
    """The error of a spring to the ground of zero length: its direction d / l is undefined."""
    return ValueError(f"spring_to_ground on body {body.name!r}: the spring has zero length (its direction is "
                      "undefined)")
