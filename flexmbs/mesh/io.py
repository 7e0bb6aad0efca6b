"""Reading and writing mesh files through meshio, and the orientation check.

Supported files (by extension):

==========  ==========================  =========================================
extension   format                      named sets
==========  ==========================  =========================================
``.msh``    Gmsh 2.2 and 4.1,           physical groups: each gives an element
            ASCII and binary            set (its cells) and a node set (their
                                        nodes); groups of points give node sets
``.vtu``    VTK XML unstructured grid   0/1 arrays ``nset:NAME`` (point data) and
                                        ``elset:NAME`` (cell data), as `write`
                                        stores them
``.inp``    Abaqus input                ``*NSET`` and ``*ELSET``; an element set
                                        also gives a node set of the same name
==========  ==========================  =========================================

Orientation follows meshio/VTK: triangles and quadrilaterals counter-clockwise
(in 2D), tetrahedra with ``det[p1 - p0, p2 - p0, p3 - p0] > 0``, hexahedra with
the bottom face (0, 1, 2, 3) counter-clockwise seen from the top face (4, 5, 6, 7).
"""
from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Literal

import numpy as np

from ..quadrature import quadrature
from .mesh import Mesh, MeshError

__all__ = ["read", "write", "check_orientation", "signed_measure", "FORMATS", "CELL_DIM"]

logger = logging.getLogger(__name__)

FORMATS = {".msh": "gmsh", ".vtu": "vtu", ".inp": "abaqus"}
#: cell types `read` accepts, and their topological dimension (line3 and triangle6: the
#: boundary edges and faces of second-order meshes, e.g. Gmsh's tetra10 with triangle6 faces)
CELL_DIM = {"vertex": 0, "line": 1, "line3": 1, "triangle": 2, "triangle6": 2, "quad": 2, "tetra": 3,
            "tetra10": 3, "hexahedron": 3}
NSET, ELSET = "nset:", "elset:"   # prefixes of the VTU data arrays that hold sets

# corners at which orientation is checked: [corner, neighbours in right-handed order]
_CORNERS = {
    "triangle": [[0, 1, 2]],
    "quad": [[0, 1, 3], [1, 2, 0], [2, 3, 1], [3, 0, 2]],
    "tetra": [[0, 1, 2, 3]],
    "tetra10": [[0, 1, 2, 3]],
    "hexahedron": [[0, 1, 3, 4], [1, 2, 0, 5], [2, 3, 1, 6], [3, 0, 2, 7],
                   [4, 7, 5, 0], [5, 4, 6, 1], [6, 5, 7, 2], [7, 6, 4, 3]],
}
_HEX_CORNERS = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                         [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=float)
_SUPPORTED_EXT = ".msh (Gmsh 2.2 or 4.1), .vtu (VTK XML), .inp (Abaqus)"


# ---------------------------------------------------------------------------- geometry
def signed_measure(points: np.ndarray, cell_type: str, conn: np.ndarray) -> np.ndarray:
    """Signed length, area or volume of each cell.

    Parameters
    ----------
    points : ndarray, shape (n_nodes, dim)
    cell_type : {"line", "triangle", "quad", "tetra", "tetra10", "hexahedron"}
        Triangles and quads need ``dim == 2`` (counter-clockwise is positive);
        tetra10 cells are measured by their corners (straight edges).
    conn : ndarray, shape (n_el, nodes per cell)

    Returns
    -------
    ndarray, shape (n_el,)
        Lines: length (always >= 0).  Others: the integral of ``det J`` over the
        reference cell, negative for inverted cells; exact for the trilinear hexahedron
        (2 x 2 x 2 Gauss points).
    """
    X = np.asarray(points, dtype=float)[np.asarray(conn)]        # (n_el, n_e, dim)
    dim = X.shape[-1]
    if cell_type == "line":
        return np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
    if cell_type in ("triangle", "quad") and dim != 2:
        raise MeshError(f"signed areas of {cell_type} cells need 2D points, got dim {dim}")
    if cell_type == "triangle":
        return 0.5 * np.linalg.det(X[:, 1:3] - X[:, :1])
    if cell_type == "quad":   # shoelace formula
        x, y = X[..., 0], X[..., 1]
        return 0.5 * np.sum(x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y, axis=1)
    if cell_type in ("tetra", "tetra10"):
        return np.linalg.det(X[:, 1:4] - X[:, :1]) / 6.0
    if cell_type == "hexahedron":
        xi, w = quadrature("hexahedron", 3)                       # (n_qp, 3), (n_qp,)
        # dN_a/dxi_b = c_ab / 8 * prod_{d != b} (1 + c_ad xi_d), c = corner coordinates
        factors = 1.0 + _HEX_CORNERS[None] * xi[:, None]          # (n_qp, 8, 3)
        dN = np.stack([_HEX_CORNERS[:, b] / 8.0 * np.prod(np.delete(factors, b, axis=2), axis=2)
                       for b in range(3)], axis=2)                # (n_qp, 8, 3)
        J = np.einsum("eai,qab->eqib", X, dN)                     # (n_el, n_qp, 3, 3)
        return np.linalg.det(J) @ w
    raise MeshError(f"`cell_type` must be one of {sorted(_CORNERS) + ['line']}, got {cell_type!r}")


