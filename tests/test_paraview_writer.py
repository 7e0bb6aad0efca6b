"""ParaView files without meshio (issue 22, start-up): `flexmbs.io.vtk_formats` writes the XDMF time
series and the VTU that meshio's writers wrote before.  Each file flexmbs writes is read back by
meshio's readers and compared with what meshio's writers make of the same arrays: same points,
cells, point and cell data and times; the VTU's numbers are exact (ASCII, shortest repr)."""
from __future__ import annotations

import contextlib

import meshio
import numpy as np
import pytest

import flexmbs as fm
from flexmbs import io
from flexmbs.io.paraview import global_scene
from flexmbs.io.vtk_formats import XdmfSeries, write_vtu_file
from flexmbs.rotations import pad3

from test_results_io import RUN, bar_model
from test_system_paraview import mechanism


@pytest.fixture(scope="module")
def bar():
    """A spinning bar under an end load (Model, body frame and frame motion), 21 outputs."""
    return fm.run(bar_model(), **RUN)


@pytest.fixture(scope="module")
def swing():
    """A rigid link carrying a flexible beam (System): hexahedron, lines and vertices in one grid."""
    res = fm.run(mechanism(), t_end=0.02, h=1e-3, dt_out=0.01)
    assert res.status == "finished"
    return res


def read_series(path):
    """(points, [(type, cells)], [(t, point_data, cell_data)]) by meshio's TimeSeriesReader."""
    with meshio.xdmf.TimeSeriesReader(path) as reader:
        points, cells = reader.read_points_cells()
        steps = [reader.read_data(k) for k in range(reader.num_steps)]
    return points, [(c.type, c.data) for c in cells], steps


def meshio_series(path, points, cells, steps):
    """The reference: the same arrays written by meshio's TimeSeriesWriter (which puts its .h5 in
    the working directory)."""
    with contextlib.chdir(path.parent), meshio.xdmf.TimeSeriesWriter(path.name) as writer:
        writer.write_points_cells(points, cells)
        for t, point_data, cell_data in steps:
            writer.write_data(t, point_data=point_data, cell_data=cell_data)
    return path


def assert_same_series(mine, reference):
    (p, c, s), (q, d, r) = read_series(mine), read_series(reference)
    np.testing.assert_array_equal(p, q)
    assert [t for t, _ in c] == [t for t, _ in d]
    for (_, a), (_, b) in zip(c, d):
        np.testing.assert_array_equal(a, b)
    assert len(s) == len(r) and len(s) > 1
    for (t, pd, cd), (u, qd, dd) in zip(s, r):
        assert t == u
        assert pd.keys() == qd.keys() and cd.keys() == dd.keys()
        for name in pd:
            np.testing.assert_array_equal(pd[name], qd[name])
        for name in cd:
            np.testing.assert_array_equal(np.concatenate(cd[name]), np.concatenate(dd[name]))


def assert_same_vtu(mine, reference):
    a, b = meshio.read(mine), meshio.read(reference)
    np.testing.assert_array_equal(a.points, b.points)
    assert [(c.type, c.data.tolist()) for c in a.cells] == [(c.type, c.data.tolist()) for c in b.cells]
    assert a.point_data.keys() == b.point_data.keys() and a.cell_data.keys() == b.cell_data.keys()
    for name in a.point_data:
        np.testing.assert_array_equal(a.point_data[name], b.point_data[name])
    for name in a.cell_data:
        for x, y in zip(a.cell_data[name], b.cell_data[name]):
            assert x.dtype == y.dtype, name
            np.testing.assert_array_equal(x, y)            # NaN where a body has no such field
    return a


def test_model_series_in_the_body_frame_is_meshios(bar, tmp_path):
    mine = io.write_xdmf(bar, tmp_path / "mine.xdmf", every=4)
    steps = [(float(bar.t[i]), {"displacement": pad3(bar.displacement[i]), "velocity": pad3(bar.velocity[i])},
              {"axial_force": [bar.element_data["axial_force"][i]]}) for i in (0, 4, 8, 12, 16, 20)]
    reference = meshio_series(tmp_path / "ref.xdmf", pad3(bar.nodes), [("line", bar.cells["line"])], steps)
    assert_same_series(mine, reference)
    assert 'NodesPerElement="2"' in mine.read_text()       # what the XDMF model asks of a Polyline


def test_model_vtu_is_meshios_with_the_time(bar, tmp_path):
    mine = io.write_vtu(bar, tmp_path / "mine.vtu")
    reference = meshio.Mesh(pad3(bar.nodes), [("line", bar.cells["line"])],
                            point_data={"displacement": pad3(bar.displacement[-1]), "velocity": pad3(bar.velocity[-1])},
                            cell_data={"axial_force": [bar.element_data["axial_force"][-1]]})
    meshio.write(tmp_path / "ref.vtu", reference)
    read = assert_same_vtu(mine, tmp_path / "ref.vtu")
    np.testing.assert_array_equal(read.field_data["TimeValue"], [bar.t[-1]])
    assert "flexmbs: frame body; units" in mine.read_text()


