"""index3-alpha's coefficient sets (Newmark, HHT) and its step-size control (index3-alpha-adaptive).

Closed forms: the pendulum of cases/pendulum_a01.py (elliptic functions), the one-degree-of-freedom
solution of the double four-bar (cases/double_four_bar.py `exact`), and the amplification matrix of
the Newmark-family recurrence on a linear oscillator (below, from the published relations).
"""
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import RigidBody2D
from flexmbs.bodies.loads import spring_to_ground
from flexmbs.compiled import kernel_status
from flexmbs.constraints import PlanarPrismatic
from flexmbs.integrators import (INTEGRATORS, ConstrainedProblem, Index3AdaptiveAlpha, Index3GeneralizedAlpha,
                                 Index3HHT, Index3Newmark, simulate)
from flexmbs.integrators.index3_alpha import SCHEMES, local_error_coefficients
from flexmbs.system import System

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import double_four_bar  # noqa: E402
import pendulum_a01  # noqa: E402

SCHEME_CLASSES = [Index3GeneralizedAlpha, Index3HHT, Index3Newmark]


def pendulum_problem():
    system, _ = pendulum_a01.build()
    problem = ConstrainedProblem(system)
    q0 = system.initial_coordinates()
    return problem, problem.state0(q0, 0 * q0)


def pendulum_error(method, t_end=1.0, t_eval=None, **options):
    """(max |P1 - exact| over the outputs, Solution) of a run on the pendulum A01."""
    problem, x0 = pendulum_problem()
    sol = simulate(problem, (0.0, t_end), x0, method=method, t_eval=t_eval, **options)
    assert sol.success, sol.message
    return float(np.abs(sol.x[:, :2] - pendulum_a01.exact(sol.t)).max()), sol


# -- the coefficient sets --------------------------------------------------------------------------
def amplification_matrix(scheme, rho_inf, omega_h):
    """A with (q, h v, h^2 a)_{n+1} = A (q, h v, h^2 a)_n for q'' = -omega^2 q, from the relations of
    Arnold and Bruls (doi:10.1007/s11044-007-9084-0, eqs. 7-8) with the scheme's coefficients:
    q1 = q0 + h v0 + h^2 (1/2 - beta) a0 + h^2 beta a1,  v1 = v0 + h (1 - gamma) a0 + h gamma a1,
    (1 - alpha_m) a1 + alpha_m a0 = -(1 - alpha_f) omega^2 q1 - alpha_f omega^2 q0."""
    am, af, gamma, beta = SCHEMES[scheme](rho_inf)
    w2 = omega_h ** 2
    L = np.array([[1.0, 0.0, -beta], [0.0, 1.0, -gamma], [(1 - af) * w2, 0.0, 1 - am]])
    R = np.array([[1.0, 1.0, 0.5 - beta], [0.0, 1.0, 1 - gamma], [-af * w2, 0.0, -am]])
    return np.linalg.solve(L, R)


@pytest.mark.parametrize("cls", SCHEME_CLASSES, ids=lambda c: c.name)
@pytest.mark.parametrize("rho_inf", [0.6, 0.8, 0.95])
def test_spectral_radius_at_infinite_frequency_is_rho_inf(cls, rho_inf):
    """Each coefficient set damps the unresolved frequencies as it states: the spectral radius of
    its amplification matrix at omega h = 1e8 is rho_inf (Chung and Hulbert, doi:10.1115/1.2900803,
    eq. 25; HHT: (1 - alpha)/(1 + alpha); Newmark with beta = (gamma + 1/2)^2/4: the double root
    (gamma - 3/2)/(gamma + 1/2) = -rho_inf, docs/integrators.md)."""
    radius = np.abs(np.linalg.eigvals(amplification_matrix(cls.scheme, rho_inf, 1e8))).max()
    assert radius == pytest.approx(rho_inf, rel=1e-4)     # a double root: sensitive to round-off


