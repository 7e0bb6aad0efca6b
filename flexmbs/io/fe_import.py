"""Mass and stiffness matrices of a solid part exported by Abaqus or ANSYS, as flexmbs needs them.

A commercial code writes its global M and K as lists of nonzero entries, each addressed by an
equation number or by (node number, DOF number); flexmbs orders a solid's DOFs node by node,
three translations per node (DOF 3 i + c for node position i, component c = x, y, z).
``import_body`` reads both matrices and the node list, maps every entry to that order and
returns an `ImportedBody` (M, K, the node coordinates and numbers).  Its inertia invariants
follow from M and the node coordinates alone (``ImportedBody.invariants``, see there).

Supported formats (`FORMATS`); any other file is refused with a message that names them:

.. code:: text

    "abaqus-labels"      *MATRIX GENERATE + *MATRIX OUTPUT, FORMAT=MATRIX INPUT (Abaqus's default):
                         "row node, row DOF, column node, column DOF, value" per line
    "abaqus-coordinate"  *MATRIX OUTPUT, FORMAT=COORDINATE: "row, column, value" (equation numbers;
                         equations taken node by node in ascending node number, 3 per node)
    "ansys-mmf"          Matrix Market coordinate file of *SMAT ... + *EXPORT, ..., MMF
                         (with a node map: see below)
    "ansys-hb"           Harwell-Boeing file of HBMAT, ..., ASCII (RSA or RUA), with its node map

Both codes write one triangle of a symmetric matrix; it is mirrored (a file that holds both
triangles is taken as it is).  ANSYS numbers its equations in its own (solver) order; the map
from equations to nodes is either HBMAT's ``.mapping`` file ("equation, node, DOF label" per
line, e.g. ``7  3  UX``) or the node vector that Exudyn's FEM interface reads (a Matrix Market
array "n 1" of node numbers, equations 3 j, 3 j + 1, 3 j + 2 belonging to its j-th node).
The export steps in each code are in docs/fe_import.md.

Node coordinates come from an Abaqus input file (its ``*NODE`` lines), from a node list (one
"number x y z" per line, header lines skipped, as ANSYS's node export writes it), from a
flexmbs `Mesh` (node numbers 1..n in mesh order) or from an array of rows (number, x, y, z).
"""
from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse

from ..assembly import BodyInvariants
from ..mesh import Mesh
from ..model import DistributedLoad, Model, NodalLoad, SurfaceLoad, as_operator, gravity_vector
from ..motion import Fixed

__all__ = ["FORMATS", "ImportedBody", "ImportedModel", "NodeTranslations", "NodeCloud", "MatrixEntries", "import_body", "read_matrix", "read_nodes",
           "read_ansys_mapping", "detect_format", "FEImportError"]

FORMATS = {
    "abaqus-labels": "Abaqus *MATRIX OUTPUT, FORMAT=MATRIX INPUT (node, DOF, node, DOF, value)",
    "abaqus-coordinate": "Abaqus *MATRIX OUTPUT, FORMAT=COORDINATE (row, column, value)",
    "ansys-mmf": "ANSYS *SMAT + *EXPORT, MMF (Matrix Market coordinate) with a node map",
    "ansys-hb": "ANSYS HBMAT, ASCII (Harwell-Boeing RSA/RUA) with its .mapping file",
}
DOFS_PER_NODE = 3                       # solids: the three translations
_ANSYS_DOF = {"UX": 1, "UY": 2, "UZ": 3, "ROTX": 4, "ROTY": 5, "ROTZ": 6}


class FEImportError(ValueError):
    """A file could not be read as one of the supported formats."""


def _supported() -> str:
    return "; ".join(f"{k!r}: {v}" for k, v in FORMATS.items())


@dataclass(frozen=True)
class MatrixEntries:
    """The nonzero entries of one exported matrix, addressed by (node number, DOF 1..6)."""

    row_node: np.ndarray          # (nnz,) int
    row_dof: np.ndarray           # (nnz,) int, 1-based as in both codes
    col_node: np.ndarray
    col_dof: np.ndarray
    value: np.ndarray             # (nnz,) float
    format: str
    symmetric_half: bool          # True: one triangle stored, mirrored when assembled


