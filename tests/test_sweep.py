"""Parameter sweeps: local processes, a Dask LocalCluster, failures, resume, identity."""
import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs.sweep import case_id, parameter_grid, sweep

CASES = Path(__file__).resolve().parents[1] / "cases"
BAR = CASES / "rotating_bar.py"
SMALL = dict(t_end=0.002, dt_out=2e-4, rtol=1e-6)
sys.path.insert(0, str(CASES))

import rotating_bar  # noqa: E402


def _summary(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_parameter_grid_products_lists_and_types():
    sets = parameter_grid(rotating_bar.DEFAULTS, grid={"elements": ["3", "4"], "omega": [10, 20.0]},
                          listed=[{"elements": 7}], fixed={"t_end": "0.01"})
    assert len(sets) == 5
    assert sets[0] == {"t_end": 0.01, "elements": 3, "omega": 10.0}
    assert all(isinstance(s["elements"], int) and isinstance(s["t_end"], float) for s in sets)
    with pytest.raises(ValueError, match="did you mean 'elements'"):
        parameter_grid(rotating_bar.DEFAULTS, grid={"elemnts": [3]})
    with pytest.raises(ValueError, match="parameter 'elements' .* must be an integer"):
        parameter_grid(rotating_bar.DEFAULTS, fixed={"elements": "ten"})
    assert parameter_grid(rotating_bar.DEFAULTS, fixed={"period": "pi/50"})[0]["period"] == pytest.approx(np.pi / 50)
    assert case_id({"a": 1, "b": 2.5}) == case_id({"b": 2.5, "a": 1})
    assert case_id({"a": 1}) != case_id({"a": 2})


def test_local_sweep_with_a_failing_case_then_resume(tmp_path):
    grid = {"elements": [3, 4, 0]}                       # 0 elements is refused by the case: that case fails
    rows = sweep(BAR, grid=grid, fixed=SMALL, out=tmp_path, workers=2)
    status = {r["parameters"]["elements"]: r["status"] for r in rows}
    assert status == {3: "finished", 4: "finished", 0: "error"}
    failed = next(r for r in rows if r["status"] == "error")
    assert "parameter 'elements': must be >= 1" in failed["message"]     # the user's name, not n_el
    table = _summary(tmp_path / "summary.csv")
    assert [r["status"] for r in table] == ["finished", "finished", "error"]
    assert float(table[0]["peak_displacement"]) > 0
    for r in rows[:2]:
        assert (tmp_path / "cases" / r["id"] / "results.npz").is_file()
    markers = {r["id"]: (tmp_path / "cases" / r["id"] / "done.json").stat().st_mtime_ns for r in rows}
    kept = sweep(BAR, grid=grid, fixed=SMALL, out=tmp_path, workers=2, retry_failed=False)  # nothing runs
    assert [r["status"] for r in kept] == [r["status"] for r in rows]
    assert {r["id"]: (tmp_path / "cases" / r["id"] / "done.json").stat().st_mtime_ns for r in kept} == markers
    again = sweep(BAR, grid=grid, fixed=SMALL, out=tmp_path, workers=2)    # the failed case runs again
    assert [r["status"] for r in again] == [r["status"] for r in rows]
    after = {r["id"]: (tmp_path / "cases" / r["id"] / "done.json").stat().st_mtime_ns for r in again}
    assert [after[r["id"]] == markers[r["id"]] for r in rows] == [True, True, False]


@pytest.mark.slow
def test_sweep_results_equal_running_the_cases_one_by_one(tmp_path):
    rows = sweep(BAR, grid={"omega": [10.0, 20.0]}, fixed=SMALL, out=tmp_path / "sweep", workers=2)
    for r in rows:
        direct = rotating_bar.run(out=tmp_path / "direct" / r["id"], **r["parameters"])
        swept = np.load(tmp_path / "sweep" / "cases" / r["id"] / "results.npz")
        alone = np.load(tmp_path / "direct" / r["id"] / "results.npz")
        for key in ("t", "displacement", "nodes"):     # equal up to the BLAS threads' summation order
            np.testing.assert_allclose(swept[key], alone[key], rtol=0, atol=1e-12 * np.abs(alone[key]).max())
        assert direct["undamped"].success


@pytest.mark.slow
def test_sweep_on_a_dask_local_cluster(tmp_path):
    distributed = pytest.importorskip("distributed", reason="dask[distributed] is not installed "
                                      "(pip install 'flexmbs[dask]'); CI installs it")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        rows = sweep(BAR, grid={"elements": [3, 4]}, fixed=SMALL, out=tmp_path / "dask",
                     scheduler=cluster.scheduler_address)
    local = sweep(BAR, grid={"elements": [3, 4]}, fixed=SMALL, out=tmp_path / "local", workers=2)
    assert [r["status"] for r in rows] == ["finished", "finished"]
    for a, b in zip(rows, local):
        assert a["id"] == b["id"]
        np.testing.assert_array_equal(np.load(tmp_path / "dask" / "cases" / a["id"] / "results.npz")["displacement"],
                                      np.load(tmp_path / "local" / "cases" / b["id"] / "results.npz")["displacement"])
        record = json.loads((tmp_path / "dask" / "cases" / a["id"] / "done.json").read_text())
        assert record["status"] == "finished"


def test_unknown_case_lists_the_available_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(CASES.parent)
    with pytest.raises(ValueError, match="rotating_bar"):
        sweep("no_such_case", out=tmp_path)


def test_flexmbs_sweep_command_with_grid_and_list(tmp_path, capsys):
    from flexmbs.cli import main
    listing = tmp_path / "sets.csv"
    listing.write_text("omega,elements\n12,3\n18,3\n")
    code = main(["sweep", "rotating_bar", "--cases", str(CASES), "--grid", "elements=3,4", "--list", str(listing),
                 "--set", "t_end=0.002", "--set", "dt_out=2e-4", "--workers", "2", "--out", str(tmp_path / "s")])
    assert code == 0
    table = _summary(tmp_path / "s" / "summary.csv")
    assert [(r["elements"], r["omega"]) for r in table] == [("3", ""), ("4", ""), ("3", "12.0"), ("3", "18.0")]
    assert "4 cases (4 finished)" in capsys.readouterr().out
    code = main(["sweep", "rotating_bar", "--cases", str(CASES), "--grid", "omegaa=1,2", "--out", str(tmp_path)])
    assert code == 2
    assert "did you mean 'omega'" in capsys.readouterr().err


KILLER = '''"""Test case: each run appends its k to a log; k = 2 kills its own worker process."""
import os
import time

DEFAULTS = {"k": 0, "log": ""}


def run(out=None, k=0, log=""):
    with open(log, "a") as f:
        f.write(f"{k}\\n")
    if k == 2:
        time.sleep(0.2)
        os._exit(3)                  # the worker dies without a word, as when it is killed
    time.sleep(0.4)
    return None
'''


def _attempts(path):
    return [int(line) for line in path.read_text().split()]


def test_a_dying_worker_loses_only_its_own_case_then_resume(tmp_path, caplog):
    case = tmp_path / "killer.py"
    case.write_text(KILLER)
    log_file = tmp_path / "attempts.txt"
    out = tmp_path / "sweep"
    rows = sweep(case, grid={"k": [0, 1, 2, 3, 4]}, fixed={"log": str(log_file)}, out=out, workers=2, retries=1)
    status = {r["parameters"]["k"]: r["status"] for r in rows}
    assert status == {0: "finished", 1: "finished", 2: "lost", 3: "finished", 4: "finished"}
    attempts = _attempts(log_file)
    assert attempts.count(2) == 2                       # 1 + retries, then recorded as lost
    assert set(attempts) == {0, 1, 2, 3, 4}
    lost = next(r for r in rows if r["status"] == "lost")
    assert "died on each of its 2 attempt(s)" in lost["message"]
    assert [r["status"] for r in _summary(out / "summary.csv")] == [status[k] for k in range(5)]

    # resume: the lost case runs again (and is lost again), the finished ones are skipped
    log_file.write_text("")
    with caplog.at_level("WARNING", logger="flexmbs.sweep"):
        again = sweep(case, grid={"k": [0, 1, 2, 3, 4]}, fixed={"log": str(log_file)}, out=out, workers=2,
                      retries=0)
    assert _attempts(log_file) == [2]
    assert [r["status"] for r in again] == [status[k] for k in range(5)]
    assert "4 case(s) finished before (skipped), 1 failed before (run again)" in caplog.text

    # resume without retrying the failed ones: nothing runs
    log_file.write_text("")
    kept = sweep(case, grid={"k": [0, 1, 2, 3, 4]}, fixed={"log": str(log_file)}, out=out, workers=2,
                 retry_failed=False)
    assert _attempts(log_file) == []
    assert kept[2]["status"] == "lost"


def test_sweep_refuses_bad_retries_and_workers(tmp_path):
    with pytest.raises(ValueError, match="`retries` must be a non-negative integer, got -1"):
        sweep(BAR, out=tmp_path, retries=-1)
    with pytest.raises(ValueError, match="`workers` must be a positive integer, got 0"):
        sweep(BAR, out=tmp_path, workers=0)


def test_flexmbs_sweep_command_retries_failed_cases_unless_told(tmp_path, capsys):
    from flexmbs.cli import main
    args = ["sweep", "rotating_bar", "--cases", str(CASES), "--grid", "elements=0", "--set", "t_end=0.002",
            "--workers", "1", "--retries", "0", "--out", str(tmp_path)]
    assert main(args) == 1                                   # 0 elements: the case fails
    marker = next((tmp_path / "cases").glob("*/done.json"))
    first = marker.stat().st_mtime_ns
    assert main(args + ["--no-retry-failed"]) == 1           # kept, not run again
    assert marker.stat().st_mtime_ns == first
    out, err = capsys.readouterr()
    assert "0 case(s) finished before (skipped), 1 failed before (kept)" in err   # the command's log
    assert "1 cases (1 error)" in out
