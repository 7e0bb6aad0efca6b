"""Issue 20, items 1-2: runs too long or too large say so before they start; the step used is
recorded; method "exact" streams (a killed run keeps its outputs).

Rows are (description, call, message it now prints).  The refusals happen before the first
step, so every row is fast whatever the run would have cost.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.formulations import Lagrange
from flexmbs.integrators import RunSizeWarning, simulate
from flexmbs.integrators import budget

CASES = Path(__file__).resolve().parents[1] / "cases"
sys.path.insert(0, str(CASES))
import andrews_squeezer  # noqa: E402
import bricard  # noqa: E402
import double_four_bar  # noqa: E402
import pendulum_a01  # noqa: E402


def bar(elements=4):
    """The rotating bar of Vlase et al. (2020, sec. 4a), as in tests/test_exact.py."""
    mesh = fm.generate.line(elements, 1.0)
    element = fm.Bar2(fm.Material(E=210e9, rho=50_000.0), area=0.2e-4)
    return fm.Model(mesh, element, motion=fm.motion.ConstantRotation(15.0), fixed=[("start", "all")],
                    loads=[fm.NodalLoad("end", "u", 1.0, fm.signals.Harmonic(200.0))])


def simulate_bar(**kw):
    form = Lagrange(bar())
    return simulate(form, (0.0, kw.pop("t_end", 0.1)), np.zeros(form.n_state), **kw)


class Stop(Exception):
    """Raised by on_output at the first output: the run had started."""


def stop(t, x):
    raise Stop


REFUSED = [
    ("run: h > t_end", lambda: fm.run(bar(), method="midpoint", h=0.5, t_end=0.1, store=False),
     "`h` = 0.5 s exceeds the simulated time t_end - t0 = 0.1 s: the run would be a single step cut to 0.1 s; "
     "give h <= t_end - t0 (e.g. h = 0.001 s)."),
    ("simulate: h > t_end, adaptive (first trial step)", lambda: simulate_bar(method="DOP853", h=1.0),
     "`h` = 1 s exceeds the simulated time t_end - t0 = 0.1 s"),
    ("pendulum_a01 (index3-alpha): h > t_end", lambda: pendulum_a01.run(integrator="index3-alpha", h=0.5, t_end=0.1),
     "`h` = 0.5 s exceeds the simulated time t_end - t0 = 0.1 s"),
    ("andrews_squeezer: h > t_end", lambda: andrews_squeezer.run(integrator="index3-alpha", h=0.05, t_end=0.03,
                                                                       dt_out=0.01),
     "`h` = 0.05 s exceeds the simulated time t_end - t0 = 0.03 s"),
    ("double_four_bar: h > t_end", lambda: double_four_bar.run(h=2.0, t_end=1.0, dt_out=0.1),
     "`h` = 2 s exceeds the simulated time t_end - t0 = 1 s"),
    ("bricard: h > t_end", lambda: bricard.run(h=2.0, t_end=1.0, dt_out=0.1),
     "`h` = 2 s exceeds the simulated time t_end - t0 = 1 s"),
]


@pytest.mark.parametrize("call, message", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_refused_before_the_run(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert message in str(err.value)


def small_memory():
    return 1_000_000                                    # 1 MB available


TOO_LARGE = [
    ("outputs beyond the available memory",
     lambda: simulate_bar(method="midpoint", h=5e-6, t_eval=np.linspace(0.0, 0.1, 20_001), on_output=stop),
     "The run would keep 20,001 outputs x 72 B = 1.44 MB in memory, more than 80% of the 1 MB available: "
     "raise `dt_out` (now 5e-06 s) or shorten `t_end` (now t_end - t0 = 0.1 s)."),
    ("every step an output beyond the available memory",
     lambda: simulate_bar(method="midpoint", h=1e-6, on_output=stop),
     "The run would keep 100,001 outputs x 72 B = 7.2 MB in memory, more than 80% of the 1 MB available: "
     "raise `h` (now 1e-06 s; every step is an output), give output times (`dt_out` or `t_eval`) or shorten "
     "`t_end` (now t_end - t0 = 0.1 s)."),
    ("flexmbs.run's fields beyond the available memory",
     lambda: fm.run(bar(), method="exact", t_end=1.0, dt_out=1e-4, store=False),
     "The run would keep 10,001 outputs x 608 B = 6.08 MB in memory, more than 80% of the 1 MB available: "
     "raise `dt_out` (now 0.0001 s)"),
]


@pytest.mark.parametrize("call, message", [r[1:] for r in TOO_LARGE], ids=[r[0] for r in TOO_LARGE])
def test_refused_when_the_outputs_cannot_fit_in_memory(monkeypatch, call, message):
    monkeypatch.setattr(budget, "available_memory", small_memory)
    with pytest.raises(ValueError) as err:
        call()
    assert message in str(err.value)


def test_refused_when_the_results_file_cannot_fit_on_disk(monkeypatch, tmp_path):
    monkeypatch.setattr(budget, "_free_disk", lambda path: 100_000)
    path = tmp_path / "r.h5"
    with pytest.raises(ValueError) as err:
        fm.run(bar(), method="exact", t_end=0.1, dt_out=1e-4, store=path)
    assert (f"The run would write 1,001 outputs x 536 B = 537 kB to {path}, more than the 100 kB free there: "
            "raise `dt_out` (now 0.0001 s) or shorten `t_end` (now t_end - t0 = 0.1 s).") in str(err.value)


WARNED = [
    ("1e8 steps (h = 1e-9 on 0.1 s)",
     lambda: simulate_bar(method="midpoint", h=1e-9, t_eval=np.linspace(0.0, 0.1, 11), on_output=stop),
     "`h` = 1e-09 s over t_end - t0 = 0.1 s is 1e+08 steps (more than 1e+07): this run may take hours; "
     "raise `h` or shorten `t_end` if that is not meant."),
    ("h = 1e-9 on pendulum_a01 (index3-alpha)",
     lambda: simulate(*pendulum(), method="index3-alpha", h=1e-9, t_eval=np.linspace(0.0, 0.1, 11), on_output=stop),
     "`h` = 1e-09 s over t_end - t0 = 0.1 s is 1e+08 steps"),
]


def pendulum():
    """The ConstrainedProblem of pendulum_a01, the span (0, 0.1) and its initial state (as the case)."""
    from flexmbs.integrators import ConstrainedProblem
    system, _ = pendulum_a01.build()
    problem = ConstrainedProblem(system)
    return problem, (0.0, 0.1), problem.state0(system.initial_coordinates(), np.zeros(system.n_q))


@pytest.mark.parametrize("call, message", [r[1:] for r in WARNED], ids=[r[0] for r in WARNED])
def test_warned_before_the_run(call, message):
    with pytest.warns(RunSizeWarning) as record, pytest.raises(Stop):
        call()                                       # the warning comes before the first output
    assert message in str(record[0].message)


def test_warned_beyond_a_gigabyte(monkeypatch):
    monkeypatch.setattr(budget, "WARN_BYTES", 1e5)
    with pytest.warns(RunSizeWarning) as record:
        fm.run(bar(), method="exact", t_end=0.1, dt_out=1e-4, store=False, compute_energies=False)
    assert ("The run will keep 1,001 outputs = 609 kB in memory (more than 100 kB); to make it smaller, "
            "raise `dt_out` (now 0.0001 s) or shorten `t_end` (now t_end - t0 = 0.1 s).") in str(record[0].message)


def test_a_step_above_the_output_interval_warns_and_the_step_used_is_recorded(tmp_path):
    path = tmp_path / "r.h5"
    with pytest.warns(UserWarning, match=r"`h` = 0.0002 s is larger than the output interval dt_out = 0.0001 s: "
                                         r"the step used is 0.0001 s"):
        res = fm.run(bar(), method="midpoint", h=2e-4, t_end=2e-3, dt_out=1e-4, store=path)
    assert res.metadata["h"] == pytest.approx(1e-4) and res.metadata["h_requested"] == 2e-4
    back = fm.load_results(path)
    assert back.metadata["h"] == pytest.approx(1e-4) and back.metadata["h_requested"] == 2e-4
    assert res.stats["n_steps"] == 20


def test_a_step_equal_to_the_output_interval_up_to_round_off_does_not_warn():
    """benchmarks/coupled_slider_crank.py asks for h = dt_out (1 + 1e-9) at k = 1, off the edge of
    the ceil in `aligned_step`: that is the output interval, not a larger step."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        res = fm.run(bar(), method="midpoint", h=1e-4 * (1 + 1e-9), t_end=2e-3, dt_out=1e-4, store=False)
    assert res.stats["n_steps"] == 20