@dataclass(frozen=True)
class ImportedBody:
    """M and K of an imported solid on its nodes, in flexmbs's DOF order (3 per node).

    ``points`` (n_nodes, 3) are the node coordinates, ``node_labels`` (n_nodes,) the node
    numbers of the exporting code, row i of ``points`` holding node ``node_labels[i]``.
    """

    M: sparse.csr_array
    K: sparse.csr_array
    points: np.ndarray
    node_labels: np.ndarray
    formats: tuple[str, str]

    @property
    def n_nodes(self) -> int:
        return len(self.node_labels)

    def scalar_mass(self) -> sparse.csr_array:
        """m_s (n_nodes, n_nodes) with M = m_s (x) I_3, the consistent mass of a solid.

        .. code:: text

            M[3 i + a, 3 j + b] = delta_ab int rho N_i N_j dV = delta_ab m_s[i, j]

        Raises ValueError when M does not have that form (a lumped mass with rotary inertia,
        shell or beam elements, coupled DOFs): its invariants cannot come from M alone then.
        """
        M = sparse.csr_array(self.M)
        n = self.n_nodes
        ms = sparse.csr_array(M[0::3][:, 0::3])
        scale = abs(ms).max() if ms.nnz else 0.0
        for a in range(3):
            for b in range(3):
                block = sparse.csr_array(M[a::3][:, b::3])
                ref = ms if a == b else sparse.csr_array((n, n))
                diff = abs(block - ref).max() if (block - ref).nnz else 0.0
                if diff > 1e-12 * scale:
                    raise ValueError(
                        f"the imported mass matrix is not that of a solid with translational DOFs "
                        f"(M = m_s (x) I_3): its ({'xyz'[a]}, {'xyz'[b]}) node blocks differ from "
                        f"{'the (x, x) blocks' if a == b else 'zero'} by {diff:.3g} (largest entry "
                        f"{scale:.3g}); export the consistent mass of solid elements")
        return ms

    def invariants(self) -> BodyInvariants:
        """The inertia invariants of the body on all its DOFs, from M and the node coordinates.

        For isoparametric solid elements with a consistent mass (u = sum_i N_i u_i and
        x = sum_i N_i X_i with the same N_i) every inertia integral is a product of the
        scalar mass m_s (``scalar_mass``) with the node coordinates X (n_nodes, 3):

        .. code:: text

            S[a, b] = int rho N_a^T N_b dV   = m_s (x) E_ab
            d[a, b] = int rho N_a^T x_b dV   = (m_s X[:, b]) (x) e_a
            m_O[a]  = int rho N_a dV         = (m_s 1) (x) e_a
            mass = 1^T m_s 1,   s = X^T m_s 1,   J = X^T m_s X

        (E_ab the unit 3 x 3 matrix, e_a the unit vector, (x) the Kronecker product with the
        node-major DOF order).  They equal those `flexmbs.assembly.assemble_invariants`
        integrates element by element, to round-off.
        """
        ms = self.scalar_mass()
        X = np.asarray(self.points, dtype=float)
        n = self.n_nodes
        ones = np.ones(n)
        S = {}
        for a in range(3):
            for b in range(3):
                E = np.zeros((3, 3))
                E[a, b] = 1.0
                S[(a, b)] = sparse.csr_array(sparse.kron(ms, sparse.csr_array(E), format="csr"))
        msX = ms @ X                                       # (n, 3): int rho N_i x_b dV
        m1 = ms @ ones                                     # (n,):   int rho N_i dV
        m_O = np.zeros((3, 3 * n))
        d = np.zeros((3, 3, 3 * n))
        for a in range(3):
            m_O[a, a::3] = m1
            d[a, :, a::3] = msX.T
        M = sparse.csr_array(sum((S[(a, a)] for a in range(1, 3)), S[(0, 0)]))
        return BodyInvariants(M, S, m_O, d, float(ones @ m1), X.T @ m1, X.T @ msX)


    def model(self, fixed=(), node_sets=None, damping=None, loads=(), gravity=None):
        """The body as a `flexmbs.Model` (an `ImportedModel`) on its imported M and K: something
        `flexmbs.run` runs on a fixed frame, `flexmbs.reduction.reduce` reduces and a
        `flexmbs.bodies.FlexibleBody` takes.

        ``fixed``: supports as for `Model`, (nodes, dofs) with nodes a name of ``node_sets``, row
        indices of ``points`` or a mask, dofs "all" or names among "u", "v", "w"; ``node_sets``:
        name -> row indices (e.g. a bearing face for an `flexmbs.bodies.Interface`); ``damping``:
        Rayleigh (alpha, beta); ``loads``: `NodalLoad`s and `DistributedLoad`s per mass (see
        `ImportedModel`); ``gravity``: a 3-vector [m/s^2] (global components), acting through the
        imported mass.  See `ImportedModel` for what such a model has and lacks.
        """
        return ImportedModel(self, fixed=fixed, node_sets=node_sets, damping=damping, loads=loads, gravity=gravity)


