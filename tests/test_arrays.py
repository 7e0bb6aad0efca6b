"""flexmbs.arrays: helpers that replace numpy calls with a costly import."""
import subprocess
import sys

import numpy as np
import pytest

from flexmbs.arrays import sorted_unique


@pytest.mark.parametrize("values", [[], [5], [3, 1, 3, 2, 1], [[4, 4], [0, 9]], np.arange(7)[::-1],
                                    [0.5, -1.0, 0.5, np.inf]], ids=["empty", "one", "ints", "2-D", "reversed", "floats"])
def test_sorted_unique_equals_np_unique(values):
    expected = np.unique(np.asarray(values))
    got = sorted_unique(values)
    assert got.dtype == expected.dtype and np.array_equal(got, expected)


def test_sorted_unique_does_not_import_numpy_ma():
    code = "import sys, numpy as np\nfrom flexmbs.arrays import sorted_unique\nsorted_unique([2, 1, 2])\nprint('numpy.ma' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.split()[-1] == "False", proc.stderr
