"""Rigid body in natural absolute coordinates (NACF, Pappalardo and Guida 2018, sec. 2.2).

q = (R, a, b, c) (12 coordinates): R the global position of the reference point O, and a, b,
c the columns of A (the body axes in global components, direction cosines).  A body-fixed
point s = (x, y, z) is at

.. code:: text

    r = R + x a + y b + z c = S(s) q,      S(s) = [I, x I, y I, z I]       (3 x 12, constant)

so every marker is linear in q, with a constant Jacobian and zero bias.  The kinetic energy
T = 1/2 int r'.r' dm = 1/2 q'^T M q' with the constant mass matrix

.. code:: text

    M = int S^T S dm = Sigma (x) I_3,   Sigma = [[m, m u_C^T], [m u_C, Y_O]],   Y_O = int s s^T dm
    Y_O = 1/2 tr(J_O) I - J_O           (second moments about O from the inertia tensor J_O)

hence the quadratic-velocity vector is zero.  The six internal rigidity constraints are
a.a - 1, b.b - 1, c.c - 1, a.b, a.c, b.c (their eq. 17).  The right-handedness det A = +1 is
not a constraint: it holds at the start and is kept by continuity.
"""
from __future__ import annotations

import numpy as np

from ..constraints.base import Constraint
from .base import RigidBody

__all__ = ["RigidBodyNatural", "NaturalRigidity"]

_I3 = np.eye(3)


def _S(s) -> np.ndarray:
    s = np.asarray(s, dtype=float)
    return np.hstack([_I3, s[0] * _I3, s[1] * _I3, s[2] * _I3])


class RigidBodyNatural(RigidBody):
    """Rigid body in natural absolute coordinates q = (R, a, b, c), n_q = 12, constant M.

    See `flexmbs.bodies.base.RigidBody` for the parameters (name, mass, inertia, position,
    orientation, centroid, inertia_at, velocity, angular_velocity).
    """

    n_q = 12
    constant_mass = True

    def __init__(self, name, mass, inertia, **kwargs):
        super().__init__(name, mass, inertia, **kwargs)
        J = self.inertia_reference
        Y = 0.5 * np.trace(J) * _I3 - J
        Sigma = np.empty((4, 4))
        Sigma[0, 0] = self.mass
        Sigma[0, 1:] = Sigma[1:, 0] = self.mass * self.centroid
        Sigma[1:, 1:] = Y
        self.second_moments = Y
        self._M = np.kron(Sigma, _I3)
        self._M.flags.writeable = False
        self._internal = [NaturalRigidity(self)]

    def initial_coordinates(self) -> np.ndarray:
        return np.concatenate([self.position, self.orientation.T.ravel()])

    def initial_velocities(self) -> np.ndarray:
        """(R', a', b', c') with a' = omega x a etc."""
        A = self.orientation
        return np.concatenate([self.velocity, np.cross(self.omega0, A.T).ravel()])

    def internal_constraints(self) -> list:
        return self._internal

    def mass_matrix(self, q) -> np.ndarray:
        return self._M

    def forces(self, t, q, v, gravity) -> np.ndarray:
        """Gravity only: Q_v = 0 because M is constant."""
        return self._gravity_force(q, gravity)

    # -- markers --------------------------------------------------------------------------------
    def point(self, q, s) -> np.ndarray:
        return q[:3] + s[0] * q[3:6] + s[1] * q[6:9] + s[2] * q[9:12]

    def point_jacobian(self, q, s) -> np.ndarray:
        return _S(s)

    def point_bias(self, q, v, s) -> np.ndarray:
        return np.zeros(3)

    def vector(self, q, u) -> np.ndarray:
        return u[0] * q[3:6] + u[1] * q[6:9] + u[2] * q[9:12]

    def vector_jacobian(self, q, u) -> np.ndarray:
        J = _S(u)
        J[:, :3] = 0.0
        return J

    def vector_bias(self, q, v, u) -> np.ndarray:
        return np.zeros(3)

    def point_force(self, q, s, F) -> np.ndarray:
        F = np.asarray(F, dtype=float)
        return np.concatenate([F, s[0] * F, s[1] * F, s[2] * F])

    def rotation(self, q) -> np.ndarray:
        return q[3:12].reshape(3, 3).T

    def angular_velocity(self, q, v) -> np.ndarray:
        """omega = 1/2 (a x a' + b x b' + c x c') (exact when A is a rotation)."""
        return 0.5 * np.cross(q[3:12].reshape(3, 3), v[3:12].reshape(3, 3)).sum(axis=0)

    def torque(self, q, T) -> np.ndarray:
        """Virtual work T . delta_theta with delta_theta = 1/2 sum a_k x delta_a_k: Q_a = 1/2 T x a."""
        out = np.zeros(12)
        out[3:] = 0.5 * np.cross(np.asarray(T, dtype=float), q[3:12].reshape(3, 3)).ravel()
        return out


class NaturalRigidity(Constraint):
    """The six rigidity conditions of an NACF body: a.a - 1, b.b - 1, c.c - 1, a.b, a.c, b.c."""

    n_c = 6
    _pairs = ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))

    def __init__(self, body: RigidBodyNatural):
        self.bodies = (body,)
        self.name = f"{body.name}.rigidity"

    def residual(self, t, qs) -> np.ndarray:
        a, b, c = qs[0][3:12].reshape(3, 3)
        return np.array([a @ a - 1.0, b @ b - 1.0, c @ c - 1.0, a @ b, a @ c, b @ c])

    def jacobian(self, t, qs) -> list:
        d = qs[0][3:12].reshape(3, 3)
        J = np.zeros((6, 12))
        for row, (i, j) in enumerate(self._pairs):
            J[row, 3 + 3 * i:6 + 3 * i] += d[j]
            J[row, 3 + 3 * j:6 + 3 * j] += d[i]
        return [J]

    def gamma(self, t, qs, vs) -> np.ndarray:
        dd = vs[0][3:12].reshape(3, 3)
        return np.array([-2.0 * dd[i] @ dd[j] for i, j in self._pairs])
