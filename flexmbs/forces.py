"""Force elements between two bodies (or a body and the ground), for ``System(..., forces=[...])``.

Every element is written as generalized forces conjugate to a few scalar *measures* g(q) of the
relative position of its two markers (body points s and body-fixed directions u, through the body
protocol only, so each element works on rigid, flexible (a `Node` or an `Interface`) and planar
bodies alike):

.. code:: text

    g = g(q) (n_g,),   G = dg/dq (n_g, n_q) from the markers' point and vector Jacobians
    F = -k o (g - g_0) - c o g' + f_a(t),      g' = G v               (k, c: diagonal)
    Q = G^T F                                                          generalized force
    U_e = 1/2 (g - g_0)^T diag(k) (g - g_0)                            stored energy (into U)
    P_damping = g'^T diag(c) g' >= 0,   P_loads = g' . f_a             powers (into the works)

so d(T + V_g + U)/dt = P_loads - P_damping holds for the element exactly, whatever the bodies:
Q is the gradient of U_e with the same G.  The works and the energies of a block of outputs take
U_e and the powers at all rows at once (`ForceElement.power_history`, ``potential_history``), with
g' from the markers' rates (`flexmbs.bodies.motion.marker_motion`) rather than G v.  The measures:

| element | g | n_g |
| --- | --- | --- |
| SpringDamper | l = abs(r_j - r_i), the length between the points | 1 |
| RotationalSpringDamper | theta = atan2(u_j . w_i, u_j . u_i), the angle about the axis | 1 |
| Bushing | (a_k . (r_j - r_i)) and the rotation vee(A_i^T A_j - A_j^T A_i) / 2 in frame i | 6 (2D: 3) |
| ForceLaw | d = r_j - r_i (global) with the user's F(t, d, d') on point j | dim |

The tangent of implicit integrators (`tangent`):

.. code:: text

    K = -dQ/dq = -G^T (dF/dg) G - G^T (dF/dg') d(G v)/dq - (dG^T/dq) F
    C = -dQ/dv = -G^T (dF/dg') G

with dF/dg, dF/dg' analytic (-diag k, -diag c; a `ForceLaw`'s by differences of the user's law)
and the last two (geometric) terms by forward differences of G over the element's coordinates:
the body protocol gives first derivatives only.  index3-alpha's finite-difference tangent holds
all of K; between new tangents it refreshes the material part -G^T (dF/dg) G (one evaluation of G,
`System.elastic_stiffness`), as it does the flexible bodies' elastic stiffness.
NOTE: `RotationalSpringDamper` measures theta in
(-pi, pi] from its rest angle; its energy is continuous for relative rotations below half a turn.
docs/multibody.md, "Force elements between bodies"; docs/design.md, "Force elements".
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable

import numpy as np

from .bodies.base import real_number
from .bodies.loads import _of_time, values_of_time
from .bodies.motion import marker_motion
from .constraints.base import EMPTY, Ground, body_label, check_body_pair, joint_point
from .user_functions import evaluate, non_finite

# the force element kinds (tests and flexmbs.kernel_schema.KINDS read this list as such); the helpers over rows,
# `element_power_history`, `element_potential_history` and `powerless`, are imported by name
__all__ = ["ForceElement", "SpringDamper", "RotationalSpringDamper", "Bushing", "ForceLaw"]

_H = np.sqrt(np.finfo(float).eps)


def _nonnegative(value, what: str, owner: str, n: int | None = None) -> np.ndarray | float:
    """``value`` as a number (n None) or n numbers (a number given for all), finite and >= 0;
    ValueError naming ``owner``'s argument ``what`` otherwise."""
    if n is None:
        x = real_number(value, what, owner)
        if not (np.isfinite(x) and x >= 0):
            raise ValueError(f"{owner}: `{what}` must be a finite number >= 0, got {value!r}")
        return x
    try:
        a = None if isinstance(value, (str, bytes)) else np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()
    except (TypeError, ValueError):
        a = None
    if a is None or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"{owner}: `{what}` must be a number or {n} numbers, finite and >= 0, got {value!r}")
    return a


def _rows(x) -> int:
    """The number of rows of the stacked coordinates of an element's sides (each (n_t, n_q,b))."""
    return len(x[0])


