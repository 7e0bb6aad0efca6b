"""Issue 20, items 9-11: progress lines off a terminal, sweeps that lose nothing, and what ran.

Bad inputs of the command line are a table of (arguments, the message they now print).
"""
import contextvars
import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from flexmbs import cli, progress
from flexmbs.compiled import KernelStatus, kernel_status, note_path, summary_keys
from flexmbs.sweep import run_one, sweep

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases"
MISSING = "/nonexistent/flexmbs-cases"

pytestmark = pytest.mark.usefixtures("restore_logging")    # tests/conftest.py


def _rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


# ------------------------------------------------------------------------------------- bad input
BAD = [
    (["info", "--cases", MISSING],
     f"flexmbs info: error: --cases: {MISSING} does not exist; give the directory of the case scripts (cases/*.py)"),
    (["cases", "--cases", MISSING],
     f"flexmbs cases: error: --cases: {MISSING} does not exist; give the directory of the case scripts (cases/*.py)"),
    (["run", "rotating_bar", "--cases", MISSING],
     f"flexmbs run: error: --cases: {MISSING} does not exist; give the directory of the case scripts (cases/*.py)"),
    (["params", "rotating_bar", "--cases", str(CASES / "rotating_bar.py")],
     f"flexmbs params: error: --cases: {CASES / 'rotating_bar.py'} is not a directory; give the directory of the "
     "case scripts (cases/*.py)"),
]


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a[:1] + a[-2:-1]) + f" {i}" for i, (a, _) in enumerate(BAD)])
def test_bad_command_lines_name_the_option_and_the_path(argv, message, capsys):
    """A --cases DIR that is not there used to fall back on ./cases silently (a run of another case set)."""
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert err.strip() == message
    assert out == ""                                     # `info` prints nothing before the error


# ------------------------------------------------------------------------------ item 9: progress
class _Clock:
    """perf_counter that advances 1 s at each reading: every step of a run "takes" about 1 s."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 1.0
        return self.now


def test_a_case_main_prints_progress_lines_off_a_terminal(monkeypatch, capsys, tmp_path):
    """triple_pendulum (4.5 min at its defaults) printed nothing in a log; its main now writes a
    line every LINE_SECONDS of wall time through flexmbs.progress (stderr is not a terminal here)."""
    sys.path.insert(0, str(CASES))
    import triple_pendulum
    clock = _Clock()
    monkeypatch.setattr(progress.time, "perf_counter", clock)         # each reading: 1 s later
    argv = ["--t-end", "0.05", "--dt-out", "0.01", "--no-plots", "--out", str(tmp_path / "tp")]
    code = contextvars.copy_context().run(triple_pendulum.main, argv)    # its display ends with it
    assert code == 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("triple_pendulum: ")]      # the run's name
    # a line per LINE_SECONDS of the clock, not per step: 50 steps, each at least "1 s" (flexmbs.run's
    # own readings of the clock, around the outputs it records, add to it)
    assert 50 < clock.now and 2 <= len(lines) <= clock.now // progress.LINE_SECONDS, err
    pattern = re.compile(r"triple_pendulum: t = ([0-9.e-]+) / 0\.05 s \((\d+) %\), (\d+) s elapsed, ~\d+ s left")
    found = [pattern.fullmatch(ln) for ln in lines]
    assert all(found), lines
    times = [float(m.group(1)) for m in found]
    assert times == sorted(times) and 0.0 < times[0] < 0.05
    assert int(found[0].group(3)) >= progress.LINE_SECONDS            # the first after LINE_SECONDS


def test_simulate_reports_to_the_display_around_it(tmp_path):
    """The multibody cases run `flexmbs.run`; it reports to the innermost display, under the run's name."""
    sys.path.insert(0, str(CASES))
    import pendulum_a01
    out = io.StringIO()
    with progress.display(console=Console(file=out, force_terminal=False), min_seconds=0.0, line_seconds=0.0):
        pendulum_a01.run(t_end=0.01, plots=False)
    lines = out.getvalue().splitlines()
    assert lines and all(ln.startswith("pendulum_a01: t = ") for ln in lines), lines
    assert lines[-1].startswith("pendulum_a01: t = 0.01 / 0.01 s (100 %)"), lines


