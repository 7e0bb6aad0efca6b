"""index3-alpha's Newton stop with a matrix kept from earlier steps (option ``kept_stop``).

- "rate" (default) stops a step whose kept matrix contracts the corrections steadily once the rest
  of their geometric series meets the tolerance, "correction" (the rule before it) only when the
  last correction itself does; on the coupled slider-crank "rate" takes a sixth fewer evaluations;
- both reach the same solution: on the slider-crank, on IFToMM A02 (the double four-bar, whose
  kept matrices misled a one-ratio estimate, docs/design.md) and on the triple pendulum (Euler
  parameters) the states stay within the Newton tolerance of a run with a fresh matrix every step
  and newton_tol 1e-12;
- the numpy path and the kernel take the same steps with either rule.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs.compiled import kernel_status
from flexmbs.integrators import ConstrainedProblem, simulate

CASES = Path(__file__).resolve().parents[1] / "cases"
sys.path.insert(0, str(CASES))

import double_four_bar  # noqa: E402
import slider_crank  # noqa: E402
import triple_pendulum  # noqa: E402

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason=f"the kernel is {kernel_status()}")

W = 150.0                      # the slider-crank's crank speed [rad/s]


def slider_crank_run():
    """The coupled slider-crank (8 elements) over a quarter revolution at the case's step (1440 a turn)."""
    return slider_crank.build_coupled(elements=8)[0], None, None, 0.5 * np.pi / W, 2.0 * np.pi / W / 1440, 0.9


def a02_run():
    """IFToMM A02, the double four-bar, over 1 s at its case's step 2e-4 s."""
    system, q0, v0, _ = double_four_bar.build()
    return system, q0, v0, 1.0, 2e-4, 0.8


def triple_run():
    """The triple pendulum in Euler parameters over 0.5 s at h = 1e-3 s."""
    return triple_pendulum.build("euler-parameters"), None, None, 0.5, 1e-3, 0.8


def run(case, kernel="compiled", **options):
    """`simulate` of ``case`` (system, q0, v0, t_end, h, rho_inf) by index3-alpha, 11 outputs."""
    system, q0, v0, t_end, h, rho = case
    problem = ConstrainedProblem(system)
    q0 = system.initial_coordinates() if q0 is None else q0
    v0 = system.initial_velocities() if v0 is None else v0
    return simulate(problem, (0.0, t_end), problem.state0(q0, v0), method="index3-alpha", h=h, rho_inf=rho,
                    t_eval=np.linspace(0.0, t_end, 11), kernel=kernel, **options)


@needs_kernel
@pytest.mark.parametrize("make", [slider_crank_run, a02_run, triple_run], ids=["slider-crank", "A02", "triple"])
def test_both_stops_reach_the_solution_of_a_fresh_matrix_every_step(make):
    """Each rule's states within the Newton tolerance of the reference (a matrix rebuilt every step,
    newton_tol 1e-12): q to 1e-10 of its scale, v to 1e-8 of its scale (the tolerance, 1e-8 of the
    accelerations, times h; measured 6e-12 and 1e-7 / 75 on the slider-crank); "rate" never takes more
    evaluations than "correction"."""
    case = make()
    n = case[0].n_q
    ref = run(case, refactor="step", newton_tol=1e-12)
    runs = {stop: run(case, kept_stop=stop) for stop in ("rate", "correction")}
    for stop, r in runs.items():
        assert r.status == "finished" and r.n_steps == ref.n_steps, stop
        assert np.abs(r.x[:, :n] - ref.x[:, :n]).max() <= 1e-10 * max(1.0, np.abs(ref.x[:, :n]).max()), stop
        assert np.abs(r.x[:, n:] - ref.x[:, n:]).max() <= 1e-8 * np.abs(ref.x[:, n:]).max(), stop
    assert runs["rate"].n_rhs <= runs["correction"].n_rhs


