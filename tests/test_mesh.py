"""Meshes: generators, sample files, write/read round trips and every error."""
import importlib.util
from pathlib import Path

import meshio
import numpy as np
import pytest

from flexmbs.mesh import Mesh, MeshError, check_orientation, generate, read, signed_measure, write
from flexmbs.mesh.generate import TETRA10_EDGES

MESHES = Path(__file__).resolve().parents[1] / "meshes"
UNIT_TET = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])


def on_plane(mesh, axis, value):
    return np.flatnonzero(mesh.points[:, axis] == value)


def assert_same_mesh(a: Mesh, b: Mesh):
    """Same points, cells and sets; ``b`` may have more node sets (one per element set)."""
    np.testing.assert_array_equal(a.points, b.points)
    assert a.cells.keys() == b.cells.keys()
    for t in a.cells:
        np.testing.assert_array_equal(a.cells[t], b.cells[t])
    for name, nodes in a.node_sets.items():
        np.testing.assert_array_equal(nodes, b.node_sets[name], err_msg=name)
    assert a.element_sets.keys() == b.element_sets.keys()
    for name, by_type in a.element_sets.items():
        assert by_type.keys() == b.element_sets[name].keys()
        for t, idx in by_type.items():
            np.testing.assert_array_equal(idx, b.element_sets[name][t])


# ------------------------------------------------------------------------- generators
def test_line():
    m = generate.line(4, 2.0, dim=3, direction=[0, 0, 1], origin=[1, 0, 0])
    assert (m.n_nodes, m.dim, m.cells["line"].shape) == (5, 3, (4, 2))
    np.testing.assert_allclose(m.points[m.nodes("end")], [[1, 0, 2]])
    assert signed_measure(m.points, "line", m.cells["line"]).sum() == pytest.approx(2.0)


@pytest.mark.parametrize("cell, per_grid_cell", [("quad", 1), ("triangle", 2)])
def test_rectangle(cell, per_grid_cell):
    nx, ny, lx, ly = 3, 2, 1.5, 0.4
    m = generate.rectangle(nx, ny, lx, ly, cell=cell)
    assert (m.n_nodes, m.dim) == ((nx + 1) * (ny + 1), 2)
    assert m.cells[cell].shape == (nx * ny * per_grid_cell, 4 if cell == "quad" else 3)
    for name, axis, value in [("left", 0, 0), ("right", 0, lx), ("bottom", 1, 0), ("top", 1, ly)]:
        np.testing.assert_array_equal(m.nodes(name), on_plane(m, axis, value), err_msg=name)
    np.testing.assert_array_equal(m.element_sets["all"][cell], np.arange(len(m.cells[cell])))
    area = signed_measure(m.points, cell, m.cells[cell])
    assert np.all(area > 0)
    assert area.sum() == pytest.approx(lx * ly, rel=1e-14)
    check_orientation(m)


@pytest.mark.parametrize("cell", ["hexahedron", "tetra", "tetra10"])
def test_box(cell):
    nx, ny, nz, lx, ly, lz = 3, 2, 2, 1.0, 0.3, 0.2
    m = generate.box(nx, ny, nz, lx, ly, lz, cell=cell)
    n_grid = (nx + 1) * (ny + 1) * (nz + 1)
    n_el = nx * ny * nz * (1 if cell == "hexahedron" else 6)
    n_e = {"hexahedron": 8, "tetra": 4, "tetra10": 10}[cell]
    assert m.dim == 3 and m.cells[cell].shape == (n_el, n_e)
    assert len(np.unique(m.points, axis=0)) == m.n_nodes           # no duplicate nodes
    for axis, (name, length) in enumerate(zip("xyz", (lx, ly, lz))):
        np.testing.assert_array_equal(m.nodes(f"{name}min"), on_plane(m, axis, 0.0))
        np.testing.assert_array_equal(m.nodes(f"{name}max"), on_plane(m, axis, length))
    volume = signed_measure(m.points, cell, m.cells[cell])
    assert np.all(volume > 0)
    assert volume.sum() == pytest.approx(lx * ly * lz, rel=1e-13)
    check_orientation(m)
    if cell == "hexahedron":
        assert m.n_nodes == n_grid
        return
    # conforming: every triangular face is shared by two tets or lies on the boundary
    corners = m.cells[cell][:, :4]
    faces = np.sort(corners[:, [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]].reshape(-1, 3), axis=1)
    unique, count = np.unique(faces, axis=0, return_counts=True)
    assert set(count) == {1, 2}
    boundary = m.points[unique[count == 1]]
    area = 0.5 * np.linalg.norm(np.cross(boundary[:, 1] - boundary[:, 0],
                                         boundary[:, 2] - boundary[:, 0]), axis=1).sum()
    assert area == pytest.approx(2 * (lx * ly + ly * lz + lz * lx), rel=1e-13)
    if cell == "tetra10":
        conn = m.cells[cell]
        ends = m.points[conn[:, TETRA10_EDGES]]                    # (n_el, 6, 2, 3)
        mid = ends.mean(axis=2)
        np.testing.assert_allclose(m.points[conn[:, 4:]], mid, atol=1e-15)
        edges = np.unique(np.sort(corners[:, TETRA10_EDGES].reshape(-1, 2), axis=1), axis=0)
        assert m.n_nodes == n_grid + len(edges)                    # one node per edge: shared
        assert conn[:, :4].max() < n_grid <= conn[:, 4:].min()


