"""The `flexmbs` command: cases found generically, parameters checked and typed, files written."""
import io as _io
import re
import subprocess
import sys
import textwrap
from pathlib import Path


import meshio
import numpy as np

import pytest

import flexmbs as fm
from flexmbs import cli, progress

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--set", "elements=4", "--set", "t_end=0.002", "--set", "dt_out=2e-4"]

# a case written to the protocol (docstring, DEFAULTS, run) that is not in cases/
FAKE_CASE = '''"""A tiny spinning bar, for the CLI tests.

More text.
"""
import numpy as np
import flexmbs as fm

DEFAULTS = dict(elements=3, omega=10.0, stop_after=0.0, spin=True, label="bar", sizes=(1, 2), extra=None)


def run(out=None, **params):
    p = {**DEFAULTS, **params}
    model = fm.Model(fm.generate.line(p["elements"], 1.0), fm.Bar2(fm.Material(E=1e9, rho=1000.0), 1e-4),
                     motion=fm.motion.ConstantRotation(p["omega"]), fixed=[("start", "all")])

    def stop(t, x):
        if p["stop_after"] and t >= p["stop_after"] - 1e-12:
            raise KeyboardInterrupt

    return fm.run(model, t_end=2e-3, dt_out=2e-4, on_output=stop, metadata={"seen": p})
'''


@pytest.fixture
def cases_dir(tmp_path):
    d = tmp_path / "cases"
    d.mkdir()
    (d / "fake.py").write_text(FAKE_CASE)
    (d / "helper.py").write_text('"""Not a case: no DEFAULTS."""\ndef run():\n    pass\n')
    (d / "timing.py").write_text('"""Timing."""\nimport sys\n\ndef main(argv=None):\n'
                                 '    print("timing", argv)\n    return 0\n')
    return d


pytestmark = pytest.mark.usefixtures("restore_logging")    # tests/conftest.py


def test_cases_lists_every_protocol_script_with_its_first_docstring_line(capsys, cases_dir):
    assert cli.main(["cases", "--cases", str(cases_dir)]) == 0
    out = capsys.readouterr().out
    assert "fake  A tiny spinning bar, for the CLI tests." in out
    assert "helper" not in out and "timing" not in out
    assert cli.main(["cases"]) == 0                                           # the real ones
    assert "rotating_bar" in capsys.readouterr().out


def test_run_a_case_writes_results_paraview_and_the_resolved_toml(tmp_path, capsys, cases_dir):
    out = tmp_path / "o"
    code = cli.main(["-q", "run", "fake", "--cases", str(cases_dir), "--set", "elements=5", "--set", "omega=20",
                     "--set", "spin=no", "--set", "sizes=3,4", "--set", "label=x y", "--out", str(out)])
    assert code == 0, capsys.readouterr()
    res = fm.load_results(out / "results.h5")
    assert res.status == "finished" and res.displacement.shape == (11, 6, 2)
    seen = res.metadata["seen"]
    assert (seen["elements"], seen["omega"], seen["spin"], seen["sizes"], seen["label"]) == (5, 20.0, False, [3, 4],
                                                                                             "x y")
    assert res.metadata["case"] == "fake" and res.metadata["parameters"]["omega"] == 20.0
    with meshio.xdmf.TimeSeriesReader(out / "paraview.xdmf") as reader:
        reader.read_points_cells()
        assert reader.num_steps == 11
        t, point_data, _ = reader.read_data(10)
        np.testing.assert_array_equal(point_data["displacement"][:, :2], res.displacement[-1])
    assert (out / "paraview_final.vtu").is_file()
    # the TOML written back repeats the run
    case, params, toml_out = cli.read_case_toml(out / "case.toml")
    assert case == "fake" and toml_out == out.as_posix()
    assert params == {"elements": 5, "omega": 20.0, "stop_after": 0, "spin": False, "label": "x y", "sizes": [3, 4]}
    out2 = tmp_path / "o2"
    assert cli.main(["-q", "run", str(out / "case.toml"), "--cases", str(cases_dir), "--out", str(out2)]) == 0
    np.testing.assert_array_equal(fm.load_results(out2 / "results.h5").displacement, res.displacement)


