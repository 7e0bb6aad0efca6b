"""index3-alpha-adaptive on the compiled kernel (csrc/index3_kernel.c, ``Adaptive``) against the numpy path
(`flexmbs.integrators.index3_alpha.Index3AdaptiveAlpha`): the same trial steps, rejections, evaluations and
LUs, the accepted times and states to the round-off that the error estimate amplifies, and the rows of
`flexmbs.run` (outputs and step points) on both paths; gamma and C_t of every constraint kind from the kernel
(csrc ``constraint_rates``) against `System.gamma` and `time_derivative`, and the Python calls per trial step
(none without a user's law of t: `python_calls`)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.compiled import CompiledSystem, kernel_status
from flexmbs.constraints import AngleDriver, CoordinateDriver, Prismatic, Revolute, Spherical
from flexmbs.constraints.joints import Screw
from flexmbs.constraints.planar import PlanarRevolute
from flexmbs.bodies import RigidBody2D, RigidBodyEP
from flexmbs.bodies.loads import point_load
from flexmbs.integrators import ConstrainedProblem, simulate
from flexmbs.integrators.index3_alpha import Index3AdaptiveAlpha
from flexmbs.mechanisms import constant_speed
from flexmbs.system import System

CASES = Path(__file__).resolve().parents[1] / "cases"
sys.path.insert(0, str(CASES))

import double_four_bar  # noqa: E402
import slider_crank  # noqa: E402
import test_compiled  # noqa: E402  (its planar and spatial zoos)
import triple_pendulum  # noqa: E402

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason=f"the kernel is {kernel_status()}")


def _run(system, kernel, t_end, t_eval=None, assemble=False, **options):
    problem = ConstrainedProblem(system)
    x0 = problem.state0(system.initial_coordinates(), system.initial_velocities(), assemble=assemble)
    return simulate(problem, (0.0, t_end), x0, method="index3-alpha-adaptive", kernel=kernel, t_eval=t_eval,
                    refactor="step", **options)


@pytest.fixture
def python_calls(monkeypatch):
    """The times at which the kernel asked Python for the laws' row (`Index3AdaptiveAlpha._terms`, csrc
    ``adaptive_terms``), counted through a wrapper of the method."""
    calls, terms = [], Index3AdaptiveAlpha._terms

    def counted(self, kind, t):
        calls.append(t)
        return terms(self, kind, t)
    monkeypatch.setattr(Index3AdaptiveAlpha, "_terms", counted)
    return calls


def same_steps(a, b, n, t_rtol, q_tol):
    """The same trial steps (counts equal) and accepted times and positions within the given tolerances."""
    assert a.status == b.status == "finished", (a.message, b.message)
    assert b.kernel == "compiled" and a.kernel == "numpy"
    assert (a.n_steps, a.n_rejected, a.n_lu, a.n_jac, a.n_rhs) == (b.n_steps, b.n_rejected, b.n_lu, b.n_jac, b.n_rhs)
    assert a.t.shape == b.t.shape
    assert np.abs(a.t - b.t).max() <= t_rtol * a.t[-1]
    assert np.abs(a.x[:, :n] - b.x[:, :n]).max() <= q_tol


@needs_kernel
def test_triple_pendulum_takes_the_numpy_steps(python_calls):
    """The triple pendulum (Euler parameters, three spherical joints) over 1 s at rtol 1e-6: 248 steps and 6
    rejections on both paths; accepted t's within 1e-12 of t_end, q within 1e-10 (measured 4.3e-13 and 4.1e-12),
    and no call of Python from the kernel's trial steps (gamma of the norms and joints in C)."""
    system = triple_pendulum.build("euler-parameters")
    a = _run(system, "numpy", 1.0, rtol=1e-6, atol=1e-8)
    b = _run(system, "compiled", 1.0, rtol=1e-6, atol=1e-8)
    assert a.n_rejected > 0                        # the rejection branch runs on both paths
    same_steps(a, b, system.n_q, 1e-12, 1e-10)
    assert python_calls == []


@needs_kernel
@pytest.mark.parametrize("revolutions, t_rtol, q_tol", [
    (0.01, 1e-8, 1e-9), pytest.param(0.05, 1e-8, 1e-9, marks=pytest.mark.slow)], ids=["0.01", "0.05"])
