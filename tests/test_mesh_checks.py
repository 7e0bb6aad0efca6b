"""Meshes never lose cells silently (issue 11, item 5): cells the element cannot take, duplicate
nodes that split a body, parts without supports, empty and cell-less files, second-order files."""
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs import cli
from flexmbs.mesh import Mesh, MeshError, read, write
from flexmbs.mesh.faces import boundary_faces, match_faces
from flexmbs.mesh.topology import coincident_nodes, parts

MESHES = Path(__file__).resolve().parents[1] / "meshes"
STEEL = fm.Material(E=2.0e11, rho=7800.0, nu=0.3)


def test_quads_and_triangles_given_to_quad4_are_refused():
    """Half the plate as triangles: Quad4 would drop them without a word."""
    m = fm.generate.rectangle(4, 2, 1.0, 0.5)
    quads = m.cells["quad"]
    left, right = quads[[0, 1, 4, 5]], quads[[2, 3, 6, 7]]
    tris = np.vstack([right[:, [0, 1, 2]], right[:, [0, 2, 3]]])
    mixed = Mesh(m.points, {"quad": left, "triangle": tris}, node_sets=m.node_sets)
    with pytest.raises(ValueError, match=r"`mesh` has 8 triangle cells besides its 4 quad cells, and Quad4 takes "
                                         r"quad cells only: the others would be left out"):
        fm.Model(mixed, fm.Quad4(STEEL, 0.01), fixed=[("left", "all")])
    with pytest.raises(ValueError, match="has 4 quad cells besides its 8 triangle cells, and Tri3"):
        fm.Model(mixed, fm.Tri3(STEEL, 0.01), fixed=[("left", "all")])


def test_boundary_cells_are_not_left_out_cells():
    """Lower-dimensional cells (boundary lines of a plate, faces of a solid) carry sets: accepted."""
    fm.Model(read(MESHES / "plate_quad.msh"), fm.Quad4(STEEL, 0.01), fixed=[("left", "all")])
    fm.Model(read(MESHES / "bar_tetra10.msh"), fm.Tet10(STEEL), fixed=[("clamped", "all")])


def split_plate():
    """A 4 x 1 quad plate whose right half has its own copy of the middle nodes (x = 0.5)."""
    m = fm.generate.rectangle(4, 1, 1.0, 0.25)
    quads = m.cells["quad"].copy()
    middle = np.flatnonzero(np.isclose(m.points[:, 0], 0.5))             # nodes 2 and 7
    copies = len(m.points) + np.arange(len(middle))
    points = np.vstack([m.points, m.points[middle]])
    right = quads[:, 0] >= 2                                               # cells right of x = 0.5
    for old, new in zip(middle, copies):
        quads[right] = np.where(quads[right] == old, new, quads[right])
    return Mesh(points, {"quad": quads}, node_sets=m.node_sets), middle, copies


def test_a_duplicate_node_that_splits_the_body_is_reported_as_such():
    mesh, middle, copies = split_plate()
    n, labels = parts(mesh.n_nodes, mesh.cells["quad"])
    assert n == 2
    np.testing.assert_array_equal(coincident_nodes(mesh.points, labels), np.column_stack([middle, copies]))
    with pytest.raises(ValueError, match=rf"falls apart into 2 parts because of duplicate nodes: nodes {middle[0]} "
                                         rf"and {copies[0]} are at the same position \(0.5, 0\) but no cell joins "
                                         r"them \(2 such pair\(s\)"):
        fm.Model(mesh, fm.Quad4(STEEL, 0.01), fixed=[("left", "all")])


def test_a_disconnected_part_without_support_is_named():
    a = fm.generate.line(2, 1.0)
    points = np.vstack([a.points, a.points + [0.0, 1.0]])                  # a second bar, 1 m above
    cells = np.vstack([a.cells["line"], a.cells["line"] + 3])
    mesh = Mesh(points, {"line": cells}, node_sets={"a": [0], "b": [3]})
    beam = fm.BeamEB2D(STEEL, 1e-4, 1e-9)
    with pytest.raises(ValueError, match=r"2 disconnected parts and 1 of them have no support: part 2: 3 nodes "
                                         r"\(node 3, ...\) from \(0, 1\) to \(1, 1\)"):
        fm.Model(mesh, beam, fixed=[("a", "all")])
    fm.Model(mesh, beam, fixed=[("a", "all"), ("b", "all")])                # each part supported: a valid model


@pytest.mark.parametrize("content, message", [
    (b"", "is empty (0 bytes)"),
    (b" \n\n", "is empty (3 bytes, whitespace only)"),
    (b"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n", "is a Gmsh file without $Nodes and $Elements sections: it "
                                                "holds no nodes and no cells"),
    (b"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n1\n1 0 0 0\n$EndNodes\n",
     "is a Gmsh file without $Elements section: it holds no cells"),
    (b"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n1\n1 0 0 0\n$EndNodes\n$Elements\n0\n$EndElements\n",
     "contains no cells (only 1 nodes)"),
])
def test_empty_and_cell_less_files_have_their_own_message(content, message, tmp_path):
    path = tmp_path / "m.msh"
    path.write_bytes(content)
    with pytest.raises(MeshError) as exc:
        read(path)
    assert message in str(exc.value)
    assert "corrupt" not in str(exc.value) and "SaveAll" not in str(exc.value)


