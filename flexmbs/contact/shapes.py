"""Contact shapes, attached to a body (None: the ground) in its frame, and the primitives they give.

Every shape is one or more of four primitives, in body coordinates:

| shape | primitives | meets |
| --- | --- | --- |
| Sphere(body, radius, at) | a sphere (2D: a circle) | every primitive |
| Plane(body, normal, point) | a half-space, solid on the side opposite to ``normal`` | spheres, corners, ends |
| Box(body, half_sizes, at, orientation) | a box and its 2^dim corners (spheres of radius 0) | spheres; corners meet planes and boxes |
| Capsule(body, a, b, radius) | a segment of radius r and its two end spheres | spheres; ends meet planes and boxes |
| Points(body, markers, radius) | one sphere of ``radius`` (>= 0) per marker | every primitive but points |
| Hole(body, radius, at) | the inside of a circle (2D) or a spherical socket (3D): solid outside the radius | spheres inside it |
| Surface(body, ...) | its triangles (rigid bodies, the ground) and its vertices | triangles meet spheres; vertices planes and boxes |

A sphere's centre may be a marker of a flexible body (`flexmbs.bodies.Node`): it then follows the
deformation, so ``Points(flexible_body, nodes)`` or ``Surface(flexible_body)`` (the boundary nodes of its
mesh) puts contact points on a deforming surface.  Not evaluated: box-box edge-edge contact and
capsule-capsule contact between the ends (the corners and ends meet the other shape's faces only),
and the triangles of a flexible body's Surface (it contacts by its nodes).
"""
from __future__ import annotations

import numpy as np

__all__ = ["is_marker", "Shape", "Sphere", "Plane", "Box", "Capsule", "Hole", "Points", "Surface", "FULL", "CORNER", "END"]

FULL, CORNER, END = 0, 1, 2          # the roles of a sphere primitive (table above)


