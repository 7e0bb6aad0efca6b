"""The case command-line builder (flexmbs.case): typed options from DEFAULTS, checks by name, output dirs."""
import math

import pytest

from flexmbs.case import (CaseError, check_parameters, command_line, parse_case_args, prepare_output,
                          record_output, resolve)

DEFAULTS = dict(elements=10, period=0.5, method="a", stiff=True, energies=False, sizes=(1, 2), start=None,
                t_end=1.0, dt_out=0.1, rtol=1e-6, damping=0.0, plots=True)


def check(p):
    check_parameters(p, DEFAULTS, choices={"method": ["a", "b"]}, positive=("period",))


def parser(**kw):
    return command_line("demo", "Demo case.\n\nMore.", DEFAULTS, choices={"method": ["a", "b"]},
                        types={"start": float}, flags={"--soft": ("stiff", False)}, check=check, **kw)


def test_every_key_is_an_option_typed_like_its_default(tmp_path):
    params, out, options = parse_case_args(parser(), [
        "--elements", "3", "--period", "pi/100", "--method", "b", "--no-stiff", "--energies", "--sizes", "4,5,6",
        "--start", "0.25", "--out", str(tmp_path / "o"), "-vv"])
    assert params["elements"] == 3 and isinstance(params["elements"], int)
    assert params["period"] == pytest.approx(math.pi / 100)
    assert params["method"] == "b" and params["stiff"] is False and params["energies"] is True
    assert params["sizes"] == (4, 5, 6) and params["start"] == 0.25
    assert params["t_end"] == 1.0                                  # untouched keys keep their defaults
    assert out == tmp_path / "o" and not out.exists()              # checked, not created
    assert options.verbose == 2 and options.plots is True


@pytest.mark.parametrize("argv, value", [(["--stiff", "false"], False), (["--stiff"], True), (["--soft"], False),
                                         (["--no-plots"], True)])
def test_boolean_options(argv, value):
    params, _, options = parse_case_args(parser(), argv)
    assert params["stiff"] is value
    assert options.plots is ("--no-plots" not in argv) and params["plots"] is options.plots


def test_no_plots_without_a_plots_parameter():
    p = command_line("bare", "Bare.", dict(n=1))
    params, out, options = parse_case_args(p, ["--no-plots"])
    assert params == {"n": 1} and options.plots is False and str(out) == "out/bare"


@pytest.mark.parametrize("argv, message", [
    (["--elements", "2.5"], "argument --elements: expected an integer, got '2.5'"),
    (["--method", "c"], "argument --method: invalid choice"),
    (["--period", "-1"], "argument --period: must be positive, got -1.0"),
    (["--period", "nan"], "argument --period: must be a finite number, got nan"),
    (["--elements", "0"], "argument --elements: must be >= 1, got 0"),
    (["--rtol", "1"], "argument --rtol: a relative tolerance, must lie in (0, 1), got 1.0"),
    (["--damping", "-0.1"], "argument --damping: a damping ratio, must be >= 0, got -0.1"),
    (["--dt-out", "2"], "argument --dt-out: the output interval must not exceed t_end = 1 s, got 2 s"),
    (["--stiff", "maybe"], "argument --stiff: expected true or false, got 'maybe'"),
])
def test_bad_values_exit_2_naming_the_option(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        parse_case_args(parser(), [*argv, "--out", str(tmp_path / "never")])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "never").exists()


def test_out_that_is_a_file_is_refused(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    for out in (f, f / "sub"):
        with pytest.raises(SystemExit) as exc:
            parse_case_args(parser(), ["--out", str(out)])
        assert exc.value.code == 2
        assert "argument --out:" in capsys.readouterr().err


def test_resolve_names_unknown_keys_and_runs_the_check():
    with pytest.raises(ValueError, match="did you mean 'elements'"):
        resolve("demo", DEFAULTS, {"elemnts": 3})
    with pytest.raises(CaseError, match="parameter 'period': must be positive") as exc:
        resolve("demo", DEFAULTS, {"period": 0.0}, check)
    assert exc.value.key == "period"


def test_rerun_removes_only_the_previous_runs_files(tmp_path, capsys):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "mine.txt").write_text("a user's note")      # not written by a run: never removed
    out, before = prepare_output(tmp_path / "o")
    (out / "a.png").write_text("1")
    (out / "sub").mkdir()
    (out / "sub" / "b.csv").write_text("2")
    assert record_output(out, before) == ["a.png", "sub/b.csv"]
    # a run with other options writes only c.png: a.png and sub/b.csv must not survive it
    out, before = prepare_output(out)
    assert "removed 2 file(s) of the previous run (a.png, sub/b.csv)" in capsys.readouterr().out
    assert sorted(p.name for p in out.rglob("*") if p.is_file()) == ["mine.txt"]
    (out / "c.png").write_text("3")
    assert record_output(out, before) == ["c.png"]


@pytest.mark.parametrize("value", [1.0, -0.1, 1.5])
def test_rho_inf_checked_by_its_name(value):
    """0 <= rho_inf < 1 for every case that has it (the generalized-alpha methods' spectral radius)."""
    from flexmbs.case import CaseError, check_parameters
    with pytest.raises(CaseError, match=r"rho_inf.*\[0, 1\)"):
        check_parameters({"rho_inf": value})
    assert check_parameters({"rho_inf": 0.0}) == {"rho_inf": 0.0}
