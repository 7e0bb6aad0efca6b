"""Method radau-dae with its evaluations in the compiled kernel (``kernel="compiled"``:
`flexmbs.compiled.CompiledSystem.terms`, csrc/index3_kernel.c ``py_terms``, one call per
evaluation of M, Q, C and C_q; the steps, Newton's solves and the step control stay in numpy): the
same steps as the numpy path on the triple pendulum (Euler parameters) and Andrews' squeezer
(IFToMM A03).  Skipped when the kernel is not installed."""
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

import andrews_squeezer  # noqa: E402
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
