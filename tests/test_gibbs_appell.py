"""Gibbs-Appell from the mass points' accelerations against Lagrange from the kinetic energy.

The two formulations are computed independently (GibbsAppell: sum over mass points of
Phi_p^T m_p a_p; Lagrange: the inertia invariants), so their agreement checks both.
Case data: the rotating bar of Vlase, Nicolescu, Marin, Mathematics 8 (2020) 1401, sec. 4a.
"""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.formulations import GibbsAppell, Lagrange
from flexmbs.motion import ConstantRotation, GeneralMotion, PlanarMotion
from flexmbs.assembly.assembler import dense_array

RNG = np.random.default_rng(7)


def rotating_bar(n=10):
    """The paper's bar: L = 1 m, 1 kg, A = 0.2 cm^2, E = 210 GPa, 15 rad/s, tip force sin(200 t)."""
    A = 0.2e-4
    return fm.Model(fm.generate.line(n, 1.0), fm.Bar2(fm.Material(210e9, 1.0 / A), A),
                    motion=ConstantRotation(15.0), fixed=[("start", "all")],
                    loads=[fm.NodalLoad("end", "u", 1.0, lambda t: np.sin(200.0 * t))])


def planar_beam(E=2e7, n=4):
    """A cantilever on a frame that translates and spins up in its plane, gravity and a tip load."""
    motion = PlanarMotion(lambda t: (0.1 * np.sin(3 * t), 0.3 * np.cos(3 * t), -0.9 * np.sin(3 * t)),
                          lambda t: (0.05 * t**2, 0.1 * t, 0.1),
                          lambda t: (0.5 * t**2 + 0.2 * np.sin(5 * t), t + np.cos(5 * t), 1 - 5 * np.sin(5 * t)))
    beam = fm.BeamEB2D(fm.Material(E=E, rho=1000.0), area=1e-3, I=1e-6)
    return fm.Model(fm.generate.line(n, 1.0), beam, motion=motion, fixed=[("start", "all")],
                    loads=[fm.NodalLoad("end", "v", 0.5, lambda t: np.cos(4 * t))], gravity=(0.0, -9.81, 0.0),
                    damping=(0.5, 1e-3))


def spatial_motion():
    return GeneralMotion(
        lambda t: (np.array([0.1 * t**2, np.sin(t), 0.2 * t]), np.array([0.2 * t, np.cos(t), 0.2]),
                   np.array([0.2, -np.sin(t), 0.0])),
        lambda t: (np.array([0.3 * t, 0.2 * np.sin(2 * t), t**2]), np.array([0.3, 0.4 * np.cos(2 * t), 2 * t]),
                   np.array([0.0, -0.8 * np.sin(2 * t), 2.0])))


def beam_3d():
    """A soft 3D beam with rotary inertia and a tip mass on a general 3D motion, with gravity."""
    x = np.linspace(0.0, 1.0, 5)
    mesh = fm.Mesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(4), np.arange(1, 5)])},
                   node_sets={"start": np.array([0]), "end": np.array([4])})
    beam = fm.BeamEB3D(fm.Material(2e3, 1000.0, 0.3), 1e-3, 1e-7, 2e-7, 3e-7, rotary_inertia=True)
    return fm.Model(mesh, beam, motion=spatial_motion(), fixed=[("start", "all")], gravity=(0, 0, -9.81),
                    point_masses=[("end", 0.3)], stiffening=False)


def hex_block():
    return fm.Model(fm.generate.box(4, 1, 1, 1.0, 0.2, 0.2), fm.Hex8(fm.Material(2e3, 1000.0, 0.3)),
                    motion=spatial_motion(), fixed=[("xmin", "all")], gravity=(0, -9.81, 0))


MODELS = {"planar beam": lambda: planar_beam(E=2e3), "3D beam, tip mass": beam_3d, "Hex8 block": hex_block}