class NodeCloud(Mesh):
    """The nodes of an imported body without cells of their own: one "vertex" cell per node (the
    carrier of its three translations, `NodeTranslations`), and node sets.  A `Mesh` refuses a mesh
    of vertices only (a Gmsh file without its volume is an error there); here the nodes are all
    there is, the exporting code keeping the elements."""

    def __post_init__(self):
        self.points = np.ascontiguousarray(self.points, dtype=float)
        n = len(self.points)
        if self.points.ndim != 2 or self.points.shape[1] != 3 or n == 0 or not np.all(np.isfinite(self.points)):
            raise ValueError(f"`points` must be finite node coordinates of shape (n_nodes, 3), n_nodes >= 1, got "
                             f"shape {self.points.shape}")
        self.cells = {"vertex": np.arange(n, dtype=np.int64)[:, None]}
        sets = {}
        for name, idx in self.node_sets.items():
            idx = np.unique(np.asarray(idx, dtype=np.int64).ravel())
            if idx.size and (idx.min() < 0 or idx.max() >= n):
                raise ValueError(f"`node_sets[{name!r}]` must hold row indices of the imported nodes, 0..{n - 1}, "
                                 f"got {int(idx.min() if idx.min() < 0 else idx.max())}")
            sets[str(name)] = idx
        self.node_sets = sets


class NodeTranslations:
    """The DOF layout of an imported solid: one "vertex" cell per node, three translations each.

    It stands where a `Model` has its element, for what a model of given matrices needs of one:
    the DOF names and count per node (supports, node markers, the nodal displacement field) and
    the rigid-body modes at the nodes (the reference conditions' check, the near null space of
    K).  It has no shape functions: M and K come from the exporting code."""

    cell_type = "vertex"
    n_nodes = 1
    dofs_per_node = DOFS_PER_NODE
    dof_names = ("u", "v", "w")

    def rigid_modes(self, X) -> np.ndarray:
        """(n_el, 3, 6): translations along the body axes, then rotations u = e_i x X about the
        axes through the origin, at the node of each cell (X (n_el, 1, 3))."""
        X = np.asarray(X, dtype=float)[:, 0]
        modes = np.zeros((len(X), 3, 6))
        for i, e in enumerate(np.eye(3)):
            modes[:, i, i] = 1.0
            modes[:, :, 3 + i] = np.cross(e, X)
        return modes


