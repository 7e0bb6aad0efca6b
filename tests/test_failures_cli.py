"""Issue 20, items 9 and 11: progress lines off a terminal, and what ran.

Bad inputs of the command line are a table of (arguments, the message they now print).
"""
import contextvars
import json
import re
import sys
from pathlib import Path

import pytest

from flexmbs import cli, progress
from flexmbs.compiled import KernelStatus, kernel_status, note_path, summary_keys

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases"
MISSING = "/nonexistent/flexmbs-cases"

pytestmark = pytest.mark.usefixtures("restore_logging")    # tests/conftest.py


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
    monkeypatch.setattr(progress.time, "perf_counter", _Clock())      # each reading: 1 s later
    argv = ["--t-end", "0.05", "--dt-out", "0.01", "--no-plots", "--out", str(tmp_path / "tp")]
    code = contextvars.copy_context().run(triple_pendulum.main, argv)    # its display ends with it
    assert code == 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("AB4: ")]
    assert 2 <= len(lines) <= 50 // progress.LINE_SECONDS, err        # 50 steps, each at least "1 s"
    pattern = re.compile(r"AB4: t = ([0-9.e-]+) / 0\.05 s \((\d+) %\), (\d+) s elapsed, ~\d+ s left")
    found = [pattern.fullmatch(ln) for ln in lines]
    assert all(found), lines
    times = [float(m.group(1)) for m in found]
    assert times == sorted(times) and 0.0 < times[0] < 0.05
    assert int(found[0].group(3)) >= progress.LINE_SECONDS            # the first after LINE_SECONDS


def test_simulate_reports_to_the_display_around_it(tmp_path):
    """The multibody cases call `simulate` directly; it reports to the innermost display."""
    import io

    from rich.console import Console
    sys.path.insert(0, str(CASES))
    import pendulum_a01
    out = io.StringIO()
    with progress.display(console=Console(file=out, force_terminal=False), min_seconds=0.0, line_seconds=0.0):
        pendulum_a01.run(t_end=0.01, plots=False)
    lines = out.getvalue().splitlines()
    assert lines and all(ln.startswith("index3-alpha: t = ") for ln in lines), lines
    assert lines[-1].startswith("index3-alpha: t = 0.01 / 0.01 s (100 %)"), lines


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


@pytest.mark.parametrize("case, t_end, kernel", [
    ("pendulum_a01", 0.01, "compiled"),         # a planar System the kernel takes
    ("andrews_squeezer", 0.001, "numpy"),       # its spring load holds a Python callable: Unsupported
    ("triple_pendulum", 0.01, "none"),          # AB4 on the index-1 equations: no index3-alpha
])
def test_every_case_summary_says_whether_the_kernel_is_installed_and_which_path_ran(case, t_end, kernel, tmp_path,
                                                                                      capsys):
    out = tmp_path / case
    argv = ["run", case, "--cases", str(CASES), "--set", f"t_end={t_end}", "--set", f"dt_out={t_end / 2}",
            "--set", "plots=false", "--out", str(out), "--no-paraview"]
    assert cli.main(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    installed = kernel_status().installed
    assert summary["kernel_installed"] is installed
    assert summary["kernel"] == (kernel if installed or kernel == "none" else "numpy")
