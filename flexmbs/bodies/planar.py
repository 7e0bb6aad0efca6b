"""Rigid body in the plane: coordinates q = (x, y, theta) of its centroid and its orientation.

The body frame has its origin at the centroid G and is turned by theta from the global
frame, so a body-fixed point with local coordinates s (relative to G) is at

.. code:: text

    r_P = r_G + A(theta) s,      A = [[cos, -sin], [sin, cos]],      A_theta = A E,  E = [[0, -1], [1, 0]]
    dr_P/dq = [I_2, A E s]                      (2 x 3)
    r_P'' = J q'' + bias,        bias = -theta'^2 A s

and a body-fixed direction u likewise without r_G.  With the frame at the centroid the mass
matrix is constant, M = diag(m, m, I_G), and the quadratic-velocity vector is zero; gravity g
gives Q_e = (m g_x, m g_y, 0).  A point mass on a massless link is I_G = 0: M is then
singular, which the constrained solvers accept as long as the joints fix theta (the
saddle-point matrix stays regular).  Shabana, Computational Dynamics, 3rd ed., Wiley (2010),
ch. 6 (planar rigid-body dynamics in absolute coordinates); Nikravesh, Computer-Aided Analysis of
Mechanical Systems, Prentice Hall (1988), ch. 6.
"""
from __future__ import annotations

import numpy as np

from .base import (Body, LinearInertiaBatch, PartKinematics, _check_loads, positive_number, real_number,
                   rigid_motion_of_points)

__all__ = ["RigidBody2D", "rotation_2d"]

_E = np.array([[0.0, -1.0], [1.0, 0.0]])


def rotation_2d(theta: float) -> np.ndarray:
    """A(theta) = [[cos, -sin], [sin, cos]]."""
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s], [s, c]])


def _vec2(value, what: str, name: str) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"body {name!r}: {what} must be 2 numbers, got {value!r}.") from None
    if a.shape != (2,) or not np.all(np.isfinite(a)):
        raise ValueError(f"body {name!r}: {what} must be 2 finite numbers, got {value!r}.")
    return a