class ImportedModel(Model):
    """A `Model` whose M and K come from another code (`ImportedBody`), on the imported nodes.

    What it has: the supports (``fixed``), the free DOFs, M, K and the inertia invariants from M
    and the node coordinates (`ImportedBody.invariants`), Rayleigh damping, node sets, the node
    translations (the DOFs themselves), interfaces and the rigid-body modes at the nodes; so
    `flexmbs.reduction.reduce` (free-interface, Craig-Bampton, static and attachment modes) and
    `flexmbs.bodies.FlexibleBody` (on its supports or mean axes, ``stiffening="none"``) take it.
    Loads: `NodalLoad` on the nodes' translations ("u", "v", "w"), `DistributedLoad` per mass
    [N/kg] on the whole body (its consistent load int rho N^T b dV = m_O^T b from the imported M:
    `ImportedBody.invariants`), and ``gravity``, which acts through the same m_O as on a native body.
    What it lacks: cells and shape functions (the exporting code keeps them), hence loads per
    volume, per length or on element sets, `SurfaceLoad`s (no faces), point masses, geometric
    stiffening and stresses (``stress`` refuses by name; the run's element data are empty); a
    frame motion other than fixed (run it as a `FlexibleBody` in a `flexmbs.System`).
    """

    def __init__(self, body: ImportedBody, *, fixed=(), node_sets=None, damping=None, loads=(), gravity=None,
                 dense_below: int = 400):
        self.mesh = NodeCloud(body.points, {}, node_sets=dict(node_sets or {}),
                              source="imported " + "/".join(body.formats))
        self.element = NodeTranslations()
        self.motion = Fixed()
        self.cells = self.mesh.cells["vertex"]
        self.X = self.mesh.points[self.cells]
        self.n_full = DOFS_PER_NODE * body.n_nodes
        self.point_mass_data = None
        mask = np.zeros(self.n_full, bool)
        for nodes, dofs in fixed:
            idx = self.mesh.nodes(nodes)
            for j in self.dof_indices(dofs):
                mask[idx * DOFS_PER_NODE + j] = True
        self._fixed_mask = mask
        self.fixed_dofs, self.free = np.flatnonzero(mask), np.flatnonzero(~mask)
        self.n_dofs = len(self.free)
        if self.n_dofs == 0:
            raise ValueError("`fixed` removes every DOF: nothing is left to move")
        inv_full = body.invariants()
        self.inv = inv_full.reduce(self.free)
        self.M, self.mass = self.inv.M, inv_full.mass
        self.K = sparse.csr_array(sparse.csr_array(body.K)[self.free][:, self.free])
        self.damping = None if damping is None else tuple(float(c) for c in damping)
        if self.damping is not None and (len(self.damping) != 2 or min(self.damping) < 0):
            raise ValueError(f"`damping` must be (alpha, beta) >= 0, got {damping!r}")
        self.loads = list(loads)
        self.Q = self._load_matrix(inv_full.m_O)[self.free]
        self._load_f = [ld.f for ld in self.loads]
        self._load_body_force = [None] * len(self.loads)
        self.gravity = gravity_vector(gravity)
        self.stiffening = False
        self._Kg_keys, self._Kg, self._Kg_op = [], [], []
        self.prestress_info = self.static_displacements = None
        self.dense = dense = self.n_dofs < dense_below
        self.M_op, self.K_op = as_operator(self.M, dense), as_operator(self.K, dense)
        self.C_op, self.C_damp = None, sparse.csr_array((self.n_dofs, self.n_dofs))
        if self.damping is not None and any(self.damping):
            self.C_damp = sparse.csr_array(self.damping[0] * self.M + self.damping[1] * self.K)
            self.C_op = as_operator(self.C_damp, dense)
        self.S_op = {k: as_operator(v, dense) for k, v in self.inv.S.items()}
        self.G_op = [None if Gi is None else as_operator(Gi, dense) for Gi in self.inv.G]
        self.m_O, self.d, self.g = self.inv.m_O, self.inv.d, self.inv.g
        self._cache, self._frame_terms = {}, None


    def _load_matrix(self, m_O: np.ndarray) -> np.ndarray:
        """Q (n_full, n_loads): the load vectors of ``loads`` on all DOFs (``m_O`` (3, n_full) of the
        imported mass, for the loads per mass)."""
        Q = np.zeros((self.n_full, len(self.loads)))
        for i, load in enumerate(self.loads):
            if isinstance(load, NodalLoad):
                Q[:, i] = self._nodal(load, i)
            elif isinstance(load, DistributedLoad):
                Q[:, i] = self._per_mass(load, i, m_O)
            elif isinstance(load, SurfaceLoad):
                raise ValueError(f"`loads[{i}]`: an imported body has no faces (the exporting code keeps its "
                                 "elements), so it takes no SurfaceLoad; give the face's consistent nodal forces "
                                 "as NodalLoads (e.g. exported as a load vector by that code)")
            else:
                raise TypeError(f"`loads[{i}]` must be a NodalLoad or a DistributedLoad (per mass) for an imported "
                                f"body, got {type(load).__name__}")
        return Q

    def _per_mass(self, load: DistributedLoad, i: int, m_O: np.ndarray) -> np.ndarray:
        """m_O^T b (n_full,): the consistent load of a body force b [N/kg] on the whole body."""
        if load.per != "mass":
            raise ValueError(f"`loads[{i}].per` must be 'mass' for an imported body (a load per volume or length "
                             f"needs the density and the section, which the imported M does not give), got "
                             f"{load.per!r}")
        if load.elements is not None:
            raise ValueError(f"`loads[{i}].elements`: an imported body has no elements; a DistributedLoad acts on "
                             f"the whole body (elements=None), got {load.elements!r}")
        try:
            b = np.asarray(load.value, dtype=float)
        except (TypeError, ValueError):
            b = None
        if b is None or b.shape != (3,) or not np.all(np.isfinite(b)):
            raise ValueError(f"`loads[{i}].value` must be a finite 3-vector [N/kg] (body frame), got {load.value!r}")
        return b @ m_O

    def stress(self, delta):
        """Refused: an imported body has M and K only, no element data to recover a stress from."""
        raise ValueError("`stress`: an imported body has no element data (the exporting code keeps its elements "
                         "and material), so flexmbs cannot recover its stresses; compute them in that code from "
                         "the displacements (`Results.displacement`), or mesh the part for flexmbs")


# -- reading the matrix files ----------------------------------------------------------------------
def _lines(path: Path) -> list[str]:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise FEImportError(f"cannot read {path}: {exc.strerror or exc}") from None
    return text.splitlines()


def _is_int(token: str) -> bool:
    return re.fullmatch(r"[+-]?\d+", token.strip()) is not None


def detect_format(path) -> str:
    """The format of a matrix file from its first lines (one of `FORMATS`)."""
    path = Path(path)
    lines = [ln for ln in _lines(path)[:8] if ln.strip()]
    if not lines:
        raise FEImportError(f"{path} is empty: supported are {_supported()}")
    if lines[0].startswith("%%MatrixMarket") or lines[0].startswith("%"):
        return "ansys-mmf"
    data = [ln for ln in lines if not ln.lstrip().startswith("*")]
    if data and "," in data[0]:
        n = len(data[0].split(","))
        if n == 5:
            return "abaqus-labels"
        if n == 3:
            return "abaqus-coordinate"
    if len(lines) >= 4 and all(_is_int(t) for t in lines[1].split()) and len(lines[1].split()) in (4, 5) \
            and re.match(r"\s*[RCP][SUHZR][AE]\s", lines[2]):
        return "ansys-hb"
    raise FEImportError(f"{path}: not a supported matrix file (first line {lines[0][:60]!r}); supported are "
                        f"{_supported()}")


