"""benchmarks/bench_vs_exudyn.py: its part selection, its flexmbs-only mode, and (with Exudyn
installed) its two Exudyn models checked against flexmbs on short intervals.

The Exudyn checks are physics, not timing: the floating-frame (FFRF) model of the rotating bar
is, under the prescribed rotation, the same linear equations as the flexmbs model, so under the
same integrator at the same step it has the lean model's error; the ANCF spin-up beam and the
flexmbs linear model with geometric stiffening agree to their modelling difference
(docs/benchmarks.md sec. 8).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_vs_exudyn as bench  # noqa: E402


def test_only_names_the_parts_and_rotating_bar_means_both_exudyn_models():
    assert bench.parse_parts("spinup") == {"spinup"}
    assert bench.parse_parts("rotating-bar, spinup") == {"rotating-bar-lean", "rotating-bar-ffrf", "spinup"}
    assert bench.parse_parts("rotating-bar-ffrf") == {"rotating-bar-ffrf"}
    with pytest.raises(argparse.ArgumentTypeError, match="rotating-bar, rotating-bar-lean"):
        bench.parse_parts("spin-up")
    with pytest.raises(argparse.ArgumentTypeError):
        bench.parse_parts(" , ")


def test_without_exudyn_the_script_says_so_and_times_flexmbs_only(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "exudyn", None)          # import exudyn raises ImportError
    full = bench.flexmbs_spinup                               # the first 8 s (past the minimum), cheaply
    monkeypatch.setattr(bench, "flexmbs_spinup", lambda h=None: full(h, t_end=8.0))
    monkeypatch.setattr(bench, "SPIN_REF_H", 0.005)
    assert bench.main(["--only", "spinup"]) == 0
    out = capsys.readouterr().out
    assert "Exudyn is not installed" in out
    assert "flexmbs  spin-up beam" in out and "tip minimum -0.5744" in out
    assert "ANCF" not in out.split("not installed")[1]


def test_spin_angle_is_the_benchmark_law_and_continuous_at_t_s():
    # ../shared/BENCHMARKS.md sec. 3.2: theta(T_s) = Omega_s T_s / 2 from both branches
    assert bench.spin_angle(15.0) == pytest.approx(6.0 * 15.0 / 2.0)
    assert bench.spin_angle(15.0 - 1e-9) == pytest.approx(45.0, abs=1e-7)
    from flexmbs.motion import SpinUp
    law = SpinUp(6.0, 15.0)
    for t in (0.3, 4.0, 11.0, 17.5):                          # the frame's rotation matrix R(theta(t))
        R, a = law.state(t).R, bench.spin_angle(t)
        assert np.allclose(R[:2, :2], [[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]], atol=1e-12)


def test_ffrf_bar_has_the_lean_models_error_at_the_same_step():
    pytest.importorskip("exudyn")
    import rotating_bar as rb
    p = rb.DEFAULTS
    model = rb.build(**{k: p[k] for k in ("elements", "length", "mass", "area", "youngs", "omega", "force",
                                          "period")})
    t_ref, u_ref = bench.exact_tip(model)
    h, t_end = 2e-6, 0.004
    t, u, *_ = bench.exudyn_ffrf_run(model, h, p, t_end)
    e_ffrf = bench.tip_error(t_ref, u_ref, t, u)
    t_l, u_l, _ = bench.exudyn_run(model, h, p["period"])
    m = t_l <= t_end + 1e-12
    e_lean = bench.tip_error(t_ref, u_ref, t_l[m], u_l[m])
    # same equations, same integrator: the same history up to Newton's tolerances (3.7e-11 of
    # the peak measured), against a time-step error of 2.5e-5 of the peak
    assert 1e-6 < e_ffrf < 1e-3
    assert e_ffrf == pytest.approx(e_lean, rel=1e-4)
    assert np.max(np.abs(u - u_l[m])) < 1e-8 * np.max(np.abs(u_ref))


def test_ancf_spinup_agrees_with_the_flexmbs_model_to_the_modelling_difference():
    pytest.importorskip("exudyn")
    t, v, *_ = bench.exudyn_spinup_ancf(0.01, t_end=5.0)
    t_f, v_f, *_ = bench.flexmbs_spinup(t_end=5.0)
    m = t_f <= 5.0 + 1e-9
    peak = 0.5744                                               # the tip minimum, at 6.76 s
    d = np.max(np.abs(np.interp(t_f[m], t, v) - v_f[m])) / peak
    # 0-20 s the converged histories differ by 1.1e-3 of the peak (docs/benchmarks.md sec. 8)
    assert d < 2e-3
    assert v[-1] < -0.4                                         # lagging, near -0.469 m at 5 s