def element_power_history(f, t, Qs, Vs) -> dict[str, np.ndarray]:
    """{"damping", "loads"}: each (n_t,) [W], the powers of the force element ``f`` at the times t (n_t,)
    and its sides' coordinates and velocities Qs, Vs ([Q_i, Q_j], each (n_t, n_q of its body); (n_t, 0)
    for the ground): ``f.power_history`` when it has one (every element of flexmbs does, all rows at
    once), else its one-state ``powers`` row by row (a user's element that gives one state only)."""
    if callable(getattr(f, "power_history", None)):
        return f.power_history(t, Qs, Vs)
    out = {"damping": np.zeros(len(t)), "loads": np.zeros(len(t))}
    for k, tk in enumerate(t):
        for key, P in f.powers(float(tk), [Q[k] for Q in Qs], [V[k] for V in Vs]).items():
            out[key][k] += P
    return out


def powerless(f) -> bool:
    """True when the powers of the force element ``f`` are zero at every state: a `ForceElement` whose
    powers are the linear law's (``power_history`` not overridden: a stop, friction and a user's
    `ForceLaw` dissipate or feed power) with no damper (c = 0) and no actuator, a pure spring, whose
    work is all in U.  Any other element (a `Contact`, a user's element) is taken to have power."""
    return (isinstance(f, ForceElement) and type(f).power_history is ForceElement.power_history
            and f.actuator is None and not np.any(f.c))


def element_potential_history(f, Qs) -> np.ndarray:
    """U_e (n_t,) [J] of the force element ``f`` at its sides' stacked coordinates Qs (as
    `element_power_history`): ``f.potential_history`` when it has one, else ``potential`` row by row."""
    if callable(getattr(f, "potential_history", None)):
        return np.asarray(f.potential_history(Qs), dtype=float)
    return np.array([f.potential([Q[k] for Q in Qs]) for k in range(_rows(Qs))], dtype=float)


