"""The body protocol and the data shared by the rigid bodies.

Every body has coordinates q (n_q,) and velocities v = q' (the time derivatives of the
coordinates).  Its equations of motion, before constraints, are

.. code:: text

    M(q) q'' = Q_e + Q_v,      Q_v = -M'(q) q' + dT/dq    (quadratic-velocity vector)

with T = 1/2 q'^T M(q) q'.  Joints see a body only through its markers: body-fixed points
s and directions u (local coordinates), whose global position r_P = point(q, s), direction
A(q) u = vector(q, u), their Jacobians and their "bias" (the part of the second time
derivative that does not multiply q''), so every joint works on every kind of body.

Two optional methods make a body cheaper to integrate: ``frame_marker(s) -> (y0, columns, Phi)``
for bodies whose q starts with (R, p) (Euler parameters) and whose points are
R + A(p) (y0 + Phi q[columns]) (the System's `JointBatch` then evaluates their markers all at
once), and ``quadratic_velocity_jacobian(q, v)`` (dQ_v/dv, used by index3-alpha's iteration
matrix).
"""
from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..frozen import Fields
from ..rotations import as_rotation_matrix, skew
from ..user_functions import UserFunctionError, non_finite, raised

__all__ = ["Body", "RigidBody", "LinearInertia", "LinearInertiaBatch", "PartKinematics", "mass_point_kinematics",
           "rigid_motion_of_points", "rotation_of_vectors"]


