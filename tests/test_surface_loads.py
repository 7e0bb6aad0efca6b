"""Surface tractions and pressures on named face sets (flexmbs.SurfaceLoad, flexmbs.surface):
consistent nodal loads that sum to the force, and closed-form static responses."""
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.mesh import Mesh, read
from flexmbs.mesh.faces import boundary_faces
from flexmbs.analysis import element_data

MESHES = Path(__file__).resolve().parents[1] / "meshes"
STEEL = fm.Material(E=2.0e11, rho=7800.0, nu=0.3)
P = 1.0e6                                             # [Pa]
ELEMENTS = {"triangle": fm.Tri3, "quad": fm.Quad4, "tetra": fm.Tet4, "tetra10": fm.Tet10, "hexahedron": fm.Hex8}


def with_faces(mesh: Mesh, cell: str, groups: dict) -> Mesh:
    """``mesh`` plus boundary face cells in element sets: name -> predicate(face centre (n, dim))."""
    faces = boundary_faces(mesh, cell)
    centre = mesh.points[faces].mean(axis=1)
    face_type = {"triangle": "line", "quad": "line", "tetra": "triangle", "tetra10": "triangle6",
                 "hexahedron": "quad"}[cell]
    chosen, sets, start = [], {}, 0
    for name, pick in groups.items():
        sel = faces[pick(centre)]
        chosen.append(sel)
        sets[name] = {face_type: np.arange(start, start + len(sel))}
        start += len(sel)
    return Mesh(mesh.points, {cell: mesh.cells[cell], face_type: np.vstack(chosen)},
                node_sets=mesh.node_sets, element_sets=sets)


def bar(cell: str):
    """1 x 0.2 (x 0.1) m bar or plate with its end face x = 1 as the set 'tip'; (mesh, element, area)."""
    if cell in ("triangle", "quad"):
        m = fm.generate.rectangle(4, 2, 1.0, 0.2, cell=cell)
        return with_faces(m, cell, {"tip": lambda c: np.isclose(c[:, 0], 1.0)}), \
            ELEMENTS[cell](STEEL, thickness=0.01), 0.2 * 0.01
    m = fm.generate.box(4, 2, 1, 1.0, 0.2, 0.1, cell=cell)
    return with_faces(m, cell, {"tip": lambda c: np.isclose(c[:, 0], 1.0)}), ELEMENTS[cell](STEEL), 0.2 * 0.1


def rollers(dim: int):
    """Symmetry supports: u = 0 at x = 0, v = 0 at y = 0 (, w = 0 at z = 0): free lateral contraction."""
    return [("xmin" if dim == 3 else "left", ["u"]), ("ymin" if dim == 3 else "bottom", ["v"])] + \
        ([("zmin", ["w"])] if dim == 3 else [])


@pytest.mark.parametrize("cell", list(ELEMENTS))
def test_end_traction_gives_uniform_stress(cell):
    """A bar pulled by a uniform end traction p: the nodal loads sum to p A, and the static
    response is the uniform stress sigma_xx = p, all other components 0 (exact for every
    element: the patch test)."""
    mesh, element, area = bar(cell)
    model = fm.Model(mesh, element, fixed=rollers(mesh.dim), loads=[fm.SurfaceLoad("tip", traction=(P, 0, 0))])
    full = model.expand(model.Q[:, 0]).reshape(mesh.n_nodes, -1)
    assert full[:, 0].sum() == pytest.approx(P * area, rel=1e-12)
    assert np.abs(full[:, 1:]).max() < 1e-9 * P * area
    stress = element_data(model, fm.static_solution(model, 0.0))["stress"]       # Voigt xx, yy, zz, yz, xz, xy
    np.testing.assert_allclose(stress[:, 0], P, rtol=1e-9)
    assert np.abs(stress[:, 1:]).max() < 1e-9 * P


def test_second_order_gmsh_mesh_with_a_physical_surface():
    """meshes/bar_tetra10.msh (tetra10 and triangle6 faces, as Gmsh's second-order export) loads
    by default; a traction on its physical surface 'tip' gives sigma_xx = p and the consistent
    loads of the 6-node triangle: 0 at the corners, p A / 3 at the mid-edge nodes."""
    mesh = read(MESHES / "bar_tetra10.msh")
    assert {t: len(c) for t, c in mesh.cells.items()} == {"tetra10": 24, "triangle6": 12}
    fixed = [(np.flatnonzero(mesh.points[:, axis] == 0.0), [dof]) for axis, dof in enumerate("uvw")]
    model = fm.Model(mesh, fm.Tet10(STEEL), fixed=fixed, loads=[fm.SurfaceLoad("tip", traction=(P, 0, 0))])
    fx = model.expand(model.Q[:, 0]).reshape(-1, 3)[:, 0]
    assert fx.sum() == pytest.approx(P * 0.01, rel=1e-12)
    tri = mesh.cells["triangle6"][mesh.element_sets["tip"]["triangle6"]]
    assert np.abs(fx[np.unique(tri[:, :3])]).max() < 1e-9 * P * 0.01              # corners carry nothing
    face_area = 0.005                                                            # two faces on 0.1 x 0.1
    assert fx[tri[0, 3]] == pytest.approx(P * face_area / 3 * np.isin(tri[:, 3:], tri[0, 3]).sum(), rel=1e-12)
    stress = element_data(model, fm.static_solution(model, 0.0))["stress"]
    np.testing.assert_allclose(stress[:, 0], P, rtol=1e-9)


