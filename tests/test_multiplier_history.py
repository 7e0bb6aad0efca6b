"""The multipliers that maggi, kane, volterra and hamilton recover at the outputs, all outputs at once
(`multiplier_history`, issue 22, item 1): equal to their state-by-state recovery (`multipliers`), taken by
`flexmbs.system_run.multipliers_at` without one per-state call, and equal to Lagrange's where the equations
say they must be.

The system is the coupled slider-crank (cases/slider_crank.py `build_coupled`, 2 elements: two rigid bodies in
Euler parameters, a floating-frame rod, a driver; n_q = 27, n_c = 21), run by RK45 over 20 us (11 outputs).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs import compiled
from flexmbs.formulations import evaluations, index1
from flexmbs.formulations.registry import system_formulation
from flexmbs.system_run import multipliers_at

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import slider_crank  # noqa: E402

RECOVERED = ("maggi", "kane", "volterra", "hamilton")
# the stacked and the per-state recovery solve the same equations on the same terms: round-off (maggi, measured
# 2e-14), but kane's and volterra's constraint rows' rates come from central differences of the kernel's C_q, C_t
# where `multipliers` takes the joints' own (measured 1e-13), and hamilton's per-state `multipliers` takes M' q',
# a' and b' by central differences of step 1e-6 where `multiplier_history` has Lagrange's Q and gamma exactly
# (measured 6e-11)
AGREE = {"maggi": 1e-10, "kane": 1e-10, "volterra": 1e-10, "hamilton": 1e-9}


def relative(a, b) -> float:
    """max |a - b| / max |b|."""
    return float(np.abs(np.asarray(a) - b).max() / np.abs(b).max())


def coupled():
    return slider_crank.build_coupled(elements=2)[0]


def run(formulation: str):
    """The coupled slider-crank by RK45 over 20 us, 11 outputs, with ``formulation``."""
    res = fm.run(coupled(), formulation=formulation, method="RK45", rtol=1e-6, t_end=2e-5,
                 t_eval=np.linspace(0.0, 2e-5, 11), store=False)
    assert res.status == "finished", res.message
    return res


def per_state(form, t, x) -> np.ndarray:
    """lam of ``form.multipliers`` one output after the other: the recovery before issue 22's item 1."""
    return np.array([form.multipliers(float(tk), xk) for tk, xk in zip(t, x)])


@pytest.mark.parametrize("name", RECOVERED)
def test_a_run_takes_no_per_state_multipliers_and_they_equal_the_stacked_ones(name, monkeypatch):
    """A run with ``name`` gets its multipliers at the outputs with `multipliers` of the formulation raising (so
    `multipliers_at` never calls it), in chunks of 4 outputs (three stacked solves); they equal the per-state
    recovery on the run's own states to `AGREE`."""
    cls = type(system_formulation(name, coupled()))

    def refuse(self, t, x):
        raise AssertionError(f"{cls.__name__}.multipliers called one state at a time")
    monkeypatch.setattr(cls, "multipliers", refuse)
    monkeypatch.setattr(index1, "HISTORY_CHUNK", 4)
    res = run(name)
    assert res.multipliers.shape == (11, 21) and np.isfinite(res.multipliers).all()
    monkeypatch.undo()
    form = system_formulation(name, coupled())
    ref = per_state(form, res.t, np.concatenate([res.q, res.v], axis=1))
    assert relative(res.multipliers, ref) <= AGREE[name], name


@pytest.fixture(scope="module")
def lagrange_run():
    """The Lagrange (index-1, augmented) run: its outputs' (t, q, q') and multipliers."""
    return run("lagrange")


def states(name: str, form, system, t, q, qd) -> np.ndarray:
    """The formulation's states at the physical (q, q'): (q, q') maggi, (q, M q') hamilton (sigma = 0 on
    consistent velocities), (q, u) kane and volterra."""
    if name == "maggi":
        return np.concatenate([q, qd], axis=1)
    if name == "hamilton":
        return np.concatenate([q, np.array([system.mass_matrix(qk) @ vk for qk, vk in zip(q, qd)])], axis=1)
    return np.concatenate([q, np.array([form.qv.quasi_velocities(tk, qk, vk) for tk, qk, vk in zip(t, q, qd)])],
                          axis=1)