@pytest.mark.parametrize("name", sorted(cli.discover_cases(CASES)))
def test_every_case_states_its_run_time_in_its_help(name, capsys):
    module = cli.load_case(cli.discover_cases(CASES)[name])
    assert isinstance(module.RUN_TIME, str) and module.RUN_TIME.split()[0] == "about", module.RUN_TIME
    with pytest.raises(SystemExit) as stop:
        module.main(["--help"])
    assert stop.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"Run time at the defaults: {module.RUN_TIME} on a 2-core machine." in text
    assert cli.main(["params", name, "--cases", str(CASES)]) == 0
    assert f"\n  run time at the defaults: {module.RUN_TIME} on a 2-core machine\n" in capsys.readouterr().out


# ------------------------------------------------------------------------- item 11: what ran
def test_kernel_status_is_a_clear_value_and_info_prints_it(capsys):
    status = kernel_status()
    assert isinstance(status, KernelStatus)
    if status.installed:
        assert status.reason is None and Path(status.path).is_file()
        assert str(status) == f"installed ({status.path})"
    else:
        assert status.path is None and "not installed" in status.reason
        assert str(status) == f"not installed: {status.reason}"
    assert cli.main(["info"]) == 0
    assert f"kernel: {status} (index3-alpha runs its {'compiled' if status.installed else 'numpy'} path" \
        in capsys.readouterr().out


def test_summary_keys_say_which_path_the_runs_since_the_last_summary_took():
    summary_keys()                                        # forget what earlier tests ran
    installed = kernel_status().installed
    assert summary_keys() == {"kernel_installed": installed, "kernel": "none"}
    note_path(None)                                       # a run of another integrator: nothing to say
    note_path("compiled")
    note_path("compiled")
    assert summary_keys() == {"kernel_installed": installed, "kernel": "compiled"}
    note_path("compiled")
    note_path("numpy")
    assert summary_keys()["kernel"] == "mixed"
    assert summary_keys()["kernel"] == "none"             # each summary speaks of its own runs


