"""Marker records -> frame motion: smoothing splines, the GCV and acceleration rules, the sample.

The smoothing spline minimises sum (y_i - g(t_i))^2 + lam int g''^2 (Green and Silverman 1994,
doi:10.1201/b15710, Reinsch algorithm); its value for a given lam must equal scipy's
make_smoothing_spline, and tr A the trace of the hat matrix built column by column.  The
sample records (cases/data/four_bar_markers.csv) come from a known four-bar
(cases/data/make_markers.py), so the recovered kinematics are compared with the exact ones.

Stated bounds (inside the splines' valid window, relative to the peak of each quantity):
noise-free records: a_O and eps within 0.5 %, omega within 0.05 %; the shipped records with
20 um noise: a_O within 1 %, eps within 2.5 %, omega within 1 %, theta within 1e-3 rad.
"""
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.interpolate import make_smoothing_spline

from flexmbs.markers import (MarkerRecords, marker_motion, read_markers, rigid_pose, smoothing_spline,
                             write_markers)

DATA = Path(__file__).resolve().parents[1] / "cases" / "data"
sys.path.insert(0, str(DATA))
import make_markers  # noqa: E402


def exact_coupler(t):
    """The coupler's chord-frame kinematics of the four-bar that made the sample."""
    w = make_markers.CRANK_SPEED
    return make_markers.linkage().solve(w * t, w, 0.0).link("coupler")


def errors(motion, t):
    p, c = motion.pose(t), exact_coupler(t)
    rel = lambda a, b: np.abs(a - b).max() / np.abs(b).max()  # noqa: E731
    return dict(theta=np.abs(p["theta"] - c.theta).max(), omega=rel(p["omega"], c.omega),
                eps=rel(p["eps"], c.eps), a_O=rel(p["a_O"], c.a), r_O=np.abs(p["r_O"] - c.r).max())


def window_times(motion, n=801):
    return np.linspace(*motion.valid_window, n)


def test_spline_for_a_given_lam_is_scipys_and_its_dof_is_the_hat_matrix_trace():
    rng = np.random.default_rng(0)
    t = np.sort(rng.uniform(0.0, 2.0, 40))
    y = np.sin(3 * t) + 0.05 * rng.normal(size=t.size)
    for lam in (1e-5, 1e-3, 1e-1):
        s = smoothing_spline(t, y, lam)
        np.testing.assert_allclose(s(t), make_smoothing_spline(t, y, lam=lam)(t), atol=1e-12)
        A = np.array([smoothing_spline(t, e, lam)(t) for e in np.eye(t.size)]).T
        assert s.dof == pytest.approx(np.trace(A), rel=1e-9)
        assert s.spline(t[[0, -1]], 2) == pytest.approx([0.0, 0.0], abs=1e-9)      # natural ends


def test_gcv_estimates_the_noise_and_interpolates_clean_data():
    t = np.arange(0.0, 1.0, 1e-3)
    signal = 0.05 * np.sin(2 * np.pi * 3 * t) + 0.02 * np.cos(2 * np.pi * 7 * t)
    noisy = signal + np.random.default_rng(1).normal(scale=1e-4, size=t.size)
    s = smoothing_spline(t, noisy, target="position")
    assert s.rule == "gcv"
    assert s.sigma == pytest.approx(1e-4, rel=0.1)
    clean = smoothing_spline(t, signal, target="position")
    assert clean.bandwidth < s.bandwidth / 5
    inner = (t > 0.1) & (t < 0.9)
    assert np.abs(clean(t) - signal)[inner].max() < 1e-8          # 2e-7 of the amplitude


def test_sample_csv_is_the_seeded_generator_output(tmp_path):
    rec = read_markers(make_markers.PATH)
    gen = make_markers.generate()
    np.testing.assert_allclose(rec.t, gen.t, atol=1e-9)
    np.testing.assert_allclose(rec.xy, gen.xy, atol=1e-10)                 # written with 8 digits
    assert rec.n_markers == 2 and len(rec.t) == 701
    path = write_markers(tmp_path / "m.csv", gen, comment="a\nb")
    np.testing.assert_allclose(read_markers(path).xy, gen.xy, atol=1e-10)