class Body(ABC):
    """A body: coordinates, mass matrix, forces, internal constraints and markers.

    Attributes
    ----------
    name : str
        Unique within a `System`; errors and results name the body by it.
    dim : int
        2 (planar) or 3.
    n_q : int
        Number of coordinates (= number of velocities, v = q').
    constant_mass : bool
        True when M does not depend on q (the system caches it).
    """

    name: str
    dim: int = 3
    n_q: int
    constant_mass: bool = False
    loads: tuple = ()               # callables load(body, t, q, v) -> generalized force (n_q,)

    # -- coordinates ----------------------------------------------------------------------------
    @abstractmethod
    def initial_coordinates(self) -> np.ndarray:
        """q0 from the constructor's position and orientation."""

    def initial_velocities(self) -> np.ndarray:
        """v0 = q0' from the constructor's velocities (zeros unless the body says otherwise)."""
        return np.zeros(self.n_q)

    # -- dynamics -------------------------------------------------------------------------------
    @abstractmethod
    def mass_matrix(self, q) -> np.ndarray:
        """M(q), (n_q, n_q), symmetric positive semidefinite."""

    @abstractmethod
    def forces(self, t, q, v, gravity) -> np.ndarray:
        """Q_e + Q_v, (n_q,): applied forces (gravity) plus the quadratic-velocity vector."""

    def tangent(self, t, q, v, qdd, gravity) -> tuple[np.ndarray, np.ndarray] | None:
        """(K_b, C_b) = (d(M(q) q'' - Q(t, q, v))/dq at fixed q'', v;  -dQ/dv at fixed q), (n_q, n_q):
        this body's block of an implicit step's tangent (`flexmbs.System.tangent_matrices`), from the
        body's own exact derivatives.  None (this default): the body has none, and the System takes
        forward differences of its ``mass_matrix`` and ``forces`` instead (2 n_q + 1 evaluations)."""
        return None

    def internal_constraints(self) -> list:
        """Constraints among the body's own coordinates (Euler-parameter norm, rigidity), often none."""
        return []

    @abstractmethod
    def energy(self, q, v, gravity) -> tuple[float, float]:
        """(kinetic energy 1/2 v^T M v, potential energy of gravity)."""

    def energies(self, Q, V, gravity) -> tuple[np.ndarray, np.ndarray]:
        """(T, V_g), each (n_t,), at the rows of Q, V (n_t, n_q): `energy` at every row.  The body kinds
        with a batched form (all outputs at once) override it."""
        e = np.array([self.energy(q, v, gravity) for q, v in zip(Q, V)], dtype=float).reshape(len(Q), 2)
        return e[:, 0], e[:, 1]

    def powers(self, t, Q, V, gravity) -> dict[str, np.ndarray]:
        """Powers [W] of the body's non-conservative forces, each (n_t,), at the times t and rows of
        Q, V (n_t, n_q): ``loads``, P = q' . sum of the body's loads (`applied`).  When every load
        gives ``power_history(body, t, Q, V, what)`` (the built-in loads of `flexmbs.bodies.loads`:
        P = F . r_P', T . omega from the markers' and the body's rates), all rows at once; else, with
        a user's own load callable (a function of one state, ``load(body, t, q, v)``), `applied` at
        each row.  A body without loads costs nothing.  Bodies with other such forces (the flexible
        body's damping and stiffening) add their keys."""
        P = np.zeros(len(Q))
        if not self.loads:
            return {"loads": P}
        if all(callable(getattr(load, "power_history", None)) for load in self.loads):
            t = np.asarray(t, dtype=float).reshape(-1)
            for i, load in enumerate(self.loads):
                P += load.power_history(self, t, Q, V, f"body {self.name!r}: load {i}")
            return {"loads": P}
        for k, (tk, q, v) in enumerate(zip(t, Q, V)):
            P[k] = self.applied(float(tk), q, v) @ v
        return {"loads": P}

    def strain_energies(self, Q) -> np.ndarray:
        """The strain energy (n_t,) at the rows of Q of a body with a ``strain_energy`` (flexible bodies),
        one row at a time unless the body overrides it."""
        return np.array([self.strain_energy(q) for q in Q], dtype=float).reshape(len(Q))

    def rigid_motion_generators(self, q, point) -> np.ndarray:
        """X(q) = dq/d(eps) of a global rigid motion of the body (docs/multibody.md, "Momentum"):
        (n_q, 6) in 3D, columns k = 0, 1, 2 the translation by eps e_k and k = 3, 4, 5 the rotation by
        eps about the global axis e_{k-3} through ``point`` (dim,); (n_q, 3) in 2D: translations along
        x and y and the rotation about z through ``point``.  The generalized momentum p = M v gives
        the linear and angular momentum X^T p (Noether).  A body kind whose coordinates a global
        rotation does not map simply refuses with NotImplementedError."""
        raise NotImplementedError(f"{type(self).__name__} {self.name!r}: rigid_motion_generators is not "
                                  "implemented for this body kind (how a global rotation changes its "
                                  "coordinates), so its momentum and rigid-motion velocities are not available")

    # -- markers --------------------------------------------------------------------------------
    @abstractmethod
    def point(self, q, s) -> np.ndarray:
        """Global position r_P of the body-fixed point s."""

    @abstractmethod
    def point_jacobian(self, q, s) -> np.ndarray:
        """dr_P/dq, (dim, n_q)."""

    @abstractmethod
    def point_bias(self, q, v, s) -> np.ndarray:
        """(dr_P/dq)' q', so that r_P'' = point_jacobian q'' + point_bias."""

    @abstractmethod
    def vector(self, q, u) -> np.ndarray:
        """Global components A(q) u of the body-fixed direction u."""

    @abstractmethod
    def vector_jacobian(self, q, u) -> np.ndarray:
        """d(A u)/dq, (dim, n_q)."""

    @abstractmethod
    def vector_bias(self, q, v, u) -> np.ndarray:
        """(d(A u)/dq)' q'."""

    @abstractmethod
    def rotation(self, q) -> np.ndarray:
        """A(q), body -> global, (dim, dim)."""

    @abstractmethod
    def angular_velocity(self, q, v):
        """Global angular velocity: (3,) in 3D, a float in 2D."""

    def point_velocity(self, q, v, s) -> np.ndarray:
        """r_P' = point_jacobian(q, s) q'."""
        return self.point_jacobian(q, s) @ v

    # -- applied loads --------------------------------------------------------------------------
    def applied(self, t, q, v) -> np.ndarray:
        """Sum of the body's loads, each ``load(body, t, q, v)`` a generalized force (n_q,).

        A load that raises, or gives NaN or inf at a finite (q, v), raises `UserFunctionError`
        naming the body, the load's index and t (flexmbs.user_functions); a non-finite state is
        left to the integrators' guard.
        """
        out = np.zeros(self.n_q)
        for i, load in enumerate(self.loads):
            try:
                out += load(self, t, q, v)
            except UserFunctionError:
                raise
            except Exception as err:          # `evaluate`, without building the name at every call
                raise raised(f"body {self.name!r}: load {i}", t, err) from err
        if not np.isfinite(out).all() and np.isfinite(q).all() and np.isfinite(v).all():
            bad = next(i for i, load in enumerate(self.loads) if not np.isfinite(load(self, t, q, v)).all())
            raise non_finite(f"body {self.name!r}: load {bad}", t)
        return out

    def point_force(self, q, s, F) -> np.ndarray:
        """Generalized force J_P^T F of a global force F applied at the body-fixed point s."""
        return self.point_jacobian(q, s).T @ np.asarray(F, dtype=float)

    @abstractmethod
    def torque(self, q, T) -> np.ndarray:
        """Generalized force of a global torque T (a float in 2D)."""

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r})"


