"""Bad input to cases/flexible_satellite.py and `flexmbs.reduction.modes_below`: each row is (what is
given, the message it now prints)."""
import sys
from pathlib import Path

import pytest

import flexmbs as fm
from flexmbs.elements import BeamEB3D
from flexmbs.reduction import modes_below

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import flexible_satellite as fs  # noqa: E402


def cantilever(n_el=4):
    el = BeamEB3D(fm.Material(E=70e9, rho=270.0), area=0.04, Iy=0.0133, Iz=1.33e-6, J=5.3e-6)
    return fm.Model(fm.generate.line(n_el, 5.0, dim=3), el, fixed=[("start", "all")])


ROWS = [
    (lambda: fs.run(modes=0), "parameter 'modes': must be positive, got 0"),
    (lambda: fs.run(modes=2.5), "parameter 'modes': must be a whole number, got 2.5"),
    (lambda: fs.run(cutoff_hz=-3.0), "parameter 'cutoff_hz': a cut-off frequency, must be a positive number of Hz, got -3.0"),
    (lambda: fs.run(panel_thickness=3.0), "parameter 'panel_thickness': a thin panel, must be below panel_width = 2 m, got 3 m"),
    (lambda: fs.run(elements=1), "parameter 'elements': must be >= 2, got 1"),
    (lambda: fs.run(panel="shell"), "parameter 'panel': must be one of plate, beam, got 'shell'"),
    (lambda: fs.run(width_elements=0), "parameter 'width_elements': must be >= 1, got 0"),
    (lambda: fs.run(slew_torque=-1.0), "parameter 'slew_torque': must be >= 0, got -1.0"),
    (lambda: fs.run(moded=3), "unknown parameter(s) ['moded'] for case flexible_satellite; did you mean 'modes'?"),
    (lambda: modes_below(cantilever(), 0.0), "`frequency` (the cut-off) must be a positive number of Hz, got 0.0"),
    (lambda: modes_below(cantilever(), "10"), "`frequency` (the cut-off) must be a positive number of Hz, got '10'"),
    (lambda: modes_below(cantilever(1), 1e9), "`frequency` 1e+09 Hz: all 5 modes computed lie at or below it"),
]


@pytest.mark.parametrize("call, message", ROWS, ids=[m[:40] for _, m in ROWS])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert message in str(err.value)
