"""The affine second-order form of small models, the vectorised linkage kinematics and the
reduced (n x n) implicit midpoint step that uses them.

References: the one-time functions of the model and the formulation (Model.frame_stiffness,
Model.frame_damping, Lagrange.generalized_force), Linkage.solve, and the generic 2n x 2n
midpoint step (option reduced=False); the order 2 of the implicit midpoint rule.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.formulations import Lagrange
from flexmbs.mechanisms import FourBar, SliderCrank, constant_speed, flexible_link

T_END = 2e-3


def slider_crank(damping=None):
    """Simeon's slider-crank rod (cases/slider_crank.py): 4 beam elements, guide correction."""
    element = fm.BeamEB2D(fm.Material(E=2e11, rho=7870.0), area=0.008**2, I=0.008**4 / 12.0)
    return flexible_link(SliderCrank(0.15, 0.30), "rod", constant_speed(150.0), element, 4,
                         ends="pinned-sliding", end_mass=0.075552, guide_angle=0.0, damping=damping,
                         t_span=(0.0, T_END))


def four_bar():
    element = fm.BeamEB2D(fm.Material(E=2e11, rho=7870.0), area=0.02 * 0.003, I=0.02 * 0.003**3 / 12.0)
    return flexible_link(FourBar(0.30, 0.08, 0.30, 0.25, branch="open"), "coupler", constant_speed(4 * np.pi),
                         element, 4, ends="pinned-pinned", gravity=[0.0, -9.81, 0.0])


@pytest.mark.parametrize("model", [slider_crank(), slider_crank(damping=(1.0, 1e-5)), four_bar()],
                         ids=["slider-crank", "damped slider-crank", "four-bar with gravity"])
def test_affine_form_equals_the_model_terms(model):
    form = Lagrange(model)
    affine = form.second_order.affine
    rng = np.random.default_rng(0)
    t = np.sort(rng.uniform(0.0, T_END, 4))
    gammas = affine.coefficients(t)
    for ti, gamma in zip(t, gammas):
        K, C, g = affine.combine(gamma)
        K_ref, C_ref = np.asarray(model.frame_stiffness(ti)), np.asarray(model.frame_damping(ti))
        assert np.abs(K - K_ref).max() <= 1e-12 * np.abs(K_ref).max()
        assert np.abs(C - C_ref).max() <= 1e-12 * max(np.abs(C_ref).max(), 1e-300)
        q, v = 1e-4 * rng.standard_normal(model.n_dofs), 1e-2 * rng.standard_normal(model.n_dofs)
        f_ref = form.generalized_force(ti, q, v)
        assert np.abs(g - K @ q - C @ v - f_ref).max() <= 1e-11 * np.abs(f_ref).max()


@pytest.mark.parametrize("linkage", [SliderCrank(0.15, 0.30, 0.02), FourBar(0.30, 0.08, 0.30, 0.25, branch="open")],
                         ids=["slider-crank", "four-bar"])
def test_vectorised_kinematics_equal_the_careful_path(linkage):
    phi = np.linspace(0.1, 4 * np.pi, 300)
    fast, ref = linkage.solve_many(phi, 150.0, 30.0), linkage.solve(phi, 150.0, 30.0)
    for a, b in ((fast.z, ref.z), (fast.z_dot, ref.z_dot), (fast.z_ddot, ref.z_ddot)):
        assert np.abs(a - b).max() <= 1e-10 * np.abs(b).max()


def test_planar_frame_states_vectorised_equal_one_by_one():
    motion = slider_crank().motion
    t = np.linspace(0.0, T_END, 7)
    fast = motion.states(t)
    for i, ti in enumerate(t):
        s = motion.state(ti)
        for f in ("R", "omega", "eps", "r_O", "v_O", "a_O"):
            assert np.allclose(getattr(fast, f)[i], getattr(s, f), rtol=1e-12, atol=1e-12 * np.abs(getattr(s, f)).max()), f


@pytest.mark.parametrize("formulation", ["lagrange", "gibbs-appell"])
def test_reduced_midpoint_equals_the_generic_step(formulation):
    model = slider_crank()
    kw = dict(formulation=formulation, method="midpoint", h=1e-5, t_end=T_END, dt_out=1e-4, store=False,
              compute_energies=False)
    fast, generic = fm.run(model, **kw), fm.run(model, reduced=False, **kw)
    assert fast.success and generic.success
    assert np.abs(fast.delta - generic.delta).max() <= 1e-9 * np.abs(generic.delta).max()


def test_reduced_midpoint_has_order_two():
    model = slider_crank()
    kw = dict(method="midpoint", t_end=T_END, t_eval=[0.0, T_END], store=False, compute_energies=False)
    ref = fm.run(model, h=T_END / 6400, **kw).delta[-1]
    hs = [T_END / 200, T_END / 400, T_END / 800]          # asymptotic range (h < 1e-5 s)
    errors = [np.abs(fm.run(model, h=h, **kw).delta[-1] - ref).max() for h in hs]
    order = np.polyfit(np.log(hs), np.log(errors), 1)[0]
    assert abs(order - 2.0) < 0.2, (order, errors)


def test_marker_motion_states_vectorised_equal_one_by_one():
    """Frame states of a marker-driven motion (smoothing splines) for many times at once."""
    from flexmbs.markers import MarkerRecords, marker_motion
    t = np.linspace(0.0, 1.0, 201)
    body = np.array([[0.0, 0.0], [0.3, 0.0], [0.15, 0.05]])
    th = 0.4 * np.sin(2 * np.pi * t)
    R = np.stack([np.stack([np.cos(th), -np.sin(th)], -1), np.stack([np.sin(th), np.cos(th)], -1)], -2)
    xy = np.einsum("tij,mj->tmi", R, body) + np.stack([0.1 * t, 0.05 * t**2], -1)[:, None]
    motion = marker_motion(MarkerRecords(t, xy), body=body, lam=1e-12, margin=0.5)
    times = np.linspace(0.3, 0.7, 5)
    fast = motion.states(times)
    for i, ti in enumerate(times):
        s = motion.state(ti)
        for f in ("R", "omega", "eps", "r_O", "v_O", "a_O"):
            assert np.allclose(getattr(fast, f)[i], getattr(s, f), rtol=1e-12, atol=1e-12), f