@needs_kernel
def test_rate_stop_saves_evaluations_on_the_slider_crank():
    """The coupled slider-crank's kept matrices contract by about 1e-3 an iteration (their M and C_q one
    step old: the crank turns by omega h = 4.4e-3 rad a step), and the predictor leaves corrections of
    ~1e8 times the tolerance: "correction" needs 4-5 evaluations in such a step, "rate" one fewer.
    Measured on the quarter revolution: 1346 evaluations and 145 LUs, against 1134 and 142."""
    case = slider_crank_run()
    rate, correction = run(case, kept_stop="rate"), run(case, kept_stop="correction")
    assert rate.n_rhs < 0.9 * correction.n_rhs
    assert rate.n_lu <= correction.n_lu and rate.n_jac == correction.n_jac == 1


@needs_kernel
@pytest.mark.parametrize("stop", ["rate", "correction"])
def test_numpy_and_kernel_take_the_same_steps_with_either_stop(stop):
    """A sixth of a quarter revolution of the slider-crank (60 steps) on both paths with the kernel's
    policy "contraction" (the numpy path's default is "step"): the same evaluations, LUs and tangents,
    and the states to the Newton tolerance."""
    system, q0, v0, t_end, h, rho = slider_crank_run()
    case = (system, q0, v0, 60 * h, h, rho)
    a, b = (run(case, kernel, kept_stop=stop, refactor="contraction") for kernel in ("numpy", "compiled"))
    assert (a.n_rhs, a.n_lu, a.n_jac, a.n_steps) == (b.n_rhs, b.n_lu, b.n_jac, b.n_steps)
    n = system.n_q
    assert np.abs(a.x[:, :n] - b.x[:, :n]).max() <= 1e-11
    assert np.abs(a.x[:, n:] - b.x[:, n:]).max() <= 1e-8 * np.abs(a.x[:, n:]).max()


@needs_kernel
@pytest.mark.parametrize("kernel", ["compiled", "numpy"])
def test_run_reports_newton_iterations(kernel):
    """`flexmbs.run` of a System reports the Newton iterations with the other counters (Results.stats,
    from `Solution.n_newton`): one solve per iteration, each after one evaluation of M, Q, C, C_q; the
    evaluations add the consistent start (1) and each finite-difference tangent's 2 n_q + 1."""
    import flexmbs as fm
    system, _, _, _, h, rho = slider_crank_run()
    res = fm.run(system, method="index3-alpha", h=h, dt_out=10 * h, t_end=60 * h, rho_inf=rho, kernel=kernel,
                 refactor="contraction", store=False)
    s = res.stats
    assert s["n_steps"] == 60 and 2 * s["n_steps"] <= s["n_newton"] <= 5 * s["n_steps"]
    assert s["n_newton"] <= s["n_rhs"] - 1 - (2 * system.n_q + 1) * s["n_jac"] <= s["n_newton"] + s["n_steps"]


@needs_kernel
def test_benchmark_prints_a_row_per_configuration(capsys):
    """benchmarks/bench_index3_newton.py (docs/benchmarks.md 20.8) on the triple pendulum, one round: a
    table row per configuration with its counts, the first row's differences 0, the second's within
    the Newton tolerance; an unknown row is refused by name."""
    sys.path.insert(0, str(CASES.parent / "benchmarks"))
    import bench_index3_newton
    assert bench_index3_newton.parse_config("kept_stop=rate,keep_rate=2e-3,newton_max_iter=8") == {
        "kept_stop": "rate", "keep_rate": 2e-3, "newton_max_iter": 8}
    assert bench_index3_newton.parse_config("rho_inf=-0.5,h=.001,name=1e") == {"rho_inf": -0.5, "h": 1e-3, "name": "1e"}
    bench_index3_newton.main(["--repeats", "1", "--rows", "triple", "--configs", "kept_stop=rate",
                              "kept_stop=correction"])
    rows = [line.split("|")[1:-1] for line in capsys.readouterr().out.splitlines() if line.startswith("| triple")]
    assert [r[1].strip() for r in rows] == ["kept_stop=rate", "kept_stop=correction"]
    evals = [float(r[2]) for r in rows]
    assert 2.0 <= evals[0] <= evals[1] <= 4.0
    assert float(rows[0][8]) == 0.0 and float(rows[1][8]) <= 1e-8
    with pytest.raises(SystemExit):
        bench_index3_newton.main(["--rows", "pendulum"])
    assert "--rows: unknown ['pendulum']" in capsys.readouterr().err
