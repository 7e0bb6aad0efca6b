"""Rigid body in reference point coordinates with Euler parameters (RPCF-EP).

q = (R, p): R the global position of the reference point O (the body frame's origin), p the
Euler parameters of A = A(p) (``rotations.ep_to_matrix``); v = q'.  With the centre of mass at
u_C (body coordinates, from O), J_O the inertia tensor about O in body axes, G = G(p) and the
body angular velocity w = 2 G p', the kinetic energy is

.. code:: text

    T = 1/2 m R'.R' - m R'^T A skew(u_C) w + 1/2 w^T J_O w = 1/2 q'^T M(q) q'
    M = [[m I, -2 m A skew(u_C) G], [sym, 4 G^T J_O G]]                      (7 x 7, singular: M [0; p] = 0)

and Lagrange's equations d/dt dT/dq' - dT/dq = Q_e give M q'' = Q_e + Q_v with

.. code:: text

    Q_v,R = m A' skew(u_C) w,                      A' = E(p') G(p)^T + E(p) G(p')^T
    Q_v,p = -4 G(p')^T h - 2 m G^T skew(u_C) A'^T R' - m [d(A x)/dp]^T R',  x = skew(u_C) w
    h = m skew(u_C) A^T R' + J_O w

(derived here from T with G(a) b = -G(b) a and G(p') p' = 0; for u_C = 0 it reduces to
Q_v,p = -8 G'^T J G p' (Nikravesh 1988, eq. 11.41), and it matches Pappalardo and Guida 2018,
eqs. 7-8, written with their G_bar = 2 G).  The normalisation p.p - 1 = 0 is the body's
internal constraint.  tests/test_bodies.py checks M and Q_v against a finite-difference Lagrange
derivation from T.
"""
from __future__ import annotations

import numpy as np

from ..constraints.base import Constraint
from ..rotations import LastRotation, ep_E, ep_EG, ep_G, ep_to_matrix, ep_vector_jacobian, matrix_to_ep, skew
from .base import PartKinematics, RigidBody, rigid_motion_of_points

__all__ = ["RigidBodyEP", "EulerParameterNorm", "frame_rigid_motion_generators"]


def frame_rigid_motion_generators(q, point, n_q: int) -> np.ndarray:
    """X(q) (n_q, 6) of a body whose q starts with a frame (R, p) and whose other coordinates are
    body-fixed (the deformation delta of a FlexibleBody): translation R' = e_k; rotation about e_k
    through O = ``point``: R' = e_k x (R - O) and p' = 1/2 E(p)^T e_k, the rate of the left quaternion
    product (cos(eps/2), sin(eps/2) e) * p, which rotates A(p) into R(eps e) A(p) (so that
    omega = 2 E p' = E E^T e = e), exact for any p (linear in p, and E p = 0 keeps p.p'= 0)."""
    q = np.asarray(q, dtype=float)
    X = np.zeros((n_q, 6))
    X[:3] = rigid_motion_of_points(q[None, :3], point)[0]
    X[3:7, 3:] = 0.5 * ep_E(q[3:7]).T
    return X