class RigidBody2D(Body):
    """Planar rigid body with coordinates (x, y, theta) of its centroid; dim = 2, n_q = 3.

    Parameters
    ----------
    name : str
    mass : float
        m > 0 [kg].
    inertia : float
        Moment of inertia about the centroid, I_G >= 0 [kg m^2] (0: a point mass, whose
        orientation the joints must fix).
    position : (2,) array_like
        Initial centroid position [m].
    angle : float
        Initial orientation theta [rad].
    velocity : (2,) array_like
        Initial centroid velocity [m/s].
    angular_velocity : float
        Initial theta' [rad/s].
    loads : sequence of callables, optional
        Applied loads on this body alone, each ``load(body, t, q, v) -> (3,)`` generalized
        force, added to gravity in `forces` (`flexmbs.bodies.loads`: `point_load`,
        `torque_load`, `spring_to_ground`).
    """

    dim = 2
    n_q = 3
    constant_mass = True

    def __init__(self, name: str, mass: float, inertia: float, position=(0.0, 0.0), angle: float = 0.0,
                 velocity=(0.0, 0.0), angular_velocity: float = 0.0, loads=()):
        self.name = str(name)
        owner = f"body {name!r} (RigidBody2D)"
        mass = positive_number(mass, "mass", owner)
        inertia, angle = real_number(inertia, "inertia", owner), real_number(angle, "angle", owner)
        if not (np.isfinite(inertia) and inertia >= 0):
            raise ValueError(f"body {name!r}: `inertia` (about the centroid) must be >= 0, got {inertia!r}.")
        if not np.isfinite(angle):
            raise ValueError(f"body {name!r}: `angle` must be finite, got {angle!r}.")
        self.mass, self.inertia = mass, inertia
        self.position = _vec2(position, "`position`", name)
        self.angle = angle
        self.velocity = _vec2(velocity, "`velocity`", name)
        self.omega0 = float(angular_velocity)
        if not np.isfinite(self.omega0):
            raise ValueError(f"body {name!r}: `angular_velocity` must be finite, got {angular_velocity!r}.")
        self._M = np.diag([mass, mass, inertia])
        self.loads = _check_loads(loads, self.name)

    # -- coordinates, inertia, forces --------------------------------------------------------
    def initial_coordinates(self) -> np.ndarray:
        return np.array([self.position[0], self.position[1], self.angle])

    @classmethod
    def batch(cls, bodies) -> "PlanarBatch":
        """M and Q (the weight) of several planar bodies at once, for `flexmbs.System`."""
        return PlanarBatch(bodies)

    def initial_velocities(self) -> np.ndarray:
        return np.array([self.velocity[0], self.velocity[1], self.omega0])

    def mass_matrix(self, q) -> np.ndarray:
        return self._M.copy()

    def forces(self, t, q, v, gravity) -> np.ndarray:
        """Q_e of gravity, (m g_x, m g_y, 0), plus the body's loads; the quadratic-velocity vector is zero."""
        g = np.zeros(2) if gravity is None else np.asarray(gravity, dtype=float)
        Q = np.array([self.mass * g[0], self.mass * g[1], 0.0])
        return Q + self.applied(t, q, v) if self.loads else Q

    def internal_constraints(self) -> list:
        return []

    # -- Gibbs-Appell and Hamilton terms (flexmbs.formulations.body_terms) ----------------------
    def gibbs_appell(self, Q, V) -> tuple[np.ndarray, np.ndarray]:
        """(M, g) of dS/dq'' = M q'' + g at the k states Q, V (k, 3).

        A point at s from the centroid G has a = r_G'' + theta'' A E s - theta'^2 A s, so with
        sum m s = 0 the acceleration energy is S = 1/2 m |r_G''|^2 + 1/2 I_G theta''^2 + (terms free of
        the accelerations): the centripetal part -theta'^2 A s is orthogonal to the rotational partial
        velocity A E s (E s . s = 0), and a planar body has no gyroscopic term.  M = diag(m, m, I_G), g = 0.
        """
        k = len(Q)
        return np.broadcast_to(np.diag([self.mass, self.mass, self.inertia]), (k, 3, 3)).copy(), np.zeros((k, 3))

    def active_forces(self, t, q, v, gravity) -> np.ndarray:
        """The generalized forces that are not inertia: all of `forces` (Q_v = 0)."""
        return self.forces(t, q, v, gravity)

    def kinetic_energy_gradient(self, Q, V) -> np.ndarray:
        """dT/dq at fixed q' (k, 3): zero (T = 1/2 m |r_G'|^2 + 1/2 I_G theta'^2 does not depend on q)."""
        return np.zeros(np.shape(Q))

    def kinematics(self, Q) -> PartKinematics:
        """The body as one rigid part at the k configurations Q (k, 3) (Kane, Volterra): its centroid moves
        with (x', y', 0), its angular velocity is (0, 0, theta'), its inertia about the centroid
        diag(0, 0, I_G) (only the z moment acts in the plane)."""
        k = len(np.atleast_2d(Q))
        B, D, I = np.zeros((k, 1, 3, 3)), np.zeros((k, 1, 3, 3)), np.zeros((k, 1, 3, 3))
        B[:, 0, 0, 0] = B[:, 0, 1, 1] = 1.0
        D[:, 0, 2, 2] = 1.0
        I[:, 0, 2, 2] = self.inertia
        return PartKinematics(mass=np.array([self.mass]), B=B, D=D, I=I)

    def energy(self, q, v, gravity) -> tuple[float, float]:
        """(1/2 m |v_G|^2 + 1/2 I_G theta'^2, -m g . r_G)."""
        q, v = np.asarray(q, float), np.asarray(v, float)
        kinetic = 0.5 * self.mass * (v[0] ** 2 + v[1] ** 2) + 0.5 * self.inertia * v[2] ** 2
        g = np.zeros(2) if gravity is None else np.asarray(gravity, dtype=float)
        return float(kinetic), float(-self.mass * (g[0] * q[0] + g[1] * q[1]))

    def energies(self, Q, V, gravity) -> tuple[np.ndarray, np.ndarray]:
        """`energy` at all rows of Q, V (n_t, 3) at once."""
        Q, V = np.asarray(Q, dtype=float), np.asarray(V, dtype=float)
        kinetic = 0.5 * self.mass * (V[:, 0] ** 2 + V[:, 1] ** 2) + 0.5 * self.inertia * V[:, 2] ** 2
        g = np.zeros(2) if gravity is None else np.asarray(gravity, dtype=float)
        return kinetic, -self.mass * (g[0] * Q[:, 0] + g[1] * Q[:, 1])

    # -- markers -----------------------------------------------------------------------------
    def rotation(self, q) -> np.ndarray:
        return rotation_2d(q[2])

    def angular_velocity(self, q, v) -> float:
        return float(v[2])

    def rigid_motion_generators(self, q, point) -> np.ndarray:
        """(3, 3): (x, y) moves like a point (e_x, e_y, e_z x (r - O)), theta' = 1 under the rotation."""
        X = np.zeros((3, 3))
        X[:2] = rigid_motion_of_points(np.asarray(q, dtype=float)[None, :2], point)[0]
        X[2, 2] = 1.0
        return X

    def point(self, q, s) -> np.ndarray:
        return np.asarray(q[:2], float) + rotation_2d(q[2]) @ np.asarray(s, float)

    def point_jacobian(self, q, s) -> np.ndarray:
        J = np.zeros((2, 3))
        J[0, 0] = J[1, 1] = 1.0
        J[:, 2] = rotation_2d(q[2]) @ (_E @ np.asarray(s, float))
        return J

    def point_bias(self, q, v, s) -> np.ndarray:
        return -v[2] ** 2 * (rotation_2d(q[2]) @ np.asarray(s, float))

    def vector(self, q, u) -> np.ndarray:
        return rotation_2d(q[2]) @ np.asarray(u, float)

    def vector_jacobian(self, q, u) -> np.ndarray:
        J = np.zeros((2, 3))
        J[:, 2] = rotation_2d(q[2]) @ (_E @ np.asarray(u, float))
        return J

    def vector_bias(self, q, v, u) -> np.ndarray:
        return -v[2] ** 2 * (rotation_2d(q[2]) @ np.asarray(u, float))

    # -- applied loads -----------------------------------------------------------------------
    def point_force(self, q, s, F) -> np.ndarray:
        """J^T F of a global force F (2,) at the body point s."""
        return self.point_jacobian(q, s).T @ np.asarray(F, float)

    def torque(self, q, T) -> np.ndarray:
        """Generalized force (0, 0, T) of a torque T about the plane's normal."""
        return np.array([0.0, 0.0, float(T)])

    def local_point(self, q, r) -> np.ndarray:
        """Local coordinates s of the global point r: A^T (r - r_G)."""
        return rotation_2d(q[2]).T @ (np.asarray(r, float) - np.asarray(q[:2], float))


class PlanarBatch(LinearInertiaBatch):
    """M (constant, (n, 3, 3)) and the weight Q = (m g_x, m g_y, 0) of n planar bodies; the
    System adds the bodies' `loads`."""

    def __init__(self, bodies):
        self.M = np.stack([b.mass_matrix(None) for b in bodies])     # constant M of each body
        self.m = np.array([b.mass for b in bodies])

    def mass_matrix(self, Q) -> np.ndarray:
        return self.M

    def forces(self, t, Q, V, gravity) -> np.ndarray:
        out = np.zeros((len(self.m), 3))
        if gravity is not None:
            out[:, :2] = self.m[:, None] * np.asarray(gravity, dtype=float)
        return out

