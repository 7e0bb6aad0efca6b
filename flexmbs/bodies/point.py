"""A point mass in 2D or 3D: q = r (its position), M = m I, Q = m g.

The body has no orientation: every marker is the point itself (body-fixed offsets s are
translations, r_P = r + s, since there is no rotation to apply), rotation() is the identity and
a torque has no generalized force.  Useful for lumped masses on massless links (IFToMM A01:
a point mass at the end of a `Distance` constraint).
"""
from __future__ import annotations

import numpy as np

from .base import (Body, LinearInertia, LinearInertiaBatch, check_identity, mass_point_kinematics,
                   rigid_motion_of_points)

__all__ = ["PointMass"]


class PointMass(LinearInertia, Body):
    """A particle of mass ``mass`` at ``position`` (2 or 3 components) with ``velocity``.

    Parameters
    ----------
    name : str
    mass : float
        m > 0 [kg].
    position, velocity : array (dim,)
        Initial global position [m] and velocity [m/s]; dim = len(position).
    loads : sequence of callables
        ``load(body, t, q, v)`` -> generalized force (dim,), added to gravity.
    """

    constant_mass = True

    def __init__(self, name: str, mass: float, position, velocity=None, loads=()):
        check_identity(self, name, mass, loads)
        r = np.asarray(position, dtype=float)
        if r.shape not in ((2,), (3,)) or not np.all(np.isfinite(r)):
            raise ValueError(f"body {name!r}: `position` must be a finite vector of 2 or 3 components, got {position!r}")
        self.dim = self.n_q = r.size
        v = np.zeros(self.dim) if velocity is None else np.asarray(velocity, dtype=float)
        if v.shape != r.shape or not np.all(np.isfinite(v)):
            raise ValueError(f"body {name!r}: `velocity` must be a finite vector like `position`, got {velocity!r}")
        self.position, self.velocity = r, v
        self._M = self.mass * np.eye(self.dim)
        self._I = np.eye(self.dim)
        self._I.flags.writeable = False

    @classmethod
    def batch(cls, bodies) -> "PointMassBatch":
        """M and Q (the weight) of several point masses at once, for `flexmbs.System`."""
        return PointMassBatch(bodies)

    def initial_coordinates(self) -> np.ndarray:
        return self.position.copy()

    def initial_velocities(self) -> np.ndarray:
        return self.velocity.copy()

    def mass_matrix(self, q) -> np.ndarray:
        return self._M

    def forces(self, t, q, v, gravity) -> np.ndarray:
        Q = np.zeros(self.dim) if gravity is None else self.mass * np.asarray(gravity, dtype=float)
        return Q + self.applied(t, q, v) if self.loads else Q

    def kinematics(self, Q):
        """The particle as one mass point at the k configurations Q (k, dim) (Kane, Volterra): v = q'
        (B = I, padded to 3 rows in 2D)."""
        B = np.zeros((len(np.atleast_2d(Q)), 1, 3, self.dim))
        B[:, 0, :self.dim, :] = np.eye(self.dim)
        return mass_point_kinematics([self.mass], B)

    def energy(self, q, v, gravity) -> tuple[float, float]:
        T = 0.5 * self.mass * float(v @ v)
        return T, (0.0 if gravity is None else -self.mass * float(np.asarray(gravity, dtype=float) @ q))

    def energies(self, Q, V, gravity) -> tuple[np.ndarray, np.ndarray]:
        """(1/2 m |v|^2, -m g . r) at all rows of Q, V at once."""
        Q, V = np.asarray(Q, dtype=float), np.asarray(V, dtype=float)
        T = 0.5 * self.mass * np.einsum("ti,ti->t", V, V)
        return T, (np.zeros(len(Q)) if gravity is None else -self.mass * (Q @ np.asarray(gravity, dtype=float)))

    def point(self, q, s) -> np.ndarray:
        return q + s

    def point_jacobian(self, q, s) -> np.ndarray:
        return self._I

    def point_bias(self, q, v, s) -> np.ndarray:
        return np.zeros(self.dim)

    def vector(self, q, u) -> np.ndarray:
        return np.asarray(u, dtype=float)

    def vector_jacobian(self, q, u) -> np.ndarray:
        return np.zeros((self.dim, self.dim))

    def vector_bias(self, q, v, u) -> np.ndarray:
        return np.zeros(self.dim)

    def rotation(self, q) -> np.ndarray:
        return self._I

    def angular_velocity(self, q, v):
        return np.zeros(3) if self.dim == 3 else 0.0

    def rigid_motion_generators(self, q, point) -> np.ndarray:
        """(dim, 6) in 3D, (2, 3) in 2D: the particle moves like a point (`rigid_motion_of_points`)."""
        return rigid_motion_of_points(np.asarray(q, dtype=float)[None], point)[0]

    def torque(self, q, T) -> np.ndarray:
        return np.zeros(self.dim)


class PointMassBatch(LinearInertiaBatch):
    """M = m I (constant, (n, dim, dim)) and the weight Q = m g of n point masses from stacked
    coordinates (n, dim); the System adds the bodies' `loads`."""

    def __init__(self, bodies):
        self.m = np.array([b.mass for b in bodies])
        self.M = self.m[:, None, None] * np.eye(bodies[0].dim)

    def mass_matrix(self, Q) -> np.ndarray:
        return self.M

    def forces(self, t, Q, V, gravity) -> np.ndarray:
        if gravity is None:
            return np.zeros(self.M.shape[:2])
        return self.m[:, None] * np.asarray(gravity, dtype=float)
