"""What a body's cells hold together: the cells an element leaves out, connected parts,
coincident nodes that no cell joins.

A mesh given to a `flexmbs.Model` must not lose cells or fall apart silently:

- `unused_cells`: cells of the element's dimension (or higher) of another type, which the
  model would leave out (quads and triangles in one mesh given to `Quad4`);
- `parts`: the connected parts of the element's cells (nodes joined through cells);
- `coincident_nodes`: pairs of nodes at the same position in different parts, i.e. duplicate
  nodes that split a body (a mesh exported without merging coincident nodes).
"""
from __future__ import annotations

import numpy as np

from .mesh import Mesh

__all__ = ["TOPOLOGICAL_DIM", "unused_cells", "parts", "smallest_connected_node", "coincident_nodes", "describe_part", "body_report"]

#: topological dimension of every cell type a Mesh may hold
TOPOLOGICAL_DIM = {"vertex": 0, "line": 1, "line3": 1, "triangle": 2, "triangle6": 2, "quad": 2, "quad8": 2,
                   "quad9": 2, "tetra": 3, "tetra10": 3, "hexahedron": 3, "hexahedron20": 3,
                   "hexahedron27": 3, "wedge": 3, "pyramid": 3}


def unused_cells(mesh: Mesh, cell_type: str) -> dict[str, int]:
    """{cell type: count} of the cells of ``mesh`` of ``cell_type``'s dimension or higher and
    another type: cells a model of ``cell_type`` elements would leave out (lower-dimensional
    cells, e.g. boundary faces, are not counted: they carry named sets and loads)."""
    own = TOPOLOGICAL_DIM[cell_type]
    return {t: len(c) for t, c in mesh.cells.items() if t != cell_type and TOPOLOGICAL_DIM[t] >= own}


def parts(n_nodes: int, cells) -> tuple[int, np.ndarray]:
    """(number of parts, part label of each node) of the nodes joined through ``cells`` (one
    connectivity array, or a list of them); nodes in no cell get the label -1, not counted."""
    blocks = [np.asarray(c, dtype=np.int64) for c in (cells if isinstance(cells, (list, tuple)) else [cells])]
    rows = np.concatenate([np.repeat(c[:, 0], c.shape[1] - 1) for c in blocks])
    cols = np.concatenate([c[:, 1:].ravel() for c in blocks])
    labels = smallest_connected_node(n_nodes, rows, cols)
    used = np.zeros(n_nodes, bool)
    for c in blocks:
        used[c.ravel()] = True
    uniq, relabel = np.unique(labels[used], return_inverse=True)
    out = np.full(n_nodes, -1, dtype=np.int64)
    out[used] = relabel.ravel()
    return len(uniq), out


def smallest_connected_node(n_nodes: int, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The smallest node index of each node's connected component in the undirected graph of
    the edges (rows[k], cols[k]): labels of the components, shape (n_nodes,).

    .. code:: text

        root = arange(n_nodes)
        repeat:  root = root[root] until it stops changing      (pointer jumping: every node
                                                                  points at a root)
                 for every edge (a, b) whose roots differ:      (hooking: the larger root under
                     root[max] = min(root[max], min)             the smaller, so no cycle forms)
        until every edge joins nodes of one root

    A root only ever points to a smaller index, so the smallest node of a component is its
    root at the end.  Every round is vectorised over the edges; the rounds measured on graphs
    of 10^5 nodes numbered at random were 11 (a path), 6 (a binary tree), 4 (a 3-D grid) and
    5 (random edges), and 1 for a path numbered along it, as line meshes are.  This replaces
    ``scipy.sparse.csgraph.connected_components`` (the same partition: tests/test_startup.py)
    for the mesh check of every `flexmbs.Model`, whose import costs about 0.1 s of CPU (it
    brings scipy.linalg) against well under 1 ms for a mesh of tens of nodes.
    """
    root = np.arange(n_nodes, dtype=np.int64)
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    while True:
        while True:
            jumped = root[root]
            if np.array_equal(jumped, root):
                break
            root = jumped
        a, b = root[rows], root[cols]
        split = a != b
        if not split.any():
            return root
        lo, hi = np.minimum(a[split], b[split]), np.maximum(a[split], b[split])
        np.minimum.at(root, hi, lo)


def coincident_nodes(points: np.ndarray, labels: np.ndarray, rtol: float = 1e-9) -> np.ndarray:
    """Pairs (i, j), i < j, of nodes in different parts (``labels`` >= 0) closer than ``rtol``
    times the size of the body: duplicate nodes that no cell joins, shape (n_pairs, 2)."""
    used = np.flatnonzero(labels >= 0)
    X = np.asarray(points, dtype=float)[used]
    size = float(np.linalg.norm(X.max(axis=0) - X.min(axis=0))) if len(X) else 0.0
    from scipy.spatial import cKDTree
    pairs = cKDTree(X).query_pairs(r=max(rtol * size, 1e-300), output_type="ndarray")
    if len(pairs) == 0:
        return np.zeros((0, 2), dtype=np.int64)
    pairs = np.sort(used[pairs], axis=1)
    pairs = pairs[labels[pairs[:, 0]] != labels[pairs[:, 1]]]
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def describe_part(points: np.ndarray, labels: np.ndarray, part: int) -> str:
    """'N nodes (node i, ..., between (x..) and (x..))' of one part, for messages."""
    nodes = np.flatnonzero(labels == part)
    X = np.asarray(points)[nodes]
    lo, hi = (", ".join(f"{c:.4g}" for c in v) for v in (X.min(axis=0), X.max(axis=0)))
    return f"{len(nodes)} nodes (node {nodes[0]}, ...) from ({lo}) to ({hi})"


def body_report(mesh: Mesh) -> tuple[str, bool]:
    """(a line for ``flexmbs mesh info``, ok) on the cells of the highest dimension: their
    types, connected parts and duplicate nodes; not ok if no one element can take them all or
    duplicate nodes split them."""
    top = max(TOPOLOGICAL_DIM[t] for t in mesh.cells)
    types = [t for t in mesh.cells if TOPOLOGICAL_DIM[t] == top]
    n_parts, labels = parts(mesh.n_nodes, [mesh.cells[t] for t in types])
    words = [f"{' and '.join(types)} cells in {n_parts} part{'s' if n_parts > 1 else ''}"]
    ok = True
    if len(types) > 1:
        words.append(f"{len(types)} cell types of dimension {top}: an element takes one, the others would be "
                     "refused")
        ok = False
    pairs = coincident_nodes(mesh.points, labels) if n_parts > 1 else np.zeros((0, 2), dtype=np.int64)
    if len(pairs):
        a, b = pairs[0]
        where = ", ".join(f"{c:.6g}" for c in mesh.points[a])
        words.append(f"{len(pairs)} pair(s) of duplicate nodes that no cell joins split it (e.g. nodes {a} and {b} "
                     f"at ({where})): merge coincident nodes")
        ok = False
    return "; ".join(words), ok
