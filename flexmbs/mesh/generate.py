"""Mesh generators: straight lines, rectangles and boxes.

All generators number the grid nodes with x fastest, then y, then z, and use
meshio/VTK node orders with positive orientation: quadrilaterals and triangles
counter-clockwise, tetrahedra with ``det[p1 - p0, p2 - p0, p3 - p0] > 0``,
hexahedra with the bottom face (0, 1, 2, 3) counter-clockwise seen from the top
face (4, 5, 6, 7).
"""
from __future__ import annotations

from itertools import permutations
from typing import Literal

import numpy as np

from .mesh import Mesh

__all__ = ["line", "rectangle", "box"]

# tetra10 mid-edge nodes 4..9 sit on these corner pairs (meshio/VTK order)
TETRA10_EDGES = np.array([[0, 1], [1, 2], [2, 0], [0, 3], [1, 3], [2, 3]])


def _check_counts(**counts):
    for name, n in counts.items():
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
            raise ValueError(f"`{name}` must be a positive integer, got {n!r}")


def _check_lengths(**lengths):
    for name, value in lengths.items():
        if not (isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
                and np.isfinite(value) and value > 0):
            raise ValueError(f"`{name}` must be a positive finite number, got {value!r}")


def _grid(shape, lengths) -> np.ndarray:
    """Points of a regular grid with ``shape`` = cells per axis, x fastest: (n_nodes, dim)."""
    axes = [np.linspace(0.0, h, n + 1) for n, h in zip(shape, lengths)]
    grids = np.meshgrid(*axes, indexing="ij")
    return np.stack([g.ravel(order="F") for g in grids], axis=1)


def line(n_el: int, length: float = 1.0, dim: int = 2, direction=None, origin=None) -> Mesh:
    """Straight line of ``n_el`` two-node cells from ``origin`` along ``direction``.

    Parameters
    ----------
    n_el : int
        Number of cells.
    length : float
        Length of the line.
    dim : {2, 3}
        Dimension of the points.
    direction : array_like, shape (dim,), optional
        Direction of the line (normalised here); default the x axis.
    origin : array_like, shape (dim,), optional
        First node; default the origin.

    Returns
    -------
    Mesh
        ``n_el + 1`` nodes, cells ``{"line": (n_el, 2)}``, node sets ``start`` and
        ``end`` (first and last node), element set ``all``.
    """
    _check_counts(n_el=n_el)
    _check_lengths(length=length)
    if dim not in (2, 3):
        raise ValueError(f"`dim` must be 2 or 3, got {dim!r}")
    e = np.zeros(dim)
    e[0] = 1.0
    if direction is not None:
        e = np.asarray(direction, dtype=float)
        if e.shape != (dim,) or not np.linalg.norm(e) > 0:
            raise ValueError(f"`direction` must be a nonzero vector of length {dim}, "
                             f"got {direction!r}")
        e = e / np.linalg.norm(e)
    o = np.zeros(dim) if origin is None else np.asarray(origin, dtype=float)
    if o.shape != (dim,):
        raise ValueError(f"`origin` must be a vector of length {dim}, got {origin!r}")
    s = np.linspace(0.0, length, n_el + 1)
    points = o + s[:, None] * e
    conn = np.stack([np.arange(n_el), np.arange(1, n_el + 1)], axis=1)
    return Mesh(points, {"line": conn}, node_sets={"start": [0], "end": [n_el]},
                element_sets={"all": {"line": np.arange(n_el)}},
                source=f"generate.line(n_el={n_el}, length={length}, dim={dim})")


def rectangle(nx: int, ny: int, lx: float = 1.0, ly: float = 1.0,
              cell: Literal["triangle", "quad"] = "quad", z: float | None = None) -> Mesh:
    """Structured mesh of the rectangle [0, lx] x [0, ly].

    Parameters
    ----------
    nx, ny : int
        Number of grid cells along x and y.
    lx, ly : float
        Side lengths.
    cell : {"quad", "triangle"}
        ``quad``: one counter-clockwise quadrilateral per grid cell; ``triangle``:
        each grid cell split along its diagonal (0, 0)-(1, 1) into two
        counter-clockwise triangles.
    z : float, optional
        Give the points a third coordinate ``z`` (a plate mesh in the plane z = const, as
        `flexmbs.elements.PlateMITC4` takes); default 2D points.

    Returns
    -------
    Mesh
        ``(nx + 1) * (ny + 1)`` nodes in 2D, or 3D with ``z`` (node ``i + (nx + 1) * j`` at
        ``(i lx / nx, j ly / ny)``), cells ``{cell: (n_el, 3 or 4)}``, node sets
        ``left``, ``right``, ``bottom``, ``top`` (x = 0, x = lx, y = 0, y = ly) and
        element set ``all``.

    Examples
    --------
    >>> from flexmbs.mesh import generate
    >>> m = generate.rectangle(4, 2, 1.0, 0.2)
    >>> m.cells["quad"].shape, m.node_sets["left"].tolist()
    ((8, 4), [0, 5, 10])
    """
    _check_counts(nx=nx, ny=ny)
    _check_lengths(lx=lx, ly=ly)
    if cell not in ("triangle", "quad"):
        raise ValueError(f"`cell` must be one of ['quad', 'triangle'], got {cell!r}")
    points = _grid((nx, ny), (lx, ly))
    if z is not None:
        if isinstance(z, bool) or not isinstance(z, (int, float, np.number)) or not np.isfinite(z):
            raise ValueError(f"`z` must be a finite number (the plane's height) or None, got {z!r}")
        points = np.column_stack([points, np.full(len(points), float(z))])
    i, j = np.meshgrid(np.arange(nx), np.arange(ny), indexing="xy")  # x fastest
    n0 = (i + (nx + 1) * j).ravel()
    quads = np.stack([n0, n0 + 1, n0 + nx + 2, n0 + nx + 1], axis=1)
    conn = quads if cell == "quad" else quads[:, [0, 1, 2, 0, 2, 3]].reshape(-1, 3)
    ix, iy = np.arange(nx + 1), np.arange(ny + 1)
    node_sets = {"left": (nx + 1) * iy, "right": nx + (nx + 1) * iy,
                 "bottom": ix, "top": ix + (nx + 1) * ny}
    return Mesh(points, {cell: conn}, node_sets=node_sets,
                element_sets={"all": {cell: np.arange(len(conn))}},
                source=f"generate.rectangle(nx={nx}, ny={ny}, lx={lx}, ly={ly}, cell={cell!r}"
                       + ("" if z is None else f", z={z}") + ")")