class ForceElement(ABC):
    """Base of the force elements: two sides, measures g(q) with G = dg/dq, and a law F(t, g, g').

    Subclasses give ``measures(qs) -> (g, [G_i, G_j])``; ``law(t, g, gd) -> (F, F_loads)``, where
    F_loads is the part of F whose power goes into the works' ``loads`` (the actuator, a user's law),
    and ``law_derivatives(t, g, gd) -> (dF/dg, dF/dgd)`` are the linear element's unless overridden;
    the stiffness ``k``, damping ``c`` and rest values ``g0`` give the
    stored energy and the dissipated power (module docstring).
    """

    name: str
    bodies: tuple
    dim: int
    k: np.ndarray
    c: np.ndarray
    g0: np.ndarray
    actuator = None                 # f_a(t), a function of time (SpringDamper, RotationalSpringDamper)
    #: the force is smooth in the state; False for a penalty stop, whose force and power have a kink (or an
    #: infinite derivative) where it begins: the works' quadrature then takes its most points (`simulate.step_rule`)
    smooth = True

    def _sides(self, body_i, body_j, name):
        cls = type(self).__name__
        for key, b in (("body_i", body_i), ("body_j", body_j)):
            if b is not None and not all(hasattr(b, a) for a in ("name", "dim", "point", "point_jacobian",
                                                                   "vector_jacobian", "initial_coordinates", "n_q")):
                raise ValueError(f"{cls}: `{key}` must be a body (flexmbs.bodies) or None (the ground), got {b!r} "
                                 f"({type(b).__name__})")
        self.name = check_body_pair(cls, body_i, body_j, name)
        dims = {b.dim for b in (body_i, body_j) if b is not None}
        if len(dims) != 1:
            raise ValueError(f"{cls} {self.name!r}: both bodies must have the same dimension, got "
                             f"{[(b.name, b.dim) for b in (body_i, body_j)]}")
        self.dim = dims.pop()
        self.bodies = (body_i, body_j)
        self._side = tuple(Ground(self.dim) if b is None else b for b in self.bodies)

    def _initial(self):
        return [EMPTY if b is None else b.initial_coordinates() for b in self.bodies]

    # -- evaluation ------------------------------------------------------------------------------
    @abstractmethod
    def measures(self, qs) -> tuple[np.ndarray, list]:
        """(g (n_g,), [G_i (n_g, n_q,i), G_j (n_g, n_q,j)]): the measures at the sides' coordinates qs
        and their Jacobians (an empty block for the ground)."""

    def law(self, t, g, gd):
        """(F, F_loads) of the linear spring-damper-actuator F = -k (g - g0) - c gd + f_a(t), F_loads = f_a."""
        fa = self._actuator(t)
        return -self.k * (g - self.g0) - self.c * gd + fa, fa

    def law_derivatives(self, t, g, gd):
        """(dF/dg, dF/dgd) = (-diag k, -diag c)."""
        return -np.diag(self.k), -np.diag(self.c)

    def _actuator(self, t) -> np.ndarray:
        """f_a(t) (n_g,): the element's ``actuator`` (a number at each t: a force along its one measure),
        zero without one; ValueError naming the element if it gives something else."""
        if self.actuator is None:
            return np.zeros(len(self.g0))
        what = f"{type(self).__name__} {self.name!r}: its actuator"
        value = np.asarray(evaluate(what, t, self.actuator, t), dtype=float)
        if value.shape != ():
            raise self._not_a_number(t, value)
        if not np.isfinite(value):
            raise non_finite(what, t)
        return value.reshape(1)

    def _not_a_number(self, t, value) -> ValueError:
        """The error of an actuator whose value at t is not one number."""
        value = np.asarray(value, dtype=float) if np.ndim(value) else value
        shown = value.tolist() if isinstance(value, np.ndarray) else value
        return ValueError(f"{type(self).__name__} {self.name!r}: its `actuator` must give a finite number at each "
                          f"t, got {shown!r} (shape {np.shape(value)}) at t = {float(t):g}")

    def _state(self, t, qs, vs):
        g, G = self.measures(qs)
        gd = sum(Gb @ vb for Gb, vb in zip(G, vs))
        return g, G, gd

    def generalized_forces(self, t, qs, vs) -> list:
        """[Q_i, Q_j] = [G_i^T F, G_j^T F] (each (n_q of its body,), empty for the ground)."""
        g, G, gd = self._state(t, qs, vs)
        F = self.law(t, g, gd)[0]
        return [Gb.T @ F for Gb in G]

    def potential(self, qs) -> float:
        """U_e = 1/2 (g - g0)^T diag(k) (g - g0) [J] at one state: `potential_history` of one row."""
        return float(self.potential_history([np.asarray(q, dtype=float)[None] for q in qs])[0])

    def powers(self, t, qs, vs) -> dict:
        """{"damping": g'^T diag(c) g' >= 0, "loads": g' . F_loads} [W] at one state: `power_history` of
        one row."""
        P = self.power_history(np.array([float(t)]), [np.asarray(q, dtype=float)[None] for q in qs],
                               [np.asarray(v, dtype=float)[None] for v in vs])
        return {key: float(x[0]) for key, x in P.items()}

    # -- all rows at once (the works' integrand and the energies of a block of outputs) ------------
    def measure_history(self, Qs, Vs=None) -> tuple[np.ndarray, np.ndarray | None]:
        """(g (n_t, n_g), g' = G v (n_t, n_g), or None when Vs is None) at the rows of the sides'
        coordinates and velocities Qs, Vs ([Q_i, Q_j], each (n_t, n_q of its body), (n_t, 0) for the
        ground).  The elements of flexmbs give it from their markers' positions and rates at all rows at
        once (`marker_motion`); this default, for a subclass that gives ``measures`` only, evaluates
        ``measures`` one row at a time."""
        n_t = _rows(Qs)
        g = np.empty((n_t, len(self.g0)))
        gd = None if Vs is None else np.empty((n_t, len(self.g0)))
        for k in range(n_t):
            g[k], G = self.measures([Q[k] for Q in Qs])
            if Vs is not None:
                gd[k] = sum(Gb @ V[k] for Gb, V in zip(G, Vs))
        return g, gd

    def actuator_history(self, t) -> np.ndarray:
        """f_a (n_t, 1) at the times t (n_t,): zero without an actuator; else `flexmbs.bodies.loads.values_of_time`:
        offset + rate t for one that declares ``affine`` (a constant), one call with the array t for a
        function that declares ``vectorized = True`` (as a driver's law, `flexmbs.constraints.base.law_history`),
        else the user's function of one t, once per time.  The values are checked as `_actuator` checks one:
        ValueError naming the element and the first t where it is not a number, `UserFunctionError`
        where it raises or is NaN or inf."""
        t = np.asarray(t, dtype=float).reshape(-1)
        if self.actuator is None:
            return np.zeros((len(t), len(self.g0)))
        what = f"{type(self).__name__} {self.name!r}: its actuator"
        return values_of_time(self.actuator, t, what, (), wrong_shape=self._not_a_number)[:, None]

    def power_history(self, t, Qs, Vs) -> dict[str, np.ndarray]:
        """{"damping": g'^T diag(c) g' >= 0, "loads": g' . f_a(t)}, each (n_t,) [W], at the times t (n_t,)
        and the rows of Qs, Vs (`measure_history`), all rows at once; zeros without evaluating the
        measures for an element without damping and actuator (`powerless`: a spring, its work is in U)."""
        t = np.asarray(t, dtype=float).reshape(-1)
        if powerless(self):
            return {"damping": np.zeros(len(t)), "loads": np.zeros(len(t))}
        gd = self.measure_history(Qs, Vs)[1]
        return {"damping": (gd * gd) @ self.c, "loads": np.einsum("tg,tg->t", gd, self.actuator_history(t))}

    def potential_history(self, Qs) -> np.ndarray:
        """U_e = 1/2 (g - g0)^T diag(k) (g - g0) (n_t,) [J] at the rows of Qs (`measure_history`)."""
        dg = self.measure_history(Qs)[0] - self.g0
        return 0.5 * ((dg * dg) @ self.k)

    def tangent(self, t, qs, vs, geometric: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(K, C) = (-dQ/dq, -dQ/dv) over the stacked coordinates of both sides (n_i + n_j, n_i + n_j):
        the material parts from dF/dg, dF/dg' and the geometric parts by forward differences of G
        (module docstring).  ``geometric=False``: the material parts only, K_m = -G^T (dF/dg) G and C
        (one evaluation of G, what index3-alpha refreshes at each step: `System.elastic_stiffness`)."""
        qs = [np.asarray(q, dtype=float) for q in qs]
        vs = [np.asarray(v, dtype=float) for v in vs]
        g, G, gd = self._state(t, qs, vs)
        F = self.law(t, g, gd)[0]
        dF_dg, dF_dgd = self.law_derivatives(t, g, gd)
        Gs = np.hstack(G)
        if not geometric:
            return -Gs.T @ dF_dg @ Gs, -Gs.T @ dF_dgd @ Gs
        v = np.concatenate(vs)
        GtF, Gv = Gs.T @ F, Gs @ v
        n = Gs.shape[1]
        dGtF, dGv = np.empty((n, n)), np.empty((len(g), n))
        col = 0
        for k, q in enumerate(qs):
            for j in range(len(q)):
                h = _H * max(1.0, abs(q[j]))
                qp = [x.copy() for x in qs]
                qp[k][j] += h
                Gp = np.hstack(self.measures(qp)[1])
                dGtF[:, col] = (Gp.T @ F - GtF) / h
                dGv[:, col] = (Gp @ v - Gv) / h
                col += 1
        K = -Gs.T @ dF_dg @ Gs - Gs.T @ dF_dgd @ dGv - dGtF
        C = -Gs.T @ dF_dgd @ Gs
        return K, C

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r})"


def _marker(element, side: int, s, what: str):
    """A marker of side ``side``: a point of `dim` numbers, or a body's marker object (a `Node`, an
    `Interface`) tried once on the body's initial coordinates; ValueError naming the element."""
    body = element.bodies[side]
    try:
        a = None if isinstance(s, (str, bytes)) else np.asarray(s, dtype=float)
    except (TypeError, ValueError):
        a = None
    if a is not None and a.dtype != object:
        if a.shape != (element.dim,) or not np.all(np.isfinite(a)):
            raise ValueError(f"{type(element).__name__} {element.name!r}: `{what}` must be a finite vector of "
                             f"{element.dim} components or a marker of {body_label(body)}, got {s!r}")
        return a
    try:
        if body is None:
            raise ValueError("the ground takes global points only")
        body.point(body.initial_coordinates(), s)
    except (TypeError, ValueError, IndexError, AttributeError) as err:
        raise ValueError(f"{type(element).__name__} {element.name!r}: `{what}` is {s!r}, which {body_label(body)} "
                         f"does not take as a marker ({err})") from None
    return s


