"""Import of M and K from Abaqus and ANSYS files that the tests write from flexmbs's own matrices.

Each writer below produces a file in one of the formats of `flexmbs.io.fe_import.FORMATS` from
a native flexmbs `Model` (no supports, so M and K cover every node): node numbers that are not
1..n, entries in shuffled order, one triangle stored, ANSYS equations in a permuted (solver)
order with its node map.  The imported body must equal the native one to 1e-10 (relative to the
largest entry): M, K, the node coordinates and the inertia invariants.
"""
import numpy as np
import pytest
from scipy import sparse

import flexmbs as fm
from flexmbs.io.fe_import import FORMATS, import_body, read_nodes

ANSYS_DOF = ("UX", "UY", "UZ")


def native(cell="tetra"):
    """A Tet4 (or Tet10) steel box without supports: M and K on all its nodes."""
    mesh = fm.generate.box(2, 1, 1, 1.0, 0.2, 0.2, cell=cell)
    el = (fm.Tet4 if cell == "tetra" else fm.Tet10)(fm.Material(2.1e11, 7800.0, 0.3))
    return fm.Model(mesh, el)


def node_labels(n):
    """Node numbers as a code might give them: not 1..n, not in mesh order."""
    return 1000 + 7 * np.random.default_rng(3).permutation(n)


def lower_entries(A):
    """(row, col, value) of the lower triangle of the symmetric A, 0-based, in shuffled order."""
    C = sparse.coo_array(sparse.tril(sparse.csr_array(A)))
    order = np.random.default_rng(5).permutation(C.nnz)
    return C.row[order], C.col[order], C.data[order]


def write_node_list(path, labels, points):
    """ANSYS's node export: a header line, then 'number x y z' with blanks (decimal points)."""
    lines = ["Node Number\tX Location (m)\tY Location (m)\tZ Location (m)"]
    lines += [f"{k}\t{x:.17g}\t{y:.17g}\t{z:.17g}" for k, (x, y, z) in zip(labels, points)]
    path.write_text("\n".join(lines) + "\n")


def write_abaqus_inp(path, labels, points):
    """An Abaqus input file with its *NODE block and other keyword lines around it (*NODE PRINT
    and *NODE OUTPUT blocks are not nodes)."""
    lines = ["*HEADING", "box", "** a comment", "*NODE, NSET=ALL"]
    lines += [f"{k}, {x:.17g}, {y:.17g}, {z:.17g}" for k, (x, y, z) in zip(labels, points)]
    lines += ["*ELEMENT, TYPE=C3D4, ELSET=PART", "1, 1000, 1007, 1014, 1021", "*STEP", "*NODE PRINT, NSET=ALL",
              "U", "*NODE OUTPUT", "U, RF", "*END STEP"]
    path.write_text("\n".join(lines) + "\n")


def write_abaqus_labels(path, A, labels):
    """*MATRIX OUTPUT, FORMAT=MATRIX INPUT: 'node, dof, node, dof, value' of one triangle."""
    r, c, v = lower_entries(A)
    lines = [f"{labels[i // 3]},{i % 3 + 1}, {labels[j // 3]},{j % 3 + 1}, {x:.17e}" for i, j, x in zip(r, c, v)]
    path.write_text("\n".join(lines) + "\n")


