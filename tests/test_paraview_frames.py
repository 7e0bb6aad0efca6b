"""ParaView files and results files tell the truth: stress components in ParaView's order, the
frame motion at every output, files in the global frame as well as the body frame, units."""
import json
import xml.etree.ElementTree as ET

import h5py
import meshio
import numpy as np
import pytest

import flexmbs as fm
from flexmbs import io
from flexmbs.analysis import element_data
from flexmbs.motion import euler_parameters

OMEGA = 15.0                                            # rad/s about z


def spinning_bar():
    mesh = fm.generate.line(4, 1.0)
    bar = fm.Bar2(fm.Material(E=210e9, rho=50_000.0), area=0.2e-4)
    return fm.Model(mesh, bar, motion=fm.motion.ConstantRotation(OMEGA), fixed=[("start", "all")])


def Rz(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def test_a_known_shear_state_reads_back_with_paraviews_labels(tmp_path):
    """u = (a y, b z, c x) on a Hex8 cube: zero normal strains, sigma_xy = G a, sigma_yz = G b,
    sigma_xz = G c (sigma = 2 G eps, eps_ij = (u_i,j + u_j,i)/2); ParaView reads the 6 components
    as XX, YY, ZZ, XY, YZ, XZ."""
    E, nu = 200e9, 0.3
    G = E / (2 * (1 + nu))
    a, b, c = 1e-4, 2e-4, 3e-4
    model = fm.Model(fm.generate.box(2, 2, 2, 1.0, 1.0, 1.0), fm.Hex8(fm.Material(E=E, rho=7800.0, nu=nu)),
                     fixed=[(0, "all")])
    x, y, z = model.mesh.points.T
    u = np.stack([a * y, b * z, c * x], axis=1)
    delta = u.reshape(-1)[model.free]
    data = element_data(model, delta[None])
    expected = np.array([0.0, 0.0, 0.0, G * a, G * b, G * c])                  # XX YY ZZ XY YZ XZ
    np.testing.assert_allclose(data["stress"][0][:, [0, 1, 2, 5, 3, 4]], np.tile(expected, (8, 1)),
                               atol=1e-6 * G * c)                               # flexmbs' Voigt order
    res = fm.Results(t=np.array([0.0]), delta=delta[None], delta_dot=0 * delta[None], displacement=u[None],
                     velocity=0 * u[None], nodes=model.mesh.points, energies={}, status="finished", message="",
                     cells={"hexahedron": model.cells}, element_data=data)
    vtu = meshio.read(io.write_vtu(res, tmp_path / "shear.vtu"))
    np.testing.assert_allclose(vtu.cell_data["stress"][0], np.tile(expected, (8, 1)), atol=1e-6 * G * c)
    with meshio.xdmf.TimeSeriesReader(io.write_xdmf(res, tmp_path / "shear.xdmf")) as reader:
        reader.read_points_cells()
        _, _, cell_data = reader.read_data(0)
    np.testing.assert_allclose(cell_data["stress"][0], np.tile(expected, (8, 1)), atol=1e-6 * G * c)
    # turned by 90 degrees about z: x -> y, y -> -x, so sigma'_xy = -sigma_xy, sigma'_yz = sigma_xz,
    # sigma'_xz = -sigma_yz (sigma' = R sigma R^T)
    turned = io.paraview_stress(data["stress"][0], Rz(np.pi / 2))
    np.testing.assert_allclose(turned, np.tile([0, 0, 0, -G * a, G * c, -G * b], (8, 1)), atol=1e-6 * G * c)


def test_frame_motion_is_stored_at_every_output_and_loaded(tmp_path):
    res = fm.run(spinning_bar(), t_end=0.05, dt_out=0.005, store=tmp_path / "r.h5")
    back = fm.load_results(tmp_path / "r.h5")
    angle = OMEGA * res.t
    for r in (res, back):
        assert set(r.frame) == {"origin", "origin_velocity", "rotation", "euler_parameters", "omega"}
        np.testing.assert_allclose(r.frame["rotation"], [Rz(a) for a in angle], atol=1e-12)
        np.testing.assert_allclose(r.frame["euler_parameters"],
                                   np.stack([np.cos(angle / 2), 0 * angle, 0 * angle, np.sin(angle / 2)], 1),
                                   atol=1e-12)
        np.testing.assert_allclose(r.frame["omega"], np.tile([0.0, 0.0, OMEGA], (len(r.t), 1)))
        np.testing.assert_array_equal(r.frame["origin"], 0.0)
    np.testing.assert_array_equal(back.frame["rotation"], res.frame["rotation"])
    ref = fm.run(spinning_bar(), t_end=0.05, dt_out=0.005)                     # no store: the same frame
    np.testing.assert_allclose(ref.frame["euler_parameters"], res.frame["euler_parameters"], atol=1e-15)
    npz = fm.load_results(res.save_npz(tmp_path / "results.npz"))
    np.testing.assert_array_equal(npz.frame["omega"], res.frame["omega"])
    assert set(npz.cells) == {"line"} and "axial_force" in npz.element_data
    with h5py.File(tmp_path / "r.h5") as f:
        g = f[back.metadata["run"]]
        assert f.attrs["units"].startswith("SI")
        units = {k: g[k].attrs["units"] for k in ("t", "nodes", "displacement", "velocity", "frame/origin",
                                                   "frame/omega", "element_data/axial_force")}
    assert units == {"t": "s", "nodes": "m", "displacement": "m", "velocity": "m/s", "frame/origin": "m",
                     "frame/omega": "rad/s", "element_data/axial_force": "N"}


def test_euler_parameters_of_random_rotations():
    """R rebuilt from e by R = (2 e0^2 - 1) I + 2 (e e^T + e0 [e]x) equals R, e0 >= 0, |e| = 1."""
    rng = np.random.default_rng(3)
    Q, _ = np.linalg.qr(rng.normal(size=(200, 3, 3)))
    R = Q * np.sign(np.linalg.det(Q))[:, None, None]
    R[:3] = [np.eye(3), Rz(np.pi), np.diag([-1.0, 1.0, -1.0])]                # near-singular cases
    e = euler_parameters(R)
    e0, v = e[:, 0], e[:, 1:]
    skew = np.zeros((len(e), 3, 3))
    skew[:, 0, 1], skew[:, 0, 2], skew[:, 1, 2] = -v[:, 2], v[:, 1], -v[:, 0]
    skew -= skew.transpose(0, 2, 1)
    back = ((2 * e0**2 - 1)[:, None, None] * np.eye(3) + 2 * (v[:, :, None] * v[:, None, :]
                                                               + e0[:, None, None] * skew))
    np.testing.assert_allclose(back, R, atol=1e-13)
    assert np.all(e0 >= 0) and np.allclose(np.linalg.norm(e, axis=1), 1.0)


def _step_geometries(xdmf):
    """Node positions of each time step of an XDMF file with a geometry per step."""
    root = ET.parse(xdmf).getroot()
    steps = root.find("Domain/Grid[@GridType='Collection']")
    out = []
    with h5py.File(xdmf.with_suffix(".h5")) as f:
        for grid in steps:
            item = grid.find("Geometry/DataItem")
            out.append((float(grid.find("Time").get("Value")), f[item.text.split(":")[1]][()]))
    return out


def test_global_paraview_files_turn_with_the_frame(tmp_path):
    res = fm.run(spinning_bar(), t_end=0.1, dt_out=0.002)
    files = io.export_paraview(res, tmp_path, every=5)
    assert {p.name for p in files.values()} == {"paraview.xdmf", "paraview_final.vtu", "paraview_global.xdmf",
                                                "paraview_global_final.vtu"}
    X = np.pad(res.nodes, ((0, 0), (0, 1)))
    u = np.pad(res.displacement, ((0, 0), (0, 0), (0, 1)))
    steps = _step_geometries(files["xdmf_global"])
    assert len(steps) == 11
    for t, points in steps:                      # r = R(Omega t) (X + u), closed-form rotation
        i = int(np.argmin(abs(res.t - t)))
        np.testing.assert_allclose(points, (X + u[i]) @ Rz(OMEGA * t).T, atol=1e-12)
    tip = steps[-1][1][-1]
    assert np.arctan2(tip[1], tip[0]) == pytest.approx(OMEGA * 0.1)             # 1.5 rad: it turned
    with meshio.xdmf.TimeSeriesReader(files["xdmf_global"]) as reader:
        reader.read_points_cells()
        _, point_data, cell_data = reader.read_data(reader.num_steps - 1)
    # absolute velocity = d/dt of the global positions: central difference over 2 us (the elastic part
    # R u' is ~0.1 m/s here, the rigid part up to 15 m/s; dense-output error of positions ~1e-10 m)
    h = 1e-6
    fine = fm.run(spinning_bar(), t_end=0.0101, t_eval=[0.01 - h, 0.01, 0.01 + h], rtol=1e-10, atol=1e-14)
    r = fine.global_positions()
    v_fd = (r[2] - r[0]) / (2 * h)
    v_mid = io.paraview._states(fine, [1], io.paraview._cells(fine), "global")[1]["velocity"][0]
    assert np.abs(fine.velocity[1]).max() > 0.01                # the elastic part is in the check
    np.testing.assert_allclose(v_mid, v_fd, rtol=0, atol=1e-4)
    r = res.global_positions()
    np.testing.assert_allclose(point_data["displacement"], u[-1] @ Rz(OMEGA * res.t[-1]).T, atol=1e-15)
    np.testing.assert_array_equal(cell_data["axial_force"][0], res.element_data["axial_force"][-1])
    vtu = meshio.read(files["vtu_global"])
    np.testing.assert_allclose(vtu.points, r[-1], atol=1e-12)
    text = files["xdmf_global"].read_text()
    assert json.loads(ET.fromstring(text).find("Domain/Information[@Name='units']").get("Value"))["stress"] == "Pa"
    assert "frame global; units" in files["vtu_global"].read_text()
    with h5py.File(files["xdmf"].with_suffix(".h5")) as f:
        assert f.attrs["frame"] == "body" and json.loads(f.attrs["units"])["displacement"] == "m"
    with pytest.raises(ValueError, match="`frame` must be one of"):
        io.write_xdmf(res, tmp_path / "x.xdmf", frame="inertial")


def test_export_accepts_results_npz(tmp_path, capsys):
    from flexmbs.cli import main
    res = fm.run(spinning_bar(), t_end=0.01, dt_out=0.001)
    npz = res.save_npz(tmp_path / "results.npz")
    assert main(["export", str(npz), "--out", str(tmp_path / "pv")]) == 0
    assert "paraview_global.xdmf" in capsys.readouterr().out
    mesh = meshio.read(tmp_path / "pv" / "paraview_final.vtu")
    assert mesh.cells[0].type == "line" and len(mesh.cells[0].data) == 4
    assert main(["export", str(npz), "--run", "x"]) == 2
    old = tmp_path / "old.npz"                                      # a results.npz of the cases' contract
    np.savez(old, t=res.t, displacement=res.displacement, nodes=res.nodes)
    assert main(["export", str(old), "--out", str(tmp_path / "old")]) == 0
    assert "global" not in capsys.readouterr().out                  # no frame motion: body frame only


def test_vtk_reads_the_moving_global_geometry(tmp_path):
    """VTK's own XDMF reader (what ParaView's XDMF Reader uses) sees the blade turn; skipped
    without the vtk package (pip install vtk)."""
    xdmf2 = pytest.importorskip("vtkmodules.vtkIOXdmf2", reason="the vtk package is not installed")
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkCommonExecutionModel import vtkStreamingDemandDrivenPipeline
    res = fm.run(spinning_bar(), t_end=0.1, dt_out=0.01)
    files = io.export_paraview(res, tmp_path)
    reader = xdmf2.vtkXdmfReader()
    reader.SetFileName(str(files["xdmf_global"]))
    reader.UpdateInformation()
    times = reader.GetOutputInformation(0).Get(vtkStreamingDemandDrivenPipeline.TIME_STEPS())
    np.testing.assert_allclose(times, res.t)
    for i in (0, 5, 10):
        reader.UpdateTimeStep(times[i])
        out = reader.GetOutputDataObject(0)
        grid = out if out.IsA("vtkDataSet") else out.GetBlock(0)
        np.testing.assert_allclose(vtk_to_numpy(grid.GetPoints().GetData()), res.global_positions()[i], atol=1e-12)
