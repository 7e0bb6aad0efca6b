"""ParaView, `flexmbs results`, `flexmbs export` and the `flexmbs run` summary of a System run from its
`Results` alone (issue 21, items 4-6): a rigid link on a pivot carrying a flexible beam on a pin,
streamed to results.h5 by `flexmbs.run`; the rigid bodies' display shapes and the joints' positions
are in the file, `flexmbs export DIR` writes the global-frame series that VTK's XDMF reader reads
back with the link's box and the beam's nodes moving."""
from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

import flexmbs as fm
from flexmbs import cli
from flexmbs.bodies import Node, PointMass
from flexmbs.io.paraview import PARTS, inertia_box

from test_paraview_system import points_of, vtk_steps

MECHANISM = '''
import numpy as np
import flexmbs as fm
from flexmbs.bodies import FlexibleBody, RigidBodyEP
from flexmbs.constraints import Revolute


def mechanism():
    """A rigid link (1 m, 2 kg) on a pivot about z, carrying a flexible aluminium beam (0.5 m, 4
    elements) on a pin at its tip; gravity along -y."""
    z = np.array([0.0, 0.0, 1.0])
    link = RigidBodyEP("link", 2.0, [1e-4, 2.0 / 12, 2.0 / 12], centroid=[0.5, 0.0, 0.0])
    model = fm.Model(fm.generate.line(4, 0.5), fm.BeamEB2D(fm.Material(E=70e9, rho=2700.0), area=1e-4, I=1e-9),
                     fixed=[("start", "u"), ("start", "v"), ("end", "v")])
    beam = FlexibleBody(model, "beam", position=[1.0, 0.0, 0.0])
    return fm.System([link, beam], [Revolute(None, link, at=[0.0, 0.0, 0.0], axis=z, name="pivot"),
                                    Revolute(link, beam, at=[1.0, 0.0, 0.0], axis=z, name="pin")],
                     gravity=[0.0, -9.81, 0.0])
'''
exec(MECHANISM)                                  # defines mechanism() here; the CLI's case below has the same

CASE = '''"""A rigid link and a flexible beam on pins, for the CLI tests."""
''' + MECHANISM + '''
DEFAULTS = dict(t_end=0.1, paraview=True)


def run(out=None, **params):
    p = {**DEFAULTS, **params}
    return fm.run(mechanism(), t_end=p["t_end"], h=1e-3, dt_out=0.01, name="swing")
'''

DICT_CASE = '''"""A case that integrates without flexmbs.run and returns a summary dict."""
DEFAULTS = dict(n=1)


def run(out=None, **params):
    return {"status": "finished", "message": "", "t": [0.0, 1.0]}
'''


@pytest.fixture(scope="module")
def swing(tmp_path_factory):
    """The mechanism over 0.2 s (21 outputs), streamed to DIR/results.h5: (Results, DIR)."""
    out = tmp_path_factory.mktemp("swing")
    res = fm.run(mechanism(), t_end=0.2, h=1e-3, dt_out=0.01, store=out / "results.h5")
    assert res.status == "finished"
    return res, out


def test_rigid_body_shape_is_its_inertia_box_and_global_positions_place_it(swing):
    """The link's nodes are the 8 corners of its inertia box about the centroid (principal axes =
    body axes here), one hexahedron; global_positions() = R + A X, the box centre the centroid."""
    res, _ = swing
    link = res.bodies["link"]
    half = inertia_box(2.0, [1e-4, 2.0 / 12, 2.0 / 12])
    assert link.nodes.shape == (8, 3) and link.cells["hexahedron"].tolist() == [list(range(8))]
    np.testing.assert_allclose(np.abs(link.nodes - [0.5, 0.0, 0.0]).max(axis=0), half, rtol=1e-12)
    x = link.global_positions()
    assert x.shape == (len(res.t), 8, 3)
    centroid = link.position + np.einsum("tij,j->ti", link.rotation, [0.5, 0.0, 0.0])
    np.testing.assert_allclose(x.mean(axis=1), centroid, atol=1e-14)
    assert np.linalg.norm(x[-1] - x[0], axis=1).min() > 1e-3              # the link swings down