def oscillator_run(method, omega_h, steps, h=1e-3, rho_inf=0.8, kernel="auto"):
    """A block on a prismatic slide held by a linear spring (omega = omega_h / h, x0 = 1 mm): x at
    every step."""
    m, far = 2.0, 1e3                                      # anchor far away on the line: the force is -k x
    k = m * (omega_h / h) ** 2
    block = RigidBody2D("block", m, 0.1, position=(1e-3, 0.0), loads=[spring_to_ground((0, 0), (-far, 0), k, far)])
    system = System([block], [PlanarPrismatic(None, block, at=(0.0, 0.0), axis=(1.0, 0.0), name="slide")])
    problem = ConstrainedProblem(system)
    q0 = system.initial_coordinates()
    sol = simulate(problem, (0.0, steps * h), problem.state0(q0, 0 * q0), method=method, h=h,
                   rho_inf=rho_inf, kernel=kernel)
    assert sol.success, sol.message
    return sol.x[:, 0], sol.kernel


@pytest.mark.parametrize("cls", SCHEME_CLASSES, ids=lambda c: c.name)
@pytest.mark.parametrize("kernel", ["numpy", "compiled"])
def test_linear_oscillator_follows_the_closed_form_of_its_recurrence(cls, kernel):
    """x_n of the run = first row of A^n (x0, 0, -omega^2 h^2 x0) (a_0 = qdd_0), at omega h = 1 over
    60 steps, on both paths; and the numerical damping: the amplitude of the resolved mode decays
    by the principal root of A per step (Newmark damps it at first order, (gamma - 1/2) omega h / 2
    per radian: here 2.8e-2; generalized-alpha and HHT at third order)."""
    omega_h, steps = 1.0, 60
    x, ran = oscillator_run(cls.name, omega_h, steps, kernel=kernel)
    assert ran == kernel
    A = amplification_matrix(cls.scheme, 0.8, omega_h)
    z = np.array([1e-3, 0.0, -omega_h ** 2 * 1e-3])
    closed = [z[0]]
    for _ in range(steps):
        z = A @ z
        closed.append(z[0])
    np.testing.assert_allclose(x, closed, rtol=0, atol=1e-9 * 1e-3)
    # the damping of the resolved mode: |principal root| < 1, the less the higher the order
    lam = np.linalg.eigvals(A)
    principal = np.abs(lam[np.argmax(np.abs(lam.imag))])
    assert principal < 1.0
    if cls is Index3Newmark:
        gamma = SCHEMES["newmark"](0.8)[2]
        # damping ratio per step, closed form to first order: -ln|lam| ~ (gamma - 1/2) omega_h^2 / 2
        assert -np.log(principal) == pytest.approx((gamma - 0.5) * omega_h ** 2 / 2, rel=0.3)


@pytest.mark.parametrize("cls, order", [(Index3HHT, 2), (Index3Newmark, 1), (Index3GeneralizedAlpha, 2)],
                         ids=lambda c: getattr(c, "name", str(c)))
def test_order_of_each_scheme_on_the_pendulum(cls, order):
    """Global error at t = 1 s against the closed form ~ h^order (the declared one)."""
    hs = [4e-3, 2e-3, 1e-3]
    errors = [pendulum_error(cls.name, h=h, t_eval=[0.0, 1.0])[0] for h in hs]
    slope = np.polyfit(np.log(hs), np.log(errors), 1)[0]
    print(f"{cls.name}: errors {errors}, order {slope:.2f}")
    assert cls.order == order
    assert abs(slope - order) < 0.3


@pytest.mark.parametrize("method", ["hht", "newmark"])
def test_both_paths_take_the_same_steps(method):
    """The coefficient sets run in the compiled kernel's correction loop as on the numpy path."""
    x_numpy, _ = oscillator_run(method, 0.3, 40, kernel="numpy")
    x_kernel, _ = oscillator_run(method, 0.3, 40, kernel="compiled")
    np.testing.assert_allclose(x_kernel, x_numpy, rtol=0, atol=1e-12)


# -- step-size control ------------------------------------------------------------------------------
def test_local_error_coefficients_of_the_trapezoidal_limit():
    """rho_inf -> 1: alpha_m = alpha_f = 1/2, gamma = 1/2, beta = 1/4, the trapezoidal rule in v
    (local error h^3 q''''/12) and c_q = 1/12 (Zienkiewicz and Xie's (beta - 1/6) for delta = 0)."""
    c_q, c_v = local_error_coefficients(*SCHEMES["generalized-alpha"](1.0))
    assert c_q == pytest.approx(1 / 12) and c_v == pytest.approx(1 / 12)


