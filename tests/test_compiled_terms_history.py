"""`CompiledSystem.terms_history`: the kernel's M, Q, C, C_q, gamma and C_t at N states in one call (csrc
``py_terms_history``), the time rows of all N times from one evaluation of the laws, and the index-1
formulations' multipliers at the outputs computed from it (`Index1.multiplier_history`, issue 22, item 1).

Each is checked against what it replaces: N calls of `CompiledSystem.terms` and `constraint_rates` (the same C
functions on the same numbers, so equal to 1e-14 of each array's largest entry), and the stacked solve of the
terms state by state (`Index1.acceleration_terms`).  Skipped without the compiled kernel."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs import compiled
from flexmbs.compiled import Unsupported, kernel_status
from flexmbs.formulations.index1 import HISTORIES, Index1

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))
sys.path.insert(0, str(ROOT / "tests"))

import slider_crank  # noqa: E402
import triple_pendulum  # noqa: E402
from test_compiled import planar_zoo, spatial_driven  # noqa: E402

pytestmark = pytest.mark.skipif(not kernel_status().installed, reason=f"compiled kernel {kernel_status()}")

SYSTEMS = {   # the kernel takes each; their laws of t: a vectorized driver, users' lambdas (row by row), none
    "coupled slider-crank (flexible rod, constant_speed driver)": lambda: slider_crank.build_coupled(elements=4)[0],
    "triple pendulum, natural coordinates": lambda: triple_pendulum.build("natural"),
    "triple pendulum, Euler parameters": lambda: triple_pendulum.build("euler-parameters"),
    "planar zoo (a coordinate driver, load functions of t)": planar_zoo,
    "spatial angle and coordinate drivers": spatial_driven,
}
NAMES = ("M", "Q", "C", "Cq", "gamma", "Ct")


def states(system, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n times in [0, 0.2] and (q, v) (n, n_q) near the initial state: q off the constraints by 1e-2, v that
    velocity plus 0.5 times a standard normal (seeded)."""
    rng = np.random.default_rng(seed)
    q0, v0 = system.initial_coordinates(), system.initial_velocities()
    return (np.linspace(0.0, 0.2, n), q0 + 1e-2 * rng.standard_normal((n, len(q0))),
            v0 + 0.5 * rng.standard_normal((n, len(v0))))


def relative(a, b) -> float:
    scale = np.abs(b).max()
    return float(np.abs(np.asarray(a) - b).max() / scale) if scale else float(np.abs(a).max())


@pytest.mark.parametrize("name", SYSTEMS)
def test_terms_history_is_n_calls_of_terms_and_constraint_rates(name):
    """At 40 states: each stacked array equals that of `terms` and `constraint_rates` state by state to 1e-14 of
    its largest entry (the same C functions on the same numbers; the time rows by `laws` over all times against
    one time each: measured identical)."""
    system = SYSTEMS[name]()
    c = system.compiled()
    T, Q, V = states(system, 40)
    stacked = c.terms_history(T, Q, V)
    one = [c.terms(tk, qk, vk) + c.constraint_rates(tk, qk, vk) for tk, qk, vk in zip(T, Q, V)]
    for what, got, column in zip(NAMES, stacked, zip(*one)):
        assert got.shape == (len(T),) + column[0].shape, what
        assert relative(got, np.array(column)) <= 1e-14, (what, relative(got, np.array(column)))


def test_no_states_and_one_state():
    """N = 0 gives empty stacks of the right shapes; N = 1 the single evaluation."""
    system = slider_crank.build_coupled(elements=4)[0]
    c = system.compiled()
    n, m = system.n_q, system.n_c
    empty = c.terms_history(np.zeros(0), np.zeros((0, n)), np.zeros((0, n)))
    assert [a.shape for a in empty] == [(0, n, n), (0, n), (0, m), (0, m, n), (0, m), (0, m)]
    T, Q, V = states(system, 1)
    one = c.terms(T[0], Q[0], V[0]) + c.constraint_rates(T[0], Q[0], V[0])
    for got, ref in zip(c.terms_history(T, Q, V), one):
        assert np.array_equal(got[0], ref)


FORMS = {   # solver, stabilization, its coefficients
    "lagrange": ("augmented", "none", {}),
    "lagrange, Baumgarte": ("augmented", "baumgarte", dict(alpha=5.0, beta=5.0)),
    "udwadia-kalaba": ("udwadia-kalaba", "none", {}),
    "udwadia-kalaba, Baumgarte": ("udwadia-kalaba", "baumgarte", dict(alpha=5.0, beta=5.0)),
}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", ["coupled slider-crank (flexible rod, constant_speed driver)",
                                  "triple pendulum, Euler parameters", "spatial angle and coordinate drivers"])
def test_multiplier_history_is_the_stacked_solve_of_the_terms_state_by_state(name, form):
    """`multiplier_history` at 100 states (two chunks) on the kernel's stacked terms equals the solver's stacked
    solve of `acceleration_terms` state by state (what it computed before terms_history) to 1e-12 of the largest
    lam (measured: identical without Baumgarte's terms, up to 4.3e-16 with them: `stacked_gamma`'s C_q q' by
    einsum)."""
    solver, stabilization, options = FORMS[form]
    system = SYSTEMS[name]()
    f = Index1(system, solver, stabilization, kernel="compiled", **options)
    T, Q, V = states(system, 100, seed=2)
    lam = f.multiplier_history(T, np.concatenate([Q, V], axis=1))
    terms = [f.acceleration_terms(tk, qk, vk) for tk, qk, vk in zip(T, Q, V)]
    before = HISTORIES[solver](*(np.array(column) for column in zip(*terms)), t=T)[1]
    assert lam.shape == (100, system.n_c)
    assert relative(lam, before) <= 1e-12, relative(lam, before)


def without_terms_history(self, T, Q, V):
    raise Unsupported("the compiled kernel has no terms_history (a test's stand-in for a kernel built before it)")


@pytest.mark.parametrize("formulation", ["lagrange", "udwadia-kalaba"])
def test_a_runs_multipliers_are_unchanged(formulation, monkeypatch, caplog):
    """The coupled slider-crank over 0.5 ms (RK45, 21 outputs): the run's multipliers with terms_history equal those
    of the same run taking the kernel's terms state by state (a kernel without the entry: the fallback, said in
    the log) to 1e-12 of the largest (measured: identical)."""
    def run():
        return fm.run(slider_crank.build_coupled(elements=4)[0], formulation=formulation, method="RK45", rtol=1e-6,
                      t_end=5e-4, dt_out=2.5e-5, store=False)
    after = run()
    assert after.status == "finished", after.message
    monkeypatch.setattr(compiled.CompiledSystem, "terms_history", without_terms_history)
    with caplog.at_level("INFO", logger="flexmbs.constrained"):
        before = run()
    assert "state by state" in caplog.text and "no terms_history" in caplog.text
    assert np.array_equal(after.t, before.t) and len(after.t) == 21
    assert relative(after.multipliers, before.multipliers) <= 1e-12
