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

The compiled kernel evaluates the same (csrc/index3_kernel.c, section "natural-coordinate rigid
bodies"; `flexmbs.compiled` packs a body as its NATURAL_I and NATURAL_BODY rows, m, u_C and Y_O):
M and the weight, the six rigidity rows with gamma = -2 (a'.a', b'.b', c'.c', a'.b', a'.c',
b'.c') and C_t = 0, the markers r = S(s) q of the joints on it, its loads (`point_force`,
`torque`, springs to the ground), the force elements on it and its controllers' sensors (A = [a b c],
omega = 1/2 (a x a' + b x b' + c x c')).
"""
from __future__ import annotations

import numpy as np

from ..constraints.base import Constraint
from .base import LinearInertia, LinearInertiaBatch, RigidBody, rigid_motion_of_points, rotation_of_vectors

__all__ = ["RigidBodyNatural", "NaturalRigidity"]

_I3 = np.eye(3)


def _S(s) -> np.ndarray:
    s0, s1, s2 = np.asarray(s, dtype=float).tolist()
    S = np.zeros((3, 12))
    for k, c in enumerate((1.0, s0, s1, s2)):
        S[0, 3 * k] = S[1, 3 * k + 1] = S[2, 3 * k + 2] = c
    return S


class RigidBodyNatural(LinearInertia, RigidBody):
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
        self._S_cache = {}

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
        """Gravity and the body's loads: Q_v = 0 because M is constant."""
        Q = self._gravity_force(q, gravity)
        return Q + self.applied(t, q, v) if self.loads else Q

    def energy(self, q, v, gravity) -> tuple[float, float]:
        """(T, V_g) at one state: `energies` on one row."""
        T, V = self.energies(np.asarray(q, dtype=float)[None], np.asarray(v, dtype=float)[None], gravity)
        return float(T[0]), float(V[0])

    def energies(self, Q, V, gravity) -> tuple[np.ndarray, np.ndarray]:
        """(T, V_g), each (n_t,), at all rows of Q, V (n_t, 12) at once:

        .. code:: text

            T   = 1/2 q'^T M q'                      (M = Sigma (x) I_3, constant)
            V_g = -m g . r_C,   r_C = S(u_C) q = R + x_C a + y_C b + z_C c

        (r_C is the point u_C of the module docstring's r = S(s) q)."""
        Q, V = np.atleast_2d(np.asarray(Q, dtype=float)), np.atleast_2d(np.asarray(V, dtype=float))
        T = 0.5 * np.einsum("ti,ti->t", V, V @ self._M)
        if gravity is None:
            return T, np.zeros(len(Q))
        r_C = np.concatenate([[1.0], self.centroid]) @ Q.reshape(len(Q), 4, 3)
        return T, -self.mass * (r_C @ np.asarray(gravity, dtype=float))

    @classmethod
    def batch(cls, bodies) -> "NaturalBatch":
        """The mass matrices and forces of several NACF bodies at once."""
        return NaturalBatch(bodies)

    # -- markers --------------------------------------------------------------------------------
    def point(self, q, s) -> np.ndarray:
        return np.array([1.0, s[0], s[1], s[2]]) @ q.reshape(4, 3)

    def point_jacobian(self, q, s) -> np.ndarray:
        """S(s), constant (kept per marker: joints ask for the same s at every call)."""
        key = (float(s[0]), float(s[1]), float(s[2]))
        S = self._S_cache.get(key)
        if S is None:
            if len(self._S_cache) > 256:
                self._S_cache.clear()
            S = self._S_cache[key] = _S(s)
            S.flags.writeable = False
        return S

    def point_bias(self, q, v, s) -> np.ndarray:
        return np.zeros(3)

    def vector(self, q, u) -> np.ndarray:
        return np.asarray(u, dtype=float) @ q[3:12].reshape(3, 3)

    def vector_jacobian(self, q, u) -> np.ndarray:
        key = ("v", float(u[0]), float(u[1]), float(u[2]))
        V = self._S_cache.get(key)
        if V is None:
            V = _S(u)
            V[:, :3] = 0.0
            V.flags.writeable = False
            self._S_cache[key] = V
        return V

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

    def rigid_motion_generators(self, q, point) -> np.ndarray:
        """(12, 6): R moves like a point (e_k; e_k x (R - O)), the axes a, b, c rotate (0; e_k x a)."""
        q = np.asarray(q, dtype=float)
        return np.concatenate([rigid_motion_of_points(q[None, :3], point),
                               rotation_of_vectors(q[3:12].reshape(3, 3))]).reshape(12, 6)

    def torque(self, q, T) -> np.ndarray:
        """Virtual work T . delta_theta with delta_theta = 1/2 sum a_k x delta_a_k: Q_a = 1/2 T x a."""
        out = np.zeros(12)
        out[3:] = 0.5 * np.cross(np.asarray(T, dtype=float), q[3:12].reshape(3, 3)).ravel()
        return out


class NaturalBatch(LinearInertiaBatch):
    """M (constant) and Q (the weight, constant) of n NACF bodies: Q = (m g, m x_C g, m y_C g, m z_C g).

    The bodies' `loads` are added by the caller."""

    def __init__(self, bodies):
        self.M = np.stack([b._M for b in bodies])
        self.w = np.stack([b.mass * np.concatenate([[1.0], b.centroid]) for b in bodies])     # (n, 4)

    def mass_matrix(self, Q) -> np.ndarray:
        return self.M

    def forces(self, t, Q, V, gravity) -> np.ndarray:
        if gravity is None:
            return np.zeros((len(self.w), 12))
        return (self.w[:, :, None] * np.asarray(gravity, dtype=float)).reshape(len(self.w), 12)


class NaturalRigidity(Constraint):
    """The six rigidity conditions of an NACF body: a.a - 1, b.b - 1, c.c - 1, a.b, a.c, b.c."""

    n_c = 6
    _pairs = ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))

    def __init__(self, body: RigidBodyNatural):
        self.bodies = (body,)
        self.name = f"{body.name}.rigidity"

    _I, _J = np.array(_pairs).T
    _one = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])

    def residual(self, t, qs) -> np.ndarray:
        d = qs[0][3:12].reshape(3, 3)
        G = d @ d.T
        return G[self._I, self._J] - self._one

    def jacobian(self, t, qs) -> list:
        d = qs[0][3:12].reshape(3, 3)
        J = np.zeros((6, 12))
        for row, (i, j) in enumerate(self._pairs):
            J[row, 3 + 3 * i:6 + 3 * i] += d[j]
            J[row, 3 + 3 * j:6 + 3 * j] += d[i]
        return [J]

    def gamma(self, t, qs, vs) -> np.ndarray:
        dd = vs[0][3:12].reshape(3, 3)
        return -2.0 * (dd @ dd.T)[self._I, self._J]

    @classmethod
    def batch(cls, constraints) -> "_RigidityBatch":
        """The same for several bodies: stacked Q (n, 12) -> (n, 6), (n, 6, 12)."""
        return _RigidityBatch()


class _RigidityBatch:
    _I, _J = NaturalRigidity._I, NaturalRigidity._J

    def residual(self, t, Q):
        D = Q[:, 3:12].reshape(-1, 3, 3)
        return (D @ np.swapaxes(D, 1, 2))[:, self._I, self._J] - NaturalRigidity._one

    def jacobian(self, t, Q):
        D = Q[:, 3:12].reshape(-1, 3, 3)
        J = np.zeros((len(Q), 6, 4, 3))
        rows = np.arange(6)
        J[:, rows, self._I + 1] += D[:, self._J]
        J[:, rows, self._J + 1] += D[:, self._I]
        return J.reshape(len(Q), 6, 12)

    def gamma(self, t, Q, V):
        D = V[:, 3:12].reshape(-1, 3, 3)
        return -2.0 * (D @ np.swapaxes(D, 1, 2))[:, self._I, self._J]
