"""The cases run at small size, write their contract files and give physical answers."""
import csv
import sys
from pathlib import Path

import numpy as np
import pytest

CASES = Path(__file__).resolve().parents[1] / "cases"
sys.path.insert(0, str(CASES))

import rotating_bar  # noqa: E402
import timing  # noqa: E402


def test_rotating_bar_cli_writes_results_and_plots(tmp_path):
    code = rotating_bar.main(["--elements", "6", "--t-end", "0.01", "--dt-out", "1e-4", "--damping", "0.05",
                              "--formulation", "hamilton", "--out", str(tmp_path)])
    assert code == 0
    for name in ("results.npz", "nodes_3_7_10_undamped.png", "nodes_3_7_10_damped.png", "all_nodes.png",
                 "energy.png", "summary.json"):
        assert (tmp_path / name).stat().st_size > 0, name
    data = np.load(tmp_path / "results.npz")
    assert data["t"].shape == (101,)
    np.testing.assert_allclose(data["t"], np.arange(101) * 1e-4, atol=1e-15)   # exactly at dt_out
    assert data["displacement"].shape == (101, 7, 2)
    assert data["nodes"].shape == (7, 2)
    assert np.all(data["displacement"][:, 0] == 0.0)               # node 1 on the axis is clamped
    assert np.all(data["displacement"][:, :, 1] == 0.0)            # axial DOFs only


@pytest.mark.slow
def test_rotating_bar_oscillates_about_the_centrifugal_elongation():
    """Without load and damping the tip oscillates between 0 and about twice the static stretch,
    so its time average over whole periods is the static elongation (closed form, SSLV105)."""
    runs = rotating_bar.run(elements=10, force=0.0, t_end=0.02, dt_out=2e-6, rtol=1e-9)
    r = runs["undamped"]
    tip = r.displacement[:, -1, 0]
    static = rotating_bar.static_elongation(1.0)
    omega_1 = np.sqrt(210e9 / 50_000.0 * (np.pi / 2) ** 2 - 15.0**2)      # first axial frequency
    n_periods = int(r.t[-1] * omega_1 / (2 * np.pi))
    window = r.t <= n_periods * 2 * np.pi / omega_1
    # the time average of the full (multi-mode) response equals the static value to within the
    # higher modes' incomplete periods
    assert np.mean(tip[window]) == pytest.approx(static, rel=2e-2)
    assert tip.max() == pytest.approx(2 * static, rel=5e-2)


def test_rotating_bar_rejects_unknown_parameters():
    with pytest.raises(ValueError, match="valid"):
        rotating_bar.run(elemnts=3)


def test_timing_case_writes_its_table(tmp_path):
    rows = timing.run(tmp_path, elements=(3,), large=(8,), target=1e-4, repeats=1, evaluations=("compiled",),
                      h=2e-6, t_large=2e-4)
    with open(tmp_path / "timing.csv") as f:
        table = list(csv.DictReader(f))
    assert len(table) == len(rows) == 6
    assert list(table[0])[:6] == ["formulation", "elements", "build_s", "solve_s", "rhs_evaluations", "error"]
    for r in rows:
        assert r["solve_s"] > 0 and r["rhs_evaluations"] > 0
        assert r["error"] <= (1e-4 if r["part"] == "paper" else 1e-2)
    assert (tmp_path / "timing.png").stat().st_size > 0
