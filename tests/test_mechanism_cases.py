"""Flexible links on prescribed mechanism frames: physics checks and the cases at small size.

Physics (kineto-elastodynamics, Erdman, Sandor and Oakberg 1972, doi:10.1115/1.3428338):
- the deflection of the connecting rod is inversely proportional to its stiffness, so a very
  stiff rod has vanishing deflection;
- far below the first bending frequency (crank speed / omega_1 = 0.004) the rod follows the
  static deflection under the inertia loads of the same instant (`static_solution`);
- Hermite beam elements converge fast (O(h^4) for displacements): the change from 8 to 16
  elements is much smaller than from 4 to 8;
- Lagrange, Gibbs-Appell and Hamilton describe the same motion.
Slider-crank data: B. Simeon, Math. Modelling of Systems 2 (1996) 1-18,
doi:10.1080/13873959608837026 (BENCHMARKS sec. 4).
"""
import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.formulations import FORMULATIONS
from flexmbs.mechanisms import chord_deflection
from flexmbs.modal import static_solution

CASES = Path(__file__).resolve().parents[1] / "cases"
sys.path.insert(0, str(CASES))

import four_bar  # noqa: E402
import marker_mechanism  # noqa: E402
import slider_crank  # noqa: E402
import timing  # noqa: E402

SHORT = dict(elements=4, revolutions=0.25, h=2e-5, plots=False)


def peak_abs(extras):
    return np.abs(extras["midspan_deflection"]).max()


def test_very_stiff_rod_has_vanishing_deflection():
    _, _, nominal = slider_crank.run(**SHORT)
    _, _, stiff = slider_crank.run(**SHORT, youngs=2e15)
    assert peak_abs(nominal) > 1e-4                               # about a millimetre at 150 rad/s
    assert peak_abs(stiff) < 2e-4 * peak_abs(nominal)             # 1/E: 1e-4 times smaller


def test_low_crank_speed_follows_the_static_deflection_of_the_same_instant():
    model = slider_crank.build(elements=4, crank_speed=5.0)
    t_end = (np.pi / 4) / 5.0                                      # an eighth of a turn
    res = fm.run(model, method="midpoint", h=1e-4, t_end=t_end, dt_out=t_end / 10,
                 delta0=static_solution(model, 0.0), compute_energies=False)
    assert res.success
    w = chord_deflection(model, res.delta, [0.15])[:, 0]
    w_static = np.array([chord_deflection(model, static_solution(model, t), [0.15])[0] for t in res.t])
    assert np.abs(w_static).max() > 1e-7
    assert np.abs(w - w_static).max() <= 1e-2 * np.abs(w_static).max()


def test_midspan_deflection_converges_with_elements():
    runs = {n: slider_crank.run(elements=n, revolutions=0.5, h=2e-5, plots=False)[2]["midspan_deflection"]
            for n in (4, 8, 16)}
    d1 = np.abs(runs[8] - runs[4]).max()
    d2 = np.abs(runs[16] - runs[8]).max()
    peak = np.abs(runs[16]).max()
    assert d2 < 0.25 * d1, (d1, d2)
    assert d2 < 1e-3 * peak


@pytest.mark.slow
def test_formulations_agree_on_the_flexible_rod():
    model = slider_crank.build(elements=4)
    t_end = 0.003                                                 # 26 degrees of crank from the dead centre
    runs = {name: fm.run(model, formulation=name, method="DOP853", rtol=1e-10, atol=1e-16, t_end=t_end,
                         dt_out=t_end / 20, compute_energies=False) for name in FORMULATIONS}
    ref = runs["lagrange"]
    for name, r in runs.items():
        assert r.success
        assert np.abs(r.delta - ref.delta).max() <= 1e-7 * np.abs(ref.delta).max(), name
    # and with the case's integrator (implicit midpoint): equal to O(h^2)
    mids = {name: slider_crank.run(**SHORT, formulation=name)[2]["midspan_deflection"] for name in FORMULATIONS}
    for name, w in mids.items():
        assert np.abs(w - mids["lagrange"]).max() <= 2e-4 * np.abs(mids["lagrange"]).max(), name