class SpringDamper(ForceElement):
    """A translational spring-damper-actuator along the line of two points.

    .. code:: text

        d = r_j - r_i,  l = abs(d),  e = d / l,  l' = e . (r_j' - r_i')
        F = -k (l - l0) - c l' + f_a(t)   (tension < 0: pulls the points together)
        Q_j = J_j^T e F,  Q_i = -J_i^T e F

    Parameters
    ----------
    body_i, body_j : Body or None
        The two bodies (None: the ground, whose points are global).
    s_i, s_j : array (dim,) or a body's marker (`Node`, `Interface`)
        The points, in body coordinates.
    stiffness : float >= 0
        k [N/m].
    rest_length : float >= 0, optional
        l0 [m]; default the length in the initial configuration.
    damping : float >= 0
        c [N s/m].
    actuator : float, function of t or a controller `Output`, optional
        f_a(t) [N], a force along e pushing the points apart.
    """

    def __init__(self, body_i, s_i, body_j, s_j, stiffness, rest_length=None, damping=0.0, actuator=None,
                 name=None):
        self._sides(body_i, body_j, name)
        owner = f"SpringDamper {self.name!r}"
        self.s = [_marker(self, 0, s_i, "s_i"), _marker(self, 1, s_j, "s_j")]
        self.k = np.array([_nonnegative(stiffness, "stiffness", owner)])
        self.c = np.array([_nonnegative(damping, "damping", owner)])
        self.actuator = None if actuator is None else _of_time(actuator, "actuator", owner)
        l_start = float(self.measures(self._initial())[0][0])
        self.g0 = np.array([l_start if rest_length is None else _nonnegative(rest_length, "rest_length", owner)])

    def measures(self, qs):
        a, b = self._side
        ri, rj = a.point(qs[0], self.s[0]), b.point(qs[1], self.s[1])
        d = rj - ri
        length = float(np.linalg.norm(d))
        if length == 0.0:
            raise self._coincident()
        e = d / length
        return np.array([length]), [-(e @ a.point_jacobian(qs[0], self.s[0]))[None],
                                    (e @ b.point_jacobian(qs[1], self.s[1]))[None]]

    def _coincident(self) -> ValueError:
        """The error of a spring whose points coincide: its direction e = d / l is undefined."""
        return ValueError(f"SpringDamper {self.name!r}: its points coincide (length 0), so its direction is "
                          "undefined; give points apart, or use a Bushing")

    def measure_history(self, Qs, Vs=None):
        """l = abs(d) and l' = d . (r_j' - r_i') / l (n_t, 1) with d = r_j - r_i, all rows at once."""
        a, b = self.bodies
        ri, vi = marker_motion(a, Qs[0], None if Vs is None else Vs[0], self.s[0])
        rj, vj = marker_motion(b, Qs[1], None if Vs is None else Vs[1], self.s[1])
        d = rj - ri
        length = np.sqrt(np.einsum("ti,ti->t", d, d))
        if np.any(length == 0.0):
            raise self._coincident()
        rate = None if Vs is None else (np.einsum("ti,ti->t", d, vj - vi) / length)[:, None]
        return length[:, None], rate