def curved(mesh: Mesh, R0=1.2, theta=1.0) -> Mesh:
    """The box [0, 1] x [0, 0.2] x [0, 0.1] bent into a cylindrical sector: x -> angle theta x,
    y -> radius R0 - y (positive orientation kept; mid-edge nodes mapped too: curved faces)."""
    x, y, z = mesh.points.T
    r, phi = R0 - y, theta * x
    return Mesh(np.column_stack([r * np.cos(phi), r * np.sin(phi), z]), mesh.cells,
                node_sets=mesh.node_sets, element_sets=mesh.element_sets)


def test_pressure_on_a_curved_face_has_the_exact_resultant():
    """Pressure p on the outer cylindrical face (radius R, angle Theta, height H) of a bent
    tetra10 bar: -p int n dA = -p R H (sin Theta, 1 - cos Theta, 0).  The x and y parts are
    p times the areas the face projects onto the planes x = const and y = const, which the
    discrete face spans exactly (its straight edges end on the same lines), and the pressure
    integrand is a polynomial integrated exactly."""
    box = fm.generate.box(4, 1, 1, 1.0, 0.2, 0.1, cell="tetra10")
    R, theta, H = 1.2, 1.0, 0.1
    mesh = curved(with_faces(box, "tetra10", {"outer": lambda c: np.isclose(c[:, 1], 0.0)}), R, theta)
    model = fm.Model(mesh, fm.Tet10(STEEL), loads=[fm.SurfaceLoad("outer", pressure=P)])
    force = model.expand(model.Q[:, 0]).reshape(-1, 3).sum(axis=0)
    np.testing.assert_allclose(force, -P * R * H * np.array([np.sin(theta), 1 - np.cos(theta), 0.0]),
                               rtol=1e-12, atol=1e-9 * P * R * H)
    # traction: its sum is t times the face's area (curved: converges to R Theta H with the mesh)
    model = fm.Model(mesh, fm.Tet10(STEEL), loads=[fm.SurfaceLoad("outer", traction=(0.0, 0.0, P))])
    area = model.expand(model.Q[:, 0]).reshape(-1, 3)[:, 2].sum() / P
    assert area == pytest.approx(R * theta * H, rel=2e-3)


def tilted(mesh: Mesh) -> Mesh:
    """``mesh`` sheared and rotated: every face tilted against the axes, the cells still straight."""
    X = mesh.points
    if X.shape[1] == 2:
        A = np.array([[0.8, -0.6], [0.6, 0.8]]) @ np.array([[1.0, 0.3], [0.0, 1.0]])
    else:
        c, s = np.cos(0.4), np.sin(0.4)
        A = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ np.array([[1.0, 0.3, 0.1], [0, 1.0, 0.2], [0, 0, 1.0]])
    return Mesh(X @ A.T, mesh.cells, node_sets=mesh.node_sets, element_sets=mesh.element_sets)


def determinate_supports(mesh: Mesh):
    """3-2-1 (3D) or 2-1 (2D) supports: rigid motions removed, no reaction to a balanced load."""
    X = mesh.points
    a, b = int(np.argmin(X[:, 0])), int(np.argmax(X[:, 0]))
    if mesh.dim == 2:
        return [([a], "all"), ([b], ["v"])]
    c = int(np.argmax(X[:, 1]))
    return [([a], "all"), ([b], ["v", "w"]), ([c], ["w"])]


@pytest.mark.parametrize("cell, shape", [("triangle", tilted), ("quad", tilted), ("tetra", tilted),
                                         ("hexahedron", tilted), ("tetra10", curved)])
def test_pressure_all_round_gives_hydrostatic_stress(cell, shape):
    """A body of any shape under the same pressure p on its whole surface is in the uniform
    state sigma = -p I (its loads balance exactly: int n dA = 0 and int x x n dA = 0 over a
    closed surface); with statically determinate supports every element must reproduce it,
    on tilted faces and on the curved faces of bent tetra10 cells alike."""
    if cell in ("triangle", "quad"):
        base, element = fm.generate.rectangle(4, 2, 1.0, 0.2, cell=cell), ELEMENTS[cell](STEEL, thickness=0.01)
    else:
        base, element = fm.generate.box(3, 2, 1, 1.0, 0.2, 0.1, cell=cell), ELEMENTS[cell](STEEL)
    mesh = shape(with_faces(base, cell, {"surface": lambda c: np.ones(len(c), bool)}))
    load = fm.SurfaceLoad("surface", pressure=P)
    q = fm.Model(mesh, element, loads=[load]).Q[:, 0].reshape(mesh.n_nodes, -1)   # no supports: every DOF
    assert np.abs(q.sum(axis=0)).max() < 1e-9 * np.abs(q).max()                # balanced
    model = fm.Model(mesh, element, fixed=determinate_supports(mesh), loads=[load])
    stress = element_data(model, fm.static_solution(model, 0.0))["stress"]
    normal = stress[:, :2] if mesh.dim == 2 else stress[:, :3]
    np.testing.assert_allclose(normal, -P, rtol=1e-8)
    shear = stress[:, 5] if mesh.dim == 2 else stress[:, 3:]
    assert np.abs(shear).max() < 1e-8 * P