@pytest.mark.parametrize("call, match", [
    (lambda: generate.line(0), "`n_el` must be a positive integer"),
    (lambda: generate.rectangle(2, 1.5), "`ny` must be a positive integer"),
    (lambda: generate.rectangle(2, 2, lx=-1.0), "`lx` must be a positive finite number"),
    (lambda: generate.rectangle(2, 2, cell="hexahedron"), r"`cell` must be one of \['quad', 'triangle'\]"),
    (lambda: generate.box(1, 1, 0), "`nz` must be a positive integer"),
    (lambda: generate.box(1, 1, 1, lz=np.inf), "`lz` must be a positive finite number"),
    (lambda: generate.box(1, 1, 1, cell="quad"), "`cell` must be one of"),
])
def test_generator_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------------ orientation
@pytest.mark.parametrize("cell_type, points, conn, flip, measure", [
    ("triangle", UNIT_TET[:3, :2], [[0, 1, 2]], [0, 2, 1], 0.5),
    ("quad", [[0, 0], [2, 0], [2, 1], [0, 1]], [[0, 1, 2, 3]], [0, 3, 2, 1], 2.0),
    ("tetra", UNIT_TET, [[0, 1, 2, 3]], [0, 2, 1, 3], 1 / 6),
    ("hexahedron", generate.box(1, 1, 1, 2.0, 1.0, 3.0).points, generate.box(1, 1, 1).cells["hexahedron"],
     [4, 5, 6, 7, 0, 1, 2, 3], 6.0),
])
def test_signed_measure_and_inverted_cells(cell_type, points, conn, flip, measure):
    points, conn = np.asarray(points, dtype=float), np.asarray(conn)
    assert signed_measure(points, cell_type, conn) == pytest.approx([measure])
    check_orientation(Mesh(points, {cell_type: conn}))
    flipped = conn[:, flip]
    assert signed_measure(points, cell_type, flipped) == pytest.approx([-measure])
    match = rf"inverted or degenerate cells .*1 of 1 {cell_type} cells \(indices \[0\]\)"
    with pytest.raises(MeshError, match=match):
        check_orientation(Mesh(points, {cell_type: flipped}))


def test_degenerate_and_lower_dimensional_cells():
    flat = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]])
    with pytest.raises(MeshError, match="degenerate"):
        check_orientation(Mesh(flat, {"tetra": [[0, 1, 2, 3]]}))
    # triangles in 3D are surface cells: no orientation to check, either way round
    check_orientation(Mesh(flat, {"triangle": [[0, 1, 2], [1, 2, 3]]}))


# --------------------------------------------------------------------- sample meshes
@pytest.mark.parametrize("name, dim, cells, domain, measure, sets", [
    ("beam_line.msh", 2, {"line": 20}, "beam", 1.0, {"clamped": (0, 0.0, 1), "tip": (0, 1.0, 1)}),
    ("plate_quad.msh", 2, {"quad": 80, "line": 8}, "plate", 0.2,
     {"left": (0, 0.0, 5), "right": (0, 1.0, 5)}),
    ("plate_tri.vtu", 2, {"triangle": 160}, "plate", 0.2, {"left": (0, 0.0, 5), "top": (1, 0.2, 21)}),
    ("bar_tetra.inp", 3, {"tetra": 240}, "bar", 0.01, {"clamped": (0, 0.0, 9), "tip": (0, 1.0, 9)}),
    ("bar_hex.msh", 3, {"hexahedron": 40, "quad": 8}, "bar", 0.01,
     {"clamped": (0, 0.0, 9), "tip": (0, 1.0, 9)}),
    ("bar_tetra10.msh", 3, {"tetra10": 24, "triangle6": 12}, "bar", 0.01,      # second order, as Gmsh's
     {"clamped": (0, 0.0, 9), "tip": (0, 1.0, 9), "top": (2, 0.1, 27)}),
])
def test_sample_meshes(name, dim, cells, domain, measure, sets):
    """Each sample has its cells, a domain set holding all of them and the named node sets.

    ``sets`` maps a set name to (axis, coordinate, number of nodes) of the nodes in it.
    """
    path = MESHES / name
    assert path.stat().st_size < 50_000
    m = read(path)
    assert m.dim == dim
    assert {t: len(c) for t, c in m.cells.items()} == cells
    main_type = next(iter(cells))
    np.testing.assert_array_equal(m.element_sets[domain][main_type], np.arange(cells[main_type]))
    np.testing.assert_array_equal(m.node_sets[domain], np.arange(m.n_nodes))
    assert signed_measure(m.points, main_type, m.cells[main_type]).sum() == pytest.approx(measure)
    for set_name, (axis, value, count) in sets.items():
        nodes = m.nodes(set_name)
        assert len(nodes) == count and np.allclose(m.points[nodes, axis], value), set_name