@pytest.mark.parametrize("name", RECOVERED)
def test_stacked_multipliers_are_lagranges_at_the_same_states(name, lagrange_run):
    """At the Lagrange run's outputs (t, q, q'), every formulation's lam is Lagrange's: maggi and hamilton on all
    rows to 1e-9 of the largest (the same M, Q, C_q, gamma: Maggi's q'' with a^T lam = Q - M q'' is the saddle
    point's; sigma' solves the saddle point itself); kane and volterra on the joints' rows to 1e-9 (d'Alembert's
    residual on the parts equals Lagrange's Q - M q'' where the parts reproduce M and Q_v, measured 3.4e-12 at
    the start in test_kane_volterra_system; the Euler-parameter norms' rows are not physical and differ)."""
    system = coupled()
    form = system_formulation(name, system)
    res = lagrange_run
    lam = form.multiplier_history(res.t, states(name, form, system, res.t, res.q, res.v))
    rows = np.arange(system.n_c)
    if name in ("kane", "volterra"):
        rows = np.concatenate([rows[system.rows(c)] for c in system.constraints
                               if type(c).__name__ != "EulerParameterNorm"])
    assert np.abs(lam[:, rows] - res.multipliers[:, rows]).max() <= 1e-9 * np.abs(res.multipliers).max(), name


def numpy_path(system, kernel, refusal=None):
    """`evaluations.choose` refusing the kernel: a System on the numpy path."""
    return None, "numpy", "refused by the test"


# the kernel's terms_history calls of a chunk of n states: maggi one (M, Q, C_q, gamma); hamilton two (M, C_q, C_t at q
# for q', then Q, gamma at (q, q')); kane and volterra two (C_q, C_t at q, then at the 2 n states q +- eps q' for
# their rates along the motion)
KERNEL_CALLS = {"maggi": lambda n: [n], "hamilton": lambda n: [n, n], "kane": lambda n: [n, 2 * n],
                "volterra": lambda n: [n, 2 * n]}


@pytest.mark.parametrize("name", sorted(KERNEL_CALLS))
def test_compiled_terms_are_kernel_calls_a_chunk_and_equal_the_numpy_ones(name, lagrange_run, monkeypatch):
    """On the compiled path the terms of a chunk of outputs are `KERNEL_CALLS` calls of the kernel's
    terms_history; with the kernel refused the System's numpy evaluations give the same lam: maggi and hamilton
    to 1e-12 of the largest (the same terms), kane and volterra to 1e-10 (the constraint rows' rates by central
    differences of the kernel's C_q and C_t against the joints' own complex step or central differences; measured
    1e-13)."""
    system = coupled()
    res = lagrange_run
    calls = []
    stacked = compiled.CompiledSystem.terms_history

    def counted(self, T, Q, V):
        calls.append(len(T))
        return stacked(self, T, Q, V)
    monkeypatch.setattr(compiled.CompiledSystem, "terms_history", counted)
    monkeypatch.setattr(index1, "HISTORY_CHUNK", 4)
    form = system_formulation(name, system)
    x = states(name, form, system, res.t, res.q, res.v)
    lam = form.multiplier_history(res.t, x)
    assert calls == [k for n in (4, 4, 3) for k in KERNEL_CALLS[name](n)]
    monkeypatch.setattr(evaluations, "choose", numpy_path)
    numpy_lam = system_formulation(name, coupled()).multiplier_history(res.t, x)
    assert len(calls) == 3 * len(KERNEL_CALLS[name](1))
    assert relative(lam, numpy_lam) <= (1e-12 if name in ("maggi", "hamilton") else 1e-10)


@pytest.mark.parametrize("name", sorted(KERNEL_CALLS))
def test_a_kernel_that_refuses_terms_history_is_asked_once(name, lagrange_run, monkeypatch):
    """A kernel built before terms_history (`compiled.Unsupported`) is asked once: its refusal holds for the rest
    of the history (3 chunks) and for the next one, which take the System's numpy, with the lam of the numpy
    path to round-off (the same terms)."""
    system = coupled()
    res = lagrange_run
    calls = []

    def refused(self, T, Q, V):
        calls.append(len(T))
        raise compiled.Unsupported("the compiled kernel old.so has no terms_history (built before it)")
    monkeypatch.setattr(compiled.CompiledSystem, "terms_history", refused)
    monkeypatch.setattr(index1, "HISTORY_CHUNK", 4)
    form = system_formulation(name, system)
    x = states(name, form, system, res.t, res.q, res.v)
    lam = form.multiplier_history(res.t, x)
    assert calls == [4]
    form.multiplier_history(res.t[:2], x[:2])
    assert calls == [4]
    monkeypatch.setattr(evaluations, "choose", numpy_path)
    numpy_lam = system_formulation(name, coupled()).multiplier_history(res.t, x)
    assert relative(lam, numpy_lam) <= 1e-12


