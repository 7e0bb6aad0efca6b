"""The works of a System run accumulated at every step (issues 22 and 25: what a run prints): the
trapezoidal rule over index3-alpha's steps with its own multipliers, on the compiled and the numpy
path (`flexmbs.system_run.step_powers`, `flexmbs.integrators.simulate.trapezoid_over_steps`), or
Gauss on the dense output of every step for the methods without multipliers
(`flexmbs.system_run.gauss_powers`); streamed with the outputs, so a stopped run keeps them.

The balance total(t) - total(t0) = W_loads + W_drivers + W_stiffening - W_damping then closes to the
integrator's error: the same whatever the outputs, second order in h."""
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import RigidBody2D
from flexmbs.bodies.loads import torque_load
from flexmbs.compiled import kernel_status
from flexmbs.constraints import CoordinateDriver, JointLimit
from flexmbs.constraints.planar import PlanarRevolute
from flexmbs.forces import SpringDamper
from flexmbs.system import System

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason=f"the kernel is {kernel_status()}")
KERNELS = [pytest.param("compiled", marks=needs_kernel), "numpy"]
W = 10.0                        # rad/s of the crank's law


def crank_law(t):
    """theta(t) = (1 - cos(W t)) / 2 and its two derivatives (at rest at t = 0)."""
    return 0.5 * (1.0 - np.cos(W * t)), 0.5 * W * np.sin(W * t), 0.5 * W * W * np.cos(W * t)


def driven_pendulum(torque=None):
    """A planar double pendulum whose first link (0.3 m) is driven by a CoordinateDriver on its angle,
    the second (0.4 m) hanging free on a pin, held by a damped spring to the ground, under gravity,
    optionally with a torque law ``torque(t)`` on the second link: works of the driver (W_drivers),
    the damper (W_damping) and the torque (W_loads)."""
    crank = RigidBody2D("crank", 1.0, 1.0 * 0.3 ** 2 / 12, position=(0.15, 0.0))
    link = RigidBody2D("link", 0.5, 0.5 * 0.4 ** 2 / 12, position=(0.5, 0.0),
                       loads=[] if torque is None else [torque_load(torque)])
    joints = [PlanarRevolute(None, crank, at=(0.0, 0.0), name="pivot"),
              PlanarRevolute(crank, link, at=(0.3, 0.0), name="elbow"),
              CoordinateDriver(crank, 2, crank_law, name="drive")]
    spring = SpringDamper(link, (0.2, 0.0), None, (0.9, -0.3), 40.0, damping=0.8, name="spring")
    return System([crank, link], joints, gravity=(0.0, -9.81), forces=[spring])


def run(system, h, every, t_end=0.2, store=False, **options):
    n = int(round(t_end / h))
    return fm.run(system, method="index3-alpha", h=h, t_end=n * h, t_eval=np.arange(0, n + 1, every) * h,
                  rho_inf=0.9, store=store, **options)


def works(res):
    return np.column_stack([res.energies[k] for k in ("W_loads", "W_drivers", "W_damping", "W_stiffening")])


