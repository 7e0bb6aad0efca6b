"""Results files: streamed during the run, kept when it stops early, read back; ParaView files; plots."""
import subprocess
import sys
import textwrap

import h5py
import meshio
import numpy as np
import pytest

import flexmbs as fm
from flexmbs import io, plots
from flexmbs.io.store import FORMAT


def bar_model(n_el=4, damping=None):
    mesh = fm.generate.line(n_el, 1.0)
    bar = fm.Bar2(fm.Material(E=210e9, rho=50_000.0), area=0.2e-4)
    load = fm.NodalLoad("end", "u", 1.0, lambda t: np.sin(200.0 * t))
    return fm.Model(mesh, bar, motion=fm.motion.ConstantRotation(15.0), fixed=[("start", "all")], loads=[load],
                    damping=damping)


def quad_model():
    mesh = fm.generate.rectangle(3, 1, 1.0, 0.2)
    return fm.Model(mesh, fm.Quad4(fm.Material(E=70e9, rho=2700.0, nu=0.3), thickness=0.01),
                    motion=fm.motion.ConstantRotation(20.0), fixed=[("left", "all")])


RUN = dict(formulation="hamilton", method="DOP853", rtol=1e-6, t_end=2e-3, dt_out=1e-4)


def test_streamed_file_equals_the_returned_results(tmp_path):
    path = tmp_path / "r.h5"
    res = fm.run(bar_model(), store=path, metadata={"case": "bar", "parameters": {"n_el": 4}}, **RUN)
    ref = fm.run(bar_model(), **RUN)                                       # no store: the old path
    back = fm.load_results(path)
    assert back.status == res.status == "finished"
    for key in ("t", "delta", "delta_dot", "displacement", "velocity", "nodes"):
        np.testing.assert_array_equal(getattr(back, key), getattr(res, key), err_msg=key)
        np.testing.assert_allclose(getattr(ref, key), getattr(res, key), rtol=1e-12, atol=1e-20, err_msg=key)
    assert back.t.shape == (21,) and back.displacement.shape == (21, 5, 2)
    assert set(back.energies) == set(res.energies) == {
        "T", "T2", "T1", "T0", "V", "V_geo", "V_g", "jacobi", "W_loads", "W_damping", "W_frame", "W_stiffening"}
    for key, value in res.energies.items():
        np.testing.assert_array_equal(back.energies[key], value, err_msg=key)
    np.testing.assert_array_equal(back.element_data["axial_force"], res.element_data["axial_force"])
    np.testing.assert_array_equal(back.cells["line"], res.cells["line"])
    md = back.metadata
    assert md["flexmbs_version"] == fm.__version__ and md["units"].startswith("SI")
    assert md["formulation"] == "hamilton" and md["method"] == "DOP853" and md["rtol"] == 1e-6
    assert md["parameters"] == {"n_el": 4} and md["case"] == "bar" and md["run"] == "bar"
    assert md["mesh_source"].startswith("generate.line") and len(md["mesh_sha256"]) == 64
    assert {"build_s", "solve_s", "output_s", "post_s", "n_rhs"} <= set(back.stats)
    assert back.energy_balance_error().max() < 1e-6 * np.abs(back.energies["T"]).max()


def test_axial_force_is_EA_times_strain_and_tension_under_spin(tmp_path):
    res = fm.run(bar_model(), **RUN)
    N = res.element_data["axial_force"]
    u = res.displacement[..., 0]
    np.testing.assert_allclose(N, 210e9 * 0.2e-4 * np.diff(u, axis=1) / 0.25, rtol=1e-12)
    assert N.shape == (21, 4)


def test_each_output_is_on_disk_before_the_run_goes_on(tmp_path):
    path = tmp_path / "r.h5"
    seen = []

    def look(t, x):              # another reader, while the run writes the file (SWMR)
        seen.append(len(fm.load_results(path).t))

    fm.run(bar_model(), store=path, on_output=look, **RUN)
    assert seen == list(range(1, 22))


@pytest.mark.parametrize(("exc", "status"), [(KeyboardInterrupt, "interrupted"), (RuntimeError, "error")])
def test_a_run_stopped_by_an_exception_keeps_its_outputs(tmp_path, exc, status):
    path = tmp_path / "r.h5"

    def stop(t, x):
        if t > 0.95e-3:
            raise exc("stop here")

    with pytest.raises(exc):
        fm.run(bar_model(), store=path, on_output=stop, **RUN)
    back = fm.load_results(path)
    assert back.status == status and "11 outputs" in back.message      # t = 1e-3 was written first
    np.testing.assert_allclose(back.t, np.arange(11) * 1e-4, atol=1e-15)
    assert back.displacement.shape == (11, 5, 2) and "W_loads" not in back.energies
    plots.energy_balance(back)                                  # no works: still plots


