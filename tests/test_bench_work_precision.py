"""benchmarks/bench_work_precision.py: Exudyn's generalized-alpha rows (issue 25, item 5) on short spans.

No timing is asserted.  The Exudyn checks use the same error functions as the table's rows and compare
with what does not depend on either code: generalized-alpha's second order on A03 against the Bari test
set's q(0.03), the exact parallelogram motion of A02, flexmbs's DOP853 at rtol 1e-12 for the triple
pendulum (the same system: bodies, inertias, initial state, gravity), and flexmbs's coupled slider-crank
at the same step (a different rod model: ANCF against floating frame).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_work_precision as wp  # noqa: E402

needs_exudyn = pytest.mark.skipif(wp.whole.exudyn_version() is None, reason="Exudyn not installed (the 'bench' extra)")


def test_options_exudyn_on_by_default_and_off_with_no_exudyn():
    assert wp.parse_args([]).exudyn is True
    assert wp.parse_args(["--no-exudyn"]).exudyn is False
    with pytest.raises(SystemExit):
        wp.parse_args(["--cases", "A04"])


def test_exudyn_rows_follow_flexmbs_rows_only_where_asked_and_where_the_case_has_them():
    with_exudyn = [(label, method) for label, method, _ in wp.case_rows("A03", False, True)]
    assert [m for _, m in with_exudyn].count("exudyn") == 5
    assert with_exudyn[-1] == ("Exudyn generalized-alpha h = 1.25e-06", "exudyn")
    assert all(m != "exudyn" for _, m, _ in wp.case_rows("A03", False, False))
    assert all(m != "exudyn" for _, m, _ in wp.case_rows("spinup", False, True))     # a Model: no Exudyn rows
    coupled = [label for label, m, _ in wp.case_rows("coupled", True, True) if m == "exudyn"]
    assert coupled == ["Exudyn generalized-alpha h = dt_out/2"]


def test_a_failed_or_refused_run_is_a_row_that_says_so():
    def solver_error():
        raise RuntimeError("SolveDynamic terminated")

    def refused():
        raise ValueError("method 'rattle' needs a constant mass matrix; got ...")

    assert wp.timed_row("x", solver_error).startswith("| x | failed: RuntimeError SolveDynamic terminated |")
    assert wp.timed_row("y", refused).startswith("| y | refused: method 'rattle' needs a constant mass matrix |")
    assert wp.timed_row("z", lambda: ("finished", 1.5e-4, 30)).startswith("| z | finished | 1.50e-04 | 30 | ")


def test_without_exudyn_its_rows_are_skipped_with_a_note(monkeypatch, capsys):
    monkeypatch.setattr(wp.whole, "exudyn_version", lambda: None)
    monkeypatch.setattr(wp, "a03_runs", lambda quick: iter([("index3-alpha h = 2e-05", dict(
        formulation="index3", method="index3-alpha", h=2e-5))]))
    monkeypatch.setitem(wp.CASES, "A03", (wp.a03_runs, wp.CASES["A03"][1], wp.CASES["A03"][2]))
    wp.main(["--cases", "A03", "--quick"])
    out = capsys.readouterr().out
    assert "Exudyn not used" in out and "its rows are skipped" in out
    assert "| index3-alpha h = 2e-05 | finished |" in out and "Exudyn generalized-alpha" not in out


@needs_exudyn
def test_exudyn_a03_error_against_the_bari_reference_falls_as_h_squared():
    s1, e1, n1 = wp.exudyn_a03_error(2e-5)
    s2, e2, n2 = wp.exudyn_a03_error(1e-5)
    assert (s1, s2, n1, n2) == ("finished", "finished", 1500, 3000)
    assert 3.5 < e1 / e2 < 4.5                   # second order: 4 per halving
    assert 5e-5 < e2 < 2e-4                      # 1.06e-4 rad; flexmbs's index3-alpha 1.13e-4 at the same step


@needs_exudyn
def test_exudyn_a02_error_against_the_exact_motion_at_one_second():
    status, err, steps = wp.exudyn_a02_error(1e-3, t_end=1.0)
    assert (status, steps) == ("finished", 1000)
    assert 0.0 < err < 1e-4                      # the exact parallelogram motion (cases/double_four_bar.py)


@needs_exudyn
def test_exudyn_triple_pendulum_is_flexmbs_system():
    """Exudyn's Euler-parameter bodies against flexmbs's natural coordinates (DOP853, rtol 1e-12) over
    0.3 s: at h = 1e-4 the tip agrees to generalized-alpha's O(h^2) error, which falls 4 times per halving
    of h (a different body, inertia or start would leave a difference that does not fall)."""
    _, e1, _ = wp.exudyn_tp_error(2e-4, t_end=0.3)
    _, e2, _ = wp.exudyn_tp_error(1e-4, t_end=0.3)
    assert e2 < 1e-6 and 3.0 < e1 / e2 < 5.0


@needs_exudyn
@pytest.mark.filterwarnings("ignore:Object\\w+. the parameter:DeprecationWarning")   # bench_vs_exudyn's names
def test_exudyn_slider_crank_deflection_close_to_flexmbs_at_the_same_step():
    t, w = wp.exudyn_csc_deflection(wp.CSC_DT_OUT / 2)
    res, mine = wp.csc_deflection(dict(formulation="index3", method="index3-alpha", h=wp.CSC_DT_OUT / 2 * (1 + 1e-9),
                                       rho_inf=0.9))
    assert len(w) == len(mine) == 181 and abs(t[-1] - wp.CSC_T_END) < 1e-9
    assert np.abs(w - mine).max() / np.abs(mine).max() < 1e-2   # ANCF against floating frame (3.8e-4 converged)