@pytest.mark.parametrize("kernel", KERNELS)
def test_works_do_not_depend_on_the_outputs(kernel):
    """The same steps (h = 1 ms) with an output at every step and at every 20th: the works and the
    balance error at the common outputs are the same to round-off (the sum runs over the steps)."""
    every, sparse = (run(driven_pendulum(), 1e-3, k, kernel=kernel) for k in (1, 20))
    assert every.metadata["kernel"] == sparse.metadata["kernel"] == kernel
    np.testing.assert_array_equal(sparse.t, every.t[::20])
    np.testing.assert_allclose(works(sparse), works(every)[::20], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(sparse.energy_balance_error(), every.energy_balance_error()[::20], atol=1e-12)
    e = every.energies
    assert abs(e["W_drivers"][-1]) > 0.1 and e["W_damping"][-1] > 1e-3     # both do work
    assert np.all(np.diff(e["W_damping"]) >= 0)


def test_balance_error_is_second_order_in_h():
    """index3-alpha is second order: halving h divides the largest balance error by 4 (measured
    7.10e-5, 1.77e-5, 4.43e-6 J at h = 2, 1, 0.5 ms, W_drivers = 3.18 J, W_damping = 0.378 J), with
    outputs every 20 ms (the old trapezoid over these outputs left 1.9e-2 J at h = 0.5 ms)."""
    errors = [np.abs(run(driven_pendulum(), h, int(round(0.02 / h))).energy_balance_error()).max()
              for h in (2e-3, 1e-3)]
    assert errors[0] / errors[1] > 3.0, errors              # at least second order (measured 6.6)
    assert errors[1] < 1e-3


@needs_kernel
def test_compiled_and_numpy_paths_give_the_same_works():
    """The same steps and the same Newton decisions (refactor "step") on both paths: the same works
    to round-off of the states (the paths' LUs differ in the last digits)."""
    a, b = (run(driven_pendulum(), 1e-3, 10, kernel=k, refactor="step") for k in ("numpy", "compiled"))
    assert b.metadata["kernel"] == "compiled"
    np.testing.assert_allclose(works(a), works(b), rtol=1e-9, atol=1e-12)


def stopped(t):
    """A torque law whose sensor is lost at t = 0.1 s."""
    if t > 0.1 + 1e-12:
        raise ValueError("the torque sensor is lost")
    return 0.2 * np.sin(30.0 * t)


@pytest.mark.parametrize("kernel", KERNELS)
def test_a_run_that_fails_part_way_keeps_its_works(kernel, tmp_path):
    """The torque law fails at t = 0.1 s: the run stops ("failed"), and its works, also those read back
    from the results file, equal the full run's at the common outputs."""
    full = run(driven_pendulum(lambda t: 0.2 * np.sin(30.0 * t)), 1e-3, 5, kernel=kernel)
    cut = run(driven_pendulum(stopped), 1e-3, 5, kernel=kernel, store=tmp_path / "results.h5")
    assert full.status == "finished" and cut.status == "failed", cut.message
    assert "torque sensor is lost" in cut.message
    n = len(cut.t)
    assert 10 < n < len(full.t)
    assert abs(full.energies["W_loads"][n - 1]) > 1e-4                # the torque did work
    np.testing.assert_allclose(works(cut), works(full)[:n], rtol=1e-12, atol=1e-15)
    back = fm.load_results(tmp_path)
    np.testing.assert_array_equal(works(back), works(cut))


@needs_kernel
@pytest.mark.parametrize("kernel", ["compiled"])          # the numpy path's 3000 steps take 15 s
def test_joint_stop_closes_its_balance_to_the_integrators_error(kernel):
    """A bar falling onto a stop (k = 1e5 N m/rad, e = 0.6; tests/test_joints_limits.py): its
    dissipated work closes the balance to the integrator's error, whatever the outputs, and halving h
    divides it by at least 3 (measured 8.39e-4, 1.28e-4, 3.36e-5 J at h = 80, 40, 20 us of W_damping
    = 1.136 J: ratios 6.6 then 3.8, second order once h resolves the impact)."""
    def bar():
        c = np.array([0.5, 0.0])
        body = RigidBody2D("bar", 1.0, 1.0 / 12, position=c, velocity=-3.0 * np.array([-c[1], c[0]]),
                           angular_velocity=-3.0)
        pin = PlanarRevolute(None, body, at=(0.0, 0.0), name="pin")
        return System([body], [pin], gravity=(0.0, -9.81),
                      forces=[JointLimit(pin, lower=-0.05, stiffness=1e5, restitution=0.6, name="stop")])
    errors = []
    for h in (8e-5, 4e-5):
        every = int(round(1e-3 / h))
        dense, sparse = (run(bar(), h, k, t_end=0.045, kernel=kernel) for k in (1, every))
        np.testing.assert_allclose(sparse.energy_balance_error(), dense.energy_balance_error()[::every],
                                   atol=1e-12)
        assert dense.energies["W_damping"][-1] > 0.1
        errors.append(np.abs(dense.energy_balance_error()).max())
    assert errors[0] / errors[1] > 3.0, errors              # at least second order (measured 6.6)


def test_an_adaptive_method_integrates_the_works_on_its_dense_output():
    """DOP853 (no multipliers of its own): Gauss on the dense output of every step with the multipliers
    recovered at its points; the balance closes to the integrator's tolerance even with outputs every
    20 ms (measured 3.6e-9 J of W_drivers = 3.18 J at rtol = 1e-10; 4.4e-9 J with outputs every 1 ms,
    the same W_drivers at the end to the last digit)."""
    res = fm.run(driven_pendulum(), method="DOP853", rtol=1e-10, atol=1e-12, t_end=0.2, dt_out=0.02, store=False)
    assert res.status == "finished"
    assert res.energies["W_drivers"][-1] == pytest.approx(3.1750844, rel=1e-6)   # index3-alpha's to O(h^2) above
    assert np.abs(res.energy_balance_error()).max() < 1e-7


@pytest.mark.parametrize("order, n", [(1, 1), (2, 2), (4, 3), (5, 3), (8, 5), (12, 5)])
def test_step_rule_has_the_points_the_order_needs_and_its_partial_weights_integrate_exactly(order, n):
    """`step_rule(p)` has n = p // 2 + 1 points (at most 5), exact to degree 2n - 1 over the step;
    w(s) . P(xi) = int_0^s P for P of degree < n (the polynomial through the n Gauss values), and w(1)
    is the Gauss rule itself, so an output at a step's end gets the step's sum."""
    from flexmbs.integrators.simulate import step_rule
    rule = step_rule(order)
    assert len(rule.xi) == n
    c = np.array([0.3, -1.2, 0.7, 2.0, -0.4, 1.1, 0.6, -0.8, 0.25, 0.9, 0.5])     # P(s) = sum c_k s^k
    full = c[:2 * n]
    assert rule.w @ sum(ck * rule.xi ** k for k, ck in enumerate(full)) == pytest.approx(
        sum(ck / (k + 1) for k, ck in enumerate(full)), abs=1e-14)
    low = c[:n]
    for s in (0.0, 0.17, 0.5, 0.93, 1.0):
        exact = sum(ck * s ** (k + 1) / (k + 1) for k, ck in enumerate(low))
        values = sum(ck * rule.xi ** k for k, ck in enumerate(low))
        assert rule.partial_weights(s) @ values == pytest.approx(exact, abs=1e-14)
    np.testing.assert_allclose(rule.partial_weights(1.0), rule.w, atol=1e-15)
    wrong = sum(ck * rule.xi ** k for k, ck in enumerate(c[:2 * n + 1]))       # degree 2n: not exact
    assert abs(rule.w @ wrong - sum(ck / (k + 1) for k, ck in enumerate(c[:2 * n + 1]))) > 1e-8


def test_trapezoid_over_steps_does_not_depend_on_how_the_rows_are_grouped():
    """One call over six step points and an output, or three calls over its pieces: the same sums,
    bit for bit (sequential sum), and the output inside a step gets the trapezoid to it."""
    from flexmbs.integrators.simulate import trapezoid_over_steps
    t = np.array([0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6])
    is_step = np.array([True, True, False, True, True, True, True])
    P = np.column_stack([np.sin(7 * t), t ** 2])
    start = (0.0, np.zeros(2), np.zeros(2))
    whole, _ = trapezoid_over_steps(start, t, P, is_step, 1e-12)
    parts, carry = [], start
    for sl in (slice(0, 3), slice(3, 4), slice(4, 7)):
        W, carry = trapezoid_over_steps(carry, t[sl], P[sl], is_step[sl], 1e-12)
        parts.append(W)
    np.testing.assert_array_equal(np.vstack(parts), whole)
    np.testing.assert_allclose(whole[2], whole[1] + 0.05 * (P[1] + P[2]) / 2, rtol=1e-15)


def test_drivers_power_at_many_rows_at_once_is_the_power_row_by_row():
    """`System.power_history` takes the joints' C_t at all rows at once (the coupled slider-crank's
    AngleDriver in the joint batch): the same as lam . C_t one row at a time (`System.time_derivative`)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
    try:
        from slider_crank import build_coupled
    finally:
        sys.path.pop(0)
    system = build_coupled(elements=2)[0]
    res = fm.run(system, method="index3-alpha", h=5e-5, t_end=2e-3, dt_out=1e-4, store=False)
    P = system.power_history(res.t, res.q, res.v, res.multipliers)["drivers"]
    rows = np.array([lk @ system.time_derivative(tk, qk) for tk, qk, lk in zip(res.t, res.q, res.multipliers)])
    assert np.abs(rows).max() > 1.0
    np.testing.assert_allclose(P, rows, rtol=1e-13, atol=1e-12 * np.abs(rows).max())


@pytest.mark.parametrize("kernel", KERNELS)
def test_an_interrupted_run_keeps_its_works_in_the_results_file(kernel, tmp_path):
    """Ctrl-C at t = 0.1 s (a KeyboardInterrupt from ``on_output``): the file says "interrupted" and
    keeps the works of every output written, equal to the full run's."""
    full = run(driven_pendulum(), 1e-3, 5, kernel=kernel)

    def stop(t, x):
        if t > 0.1:
            raise KeyboardInterrupt("Ctrl-C")
    with pytest.raises(KeyboardInterrupt):
        run(driven_pendulum(), 1e-3, 5, kernel=kernel, store=tmp_path / "results.h5", on_output=stop)
    back = fm.load_results(tmp_path)
    n = len(back.t)
    assert back.status == "interrupted" and 15 < n < len(full.t)
    np.testing.assert_allclose(works(back), works(full)[:n], rtol=1e-12, atol=1e-15)


def gauss_points_per_call(monkeypatch):
    """The number of points of each call of the works' integrand (`system_run.gauss_powers`), recorded."""
    import flexmbs.system_run as system_run
    sizes, made = [], system_run.gauss_powers

    def counting(system, form):
        integrand = made(system, form)

        def counted(t, x):
            sizes.append(np.size(t))
            return integrand(t, x)
        counted.vectorized, counted.smooth = integrand.vectorized, integrand.smooth
        return counted
    monkeypatch.setattr(system_run, "gauss_powers", counting)
    return sizes


@pytest.mark.parametrize("method, options, points", [("midpoint", dict(h=1e-3), 2), ("AB4", dict(h=1e-3), 3),
                                                     ("RK45", dict(rtol=1e-8), 5)])
def test_the_works_take_the_gauss_points_the_method_needs(monkeypatch, method, options, points):
    """Each step's works are evaluated at p // 2 + 1 Gauss points for a fixed-step method of order p
    (midpoint 2, AB4 4) and at 5 for an adaptive one, in one call per step (the first call is the
    start's one point)."""
    sizes = gauss_points_per_call(monkeypatch)
    res = fm.run(driven_pendulum(), formulation="lagrange", method=method, t_end=0.05, dt_out=0.01, store=False,
                 **options)
    assert res.success
    assert set(sizes[1:]) == {points}
    assert len(sizes) - 1 == res.stats["n_steps"]


def test_a_stop_is_not_smooth_and_takes_the_most_points(monkeypatch):
    """A joint stop's power has a kink where the stop begins: the works of a run with one take 5 points
    a step whatever the method's order (`ForceElement.smooth`)."""
    sizes = gauss_points_per_call(monkeypatch)
    system = driven_pendulum()
    stop = JointLimit(system.constraint("elbow"), upper=0.2, stiffness=1e3, restitution=0.5)
    system = System(system.bodies, system.constraints[system.n_internal:], gravity=system.gravity,
                    forces=list(system.force_elements) + [stop])
    res = fm.run(system, formulation="lagrange", method="midpoint", h=1e-3, t_end=0.01, dt_out=1e-3, store=False)
    assert res.success
    assert set(sizes[1:]) == {5}


@pytest.mark.parametrize("formulation, method", [("hamilton", "midpoint"), ("lagrange", "AB4")])
def test_fewer_gauss_points_leave_the_balance_error_the_integrator_s(monkeypatch, formulation, method):
    """The balance error with the points of `step_rule` (2 for midpoint, 3 for AB4) is the one with five
    points to 1e-4 of itself (measured 1.3513e-4 J both; 4.30605e-6 J both, at h = 2 ms): the
    quadrature's share is below the method's error (with Hamilton's form the driver's multipliers
    are recovered at every point).  With one point fewer it is not (midpoint: a smaller error by a
    cancellation, 4.8e-5 J; AB4: 4.3039e-6 J), so the test can fail."""
    import flexmbs.integrators.simulate  # noqa: F401  (the module, not the function of the package)
    simulate_module = sys.modules["flexmbs.integrators.simulate"]
    rule = simulate_module.step_rule
    errors = {}
    for points in (None, 5, "fewer"):
        if points is not None:
            n = 5 if points == 5 else rule(2 if method == "midpoint" else 4).xi.size - 1
            monkeypatch.setattr(simulate_module, "step_rule", lambda order, smooth=True, adaptive=False, n=n:
                                rule(2 * n - 1))
        res = fm.run(driven_pendulum(), formulation=formulation, method=method, h=2e-3, t_end=0.2, dt_out=0.02,
                     store=False)
        monkeypatch.setattr(simulate_module, "step_rule", rule)
        assert res.success
        errors[points] = np.abs(res.energy_balance_error()).max()
    assert errors[5] > 1e-6                                              # a measurable integrator's error
    assert errors[None] == pytest.approx(errors[5], rel=1e-4), errors
    assert errors["fewer"] != pytest.approx(errors[5], rel=1e-4), errors


def test_the_works_of_a_contact_say_they_are_not_smooth():
    """The bouncing ball's works (a contact: its dissipated power begins with a kink) are declared not
    smooth, so every method integrates them with 5 points a step (docs/benchmarks.md, 28.1: its balance
    error is the quadrature's, 0.0108 J with 5 points and 0.0149 J with 3)."""
    import flexmbs.system_run as system_run
    from flexmbs.formulations.registry import choose
    from flexmbs.integrators import INTEGRATORS
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
    import bouncing_ball
    ball = bouncing_ball.build(dict(bouncing_ball.DEFAULTS))
    entry, _ = choose("lagrange", "RK45", INTEGRATORS)
    assert system_run.gauss_powers(ball, entry.system(ball)).smooth is False
    pendulum = driven_pendulum()
    assert system_run.gauss_powers(pendulum, entry.system(pendulum)).smooth is True