class RigidBodyEP(RigidBody):
    """Rigid body in reference point coordinates and Euler parameters: q = (R, p), n_q = 7.

    See `flexmbs.bodies.base.RigidBody` for the parameters (name, mass, inertia, position,
    orientation, centroid, inertia_at, velocity, angular_velocity).
    """

    n_q = 7
    constant_mass = False

    def __init__(self, name, mass, inertia, **kwargs):
        super().__init__(name, mass, inertia, **kwargs)
        self._uC = skew(self.centroid)
        self._offset = bool(np.any(self.centroid != 0.0))
        self._internal = [EulerParameterNorm(self)]
        self._one = EPBatch([self])
        self._A = LastRotation()         # A(p) of the last p (joints ask for several markers at one q)

    def initial_coordinates(self) -> np.ndarray:
        return np.concatenate([self.position, matrix_to_ep(self.orientation)])

    def initial_velocities(self) -> np.ndarray:
        """(R', p') with p' = 1/2 E(p)^T omega (so that 2 E p' = omega and p.p' = 0)."""
        p = matrix_to_ep(self.orientation)
        return np.concatenate([self.velocity, 0.5 * ep_E(p).T @ self.omega0])

    def internal_constraints(self) -> list:
        return self._internal

    @classmethod
    def batch(cls, bodies) -> "EPBatch":
        """The mass matrices and forces of several RPCF-EP bodies at once."""
        return EPBatch(bodies)

    def mass_matrix(self, q) -> np.ndarray:
        return self._one.mass_matrix(q[None])[0]

    def energies(self, Q, V, gravity) -> tuple[np.ndarray, np.ndarray]:
        """(1/2 v^T M v, -m g . (R + A c)) at all rows of Q, V (n_t, 7) at once."""
        Q, V = np.asarray(Q, dtype=float), np.asarray(V, dtype=float)
        T = 0.5 * np.einsum("ti,tij,tj->t", V, self._one.mass_matrix(Q), V)
        if gravity is None:
            return T, np.zeros(len(Q))
        r_C = Q[:, :3] + ep_to_matrix(Q[:, 3:7]).reshape(len(Q), 3, 3) @ self.centroid
        return T, -self.mass * (r_C @ np.asarray(gravity, dtype=float))

    def quadratic_velocity(self, q, v) -> np.ndarray:
        """Q_v = -M' q' + dT/dq (see the module docstring)."""
        return self._one.quadratic_velocity(q[None], v[None])[0]

    def quadratic_velocity_jacobian(self, q, v) -> np.ndarray:
        """dQ_v/dv (7, 7) (`EPBatch.quadratic_velocity_jacobian`)."""
        return self._one.quadratic_velocity_jacobian(q[None], v[None])[0]

    def forces(self, t, q, v, gravity) -> np.ndarray:
        Q = self._one.forces(t, q[None], v[None], gravity)[0]
        return Q + self.applied(t, q, v) if self.loads else Q

    # -- Gibbs-Appell and Hamilton terms (flexmbs.formulations.body_terms) ----------------------
    def gibbs_appell(self, Q, V) -> tuple[np.ndarray, np.ndarray]:
        """(M, g) of dS/dq'' = M q'' + g at the k states Q, V (k, 7), from the body's inertia
        (`EPBatch.gibbs_appell`)."""
        return self._one.gibbs_appell(np.atleast_2d(Q), np.atleast_2d(V))

    def active_forces(self, t, q, v, gravity) -> np.ndarray:
        """The generalized forces that are not inertia: the weight m g at the centroid and the body's loads."""
        Q = self._gravity_force(q, gravity)
        return Q + self.applied(t, q, v) if self.loads else Q

    def kinetic_energy_gradient(self, Q, V) -> np.ndarray:
        """dT/dq at fixed q' (k, 7) (`EPBatch.kinetic_energy_gradient`)."""
        return self._one.kinetic_energy_gradient(np.atleast_2d(Q), np.atleast_2d(V))

    def kinematics(self, Q) -> PartKinematics:
        """The body as one rigid part at the k configurations Q (k, 7), real or complex (Kane, Volterra).

        Its centre of mass r_C = R + A(p) c moves with r_C' = R' + V_c p' (V_c = d(A c)/dp), its global
        angular velocity is omega = 2 E(p) p' (|p| = 1, p.p' = 0), its global inertia about C is
        A J_C A^T:

        .. code:: text

            B = [I, V_c(p)],   D = [0, 2 E(p)],   I = A(p) J_C A(p)^T
        """
        Q = np.atleast_2d(Q)
        k, P = len(Q), Q[:, 3:7]
        E, G = ep_EG(P)
        A = E @ G.swapaxes(1, 2)                                       # A = E G^T
        B = np.zeros((k, 1, 3, 7), dtype=Q.dtype)
        D = np.zeros_like(B)
        B[:, 0, :, :3] = np.eye(3)
        B[:, 0, :, 3:] = ep_vector_jacobian(P, np.broadcast_to(self.centroid, (k, 3)))
        D[:, 0, :, 3:] = 2.0 * E
        I = (A @ self.inertia_centroid @ A.swapaxes(1, 2))[:, None]
        return PartKinematics(mass=np.array([self.mass]), B=B, D=D, I=I)

    # -- markers --------------------------------------------------------------------------------
    def frame_marker(self, s):
        """(y0, columns, Phi) with point(q, s) = R + A(p) (y0 + Phi q[columns]): (s, none, none).

        Bodies whose q starts with (R, p) and whose points have this form give it, and
        `flexmbs.constraints.batch.JointBatch` evaluates their markers together."""
        return np.asarray(s, dtype=float), np.zeros(0, dtype=int), np.zeros((3, 0))

    def point(self, q, s) -> np.ndarray:
        return q[:3] + self._A(q[3:7]) @ s

    def point_jacobian(self, q, s) -> np.ndarray:
        J = np.empty((3, 7))
        J[:, :3] = np.eye(3)
        J[:, 3:] = ep_vector_jacobian(q[3:7], s)
        return J

    def point_bias(self, q, v, s) -> np.ndarray:
        """d(A s)/dp is linear in p, so its time derivative is d(A s)/dp evaluated at p'."""
        return ep_vector_jacobian(v[3:7], s) @ v[3:7]

    def vector(self, q, u) -> np.ndarray:
        return self._A(q[3:7]) @ u

    def vector_jacobian(self, q, u) -> np.ndarray:
        J = np.zeros((3, 7))
        J[:, 3:] = ep_vector_jacobian(q[3:7], u)
        return J

    def vector_bias(self, q, v, u) -> np.ndarray:
        return ep_vector_jacobian(v[3:7], u) @ v[3:7]

    def rotation(self, q) -> np.ndarray:
        return ep_to_matrix(q[3:7])

    def angular_velocity(self, q, v) -> np.ndarray:
        """omega = 2 E(p) p' (global)."""
        return 2.0 * ep_E(q[3:7]) @ v[3:7]

    def rigid_motion_generators(self, q, point) -> np.ndarray:
        """(7, 6): R like a point, p' = 1/2 E(p)^T e (`frame_rigid_motion_generators`)."""
        return frame_rigid_motion_generators(q, point, 7)

    def torque(self, q, T) -> np.ndarray:
        """Virtual work T . delta_theta with delta_theta = 2 E delta_p: Q = (0, 2 E^T T)."""
        out = np.zeros(7)
        out[3:] = 2.0 * ep_E(q[3:7]).T @ np.asarray(T, dtype=float)
        return out


