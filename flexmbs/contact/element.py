"""`Contact`: contact with friction among shapes on bodies, a force element of ``System(forces=[...])``.

At a state (q, v) of its bodies (stacked in the order of ``Contact.bodies``):

.. code:: text

    1. place the primitives (`flexmbs.contact.shapes`) by their bodies' frames   (`Carriers`)
    2. broad phase: the pairs of spheres, boxes, capsules whose bounding boxes overlap
       (`flexmbs.contact.broad.overlapping_pairs`), and the spheres below each plane
    3. narrow phase: delta, n, r_a, r_b, R* of each candidate (`flexmbs.contact.narrow`); delta > 0 acts
    4. law: f_n (delta, delta'), F_t (v_t) (`ContactLaw`), with v_rel = v_b(r_b) - v_a(r_a),
       delta' = -n . v_rel, v_t = v_rel - (n . v_rel) n
    5. F = f_n n + F_t on body b at r_b, -F on body a at r_a:  Q = J_b^T F - J_a^T F

every step on arrays over all contacts (no loop over pairs); the works, energies and recorded contacts of
a block of outputs on all its rows at once (`Contact.row_state`: the rows' primitives in one set of
tables, docs/design.md "Contacts, stiffening and held controls over rows").  Into the energy balance:
U = sum k delta^(n+1)/(n+1) (the System's strain energy) and the works' ``damping`` the power
sum (f_n - k delta^n) delta' + mu f_n |v_t|^2 / s >= 0 (`ContactLaw`).  The tangent (implicit
integrators) is the material part: with J = [J_b, -J_a] and phi = v_t / s,

.. code:: text

    K = J^T [df_n/d delta (n - mu phi) n^T] J
    C = J^T [df_n/d delta' (n - mu phi) n^T + mu f_n ((I - n n^T)/s - v_t v_t^T / s^3)] J

(the turning of n and the sliding of the contact points with q are left out: they change the
Newton iteration's rate only).  docs/design.md, "Contact"; docs/multibody.md, "Contact".
"""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from .broad import overlapping_pairs
from .carriers import FRAME, Carriers
from .law import ContactLaw
from .narrow import sphere_box, sphere_capsule, sphere_in_hole, sphere_plane, sphere_sphere, sphere_triangle
from .shapes import FULL, Shape, is_marker

__all__ = ["Contact", "ContactState"]

_SPHERE, _BOX, _CAPSULE, _TRIANGLE = 0, 1, 2, 3
#: the primitive tables of `Contact` (one entry per primitive, repeated per row by `Contact._row_tables`)
_TABLES = ("sph_body", "sph_y0", "sph_cols", "sph_phi", "sph_abs", "sph_r", "sph_role", "box_body", "box_at",
           "box_axes", "box_h", "cap_body", "cap_a", "cap_b", "cap_r", "pla_body", "pla_point", "pla_n", "hol_body",
           "hol_at", "hol_r", "tri_body", "tri_shape", "tri_p")
#: at most this many primitives (rows x primitives of a row) in one evaluation of a block of rows (`power_history`)
ROW_BLOCK = 20000

#: the integrators that cannot take contact, and why (`Contact.refusal`; docs/design.md, "Contact")
REFUSED_METHODS = {
    "AB4": "a multistep method extrapolates the forces of past steps, which straddle the onset of a contact (a "
           "jump or a kink of the force) and it has no error control to shorten its step there",
    "rattle": "RATTLE is symplectic for forces of a potential, -dU/dq; the contact's dashpot and friction "
              "depend on the velocities and dissipate",
}


@dataclass
class ContactState:
    """The active contacts at one state, each array over the contacts (n_c, ...).

    body_a, body_b: body indices (len(bodies): the ground); r_a, r_b: contact points [m]; n: unit
    normal a -> b; delta [m], delta_dot [m/s]; f_n [N], f_elastic = k delta^n [N], F_t (n_c, dim) [N]
    on b; v_t (n_c, dim) [m/s], s [m/s]; k, the stiffness; df_dd, df_dv the law's derivatives; and the
    columns (n_c, 2m) and Jacobian (n_c, dim, 2m) of v_rel over the stacked coordinates."""

    body_a: np.ndarray
    body_b: np.ndarray
    r_a: np.ndarray
    r_b: np.ndarray
    n: np.ndarray
    delta: np.ndarray
    delta_dot: np.ndarray
    k: np.ndarray
    f_n: np.ndarray
    f_elastic: np.ndarray
    df_dd: np.ndarray
    df_dv: np.ndarray
    F_t: np.ndarray
    v_t: np.ndarray
    s: np.ndarray
    cols: np.ndarray
    J: np.ndarray

    @property
    def force(self) -> np.ndarray:
        """F = f_n n + F_t (n_c, dim) [N], on body b (-F on body a)."""
        return self.f_n[:, None] * self.n + self.F_t


