"""Moving-frame dynamics: closed forms, agreement of the formulations, energy and momenta.

Closed forms (BENCHMARKS sec. 1, derived in docs/theory.md):
- static centrifugal elongation with softening, u(x) = sin(kx)/(k cos kL) - x,
  k = Omega sqrt(rho/E): Code_Aster validation test SSLV105 (V3.04.105);
- axial frequencies in the rotating frame, omega_n^2 = (E/rho)((2n - 1) pi/(2L))^2 - Omega^2;
- a bar clamped at the origin of a frame accelerating along the bar with a:
  u(x) = -(rho a/E)(L x - x^2/2).
Case data: Vlase, Nicolescu, Marin, Mathematics 8 (2020) 1401, sec. 4a.
"""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.formulations import FORMULATIONS, Hamilton, Lagrange, energies
from flexmbs.modal import natural_frequencies, static_solution
from flexmbs.motion import ConstantRotation, GeneralMotion, PlanarMotion, SpinUp

# the paper's rotating bar: L = 1 m, m = 1 kg, A = 0.2 cm^2, E = 210 GPa, Omega = 15 rad/s
L, A, E, OMEGA = 1.0, 0.2e-4, 210e9, 15.0
RHO = 1.0 / (A * L)


def rotating_bar(n=10, omega=OMEGA, force=0.0, damping=None, **kw):
    loads = [fm.NodalLoad("end", "u", force, lambda t: np.sin(200.0 * t))] if force else []
    return fm.Model(fm.generate.line(n, L), fm.Bar2(fm.Material(E, RHO), A),
                    motion=ConstantRotation(omega), fixed=[("start", "all")], loads=loads,
                    damping=damping, **kw)


def exact_elongation(x, omega=OMEGA):
    k = omega * np.sqrt(RHO / E)
    return np.sin(k * x) / (k * np.cos(k * L)) - x


def planar_beam(n=4, damping=None, gravity=(0.0, -9.81, 0.0)):
    """A soft cantilever on a frame that translates and spins up, with a tip load."""
    motion = PlanarMotion(lambda t: (0.1 * np.sin(3 * t), 0.3 * np.cos(3 * t), -0.9 * np.sin(3 * t)),
                          lambda t: (0.05 * t**2, 0.1 * t, 0.1),
                          lambda t: (0.5 * t**2 + 0.2 * np.sin(5 * t), t + np.cos(5 * t), 1 - 5 * np.sin(5 * t)))
    beam = fm.BeamEB2D(fm.Material(E=2e7, rho=1000.0), area=1e-3, I=1e-6)
    tip = fm.NodalLoad("end", "v", 0.5, lambda t: np.cos(4 * t))
    return fm.Model(fm.generate.line(n, 1.0), beam, motion=motion, fixed=[("start", "all")],
                    loads=[tip], gravity=gravity, damping=damping)


# -- closed forms ---------------------------------------------------------------------------------
def test_static_centrifugal_elongation_converges_at_rate_two():
    errors, hs = [], []
    for n in (5, 10, 20, 40):
        md = rotating_bar(n)
        u = static_solution(md)
        x = md.mesh.points[1:, 0]
        errors.append(np.abs(u - exact_elongation(x)).max() / exact_elongation(L))
        hs.append(L / n)
    slope = np.polyfit(np.log(hs), np.log(errors), 1)[0]
    assert abs(slope - 2.0) < 0.15, f"observed rate {slope:.3f}"
    assert errors[-1] < 1e-8


def test_damped_run_settles_on_the_static_elongation():
    md0 = rotating_bar(10)
    w, _ = natural_frequencies(md0, n_modes=2)
    md = rotating_bar(10, damping=fm.rayleigh_coefficients(0.3, w[0], w[1]))
    res = fm.run(md, formulation="lagrange", method="DOP853", rtol=1e-8, t_end=0.03, dt_out=1e-3,
                 compute_energies=False)
    assert res.success
    static = static_solution(md)
    np.testing.assert_allclose(res.delta[-1], static, rtol=1e-5, atol=1e-6 * static.max())
    x = md.mesh.points[1:, 0]
    np.testing.assert_allclose(res.delta[-1], exact_elongation(x), rtol=1e-6)


