"""Joints between two bodies (or a body and the ground), built from four primitives.

Each joint has a frame: at the initial configuration (the bodies' constructor positions) its
origin is the global point ``at`` and its z axis the global ``axis``; x and y complete a
right-handed frame.  The frame is stored in the local coordinates of each body (s_k, and the
columns x_k, y_k, z_k of R_k), so the joint follows the bodies.  With r_i = point_i(s_i),
d = r_j - r_i and unit vectors a = A_i a_i, b = A_j b_j, the primitives are

.. code:: text

    point:  C = r_i - r_j (3 rows)     C_q = [J_i, -J_j]           gamma = -(beta_i - beta_j)
    dot1:   C = a . b                  C_q = [b^T V_a, a^T V_b]     gamma = -(beta_a.b + 2 a'.b' + a.beta_b)
    dot2:   C = a . d                  C_q = [d^T V_a - a^T J_i, a^T J_j]
                                       gamma = -(beta_a.d + 2 a'.d' + a.(beta_j - beta_i))
    dist:   C = (d.d - L^2) / (2 L)    C_q = d^T [-J_i, J_j] / L    gamma = -(d'.d' + d.(beta_j - beta_i)) / L

(J, V: point and vector Jacobians, beta: their biases, so r'' = J q'' + beta; Nikravesh 1988,
ch. 11, writes the same dot-1 and dot-2 conditions).  The joints:

| joint | rows | frees |
| --- | --- | --- |
| Spherical | point | 3 rotations |
| Revolute | point, dot1(z_i, x_j), dot1(z_i, y_j) | rotation about z |
| Cylindrical | dot1(z_i, x_j), dot1(z_i, y_j), dot2(x_i), dot2(y_i) | rotation about and sliding along z |
| Prismatic | Cylindrical + dot1(x_i, y_j) | sliding along z |
| Fixed | point, dot1(x_i, y_j), dot1(x_i, z_j), dot1(y_i, z_j) | nothing |
| PointOnLine | dot2(x_i), dot2(y_i) | sliding along z and 3 rotations |
| Distance | dist | 5 relative motions |
| Universal | point, dot1(x_i, y_j) | rotations about the fork axes x_i and y_j |
| Screw | Cylindrical + screw | rotation about z with the sliding d = p theta / (2 pi) |

The screw row couples the rotation theta of x_j about z_i (from x_i) and the sliding
d = z_i . (r_j - r_i) of a screw of pitch (lead) p, d = p theta / (2 pi), without measuring an angle
(which would wrap at half a turn): with kappa = p / (2 pi) and f = d / kappa, the direction
u(f) = cos f y_i - sin f x_i must be perpendicular to x_j,

.. code:: text

    screw:  C = kappa u(f) . x_j = kappa sin(theta - f)   (= kappa theta - d to first order)

the rows of `AngleDriver` with its law f(t) replaced by f(q) (C_q and gamma:
`flexmbs.constraints.batch.JointBatch`).  C = 0 also on theta = f + pi, half a turn away from the
screw's branch, which a run starting on the branch does not reach.
"""
from __future__ import annotations

import numpy as np

from .base import EMPTY, Constraint, Ground, body_label, check_body_pair, joint_point
from .batch import JointBatch

__all__ = ["Joint", "Spherical", "Revolute", "Cylindrical", "Prismatic", "Translational", "Fixed", "PointOnLine",
           "Distance", "Universal", "Screw"]


def _perpendicular(z) -> tuple[np.ndarray, np.ndarray]:
    """Unit x, y with (x, y, z) right-handed, x chosen from the global axis least aligned with z."""
    e = np.eye(3)[int(np.argmin(np.abs(z)))]
    x = e - (e @ z) * z
    x /= np.linalg.norm(x)
    return x, np.cross(z, x)