def _shapes(shapes) -> list:
    if isinstance(shapes, Shape):
        shapes = [shapes]
    if isinstance(shapes, (str, bytes)) or not hasattr(shapes, "__iter__"):
        raise ValueError(f"Contact: `shapes` must be a sequence of contact shapes (flexmbs.contact: Sphere, Plane, "
                         f"Box, Capsule, Points, Surface), got {shapes!r}")
    shapes = list(shapes)
    for k, s in enumerate(shapes):
        if not isinstance(s, Shape):
            raise ValueError(f"Contact: `shapes` entry {k} must be a contact shape (flexmbs.contact: Sphere, Plane, "
                             f"Box, Capsule, Points, Surface), got {s!r} ({type(s).__name__})")
    if len(shapes) < 2:
        raise ValueError(f"Contact: `shapes` must hold at least two shapes (contact is between two), got {len(shapes)}")
    return shapes


class Contact:
    """Contact with friction among ``shapes``, with the law ``law``: a force element of ``System(forces=[...])``.

    Every pair of primitives on different bodies (or a body and the ground) may touch (module
    docstring); the shapes of one body never touch each other.

    Parameters
    ----------
    shapes : sequence of Shape
        `Sphere`, `Plane`, `Box`, `Capsule`, `Points`, `Surface`, each on a body or the ground (None).
    law : ContactLaw
    name : str
        Unique among the System's force elements; results name the contact forces by it.
    slots : int
        How many contacts the results keep at each output (the ones with the largest normal force;
        `record`).
    """

    smooth = False                  # a contact's force begins with a kink or delta^n, n < 2 (`ForceElement.smooth`)

    def __init__(self, shapes, law, name: str = "contact", slots: int = 32):
        self.shapes = _shapes(shapes)
        if not isinstance(law, ContactLaw):
            raise ValueError(f"Contact: `law` must be a flexmbs.contact.ContactLaw, got {law!r} ({type(law).__name__})")
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"Contact: `name` must be a non-empty string without '/', got {name!r}")
        if isinstance(slots, bool) or not isinstance(slots, (int, np.integer)) or slots < 1:
            raise ValueError(f"Contact {name!r}: `slots` must be an integer >= 1, got {slots!r}")
        self.name, self.law, self.slots = name, law, int(slots)
        bodies = list({id(s.body): s.body for s in self.shapes if s.body is not None}.values())
        if not bodies:
            raise ValueError(f"Contact {name!r}: every shape is on the ground; put at least one on a body")
        dims = {b.dim for b in bodies} | {s.dim for s in self.shapes if s.body is None and s.dim}
        if len(dims) != 1:
            raise ValueError(f"Contact {name!r}: the shapes and bodies must have one dimension, got {sorted(dims)}")
        self.dim = dims.pop()
        self.bodies = tuple(bodies)
        self.carriers = Carriers(bodies, self.dim)
        index = {id(b): k for k, b in enumerate(bodies)}
        self._tables([index.get(id(s.body), len(bodies)) for s in self.shapes])
        self._check_law()

    # -- construction ----------------------------------------------------------------------------
    def _tables(self, owner) -> None:
        """The primitive tables (body index, body-frame data) of all shapes."""
        d, B = self.dim, len(self.bodies)
        sph, box, cap, pla, hol, tri = [], [], [], [], [], []
        for k, (s, b) in enumerate(zip(self.shapes, owner)):
            if s.dim and s.dim != d:
                raise ValueError(f"Contact {self.name!r}: {s!r} is {s.dim}D, the contact {d}D")
            sph += [(b,) + x for x in s.spheres()]
            box += [(b,) + x for x in s.boxes()]
            cap += [(b,) + x for x in s.capsules()]
            pla += [(b,) + x for x in s.planes()]
            hol += [(b,) + x for x in s.holes()]
            tri += [(b, k) + x for x in s.triangles_of()]
        markers = [self._marker(b, m) for b, m, _, _ in sph]
        w = max([len(c) for _, c, _ in markers], default=0)
        self.sph_body = np.array([x[0] for x in sph], dtype=int)
        self.sph_y0 = np.array([y for y, _, _ in markers]).reshape(len(sph), d)
        self.sph_cols = np.zeros((len(sph), w), dtype=int)
        self.sph_phi = np.zeros((len(sph), d, w))
        for k, (_, c, P) in enumerate(markers):          # construction only: the nodes' columns and Phi
            self.sph_cols[k, :len(c)], self.sph_phi[k, :, :len(c)] = c, P
        start = self.carriers.start[np.minimum(self.sph_body, B - 1)][:, None]
        self.sph_abs = np.where(self.sph_body[:, None] < B, start + self.sph_cols, 0)     # the ground's: unused
        self.sph_r = np.array([x[2] for x in sph], dtype=float)
        self.sph_role = np.array([x[3] for x in sph], dtype=int)
        self.box_body = np.array([x[0] for x in box], dtype=int)
        self.box_at = np.array([x[1] for x in box]).reshape(len(box), d)
        self.box_axes = np.array([x[2] for x in box]).reshape(len(box), d, d)
        self.box_h = np.array([x[3] for x in box]).reshape(len(box), d)
        self.cap_body = np.array([x[0] for x in cap], dtype=int)
        self.cap_a = np.array([x[1] for x in cap]).reshape(len(cap), d)
        self.cap_b = np.array([x[2] for x in cap]).reshape(len(cap), d)
        self.cap_r = np.array([x[3] for x in cap], dtype=float)
        self.pla_body = np.array([x[0] for x in pla], dtype=int)
        self.pla_point = np.array([x[1] for x in pla]).reshape(len(pla), d)
        self.pla_n = np.array([x[2] for x in pla]).reshape(len(pla), d)
        self.hol_body = np.array([x[0] for x in hol], dtype=int)
        self.hol_at = np.array([x[1] for x in hol]).reshape(len(hol), d)
        self.hol_r = np.array([x[2] for x in hol], dtype=float)
        self.tri_body = np.array([x[0] for x in tri], dtype=int)
        self.tri_shape = np.array([x[1] for x in tri], dtype=int)
        self.tri_p = np.array([x[2:] for x in tri], dtype=float).reshape(len(tri), 3, d)
        self._prim_body = np.concatenate([self.sph_body, self.box_body, self.cap_body, self.tri_body])
        self._hole_pairs = (self.hol_body[:, None] != self.sph_body[None, :]) & (self.sph_role == FULL)[None, :]
        self._plane_pairs = self.pla_body[:, None] != self.sph_body[None, :]        # (n_planes, n_spheres)

    def _marker(self, b, m):
        """(y0 (dim,), node columns (w,), Phi (dim, w)) of a sphere's centre marker on body index b."""
        d = self.dim
        if not is_marker(m):
            return np.asarray(m, dtype=float), np.zeros(0, dtype=int), np.zeros((d, 0))
        body = self.bodies[b] if b < len(self.bodies) else None
        if body is None or self.carriers.kind[b] != FRAME:
            raise ValueError(f"Contact {self.name!r}: the marker {m!r} needs a flexible body, got "
                             f"{'the ground' if body is None else type(body).__name__}")
        try:
            y0, cols, Phi = body.frame_marker(m)
        except (TypeError, ValueError, IndexError) as err:
            raise ValueError(f"Contact {self.name!r}: body {body.name!r} does not take the marker {m!r} "
                             f"({err})") from None
        return np.asarray(y0, dtype=float), np.asarray(cols, dtype=int), np.asarray(Phi, dtype=float)

    def _check_law(self) -> None:
        """Hertz stiffness needs radii; the scaled dashpot the bodies' masses."""
        law = self.law
        if law.stiffness is None and (np.any(self.sph_r == 0.0)):
            raise ValueError(f"Contact {self.name!r}: Hertz's stiffness (`youngs_modulus`) needs radii, but the "
                             "corners of a Box and Points or a Surface of radius 0 have none; give the ContactLaw a "
                             "`stiffness`")
        if law.damping == "scaled" and law.effective_mass is None and law.restitution < 1.0:
            bad = [b.name for b, m in zip(self.bodies, self.carriers.mass) if not (np.isfinite(m) and m > 0)]
            if bad:
                raise ValueError(f"Contact {self.name!r}: the 'scaled' dashpot needs each pair's effective mass, but "
                                 f"body {bad[0]!r} has no `mass`; give the ContactLaw an `effective_mass` [kg]")

    # -- evaluation ------------------------------------------------------------------------------
    def _row_tables(self, n_t: int):
        """The primitive tables of a block of n_t rows (the contact itself for one row): each table repeated
        per row, the body indices k (B+1) + b of row k (`Carriers.body_of`) and the spheres' node columns
        k n_q + c into the rows' coordinates stacked, so that the kernels of one state evaluate all rows at
        once, each row's primitives meeting only their own (`overlapping_pairs` by row)."""
        if n_t == 1:
            return self
        B1, n_q = len(self.bodies) + 1, self.carriers.n_q
        row = np.arange(n_t)

        def tiled(x):
            return np.tile(x, (n_t,) + (1,) * (x.ndim - 1))

        def bodies(b):
            return (row[:, None] * B1 + b[None, :]).ravel()
        tb = SimpleNamespace(**{key: tiled(getattr(self, key)) for key in _TABLES})
        for key in ("sph_body", "box_body", "cap_body", "pla_body", "hol_body", "tri_body"):
            setattr(tb, key, bodies(getattr(self, key)))
        tb._prim_body = np.concatenate([tb.sph_body, tb.box_body, tb.cap_body, tb.tri_body])    # kind by kind
        tb.sph_abs = (row[:, None, None] * n_q + self.sph_abs[None]).reshape(n_t * len(self.sph_abs), -1)
        tb._hole_pairs, tb._plane_pairs = self._hole_pairs, self._plane_pairs       # within a row
        return tb

    def _placed(self, q, frames, tb):
        """Global primitives: sphere centres, box centres and axes, capsule ends, plane points and normals,
        hole centres, triangle vertices (a kind the shapes do not have: empty arrays, not evaluated), of the
        tables ``tb`` (`_row_tables`)."""
        car, d = self.carriers, self.dim
        y = tb.sph_y0
        if tb.sph_cols.shape[1]:
            y = y + np.einsum("kiw,kw->ki", tb.sph_phi, q[tb.sph_abs])
        c = car.points(frames, tb.sph_body, y)
        A = frames[1]
        none = np.zeros((0, d))
        boxes = (car.points(frames, tb.box_body, tb.box_at), A[tb.box_body] @ tb.box_axes) \
            if len(tb.box_body) else (none, np.zeros((0, d, d)))
        caps = (car.points(frames, tb.cap_body, tb.cap_a), car.points(frames, tb.cap_body, tb.cap_b)) \
            if len(tb.cap_body) else (none, none)
        planes = (car.points(frames, tb.pla_body, tb.pla_point),
                  np.einsum("kij,kj->ki", A[tb.pla_body], tb.pla_n)) if len(tb.pla_body) else (none, none)
        holes = car.points(frames, tb.hol_body, tb.hol_at) if len(tb.hol_body) else none
        tris = car.points(frames, np.repeat(tb.tri_body, 3), tb.tri_p.reshape(-1, d)).reshape(
            tb.tri_p.shape) if len(tb.tri_body) else np.zeros((0, 3, d))
        return c, boxes, caps, planes, holes, tris

    def _candidates(self, c, boxes, caps, tris, tb):
        """Pairs of overlapping bounding boxes that a kernel evaluates: (sphere, sphere), (sphere, box),
        (sphere, capsule), (sphere, triangle), each as two index arrays into the primitive tables ``tb``
        (of a block of rows: pairs within a row only)."""
        ns, nb, nc, nt = len(c), len(boxes[0]), len(caps[0]), len(tris)
        empty = (np.zeros(0, dtype=int),) * 2
        if ns + nb + nc + nt < 2 or ns == 0:
            return empty, empty, empty, empty
        ext_box = np.einsum("kij,kj->ki", np.abs(boxes[1]), tb.box_h)
        lo = np.concatenate([c - tb.sph_r[:, None], boxes[0] - ext_box, np.minimum(*caps) - tb.cap_r[:, None],
                             tris.min(axis=1)])
        hi = np.concatenate([c + tb.sph_r[:, None], boxes[0] + ext_box, np.maximum(*caps) + tb.cap_r[:, None],
                             tris.max(axis=1)])
        body, row = self.carriers.body_of(tb._prim_body)
        i, j = overlapping_pairs(lo, hi, None if tb is self else row)   # i < j: a sphere first (spheres come first)
        ground = len(self.bodies)
        keep = (i < ns) & (body[i] != body[j]) & ((body[i] != ground) | (body[j] != ground))
        i, j = i[keep], j[keep]
        full_i = tb.sph_role[i] == FULL
        ss = (j < ns)
        ss[ss] &= full_i[ss] & (tb.sph_role[j[ss]] == FULL)
        sb = (j >= ns) & (j < ns + nb)
        sc = (j >= ns + nb) & (j < ns + nb + nc) & full_i
        st = (j >= ns + nb + nc) & full_i
        return ((i[ss], j[ss]), (i[sb], j[sb] - ns), (i[sc], j[sc] - ns - nb), (i[st], j[st] - ns - nb - nc))

    def _deepest_triangles(self, delta, s, t, tb) -> np.ndarray:
        """The pairs (sphere s, triangle t) in contact to keep: for each sphere and surface, the one of
        largest delta (a sphere spanning an edge touches its surface once)."""
        on = np.flatnonzero(delta > 0.0)
        key = s[on] * (len(self.shapes) + 1) + tb.tri_shape[t[on]]
        order = np.lexsort((-delta[on], key))
        first = np.ones(len(order), dtype=bool)
        first[1:] = key[order][1:] != key[order][:-1]
        keep = np.zeros(len(delta), dtype=bool)
        keep[on[order[first]]] = True
        return keep

    def _geometry(self, q, frames, tb, n_t: int = 1):
        """(body_a, body_b, delta, n, r_a, r_b, R*, sphere index of side a (-1: none), of side b) of the
        pairs in contact (delta > 0), of the tables ``tb`` of n_t rows (`_row_tables`)."""
        c, boxes, caps, planes, holes, tris = self._placed(q, frames, tb)
        (si, sj), (bi, bj), (ci, cj), (ti, tj) = self._candidates(c, boxes, caps, tris, tb)
        r = tb.sph_r
        n_s, d = len(self.sph_body), self.dim
        kernels = []
        # spheres below planes: every (plane, sphere) of different bodies of a row (planes are few)
        o, nrm = planes
        p = s = ()
        if len(o):
            n_p = len(self.pla_body)
            height = (nrm.reshape(n_t, n_p, d) @ c.reshape(n_t, n_s, d).swapaxes(1, 2)
                      - np.einsum("pi,pi->p", nrm, o).reshape(n_t, n_p, 1))          # (n_t, n_planes, n_spheres)
            k, p, s = np.nonzero((height < r.reshape(n_t, 1, n_s)) & self._plane_pairs)
            p, s = k * n_p + p, k * n_s + s
        # spheres reaching the wall of a hole: every (hole, sphere) of different bodies of a row (holes are few)
        hh = hs = ()
        if len(holes):
            n_h = len(self.hol_body)
            gap = c.reshape(n_t, 1, n_s, d) - holes.reshape(n_t, n_h, 1, d)
            reach = np.linalg.norm(gap, axis=3) + r.reshape(n_t, 1, n_s) > tb.hol_r.reshape(n_t, n_h, 1)
            k, hh, hs = np.nonzero(reach & self._hole_pairs)
            hh, hs = k * n_h + hh, k * n_s + hs
        if len(hh):
            kernels.append((sphere_in_hole(c[hs], r[hs], holes[hh], tb.hol_r[hh]), tb.hol_body[hh],
                            tb.sph_body[hs], None, hs))
        if len(p):
            kernels.append((sphere_plane(c[s], r[s], o[p], nrm[p]), tb.pla_body[p], tb.sph_body[s], None, s))
        if len(si):
            kernels.append((sphere_sphere(c[si], r[si], c[sj], r[sj]), tb.sph_body[si], tb.sph_body[sj], si, sj))
        if len(bi):
            kernels.append((sphere_box(c[bi], r[bi], boxes[0][bj], boxes[1][bj], tb.box_h[bj]), tb.box_body[bj],
                            tb.sph_body[bi], None, bi))
        if len(ci):
            kernels.append((sphere_capsule(c[ci], r[ci], caps[0][cj], caps[1][cj], tb.cap_r[cj]), tb.cap_body[cj],
                            tb.sph_body[ci], None, ci))
        if len(ti):
            res = sphere_triangle(c[ti], r[ti], tris[tj, 0], tris[tj, 1], tris[tj, 2])
            keep = self._deepest_triangles(res[0], ti, tj, tb)
            kernels.append((tuple(x[keep] for x in res), tb.tri_body[tj[keep]], tb.sph_body[ti[keep]], None,
                            ti[keep]))
        parts = []
        for (delta, n, ra, rb, rs), ba, bb, sa, sb in kernels:
            on = delta > 0.0
            sa = -np.ones(len(delta), dtype=int) if sa is None else sa
            parts.append((ba[on], bb[on], delta[on], n[on], ra[on], rb[on], rs[on], sa[on], sb[on]))
        if not parts:
            d = self.dim
            return (np.zeros(0, dtype=int),) * 2 + (np.zeros(0), np.zeros((0, d)), np.zeros((0, d)),
                                                     np.zeros((0, d)), np.zeros(0)) + (np.zeros(0, dtype=int),) * 2
        return tuple(np.concatenate([x[k] for x in parts]) for k in range(9))

    def _side_jacobians(self, frames, body, r, sphere, tb):
        """(cols, J) of the material points r of bodies ``body``, the nodes' deformation for spheres
        on flexible nodes (``sphere`` >= 0)."""
        w = tb.sph_cols.shape[1]
        if not w:
            return self.carriers.jacobians(frames, body, r)
        has = sphere >= 0
        s = np.where(has, sphere, 0)
        cols = np.where(has[:, None], tb.sph_cols[s], 0)
        phi = np.where(has[:, None, None], tb.sph_phi[s], 0.0)
        return self.carriers.jacobians(frames, body, r, cols, phi)

    def state(self, q, v) -> ContactState:
        """The active contacts at the stacked coordinates q and velocities v (module docstring): `row_state`
        of one row."""
        return self.row_state(np.asarray(q, dtype=float)[None], np.asarray(v, dtype=float)[None])

    def row_state(self, Q, V) -> ContactState:
        """The active contacts of all the rows of the stacked coordinates Q and velocities V (n_t, n_q of the
        stack) at once, as `state` gives them row by row: the rows' primitives in one set of tables
        (`_row_tables`), their body indices k (B+1) + b naming the row k (`Carriers.body_of`; b = B the
        ground) and ``cols`` indexing the rows' coordinates stacked, Q.ravel()."""
        q, v = np.asarray(Q, dtype=float).ravel(), np.asarray(V, dtype=float).ravel()
        n_t = len(Q)
        tb = self._row_tables(n_t)
        frames = self.carriers.frames(Q)
        ba, bb, delta, n, ra, rb, radius, sa, sb = self._geometry(q, frames, tb, n_t)
        cols_a, Ja = self._side_jacobians(frames, ba, ra, sa, tb)
        cols_b, Jb = self._side_jacobians(frames, bb, rb, sb, tb)
        cols = np.concatenate([cols_b, cols_a], axis=1)
        J = np.concatenate([Jb, -Ja], axis=2)
        v_rel = np.einsum("kdm,km->kd", J, v[cols])
        vn = np.einsum("kd,kd->k", n, v_rel)
        v_t = v_rel - vn[:, None] * n
        law = self.law
        k = law.pair_stiffness(radius)
        if law.effective_mass is not None:
            m_eff = np.full(len(delta), law.effective_mass)
        else:
            m = self.carriers.mass
            m_eff = 1.0 / (1.0 / m[self.carriers.body_of(ba)[0]] + 1.0 / m[self.carriers.body_of(bb)[0]])
        f_n, df_dd, df_dv, f_el = law.normal(delta, -vn, k, m_eff)
        F_t, s = law.tangential(f_n, v_t)
        return ContactState(ba, bb, ra, rb, n, delta, -vn, k, f_n, f_el, df_dd, df_dv, F_t, v_t, s, cols, J)

    def _stack(self, parts) -> np.ndarray:
        return np.concatenate([np.asarray(x, dtype=float) for x in parts]) if len(parts) else np.zeros(0)

    # -- the force-element protocol of System (flexmbs.forces) -----------------------------------
    def stacked_forces(self, q, v) -> np.ndarray:
        """Q (n_q of the stack,) = sum J^T F at the stacked q, v: `stacked_force_history` of one row."""
        return self.stacked_force_history(np.asarray(q, dtype=float)[None], np.asarray(v, dtype=float)[None])[0]

    def stacked_force_history(self, Q, V) -> np.ndarray:
        """(n_t, n_q of the stack): the generalized contact forces of every row of the stacked Q, V (n_t, n_q
        of the stack) at once, in blocks of rows (`_row_blocks`; one row, a step's forces, is one block),

        .. code:: text

            Q_c[k] = sum over the contacts c of row k of J_c^T F_c      (J_c = d v_rel / d q', `row_state`)

        scattered by the contacts' ``cols``, which index the block's rows stacked (Q.ravel())."""
        Q, V = np.asarray(Q, dtype=float), np.asarray(V, dtype=float)
        if len(Q) == 1:
            return self._scattered_forces(self.row_state(Q, V), 1)
        out = np.empty((len(Q), self.carriers.n_q))
        for rows in self._row_blocks(len(Q)):
            out[rows] = self._scattered_forces(self.row_state(Q[rows], V[rows]), rows.stop - rows.start)
        return out

    def _scattered_forces(self, st: ContactState, n_t: int) -> np.ndarray:
        """(n_t, n_q of the stack): sum J^T F of the contacts of ``st`` (of n_t rows) added at their ``cols``."""
        out = np.zeros(n_t * self.carriers.n_q)
        np.add.at(out, st.cols, np.einsum("kdm,kd->km", st.J, st.force))
        return out.reshape(n_t, -1)

    def _split(self, x) -> list:
        s = self.carriers.start
        return [x[s[k]:s[k + 1]] for k in range(len(self.bodies))]

    def generalized_forces(self, t, qs, vs) -> list:
        """[Q_b for each of ``bodies``]: the contact forces' generalized forces J^T F."""
        return self._split(self.stacked_forces(self._stack(qs), self._stack(vs)))

    def potential(self, qs) -> float:
        """U = sum k delta^(n+1) / (n+1) [J] over the contacts: `potential_history` of one row."""
        return float(self.potential_history([np.asarray(q, dtype=float)[None] for q in qs])[0])

    def powers(self, t, qs, vs) -> dict:
        """{"damping": the dissipated power >= 0 (dashpot and friction), "loads": 0} [W]: `power_history` of
        one row."""
        P = self.power_history(np.array([float(t)]), [np.asarray(q, dtype=float)[None] for q in qs],
                               [np.asarray(v, dtype=float)[None] for v in vs])
        return {key: float(x[0]) for key, x in P.items()}

    # -- all rows at once (the works' integrand and the energies of a block of outputs) ------------
    def _row_blocks(self, n_t: int):
        """Slices of at most `ROW_BLOCK` primitives' worth of rows each (one, for the few primitives of most
        scenes), covering range(n_t)."""
        per = max(1, ROW_BLOCK // max(len(self._prim_body) + len(self.pla_body) + len(self.hol_body), 1))
        return [slice(k, min(k + per, n_t)) for k in range(0, n_t, per)]

    def _per_row(self, Qs, Vs, value) -> np.ndarray:
        """(n_t,): the sum over each row's active contacts of ``value(state)`` (n_c,), the rows of the
        sides' coordinates Qs, Vs ([Q_b for each of ``bodies``], each (n_t, n_q of its body)) evaluated in
        blocks of rows (`row_state`, `_row_blocks`)."""
        Q, V = np.hstack(Qs), np.hstack(Vs)
        out = np.zeros(len(Q))
        for rows in self._row_blocks(len(Q)):
            st = self.row_state(Q[rows], V[rows])
            row = self.carriers.body_of(st.body_b)[1]
            out[rows] = np.bincount(row, weights=value(st), minlength=rows.stop - rows.start)
        return out

    def power_history(self, t, Qs, Vs) -> dict[str, np.ndarray]:
        """{"damping", "loads"}, each (n_t,) [W], at the times t (n_t,) and the rows of Qs, Vs (as `_per_row`),
        all rows at once: the power dissipated by the law (`ContactLaw`), summed over each row's contacts,

        .. code:: text

            P_damping = sum (f_n - k delta^n) delta' + mu f_n |v_t|^2 / s  >= 0      (dashpot, friction)

        with delta' = -n . v_rel and v_t, s of the regularised friction F_t = -mu f_n v_t / s; ``loads`` 0
        (a contact feeds no power: its elastic part is in U)."""
        mu = self.law.friction

        def dissipated(st):
            return (st.f_n - st.f_elastic) * st.delta_dot + mu * st.f_n * np.einsum("kd,kd->k", st.v_t, st.v_t) / st.s
        n_t = len(np.atleast_1d(t))
        return {"damping": self._per_row(Qs, Vs, dissipated), "loads": np.zeros(n_t)}

    def potential_history(self, Qs) -> np.ndarray:
        """U = sum k delta^(n+1) / (n+1) (n_t,) [J] over each row's contacts, at the rows of Qs (as
        `_per_row`), all rows at once."""
        return self._per_row(Qs, [np.zeros_like(Q) for Q in Qs], lambda st: self.law.energy(st.delta, st.k))

    def tangent(self, t, qs, vs, geometric: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(K, C) over the stacked coordinates: the material tangent of the module docstring (the
        same with ``geometric`` True or False: the geometric part is left out)."""
        st = self.state(self._stack(qs), self._stack(vs))
        n_q = self.carriers.n_q
        K, C = np.zeros((n_q, n_q)), np.zeros((n_q, n_q))
        if not len(st.delta):
            return K, C
        mu = self.law.friction
        phi = st.v_t / st.s[:, None]
        a = np.einsum("ki,kj->kij", st.n - mu * phi, st.n)
        P = np.eye(self.dim) - np.einsum("ki,kj->kij", st.n, st.n)
        DK = st.df_dd[:, None, None] * a
        DC = st.df_dv[:, None, None] * a + (mu * st.f_n)[:, None, None] * (
            P / st.s[:, None, None] - np.einsum("ki,kj->kij", st.v_t, st.v_t) / st.s[:, None, None] ** 3)
        idx = (st.cols[:, :, None], st.cols[:, None, :])
        np.add.at(K, idx, np.einsum("kdi,kde,kej->kij", st.J, DK, st.J))
        np.add.at(C, idx, np.einsum("kdi,kde,kej->kij", st.J, DC, st.J))
        return K, C

    @staticmethod
    def refusal(method: str) -> str | None:
        """Why the integrator ``method`` cannot take contact (`REFUSED_METHODS`), or None: `flexmbs.run`
        refuses the run with it.  Suited: the adaptive ones (RK45, DOP853 through impacts; Radau, BDF,
        index3-alpha-adaptive also for contacts that stick), the fixed-step implicit ones with h well
        below the contact time."""
        return REFUSED_METHODS.get(method)

    def record(self, q, v) -> dict:
        """The contacts at one state for the results, ``slots`` of them (the largest normal forces first;
        NaN where fewer are active): ``point`` (slots, 3) midway between r_a and r_b [m], ``normal_force``
        and ``friction_force`` (slots, 3) on body b [N], ``depth`` (slots,) [m], ``bodies`` (slots, 2)
        (indices into ``bodies``, -1 the ground, -2 an empty slot), and ``count``, the number active:
        `record_history` of one row."""
        rows = self.record_history(np.asarray(q, dtype=float)[None], np.asarray(v, dtype=float)[None])
        out = {key: x[0] for key, x in rows.items()}
        out["count"] = np.int64(out["count"])
        return out

    def record_history(self, Q, V) -> dict:
        """`record` at every row of the stacked coordinates and velocities Q, V (n_t, n_q of the stack), each
        array with the rows first ((n_t, slots, 3), ..., ``count`` (n_t,)), in blocks of rows (`row_state`):
        each row's contacts ordered by their normal force, largest first (a stable sort: ties keep the
        order of `state`), the first ``slots`` kept."""
        Q, V = np.asarray(Q, dtype=float), np.asarray(V, dtype=float)
        n_t, S, pad = len(Q), self.slots, (0, 3 - self.dim)
        out = {"point": np.full((n_t, S, 3), np.nan), "normal_force": np.full((n_t, S, 3), np.nan),
               "friction_force": np.full((n_t, S, 3), np.nan), "depth": np.full((n_t, S), np.nan),
               "bodies": np.full((n_t, S, 2), -2, dtype=np.int64), "count": np.zeros(n_t, dtype=np.int64)}
        for rows in self._row_blocks(n_t):
            st = self.row_state(Q[rows], V[rows])
            row = self.carriers.body_of(st.body_b)[1]
            order = np.lexsort((-st.f_n, row))                    # by row, then the largest f_n first
            counts = np.bincount(row, minlength=rows.stop - rows.start)
            rank = np.arange(len(order)) - np.repeat(np.cumsum(counts) - counts, counts)
            keep = rank < S
            k, r = order[keep], (row[order[keep]] + rows.start, rank[keep])
            out["count"][rows] = counts
            out["point"][r] = np.pad(0.5 * (st.r_a + st.r_b)[k], ((0, 0), pad))
            out["normal_force"][r] = np.pad((st.f_n[:, None] * st.n)[k], ((0, 0), pad))
            out["friction_force"][r] = np.pad(st.F_t[k], ((0, 0), pad))
            out["depth"][r] = st.delta[k]
            sides = np.stack([self.carriers.body_of(st.body_a)[0], self.carriers.body_of(st.body_b)[0]], 1)[k]
            out["bodies"][r] = np.where(sides == len(self.bodies), -1, sides)
        return out

    def __repr__(self):
        return f"Contact({self.name!r}, {len(self.shapes)} shapes on {len(self.bodies)} bodies, {self.law!r})"