def test_axial_frequencies_in_the_rotating_frame():
    n_el = 400
    md = rotating_bar(n_el)
    w, _ = natural_frequencies(md, n_modes=3)
    n = np.arange(1, 4)
    exact = np.sqrt(E / RHO * ((2 * n - 1) * np.pi / (2 * L)) ** 2 - OMEGA**2)
    np.testing.assert_allclose(w, exact, rtol=2e-5)
    # rate 2 in h for omega_1
    errs = [abs(natural_frequencies(rotating_bar(k), n_modes=1)[0][0] - exact[0]) for k in (10, 20, 40)]
    slope = np.polyfit(np.log([1 / 10, 1 / 20, 1 / 40]), np.log(errs), 1)[0]
    assert abs(slope - 2.0) < 0.1, f"observed rate {slope:.3f}"


def test_divergence_speed_of_the_bar_is_where_the_first_frequency_vanishes():
    omega_cr = np.pi / (2 * L) * np.sqrt(E / RHO)
    w_below = natural_frequencies(rotating_bar(40, omega=0.99 * omega_cr), n_modes=1)[0][0]
    w_above = natural_frequencies(rotating_bar(40, omega=1.01 * omega_cr), n_modes=1)[0][0]
    assert w_below > 0 > w_above


def test_translation_with_uniform_acceleration_gives_the_static_body_load_solution():
    a = 50.0
    motion = GeneralMotion(position=lambda t: (np.array([a * t**2 / 2, 0, 0]), np.array([a * t, 0, 0]),
                                               np.array([a, 0, 0])))
    md = fm.Model(fm.generate.line(8, L), fm.Bar2(fm.Material(E, RHO), A), motion=motion,
                  fixed=[("start", "all")])
    x = md.mesh.points[1:, 0]
    exact = -(RHO * a / E) * (L * x - x**2 / 2)
    np.testing.assert_allclose(static_solution(md, t=0.3), exact, rtol=1e-10)   # nodally exact
    # a damped run started at rest in the accelerating frame settles on it
    damped = fm.Model(md.mesh, md.element, motion=motion, fixed=[("start", "all")],
                      damping=fm.rayleigh_coefficients(0.3, *natural_frequencies(md, n_modes=2)[0]))
    res = fm.run(damped, method="DOP853", rtol=1e-9, t_end=0.02, dt_out=1e-3, compute_energies=False)
    np.testing.assert_allclose(res.delta[-1], exact, rtol=1e-6)


# -- the formulations agree ----------------------------------------------------------------------
@pytest.mark.parametrize("make", [pytest.param(lambda: rotating_bar(10, force=1.0), id="rotating-bar"),
                                  pytest.param(lambda: planar_beam(), id="planar-beam-general-motion",
                                               marks=pytest.mark.slow)])
def test_formulations_agree_to_integrator_tolerance(make):
    md = make()
    t_end = 0.02 if md.n_dofs == 10 else 0.3
    runs = {name: fm.run(md, formulation=name, method="DOP853", rtol=1e-11, atol=1e-16, t_end=t_end,
                         dt_out=t_end / 50, compute_energies=False) for name in FORMULATIONS}
    ref = runs["lagrange"]
    peak = np.abs(ref.delta).max()
    for name, r in runs.items():
        assert r.success
        assert np.abs(r.delta - ref.delta).max() <= 1e-8 * peak, name
        # Hamilton recovers delta' = m^-1 (p - b - G delta); in a moving frame p is dominated by
        # the transport momentum b, and the subtraction costs digits in proportion |b| / |m delta'|
        assert np.abs(r.delta_dot - ref.delta_dot).max() <= 1e-6 * np.abs(ref.delta_dot).max(), name


def test_term_by_term_and_compiled_evaluations_are_the_same_equations():
    md = rotating_bar(6, force=2.0, damping=(10.0, 1e-6))
    rng = np.random.default_rng(3)
    for cls in FORMULATIONS.values():
        terms, compiled = cls(md, evaluation="terms"), cls(md, evaluation="compiled")
        for t in (0.0, 0.013):
            x = rng.normal(size=2 * md.n_dofs) * 1e-5
            scale = np.abs(terms.rhs(t, x)).max()
            np.testing.assert_allclose(compiled.rhs(t, x), terms.rhs(t, x), atol=1e-10 * scale)


def test_compiled_evaluation_refuses_an_unsteady_frame():
    with pytest.raises(ValueError, match="steady"):
        Lagrange(planar_beam(), evaluation="compiled")