def test_slider_crank_takes_the_numpy_steps(revolutions, t_rtol, q_tol, python_calls):
    """The coupled slider-crank (4 beam elements, an AngleDriver of constant_speed, whose law the kernel
    evaluates itself: no call of Python per trial step) at rtol 1e-3: the same trial steps, rejections,
    evaluations and LUs.  The times and q agree
    to less than on the triple pendulum: the estimate divides the round-off of q (LAPACK's LU on the numpy
    path, the kernel's own in C) by h^3 (e_q ~ h^2 (qdd_1 - qdd_0), qdd ~ q / h^2), so that with the rod's
    stiff axial mode the two paths' t differ by 4e-12 of t_end after ten steps, and more later (measured over
    0.01 revolution, 73 steps, 15 rejections: 1.6e-9 of t_end, q 4.9e-11; over 0.05, 344 steps: 7.6e-10, q
    1.2e-10)."""
    system = slider_crank.build_coupled(elements=4)[0]
    t_end = revolutions * 2.0 * np.pi / 150.0
    a = _run(system, "numpy", t_end, rtol=1e-3, atol=1e-5)
    b = _run(system, "compiled", t_end, rtol=1e-3, atol=1e-5)
    assert a.n_rejected > 0
    same_steps(a, b, system.n_q, t_rtol, q_tol)
    assert python_calls == []


def pendulum(redundant: bool = False):
    """A planar pendulum (IFToMM A01's bar, 1 kg, 1 m) pinned to the ground; ``redundant``: pinned twice."""
    bar = RigidBody2D("bar", 1.0, 1.0 / 12.0, position=(0.5, 0.0), angle=0.0)
    pins = [PlanarRevolute(None, bar, at=(0.0, 0.0), name="pin")]
    if redundant:
        pins.append(PlanarRevolute(None, bar, at=(0.0, 0.0), name="pin2"))
    return System([bar], pins, gravity=(0.0, -9.81))


@needs_kernel
def test_run_rows_are_the_numpy_rows():
    """`flexmbs.run` (outputs every 0.01 s and the works over every step point, `advance(every_step=True)`)
    of the pendulum at rtol 1e-7: the same outputs and works on both paths, and the compiled path says so."""
    out = {}
    for kernel in ("numpy", "compiled"):
        out[kernel] = fm.run(pendulum(), formulation="index3", method="index3-alpha-adaptive", rtol=1e-7,
                             t_end=1.0, dt_out=0.01, kernel=kernel, refactor="step")
    a, b = out["numpy"], out["compiled"]
    assert a.status == b.status == "finished"
    np.testing.assert_allclose(b.t, a.t, rtol=0, atol=1e-14)
    np.testing.assert_allclose(b.q, a.q, rtol=0, atol=1e-10)
    np.testing.assert_allclose(b.v, a.v, rtol=0, atol=1e-9)
    assert b.metadata.get("kernel", "compiled") != "numpy" and "kernel_reason" not in b.metadata
    assert set(a.energies) == set(b.energies) and any(k.startswith("W_") for k in a.energies)
    for key in a.energies:
        np.testing.assert_allclose(b.energies[key], a.energies[key], rtol=0, atol=1e-9, err_msg=key)


@needs_kernel
def test_step_by_step_is_the_advance():
    """`step` (one kernel call a step) and `simulate` (many a call) take the same steps: the kernel keeps the
    controller's state (h_next, the last divided difference, the consistent accelerations) between calls."""
    from flexmbs.integrators.index3_alpha import Index3AdaptiveAlpha
    system = pendulum()
    problem = ConstrainedProblem(system)
    x0 = problem.state0(system.initial_coordinates(), system.initial_velocities())
    it = Index3AdaptiveAlpha(problem, 0.0, x0, 0.5, rtol=1e-6, atol=1e-8, kernel="compiled")
    ts = [0.0]
    while it.status == "running":
        it.step()
        ts.append(it.t)
    sol = simulate(problem, (0.0, 0.5), x0, method="index3-alpha-adaptive", rtol=1e-6, atol=1e-8, kernel="compiled")
    assert it.status == "finished" and it.kernel == "compiled"
    np.testing.assert_array_equal(np.array(ts), sol.t)
    assert (it.n_rejected, it.n_lu, it.n_rhs) == (sol.n_rejected, sol.n_lu, sol.n_rhs)


def test_redundant_constraints_run_on_the_numpy_path():
    """With `regularization` > 0 (a pin given twice) the projections are least-squares solves: the numpy path
    runs them and says why (``kernel_reason``)."""
    system = pendulum(redundant=True)
    sol = _run(system, "auto", 0.2, rtol=1e-6)
    assert sol.status == "finished" and sol.kernel == "numpy"
    assert "`regularization` > 0" in sol.kernel_reason


def test_the_methods_registry_states_every_alpha_method():
    """flexmbs.kernel_schema.METHODS states for every method of the index-3 correction loop whether the kernel
    steps it, and the adaptive method's refusal there is the reason a run gives."""
    from flexmbs import kernel_schema as schema
    from flexmbs.formulations.registry import ALPHA_METHODS
    assert ALPHA_METHODS <= set(schema.METHODS)
    assert all(v.startswith(("compiled: ", "refused: ")) for v in schema.METHODS.values())
    sol = _run(pendulum(redundant=True), "auto", 0.05, rtol=1e-6)
    assert sol.kernel_reason == schema.METHODS["index3-alpha-adaptive, regularized"][len("refused: "):]