def test_adaptive_error_on_the_pendulum_scales_with_rtol():
    """The error at the outputs falls with rtol like rtol^(2/3) (a per-step control of an O(h^3)
    local error: h ~ rtol^(1/3), global error ~ h^2); the steps grow like rtol^(-1/3)."""
    rtols = [1e-5, 1e-6, 1e-7]
    runs = [pendulum_error("index3-alpha-adaptive", t_end=1.0, t_eval=np.linspace(0, 1, 11), rtol=r, atol=r)
            for r in rtols]
    errors = [e for e, _ in runs]
    steps = [sol.n_steps for _, sol in runs]
    slope = np.polyfit(np.log(rtols), np.log(errors), 1)[0]
    step_slope = np.polyfit(np.log(rtols), np.log(steps), 1)[0]
    print(f"errors {errors}, slope {slope:.2f}; steps {steps}, slope {step_slope:.2f}")
    assert 0.5 < slope < 0.9
    assert -0.45 < step_slope < -0.25
    assert errors[-1] < 1e-4
    path = "compiled" if kernel_status().installed else "numpy"     # the kernel steps it too (test_compiled_adaptive.py)
    assert all(sol.kernel == path and sol.method == "index3-alpha-adaptive" for _, sol in runs)


def test_adaptive_rejects_a_too_large_first_step_and_counts_it():
    """A first trial step of 0.3 s (a sixth of the pendulum's period) is rejected: the first step
    taken is shorter and counted in ``n_rejected``; `simulate` reports the integrator's count, and
    the run still meets the accuracy of a run from the default first step."""
    problem, x0 = pendulum_problem()
    it = Index3AdaptiveAlpha(problem, 0.0, x0, 1.0, h=0.3, rtol=1e-6, atol=1e-6)
    it.step()
    assert it.n_rejected >= 1 and 0.0 < it.t < 0.3 * 0.9 ** (1 / 3) and it.status == "running"
    err, sol = pendulum_error("index3-alpha-adaptive", t_end=1.0, t_eval=[0.0, 1.0], h=0.3, rtol=1e-6, atol=1e-6)
    err_default, _ = pendulum_error("index3-alpha-adaptive", t_end=1.0, t_eval=[0.0, 1.0], rtol=1e-6, atol=1e-6)
    assert sol.n_rejected >= it.n_rejected
    assert err < 3 * err_default + 1e-6


def test_adaptive_dense_outputs_are_as_accurate_as_its_steps():
    """Outputs every 2 ms (more outputs than steps) from the cubic Hermite of (q, v) and (v, qdd) on
    each step: their error is that of the step points."""
    err_steps, sol_steps = pendulum_error("index3-alpha-adaptive", t_end=1.0, rtol=1e-6, atol=1e-6)
    err_dense, sol_dense = pendulum_error("index3-alpha-adaptive", t_end=1.0, t_eval=np.linspace(0, 1, 501),
                                          rtol=1e-6, atol=1e-6)
    assert sol_dense.n_steps == sol_steps.n_steps < 500
    assert len(sol_dense.t) == 501
    assert err_dense <= 1.5 * err_steps
    # the velocities at the outputs: P1' of the closed form by central differences of exact()
    problem, _ = pendulum_problem()
    t = sol_dense.t[1:-1]
    v_exact = (pendulum_a01.exact(t + 1e-6) - pendulum_a01.exact(t - 1e-6)) / 2e-6
    assert np.abs(sol_dense.x[1:-1, 3:5] - v_exact).max() < 20 * err_steps + 1e-6