# -- momenta and energies -------------------------------------------------------------------------
def test_hamilton_momentum_is_dL_ddelta_dot():
    """p of a Hamilton run equals the finite-difference gradient of L = T - V in delta'."""
    md = planar_beam(3)
    form = Hamilton(md)
    res = fm.run(md, formulation="hamilton", method="DOP853", rtol=1e-9, t_end=0.5, dt_out=0.1,
                 compute_energies=False)
    sol = fm.simulate(form, (0.0, 0.5), form.state0(np.zeros(md.n_dofs), np.zeros(md.n_dofs)),
                      method="DOP853", rtol=1e-9, atol=1e-12, t_eval=res.t)
    for t, x, d, v in zip(sol.t, sol.x, res.delta, res.delta_dot):
        p = x[md.n_dofs:]
        h = 1e-4 * max(1.0, np.abs(v).max())
        grad = np.array([(energies(md, t, d, v + h * e, 0 * d).T - energies(md, t, d, v - h * e, 0 * d).T)
                         / (2 * h) for e in np.eye(md.n_dofs)])
        np.testing.assert_allclose(p, grad, rtol=1e-7, atol=1e-9 * np.abs(p).max())


@pytest.mark.slow
def test_energy_balance_with_general_motion_loads_gravity_and_damping():
    md = planar_beam(4, damping=(0.5, 1e-3))
    res = fm.run(md, formulation="gibbs-appell", method="DOP853", rtol=1e-10, atol=1e-13, t_end=1.0,
                 dt_out=0.05)
    err = np.abs(res.energy_balance_error()).max()
    e = res.energies
    scale = max(np.abs(e["T"]).max(), np.abs(e["W_frame"]).max())
    assert err <= 1e-8 * scale, f"balance error {err:.3e} J of {scale:.3e} J"
    assert e["W_damping"][-1] > 0 and np.all(np.diff(e["W_damping"]) >= -1e-15)


@pytest.mark.parametrize("formulation", sorted(FORMULATIONS))
def test_jacobi_integral_changes_by_load_work_minus_dissipation(formulation):
    md = rotating_bar(6, force=5.0, damping=(20.0, 2e-7))
    res = fm.run(md, formulation=formulation, method="DOP853", rtol=1e-10, atol=1e-16, t_end=0.02,
                 dt_out=1e-3)
    e = res.energies
    change = e["jacobi"] - e["jacobi"][0]
    expected = e["W_loads"] - e["W_damping"]
    assert e["W_damping"][-1] > 0
    assert np.abs(change - expected).max() <= 1e-7 * np.abs(e["W_damping"]).max()


@pytest.mark.slow
def test_midpoint_rule_conserves_the_jacobi_integral_without_drift():
    md = rotating_bar(6)
    delta0 = 2 * static_solution(md)                 # released from twice the steady stretch
    res = fm.run(md, formulation="hamilton", method="midpoint", h=2e-6, t_end=0.02, dt_out=2e-4,
                 delta0=delta0)
    h = res.energies["jacobi"]
    drift = np.abs(h - h[0])
    assert drift.max() <= 1e-12 * abs(res.energies["T"][0])
    # explicit RK45 at a loose tolerance drifts in comparison
    rk = fm.run(md, formulation="hamilton", method="RK45", rtol=1e-5, t_end=0.02, dt_out=2e-4,
                delta0=delta0)
    assert np.abs(rk.energies["jacobi"] - h[0]).max() > 10 * drift.max()


def test_constant_spin_energy_input_equals_frame_work():
    """At constant spin without loads the frame's drive does the work of the energy change."""
    md = rotating_bar(6)
    res = fm.run(md, method="DOP853", rtol=1e-10, atol=1e-16, t_end=0.01, dt_out=1e-3)
    e = res.energies
    dE = e["T"] + e["V"] - e["T"][0] - e["V"][0]
    assert np.abs(dE).max() > 1e-6                  # the bar stretches: energy flows in
    np.testing.assert_allclose(dE, e["W_frame"], atol=1e-8 * np.abs(dE).max())


def test_spin_up_state_and_result_are_reported_in_physical_units():
    md = fm.Model(fm.generate.line(4, 10.0), fm.BeamEB2D(fm.Material(7e10, 3000.0), 4e-4, 2e-7),
                  motion=SpinUp(6.0, 15.0), fixed=[("start", "all")])
    res = fm.run(md, formulation="hamilton", method="DOP853", rtol=1e-7, t_end=1.0, dt_out=0.5)
    assert res.displacement.shape == (3, 5, 2)
    assert res.nodes.shape == (5, 2)
    assert res.metadata["units"].startswith("SI")