def _corner_quality(points: np.ndarray, cell_type: str, conn: np.ndarray) -> np.ndarray:
    """Smallest normalised corner determinant det[e1, .., ed] / prod |e_i| per cell, (n_el,)."""
    corners = np.asarray(_CORNERS[cell_type])                     # (n_c, dim + 1)
    X = points[conn[:, corners]]                                  # (n_el, n_c, dim + 1, dim)
    E = X[:, :, 1:] - X[:, :, :1]                                 # edges from each corner
    scale = np.prod(np.linalg.norm(E, axis=-1), axis=-1)
    det = np.linalg.det(E)
    q = np.divide(det, scale, out=np.zeros_like(det), where=scale > 0)
    return q.min(axis=1)


def check_orientation(mesh: Mesh, tol: float = 1e-12) -> None:
    """Raise `MeshError` if a cell of the mesh's own dimension is inverted or degenerate.

    Checked: triangles and quads of a 2D mesh, tetra, tetra10 and hexahedra of a 3D
    mesh (lower-dimensional cells, e.g. boundary faces, have no orientation to check).
    At every corner the edges to its neighbours (in the meshio/VTK order) must form a
    right-handed frame, ``det[e_1, .., e_dim] > tol * |e_1| ... |e_dim|``; for
    hexahedra these are the 8 corner tetrahedra.

    Parameters
    ----------
    mesh : Mesh
    tol : float
        Smallest accepted sine-like corner quality; cells below are reported.
    """
    problems = []
    for cell_type, conn in mesh.cells.items():
        if cell_type not in _CORNERS or CELL_DIM[cell_type] != mesh.dim:
            continue
        bad = np.flatnonzero(_corner_quality(mesh.points, cell_type, conn) <= tol)
        if bad.size:
            problems.append(f"{bad.size} of {len(conn)} {cell_type} cells (indices "
                            f"{bad[:5].tolist()}{' ...' if bad.size > 5 else ''})")
    if problems:
        raise MeshError(
            f"inverted or degenerate cells in {mesh.source}: {'; '.join(problems)}. "
            "Cells must follow the meshio/VTK node order with positive orientation "
            "(counter-clockwise in 2D, det[p1-p0, p2-p0, p3-p0] > 0 for tetrahedra); "
            "fix the mesh generator or re-mesh, or pass check=False to read it anyway")


# ---------------------------------------------------------------------------- reading
def _block_sets(m: meshio.Mesh) -> dict[str, dict[int, np.ndarray]]:
    """Named cell sets as name -> {block index -> local cell indices} from every source."""
    sets: dict[str, dict[int, np.ndarray]] = {}

    def add(name, k, idx):
        idx = np.asarray(idx, dtype=np.int64).ravel()
        if idx.size:
            by_block = sets.setdefault(str(name), {})
            by_block[k] = np.union1d(by_block.get(k, idx[:0]), idx)

    for name, members in m.cell_sets.items():         # Gmsh 4.1 physical names, Abaqus *ELSET
        if not name.startswith("gmsh:"):
            for k, idx in enumerate(members):
                if idx is not None:
                    add(name, k, idx)
    # Gmsh physical tags (2.2 and 4.1): named through field_data {name: [tag, dim]}
    names = {(int(v[0]), int(v[1])): name for name, v in m.field_data.items()
             if np.shape(v) == (2,)}
    for k, tags in enumerate(m.cell_data.get("gmsh:physical", [])):
        for tag in np.unique(tags[tags > 0]):         # 0: in no physical group
            add(names.get((int(tag), m.cells[k].dim), tag), k, np.flatnonzero(tags == tag))
    for key, masks in m.cell_data.items():            # written by `write` to VTU
        if key.startswith(ELSET):
            for k, mask in enumerate(masks):
                add(key[len(ELSET):], k, np.flatnonzero(mask))
    return sets


