"""Bad input: every one ends with a message naming what the user set, the documented exit status
(2 for bad input) and no files left behind (issue 11, item 4)."""
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs import cli
from flexmbs.analysis import output_times

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases"
sys.path.insert(0, str(CASES))

import rotating_bar  # noqa: E402

TINY = ["--set", "elements=3", "--set", "t_end=0.002", "--set", "dt_out=2e-4", "--set", "plots=false"]


pytestmark = pytest.mark.usefixtures("restore_logging")    # tests/conftest.py


# (the --set given, the message printed, the exit status)
RUN_TABLE = [
    ("length=-1", "parameter 'length' of case rotating_bar: must be positive, got -1.0", 2),
    ("area=0", "parameter 'area' of case rotating_bar: must be positive, got 0.0", 2),
    ("mass=-1", "parameter 'mass' of case rotating_bar: must be positive, got -1.0", 2),
    ("elements=0", "parameter 'elements' of case rotating_bar: must be >= 1, got 0", 2),
    ("integrator=Euler", "parameter 'integrator' of case rotating_bar: must be one of "
                         f"{', '.join(rotating_bar.CHOICES['integrator'])}, got 'Euler'", 2),
    ("formulation=newton", "parameter 'formulation' of case rotating_bar: must be one of gibbs-appell, "
                           "hamilton, lagrange, got 'newton'", 2),
    ("period=0", "parameter 'period' of case rotating_bar: must be positive, got 0.0", 2),
    ("force=abc", "parameter 'force' of case rotating_bar must be a number (default 1), got 'abc'", 2),
    ("force=nan", "parameter 'force' of case rotating_bar: must be a finite number, got nan", 2),
    ("omega=inf", "parameter 'omega' of case rotating_bar: must be a finite number, got inf", 2),
    ("damping=-0.1", "parameter 'damping' of case rotating_bar: a damping ratio, must be >= 0, got -0.1", 2),
    ("rtol=0", "parameter 'rtol' of case rotating_bar: a relative tolerance, must lie in (0, 1), got 0.0", 2),
    ("rtol=1", "parameter 'rtol' of case rotating_bar: a relative tolerance, must lie in (0, 1), got 1.0", 2),
    ("dt_out=1", "parameter 'dt_out' of case rotating_bar: the output interval must not exceed t_end = 0.002 s, "
                 "got 1 s", 2),
    ("t_end=-1", "parameter 't_end' of case rotating_bar: must be positive, got -1.0", 2),
    ("elemnts=3", "unknown parameter 'elemnts' for case rotating_bar; did you mean 'elements'?", 2),
]


@pytest.mark.parametrize("setting, message, status", RUN_TABLE, ids=[r[0] for r in RUN_TABLE])
def test_flexmbs_run_refuses_bad_values_by_their_name(setting, message, status, tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["-q", "run", "rotating_bar", "--cases", str(CASES), *TINY, "--set", setting,
                     "--out", str(out)]) == status
    assert message in capsys.readouterr().err
    assert not out.exists()                                       # checked before anything is written


# other cases: (case, the --set given, the message printed); exit status 2, nothing written
OTHER_TABLE = [
    ("slider_crank", "crank=0.5", "parameter 'crank' of case slider_crank: crank + |offset| = 0.5 m must be "
                                  "shorter than the rod (0.3 m)"),
    ("four_bar", "crank=0.4", "parameter 'crank' of case four_bar: with ground 0.3, crank 0.4, coupler 0.3 and "
                              "rocker 0.25 m the four-bar is a triple-rocker: the crank cannot turn fully"),
    ("four_bar", "crank_speed=0", "parameter 'crank_speed' of case four_bar: must not be zero"),
    ("spinup_beam", "t_s=0", "parameter 't_s' of case spinup_beam: must be positive, got 0.0"),
    ("spinup_beam", "integrator=generalized-alpha --set formulation=hamilton",
     "parameter 'integrator' of case spinup_beam: 'generalized-alpha' needs (delta, delta') states"),
    ("rotating_beam_modes", "gamma_step=0", "parameter 'gamma_step' of case rotating_beam_modes: must be "
                                            "positive, got 0.0"),
    ("rotating_beam_3d", "hub_ratio=-1", "parameter 'hub_ratio' of case rotating_beam_3d: must be >= 0, got -1.0"),
    ("marker_mechanism", "markers=nothere.csv", "parameter 'markers' of case marker_mechanism: marker file "
                                                "nothere.csv not found"),
    ("marker_mechanism", "duration=100", "parameter 'duration' of case marker_mechanism: the simulated interval "
                                         "[0.0968663, 100.097] s must lie in the record [0, 0.7] s"),  # found in run
    ("rotating_bar_study", "workers=0", "parameter 'workers' of case rotating_bar_study: must be >= 1, got 0"),
]


