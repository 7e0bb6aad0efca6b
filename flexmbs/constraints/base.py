"""The constraint protocol, the ground and the error that names a constraint.

A holonomic constraint C(q, t) = 0 gives, differentiated twice in time,

.. code:: text

    C_q q' + C_t = 0,       C_q q'' = gamma,   gamma = -(C_q q')_q q' - 2 C_qt q' - C_tt

and the generalized constraint forces on the bodies are -C_q^T lam (lam: the multipliers),
so that M q'' + C_q^T lam = Q.  A constraint gets one q (and v) per entry of ``bodies``;
``None`` stands for the ground, whose q is empty.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod

import numpy as np

from ..user_functions import UserFunctionError, non_finite, raised

__all__ = ["Constraint", "ConstraintError", "Ground", "EMPTY"]

EMPTY = np.zeros(0)
UNIT = np.eye(3)


class ConstraintError(ValueError):
    """A constraint that cannot be satisfied (or is ill-posed); ``names`` lists the constraints."""

    def __init__(self, message: str, names=()):
        super().__init__(message)
        self.names = tuple(names)


class Ground:
    """The fixed global frame as a body without coordinates: point(q, s) = s, vector(q, u) = u."""

    name = "ground"
    n_q = 0

    def __init__(self, dim: int = 3):
        self.dim = dim
        self._zero = np.zeros(dim)
        self._jac = np.zeros((dim, 0))

    def point(self, q, s):
        return np.asarray(s, dtype=float)

    def vector(self, q, u):
        return np.asarray(u, dtype=float)

    def point_jacobian(self, q, s):
        return self._jac

    vector_jacobian = point_jacobian

    def point_bias(self, q, v, s):
        return self._zero

    vector_bias = point_bias

    def rotation(self, q):
        return np.eye(self.dim)


def law_values(law, t, name) -> tuple[float, float, float]:
    """(f(t), f'(t), f''(t)) of a driver's law, checked: ValueError naming the driver ``name`` if it
    does not return three numbers, `UserFunctionError` (with the time) if it raises or one of them
    is NaN or inf."""
    try:
        out = law(t)
    except UserFunctionError:
        raise
    except Exception as err:                  # `evaluate`, without building the name at every call
        raise raised(f"driver {name!r}: its law", t, err) from err
    try:
        a, b, c = out
    except (TypeError, ValueError):
        raise ValueError(f"driver {name!r}: its law must return (f(t), f'(t), f''(t)), got {out!r}") from None
    values = float(a), float(b), float(c)
    if not (math.isfinite(values[0]) and math.isfinite(values[1]) and math.isfinite(values[2])):
        raise non_finite(f"driver {name!r}: its law", t, "(f, f', f'') = ({:.6g}, {:.6g}, {:.6g})".format(*values))
    return values


def law_history(law, t, name) -> np.ndarray:
    """(f, f', f'') of a driver's law at the times t (n_t,), (n_t, 3), checked as `law_values`.

    A law that declares ``vectorized = True`` (`flexmbs.mechanisms.constant_speed`, a constant of
    `flexmbs.constraints.driving.as_law`) is called once with the array t and each of its three
    values broadcast to (n_t,); any other law, a user's scalar callable, once per time."""
    t = np.asarray(t, dtype=float).reshape(-1)
    if not getattr(law, "vectorized", False):
        return np.array([law_values(law, float(tk), name) for tk in t]).reshape(len(t), 3)
    try:
        out = law(t)
    except UserFunctionError:
        raise
    except Exception as err:
        raise raised(f"driver {name!r}: its law (vectorized, at {len(t)} times)", float(t[0]), err) from err
    expected = (f"driver {name!r}: its law declares `vectorized` and must return (f, f', f'') as arrays of shape "
                f"({len(t)},) (that of t) or numbers")
    try:
        a, b, c = out
        f = np.stack(np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                                         np.asarray(c, dtype=float), t)[:3], axis=-1)
    except (TypeError, ValueError):
        raise ValueError(f"{expected}, got {out!r}") from None
    if f.shape != (len(t), 3):
        raise ValueError(f"{expected}, got values of shape {f.shape[:-1]}")
    bad = ~np.isfinite(f).all(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        raise non_finite(f"driver {name!r}: its law", float(t[k]),
                         "(f, f', f'') = ({:.6g}, {:.6g}, {:.6g})".format(*f[k]))
    return f


def force_and_torque(x, R, dim: int) -> dict:
    """{"force": R^T F, "torque": R^T T} from the solution x = [F; T; mu] of `Constraint.reaction`
    (in 2D T is x[2], a float), in the frame of rotation R; x and R may be stacks (n_t, k), (n_t, d, d)
    (`flexmbs.System.reaction_history`)."""
    x = np.asarray(x, dtype=float)
    RT = np.swapaxes(np.asarray(R, dtype=float), -1, -2)
    force = (RT @ x[..., :dim, None])[..., 0]
    if dim == 3:
        return {"force": force, "torque": (RT @ x[..., 3:6, None])[..., 0]}
    return {"force": force, "torque": x[..., 2] if x.ndim > 1 else float(x[2])}


def torque_and_internal_columns(body, t, q) -> np.ndarray:
    """[J_theta^T, C_int,q^T] (n_q, 3 + n_int; 1 + n_int in 2D): the generalized forces of a unit
    global torque about each axis (`Body.torque`) and the body's internal constraint rows, the
    columns of `Constraint.reaction_basis` that are the same for every joint on the body."""
    cols = [body.torque(q, e) for e in UNIT] if body.dim == 3 else [body.torque(q, 1.0)]
    return np.column_stack(cols + [row for c in body.internal_constraints() for row in c.jacobian(t, (q,))[0]])


def body_label(body) -> str:
    """'ground' for None, else "body 'name'" (for messages)."""
    return "ground" if body is None else f"body {body.name!r}"


def check_body_pair(cls: str, body_i, body_j, name=None) -> str:
    """Refuse two grounds or one body twice; returns the joint's name (given, or cls(body_i, body_j))."""
    if body_i is None and body_j is None:
        raise ValueError(f"{cls}: at most one of `body_i`, `body_j` may be the ground (None)")
    if body_i is body_j:
        raise ValueError(f"{cls}: `body_i` and `body_j` are the same body {body_i.name!r}")
    if name is not None:
        return name
    return f"{cls}({'ground' if body_i is None else body_i.name}, {'ground' if body_j is None else body_j.name})"


def joint_point(name: str, dim: int, bodies, sides, given, at, tol: float, check: bool = True):
    """The joint point of a two-body joint in the initial configuration.

    ``sides`` are the two bodies (a `Ground` for None) and ``given`` their body points s_i, s_j
    (None if not given).  The global point P0 is ``at``, else the point s_i (or s_j) gives,
    else the reference point of body_i (of body_j if body_i is the ground); each body's point
    is s_k = A_k0^T (P0 - O_k0) unless given.  With ``check``, the two points must coincide
    within ``tol`` x (1 + |P0|) (ValueError naming the joint).  Returns (P0, [s_i, s_j],
    [A_i0, A_j0]).
    """
    q0 = [EMPTY if b is None else b.initial_coordinates() for b in bodies]
    A0 = [side.rotation(q) for side, q in zip(sides, q0)]
    O0 = [side.point(q, np.zeros(dim)) for side, q in zip(sides, q0)]
    if at is not None:
        P0 = at
    elif given[0] is not None:
        P0 = sides[0].point(q0[0], given[0])
    elif given[1] is not None:
        P0 = sides[1].point(q0[1], given[1])
    else:
        P0 = O0[1] if bodies[0] is None else O0[0]
    s = [given[k] if given[k] is not None else A0[k].T @ (P0 - O0[k]) for k in range(2)]
    if check:
        Pi, Pj = (sides[k].point(q0[k], s[k]) for k in range(2))
        gap = float(np.linalg.norm(Pi - Pj))
        if gap > tol * (1.0 + np.linalg.norm(P0)):
            raise ValueError(
                f"joint {name!r}: its points do not coincide in the initial configuration: "
                f"{body_label(bodies[0])} point at {Pi.tolist()}, {body_label(bodies[1])} point at {Pj.tolist()} "
                f"(gap {gap:.3g} m > tol {tol:g} x size); give `at` (one global point) or matching s_i, s_j")
    return P0, s, A0


class Constraint(ABC):
    """A set of n_c constraint equations among the coordinates of ``bodies``.

    Attributes
    ----------
    name : str
    bodies : tuple of Body or None
        None is the ground.
    n_c : int
    holonomic : bool
        False for velocity-level constraints a(q) q' + b(q, t) = 0 (then ``residual`` is not
        defined and ``jacobian`` gives a).
    rheonomic : bool
        True for a constraint whose C_t (b of a velocity-level one) may be nonzero: a driver, a
        prescribed frame.  Only these can do work on the system: the power of the constraint
        forces -C_q^T lam is -lam . C_q q' = lam . C_t (`flexmbs.System.power_history`).
    """

    name: str
    bodies: tuple
    n_c: int
    holonomic: bool = True
    rheonomic: bool = False

    @abstractmethod
    def residual(self, t, qs) -> np.ndarray:
        """C(q, t), (n_c,)."""

    @abstractmethod
    def jacobian(self, t, qs) -> list:
        """C_q blocks, one (n_c, n_q_b) array per entry of ``bodies`` ((n_c, 0) for the ground)."""

    def time_derivative(self, t, qs) -> np.ndarray:
        """C_t, (n_c,): zero for a scleronomic (time-independent) constraint."""
        return np.zeros(self.n_c)

    @abstractmethod
    def gamma(self, t, qs, vs) -> np.ndarray:
        """gamma with C_q q'' = gamma."""

    # -- reactions ------------------------------------------------------------------------------
    def reaction_points(self) -> list:
        """Body-fixed point of each body about which `reaction` gives the torque (default: origin)."""
        return [None if b is None else np.zeros(b.dim) for b in self.bodies]

    def frame(self, t, qs) -> tuple[np.ndarray, np.ndarray]:
        """(origin, rotation) of the joint's frame, global; default the global frame at the origin."""
        dim = next(b.dim for b in self.bodies if b is not None)
        return np.zeros(dim), np.eye(dim)

    def reaction_basis(self, t, qs, body_columns=None) -> dict:
        """{body name: B_b} for the bodies of the constraint (not the ground), where the columns
        of B_b are the generalized forces of a unit force at the body's reaction point s_b, of a
        unit torque and of the body's internal constraints,
        B_b = [J_P(s_b)^T, J_theta^T, C_int,q^T], so that Q_b = -C_q,b^T lam = B_b [F; T; mu]
        (`reaction`; `flexmbs.System.reaction_history` stacks them over the outputs for the
        constraints that `reaction_blocks.unstacked_reason` names).  The last
        columns do not depend on the joint: ``body_columns`` {body name: `torque_and_internal_columns`}
        passes them when already computed for the body at this state."""
        out = {}
        for b, q, s in zip(self.bodies, qs, self.reaction_points()):
            if b is None:
                continue
            rest = torque_and_internal_columns(b, t, q) if body_columns is None else body_columns[b.name]
            out[b.name] = np.hstack([b.point_jacobian(q, s).T, rest])     # J_P^T F = point_force(q, s, F)
        return out

    def reaction(self, t, qs, lam) -> dict:
        """Force and torque that the constraint applies on each body, in the joint's frame.

        The generalized constraint force on body b is Q_b = -C_q,b^T lam.  It is written as a
        force F at the body's reaction point s_b and a torque T,
        Q_b = J_P(s_b)^T F + J_theta^T T + C_int,q^T mu,
        where the last term (internal constraints of the body, e.g. the Euler-parameter norm)
        does no work on rigid motions and is dropped: [F; T; mu] = B_b^+ Q_b, the least-squares
        solution (`reaction_basis`).  Returns
        ``{"origin": r, "rotation": R, "bodies": {name: {"force": R^T F, "torque": R^T T}}}``
        (in 2D the torque is a float).
        """
        lam = np.asarray(lam, dtype=float)
        origin, R = self.frame(t, qs)
        basis = self.reaction_basis(t, qs)
        out = {}
        for b, Jb in zip(self.bodies, self.jacobian(t, qs)):
            if b is not None:
                x = np.linalg.lstsq(basis[b.name], -np.asarray(Jb, dtype=float).T @ lam, rcond=None)[0]
                out[b.name] = force_and_torque(x, R, b.dim)
        return {"origin": origin, "rotation": R, "bodies": out}

    def __repr__(self):
        names = ", ".join("ground" if b is None else repr(b.name) for b in self.bodies)
        return f"{type(self).__name__}({self.name!r}: {names})"