def test_a_killed_run_keeps_what_it_wrote(tmp_path):
    """SIGKILL while the file is open for writing: no status, but every flushed output."""
    path = tmp_path / "r.h5"
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(__file__.rsplit('/', 1)[0])!r})
        import flexmbs as fm
        from test_results_io import bar_model, RUN
        def slow(t, x):
            if t > 0.95e-3:
                print("ready", flush=True)
                time.sleep(60)
        fm.run(bar_model(), store={str(path)!r}, on_output=slow, **RUN)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
    finally:
        proc.kill()
        proc.wait()
    back = fm.load_results(path)
    assert back.status == "incomplete" and "killed" in back.message
    assert len(back.t) == 11 and back.t[-1] == pytest.approx(1e-3)       # t = 1e-3 was written first
    assert io.list_runs(path) == {"run": "incomplete"}


def test_a_diverged_run_is_recorded_with_its_status(tmp_path):
    path = tmp_path / "r.h5"
    res = fm.run(bar_model(), method="AB4", h=5e-5, t_end=2e-3, dt_out=1e-4, store=path, divergence_limit=1e3)
    back = fm.load_results(path)
    assert res.status == back.status == "diverged" and back.message == res.message
    np.testing.assert_array_equal(back.t, res.t)
    assert 0 < len(back.t) < 21


def test_recording_collects_every_run_with_unique_names(tmp_path):
    path = tmp_path / "all.h5"
    with io.recording(path, metadata={"case": "two"}) as rec:
        with io.recording(path):                                # the same file: reused
            fm.run(bar_model(), **RUN)
        fm.run(bar_model(), metadata={"run": "damped"}, **RUN)
        fm.run(bar_model(), store=False, **RUN)                 # not recorded
        fm.run(bar_model(), **RUN)
    assert rec.runs == ["two", "damped", "two_2"]
    assert io.list_runs(path) == {"two": "finished", "damped": "finished", "two_2": "finished"}
    assert fm.load_results(path).metadata["run"] == "two_2"     # the main run: the last one
    assert fm.load_results(path, run="damped").metadata["case"] == "two"
    with pytest.raises(KeyError, match="two_2"):
        fm.load_results(path, run="nope")
    assert io.active_recording() is None


def test_whole_results_and_npz_round_trip(tmp_path):
    res = fm.run(bar_model(), **RUN)
    back = fm.load_results(io.save_results(res, tmp_path / "saved.h5", name="mine"))
    assert back.metadata["run"] == "mine"
    np.testing.assert_array_equal(back.displacement, res.displacement)
    np.testing.assert_array_equal(back.energies["W_frame"], res.energies["W_frame"])
    npz = fm.load_results(res.save_npz(tmp_path / "results.npz"))
    np.testing.assert_array_equal(npz.displacement, res.displacement)
    np.testing.assert_array_equal(npz.energies["T"], res.energies["T"])
    assert npz.status == "finished" and fm.Results.load(tmp_path / "saved.h5").t.shape == res.t.shape