def _numbers(lines: list[str], n_cols: int, path: Path, what: str) -> np.ndarray:
    """Rows of ``n_cols`` numbers from comma- or blank-separated lines (D exponents allowed).

    NumPy's C reader first (a few seconds and no per-token Python objects for the 1e6-line files
    of a 1e5-DOF part); a line-by-line pass only to name the line that does not fit.
    """
    lines = [ln for ln in lines if ln.strip()]
    text = "\n".join(lines)
    if "D" in text or "d" in text:
        text = text.replace("D", "E").replace("d", "e")
    if lines:
        try:
            data = np.loadtxt(io.StringIO(text), delimiter="," if "," in lines[0] else None, ndmin=2,
                              dtype=float)
            if data.shape[1] == n_cols:
                return data
        except ValueError:
            pass
    rows = [ln.replace("D", "E").replace("d", "e").replace(",", " ").split() for ln in lines]
    bad = next((i for i, r in enumerate(rows) if len(r) != n_cols), None)
    if bad is not None:
        raise FEImportError(f"{path}: {what} expects {n_cols} numbers per line, line {rows[bad]!r} has "
                            f"{len(rows[bad])}")
    try:
        return np.array(rows, dtype=float).reshape(-1, n_cols)
    except ValueError as exc:
        raise FEImportError(f"{path}: {what}: {exc}") from None


def _abaqus_labels(path: Path) -> MatrixEntries:
    data = _numbers([ln for ln in _lines(path) if not ln.lstrip().startswith("*")], 5, path,
                    "Abaqus FORMAT=MATRIX INPUT (node, DOF, node, DOF, value)")
    i = data[:, :4].astype(np.int64)
    return MatrixEntries(i[:, 0], i[:, 1], i[:, 2], i[:, 3], data[:, 4], "abaqus-labels",
                         _one_triangle(i[:, 0] * 8 + i[:, 1], i[:, 2] * 8 + i[:, 3]))


def _one_triangle(r: np.ndarray, c: np.ndarray) -> bool:
    """True when the file stores one triangle of a symmetric matrix: no off-diagonal entry (i, j)
    comes with its transpose (j, i).  False when every one does (both triangles stored).  The
    test needs no equation order, so it holds for Abaqus's node labels in any numbering."""
    off = r != c
    if not off.any():
        return False
    big = int(max(r.max(), c.max())) + 1
    keys = r[off].astype(np.int64) * big + c[off]
    paired = np.isin(c[off].astype(np.int64) * big + r[off], keys)
    if paired.all():
        return False
    if not paired.any():
        return True
    raise FEImportError(f"the matrix stores {int(paired.sum())} off-diagonal entries with their transposes and "
                        f"{int((~paired).sum())} without: neither one triangle nor the whole symmetric matrix")


def _equations_to_nodes(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, eq_node: np.ndarray,
                        eq_dof: np.ndarray, fmt: str, half: bool, path: Path) -> MatrixEntries:
    """Entries addressed by 1-based equation numbers -> (node, DOF) through the equation map."""
    n_eq = len(eq_node)
    top = int(max(rows.max(initial=0), cols.max(initial=0)))
    if rows.size and (min(rows.min(), cols.min()) < 1 or top > n_eq):
        raise FEImportError(f"{path}: equation numbers run to {top}, but the node map covers {n_eq} equations")
    r, c = rows - 1, cols - 1
    return MatrixEntries(eq_node[r], eq_dof[r], eq_node[c], eq_dof[c], vals, fmt, half)


def _abaqus_coordinate(path: Path, node_labels: np.ndarray) -> MatrixEntries:
    data = _numbers([ln for ln in _lines(path) if not ln.lstrip().startswith("*")], 3, path,
                    "Abaqus FORMAT=COORDINATE (row, column, value)")
    rows, cols = data[:, 0].astype(np.int64), data[:, 1].astype(np.int64)
    labels = np.sort(node_labels)
    eq_node = np.repeat(labels, DOFS_PER_NODE)
    eq_dof = np.tile(np.arange(1, DOFS_PER_NODE + 1), len(labels))
    return _equations_to_nodes(rows, cols, data[:, 2], eq_node, eq_dof, "abaqus-coordinate",
                               _one_triangle(rows, cols), path)