class EPBatch:
    """M and Q of n RPCF-EP bodies from stacked coordinates Q (n, 7) and velocities V (n, 7).

    The one implementation of the module docstring's formulas (a single body is a batch of one).
    """

    def __init__(self, bodies):
        self.m = np.array([b.mass for b in bodies])
        self.J = np.stack([b.inertia_reference for b in bodies])
        self.c = np.stack([b.centroid for b in bodies])
        self.U = skew(self.c)
        self.offset = bool(np.any(self.c != 0.0))

    def mass_matrix(self, Q) -> np.ndarray:
        """(n, 7, 7)."""
        P = Q[:, 3:7]
        E, G = ep_EG(P)
        n = len(Q)
        M = np.zeros((n, 7, 7))
        M[:, 0, 0] = M[:, 1, 1] = M[:, 2, 2] = self.m
        M[:, 3:, 3:] = 4.0 * (G.swapaxes(1, 2) @ self.J @ G)
        if self.offset:
            A = E @ G.swapaxes(1, 2)                                   # A = E G^T (ep_to_matrix)
            B = -2.0 * self.m[:, None, None] * (A @ self.U @ G)
            M[:, :3, 3:] = B
            M[:, 3:, :3] = B.swapaxes(1, 2)
        return M

    def quadratic_velocity(self, Q, V) -> np.ndarray:
        """(n, 7): Q_v = -M' q' + dT/dq."""
        n = len(Q)
        P, Rd, Pd = Q[:, 3:7], V[:, :3, None], V[:, 3:7]
        PP = np.concatenate((P, Pd))                                  # E, G of p and p' in one call
        E2, G2 = ep_EG(PP)
        G, Gd = G2[:n], G2[n:]
        GdT = Gd.swapaxes(1, 2)
        w = 2.0 * (G @ Pd[:, :, None])                                # (n, 3, 1)
        out = np.zeros((n, 7))
        if not self.offset:
            out[:, 3:] = -4.0 * (GdT @ (self.J @ w))[:, :, 0]
            return out
        m, U = self.m[:, None, None], self.U
        GT = G.swapaxes(1, 2)
        E = E2[:n]
        A = E @ GT                                                    # A = E G^T
        Ad = E2[n:] @ GT + E @ GdT
        x = U @ w
        h = m * (U @ (A.swapaxes(1, 2) @ Rd)) + self.J @ w
        out[:, :3] = (m * (Ad @ x))[:, :, 0]
        out[:, 3:] = (-4.0 * (GdT @ h) - 2.0 * m * (GT @ (U @ (Ad.swapaxes(1, 2) @ Rd)))
                      - m * (ep_vector_jacobian(P, x[:, :, 0]).swapaxes(1, 2) @ Rd))[:, :, 0]
        return out

    def quadratic_velocity_jacobian(self, Q, V) -> np.ndarray:
        """(n, 7, 7): dQ_v/dv.  Q_v is a quadratic form B(v, v) in v, so column j is
        2 B(v, e_j) = (Q_v(v + e_j) - Q_v(v - e_j)) / 2, exact; all bodies and columns in one call."""
        n = len(Q)
        E = np.eye(7)
        Vpm = np.concatenate([V[:, None, :] + E, V[:, None, :] - E], axis=1).reshape(14 * n, 7)
        rep = self.__dict__.get("_rep")
        if rep is None:                                           # the same bodies, each 14 times
            rep = self._rep = EPBatch.__new__(EPBatch)
            rep.m, rep.J, rep.c, rep.U = (np.repeat(x, 14, axis=0) for x in (self.m, self.J, self.c, self.U))
            rep.offset = self.offset
        Qv = rep.quadratic_velocity(np.repeat(Q, 14, axis=0), Vpm).reshape(n, 2, 7, 7)
        return 0.5 * (Qv[:, 0] - Qv[:, 1]).swapaxes(1, 2)

    # -- Gibbs-Appell and Hamilton terms (flexmbs.formulations.body_terms) ----------------------
    def gibbs_appell(self, Q, V) -> tuple[np.ndarray, np.ndarray]:
        """(M, g) of dS/dq'' = M q'' + g, (n, 7, 7) and (n, 7), from the bodies' inertia (rows: the bodies, or
        n states of a batch of one body).

        The acceleration energy of a rigid body about its centre of mass C (Appell; Greenwood,
        Advanced Dynamics, 2003, sec. 4.4), with the body angular velocity w = 2 G(p) p' and its rate
        w' = 2 G(p) p'' (G(p') p' = 0):

        .. code:: text

            S = 1/2 m |a_C|^2 + 1/2 w'^T J_C w' + w'^T (w x J_C w) + (terms free of q'')
            r_C = R + A(p) c,   a_C = R'' + V_c p'' + b_C,   V_c = d(A c)/dp,   b_C = 2 A(p') c

        (A(p) is quadratic in p, so (d/dt)(V_c p') = V_c p'' + 2 A(p') c exactly.)  Differentiated once:

        .. code:: text

            M = [[m I, m V_c], [m V_c^T, m V_c^T V_c + 4 G^T J_C G]]
            g = [m b_C, m V_c^T b_C + 2 G^T (w x J_C w)]

        On |p| = 1, p.p' = 0 and p.p'' = -p'.p' this equals Lagrange's M q'' - Q_v up to a multiple
        of the normalisation's gradient (0, 2 p) (tests/test_formulations_system.py).
        """
        k = len(Q)
        P, Pd = Q[:, 3:7], V[:, 3:7]
        m = np.broadcast_to(self.m, (k,))[:, None, None]
        c = np.broadcast_to(self.c, (k, 3))
        cc = np.einsum("ka,ka->k", c, c)[:, None, None]
        J_C = self.J - m * (cc * np.eye(3) - c[:, :, None] * c[:, None, :])       # parallel axes, back to C
        G = ep_G(P)
        Vc = ep_vector_jacobian(P, c)
        b = np.einsum("kab,kb->ka", ep_to_matrix(Pd).reshape(k, 3, 3), c)
        b *= 2.0
        w = 2.0 * np.einsum("kaj,kj->ka", G, Pd)
        GT = G.swapaxes(1, 2)
        M = np.zeros((k, 7, 7))
        M[:, [0, 1, 2], [0, 1, 2]] = m[:, :, 0]
        M[:, :3, 3:] = m * Vc
        M[:, 3:, :3] = m * Vc.swapaxes(1, 2)
        M[:, 3:, 3:] = m * Vc.swapaxes(1, 2) @ Vc + 4.0 * GT @ J_C @ G
        g = np.empty((k, 7))
        g[:, :3] = m[:, :, 0] * b
        g[:, 3:] = (m[:, :, 0] * np.einsum("kaj,ka->kj", Vc, b)
                    + 2.0 * np.einsum("kja,ka->kj", GT, np.cross(w, np.einsum("kab,kb->ka", J_C, w))))
        return M, g

    def kinetic_energy_gradient(self, Q, V) -> np.ndarray:
        """dT/dq at fixed q' (n, 7) of T = 1/2 m R'.R' - m R'^T A(p) c~ w + 1/2 w^T J_O w, w = 2 G(p) p'.

        With dw/dp = -2 G(p') (G(a) b = -G(b) a) and x = c~ w:

        .. code:: text

            dT/dR = 0,    dT/dp = -2 G(p')^T h - m (d(A x)/dp)^T R',    h = m c~ A^T R' + J_O w
        """
        k = len(Q)
        P, Rd, Pd = Q[:, 3:7], V[:, :3], V[:, 3:7]
        m = np.broadcast_to(self.m, (k,))[:, None]
        U = np.broadcast_to(self.U, (k, 3, 3))
        w = 2.0 * np.einsum("kaj,kj->ka", ep_G(P), Pd)
        A = ep_to_matrix(P).reshape(k, 3, 3)
        x = np.einsum("kab,kb->ka", U, w)
        h = m * np.einsum("kab,kcb,kc->ka", U, A, Rd) + np.einsum("kab,kb->ka", np.broadcast_to(self.J, (k, 3, 3)), w)
        out = np.zeros((k, 7))
        out[:, 3:] = (-2.0 * np.einsum("kaj,ka->kj", ep_G(Pd), h)
                      - m * np.einsum("kaj,ka->kj", ep_vector_jacobian(P, x), Rd))
        return out

    def active_forces(self, t, Q, V, gravity) -> np.ndarray:
        """(n, 7): the weight m g at the centroid, the forces that are not inertia (the bodies' `loads` are
        added by the caller)."""
        out = np.zeros((len(self.m), 7))
        if gravity is not None:
            mg = self.m[:, None] * np.asarray(gravity, dtype=float)
            out[:, :3] = mg
            out[:, 3:] = (ep_vector_jacobian(Q[:, 3:7], self.c).swapaxes(1, 2) @ mg[:, :, None])[:, :, 0]
        return out

    def forces(self, t, Q, V, gravity) -> np.ndarray:
        """(n, 7): Q_v plus the weight m g at the centroid (the bodies' `loads` are added by the caller)."""
        out = self.quadratic_velocity(Q, V)
        if gravity is not None:
            mg = self.m[:, None] * np.asarray(gravity, dtype=float)
            out[:, :3] += mg
            out[:, 3:] += (ep_vector_jacobian(Q[:, 3:7], self.c).swapaxes(1, 2) @ mg[:, :, None])[:, :, 0]
        return out