def _frame_axes(dim: int, axis) -> np.ndarray:
    """A right-handed global frame (columns) whose last axis is ``axis`` (3D); the identity in 2D."""
    if dim == 2:
        return np.eye(2)
    z = axis / np.linalg.norm(axis)
    e = np.eye(3)[int(np.argmin(np.abs(z)))]
    x = e - (e @ z) * z
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


class RotationalSpringDamper(ForceElement):
    """A rotational spring-damper-actuator about an axis (a revolute joint's: `about`).

    With the unit directions u_i, w_i (perpendicular to the axis, on body i) and u_j (on body j),
    all three equal to the frame's at the start,

    .. code:: text

        theta = atan2(u_j . w_i, u_j . u_i)           (2D: the relative rotation phi_j - phi_i)
        T = -k (theta - theta0) - c theta' + T_a(t)   on body j about the axis, -T on body i

    with theta - theta0 taken in (-pi, pi].  theta = 0 in the initial configuration.

    Parameters
    ----------
    body_i, body_j : Body or None
    stiffness : float >= 0
        k [N m/rad].
    rest_angle : float
        theta0 [rad], default 0.
    damping : float >= 0
        c [N m s/rad].
    actuator : float, function of t or a controller `Output`, optional
        T_a(t) [N m].
    axis : array (3,)
        The global axis in the initial configuration (3D; None in 2D).
    """

    def __init__(self, body_i, body_j, stiffness, rest_angle=0.0, damping=0.0, actuator=None, axis=None,
                 name=None):
        self._sides(body_i, body_j, name)
        owner = f"RotationalSpringDamper {self.name!r}"
        if self.dim == 3:
            try:
                a = None if axis is None or isinstance(axis, (str, bytes)) else np.asarray(axis, dtype=float)
            except (TypeError, ValueError):
                a = None
            if a is None or a.shape != (3,) or not np.all(np.isfinite(a)) or not np.linalg.norm(a) > 0:
                raise ValueError(f"{owner}: `axis` must be a nonzero finite 3-vector (the global axis at the "
                                 f"start), got {axis!r}")
        elif axis is not None:
            raise ValueError(f"{owner}: `axis` is for 3D bodies (planar ones turn about z), got {axis!r}")
        F0 = _frame_axes(self.dim, None if self.dim == 2 else a)
        A0 = [side.rotation(q) for side, q in zip(self._side, self._initial())]
        self.u_i, self.w_i, self.u_j = A0[0].T @ F0[:, 0], A0[0].T @ F0[:, 1], A0[1].T @ F0[:, 0]
        self.k = np.array([_nonnegative(stiffness, "stiffness", owner)])
        self.c = np.array([_nonnegative(damping, "damping", owner)])
        self.g0 = np.array([real_number(rest_angle, "rest_angle", owner)])
        self.actuator = None if actuator is None else _of_time(actuator, "actuator", owner)

    @classmethod
    def about(cls, joint, stiffness, rest_angle=0.0, damping=0.0, actuator=None, name=None):
        """The spring-damper about the axis of the revolute ``joint`` (a `Revolute` in 3D: its frame's z
        axis at the start; a `PlanarRevolute` in 2D), between the joint's two bodies."""
        body_i, body_j = joint.bodies
        axis = None
        if getattr(joint, "dim", 2) == 3:
            qs = [EMPTY if b is None else b.initial_coordinates() for b in joint.bodies]
            axis = joint.frame(0.0, qs)[1][:, 2]
        return cls(body_i, body_j, stiffness, rest_angle, damping, actuator, axis=axis,
                   name=name or f"RotationalSpringDamper({joint.name})")

    def _from_rest(self, theta):
        """theta (a number or an array) with theta - theta0 taken in [-pi, pi)."""
        return self.g0[0] + (theta - self.g0[0] + np.pi) % (2 * np.pi) - np.pi

    def measures(self, qs):
        a, b = self._side
        ui, wi, uj = a.vector(qs[0], self.u_i), a.vector(qs[0], self.w_i), b.vector(qs[1], self.u_j)
        x, y = float(uj @ ui), float(uj @ wi)
        theta = self._from_rest(np.arctan2(y, x))
        r2 = x * x + y * y
        Vu, Vw, Vj = a.vector_jacobian(qs[0], self.u_i), a.vector_jacobian(qs[0], self.w_i), \
            b.vector_jacobian(qs[1], self.u_j)
        # d theta = (x dy - y dx) / (x^2 + y^2), dx = uj.dui + ui.duj, dy = uj.dwi + wi.duj
        Gi = (x * (uj @ Vw) - y * (uj @ Vu)) / r2
        Gj = (x * (wi @ Vj) - y * (ui @ Vj)) / r2
        return np.array([theta]), [Gi[None], Gj[None]]

    def measure_history(self, Qs, Vs=None):
        """theta (n_t, 1) as `measures` and theta' = (x y' - y x') / (x^2 + y^2) with x = u_j . u_i,
        y = u_j . w_i and their rates from the directions' rates, all rows at once."""
        a, b = self.bodies
        Vi, Vj = (None, None) if Vs is None else Vs
        ui, dui = marker_motion(a, Qs[0], Vi, self.u_i, vector=True)
        wi, dwi = marker_motion(a, Qs[0], Vi, self.w_i, vector=True)
        uj, duj = marker_motion(b, Qs[1], Vj, self.u_j, vector=True)
        x, y = np.einsum("ti,ti->t", uj, ui), np.einsum("ti,ti->t", uj, wi)
        theta = self._from_rest(np.arctan2(y, x))
        if Vs is None:
            return theta[:, None], None
        xd = np.einsum("ti,ti->t", duj, ui) + np.einsum("ti,ti->t", uj, dui)
        yd = np.einsum("ti,ti->t", duj, wi) + np.einsum("ti,ti->t", uj, dwi)
        return theta[:, None], ((x * yd - y * xd) / (x * x + y * y))[:, None]