def test_joints_are_recorded_at_their_markers(swing):
    """``Results.joints``: the pivot stays at the origin; the pin is the link's tip, link.point(q, s)
    (a public method, one output at a time), and the beam's node 0 (joined there)."""
    res, _ = swing
    system = mechanism()
    link, beam = system.body("link"), system.body("beam")
    assert list(res.joints) == ["pivot", "pin"]
    np.testing.assert_allclose(res.joints["pivot"], 0.0, atol=1e-12)
    tips = [link.point(q[system.slice(link)], np.array([1.0, 0.0, 0.0])) for q in res.q]
    np.testing.assert_allclose(res.joints["pin"], tips, atol=1e-14)
    nodes0 = [beam.point(q[system.slice(beam)], Node(0)) for q in res.q]
    np.testing.assert_allclose(res.joints["pin"], nodes0, atol=1e-8)
    assert np.ptp(res.joints["pin"][:, 1]) > 0.01


def test_shapes_and_joints_read_back_from_the_file(swing):
    res, out = swing
    back = fm.load_results(out)
    assert list(back.joints) == ["pivot", "pin"]
    for name in res.joints:
        np.testing.assert_array_equal(back.joints[name], res.joints[name])
    for name in ("link", "beam"):
        np.testing.assert_array_equal(back.bodies[name].nodes, res.bodies[name].nodes)
        assert {k: v.tolist() for k, v in back.bodies[name].cells.items()} == \
            {k: v.tolist() for k, v in res.bodies[name].cells.items()}
    np.testing.assert_array_equal(back.bodies["link"].global_positions(), res.bodies["link"].global_positions())
    import h5py
    with h5py.File(out / "results.h5", "r") as f:
        g = f[back.metadata["run"]]
        assert g["bodies/link/nodes"].shape == (8, 3) and g["bodies/link/cells/hexahedron"].shape == (1, 8)
        assert g["joints/pin"].shape == (len(res.t), 3)


