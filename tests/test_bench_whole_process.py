"""benchmarks/bench_whole_process.py: the commands it times, its table for rows that ran, failed or did
not exist, and (with Exudyn installed) its Exudyn side as a process and as physics.

No timing is asserted.  The Exudyn checks compare its models with closed forms or published values:
the double four-bar (IFToMM A02) with the exact parallelogram motion, Andrews' squeezer (A03) with
the Bari test set's q(0.03) (docs/benchmarks.md sec. 16).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_whole_process as bench  # noqa: E402


def test_dry_run_lists_a_flexmbs_command_per_checkout_and_an_exudyn_job_per_row(capsys, tmp_path):
    old = tmp_path / "old"
    (old / "flexmbs").mkdir(parents=True)
    (old / "flexmbs" / "__init__.py").write_text("")
    assert bench.main(["--dry-run", "--checkout", f"before={old}"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 * len(bench.ROWS)
    for key, row in bench.ROWS.items():
        mine = next(x for x in lines if x.startswith(f"{key} [this]"))
        assert f"PYTHONPATH={ROOT} python -m flexmbs run {row.case} " in mine
        assert any(x.startswith(f"{key} [before]: cd {old} && PYTHONPATH={old} ") for x in lines)
        assert f"bench_whole_process.py exudyn {key} --out OUT --h {row.exudyn_h!r}" in \
            next(x for x in lines if x.startswith(f"{key} [exudyn]"))
    plots = next(x for x in lines if x.startswith("slider-crank-plots [this]"))
    assert "--no-plots" not in plots and "--set coupled=true" in plots


def test_run_process_measures_the_child_alone_and_reports_the_last_line_of_its_error(tmp_path):
    cpu, rss_kb, failed = bench.run_process(["-c", "x = bytearray(60_000_000); sum(range(2_000_000))"], tmp_path,
                                            dict(bench.os.environ))
    assert failed == "" and cpu > 0 and rss_kb > 50_000            # its own peak: the 60 MB it allocated
    _, _, failed = bench.run_process(["-c", "raise SystemExit('flexmbs run: error: parameter x: bad')"], tmp_path,
                                     dict(bench.os.environ))
    assert failed == "parameter x: bad"


def test_table_cells_for_rows_that_ran_failed_or_did_not_exist(capsys):
    best = {("a03", "this"): bench.Outcome(2.0, 80 * 1024), ("a03", "exudyn"): bench.Outcome(0.5, 40 * 1024),
            ("controlled", "this"): bench.Outcome(error="body 'rod': load 0 raised ControlError"),
            ("controlled", "exudyn"): bench.Outcome(0.4, 40 * 1024)}
    errors = {("a03", "this"): 1.1e-4, ("a03", "exudyn"): 1.0e-4, ("controlled", "exudyn"): 3e-4}
    bench.print_table(["a03", "controlled"], {"before": Path("b"), "this": Path("t")}, True, best, errors)
    rows = {x.split("|")[1].strip(): [c.strip() for c in x.strip("|").split("|")[1:]]
            for x in capsys.readouterr().out.splitlines() if x.startswith("| ") and "work" not in x}
    a03, controlled = rows[bench.ROWS["a03"].label], rows[bench.ROWS["controlled"].label]
    assert a03[:4] == ["did not exist", "2.00", "-", "80"] and a03[6] == "4.00" and a03[8] == "1.0e-04 (matched)"
    assert controlled[0] == "did not exist" and controlled[1].startswith("failed: body 'rod'") and controlled[6] == "-"


@pytest.mark.slow
def test_the_table_times_a_tiny_row_and_says_which_commands_failed_or_did_not_exist(monkeypatch, capsys, tmp_path):
    old = tmp_path / "old"                          # a checkout without cases/: its commands did not exist
    (old / "flexmbs").mkdir(parents=True)
    (old / "flexmbs" / "__init__.py").write_text("")
    tiny = bench.Row("tiny squeezer", "andrews_squeezer", ("t_end=2e-4", "dt_out=1e-4"), False, 1e-5)
    broken = bench.Row("bad parameter", "andrews_squeezer", ("t_end=-1",), False, 1e-5)
    monkeypatch.setattr(bench, "ROWS", {"tiny": tiny, "broken": broken})
    assert bench.main(["--rows", "tiny,broken", "--repeats", "1", "--no-exudyn", "--no-accuracy",
                       "--checkout", f"old={old}"]) == 0
    out = capsys.readouterr().out
    tiny_line = next(x for x in out.splitlines() if x.startswith("| tiny squeezer |"))
    cells = [c.strip() for c in tiny_line.strip("|").split("|")]
    assert cells[1] == "did not exist" and float(cells[2]) > 0 and float(cells[4]) > 0   # CPU [s], RSS [MB]
    broken_line = next(x for x in out.splitlines() if x.startswith("| bad parameter |"))
    assert "failed: parameter 't_end'" in broken_line
    assert "load average at the start" in out and "load average at the end" in out


def test_relative_error_interpolates_onto_the_reference_outputs():
    t_ref = np.linspace(0.0, 1.0, 11)
    t = np.linspace(0.0, 1.0, 21)
    assert bench.relative_error(t_ref, 2 * t_ref, t, 2 * t + 0.01) == pytest.approx(0.005)
    assert bench.relative_error(t_ref, np.c_[t_ref, -t_ref], t, np.c_[t, -t]) == 0.0


def test_a02_exact_starts_at_the_crank_tip_and_keeps_its_length():
    t = np.linspace(0.0, 0.5, 51)
    b0 = bench.a02_exact(t)
    assert np.allclose(b0[0], [0.0, 1.0])
    assert np.allclose(np.hypot(b0[:, 0], b0[:, 1]), 1.0, atol=1e-12)
    assert (b0[1, 0] - b0[0, 0]) / (t[1] - t[0]) == pytest.approx(1.0, rel=1e-3)     # x'(B0) = 1 m/s


def test_exudyn_four_bar_follows_the_exact_parallelogram_motion():
    pytest.importorskip("exudyn")
    r = bench.exudyn_four_bar(1e-3, t_end=1.0)
    assert bench.relative_error(r["t"], bench.a02_exact(r["t"]), r["t"], r["y"]) < 1e-4


def test_exudyn_job_as_a_process_writes_andrews_squeezer_close_to_the_bari_reference(tmp_path):
    pytest.importorskip("exudyn")
    import subprocess
    out = tmp_path / "ex"
    subprocess.run([sys.executable, str(bench.THIS), "exudyn", "a03", "--out", str(out)], check=True,
                   env=bench.exudyn_env())
    assert bench.accuracy("a03", out, None, "exudyn") < 2e-4        # 1.1e-4 at h = 1e-5 s; flexmbs's: 1.1e-4


def test_the_children_read_their_modules_bytecode_from_a_cache_even_where_writing_it_is_switched_off(tmp_path):
    """An installed package has its .pyc; a process under PYTHONDONTWRITEBYTECODE=1 would compile
    flexmbs's sources at every start, so the benchmark gives the children a bytecode cache."""
    (tmp_path / "some_module.py").write_text("X = 1\n")
    base = {**bench.os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(tmp_path)}
    for pycache in (None, tmp_path / "pycache"):
        _, _, failed = bench.run_process(["-c", "import some_module"], tmp_path, bench.bytecode_env(base, pycache))
        assert failed == ""
    assert [p.name for p in (tmp_path / "pycache").rglob("some_module*.pyc")] != []
    assert not (tmp_path / "__pycache__").exists()                 # the first run wrote nothing
    env = bench.flexmbs_env(ROOT, tmp_path / "pycache")
    assert env["PYTHONPYCACHEPREFIX"] == str(tmp_path / "pycache") and "PYTHONDONTWRITEBYTECODE" not in env
    assert bench.exudyn_env(None).get("PYTHONDONTWRITEBYTECODE") == bench.os.environ.get("PYTHONDONTWRITEBYTECODE")