def test_a_toml_case_file_with_set_overrides(tmp_path, cases_dir):
    f = tmp_path / "my.toml"
    f.write_text('case = "fake"\nout = "%s"\n[parameters]\nelements = 2\nomega = 5\n' % (tmp_path / "t").as_posix())
    assert cli.main(["-q", "run", str(f), "--cases", str(cases_dir), "--set", "elements=3", "--no-paraview"]) == 0
    res = fm.load_results(tmp_path / "t" / "results.h5")
    assert res.metadata["seen"]["elements"] == 3 and res.metadata["seen"]["omega"] == 5.0
    assert not (tmp_path / "t" / "paraview.xdmf").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--set", "elemnts=3"], "unknown parameter 'elemnts' for case fake; did you mean 'elements'"),
    (["--set", "elements=3.5"], "parameter 'elements' of case fake must be an integer"),
    (["--set", "omega=fast"], "must be a number"),
    (["--set", "spin=maybe"], "must be a boolean"),
    (["--set", "omega"], "KEY=VALUE"),
])
def test_unknown_keys_and_wrong_types_list_the_valid_keys(args, message, capsys, cases_dir, tmp_path):
    assert cli.main(["run", "fake", "--cases", str(cases_dir), "--out", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err
    assert message in err
    if "KEY=VALUE" not in message:
        assert "valid keys (default): elements (3), omega (10), stop_after (0), spin (True)" in err


@pytest.mark.parametrize(("text", "error"), [
    ('out = "x"\n', "`case` must name a case"),
    ('case = "fake"\nelements = 3\n', "unknown top-level keys ['elements']"),
    ('case = "fake"\n[parameters]\nelements = "three"\n', "must be an integer"),
    ('case = "nope"\n', "no case 'nope'"),
    ('case = = 1\n', "not valid TOML"),
])
def test_bad_case_files(text, error, tmp_path, capsys, cases_dir):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    assert cli.main(["run", str(f), "--cases", str(cases_dir)]) == 2
    assert error in capsys.readouterr().err


def test_not_a_case(capsys, cases_dir):
    assert cli.main(["run", "timing", "--cases", str(cases_dir)]) == 2
    assert "flexmbs bench" in capsys.readouterr().err
    assert cli.main(["run", "fak", "--cases", str(cases_dir)]) == 2
    assert "did you mean 'fake'" in capsys.readouterr().err


def test_parameter_types_follow_the_defaults():
    defaults = dict(n=1, x=1.0, flag=False, name="a", sizes=(5, 10), rtols=[1e-6], free=None)
    got = cli.parse_parameters("c", defaults, dict(n="12", x="1e-3", flag="True", name="b c", sizes="1, 2,3",
                                                     rtols="1e-8,1e-9", free="[1, 2]"))
    assert got == dict(n=12, x=1e-3, flag=True, name="b c", sizes=(1, 2, 3), rtols=[1e-8, 1e-9], free=[1, 2])
    assert cli.parse_parameters("c", defaults, {"x": "pi/100", "free": "word"}) == {"x": np.pi / 100, "free": "word"}
    assert cli.parse_parameters("c", defaults, {"x": 3, "n": 4.0}) == {"x": 3.0, "n": 4}      # TOML values
    for bad in ({"n": True}, {"flag": 1}, {"name": 3}, {"sizes": 5}):
        with pytest.raises(cli.CLIError, match="valid keys"):
            cli.parse_parameters("c", defaults, bad)


def test_toml_round_trip():
    params = dict(n=3, x=1e-6, big=210e9, flag=True, name='say "hi"', sizes=(1, 2), inf=float("inf"), unset=None)
    text = cli.dump_toml("c", params, "out/c")
    import tomllib
    data = tomllib.loads(text)
    assert data["case"] == "c" and data["out"] == "out/c"
    assert data["parameters"] == {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()
                                  if v is not None}
    assert "# unset = None" in text


def test_interrupted_case_keeps_its_outputs_and_exits_130(tmp_path, capsys, cases_dir):
    out = tmp_path / "i"
    code = cli.main(["run", "fake", "--cases", str(cases_dir), "--set", "stop_after=1e-3", "--out", str(out)])
    assert code == 130
    printed = capsys.readouterr().out
    assert "interrupted" in printed and "6 outputs" in printed
    res = fm.load_results(out / "results.h5")
    assert res.status == "interrupted" and len(res.t) == 6
    with meshio.xdmf.TimeSeriesReader(out / "paraview.xdmf") as reader:
        assert reader.num_steps == 6


def test_results_export_mesh_info_and_info(tmp_path, capsys, cases_dir):
    out = tmp_path / "o"
    assert cli.main(["-q", "run", "fake", "--cases", str(cases_dir), "--out", str(out), "--no-paraview"]) == 0
    capsys.readouterr()
    assert cli.main(["results", str(out / "results.h5")]) == 0
    printed = capsys.readouterr().out
    assert "fake: finished, 11 outputs" in printed and "lagrange + DOP853" in printed and "wall time" in printed
    assert cli.main(["export", str(out / "results.h5"), "--out", str(tmp_path / "pv"), "--every", "5"]) == 0
    with meshio.xdmf.TimeSeriesReader(tmp_path / "pv" / "paraview.xdmf") as reader:
        assert reader.num_steps == 3
    assert cli.main(["mesh", "info", str(ROOT / "meshes" / "plate_quad.msh")]) == 0
    printed = capsys.readouterr().out
    assert "quad" in printed and "node sets:" in printed and "bounding box" in printed and "orientation" in printed
    assert cli.main(["mesh", "info", str(tmp_path / "none.msh")]) != 0
    assert "not found" in capsys.readouterr().err
    assert cli.main(["info"]) == 0
    printed = capsys.readouterr().out
    assert f"flexmbs {fm.__version__}" in printed and "h5py" in printed and "HDF5" in printed


def test_bench_passes_its_options_to_the_timing_script(capsys, cases_dir):
    assert cli.main(["bench", "--cases", str(cases_dir), "--elements", "5", "--repeats", "1"]) == 0
    assert "timing ['--elements', '5', '--repeats', '1']" in capsys.readouterr().out


def test_python_dash_m_and_the_real_case(tmp_path):
    """`python -m flexmbs` runs the real rotating bar at small size, with progress off the terminal."""
    proc = subprocess.run([sys.executable, "-m", "flexmbs", "run", "rotating_bar", *TINY, "--set", "damping=0.05",
                           "--out", str(tmp_path)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "run undamped: finished" in proc.stdout and "run damped: finished" in proc.stdout
    for name in ("results.h5", "results.npz", "case.toml", "paraview_damped.xdmf", "paraview_undamped.xdmf",
                 "paraview_damped_final.vtu", "nodes_3_7_10_damped.png"):
        assert (tmp_path / name).is_file(), name
    assert fm.io.list_runs(tmp_path / "results.h5") == {"undamped": "finished", "damped": "finished"}
    npz = np.load(tmp_path / "results.npz")
    np.testing.assert_array_equal(npz["displacement"], fm.load_results(tmp_path / "results.h5").displacement)
    assert "\x1b[" not in proc.stderr                       # no progress bar when not on a terminal


def test_progress_bar_only_on_a_terminal_and_after_min_seconds():
    from rich.console import Console
    buf = _io.StringIO()
    shown = progress.Display(console=Console(file=buf, force_terminal=True, width=100), min_seconds=0.0)
    with shown.task("run", 0.0, 1.0) as tick:
        for t in np.linspace(0, 1, 5):
            tick(t)
    assert "run" in buf.getvalue() and "t = " in buf.getvalue()
    off = _io.StringIO()                        # off a terminal: no bar; lines only every line_seconds
    with progress.Display(console=Console(file=off, force_terminal=False)).task("r", 0.0, 1.0) as tick:
        tick(0.5)
    assert off.getvalue() == ""
    with progress.Display(enabled=False, console=Console(file=off, force_terminal=True)).task("r", 0.0, 1.0) as tick:
        assert tick is None
    buf = _io.StringIO()
    late = progress.Display(console=Console(file=buf, force_terminal=True), min_seconds=60.0)
    with late.task("run", 0.0, 1.0) as tick:
        tick(0.5)
    assert buf.getvalue() == ""


def test_library_never_prints(capsys, tmp_path):
    model = fm.Model(fm.generate.line(3, 1.0), fm.Bar2(fm.Material(E=1e9, rho=1000.0), 1e-4),
                     motion=fm.motion.ConstantRotation(10.0), fixed=[("start", "all")])
    with progress.display():
        fm.run(model, t_end=1e-3, dt_out=1e-4, store=tmp_path / "r.h5")
    assert capsys.readouterr() == ("", "")


def test_script_without_protocol_is_skipped(tmp_path):
    (tmp_path / "broken.py").write_text("def run(:\n")
    (tmp_path / "ok.py").write_text(textwrap.dedent('''
        DEFAULTS = {}
        def run(out=None):
            return None
    '''))
    cases = cli.discover_cases(tmp_path)
    assert list(cases) == ["ok"] and cases["ok"].summary == ""


def test_run_streams_a_multibody_case_into_results_h5(tmp_path, capsys):
    """A multibody case runs its System by `flexmbs.run`: `flexmbs run` streams it into
    DIR/results.h5 (the run named after the case, with its body) and reports it from there; the
    case's own results.npz and summary.json are still written."""
    out = tmp_path / "a01"
    assert cli.main(["run", "pendulum_a01", "--set", "t_end=0.02", "--set", "dt_out=0.01", "--no-plots",
                     "--set", "integrator=index3-alpha", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "no time integration" not in printed
    assert "run pendulum_a01: finished, 3 outputs to t = 0.02 s" in printed
    res = fm.load_results(out)
    assert res.status == "finished" and list(res.bodies) == ["pendulum"]
    assert res.metadata["case"] == "pendulum_a01" and res.stats["n_steps"] == 20
    with np.load(out / "results.npz") as data:
        assert data["t"].tolist() == pytest.approx([0.0, 0.01, 0.02])
        np.testing.assert_array_equal(res.bodies["pendulum"].position[:, :2], data["P1"])
    assert (out / "summary.json").is_file()


def test_run_reports_each_run_of_the_triple_pendulum_table(tmp_path, capsys):
    assert cli.main(["run", "triple_pendulum", "--set", "table=true", "--set", "t_end=0.003",
                     "--set", "dt_out=0.001", "--no-plots", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    for run in ("natural-augmented", "natural-udwadia-kalaba", "euler-parameters-augmented",
                "euler-parameters-udwadia-kalaba"):
        assert f"run {run}: finished, 4 outputs to t = 0.003 s" in printed
        res = fm.load_results(tmp_path, run)                  # each run of the table in DIR/results.h5
        assert res.status == "finished" and list(res.bodies) == ["bar1", "bar2", "bar3"]
        assert res.metadata["formulation"] == ("lagrange" if run.endswith("augmented") else "udwadia-kalaba")
        with np.load(tmp_path / run / "results.npz") as data:
            np.testing.assert_array_equal(res.energies["total"], data["energy"])


def test_run_reports_a_coupled_mechanism_by_its_run_information(tmp_path, capsys):
    """The coupled cases run their System by `flexmbs.run` into the CLI's results file: `flexmbs run`
    reports the index-3 run "coupled" (status, outputs, end time) and where to load it, not "no time
    integration"; the case's own results.npz and summary.json are written too."""
    out = tmp_path / "sc"
    assert cli.main(["run", "slider_crank", "--set", "coupled=true", "--set", "elements=2",
                     "--set", "revolutions=0.02", "--no-plots", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "no time integration" not in printed
    assert re.search(r"run coupled: finished, \d+ outputs to t = 0.000837758 s", printed), printed
    assert f"results: {out / 'results.h5'}" in printed
    assert (out / "results.npz").is_file() and (out / "summary.json").is_file()
    assert (out / "paraview.xdmf").is_file()          # every body in the global frame, written by the CLI


@pytest.mark.parametrize("summary, line", [
    ({"accuracy_error": 3.17e-9, "accuracy_target": 1e-6, "meets_target": True,
      "accuracy_measure": "max |q(0.03) - q_ref| [rad]"},
     "accuracy: max |q(0.03) - q_ref| [rad] = 3.17e-09 (target 1e-06: met)"),
    ({"accuracy_error": 2.0e-4, "accuracy_target": 1e-4, "meets_target": False, "accuracy_measure": "e [m]"},
     "accuracy: e [m] = 2.00e-04 (target 0.0001: NOT met)"),
    ({"accuracy_error": None, "accuracy_target": 1e-4, "meets_target": None}, None),   # no target time reached
    ({"error_0.03": 1e-9}, None),                                                      # a case without a target
])
def test_the_accuracy_line_of_flexmbs_run(summary, line, tmp_path):
    """`flexmbs run` prints the error a case reached against its reference from summary.json's common
    keys (the IFToMM cases write them), and nothing for a case without them or without the file."""
    import json
    path = tmp_path / "summary.json"
    assert cli.accuracy_line(path) is None
    path.write_text(json.dumps(summary))
    assert cli.accuracy_line(path) == line


@pytest.mark.parametrize("case, measure", [("andrews_squeezer", "the Bari test set"),
                                           ("pendulum_a01", "closed form")])
def test_the_iftomm_cases_write_the_common_accuracy_keys(case, measure, tmp_path, capsys):
    """The default run of a short IFToMM case prints its accuracy line through `flexmbs run`."""
    cases = Path(__file__).resolve().parents[1] / "cases"
    assert cli.main(["run", case, "--cases", str(cases), "--out", str(tmp_path / "o"), "--no-plots",
                     "--no-paraview", "-q"]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"accuracy: .*{re.escape(measure)}.* = \S+ \(target 1e-06: met\)", out), out
