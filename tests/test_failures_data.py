"""Bad input to the data exports (issue 27, items 2 and 3): rows (call, message it prints)."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from flexmbs.results import BodyResults, Results

T = np.linspace(0.0, 1.0, 3)
LINK = BodyResults("link", "rigid", np.zeros((3, 3)), np.tile(np.eye(3), (3, 1, 1)), np.zeros((3, 3)),
                   np.zeros((3, 3)))
SYSTEM = Results(t=T, q=np.zeros((3, 7)), v=np.zeros((3, 7)), bodies={"link": LINK},
                 energies={"total": np.zeros(3)})

ROWS = [
    (lambda: SYSTEM.to_dataframe("crank"),
     r"`what` must be one of \['energies', 'multipliers', 'link'\], got 'crank'"),
    (lambda: SYSTEM.to_dataframe("multipliers"),
     r"`what` 'multipliers': these results hold none \(only a System run by index3-alpha that reached its end"),
]


@pytest.mark.parametrize("call, message", ROWS)
def test_bad_input_says_what_was_expected(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("module, call", [("xarray", lambda: SYSTEM.to_xarray()),
                                          ("pandas", lambda: SYSTEM.to_dataframe())])
def test_without_the_data_extra_the_message_says_what_to_install(monkeypatch, module, call):
    monkeypatch.setitem(sys.modules, module, None)          # import raises ImportError, as if not installed
    with pytest.raises(ImportError, match=rf'needs {module}, which is not installed .*pip install "flexmbs\[data\]"'):
        call()