def _node_sets(m: meshio.Mesh, cell_sets: dict) -> dict[str, np.ndarray]:
    """Explicit node sets, plus for every cell set the nodes of its cells."""
    node_sets = {name: np.asarray(idx, dtype=np.int64) for name, idx in m.point_sets.items()}
    node_sets.update({key[len(NSET):]: np.flatnonzero(mask) for key, mask in m.point_data.items()
                      if key.startswith(NSET)})
    for name, by_block in cell_sets.items():
        nodes = [m.cells[k].data[idx].ravel() for k, idx in by_block.items()]
        node_sets[name] = np.unique(np.concatenate([node_sets.get(name, [])] + nodes)
                                    ).astype(np.int64)
    return node_sets


def _check_cell_types(cell_types) -> set[str]:
    if cell_types is None:
        return set(CELL_DIM) - {"vertex"}
    if isinstance(cell_types, str):
        cell_types = [cell_types]
    wanted = set(cell_types)
    if not wanted or not wanted <= set(CELL_DIM):
        raise MeshError(f"`cell_types` must be a non-empty list of {list(CELL_DIM)}, "
                        f"got {cell_types!r}")
    return wanted


def _check_not_empty(path: Path, file_format: str) -> None:
    """A file with no content, or a Gmsh file without nodes or elements, gets its own message."""
    data = path.read_bytes()
    if not data.strip():
        raise MeshError(f"mesh file {path} is empty ({len(data)} bytes{', whitespace only' if data else ''}): "
                        "nothing was written to it. "
                        "Mesh the model and save or export the mesh again")
    complete = data.rstrip().rsplit(b"\n", 1)[-1].strip().startswith(b"$End")      # not cut short
    if file_format == "gmsh" and data.lstrip().startswith(b"$MeshFormat") and complete:
        missing = [s for s in ("$Nodes", "$Elements") if s.encode() not in data]
        if missing:
            raise MeshError(f"{path} is a Gmsh file without {' and '.join(missing)} section"
                            f"{'s' if len(missing) > 1 else ''}: it holds no "
                            f"{'nodes and no ' if '$Nodes' in missing else ''}cells. Generate the mesh "
                            "(Gmsh: Mesh > 3D, or `gmsh model.geo -3`) before saving it")


def _meshio_read(path: Path, file_format: str) -> meshio.Mesh:
    import meshio                   # deferred: only mesh files need it
    # NOTE: the format modules' readers, not meshio.read, which calls sys.exit on a ReadError
    readers = {"gmsh": meshio.gmsh.read, "vtu": meshio.vtu.read, "abaqus": meshio.abaqus.read}
    try:
        return readers[file_format](path)
    # NOTE: meshio's readers raise many exception types on malformed input
    # (ReadError, ValueError, KeyError, IndexError, struct.error, ...)
    except Exception as err:
        reason = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
        if file_format == "gmsh":
            hint = ("The file is corrupt or in a layout meshio cannot parse. A common cause "
                    "is a file saved with Mesh.SaveAll=1 ('Save all elements'), which mixes "
                    "elements of all dimensions with and without physical groups. Define "
                    "physical groups for the domain and the boundaries you need, and "
                    "re-export without Mesh.SaveAll, as format 4.1 or 2.2 (e.g. "
                    "`gmsh model.geo -3 -format msh41 -o mesh.msh`)")
        else:
            hint = "The file is corrupt or not a valid file of this format; re-export it"
        raise MeshError(f"could not read {path} as {file_format} ({reason}). {hint}") from err


