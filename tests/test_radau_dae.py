"""Radau IIA of order 5 on the GGL form (flexmbs/integrators/radau_dae.py, issue 25 item 2): its
coefficients against Hairer and Wanner's, order 5 at fixed steps on a pendulum against its closed
form, the error proportional to rtol, the constraints at every output, and agreement with the
index-1 DOP853 route on the triple pendulum and with the published solution of Andrews' squeezer."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ellipj, ellipk

import flexmbs as fm
from flexmbs.formulations.registry import INDEX3_METHODS, choose
from flexmbs.integrators import INTEGRATORS, RadauDAE
from flexmbs.integrators.radau_dae import (RADAU_A, RADAU_C, RADAU_EIGENVALUES, RADAU_ERROR_WEIGHTS, RADAU_T,
                                           lagrange_weights)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))
sys.path.insert(0, str(ROOT / "tests"))

import andrews_squeezer  # noqa: E402
import double_four_bar  # noqa: E402
import pendulum_a01  # noqa: E402
import triple_pendulum  # noqa: E402
from test_rattle import G, LENGTH, rod_centroid_exact, rod_pendulum  # noqa: E402


def rod_centroid_velocity_exact(t: float) -> np.ndarray:
    """d/dt of `rod_centroid_exact`: theta = 2 asin(k sn(u, k)), u = K - omega t, so
    theta' = -2 k omega cn(u) (d sn/du = cn dn, sqrt(1 - k^2 sn^2) = dn); centroid velocity
    a theta' (cos theta, sin theta), a = L / 2, omega = sqrt(g / L_eq), L_eq = 2 L / 3."""
    k = np.sin(np.pi / 4)
    omega = np.sqrt(G / (2 * LENGTH / 3))
    sn, cn, _, _ = ellipj(ellipk(k * k) - omega * t, k * k)
    theta, theta_dot = 2 * np.arcsin(k * sn), -2 * k * omega * cn
    return LENGTH / 2 * theta_dot * np.array([np.cos(theta), np.sin(theta)])


def test_registered_as_an_index3_method():
    """`flexmbs.run(system, method="radau-dae")` runs the formulation "index3" (the one table)."""
    assert INTEGRATORS["radau-dae"] is RadauDAE and RadauDAE.order == 5 and RadauDAE.adaptive
    assert "radau-dae" in INDEX3_METHODS
    entry, method = choose("auto", "radau-dae", INTEGRATORS)
    assert entry.name == "index3" and method == "radau-dae"


def test_coefficients_are_those_of_radau_iia_and_radau5():
    """The collocation conditions hold, c_3 = 1 and b = last row of A (stiffly accurate); T gives the
    real block form; the eigenvalues and the error weights are those printed in Hairer and Wanner,
    Solving ODEs II, sec. IV.8 (gamma = 3.6378..., alpha +- i beta = 2.6811... +- 3.0504... i, and
    d = (-(13 + 7 sqrt 6)/3, (-13 + 7 sqrt 6)/3, -1/3), the RADAU5 code's DD1..DD3)."""
    for k in (1, 2, 3):
        np.testing.assert_allclose(RADAU_A @ RADAU_C ** (k - 1), RADAU_C ** k / k, rtol=1e-14)
    np.testing.assert_allclose(RADAU_A[-1], [(16 - np.sqrt(6)) / 36, (16 + np.sqrt(6)) / 36, 1 / 9], rtol=1e-14)
    gamma, alpha, beta = RADAU_EIGENVALUES
    block = np.linalg.inv(RADAU_T) @ np.linalg.inv(RADAU_A) @ RADAU_T
    np.testing.assert_allclose(block, [[gamma, 0, 0], [0, alpha, -beta], [0, beta, alpha]], atol=1e-12)
    np.testing.assert_allclose([gamma, alpha, beta], [3.637834252744496, 2.681082873627752, 3.050430199247411],
                               rtol=1e-13)
    s6 = np.sqrt(6.0)
    np.testing.assert_allclose(RADAU_ERROR_WEIGHTS, [-(13 + 7 * s6) / 3, (-13 + 7 * s6) / 3, -1 / 3], rtol=1e-12)
    np.testing.assert_allclose(lagrange_weights(RADAU_C[1]), [0, 0, 1, 0], atol=1e-15)


def rod_errors(h: float) -> tuple[float, float]:
    """(position, velocity) errors of the rod's centroid at t = 2 s at the fixed step h: max_step = h,
    a loose tolerance (no step is rejected or shortened), a tight Newton tolerance and the exact
    constraint rows (relaxation = 0: the default 1e-6 rtol s would be 1e-7 s at this rtol, an error of
    its own of about 1e-6 m, above the method's at h = 0.02 s)."""
    res = fm.run(rod_pendulum(), method="radau-dae", h=h, max_step=h, rtol=0.1, atol=0.1, newton_tol=1e-9,
                 newton_max_iter=30, relaxation=0.0, t_end=2.0, dt_out=1.0, store=False)
    assert res.status == "finished", res.message
    assert res.stats["n_steps"] == round(2.0 / h) and res.stats["n_rejected"] == 0
    return (float(np.abs(res.q[-1, :2] - rod_centroid_exact(2.0)).max()),
            float(np.abs(res.v[-1, :2] - rod_centroid_velocity_exact(2.0)).max()))


