"""cases/rolling_disk.py (issue 26, item 4): a disk rolling without slip under a torque against the
closed form a = tau / (r (m + I / r^2)), its rolling kept, the torque's work closing the energy balance."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))

import rolling_disk  # noqa: E402


def test_the_closed_form_is_the_rolling_disks():
    """a for a uniform disk (I = m r^2 / 2) is 2 tau / (3 m r); a thin ring (I = m r^2) tau / (2 m r)."""
    p = dict(rolling_disk.DEFAULTS, mass=2.0, radius=0.5, torque=3.0)
    assert rolling_disk.acceleration(p) == pytest.approx(2 * 3.0 / (3 * 2.0 * 0.5), rel=1e-15)
    assert rolling_disk.acceleration(dict(p, inertia=2.0 * 0.25)) == pytest.approx(3.0 / (2 * 2.0 * 0.5), rel=1e-15)


@pytest.mark.parametrize("method", ["DOP853", "Radau"])
def test_the_disk_rolls_at_the_closed_form_acceleration(tmp_path, method):
    """x(t) = a t^2 / 2 (a polynomial: DOP853 measured 2.4e-15 m over 2 s), x + r phi = 0, and
    E - E0 = W_loads (the torque's work)."""
    res = rolling_disk.run(out=tmp_path, t_end=0.5, method=method, inertia=0.05, plots=False)
    s = res["summary"]
    assert s["status"] == "finished"
    assert s["max_error_x"] < 1e-10 and s["rolling_error"] < 1e-10
    assert res["x"][-1] == pytest.approx(0.5 * s["acceleration"] * 0.25, rel=1e-10) and res["x"][-1] > 0.1
    assert s["energy_balance_error"] < 1e-9 * s["work_of_torque_J"]
    with np.load(tmp_path / "results.npz") as f:
        assert {"t", "x", "x_ref", "phi", "energy", "W_loads"} <= set(f.files)
        np.testing.assert_allclose(f["x"], res["x"])
    assert json.loads((tmp_path / "summary.json").read_text())["max_error_x"] == pytest.approx(s["max_error_x"])


@pytest.mark.parametrize("params, message", [
    (dict(inertia=-1.0), "`inertia` must be >= 0 (0: a uniform disk), got -1.0"),
    (dict(radius=0.0), "radius"),
    (dict(method="index3-alpha"), "method"),
])
def test_bad_parameters_are_named(params, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        rolling_disk.run(plots=False, **params)