class Joint(Constraint):
    """Base of the joints: two sides (body or ground), a joint frame and a list of primitives.

    Parameters
    ----------
    body_i, body_j : Body or None
        The two bodies; None is the ground (not both).
    at : array (3,), optional
        Global position of the joint's origin in the initial configuration; default the
        reference point of body_i (of body_j if body_i is the ground), or the point given by s_i.
    axis : array (3,), optional
        Global direction of the joint's z axis in the initial configuration (required by
        Revolute, Cylindrical, Prismatic, PointOnLine).
    s_i, s_j : array (3,) or a body's marker, optional
        The joint's point in body coordinates of body_i / body_j (global for the ground),
        or a marker object of that body (e.g. a mesh node of a flexible body), instead of ``at``.  Both sides must then give the same global point in the initial
        configuration (within ``tol`` relative to its size), else ValueError.
    name : str, optional
        Default ``"<Class>(<body_i>, <body_j>)"``.
    tol : float
        Relative tolerance of that check.
    """

    _rows: tuple = ()
    _dims = (3,)                    # body dimensions the joint accepts
    _needs_axis = False
    _check_coincidence = True

    def __init__(self, body_i, body_j=None, *, at=None, axis=None, s_i=None, s_j=None, name=None,
                 tol: float = 1e-8):
        cls = type(self).__name__
        name = check_body_pair(cls, body_i, body_j, name)
        dims = {getattr(b, "dim", None) for b in (body_i, body_j) if b is not None}
        self.dim = dims.pop() if len(dims) == 1 else None
        if self.dim not in self._dims:
            raise ValueError(f"{cls}: both bodies must have the same dimension, one of {self._dims}; got "
                             f"{[None if b is None else (b.name, b.dim) for b in (body_i, body_j)]} "
                             "(planar revolute and prismatic joints: flexmbs.constraints.planar)")
        self.bodies = (body_i, body_j)
        self.name = name
        self._side = tuple(Ground(self.dim) if b is None else b for b in self.bodies)
        given = [None if s is None else self._marker(s, n, b)
                 for s, n, b in ((s_i, "s_i", body_i), (s_j, "s_j", body_j))]
        P0, self.s, A0 = joint_point(self.name, self.dim, self.bodies, self._side, given,
                                     None if at is None else self._vec(at, "at"), tol, self._check_coincidence)

        if axis is not None:
            if self.dim != 3:
                raise ValueError(f"joint {self.name!r}: `axis` is for 3D joints, got {axis!r} in {self.dim}D")
            z = self._vec(axis, "axis")
            nz = np.linalg.norm(z)
            if not nz > 0:
                raise ValueError(f"joint {self.name!r}: `axis` must be a nonzero 3-vector, got {axis!r}")
            z = z / nz
            x, y = _perpendicular(z)
            F0 = np.column_stack([x, y, z])
        elif self._needs_axis:
            raise ValueError(f"joint {self.name!r}: {cls} needs `axis` (a global direction), got None")
        else:
            F0 = A0[1] if body_i is None else A0[0]        # body_i's axes
        self.R = [A0[k].T @ F0 for k in range(2)]           # joint frame in each body's coordinates
        self.n_c = sum(self.dim if r[0] == "point" else 1 for r in self._rows)

    @property
    def primitive_rows(self) -> tuple:
        """The joint's constraint rows as primitives, in row order: ("point",) (dim rows, p_i = p_j),
        ("dot1", a, b) (axis a of frame i normal to axis b of frame j), ("dot2", a) (d = p_j - p_i
        normal to axis a of frame i), ("dist",), ("angle", ...), ("screw",)
        (`flexmbs.constraints.batch.JointBatch` evaluates them)."""
        return self._rows

    @property
    def sides(self) -> tuple:
        """The two sides of the joint: ``(body_i, body_j)``, with `Ground` for a ``None`` body."""
        return self._side

    def _marker(self, x, what, body):
        """A point of ``body``: a vector of `dim` numbers, or a marker object that the body takes (a mesh
        node `Node(i)` of a flexible or corotational body, which checks its own): tried once on the body's
        initial coordinates, so that a marker the body does not know (a Node on a rigid body) is named
        here rather than failing inside numpy."""
        try:
            np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            try:
                if body is None:
                    raise ValueError("the ground takes global points only")
                body.point(body.initial_coordinates(), x)
            except (TypeError, ValueError, IndexError, AttributeError) as err:
                why = f" ({err})" if body is None or body.name in str(err) else ""     # the body's own words
                raise ValueError(f"joint {self.name!r}: `{what}` is {x!r}, which {body_label(body)} does not take as a "
                                 f"marker{why}; give a vector of {self.dim} numbers (a point in the body's "
                                 "coordinates), or a Node(i) on a flexible or corotational body") from None
            return x
        return self._vec(x, what)

    def _vec(self, x, what):
        a = np.asarray(x, dtype=float)
        if a.shape != (self.dim,) or not np.all(np.isfinite(a)):
            raise ValueError(f"joint {self.name!r}: `{what}` must be a finite vector of {self.dim} components, "
                             f"got {x!r}")
        return a

    def _label(self, k):
        return body_label(self.bodies[k])

    # -- evaluation -----------------------------------------------------------------------------
    # A joint alone is a batch of one (`flexmbs.constraints.batch.JointBatch`): the same code
    # evaluates it here and, with all the other joints of a System, in `System`.
    def _batch(self):
        one = self.__dict__.get("_one")
        if one is None:
            n0, n1 = self._side[0].n_q, self._side[1].n_q
            cols = (None if self.bodies[0] is None else 0, None if self.bodies[1] is None else n0)
            one = self._one = JointBatch([self], [cols], [0], n0 + n1, self.n_c, self.dim)
        return one

    @staticmethod
    def _stacked(xs, velocity=False):
        x = np.concatenate([np.asarray(x, dtype=float) for x in xs])
        return JointBatch.extend_velocity(x) if velocity else JointBatch.extend(x)

    def residual(self, t, qs) -> np.ndarray:
        C = np.empty(self.n_c)
        self._batch().evaluate(t, self._stacked(qs), C)
        return C

    def jacobian(self, t, qs) -> list:
        one = self._batch()
        buf = np.zeros(self.n_c * one.n_q + 1)
        one.evaluate(t, self._stacked(qs), np.empty(self.n_c), buf)
        J = buf[:-1].reshape(self.n_c, one.n_q)
        n0 = self._side[0].n_q
        return [J[:, :n0].copy(), J[:, n0:].copy()]

    def time_derivative(self, t, qs) -> np.ndarray:
        Ct = np.zeros(self.n_c)
        self._batch().time_derivative(t, self._stacked(qs), Ct)
        return Ct

    def gamma(self, t, qs, vs) -> np.ndarray:
        g = np.empty(self.n_c)
        self._batch().gamma(t, self._stacked(qs), self._stacked(vs, velocity=True), g)
        return g

    # -- reactions ------------------------------------------------------------------------------
    def reaction_points(self) -> list:
        return [None if b is None else self.s[k] for k, b in enumerate(self.bodies)]

    def frame(self, t, qs):
        """Origin on body_i's side and axes (x, y, z) of the joint, global."""
        side = self._side[0]
        return side.point(qs[0], self.s[0]), side.rotation(qs[0]) @ self.R[0]