def test_system_vtu_with_mixed_cells_and_nan_is_meshios(swing, tmp_path):
    mine = io.write_results_vtu(swing, tmp_path / "mine.vtu")
    points, cells, point_data, cell_data, constant = global_scene(swing, [len(swing.t) - 1])
    rows = np.cumsum([0] + [len(c) for _, c in cells])
    per_block = {n: [a[0][i:j] for i, j in zip(rows[:-1], rows[1:])] for n, a in cell_data.items()}
    per_block.update({n: [a[i:j] for i, j in zip(rows[:-1], rows[1:])] for n, a in constant.items()})
    meshio.write(tmp_path / "ref.vtu", meshio.Mesh(points[0], cells, point_data={"displacement": point_data[
        "displacement"][0]}, cell_data=per_block))
    read = assert_same_vtu(mine, tmp_path / "ref.vtu")
    assert {c.type for c in read.cells} == {"hexahedron", "line", "vertex"}
    assert np.isnan(read.cell_data["axial_force"][0]).any() and read.cell_data["body"][0].dtype == np.int64


def test_vtu_numbers_are_exact_and_vtk_reads_them(tmp_path):
    rng = np.random.default_rng(3)
    points = rng.normal(size=(4, 3)) * 10.0 ** rng.integers(-300, 300, size=(4, 3))
    field = np.array([np.nan, np.inf, -0.0, 5e-324, np.pi, 1.0 / 3.0])[:, None] * np.ones((1, 2))
    path = write_vtu_file(tmp_path / "x.vtu", points, [("vertex", np.arange(4)[:, None]), ("line", [[0, 1], [2, 3]])],
                          point_data={"p": points[:, 0]}, cell_data={"f": [field[:4], field[4:]]},
                          field_data={"TimeValue": 0.1})
    read = meshio.read(path)
    np.testing.assert_array_equal(read.points, points)
    np.testing.assert_array_equal(np.concatenate(read.cell_data["f"]), field)
    vtk_xml = pytest.importorskip("vtkmodules.vtkIOXML", reason="VTK reads the file as ParaView does")
    from vtkmodules.util.numpy_support import vtk_to_numpy
    reader = vtk_xml.vtkXMLUnstructuredGridReader()
    reader.SetFileName(str(path))
    reader.Update()
    grid = reader.GetOutput()
    np.testing.assert_array_equal(vtk_to_numpy(grid.GetPoints().GetData()), points)
    np.testing.assert_array_equal(vtk_to_numpy(grid.GetCellData().GetArray("f")), field)
    assert [grid.GetCellType(i) for i in range(grid.GetNumberOfCells())] == [1, 1, 1, 1, 3, 3]
    assert vtk_to_numpy(grid.GetFieldData().GetArray("TimeValue")).tolist() == [0.1]


def test_a_series_stopped_by_an_error_keeps_its_outputs(tmp_path):
    """The XML and the data file are written at the exit of the writer after an exception too: the
    outputs before it stay readable (as meshio's writer did)."""
    with pytest.raises(KeyboardInterrupt), XdmfSeries(tmp_path / "s.xdmf", {"frame": "body"}) as series:
        series.write_mesh(np.eye(3), [("triangle", [[0, 1, 2]])])
        for t in (0.0, 0.5):
            series.write_step(t, {"u": np.full((3, 3), t)}, {"e": [np.array([2.0 * t])]})
        raise KeyboardInterrupt
    points, cells, steps = read_series(tmp_path / "s.xdmf")
    assert [t for t, _, _ in steps] == [0.0, 0.5] and cells[0][0] == "triangle"
    np.testing.assert_array_equal(steps[1][1]["u"], 0.5)
    np.testing.assert_array_equal(steps[1][2]["e"][0], [1.0])


def test_outputs_of_another_structure_keep_their_order_and_fields(tmp_path):
    """Each output's XML is its structure's template filled in (`XdmfSeries.xml`): outputs whose
    fields differ read back in their order with their own fields and datasets."""
    with XdmfSeries(tmp_path / "s.xdmf") as series:
        series.write_mesh(np.eye(3), [("triangle", [[0, 1, 2]])])
        series.write_step(0.0, {"u": np.zeros((3, 3))})
        series.write_step(0.25, {"u": np.ones((3, 3))}, {"e": [np.array([7.0])]})
        series.write_step(0.5, {"u": np.full((3, 3), 2.0)})
    _, _, steps = read_series(tmp_path / "s.xdmf")
    assert [(t, sorted(pd), sorted(cd)) for t, pd, cd in steps] == [(0.0, ["u"], []), (0.25, ["u"], ["e"]),
                                                                   (0.5, ["u"], [])]
    assert [float(pd["u"][0, 0]) for _, pd, _ in steps] == [0.0, 1.0, 2.0]
    np.testing.assert_array_equal(steps[1][2]["e"][0], [7.0])