def test_clean_records_give_the_exact_kinematics_within_the_stated_bound():
    motion = marker_motion(make_markers.generate(noise=0.0), body=make_markers.BODY)
    e = errors(motion, window_times(motion))
    assert e["a_O"] < 5e-3 and e["eps"] < 5e-3 and e["omega"] < 5e-4, e
    assert e["theta"] < 1e-5 and e["r_O"] < 1e-6, e


def test_noisy_sample_recovers_the_noise_free_kinematics_within_the_stated_bound():
    motion = marker_motion(read_markers(make_markers.PATH), body=make_markers.BODY)
    rep = motion.report()
    for name in ("x", "y"):
        # pose origin noise: marker noise 20 um (mean of two markers and the angle's lever arm)
        assert rep["channels"][name]["sigma"] == pytest.approx(2e-5, rel=0.25)
        assert rep["channels"][name]["rule"] == "gcv+acceleration"
    assert rep["channels"]["theta"]["sigma"] == pytest.approx(np.sqrt(2) * 2e-5 / 0.30, rel=0.25)
    e = errors(motion, window_times(motion))
    assert e["a_O"] < 1e-2 and e["eps"] < 2.5e-2 and e["omega"] < 1e-2 and e["theta"] < 1e-3, e
    # GCV alone (position-optimal) leaves accelerations at least twice as wrong: the reason for rule b
    gcv = marker_motion(read_markers(make_markers.PATH), body=make_markers.BODY,
                        lam={k: smoothing_spline(motion.records.t, ch, target="position").lam
                             for k, ch in zip(("x", "y", "theta"),
                                              (*rigid_pose(motion.records.xy, make_markers.BODY)[0].T,
                                               rigid_pose(motion.records.xy, make_markers.BODY)[1]))})
    e_gcv = errors(gcv, window_times(motion))
    assert e_gcv["a_O"] > 2 * e["a_O"] and e_gcv["eps"] > 2 * e["eps"], (e, e_gcv)


def test_natural_end_conditions_bias_accelerations_outside_the_valid_window():
    motion = marker_motion(make_markers.generate(noise=0.0), body=make_markers.BODY)
    t_end = np.linspace(0.0, 0.005, 11)
    assert errors(motion, t_end)["a_O"] > 0.2                       # g'' = 0 at the record's start
    with pytest.raises(ValueError, match="outside the marker records"):
        motion.state(motion.t_range[1] + 0.01)


def test_rigid_pose_of_three_markers_through_full_turns():
    t = np.linspace(0.0, 2.0, 400)
    theta = 9.0 * t                                                # 2.9 turns
    body = np.array([[0.0, 0.0], [0.2, 0.0], [0.05, 0.1]])
    r_O = np.stack([0.3 * np.cos(t), 0.1 * t], -1)
    R = np.stack([np.stack([np.cos(theta), -np.sin(theta)], -1), np.stack([np.sin(theta), np.cos(theta)], -1)], -2)
    xy = r_O[:, None] + np.einsum("tij,mj->tmi", R, body)
    r_fit, th_fit = rigid_pose(xy, body)
    np.testing.assert_allclose(r_fit, r_O, atol=1e-14)
    np.testing.assert_allclose(th_fit, theta, atol=1e-12)
    m = marker_motion(MarkerRecords(t, xy))                        # default body from marker 1 -> 2
    np.testing.assert_allclose(m.body, body[:, :] @ np.eye(2), atol=1e-12)
    P, V, A = m.markers(t[100:300])
    np.testing.assert_allclose(P, xy[100:300], atol=1e-7)


@pytest.mark.parametrize("kwargs, error", [
    (dict(t=np.arange(5.0), xy=np.zeros((5, 2, 2))), "at least 8"),
    (dict(t=np.r_[0.0, np.arange(9.0)], xy=np.zeros((10, 2, 2))), "increasing"),
    (dict(t=np.arange(10.0), xy=np.zeros((10, 1, 2))), "n_markers >= 2"),
    (dict(t=np.arange(10.0), xy=np.full((10, 2, 2), np.nan)), "non-finite"),
])
def test_bad_records_are_rejected(kwargs, error):
    with pytest.raises(ValueError, match=error):
        MarkerRecords(**kwargs)


def test_bad_csv_header_is_rejected(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("time,x1,y1\n0,1,2\n")
    with pytest.raises(ValueError, match="header must be t, x1, y1, x2, y2"):
        read_markers(path)