def _sample_hint(path: Path) -> str:
    """Points to `flexmbs.mesh.sample` when a missing file has the name of a shipped sample mesh."""
    from ..package_data import package_data_dir
    directory = package_data_dir("meshes")
    if directory is not None and path.name and (directory / path.name).is_file():
        return f" (a sample mesh of that name ships with flexmbs: flexmbs.mesh.sample({path.name!r}))"
    return ""


def read(path, *, cell_types=None, dim: int | None = None, check: bool = True) -> Mesh:
    """Read a mesh file (``.msh``, ``.vtu``, ``.inp``) into a `Mesh`.

    Parameters
    ----------
    path : str or Path
    cell_types : list of str, optional
        Cell types to keep, from ``vertex, line, line3, triangle, triangle6, quad, tetra,
        tetra10, hexahedron`` (``line3`` and ``triangle6``: the boundary edges and faces of
        second-order meshes).  Default: all of them except ``vertex`` (groups of points
        become node sets).  Other cell types in the file are an error unless
        ``cell_types`` is given, in which case they are skipped.  Node sets are built
        from all cells of the file, so a boundary group (e.g. lines) still gives its
        node set when its cells are not kept.
    check : bool
        Run `check_orientation` on the result.

    Returns
    -------
    Mesh
        Nodes numbered as in the file (nodes used by no kept cell are kept too).  Named sets
        as described in the module docstring; cell blocks of one type are joined in
        file order, and element set indices refer to the joined arrays.

    Raises
    ------
    MeshError
        Missing file, unknown extension, empty file (or a Gmsh file without nodes or
        elements), unreadable file, no cells, unsupported cell types, sets naming missing
        nodes, inverted cells.

    Examples
    --------
    >>> from flexmbs.mesh import read
    >>> mesh = read("meshes/plate_quad.msh")                     # doctest: +SKIP
    >>> mesh.nodes("left")                                       # doctest: +SKIP
    """
    path = Path(path)
    if not path.is_file():
        raise MeshError(f"mesh file {path} not found (working directory {Path.cwd()}); "
                        "check the path and the file name" + _sample_hint(path))
    file_format = FORMATS.get(path.suffix.lower())
    if file_format is None:
        raise MeshError(f"cannot read {path}: unknown extension {path.suffix!r}; supported: "
                        f"{_SUPPORTED_EXT}. Convert the mesh to one of these (e.g. with meshio)")
    kept = _check_cell_types(cell_types)
    if dim not in (None, 2, 3):
        raise MeshError(f"`dim` must be None, 2 or 3, got {dim!r}")
    _check_not_empty(path, file_format)
    m = _meshio_read(path, file_format)
    in_file = [b.type for b in m.cells if len(b.data)]
    if not any(t != "vertex" for t in in_file):
        what = (f"only {len(m.points)} nodes{' and vertices' if in_file else ''}" if len(m.points)
                else "no nodes either")
        hint = ("; mesh the model and, if it has physical groups, put the domain in one before saving"
                if file_format == "gmsh" else "; export the mesh with its elements")
        raise MeshError(f"{path} contains no cells ({what}){hint}")
    unsupported = sorted(set(in_file) - set(CELL_DIM))
    if unsupported and cell_types is None:
        raise MeshError(f"{path} contains unsupported cell types {unsupported}; supported: "
                        f"{list(CELL_DIM)}. Re-mesh with supported cells or skip them with "
                        f"`cell_types=[...]`")
    cell_sets = _block_sets(m)
    node_sets = _node_sets(m, cell_sets)

    cells: dict[str, list[np.ndarray]] = {}
    offsets: dict[int, int] = {}           # block index -> first index in its joined type
    for k, block in enumerate(m.cells):
        if block.type in kept and len(block.data):
            offsets[k] = sum(map(len, cells.get(block.type, [])))
            cells.setdefault(block.type, []).append(np.asarray(block.data, dtype=np.int64))
    if not any(t != "vertex" for t in cells):
        raise MeshError(f"{path} has no cells of the types {sorted(kept)} (it has "
                        f"{sorted(set(in_file))}); change `cell_types`")
    element_sets = {}
    for name, by_block in cell_sets.items():
        by_type: dict[str, list[np.ndarray]] = {}
        for k, idx in by_block.items():
            if k in offsets:
                by_type.setdefault(m.cells[k].type, []).append(idx + offsets[k])
        if by_type:
            element_sets[name] = {t: np.concatenate(v) for t, v in by_type.items()}

    points = np.asarray(m.points, dtype=float)
    flat = points.shape[1] == 2 or not np.any(points[:, 2])
    solid = any(CELL_DIM[t] == 3 for t in cells)
    if dim == 2 and (solid or not flat):
        raise MeshError(f"`dim=2` but {path} has {'3D cells' if solid else 'nonzero z'}; "
                        "use dim=3 or None")
    if dim is None:
        dim = 2 if flat and not solid else 3
    if dim == 2:
        points = points[:, :2]
    elif points.shape[1] == 2:
        points = np.column_stack([points, np.zeros(len(points))])
    mesh = Mesh(points, {t: np.concatenate(v) for t, v in cells.items()},
                node_sets=node_sets, element_sets=element_sets, source=str(path))
    used = np.zeros(mesh.n_nodes, dtype=bool)
    for conn in mesh.cells.values():
        used[conn.ravel()] = True
    if not used.all():
        logger.info("%s: %d of %d nodes belong to no kept cell", path, (~used).sum(), mesh.n_nodes)
    if check:
        check_orientation(mesh)
    return mesh