def test_boundary_groups_are_element_sets_too():
    plate = read(MESHES / "plate_quad.msh")
    left = plate.cells["line"][plate.element_sets["left"]["line"]]
    np.testing.assert_array_equal(np.unique(left), plate.nodes("left"))
    bar = read(MESHES / "bar_hex.msh", cell_types=["hexahedron"])       # faces dropped ...
    assert list(bar.cells) == ["hexahedron"] and "tip" not in bar.element_sets
    assert len(bar.nodes("tip")) == 9                                   # ... their nodes kept


def test_make_meshes_script_regenerates_the_samples(tmp_path):
    spec = importlib.util.spec_from_file_location("make_meshes", MESHES / "make_meshes.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    script.main(tmp_path)
    for name in script.SAMPLES:
        assert_same_mesh(read(MESHES / name), read(tmp_path / name))


# ---------------------------------------------------------------------- round trips
def plate_with_boundary() -> Mesh:
    m = generate.rectangle(3, 2, 1.0, 0.5)
    edges = np.array([[3, 7], [7, 11], [8, 4], [4, 0]])          # right (up), left (down)
    return Mesh(m.points, {"quad": m.cells["quad"], "line": edges}, node_sets={"bottom": m.nodes("bottom")},
                element_sets={"plate": {"quad": np.arange(6)}, "right": {"line": [0, 1]},
                              "left": {"line": [2, 3]}})


ROUND_TRIP_MESHES = {
    "rectangle": lambda: generate.rectangle(3, 2, 1.0, 0.5, cell="triangle"),
    "tetra10": lambda: generate.box(2, 1, 1, 1.0, 0.2, 0.1, cell="tetra10"),
    "plate+boundary": plate_with_boundary,
}
FORMAT_OPTIONS = {
    "msh22-ascii": ("mesh.msh", {"msh_version": "2.2", "binary": False}),
    "msh41-ascii": ("mesh.msh", {"msh_version": "4.1", "binary": False}),
    "msh41-binary": ("mesh.msh", {"msh_version": "4.1", "binary": True}),
    "vtu": ("mesh.vtu", {}),
    "inp": ("mesh.inp", {}),
}


@pytest.mark.parametrize("fmt", FORMAT_OPTIONS)
@pytest.mark.parametrize("which", ROUND_TRIP_MESHES)
def test_write_read_round_trip(tmp_path, which, fmt):
    mesh = ROUND_TRIP_MESHES[which]()
    file_name, options = FORMAT_OPTIONS[fmt]
    write(mesh, tmp_path / file_name, **options)
    back = read(tmp_path / file_name)
    assert_same_mesh(mesh, back)
    for name, by_type in mesh.element_sets.items():                   # plus derived node sets
        nodes = np.unique(np.concatenate([mesh.cells[t][i].ravel() for t, i in by_type.items()]))
        np.testing.assert_array_equal(back.node_sets[name], nodes)


def test_line_mesh_in_3d_keeps_dim_on_request(tmp_path):
    mesh = generate.line(3, dim=3)
    write(mesh, tmp_path / "line.msh")
    assert read(tmp_path / "line.msh").dim == 2
    assert_same_mesh(mesh, read(tmp_path / "line.msh", dim=3))


def test_overlapping_sets_warn_for_gmsh(tmp_path):
    m = generate.rectangle(2, 1)
    m = Mesh(m.points, m.cells, element_sets={"all": {"quad": [0, 1]}, "first": {"quad": [0]}})
    with pytest.warns(UserWarning, match="element set 'first' overlaps an earlier set"):
        write(m, tmp_path / "overlap.msh")
    assert "first" not in read(tmp_path / "overlap.msh").element_sets


# --------------------------------------------------------------------------- errors
def gmsh_saveall(tmp_path):
    """A Gmsh 4.1 file where one entity (the point 'end') has no physical group, as with SaveAll."""
    write(generate.line(3), tmp_path / "ok.msh")
    text = (tmp_path / "ok.msh").read_text()
    assert "3 0 0 0 1 3 \n" in text
    (tmp_path / "saveall.msh").write_text(text.replace("3 0 0 0 1 3 \n", "3 0 0 0 0 \n"))
    return "saveall.msh"


def gmsh_corrupt(tmp_path):
    write(generate.rectangle(2, 2), tmp_path / "ok.msh", binary=True)
    data = (tmp_path / "ok.msh").read_bytes()
    (tmp_path / "corrupt.msh").write_bytes(data[: len(data) // 2])
    return "corrupt.msh"


def gmsh_empty(tmp_path):
    (tmp_path / "empty.msh").write_text("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n1\n"
                                        "1 0 0 0\n$EndNodes\n$Elements\n0\n$EndElements\n")
    return "empty.msh"


def vtu_with(cell_type, points, conn):
    def make(tmp_path):
        meshio.write(tmp_path / f"{cell_type}.vtu", meshio.Mesh(points, [(cell_type, np.array(conn))]))
        return f"{cell_type}.vtu"
    return make


def unknown_extension(tmp_path):
    write(generate.rectangle(1, 1), tmp_path / "mesh.vtu")
    (tmp_path / "mesh.vtu").rename(tmp_path / "mesh.stl")
    return "mesh.stl"


PYRAMID = vtu_with("pyramid", np.vstack([UNIT_TET[:3], [1, 1, 0], [0.5, 0.5, 1]]), [[0, 1, 3, 2, 4]])
INVERTED_TET = vtu_with("tetra", UNIT_TET, [[0, 2, 1, 3]])


@pytest.mark.parametrize("make, kwargs, match", [
    (lambda tmp: "missing.msh", {}, r"mesh file .*missing.msh not found .*check the path"),
    (unknown_extension, {}, r"unknown extension '\.stl'; supported: \.msh .*\.vtu .*\.inp"),
    (gmsh_corrupt, {}, r"could not read .*corrupt.msh as gmsh .*corrupt.*re-export"),
    (gmsh_saveall, {}, r"could not read .*saveall.msh .*Mesh\.SaveAll.*re-export without Mesh\.SaveAll"),
    (gmsh_empty, {}, r"empty.msh contains no cells"),
    (PYRAMID, {}, r"unsupported cell types \['pyramid'\]; supported: \['vertex', 'line', .*'hexahedron'\]"),
    (PYRAMID, {"cell_types": ["tetra"]}, r"no cells of the types \['tetra'\] \(it has \['pyramid'\]\)"),
    (INVERTED_TET, {}, r"inverted or degenerate cells in .*tetra.vtu: 1 of 1 tetra cells \(indices \[0\]\).*check=False"),
    (INVERTED_TET, {"cell_types": ["hexagon"]}, r"`cell_types` must be a non-empty list of"),
    (INVERTED_TET, {"dim": 2}, r"`dim=2` but .* has 3D cells"),
])
def test_read_errors(tmp_path, make, kwargs, match):
    path = tmp_path / make(tmp_path)
    with pytest.raises(MeshError, match=match):
        read(path, **kwargs)


def test_inverted_cells_read_with_check_off(tmp_path):
    mesh = read(tmp_path / INVERTED_TET(tmp_path), check=False)
    assert signed_measure(mesh.points, "tetra", mesh.cells["tetra"]) == pytest.approx([-1 / 6])


@pytest.mark.parametrize("kwargs, match", [
    ({"node_sets": {"bad": [0, 10]}}, r"node set 'bad' names node 10 but the mesh has 4 nodes"),
    ({"node_sets": {"bad": [-1, 2]}}, r"node set 'bad' names node -1"),
    ({"element_sets": {"bad": {"tetra": [1]}}}, r"element set 'bad' names tetra cell 1 but the mesh has 1"),
    ({"element_sets": {"bad": {"hexahedron": [0]}}}, r"names hexahedron cell 0 but the mesh has 0"),
])
def test_sets_naming_missing_nodes_or_cells(kwargs, match):
    with pytest.raises(MeshError, match=match):
        Mesh(UNIT_TET, {"tetra": [[0, 1, 2, 3]]}, **kwargs)


def test_write_errors(tmp_path):
    mesh = generate.rectangle(1, 1)
    with pytest.raises(MeshError, match=r"unknown extension '\.obj'; supported"):
        write(mesh, tmp_path / "mesh.obj")
    with pytest.raises(MeshError, match=r"`msh_version` must be one of \['2.2', '4.1'\], got '3'"):
        write(mesh, tmp_path / "mesh.msh", msh_version="3")
    with pytest.warns(UserWarning, match="`binary` is ignored"):
        write(mesh, tmp_path / "mesh.inp", binary=True)