def test_fifth_order_in_positions_and_velocities_at_fixed_steps():
    """Errors at t = 2 s of the rod pendulum released from the horizontal, against its closed form,
    fall by about 2^5 = 32 per halving of h in q and in v (GGL: both differential components are of
    order 2s - 1 = 5; measured 31.6 and 32.6 in q)."""
    hs = np.array([0.08, 0.04, 0.02])
    errors = np.array([rod_errors(h) for h in hs])
    observed = [np.polyfit(np.log(hs), np.log(errors[:, k]), 1)[0] for k in (0, 1)]
    print(f"radau-dae, rod pendulum: errors {errors.tolist()}, observed orders q {observed[0]:.2f}, "
          f"v {observed[1]:.2f}")
    assert abs(observed[0] - 5) < 0.3 and abs(observed[1] - 5) < 0.4
    assert errors[-1, 0] < 2e-7                      # measured 7.4e-8 m at h = 0.02 s


RTOLS = (1e-5, 1e-6, 1e-7)


def test_error_follows_rtol():
    """Adaptive: the global error of the rod at t = 2 s falls with rtol (about as rtol^(5/4): local
    error estimate O(h^4), global error O(h^5)) and stays below 10 rtol."""
    errors = []
    for rtol in RTOLS:
        res = fm.run(rod_pendulum(), method="radau-dae", rtol=rtol, atol=rtol * 1e-3, t_end=2.0, dt_out=1.0,
                     store=False)
        assert res.status == "finished", res.message
        errors.append(float(np.abs(res.q[-1, :2] - rod_centroid_exact(2.0)).max()))
    print(f"radau-dae, rod pendulum: errors at rtol {RTOLS}: {errors}")
    assert all(np.diff(errors) < 0)
    assert all(e < 10 * r for e, r in zip(errors, RTOLS))
    slope = np.polyfit(np.log(RTOLS), np.log(errors), 1)[0]
    assert 0.9 < slope < 2.0, slope


def constraint_bounds(system, res, rtol: float, atol: float) -> tuple[float, float]:
    """(|C|, |C_q v + C_t|) allowed by Newton's stop for the run ``res``: the rms of the last correction
    over the 3 stages' 2 n_q components of q and v is below newton_tol (default min(0.03, sqrt(rtol)))
    in units of atol + rtol |y|, so each component below sqrt(6 n_q) times that, and C_q carries it
    into the constraints."""
    G = max(np.abs(system.jacobian(t, q)).max() for t, q in zip(res.t, res.q))
    per_component = min(0.03, np.sqrt(rtol)) * np.sqrt(6 * system.n_q) * G
    return (per_component * (atol + rtol * np.abs(res.q).max()), per_component * (atol + rtol * np.abs(res.v).max()))


def constraint_residuals(system, res) -> tuple[np.ndarray, np.ndarray]:
    """|C|_inf and |C_q v + C_t|_inf at every output of ``res``."""
    C = np.array([np.abs(system.residual(t, q)).max() for t, q in zip(res.t, res.q)])
    Cv = np.array([np.abs(system.jacobian(t, q) @ v + system.time_derivative(t, q)).max()
                   for t, q, v in zip(res.t, res.q, res.v)])
    return C, Cv


def test_constraints_hold_at_every_output():
    """The rod pendulum, outputs every 0.07 s (most between step points: the projected dense output):
    |C| and |C_q v + C_t| at every output within Newton's stop (`constraint_bounds`)."""
    system = rod_pendulum()
    res = fm.run(system, method="radau-dae", rtol=1e-5, atol=1e-8, t_end=1.4, dt_out=0.07, store=False)
    assert res.status == "finished", res.message
    C, Cv = constraint_residuals(system, res)
    bound_q, bound_v = constraint_bounds(system, res, 1e-5, 1e-8)
    print(f"max |C| {C.max():.2e} (bound {bound_q:.2e}), max |C_q v + C_t| {Cv.max():.2e} (bound {bound_v:.2e})")
    assert len(res.t) == 21 and C.max() <= bound_q and Cv.max() <= bound_v