# ---------------------------------------------------------------------------- writing
def _gmsh_blocks(mesh: Mesh):
    """Cell blocks with one physical group each, and the field data naming the groups.

    Returns a list of (cell type, conn, physical tag) and ``{name: [tag, dim]}``.
    Gmsh gives every cell at most one physical group of one dimension and group
    names are unique, so overlapping sets and sets spanning dimensions lose parts
    (with a warning).
    """
    import meshio                   # deferred: only mesh files need it
    field_data: dict[str, np.ndarray] = {}
    blocks = []
    for cell_type, conn in mesh.cells.items():
        dim = meshio.CellBlock(cell_type, conn).dim
        group = np.zeros(len(conn), dtype=int)            # physical tag, 0 = none
        for name, by_type in mesh.element_sets.items():
            idx = by_type.get(cell_type, ())
            if len(idx) == 0:
                continue
            if name in field_data and field_data[name][1] != dim:
                warnings.warn(f"element set {name!r} spans cells of different dimensions; a Gmsh "
                              f"physical group cannot, so its {cell_type} cells are not written "
                              "to it", stacklevel=3)
                continue
            if np.any(group[idx]):
                warnings.warn(f"element set {name!r} overlaps an earlier set on {cell_type} "
                              "cells; Gmsh files hold one physical group per cell, so it is "
                              f"not written for these cells", stacklevel=3)
                continue
            field_data.setdefault(name, np.array([len(field_data) + 1, dim]))
            group[idx] = field_data[name][0]
        for tag in np.unique(group):
            blocks.append((cell_type, conn[group == tag], tag))
    for name, nodes in mesh.node_sets.items():
        if len(nodes) == 0:
            continue
        if name in field_data:
            tag = field_data[name][0]
            derived = np.unique(np.concatenate([c.ravel() for _, c, t in blocks if t == tag]))
            if not np.array_equal(derived, nodes):
                warnings.warn(f"node set {name!r} is not the node set of element set {name!r} and "
                              "Gmsh group names are unique, so it is not written", stacklevel=3)
            continue
        field_data[name] = np.array([len(field_data) + 1, 0])
        blocks.append(("vertex", nodes[:, None], field_data[name][0]))
    return blocks, field_data


def _gmsh41_dim_tags(dims: np.ndarray, n_nodes: int) -> np.ndarray:
    """Entity (dim, tag) of every node, shape (n_nodes, 2), for meshio's Gmsh 4.1 writer.

    Block ``b`` (dimension ``dims[b]``) is entity ``b + 1``.  The writer lists only
    entities that own a node and writes the nodes grouped by sorted (dim, tag), and
    the reader numbers nodes in file order; so the blocks, sorted, own nodes 0, 1, ..
    and the last one owns the rest.  This keeps the node numbering; the nodes'
    entities are nominal (no reader here uses them).
    """
    if n_nodes < len(dims):
        raise MeshError(f"cannot write a Gmsh 4.1 file with {len(dims)} cell blocks (one per "
                        f"physical group and cell type) but only {n_nodes} nodes; use "
                        "msh_version='2.2'")
    owner = np.argsort(dims, kind="stable")[np.minimum(np.arange(n_nodes), len(dims) - 1)]
    return np.stack([dims[owner], owner + 1], axis=1)