def test_iftomm_case_records_the_step_it_took():
    with pytest.warns(UserWarning, match="larger than the output interval"):
        result = pendulum_a01.run(integrator="index3-alpha", h=0.02, t_end=0.1, dt_out=0.01)
    s = result["summary"]
    assert s["h_used"] == pytest.approx(0.01) and s["parameters"]["h"] == 0.02 and s["n_steps"] == 10


@pytest.mark.slow
def test_a_killed_exact_run_keeps_its_outputs(tmp_path):
    """kill -9 of a long method-"exact" run (60 elements, t_end = 50 s: 500 001 outputs) once
    outputs beyond t0 are on disk: they load, marked incomplete, and hold outputs after t0
    (before streaming, method "exact" wrote nothing before it had computed every output; with the
    first blocks small and the works' forms declared, the first block is written within seconds)."""
    path = tmp_path / "r.h5"
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(CASES)!r})
        import rotating_bar, flexmbs as fm
        fm.run(rotating_bar.build(elements=60), method="exact", t_end=50.0, dt_out=1e-4, store={str(path)!r})
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            time.sleep(0.5)
            try:
                if len(fm.load_results(path).t) > 1:                          # beyond t0: a block
                    break
            except (OSError, ValueError):                                   # not created yet
                continue
    finally:
        proc.kill()
        proc.wait()
    back = fm.load_results(path)
    assert back.status == "incomplete" and "killed" in back.message
    assert 1 < len(back.t) < 500_001 and back.t[0] == 0.0 and back.t[-1] > 0.0
    assert np.allclose(np.diff(back.t), 1e-4)
    assert np.all(np.isfinite(back.displacement)) and np.abs(back.displacement[-1]).max() > 0.0