class PartKinematics(Fields):
    """A body's mass as parts at k configurations, for the Kane and Volterra formulations
    (`flexmbs.formulations.quasi_velocities.system_kinematics`): each part is a rigid part or a mass point
    with velocity v_i = B_i q' of its centre of mass and angular velocity omega_i = D_i q' (global axes).

    mass (n_p,); B, D (k, n_p, 3, n_q); I (k, n_p, 3, 3) the global inertia tensor about the part's centre
    of mass (zero for a mass point).  Complex coordinates (a complex step) give complex B, D, I.
    A plain class (`flexmbs.frozen.Fields`: a mutable dataclass's repr and ==, unhashable).
    """

    def __init__(self, mass: np.ndarray, B: np.ndarray, D: np.ndarray, I: np.ndarray):  # noqa: E741
        self._set_fields(locals())


def mass_point_kinematics(mass, B) -> PartKinematics:
    """`PartKinematics` of mass points (no rotation, no inertia of their own): ``mass`` (n_p,), ``B``
    (k, n_p, 3, n_q)."""
    B = np.asarray(B)
    return PartKinematics(mass=np.asarray(mass, dtype=float), B=B, D=np.zeros(B.shape, dtype=B.dtype),
                          I=np.zeros(B.shape[:2] + (3, 3), dtype=B.dtype))


class LinearInertia:
    """Gibbs-Appell and Hamilton terms of a body whose mass points move linearly with q: r = S(s) q + r_0
    with a constant S(s) (point masses, natural coordinates, the 2D corotational beam's interpolated
    translations and nodal rotations).

    Every point's acceleration is a = S q'' (no velocity-product part), so the acceleration energy is

    .. code:: text

        S_a = 1/2 sum m |S q''|^2 = 1/2 q''^T M q'',      dS_a/dq'' = M q'' + 0

    with the constant M = sum m S^T S the body already holds (its kinetic energy is 1/2 q'^T M q' with
    the same M); T does not depend on q (dT/dq = 0) and every force in `forces` is active (Q_v = 0).
    """

    def gibbs_appell(self, Q, V) -> tuple[np.ndarray, np.ndarray]:
        """(M, g) of dS/dq'' = M q'' + g at the k states Q, V (k, n_q): (k, n_q, n_q), (k, n_q); g = 0."""
        k = len(Q)
        M = np.broadcast_to(np.asarray(self.mass_matrix(Q[0]), dtype=float), (k, self.n_q, self.n_q))
        return M.copy(), np.zeros((k, self.n_q))

    def active_forces(self, t, q, v, gravity) -> np.ndarray:
        """The generalized forces that are not inertia: all of `forces` (Q_v = 0)."""
        return self.forces(t, q, v, gravity)

    def kinetic_energy_gradient(self, Q, V) -> np.ndarray:
        """dT/dq at fixed q' (k, n_q): zero, M is constant."""
        return np.zeros(np.shape(Q))

    def kinematics(self, Q) -> PartKinematics:
        """The body's mass as n_q unit mass points at the k configurations Q (k, n_q) (Kane, Volterra).

        Every point moves as r = S(s) q + r_0 with a constant S, so the inertia forces of the whole body
        on the partial velocities S W are sum m S^T S W = M W, whatever the points: the rows l_j of a
        constant factor L^T L = M (L = diag(sqrt(lambda)) V^T from M = V diag(lambda) V^T) are unit
        mass points with velocity l_j . q', giving the same sums sum_j l_j l_j^T = M.  For these bodies
        Kane's and Volterra's inertia terms therefore reduce exactly to M q'' (docs/formulations_system.md).
        """
        L = self.__dict__.get("_inertia_rows")
        if L is None:
            lam, V = np.linalg.eigh(np.asarray(self.mass_matrix(np.atleast_2d(Q)[0].real), dtype=float))
            L = self._inertia_rows = np.sqrt(np.maximum(lam, 0.0))[:, None] * V.T
        k, n = np.atleast_2d(Q).shape[0], self.n_q
        B = np.zeros((k, n, 3, n))
        B[:, :, 0, :] = L
        return mass_point_kinematics(np.ones(n), B)


class LinearInertiaBatch:
    """`LinearInertia`'s terms for n bodies of one class at once (their ``batch`` evaluators), stacked
    coordinates Q, V (n, n_q): M constant (``mass_matrix``), g = 0, dT/dq = 0, every force of ``forces``
    active (the bodies' `loads` are added by the caller, as for ``forces``)."""

    def gibbs_appell(self, Q, V) -> tuple[np.ndarray, np.ndarray]:
        M = np.asarray(self.mass_matrix(Q), dtype=float)
        return np.broadcast_to(M, (len(Q),) + M.shape[-2:]).copy(), np.zeros(np.shape(Q))

    def kinetic_energy_gradient(self, Q, V) -> np.ndarray:
        return np.zeros(np.shape(Q))

    def active_forces(self, t, Q, V, gravity) -> np.ndarray:
        return self.forces(t, Q, V, gravity)


