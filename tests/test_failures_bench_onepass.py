"""Bad arguments of benchmarks/bench_onepass.py (docs/benchmarks.md sec. 11.5), each row (arguments,
the message it now prints); argparse exits with status 2."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_onepass  # noqa: E402

ROWS = [
    (["--checkout", "before"], "`--checkout` must be LABEL=DIR with DIR a flexmbs source tree "
                               "(DIR/flexmbs/__init__.py), got 'before'"),
    (["--checkout", "before=/nonexistent"], "`--checkout` must be LABEL=DIR with DIR a flexmbs source tree "
                                            "(DIR/flexmbs/__init__.py), got 'before=/nonexistent'"),
    (["--parts", "/nonexistent/results.h5"], "`--parts` must be a results file of the coupled slider-crank "
                                             "(DIR/results.h5), got '/nonexistent/results.h5', which does not exist"),
    (["--rounds", "0"], "`--rounds` must be at least 1 and `--revolutions` positive, got 0 and [2, 40]"),
]


@pytest.mark.parametrize("argv, message", ROWS, ids=[" ".join(r[0]) for r in ROWS])
def test_message(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        bench_onepass.main(argv)
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