@pytest.mark.parametrize("name", RECOVERED)
def test_no_outputs_and_one_output(name, lagrange_run):
    """No states: an empty (0, n_c) lam; one state given as a vector with one time: one row, the per-state one."""
    system = coupled()
    form = system_formulation(name, system)
    res = lagrange_run
    x = states(name, form, system, res.t[:1], res.q[:1], res.v[:1])
    assert form.multiplier_history(np.zeros(0), np.zeros((0, form.n_state))).shape == (0, system.n_c)
    lam = form.multiplier_history(res.t[:1], x[0])
    assert lam.shape == (1, system.n_c)
    assert relative(lam[0], form.multipliers(float(res.t[0]), x[0])) <= AGREE[name]


def test_multipliers_at_is_the_formulations_history(lagrange_run):
    """`multipliers_at` returns the formulation's `multiplier_history` itself (maggi at the Lagrange run's
    outputs)."""
    system = coupled()
    form = system_formulation("maggi", system)
    x = np.concatenate([lagrange_run.q, lagrange_run.v], axis=1)
    assert np.array_equal(multipliers_at(form, lagrange_run.t, x), form.multiplier_history(lagrange_run.t, x))


@pytest.fixture(scope="module")
def rod_run():
    """(system, Lagrange's formulation, its solution at 9 states, DOP853 over 1 s) of the particle on a rod."""
    from test_failures_multipliers import particle_on_rod
    from flexmbs.integrators import simulate
    system = particle_on_rod()
    lagrange = system_formulation("lagrange", system)
    sol = simulate(lagrange, (0.0, 1.0), lagrange.state0(), method="DOP853", rtol=1e-10, atol=1e-12,
                   t_eval=np.linspace(0.0, 1.0, 9))
    return system, lagrange, sol


@pytest.mark.parametrize("name", RECOVERED)
def test_a_tree_body_on_a_rod_on_the_numpy_path(name, rod_run):
    """A particle on a massless rod (tests/test_failures_multipliers.py `particle_on_rod`: a TreeBody, which the
    kernel does not take, and a Distance joint, whose complex step falls back to central differences): at 9
    states of a Lagrange run (DOP853 over 1 s) turned into each formulation's, the stacked lam equals the
    per-state one to `AGREE`, and the rod's tension is Lagrange's to 1e-8 (the same equations; hamilton's
    central differences and the Distance joint's rates by differences, relative 1e-10)."""
    system, lagrange, sol = rod_run
    q, qd = sol.x[:, :3], sol.x[:, 3:]
    form = system_formulation(name, system)
    assert evaluations.choose(system, "auto")[0] is None          # the terms from the System's numpy
    x = states(name, form, system, sol.t, q, qd)
    lam = form.multiplier_history(sol.t, x)
    assert relative(lam, per_state(form, sol.t, x)) <= AGREE[name], name
    assert relative(lam, lagrange.multiplier_history(sol.t, sol.x)) <= 1e-8, name