def test_export_writes_every_body_that_vtk_reads_moving(swing, tmp_path):
    """`flexmbs export DIR` of the System run: paraview.xdmf read by VTK's XDMF reader has the link's
    box (hexahedron + 3 axes) at R + A X and the beam's 5 nodes at R + A (X + u) at every step, both
    moving between two steps, and the joints; paraview_final.vtu holds the last state."""
    res, out = swing
    assert cli.main(["export", str(out), "--out", str(tmp_path), "--every", "4"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["paraview.h5", "paraview.xdmf", "paraview_final.vtu"]
    times, steps = vtk_steps(tmp_path / "paraview.xdmf")
    kept = [0, 4, 8, 12, 16, 20]
    np.testing.assert_allclose(times, res.t[kept], rtol=0, atol=1e-15)
    VTK_HEXAHEDRON, VTK_POLY_LINE, VTK_POLY_VERTEX = 12, 4, 2
    box, beam = res.bodies["link"].global_positions(), res.bodies["beam"].global_positions()
    for k, step in zip(kept, steps):
        types, fields = np.array(step[1]), step[3]
        assert types[fields["body"] == 0].tolist() == [VTK_HEXAHEDRON] + [VTK_POLY_LINE] * 3
        assert types[fields["body"] == 1].tolist() == [VTK_POLY_LINE] * 4
        assert types[fields["part"] == PARTS["joint"]].tolist() == [VTK_POLY_VERTEX] * 2
        np.testing.assert_allclose(step[0][points_of(step, 0)], box[k], atol=1e-14)
        np.testing.assert_allclose(step[0][points_of(step, 1)], beam[k], atol=1e-14)
        np.testing.assert_allclose(step[0][points_of(step, -1, PARTS["joint"])],
                                   [res.joints["pivot"][k], res.joints["pin"][k]], atol=1e-14)
        assert np.all(np.isfinite(fields["axial_force"][fields["body"] == 1]))
    first, last = steps[1], steps[-1]
    assert np.linalg.norm(last[0][points_of(last, 0)] - first[0][points_of(first, 0)], axis=1).min() > 1e-3
    assert np.linalg.norm(last[0][points_of(last, 1)] - first[0][points_of(first, 1)], axis=1).min() > 1e-3
    import meshio
    final = meshio.read(tmp_path / "paraview_final.vtu")
    np.testing.assert_allclose(final.points[:8], box[-1], atol=1e-14)
    assert np.concatenate(final.cell_data["body"]).tolist() == [0] * 4 + [1] * 4 + [-1] * 2


def test_results_prints_the_system_run(swing, capsys):
    res, out = swing
    assert cli.main(["results", str(out)]) == 0
    printed = capsys.readouterr().out
    balance = np.abs(res.energy_balance_error()).max()     # no load, driver or damper: the drift
    assert "run: finished, 21 outputs, t = 0 .. 0.2 s" in printed
    assert "    bodies: link (rigid), beam (flexible)\n" in printed
    assert ("    constraints: 12 rows: link.euler_parameter_norm, beam.euler_parameter_norm, pivot (5), pin (5); "
            "joints drawn: pivot, pin\n") in printed
    assert "    index3 + index3-alpha (h 0.001)\n" in printed
    assert f"max |E - E(t0) - W| = {balance:.3g} J" in printed
    assert "DOFs" not in printed                         # not the Model's line


@pytest.fixture
def cases_dir(tmp_path):
    d = tmp_path / "cases"
    d.mkdir()
    (d / "swing.py").write_text(CASE)
    (d / "summary_only.py").write_text(DICT_CASE)
    return d


@pytest.mark.parametrize("options, written", [
    ([], True), (["--no-paraview"], False), (["--set", "paraview=false"], False)])
def test_run_writes_paraview_of_a_system_case(cases_dir, tmp_path, capsys, restore_logging, options, written):
    """`flexmbs run` of a case that calls flexmbs.run(system): results.h5, its System summary and
    paraview.xdmf (+ paraview_final.vtu), unless --no-paraview or the case's parameter paraview=false."""
    out = tmp_path / "out"
    assert cli.main(["--cases", str(cases_dir), "run", "swing", "--out", str(out), *options]) == 0
    printed = capsys.readouterr().out
    assert "run swing: finished, 11 outputs to t = 0.1 s" in printed
    assert "    bodies: link (rigid), beam (flexible)\n" in printed
    assert (out / "paraview.xdmf").is_file() == written and (out / "paraview_final.vtu").is_file() == written
    assert ("ParaView: paraview.xdmf, paraview_final.vtu" in printed) == written
    if written:
        times, steps = vtk_steps(out / "paraview.xdmf")
        assert len(times) == 11 and not np.allclose(steps[1][0], steps[-1][0])


def test_run_says_plainly_a_case_ran_without_flexmbs_run(cases_dir, tmp_path, capsys, restore_logging):
    out = tmp_path / "out"
    assert cli.main(["--cases", str(cases_dir), "run", "summary_only", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "case summary_only ran without flexmbs.run: no results.h5; the case wrote no files" in printed
    assert "run run:" not in printed and not (out / "results.h5").exists()


def test_point_mass_is_a_vertex_and_its_position_is_its_node(tmp_path):
    """A thrown point mass: one vertex at its position, no axes, no joints; the file and
    ``global_positions`` agree (x = x0 + v0 t - g t^2 / 2)."""
    ball = PointMass("ball", 1.0, (0.3, 0.0, 0.0), velocity=(0.0, 1.0, 0.0))
    res = fm.run(fm.System([ball], gravity=(0.0, 0.0, -9.81)), t_end=0.05, h=1e-3, dt_out=0.01, store=False)
    b = res.bodies["ball"]
    assert b.nodes.tolist() == [[0.0, 0.0, 0.0]] and b.cells["vertex"].tolist() == [[0]] and not res.joints
    np.testing.assert_allclose(b.global_positions()[:, 0], b.position, atol=0)
    np.testing.assert_allclose(b.position[-1], [0.3, 0.05, -9.81 * 0.05**2 / 2], atol=1e-9)
    _, steps = vtk_steps(fm.io.write_results_xdmf(res, tmp_path / "ball.xdmf"))
    assert steps[-1][1] == [2] and steps[-1][3]["part"].tolist() == [PARTS["body"]]
    np.testing.assert_allclose(steps[-1][0][0], b.position[-1], atol=1e-15)


def test_sweep_peak_displacement_of_a_system_run():
    """The sweep's ``peak_displacement`` of a System run is the largest elastic displacement of its
    flexible bodies; a rigid-only System has none (no nan)."""
    from flexmbs.sweep import _peak
    res = fm.run(mechanism(), t_end=0.05, h=1e-3, dt_out=0.01, store=False)
    record = _peak((res, None, {}))
    assert record["peak_displacement"] == np.abs(res.bodies["beam"].displacement).max() > 0
    rigid = fm.run(fm.System([PointMass("ball", 1.0, (0.3, 0.0, 0.0))], gravity=(0, 0, -9.81)),
                   t_end=0.01, h=1e-3, dt_out=0.005, store=False)
    assert _peak(rigid) == {"status": "finished", "message": rigid.message}
