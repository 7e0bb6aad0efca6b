"""Bad inputs of the spatial corotational beam's closed forms and of its benchmark (issue 22, item 4): each
row is (the call, the message it now prints)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs.elements.corotational3d import rotary_inertia

ROOT = Path(__file__).resolve().parents[1]


def _bench(argv):
    """bench_corotational.main(argv), sys.path as it was before (the module puts its folders first)."""
    path = list(sys.path)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_corotational
        return bench_corotational.main(argv)
    finally:
        sys.path[:] = path


ROWS = [
    ("rotary_inertia with one psi row too few",
     lambda: rotary_inertia(np.zeros((2, 3)), np.zeros((3, 3)), np.zeros((3, 3, 3))),
     ValueError, "rotary_inertia: expected psi (n, 3), psi_dot (n, 3) and J0 (n, 3, 3), got shapes (2, 3), (3, 3) "
                 "and (3, 3, 3)"),
    ("rotary_inertia with a flat J0",
     lambda: rotary_inertia(np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 9))),
     ValueError, "rotary_inertia: expected psi (n, 3), psi_dot (n, 3) and J0 (n, 3, 3), got shapes (2, 3), (2, 3) "
                 "and (2, 9)"),
    ("rotary_inertia with 2D rotation angles",
     lambda: rotary_inertia(np.zeros(3), np.zeros(3), np.zeros((3, 3))),
     ValueError, "rotary_inertia: expected psi (n, 3), psi_dot (n, 3) and J0 (n, 3, 3), got shapes (3,), (3,) "
                 "and (3, 3)"),
]


@pytest.mark.parametrize("what, call, error, message", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input_is_named(what, call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


def test_bench_names_an_unknown_model(capsys):
    """bench_corotational.py --models corot4d: argparse's error (exit 2) naming the row and the known ones."""
    with pytest.raises(SystemExit) as info:
        _bench(["--models", "corot4d"])
    assert info.value.code == 2
    assert ("--models: unknown ['corot4d']; expected some of ['corot2d', 'corot2d numpy', 'corot3d', "
            "'corot3d numpy', 'ffrf compiled', 'ffrf numpy']") in capsys.readouterr().err