def rigid_motion_of_points(r, point) -> np.ndarray:
    """dr/d(eps) of global points r (n, dim) under a global rigid motion (`Body.rigid_motion_generators`):
    3D (n, 3, 6): e_k (translation) and e_k x (r - O) = -skew(r - O) e_k (rotation about e_k through
    O = ``point``); 2D (n, 2, 3): e_x, e_y and e_z x (r - O) = (-(y - O_y), x - O_x)."""
    d = np.asarray(r, dtype=float) - np.asarray(point, dtype=float)
    n, dim = d.shape
    if dim == 2:
        out = np.zeros((n, 2, 3))
        out[:, 0, 0] = out[:, 1, 1] = 1.0
        out[:, 0, 2], out[:, 1, 2] = -d[:, 1], d[:, 0]
        return out
    out = np.zeros((n, 3, 6))
    out[:, [0, 1, 2], [0, 1, 2]] = 1.0
    out[:, :, 3:] = -skew(d)
    return out


def rotation_of_vectors(u) -> np.ndarray:
    """du/d(eps) of global vectors u (n, 3) (directions: a translation leaves them) under a global rigid
    motion, (n, 3, 6): zero, then e_k x u = -skew(u) e_k."""
    u = np.asarray(u, dtype=float)
    out = np.zeros((len(u), 3, 6))
    out[:, :, 3:] = -skew(u)
    return out


