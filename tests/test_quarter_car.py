"""cases/quarter_car.py (issue 26, item 4): a quarter-car over a road step against the closed form of
the linear two-mass system, with the dissipated work closing its energy balance."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))

import quarter_car  # noqa: E402


def test_closed_form_is_the_static_rise_and_starts_at_rest():
    """The reference itself: x(0) = 0, x(inf) = (step, step), and it solves M x'' + C x' + K x = f
    (second differences, step 1e-5 s)."""
    p = dict(quarter_car.DEFAULTS)
    t = np.array([0.0, 0.3 - 1e-5, 0.3, 0.3 + 1e-5, 60.0])
    x = quarter_car.closed_form(t, p)
    np.testing.assert_allclose(x[0], 0.0, atol=1e-15)
    np.testing.assert_allclose(x[-1], p["step"], rtol=1e-9)
    M = np.diag([p["m_s"], p["m_u"]])
    K = np.array([[p["k_s"], -p["k_s"]], [-p["k_s"], p["k_s"] + p["k_t"]]])
    C = p["c_s"] * np.array([[1.0, -1.0], [-1.0, 1.0]])
    xd, xdd = (x[3] - x[1]) / 2e-5, (x[3] - 2 * x[2] + x[1]) / 1e-10
    np.testing.assert_allclose(M @ xdd + C @ xd + K @ x[2], [0.0, p["k_t"] * p["step"]], atol=1e-2)


def test_quarter_car_follows_the_closed_form_and_closes_its_energy_balance(tmp_path):
    """DOP853 (rtol 1e-10): the body and wheel rises within 1e-9 m of the closed form (measured 3.6e-12 m,
    2.1e-11 m over 2 s); the balance E - E0 + W_damping within 1e-7 of the dissipated work (measured
    3.1e-6 J of 200 J over 2 s, the works integrated at every step; the trapezoidal rule over outputs
    at 1 ms it replaced left 0.037 J)."""
    res = quarter_car.run(out=tmp_path, t_end=0.3, plots=False)
    s = res["summary"]
    assert s["status"] == "finished"
    assert s["max_error_y_s"] < 1e-9 and s["max_error_y_u"] < 1e-9
    assert s["peak_rise_y_s"] > s["parameters"]["step"]          # it overshoots: underdamped body bounce
    assert s["energy_balance_error"] < 1e-7 * s["dissipated_J"]
    with np.load(tmp_path / "results.npz") as f:
        assert {"t", "y_s", "y_u", "y_s_ref", "y_u_ref", "energy", "W_damping"} <= set(f.files)
    assert json.loads((tmp_path / "summary.json").read_text())["max_error_y_s"] == pytest.approx(s["max_error_y_s"])


def test_index3_alpha_converges_to_the_closed_form_at_second_order():
    """index3-alpha on the force elements (numpy path, the tangent from System.elastic_stiffness):
    halving h divides the error by about 4 (measured 2.0e-6 m at h = 1 ms, 1.2e-7 m at 0.25 ms over 2 s)."""
    errors = [quarter_car.run(t_end=0.3, method="index3-alpha", h=h, dt_out=0.01, plots=False)["summary"]
              ["max_error_y_s"] for h in (2e-3, 1e-3)]
    assert 3.0 < errors[0] / errors[1] < 5.0, errors


@pytest.mark.parametrize("params, message", [
    (dict(c_s=-1.0), "`c_s` must be >= 0, got -1.0"),
    (dict(step=0.5), "`step` must be smaller than the tyre's rest length 0.3 m in size, got 0.5"),
    (dict(m_s=0.0), "m_s"),
])
def test_bad_parameters_are_named(params, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        quarter_car.run(plots=False, **params)
