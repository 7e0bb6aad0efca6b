"""Progress off a terminal, honest plots (labels with units, one line per integrator), GIF frames,
and the quick bench."""
import io as _io
import logging
import time
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

import flexmbs as fm
from flexmbs import plots, progress

CASES = Path(__file__).resolve().parents[1] / "cases"


def test_timing_chart_never_joins_runs_of_different_integrators():
    rows = [dict(formulation="lagrange", elements=n, solve_s=s, method="DOP853", evaluation="compiled", part="paper")
            for n, s in ((5, 0.1), (25, 0.5))]
    rows += [dict(formulation="lagrange", elements=n, solve_s=s, method="midpoint", evaluation="terms", part="large")
             for n, s in ((100, 0.2), (1000, 2.0))]
    rows += [dict(formulation="hamilton", elements=5, solve_s=0.12, method="DOP853", evaluation="compiled",
                  part="paper")]
    ax = plots.timing_chart(rows).axes[0]
    lines = {ln.get_label(): list(ln.get_xdata()) for ln in ax.lines}
    assert lines == {"lagrange (DOP853, compiled, paper)": [5, 25], "lagrange (midpoint, terms, large)": [100, 1000],
                     "hamilton (DOP853, compiled, paper)": [5]}
    assert ax.get_ylabel() == "solve time [s]" and ax.get_title()
    same = plots.timing_chart([dict(formulation="lagrange", elements=5, solve_s=0.1)]).axes[0]
    assert [ln.get_label() for ln in same.lines] == ["lagrange"]           # nothing varies: the plain name


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_progress_lines_off_a_terminal(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(progress.time, "perf_counter", clock)
    out = _io.StringIO()
    display = progress.Display(console=Console(file=out, force_terminal=False), min_seconds=1.0, line_seconds=10.0)
    assert not display.enabled and display.lines
    with display.task("bar", 0.0, 2.0) as report:
        for k in range(1, 41):                              # a step every 0.5 s of wall time
            clock.now = 0.5 * k
            report(0.05 * k)
    text = out.getvalue().splitlines()
    assert len(text) == 2                                   # at 10 s and 20 s (the run ends at 20 s)
    assert text[0].startswith("bar: t = 1 / 2 s (50 %)") and "10 s elapsed" in text[0] and "10 s left" in text[0]
    out.seek(0)
    out.truncate(0)
    with display.counter("sweep", 4) as count:
        for k in range(1, 5):
            clock.now += 6.0
            count(k)
    assert [ln.split(":")[0] for ln in out.getvalue().splitlines() if ln] == ["sweep", "sweep"]
    quiet = progress.Display(enabled=False, console=Console(file=_io.StringIO()))
    assert not quiet.lines
    with quiet.task("x", 0.0, 1.0) as report:
        assert report is None


def test_animation_frames_and_progress(tmp_path):
    model = fm.Model(fm.generate.line(4, 1.0), fm.BeamEB2D(fm.Material(E=70e9, rho=2700.0), area=1e-4, I=1e-9),
                     motion=fm.motion.SpinUp(Omega_s=6.0, T_s=0.05), fixed=[("start", "all")])
    res = fm.run(model, t_end=0.02, dt_out=1e-3)
    out = _io.StringIO()
    with progress.display(console=Console(file=out, force_terminal=False), min_seconds=0.0, line_seconds=0.0):
        gif = plots.animate(res, tmp_path / "a.gif", max_frames=5)
    from PIL import Image
    with Image.open(gif) as im:
        assert im.n_frames == 5
    assert "GIF a.gif: 5 / 5 frames" in out.getvalue()
    with pytest.raises(ValueError, match="`max_frames` must be a positive integer, got 0"):
        plots.animate(res, tmp_path / "b.gif", max_frames=0)


@pytest.mark.slow
def test_quick_bench_is_quick(tmp_path, capsys):
    from flexmbs.cli import _import
    timing = _import(CASES / "timing.py")      # not a `timing` another test left in sys.modules (test_cli's fake)
    tic = time.perf_counter()
    assert timing.main(["--quick", "--out", str(tmp_path)]) == 0
    assert time.perf_counter() - tic < 60.0
    assert "quick mode" in capsys.readouterr().out and (tmp_path / "timing.png").is_file()
