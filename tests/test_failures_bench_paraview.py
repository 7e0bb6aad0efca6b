"""Bad arguments of benchmarks/bench_paraview_export.py: (arguments, the message they now print).

Each message names the option, what it expects and what it was given (argparse exits with status 2).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_paraview_export as bench  # noqa: E402

BAD_ARGUMENTS = [
    (["--checkout", "/tmp/before"], "--checkout expects LABEL=DIR with DIR/flexmbs/__init__.py, got '/tmp/before'"),
    (["--checkout", "before=/nonexistent/dir"],
     "--checkout expects LABEL=DIR with DIR/flexmbs/__init__.py, got 'before=/nonexistent/dir'"),
    (["--repeats", "0"], "--repeats must be an integer of at least 1, got '0'"),
    (["--rounds", "two"], "--rounds must be an integer of at least 1, got 'two'"),
]


@pytest.mark.parametrize(("argv", "message"), BAD_ARGUMENTS, ids=[" ".join(a) for a, _ in BAD_ARGUMENTS])
def test_bad_arguments_say_what_was_expected_and_given(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        bench.main(argv)
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
