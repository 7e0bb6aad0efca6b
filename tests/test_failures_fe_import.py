"""Bad input to `flexmbs.io.fe_import`: each row is (what is given, the message it now prints)."""
import numpy as np
import pytest

from flexmbs.io.fe_import import FEImportError, ImportedBody, import_body, read_nodes
from scipy import sparse
from flexmbs.assembly.assembler import dense_array

# a 2-node "part": the lower triangle of a 6 x 6 matrix in Abaqus's labelled format
GOOD = "1, 1, 1, 1, 2.0\n1, 2, 1, 2, 2.0\n1, 3, 1, 3, 2.0\n2, 1, 2, 1, 2.0\n2, 2, 2, 2, 2.0\n2, 3, 2, 3, 2.0\n" \
       "2, 1, 1, 1, 1.0\n2, 2, 1, 2, 1.0\n2, 3, 1, 3, 1.0\n"
NODES = np.array([[1, 0.0, 0.0, 0.0], [2, 1.0, 0.0, 0.0]])


def files(tmp_path, mass=GOOD, stiffness=GOOD, **extra):
    (tmp_path / "m.mtx").write_text(mass)
    (tmp_path / "k.mtx").write_text(stiffness)
    for name, text in extra.items():
        (tmp_path / name).write_text(text)
    return tmp_path / "m.mtx", tmp_path / "k.mtx"


def rotations(tmp_path):
    m, k = files(tmp_path, stiffness=GOOD + "1, 4, 1, 4, 1.0\n")
    import_body(m, k, NODES)


def internal_nodes(tmp_path):
    m, k = files(tmp_path, stiffness=GOOD + "-1, 1, -1, 1, 1.0\n")
    import_body(m, k, NODES)


def node_not_listed(tmp_path):
    m, k = files(tmp_path)
    import_body(m, k, NODES[:1])


def node_without_mass(tmp_path):
    m, k = files(tmp_path)
    import_body(m, k, np.vstack([NODES, [3, 2.0, 0.0, 0.0]]))


def nastran_file(tmp_path):
    m, k = files(tmp_path, mass="DMIG    KAAX           0       6       2       0\n")
    import_body(m, k, NODES)


def bad_format_name(tmp_path):
    m, k = files(tmp_path)
    import_body(m, k, NODES, format="nastran")


def mmf_without_mapping(tmp_path):
    mmf = "%%MatrixMarket matrix coordinate real symmetric\n6 6 1\n1 1 2.0\n"
    m, k = files(tmp_path, mass=mmf, stiffness=mmf)
    import_body(m, k, NODES)


def dense_mmf(tmp_path):
    dense = "%%MatrixMarket matrix array real general\n6 6\n" + "1.0\n" * 36
    m, k = files(tmp_path, mass=dense, stiffness=dense, **{"map.txt": "2 1\n1\n2\n"})
    import_body(m, k, NODES, mapping=tmp_path / "map.txt")


def mmf_count(tmp_path):
    mmf = "%%MatrixMarket matrix coordinate real symmetric\n6 6 3\n1 1 2.0\n"
    m, k = files(tmp_path, mass=mmf, stiffness=mmf, **{"map.txt": "2 1\n1\n2\n"})
    import_body(m, k, NODES, mapping=tmp_path / "map.txt")


def mapping_short(tmp_path):
    mmf = "%%MatrixMarket matrix coordinate real symmetric\n9 9 1\n9 9 2.0\n"
    m, k = files(tmp_path, mass=mmf, stiffness=mmf, **{"map.txt": "2 1\n1\n2\n"})
    import_body(m, k, NODES, mapping=tmp_path / "map.txt")


def mapping_dof_label(tmp_path):
    mmf = "%%MatrixMarket matrix coordinate real symmetric\n1 1 1\n1 1 2.0\n"
    m, k = files(tmp_path, mass=mmf, stiffness=mmf, **{"map.txt": "Matrix Eqn Node DOF\n1 1 TEMP\n"})
    import_body(m, k, NODES, mapping=tmp_path / "map.txt")


def complex_hb(tmp_path):
    hb = (f"{'title':72s}{'key':8s}\n{3:14d}{1:14d}{1:14d}{1:14d}{0:14d}\n{'CSA':14s}{1:14d}{1:14d}{1:14d}{0:14d}\n"
          f"{'(8I10)':16s}{'(8I10)':16s}{'(4E20.12)':20s}\n         1         2\n         1\n"
          f"{1.0:20.12E}{0.0:20.12E}\n")
    m, k = files(tmp_path, mass=hb, stiffness=hb, **{"map.txt": "Matrix Eqn Node DOF\n1 1 UX\n"})
    import_body(m, k, NODES, mapping=tmp_path / "map.txt")


