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
from flexmbs.compiled import kernel_status

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