@pytest.mark.slow
def test_the_benchmark_runs(capsys):
    """benchmarks/bench_recovered_multipliers.py --quick (11 outputs) prints one line per formulation with the
    stacked lam within `AGREE` of the per-state one, and one for q' of the states that are not (q, q')."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import bench_recovered_multipliers
    bench_recovered_multipliers.main(["--quick"])
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert [line[:2] for line in lines] == [["maggi", "lam"], ["kane", "lam"], ["kane", "q'"], ["volterra", "lam"],
                                            ["volterra", "q'"], ["hamilton", "lam"], ["hamilton", "q'"]]
    for line in lines:
        assert float(line[-1]) <= (AGREE[line[0]] if line[1] == "lam" else 1e-12), line


@pytest.mark.parametrize("name", ["kane", "volterra", "hamilton"])
def test_physical_velocities_of_all_outputs_at_once_are_the_per_state_ones(name, lagrange_run):
    """`physical(t, x)` of the formulations whose state is not (q, q') gives q' of all the outputs by stacked solves
    (`velocity_history`: the kernel's C_q, C_t and M in one call a chunk); it equals q' state by state (kane,
    volterra: W u + X of `QuasiVelocities.maps`; hamilton: `velocities`, the saddle point of the System's numpy)
    to 1e-12 of the largest, and Lagrange's q' it was made from to 1e-8 (u and p from Lagrange's q', whose
    velocity constraints hold to the integration's tolerance)."""
    system = coupled()
    form = system_formulation(name, system)
    res = lagrange_run
    x = states(name, form, system, res.t, res.q, res.v)
    q, qd = form.physical(res.t, x)
    if name == "hamilton":
        ref = np.array([form.velocities(tk, xk[:system.n_q], xk[system.n_q:])[0] for tk, xk in zip(res.t, x)])
    else:
        ref = np.array([form.qv.maps(tk, xk[:system.n_q])[0] @ xk[system.n_q:] + form.qv.maps(tk, xk[:system.n_q])[1]
                        for tk, xk in zip(res.t, x)])
    assert np.array_equal(q, res.q)
    assert relative(qd, ref) <= 1e-12
    assert relative(qd, res.v) <= 1e-8


@pytest.mark.parametrize("name", ["volterra-reduced", "kane", "maggi", "hamilton"])
def test_the_cart_pendulums_wheel_with_an_ignorable_coordinate(name):
    """The cart pendulum (cases/cart_pendulum.py: a TreeBody on a nonholonomic wheel, the cart's x ignorable):
    over 7 states of the formulation's own run (DOP853, 0.5 s), the stacked lam equals the per-state one to
    `AGREE` (volterra-reduced's maps with the momentum rows of the ignorable coordinate: kane's tolerance)."""
    import cart_pendulum
    from flexmbs.integrators import simulate
    model = cart_pendulum.build()
    options = {"volterra-reduced": dict(Y=model.Y_reduced, ignorable=model.ignorable), "kane": dict(Y=model.Y),
               "maggi": dict(Y=model.Y), "hamilton": {}}[name]
    form = system_formulation(name, model.system, **options)
    sol = simulate(form, (0.0, 0.5), form.state0(), method="DOP853", rtol=1e-9, atol=1e-12,
                   t_eval=np.linspace(0.0, 0.5, 7))
    lam = form.multiplier_history(sol.t, sol.x)
    assert lam.shape == (7, 1)
    assert relative(lam, per_state(form, sol.t, sol.x)) <= AGREE.get(name, AGREE["kane"]), name


def test_maggi_in_quasi_velocities_recovers_kanes_and_maggis_multipliers():
    """`MaggiQuasiVelocities` (state (q, u), not a registry name) had no recovery of its own (its inherited
    `multipliers` asked for the parts' terms it does not build); its lam from Lagrange's dropped rows equals Kane's
    at the same states (q, u) of its run on the cart pendulum (same Y) and Maggi's at the same (q, q'), to 1e-10 of
    the largest (the same equations of motion: measured 1e-15 and 2e-15)."""
    import cart_pendulum
    from flexmbs.formulations.maggi import MaggiQuasiVelocities
    from flexmbs.formulations.quasi_velocities import QuasiVelocities
    from flexmbs.integrators import simulate
    model = cart_pendulum.build()
    form = MaggiQuasiVelocities(model.system, QuasiVelocities(model.system, Y=model.Y))
    sol = simulate(form, (0.0, 0.5), form.state0(), method="DOP853", rtol=1e-9, atol=1e-12,
                   t_eval=np.linspace(0.0, 0.5, 7))
    lam = multipliers_at(form, sol.t, sol.x)
    assert lam.shape == (7, 1) and np.array_equal(form.multipliers(sol.t[3], sol.x[3]), lam[3])
    kane = system_formulation("kane", model.system, Y=model.Y)
    assert relative(lam, kane.multiplier_history(sol.t, sol.x)) <= 1e-10
    maggi = system_formulation("maggi", model.system, Y=model.Y)
    assert relative(lam, maggi.multiplier_history(sol.t, np.concatenate(form.physical(sol.t, sol.x), axis=1))) <= 1e-10