@pytest.mark.parametrize("case, setting, message", OTHER_TABLE, ids=[f"{r[0]}:{r[1]}" for r in OTHER_TABLE])
def test_every_case_refuses_bad_values_by_their_name(case, setting, message, tmp_path, capsys):
    out = tmp_path / "out"
    sets = [a for item in setting.split(" --set ") for a in ("--set", item)]
    assert cli.main(["-q", "run", case, "--cases", str(CASES), *sets, "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_export_to_a_file_is_refused(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    h5 = tmp_path / "r.h5"
    fm.run(_bar(), t_end=1e-3, dt_out=1e-4, store=h5)
    assert cli.main(["export", str(h5), "--out", str(f)]) == 2
    assert f"--out: {f} exists and is not a directory" in capsys.readouterr().err


# the same values given to the case script itself: argparse's usage error, naming the option
SCRIPT_TABLE = [
    (["--length", "-1"], "argument --length: must be positive, got -1.0"),
    (["--elements", "0"], "argument --elements: must be >= 1, got 0"),
    (["--elements", "2.5"], "argument --elements: expected an integer, got '2.5'"),
    (["--integrator", "Euler"], "argument --integrator: invalid choice: 'Euler'"),
    (["--period", "0"], "argument --period: must be positive, got 0.0"),
    (["--force", "nan"], "argument --force: must be a finite number, got nan"),
    (["--force", "abc"], "argument --force: expected a number, got 'abc'"),
    (["--damping", "-0.1"], "argument --damping: a damping ratio, must be >= 0, got -0.1"),
    (["--rtol", "2"], "argument --rtol: a relative tolerance, must lie in (0, 1), got 2.0"),
    (["--dt-out", "1"], "argument --dt-out: the output interval must not exceed t_end = 0.1 s, got 1 s"),
]


@pytest.mark.parametrize("argv, message", SCRIPT_TABLE, ids=[" ".join(r[0]) for r in SCRIPT_TABLE])
def test_case_script_refuses_bad_values_by_option(argv, message, tmp_path, capsys):
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exc:
        rotating_bar.main([*argv, "--out", str(out)])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("where, message", [
    ("file", "--out: {p} exists and is not a directory"),
    ("file/sub", "--out: cannot create {p}: {f} is a file, not a directory"),
])
def test_an_out_that_is_a_file_is_refused(where, message, tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("not a directory")
    p = tmp_path / where
    assert cli.main(["-q", "run", "rotating_bar", "--cases", str(CASES), *TINY, "--out", str(p)]) == 2
    assert message.format(p=p, f=f) in capsys.readouterr().err
    assert f.read_text() == "not a directory"


def test_an_argument_equal_to_bench_is_not_the_bench_command(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["-q", "run", "rotating_bar", "--cases", str(CASES), *TINY, "--out", "bench",
                     "--no-paraview"]) == 0
    assert (tmp_path / "bench" / "results.h5").is_file()
    assert "rotating_bar: done, output in bench/" in capsys.readouterr().out


def test_bench_options_reach_the_timing_script_unabbreviated(monkeypatch):
    seen = {}
    monkeypatch.setattr(cli, "cmd_bench", lambda args, extra: seen.update(args=args, extra=extra) or 0)
    assert cli.main(["bench", "--case", "mechanism", "--elements", "5", "-v"]) == 0
    assert seen["extra"] == ["--case", "mechanism", "--elements", "5"]
    assert seen["args"].cases is None and seen["args"].verbose == 1   # --case is timing's, not --cases


def test_no_plots_skips_the_case_plots(tmp_path):
    out = tmp_path / "o"
    assert cli.main(["-q", "run", "rotating_bar", "--cases", str(CASES), *TINY[:-2], "--no-plots", "--no-paraview",
                     "--out", str(out)]) == 0
    assert (out / "results.npz").is_file() and not list(out.glob("*.png"))
    assert "plots = false" in (out / "case.toml").read_text()


def test_rerun_removes_the_previous_runs_files_and_says_so(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    base = ["-q", "run", "rotating_bar", "--cases", str(CASES), *TINY, "--out", str(out)]
    assert cli.main([*base, "--set", "damping=0.1"]) == 0
    assert (out / "paraview_damped.xdmf").is_file()
    listed = (out / ".flexmbs_files").read_text().split()
    assert "notes.txt" not in listed and {"case.toml", "results.h5", "paraview_damped.xdmf"} <= set(listed)
    capsys.readouterr()
    assert cli.main(base) == 0
    assert f"removed {len(listed)} file(s) of the previous run" in capsys.readouterr().out
    names = sorted(p.name for p in out.iterdir())
    assert "paraview_damped.xdmf" not in names and "paraview.xdmf" in names
    assert (out / "notes.txt").read_text() == "mine"               # not written by a run: kept


def test_broken_pipe_ends_quietly(tmp_path, monkeypatch, capsys):
    """`flexmbs results FILE | head`: the reader goes away; no traceback, exit status 1."""
    model = fm.Model(fm.generate.line(2, 1.0), fm.Bar2(fm.Material(E=1e9, rho=1e3), 1e-4), fixed=[("start", "all")])
    h5 = tmp_path / "r.h5"
    fm.run(model, t_end=1e-3, dt_out=1e-4, store=h5)
    r, w = os.pipe()
    os.close(r)                                                   # the reader is gone
    stream = os.fdopen(w, "w")
    monkeypatch.setattr(sys, "stdout", stream)
    try:
        assert cli.main(["results", str(h5)]) == 1
    finally:
        stream.close()
    assert "Traceback" not in capsys.readouterr().err


def _closed_stdout(monkeypatch):
    """A stdout whose reader is gone (`| head` after its lines)."""
    r, w = os.pipe()
    os.close(r)
    stream = os.fdopen(w, "w")
    monkeypatch.setattr(sys, "stdout", stream)
    return stream


@pytest.mark.parametrize("argv", [["cases"], ["params", "triple_pendulum"], ["info"],
                                  ["run", "pendulum_a01", "--set", "t_end=0.01", "--no-plots"]],
                         ids=["cases", "params", "info", "run"])
def test_every_printing_command_ends_quietly_on_a_closed_pipe(argv, tmp_path, monkeypatch, capsys):
    """`flexmbs cases | head` and the like: exit status 1, no traceback (issue 11, item 4)."""
    if argv[0] == "run":
        argv = argv + ["--out", str(tmp_path / "run")]
    stream = _closed_stdout(monkeypatch)
    try:
        assert cli.main(argv) == 1
    finally:
        stream.close()
    assert "Traceback" not in capsys.readouterr().err


def test_case_script_ends_quietly_on_a_closed_pipe(tmp_path, monkeypatch, capsys):
    """`python cases/pendulum_a01.py | head`: the case's own main goes through the same handler."""
    import pendulum_a01
    from flexmbs.pipes import call_quietly
    stream = _closed_stdout(monkeypatch)
    try:
        assert call_quietly(pendulum_a01.main, ["--t-end", "0.01", "--no-plots", "--out", str(tmp_path)]) == 1
    finally:
        stream.close()
    assert "Traceback" not in capsys.readouterr().err


def test_closed_pipe_no_traceback_at_interpreter_exit():
    """The whole process, with the interpreter's last flush: nothing on stderr."""
    import subprocess
    r, w = os.pipe()
    os.close(r)
    try:
        done = subprocess.run([sys.executable, "-m", "flexmbs", "cases"], stdout=w, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    finally:
        os.close(w)
    assert done.returncode == 1 and done.stderr == ""


# the library refuses the same values with the names of its own arguments
LIBRARY_TABLE = [
    (lambda: output_times(0.1, 1.0), "`dt_out` = 1 s exceeds the simulated time t_end - t0 = 0.1 s"),
    (lambda: fm.model.rayleigh_coefficients(-0.1, 1.0, 2.0), "`zeta` is a damping ratio and must be >= 0"),
    (lambda: fm.run(_bar(), t_end=1e-3, rtol=2.0), "`rtol` is a relative tolerance and must be below 1"),
    (lambda: _bar(fm.NodalLoad("end", "u", "abc")), "`loads[0].value` must be a number [N or N m], got 'abc'"),
    (lambda: _bar(fm.NodalLoad("end", "u", float("nan"))), "`loads[0].value` must be a finite number, got nan"),
    (lambda: _bar(fm.DistributedLoad((np.nan, 0, 0), per="mass")), "`loads[0].value` must be a finite 3-vector"),
]


def _bar(*loads):
    return fm.Model(fm.generate.line(2, 1.0), fm.Bar2(fm.Material(E=1e9, rho=1e3), 1e-4),
                    fixed=[("start", "all")], loads=list(loads))


@pytest.mark.parametrize("call, message", LIBRARY_TABLE, ids=[m[1][:30] for m in LIBRARY_TABLE])
def test_library_refuses_bad_values(call, message):
    with pytest.raises(ValueError) as exc:
        call()
    assert message in str(exc.value)


def test_output_times_end_at_t_end_when_dt_out_does_not_divide_it():
    np.testing.assert_allclose(output_times(0.1, 0.03), [0.0, 0.03, 0.06, 0.09, 0.1], rtol=0, atol=1e-15)
    assert output_times(0.1, 0.1).tolist() == [0.0, 0.1]
    t = output_times(4 * np.pi / 150, 4 * np.pi / 150 / 720)          # on the grid: no extra time
    assert len(t) == 721 and t[-1] == 4 * np.pi / 150


@pytest.mark.parametrize("method, opts", [("DOP853", dict(rtol=1e-10, atol=1e-16)), ("midpoint", dict(h=1e-5))])
def test_a_run_whose_dt_out_does_not_divide_t_end_writes_the_state_at_t_end(method, opts):
    model = rotating_bar.build(elements=4)
    odd = fm.run(model, method=method, t_end=2e-3, dt_out=3e-4, compute_energies=False, **opts)
    even = fm.run(model, method=method, t_end=2e-3, dt_out=2e-4, compute_energies=False, **opts)
    assert odd.status == "finished" and odd.t[-1] == 2e-3 and len(odd.t) == 8
    np.testing.assert_allclose(odd.t[:-1], 3e-4 * np.arange(7), rtol=0, atol=1e-15)
    scale = np.abs(even.displacement[-1]).max()
    assert np.abs(odd.displacement[-1] - even.displacement[-1]).max() < 1e-8 * scale


@pytest.mark.parametrize("content, message", [
    (b"", "mesh file {p} is empty (0 bytes)"),
    (b"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n", "{p} is a Gmsh file without $Nodes and $Elements sections"),
])
def test_mesh_info_of_an_empty_file_is_bad_input(content, message, tmp_path, capsys):
    p = tmp_path / "m.msh"
    p.write_bytes(content)
    assert cli.main(["mesh", "info", str(p)]) == 2
    assert message.format(p=p) in capsys.readouterr().err