class Spherical(Joint):
    """Ball joint: the joint's points of the two bodies coincide (3 equations; in 2D, 2: a pin)."""

    _rows = (("point",),)
    _dims = (2, 3)


class Revolute(Joint):
    """Revolute (pin) joint about ``axis`` through ``at`` (5 equations)."""

    _rows = (("point",), ("dot1", 2, 0), ("dot1", 2, 1))
    _needs_axis = True


class Cylindrical(Joint):
    """Cylindrical joint: rotation about and translation along ``axis`` through ``at`` (4 equations)."""

    _rows = (("dot1", 2, 0), ("dot1", 2, 1), ("dot2", 0), ("dot2", 1))
    _needs_axis = True


class Prismatic(Joint):
    """Prismatic (translational) joint: translation along ``axis`` only (5 equations)."""

    _rows = (("dot1", 2, 0), ("dot1", 2, 1), ("dot2", 0), ("dot2", 1), ("dot1", 0, 1))
    _needs_axis = True


Translational = Prismatic


class Fixed(Joint):
    """Fixed (weld) joint: no relative motion (6 equations)."""

    _rows = (("point",), ("dot1", 0, 1), ("dot1", 0, 2), ("dot1", 1, 2))


class PointOnLine(Joint):
    """The point ``at`` of body_j stays on the line of body_i through ``at`` along ``axis`` (2 equations)."""

    _rows = (("dot2", 0), ("dot2", 1))
    _needs_axis = True


class Distance(Joint):
    """Constant distance between a point of body_i and a point of body_j (1 equation).

    Parameters
    ----------
    body_i, body_j : Body or None
    at_i, at_j : array (3,), optional
        The two points, global, in the initial configuration (default: the reference points);
        or give ``s_i``, ``s_j`` in body coordinates.
    length : float, optional
        The distance L > 0 [m]; default the initial distance.
    """

    _rows = (("dist",),)
    _dims = (2, 3)
    _check_coincidence = False

    def __init__(self, body_i, body_j=None, *, at_i=None, at_j=None, s_i=None, s_j=None, length=None,
                 name=None):
        super().__init__(body_i, body_j, at=at_i, s_i=s_i, name=name)
        if s_j is None:
            k = self._side[1]
            q0 = EMPTY if body_j is None else body_j.initial_coordinates()
            O = k.point(q0, np.zeros(self.dim))
            Pj = O if at_j is None else self._vec(at_j, "at_j")
            self.s[1] = k.rotation(q0).T @ (Pj - O)
        else:
            self.s[1] = self._marker(s_j, "s_j", body_j)
        if length is None:
            q0 = [EMPTY if b is None else b.initial_coordinates() for b in self.bodies]
            length = float(np.linalg.norm(self._side[1].point(q0[1], self.s[1]) - self._side[0].point(q0[0], self.s[0])))
        if not (np.isfinite(length) and length > 0):
            raise ValueError(f"joint {self.name!r}: `length` must be positive (the points must be apart), got {length!r}")
        self.length = float(length)


