"""Bad arguments of benchmarks/bench_whole_process.py: (arguments, the message they now print).

Each message names the option, what it expects and what it was given (argparse exits with status 2).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_whole_process as bench  # noqa: E402

BAD_ARGUMENTS = [
    (["--rows", "slider-crank,pendulum"],
     "--rows expects a comma-separated list of slider-crank, slider-crank-plots, spinup-torque, triple-ab4, "
     "triple-index3, a02, a03, controlled, feedforward; got 'slider-crank,pendulum'"),
    (["--rows", ","], "--rows expects a comma-separated list of slider-crank"),
    (["--checkout", "/tmp/before"], "--checkout expects LABEL=DIR with DIR/flexmbs/__init__.py, got '/tmp/before'"),
    (["--checkout", "before=/nonexistent/dir"],
     "--checkout expects LABEL=DIR with DIR/flexmbs/__init__.py, got 'before=/nonexistent/dir'"),
    (["--repeats", "0"], "--repeats must be at least 1, got 0"),
    (["exudyn", "pendulum", "--out", "x"], "argument row: invalid choice: 'pendulum'"),
]


@pytest.mark.parametrize(("argv", "message"), BAD_ARGUMENTS, ids=[" ".join(a) for a, _ in BAD_ARGUMENTS])
def test_bad_arguments_say_what_was_expected_and_given(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        bench.main(argv)
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