def test_linear_faces_on_a_quadratic_body_load_its_mid_edge_nodes_too():
    """A Gmsh physical surface of 3-node triangles on a tetra10 body is matched to the cells'
    6-node faces: the same consistent loads as the triangle6 set."""
    mesh = read(MESHES / "bar_tetra10.msh")
    tip = mesh.cells["triangle6"][mesh.element_sets["tip"]["triangle6"]]
    loads = [fm.SurfaceLoad({"triangle": tip[::-1, [0, 2, 1]]}, pressure=P), fm.SurfaceLoad("tip", pressure=P)]
    model = fm.Model(mesh, fm.Tet10(STEEL), loads=loads)
    np.testing.assert_allclose(model.Q[:, 0], model.Q[:, 1], rtol=0, atol=1e-12 * P)


@pytest.mark.parametrize("load, message", [
    (fm.SurfaceLoad("tip", traction=(P, 0, 0), pressure=P), "give either `traction` (3-vector) or `pressure`"),
    (fm.SurfaceLoad("tip"), "give either `traction` (3-vector) or `pressure`"),
    (fm.SurfaceLoad("tip", pressure=float("nan")), "`loads[0].pressure` must be a finite number, got nan"),
    (fm.SurfaceLoad("tip", traction=(1, 2)), "`loads[0].traction` must be a finite 3-vector [Pa]"),
    (fm.SurfaceLoad("nope", pressure=P), "`loads[0].faces`: no element set 'nope'"),
    (fm.SurfaceLoad("bar", pressure=P), "holds tetra10 cells, the body itself"),
    (fm.SurfaceLoad({"triangle6": [[0, 1, 2, 3, 4, 5]]}, pressure=P), "are not faces of any tetra10 cell"),
    (fm.SurfaceLoad({"line": [[0, 1]]}, pressure=P), "line cells cannot be faces of tetra10 cells"),
])
def test_bad_surface_loads(load, message):
    mesh = read(MESHES / "bar_tetra10.msh")
    with pytest.raises(ValueError) as exc:
        fm.Model(mesh, fm.Tet10(STEEL), loads=[load])
    assert message in str(exc.value)


def test_inner_faces_and_beams_are_refused():
    m = fm.generate.box(2, 1, 1, 1.0, 0.1, 0.1, cell="tetra")
    with pytest.raises(ValueError, match="lie inside the body"):
        fm.Model(m, fm.Tet4(STEEL), loads=[fm.SurfaceLoad({"triangle": _shared_face(m)[None]}, pressure=P)])
    with pytest.raises(ValueError, match="needs solid, plane-stress or plate elements, not Bar2"):
        fm.Model(fm.generate.line(2, 1.0), fm.Bar2(STEEL, 1e-4), fixed=[("start", "all")],
                 loads=[fm.SurfaceLoad({"vertex": [[2]]}, pressure=P)])


def _shared_face(mesh: Mesh) -> np.ndarray:
    """Corner nodes of a face shared by two tetrahedra."""
    tets = mesh.cells["tetra"]
    faces = np.sort(tets[:, [[0, 1, 2], [0, 1, 3], [1, 2, 3], [0, 2, 3]]].reshape(-1, 3), axis=1)
    uniq, counts = np.unique(faces, axis=0, return_counts=True)
    return uniq[counts == 2][0]


def test_physical_curve_of_a_plate_file_carries_an_edge_traction():
    """meshes/plate_quad.msh: the Gmsh physical curve 'right' (lines at x = 1) of a 1 x 0.2 m
    plate, 0.01 m thick, pulled by p: nodal loads p t h / 8 at the ends, p t h / 4 between,
    and the uniform stress sigma_xx = p with the left edge on rollers."""
    mesh = read(MESHES / "plate_quad.msh")
    left = mesh.nodes("left")
    fixed = [(left, ["u"]), (left[np.argmin(mesh.points[left, 1])], ["v"])]
    model = fm.Model(mesh, fm.Quad4(STEEL, thickness=0.01), fixed=fixed,
                     loads=[fm.SurfaceLoad("right", traction=(P, 0.0, 0.0))])
    fx = model.expand(model.Q[:, 0]).reshape(-1, 2)[mesh.nodes("right"), 0]
    y = mesh.points[mesh.nodes("right"), 1]
    expected = np.where(np.isclose(y, 0.0) | np.isclose(y, 0.2), 1 / 8, 1 / 4) * P * 0.01 * 0.2
    np.testing.assert_allclose(fx, expected, rtol=1e-12)
    stress = element_data(model, fm.static_solution(model, 0.0))["stress"]
    np.testing.assert_allclose(stress[:, 0], P, rtol=1e-9)
    assert np.abs(stress[:, 1:]).max() < 1e-9 * P