class Bushing(ForceElement):
    """A linear spring-damper between two frames: 3 translations and 3 rotations (2D: 2 and 1).

    The bushing frame (origin ``at``, global axes at the start) is fixed in both bodies: point s_k
    and axes a_k (body i) and b_k (body j).  Its measures, in the frame of body i, are

    .. code:: text

        g_k = a_k . (r_j - r_i)                                  k = x, y, z   [m]
        phi = vee(R - R^T) / 2,  R_kl = a_k . b_l                (phi = sin(theta) n, = theta n + O(theta^3))
        2D: phi = (a_y . b_x - a_x . b_y) / 2 = sin(theta)

    and F = -k o (g - g0) - c o g' (g0 = 0: the start is unloaded).

    Parameters
    ----------
    body_i, body_j : Body or None
    stiffness, damping : float or array (6,) (2D: (3,))
        (k_x, k_y, k_z [N/m], k_rx, k_ry, k_rz [N m/rad]) and the same for c; a number for all.
    at : array (dim,), optional
        Global origin of the bushing frame at the start; default body_i's reference point.
    """

    def __init__(self, body_i, body_j, stiffness, damping=0.0, at=None, name=None):
        self._sides(body_i, body_j, name)
        owner = f"Bushing {self.name!r}"
        n = 6 if self.dim == 3 else 3
        self.k = _nonnegative(stiffness, "stiffness", owner, n)
        self.c = _nonnegative(damping, "damping", owner, n)
        if at is not None:
            try:
                point = None if isinstance(at, (str, bytes)) else np.asarray(at, dtype=float)
            except (TypeError, ValueError):
                point = None
            if point is None or point.shape != (self.dim,) or not np.all(np.isfinite(point)):
                raise ValueError(f"{owner}: `at` must be a finite global point of {self.dim} components (the bushing "
                                 f"frame's origin at the start), got {at!r}")
            at = point
        _, self.s, A0 = joint_point(self.name, self.dim, self.bodies, self._side, [None, None], at, 1e-8, False)
        self.a = [A0[0].T[:, k] for k in range(self.dim)]              # global axes in body i's coordinates
        self.b = [A0[1].T[:, k] for k in range(self.dim)]              # ... in body j's
        self.g0 = np.zeros(n)

    def measures(self, qs):
        A, B = self._side
        d = B.point(qs[1], self.s[1]) - A.point(qs[0], self.s[0])
        Ji, Jj = A.point_jacobian(qs[0], self.s[0]), B.point_jacobian(qs[1], self.s[1])
        a = [A.vector(qs[0], u) for u in self.a]
        b = [B.vector(qs[1], u) for u in self.b]
        Va = [A.vector_jacobian(qs[0], u) for u in self.a]
        Vb = [B.vector_jacobian(qs[1], u) for u in self.b]
        g = [float(ak @ d) for ak in a]
        Gi = [d @ Vk - ak @ Ji for ak, Vk in zip(a, Va)]
        Gj = [ak @ Jj for ak in a]
        # the rotation measures: (a_p . b_q - a_q . b_p) / 2 for (p, q) = (z, y), (x, z), (y, x); 2D: (y, x)
        pairs = ((2, 1), (0, 2), (1, 0)) if self.dim == 3 else ((1, 0),)
        for p, q in pairs:
            g.append(0.5 * float(a[p] @ b[q] - a[q] @ b[p]))
            Gi.append(0.5 * (b[q] @ Va[p] - b[p] @ Va[q]))
            Gj.append(0.5 * (a[p] @ Vb[q] - a[q] @ Vb[p]))
        return np.array(g), [np.array(Gi).reshape(len(g), -1), np.array(Gj).reshape(len(g), -1)]

    def measure_history(self, Qs, Vs=None):
        """g as `measures` and g' by the product rule on the markers' rates, (n_t, n_g), all rows at once:
        (a_k . d)' = a_k' . d + a_k . d' and ((a_p . b_q - a_q . b_p) / 2)' likewise."""
        A, B = self.bodies
        Vi, Vj = (None, None) if Vs is None else Vs
        ri, vi = marker_motion(A, Qs[0], Vi, self.s[0])
        rj, vj = marker_motion(B, Qs[1], Vj, self.s[1])
        a = [marker_motion(A, Qs[0], Vi, u, vector=True) for u in self.a]
        b = [marker_motion(B, Qs[1], Vj, u, vector=True) for u in self.b]
        d = rj - ri

        def dot(x, y):
            return np.einsum("ti,ti->t", x, y)
        g = [dot(ak, d) for ak, _ in a]
        pairs = ((2, 1), (0, 2), (1, 0)) if self.dim == 3 else ((1, 0),)
        g += [0.5 * (dot(a[p][0], b[q][0]) - dot(a[q][0], b[p][0])) for p, q in pairs]
        if Vs is None:
            return np.stack(g, axis=1), None
        dd = vj - vi
        gd = [dot(dak, d) + dot(ak, dd) for ak, dak in a]
        gd += [0.5 * (dot(a[p][1], b[q][0]) + dot(a[p][0], b[q][1]) - dot(a[q][1], b[p][0]) - dot(a[q][0], b[p][1]))
               for p, q in pairs]
        return np.stack(g, axis=1), np.stack(gd, axis=1)