def test_slider_crank_cli_writes_results_and_plots(tmp_path):
    code = slider_crank.main(["--elements", "4", "--revolutions", "0.1", "--h", "2e-5", "--gif-frames", "3",
                              "--out", str(tmp_path)])
    assert code == 0
    for name in ("results.npz", "summary.json", "deflection.png", "deformed_shapes.png", "animation.gif"):
        assert (tmp_path / name).stat().st_size > 0, name
    data = np.load(tmp_path / "results.npz")
    n_t = len(data["t"])
    assert n_t == 73                                               # 36 degrees every 0.5 degree
    assert data["displacement"].shape == (n_t, 5, 2) and data["nodes"].shape == (5, 2)
    np.testing.assert_allclose(data["nodes"][:, 0], np.linspace(0.0, 0.30, 5))   # from A to B
    np.testing.assert_allclose(data["crank_angle"], 150.0 * data["t"], rtol=1e-12)
    assert np.all(data["displacement"][:, 0] == 0.0)              # pinned at the crank pin
    assert np.all(data["displacement"][:, -1, 1] == 0.0)          # v = 0 at the slider pin
    assert np.abs(data["displacement"][:, -1, 0]).max() > 0       # axial DOF at the slider is free
    np.testing.assert_allclose(data["midspan_deflection"], data["displacement"][:, 2, 1], rtol=1e-13)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["status"] == "finished" and "peak_crank_angle_deg" in summary


def test_four_bar_case_writes_its_files(tmp_path):
    res, model, extras = four_bar.run(out=tmp_path, elements=4, revolutions=0.05, gif_frames=3)
    assert res.success and model.linkage.type.value == "crank-rocker"
    data = np.load(tmp_path / "results.npz")
    assert data["displacement"].shape == (len(data["t"]), 5, 2)
    assert data["crank_angle"].shape == data["t"].shape
    assert np.all(data["displacement"][:, [0, -1]] == 0.0)        # pinned-pinned
    # it starts from the quasi-static deflection
    np.testing.assert_allclose(res.delta[0], static_solution(model, 0.0))
    for name in ("deflection.png", "deformed_shapes.png", "animation.gif", "summary.json"):
        assert (tmp_path / name).stat().st_size > 0, name


@pytest.mark.slow
def test_marker_case_recovers_the_exact_kinematics_run(tmp_path):
    res, model, extras = marker_mechanism.run(out=tmp_path, elements=4, duration=0.2, h=1e-4, gif_frames=3)
    assert res.success
    rep = extras["_report"]
    # stated bound: measurement noise left after smoothing changes the beam's response by < 3 %
    assert rep["errors_vs_exact_kinematics"]["midspan_deflection_rel_peak"] < 0.03
    assert rep["interval_s"][0] == pytest.approx(rep["smoothing"]["valid_window_s"][0])
    data = np.load(tmp_path / "results.npz")
    assert data["displacement"].shape == (len(data["t"]), 5, 2) and "crank_angle" not in data
    for name in ("marker_records.png", "marker_accelerations.png", "frame_kinematics.png", "deflection.png",
                 "deformed_shapes.png", "animation.gif"):
        assert (tmp_path / name).stat().st_size > 0, name
    table = json.loads((tmp_path / "summary.json").read_text())["markers_table2"]
    assert [r["marker"] for r in table] == [1, 2]
    # marker 1 rides the crank pin: |a| = r omega^2 = 0.08 (4 pi)^2
    assert table[0]["a_max_mm_s2"] == pytest.approx(1e3 * 0.08 * (4 * np.pi) ** 2, rel=0.02)


@pytest.mark.parametrize("case", [slider_crank, four_bar, marker_mechanism])
def test_cases_reject_unknown_parameters(case):
    with pytest.raises(ValueError, match="valid"):
        case.run(elemnts=3)


def test_mechanism_timing_writes_its_table(tmp_path):
    rows = timing.run_mechanism(tmp_path, elements=(3,), target=1e-2, repeats=1, t_span=0.01)
    with open(tmp_path / "timing.csv") as f:
        table = list(csv.DictReader(f))
    assert len(table) == len(rows) == 3
    assert list(table[0])[:6] == ["formulation", "elements", "build_s", "solve_s", "rhs_evaluations", "error"]
    for r in rows:
        assert r["part"] == "mechanism" and r["error"] <= 1e-2 and r["solve_s"] > 0
    assert (tmp_path / "timing.png").stat().st_size > 0
