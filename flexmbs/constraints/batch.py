"""All joints of a system evaluated together: C, C_q, C_t and gamma from stacked markers.

A `Joint` is a list of primitives (point, dot1, dot2, dist, angle, screw; see `flexmbs.constraints.joints`)
on the markers of its two bodies.  `JointBatch` gathers the markers of many joints once, at
construction, and evaluates them per call in two vectorised passes:

1. **Markers.**  Every marker k is a point r_k (its body's point s) or a direction a_k (a body
   vector u), with its Jacobian J_k = dr_k/dq restricted to a few columns ``cols[k]`` (W of
   them, padded with a column that is dropped) and, for gamma, its velocity J_k q' and bias
   beta_k (r_k'' = J_k q'' + beta_k).  Bodies whose coordinates start with a position R and
   Euler parameters p and whose markers are ``r = R + A(p) (y0 + Phi q[e])`` (they give
   ``frame_marker``: `RigidBodyEP`, `FlexibleBody`) and the ground are evaluated all at once:

   .. code:: text

       y = y0 + Phi q[e]      r = R + A(p) y      J = [I, V(p, y), A(p) Phi]   (columns R, p, e)
       beta = 2 A(p') y + 2 V(p, Phi q'[e]) p'      (A quadratic in p; V = d(A y)/dp, linear in p)

   directions are the same with R = 0, I -> 0 and Phi = 0.  Any other body is asked marker by
   marker (its point, point_jacobian, ... methods).
2. **Rows.**  Each kind of primitive is one set of numpy operations on the stacked markers
   (the formulas of `flexmbs.constraints.joints`; the screw row of `Screw` is an angle row whose
   angle is the sliding along the axis), and C_q is scattered into the dense
   (n_c, n_q) matrix through flat indices computed at construction.  The angle rows of
   `AngleDriver` are a dot1 row whose direction on body i turns with the law f(t):
   C = (A_i u(t)) . b with u = cos(f) y_i - sin(f) x_i (module docstring of
   `flexmbs.constraints.driving`).

The ground is a body at R = 0, p = (1, 0, 0, 0) without columns: the arrays of coordinates
are extended by a constant tail ``(0, 0, 0, 1, 0, 0, 0, 0)`` (ground frame and a zero), and
columns at or beyond n_q are dropped.
"""
from __future__ import annotations

import numpy as np

from ..rotations import ep_to_matrix, ep_vector_jacobian
from .base import EMPTY, Ground, law_history, law_values

__all__ = ["JointBatch", "evaluated_by_batch"]

TAIL = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0])      # ground R, ground p, a zero
ZERO_TAIL = np.zeros(len(TAIL))                                 # the ground does not move
_GROUND_R, _GROUND_P, _ZERO = (0, 1, 2), (3, 4, 5, 6), 7


def evaluated_by_batch(constraint) -> bool:
    """True for a joint whose rows are its primitives (its class does not override the evaluation)."""
    from .joints import Joint
    if not isinstance(constraint, Joint):
        return False
    cls = type(constraint)
    return all(getattr(cls, m) is getattr(Joint, m) for m in ("residual", "jacobian", "gamma", "time_derivative"))


