"""Bad input to the solid rod of cases/slider_crank.py (rod=solid): each row is (what is given, the message
it now prints)."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import slider_crank as sc  # noqa: E402

ROWS = [
    (lambda: sc.run(coupled=True, rod="solid", compare_degrees=-5.0),
     "parameter 'compare_degrees': must lie in [0, 360] (0: no comparison), got -5.0"),
    (lambda: sc.run(coupled=True, rod="solid", compare_degrees=400.0),
     "parameter 'compare_degrees': must lie in [0, 360] (0: no comparison), got 400.0"),
]


@pytest.mark.parametrize("call, message", ROWS, ids=[m[:50] for _, m in ROWS])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert message in str(err.value)