def missing_file(tmp_path):
    import_body(tmp_path / "nowhere.mtx", tmp_path / "k.mtx", NODES)


def mass_not_a_path(tmp_path):
    import_body(np.eye(6), "k.mtx", NODES)


def nodes_shape(tmp_path):
    read_nodes(np.zeros((2, 3)))


def nodes_twice(tmp_path):
    read_nodes(np.array([[1, 0, 0, 0], [1, 1, 0, 0]]))


def shell_mass(tmp_path):
    M = sparse.csr_array(np.diag([1.0, 1.0, 2.0]))            # z mass differs from x: not m_s (x) I_3
    ImportedBody(M, M, np.zeros((1, 3)), np.array([1]), ("abaqus-labels",) * 2).invariants()


def wrong_column_count(tmp_path):
    m, k = files(tmp_path, mass=GOOD + "1, 1, 2.0\n")
    import_body(m, k, NODES, format="abaqus-labels")


CASES = [
    ("a stiffness with a rotational DOF", rotations, ValueError,
     "`stiffness` has row DOF 4: flexmbs imports solids, with the translations 1, 2, 3"),
    ("entries at Abaqus internal nodes", internal_nodes, ValueError, "node numbers <= 0 .Abaqus's internal nodes"),
    ("a matrix node missing from `nodes`", node_not_listed, ValueError,
     r"entries at node numbers \[2\] \(1 in all\) that are not in `nodes`"),
    ("a listed node without mass", node_without_mass, ValueError, r"`nodes` lists 1 node\(s\) without mass, e.g. \[3\]"),
    ("a NASTRAN DMIG file", nastran_file, FEImportError, "not a supported matrix file .* supported are 'abaqus-labels'"),
    ("format='nastran'", bad_format_name, ValueError, r"`format` must be 'auto' or one of \['abaqus-labels'"),
    ("ANSYS MMF without node map", mmf_without_mapping, ValueError, "`mapping` is needed for 'ansys-mmf'"),
    ("a dense *DMAT export", dense_mmf, FEImportError, r"a dense Matrix Market array; export the sparse matrix \(\*SMAT"),
    ("MMF entry count wrong", mmf_count, FEImportError, "the size line announces 3 entries, the file holds 1"),
    ("equations beyond the node map", mapping_short, FEImportError,
     "equation numbers run to 9, but the node map covers 6 equations"),
    ("a mapping DOF label that is not a displacement", mapping_dof_label, FEImportError,
     "DOF label 'TEMP' is not one of"),
    ("a complex Harwell-Boeing matrix", complex_hb, FEImportError, "Harwell-Boeing type 'CSA'; supported are real"),
    ("a missing file", missing_file, FEImportError, "cannot read .*nowhere.mtx: No such file"),
    ("a matrix instead of a file", mass_not_a_path, TypeError, "`mass` must be the path of a matrix file, got ndarray"),
    ("nodes of shape (2, 3)", nodes_shape, TypeError, r"`nodes` must be .* rows \(number, x, y, z\) of shape \(n, 4\), "
                                                      r"got ndarray of shape \(2, 3\)"),
    ("a node number twice", nodes_twice, ValueError, r"node numbers \[1\] appear more than once"),
    ("a mass that is not m_s (x) I_3", shell_mass, ValueError,
     r"not that of a solid with translational DOFs \(M = m_s \(x\) I_3\): its \(z, z\) node blocks"),
    ("a line with 3 numbers in a labelled file", wrong_column_count, FEImportError,
     r"expects 5 numbers per line, line \['1', '1', '2.0'\] has 3"),
]


@pytest.mark.parametrize("what, call, error, message", CASES, ids=[c[0] for c in CASES])
def test_bad_input_message(tmp_path, what, call, error, message):
    with pytest.raises(error, match=message):
        call(tmp_path)


def test_good_two_node_part_imports(tmp_path):
    """The table's base files are valid: the failures above come from the one change each makes."""
    m, k = files(tmp_path)
    body = import_body(m, k, NODES)
    np.testing.assert_array_equal(dense_array(body.M)[:3, 3:], np.eye(3))
    assert body.invariants().mass == pytest.approx(6.0)               # 1^T m_s 1 = 2 + 2 + 1 + 1
