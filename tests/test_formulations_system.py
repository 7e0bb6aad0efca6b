"""Gibbs-Appell and Hamilton on a System (issue 23): the bodies' acceleration-energy and kinetic-energy
terms against Lagrange's, and the whole System's motion by the three formulations.

Reference values are Lagrange's own terms (M, Q_v of each body, `flexmbs.formulations.index1`): the
formulations are derived independently (docs/formulations_system.md) and must agree with them.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import (CorotationalBeam2D, FlexibleBody, PointMass, RigidBody2D, RigidBodyEP,
                            RigidBodyNatural)
from flexmbs.formulations.registry import system_formulation

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import slider_crank  # noqa: E402
import triple_pendulum  # noqa: E402


def flexible_rod():
    """A free 3D frame with a 4-element planar beam on it (tangent frame), undeformed."""
    element = fm.BeamEB2D(fm.Material(E=2e11, rho=7870.0), area=6.4e-5, I=3.4e-10)
    model = fm.Model(fm.generate.line(4, 0.3), element, fixed=[("start", "all")])
    return FlexibleBody(model, "rod", position=(0.1, 0.2, 0.0))


BODIES = {
    "PointMass": lambda: PointMass("m", 1.5, (0.1, 0.2, 0.3)),
    "RigidBody2D": lambda: RigidBody2D("b", 2.0, 0.3, position=(0.1, 0.2), angle=0.4),
    "RigidBodyEP": lambda: RigidBodyEP("b", 2.0, np.diag([0.3, 0.4, 0.5]), centroid=(0.1, -0.2, 0.3)),
    "RigidBodyNatural": lambda: RigidBodyNatural("b", 2.0, np.diag([0.3, 0.4, 0.5]), centroid=(0.1, -0.2, 0.3)),
    "CorotationalBeam2D": lambda: CorotationalBeam2D.line("beam", (0.0, 0.0), (1.0, 0.0), 3,
                                                          fm.Material(E=2e11, rho=7870.0), 1e-4, 1e-9),
    "FlexibleBody": flexible_rod,
    "TreeBody": lambda: double_arm(),
}


def double_arm():
    """Two links on revolute joints about z and y (a spatial double pendulum in the analyst's angles)."""
    from flexmbs.bodies import TreeBody, TreeJoint, TreePart
    joints = [TreeJoint("l1", "revolute", (0, 0, 1), "a"),
              TreeJoint("l2", "revolute", (0, 1, 0), "b", parent="l1", offset=(0.5, 0.0, 0.0))]
    parts = [TreePart("l1", "l1", 1.0, (0.01, 0.02, 0.02), centroid=(0.25, 0.0, 0.0)),
             TreePart("l2", "l2", 2.0, (0.02, 0.05, 0.05), centroid=(0.3, 0.1, 0.0))]
    return TreeBody("arm", ("a", "b"), joints, parts, q0=(0.3, -0.4), v0=(1.0, 2.0))


def random_state(body, rng):
    """(q, q', q'') near the body's start, on its internal constraints' manifold to first order in q'
    and q'' (unit Euler parameters, p.p' = 0, p.p'' = -p'.p') for the Euler-parameter bodies."""
    q = body.initial_coordinates() + 0.2 * rng.standard_normal(body.n_q)
    v, a = rng.standard_normal(body.n_q), rng.standard_normal(body.n_q)
    if isinstance(body, (RigidBodyEP, FlexibleBody)):
        p = q[3:7] / np.linalg.norm(q[3:7])
        q[3:7] = p
        v[3:7] -= p * (p @ v[3:7])
        a[3:7] -= p * (p @ a[3:7] + v[3:7] @ v[3:7])
    return q, v, a


def internal_gradients(body, q) -> np.ndarray:
    """The rows of the body's internal constraints' Jacobian (n_c, n_q), the directions their multipliers
    take up (the Euler-parameter norm's (0, 2 p)); (0, n_q) without internal constraints."""
    rows = [np.atleast_2d(c.jacobian(0.0, [q])[0]) for c in body.internal_constraints()]
    return np.vstack(rows) if rows else np.zeros((0, body.n_q))


def lagrange_inertia(body, q, v, a) -> np.ndarray:
    """M q'' - Q_v of Lagrange's equations: Q_v the body's `quadratic_velocity`, else its `forces` less its
    `active_forces` (no gravity; zero for the constant-mass bodies; a subtraction that would lose digits to
    the elastic forces of a flexible body is avoided by its `quadratic_velocity`)."""
    Q_v = (body.quadratic_velocity(q, v) if hasattr(body, "quadratic_velocity")
           else body.forces(0.0, q, v, None) - body.active_forces(0.0, q, v, None))
    return body.mass_matrix(q) @ a - Q_v


@pytest.mark.parametrize("kind", sorted(BODIES))
def test_gibbs_appell_inertia_terms_are_lagranges(kind):
    """dS/dq'' = M_GA q'' + g equals Lagrange's M q'' - Q_v to round-off at random states, up to the
    internal constraints' gradients (their multipliers differ: rigid bodies in Euler parameters)."""
    rng = np.random.default_rng(23)
    body = BODIES[kind]()
    for _ in range(3):
        q, v, a = random_state(body, rng)
        M, g = body.gibbs_appell(q[None], v[None])
        diff = M[0] @ a + g[0] - lagrange_inertia(body, q, v, a)
        C = internal_gradients(body, q)
        if len(C):
            diff -= C.T @ np.linalg.lstsq(C.T, diff, rcond=None)[0]
        scale = np.abs(lagrange_inertia(body, q, v, a)).max()
        assert np.abs(diff).max() <= 1e-12 * scale, (kind, np.abs(diff).max() / scale)


@pytest.mark.parametrize("kind", sorted(BODIES))
def test_kinetic_energy_gradient_is_dT_dq(kind):
    """Hamilton's dT/dq (at fixed q') of every body against central differences of T = 1/2 q'^T M(q) q'
    (step 1e-6: truncation ~1e-12 of the gradient's size, round-off ~1e-10)."""
    rng = np.random.default_rng(5)
    body = BODIES[kind]()
    q, v, _ = random_state(body, rng)
    T = lambda qq: 0.5 * v @ body.mass_matrix(qq) @ v  # noqa: E731
    h = 1e-6
    fd = np.array([(T(q + h * e) - T(q - h * e)) / (2 * h) for e in np.eye(body.n_q)])
    got = body.kinetic_energy_gradient(q[None], v[None])[0]
    assert np.abs(got - fd).max() <= 1e-7 * max(np.abs(fd).max(), 0.5 * body.mass_matrix(q).max() * (v @ v))


def test_coupled_slider_crank_accelerations_agree():
    """At the start of the coupled slider-crank (8 elements): Gibbs-Appell's q'' is Lagrange's to round-off,
    Hamilton's q' from p = M q' is q' itself."""
    system = slider_crank.build_coupled(elements=8)[0]
    lagrange, gibbs, hamilton = (system_formulation(n, system) for n in ("lagrange", "gibbs-appell", "hamilton"))
    x0 = lagrange.state0()
    n = system.n_q
    a_L = lagrange.rhs(0.0, x0)[n:]
    a_G = gibbs.rhs(0.0, x0)[n:]
    assert np.abs(a_G - a_L).max() <= 1e-12 * np.abs(a_L).max()
    q, q_dot = hamilton.physical(0.0, hamilton.state0())
    assert np.abs(q_dot - x0[n:]).max() <= 1e-12 * np.abs(x0[n:]).max()


def test_hamilton_multipliers_are_lagranges():
    """lam = sigma' of Hamilton's form at the coupled slider-crank's start equals the multipliers of Lagrange's
    index-1 accelerations (every row, joints and Euler-parameter norms) to 1e-7 of the largest (central
    differences of M, a and b along the motion)."""
    system = slider_crank.build_coupled(elements=2)[0]
    lagrange, hamilton = (system_formulation(n, system) for n in ("lagrange", "hamilton"))
    lam_L = lagrange.multipliers(0.0, lagrange.state0())
    lam_H = hamilton.multipliers(0.0, hamilton.state0())
    assert np.abs(lam_H - lam_L).max() <= 1e-7 * np.abs(lam_L).max()


@pytest.mark.parametrize("coordinates", ["euler-parameters", "natural"])
def test_triple_pendulum_three_formulations_agree(coordinates):
    """Pappalardo and Guida's triple pendulum (cases/triple_pendulum.py), 0.1 s by DOP853 at rtol 1e-10:
    Gibbs-Appell's and Hamilton's motions are Lagrange's to 1e-7 of the bars' size, and each conserves
    T + V_g (no damping, no driver) to 1e-9 of the 4 J exchanged (measured 8e-13 to 2.4e-12 J)."""
    system = triple_pendulum.build(coordinates)
    t = np.linspace(0.0, 0.1, 3)
    runs = {name: fm.run(system, formulation=name, method="DOP853", rtol=1e-10, atol=1e-12, t_end=0.1, t_eval=t,
                         store=False) for name in ("lagrange", "gibbs-appell", "hamilton")}
    for name in ("gibbs-appell", "hamilton"):
        assert runs[name].success, runs[name].message
        assert np.abs(runs[name].q - runs["lagrange"].q).max() < 1e-7 * 4.0, name
        dq = runs[name].q_dot if runs[name].q_dot is not None else runs[name].v
        assert np.abs(dq - runs["lagrange"].v).max() < 1e-6, name
    for name, res in runs.items():
        assert np.ptp(res.energies["total"]) < 1e-9 * np.abs(res.energies["kinetic"]).max(), name


def _coupled_run(name, method, t_end, **options):
    """(Results, mid-span deflection) of the coupled slider-crank (2 elements) by ``name`` + ``method``."""
    from flexmbs.mechanisms import chord_deflection
    system, _, model = slider_crank.build_coupled(elements=2)
    t = np.linspace(0.0, t_end, 5)
    res = fm.run(system, formulation=name, method=method, t_end=t_end, t_eval=t, store=False, **options)
    assert res.success, res.message
    return res, chord_deflection(model, res.bodies["rod"].delta, [0.15])[:, 0]


def test_coupled_slider_crank_hamilton_follows_lagrange():
    """The first 0.4 ms of the coupled slider-crank by the implicit midpoint rule (h = 1e-5 s): Hamilton's
    mid-span deflection is Lagrange's to 1e-3 of its size (measured 3.5e-4 at 0.5 ms: the step's error,
    the two forms being second-order approximations of one motion in different states; the slow test
    below compares them at a tight tolerance)."""
    _, w_L = _coupled_run("lagrange", "midpoint", 4e-4, h=1e-5)
    _, w = _coupled_run("hamilton", "midpoint", 4e-4, h=1e-5)
    assert np.abs(w - w_L).max() <= 1e-3 * np.abs(w_L).max()


@pytest.mark.slow
def test_coupled_slider_crank_hamilton_equals_lagrange_at_tight_tolerance():
    """2 ms of the coupled slider-crank by Radau at rtol 1e-8 (about a minute): Hamilton's deflection is
    Lagrange's to 1e-8 of its size (measured 1.2e-10), the positions to 1e-10 m."""
    r_L, w_L = _coupled_run("lagrange", "Radau", 2e-3, rtol=1e-8, atol=1e-11)
    r_H, w_H = _coupled_run("hamilton", "Radau", 2e-3, rtol=1e-8, atol=1e-11)
    assert np.abs(w_H - w_L).max() <= 1e-8 * np.abs(w_L).max()
    assert np.abs(r_H.q - r_L.q).max() <= 1e-10


@pytest.mark.parametrize("formulation", ["gibbs-appell", "hamilton", "maggi"])
def test_slider_crank_case_takes_the_formulation(formulation, tmp_path):
    """`--set coupled=true --set formulation=NAME` runs the coupled model with NAME's equations (a tiny run:
    2 elements, 0.02 revolutions) and writes the case's files; the mid-span deflection is the default
    (Lagrange, index3-alpha) one's to 2 % of its size (different integrators at h = 2.9e-5 s: index3-alpha
    damps the axial vibration of the start, the midpoint rule does not)."""
    params = dict(coupled=True, elements=2, revolutions=0.02, plots=False)
    ref = slider_crank.run(**params)[2]["midspan_deflection"]
    res, _, extras = slider_crank.run(out=tmp_path, formulation=formulation, **params)
    expected = "index3-alpha" if formulation == "gibbs-appell" else "midpoint"
    assert (res.metadata["formulation"], res.metadata["method"]) == (formulation, expected)
    w = extras["midspan_deflection"]
    assert np.abs(w - ref).max() <= 0.02 * np.abs(ref).max(), np.abs(w - ref).max() / np.abs(ref).max()
    assert (tmp_path / "results.npz").exists() and (tmp_path / "summary.json").exists()



def test_sleigh_nonholonomic_three_formulations_agree():
    """Chaplygin's sleigh (a TreeBody on a knife edge, tests/test_registry.py): a nonholonomic constraint,
    whose row a q' + b = 0 Hamilton's momenta carry; 0.3 s by DOP853 at rtol 1e-10, the three motions agree
    to 1e-7."""
    from test_registry import sleigh
    t = np.linspace(0.0, 0.3, 3)
    runs = {name: fm.run(sleigh(), formulation=name, method="DOP853", rtol=1e-10, atol=1e-12, t_end=0.3, t_eval=t,
                         store=False) for name in ("lagrange", "gibbs-appell", "hamilton")}
    for name in ("gibbs-appell", "hamilton"):
        assert runs[name].success, runs[name].message
        assert np.abs(runs[name].q - runs["lagrange"].q).max() < 1e-7, name


def test_maggi_multipliers_are_lagranges():
    """Maggi's multipliers, recovered from the rows of Lagrange's equations that it drops, equal those of
    Lagrange's index-1 accelerations at the coupled slider-crank's start (every row) to 1e-9 of the largest."""
    system = slider_crank.build_coupled(elements=2)[0]
    lagrange, maggi = (system_formulation(n, system) for n in ("lagrange", "maggi"))
    x0 = lagrange.state0()
    lam_L = lagrange.multipliers(0.0, x0)
    assert np.abs(maggi.multipliers(0.0, x0) - lam_L).max() <= 1e-9 * np.abs(lam_L).max()


def test_batched_bodies_give_their_own_terms():
    """`BodyTerms` evaluates the Euler-parameter bodies of a System in one batch (and planar bodies in
    theirs): the assembled terms equal each body's own methods, a body's load included."""
    from flexmbs.bodies.loads import torque_load
    from flexmbs.formulations.body_terms import GIBBS_APPELL, HAMILTON, BodyTerms
    from flexmbs.system import System
    rng = np.random.default_rng(7)
    a = RigidBodyEP("a", 2.0, np.diag([0.3, 0.4, 0.5]), centroid=(0.1, -0.2, 0.3),
                    loads=[torque_load(lambda t: (0.0, 0.0, 1.5))])
    b = RigidBodyEP("b", 5.0, np.diag([0.6, 0.2, 0.7]), centroid=(-0.3, 0.0, 0.2))
    system = System([a, b, flexible_rod()], gravity=(0.0, 0.0, -9.81))
    q, v = system.initial_coordinates(), rng.standard_normal(system.n_q)
    terms = BodyTerms(system, GIBBS_APPELL + HAMILTON[:1], "test")
    M, g = terms.inertia_terms(q, v)
    dT = terms.kinetic_energy_gradient(q, v)
    Q_a = terms.active_forces(0.3, q, v)
    for body in system.bodies:
        sl = system.slice(body)
        Mb, gb = body.gibbs_appell(q[None, sl], v[None, sl])
        np.testing.assert_allclose(M[sl, sl], Mb[0], rtol=0, atol=1e-13 * np.abs(Mb).max())
        np.testing.assert_allclose(g[sl], gb[0], rtol=0, atol=1e-13 * max(np.abs(gb).max(), 1.0))
        np.testing.assert_allclose(dT[sl], body.kinetic_energy_gradient(q[None, sl], v[None, sl])[0], atol=1e-12)
        np.testing.assert_allclose(Q_a[sl], body.active_forces(0.3, q[sl], v[sl], system.gravity), atol=1e-12)


def corotational_pendulum():
    """A 2-element planar corotational beam pinned at node 0 (cases/flexible_pendulum.py, smaller), gravity."""
    from flexmbs.bodies import Node
    from flexmbs.constraints import Spherical
    from flexmbs.system import System
    beam = CorotationalBeam2D.line("p", (0.0, 0.0), (1.0, 0.0), 2, fm.Material(E=2e9, rho=7800.0), 1e-4, 1e-9)
    return System([beam], [Spherical(None, beam, s_j=Node(0), name="pin")], gravity=(0.0, -9.81))


def mean_axis_pendulum():
    """A free-free 3-element floating-frame beam on its mean axes (internal constraints), pinned at node 0."""
    from flexmbs.bodies import Node
    from flexmbs.constraints import Revolute
    from flexmbs.system import System
    element = fm.BeamEB2D(fm.Material(E=2e9, rho=7800.0), area=1e-4, I=1e-9, rotary_inertia=True)
    body = FlexibleBody(fm.Model(fm.generate.line(3, 1.0), element, fixed=[]), "p", reference="mean-axis")
    return System([body], [Revolute(body, None, s_i=Node(0), axis=(0, 0, 1), name="pin")], gravity=(0.0, -9.81, 0.0))


def satellite():
    """Seed 001's satellite with a deployable boom (cases/satellite_boom.py): a TreeBody driven by the boom force."""
    import satellite_boom
    return satellite_boom.build().system


@pytest.mark.parametrize("make, t_end", [(corotational_pendulum, 0.01), (mean_axis_pendulum, 0.01), (satellite, 1.0)],
                         ids=["corotational pendulum", "mean-axis pendulum", "satellite with a boom"])
def test_more_systems_three_formulations_agree(make, t_end):
    """DOP853 at rtol 1e-9 from the cases' starts: Gibbs-Appell's and Hamilton's coordinates are Lagrange's to
    1e-8 (measured: 0 to 1e-9 over 0.05 s of the pendulums and 1 s of the satellite)."""
    t = np.linspace(0.0, t_end, 3)
    runs = {name: fm.run(make(), formulation=name, method="DOP853", rtol=1e-9, atol=1e-12, t_end=t_end, t_eval=t,
                         store=False) for name in ("lagrange", "gibbs-appell", "hamilton")}
    for name in ("gibbs-appell", "hamilton"):
        assert runs[name].success, runs[name].message
        assert np.abs(runs[name].q - runs["lagrange"].q).max() < 1e-8, name


@pytest.mark.slow
def test_torque_driven_spin_up_three_formulations_agree():
    """The torque-driven spin-up (cases/spinup_beam.py --coupled --torque, 2 elements): a hub in Euler
    parameters with a torque load and a floating-frame beam clamped to it, 1 s by DOP853 at rtol 1e-9 (about
    25 s): Gibbs-Appell's and Hamilton's coordinates are Lagrange's to 1e-8."""
    import spinup_beam
    t = np.linspace(0.0, 1.0, 3)
    runs = {name: fm.run(spinup_beam.build_coupled(elements=2, torque=True)[0], formulation=name, method="DOP853",
                         rtol=1e-9, atol=1e-12, t_end=1.0, t_eval=t, store=False)
            for name in ("lagrange", "gibbs-appell", "hamilton")}
    for name in ("gibbs-appell", "hamilton"):
        assert runs[name].success, runs[name].message
        assert np.abs(runs[name].q - runs["lagrange"].q).max() < 1e-8, (name, np.abs(runs[name].q - runs["lagrange"].q).max())
