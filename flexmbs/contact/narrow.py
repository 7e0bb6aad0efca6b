"""Narrow phase: the contacts of candidate pairs of primitives, one vectorised kernel per pair kind.

Each kernel takes k pairs (global positions) and returns, per pair, the penetration delta
(> 0 in contact), the unit normal n from side a to side b (the force on b is along +n), the
contact points r_a, r_b on the two surfaces (material points of each body, where the forces act)
and the effective radius R* of Hertz's stiffness:

.. code:: text

    sphere (c, r)  - plane (o, n):     delta = r - n.(c - o),  r_b = c - r n,  r_a = c - n.(c - o) n,  R* = r
    sphere i - sphere j:               d = c_j - c_i, n = d/|d|, delta = r_i + r_j - |d|,
                                       r_a = c_i + r_i n, r_b = c_j - r_j n,  1/R* = 1/r_i + 1/r_j
    sphere - box (centre, A, h):       x = A^T (c - centre), p = clamp(x, -h, h) (the closest point);
                                       outside: n = A (x - p)/|x - p|, delta = r - |x - p|;  inside: the
                                       nearest face k, n = sign(x_k) A e_k, delta = r + h_k - |x_k|;
                                       r_a = centre + A p (on the face), r_b = c - r n,  R* = r
    sphere - capsule (s_0, s_1, r_c):  the closest point s = s_0 + clamp(t) (s_1 - s_0) of the segment,
                                       then sphere (s, r_c) - sphere (c, r)
    sphere in a hole (o, R):           d = c - o, e = d/|d|, delta = |d| + r - R, n = -e (towards o),
                                       r_a = o + R e (the wall), r_b = c + r e,  1/R* = 1/r - 1/R
    sphere - triangle (p0, p1, p2):    f = the unit face normal (p1 - p0) x (p2 - p0) (outward by the
                                       vertex order); c's projection inside the triangle: r_a the
                                       projection, n = f, delta = r - f.(c - p0) (one-sided: also behind
                                       the face); else r_a the closest point of the edges, n = (c - r_a)/|.|,
                                       delta = r - |c - r_a|;  r_b = c - r n,  R* = r

delta is the distance-like measure whose gradient is n: for a material point moving with the bodies
d(delta)/dt = -n . (v_b(r_b) - v_a(r_a)) (the closest point moves along the surface, which does not
change the distance to first order), so Q = J^T F and the energy k delta^(n+1)/(n+1) agree.
"""
from __future__ import annotations

import numpy as np

__all__ = ["sphere_plane", "sphere_sphere", "sphere_box", "sphere_capsule", "sphere_in_hole", "sphere_triangle"]


def _unit(d: np.ndarray):
    """(d/|d|, |d|), a zero d giving the first axis (coincident centres: any direction is a normal)."""
    dist = np.linalg.norm(d, axis=1)
    n = np.zeros_like(d)
    n[:, 0] = 1.0
    ok = dist > 0
    n[ok] = d[ok] / dist[ok, None]
    return n, dist


def sphere_plane(c, r, o, n):
    """(delta, n, r_a on the plane, r_b on the sphere, R*) of spheres (c (k, dim), r (k,)) and planes
    (o, n (k, dim))."""
    h = np.einsum("ki,ki->k", n, c - o)
    return r - h, n, c - h[:, None] * n, c - r[:, None] * n, r


def sphere_sphere(ci, ri, cj, rj):
    """(delta, n, r_a on sphere i, r_b on sphere j, R*) of pairs of spheres."""
    n, dist = _unit(cj - ci)
    total = ri + rj
    radius = np.divide(ri * rj, total, out=np.zeros_like(total), where=total > 0)
    return total - dist, n, ci + ri[:, None] * n, cj - rj[:, None] * n, radius


def sphere_box(c, r, centre, A, h):
    """(delta, n, r_a on the box, r_b on the sphere, R*) of spheres and boxes (A (k, dim, dim) their
    axes, h (k, dim) their half sizes)."""
    x = np.einsum("kji,kj->ki", A, c - centre)                  # A^T (c - centre)
    p = np.clip(x, -h, h)
    n_loc, dist = _unit(x - p)
    delta = r - dist
    inside = dist == 0.0
    if np.any(inside):
        xi, hi = x[inside], h[inside]
        face = np.argmin(hi - np.abs(xi), axis=1)
        rows = np.arange(len(face))
        sign = np.where(xi[rows, face] >= 0.0, 1.0, -1.0)
        nl = np.zeros_like(xi)
        nl[rows, face] = sign
        pl = xi.copy()
        pl[rows, face] = sign * hi[rows, face]
        n_loc[inside], p[inside] = nl, pl
        delta[inside] = r[inside] + hi[rows, face] - np.abs(xi[rows, face])
    n = np.einsum("kij,kj->ki", A, n_loc)
    return delta, n, centre + np.einsum("kij,kj->ki", A, p), c - r[:, None] * n, r


def sphere_capsule(c, r, s0, s1, rc):
    """(delta, n, r_a on the capsule, r_b on the sphere, R*) of spheres and capsules."""
    e = s1 - s0
    t = np.clip(np.einsum("ki,ki->k", c - s0, e) / np.einsum("ki,ki->k", e, e), 0.0, 1.0)
    return sphere_sphere(s0 + t[:, None] * e, rc, c, r)


def sphere_in_hole(c, r, o, R):
    """(delta, n, r_a on the hole's wall, r_b on the sphere, R*) of spheres (c, r) inside holes (o, R)
    (a journal in its bearing: the wall is concave)."""
    e, dist = _unit(c - o)
    return dist + r - R, -e, o + R[:, None] * e, c + r[:, None] * e, r * R / (R - r)


def _closest_on_segments(c, a, b):
    """The closest point to c (k, 3) on the segments a-b (k, 3)."""
    e = b - a
    t = np.clip(np.einsum("ki,ki->k", c - a, e) / np.einsum("ki,ki->k", e, e), 0.0, 1.0)
    return a + t[:, None] * e


def sphere_triangle(c, r, p0, p1, p2):
    """(delta, n, r_a on the triangle, r_b on the sphere, R*) of spheres (c, r) and triangles (p0, p1, p2)
    (each (k, 3)), one-sided: the face normal by the vertex order (module docstring)."""
    f, _ = _unit(np.cross(p1 - p0, p2 - p0))
    h = np.einsum("ki,ki->k", c - p0, f)
    proj = c - h[:, None] * f
    # barycentric side tests: the projection is inside when it is on the inner side of all three edges
    inside = np.ones(len(c), dtype=bool)
    for a, b in ((p0, p1), (p1, p2), (p2, p0)):
        inside &= np.einsum("ki,ki->k", np.cross(b - a, proj - a), f) >= 0.0
    edges = np.stack([_closest_on_segments(c, a, b) for a, b in ((p0, p1), (p1, p2), (p2, p0))])
    nearest = np.argmin(np.linalg.norm(edges - c[None], axis=2), axis=0)
    ra = np.where(inside[:, None], proj, edges[nearest, np.arange(len(c))])
    n_edge, dist = _unit(c - ra)
    n = np.where(inside[:, None], f, n_edge)
    delta = np.where(inside, r - h, r - dist)
    return delta, n, ra, c - r[:, None] * n, r