def test_a_streamed_run_keeps_the_same_outputs_as_an_unstreamed_one(tmp_path):
    """The streamed run's Results (fields filled block by block into one array each, delta and
    delta' from the solution's states) equal the unstreamed run's and the file's."""
    streamed = fm.run(bar(), method="exact", t_end=0.01, dt_out=1e-4, store=tmp_path / "r.h5")
    plain = fm.run(bar(), method="exact", t_end=0.01, dt_out=1e-4, store=False)
    back = fm.load_results(tmp_path / "r.h5")
    for key in ("t", "delta", "delta_dot", "displacement", "velocity"):
        assert np.array_equal(getattr(streamed, key), getattr(plain, key)), key
        assert np.array_equal(getattr(back, key), getattr(plain, key)), key
    assert np.array_equal(streamed.element_data["axial_force"], plain.element_data["axial_force"])
    for key in ("T", "V", "W_loads", "W_frame"):
        assert np.allclose(streamed.energies[key], plain.energies[key], rtol=1e-12, atol=0.0), key


def test_kept_fields_grow_past_the_announced_number_of_outputs():
    from flexmbs.analysis import _Kept
    kept = _Kept(3)
    kept.append({"a": np.arange(2.0), "energies": {"T": np.ones(2)}})
    kept.append({"a": np.arange(2.0, 5.0), "energies": {"T": np.full(3, 2.0)}})
    assert kept.n == 5 and np.array_equal(kept.take("a"), np.arange(5.0))
    assert np.array_equal(kept.take("energies/T"), [1.0, 1.0, 2.0, 2.0, 2.0])
    assert kept.take("missing", (2,)).shape == (0, 2)
