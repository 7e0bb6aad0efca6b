"""The works of a System run (issue 21, item 3): W_loads, W_drivers, W_damping, W_stiffening in
``Results.energies`` close the energy balance total - total(t0) = W_loads + W_drivers +
W_stiffening - W_damping (`Results.energy_balance_error`)."""
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import FlexibleBody, RigidBodyEP
from flexmbs.bodies.loads import torque_load
from flexmbs.constraints import Fixed, Revolute
from flexmbs.system import System

Z = np.array([0.0, 0.0, 1.0])


def rotor(torque=2.0, J=0.5):
    """A disc on a revolute joint about z, spun up from rest by a constant torque about z."""
    disc = RigidBodyEP("disc", 3.0, np.diag([0.3, 0.3, J]), loads=[torque_load(torque * Z)])
    return System([disc], [Revolute(None, disc, at=np.zeros(3), axis=Z, name="axle")])


def test_work_of_a_torque_is_the_kinetic_energy_it_gives():
    """Closed form: J w' = T, w = T t / J, W = int T w dt = T^2 t^2 / (2 J) = T_kinetic (the power is
    linear in t, so the trapezoidal rule over the steps is exact)."""
    T, J = 2.0, 0.5
    res = fm.run(rotor(T, J), method="index3-alpha", h=1e-3, t_end=1.0, dt_out=0.05, store=False)
    e = res.energies
    np.testing.assert_allclose(e["W_loads"], T**2 * res.t**2 / (2 * J), rtol=1e-6, atol=1e-9)
    for key in ("W_drivers", "W_damping", "W_stiffening"):
        assert np.all(e[key] == 0.0), key
    # what is left is the integrator's: index3-alpha (rho_inf 0.8) at h = 1e-3 loses 2.6e-6 of T in 1 s
    assert np.abs(res.energy_balance_error()).max() < 1e-5 * e["total"][-1]


def damped_cantilever(alpha=0.0, beta=2e-3):
    """A planar beam (3 elements) welded to the ground at its frame, bent by gravity from straight,
    with Rayleigh damping C = alpha M + beta K."""
    beam = fm.BeamEB2D(fm.Material(E=2e8, rho=1000.0), area=1e-3, I=1e-6)   # tip sag 6 mm, omega_1 50 rad/s
    model = fm.Model(fm.generate.line(3, 1.0), beam, fixed=[("start", "all")], damping=(alpha, beta))
    body = FlexibleBody(model, "beam", stiffening="none")
    return System([body], [Fixed(None, body, at=np.zeros(3), name="weld")], gravity=(0.0, -9.81, 0.0))


def test_dissipated_work_closes_the_balance_of_a_damped_beam():
    """With Rayleigh damping the total energy falls by the dissipated work W_damping =
    int delta'^T C delta' dt (>= 0, growing); accumulated at every step, the balance closes to the
    integrator's error, second order in h (measured: 9.9e-6, 2.5e-6, 6.2e-7 J at h = 1, 0.5,
    0.25 ms against W_damping = 1.03e-2 J)."""
    errors = []
    for h in (1e-3, 5e-4):
        res = fm.run(damped_cantilever(), method="index3-alpha", h=h, t_end=0.4, dt_out=h, rho_inf=0.95, store=False)
        e = res.energies
        assert e["total"][-1] < e["total"][0]
        assert np.all(np.diff(e["W_damping"]) >= 0)
        assert e["W_damping"][-1] == pytest.approx(e["total"][0] - e["total"][-1], rel=2e-3)
        assert np.all(e["W_drivers"] == 0.0) and np.all(e["W_loads"] == 0.0)   # a weld, no loads
        errors.append(np.abs(res.energy_balance_error()).max())
    assert errors[1] < errors[0] / 3.0
    assert errors[1] < 1e-3 * res.energies["W_damping"][-1]


def test_driver_work_converges_at_second_order():
    """The coupled slider-crank (cases/slider_crank.py), crank driven at 150 rad/s by an
    AngleDriver: the drive's work lam . C_t, accumulated at every step, closes the
    balance to O(h^2) (the index-3 alpha method is second order; rho_inf = 0.9 damps a little)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
    try:
        from slider_crank import build_coupled
    finally:
        sys.path.pop(0)
    worst = []
    for h in (4e-5, 2e-5):
        system, _, _ = build_coupled()
        n = int(round(0.01 / h))
        res = fm.run(system, method="index3-alpha", h=h, t_end=n * h, t_eval=np.arange(n + 1) * h, rho_inf=0.9,
                     store=False)
        e = res.energies
        assert abs(e["W_drivers"][-1]) > 1.0                    # the drive does work on the mechanism
        worst.append(np.abs(res.energy_balance_error()).max())
    assert worst[1] < worst[0] / 3.0                           # second order: about 4
    assert worst[1] < 1e-4 * np.abs(res.energies["W_drivers"]).max()


def test_works_are_in_the_results_file(tmp_path):
    res = fm.run(rotor(), method="index3-alpha", h=1e-3, t_end=0.2, dt_out=0.05, store=tmp_path / "results.h5")
    back = fm.load_results(tmp_path)
    for key in ("W_loads", "W_drivers", "W_damping", "W_stiffening", "total"):
        np.testing.assert_array_equal(back.energies[key], res.energies[key])
    np.testing.assert_array_equal(back.energy_balance_error(), res.energy_balance_error())


def test_power_of_a_driver_without_multipliers_is_unknown():
    """A rheonomic constraint and no multipliers: the drivers' power is NaN, never a silent zero."""
    system = rotor()
    P = system.power_history(np.zeros(1), system.initial_state(0.0)[0][None], np.zeros((1, system.n_q)), None)
    assert P["drivers"][0] == 0.0                              # no rheonomic constraint: known to be zero
    from flexmbs.constraints import CoordinateDriver
    disc = system.bodies[0]
    driven = System([disc], [CoordinateDriver(disc, 0, lambda t: (0.0, 0.0, 0.0), name="x")])
    q0 = driven.initial_state(0.0)[0]
    assert np.isnan(driven.power_history(np.zeros(1), q0[None], np.zeros((1, driven.n_q)), None)["drivers"][0])
