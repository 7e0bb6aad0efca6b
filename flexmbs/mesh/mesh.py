"""The `Mesh`: node coordinates, cells by type and named node and element sets.

Cell types use meshio's names (``line``, ``triangle``, ``quad``, ``tetra``,
``tetra10``, ``hexahedron``, ``vertex``).  Coordinates are in the body's
(floating) frame; a planar mesh has ``dim == 2``.
"""
from __future__ import annotations

import numpy as np

from ..arrays import sorted_unique
from ..frozen import Fields

__all__ = ["Mesh", "MeshError", "NODES_PER_CELL"]

NODES_PER_CELL = {"vertex": 1, "line": 2, "line3": 3, "triangle": 3, "triangle6": 6, "quad": 4,
                  "quad8": 8, "quad9": 9, "tetra": 4, "tetra10": 10, "hexahedron": 8,
                  "hexahedron20": 20, "hexahedron27": 27, "wedge": 6, "pyramid": 5}


class MeshError(ValueError):
    """A mesh, a mesh file or a set in it is not usable; the message says why."""


def _out_of_range(idx: np.ndarray, n: int) -> int | None:
    """First entry of ``idx`` outside 0..n-1, or None."""
    bad = idx[(idx < 0) | (idx >= n)]
    return int(bad.flat[0]) if bad.size else None


class Mesh(Fields):
    """Nodes, cells by type and named sets (a mutable `flexmbs.frozen.Fields`: a dataclass's repr and ==).

    Parameters
    ----------
    points : ndarray, shape (n_nodes, dim)
        Node coordinates, ``dim`` 2 or 3.
    cells : dict[str, ndarray]
        Cell type -> connectivity, shape (n_el, nodes per cell), 0-based.
    node_sets : dict[str, ndarray], optional
        Name -> node indices (None: none, a new {}).
    element_sets : dict[str, dict[str, ndarray]], optional
        Name -> {cell type -> indices into ``cells[cell type]``} (None: none, a new {}).
    source : str
        Where the mesh came from (file path or generator call).
    """

    def __init__(self, points: np.ndarray, cells: dict[str, np.ndarray], node_sets: dict | None = None,
                 element_sets: dict | None = None, source: str = "generated"):
        self._set_fields(locals())
        self.__post_init__()

    def __post_init__(self):
        """Check and normalise the fields (contiguous float points, int64 cells and sets, sorted
        unique set indices); MeshError naming the field and the mesh's ``source`` otherwise.  The
        name is the dataclass's hook, kept for subclasses that override it
        (`flexmbs.io.fe_import.NodeCloud`)."""
        self.points = np.ascontiguousarray(self.points, dtype=float)
        if self.points.ndim != 2 or self.points.shape[1] not in (2, 3):
            raise MeshError(f"`points` must have shape (n_nodes, 2) or (n_nodes, 3), "
                            f"got {self.points.shape} ({self.source})")
        if len(self.points) == 0:
            raise MeshError(f"the mesh has no nodes ({self.source})")
        if not np.all(np.isfinite(self.points)):
            raise MeshError(f"`points` contains NaN or infinite coordinates ({self.source})")
        n = len(self.points)
        cells = {}
        for cell_type, conn in self.cells.items():
            conn = np.asarray(conn)
            if cell_type not in NODES_PER_CELL:
                raise MeshError(f"unsupported cell type {cell_type!r} ({self.source}); "
                                f"supported: {sorted(NODES_PER_CELL)}")
            if conn.size == 0:
                continue
            if conn.ndim != 2 or conn.shape[1] != NODES_PER_CELL[cell_type]:
                raise MeshError(f"`cells[{cell_type!r}]` must have shape (n_el, "
                                f"{NODES_PER_CELL[cell_type]}), got {conn.shape} ({self.source})")
            if not np.issubdtype(conn.dtype, np.integer):
                raise MeshError(f"`cells[{cell_type!r}]` must hold integer node indices, "
                                f"got dtype {conn.dtype} ({self.source})")
            bad = _out_of_range(conn, n)
            if bad is not None:
                raise MeshError(f"`cells[{cell_type!r}]` refers to node {bad} but the "
                                f"mesh has {n} nodes (0..{n - 1}) ({self.source})")
            cells[cell_type] = np.ascontiguousarray(conn, dtype=np.int64)
        if not any(c != "vertex" for c in cells):
            raise MeshError(f"the mesh has no cells other than vertices ({self.source})")
        self.cells = cells
        node_sets = {}
        for name, idx in self.node_sets.items():
            idx = sorted_unique(np.asarray(idx, dtype=np.int64).ravel())
            bad = _out_of_range(idx, n)
            if bad is not None:
                raise MeshError(f"node set {name!r} names node {bad} but the mesh has "
                                f"{n} nodes (0..{n - 1}) ({self.source})")
            node_sets[name] = idx
        self.node_sets = node_sets
        element_sets = {}
        for name, by_type in self.element_sets.items():
            checked = {}
            for cell_type, idx in by_type.items():
                idx = sorted_unique(np.asarray(idx, dtype=np.int64).ravel())
                n_el = len(self.cells.get(cell_type, ()))
                bad = _out_of_range(idx, n_el)
                if bad is not None:
                    raise MeshError(f"element set {name!r} names {cell_type} cell "
                                    f"{bad} but the mesh has {n_el} such cells "
                                    f"({self.source})")
                checked[cell_type] = idx
            element_sets[name] = checked
        self.element_sets = element_sets

    @property
    def dim(self) -> int:
        return self.points.shape[1]

    @property
    def n_nodes(self) -> int:
        return len(self.points)

    def nodes(self, selector) -> np.ndarray:
        """Node indices from a set name, an index array or a boolean mask."""
        if isinstance(selector, str):
            if selector not in self.node_sets:
                raise MeshError(f"no node set named {selector!r}; the mesh has "
                                f"{sorted(self.node_sets) or 'no node sets'}")
            return self.node_sets[selector]
        idx = np.asarray(selector)
        if idx.dtype == bool:
            if idx.shape != (self.n_nodes,):
                raise MeshError(f"a boolean node mask must have shape ({self.n_nodes},), got {idx.shape}")
            return np.flatnonzero(idx)
        idx = np.atleast_1d(idx).astype(np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_nodes):
            raise MeshError(f"node index {int(idx.max())} out of range 0..{self.n_nodes - 1}")
        return idx

    def find_nodes(self, predicate) -> np.ndarray:
        """Indices of the nodes whose coordinates satisfy ``predicate(points.T)``."""
        return np.flatnonzero(predicate(self.points.T))

    def __repr__(self) -> str:
        cells = ", ".join(f"{k}: {len(v)}" for k, v in self.cells.items())
        return (f"Mesh({self.n_nodes} nodes in {self.dim}D; {cells}; node sets "
                f"{sorted(self.node_sets)}; element sets {sorted(self.element_sets)}; from {self.source})")
