"""ParaView files of a mechanism (issue 21, item 5): `flexmbs.io.paraview.write_system_xdmf` writes
every body of a System in one XDMF time series in the global frame.  Read back with VTK's XDMF
reader (meshio's repeats the first geometry at every step) and, without VTK, with h5py: the
coupled slider-crank's crank turns by the crank angle, the rod's mid-span deflection is the
case's, every body is there at every step; rigid bodies are boxes of their inertia."""
from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from flexmbs.bodies import Node, PointMass, RigidBody2D, RigidBodyEP
from flexmbs.constraints.planar import PlanarRevolute
from flexmbs.io.paraview import PARTS, body_placements, inertia_box, marker_paths, write_system_xdmf
from flexmbs.system import System

CASES = Path(__file__).resolve().parents[1] / "cases"
SETTINGS = dict(revolutions=0.5, degrees_out=3.0)        # 61 outputs


@pytest.fixture(scope="module")
def coupled(tmp_path_factory):
    """The coupled slider-crank case over half a revolution (3 deg outputs): its directory, its
    System and coordinates q (from the same integration as the case's), and the case's extras;
    the directory's paraview.xdmf of that System and q (`write_system_xdmf`, which writes it
    through `write_results_xdmf`, the writer of `flexmbs run` and `flexmbs export`)."""
    sys.path.insert(0, str(CASES))
    import slider_crank
    out = tmp_path_factory.mktemp("slider_crank")
    res, _, extras = slider_crank.run(out=out, coupled=True, plots=False, **SETTINGS)
    system = slider_crank.build_coupled()[0]
    p = {**slider_crank.DEFAULTS, **SETTINGS}
    t_end = 2.0 * np.pi * p["revolutions"] / p["crank_speed"]
    write_system_xdmf(system, res.t, res.q, out / "paraview.xdmf")
    return dict(out=out, system=system, t=res.t, q=res.q, extras=extras, p=p)


def vtk_steps(path):
    """(times, [(points (n, 3), cell types, {cell field: array}) per step]) read by VTK's XDMF reader
    (the time series' block of its output: the other block is the static mesh grid); the reader
    must report nothing (no error or warning in VTK's output window) while it reads."""
    xdmf = pytest.importorskip("vtkmodules.vtkIOXdmf2", reason="VTK (pip install vtk) reads the XDMF file")
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkCommonDataModel import vtkCompositeDataSet
    from vtkmodules.vtkCommonExecutionModel import vtkStreamingDemandDrivenPipeline
    from vtkmodules.vtkCommonCore import vtkOutputWindow, vtkStringOutputWindow
    said = vtkStringOutputWindow()
    shown = vtkOutputWindow.GetInstance()
    vtkOutputWindow.SetInstance(said)
    reader = xdmf.vtkXdmfReader()
    reader.SetFileName(str(path))
    reader.UpdateInformation()
    times = reader.GetOutputInformation(0).Get(vtkStreamingDemandDrivenPipeline.TIME_STEPS())
    steps = []
    for time in times:
        reader.UpdateTimeStep(time)
        out = reader.GetOutputDataObject(0)
        names = [out.GetMetaData(b).Get(vtkCompositeDataSet.NAME()) for b in range(out.GetNumberOfBlocks())]
        grid = out.GetBlock(names.index("TimeSeries_meshio"))
        cd = grid.GetCellData()
        fields = {cd.GetArrayName(i): vtk_to_numpy(cd.GetArray(i)) for i in range(cd.GetNumberOfArrays())}
        pd = grid.GetPointData()
        fields.update({f"point:{pd.GetArrayName(i)}": vtk_to_numpy(pd.GetArray(i))
                       for i in range(pd.GetNumberOfArrays())})
        types = [grid.GetCellType(i) for i in range(grid.GetNumberOfCells())]
        conn = [[grid.GetCell(i).GetPointId(k) for k in range(grid.GetCell(i).GetNumberOfPoints())]
                for i in range(grid.GetNumberOfCells())]
        steps.append((vtk_to_numpy(grid.GetPoints().GetData()).copy(), types, conn, fields))
    vtkOutputWindow.SetInstance(shown)
    assert said.GetOutput() == "", f"VTK's reader reported: {said.GetOutput()[:500]}"    # no error at any step
    return np.array(times), steps


