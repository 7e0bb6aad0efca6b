"""Bad command lines after the start-up work of issue 22, twelfth round (the parser of the command
given only, the case file read from its code object): each row is a call and the message it prints,
the same as the full parser and the ``ast`` reading printed (compared with the branch's start, 48bb870)."""
from __future__ import annotations

from pathlib import Path

import pytest

from flexmbs.cli import main

ROOT = Path(__file__).resolve().parents[1]
CASES = str(ROOT / "cases")

ROWS = [
    ("an unknown command lists the commands", ["nonsense"],
     "argument COMMAND: invalid choice: 'nonsense' (choose from 'run', 'params', 'cases', 'bench', 'results', "
     "'export', 'view', 'mesh', 'info', 'sweep', 'fmu')"),
    ("run without a case", ["run"], "flexmbs run: error: the following arguments are required: CASE|FILE.toml"),
    ("an option run does not have", ["run", "triple_pendulum", "--bogus"], "flexmbs: error: unrecognized arguments: --bogus"),
    ("a bad value of a run option", ["run", "triple_pendulum", "--every", "x"],
     "flexmbs run: error: argument --every: invalid int value: 'x'"),
    ("a bad value of a sweep option", ["sweep", "x", "--workers", "y"],
     "flexmbs sweep: error: argument --workers: invalid int value: 'y'"),
    ("a script of cases/ that is no case", ["run", "timing", "--cases", CASES],
     "cases/timing.py is not a case: a case has a module docstring, a DEFAULTS dict and a run function (for the "
     "formulation timing use `flexmbs bench`)"),
    ("a cases directory that does not exist", ["--cases", "/no/such/dir", "run", "x"],
     "flexmbs run: error: --cases: /no/such/dir does not exist; give the directory of the case scripts (cases/*.py)"),
]


@pytest.mark.parametrize("argv, message", [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_a_bad_command_line_says_what_is_wrong(argv, message, capsys):
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    assert code == 2
    assert message in capsys.readouterr().err


def test_a_case_file_that_does_not_compile_is_skipped_with_its_error(tmp_path, caplog):
    """`flexmbs cases` lists the cases of a directory; a file that does not compile is named in a
    warning with the compiler's message, and the others are listed."""
    (tmp_path / "good.py").write_text('"""A case."""\nDEFAULTS = {}\ndef run(out=None):\n    pass\n')
    (tmp_path / "broken.py").write_text("def (:\n")
    from flexmbs.cli import discover_cases
    with caplog.at_level("WARNING", logger="flexmbs.cli"):
        assert list(discover_cases(tmp_path)) == ["good"]
    assert f"skipping {tmp_path / 'broken.py'}: invalid syntax" in caplog.text