def test_bad_files_are_reported(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        fm.load_results(tmp_path / "missing.h5")
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["x"] = 1.0
    with pytest.raises(ValueError, match="not a flexmbs results file"):
        fm.load_results(tmp_path / "other.h5")
    with pytest.raises(TypeError, match="`store`"):
        fm.run(bar_model(), store=3, **RUN)
    with h5py.File(tmp_path / "r.h5", "w") as f:
        f.attrs["format"] = FORMAT
    with pytest.raises(ValueError, match="no run"):
        fm.load_results(tmp_path / "r.h5")


# ------------------------------------------------------------------------------------------ ParaView
def test_xdmf_time_series_reads_back_with_meshio(tmp_path):
    res = fm.load_results(io.save_results(fm.run(bar_model(), **RUN), tmp_path / "r.h5"))
    xdmf = io.write_xdmf(res, tmp_path / "pv" / "bar.xdmf", every=5)
    assert (tmp_path / "pv" / "bar.h5").is_file() and not (tmp_path / "bar.h5").exists()
    with meshio.xdmf.TimeSeriesReader(xdmf) as reader:
        points, cells = reader.read_points_cells()
        assert reader.num_steps == 5                                 # outputs 0, 5, 10, 15, 20
        np.testing.assert_array_equal(points, np.pad(res.nodes, ((0, 0), (0, 1))))
        assert [(c.type, len(c.data)) for c in cells] == [("line", 4)]
        for k, i in enumerate((0, 5, 10, 15, 20)):
            t, point_data, cell_data = reader.read_data(k)
            assert t == pytest.approx(res.t[i])
            np.testing.assert_array_equal(point_data["displacement"][:, :2], res.displacement[i])
            np.testing.assert_array_equal(point_data["displacement"][:, 2], 0.0)      # planar: padded
            np.testing.assert_array_equal(point_data["velocity"][:, :2], res.velocity[i])
            np.testing.assert_array_equal(cell_data["axial_force"][0], res.element_data["axial_force"][i])
    assert 'NodesPerElement="2"' in xdmf.read_text()            # line cells for ParaView's XDMF3 reader


def test_solid_stress_in_xdmf_and_a_state_as_vtu(tmp_path):
    res = fm.run(quad_model(), t_end=1e-3, dt_out=2.5e-4)
    stress = res.element_data["stress"]
    assert stress.shape == (5, 3, 6) and res.element_data["von_mises"].shape == (5, 3)
    assert np.all(stress[-1, :, 0] > 0) and np.all(stress[:, :, 2:5] == 0)   # spin: radial tension; plane stress
    xdmf = io.write_xdmf(res, tmp_path / "plate.xdmf")
    with meshio.xdmf.TimeSeriesReader(xdmf) as reader:
        _, cells = reader.read_points_cells()
        assert cells[0].type == "quad" and reader.num_steps == 5
        _, _, cell_data = reader.read_data(4)
        np.testing.assert_array_equal(cell_data["stress"][0], stress[-1][:, [0, 1, 2, 5, 3, 4]])  # XX..XY, YZ, XZ
    vtu = io.write_vtu(res, tmp_path / "state.vtu", index=2)
    mesh = meshio.read(vtu)
    np.testing.assert_array_equal(mesh.point_data["displacement"][:, :2], res.displacement[2])
    np.testing.assert_array_equal(mesh.cell_data["von_mises"][0], res.element_data["von_mises"][2])
    assert mesh.field_data["TimeValue"][0] == pytest.approx(res.t[2])
    with pytest.raises(IndexError, match="outputs"):
        io.write_vtu(res, tmp_path / "bad.vtu", index=5)


# --------------------------------------------------------------------------------------------- plots
def test_plots_of_loaded_results(tmp_path):
    res = fm.load_results(io.save_results(fm.run(quad_model(), t_end=1e-3, dt_out=2.5e-4), tmp_path / "r.h5"))
    fig = plots.displacement_histories(res, [3, 7], components=("x", "y"))
    assert fig.axes[0].get_ylabel().startswith("displacement [") and fig.axes[0].get_xlabel() == "t [s]"
    assert len(fig.axes[0].lines) == 4
    fig = plots.displacement_histories(res, [7], quantity="velocity")
    assert "m/s" in fig.axes[0].get_ylabel()
    assert len(plots.dof_histories(res, [0, 1]).axes[0].lines) == 2
    fig = plots.deformed_shape(res, [0.0, 1e-3], scale=100.0)
    assert "x 100" in fig.axes[0].get_title() and fig.axes[0].get_xlabel() == "x [m]"
    gif = plots.animate(res, tmp_path / "a.gif", max_frames=3)
    assert gif.read_bytes()[:6] in (b"GIF89a", b"GIF87a")
    plots.save(plots.energy_balance(res), tmp_path / "e.png")
    with pytest.raises(ValueError, match="components"):
        plots.displacement_histories(res, [0], components=("z",))
    with pytest.raises(ValueError, match="plane"):
        plots.deformed_shape(res, [0.0], plane="xz")


@pytest.mark.parametrize("method", ["exact", "DOP853"])
def test_solve_time_of_a_stored_run_is_never_negative(tmp_path, method):
    """solve_s = the integration's wall time less the output work done inside it; the last batch
    of outputs is written after the integration ends and must not be subtracted (the README's
    rotating bar printed 'solve -0.369 s' with the exact integrator)."""
    from flexmbs.signals import Harmonic
    load = fm.NodalLoad("end", "u", 1.0, Harmonic(200.0, 1.0))          # exact takes harmonic loads
    model = fm.Model(fm.generate.line(4, 1.0), fm.Bar2(fm.Material(E=210e9, rho=50_000.0), area=0.2e-4),
                     motion=fm.motion.ConstantRotation(15.0), fixed=[("start", "all")], loads=[load])
    res = fm.run(model, store=tmp_path / "r.h5", formulation="lagrange", method=method, rtol=1e-6,
                 t_end=2e-3, dt_out=1e-5)
    assert res.stats["solve_s"] >= 0.0 and res.stats["output_s"] >= 0.0


def test_an_output_directory_reads_as_its_results_file(tmp_path, capsys):
    """`flexmbs run --out DIR` writes DIR/results.h5: load_results, list_runs, `flexmbs results` and
    `flexmbs export` take DIR too; a directory without one is named."""
    from flexmbs import cli
    out = tmp_path / "out"
    assert cli.main(["-q", "run", "rotating_bar", "--set", "elements=3", "--set", "t_end=0.002",
                     "--set", "dt_out=2e-4", "--set", "plots=false", "--no-paraview", "--out", str(out)]) == 0
    a, b = fm.load_results(out), fm.load_results(out / "results.h5")
    np.testing.assert_array_equal(a.displacement, b.displacement)
    assert fm.io.list_runs(out) == fm.io.list_runs(out / "results.h5") == {"undamped": "finished"}
    capsys.readouterr()
    assert cli.main(["results", str(out)]) == 0
    assert f"{out / 'results.h5'}: 1 run(s)" in capsys.readouterr().out
    assert cli.main(["export", str(out)]) == 0 and (out / "paraview.xdmf").is_file()
    with pytest.raises(FileNotFoundError, match=rf"{tmp_path} is a directory without a results.h5"):
        fm.load_results(tmp_path)