class Universal(Joint):
    """Universal (Cardan, Hooke) joint at ``at``: the fork axis ``axis_i`` of body_i stays
    perpendicular to the fork axis ``axis_j`` of body_j (4 equations: point, dot1(x_i, y_j)).

    The joint frame at the start is x = axis_i, y = axis_j, z = x cross y (the cross's normal).
    Of the three relative rotations it frees the two about the fork axes; the shafts' angles
    are related by the Cardan law tan(phi_j) = tan(phi_i) cos(beta) for a bend angle beta.

    Parameters
    ----------
    body_i, body_j : Body or None
    at : array (3,), optional
        The cross's centre at the start (default: body_i's reference point, or the point s_i).
    axis_i, axis_j : array (3,)
        The fork axes at the start, global, perpendicular to each other.
    """

    _rows = (("point",), ("dot1", 0, 1))

    def __init__(self, body_i, body_j=None, *, at=None, axis_i=None, axis_j=None, s_i=None, s_j=None, name=None,
                 tol: float = 1e-8):
        name = name or f"Universal({'ground' if body_i is None else getattr(body_i, 'name', body_i)}, " \
                       f"{'ground' if body_j is None else getattr(body_j, 'name', body_j)})"
        forks = []
        for what, a in (("axis_i", axis_i), ("axis_j", axis_j)):
            try:
                x = None if a is None or isinstance(a, (str, bytes)) else np.asarray(a, dtype=float)
            except (TypeError, ValueError):
                x = None
            if x is None or x.shape != (3,) or not np.all(np.isfinite(x)) or not np.linalg.norm(x) > 0:
                raise ValueError(f"joint {name!r}: `{what}` must be a nonzero finite 3-vector (a fork axis, global, "
                                 f"at the start), got {a!r}")
            forks.append(x / np.linalg.norm(x))
        if abs(forks[0] @ forks[1]) > 1e-8:
            raise ValueError(f"joint {name!r}: `axis_i` and `axis_j` must be perpendicular (the arms of the cross), "
                             f"got the angle {np.degrees(np.arccos(np.clip(forks[0] @ forks[1], -1, 1))):.6g} deg")
        z = np.cross(forks[0], forks[1])
        super().__init__(body_i, body_j, at=at, axis=z, s_i=s_i, s_j=s_j, name=name, tol=tol)
        F0 = np.column_stack([forks[0], forks[1], z])
        q0 = [EMPTY if b is None else b.initial_coordinates() for b in self.bodies]
        self.R = [side.rotation(q).T @ F0 for side, q in zip(self._side, q0)]


class Screw(Joint):
    """Screw (helical) joint along ``axis`` through ``at``: the rotation theta of body_j about the
    axis and its sliding d along it are tied by d = pitch theta / (2 pi) (5 equations: the
    Cylindrical's four and the screw row of the module docstring; it frees one motion).

    Parameters
    ----------
    body_i, body_j : Body or None
    pitch : float, nonzero
        p [m]: the sliding of body_j along +axis per turn of body_j about +axis (relative to body_i);
        p > 0 a right-handed screw, p < 0 a left-handed one.
    at, axis, s_i, s_j, name, tol
        As `Joint` (``axis`` is required).
    """

    _rows = Cylindrical._rows + (("screw",),)
    _needs_axis = True

    def __init__(self, body_i, body_j=None, *, pitch, at=None, axis=None, s_i=None, s_j=None, name=None,
                 tol: float = 1e-8):
        super().__init__(body_i, body_j, at=at, axis=axis, s_i=s_i, s_j=s_j, name=name, tol=tol)
        try:
            p = None if isinstance(pitch, (str, bytes, bool)) else float(pitch)
        except (TypeError, ValueError):
            p = None
        if p is None or not np.isfinite(p) or p == 0.0:
            raise ValueError(f"joint {self.name!r}: `pitch` must be a finite nonzero number (the sliding per turn "
                             f"[m]; negative for a left-handed screw), got {pitch!r}")
        self.pitch = p