class ForceLaw(ForceElement):
    """A user's force law between two markers: F = law(t, d, d') on point j, -F on point i.

    d = r_j - r_i and d' = r_j' - r_i' (global, (dim,)); ``law`` returns F (dim,) [N].  Its power
    d' . F goes into the works' ``loads`` (no potential is assumed: a conservative law's energy then
    shows as work of the loads).  The tangent differentiates the law by forward differences.  A law
    with the attribute ``vectorized = True`` also takes t (n_t,), d and d' (n_t, dim) and returns F
    (n_t, dim): the works' power of a block of rows is then one call (`law_history`), not one a row.
    """

    def __init__(self, body_i, s_i, body_j, s_j, law: Callable, name=None):
        self._sides(body_i, body_j, name)
        owner = f"ForceLaw {self.name!r}"
        if not callable(law):
            raise ValueError(f"{owner}: `law` must be callable law(t, d, d_dot) -> force (dim,), got {law!r} "
                             f"({type(law).__name__})")
        self.s = [_marker(self, 0, s_i, "s_i"), _marker(self, 1, s_j, "s_j")]
        self.force_law = law
        self.k = self.c = self.g0 = np.zeros(self.dim)
        q0 = self._initial()
        F = np.asarray(law(0.0, self.measures(q0)[0], np.zeros(self.dim)), dtype=float)
        if F.shape != (self.dim,):
            raise ValueError(f"{owner}: `law` must return a force of shape ({self.dim},), got shape {F.shape} "
                             "at the start")

    def measures(self, qs):
        a, b = self._side
        d = b.point(qs[1], self.s[1]) - a.point(qs[0], self.s[0])
        return d, [-a.point_jacobian(qs[0], self.s[0]), b.point_jacobian(qs[1], self.s[1])]

    def measure_history(self, Qs, Vs=None):
        """d = r_j - r_i and d' = r_j' - r_i' (n_t, dim), all rows at once."""
        a, b = self.bodies
        ri, vi = marker_motion(a, Qs[0], None if Vs is None else Vs[0], self.s[0])
        rj, vj = marker_motion(b, Qs[1], None if Vs is None else Vs[1], self.s[1])
        return rj - ri, None if Vs is None else vj - vi

    def power_history(self, t, Qs, Vs) -> dict[str, np.ndarray]:
        """{"damping": 0, "loads": d' . F(t, d, d')}, each (n_t,) [W]: d, d' at all rows at once; the user's
        law once per row (`law`, with its checks), or once for all rows when it declares ``vectorized = True``
        (`law_history`)."""
        t = np.asarray(t, dtype=float).reshape(-1)
        g, gd = self.measure_history(Qs, Vs)
        if getattr(self.force_law, "vectorized", False):
            F = self.law_history(t, g, gd)
        else:
            F = np.array([self.law(tk, gk, gdk)[1] for tk, gk, gdk in zip(t, g, gd)], dtype=float).reshape(g.shape)
        return {"damping": np.zeros(len(t)), "loads": np.einsum("tg,tg->t", gd, F)}

    def law_history(self, t, g, gd) -> np.ndarray:
        """F (n_t, dim) of a law that declares ``vectorized = True``, called once with t (n_t,), d and d'
        (n_t, dim) (a block of outputs or step points): checked as `law` checks one state, a shape other than
        (n_t, dim) a ValueError naming the element, NaN or inf at a finite state a `UserFunctionError` naming
        the first such t."""
        what = f"ForceLaw {self.name!r}: its law (vectorized, at {len(t)} times)"
        F = np.asarray(evaluate(what, float(t[0]) if len(t) else 0.0, self.force_law, t, g, gd), dtype=float)
        if F.shape != g.shape:
            raise ValueError(f"ForceLaw {self.name!r}: `law` declares `vectorized` and must return forces of shape "
                             f"{g.shape} (one of shape ({self.dim},) at each of the {len(t)} times), got shape "
                             f"{F.shape}")
        bad = ~np.isfinite(F).all(axis=1) & np.isfinite(g).all(axis=1) & np.isfinite(gd).all(axis=1)
        if bad.any():
            raise non_finite(f"ForceLaw {self.name!r}: its law", float(t[np.argmax(bad)]))
        return F

    def law(self, t, g, gd):
        """(F, F): the user's force on point j, all of its power into the works' ``loads``.  A law that
        raises or gives NaN or inf at a finite state is a `UserFunctionError` naming the element and t
        (in a step: status "failed", the outputs so far kept)."""
        what = f"ForceLaw {self.name!r}: its law"
        F = np.asarray(evaluate(what, t, self.force_law, t, g, gd), dtype=float)
        if F.shape != (self.dim,):
            raise ValueError(f"ForceLaw {self.name!r}: `law` must return a force of shape ({self.dim},), got shape "
                             f"{F.shape} at t = {float(t):g}")
        if not np.all(np.isfinite(F)) and np.all(np.isfinite(g)) and np.all(np.isfinite(gd)):
            raise non_finite(what, t)
        return F, F

    def law_derivatives(self, t, g, gd):
        """(dF/dd, dF/dd') by forward differences of the user's law."""
        F = self.law(t, g, gd)[0]
        dF_dg, dF_dgd = np.empty((self.dim, self.dim)), np.empty((self.dim, self.dim))
        for j in range(self.dim):
            for x, out in ((g, dF_dg), (gd, dF_dgd)):
                h = _H * max(1.0, abs(x[j]))
                xp = x.copy()
                xp[j] += h
                args = (xp, gd) if out is dF_dg else (g, xp)
                out[:, j] = (np.asarray(self.force_law(t, *args), dtype=float) - F) / h
        return dF_dg, dF_dgd
