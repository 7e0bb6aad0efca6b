"""Rigid planar linkages as vector loops: positions by Newton, velocities and accelerations.

A linkage with one input coordinate ``phi`` (the crank angle) and dependent coordinates
``q`` is described by closed vector loops.  Each vector of a loop is ``sign * l * e(theta)``
with ``e(theta) = (cos theta, sin theta)``; its length ``l`` and angle ``theta`` are numbers
or coordinates (``theta`` may be a coordinate plus a constant offset).  The loop-closure
equations and their time derivatives are (``z = (phi, q)``, ``n(theta) = (-sin, cos)``)

.. code:: text

    Phi(z)   = sum_loop sign l e(theta) = 0                          (2 equations per loop)
    Phi_q q' = -Phi_phi phi'                                          velocities
    Phi_q q'' = -Phi_phi phi'' - gamma,
    gamma = sum_loop sign (2 l' theta' n(theta) - l theta'^2 e(theta))   accelerations

with the Jacobians ``Phi_z`` made of ``sign e(theta)`` (length coordinates) and
``sign l n(theta)`` (angle coordinates).  The positions come from Newton's method on
``Phi(phi, q) = 0``.  Where ``det Phi_q = 0`` (a singular position: dead point, change point)
the dependent coordinates are not functions of the input.  Away from singular positions the
sign of ``det Phi_q`` is constant along the motion and labels the **assembly branch**, which
is chosen explicitly (``branch = +1 / -1``) and checked after every solve.

Joints and other points are sums of vectors from the global origin; a link is named by two
points, its first and second joint, whose chord gives the link's frame (see ``frames``).

References
----------
.. [1] P. E. Nikravesh, Computer-Aided Analysis of Mechanical Systems, Prentice Hall (1988),
       ch. 2-3 (kinematic analysis: position by Newton-Raphson, velocity and acceleration
       equations, gamma).
.. [2] R. L. Norton, Design of Machinery, 5th ed., McGraw-Hill (2012), ch. 4, 6, 7
       (vector-loop equations of the four-bar and the slider-crank).
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math
from typing import Callable, Sequence

import numpy as np

from ..newton import NewtonError, newton

__all__ = ["Vec", "Linkage", "LinkageState", "ChordKinematics", "MechanismError", "AssemblyError",
           "SingularPositionError", "constant_speed"]

INPUT = "phi"


class MechanismError(ValueError):
    """Base of the kinematic errors of a linkage."""


class AssemblyError(MechanismError):
    """The links cannot close at the given input (or Newton found no closed position)."""

    def __init__(self, message: str, phi: float | None = None):
        super().__init__(message)
        self.phi = phi


class SingularPositionError(MechanismError):
    """The linkage is at (or passes through) a singular position: det Phi_q = 0."""

    def __init__(self, message: str, phi: float | None = None):
        super().__init__(message)
        self.phi = phi


@dataclass(frozen=True)
class Vec:
    """One vector ``sign * length * e(angle)`` of a loop or of a point's path.

    ``length``: a number [m] or the name of a length coordinate (a slider's travel);
    ``angle``: a number [rad], the name of an angle coordinate, or ``(name, offset)`` for a
    coordinate plus a constant (a point of a ternary link).  The input coordinate is "phi".
    """

    length: float | str
    angle: float | str | tuple
    sign: float = 1.0

    def __post_init__(self):
        if self.sign not in (1.0, -1.0, 1, -1):
            raise ValueError(f"`sign` must be +1 or -1, got {self.sign!r}")
        if not isinstance(self.length, str) and not np.isfinite(self.length):
            raise ValueError(f"`length` must be a finite number or a coordinate name, got {self.length!r}")


def constant_speed(omega: float, phi0: float = 0.0) -> Callable[[float], tuple[float, float, float]]:
    """Crank-angle law phi(t) = phi0 + omega t: returns t -> (phi, phi', phi''), t a time or an array of
    times (``vectorized``: `flexmbs.constraints.base.law_history`); ``affine`` declares its formula
    (f, f', f'') = (phi0, omega, 0) + (omega, 0, 0) t, which the compiled kernel evaluates itself
    (`flexmbs.compiled.time_law`)."""
    if not np.isfinite(omega) or not np.isfinite(phi0):
        raise ValueError(f"`omega` and `phi0` must be finite, got {omega!r}, {phi0!r}")
    omega, phi0 = float(omega), float(phi0)

    def law(t):
        return phi0 + omega * t, omega, 0.0

    law.omega, law.phi0, law.vectorized = omega, phi0, True
    law.affine = ((phi0, omega, 0.0), (omega, 0.0, 0.0))     # (f, f', f'') = offset + rate t: flexmbs.compiled.time_law
    return law


def _relative_det(J, signed: bool = False) -> float:
    """det J / (product of its column norms): in [-1, 1], 0 where J is singular."""
    norms = np.sqrt((J * J).sum(axis=0))
    if J.shape == (2, 2):
        det = J[0, 0] * J[1, 1] - J[0, 1] * J[1, 0]
    else:
        det = np.linalg.det(J)
    out = float(det / np.prod(norms)) if np.all(norms > 0) else 0.0
    return out if signed else abs(out)


def _solve(J, b):
    """J^-1 b; Cramer's rule for 2 x 2 (one loop), LAPACK otherwise."""
    if J.shape == (2, 2):
        det = J[0, 0] * J[1, 1] - J[0, 1] * J[1, 0]
        if det == 0.0:
            raise np.linalg.LinAlgError("singular matrix")
        return np.array([J[1, 1] * b[0] - J[0, 1] * b[1], J[0, 0] * b[1] - J[1, 0] * b[0]]) / det
    return np.linalg.solve(J, b)


def _e(theta):
    return np.stack([np.cos(theta), np.sin(theta)], axis=-1)


def _n(theta):
    return np.stack([-np.sin(theta), np.cos(theta)], axis=-1)


@dataclass(frozen=True)
class ChordKinematics:
    """Kinematics of a link's chord frame: origin at its first joint, x axis toward the second.

    Arrays have a leading time axis for a `LinkageState` of many inputs.
    r, v, a: origin position, velocity, acceleration (global, (..., 2)); theta, omega, eps:
    angle of the chord, its rate and acceleration; length: chord length (constant for a
    rigid link, the distance for a sliding pair).
    """

    r: np.ndarray
    v: np.ndarray
    a: np.ndarray
    theta: np.ndarray
    omega: np.ndarray
    eps: np.ndarray
    length: np.ndarray


@dataclass(frozen=True)
class LinkageState:
    """Positions, velocities and accelerations of a linkage at one or many inputs.

    ``z, z_dot, z_ddot``: (n_z,) or (n_t, n_z), the input phi first, then the dependent
    coordinates in the order of ``linkage.coordinates``.
    """

    linkage: "Linkage"
    z: np.ndarray
    z_dot: np.ndarray
    z_ddot: np.ndarray
    singularity: np.ndarray = field(default=None)   # |det Phi_q| / (product of column norms)

    def __getitem__(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(value, rate, acceleration) of the coordinate ``name`` ("phi" or a dependent one)."""
        i = self.linkage._index(name)
        return self.z[..., i], self.z_dot[..., i], self.z_ddot[..., i]

    @property
    def phi(self):
        return self.z[..., 0]

    def point(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Position, velocity, acceleration (global, (..., 2)) of the point ``name``."""
        if name not in self.linkage.points:
            raise ValueError(f"unknown point {name!r}; valid: {sorted(self.linkage.points)}")
        return self.linkage._chain(self.linkage._points[name], self.z, self.z_dot, self.z_ddot)[:3]

    def link(self, name: str) -> ChordKinematics:
        """Chord-frame kinematics of the link ``name`` (see `ChordKinematics`)."""
        if name not in self.linkage.links:
            raise ValueError(f"unknown link {name!r}; valid: {sorted(self.linkage.links)}")
        p1, p2 = self.linkage.links[name]
        r1, v1, a1 = self.point(p1)
        r2, v2, a2 = self.point(p2)
        d, dd, ddd = r2 - r1, v2 - v1, a2 - a1
        L2 = np.einsum("...i,...i->...", d, d)
        cross = d[..., 0] * dd[..., 1] - d[..., 1] * dd[..., 0]
        # theta = atan2(d_y, d_x):  theta' = (d x d') / |d|^2,
        # theta'' = (d x d'') / |d|^2 - 2 (d . d') (d x d') / |d|^4
        omega = cross / L2
        eps = ((d[..., 0] * ddd[..., 1] - d[..., 1] * ddd[..., 0]) / L2
               - 2.0 * np.einsum("...i,...i->...", d, dd) * cross / L2**2)
        theta = np.arctan2(d[..., 1], d[..., 0])
        if theta.ndim:
            theta = np.unwrap(theta)
        return ChordKinematics(r1, v1, a1, theta, omega, eps, np.sqrt(L2))


class Linkage:
    """A one-input planar linkage given by vector loops (see the module docstring).

    Parameters
    ----------
    coordinates : sequence of str
        Names of the dependent coordinates q (angles [rad] or lengths [m]).
    loops : sequence of sequence of Vec
        Closed vector loops; each gives two equations, and 2 * len(loops) == len(coordinates).
    points : dict str -> sequence of Vec
        Each named point as a sum of vectors from the global origin (empty: the origin).
    links : dict str -> (str, str)
        Each named link by its first and second joint (names of points).
    branch : {+1, -1}
        Assembly branch: the sign of det Phi_q kept along the motion (times the class
        attribute ``det_sign``, which lets a subclass name its usual configuration +1).
    tol : float
        Newton iterates to round-off (max |Phi| <= 8 eps L or a step at the round-off of q,
        L the sum of the constant lengths) and fails unless max |Phi| <= tol * L.
    max_iter : int
        Newton iterations before an `AssemblyError`.
    singular_tol : float
        A position with |det Phi_q| / (product of its column norms) below this is singular
        (for a four-bar it is |sin| of the transmission angle).
    """

    det_sign = 1
    outline: tuple = ()        # point names drawn as a polyline by the cases' plots

    def __init__(self, coordinates: Sequence[str], loops, points: dict, links: dict, branch: int = 1,
                 tol: float = 1e-13, max_iter: int = 30, singular_tol: float = 1e-8):
        self.coordinates = tuple(coordinates)
        if INPUT in self.coordinates or len(set(self.coordinates)) != len(self.coordinates):
            raise ValueError(f"`coordinates` must be distinct names other than {INPUT!r}, got {coordinates!r}")
        self.names = (INPUT,) + self.coordinates
        self.loops = [tuple(loop) for loop in loops]
        if 2 * len(self.loops) != len(self.coordinates):
            raise ValueError(f"{len(self.loops)} loops give {2 * len(self.loops)} equations for "
                             f"{len(self.coordinates)} dependent coordinates; they must be equal")
        if branch not in (1, -1):
            raise ValueError(f"`branch` must be +1 or -1, got {branch!r}")
        self.branch = int(branch)
        self.points = {k: tuple(v) for k, v in points.items()}
        self.links = dict(links)
        for k, ends in self.links.items():
            if len(ends) != 2 or any(p not in self.points for p in ends):
                raise ValueError(f"link {k!r} must name two points of {sorted(self.points)}, got {ends!r}")
        for where, vecs in [(f"loop {i}", lp) for i, lp in enumerate(self.loops)] + list(self.points.items()):
            for v in vecs:
                if not isinstance(v, Vec):
                    raise TypeError(f"{where}: every vector must be a Vec, got {v!r}")
                for ref in (v.length, v.angle[0] if isinstance(v.angle, tuple) else v.angle):
                    if isinstance(ref, str) and ref not in self.names:
                        raise ValueError(f"{where}: unknown coordinate {ref!r}; valid: {list(self.names)}")
        angles = {(v.angle[0] if isinstance(v.angle, tuple) else v.angle) for lp in self.loops for v in lp}
        self._is_angle = np.array([c in angles for c in self.coordinates])
        scale = sum(abs(v.length) for lp in self.loops for v in lp if not isinstance(v.length, str))
        self.scale = scale if scale > 0 else 1.0
        self.tol, self.max_iter, self.singular_tol = float(tol), int(max_iter), float(singular_tol)
        self._last = None
        self._loops = [self._compile(lp) for lp in self.loops]
        self._points = {k: self._compile(v) for k, v in self.points.items()}

    # -- coordinates of one vector -------------------------------------------------------------
    def _index(self, name: str) -> int:
        if name not in self.names:
            raise ValueError(f"unknown coordinate {name!r}; valid: {list(self.names)}")
        return self.names.index(name)

    def _compile(self, vecs) -> tuple:
        """Vectors as (sign, length index or -1, length, angle index or -1, angle or offset)."""
        out = []
        for v in vecs:
            li = self.names.index(v.length) if isinstance(v.length, str) else -1
            ang, off = v.angle if isinstance(v.angle, tuple) else (v.angle, 0.0)
            ai = self.names.index(ang) if isinstance(ang, str) else -1
            out.append((float(v.sign), li, 0.0 if li >= 0 else float(v.length), ai,
                        float(off) if ai >= 0 else float(ang) + float(off)))
        return tuple(out)

    def _chain(self, vecs, z, zd, zdd):
        """Sum of vectors: position, velocity, acceleration (..., 2) and the velocity-quadratic
        part gamma of the acceleration (the part not multiplied by z'').

        ``vecs``: compiled vectors; z, zd, zdd: (n_z,) (scalar path, plain floats) or (n_t, n_z).
        """
        z, zd, zdd = (np.asarray(w, dtype=float) for w in (z, zd, zdd))
        if z.ndim == 1:
            return self._chain1(vecs, z.tolist(), zd.tolist(), zdd.tolist())
        shape = z.shape[:-1]
        r, v, a, gamma = (np.zeros(shape + (2,)) for _ in range(4))
        zero = np.zeros(shape)
        for s, li, lv, ai, av in vecs:
            l, ld, ldd = (z[:, li], zd[:, li], zdd[:, li]) if li >= 0 else (zero + lv, zero, zero)
            th, thd, thdd = (z[:, ai] + av, zd[:, ai], zdd[:, ai]) if ai >= 0 else (zero + av, zero, zero)
            e, n = _e(th), _n(th)
            r += s * l[:, None] * e
            v += s * (ld[:, None] * e + (l * thd)[:, None] * n)
            g = s * ((2.0 * ld * thd)[:, None] * n - (l * thd**2)[:, None] * e)
            gamma += g
            a += s * (ldd[:, None] * e + (l * thdd)[:, None] * n) + g
        return r, v, a, gamma

    @staticmethod
    def _chain1(vecs, z, zd, zdd):
        """`_chain` for one state in plain floats (the time loop calls it at every evaluation)."""
        rx = ry = vx = vy = ax = ay = gx = gy = 0.0
        for s, li, lv, ai, av in vecs:
            l, ld, ldd = (z[li], zd[li], zdd[li]) if li >= 0 else (lv, 0.0, 0.0)
            th, thd, thdd = (z[ai] + av, zd[ai], zdd[ai]) if ai >= 0 else (av, 0.0, 0.0)
            c, sn = math.cos(th), math.sin(th)
            rx += s * l * c
            ry += s * l * sn
            vx += s * (ld * c - l * thd * sn)
            vy += s * (ld * sn + l * thd * c)
            g1, g2 = 2.0 * ld * thd, l * thd * thd          # along n and -e
            hx, hy = s * (-g1 * sn - g2 * c), s * (g1 * c - g2 * sn)
            gx += hx
            gy += hy
            ax += s * (ldd * c - l * thdd * sn) + hx
            ay += s * (ldd * sn + l * thdd * c) + hy
        return np.array([rx, ry]), np.array([vx, vy]), np.array([ax, ay]), np.array([gx, gy])

    # -- loop equations (one input) ------------------------------------------------------------
    def _z(self, phi, q):
        return [float(phi)] + [float(x) for x in q]

    def residual(self, phi: float, q) -> np.ndarray:
        """Phi(phi, q), shape (2 n_loops,)."""
        z = self._z(phi, q)
        zeros = [0.0] * len(z)
        return np.concatenate([self._chain1(lp, z, zeros, zeros)[0] for lp in self._loops])

    def jacobian(self, phi: float, q) -> np.ndarray:
        """Phi_z = [Phi_phi, Phi_q], shape (2 n_loops, 1 + n_q)."""
        z = self._z(phi, q)
        J = np.zeros((2 * len(self._loops), len(z)))
        for k, lp in enumerate(self._loops):
            for s, li, lv, ai, av in lp:
                l = z[li] if li >= 0 else lv
                th = z[ai] + av if ai >= 0 else av
                c, sn = math.cos(th), math.sin(th)
                if li >= 0:
                    J[2 * k, li] += s * c
                    J[2 * k + 1, li] += s * sn
                if ai >= 0:
                    J[2 * k, ai] -= s * l * sn
                    J[2 * k + 1, ai] += s * l * c
        return J

    def singularity(self, phi: float, q) -> float:
        """|det Phi_q| / (product of the column norms of Phi_q): 0 at a singular position, 1 at best."""
        Jq = self.jacobian(phi, q)[:, 1:]
        return _relative_det(Jq)

    def _difference(self, q1, q2) -> np.ndarray:
        """q1 - q2 relative to the linkage's size, with angle differences wrapped to (-pi, pi]."""
        d = np.asarray(q1, dtype=float) - np.asarray(q2, dtype=float)
        d = np.where(self._is_angle, np.angle(np.exp(1j * d)), d / self.scale)
        return d

    def guess(self, phi: float) -> np.ndarray | None:
        """A starting point for Newton on the chosen branch (subclasses: closed-form geometry)."""
        return None

    # -- solution ------------------------------------------------------------------------------
    def _newton(self, phi: float, q, with_jacobian: bool = False):
        """Newton on Phi(phi, q) = 0 from q: (q, signed relative det Phi_q[, Phi_z]); no branch check."""
        def solve(q, R):
            try:
                return _solve(self.jacobian(phi, q)[:, 1:], R)
            except np.linalg.LinAlgError:
                raise SingularPositionError(
                    f"singular Jacobian of the loop equations at phi = {phi:.10g} rad: a singular "
                    "position (links aligned); the dependent coordinates are not defined by the input "
                    "there", phi) from None

        # iterate to round-off (8 eps L), accept up to tol * L when the step stalls at round-off
        try:
            q, _ = newton(lambda q: self.residual(phi, q), solve, q, tol=8.0 * np.finfo(float).eps * self.scale,
                          accept=self.tol * self.scale, max_iter=self.max_iter, name="loop closure")
        except NewtonError as err:
            raise AssemblyError(
                f"the linkage does not close at phi = {phi:.10g} rad: Newton left a loop residual of "
                f"{err.residual_norm:.3g} m after {err.iterations} iterations; the links cannot be "
                "assembled at this input (or the start was too far)", phi) from None
        J = self.jacobian(phi, q)
        det = _relative_det(J[:, 1:], signed=True)
        return (q, det, J) if with_jacobian else (q, det)

    def position(self, phi: float, guess=None) -> np.ndarray:
        """Dependent coordinates q at input ``phi`` by Newton's method on the chosen branch.

        Starts from ``guess``, else ``self.guess(phi)`` (closed-form geometry on the chosen
        branch), else the last solution.  Raises `AssemblyError` if the links cannot close or
        Newton ends on the other branch, and `SingularPositionError` at a singular position.
        """
        return self._position(phi, guess)[0]

    def _position(self, phi: float, guess=None):
        """(q, Phi_z, relative det) on the chosen branch (see `position`)."""
        phi = float(phi)
        q = guess if guess is not None else self.guess(phi)
        if q is None:
            if self._last is None:
                raise ValueError("no starting point: pass `guess` (the generic Linkage has no closed form)")
            q = self._last
        q, det, J = self._newton(phi, q, with_jacobian=True)
        if abs(det) < self.singular_tol:
            raise SingularPositionError(
                f"singular position at phi = {phi:.10g} rad (|det Phi_q| relative {abs(det):.2e} < "
                f"{self.singular_tol:g}): links are aligned, velocities are not determined by the input",
                phi)
        if np.sign(det) != self.branch * self.det_sign:
            raise AssemblyError(
                f"Newton converged to the other assembly branch at phi = {phi:.10g} rad "
                f"(sign det Phi_q = {np.sign(det):+.0f}, chosen branch {self.branch:+d}); "
                "give a starting point on the chosen branch", phi)
        self._last = q
        return q, J, abs(det)

    def state(self, phi: float, phi_dot: float = 0.0, phi_ddot: float = 0.0, guess=None) -> LinkageState:
        """Positions, velocities and accelerations at one input state."""
        q, J, sing = self._position(phi, guess)
        return self._derivatives(np.concatenate([[float(phi)], q]), float(phi_dot), float(phi_ddot), J, sing)

    def _derivatives(self, z, phi_dot, phi_ddot, J, sing) -> LinkageState:
        Jphi, Jq = J[:, 0], J[:, 1:]
        zd = np.concatenate([[phi_dot], _solve(Jq, -Jphi * phi_dot)])
        zeros = np.zeros_like(z)
        gamma = np.concatenate([self._chain(lp, z, zd, zeros)[3] for lp in self._loops])
        zdd = np.concatenate([[phi_ddot], _solve(Jq, -Jphi * phi_ddot - gamma)])
        return LinkageState(self, z, zd, zdd, np.asarray(sing))

    def chord(self, link: str, phi: float, phi_dot: float = 0.0, phi_ddot: float = 0.0) -> tuple:
        """Chord frame of ``link`` at one input state, in plain floats (the time loop's path):
        (r (2,), v (2,), a (2,), theta, omega, eps) with the formulas of `LinkageState.link`."""
        q, J, _ = self._position(phi)
        z = np.concatenate([[float(phi)], q])
        Jphi, Jq = J[:, 0], J[:, 1:]
        zd = np.concatenate([[phi_dot], _solve(Jq, -Jphi * phi_dot)])
        zl, zdl, zeros = z.tolist(), zd.tolist(), [0.0] * len(z)
        gamma = np.concatenate([self._chain1(lp, zl, zdl, zeros)[3] for lp in self._loops])
        zddl = [float(phi_ddot)] + _solve(Jq, -Jphi * phi_ddot - gamma).tolist()
        p1, p2 = self.links[link]
        r1, v1, a1, _ = self._chain1(self._points[p1], zl, zdl, zddl)
        r2, v2, a2, _ = self._chain1(self._points[p2], zl, zdl, zddl)
        dx, dy = r2[0] - r1[0], r2[1] - r1[1]
        ux, uy = v2[0] - v1[0], v2[1] - v1[1]
        wx, wy = a2[0] - a1[0], a2[1] - a1[1]
        L2 = dx * dx + dy * dy
        cross = dx * uy - dy * ux
        omega = cross / L2
        eps = (dx * wy - dy * wx) / L2 - 2.0 * (dx * ux + dy * uy) * cross / (L2 * L2)
        return r1, v1, a1, math.atan2(dy, dx), omega, eps

    def solve(self, phi, phi_dot=0.0, phi_ddot=0.0) -> LinkageState:
        """Kinematics along a path of inputs (arrays (n_t,)), checked for continuity.

        Each position is solved on the chosen branch (closed-form start if the linkage has
        one) and also continued by Newton from the previous one.  The path passes through a
        singular position between two inputs, and `SingularPositionError` names them, if
        the two solutions differ, if the sign of det Phi_q changes, or if |det Phi_q|
        (relative) has a local minimum at a sample and dips below ``dip_tol`` (1e-6) between
        its neighbours (a change point, where both branches meet).  `AssemblyError` where
        the links cannot close.
        """
        phi = np.atleast_1d(np.asarray(phi, dtype=float))
        phi_dot = np.broadcast_to(np.asarray(phi_dot, dtype=float), phi.shape)
        phi_ddot = np.broadcast_to(np.asarray(phi_ddot, dtype=float), phi.shape)
        states, prev = [], None
        for k, p in enumerate(phi):
            g = self.guess(p)
            if prev is not None:
                try:
                    q_cont, det = self._newton(p, prev)
                except AssemblyError:
                    q_cont, det = None, 0.0
                jumped = np.sign(det) != self.branch * self.det_sign or (
                    g is not None and q_cont is not None
                    and np.max(np.abs(self._difference(q_cont, self.position(p, g)))) > 1e-6)
                if jumped:
                    self._raise_passing(phi[k - 1], p)
                g = q_cont                  # keeps angle coordinates continuous (no 2 pi jumps)
            s = self.state(p, phi_dot[k], phi_ddot[k], guess=g)
            states.append(s)
            prev = s.z[1:]
        sing = np.array([float(s.singularity) for s in states])
        for k in range(1, len(phi) - 1):
            if sing[k] <= sing[k - 1] and sing[k] <= sing[k + 1]:
                p_min, d_min = self._dip(phi[k - 1], phi[k + 1])
                if d_min < self.dip_tol:
                    self._raise_passing(phi[k - 1], phi[k + 1], p_min)
        z = np.array([s.z for s in states])
        zd = np.array([s.z_dot for s in states])
        zdd = np.array([s.z_ddot for s in states])
        return LinkageState(self, z, zd, zdd, sing)

    def guess_many(self, phi: np.ndarray) -> np.ndarray | None:
        """Starting points (N, n_q) for many inputs (default: `guess` at each; None without one)."""
        rows = [self.guess(float(p)) for p in phi]
        return None if any(r is None for r in rows) else np.array(rows, dtype=float)

    def _jacobian_many(self, z: np.ndarray) -> np.ndarray:
        """Phi_z (N, 2 n_loops, n_z) at the coordinates z (N, n_z), as `jacobian`."""
        N, nz = z.shape
        J = np.zeros((N, 2 * len(self._loops), nz))
        for k, lp in enumerate(self._loops):
            for s, li, lv, ai, av in lp:
                l = z[:, li] if li >= 0 else lv
                th = z[:, ai] + av if ai >= 0 else np.full(N, av)
                c, sn = np.cos(th), np.sin(th)
                if li >= 0:
                    J[:, 2 * k, li] += s * c
                    J[:, 2 * k + 1, li] += s * sn
                if ai >= 0:
                    J[:, 2 * k, ai] -= s * l * sn
                    J[:, 2 * k + 1, ai] += s * l * c
        return J

    def solve_many(self, phi, phi_dot=0.0, phi_ddot=0.0) -> LinkageState:
        """`solve` with array operations over all inputs: one batched Newton from the closed-form
        starts (`guess_many`), then the velocities and accelerations.

        For the time loop along a path already checked (`solve`, `LinkFrame.check_path`): it does
        not look for singular positions between the inputs.  Where a start is missing, Newton
        does not converge, an input is near a singular position or on the other branch, it
        falls back to `solve`, which raises the precise error.
        """
        phi = np.atleast_1d(np.asarray(phi, dtype=float))
        phi_dot = np.broadcast_to(np.asarray(phi_dot, dtype=float), phi.shape)
        phi_ddot = np.broadcast_to(np.asarray(phi_ddot, dtype=float), phi.shape)
        q = self.guess_many(phi)
        if q is None:
            return self.solve(phi, phi_dot, phi_ddot)
        round_off = 8.0 * np.finfo(float).eps * self.scale
        for _ in range(self.max_iter + 1):
            z = np.concatenate([phi[:, None], q], axis=1)
            R = np.concatenate([self._chain(lp, z, np.zeros_like(z), np.zeros_like(z))[0] for lp in self._loops],
                               axis=1)
            J = self._jacobian_many(z)
            if not np.max(np.abs(R), initial=0.0) > round_off:
                break
            q = q - np.linalg.solve(J[:, :, 1:], R[:, :, None])[:, :, 0]
        Jq = J[:, :, 1:]
        norms = np.sqrt((Jq * Jq).sum(axis=1))
        det = np.linalg.det(Jq) / np.prod(norms, axis=1)
        if not (np.all(np.isfinite(q)) and np.max(np.abs(R), initial=0.0) <= self.tol * self.scale
                and np.all(np.abs(det) >= self.singular_tol)
                and np.all(np.sign(det) == self.branch * self.det_sign)):
            return self.solve(phi, phi_dot, phi_ddot)
        q[:, self._is_angle] = np.unwrap(q[:, self._is_angle], axis=0)
        z = np.concatenate([phi[:, None], q], axis=1)
        Jphi = J[:, :, 0]
        zd = np.concatenate([phi_dot[:, None], np.linalg.solve(Jq, (-Jphi * phi_dot[:, None])[:, :, None])[:, :, 0]],
                            axis=1)
        gamma = np.concatenate([self._chain(lp, z, zd, np.zeros_like(z))[3] for lp in self._loops], axis=1)
        rhs = -Jphi * phi_ddot[:, None] - gamma
        zdd = np.concatenate([phi_ddot[:, None], np.linalg.solve(Jq, rhs[:, :, None])[:, :, 0]], axis=1)
        return LinkageState(self, z, zd, zdd, np.abs(det))

    dip_tol = 1e-6

    def _raise_passing(self, phi_a, phi_b, phi_s=None):
        at = "" if phi_s is None else f" (at phi = {phi_s:.10g} rad)"
        raise SingularPositionError(
            f"the path passes through a singular position between phi = {phi_a:.10g} and {phi_b:.10g} rad"
            f"{at}: the solution leaves branch {self.branch:+d} there, and a linkage cannot be driven "
            "through it by its input", float(phi_b if phi_s is None else phi_s))

    def _dip(self, phi_a, phi_b) -> tuple[float, float]:
        """(phi, relative |det Phi_q|) at the smallest |det| on the branch between phi_a and phi_b."""
        from scipy.optimize import minimize_scalar
        if self.guess(0.5 * (phi_a + phi_b)) is None:
            return 0.5 * (phi_a + phi_b), 1.0                # no closed form: sign changes only

        def f(p):
            try:
                return abs(self._newton(p, self.guess(p))[1])
            except MechanismError:
                return 0.0
        lo, hi = min(phi_a, phi_b), max(phi_a, phi_b)
        res = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-13 * (1 + abs(hi))})
        return float(res.x), float(res.fun)

    def singular_positions(self, phi_range=(0.0, 2.0 * np.pi), n: int = 721, tol: float = 1e-6):
        """Inputs in ``phi_range`` where the linkage is singular or cannot assemble.

        Scans ``n`` inputs and refines every local minimum of the relative |det Phi_q|;
        returns (singular, blocked): the inputs where it is below ``tol``, and the scanned
        inputs where the links cannot close.
        """
        phis = np.linspace(*phi_range, n)
        singular, blocked, dets = [], [], np.full(n, np.inf)
        for k, p in enumerate(phis):
            g = self.guess(p)
            try:
                q, det = self._newton(p, g if g is not None else self._last)
            except SingularPositionError:
                dets[k] = 0.0
                continue
            except AssemblyError:
                blocked.append(float(p))
                continue
            dets[k] = abs(det)
        for k in range(n):
            left, right = dets[max(k - 1, 0)], dets[min(k + 1, n - 1)]
            if np.isfinite(dets[k]) and dets[k] <= left and dets[k] <= right:
                if dets[k] < tol:
                    singular.append(float(phis[k]))
                elif 0 < k < n - 1 and np.isfinite(left) and np.isfinite(right):
                    p_min, d_min = self._dip(phis[k - 1], phis[k + 1])
                    if d_min < tol:
                        singular.append(p_min)
        return np.unique(np.round(singular, 12)), np.array(blocked)