def test_second_order_gmsh_files_load_and_mesh_info_reads_them(capsys):
    mesh = read(MESHES / "bar_tetra10.msh")
    # every triangle6 is the outward face of a tetra10 cell, mid-edge nodes at the edge midpoints
    tri = mesh.cells["triangle6"]
    _, own = match_faces(mesh, "tetra10", {"triangle6": tri})
    np.testing.assert_array_equal(own, tri)
    X = mesh.points
    for k, (i, j) in enumerate([(0, 1), (1, 2), (2, 0)]):
        np.testing.assert_allclose(X[tri[:, 3 + k]], 0.5 * (X[tri[:, i]] + X[tri[:, j]]), atol=1e-15)
    assert cli.main(["mesh", "info", str(MESHES / "bar_tetra10.msh")]) == 0
    out = capsys.readouterr().out
    assert "cells: tetra10 24, triangle6 12" in out and "tip (triangle6 2)" in out


@pytest.mark.parametrize("cell", ["tetra", "tetra10", "hexahedron"])
def test_boundary_faces_are_outward_and_round_trip_through_gmsh(cell, tmp_path):
    """The boundary faces of a box close its surface: int n dA = 0 and int x . n dA / 3 = volume."""
    m = fm.generate.box(2, 2, 1, 1.0, 0.5, 0.2, cell=cell)
    faces = boundary_faces(m, cell)
    X = m.points[faces[:, :3]]
    # area vectors n A: half the cross product for triangles, the whole one for these planar rectangles
    nA = np.cross(X[:, 1] - X[:, 0], X[:, 2] - X[:, 0]) * (1.0 if cell == "hexahedron" else 0.5)
    centre = m.points[faces[:, :4 if cell == "hexahedron" else 3]].mean(axis=1)
    assert np.abs(nA.sum(axis=0)).max() < 1e-12
    assert np.einsum("fi,fi->", centre, nA) / 3 == pytest.approx(1.0 * 0.5 * 0.2)
    face_type = {"tetra": "triangle", "tetra10": "triangle6", "hexahedron": "quad"}[cell]
    both = Mesh(m.points, {cell: m.cells[cell], face_type: faces},
                element_sets={"skin": {face_type: np.arange(len(faces))}})
    write(both, tmp_path / "m.msh")
    back = read(tmp_path / "m.msh")
    np.testing.assert_array_equal(back.cells[face_type], faces)


def test_mesh_info_reports_split_bodies_and_mixed_cells(tmp_path, capsys):
    mesh, middle, copies = split_plate()
    write(mesh, tmp_path / "split.vtu")
    assert cli.main(["mesh", "info", str(tmp_path / "split.vtu")]) == 1
    assert (f"body: quad cells in 2 parts; 2 pair(s) of duplicate nodes that no cell joins split it (e.g. nodes "
            f"{middle[0]} and {copies[0]} at (0.5, 0))") in capsys.readouterr().out
    m = fm.generate.rectangle(2, 1, 1.0, 0.5)
    quad = m.cells["quad"]
    mixed = Mesh(m.points, {"quad": quad[:1], "triangle": np.vstack([quad[1:, [0, 1, 2]], quad[1:, [0, 2, 3]]])})
    write(mixed, tmp_path / "mixed.vtu")
    assert cli.main(["mesh", "info", str(tmp_path / "mixed.vtu")]) == 1
    assert "body: quad and triangle cells in 1 part; 2 cell types of dimension 2" in capsys.readouterr().out


def _graphs():
    """(name, n_nodes, rows, cols): graphs numbered at random, as meshes from files are."""
    rng = np.random.default_rng(7)
    n = 2000
    path = rng.permutation(n)
    tree = np.arange(1, n)
    grid = np.arange(12 ** 3).reshape(12, 12, 12)
    edges = np.vstack([np.c_[grid[:-1].ravel(), grid[1:].ravel()], np.c_[grid[:, :-1].ravel(), grid[:, 1:].ravel()],
                       np.c_[grid[:, :, :-1].ravel(), grid[:, :, 1:].ravel()]])
    relabel = rng.permutation(12 ** 3)
    return [("path", n, path[:-1], path[1:]), ("binary tree", n, rng.permutation(n)[tree], (tree - 1) // 2),
            ("3-D grid", 12 ** 3, relabel[edges[:, 0]], relabel[edges[:, 1]]),
            ("random edges, many parts", n, rng.integers(0, n, 1200), rng.integers(0, n, 1200)),
            ("no edges", 4, np.zeros(0, int), np.zeros(0, int))]


@pytest.mark.parametrize("name, n_nodes, rows, cols", _graphs(), ids=[g[0] for g in _graphs()])
def test_connected_components_are_scipys_with_the_smallest_node_as_label(name, n_nodes, rows, cols):
    """`smallest_connected_node` (numpy, no scipy.sparse.csgraph import at every Model) gives
    the partition of ``scipy.sparse.csgraph.connected_components``, each part labelled by its
    smallest node."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    from flexmbs.mesh.topology import smallest_connected_node
    labels = smallest_connected_node(n_nodes, rows, cols)
    n_ref, ref = connected_components(coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_nodes, n_nodes)),
                                      directed=False)
    assert len(np.unique(labels)) == n_ref and len(set(zip(labels.tolist(), ref.tolist()))) == n_ref
    smallest = np.full(n_ref, n_nodes)
    np.minimum.at(smallest, ref, np.arange(n_nodes))
    assert np.array_equal(labels, smallest[ref])