@pytest.mark.parametrize("make", MODELS.values(), ids=MODELS.keys())
def test_point_acceleration_gradient_equals_lagrange(make):
    """sum_p Phi_p^T m_p a_p^0 (Gibbs-Appell) = the inertia terms of Lagrange's equations (L)."""
    md = make()
    ga, lg = GibbsAppell(md), Lagrange(md, evaluation="terms")
    n = md.n_dofs
    for t in (0.0, 0.37, 1.3):
        delta, delta_dot = 1e-2 * RNG.standard_normal(n), RNG.standard_normal(n)
        f_ga, f_lg = ga.generalized_force(t, delta, delta_dot), lg.generalized_force(t, delta, delta_dot)
        np.testing.assert_allclose(f_ga, f_lg, rtol=0, atol=1e-12 * np.abs(f_lg).max())


@pytest.mark.parametrize("make", MODELS.values(), ids=MODELS.keys())
def test_mass_matrix_and_gradient_from_the_acceleration_energy(make):
    """[m] = sum_p m_p Phi_p^T Phi_p, and dS/d delta'' (central differences of S, exact for a
    quadratic) = [m] delta'' + sum_p Phi_p^T m_p a_p^0 = [m] delta'' - f + Q."""
    md = make()
    ga = GibbsAppell(md)
    pts = ga.points
    M_points = (pts.Phi.T @ (np.repeat(pts.m, 3)[:, None] * pts.Phi)).toarray()
    np.testing.assert_allclose(M_points, dense_array(md.M), rtol=0, atol=1e-13 * abs(md.M).max())
    n, t = md.n_dofs, 0.6
    delta, delta_dot, delta_ddot = 1e-2 * RNG.standard_normal(n), RNG.standard_normal(n), RNG.standard_normal(n)
    S = lambda dd: ga.acceleration_energy(t, delta, delta_dot, dd)  # noqa: E731
    h = 1e-3
    grad = np.array([(S(delta_ddot + h * e) - S(delta_ddot - h * e)) / (2 * h) for e in np.eye(n)])
    Q = md.q_ext(t) - md.K_dot(t, delta) - md.damping_force(delta_dot)
    gravity = pts.generalized(pts.m[:, None] * (md.frame(t).R.T @ md.gravity))
    expected = md.M @ delta_ddot - ga.generalized_force(t, delta, delta_dot) + Q + gravity
    np.testing.assert_allclose(grad, expected, rtol=0, atol=1e-8 * np.abs(expected).max())


def test_jacobian_is_the_derivative_of_the_point_forcing():
    md = planar_beam(E=2e3)
    ga = GibbsAppell(md)
    t, x = 0.8, RNG.standard_normal(2 * md.n_dofs)
    J = ga.jacobian(t)
    h = 1e-6
    fd = np.column_stack([(ga.forcing_full(t, x + h * e) - ga.forcing_full(t, x - h * e)) / (2 * h)
                          for e in np.eye(2 * md.n_dofs)])
    np.testing.assert_allclose(J, fd, rtol=0, atol=1e-7 * np.abs(J).max())


def test_gibbs_appell_is_its_own_computation():
    assert not issubclass(GibbsAppell, Lagrange)
    md = rotating_bar(5)
    assert GibbsAppell(md)._compiled is None           # steady, but evaluated from the points
    assert Lagrange(md)._compiled is not None
    assert fm.FORMULATIONS["gibbs-appell"] is GibbsAppell


@pytest.mark.parametrize("make, t_end", [(rotating_bar, 0.005), (lambda: planar_beam(E=2e5), 0.5)],
                         ids=["rotating bar", "planar beam with gravity"])
def test_runs_agree_with_lagrange_to_integrator_tolerance(make, t_end):
    md = make()
    kw = dict(method="DOP853", rtol=1e-10, atol=1e-14, t_end=t_end, dt_out=t_end / 20, compute_energies=False)
    lg = fm.run(md, formulation="lagrange", **kw)
    ga = fm.run(md, formulation="gibbs-appell", **kw)
    assert lg.success and ga.success
    peak = np.abs(lg.delta).max()
    assert peak > 0
    np.testing.assert_allclose(ga.delta, lg.delta, rtol=0, atol=1e-8 * peak)


def test_compiled_on_request_is_lagranges_constant_coefficient_system():
    md = rotating_bar(5)
    ga, lg = GibbsAppell(md, evaluation="compiled"), Lagrange(md, evaluation="compiled")
    for a, b in zip(ga._compiled, lg._compiled):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * max(np.abs(b).max(), 1e-300))