def write_abaqus_coordinate(path, A, labels):
    """*MATRIX OUTPUT, FORMAT=COORDINATE: 'row, column, value', equations node by node in
    ascending node number."""
    rank = np.argsort(np.argsort(labels))                 # position of each node in ascending order
    r, c, v = lower_entries(A)
    eq = lambda i: 3 * rank[i // 3] + i % 3 + 1          # noqa: E731
    lines = [f"{eq(i)}, {eq(j)}, {x:.17e}" for i, j, x in zip(r, c, v)]
    path.write_text("\n".join(lines) + "\n")


def solver_order(n_dofs):
    """A permutation of the equations by node blocks, as ANSYS's solver numbering: equation k
    (0-based) holds flexmbs DOF perm[k]."""
    blocks = np.random.default_rng(7).permutation(n_dofs // 3)
    return (3 * blocks[:, None] + np.arange(3)).ravel()


def permuted(A, perm):
    A = sparse.csr_array(A)
    return sparse.csr_array(A[perm][:, perm])


def write_mmf(path, A, perm):
    """*EXPORT, MMF: Matrix Market coordinate, symmetric (one triangle), 1-based equations."""
    r, c, v = lower_entries(permuted(A, perm))
    lines = ["%%MatrixMarket matrix coordinate real symmetric", "% written by the tests",
             f"{A.shape[0]} {A.shape[0]} {len(v)}"]
    lines += [f"{i + 1} {j + 1} {x:.17e}" for i, j, x in zip(r, c, v)]
    path.write_text("\n".join(lines) + "\n")


def write_node_vector(path, perm, labels):
    """The node vector Exudyn reads: Matrix Market array 'n 1', the node of each 3 equations."""
    nodes = labels[perm[0::3] // 3]
    path.write_text("%%MatrixMarket matrix array integer general\n" + f"{len(nodes)} 1\n"
                    + "\n".join(str(k) for k in nodes) + "\n")


def write_hbmat_mapping(path, perm, labels):
    """HBMAT's .mapping: a header, then 'equation node DOF-label' per equation."""
    lines = ["Matrix Eqn   Node   DOF"]
    lines += [f"{k + 1:10d} {labels[i // 3]:6d}  {ANSYS_DOF[i % 3]}" for k, i in enumerate(perm)]
    path.write_text("\n".join(lines) + "\n")


def write_harwell_boeing(path, A, perm, rhs=False):
    """HBMAT, ASCII: Harwell-Boeing 'RSA' (lower triangle by columns), fixed-width fields with
    Fortran D exponents and no blank between fields; ``rhs``: with a load vector (HBMAT's
    Rhs = YES: a fifth header line and the vector's cards after the values)."""
    L = sparse.csc_array(sparse.tril(permuted(A, perm)))
    L.sort_indices()
    n = A.shape[0]

    def cards(values, per, fmt):
        rows = [values[k:k + per] for k in range(0, len(values), per)]
        return ["".join(fmt(x) for x in row) for row in rows]

    ptr = cards(L.indptr + 1, 8, lambda x: f"{x:10d}")
    ind = cards(L.indices + 1, 8, lambda x: f"{x:10d}")
    val = cards(L.data, 4, lambda x: f"{x:20.12E}".replace("E", "D"))
    load = cards(np.linspace(-1.0, 1.0, n), 4, lambda x: f"{x:20.12E}") if rhs else []
    head = [f"{'Stiffness matrix written by the tests':72s}{'KEY':8s}",
            f"{len(ptr) + len(ind) + len(val) + len(load):14d}{len(ptr):14d}{len(ind):14d}{len(val):14d}"
            f"{len(load):14d}",
            f"{'RSA':14s}{n:14d}{n:14d}{L.nnz:14d}{0:14d}",
            f"{'(8I10)':16s}{'(8I10)':16s}{'(4D20.12)':20s}{'(4E20.12)' if rhs else '':20s}"]
    if rhs:
        head.append(f"{'F':14s}{1:14d}{0:14d}")
    path.write_text("\n".join(head + ptr + ind + val + load) + "\n")


def write_harwell_boeing_rhs(path, A, perm):
    write_harwell_boeing(path, A, perm, rhs=True)


def close(A, B, tol=1e-10):
    A = A.toarray() if sparse.issparse(A) else np.asarray(A)
    B = B.toarray() if sparse.issparse(B) else np.asarray(B)
    return np.abs(A - B).max() <= tol * max(np.abs(B).max(), 1e-300)


def assert_equals_native(body, md, labels):
    """M, K and points of ``body`` in the native model's node order equal the model's."""
    order = np.argsort(body.node_labels)[np.searchsorted(np.sort(body.node_labels), labels)]
    dofs = (3 * order[:, None] + np.arange(3)).ravel()
    assert close(body.M[dofs][:, dofs], md.M)
    assert close(body.K[dofs][:, dofs], md.K)
    assert close(body.points[order], md.mesh.points)


def abaqus_files(tmp_path, md, labels, fmt):
    write = write_abaqus_labels if fmt == "abaqus-labels" else write_abaqus_coordinate
    write(tmp_path / "box_MASS1.mtx", md.M, labels)
    write(tmp_path / "box_STIF1.mtx", md.K, labels)
    write_abaqus_inp(tmp_path / "box.inp", labels, md.mesh.points)
    return tmp_path / "box_MASS1.mtx", tmp_path / "box_STIF1.mtx", tmp_path / "box.inp"


@pytest.mark.parametrize("fmt", ["abaqus-labels", "abaqus-coordinate"])
def test_abaqus_body_equals_native(tmp_path, fmt):
    md = native()
    labels = node_labels(md.mesh.n_nodes)
    mass, stiff, inp = abaqus_files(tmp_path, md, labels, fmt)
    body = import_body(mass, stiff, inp)
    assert body.formats == (fmt, fmt)
    assert_equals_native(body, md, labels)


@pytest.mark.parametrize("writer, mapping", [(write_mmf, write_node_vector), (write_mmf, write_hbmat_mapping),
                                             (write_harwell_boeing, write_hbmat_mapping),
                                             (write_harwell_boeing_rhs, write_hbmat_mapping)])
def test_ansys_body_equals_native(tmp_path, writer, mapping):
    md = native()
    labels = node_labels(md.mesh.n_nodes)
    perm = solver_order(md.n_dofs)
    writer(tmp_path / "mass.txt", md.M, perm)
    writer(tmp_path / "stiff.txt", md.K, perm)
    mapping(tmp_path / "nodes.mapping", perm, labels)
    write_node_list(tmp_path / "nodes.txt", labels, md.mesh.points)
    body = import_body(tmp_path / "mass.txt", tmp_path / "stiff.txt", tmp_path / "nodes.txt",
                       mapping=tmp_path / "nodes.mapping")
    expected = "ansys-mmf" if writer is write_mmf else "ansys-hb"
    assert body.formats == (expected, expected)
    assert_equals_native(body, md, labels)


@pytest.mark.parametrize("cell", ["tetra", "tetra10"])
def test_invariants_from_mass_equal_the_integrated_ones(tmp_path, cell):
    """S[a, b], d[a, b], m_O, mass, s and J from m_s and the node coordinates equal those that
    `assemble_invariants` integrates element by element (linear and quadratic tetrahedra)."""
    md = native(cell)
    labels = np.arange(1, md.mesh.n_nodes + 1)
    mass, stiff, _ = abaqus_files(tmp_path, md, labels, "abaqus-labels")
    inv = import_body(mass, stiff, md.mesh).invariants()
    ref = md.inv
    assert sorted(inv.S) == sorted(ref.S)
    for key in ref.S:
        assert close(inv.S[key], ref.S[key])
    for name in ("m_O", "d", "s", "J", "g"):
        assert close(getattr(inv, name), getattr(ref, name)), name
    assert abs(inv.mass - ref.mass) <= 1e-12 * ref.mass
    assert abs(inv.mass - 7800.0 * 1.0 * 0.2 * 0.2) <= 1e-12 * ref.mass     # rho V of the box
    for Gi, Gref in zip(inv.G, ref.G):
        assert (Gi is None) == (Gref is None) and (Gi is None or close(Gi, Gref))


def test_both_triangles_are_taken_as_they_are(tmp_path):
    """A file with the whole symmetric matrix is not mirrored a second time."""
    md = native()
    labels = np.arange(1, md.mesh.n_nodes + 1)
    for name, A in (("m.mtx", md.M), ("k.mtx", md.K)):
        C = sparse.coo_array(A)
        (tmp_path / name).write_text("\n".join(f"{labels[i // 3]}, {i % 3 + 1}, {labels[j // 3]}, {j % 3 + 1}, {x:.17e}"
                                               for i, j, x in zip(C.row, C.col, C.data)) + "\n")
    body = import_body(tmp_path / "m.mtx", tmp_path / "k.mtx", md.mesh)
    assert close(body.M, md.M) and close(body.K, md.K)


def test_read_nodes_decimal_commas(tmp_path):
    """ANSYS's node export in a locale with decimal commas."""
    (tmp_path / "n.txt").write_text("Node\tX\tY\tZ\n3\t0,5\t1,25\t-2\n1\t0\t0\t0\n")
    labels, pts = read_nodes(tmp_path / "n.txt")
    assert labels.tolist() == [3, 1]
    np.testing.assert_array_equal(pts, [[0.5, 1.25, -2.0], [0.0, 0.0, 0.0]])


def test_formats_are_the_documented_ones():
    """docs/fe_import.md names every supported format."""
    from pathlib import Path
    text = (Path(__file__).parents[1] / "docs" / "fe_import.md").read_text()
    for name in FORMATS:
        assert f"`{name}`" in text
