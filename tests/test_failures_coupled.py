"""Bad input of the coupled mechanisms' post-processing (`flexmbs.mechanisms.coupled`), each row
(call, message it prints)."""
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs.mechanisms.coupled import axial_torque

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))

import slider_crank  # noqa: E402

SYSTEM = slider_crank.build_coupled(elements=2)[0]
T = np.zeros(3)
Q = np.tile(SYSTEM.initial_coordinates(), (3, 1))


def _drive_torque(lam):
    return axial_torque(SYSTEM, SYSTEM.constraint("drive"), SYSTEM.body("crank"), T, Q, lam)


ROWS = [
    ("no multipliers (a killed run read back, a quasi-velocity formulation)", lambda: _drive_torque(None),
     r"axial_torque: `lam` is None: this run has no multipliers \(`Results.multipliers` is None for the "
     r"quasi-velocity formulations and for a run read back from a results file that stopped before its end\); "
     r"give lam \(n_t, n_c\), e.g. the multipliers of an index3-alpha run"),
    ("the multipliers of one output", lambda: _drive_torque(np.zeros(SYSTEM.n_c)),
     rf"System.reaction_history: `lam` must be an array \(3, {SYSTEM.n_c}\) \(one row per time of `t`\), "
     rf"got shape \({SYSTEM.n_c},\)"),
]


@pytest.mark.parametrize("what, call, message", ROWS, ids=[r[0] for r in ROWS])
def test_message(what, call, message):
    with pytest.raises(ValueError, match=message):
        call()
