"""Bad command lines of benchmarks/bench_work_precision.py and the message each now prints (the
usage line, then the error naming the option, what was given and what it accepts)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_work_precision as wp  # noqa: E402

CASES = "['A02', 'A03', 'coupled', 'spinup', 'triple']"
BAD = [
    (["--cases", "A04"], f"`--cases`: unknown ['A04']; pick from {CASES}"),
    (["--cases", "A03,triple,pendulum"], f"`--cases`: unknown ['pendulum']; pick from {CASES}"),
    (["--cases", "A03", "--methods", "radau"],
     "`--methods`: unknown ['radau'] for the cases ['A03']; pick from ['DOP853', 'exudyn', 'hht', 'index3-alpha', "
     "'index3-alpha-adaptive', 'radau-dae', 'rattle']"),
    (["--cases", "spinup", "--methods", "index3-alpha"],
     "`--methods`: unknown ['index3-alpha'] for the cases ['spinup']; pick from ['Radau', "
     "'generalized-alpha', 'radau-dae']"),
    (["--cases", "spinup", "--methods", "exudyn"],
     "`--methods`: unknown ['exudyn'] for the cases ['spinup']; pick from ['Radau', 'generalized-alpha', "
     "'radau-dae']"),
    (["--exudyn=yes"], "argument --exudyn/--no-exudyn: ignored explicit argument 'yes'"),
]


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_command_line_says_what_was_expected(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        wp.parse_args(argv)
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
