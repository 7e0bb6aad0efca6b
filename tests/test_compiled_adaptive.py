"""index3-alpha-adaptive on the compiled kernel (csrc/index3_kernel.c, ``Adaptive``) against the numpy path
(`flexmbs.integrators.index3_alpha.Index3AdaptiveAlpha`): the same trial steps, rejections, evaluations and
LUs, the accepted times and states to the round-off that the error estimate amplifies, and the rows of
`flexmbs.run` (outputs and step points) on both paths."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.compiled import kernel_status
from flexmbs.constraints.planar import PlanarRevolute
from flexmbs.bodies import RigidBody2D
from flexmbs.integrators import ConstrainedProblem, simulate
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


def same_steps(a, b, n, t_rtol, q_tol):
    """The same trial steps (counts equal) and accepted times and positions within the given tolerances."""
    assert a.status == b.status == "finished", (a.message, b.message)
    assert b.kernel == "compiled" and a.kernel == "numpy"
    assert (a.n_steps, a.n_rejected, a.n_lu, a.n_jac, a.n_rhs) == (b.n_steps, b.n_rejected, b.n_lu, b.n_jac, b.n_rhs)
    assert a.t.shape == b.t.shape
    assert np.abs(a.t - b.t).max() <= t_rtol * a.t[-1]
    assert np.abs(a.x[:, :n] - b.x[:, :n]).max() <= q_tol


@needs_kernel
def test_triple_pendulum_takes_the_numpy_steps():
    """The triple pendulum (Euler parameters, three spherical joints) over 1 s at rtol 1e-6: 248 steps and 6
    rejections on both paths; accepted t's within 1e-12 of t_end, q within 1e-10 (measured 4.3e-13 and 4.1e-12)."""
    system = triple_pendulum.build("euler-parameters")
    a = _run(system, "numpy", 1.0, rtol=1e-6, atol=1e-8)
    b = _run(system, "compiled", 1.0, rtol=1e-6, atol=1e-8)
    assert a.n_rejected > 0                        # the rejection branch runs on both paths
    same_steps(a, b, system.n_q, 1e-12, 1e-10)


@needs_kernel
@pytest.mark.parametrize("revolutions, t_rtol, q_tol", [
    (0.01, 1e-8, 1e-9), pytest.param(0.05, 1e-8, 1e-9, marks=pytest.mark.slow)], ids=["0.01", "0.05"])
def test_slider_crank_takes_the_numpy_steps(revolutions, t_rtol, q_tol):
    """The coupled slider-crank (4 beam elements, an AngleDriver whose law the kernel asks of Python at each
    trial step) at rtol 1e-3: the same trial steps, rejections, evaluations and LUs.  The times and q agree
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


@needs_kernel
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("build, t_end, rtol", [("planar_zoo", 1.0, 1e-9), ("spatial_driven", 1.0, 1e-9),
                                                ("A02", 1.0, 1e-6)], ids=["planar", "spatial-drivers", "A02"])
def test_every_constraint_kind_takes_the_numpy_steps(build, t_end, rtol):
    """Planar revolutes, prismatic joints to the ground and between bodies and a coordinate driver (gamma and
    C_t from the kernel, csrc ``planar_terms``; tests/test_compiled.py's planar zoo, assembled), spatial
    angle and coordinate drivers (C_t and gamma asked of Python), and IFToMM A02 through its first singular
    position (t = 0.70 s): the same trial steps on both paths, t within 1e-12 of t_end, q within 1e-10."""
    if build == "A02":
        system, q0, v0, _ = double_four_bar.build(2)
    else:
        system = getattr(test_compiled, build)()
        q0, v0 = system.initial_coordinates(), system.initial_velocities()
    problem = ConstrainedProblem(system)
    x0 = problem.state0(q0, v0, assemble=build != "A02")
    a, b = (simulate(problem, (0.0, t_end), x0, method="index3-alpha-adaptive", kernel=k, refactor="step",
                     rtol=rtol, atol=rtol * 1e-2) for k in ("numpy", "compiled"))
    assert a.n_steps >= 8
    same_steps(a, b, system.n_q, 1e-12, 1e-10)


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