def test_adaptive_on_the_double_four_bar_through_its_singular_configurations():
    """IFToMM A02 (two four-bars, redundant constraints, singular at every half turn): B0 against the
    exact one-degree-of-freedom solution at t = 1 s; the error falls with rtol."""
    system, q0, v0, crank0 = double_four_bar.build(2)
    errors = []
    for rtol in (1e-4, 1e-5):
        res = fm.run(system, formulation="index3", method="index3-alpha-adaptive", rtol=rtol, t_end=1.0,
                     t_eval=[0.0, 0.5, 1.0], q0=q0, v0=v0)
        assert res.status == "finished", res.message
        B0, _ = double_four_bar.tip_motion(res.bodies[crank0.name])
        errors.append(float(np.abs(B0 - double_four_bar.exact(res.t, 2)[0]).max()))
    print("A02 errors at rtol 1e-4, 1e-5:", errors)
    assert errors[1] < errors[0] / 2.5 and errors[1] < 3e-3


def test_adaptive_on_andrews_squeezer_against_a_fine_fixed_step():
    """IFToMM A03 (Andrews' squeezer, stiff spring) over its first 3 ms against index3-alpha at
    h = 2e-7 (error about 1e-8 there): the error falls with rtol."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
    import andrews_squeezer
    system, _ = andrews_squeezer.build()
    ref = fm.run(system, formulation="index3", method="index3-alpha", h=2e-7, t_end=3e-3, t_eval=[0.0, 3e-3],
                 v0=np.zeros(system.n_q))
    errors = []
    for rtol in (1e-4, 1e-6):
        res = fm.run(system, formulation="index3", method="index3-alpha-adaptive", rtol=rtol, t_end=3e-3,
                     t_eval=[0.0, 3e-3], v0=np.zeros(system.n_q))
        assert res.status == "finished", res.message
        errors.append(float(np.abs(andrews_squeezer.angles_of(system, res.q)[-1]
                                   - andrews_squeezer.angles_of(system, ref.q)[-1]).max()))
    print("A03 errors at rtol 1e-4, 1e-6:", errors)
    assert errors[1] < errors[0] / 10


def test_methods_are_registered_for_systems():
    from flexmbs.formulations.registry import INDEX3_METHODS, system_methods
    for name in ("index3-alpha-adaptive", "hht", "newmark"):
        assert name in INTEGRATORS and name in INDEX3_METHODS and name in system_methods("index3")
    assert INTEGRATORS["index3-alpha-adaptive"] is Index3AdaptiveAlpha
    assert Index3AdaptiveAlpha.adaptive and not Index3GeneralizedAlpha.adaptive


def test_adaptive_error_estimate_is_the_local_error_on_the_pendulum():
    """The estimate of each step's position error, projected onto the constraints' tangent space,
    against the true local error: the step from (q_n, v_n) minus the exact flow from there (the
    pendulum's angle, phi'' = -(g/L) sin phi, by DOP853 at rtol 1e-13).  Measured: ratio 0.60 to 0.94,
    median 0.90 over steps 7 to 40 at rtol = 1e-6 (unprojected, median 6.2 over steps 7 to 80: the
    error across the constraint is removed by C = 0)."""
    from scipy.integrate import solve_ivp
    problem, x0 = pendulum_problem()
    it = Index3AdaptiveAlpha(problem, 0.0, x0, 2.0, rtol=1e-6, atol=1e-6)
    g, length = 9.81, 1.0

    def exact_step(x, h):
        phi = np.arctan2(x[0], -x[1])
        dphi = (x[3] * np.cos(phi) + x[4] * np.sin(phi)) / length
        s = solve_ivp(lambda t, z: [z[1], -g / length * np.sin(z[0])], (0, h), [phi, dphi], rtol=1e-13,
                      atol=1e-15, method="DOP853")
        return length * np.array([np.sin(s.y[0, -1]), -np.cos(s.y[0, -1])])

    ratios = []
    for k in range(40):
        t_n, x_n = it.t, it.x.copy()
        it.step()
        e_q, _ = it.local_error
        if k >= 6:
            ratios.append(np.linalg.norm(e_q[:2]) / np.linalg.norm(it.x[:2] - exact_step(x_n, it.t - t_n)))
    print(f"estimate / true local error: median {np.median(ratios):.2f}, {min(ratios):.2f} to {max(ratios):.2f}")
    assert 0.5 < min(ratios) and max(ratios) < 1.5 and 0.8 < np.median(ratios) < 1.1
