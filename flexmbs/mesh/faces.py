"""Faces of cells: boundary faces, outward orientation and the cell a face belongs to.

Every cell type has its faces (edges for 2D cells) listed with their nodes in the order of
the face's own cell type, oriented so that the normal points out of the cell:

.. code:: text

    cell         face type   faces (local nodes)                      normal
    triangle     line        (0 1) (1 2) (2 0)                        n = (t_y, -t_x), t = x_1 - x_0
    quad         line        (0 1) (1 2) (2 3) (3 0)                  (cells counter-clockwise)
    tetra        triangle    (0 2 1) (0 1 3) (1 2 3) (2 0 3)          n = (x_1 - x_0) x (x_2 - x_0)
    tetra10      triangle6   the same corners + their mid-edge nodes
    hexahedron   quad        (0 3 2 1) (4 5 6 7) (0 1 5 4) (1 2 6 5) (2 3 7 6) (3 0 4 7)

for positively oriented cells in the meshio/VTK node order (`flexmbs.mesh.check_orientation`).
A face is identified by its sorted corner nodes, so a face cell of a mesh file (a Gmsh
physical surface of ``triangle`` or ``triangle6`` cells, say) is matched to the volume cell it
bounds whatever its own node order or order: `match_faces` returns the cell's own, outward,
face, with all its nodes (mid-edge nodes included).
"""
from __future__ import annotations

import numpy as np

from .mesh import Mesh, MeshError

__all__ = ["FACES", "CORNERS", "cell_faces", "boundary_faces", "match_faces"]

#: cell type -> (face cell type, local nodes of each face, outward)
FACES = {
    "triangle": ("line", [[0, 1], [1, 2], [2, 0]]),
    "quad": ("line", [[0, 1], [1, 2], [2, 3], [3, 0]]),
    "tetra": ("triangle", [[0, 2, 1], [0, 1, 3], [1, 2, 3], [2, 0, 3]]),
    "tetra10": ("triangle6", [[0, 2, 1, 6, 5, 4], [0, 1, 3, 4, 8, 7], [1, 2, 3, 5, 9, 8], [2, 0, 3, 6, 7, 9]]),
    "hexahedron": ("quad", [[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]]),
}
#: number of corner nodes (the first ones) of each face or cell type
CORNERS = {"line": 2, "line3": 2, "triangle": 3, "triangle6": 3, "quad": 4, "quad8": 4, "quad9": 4,
           "tetra": 4, "tetra10": 4, "hexahedron": 8}


def _keys(corners: np.ndarray) -> np.ndarray:
    """Sorted corner nodes as rows, (n, k) int64: the identity of a face."""
    return np.sort(np.asarray(corners, dtype=np.int64), axis=1)


def cell_faces(cell_type: str, conn: np.ndarray) -> tuple[str, np.ndarray]:
    """(face type, faces) with faces (n_el, n_faces_per_cell, nodes per face), outward."""
    if cell_type not in FACES:
        raise MeshError(f"faces of {cell_type!r} cells are not defined; cells with faces: {sorted(FACES)}")
    face_type, local = FACES[cell_type]
    return face_type, np.asarray(conn)[:, np.asarray(local)]


def boundary_faces(mesh: Mesh, cell_type: str) -> np.ndarray:
    """The faces of ``cell_type`` cells that belong to one cell only (the boundary), outward,
    shape (n_faces, nodes per face), in the face type of `FACES`."""
    if cell_type not in mesh.cells:
        raise MeshError(f"the mesh has no {cell_type!r} cells; it has {sorted(mesh.cells)}")
    face_type, faces = cell_faces(cell_type, mesh.cells[cell_type])
    flat = faces.reshape(-1, faces.shape[-1])
    _, inverse, counts = np.unique(_keys(flat[:, :CORNERS[face_type]]), axis=0, return_inverse=True,
                                   return_counts=True)
    return flat[counts[inverse.ravel()] == 1]


def match_faces(mesh: Mesh, cell_type: str, faces: dict[str, np.ndarray], name: str = "faces"
                ) -> tuple[np.ndarray, np.ndarray]:
    """The cell faces that the face cells ``faces`` ({face cell type: (n, k)}) lie on.

    Returns ``(cell_index, face_nodes)``: for each given face, the ``cell_type`` cell it bounds
    and that cell's own outward face (all its nodes, in the face type of `FACES`).  Raises
    `MeshError` naming the face if it bounds no cell, or two (an inner face: no outward side).
    """
    face_type, own = cell_faces(cell_type, mesh.cells[cell_type])
    k = CORNERS[face_type]
    n_per = own.shape[1]
    table = _keys(own[:, :, :k].reshape(-1, k))                   # (n_el * n_per, k)
    order = np.lexsort(table.T[::-1])
    table_sorted = table[order]
    cells, nodes = [], []
    for given_type, conn in faces.items():
        conn = np.asarray(conn, dtype=np.int64)
        if given_type not in CORNERS or CORNERS[given_type] != k:
            raise MeshError(f"{name}: {given_type} cells cannot be faces of {cell_type} cells (their faces "
                            f"are {face_type} cells)")
        keys = _keys(conn[:, :k])
        lo = _searchsorted_rows(table_sorted, keys, "left")
        hi = _searchsorted_rows(table_sorted, keys, "right")
        missing = np.flatnonzero(hi == lo)
        if missing.size:
            i = int(missing[0])
            raise MeshError(f"{name}: {missing.size} of its {len(conn)} {given_type} cells are not faces of any "
                            f"{cell_type} cell (the first: cell {i}, nodes {conn[i].tolist()}); a face set must "
                            "lie on the body's surface")
        inner = np.flatnonzero(hi - lo > 1)
        if inner.size:
            i = int(inner[0])
            pair = (order[lo[i]] // n_per, order[lo[i] + 1] // n_per)
            raise MeshError(f"{name}: {inner.size} of its {given_type} cells lie inside the body (the first: "
                            f"cell {i}, nodes {conn[i].tolist()}, between {cell_type} cells {pair[0]} and "
                            f"{pair[1]}); a surface load needs faces on the boundary")
        flat = order[lo]
        cells.append(flat // n_per)
        nodes.append(own.reshape(-1, own.shape[-1])[flat])
    if not cells:
        raise MeshError(f"{name}: no face cells")
    return np.concatenate(cells), np.concatenate(nodes)


def _searchsorted_rows(table: np.ndarray, keys: np.ndarray, side: str) -> np.ndarray:
    """np.searchsorted for rows of lexicographically sorted ``table`` (int64 rows)."""
    # rows as one structured scalar each: lexicographic comparison by numpy
    dtype = np.dtype([(f"c{i}", np.int64) for i in range(table.shape[1])])
    t = np.ascontiguousarray(table).view(dtype).ravel()
    q = np.ascontiguousarray(keys).view(dtype).ravel()
    return np.searchsorted(t, q, side=side)