def read_ansys_mapping(path) -> tuple[np.ndarray, np.ndarray]:
    """(node, DOF) of each ANSYS equation, (n_eq,) each, from an HBMAT ``.mapping`` file or from
    the node vector of Exudyn's FEM interface (a Matrix Market array "n 1", one node per 3
    equations)."""
    path = Path(path)
    lines = [ln for ln in _lines(path) if ln.strip() and not ln.lstrip().startswith("%")]
    if not lines:
        raise FEImportError(f"`mapping` {path} is empty: give HBMAT's .mapping file or a node vector")
    head = lines[0].split()
    if len(head) == 2 and head[1] == "1" and all(_is_int(t) for t in head):
        nodes = _numbers(lines[1:], 1, path, "node vector").astype(np.int64).ravel()
        if len(nodes) != int(head[0]):
            raise FEImportError(f"`mapping` {path}: header says {head[0]} nodes, the file lists {len(nodes)}")
        return np.repeat(nodes, DOFS_PER_NODE), np.tile(np.arange(1, DOFS_PER_NODE + 1), len(nodes))
    rows = [ln.split() for ln in lines if _is_int(ln.split()[0])]
    if not rows or any(len(r) != 3 for r in rows):
        raise FEImportError(f"`mapping` {path}: expected HBMAT's mapping lines 'equation node DOF' "
                            f"(e.g. '7 3 UX') or a node vector 'n 1' followed by n node numbers")
    eq = np.array([int(r[0]) for r in rows])
    dof_of = lambda t: int(t) if _is_int(t) else _ANSYS_DOF.get(t.upper(), -1)  # noqa: E731
    dof = np.array([dof_of(r[2]) for r in rows])
    if np.any(dof < 1):
        bad = rows[int(np.argmin(dof))][2]
        raise FEImportError(f"`mapping` {path}: DOF label {bad!r} is not one of {sorted(_ANSYS_DOF)}")
    if not np.array_equal(np.sort(eq), np.arange(1, len(eq) + 1)):
        raise FEImportError(f"`mapping` {path}: equation numbers must be 1..{len(eq)}, each once")
    order = np.argsort(eq)
    return np.array([int(r[1]) for r in rows])[order], dof[order]


def _ansys_mmf(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool | None]:
    lines = _lines(path)
    banner = lines[0].lower() if lines else ""
    body = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("%")]
    if banner.startswith("%%matrixmarket") and "coordinate" not in banner:
        raise FEImportError(f"{path}: a dense Matrix Market array; export the sparse matrix (*SMAT, not "
                            f"*DMAT) in coordinate format")
    size = body[0].split()
    if len(size) != 3 or not all(_is_int(t) for t in size):
        raise FEImportError(f"{path}: the Matrix Market size line must be 'rows columns entries', got {body[0]!r}")
    data = _numbers(body[1:], 3, path, "Matrix Market coordinate (row, column, value)")
    if len(data) != int(size[2]):
        raise FEImportError(f"{path}: the size line announces {size[2]} entries, the file holds {len(data)}")
    half = True if "symmetric" in banner else False if "general" in banner else None
    return data[:, 0].astype(np.int64), data[:, 1].astype(np.int64), data[:, 2], half


def _fortran_fields(fmt: str) -> tuple[int, int]:
    """(fields per line, width) of a Fortran format such as (6I13), (1P,3E26.16) or (4D20.12)."""
    m = re.search(r"(\d*)\s*[IEDFG](\d+)", fmt.upper().split(",")[-1])
    if m is None:
        raise FEImportError(f"cannot read the Fortran format {fmt!r} of a Harwell-Boeing file")
    return int(m.group(1) or 1), int(m.group(2))


def _fixed_width(lines: list[str], fmt: str, count: int, path: Path, what: str) -> np.ndarray:
    per, width = _fortran_fields(fmt)
    text = "".join(ln.rstrip("\n").ljust(per * width)[:per * width] for ln in lines)
    fields = [text[k:k + width] for k in range(0, len(text), width)]
    fields = [f for f in fields if f.strip()][:count]
    if len(fields) != count:
        raise FEImportError(f"{path}: Harwell-Boeing {what}: expected {count} numbers, found {len(fields)}")
    return np.array([f.replace("D", "E").replace("d", "e") for f in fields], dtype=float)