def write(mesh: Mesh, path, *, msh_version: Literal["2.2", "4.1"] = "4.1",
          binary: bool | None = None) -> None:
    """Write a `Mesh` through meshio; the format follows the extension (see `FORMATS`).

    Parameters
    ----------
    mesh : Mesh
    path : str or Path
    msh_version : {"4.1", "2.2"}
        Gmsh file version (``.msh`` only).
    binary : bool, optional
        Binary Gmsh file, or compressed binary VTU data.  Default: ASCII for ``.msh``,
        binary for ``.vtu``.  ``.inp`` files are always text (``binary=True`` warns).

    Notes
    -----
    Sets are stored so that `read` returns them: as physical groups in Gmsh files
    (element sets as groups of their cells, node sets as groups of vertices), as
    ``*NSET``/``*ELSET`` in Abaqus files and as 0/1 arrays ``nset:NAME`` /
    ``elset:NAME`` in VTU files.  `read` adds a node set for every element set.
    Gmsh blocks are grouped by physical group, so cells of one type are reordered
    when their element sets interleave.
    """
    import meshio                   # deferred: only mesh files need it
    path = Path(path)
    file_format = FORMATS.get(path.suffix.lower())
    if file_format is None:
        raise MeshError(f"cannot write {path}: unknown extension {path.suffix!r}; supported: "
                        f"{_SUPPORTED_EXT}")
    if msh_version not in ("2.2", "4.1"):
        raise MeshError(f"`msh_version` must be one of ['2.2', '4.1'], got {msh_version!r}")
    kwargs = {}
    if file_format == "gmsh":
        blocks, field_data = _gmsh_blocks(mesh)
        dims = np.array([meshio.CellBlock(t, c).dim for t, c, _ in blocks])
        point_data = {}
        if msh_version == "4.1":
            point_data["gmsh:dim_tags"] = _gmsh41_dim_tags(dims, mesh.n_nodes)
        # block k is geometrical entity k + 1
        cell_data = {"gmsh:physical": [np.full(len(c), p) for _, c, p in blocks],
                     "gmsh:geometrical": [np.full(len(c), k + 1)
                                          for k, (_, c, _) in enumerate(blocks)]}
        m = meshio.Mesh(mesh.points, [(t, c) for t, c, _ in blocks], point_data=point_data,
                        cell_data=cell_data, field_data=field_data)
        file_format = "gmsh22" if msh_version == "2.2" else "gmsh"
        kwargs["binary"] = bool(binary)
    elif file_format == "vtu":
        types = list(mesh.cells)
        cell_data = {ELSET + name: [np.isin(np.arange(len(mesh.cells[t])), by_type.get(t, []))
                                    .astype(np.uint8) for t in types]
                     for name, by_type in mesh.element_sets.items()}
        point_data = {NSET + name: np.isin(np.arange(mesh.n_nodes), nodes).astype(np.uint8)
                      for name, nodes in mesh.node_sets.items()}
        points = mesh.points                                  # VTU points are 3D
        if mesh.dim == 2:
            points = np.column_stack([points, np.zeros(mesh.n_nodes)])
        m = meshio.Mesh(points, list(mesh.cells.items()), point_data=point_data,
                        cell_data=cell_data)
        kwargs["binary"] = binary is None or binary
    else:
        if "vertex" in mesh.cells:
            raise MeshError(f"cannot write {path}: Abaqus files have no vertex cells; "
                            "store the points as a node set instead")
        if binary:
            warnings.warn("`binary` is ignored for Abaqus .inp files (always text)", stacklevel=2)
        types = list(mesh.cells)
        m = meshio.Mesh(mesh.points, list(mesh.cells.items()),
                        point_sets=dict(mesh.node_sets),
                        cell_sets={name: [np.asarray(by_type.get(t, []), dtype=np.int64)
                                          for t in types]
                                   for name, by_type in mesh.element_sets.items()})
    meshio.write(path, m, file_format=file_format, **kwargs)
    logger.info("wrote %s (%s)", path, file_format)