def check_identity(body, name, mass, loads) -> None:
    """Set body.name, body.loads and body.mass after checking them (ValueError naming the argument)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"a body needs a nonempty string `name`, got {name!r}")
    body.name = name
    body.loads = _check_loads(loads, name)
    body.mass = positive_number(mass, "mass", f"body {name!r} ({type(body).__name__})")


def real_number(value, what: str, owner: str) -> float:
    """float(value) if ``value`` is a real number (a Python or numpy int or float, or a 0-d array of
    one); else ValueError "<owner>: `<what>` must be a number, got <value> (<its type>)": a string,
    a bool, None or an array is refused here rather than converted or failing inside numpy."""
    a = None if isinstance(value, (str, bytes, bool, np.bool_)) else np.asarray(value)
    if a is None or a.ndim != 0 or a.dtype.kind not in "iuf":
        raise ValueError(f"{owner}: `{what}` must be a number, got {value!r} ({type(value).__name__})")
    return float(a)


def positive_number(value, what: str, owner: str) -> float:
    """`real_number`, finite and > 0 (a mass, a length); ValueError naming ``what`` otherwise."""
    try:
        x = real_number(value, what, owner)
    except ValueError:
        x = None
    if x is None or not (np.isfinite(x) and x > 0):
        raise ValueError(f"{owner}: `{what}` must be a positive number, got {value!r} ({type(value).__name__})")
    return x


def _check_loads(loads, name: str) -> tuple:
    """The body's ``loads`` as a tuple of callables; ValueError naming the body if ``loads`` is one
    callable (not a sequence of them), not a sequence, or holds something not callable."""
    if callable(loads):
        raise ValueError(f"body {name!r}: `loads` must be a sequence of loads, got the single callable "
                         f"{getattr(loads, '__name__', loads)!r}; write loads=[load]")
    if isinstance(loads, (str, bytes)) or not hasattr(loads, "__iter__"):
        raise ValueError(f"body {name!r}: `loads` must be a sequence of callables load(body, t, q, v) -> "
                         f"generalized force, got {loads!r} ({type(loads).__name__})")
    loads = tuple(loads)
    for load in loads:
        if not callable(load):
            raise ValueError(f"body {name!r}: every entry of `loads` must be callable load(body, t, q, v) -> "
                             f"generalized force, got {load!r}")
    return loads


def _floats(x, what: str, name: str) -> np.ndarray:
    """np.asarray(x, float), refusing strings and what does not convert with a ValueError naming the
    body's argument ``what`` (instead of numpy's "could not convert string to float")."""
    try:
        a = None if isinstance(x, (str, bytes)) else np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        a = None
    if a is None:
        raise ValueError(f"body {name!r}: `{what}` must be numbers, got {x!r} ({type(x).__name__})")
    return a


def _vector3(x, what: str, name: str) -> np.ndarray:
    a = _floats(x, what, name)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"body {name!r}: `{what}` must be a finite 3-vector, got {x!r}")
    return a


class RigidBody(Body):
    """Inertia data and initial state shared by the rigid bodies (3D).

    Parameters
    ----------
    name : str
    mass : float
        m > 0 [kg].
    inertia : array (3, 3) or (3,)
        Inertia tensor in body axes [kg m^2] (a (3,) array is its diagonal), about the centre
        of mass (``inertia_at="centroid"``, default) or about the reference point
        (``inertia_at="reference"``).  Off-diagonal entries are the tensor's, i.e. minus the
        products of inertia: J_xy = -int x y dm.
    position : array (3,)
        Global position of the reference point (the body frame's origin) [m].
    orientation : array (3, 3) or (4,), optional
        Rotation matrix body -> global, or Euler parameters; default the identity.
    centroid : array (3,)
        Centre of mass in body coordinates, relative to the reference point [m]
        (default the origin: the reference point is the centroid).
    inertia_at : {"centroid", "reference"}
    velocity : array (3,)
        Initial global velocity of the reference point [m/s].
    angular_velocity : array (3,)
        Initial global angular velocity [rad/s].
    loads : sequence of callables
        Applied loads on this body, each ``load(body, t, q, v)`` returning a generalized force
        (n_q,), added to gravity and Q_v in `forces` (see `flexmbs.bodies.loads`).

    Raises
    ------
    ValueError
        Naming the body: a non-positive mass, a non-symmetric or not positive definite inertia
        tensor, or one that no mass distribution has (principal moments at the centroid must
        satisfy J1 + J2 >= J3).
    """

    dim = 3

    def __init__(self, name: str, mass: float, inertia, *, position=(0.0, 0.0, 0.0), orientation=None,
                 centroid=(0.0, 0.0, 0.0), inertia_at: str = "centroid", velocity=(0.0, 0.0, 0.0),
                 angular_velocity=(0.0, 0.0, 0.0), loads=()):
        check_identity(self, name, mass, loads)
        J = _floats(inertia, "inertia", name)
        if J.shape == (3,):
            J = np.diag(J)
        if J.shape != (3, 3) or not np.all(np.isfinite(J)):
            raise ValueError(f"body {name!r}: `inertia` must be a 3 x 3 tensor or its 3 diagonal entries, "
                             f"got {inertia!r}")
        scale = np.max(np.abs(J))
        if np.max(np.abs(J - J.T), initial=0.0) > 1e-12 * scale:
            raise ValueError(f"body {name!r}: the inertia tensor must be symmetric, got {J.tolist()}")
        J = 0.5 * (J + J.T)
        self.centroid = _vector3(centroid, "centroid", name)
        c = self.centroid
        shift = self.mass * ((c @ c) * np.eye(3) - np.outer(c, c))     # parallel axes: J_O = J_C + shift
        if inertia_at == "centroid":
            J_C = J
        elif inertia_at == "reference":
            J_C = J - shift
        else:
            raise ValueError(f"body {name!r}: `inertia_at` must be 'centroid' or 'reference', got {inertia_at!r}")
        lam = np.linalg.eigvalsh(J_C)
        if not lam[0] > 1e-12 * max(scale, 1e-300):
            raise ValueError(f"body {name!r}: the inertia tensor about the centre of mass must be positive "
                             f"definite; its principal moments are {lam.tolist()} kg m^2")
        if lam[0] + lam[1] < lam[2] * (1.0 - 1e-9):
            raise ValueError(f"body {name!r}: principal moments {lam.tolist()} kg m^2 violate J1 + J2 >= J3 "
                             "(the triangle inequality of every mass distribution)")
        self.inertia_centroid = J_C
        self.inertia_reference = J_C + shift
        self.position = _vector3(position, "position", name)
        try:
            self.orientation = as_rotation_matrix(orientation)
        except ValueError as err:
            raise ValueError(f"body {name!r}: {err}") from None
        self.velocity = _vector3(velocity, "velocity", name)
        self.omega0 = _vector3(angular_velocity, "angular_velocity", name)

    def energy(self, q, v, gravity) -> tuple[float, float]:
        """(1/2 v^T M v, -m g . r_C)."""
        T = 0.5 * float(v @ (self.mass_matrix(q) @ v))
        if gravity is None:
            return T, 0.0
        return T, -self.mass * float(np.asarray(gravity, dtype=float) @ self.point(q, self.centroid))

    def _gravity_force(self, q, gravity) -> np.ndarray:
        if gravity is None:
            return np.zeros(self.n_q)
        return self.point_force(q, self.centroid, self.mass * np.asarray(gravity, dtype=float))