class _Markers:
    """The points and directions of the joints: registration, then stacked evaluation."""

    def __init__(self, dim: int, n_q: int):
        self.dim, self.n_q = dim, n_q
        self.spec = []                           # (side, columns start or None, marker, is_vector)
        self._index = {}

    def add(self, side, start, marker, vector: bool) -> int:
        """Index of the marker (one per body, marker and kind)."""
        if isinstance(marker, np.ndarray):
            mkey = ("array", marker.shape, marker.tobytes())
        else:
            mkey = (type(marker).__name__, repr(marker))
        key = (id(side), vector, mkey)
        k = self._index.get(key)
        if k is None:
            k = self._index[key] = len(self.spec)
            self.spec.append((side, start, marker, vector))
        return k

    def build(self):
        """Gather indices, constant parts and the column layout (width W) of all markers."""
        dim, n_q = self.dim, self.n_q
        k_all = len(self.spec)
        frame, generic = [], []
        for k, (side, start, marker, vector) in enumerate(self.spec):
            if dim == 3 and (isinstance(side, Ground) or hasattr(side, "frame_marker")):
                frame.append(k)
            else:
                generic.append(k)
        # frame markers: r = R + A(p) (y0 + Phi q[e])
        y0, Phi, e_local, starts, is_point = [], [], [], [], []
        for k in frame:
            side, start, marker, vector = self.spec[k]
            if isinstance(side, Ground):
                y, cols, ph = np.asarray(marker, float), np.zeros(0, int), np.zeros((3, 0))
            elif vector:
                y, cols, ph = np.asarray(marker, float), np.zeros(0, int), np.zeros((3, 0))
            else:
                y, cols, ph = side.frame_marker(marker)
            y0.append(y)
            e_local.append(np.asarray(cols, int))
            Phi.append(np.asarray(ph, float))
            starts.append(start)
            is_point.append(not vector)
        E = max((len(c) for c in e_local), default=0)
        W = max([7 + E if frame else 0] + [self.spec[k][0].n_q for k in generic])
        self.W = max(W, 1)
        self.cols = np.full((k_all, self.W), n_q, dtype=np.int64)       # n_q: dropped
        self.frame = np.array(frame, dtype=np.int64)
        self.generic = generic
        if frame:
            nf = len(frame)
            base = n_q + np.array(_GROUND_R + _GROUND_P)                  # ground: constant tail
            R_idx = np.empty((nf, 3), np.int64)
            p_idx = np.empty((nf, 4), np.int64)
            e_idx = np.full((nf, E), n_q + _ZERO, np.int64)
            self.Phi = np.zeros((nf, 3, E))
            for i, k in enumerate(frame):
                s = starts[i]
                if s is None:
                    R_idx[i], p_idx[i] = base[:3], base[3:]
                else:
                    R_idx[i] = s + np.arange(3) if is_point[i] else base[:3]
                    p_idx[i] = s + 3 + np.arange(4)
                    e_idx[i, :len(e_local[i])] = s + e_local[i]
                    self.Phi[i, :, :len(e_local[i])] = Phi[i]
                    self.cols[k, :7] = np.concatenate([s + np.arange(3), s + 3 + np.arange(4)])
                    self.cols[k, 7:7 + len(e_local[i])] = s + e_local[i]
            self.R_idx, self.p_idx, self.e_idx = R_idx, p_idx, e_idx
            # the markers' Euler parameters are those of a few bodies: A(p) once per body (`evaluate_stacked`)
            self.p_bodies, self.p_of = np.unique(p_idx, axis=0, return_inverse=True)
            self.p_of = self.p_of.reshape(-1)
            self.y0 = np.array(y0, float).reshape(nf, 3)
            self.elastic = E > 0
            # dr/dR: I for points, 0 for directions (constant)
            self.J_frame = np.zeros((nf, 3, self.W))
            self.J_frame[np.array(is_point, bool), :, :3] = np.eye(3)
        for k in generic:
            side, start, _, _ = self.spec[k]
            if start is not None:
                self.cols[k, :side.n_q] = start + np.arange(side.n_q)

    def stackable(self) -> bool:
        """True if every marker is a frame marker (or the ground's): `evaluate_stacked` takes them."""
        return not self.generic

    def evaluate_stacked(self, QE, jacobian: bool = True, which=None):
        """(r (n_t, k, dim), J (n_t, k, dim, W) or None without ``jacobian``) at n_t stacked coordinates
        QE (n_t, n_q + len(TAIL)) (`JointBatch.extend` row by row): the frame markers' formulas of the
        module docstring with a leading axis of outputs, A(p) once per body and output.  ``which``: the
        indices of the k markers wanted, in that order (default: all of them; the drivers' C_t needs three
        directions per driver, `JointBatch.time_derivative_history`).  Markers on other bodies are evaluated
        one configuration at a time (their bodies' methods), so they are not stacked: RuntimeError
        (`stackable`)."""
        if not self.stackable():
            raise RuntimeError("_Markers.evaluate_stacked: markers on bodies without frame markers are evaluated "
                               "one configuration at a time; check `stackable()` first")
        n_t = len(QE)
        if which is None:
            k, bodies, of = slice(None), self.p_bodies, self.p_of
        else:                                                           # A(p) of the wanted markers' bodies only
            k = np.asarray(which, dtype=np.int64)
            used, of = np.unique(self.p_of[k], return_inverse=True)
            bodies = self.p_bodies[used]
        A = ep_to_matrix(QE[:, bodies])[:, of.reshape(-1)]              # (n_t, k, 3, 3)
        y0, Phi = self.y0[k], self.Phi[k]
        y = np.broadcast_to(y0, (n_t,) + y0.shape)
        if self.elastic:
            y = y + (Phi @ QE[:, self.e_idx[k]][..., None])[..., 0]
        r = QE[:, self.R_idx[k]] + (A @ y[..., None])[..., 0]
        if not jacobian:
            return r, None
        P = QE[:, self.p_idx[k]]                                        # (n_t, k, 4)
        J = np.repeat(self.J_frame[k][None], n_t, axis=0)
        J[..., 3:7] = ep_vector_jacobian(P, y)
        if self.elastic:
            J[..., 7:7 + Phi.shape[2]] = A @ Phi
        return r, J

    def evaluate(self, qe, ve, order: int):
        """(r (k, dim), J (k, dim, W) or None, r' (k, dim) or None, beta (k, dim) or None)."""
        k_all, dim, W = len(self.spec), self.dim, self.W
        f = self.frame
        only_frame = not self.generic
        J = rd = beta = None
        if only_frame:
            r = None
        else:
            r = np.empty((k_all, dim))
            J = np.empty((k_all, dim, W)) if order >= 1 else None
        if len(f):
            P = qe[self.p_idx]
            A = ep_to_matrix(P)
            y = self.y0
            if self.elastic:
                y = y + (self.Phi @ qe[self.e_idx][:, :, None])[:, :, 0]
            rf = qe[self.R_idx] + (A @ y[:, :, None])[:, :, 0]
            if order >= 1:
                Jf = self.J_frame.copy()
                Jf[:, :, 3:7] = ep_vector_jacobian(P, y)
                if self.elastic:
                    Jf[:, :, 7:7 + self.Phi.shape[2]] = A @ self.Phi
            if only_frame:
                r, J = rf, (Jf if order >= 1 else None)
            else:
                r[f] = rf
                if order >= 1:
                    J[f] = Jf
        for k in self.generic:
            side, start, marker, vector = self.spec[k]
            qb = EMPTY if start is None else qe[start:start + side.n_q]
            m = np.asarray(marker, float) if vector else marker
            r[k] = side.vector(qb, m) if vector else side.point(qb, m)
            if order >= 1:
                J[k] = 0.0
                Jk = side.vector_jacobian(qb, m) if vector else side.point_jacobian(qb, m)
                J[k, :, :Jk.shape[1]] = Jk
        if order >= 2:
            rd = np.einsum("kaw,kw->ka", J, ve[self.cols])
            beta = np.empty((k_all, dim))
            if len(f):
                Pd = ve[self.p_idx]
                bf = 2.0 * (ep_to_matrix(Pd) @ y[:, :, None])[:, :, 0]
                if self.elastic:
                    u = (self.Phi @ ve[self.e_idx][:, :, None])[:, :, 0]
                    bf += 2.0 * (ep_vector_jacobian(P, u) @ Pd[:, :, None])[:, :, 0]
                beta[f] = bf
            for k in self.generic:
                side, start, marker, vector = self.spec[k]
                qb = EMPTY if start is None else qe[start:start + side.n_q]
                vb = EMPTY if start is None else ve[start:start + side.n_q]
                beta[k] = (side.vector_bias(qb, vb, np.asarray(marker, float)) if vector
                           else side.point_bias(qb, vb, marker))
        return r, J, rd, beta


