"""Prescribed motions of a body's reference frame.

At time t a motion gives the rotation ``R`` (body -> global components), the
angular velocity ``omega`` and angular acceleration ``eps`` in body components,
and the origin's position, velocity and acceleration in global components.
Angles of 3D motions are Z-Y-X (yaw psi, pitch theta, roll phi) Cardan angles,
``R = Rz(psi) Ry(theta) Rx(phi)``, for which (body components)

.. code:: text

    omega = [phi' - psi' sin(theta),
             theta' cos(phi) + psi' cos(theta) sin(phi),
             -theta' sin(phi) + psi' cos(theta) cos(phi)]

and ``eps = d omega / dt`` is evaluated analytically from the angle rates and
accelerations.  Planar motions rotate about the body's z axis.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .frozen import FrozenFields
from .rotations import axis_angle_to_matrix, cardan_zyx_kinematics
from .user_functions import evaluate, non_finite

__all__ = ["FrameState", "FrameMotion", "Fixed", "ConstantRotation", "AxisRotation", "SpinUp",
           "PlanarMotion", "GeneralMotion", "TabulatedMotion", "euler_parameters", "frame_history",
           "FRAME_KEYS"]


class FrameState(FrozenFields):
    """Frame kinematics at one instant (see the module docstring).  Frozen (`flexmbs.frozen`)."""

    def __init__(self, R: np.ndarray, omega: np.ndarray, eps: np.ndarray, r_O: np.ndarray, v_O: np.ndarray,
                 a_O: np.ndarray):
        # R (3, 3) body -> global; omega, eps (3,) body components; r_O, v_O, a_O (3,) global
        self._set_fields(locals())

    def finite(self) -> bool:
        """True when every field is finite (no NaN or inf from the motion's laws)."""
        return all(np.isfinite(x).all() for x in (self.R, self.omega, self.eps, self.r_O, self.v_O, self.a_O))

    @property
    def v_O_local(self) -> np.ndarray:
        return self.R.T @ self.v_O

    @property
    def a_O_local(self) -> np.ndarray:
        return self.R.T @ self.a_O


class FrameStates(FrozenFields):
    """Frame kinematics at N instants: the fields of `FrameState` with a leading axis N.  Frozen."""

    def __init__(self, R: np.ndarray, omega: np.ndarray, eps: np.ndarray, r_O: np.ndarray, v_O: np.ndarray,
                 a_O: np.ndarray):
        # R (N, 3, 3); omega, eps (N, 3) body components; r_O, v_O, a_O (N, 3) global
        self._set_fields(locals())

    @property
    def a_O_local(self) -> np.ndarray:
        return np.einsum("nji,nj->ni", self.R, self.a_O)

    @property
    def v_O_local(self) -> np.ndarray:
        return np.einsum("nji,nj->ni", self.R, self.v_O)


_ZERO = np.zeros(3)
_EYE = np.eye(3)


class FrameMotion:
    """Base: a prescribed frame motion.  ``state(t)`` returns a `FrameState`.

    ``matrix_key(t)`` returns what the time-dependent matrices depend on
    (omega, eps); equal keys let implicit integrators reuse factorizations.
    """

    is_rotating: bool = True

    def state(self, t: float) -> FrameState:  # pragma: no cover - interface
        raise NotImplementedError

    def matrix_key(self, t: float):
        s = self.state(t)
        return (tuple(s.omega), tuple(s.eps))

    def states(self, t) -> FrameStates:
        """`FrameStates` at the times ``t`` (N,); subclasses may vectorise (default: `state` per t)."""
        rows = [self.state(float(ti)) for ti in np.atleast_1d(t)]
        return FrameStates(*(np.array([getattr(r, f) for r in rows], dtype=float).reshape(len(rows), *shape)
                             for f, shape in (("R", (3, 3)), ("omega", (3,)), ("eps", (3,)), ("r_O", (3,)),
                                              ("v_O", (3,)), ("a_O", (3,)))))

    def __call__(self, t: float) -> FrameState:
        return self.state(t)


class _Cached:
    """Mixin: remember the last evaluated state (a rhs and its energies ask for the same t).

    A law that raises or gives NaN or inf raises `flexmbs.user_functions.UserFunctionError` naming
    the motion and t (in a step: status "failed" with that message, docs/integrators.md)."""

    def state(self, t):
        last = self.__dict__.get("_last")
        if last is not None and last[0] == t:
            return last[1]
        what = f"the frame motion ({type(self).__name__})"
        s = evaluate(what, t, self._state, t)
        if not s.finite():
            raise non_finite(what, t)
        self._last = (t, s)
        return s


class Fixed(FrameMotion):
    """The frame does not move (an ordinary structural model)."""

    is_rotating = False

    def __init__(self):
        self._s = FrameState(_EYE, _ZERO, _ZERO, _ZERO, _ZERO, _ZERO)

    def state(self, t):
        return self._s

    def matrix_key(self, t):
        return ()


def _unit(axis, name="axis") -> np.ndarray:
    a = np.asarray(axis, dtype=float)
    if a.shape != (3,) or not np.linalg.norm(a) > 0:
        raise ValueError(f"`{name}` must be a nonzero 3-vector, got {axis!r}")
    return a / np.linalg.norm(a)


class AxisRotation(_Cached, FrameMotion):
    """Rotation about a fixed axis through the origin with angle law ``angle(t) -> (a, a', a'')``.

    The axis is fixed in both the body and the global frame, so omega = a' k and eps = a'' k.
    """

    def __init__(self, angle: Callable[[float], tuple[float, float, float]], axis=(0.0, 0.0, 1.0)):
        if not callable(angle):
            raise TypeError(f"`angle` must be a callable t -> (angle, rate, acceleration), got {angle!r}")
        self.angle, self.axis = angle, _unit(axis)

    def _state(self, t):
        a, da, dda = self.angle(t)
        return FrameState(axis_angle_to_matrix(self.axis, a), da * self.axis, dda * self.axis, _ZERO, _ZERO, _ZERO)

    def matrix_key(self, t):
        _, da, dda = self.angle(t)
        return (float(da), float(dda))

    def states(self, t) -> FrameStates:
        """`FrameStates` at the times ``t`` (N,): the angle law per t, the rotations at once."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        a, da, dda = np.array([self.angle(float(ti)) for ti in t], dtype=float).reshape(len(t), 3).T
        zero = np.zeros((len(t), 3))
        return FrameStates(axis_angle_to_matrix(self.axis, a), da[:, None] * self.axis, dda[:, None] * self.axis,
                           zero, zero.copy(), zero.copy())


class ConstantRotation(AxisRotation):
    """Constant angular velocity ``Omega`` [rad/s] about ``axis`` through the origin."""

    def __init__(self, Omega: float, axis=(0.0, 0.0, 1.0)):
        if not np.isfinite(Omega):
            raise ValueError(f"`Omega` must be finite, got {Omega!r}")
        self.Omega = float(Omega)
        super().__init__(lambda t: (self.Omega * t, self.Omega, 0.0), axis)

    def matrix_key(self, t):
        return ()


class SpinUp(AxisRotation):
    """Smooth spin-up of Kane, Ryan and Banerjee (1987) to ``Omega_s`` in ``T_s``.

    .. code:: text

        Omega(t) = (Omega_s/T_s) (t - (T_s/(2 pi)) sin(2 pi t/T_s))   t < T_s,   Omega_s after
        angle(t) = (Omega_s/T_s) (t^2/2 + (T_s/(2 pi))^2 (cos(2 pi t/T_s) - 1)),  Omega_s (t - T_s/2) after
    """

    def __init__(self, Omega_s: float, T_s: float, axis=(0.0, 0.0, 1.0)):
        if not T_s > 0:
            raise ValueError(f"`T_s` must be positive, got {T_s!r}")
        self.Omega_s, self.T_s = float(Omega_s), float(T_s)
        super().__init__(self.law, axis)

    def law(self, t):
        """(angle, Omega, Omega') at t (the formulas above): the rotation law, for an `AngleDriver` or a
        torque J Omega'(t)."""
        Ws, Ts = self.Omega_s, self.T_s
        if t >= Ts:
            return Ws * (t - Ts / 2.0), Ws, 0.0
        c = 2.0 * np.pi / Ts
        return (Ws / Ts * (t * t / 2.0 + (np.cos(c * t) - 1.0) / c**2),
                Ws / Ts * (t - np.sin(c * t) / c), Ws / Ts * (1.0 - np.cos(c * t)))

    _law = law      # NOTE: the former name, kept for the tests that read it (test_motion, test_coupled)


class GeneralMotion(_Cached, FrameMotion):
    """3D motion from functions.

    Parameters
    ----------
    position : callable t -> (r, v, a)
        Origin position, velocity, acceleration (global, each shape (3,)); None: fixed origin.
    angles : callable t -> (angles, rates, accelerations)
        Z-Y-X Cardan angles (psi, theta, phi) and their derivatives, each shape (3,).
    """

    def __init__(self, position=None, angles=None):
        self.position, self.angles = position, angles

    def _state(self, t):
        if self.position is None:
            r = v = a = _ZERO
        else:
            r, v, a = (np.asarray(z, dtype=float) for z in self.position(t))
        if self.angles is None:
            R, omega, eps = _EYE, _ZERO, _ZERO
        else:
            R, omega, eps = cardan_zyx_kinematics(*(np.asarray(z, dtype=float) for z in self.angles(t)))
        return FrameState(R, omega, eps, r, v, a)


class PlanarMotion(GeneralMotion):
    """Planar motion: each of ``x``, ``y``, ``theta`` is a callable t -> (value, rate, acceleration).

    ``many`` (optional): a callable t (N,) -> (x, y, theta), each a tuple (value, rate,
    acceleration) of arrays (N,), the same functions for many times at once; `states` then
    computes the frame states of N times with array operations instead of N calls.
    """

    def __init__(self, x, y, theta, many=None):
        for name, f in (("x", x), ("y", y), ("theta", theta)):
            if not callable(f):
                raise TypeError(f"`{name}` must be a callable t -> (value, rate, acceleration), got {f!r}")
        if many is not None and not callable(many):
            raise TypeError(f"`many` must be callable or None, got {many!r}")
        self.x, self.y, self.theta, self.many = x, y, theta, many

        def position(t):
            (x0, x1, x2), (y0, y1, y2) = x(t), y(t)
            return (np.array([x0, y0, 0.0]), np.array([x1, y1, 0.0]), np.array([x2, y2, 0.0]))

        def angles(t):
            a0, a1, a2 = theta(t)
            return np.array([a0, 0.0, 0.0]), np.array([a1, 0.0, 0.0]), np.array([a2, 0.0, 0.0])

        super().__init__(position, angles)

    def states(self, t) -> FrameStates:
        """Frame states at the times ``t`` (N,), vectorised when ``many`` was given:
        R = rot_z(theta), omega = (0, 0, theta'), eps = (0, 0, theta'')."""
        if self.many is None:
            return super().states(t)
        t = np.atleast_1d(np.asarray(t, dtype=float))
        (x0, x1, x2), (y0, y1, y2), (a0, a1, a2) = (
            tuple(np.broadcast_to(np.asarray(v, dtype=float), t.shape) for v in f) for f in self.many(t))
        N, zero = len(t), np.zeros(len(t))
        c, s = np.cos(a0), np.sin(a0)
        R = np.zeros((N, 3, 3))
        R[:, 0, 0], R[:, 0, 1], R[:, 1, 0], R[:, 1, 1], R[:, 2, 2] = c, -s, s, c, 1.0
        vec = lambda u, v: np.stack([u, v, zero], axis=-1)  # noqa: E731
        return FrameStates(R, np.stack([zero, zero, a1], -1), np.stack([zero, zero, a2], -1),
                           vec(x0, y0), vec(x1, y1), vec(x2, y2))


class TabulatedMotion(GeneralMotion):
    """Motion from tabulated times, origin positions and angles, differentiated by cubic splines.

    Parameters
    ----------
    t : ndarray, shape (n,)
        Increasing times.
    positions : ndarray, shape (n, 2) or (n, 3)
        Origin positions (global).
    angles : ndarray, shape (n,) or (n, 3)
        Planar rotation angle about z, or Z-Y-X Cardan angles.
    bc_type : str
        Spline end condition (scipy.interpolate.CubicSpline), default "not-a-knot".

    Notes
    -----
    Outside [t[0], t[-1]] the motion is not defined and ``state`` raises ValueError.
    """

    def __init__(self, t, positions, angles, bc_type="not-a-knot"):
        t = np.asarray(t, dtype=float)
        P = np.asarray(positions, dtype=float)
        A = np.asarray(angles, dtype=float)
        if t.ndim != 1 or len(t) < 4 or np.any(np.diff(t) <= 0):
            raise ValueError("`t` must be a strictly increasing 1D array of at least 4 times")
        if P.ndim != 2 or P.shape[0] != len(t) or P.shape[1] not in (2, 3):
            raise ValueError(f"`positions` must have shape ({len(t)}, 2) or ({len(t)}, 3), got {P.shape}")
        if A.shape == (len(t),):
            A = np.stack([A, np.zeros_like(A), np.zeros_like(A)], axis=1)
        if A.shape != (len(t), 3):
            raise ValueError(f"`angles` must have shape ({len(t)},) or ({len(t)}, 3), got {A.shape}")
        P = np.pad(P, ((0, 0), (0, 3 - P.shape[1])))
        self.t_range = (t[0], t[-1])
        from scipy.interpolate import CubicSpline       # deferred: only tabulated motions
        sp, sa = CubicSpline(t, P, bc_type=bc_type), CubicSpline(t, A, bc_type=bc_type)

        def check(tt):
            if not (self.t_range[0] - 1e-12 <= tt <= self.t_range[1] + 1e-12):
                raise ValueError(f"t = {tt} is outside the tabulated motion's range {self.t_range}")

        def position(tt):
            check(tt)
            return sp(tt), sp(tt, 1), sp(tt, 2)

        def angles_(tt):
            return sa(tt), sa(tt, 1), sa(tt, 2)

        super().__init__(position, angles_)


def euler_parameters(R) -> np.ndarray:
    """Euler parameters (unit quaternion) ``[e0, e1, e2, e3]`` of rotation matrices, ``e0 >= 0``.

    With ``e0 = cos(phi/2)`` and ``(e1, e2, e3) = sin(phi/2) k`` for the rotation by ``phi``
    about the unit axis ``k``, ``R = (2 e0^2 - 1) I + 2 (e e^T + e0 [e]x)`` (e.g. Shabana,
    *Dynamics of Multibody Systems*, 3rd ed., eq. 7.28, derived again here from Rodrigues'
    formula).  Inverted by Shepperd's rule: the largest of ``4 e_i^2`` (``1 + tr R`` for
    e0, ``1 + 2 R_ii - tr R`` for e_i) is computed first, the others from the off-diagonal
    sums and differences of R, so that nothing is divided by a small number.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)

    Returns
    -------
    ndarray, shape (..., 4)
    """
    R = np.asarray(R, dtype=float)
    if R.shape[-2:] != (3, 3):
        raise ValueError(f"`R` must have shape (..., 3, 3), got {R.shape}")
    tr = np.trace(R, axis1=-2, axis2=-1)
    d = np.stack([1.0 + tr, 1.0 + 2.0 * R[..., 0, 0] - tr, 1.0 + 2.0 * R[..., 1, 1] - tr,
                  1.0 + 2.0 * R[..., 2, 2] - tr], axis=-1)                    # 4 e_i^2
    k = np.argmax(d, axis=-1)
    # 4 e_i e_j for i != j from R: e0 e1 = (R21 - R12)/4, e1 e2 = (R01 + R10)/4, ...
    s = np.empty(R.shape[:-2] + (4, 4))
    s[..., 0, 1] = s[..., 1, 0] = R[..., 2, 1] - R[..., 1, 2]
    s[..., 0, 2] = s[..., 2, 0] = R[..., 0, 2] - R[..., 2, 0]
    s[..., 0, 3] = s[..., 3, 0] = R[..., 1, 0] - R[..., 0, 1]
    s[..., 1, 2] = s[..., 2, 1] = R[..., 0, 1] + R[..., 1, 0]
    s[..., 1, 3] = s[..., 3, 1] = R[..., 0, 2] + R[..., 2, 0]
    s[..., 2, 3] = s[..., 3, 2] = R[..., 1, 2] + R[..., 2, 1]
    idx = np.arange(4)
    s[..., idx, idx] = d
    row = np.take_along_axis(s, k[..., None, None], axis=-2)[..., 0, :]   # 4 e_k e_j
    e = row / (2.0 * np.sqrt(np.take_along_axis(d, k[..., None], axis=-1)))
    e = e * np.where(e[..., :1] < 0, -1.0, 1.0)
    return e / np.linalg.norm(e, axis=-1, keepdims=True)


#: the frame motion at each output, as in `frame_history` (results files: group ``frame``)
FRAME_KEYS = ("origin", "origin_velocity", "rotation", "euler_parameters", "omega")


def frame_history(motion: FrameMotion, t) -> dict[str, np.ndarray]:
    """The frame's motion at the times ``t``.

    Returns
    -------
    dict
        ``origin`` (n_t, 3) [m] and ``origin_velocity`` (n_t, 3) [m/s], global components;
        ``rotation`` (n_t, 3, 3), body -> global; ``euler_parameters`` (n_t, 4) of the
        rotation (`euler_parameters`); ``omega`` (n_t, 3) [rad/s], body components.
    """
    s = motion.states(np.atleast_1d(np.asarray(t, dtype=float)))
    return {"origin": s.r_O, "origin_velocity": s.v_O, "rotation": s.R, "euler_parameters": euler_parameters(s.R),
            "omega": s.omega}