@pytest.mark.slow
def test_constraints_hold_at_every_output_and_the_triple_pendulum_agrees_with_dop853():
    """The triple pendulum (natural coordinates) over 1 s, outputs every 0.1 s (dense outputs between
    the step points): |C| and |C_q v + C_t| at every output within Newton's stop carried into C by
    C_q, newton_tol (atol + rtol max|q|) max|C_q|, and the tip D within 1e-7 m of DOP853 on the
    index-1 form at rtol = 1e-12 (measured 2.5e-8 m at rtol = 1e-5, 66 steps)."""
    system = triple_pendulum.build("natural")
    v0 = np.zeros(system.n_q)
    rtol, atol = 1e-5, 1e-8
    res = fm.run(system, method="radau-dae", rtol=rtol, atol=atol, t_end=1.0, dt_out=0.1, v0=v0, store=False)
    assert res.status == "finished", res.message
    ref = fm.run(system, formulation="lagrange", method="DOP853", rtol=1e-12, atol=1e-15, t_end=1.0, dt_out=0.1,
                 v0=v0, formulation_options={"stabilization": "coordinate-partitioning"}, store=False)
    C, Cv = constraint_residuals(system, res)
    bound_q, bound_v = constraint_bounds(system, res, rtol, atol)
    print(f"max |C| {C.max():.2e} (bound {bound_q:.2e}), max |C_q v + C_t| {Cv.max():.2e} (bound {bound_v:.2e})")
    assert C.max() <= bound_q and Cv.max() <= bound_v
    D, D_ref = triple_pendulum.tip(system, res.q, res.v)[0], triple_pendulum.tip(system, ref.q, ref.v)[0]
    assert np.abs(D - D_ref).max() < 1e-7


@pytest.mark.slow
def test_andrews_squeezer_within_1e_6_of_the_published_solution():
    """IFToMM A03: q(0.03) within 1e-6 rad of the Bari test set's solution (cases/andrews_squeezer.py
    Q_REF) at rtol = 1e-6, atol = 1e-9 (measured 2.1e-7 rad in 308 steps; about 2.5 s CPU)."""
    system, _ = andrews_squeezer.build()
    res = fm.run(system, method="radau-dae", rtol=1e-6, atol=1e-9, t_end=0.03, t_eval=[0.0, 0.03],
                 v0=np.zeros(system.n_q), store=False)
    assert res.status == "finished", res.message
    error = np.abs(andrews_squeezer.angles_of(system, res.q)[-1] - andrews_squeezer.Q_REF).max()
    print(f"radau-dae on A03 at rtol 1e-6: max |q(0.03) - ref| = {error:.2e} rad")
    assert error < 1e-6


def test_multipliers_at_the_outputs_match_the_index1_ones():
    """The GGL multipliers (order 3) at the outputs against the index-1 multipliers of the same state
    (`Results.multipliers` of the pivot's reaction of the rod pendulum): within 1e-4 of their size
    (measured 1.2e-6 at rtol = 1e-6)."""
    res = fm.run(rod_pendulum(), method="radau-dae", rtol=1e-6, atol=1e-9, t_end=1.0, dt_out=0.25, store=False)
    system = rod_pendulum()
    ref = np.array([_index1_multipliers(system, t, q, v) for t, q, v in zip(res.t, res.q, res.v)])
    print(f"max |lam - lam_index1| / max |lam| = {np.abs(res.multipliers - ref).max() / np.abs(ref).max():.2e}")
    assert np.abs(res.multipliers - ref).max() < 1e-4 * np.abs(ref).max()


def _index1_multipliers(system, t, q, v) -> np.ndarray:
    """lam of [[M, C_q^T], [C_q, 0]] [q''; lam] = [Q; gamma]."""
    M, Cq = system.mass_matrix(q), system.jacobian(t, q)
    n, m = Cq.shape[1], Cq.shape[0]
    A = np.block([[M, Cq.T], [Cq, np.zeros((m, m))]])
    return np.linalg.solve(A, np.concatenate([system.forces(t, q, v), system.gamma(t, q, v)]))[n:]


def test_a01_point_pendulum_with_a_singular_mass_matrix_meets_its_target():
    """IFToMM A01 (a `RigidBody2D` with I_G = 0: M singular, which rattle refuses; the GGL iteration
    matrix is regular through C_q): P1 within the case's ACCURACY = 1e-6 m of the closed form
    (cases/pendulum_a01.py `exact`) at every output over 2 s at rtol = 1e-7 (measured 1.4e-9 m, 252 steps)."""
    res = pendulum_a01.run(integrator="radau-dae", rtol=1e-7, t_end=2.0, dt_out=0.1, plots=False)
    summary = res["summary"]
    assert summary["status"] == "finished", summary["message"]
    print(f"radau-dae on A01: max |P1 - exact| = {summary['max_error_P1']:.2e} m in {summary['n_steps']} steps")
    assert summary["max_error_P1"] < pendulum_a01.ACCURACY