def spatial_affine():
    """tests/test_compiled.py's spatial_driven with laws the kernel evaluates itself: the hub spun by a
    constant_speed angle driver (3 rad/s), the tip lifted by a constant_speed coordinate driver (0.2 m/s from
    z = -0.01), and a bob swinging from the tip on a spherical joint, pushed by a constant point load."""
    z = np.array([0.0, 0.0, 1.0])
    hub = RigidBodyEP("hub", 2.0, [0.1, 0.2, 0.3], angular_velocity=[0.0, 0.0, 3.0])
    tip = RigidBodyEP("tip", 0.3, [1e-3, 2e-3, 3e-3], position=[1.0, 0.0, 0.0])
    bob = RigidBodyEP("bob", 0.2, [1e-3, 1e-3, 1e-3], position=[1.3, -0.2, 0.0],
                      loads=[point_load([0.0, 0.03, 0.01], [0.5, 0.0, 0.2])])
    constraints = [Revolute(None, hub, at=np.zeros(3), axis=z, name="pivot"),
                   AngleDriver(None, hub, z, constant_speed(3.0), name="spin"),
                   Prismatic(None, tip, at=[1.0, 0.0, 0.0], axis=z, name="rail"),
                   CoordinateDriver(tip, 2, constant_speed(0.2, -0.01), name="lift"),
                   Spherical(tip, bob, at=[1.0, 0.0, 0.0], name="ball")]
    return System([hub, tip, bob], constraints, gravity=[0.0, -9.81, -1.0])


def screwed():
    """Two free rigid bodies joined by a Screw (pitch 0.3 m) along a skew axis, under gravity."""
    a = RigidBodyEP("a", 1.0, [0.1, 0.2, 0.3], position=[0.1, 0.2, 0.0])
    b = RigidBodyEP("b", 0.5, [0.01, 0.02, 0.03], position=[0.3, -0.1, 0.2])
    return System([a, b], [Screw(a, b, at=(0.2, 0.0, 0.1), axis=(0.3, 0.4, 0.8), pitch=0.3, name="thread")],
                  gravity=[0.0, 0.0, -9.81])


@needs_kernel
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("build", [test_compiled.zoo, test_compiled.stiffened, test_compiled.spatial_driven,
                                   lambda: triple_pendulum.build("euler-parameters"),
                                   lambda: slider_crank.build_coupled(elements=4)[0], screwed, spatial_affine,
                                   test_compiled.planar_zoo],
                         ids=["zoo", "omega-mean-axis", "spatial-driven", "triple-pendulum", "slider-crank", "screw",
                              "constant-speed", "planar-zoo"])
def test_constraint_rates_are_the_numpy_rates(build):
    """gamma and C_t from the kernel (csrc ``constraint_rates``: the Euler-parameter norms, the mean-axis
    conditions, the joint batch's point, dot1, dot2, dist, angle-driver and screw rows on rigid and flexible
    bodies' markers, planar joints, coordinate drivers) against `System.gamma` and `System.time_derivative`
    away from the assembled configuration (q off by 1e-2, random v): equal to round-off (1e-13 of the
    largest; measured 1.3e-15 at most), gamma's rows not zero (the check is not passed by zeros)."""
    system = build()
    compiled = CompiledSystem(system)
    rng = np.random.default_rng(3)
    n = system.n_q
    for t in (0.0, 0.37):
        q = system.initial_coordinates() + 1e-2 * rng.standard_normal(n)
        v = system.initial_velocities() + 0.5 * rng.standard_normal(n)
        gamma, Ct = compiled.constraint_rates(t, q, v)
        ref_gamma, ref_Ct = system.gamma(t, q, v), system.time_derivative(t, q)
        scale = max(np.abs(ref_gamma).max(), np.abs(ref_Ct).max(), 1.0)
        np.testing.assert_allclose(gamma, ref_gamma, rtol=0, atol=1e-13 * scale)
        np.testing.assert_allclose(Ct, ref_Ct, rtol=0, atol=1e-13 * scale)
        assert np.abs(ref_gamma).max() > 1e-3


@needs_kernel
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("build, t_end, rtol, in_python, t_rtol", [
    ("planar_zoo", 1.0, 1e-9, 3, 1e-12), ("spatial_driven", 1.0, 1e-9, 2, 1e-12),
    ("spatial_affine", 0.4, 1e-6, 0, 3e-12), ("A02", 1.0, 1e-6, 0, 1e-12)],
    ids=["planar", "spatial-drivers", "constant-speed", "A02"])