def points_of(step, body, part=PARTS["body"]):
    """Sorted point ids of the cells of ``body`` (and ``part``) in a step read by `vtk_steps`."""
    _, _, conn, fields = step
    cells = np.flatnonzero((fields["body"] == body) & (fields["part"] == part))
    return sorted({i for c in cells for i in conn[c]})


@pytest.fixture(scope="module")
def read_back(coupled):
    return vtk_steps(coupled["out"] / "paraview.xdmf")


def test_vtk_reads_every_body_at_every_step(coupled, read_back):
    times, steps = read_back
    np.testing.assert_allclose(times, coupled["t"], rtol=0, atol=1e-15)
    VTK_HEXAHEDRON, VTK_POLY_LINE, VTK_POLY_VERTEX = 12, 4, 2
    for points, types, conn, fields in steps:
        assert set(fields["body"]) == {-1, 0, 1, 2}                      # crank, rod, slider, joints
        rod, joints = fields["body"] == 1, fields["part"] == PARTS["joint"]
        assert np.array(types)[rod].tolist() == [VTK_POLY_LINE] * 8      # the 8 beam elements
        assert np.array(types)[fields["body"] == 0].tolist() == [VTK_HEXAHEDRON] + [VTK_POLY_LINE] * 3   # box + axes
        assert np.array(types)[joints].tolist() == [VTK_POLY_VERTEX] * 4   # crank pivot, pin A, pin B, slide
        assert np.all(np.isfinite(fields["axial_force"][rod])) and np.all(np.isnan(fields["axial_force"][~rod]))
    assert not np.allclose(steps[1][0], steps[-1][0])                     # the geometry moves