def _ansys_hb(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Entries of a Harwell-Boeing file (compressed columns, 1-based), one triangle for RSA."""
    lines = _lines(path)
    try:
        totcrd, ptrcrd, indcrd, valcrd = (int(t) for t in lines[1].split()[:4])
        rhscrd = int(lines[1].split()[4]) if len(lines[1].split()) > 4 else 0
        mxtype = lines[2][:3].upper()
        nrow, ncol, nnz = (int(t) for t in lines[2][3:].split()[:3])
        fmts = re.findall(r"\([^)]*\)", lines[3])
    except (IndexError, ValueError):
        raise FEImportError(f"{path}: not a Harwell-Boeing header (lines 2-4: card counts, type and sizes, "
                            f"formats)") from None
    if mxtype not in ("RSA", "RUA") or len(fmts) < 3:
        raise FEImportError(f"{path}: Harwell-Boeing type {mxtype!r}; supported are real assembled "
                            f"matrices, 'RSA' (symmetric) and 'RUA'")
    start = 5 if rhscrd > 0 else 4
    ptr = _fixed_width(lines[start:start + ptrcrd], fmts[0], ncol + 1, path, "column pointers").astype(np.int64)
    start += ptrcrd
    ind = _fixed_width(lines[start:start + indcrd], fmts[1], nnz, path, "row indices").astype(np.int64)
    start += indcrd
    val = _fixed_width(lines[start:start + valcrd], fmts[2], nnz, path, "values")
    cols = np.repeat(np.arange(1, ncol + 1), np.diff(ptr))
    if len(cols) != nnz:
        raise FEImportError(f"{path}: column pointers cover {len(cols)} entries, the header says {nnz}")
    return ind, cols, val, mxtype == "RSA"


def read_matrix(path, format: str = "auto", *, mapping=None, node_labels=None) -> MatrixEntries:
    """The entries of one exported matrix file, addressed by (node number, DOF).

    Parameters
    ----------
    path : str or Path
    format : str
        One of `FORMATS` or "auto" (from the file's first lines).
    mapping : str or Path, optional
        ANSYS's equation -> node map (needed by "ansys-mmf" and "ansys-hb").
    node_labels : array_like, optional
        All node numbers (needed by "abaqus-coordinate", whose equations run node by node in
        ascending node number).
    """
    path = Path(path)
    if format != "auto" and format not in FORMATS:
        raise ValueError(f"`format` must be 'auto' or one of {list(FORMATS)}, got {format!r}")
    fmt = detect_format(path) if format == "auto" else format
    if fmt == "abaqus-labels":
        return _abaqus_labels(path)
    if fmt == "abaqus-coordinate":
        if node_labels is None:
            raise ValueError("`node_labels` is needed to read an Abaqus FORMAT=COORDINATE file (its "
                             "equations carry no node numbers)")
        return _abaqus_coordinate(path, np.asarray(node_labels, dtype=np.int64))
    if mapping is None:
        raise ValueError(f"`mapping` is needed for {fmt!r} ({FORMATS[fmt]}): ANSYS numbers equations in "
                         "its solver order; give HBMAT's .mapping file or the node vector (docs/fe_import.md)")
    rows, cols, vals, half = _ansys_mmf(path) if fmt == "ansys-mmf" else _ansys_hb(path)
    if half is None:
        half = _one_triangle(rows, cols)
    eq_node, eq_dof = read_ansys_mapping(mapping)
    return _equations_to_nodes(rows, cols, vals, eq_node, eq_dof, fmt, half, path)


# -- nodes ---------------------------------------------------------------------------------------
def _abaqus_nodes(path: Path) -> np.ndarray:
    """Rows (number, x, y, z) of the *NODE blocks of an Abaqus input file."""
    rows, inside = [], False
    for ln in _lines(path):
        s = ln.strip()
        if s.startswith("**") or not s:
            continue
        if s.startswith("*"):
            inside = s.upper().replace(" ", "").split(",")[0] == "*NODE"     # not *NODE OUTPUT etc.
            continue
        if inside:
            rows.append(s)
    if not rows:
        raise FEImportError(f"{path}: no *NODE lines found in this Abaqus input file")
    data = _numbers(rows, 4, path, "*NODE (number, x, y, z)")
    return data


def _node_list(path: Path) -> np.ndarray:
    """Rows (number, x, y, z) of a node list: header lines (not starting with a number) skipped;
    blank-separated with decimal commas (ANSYS's export in some locales) or comma-separated."""
    rows = []
    for ln in _lines(path):
        tokens = ln.split()
        if len(tokens) < 4:
            tokens = [t for t in ln.replace(";", ",").split(",") if t.strip()]
        else:
            tokens = [t.replace(",", ".") for t in tokens]
        if not tokens or not _is_int(tokens[0]):
            continue
        rows.append(" ".join(tokens[:4]))
    if not rows:
        raise FEImportError(f"{path}: no node lines 'number x y z' found")
    return _numbers(rows, 4, path, "node list (number, x, y, z)")


def read_nodes(nodes) -> tuple[np.ndarray, np.ndarray]:
    """(node numbers (n,), coordinates (n, 3)) from a file, a `Mesh` or an array of rows
    (number, x, y, z); see the module docstring."""
    if isinstance(nodes, Mesh):
        pts = np.zeros((nodes.n_nodes, 3))
        pts[:, :nodes.dim] = nodes.points
        return np.arange(1, nodes.n_nodes + 1), pts
    if isinstance(nodes, (str, Path)):
        path = Path(nodes)
        data = _abaqus_nodes(path) if path.suffix.lower() == ".inp" else _node_list(path)
    else:
        try:
            data = np.asarray(nodes, dtype=float)
        except (TypeError, ValueError):
            data = None
        if data is None or data.ndim != 2 or data.shape[1] != 4:
            raise TypeError(f"`nodes` must be a node file, a flexmbs.Mesh or rows (number, x, y, z) of shape "
                            f"(n, 4), got {type(nodes).__name__}"
                            + (f" of shape {data.shape}" if data is not None else ""))
    labels = data[:, 0].astype(np.int64)
    if np.any(labels != data[:, 0]):
        raise ValueError("`nodes`: node numbers must be integers")
    uniq, counts = np.unique(labels, return_counts=True)
    if np.any(counts > 1):
        raise ValueError(f"`nodes`: node numbers {uniq[counts > 1][:5].tolist()} appear more than once")
    return labels, data[:, 1:4].copy()


# -- assembling in flexmbs's order -----------------------------------------------------------------
def _assemble(entries: MatrixEntries, labels: np.ndarray, name: str) -> sparse.csr_array:
    """The matrix in flexmbs's DOF order (3 per node, node order of ``labels``)."""
    for what, dof in (("row", entries.row_dof), ("column", entries.col_dof)):
        if dof.size and (dof.min() < 1 or dof.max() > DOFS_PER_NODE):
            bad = int(dof[(dof < 1) | (dof > DOFS_PER_NODE)][0])
            raise ValueError(f"`{name}` has {what} DOF {bad}: flexmbs imports solids, with the translations "
                             f"1, 2, 3 of each node only (no rotations 4-6, no other DOFs); mesh the part with "
                             f"solid elements")
    nodes = np.concatenate([entries.row_node, entries.col_node])
    if nodes.size and nodes.min() < 1:
        raise ValueError(f"`{name}` has entries at node numbers <= 0 (Abaqus's internal nodes of constraints "
                         "or MPCs); remove the constraints from the matrix-generation step")
    order = np.argsort(labels)
    pos = np.searchsorted(labels[order], nodes)
    known = (pos < len(labels)) & (labels[order][np.minimum(pos, len(labels) - 1)] == nodes)
    if not np.all(known):
        missing = np.unique(nodes[~known])
        raise ValueError(f"`{name}` has entries at node numbers {missing[:5].tolist()} ({len(missing)} in all) "
                         "that are not in `nodes`")
    index = order[pos]
    n_e = len(entries.value)
    r = index[:n_e] * DOFS_PER_NODE + entries.row_dof - 1
    c = index[n_e:] * DOFS_PER_NODE + entries.col_dof - 1
    v = entries.value
    if entries.symmetric_half:                              # mirror the stored triangle
        off = r != c
        r, c, v = np.concatenate([r, c[off]]), np.concatenate([c, r[off]]), np.concatenate([v, v[off]])
    n = len(labels) * DOFS_PER_NODE
    A = sparse.csr_array(sparse.coo_array((v, (r, c)), shape=(n, n)))
    A.sum_duplicates()
    return A


def import_body(mass, stiffness, nodes, *, format: str = "auto", mapping=None) -> ImportedBody:
    """An `ImportedBody` from the mass and stiffness files of Abaqus or ANSYS and the nodes.

    Parameters
    ----------
    mass, stiffness : str or Path
        Matrix files in one of `FORMATS` (``format="auto"``: told from their first lines).
    nodes : str, Path, Mesh or array (n, 4)
        The node coordinates: an Abaqus .inp (``*NODE``), a node list file, a `Mesh` (nodes
        1..n) or rows (number, x, y, z).  Every node must appear in the matrices.
    mapping : str or Path, optional
        ANSYS only: HBMAT's ``.mapping`` file or the node vector of the equations.

    Examples
    --------
    >>> body = import_body("part_MASS1.mtx", "part_STIF1.mtx", "part.inp")   # doctest: +SKIP
    >>> inv = body.invariants()                                              # doctest: +SKIP
    """
    labels, points = read_nodes(nodes)
    out = {}
    for name, path in (("mass", mass), ("stiffness", stiffness)):
        if not isinstance(path, (str, Path)):
            raise TypeError(f"`{name}` must be the path of a matrix file, got {type(path).__name__}")
        entries = read_matrix(path, format, mapping=mapping, node_labels=labels)
        out[name] = (_assemble(entries, labels, name), entries.format)
    (M, fm), (K, fk) = out["mass"], out["stiffness"]
    used = np.zeros(len(labels), bool)
    used[np.flatnonzero(np.asarray(abs(M).sum(axis=1)).ravel().reshape(-1, DOFS_PER_NODE).any(axis=1))] = True
    if not used.all():
        idle = labels[~used]
        raise ValueError(f"`nodes` lists {len(idle)} node(s) without mass, e.g. {idle[:5].tolist()}: give only "
                         "the nodes of the exported part")
    return ImportedBody(M, K, points, labels, (fm, fk))