EP_NORM_TOL = 1e-6          # |p| - 1 beyond which a start is refused (Newton would have to move it)


class EulerParameterNorm(Constraint):
    """Internal constraint of an RPCF-EP body: C = p.p - 1, C_q = (0, 2 p^T), gamma = -2 p'.p'.

    Any body whose coordinates start with (R, p) can use it (the floating frame of a flexible body).
    """

    n_c = 1
    batch_columns = 7                           # it reads q[:7] only: batched over bodies of any n_q

    def __init__(self, body: RigidBodyEP):
        self.bodies = (body,)
        self.name = f"{body.name}.euler_parameter_norm"

    def residual(self, t, qs) -> np.ndarray:
        p = qs[0][3:7]
        return np.array([p @ p - 1.0])

    def jacobian(self, t, qs) -> list:
        J = np.zeros((1, len(qs[0])))          # any body whose q starts with (R, p)
        J[0, 3:7] = 2.0 * qs[0][3:7]
        return [J]

    def gamma(self, t, qs, vs) -> np.ndarray:
        pd = vs[0][3:7]
        return np.array([-2.0 * pd @ pd])

    def check_start(self, qs) -> None:
        """Refuse a start with |p| off 1 by more than EP_NORM_TOL (ValueError naming the body and |p|).

        Refused rather than normalised: p / |p| would have to change p' too (p.p' = 0), and a start
        far from the constraint otherwise shows only as a Newton failure or a drifted rotation.
        """
        p = np.asarray(qs[0][3:7], dtype=float)
        norm = float(np.linalg.norm(p))
        if not abs(norm - 1.0) <= EP_NORM_TOL:
            raise ValueError(f"body {self.bodies[0].name!r}: its Euler parameters p = q[3:7] = {p.tolist()} have "
                             f"norm |p| = {norm:.6g}; they must have unit norm (within {EP_NORM_TOL:g}): give "
                             "p / |p| (and p' with p.p' = 0), e.g. from System.initial_coordinates()")

    @classmethod
    def batch(cls, constraints) -> "_NormBatch":
        """The same for several bodies: stacked Q (n, 7) (their first 7 coordinates) -> (n, 1), (n, 1, 7)."""
        return _NormBatch()


class _NormBatch:
    def residual(self, t, Q):
        P = Q[:, 3:7]
        return np.einsum("na,na->n", P, P)[:, None] - 1.0

    def jacobian(self, t, Q):
        J = np.zeros((len(Q), 1, Q.shape[1]))   # any body whose q starts with (R, p)
        J[:, 0, 3:7] = 2.0 * Q[:, 3:7]
        return J

    def gamma(self, t, Q, V):
        Pd = V[:, 3:7]
        return -2.0 * np.einsum("na,na->n", Pd, Pd)[:, None]