def _kuhn_tets() -> np.ndarray:
    """Six positively oriented tetrahedra of the unit cube as corner offsets, (6, 4, 3).

    Tetrahedron ``p`` walks from (0, 0, 0) to (1, 1, 1) along the axes in the order
    of permutation ``p``; all six share the diagonal, so neighbouring cubes match
    (Kuhn/Freudenthal triangulation).  Its volume has the sign of the permutation;
    odd ones get their last two nodes swapped.
    """
    tets = []
    for perm in permutations(range(3)):
        steps = np.eye(3, dtype=int)[list(perm)]
        corners = np.vstack([np.zeros(3, dtype=int), np.cumsum(steps, axis=0)])
        if np.linalg.det(steps) < 0:
            corners = corners[[0, 1, 3, 2]]
        tets.append(corners)
    return np.array(tets)


def _add_mid_edge_nodes(points: np.ndarray, tets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tetra10 from tetra: append shared mid-edge nodes (points (n, 3), tets (n_el, 4))."""
    edges = np.sort(tets[:, TETRA10_EDGES], axis=2).reshape(-1, 2)   # (n_el * 6, 2)
    unique, inverse = np.unique(edges, axis=0, return_inverse=True)
    mid = 0.5 * (points[unique[:, 0]] + points[unique[:, 1]])
    conn = np.hstack([tets, len(points) + inverse.reshape(-1, 6)])
    return np.vstack([points, mid]), conn


def box(nx: int, ny: int, nz: int, lx: float = 1.0, ly: float = 1.0, lz: float = 1.0,
        cell: Literal["tetra", "hexahedron", "tetra10"] = "hexahedron") -> Mesh:
    """Structured mesh of the box [0, lx] x [0, ly] x [0, lz].

    Parameters
    ----------
    nx, ny, nz : int
        Number of grid cells along x, y and z.
    lx, ly, lz : float
        Side lengths.
    cell : {"hexahedron", "tetra", "tetra10"}
        ``hexahedron``: one cell per grid cell (VTK order); ``tetra``: each grid
        cell split into 6 tetrahedra around its (0, 0, 0)-(1, 1, 1) diagonal
        (conforming between neighbours); ``tetra10``: the same with mid-edge nodes,
        shared between neighbouring cells and numbered after the grid nodes.

    Returns
    -------
    Mesh
        Grid node ``i + (nx + 1) * (j + (ny + 1) * k)`` at ``(i lx/nx, j ly/ny,
        k lz/nz)``; cells ``{cell: (n_el, 8 | 4 | 10)}``; node sets ``xmin``,
        ``xmax``, ``ymin``, ``ymax``, ``zmin``, ``zmax`` (all nodes, mid-edge ones
        included, on each face) and element set ``all``.
    """
    _check_counts(nx=nx, ny=ny, nz=nz)
    _check_lengths(lx=lx, ly=ly, lz=lz)
    choices = ("hexahedron", "tetra", "tetra10")
    if cell not in choices:
        raise ValueError(f"`cell` must be one of {list(choices)}, got {cell!r}")
    points = _grid((nx, ny, nz), (lx, ly, lz))
    stride = np.array([1, nx + 1, (nx + 1) * (ny + 1)])
    i, j, k = np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij")
    n0 = np.stack([i.ravel("F"), j.ravel("F"), k.ravel("F")], axis=1) @ stride   # (n_cubes,)
    if cell == "hexahedron":
        corners = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                            [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]])
        conn = n0[:, None] + corners @ stride
    else:
        conn = (n0[:, None, None] + _kuhn_tets() @ stride).reshape(-1, 4)
        if cell == "tetra10":
            points, conn = _add_mid_edge_nodes(points, conn)
    lengths = (lx, ly, lz)
    node_sets = {}
    for axis, name in enumerate("xyz"):
        node_sets[f"{name}min"] = np.flatnonzero(points[:, axis] == 0.0)
        node_sets[f"{name}max"] = np.flatnonzero(points[:, axis] == lengths[axis])
    return Mesh(points, {cell: conn}, node_sets=node_sets,
                element_sets={"all": {cell: np.arange(len(conn))}},
                source=f"generate.box(nx={nx}, ny={ny}, nz={nz}, lx={lx}, ly={ly}, "
                       f"lz={lz}, cell={cell!r})")