def test_a02_multipliers_have_a_pole_at_the_singular_instant_and_the_reactions_do_not():
    """Why the exact GGL rows stop at A02's singular configuration (radau_dae's module docstring,
    "Singular configurations"): on the exact branch (cases/double_four_bar.py, ../shared/BENCHMARKS.md
    sec. 6c) the index-1 multipliers grow like 1 / |t - t*| (measured 1151 N at 1e-4 s, 11 186 N at
    1e-5 s) while the reactions C_q^T lam stay at 23.9 N."""
    from flexmbs.formulations.index1 import Index1
    system, *_ = double_four_bar.build()
    problem = Index1(system, solver="augmented", stabilization="none")
    t_star = double_four_bar.singular_times(1.0)[0]
    branch = double_four_bar.solve_branch(t_star, dense_output=True)
    lam_size, reactions = [], []
    for dt in (1e-3, 1e-4, 1e-5):
        q, v = double_four_bar.branch_state(*branch.sol(t_star - dt))
        lam = problem.accelerations(t_star - dt, q, v)[1]
        lam_size.append(np.abs(lam).max())
        reactions.append(np.abs(system.jacobian(t_star - dt, q).T @ lam).max())
    print(f"A02 near t* = {t_star:.6f}: max |lam| {lam_size}, max |C_q^T lam| {reactions}")
    assert abs(lam_size[2] / lam_size[1] - 10.0) < 1.0 and lam_size[2] > 1e4     # 1 / |t - t*|
    np.testing.assert_allclose(reactions, reactions[-1], rtol=0.01)


def a02_errors(t_end: float, rtol: float = 1e-6):
    """(result, |B0 - exact|, |B0' - exact| at the outputs every 0.05 s) of A02 (N = 2) with radau-dae
    at its default relaxation; exact: the one-degree-of-freedom branch (double_four_bar.exact)."""
    system, q0, v0, crank0 = double_four_bar.build(2)
    res = fm.run(system, method="radau-dae", rtol=rtol, atol=rtol * 1e-3, t_end=t_end,
                 t_eval=np.arange(0.0, t_end + 1e-9, 0.05), q0=q0, v0=v0, store=False)
    assert res.status == "finished", res.message
    B0, B0v = double_four_bar.tip_motion(res.bodies[crank0.name])
    B0e, B0ve = double_four_bar.exact(res.t)
    return res, np.abs(B0 - B0e).max(axis=1), np.abs(B0v - B0ve).max(axis=1)


def test_a02_passes_its_first_singular_configuration():
    """IFToMM A02 (N = 2) over 0.8 s, through the singular instant t* = 0.714 s, at rtol 1e-6: B0
    within 1e-6 m and 1e-5 m/s of the exact branch at every output (measured 4e-8 m and 7e-7 m/s
    over 1.5 s; with exact rows, relaxation = 0, it stops at t* - 1.2e-4 s: test_failures_radau.py)."""
    res, err, errv = a02_errors(0.8)
    print(f"A02 to 0.8 s: max |B0 - exact| {err.max():.2e} m, {errv.max():.2e} m/s, {res.stats['n_steps']} steps")
    assert err.max() < 1e-6 and errv.max() < 1e-5


@pytest.mark.slow
def test_a02_over_10_s_meets_the_case_accuracy_at_the_published_times():
    """IFToMM A02, the double four-bar (N = 2), 10 s (ten singular instants) at rtol 1e-6: B0's position
    and velocity within the case's ACCURACY = 1e-4 of the reference table of ../shared/BENCHMARKS.md
    sec. 6c (the exact 1-DOF solution at t = 1, 5 and 10 s, confirmed by Exudyn) and of the exact branch
    at every output within 1e-3 (the benchmark's 'high' allowed error)."""
    res, err, errv = a02_errors(10.0)
    table = {1.0: ([-0.19502030, -0.98079921], [-6.67667804, 1.32757833]),      # BENCHMARKS.md sec. 6c, N = 2
             5.0: ([-0.81131046, -0.58461555], [-3.56911740, 4.95310517]),
             10.0: ([0.32845811, 0.94451854], [1.42305147, -0.49486885])}
    B0, B0v = double_four_bar.tip_motion(res.bodies["crank0"])
    for t, (x, xd) in table.items():
        k = int(np.argmin(np.abs(res.t - t)))
        print(f"A02 radau-dae at t = {t:g}: |B0 - ref| {np.abs(B0[k] - x).max():.2e} m, "
              f"|B0' - ref| {np.abs(B0v[k] - xd).max():.2e} m/s")
        assert np.abs(B0[k] - x).max() < double_four_bar.ACCURACY
        assert np.abs(B0v[k] - xd).max() < double_four_bar.ACCURACY
    print(f"A02 over 10 s: max errors {err.max():.2e} m, {errv.max():.2e} m/s, {res.stats['n_steps']} steps")
    assert err.max() < 1e-3 and errv.max() < 1e-3