@pytest.mark.parametrize("case, t_end, integrator, kernel, sets", [
    ("pendulum_a01", 0.01, "index3-alpha", "compiled", ()),      # a planar System the kernel takes
    ("andrews_squeezer", 0.001, "index3-alpha", "compiled", ()),  # its spring and motor: loads of planar bodies
    ("andrews_squeezer", 0.001, None, "compiled", ()),           # its default, DOP853 on the index-1 equations
    ("controlled_pendulum", 0.01, None, "numpy", ("control=continuous",)),   # a load of the state: Unsupported
    ("triple_pendulum", 0.01, None, "compiled", ()),             # AB4, index-1, natural coordinates (issue 22)
    ("triple_pendulum", 0.01, None, "compiled", ("coordinates=euler-parameters",)),   # the kernel's M, Q, C, C_q
])
def test_every_case_summary_says_whether_the_kernel_is_installed_and_which_path_ran(case, t_end, integrator, kernel,
                                                                                      sets, tmp_path, capsys):
    out = tmp_path / case
    argv = ["run", case, "--cases", str(CASES), "--set", f"t_end={t_end}", "--set", f"dt_out={t_end / 2}",
            "--set", "plots=false", "--out", str(out), "--no-paraview", *[x for s in sets for x in ("--set", s)]]
    if integrator is not None:
        argv += ["--set", f"integrator={integrator}"]
    assert cli.main(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    installed = kernel_status().installed
    assert summary["kernel_installed"] is installed
    assert summary["kernel"] == (kernel if installed or kernel == "none" else "numpy")


# ------------------------------------------------------------------------------- item 10: sweeps
WHERE = '''"""Test case: writes where it was asked to write; with a flag file present, sleeps first."""
import json
import os
import time
from pathlib import Path

DEFAULTS = {"k": 0, "flag": ""}
SUMMARY = {"twice_k": "2 k", "absent": "never written: nan"}


def run(out=None, k=0, flag=""):
    if flag and Path(flag).exists():
        time.sleep(60)
    Path(out, "summary.json").write_text(json.dumps({"status": "finished", "twice_k": 2 * k, "out": str(out),
                                                     "cwd": os.getcwd()}))
'''


def test_a_relative_out_is_made_absolute_and_a_resumed_sweep_skips_what_finished(tmp_path, monkeypatch):
    case = tmp_path / "where.py"
    case.write_text(WHERE)
    monkeypatch.chdir(tmp_path)
    shown = io.StringIO()                                # a study run by a case script counts its cases too
    with progress.display(console=Console(file=shown, force_terminal=False), min_seconds=0.0, line_seconds=0.0):
        rows = sweep(case, grid={"k": [1, 2]}, out="rel/sweep", workers=1)
    assert [ln.split(",")[0] for ln in shown.getvalue().splitlines()] == ["sweep where: 1 / 2 cases",
                                                                        "sweep where: 2 / 2 cases"]
    for r in rows:
        written = json.loads((tmp_path / "rel" / "sweep" / "cases" / r["id"] / "summary.json").read_text())
        assert Path(written["out"]).is_absolute() and Path(written["out"]).parent == tmp_path / "rel" / "sweep" / "cases"
        assert r["twice_k"] == 2 * r["parameters"]["k"] and r["absent"] != r["absent"]      # declared: nan
    table = _rows(tmp_path / "rel" / "sweep" / "summary.csv")
    assert list(table[0]) == ["id", "k", "status", "twice_k", "absent", "wall_s", "message"]
    assert [(t["twice_k"], t["absent"]) for t in table] == [("2.0", "nan"), ("4.0", "nan")]
    monkeypatch.chdir(tmp_path / "rel")                  # another directory: the absolute path resumes
    again = sweep(case, grid={"k": [1, 2]}, out=tmp_path / "rel" / "sweep", workers=1)
    assert [r["wall_s"] for r in again] == [r["wall_s"] for r in rows]          # skipped: the old records


@pytest.mark.parametrize("case, params, keys", [
    ("pendulum_a01", {"t_end": 0.01, "plots": False}, ("max_error_P1", "max_energy_change", "max_constraint_position")),
    ("triple_pendulum", {"t_end": 0.01, "dt_out": 0.005, "plots": False},
     ("max_constraint_position", "max_constraint_velocity", "max_energy_error")),
])
def test_a_multibody_case_in_a_sweep_reports_its_declared_quantities(case, params, keys, tmp_path):
    """peak_displacement was nan for every multibody case; each declares its SUMMARY instead."""
    record = run_one(str(CASES / f"{case}.py"), params, str(tmp_path / "c"))
    assert record["status"] == "finished", record
    assert "peak_displacement" not in record
    for key in keys:
        assert isinstance(record[key], float) and record[key] == record[key] and record[key] >= 0.0, (key, record)


def test_a_case_that_returns_results_keeps_its_peak_displacement(tmp_path):
    params = {"elements": 3, "t_end": 0.002, "dt_out": 2e-4, "rtol": 1e-6, "plots": False}
    record = run_one(str(CASES / "rotating_bar.py"), params, str(tmp_path / "c"))
    assert record["status"] == "finished" and record["peak_displacement"] > 0.0
    assert record["tip_max_um"] > 0.0


@pytest.mark.slow
def test_ctrl_c_stops_a_sweep_at_once_records_the_interrupted_cases_and_resume_runs_them(tmp_path):
    """Ctrl-C used to wait for the running cases (here 60 s each) and the ones handed to the
    workers, wrote no summary and no record; now the workers are ended at once."""
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "where.py").write_text(WHERE)
    flag = tmp_path / "slow"
    flag.write_text("")
    out = tmp_path / "s"
    argv = [sys.executable, "-m", "flexmbs", "sweep", "where", "--cases", str(cases), "--grid", "k=1,2,3,4",
            "--set", f"flag={flag}", "--workers", "2", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while len(list(out.glob("cases/*/started.json"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)                   # Ctrl-C in a terminal: the whole process group
    stdout, stderr = proc.communicate(timeout=30)        # well before the running cases would end (60 s)
    assert proc.returncode == 130, stderr
    assert "4 cases (4 interrupted)" in stdout and "runs the unfinished cases" in stderr
    table = _rows(out / "summary.csv")
    assert [t["status"] for t in table] == ["interrupted"] * 4
    started = sorted(p.parent for p in out.glob("cases/*/started.json"))
    # two were running when Ctrl-C was sent; a worker may have started a third in the moment between
    # (a loaded machine, the suite on every core): each started case is recorded as interrupted
    assert 2 <= len(started) <= 4
    for d in started:
        assert json.loads((d / "done.json").read_text())["status"] == "interrupted"
    flag.unlink()
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert [t["status"] for t in _rows(out / "summary.csv")] == ["finished"] * 4
