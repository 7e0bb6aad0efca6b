"""The output side vectorised over the outputs of a block (issue 22, item 1): the drivers' laws are
evaluated once per block as arrays (`flexmbs.constraints.base.law_history`), the drivers' C_t of all
the steps from the stacked marker positions only, A(p) once per body.

- a law declaring ``vectorized`` gives at an array of times what it gives one time at a time, and is
  called once per history (not once per output);
- the joint batch's histories (C_q and C_t stacked over outputs) with a vectorized law equal those
  with the same law called one time at a time, and the per-state `System.jacobian` and
  `System.time_derivative` rows; the coupled slider-crank's reaction history is the same with a
  vectorized and a scalar drive law (tests/test_outputs_one_pass.py pins it to the per-output lstsq).
"""
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs.constraints.base import law_history, law_values
from flexmbs.constraints.batch import JointBatch
from flexmbs.constraints.driving import as_law
from flexmbs.mechanisms import constant_speed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))

import slider_crank  # noqa: E402

JOINTS = ["crank pivot", "drive", "pin A", "pin B", "slide"]
T = np.linspace(0.0, 0.03, 7)


def scalar(law):
    """The same law without the ``vectorized`` declaration: called one time at a time."""
    return lambda t: law(t)


def counted(law):
    """``law`` declared vectorized, counting its calls in ``.calls``."""
    def wrapped(t):
        wrapped.calls += 1
        return law(t)
    wrapped.calls, wrapped.vectorized = 0, True
    return wrapped


@pytest.mark.parametrize("law", [constant_speed(150.0, 0.3), as_law(0.25)], ids=["constant_speed", "constant"])
def test_a_vectorized_law_gives_what_it_gives_one_time_at_a_time(law):
    assert law.vectorized
    expected = np.array([law_values(law, float(t), "d") for t in T])
    np.testing.assert_array_equal(law_history(law, T, "d"), expected)
    np.testing.assert_array_equal(law_history(scalar(law), T, "d"), expected)


def coupled(law):
    """The coupled slider-crank (2 elements) with its drive's law replaced by ``law``."""
    system = slider_crank.build_coupled(elements=2)[0]
    system.constraint("drive").law = law
    return system


def states(system, n=5, seed=4):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, 0.05, n)
    q = system.initial_coordinates() + 0.05 * rng.standard_normal((n, system.n_q))
    return t, q, 100.0 * rng.standard_normal((n, system.n_c))


def test_joint_histories_with_a_vectorized_law_equal_the_per_state_rows():
    """C_t (`System.power_history`'s drivers) and C_q of the joint batch at 5 random states, the drive
    law vectorized: equal to the per-state `time_derivative` and `jacobian` to round-off, and the law
    called once per history."""
    law = counted(constant_speed(150.0))
    system = coupled(law)
    t, q, _ = states(system)
    batch = JointBatch([system.constraint(n) for n in JOINTS],
                       [[None if b is None else system.slice(b).start for b in system.constraint(n).bodies]
                        for n in JOINTS], np.cumsum([0] + [system.constraint(n).n_c for n in JOINTS])[:-1],
                       system.n_q, sum(system.constraint(n).n_c for n in JOINTS), 3)
    QE = np.concatenate([q, np.broadcast_to(JointBatch.extend(np.zeros(0)), (len(q), 8))], axis=1)
    law.calls = 0
    Ct, Cq = batch.time_derivative_history(t, QE), batch.jacobian_history(t, QE)
    assert law.calls == 2
    rows = np.concatenate([np.arange(system.n_c)[system.rows(system.constraint(n))] for n in JOINTS])
    for k in range(len(t)):
        np.testing.assert_allclose(Ct[k], system.time_derivative(t[k], q[k])[rows], rtol=0, atol=1e-12 * 150)
        np.testing.assert_allclose(Cq[k], system.jacobian(t[k], q[k])[rows], rtol=0, atol=1e-13)
    assert np.abs(Ct[:, 5]).max() > 1.0                     # the drive's row: nonzero, so the test can fail


def test_reactions_and_powers_are_the_same_with_a_vectorized_and_a_scalar_law():
    """reaction_history and power_history at 5 random states: the same numbers whether the drive's law
    is evaluated once for all outputs (vectorized) or once per output (a user's scalar law)."""
    fast, slow = coupled(constant_speed(150.0)), coupled(scalar(constant_speed(150.0)))
    t, q, lam = states(fast)
    v = 0.1 * q
    a, b = fast.reaction_history(t, q, lam, JOINTS), slow.reaction_history(t, q, lam, JOINTS)
    for name in JOINTS:
        for body, ref in b[name]["bodies"].items():
            for key in ("force", "torque"):
                np.testing.assert_array_equal(a[name]["bodies"][body][key], ref[key])
    pa, pb = fast.power_history(t, q, v, lam), slow.power_history(t, q, v, lam)
    assert np.abs(pb["drivers"]).max() > 1.0
    np.testing.assert_array_equal(pa["drivers"], pb["drivers"])


@pytest.mark.skipif(not __import__("flexmbs.compiled").compiled.kernel_status().installed,
                    reason="the compiled kernel is not installed")
def test_the_kernels_time_table_calls_a_vectorized_law_once(monkeypatch):
    """`CompiledSystem.laws` (the time rows the kernel reads at the step times) calls a driver's law
    that declares ``vectorized`` once for all the times, and gives what `law_values` gives time by time;
    a law that fails at some time falls back to the row-by-row table, which keeps the rows before it."""
    from flexmbs.compiled import CompiledSystem
    from flexmbs.user_functions import UserFunctionError
    made = []

    def drive_law(speed):                     # the case's constant_speed, counted, or NaN after 0.01 s
        law = counted(constant_speed(speed))
        made.append(law)
        return law
    monkeypatch.setattr(slider_crank, "constant_speed", drive_law)
    packed = CompiledSystem(slider_crank.build_coupled(elements=2)[0])
    law, = made
    times = np.linspace(0.0, 0.02, 50)
    table = packed.laws(times)
    assert law.calls == 1
    expected = np.array([law_values(law, float(t), "drive") for t in times])
    np.testing.assert_array_equal(table[:, :3], expected)

    def failing(speed):
        exact = constant_speed(speed)

        def law(t):
            f, fd, fdd = exact(t)
            return np.where(np.asarray(t) > 0.01, np.nan, f), fd, fdd
        law.vectorized = True
        return law
    monkeypatch.setattr(slider_crank, "constant_speed", failing)
    rows, failure = CompiledSystem(slider_crank.build_coupled(elements=2)[0]).tabulate(times)
    assert isinstance(failure, UserFunctionError) and "drive" in str(failure)
    assert len(rows) == int(np.sum(times <= 0.01))