class JointBatch:
    """C, C_q, C_t and gamma of many joints from stacked markers (module docstring).

    Parameters
    ----------
    joints : sequence of Joint
        Joints evaluated by their primitives (`evaluated_by_batch`).
    columns : sequence of (int or None, int or None)
        First column of body_i and body_j of each joint in q (None: the ground).
    rows : sequence of int
        First row of each joint in C.
    n_q, n_c : int
        Sizes of q and C of the whole system.
    dim : int
        Dimension of the bodies (2 or 3).
    reaction_points : bool
        Also register each joint's points s_i, s_j as point markers (its reaction points; a joint of
        direction rows alone has none otherwise), their indices in ``reaction_markers`` [[i, j] per
        joint], so that one `_Markers.evaluate_stacked` gives the rows' markers and the reactions'
        (`flexmbs.constraints.reaction_blocks.ReactionBlocks`).
    """

    def __init__(self, joints, columns, rows, n_q: int, n_c: int, dim: int, reaction_points: bool = False):
        self.n_q, self.n_c, self.dim = n_q, n_c, dim
        mk = _Markers(dim, n_q)
        point, dot1, dot2, dist, angle, screw = [], [], [], [], [], []
        self.reaction_markers = []
        for jnt, cols, r0 in zip(joints, columns, rows):
            sides = jnt.sides
            kinds = {row[0] for row in jnt.primitive_rows}
            if kinds & {"point", "dot2", "dist", "screw"} or reaction_points:
                pi = mk.add(sides[0], cols[0], jnt.s[0], False)
                pj = mk.add(sides[1], cols[1], jnt.s[1], False)
                if reaction_points:
                    self.reaction_markers.append([pi, pj])

            def vec(k, c):
                u = jnt.R[k][:, c]
                return mk.add(sides[k], cols[k], tuple(u.tolist()), True)

            r = r0
            for row in jnt.primitive_rows:
                kind = row[0]
                if kind == "point":
                    point.append((np.arange(r, r + dim), pi, pj))
                    r += dim
                    continue
                if kind == "dot1":
                    dot1.append((r, vec(0, row[1]), vec(1, row[2])))
                elif kind == "dot2":
                    dot2.append((r, vec(0, row[1]), pi, pj))
                elif kind == "dist":
                    dist.append((r, pi, pj, jnt.length))
                elif kind == "angle":
                    angle.append((r, vec(0, 0), vec(0, 1), vec(1, 0), jnt))
                elif kind == "screw":
                    screw.append((r, vec(0, 0), vec(0, 1), vec(0, 2), vec(1, 0), pi, pj, jnt.pitch))
                else:
                    raise ValueError(f"joint {jnt.name!r}: unknown row kind {kind!r}")
                r += 1
        mk.build()
        self.markers = mk
        W = mk.W
        cols = mk.cols
        # every row's C_q is sum over (side s, slot m) of G[row, s, m] . J[marker[row, s, m]], laid out
        # in the columns of side s; rows in kind order: point, dot1, dot2, dist, angle, screw.  Two slots
        # per side, four when there are screw rows (the unused ones: marker 0 with G = 0)
        self.point = self.dot1 = self.dot2 = self.dist = self.angle = self.screw = None
        n_slots = 4 if screw else 2
        slots, layout_i, layout_j, row_ids = [], [], [], []
        offset = 0

        def take(kind_rows, mi, mj, li, lj):
            nonlocal offset
            rr = np.asarray(kind_rows, np.int64).reshape(-1)
            both = np.zeros((len(rr), 2, n_slots), np.int64)
            both[:, 0, :mi.shape[1]], both[:, 1, :mj.shape[1]] = mi, mj
            slots.append(both)                                        # (m, 2, n_slots)
            layout_i.append(cols[li])
            layout_j.append(cols[lj])
            row_ids.append(rr)
            sl = slice(offset, offset + len(rr))
            offset += len(rr)
            return rr, sl

        if point:
            rr = np.array([p[0] for p in point])                       # (m, dim)
            pi = np.array([p[1] for p in point])
            pj = np.array([p[2] for p in point])
            PI, PJ = np.repeat(pi, dim), np.repeat(pj, dim)
            rows_, sl = take(rr, np.stack([PI, PI], 1), np.stack([PJ, PJ], 1), PI, PJ)
            self.point = (rr, pi, pj, sl)
        if dot1:
            rr, va, vb = (np.array(x) for x in zip(*dot1))
            _, sl = take(rr, np.stack([va, va], 1), np.stack([vb, vb], 1), va, vb)
            self.dot1 = (rr, va, vb, sl)
        if dot2:
            rr, va, pi, pj = (np.array(x) for x in zip(*dot2))
            _, sl = take(rr, np.stack([va, pi], 1), np.stack([pj, pj], 1), pi, pj)
            self.dot2 = (rr, va, pi, pj, sl)
        if dist:
            rr, pi, pj, L = (np.array(x) for x in zip(*dist))
            _, sl = take(rr, np.stack([pi, pi], 1), np.stack([pj, pj], 1), pi, pj)
            self.dist = (rr, pi, pj, L.astype(float), sl)
        if angle:
            rr = np.array([x[0] for x in angle])
            vx, vy, vb = (np.array([x[i] for x in angle]) for i in (1, 2, 3))
            _, sl = take(rr, np.stack([vy, vx], 1), np.stack([vb, vb], 1), vx, vb)
            self.angle = (rr, vx, vy, vb, [x[4] for x in angle], sl)
        if screw:
            rr, vx, vy, vz, vb, pi, pj, pitch = (np.array(x) for x in zip(*screw))
            _, sl = take(rr, np.stack([vy, vx, vz, pi], 1), np.stack([vb, pj], 1), pi, pj)
            self.screw = (rr, vx, vy, vz, vb, pi, pj, pitch.astype(float), sl)
        n = offset
        self.n_rows = n
        self.W = W
        if n:
            self.slots = np.concatenate(slots)                              # (n, 2, n_slots) marker indices
            self.rows = np.concatenate(row_ids)
            c = np.stack([np.concatenate(layout_i), np.concatenate(layout_j)], axis=1)   # (n, 2, W)
            trash = n_c * n_q                                               # flat index of dropped entries
            self.flat = np.where(c >= n_q, trash, self.rows[:, None, None] * n_q + c).reshape(-1)
        else:
            self.slots = np.zeros((0, 2, n_slots), np.int64)
            self.rows = self.flat = np.zeros(0, np.int64)
        self.n_slots = n_slots
        self.G = np.zeros((n, 2, n_slots, dim))                             # coefficients of the slots
        if self.point is not None:                                          # constant: +-e_c
            sl = self.point[3]
            E = np.tile(np.eye(dim), (len(self.point[1]), 1))
            self.G[sl, 0, 0] = E
            self.G[sl, 1, 0] = -E

    # -- evaluation -----------------------------------------------------------------------------
    @staticmethod
    def extend(q):
        """Coordinates q with the ground's constant tail appended."""
        return np.concatenate((q, TAIL))

    @staticmethod
    def extend_velocity(v):
        """Velocities v with the ground's (zero) tail appended."""
        return np.concatenate((v, ZERO_TAIL))

    def _laws(self, t):
        """cos f, sin f, f', f'' of the angle drivers at t, (m,) each."""
        drivers = self.angle[4]
        f = np.array([law_values(d.law, t, d.name) for d in drivers]).reshape(len(drivers), 3)
        return np.cos(f[:, 0]), np.sin(f[:, 0]), f[:, 1], f[:, 2]

    def _law_history(self, t):
        """cos f, sin f, f', f'' of the angle drivers at the times t (n_t,), (n_t, m) each: each law
        once for all the times (`flexmbs.constraints.base.law_history`)."""
        f = np.stack([law_history(d.law, t, d.name) for d in self.angle[4]], axis=1)     # (n_t, m, 3)
        return np.cos(f[..., 0]), np.sin(f[..., 0]), f[..., 1], f[..., 2]

    def evaluate(self, t, qe, C, Jflat=None):
        """Writes C of the joints' rows into C (n_c,) and, with Jflat (n_c n_q + 1,) zero in the
        joints' rows, their C_q into it (flat, the last entry is scratch)."""
        jac = Jflat is not None
        r, J, _, _ = self.markers.evaluate(qe, None, 1 if jac else 0)
        laws = self._laws(t) if self.angle is not None else None
        if self.point is not None:
            rr, pi, pj, _ = self.point
            C[rr] = r[pi] - r[pj]
        if self.dot1 is not None:
            rr, va, vb, _ = self.dot1
            C[rr] = np.einsum("ka,ka->k", r[va], r[vb])
        if self.dot2 is not None:
            rr, va, pi, pj, _ = self.dot2
            C[rr] = np.einsum("ka,ka->k", r[va], r[pj] - r[pi])
        if self.dist is not None:
            rr, pi, pj, L, _ = self.dist
            d = r[pj] - r[pi]
            C[rr] = (np.einsum("ka,ka->k", d, d) - L * L) / (2.0 * L)
        if self.angle is not None:
            rr, vx, vy, vb, _, _ = self.angle
            c, s = laws[0][:, None], laws[1][:, None]
            C[rr] = np.einsum("ka,ka->k", c * r[vy] - s * r[vx], r[vb])              # (A_i u(t)) . b
        if self.screw is not None:
            rr = self.screw[0]
            kappa, u, _, b = self._screw_frame(r)
            C[rr] = kappa * np.einsum("ka,ka->k", u, b)                               # kappa sin(theta - f)
        if jac and self.n_rows:
            self._coefficients(self.G, r, laws)
            n, dim, W, S = self.n_rows, self.dim, self.W, self.n_slots
            Js = J[self.slots].reshape(2 * n, S * dim, W)                 # (row, side), (slot, component)
            Jflat[self.flat] = (self.G.reshape(2 * n, 1, S * dim) @ Js).reshape(-1)

    def _screw_frame(self, r):
        """(kappa, u, w, b) of the screw rows from the markers r (..., k, dim): kappa = p / (2 pi),
        f = (z_i . (r_j - r_i)) / kappa, u = cos f y_i - sin f x_i, w = du/df = -sin f y_i - cos f x_i
        and b = x_j, each (..., m, dim) but kappa (m, 1) (`flexmbs.constraints.joints.Screw`)."""
        _, vx, vy, vz, vb, pi, pj, pitch, _ = self.screw
        kappa = (pitch / (2.0 * np.pi))[:, None]
        f = np.einsum("...ka,...ka->...k", r[..., vz, :], r[..., pj, :] - r[..., pi, :])[..., None] / kappa
        c, s = np.cos(f), np.sin(f)
        x, y = r[..., vx, :], r[..., vy, :]
        return kappa, c * y - s * x, -s * y - c * x, r[..., vb, :]

    def _coefficients(self, G, r, laws) -> None:
        """Writes into G (..., n, 2, 2, dim) the coefficients of the marker Jacobians in each row's C_q
        (C_q,row = sum over side s and slot m of G[row, s, m] . J[slots[row, s, m]]; the point rows'
        constant +-e_c are set at construction), from the markers r (..., k, dim) and the angle
        drivers' ``laws`` (cos f, sin f, ...) (`_laws`), each (m,) or (..., m): one set of formulas
        for one configuration (`evaluate`) and for stacked outputs (`jacobian_history`)."""
        if self.dot1 is not None:
            _, va, vb, sl = self.dot1
            G[..., sl, 0, 0, :] = r[..., vb, :]
            G[..., sl, 1, 0, :] = r[..., va, :]
        if self.dot2 is not None:
            _, va, pi, pj, sl = self.dot2
            a = r[..., va, :]
            G[..., sl, 0, 0, :] = r[..., pj, :] - r[..., pi, :]
            G[..., sl, 0, 1, :] = -a
            G[..., sl, 1, 0, :] = a
        if self.dist is not None:
            _, pi, pj, L, sl = self.dist
            dL = (r[..., pj, :] - r[..., pi, :]) / L[:, None]
            G[..., sl, 1, 0, :] = dL
            G[..., sl, 0, 0, :] = -dL
        if self.angle is not None:
            _, vx, vy, vb, _, sl = self.angle
            c, s = laws[0][..., None], laws[1][..., None]
            b = r[..., vb, :]
            G[..., sl, 0, 0, :] = c * b
            G[..., sl, 0, 1, :] = -s * b
            G[..., sl, 1, 0, :] = c * r[..., vy, :] - s * r[..., vx, :]        # A_i u(t)
        if self.screw is not None:
            # C = kappa u(f) . b with f = d / kappa, d = z_i . (r_j - r_i):
            # C_q = kappa b^T (cos f V_y - sin f V_x) + kappa u^T V_b + (w . b) (D^T V_z - z^T J_i + z^T J_j)
            _, vx, vy, vz, vb, pi, pj, pitch, sl = self.screw
            kappa, u, w, b = self._screw_frame(r)
            f = np.einsum("...ka,...ka->...k", r[..., vz, :], r[..., pj, :] - r[..., pi, :])[..., None] / kappa
            wb = np.einsum("...ka,...ka->...k", w, b)[..., None]
            z = r[..., vz, :]
            G[..., sl, 0, 0, :] = kappa * np.cos(f) * b
            G[..., sl, 0, 1, :] = -kappa * np.sin(f) * b
            G[..., sl, 0, 2, :] = wb * (r[..., pj, :] - r[..., pi, :])
            G[..., sl, 0, 3, :] = -wb * z
            G[..., sl, 1, 0, :] = kappa * u
            G[..., sl, 1, 1, :] = wb * z

    def jacobian_history(self, t, QE, markers=None, pieces=None) -> np.ndarray:
        """C_q of the joints' rows at n_t outputs at once, (n_t, n_c, n_q): t (n_t,), QE (n_t, n_q +
        len(TAIL)) (q row by row with the ground's tail, `extend`): the `row_jacobians` scattered into
        their columns.  ``markers``: (r, J) of ``self.markers.evaluate_stacked(QE)``, and ``pieces``: the
        `row_jacobians`, when the caller has them (the reactions, which also read the markers).  Only for
        joints whose markers are all frame markers (`_Markers.stackable`; RuntimeError otherwise)."""
        n_t = len(QE)
        out = np.zeros((n_t, self.n_c * self.n_q + 1))
        if self.n_rows:
            P = self.row_jacobians(t, QE, markers) if pieces is None else pieces
            out[:, self.flat] = P.reshape(n_t, -1)
        return out[:, :-1].reshape(n_t, self.n_c, self.n_q)

    def row_jacobians(self, t, QE, markers=None) -> np.ndarray:
        """P (n_t, n_rows, 2, W): C_q of each row on the W columns of each side (``flat``'s layout: the
        first 7 of a side on a frame body are its R and p), at n_t outputs: the formulas of `evaluate` with
        a leading axis of outputs (`_coefficients`), the angle drivers' laws for all the outputs at once
        (`_law_history`); t, QE and ``markers`` as in `jacobian_history`."""
        n_t, n, dim, W = len(QE), self.n_rows, self.dim, self.W
        r, J = self.markers.evaluate_stacked(QE) if markers is None else markers
        laws = None
        if self.angle is not None:
            laws = self._law_history(t)                                     # 4 x (n_t, m)
        G = np.repeat(self.G[None], n_t, axis=0)
        self._coefficients(G, r, laws)
        S = self.n_slots
        Js = np.take(J, self.slots, axis=1).reshape(n_t, 2 * n, S * dim, W)     # contiguous: no copy to reshape
        return (G.reshape(n_t, 2 * n, 1, S * dim) @ Js).reshape(n_t, n, 2, W)

    def time_derivative_history(self, t, QE) -> np.ndarray:
        """C_t (n_t, n_c) of the joints' rows at n_t outputs at once (zero but for the angle drivers'
        rows; the other rows zero too): `time_derivative` with a leading axis of outputs, t (n_t,), QE
        (n_t, n_q + len(TAIL)) (`extend` row by row).  Only for joints whose markers are all frame
        markers (`_Markers.stackable`; RuntimeError otherwise)."""
        Ct = np.zeros((len(QE), self.n_c))
        if self.angle is None:
            return Ct
        rr, vx, vy, vb, _, _ = self.angle
        # only the drivers' directions x_i, y_i and b, not every marker of the joints
        r = self.markers.evaluate_stacked(QE, jacobian=False, which=np.concatenate((vx, vy, vb)))[0]
        x_i, y_i, b = np.split(r, 3, axis=1)                                   # (n_t, m, dim) each
        c, s, fd, _ = self._law_history(t)                                     # (n_t, m) each
        c, s = c[..., None], s[..., None]
        Ct[:, rr] = fd * np.einsum("tka,tka->tk", -s * y_i - c * x_i, b)
        return Ct

    def time_derivative(self, t, qe, Ct) -> None:
        """Writes C_t of the joints' rows into Ct (zero but for the angle drivers)."""
        Ct[self.rows] = 0.0
        if self.angle is None:
            return
        rr, vx, vy, vb, _, _ = self.angle
        r = self.markers.evaluate(qe, None, 0)[0]
        c, s, fd, _ = self._laws(t)
        Ct[rr] = fd * np.einsum("ka,ka->k", -s[:, None] * r[vy] - c[:, None] * r[vx], r[vb])

    def gamma(self, t, qe, ve, g) -> None:
        """Writes gamma of the joints' rows into g."""
        r, _, rd, beta = self.markers.evaluate(qe, ve, 2)

        def dot(a, b):
            return np.einsum("ka,ka->k", a, b)

        if self.point is not None:
            rr, pi, pj, _ = self.point
            g[rr] = beta[pj] - beta[pi]
        if self.dot1 is not None:
            rr, va, vb, _ = self.dot1
            g[rr] = -(dot(beta[va], r[vb]) + 2.0 * dot(rd[va], rd[vb]) + dot(r[va], beta[vb]))
        if self.dot2 is not None:
            rr, va, pi, pj, _ = self.dot2
            d, dd = r[pj] - r[pi], rd[pj] - rd[pi]
            g[rr] = -(dot(beta[va], d) + 2.0 * dot(rd[va], dd) + dot(r[va], beta[pj] - beta[pi]))
        if self.dist is not None:
            rr, pi, pj, L, _ = self.dist
            d, dd = r[pj] - r[pi], rd[pj] - rd[pi]
            g[rr] = -(dot(dd, dd) + dot(d, beta[pj] - beta[pi])) / L
        if self.angle is not None:
            rr, vx, vy, vb, _, _ = self.angle
            c, s, fd, fdd = self._laws(t)
            c, s, fd, fdd = c[:, None], s[:, None], fd[:, None], fdd[:, None]
            b, bd, bb = r[vb], rd[vb], beta[vb]
            u = c * r[vy] - s * r[vx]                       # A_i u(t)
            ud = c * rd[vy] - s * rd[vx]                    # its rate through q'
            ub = c * beta[vy] - s * beta[vx]
            w, wd = -s * r[vy] - c * r[vx], -s * rd[vy] - c * rd[vx]     # d(A_i u)/df and its rate
            g[rr] = (-(dot(ub, b) + 2.0 * dot(ud, bd) + dot(u, bb)) - 2.0 * fd[:, 0] * (dot(wd, b) + dot(w, bd))
                     - fdd[:, 0] * dot(w, b) + fd[:, 0] ** 2 * dot(u, b))
        if self.screw is not None:
            # C'' = kappa (u'' . b + 2 u' . b' + u . b''), u'' = cos f y'' - sin f x'' + 2 f' (-sin f y' - cos f x')
            # + f'' w - f'^2 u, f = d / kappa; gamma: minus the terms without q''
            rr, vx, vy, vz, vb, pi, pj, _, _ = self.screw
            kappa, u, w, b = self._screw_frame(r)
            z, zd, zb = r[vz], rd[vz], beta[vz]
            D, Dd, Db = r[pj] - r[pi], rd[pj] - rd[pi], beta[pj] - beta[pi]
            f = dot(z, D)[:, None] / kappa
            c, s = np.cos(f), np.sin(f)
            fd = (dot(zd, D) + dot(z, Dd))[:, None] / kappa
            f_bias = (dot(zb, D) + 2.0 * dot(zd, Dd) + dot(z, Db)) / kappa[:, 0]       # f'' without q''
            wd = -s * rd[vy] - c * rd[vx]                                            # w's rate through q'
            ud = c * rd[vy] - s * rd[vx] + fd * w                                    # u'
            ub = c * beta[vy] - s * beta[vx]
            b, bd, bb = r[vb], rd[vb], beta[vb]
            g[rr] = -kappa[:, 0] * (dot(ub, b) + 2.0 * fd[:, 0] * dot(wd, b) + f_bias * dot(w, b)
                                    - fd[:, 0] ** 2 * dot(u, b) + 2.0 * dot(ud, bd) + dot(u, bb))