def test_every_constraint_kind_takes_the_numpy_steps(build, t_end, rtol, in_python, t_rtol, python_calls, caplog):
    """Planar revolutes, prismatic joints to the ground and between bodies and a coordinate driver
    (tests/test_compiled.py's planar zoo, assembled), spatial angle and coordinate drivers (its spatial_driven:
    users' laws; `spatial_affine`: constant_speed's and a constant load), and IFToMM A02 through its first
    singular position (t = 0.70 s): the same trial steps on both paths, t within 1e-12 of t_end (the bob of
    `spatial_affine`, whose first steps are 1e-4 s: 3e-12, measured 1.03e-12 over 0.4 s), q within 1e-10.
    gamma and C_t come from the kernel (csrc ``constraint_rates``); Python is asked for the laws' row
    once per trial step (accepted or rejected) when ``in_python`` groups of it are a user's Python laws (and
    the run's log says which), never otherwise."""
    if build == "A02":
        system, q0, v0, _ = double_four_bar.build(2)
    else:
        system = (spatial_affine if build == "spatial_affine" else getattr(test_compiled, build))()
        q0, v0 = system.initial_coordinates(), system.initial_velocities()
    problem = ConstrainedProblem(system)
    x0 = problem.state0(q0, v0, assemble=build != "A02")
    a = simulate(problem, (0.0, t_end), x0, method="index3-alpha-adaptive", kernel="numpy", refactor="step",
                 rtol=rtol, atol=rtol * 1e-2)
    caplog.set_level("INFO", logger="flexmbs.integrators.index3_alpha")
    b = simulate(problem, (0.0, t_end), x0, method="index3-alpha-adaptive", kernel="compiled", refactor="step",
                 rtol=rtol, atol=rtol * 1e-2)
    assert a.n_steps >= 8
    same_steps(a, b, system.n_q, t_rtol, 1e-10)
    assert len(CompiledSystem(system).python_laws) == in_python
    assert len(python_calls) == (b.n_steps + b.n_rejected if in_python else 0)
    said = [r.getMessage() for r in caplog.records if "asks Python once per trial step" in r.getMessage()]
    assert len(said) == (1 if in_python else 0)


@needs_kernel
def test_outputs_handed_over_in_parts_give_the_same_rows(monkeypatch):
    """A call of the kernel gets the output times of its first trial step and at least as many more as it
    may take steps (`_handed_over`), and stops before a trial step that reaches the first one it was not
    given; the next call takes that trial.  With 64 outputs a call (the first call's 64 steps) and about 15
    outputs a step (4001 outputs, 268 steps), the rows and the steps are those of the numpy path and of calls
    handed all the outputs."""
    from flexmbs.integrators import index3_alpha
    system = pendulum()
    t_eval = np.linspace(0.0, 1.0, 4001)
    a = _run(system, "numpy", 1.0, t_eval=t_eval, rtol=1e-6, atol=1e-8)
    monkeypatch.setattr(index3_alpha, "CHUNK_SECONDS", 0.0)        # 16 steps a call after the first
    monkeypatch.setattr(index3_alpha, "OUTPUTS_PER_CALL", 16)       # and 64 outputs: a few steps
    b = _run(system, "compiled", 1.0, t_eval=t_eval, rtol=1e-6, atol=1e-8)
    monkeypatch.setattr(index3_alpha, "CHUNK_SECONDS", 1e3)
    monkeypatch.setattr(index3_alpha, "OUTPUTS_PER_CALL", 10 ** 6)
    c = _run(system, "compiled", 1.0, t_eval=t_eval, rtol=1e-6, atol=1e-8)
    assert a.n_steps > 50 and a.n_steps * 10 < len(t_eval) and b.n_lu == a.n_lu
    np.testing.assert_array_equal(b.t, t_eval)
    np.testing.assert_array_equal(b.x, c.x)
    assert (b.n_steps, b.n_rejected, b.n_lu) == (c.n_steps, c.n_rejected, c.n_lu) == (a.n_steps, a.n_rejected, a.n_lu)
    np.testing.assert_allclose(b.x, a.x, rtol=0, atol=1e-10)


@needs_kernel
def test_law_row_is_the_tabulated_row():
    """`CompiledSystem.law_row` (one time, what the adaptive kernel asks at each trial step) writes the row
    `tabulate` gives: the angle and coordinate drivers' (f, f', f'') and the loads' vectors of t (the planar
    zoo: a coordinate driver, a torque law and a force law)."""
    from flexmbs.compiled import CompiledSystem
    c = CompiledSystem(test_compiled.planar_zoo())
    table, failure = c.tabulate([0.37])
    row = np.full(table.shape[1], np.nan)
    c.law_row(0.37, row)
    assert failure is None and table.shape[1] > 3
    np.testing.assert_array_equal(row, table[0])
