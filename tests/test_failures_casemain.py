"""The cases' one command line (flexmbs.case.run_command) and their plots of time histories
(flexmbs.case.write_run_histories): what they run, write and refuse."""
import logging
import sys

import numpy as np
import pytest

from flexmbs.case import CaseError, MANIFEST, check_parameters, run_command, write_run_histories

DEFAULTS = dict(steps=4, t_end=1.0, plots=True)


def check(p):
    check_parameters(p, DEFAULTS, positive=("steps",))


def demo_run(out=None, **given):
    """A case's run: records what it was given, writes one file, refuses steps = 3 once running."""
    if given.get("steps") == 3:
        raise CaseError("steps", "must not be 3 once the inputs are read, got 3")
    demo_run.given = dict(given)
    demo_run.level = logging.getLogger("flexmbs").level
    (out / "data.txt").write_text("x", encoding="utf-8")
    return {"ran": True}


def command(argv, **options):
    return run_command("demo", "Demo case.", demo_run, argv, DEFAULTS, check=check, **options)


def test_run_command_parses_prepares_runs_and_lists_the_files(tmp_path):
    case = command(["--t-end", "2", "--out", str(tmp_path / "o")])
    assert case.result == {"ran": True}
    assert demo_run.given == {"t_end": 2.0}                     # only what the command line gave
    assert case.params == {"steps": 4, "t_end": 2.0, "plots": True}
    assert case.out == tmp_path / "o" and case.options.verbose == 0 and case.seconds >= 0.0
    assert (tmp_path / "o" / MANIFEST).read_text(encoding="utf-8") == "data.txt\n"


def test_quiet_holds_the_flexmbs_logger_during_the_run_only(tmp_path):
    log = logging.getLogger("flexmbs")
    before = log.level
    command(["--out", str(tmp_path / "q")], quiet=logging.ERROR)
    assert demo_run.level == logging.ERROR and log.level == before
    command(["--out", str(tmp_path / "v"), "-v"], quiet=logging.ERROR)
    assert demo_run.level == before                              # -v: the logs stay on


def test_clear_false_keeps_the_previous_runs_files(tmp_path):
    out = tmp_path / "r"
    command(["--out", str(out)])
    (out / "old.txt").write_text("kept", encoding="utf-8")
    (out / MANIFEST).write_text("data.txt\nold.txt\n", encoding="utf-8")
    command(["--out", str(out)], clear=False)
    assert (out / "old.txt").is_file()
    command(["--out", str(out)])
    assert not (out / "old.txt").exists()


# (argv, message it now prints): bad input ends the program like argparse (status 2), naming the option
BAD = [
    (["--steps", "0"], "argument --steps: must be positive, got 0"),
    (["--steps", "two"], "argument --steps: expected an integer, got 'two'"),
    (["--steps", "3"], "argument --steps: must not be 3 once the inputs are read, got 3"),
]


@pytest.mark.parametrize("argv, message", BAD)
def test_bad_input_exits_2_naming_the_option_and_leaves_no_directory(argv, message, tmp_path, capsys):
    out = tmp_path / "new"
    with pytest.raises(SystemExit) as exc:
        command([*argv, "--out", str(out)])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()                                      # made by this run, empty: removed


def test_out_that_is_a_file_exits_2(tmp_path, capsys):
    path = tmp_path / "file"
    path.write_text("mine", encoding="utf-8")
    with pytest.raises(SystemExit):
        command(["--out", str(path)])
    assert f"argument --out: {path} exists and is not a directory" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8") == "mine"


def figures(result, p):
    figures.calls += 1
    t = result["t"]
    return {"x.png": dict(panels=[("x [m]", [dict(t=t, y=result["x"], label="x")])], title=f"steps {p['steps']}")}


@pytest.mark.parametrize("n_t, plots, drawn", [(3, True, True), (3, False, False), (1, True, False)])
def test_write_run_histories_draws_only_when_plots_are_wanted(n_t, plots, drawn, tmp_path):
    figures.calls = 0
    result = dict(t=np.linspace(0.0, 1.0, n_t), x=np.arange(n_t, dtype=float), summary={"status": "finished"})
    write_run_histories(tmp_path, result, dict(steps=4, plots=plots), figures)
    assert (tmp_path / "results.npz").is_file() and (tmp_path / "summary.json").is_file()
    assert (tmp_path / "x.png").is_file() is drawn and figures.calls == int(drawn)


def test_a_run_without_plots_imports_no_matplotlib(tmp_path):
    import subprocess
    from pathlib import Path
    code = ("import sys, numpy as np; from flexmbs.case import write_run_histories; "
            f"write_run_histories({str(tmp_path)!r}, dict(t=np.zeros(3), summary={{}}), dict(plots=False), None); "
            "print('matplotlib' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.stdout.strip() == "False"


def test_controlled_pendulums_start_angle_above_pi_over_2_is_named(tmp_path, capsys):
    """`check` of cases/controlled_pendulum.py raised CaseError with one argument (a TypeError); now the
    parameter and the reason."""
    from flexmbs.cli import main
    rc = main(["run", "controlled_pendulum", "--set", "theta_1=2", "--out", str(tmp_path / "o")])
    assert rc == 2
    assert ("parameter 'theta_1' of case controlled_pendulum: must be at most pi/2 (the static balance is then "
            "unique), got 2.0") in capsys.readouterr().err