def test_crank_turns_by_the_crank_angle(coupled, read_back):
    """Each point of the crank's box is R_z(phi) times its start, phi = 2 atan2(e3, e0) of the crank's
    Euler parameters in q (a rotation about z); phi is the driven angle crank_speed t."""
    _, steps = read_back
    system, q = coupled["system"], coupled["q"]
    p = q[:, system.slice(system.body("crank"))][:, 3:7]
    phi = 2.0 * np.arctan2(p[:, 3], p[:, 0])
    np.testing.assert_allclose(np.unwrap(phi), coupled["p"]["crank_speed"] * coupled["t"], atol=1e-8)
    ids = points_of(steps[0], 0)
    start = steps[0][0][ids]
    for k in range(0, len(steps), 7):
        c, s = np.cos(phi[k]), np.sin(phi[k])
        Rz = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        np.testing.assert_allclose(steps[k][0][ids], start @ Rz.T, atol=1e-12)
    assert phi[len(steps) // 2] == pytest.approx(np.pi / 2, abs=1e-6)     # a quarter turn half-way


def test_rod_midspan_deflection_from_the_file_is_the_cases(coupled, read_back):
    """The rod's middle node (node 4 of 8) off the chord of its end nodes, positive to the left of
    A -> B, equals the case's midspan_deflection (`chord_deflection`); the rod bends (peak 0.1 mm
    over this half turn) and turns."""
    _, steps = read_back
    w_file, chord_angle = [], []
    for step in steps:
        x = step[0][points_of(step, 1)]                         # rod nodes, A to B (the mesh's order)
        e = (x[-1] - x[0]) / np.linalg.norm(x[-1] - x[0])
        w_file.append(np.cross(e, x[4] - x[0])[2])
        chord_angle.append(np.arctan2(e[1], e[0]))
    w = coupled["extras"]["midspan_deflection"]
    np.testing.assert_allclose(w_file, w, rtol=0, atol=1e-9 * np.abs(w).max())
    assert np.abs(w).max() > 1e-5
    assert np.ptp(chord_angle) > 0.5                              # the rod swings by +-30 deg


def test_nodes_and_joints_are_the_bodies_markers(coupled, read_back):
    """The file's rod nodes are FlexibleBody.point(q, Node(i)) and the joints' vertices the markers
    of their first body (public methods, one output at a time), at every 5th output."""
    _, steps = read_back
    system, q = coupled["system"], coupled["q"]
    rod = system.body("rod")
    joints = [system.constraint(n) for n in ("crank pivot", "pin A", "pin B", "slide")]
    for k in range(0, len(steps), 5):
        qr = q[k, system.slice(rod)]
        x = steps[k][0][points_of(steps[k], 1)]
        np.testing.assert_allclose(x, [rod.point(qr, Node(i)) for i in range(9)], atol=1e-14)
        vertices = steps[k][0][points_of(steps[k], -1, PARTS["joint"])]
        expected = []
        for c in joints:
            j, body = next((j, b) for j, b in enumerate(c.bodies) if b is not None)
            expected.append(body.point(q[k, system.slice(body)], c.reaction_points()[j]))
        np.testing.assert_allclose(vertices, expected, atol=1e-14)
    np.testing.assert_allclose(steps[0][0][points_of(steps[0], -1, PARTS["joint"])][2], [0.45, 0, 0], atol=1e-12)


def test_h5_geometry_is_one_dataset_sliced_per_step_without_vtk(coupled):
    """Without VTK: each step's Geometry is an XDMF HyperSlab selecting output k (start k 0 0, stride
    1 1 1, count 1 N 3) of one dataset /series/geometry (n_t, N, 3); the file holds one dataset per
    field, however many outputs (issue 22: not one per output); the geometry of the first and last
    steps differ."""
    import h5py
    path = coupled["out"] / "paraview.xdmf"
    root = ET.parse(path).getroot()
    info = {i.get("Name"): i.get("Value") for i in root.iter("Information")}
    assert json.loads(info["bodies"]) == ["crank", "rod", "slider"]
    assert json.loads(info["joints"]) == ["crank pivot", "pin A", "pin B", "slide"] and info["frame"] == "global"
    collection = next(g for g in root.iter("Grid") if g.get("CollectionType") == "Temporal")
    slabs = [g.find("Geometry/DataItem") for g in collection.findall("Grid")]
    assert len(slabs) == len(coupled["t"]) and {s.get("ItemType") for s in slabs} == {"HyperSlab"}
    select = np.array([[int(x) for x in s[0].text.split()] for s in slabs]).reshape(len(slabs), 3, 3)
    assert {s[1].text.split(":/")[1] for s in slabs} == {"series/geometry"}
    with h5py.File(path.with_suffix(".h5"), "r") as f:
        geometry = f["series/geometry"][()]
        datasets = []
        f.visititems(lambda name, item: datasets.append(name) if isinstance(item, h5py.Dataset) else None)
        assert f.attrs["frame"] == "global"
    n = geometry.shape[1]
    assert geometry.shape == (len(coupled["t"]), n, 3)
    np.testing.assert_array_equal(select[:, 0, 0], np.arange(len(slabs)))                 # start: output k
    assert np.all(select[:, 0, 1:] == 0) and np.all(select[:, 1] == 1) and np.all(select[:, 2] == [1, n, 3])
    assert len(datasets) < 10 < len(coupled["t"])
    assert np.abs(geometry[0] - geometry[-1]).max() > 0.1


def test_series_written_in_blocks_equals_one_block(coupled, tmp_path, monkeypatch):
    """`write_results_xdmf` places the bodies SERIES_BLOCK outputs at a time (memory bounded however
    long the run): in blocks of 7 (61 outputs: 8 blocks, the last of 5) every dataset and the XDMF
    text equal those of one block."""
    import h5py
    from flexmbs.io import paraview
    system, t, q = coupled["system"], coupled["t"], coupled["q"]
    write_system_xdmf(system, t, q, tmp_path / "one" / "paraview.xdmf")
    monkeypatch.setattr(paraview, "SERIES_BLOCK", 7)
    write_system_xdmf(system, t, q, tmp_path / "blocks" / "paraview.xdmf")
    assert (tmp_path / "one" / "paraview.xdmf").read_text() == (tmp_path / "blocks" / "paraview.xdmf").read_text()
    with h5py.File(tmp_path / "one" / "paraview.h5", "r") as one, h5py.File(tmp_path / "blocks" / "paraview.h5") as blocks:
        names = []
        one.visititems(lambda name, item: names.append(name) if isinstance(item, h5py.Dataset) else None)
        assert "series/geometry" in names and one["series/geometry"].shape[0] == len(t) == 61
        for name in names:
            np.testing.assert_array_equal(blocks[name][()], one[name][()])


def test_no_paraview_writes_no_files(tmp_path, restore_logging):
    """`flexmbs run --no-paraview` reaches the case (its `paraview` parameter): no XDMF file."""
    from flexmbs import cli
    assert cli.main(["run", "slider_crank", "--set", "coupled=true", "--set", "revolutions=0.05", "--no-plots",
                     "--no-paraview", "--out", str(tmp_path)]) == 0
    assert not (tmp_path / "paraview.xdmf").exists() and (tmp_path / "results.npz").exists()


def test_inertia_box_of_a_uniform_box():
    """A uniform box of sides 2a, 2b, 2c and mass m has J1 = m (b^2 + c^2) / 3 about its centre
    (e.g. Meriam & Kraige, Dynamics, Table D/4: m (B^2 + C^2) / 12 with B = 2b)."""
    m, half = 2.0, np.array([0.1, 0.2, 0.3])
    J = m * (half @ half - half ** 2) / 3.0
    np.testing.assert_allclose(inertia_box(m, J), half, rtol=1e-14)
    thin = inertia_box(1.0, [1e-12, 1.0 / 3.0, 1.0 / 3.0])               # a rod of half-length 1
    np.testing.assert_allclose(thin, [1.0, 0.02, 0.02], rtol=1e-5)       # its sides raised to 2 %


def test_planar_point_mass_and_user_shape(tmp_path):
    """A RigidBody2D is a square plate of its inertia (I = 2 m a^2 / 3) at its position and angle, a
    PointMass a vertex, a user shape replaces a box; placements for all outputs at once agree
    with the bodies' point() and rotation()."""
    plate = RigidBody2D("plate", 3.0, 3.0 * 2.0 * 0.1**2 / 3.0, position=(1.0, 0.0))
    ball = PointMass("ball", 0.5, (0.0, 1.0))
    system = System([plate, ball], [PlanarRevolute(None, plate, at=(1.0, 0.0))])
    t = np.linspace(0.0, 1.0, 5)
    theta = np.linspace(0.0, np.pi, 5)
    q = np.column_stack([1.0 + 0 * t, 0 * t, theta, 0 * t, 1.0 + t])
    path = write_system_xdmf(system, t, q, tmp_path / "planar.xdmf")
    times, steps = vtk_steps(path)
    assert len(times) == 5
    for k, (points, types, conn, fields) in enumerate(steps):
        corners = points[points_of(steps[k], 0)]
        np.testing.assert_allclose(corners.mean(axis=0), [1.0, 0.0, 0.0], atol=1e-14)
        c, s = np.cos(theta[k]), np.sin(theta[k])
        local = (corners - [1.0, 0.0, 0.0]) @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
        np.testing.assert_allclose(np.abs(local).max(axis=0), [0.1, 0.1, 0.025], atol=1e-14)
        np.testing.assert_allclose(points[points_of(steps[k], 1)], [[0.0, 1.0 + t[k], 0.0]], atol=1e-14)
        assert np.array(types)[fields["body"] == 1].tolist() == [2]      # the point mass: one vertex
    origin, A = body_placements(plate, q[:, :3])
    for k in range(5):
        np.testing.assert_allclose(A[k, :2, :2], plate.rotation(q[k, :3]))
        np.testing.assert_allclose(marker_paths(plate, q[:, :3], np.array([0.1, 0.0]))[k, :2],
                                   plate.point(q[k, :3], np.array([0.1, 0.0])))
    triangle = (np.array([[0.0, 0.0], [0.3, 0.0], [0.0, 0.2]]), [("triangle", np.array([[0, 1, 2]]))])
    path = write_system_xdmf(system, t, q, tmp_path / "shape.xdmf", every=2, shapes={"plate": triangle})
    times, steps = vtk_steps(path)
    np.testing.assert_allclose(times, t[[0, 2, 4]])
    VTK_TRIANGLE = 5
    assert np.array(steps[0][1])[(steps[0][3]["body"] == 0) & (steps[0][3]["part"] == 0)].tolist() == [VTK_TRIANGLE]
    np.testing.assert_allclose(steps[-1][0][points_of(steps[-1], 0)][1], [1.0 - 0.3, 0.0, 0.0], atol=1e-14)


def test_rigid_body_ep_box_follows_its_principal_axes(tmp_path):
    """A RigidBodyEP with an off-centre centroid and a non-diagonal inertia: the box's centre is the
    centroid, its edges the principal axes, its half-sizes `inertia_box` of the principal moments."""
    J = np.array([[0.02, 0.005, 0.0], [0.005, 0.03, 0.0], [0.0, 0.0, 0.04]])
    body = RigidBodyEP("b", 2.0, J, centroid=[0.1, 0.0, 0.0], position=[0.0, 0.0, 1.0])
    system = System([body])
    q = body.initial_coordinates()[None]
    path = write_system_xdmf(system, [0.0], q, tmp_path / "ep.xdmf")
    _, steps = vtk_steps(path)
    corners = steps[0][0][points_of(steps[0], 0)]
    np.testing.assert_allclose(corners.mean(axis=0), [0.1, 0.0, 1.0], atol=1e-14)
    lam, V = np.linalg.eigh(J)
    extent = np.abs((corners - corners.mean(axis=0)) @ V).max(axis=0)
    np.testing.assert_allclose(extent, inertia_box(2.0, lam), rtol=1e-12)


def test_solid_stress_in_global_components_and_corotational_polyline(tmp_path):
    """A free Hex8 FlexibleBody (mean-axis frame) turned 90 deg about z: the file's ``stress``, which
    VTK's reader expands to 3 x 3, is R sigma R^T of the Model's element stress (`element_data`), ``displacement``
    is A u; a CorotationalBeam2D is its nodes (q's first two coordinates per node) as line cells."""
    import flexmbs as fm
    from flexmbs.analysis import element_data
    from flexmbs.bodies import CorotationalBeam2D, FlexibleBody
    from flexmbs.rotations import matrix_to_ep, rotation_z
    mat = fm.Material(E=70e9, rho=2700.0, nu=0.3)
    solid = FlexibleBody(fm.Model(fm.generate.box(2, 1, 1, 1.0, 0.2, 0.1), fm.Hex8(mat)), "solid",
                         reference="mean-axis")
    rng = np.random.default_rng(1)
    delta = 1e-4 * rng.standard_normal(solid.n_e)
    A = rotation_z(np.pi / 2)
    q = np.concatenate([[0.0, 0.0, 0.5], matrix_to_ep(A), delta])[None]
    path = write_system_xdmf(System([solid]), [0.0], q, tmp_path / "solid.xdmf")
    _, steps = vtk_steps(path)
    points, types, conn, fields = steps[0]
    sigma = element_data(solid.model, delta[None])["stress"][0]
    full = np.zeros((len(sigma), 3, 3))
    for k, (i, j) in enumerate([(0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1)]):      # flexmbs' Voigt order
        full[:, i, j] = full[:, j, i] = sigma[:, k]
    np.testing.assert_allclose(fields["stress"].reshape(-1, 3, 3), A @ full @ A.T, rtol=1e-12, atol=1e-6)
    assert np.abs(full[:, 0, 1]).max() > 1e5                               # shear present: the order matters
    u = solid.model.displacement_field(delta)
    np.testing.assert_allclose(fields["point:displacement"], u @ A.T, atol=1e-18)
    np.testing.assert_allclose(points, [0.0, 0.0, 0.5] + (solid.model.mesh.points + u) @ A.T, atol=1e-15)

    beam = CorotationalBeam2D.line("beam", (0.0, 0.0), (1.0, 0.0), 4, mat, 1e-4, 1e-9)
    q = beam.initial_coordinates()[None] + 0.01 * rng.standard_normal((1, beam.n_q))
    _, steps = vtk_steps(write_system_xdmf(System([beam]), [0.0], q, tmp_path / "beam.xdmf"))
    points, types, conn, fields = steps[0]
    np.testing.assert_allclose(points[:, :2], beam.positions(q[0]), atol=1e-15)
    assert types == [3] * 4 or types == [4] * 4                          # VTK_LINE / VTK_POLY_LINE
    assert conn == beam.elements.tolist()