def _vector(value, dim: int, what: str, owner: str) -> np.ndarray:
    try:
        a = None if isinstance(value, (str, bytes)) else np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        a = None
    if a is None or a.shape != (dim,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{owner}: `{what}` must be a finite vector of {dim} components, got {value!r}")
    return a


def _positive(value, what: str, owner: str, allow_zero: bool = False) -> float:
    try:
        x = None if isinstance(value, (bool, str, bytes)) else float(value)
    except (TypeError, ValueError):
        x = None
    if x is None or not np.isfinite(x) or x < 0 or (x == 0 and not allow_zero):
        raise ValueError(f"{owner}: `{what}` must be a finite number {'>=' if allow_zero else '>'} 0, got {value!r}")
    return x


def is_marker(value) -> bool:
    """True for a body's marker object (a `flexmbs.bodies.Node`), False for coordinates (numbers, lists,
    tuples, arrays)."""
    return not isinstance(value, (list, tuple, np.ndarray, int, float, np.number, str, bytes)) and hasattr(value,
                                                                                                    "index")


def _body_dim(body, owner: str) -> int:
    if body is None:
        return 0
    if not all(hasattr(body, a) for a in ("name", "dim", "n_q")):
        raise ValueError(f"{owner}: `body` must be a body (flexmbs.bodies) or None (the ground), got {body!r} "
                         f"({type(body).__name__})")
    return body.dim


class Shape:
    """Base of the contact shapes: the ``body`` it rides on (None: the ground) and its primitives."""

    body = None
    dim: int = 0                      # 0: given by the other shapes (a ground shape with no vector given)

    def spheres(self) -> list:
        """[(centre marker, radius, role)]: the centre a body point (dim,) or a body's marker (`Node`)."""
        return []

    def boxes(self) -> list:
        """[(centre (dim,), axes (dim, dim) columns in body axes, half sizes (dim,))]."""
        return []

    def capsules(self) -> list:
        """[(a (dim,), b (dim,), radius)]."""
        return []

    def planes(self) -> list:
        """[(point (dim,), unit outward normal (dim,))]."""
        return []

    def holes(self) -> list:
        """[(centre (dim,), radius)]."""
        return []

    def triangles_of(self) -> list:
        """[(p0, p1, p2) (3,) each]: triangles in body coordinates, outward by the vertex order."""
        return []

    def __repr__(self):
        return f"{type(self).__name__}(on {'the ground' if self.body is None else repr(self.body.name)})"


def _dim_of(body, given, owner: str) -> int:
    d = _body_dim(body, owner)
    if d == 0:
        d = len(np.atleast_1d(given)) if given is not None else 3
    return d


class Sphere(Shape):
    """A sphere (2D: a circle) of ``radius`` [m] centred at ``at`` (body coordinates or a `Node`)."""

    def __init__(self, body, radius, at=None):
        owner = "Sphere"
        self.dim = _dim_of(body, None if at is None or is_marker(at) else at, owner)
        self.body, self.radius = body, _positive(radius, "radius", owner)
        self.at = np.zeros(self.dim) if at is None else (at if is_marker(at) else _vector(at, self.dim, "at", owner))

    def spheres(self):
        return [(self.at, self.radius, FULL)]


class Plane(Shape):
    """The half-space below the plane through ``point`` with outward ``normal`` (body coordinates)."""

    def __init__(self, body, normal, point=None):
        owner = "Plane"
        self.dim = _dim_of(body, normal, owner)
        self.body = body
        n = _vector(normal, self.dim, "normal", owner)
        if not np.linalg.norm(n) > 0:
            raise ValueError(f"{owner}: `normal` must be a nonzero vector, got {normal!r}")
        self.normal = n / np.linalg.norm(n)
        self.point = np.zeros(self.dim) if point is None else _vector(point, self.dim, "point", owner)

    def planes(self):
        return [(self.point, self.normal)]


def _orientation(value, dim: int, owner: str) -> np.ndarray:
    if value is None:
        return np.eye(dim)
    if dim == 2 and np.ndim(value) == 0:
        a = float(value)
        return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    A = np.asarray(value, dtype=float)
    if A.shape != (dim, dim) or not np.allclose(A.T @ A, np.eye(dim), atol=1e-9) or np.linalg.det(A) < 0:
        raise ValueError(f"{owner}: `orientation` must be a rotation matrix ({dim}, {dim}) (2D: or an angle "
                         f"[rad]), got {value!r}")
    return A


class Box(Shape):
    """A box of ``half_sizes`` [m] centred at ``at`` with axes ``orientation`` (body coordinates)."""

    def __init__(self, body, half_sizes, at=None, orientation=None):
        owner = "Box"
        self.dim = _dim_of(body, half_sizes, owner)
        self.body = body
        self.half_sizes = _vector(half_sizes, self.dim, "half_sizes", owner)
        if not np.all(self.half_sizes > 0):
            raise ValueError(f"{owner}: `half_sizes` must be > 0, got {half_sizes!r}")
        self.at = np.zeros(self.dim) if at is None else _vector(at, self.dim, "at", owner)
        self.orientation = _orientation(orientation, self.dim, owner)

    def corners(self) -> np.ndarray:
        """The 2^dim corners (body coordinates)."""
        signs = np.array(np.meshgrid(*[[-1.0, 1.0]] * self.dim, indexing="ij")).reshape(self.dim, -1).T
        return self.at + (signs * self.half_sizes) @ self.orientation.T

    def spheres(self):
        return [(c, 0.0, CORNER) for c in self.corners()]

    def boxes(self):
        return [(self.at, self.orientation, self.half_sizes)]


class Hole(Shape):
    """A bearing: the solid around a hole of ``radius`` [m] centred at ``at`` (body coordinates), a circle
    in 2D, a spherical socket in 3D; a `Sphere` of another body inside it (the journal) touches its wall
    where the clearance closes."""

    def __init__(self, body, radius, at=None):
        owner = "Hole"
        self.dim = _dim_of(body, at, owner)
        self.body, self.radius = body, _positive(radius, "radius", owner)
        self.at = np.zeros(self.dim) if at is None else _vector(at, self.dim, "at", owner)

    def holes(self):
        return [(self.at, self.radius)]


class Capsule(Shape):
    """The points within ``radius`` [m] of the segment a-b (body coordinates): a cylinder with round ends."""

    def __init__(self, body, a, b, radius):
        owner = "Capsule"
        self.dim = _dim_of(body, a, owner)
        self.body = body
        self.a, self.b = _vector(a, self.dim, "a", owner), _vector(b, self.dim, "b", owner)
        if not np.linalg.norm(self.b - self.a) > 0:
            raise ValueError(f"{owner}: `a` and `b` must differ (use a Sphere), got {a!r} and {b!r}")
        self.radius = _positive(radius, "radius", owner)

    def spheres(self):
        return [(self.a, self.radius, END), (self.b, self.radius, END)]

    def capsules(self):
        return [(self.a, self.b, self.radius)]


class Points(Shape):
    """Contact points: one sphere of ``radius`` (>= 0) [m] at each marker (body points (n, dim), or
    markers of the body such as `flexmbs.bodies.Node`: a flexible body's surface nodes)."""

    def __init__(self, body, markers, radius=0.0):
        owner = "Points"
        self.body = body
        self.radius = _positive(radius, "radius", owner, allow_zero=True)
        if isinstance(markers, (list, tuple)) and markers and all(is_marker(m) for m in markers):
            self.dim = _dim_of(body, None, owner)
            self.markers = list(markers)
        else:
            try:
                a = np.asarray(markers, dtype=float)
            except (TypeError, ValueError):
                a = None
            d = _body_dim(body, owner)
            if a is None or a.ndim != 2 or a.shape[1] not in ((d,) if d else (2, 3)) or not len(a) \
                    or not np.all(np.isfinite(a)):
                raise ValueError(f"{owner}: `markers` must be finite points (n, {d or 'dim'}) in body coordinates "
                                 f"or a list of markers (Node), got {markers!r}")
            self.dim, self.markers = a.shape[1], list(a)

    def spheres(self):
        return [(m, self.radius, FULL) for m in self.markers]


class Surface(Points):
    """A triangulated surface: its triangles (outward normal by the vertex order) meet spheres, its
    vertices (spheres of radius ``radius``) meet planes and boxes.

    ``Surface(body, points=..., triangles=...)``: vertices in body coordinates (a rigid body or the
    ground); ``Surface.from_file(body, path)``: an STL (or any surface meshio reads);
    ``Surface(flexible_body)``: the boundary nodes of its mesh, as `Node` markers that follow the
    deformation, in contact by these nodes (its triangles are not used).  A sphere touches a surface
    at its deepest triangle only (no double force where it spans an edge).
    """

    def __init__(self, body, points=None, triangles=None, radius=0.0):
        owner = "Surface"
        if points is None:
            model = getattr(body, "model", None)
            if model is None:
                raise ValueError(f"{owner}: give `points` (the vertices in body coordinates) for "
                                 f"{'the ground' if body is None else type(body).__name__}; only a FlexibleBody "
                                 "gives its own (the boundary nodes of its mesh)")
            from ..bodies.flexible import Node
            nodes = _boundary_nodes(model.mesh)
            self.triangles = None
            super().__init__(body, [Node(int(i)) for i in nodes], radius)
            return
        super().__init__(body, points, radius)
        self.triangles = None if triangles is None else np.asarray(triangles, dtype=int)
        if self.triangles is not None and (self.triangles.ndim != 2 or self.triangles.shape[1] != 3
                                           or self.triangles.min() < 0 or self.triangles.max() >= len(self.markers)):
            raise ValueError(f"{owner}: `triangles` must be (n, 3) vertex indices below {len(self.markers)}, got "
                             f"shape {self.triangles.shape}")

    def spheres(self):
        role = CORNER if self.triangles is not None and self.dim == 3 else FULL
        return [(m, self.radius, role) for m in self.markers]

    def triangles_of(self):
        if self.triangles is None or self.dim != 3:
            return []
        P = np.asarray(self.markers, dtype=float)
        return [tuple(P[t]) for t in self.triangles]

    @classmethod
    def from_file(cls, body, path, scale: float = 1.0, radius=0.0) -> "Surface":
        """The surface of the file ``path`` (STL, OBJ, ...: read by meshio), its points times ``scale``."""
        import meshio
        mesh = meshio.read(path)
        triangles = [c.data for c in mesh.cells if c.type == "triangle"]
        if not triangles:
            raise ValueError(f"Surface.from_file: {path!s} holds no triangles (cell types "
                             f"{[c.type for c in mesh.cells]})")
        return cls(body, points=np.asarray(mesh.points, dtype=float) * scale, triangles=np.vstack(triangles),
                   radius=radius)


def _boundary_nodes(mesh) -> np.ndarray:
    """The nodes on the boundary faces of a solid mesh (flexmbs.mesh.faces.boundary_faces), or all
    nodes of a mesh of bars, beams or plane cells."""
    from ..mesh.faces import boundary_faces
    solids = [t for t in mesh.cells if t in ("tetra", "tetra10", "hexahedron")]
    if not solids:
        return np.arange(mesh.n_nodes)
    return np.unique(np.concatenate([boundary_faces(mesh, t).ravel() for t in solids]))
