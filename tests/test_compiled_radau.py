"""Method radau-dae on the compiled kernel (``kernel="compiled"``): its steps between outputs in one call
of csrc/index3_kernel.c ``radau_steps`` (the step control, J by differences, the real and complex LUs,
the Newton iteration of the stages, the error estimate), the evaluations of the start and of the dense
output through `flexmbs.compiled.CompiledSystem.terms`: the same steps as the numpy path on the triple pendulum (Euler
parameters), Andrews' squeezer (IFToMM A03) and A02 through its singular configuration, the same
failure.  Skipped when the kernel is not installed.

Same steps means equal to what the round-off of two implementations allows, not to the last digit.
The error estimate of a step, err = (gamma/h M - J)^-1 [F(y_n) + M sum_i d_i Z_i / h], is a difference
of O(1) terms whose result is O(h^4): where err is small its round-off is 1e-8 to 1e-6 of its value,
and the C and numpy arithmetic (their summation orders, LAPACK's blocked LU against the kernel's, J's
difference quotients, which divide that round-off by sqrt(eps)) do not round alike (measured on A03 at
rtol 1e-6: err of the fourth step 1.0770386e-05 and 1.0770632e-05 with the same J; the proposed h then
differs by up to 3e-4 relative at a step, the step points by 2.5e-7 relative).  So the tests ask for
the same number of steps, rejections and Jacobians, LUs within the few that the kept-LU rule (h_new / h
in [1, 1.2): keep h) decides differently at its threshold, and the outputs within a small fraction of
the tolerance."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.compiled import CompiledSystem, kernel_status

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))
sys.path.insert(0, str(ROOT / "tests"))

import andrews_squeezer  # noqa: E402
import double_four_bar  # noqa: E402
import triple_pendulum  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from test_compiled_natural import user_loaded  # noqa: E402

pytestmark = pytest.mark.skipif(not kernel_status().installed, reason=f"compiled kernel {kernel_status()}")


def run(system, kernel: str, t_end: float, **options):
    res = fm.run(system, method="radau-dae", kernel=kernel, t_end=t_end, v0=np.zeros(system.n_q), store=False,
                 **options)
    assert res.status == "finished", res.message
    return res


CASES = {"triple pendulum": (lambda: triple_pendulum.build("euler-parameters"), 0.2, 0.01),
         "Andrews' squeezer": (lambda: andrews_squeezer.build()[0], 3e-4, 1e-5)}


@pytest.mark.parametrize("case", CASES)
def test_the_terms_are_those_of_the_system(case):
    """CompiledSystem.terms gives the System's M, Q, C and C_q at a perturbed state (to round-off: measured
    3.6e-15 in M of the triple pendulum, whose kernel sums the Euler-parameter terms in another order)."""
    system = CASES[case][0]()
    rng = np.random.default_rng(1)
    q = system.initial_coordinates() + 1e-2 * rng.standard_normal(system.n_q)
    v = rng.standard_normal(system.n_q)
    M, Q, C, G = CompiledSystem(system).terms(0.01, q, v)
    np.testing.assert_allclose(M, system.mass_matrix(q), rtol=1e-12, atol=1e-12 * np.abs(M).max())
    np.testing.assert_allclose(Q, system.forces(0.01, q, v), rtol=1e-12, atol=1e-12 * np.abs(Q).max())
    np.testing.assert_allclose(C, system.residual(0.01, q), atol=1e-13)
    np.testing.assert_allclose(G, system.jacobian(0.01, q), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("case", CASES)
def test_fixed_steps_are_the_same_on_both_paths(case):
    """At fixed steps (max_step = h, a loose tolerance: no step rejected or shortened) the two paths take
    the same steps and reach the same state: |dq| <= 1e-9 of max |q| (measured 1e-13)."""
    build, t_end, h = CASES[case]
    system = build()
    options = dict(h=h, max_step=h, rtol=0.1, atol=0.1, newton_tol=1e-9, newton_max_iter=30, t_eval=[0.0, t_end])
    numpy, compiled = run(system, "numpy", t_end, **options), run(system, "compiled", t_end, **options)
    assert numpy.metadata["kernel"] == "numpy" and compiled.metadata["kernel"] == "compiled"
    assert numpy.stats["n_steps"] == compiled.stats["n_steps"] == round(t_end / h)
    dq = np.abs(numpy.q[-1] - compiled.q[-1]).max()
    print(f"{case}: fixed steps, |q_numpy - q_compiled| = {dq:.1e}")
    assert dq <= 1e-9 * np.abs(numpy.q[-1]).max()


ADAPTIVE = {"triple pendulum": (lambda: triple_pendulum.build("euler-parameters"), 1.0, 1e-5),
            "Andrews' squeezer": (lambda: andrews_squeezer.build()[0], 0.03, 1e-6)}


@pytest.mark.slow
@pytest.mark.parametrize("case", ADAPTIVE)
def test_adaptive_steps_agree_on_both_paths(case):
    """With step control the paths take the same number of steps and end at the same state.  Not bit for
    bit: the kernel's M differs from numpy's by round-off (3.6e-15) and the error estimate of the first
    steps is near round-off, so step times may part at about 1e-8 s (seen once in a script: 1.3e-7 s on
    the triple pendulum, 5.2e-9 s on A03, same step counts); bounds: 2 % of the steps, rtol |q| at t_end
    (measured 98 and 308 steps on both paths, |dq| 5.7e-14 and 7.2e-13)."""
    build, t_end, rtol = ADAPTIVE[case]
    system = build()
    options = dict(rtol=rtol, atol=rtol * 1e-3, t_eval=[0.0, t_end])
    numpy, compiled = run(system, "numpy", t_end, **options), run(system, "compiled", t_end, **options)
    n1, n2 = numpy.stats["n_steps"], compiled.stats["n_steps"]
    dq = np.abs(numpy.q[-1] - compiled.q[-1]).max()
    print(f"{case}: {n1} and {n2} steps, |q_numpy - q_compiled| at t_end = {dq:.1e}, CPU of the solve "
          f"{numpy.stats['solve_s']:.2f} s numpy, {compiled.stats['solve_s']:.2f} s compiled")
    assert abs(n1 - n2) <= 0.02 * n1
    assert dq <= rtol * np.abs(numpy.q[-1]).max()


def test_kernel_compiled_is_refused_where_the_kernel_does_not_evaluate_the_system():
    """kernel='compiled' on what the kernel does not take (a user's load callable) names it; 'auto' then
    runs on the numpy path and says why in the metadata."""
    system = user_loaded()
    with pytest.raises(ValueError, match="^" + re.escape(
            "`kernel` 'compiled' cannot run this system: body 'bar1': its load 0 is a user callable, which the compiled kernel cannot evaluate (flexmbs.bodies.loads' torque_load, point_load and spring_to_ground it can; a law of the state sampled by a flexmbs.control.Controller it can too).") + "$"):
        run(system, "compiled", 0.01)
    res = run(system, "auto", 0.01)
    assert res.metadata["kernel"] == "numpy" and "user callable" in res.metadata["kernel_reason"]


def test_a_driven_system_takes_the_same_steps_on_both_paths():
    """The coupled spin-up beam (cases/spinup_beam.py ``build_coupled``: a hub driven by an AngleDriver,
    C_t != 0, which the compiled path takes from the System; 10 floating-frame beam elements) over
    0.5 s at rtol 1e-4: the same steps on both paths and final coordinates within 1e-10 of max |q|
    (measured 8 steps, 5.6e-14 over 3 s in docs/benchmarks.md sec. 19.3)."""
    import spinup_beam
    system = spinup_beam.build_coupled(10)[0]
    options = dict(rtol=1e-4, atol=1e-7, t_end=0.5, t_eval=[0.0, 0.5], store=False)
    numpy = fm.run(system, method="radau-dae", kernel="numpy", **options)
    compiled = fm.run(system, method="radau-dae", kernel="compiled", **options)
    assert numpy.status == compiled.status == "finished"
    assert compiled.metadata["kernel"] == "compiled"
    assert numpy.stats["n_steps"] == compiled.stats["n_steps"]
    dq = np.abs(numpy.q[-1] - compiled.q[-1]).max()
    print(f"coupled spin-up beam: {numpy.stats['n_steps']} steps, |q_numpy - q_compiled| = {dq:.1e}")
    assert dq <= 1e-10 * np.abs(numpy.q[-1]).max()


def test_the_time_row_is_tabulated_once_per_time():
    """`CompiledSystem.terms` keeps the kernel's time rows of the last times (A03's driving torque is a
    function of t: radau-dae evaluates at 3 stage times per Newton iteration and at one time for a whole
    Jacobian); the forces stay those of the System at each t."""
    system, _ = andrews_squeezer.build()
    compiled = CompiledSystem(system)
    calls = []
    laws = compiled.laws
    compiled.laws = lambda times: calls.append(list(times)) or laws(times)
    q, v = system.initial_coordinates(), np.zeros(system.n_q)
    for t in (0.001, 0.002, 0.001, 0.002, 0.001):
        Q = compiled.terms(t, q, v)[1]
        np.testing.assert_allclose(Q, system.forces(t, q, v), rtol=1e-12, atol=1e-12 * np.abs(Q).max())
    assert calls == [[0.001], [0.002]]


COUNTS = ("n_steps", "n_rejected", "n_jac")


def both(system, **options):
    """The runs of radau-dae with kernel 'numpy' and 'compiled' and the same options."""
    return [fm.run(system, method="radau-dae", kernel=k, store=False, **options) for k in ("numpy", "compiled")]


def assert_same_steps(numpy_run, compiled_run, q_tol: float, count_rtol: float = 0.0):
    """Same counts of steps, rejections and Jacobians, LU pairs within 2 + 3 % (the kept-LU rule's threshold
    decided differently: module docstring; measured 72 and 68 LUs on A03 at rtol 1e-5, 426 and 430 at
    1e-6), the same output times and their q within q_tol; ``count_rtol``: the counts within that
    fraction (near a singular configuration, where C_q's conditioning amplifies the round-off)."""
    assert numpy_run.status == compiled_run.status == "finished", (numpy_run.message, compiled_run.message)
    a, b = numpy_run.stats, compiled_run.stats
    print({k: (a[k], b[k]) for k in COUNTS + ("n_lu",)}, "max |dq|", np.abs(numpy_run.q - compiled_run.q).max())
    for k in COUNTS:
        assert abs(a[k] - b[k]) <= count_rtol * a[k], k
    assert abs(a["n_lu"] - b["n_lu"]) <= 2 * (2 + (0.03 + count_rtol) * a["n_lu"] / 2)
    np.testing.assert_allclose(compiled_run.t, numpy_run.t, rtol=0, atol=1e-14)
    assert np.abs(numpy_run.q - compiled_run.q).max() < q_tol


def test_python_is_asked_for_the_laws_once_per_trial_step_only_for_a_users_law_of_t(monkeypatch):
    """The kernel's steps evaluate the laws' time rows themselves where each law is affine (A03's constant
    driving torque: no Python call in the steps), and ask Python once per trial step (t_n and the three
    stage times in one call) for a user's law of t (the spin-up beam's driver)."""
    import spinup_beam
    calls = []
    law_rows = CompiledSystem.law_rows
    monkeypatch.setattr(CompiledSystem, "law_rows", lambda self, times: calls.append(len(times)) or law_rows(self, times))
    system, _ = andrews_squeezer.build()
    res = fm.run(system, method="radau-dae", rtol=1e-5, atol=1e-8, t_end=0.003, t_eval=[0.0, 0.003],
                 v0=np.zeros(system.n_q), store=False)
    assert res.status == "finished" and res.metadata["kernel"] == "compiled" and calls == []
    res = fm.run(spinup_beam.build_coupled(4)[0], method="radau-dae", rtol=1e-4, atol=1e-7, t_end=0.2,
                 t_eval=[0.0, 0.2], store=False)
    assert res.status == "finished" and res.metadata["kernel"] == "compiled"
    assert calls == [4] * (res.stats["n_steps"] + res.stats["n_rejected"])


def test_andrews_squeezer_takes_the_same_steps_on_both_paths():
    """IFToMM A03 (7 planar bodies, a driving torque of t in the time rows) over 0.01 s at rtol 1e-5:
    the q at the outputs within 1e-9 rad (measured 2e-13 at rtol 1e-6 over 0.03 s, 308 steps each)."""
    system, _ = andrews_squeezer.build()
    numpy_run, compiled_run = both(system, rtol=1e-5, atol=1e-8, t_end=0.01, t_eval=[0.0, 0.005, 0.01],
                                   v0=np.zeros(system.n_q))
    assert compiled_run.metadata["kernel"] == "compiled" and numpy_run.metadata["kernel"] == "numpy"
    assert_same_steps(numpy_run, compiled_run, 1e-9)


def test_triple_pendulum_in_euler_parameters_takes_the_same_steps_on_both_paths():
    """The triple pendulum (3 RigidBodyEP, spherical joints, the norms) over 0.5 s at rtol 1e-6."""
    system = triple_pendulum.build("euler-parameters")
    numpy_run, compiled_run = both(system, rtol=1e-6, atol=1e-9, t_end=0.5, dt_out=0.25)
    assert_same_steps(numpy_run, compiled_run, 1e-9)


@pytest.fixture(scope="module")
def a02_start():
    """(system, q, v) of IFToMM A02 (N = 2) at t = 0.65 s, shortly before its singular instant t* = 0.714 s
    (compiled radau-dae at rtol 1e-6 from the case's start)."""
    system, q0, v0, _ = double_four_bar.build(2)
    res = fm.run(system, method="radau-dae", rtol=1e-6, atol=1e-9, t_end=0.65, t_eval=[0.65], q0=q0, v0=v0,
                 store=False)
    assert res.status == "finished", res.message
    return system, res.q[-1], res.v[-1]


def test_a02_through_its_singular_configuration_takes_the_same_steps_on_both_paths(a02_start):
    """IFToMM A02 (N = 2) from 0.65 to 0.75 s, through the singular instant t* = 0.714 s, with the
    regularised rows (default relaxation) at rtol 1e-6.  Near t* C_q's conditioning (sigma_min / sigma_max
    down to 1e-3) amplifies round-off, and with it the decisions at the controller's thresholds, so that
    the counts are not reproducible on one path either: v0 changed by 1e-12 of itself turns the numpy
    path's 94 steps, 35 rejections, 66 Jacobians, 228 LUs into 99, 41, 70, 262, the compiled path's 101,
    44, 79, 264 into 96, 41, 74, 248 (measured).  Bounds: the counts within 30 %, the outputs' q within
    1e-8 (measured 1.1e-10)."""
    system, q, v = a02_start
    numpy_run, compiled_run = both(system, rtol=1e-6, atol=1e-9, t0=0.65, t_end=0.75, dt_out=0.05, q0=q, v0=v)
    assert_same_steps(numpy_run, compiled_run, 1e-8, count_rtol=0.3)


def test_underflow_at_a_singular_configuration_stops_both_paths_with_the_same_message_and_outputs():
    """A02 with the exact GGL rows (relaxation = 0) from its start cannot pass t* = 0.714 s
    (tests/test_failures_radau.py): both paths stop with a step-size underflow there, the same message but
    for the digits of h and of C_q's singular values, and keep the outputs before it.  (Whether the exact
    rows pass t* is decided by round-off: from the compiled path's state at 0.65 s the compiled path passes
    and the numpy path does not, measured; from the start both stop.)"""
    system, q0, v0, _ = double_four_bar.build(2)
    runs = both(system, rtol=1e-6, atol=1e-9, relaxation=0.0, t_end=0.8, dt_out=0.1, q0=q0, v0=v0)
    pattern = (r"Step-size underflow at t = 0\.71\d+: radau-dae rejected every step down to .* s \(Newton's "
               r"iteration or the error estimate failed at every step size\): C_q is nearly singular there "
               r"\(smallest / largest singular value .*\), a singular configuration of the mechanism, which the "
               r"exact GGL rows \(`relaxation` = 0\) do not pass; .*")
    for res in runs:
        assert res.status == "failed" and re.match(pattern, res.message), res.message
        np.testing.assert_allclose(res.t, np.arange(8) * 0.1, atol=1e-12)       # the outputs up to 0.7 s
    assert np.abs(runs[0].q - runs[1].q).max() < 1e-8


def test_the_works_from_every_step_point_agree_on_both_paths():
    """A System run gives simulate a step integrand (the works' powers at every step point): the kernel's
    call hands back every accepted step's point with the outputs.  The coupled spin-up beam's driver work
    (an AngleDriver of a user's law of t) and kinetic energy over 0.5 s at rtol 1e-5 on both paths
    (measured 12 steps each, W_drivers within 2.9e-14 J of each other)."""
    import spinup_beam
    system = spinup_beam.build_coupled(4)[0]
    numpy_run, compiled_run = both(system, rtol=1e-5, atol=1e-8, t_end=0.5, dt_out=0.1)
    assert_same_steps(numpy_run, compiled_run, 1e-10)
    for key in ("W_drivers", "kinetic"):
        w = np.asarray(numpy_run.energies[key])
        assert np.abs(w).max() > 0
        np.testing.assert_allclose(compiled_run.energies[key], w, rtol=0, atol=1e-9 * np.abs(w).max())


def test_single_steps_in_the_kernel_with_an_integrand_take_the_same_steps():
    """With an integrand (Gauss points on every step's dense output) `simulate` steps one step at a time
    (`RadauDAE.step`, one kernel call a step): the same steps and the same integral as the numpy path, here
    the integral of v_1^2 over the triple pendulum's first 0.2 s."""
    from flexmbs.formulations.registry import choose
    from flexmbs.integrators import INTEGRATORS
    from flexmbs.integrators.simulate import simulate
    system = triple_pendulum.build("euler-parameters")
    entry, method = choose("auto", "radau-dae", INTEGRATORS)
    n = system.n_q
    x0 = np.concatenate([system.initial_coordinates(), np.zeros(n)])
    sols = [simulate(entry.system(system), (0.0, 0.2), x0, method=method, rtol=1e-6, atol=1e-9, t_eval=[0.0, 0.2],
                     integrand=lambda t, x: x[n:n + 1] ** 2, kernel=k) for k in ("numpy", "compiled")]
    assert [s.kernel for s in sols] == ["numpy", "compiled"] and all(s.success for s in sols)
    assert sols[0].n_steps == sols[1].n_steps and sols[0].n_rejected == sols[1].n_rejected
    assert sols[0].integrals[-1, 0] > 0
    np.testing.assert_allclose(sols[1].integrals, sols[0].integrals, rtol=1e-9)


def driven_bar():
    """A bar pinned to the ground, its angle driven by a user's law that raises beyond t = 0.05 s (a table
    ending there; the System of tests/test_failures_compiled_adaptive.py ``driven``)."""
    from flexmbs.bodies import RigidBody2D
    from flexmbs.constraints import CoordinateDriver
    from flexmbs.constraints.planar import PlanarRevolute
    from flexmbs.system import System
    bar = RigidBody2D("bar", 1.0, 1.0 / 12.0, position=(0.5, 0.0), angle=0.0)

    def law(t):
        if t > 0.05:
            raise ValueError("the table ends at 0.05 s")
        return 2.0 * t * t, 4.0 * t, 4.0
    return System([bar], [PlanarRevolute(None, bar, at=(0.0, 0.0), name="pin"),
                          CoordinateDriver(bar, 2, law, name="swing")], gravity=(0.0, -9.81))


def test_a_failing_law_stops_both_paths_with_the_same_message_and_outputs():
    """A user's law of t that raises beyond t = 0.05 s (asked of Python by the kernel once per trial step,
    csrc ``radau_laws``) stops the run on both paths with the same message, naming the driver and the
    cause, and keeps the same outputs before it (measured: a trial step from 0.0092 s to 0.067 s meets the
    raise on both paths; the outputs to 0.008 s are kept)."""
    runs = [fm.run(driven_bar(), method="radau-dae", kernel=k, rtol=1e-6, atol=1e-9, t_end=0.1, dt_out=0.002,
                   store=False) for k in ("numpy", "compiled")]
    a, b = runs
    assert b.metadata["kernel"] == "compiled"
    assert a.status == b.status == "failed"
    assert "driver 'swing': its law" in b.message and "the table ends at 0.05 s" in b.message
    assert a.message == b.message
    np.testing.assert_array_equal(a.t, b.t)
    assert len(b.t) > 1 and np.abs(a.q - b.q).max() < 1e-10



def test_outputs_beyond_those_handed_to_the_kernel_come_from_the_same_step(monkeypatch):
    """A call hands the kernel at most OUTPUTS_PER_CALL output times (the rows it fills: the dense output
    projected onto the constraints, csrc ``radau_dense``); the outputs beyond them in the same step come
    from `dense` in Python: the same rows as with all handed over (here 3 a call against 4096)."""
    from flexmbs.integrators import radau_dae
    system = triple_pendulum.build("euler-parameters")
    options = dict(rtol=1e-6, atol=1e-9, t_end=0.1, dt_out=0.001, store=False)
    ref = fm.run(system, method="radau-dae", **options)
    monkeypatch.setattr(radau_dae, "OUTPUTS_PER_CALL", 3)
    res = fm.run(system, method="radau-dae", **options)
    assert res.status == ref.status == "finished" and res.stats["n_steps"] == ref.stats["n_steps"] < len(res.t) / 3
    np.testing.assert_array_equal(res.t, ref.t)
    np.testing.assert_allclose(res.q, ref.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.v, ref.v, rtol=0, atol=1e-10)
