"""A body in generalized coordinates of its own: rigid parts on a tree of revolute and prismatic joints.

The paper's models (Nooshabadi and Pishkenari, seed 001: cart with a pendulum, three linked
bodies, satellite with a boom) are written in coordinates q chosen by the analyst (Euler
angles, joint angles, a boom extension, the position of one centre of mass).  `TreeBody`
takes such a model as a tree of joints, each a rotation about or a translation along an axis
fixed in its parent frame, by an angle or length that is a linear combination of the
coordinates, s_j = c_j . q (so absolute angles such as the cart pendulum's theta_2 are
allowed: its joint turns by theta_2 - theta_1 relative to link 1).  Frame j:

.. code:: text

    revolute:   A_j = A_p R(e_j, s_j),      o_j = p_p + A_p d_j,   p_j = o_j
    prismatic:  A_j = A_p,                  o_j = p_p + A_p d_j,   p_j = o_j + s_j A_p e_j

(p: the parent frame, the ground for the first joints; d_j the joint's offset and e_j its
axis in the parent frame; R the Rodrigues rotation).  With the joint's global axis
g_j = A_p e_j, a point r fixed in frame f and the angular velocity of f have the partial
derivatives (sum over the joints j on the path from the ground to f)

.. code:: text

    dr/dq_k     = sum_j c_jk (g_j x (r - o_j))   (revolute)   or   c_jk g_j   (prismatic)
    domega/dq'_k = sum_j c_jk g_j                 (revolute joints only)

so the velocity of a part's centre of mass is V_i = B_i q', its angular velocity
omega_i = D_i q' (B_i, D_i: (3, m), exact), and

.. code:: text

    T = 1/2 q'^T M q',   M = sum_i (m_i B_i^T B_i + D_i^T I_i D_i),   I_i = A_i J_i A_i^T.

Every function of q here is written with analytic numpy operations, so q may be complex:
the time derivatives that the formulations need (B_i' q', M' q', dT/dq, W') come from one
complex-step evaluation, f(q + i h q') = f(q) + i h f'(q) q' + O(h^2), with h = 1e-30, which
is exact to round-off (no subtraction).  The generalized forces of `forces` are Lagrange's,
Q_v = -M' q' + dT/dq, by complex-step differentiation of T (docs/quasi_velocities.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..rotations import cross
from .base import Body

__all__ = ["TreeBody", "TreeJoint", "TreePart", "TreeKinematics", "COMPLEX_STEP"]

COMPLEX_STEP = 1e-30        # h of the complex-step derivatives: round-off exact for |q'| << 1e280


@dataclass(frozen=True)
class TreeJoint:
    """One joint of a `TreeBody`: the frame ``name`` moves relative to ``parent`` (None: ground).

    kind : "revolute" (rotation about ``axis``) or "prismatic" (translation along ``axis``);
    axis, offset : in the parent frame (the offset locates the joint's origin o_j);
    coordinate : a coordinate name (s_j = q_k) or a dict {name: coefficient} (s_j = c_j . q).
    """

    name: str
    kind: str
    axis: tuple
    coordinate: object
    parent: str | None = None
    offset: tuple = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class TreePart:
    """A rigid part fixed in frame ``frame`` (a joint name; None: ground, which carries no mass).

    mass [kg]; inertia: tensor about the part's centre of mass in frame axes (3 x 3 or its
    diagonal) [kg m^2], zero for a point mass; centroid: centre of mass in frame coordinates [m].
    """

    name: str
    frame: str
    mass: float
    inertia: object = (0.0, 0.0, 0.0)
    centroid: tuple = (0.0, 0.0, 0.0)


@dataclass
class TreeKinematics:
    """Kinematics of the parts at a batch of configurations (leading axis k of every array).

    r (k, n_p, 3) centres of mass; A (k, n_p, 3, 3) rotations; B, D (k, n_p, 3, m) velocity
    and angular-velocity Jacobians; I (k, n_p, 3, 3) global inertia tensors about the centres
    of mass; mass (n_p,).
    """

    r: np.ndarray
    A: np.ndarray
    B: np.ndarray
    D: np.ndarray
    I: np.ndarray
    mass: np.ndarray
    extra: dict = field(default_factory=dict)

    def mass_matrix(self) -> np.ndarray:
        """M (k, m, m) = sum_i m_i B_i^T B_i + D_i^T I_i D_i."""
        return (np.einsum("p,kpxa,kpxb->kab", self.mass, self.B, self.B)
                + np.einsum("kpxa,kpxy,kpyb->kab", self.D, self.I, self.D))


def _rodrigues_terms(axis: np.ndarray):
    """(I - e e^T, [e]x, e e^T) of the Rodrigues formula for the unit axis e."""
    E = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    P = np.outer(axis, axis)
    return np.eye(3) - P, E, P


def _rodrigues(terms, angle: np.ndarray) -> np.ndarray:
    """R(e, s) = cos s (I - e e^T) + sin s [e]x + e e^T for a batch of angles s (k,) -> (k, 3, 3)."""
    C, E, P = terms
    return np.cos(angle)[:, None, None] * C + np.sin(angle)[:, None, None] * E + P


class TreeBody(Body):
    """Rigid parts on a tree of joints, in the analyst's generalized coordinates (module docstring).

    Parameters
    ----------
    name : str
    coordinates : sequence of str
        Names of the m coordinates, in the order of q.
    joints : sequence of TreeJoint
        Parents before children.
    parts : sequence of TreePart
    q0, v0 : array (m,)
        Initial coordinates and velocities (q' = v).
    applied : callable, optional
        ``applied(t, q, v) -> Q_e (m,)``: generalized applied forces (motor torques, actuator
        forces) other than gravity, whose power is Q_e . q'.
    marker_frame : str, optional
        Frame of the markers given as plain vectors (default: the last joint's frame); a marker
        may also be given as ``(frame_name, vector)``.
    """

    dim = 3
    constant_mass = False

    def __init__(self, name: str, coordinates, joints, parts, q0, v0=None, applied=None, marker_frame=None):
        if not isinstance(name, str) or not name:
            raise ValueError(f"a body needs a nonempty string `name`, got {name!r}")
        self.name = name
        self.coordinates = tuple(coordinates)
        m = self.n_q = len(self.coordinates)
        if m == 0 or len(set(self.coordinates)) != m:
            raise ValueError(f"body {name!r}: `coordinates` must be distinct names, got {coordinates!r}")
        index = {c: k for k, c in enumerate(self.coordinates)}
        self.joints = list(joints)
        self._frame = {}
        C = np.zeros((len(self.joints), m))
        parent = []
        for j, jt in enumerate(self.joints):
            if jt.kind not in ("revolute", "prismatic"):
                raise ValueError(f"body {name!r}, joint {jt.name!r}: `kind` must be 'revolute' or 'prismatic', "
                                 f"got {jt.kind!r}")
            if jt.parent is not None and jt.parent not in self._frame:
                raise ValueError(f"body {name!r}, joint {jt.name!r}: parent {jt.parent!r} must be a joint listed "
                                 f"before it (known: {list(self._frame)})")
            coeffs = {jt.coordinate: 1.0} if isinstance(jt.coordinate, str) else dict(jt.coordinate)
            for cname, cval in coeffs.items():
                if cname not in index:
                    raise ValueError(f"body {name!r}, joint {jt.name!r}: unknown coordinate {cname!r}; "
                                     f"coordinates: {self.coordinates}")
                C[j, index[cname]] = float(cval)
            axis = np.asarray(jt.axis, dtype=float)
            if axis.shape != (3,) or not np.linalg.norm(axis) > 0:
                raise ValueError(f"body {name!r}, joint {jt.name!r}: `axis` must be a nonzero 3-vector, "
                                 f"got {jt.axis!r}")
            parent.append(-1 if jt.parent is None else self._frame[jt.parent])
            self._frame[jt.name] = j
        self._C = C
        self._parent = parent
        self._axis = [np.asarray(jt.axis, float) / np.linalg.norm(jt.axis) for jt in self.joints]
        self._offset = [np.asarray(jt.offset, dtype=float) for jt in self.joints]
        self._rterms = [_rodrigues_terms(e) for e in self._axis]
        self._revolute = np.array([jt.kind == "revolute" for jt in self.joints])
        # ancestors (path from the ground) of each frame, including itself
        nj = len(self.joints)
        anc = np.zeros((nj, nj), dtype=bool)
        for j in range(nj):
            a = j
            while a >= 0:
                anc[j, a] = True
                a = parent[a]
        self._anc = anc
        self.parts = list(parts)
        if not self.parts:
            raise ValueError(f"body {name!r}: `parts` is empty")
        pf, masses, J, c = [], [], [], []
        for p in self.parts:
            if p.frame not in self._frame:
                raise ValueError(f"body {name!r}, part {p.name!r}: frame {p.frame!r} is not a joint "
                                 f"(joints: {list(self._frame)})")
            if not (np.isfinite(p.mass) and p.mass > 0):
                raise ValueError(f"body {name!r}, part {p.name!r}: `mass` must be positive, got {p.mass!r}")
            Jp = np.asarray(p.inertia, dtype=float)
            Jp = np.diag(Jp) if Jp.shape == (3,) else Jp
            if Jp.shape != (3, 3) or np.max(np.abs(Jp - Jp.T)) > 1e-12 * max(1.0, np.max(np.abs(Jp))):
                raise ValueError(f"body {name!r}, part {p.name!r}: `inertia` must be a symmetric 3 x 3 tensor "
                                 f"or its diagonal, got {p.inertia!r}")
            if np.linalg.eigvalsh(Jp)[0] < -1e-12 * max(1.0, np.max(np.abs(Jp))):
                raise ValueError(f"body {name!r}, part {p.name!r}: `inertia` must be positive semidefinite, "
                                 f"got eigenvalues {np.linalg.eigvalsh(Jp).tolist()}")
            pf.append(self._frame[p.frame])
            masses.append(float(p.mass))
            J.append(Jp)
            c.append(np.asarray(p.centroid, dtype=float))
        self._part_frame = np.array(pf)
        self._mass = np.array(masses)
        self._J = np.array(J)
        self._c = np.array(c)
        self._part_anc = anc[self._part_frame]                       # (n_p, n_j)
        self.q0 = np.asarray(q0, dtype=float).copy()
        self.v0 = np.zeros(m) if v0 is None else np.asarray(v0, dtype=float).copy()
        for arr, what in ((self.q0, "q0"), (self.v0, "v0")):
            if arr.shape != (m,) or not np.all(np.isfinite(arr)):
                raise ValueError(f"body {name!r}: `{what}` must be a finite vector of {m} values, got {arr!r}")
        if applied is not None and not callable(applied):
            raise ValueError(f"body {name!r}: `applied` must be callable(t, q, v) -> Q_e or None")
        self.applied = applied
        self.marker_frame = nj - 1 if marker_frame is None else self._frame_index(marker_frame)

    # -- the tree --------------------------------------------------------------------------------
    def _frame_index(self, frame) -> int:
        if frame not in self._frame:
            raise ValueError(f"body {self.name!r}: no frame {frame!r}; frames: {list(self._frame)}")
        return self._frame[frame]

    def frames(self, q):
        """Global frames of all joints for q (m,) or a batch (k, m), real or complex.

        Returns (A (k, n_j, 3, 3), p (k, n_j, 3), g (k, n_j, 3) global axes, o (k, n_j, 3) joint origins).
        """
        q = np.atleast_2d(q)
        k = q.shape[0]
        s = q @ self._C.T                                              # (k, n_j)
        nj = len(self.joints)
        dtype = np.result_type(q.dtype, float)
        A = np.empty((k, nj, 3, 3), dtype=dtype)
        p = np.empty((k, nj, 3), dtype=dtype)
        g = np.empty((k, nj, 3), dtype=dtype)
        o = np.empty((k, nj, 3), dtype=dtype)
        for j in range(nj):
            par = self._parent[j]
            if par < 0:
                g[:, j] = self._axis[j]
                o[:, j] = self._offset[j]
                Ap = None
            else:
                Ap, pp = A[:, par], p[:, par]
                g[:, j] = Ap @ self._axis[j]
                o[:, j] = pp + Ap @ self._offset[j]
            if self._revolute[j]:
                R = _rodrigues(self._rterms[j], s[:, j])
                A[:, j] = R if Ap is None else Ap @ R
                p[:, j] = o[:, j]
            else:
                A[:, j] = np.eye(3) if Ap is None else Ap
                p[:, j] = o[:, j] + s[:, j, None] * g[:, j]
        return A, p, g, o

    def _jacobians(self, points, anc, g, o):
        """(B, D) of points (k, n, 3) whose frames have ancestor masks anc (n, n_j)."""
        rel = points[:, :, None, :] - o[:, None, :, :]                       # (k, n, n_j, 3)
        col = np.where(self._revolute[None, None, :, None], cross(g[:, None], rel), g[:, None])
        col = col * anc[None, :, :, None]
        B = np.einsum("knjx,jm->knxm", col, self._C)
        Dg = g[:, None] * (anc & self._revolute[None, :])[None, :, :, None]
        D = np.einsum("knjx,jm->knxm", Dg, self._C)
        return B, D

    def kinematics(self, q) -> TreeKinematics:
        """Parts' kinematics for q (m,) or (k, m), real or complex (`TreeKinematics`)."""
        A, p, g, o = self.frames(q)
        Af = A[:, self._part_frame]                                           # (k, n_p, 3, 3)
        r = p[:, self._part_frame] + np.einsum("kpxy,py->kpx", Af, self._c)
        B, D = self._jacobians(r, self._part_anc, g, o)
        I = np.einsum("kpxa,pab,kpyb->kpxy", Af, self._J, Af)
        return TreeKinematics(r=r, A=Af, B=B, D=D, I=I, mass=self._mass)

    # -- body protocol: dynamics ------------------------------------------------------------------
    def initial_coordinates(self) -> np.ndarray:
        return self.q0.copy()

    def initial_velocities(self) -> np.ndarray:
        return self.v0.copy()

    def mass_matrix(self, q) -> np.ndarray:
        return self.kinematics(np.asarray(q, dtype=float)).mass_matrix()[0]

    def applied_forces(self, t, q, v, gravity, B=None) -> np.ndarray:
        """Q_e: the user's applied forces plus gravity, sum_i m_i B_i^T g (no Q_v).

        ``B``: the parts' velocity Jacobians at q (n_p, 3, m), when already computed.
        """
        Q = np.zeros(self.n_q) if self.applied is None else np.asarray(self.applied(t, q, v), dtype=float)
        if gravity is not None:
            B = self.kinematics(q).B[0] if B is None else B
            Q = Q + np.einsum("p,pxm,x->m", self._mass, B, np.asarray(gravity, dtype=float))
        return Q

    def powers(self, t, Q, V, gravity) -> dict[str, np.ndarray]:
        """The power of the user's applied forces, ``loads`` P = q' . Q_e,user(t, q, q') (n_t,), at the
        rows of Q, V (gravity's is in V_g, not here).  ``applied`` is a function of one state, so it is
        evaluated row by row; without it the power is zero.  (Before 2026-11-28 these forces did work
        that no power counted: satellite_boom's energy balance was off by 0.23 J.)"""
        P = np.zeros(len(Q))
        if self.applied is not None:
            for k, (tk, q, v) in enumerate(zip(np.asarray(t, dtype=float).reshape(-1), Q, V)):
                P[k] = np.asarray(self.applied(float(tk), q, v), dtype=float) @ v
        return {"loads": P}

    def quadratic_velocity_forces(self, q, v) -> np.ndarray:
        """Q_v = -M'(q) q' + dT/dq by complex-step differentiation of M (Lagrange's equations).

        One batched evaluation at q + i h e_k (k = 1..m, for dT/dq_k = 1/2 q'^T dM/dq_k q')
        and at q + i h q' (for M' = dM/dq q').
        """
        m, h = self.n_q, COMPLEX_STEP
        qs = np.empty((m + 1, m), dtype=complex)
        qs[:] = q
        qs[:m] += 1j * h * np.eye(m)
        qs[m] += 1j * h * v
        dM = self.kinematics(qs).mass_matrix().imag / h                     # (m + 1, m, m)
        dT = 0.5 * np.einsum("a,kab,b->k", v, dM[:m], v)
        return dT - dM[m] @ v

    def forces(self, t, q, v, gravity) -> np.ndarray:
        """Q_e + Q_v (Lagrange's equations M q'' = Q_e + Q_v)."""
        return self.applied_forces(t, q, v, gravity) + self.quadratic_velocity_forces(q, v)

    # -- Gibbs-Appell and Hamilton terms (flexmbs.formulations.body_terms) ----------------------
    def gibbs_appell(self, Q, V) -> tuple[np.ndarray, np.ndarray]:
        """(M, g) of dS/dq'' = M q'' + g at the k states Q, V (k, m), from the parts' accelerations.

        Part i: a_i = B_i q'' + B_i' q', alpha_i = D_i q'' + D_i' q' (B_i', D_i' along q' by one complex
        step), S = sum_i 1/2 m_i |a_i|^2 + 1/2 alpha_i . I_i alpha_i + alpha_i . (omega_i x I_i omega_i):

        .. code:: text

            M = sum_i m_i B_i^T B_i + D_i^T I_i D_i
            g = sum_i m_i B_i^T (B_i' q') + D_i^T (I_i D_i' q' + omega_i x I_i omega_i)
        """
        Q, V = np.atleast_2d(np.asarray(Q, dtype=float)), np.atleast_2d(np.asarray(V, dtype=float))
        h = COMPLEX_STEP
        kin = self.kinematics(Q + 1j * h * V)
        B, D, I = kin.B.real, kin.D.real, kin.I.real
        a0 = np.einsum("kpxm,km->kpx", kin.B.imag / h, V)                    # B_i' q'
        alpha0 = np.einsum("kpxm,km->kpx", kin.D.imag / h, V)                # D_i' q'
        omega = np.einsum("kpxm,km->kpx", D, V)
        spin = np.cross(omega, np.einsum("kpxy,kpy->kpx", I, omega))
        M = (np.einsum("p,kpxa,kpxb->kab", self._mass, B, B) + np.einsum("kpxa,kpxy,kpyb->kab", D, I, D))
        g = (np.einsum("p,kpxa,kpx->ka", self._mass, B, a0)
             + np.einsum("kpxa,kpx->ka", D, np.einsum("kpxy,kpy->kpx", I, alpha0) + spin))
        return M, g

    def active_forces(self, t, q, v, gravity) -> np.ndarray:
        """The generalized forces that are not inertia: `applied_forces` (the user's and gravity)."""
        return self.applied_forces(t, q, v, gravity)

    def kinetic_energy_gradient(self, Q, V) -> np.ndarray:
        """dT/dq at fixed q' (k, m): T = 1/2 q'^T M(q) q' differentiated by one complex step per coordinate
        (all k m configurations in one call of `kinematics`)."""
        Q, V = np.atleast_2d(np.asarray(Q, dtype=float)), np.atleast_2d(np.asarray(V, dtype=float))
        k, m, h = len(Q), self.n_q, COMPLEX_STEP
        qs = (Q[:, None, :] + 1j * h * np.eye(m)[None]).reshape(k * m, m)
        dM = (self.kinematics(qs).mass_matrix().imag / h).reshape(k, m, m, m)
        return 0.5 * np.einsum("ka,kjab,kb->kj", V, dM, V)

    def energy(self, q, v, gravity) -> tuple[float, float]:
        """(T, V_g) at one state: `energies` on one row."""
        T, V = self.energies(np.asarray(q, dtype=float)[None], np.asarray(v, dtype=float)[None], gravity)
        return float(T[0]), float(V[0])

    def energies(self, Q, V, gravity) -> tuple[np.ndarray, np.ndarray]:
        """(T, V_g), each (n_t,), at all rows of Q, V (n_t, m) at once, from one `kinematics` of the rows:

        .. code:: text

            T   = 1/2 q'^T M(q) q',    M = sum_i m_i B_i^T B_i + D_i^T I_i D_i   (`TreeKinematics.mass_matrix`)
            V_g = -sum_i m_i g . r_i   (r_i the parts' centres of mass)"""
        Q, V = np.atleast_2d(np.asarray(Q, dtype=float)), np.atleast_2d(np.asarray(V, dtype=float))
        kin = self.kinematics(Q)
        T = 0.5 * np.einsum("ka,kab,kb->k", V, kin.mass_matrix(), V)
        if gravity is None:
            return T, np.zeros(len(Q))
        return T, -np.einsum("p,kpx,x->k", self._mass, kin.r, np.asarray(gravity, dtype=float))

    def linear_momentum(self, q, v) -> np.ndarray:
        """P = sum_i m_i B_i q', (3,)."""
        kin = self.kinematics(q)
        return np.einsum("p,pxm,m->x", self._mass, kin.B[0], v)

    # -- body protocol: markers ------------------------------------------------------------------
    def _marker(self, s):
        if isinstance(s, tuple) and len(s) == 2 and isinstance(s[0], str):
            return self._frame_index(s[0]), np.asarray(s[1])
        return self.marker_frame, np.asarray(s)

    def _marker_point(self, q, s, vector=False):
        """(x, dx/dq) of a marker point (or direction, ``vector=True``) for a batch of q."""
        f, local = self._marker(s)
        A, p, g, o = self.frames(q)
        if vector:
            x = A[:, f] @ local
            col = np.where(self._revolute[None, :, None], np.cross(g, x[:, None, :]), 0.0)
            J = np.einsum("kjx,jm->kxm", col * self._anc[f][None, :, None], self._C)
        else:
            x = p[:, f] + A[:, f] @ local
            J = self._jacobians(x[:, None, :], self._anc[f][None, :], g, o)[0][:, 0]
        return x, J

    def point(self, q, s) -> np.ndarray:
        return self._marker_point(q, s)[0][0]

    def point_jacobian(self, q, s) -> np.ndarray:
        return self._marker_point(q, s)[1][0]

    def point_bias(self, q, v, s) -> np.ndarray:
        """(dr_P/dq)' q' by a complex step of the Jacobian along q'."""
        qc = np.asarray(q, dtype=complex) + 1j * COMPLEX_STEP * np.asarray(v)
        return self._marker_point(qc, s)[1][0].imag / COMPLEX_STEP @ np.asarray(v).real

    def vector(self, q, u) -> np.ndarray:
        return self._marker_point(q, u, vector=True)[0][0]

    def vector_jacobian(self, q, u) -> np.ndarray:
        return self._marker_point(q, u, vector=True)[1][0]

    def vector_bias(self, q, v, u) -> np.ndarray:
        qc = np.asarray(q, dtype=complex) + 1j * COMPLEX_STEP * np.asarray(v)
        return self._marker_point(qc, u, vector=True)[1][0].imag / COMPLEX_STEP @ np.asarray(v).real

    def rotation(self, q) -> np.ndarray:
        return self.frames(q)[0][0, self.marker_frame]

    def angular_velocity(self, q, v):
        A, p, g, o = self.frames(q)
        f = self.marker_frame
        Dg = g[0] * (self._anc[f] & self._revolute)[:, None]
        return (self._C.T @ Dg).T @ v

    def rigid_motion_generators(self, q, point) -> np.ndarray:
        """Refused: the coordinates are the analyst's (joint angles from the ground, Euler angles), and
        a global rotation does not map them by a rule of the body (the ground joints do not move)."""
        raise NotImplementedError(f"TreeBody {self.name!r}: rigid_motion_generators is not available: its "
                                  "coordinates are the analyst's joint angles and lengths from the ground, which a "
                                  "global rigid motion does not map into themselves; compute the momentum from "
                                  "linear_momentum and the parts' velocities instead")

    def torque(self, q, T) -> np.ndarray:
        """Generalized force D^T T of a global torque on the marker frame."""
        A, p, g, o = self.frames(q)
        f = self.marker_frame
        Dg = g[0] * (self._anc[f] & self._revolute)[:, None]
        return (self._C.T @ Dg) @ np.asarray(T, dtype=float)
