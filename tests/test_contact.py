"""Contact with friction (flexmbs.contact, issue 26 item 3): the law's restitution against closed
forms, the broad phase against brute force, the narrow phase's forces against the gradient of the
contact energy, the tangent against differences, contact on every body kind."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import flexmbs as fm
from flexmbs.bodies import RigidBodyEP
from flexmbs.bodies.flexible import FlexibleBody, Node
from flexmbs.bodies.planar import RigidBody2D
from flexmbs.bodies.point import PointMass
from flexmbs.contact import (Box, Capsule, Contact, ContactLaw, Hole, Plane, Points, Sphere, Surface, brute_force_pairs,
                             overlapping_pairs, restitution_of_damping)
from flexmbs.contact.law import hunt_crossley_restitution, linear_restitution
from flexmbs.elements import BeamEB3D, Material
from flexmbs.rotations import matrix_to_ep, rotation_x, rotation_z

RNG = np.random.default_rng(26)


def one_impact(law: ContactLaw, v0: float, k: float = 1e5, m: float = 2.0) -> float:
    """e = -v_out / v0 of a mass m hitting a wall at v0 under ``law`` (its `normal`), by DOP853."""
    def rhs(t, y):
        f = law.normal(np.array([max(y[0], 0.0)]), np.array([y[1]]), np.array([k]), np.array([m]))[0][0]
        return [y[1], -f / m if y[0] > 0 else 0.0]

    def out(t, y):
        return y[0] + 1e-300 if t > 0 else 1.0
    out.terminal, out.direction = True, -1
    sol = solve_ivp(rhs, (0, 10.0), [0.0, v0], method="DOP853", rtol=1e-11, atol=1e-14, events=out, max_step=1e-3)
    return -sol.y_events[0][0][1] / v0


@pytest.mark.parametrize("zeta", [0.02, 0.1, 0.3, 0.6])
def test_linear_dashpot_restitution_matches_its_closed_form(zeta):
    """n = 1: the quadrature of the dimensionless law against e(zeta) in closed form (derived in
    flexmbs.contact.law.linear_restitution; Schwager and Poeschel 2007, doi:10.1103/PhysRevE.75.051304)."""
    assert restitution_of_damping(zeta, 1.0) == pytest.approx(linear_restitution(zeta), rel=1e-10)


@pytest.mark.parametrize("e", [0.3, 0.8, 0.95])
def test_scaled_dashpot_gives_the_restitution_at_every_impact_speed(e):
    law = ContactLaw(stiffness=1e5, restitution=e)
    for v0 in (0.1, 1.0, 10.0):
        assert one_impact(law, v0) == pytest.approx(e, rel=1e-6)


def test_hunt_crossley_gives_the_restitution_at_its_impact_speed_and_the_closed_form_elsewhere():
    """ln((1 + x)/(1 - e x)) = (1 + e) x, x = chi v0 (derived in flexmbs.contact.law): e exactly at
    the given impact speed; at half of it the closed form's larger e."""
    law = ContactLaw(stiffness=1e5, restitution=0.7, damping="hunt-crossley", impact_velocity=2.0)
    assert one_impact(law, 2.0) == pytest.approx(0.7, rel=1e-6)
    slow = hunt_crossley_restitution(law.chi, 1.0)
    assert slow > 0.7 and one_impact(law, 1.0) == pytest.approx(slow, rel=1e-6)
    # e near 1: Lankarani and Nikravesh 1990's chi = 3 (1 - e^2) / (4 v0) to first order in 1 - e
    near = ContactLaw(stiffness=1e5, restitution=0.999, damping="hunt-crossley", impact_velocity=1.0)
    assert near.chi == pytest.approx(0.75 * (1 - 0.999 ** 2), rel=2e-3)


@pytest.mark.parametrize("dim", [2, 3])
def test_broad_phase_finds_the_pairs_of_brute_force(dim):
    for n in (30, 400, 1500):
        c = RNG.uniform(0.0, 10.0, (n, dim))
        r = RNG.uniform(0.01, 0.4, n)
        r[:3] = [3.0, 0.0, 5.0]                                  # a few large boxes and a point
        lo, hi = c - r[:, None], c + r[:, None]
        got = set(zip(*(x.tolist() for x in overlapping_pairs(lo, hi))))
        assert got == set(zip(*(x.tolist() for x in brute_force_pairs(lo, hi))))


def ep(A):
    return matrix_to_ep(A)


def scene_3d():
    """Rigid bodies with every pair kind in contact: sphere-plane, sphere-sphere, sphere-box, corner-plane,
    sphere-capsule, capsule end-plane."""
    a = RigidBodyEP("a", 1.0, 0.01 * np.eye(3), position=(0.0, 0.0, 0.098))
    b = RigidBodyEP("b", 2.0, 0.02 * np.eye(3), position=(0.17, 0.03, 0.11), orientation=rotation_z(0.3))
    c = RigidBodyEP("c", 1.5, 0.02 * np.eye(3), position=(-0.105, 0.0, 0.12), orientation=rotation_x(0.2))
    shapes = [Sphere(a, 0.1), Sphere(b, 0.08), Plane(None, (0, 0, 1)), Box(b, (0.05, 0.04, 0.06), at=(-0.08, 0, -0.06)),
              Capsule(c, (0.0, -0.1, -0.05), (0.0, 0.1, -0.12), 0.03), Sphere(c, 0.02, at=(0.1, 0.0, 0.0))]
    return [a, b, c], shapes


def stacked(bodies):
    return np.concatenate([b.initial_coordinates() for b in bodies])


def on_the_norms(Q, q, starts):
    """Q without its components along (0, p) of each Euler-parameter frame starting at ``starts``: the
    directions the norm constraints p.p = 1 take up (a force there only scales the unnormalised A(p))."""
    Q = Q.copy()
    for s in starts:
        p = q[s + 3:s + 7]
        Q[s + 3:s + 7] -= (Q[s + 3:s + 7] @ p) / (p @ p) * p
    return Q


def test_contact_forces_are_the_gradient_of_the_contact_energy_on_every_pair_kind():
    """Frictionless, no damping: Q = -dU/dq (the narrow phase's delta and its contact points agree)."""
    bodies, shapes = scene_3d()
    contact = Contact(shapes, ContactLaw(stiffness=1e6))
    q = stacked(bodies)
    st = contact.state(q, np.zeros_like(q))
    kinds = {(int(a), int(b)) for a, b in zip(st.body_a, st.body_b)}
    assert len(st.delta) >= 6 and {(3, 0), (0, 1), (1, 0), (3, 1), (2, 0), (0, 2)} <= kinds, kinds
    Q = contact.stacked_forces(q, np.zeros_like(q))
    h = 1e-7
    grad = np.array([(contact.potential(contact._split(q + h * e)) - contact.potential(contact._split(q - h * e)))
                     / (2 * h) for e in np.eye(len(q))])
    Q, grad = on_the_norms(Q, q, [0, 7, 14]), on_the_norms(grad, q, [0, 7, 14])
    np.testing.assert_allclose(Q, -grad, rtol=0, atol=1e-6 * np.abs(Q).max())


def test_damping_tangent_matches_differences_and_frictionless_stiffness_too():
    bodies, shapes = scene_3d()
    law = ContactLaw(stiffness=1e6, restitution=0.5, friction=0.4)
    contact = Contact(shapes, law)
    q = stacked(bodies)
    v = 0.01 * RNG.standard_normal(len(q))
    Q0 = contact.stacked_forces(q, v)
    C = contact.tangent(0.0, contact._split(q), contact._split(v))[1]
    h = 1e-8
    C_fd = -np.array([(contact.stacked_forces(q, v + h * e) - Q0) / h for e in np.eye(len(q))]).T
    np.testing.assert_allclose(C, C_fd, rtol=0, atol=1e-4 * np.abs(C_fd).max())
    # one sphere on the ground, no friction: the translations' block has no geometric part (n is fixed)
    ball = RigidBodyEP("ball", 1.0, 0.004 * np.eye(3), position=(0.0, 0.0, 0.095), orientation=rotation_x(0.4))
    one = Contact([Sphere(ball, 0.1), Plane(None, (0, 0, 1))], ContactLaw(stiffness=1e6, restitution=0.5))
    q = ball.initial_coordinates()
    v = 0.1 * RNG.standard_normal(7)
    K = one.tangent(0.0, [q], [v])[0]
    Q0 = one.stacked_forces(q, v)
    K_fd = -np.array([(one.stacked_forces(q + h * e, v) - Q0) / h for e in np.eye(7)]).T
    np.testing.assert_allclose(K[:3, :3], K_fd[:3, :3], rtol=0, atol=1e-5 * np.abs(K_fd).max())


def test_planar_and_point_bodies_carry_shapes():
    """2D: a box's corners on an oblique line, a circle on a point mass against the box: Q = -dU/dq."""
    box = RigidBody2D("box", 1.0, 0.01, position=(0.0, 0.045), angle=0.1)
    bead = PointMass("bead", 0.2, position=(0.13, 0.05))
    contact = Contact([Box(box, (0.1, 0.05)), Plane(None, (0.05, 1.0)), Sphere(bead, 0.04)], ContactLaw(stiffness=1e5))
    q = np.concatenate([box.initial_coordinates(), bead.initial_coordinates()])
    assert len(contact.state(q, np.zeros(5)).delta) >= 2
    Q = contact.stacked_forces(q, np.zeros(5))
    h = 1e-7
    grad = np.array([(contact.potential(contact._split(q + h * e)) - contact.potential(contact._split(q - h * e)))
                     / (2 * h) for e in np.eye(5)])
    np.testing.assert_allclose(Q, -grad, rtol=0, atol=1e-6 * np.abs(Q).max())


def test_a_journal_in_its_bearing_hole_pushes_back_towards_the_centre():
    """2D clearance joint: a circle of radius r in a hole of radius R on another body; Q = -dU/dq, the force
    on the journal points to the hole's centre, and a journal within the clearance feels nothing."""
    rod = RigidBody2D("rod", 1.0, 0.01, position=(0.0, 0.0), angle=0.3)
    centre = 0.01 * np.array([np.cos(0.3), np.sin(0.3)])
    slider = RigidBody2D("slider", 0.5, 0.001, position=centre + (1.2e-4, 0.9e-4))          # 5e-5 into the wall
    contact = Contact([Hole(rod, 0.01, at=(0.01, 0.0)), Sphere(slider, 0.0099)], ContactLaw(stiffness=1e8))
    q = np.concatenate([rod.initial_coordinates(), slider.initial_coordinates()])
    st = contact.state(q, np.zeros(6))
    assert len(st.delta) == 1 and st.delta[0] == pytest.approx(5e-5)
    to_centre = centre - q[3:5]
    assert st.force[0] @ to_centre > 0.99 * np.linalg.norm(st.force[0]) * np.linalg.norm(to_centre)
    Q = contact.stacked_forces(q, np.zeros(6))
    h = 1e-9
    grad = np.array([(contact.potential(contact._split(q + h * e)) - contact.potential(contact._split(q - h * e)))
                     / (2 * h) for e in np.eye(6)])
    np.testing.assert_allclose(Q, -grad, rtol=0, atol=1e-5 * np.abs(Q).max())
    q[3:5] = centre + 0.5 * (0.01 - 0.0099) * np.array([0.6, 0.8])                  # inside the clearance
    assert len(contact.state(q, np.zeros(6)).delta) == 0


def test_a_sphere_on_a_triangulated_floor_touches_its_deepest_triangle_once():
    """A square floor of two triangles (the ground's Surface): a ball inside one triangle and one over the
    shared diagonal each touch once, along the face normal, with Q = -dU/dq; a ball beside it, on an
    edge of the square, is pushed out along the edge's normal."""
    pts = np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0]])
    floor = Surface(None, points=pts, triangles=[[0, 1, 2], [0, 2, 3]])
    balls = [RigidBodyEP(f"b{k}", 1.0, 0.004 * np.eye(3), position=p) for k, p in
             enumerate([(0.5, -0.3, 0.098), (0.2, 0.2, 0.097), (1.05, 0.0, 0.0)])]
    contact = Contact([floor] + [Sphere(b, 0.1) for b in balls], ContactLaw(stiffness=1e6))
    q = stacked(balls)
    st = contact.state(q, np.zeros_like(q))
    assert sorted(st.body_b.tolist()) == [0, 1, 2]
    order = np.argsort(st.body_b)
    np.testing.assert_allclose(st.delta[order], [0.002, 0.003, 0.05], atol=1e-12)
    np.testing.assert_allclose(st.n[order], [[0, 0, 1], [0, 0, 1], [1, 0, 0]], atol=1e-12)
    Q = contact.stacked_forces(q, np.zeros_like(q))
    h = 1e-7
    grad = np.array([(contact.potential(contact._split(q + h * e)) - contact.potential(contact._split(q - h * e)))
                     / (2 * h) for e in np.eye(len(q))])
    Q, grad = on_the_norms(Q, q, [0, 7, 14]), on_the_norms(grad, q, [0, 7, 14])
    np.testing.assert_allclose(Q, -grad, rtol=0, atol=1e-6 * np.abs(Q).max())


def beam_body():
    n = 4
    x = np.linspace(0.0, 1.0, n + 1)
    mesh = fm.Mesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])},
                   node_sets={"start": np.array([0])})
    model = fm.Model(mesh, BeamEB3D(Material(E=2e9, rho=1000.0), 1e-4, 1e-8, 1e-8, 2e-8), fixed=[("start", "all")])
    return FlexibleBody(model, "beam", position=(0.0, 0.0, 0.01))


def test_a_flexible_body_touches_by_its_nodes_and_their_deformation():
    """Points at a flexible body's nodes (a Surface of its mesh: all nodes of a beam) on the ground: the
    generalized forces, elastic coordinates included, are -dU/dq."""
    body = beam_body()
    contact = Contact([Surface(body, radius=0.012), Plane(None, (0, 0, 1))],
                      ContactLaw(stiffness=1e5, effective_mass=0.1))
    q = body.initial_coordinates()
    q[7:] = 1e-4 * RNG.standard_normal(body.n_e)
    st = contact.state(q, np.zeros_like(q))
    assert len(st.delta) >= 3
    Q = contact.stacked_forces(q, np.zeros_like(q))
    assert np.abs(Q[7:]).max() > 0
    h = 1e-7
    grad = np.array([(contact.potential([q + h * e]) - contact.potential([q - h * e])) / (2 * h)
                     for e in np.eye(len(q))])
    Q, grad = on_the_norms(Q, q, [0]), on_the_norms(grad, q, [0])
    np.testing.assert_allclose(Q, -grad, rtol=0, atol=1e-6 * np.abs(Q).max())
    nodes = Contact([Points(body, [Node(2), Node(4)], radius=0.012), Plane(None, (0, 0, 1))],
                    ContactLaw(stiffness=1e5))             # elastic (e = 1): no effective mass needed
    st = nodes.state(q, np.ones_like(q))
    assert len(st.delta) == 2 and np.all(np.isfinite(st.f_n)) and np.all(st.f_n == st.f_elastic)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")      # meshio's STL format sniffing
def test_an_stl_surface_is_read_with_meshio(tmp_path):
    import meshio
    pts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float)
    tri = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    meshio.write(tmp_path / "tet.stl", meshio.Mesh(pts, [("triangle", tri)]))
    body = RigidBodyEP("tet", 1.0, 0.01 * np.eye(3), position=(0.0, 0.0, -0.001))
    surface = Surface.from_file(body, tmp_path / "tet.stl")
    assert surface.triangles.shape == (4, 3)
    contact = Contact([surface, Plane(None, (0, 0, 1))], ContactLaw(stiffness=1e6))
    st = contact.state(body.initial_coordinates(), np.zeros(7))
    assert sorted(np.round(st.delta, 12)) == [0.001, 0.001, 0.001]         # the three vertices on z = 0


def test_contact_forces_are_in_the_results_the_results_file_and_paraview(tmp_path):
    """A ball resting on the ground (placed at its static penetration (m g / k)^(2/3)): the recorded
    normal force is m g at the recorded point, in `Results.contacts`, results.h5 and the XDMF series."""
    import h5py

    from flexmbs.io.paraview import write_results_xdmf
    from flexmbs.system import System
    m, r, k = 2.0, 0.1, 1e7
    sink = (m * 9.81 / k) ** (2 / 3)
    ball = RigidBodyEP("ball", m, 0.4 * m * r * r * np.eye(3), position=(0.3, 0.0, r - sink))
    contact = Contact([Sphere(ball, r), Plane(None, (0, 0, 1))], ContactLaw(stiffness=k, restitution=0.5), name="floor",
                      slots=2)
    system = System([ball], gravity=(0.0, 0.0, -9.81), forces=[contact])
    res = fm.run(system, method="RK45", rtol=1e-8, t_end=0.02, dt_out=0.005, store=tmp_path / "results.h5")
    rec = res.contacts["floor"]
    assert rec["normal_force"].shape == (5, 2, 3) and np.all(rec["count"] == 1)
    np.testing.assert_allclose(rec["normal_force"][:, 0], np.tile([0.0, 0.0, m * 9.81], (5, 1)), rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(rec["point"][:, 0, :2], np.tile([0.3, 0.0], (5, 1)), atol=1e-9)
    assert np.all(np.isnan(rec["normal_force"][:, 1])) and np.all(rec["bodies"][:, 0] == [-1, 0])
    loaded = fm.load_results(tmp_path / "results.h5")
    np.testing.assert_allclose(loaded.contacts["floor"]["normal_force"], rec["normal_force"])
    write_results_xdmf(loaded, tmp_path / "pv.xdmf")
    with h5py.File(tmp_path / "pv.h5") as f:
        np.testing.assert_allclose(f["series/normal_force"][:, -2, 2], m * 9.81, rtol=1e-5)


def test_the_sphere_benchmark_runs_and_its_spheres_land():
    """benchmarks/bench_contact_spheres.py at a small size: the run finishes, contacts appear and the
    spheres stay above the floor (no assertion on times)."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_contact_spheres.py"
    spec = importlib.util.spec_from_file_location("bench_contact_spheres", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    r = bench.run(20, 0.006)                          # a real flexmbs.run (RK45) of 6 ms
    assert r["status"] == "finished" and r["max_active"] >= 10 and 0.005 < r["lowest_z"] < 0.02 and r["by_active"]


def test_the_contact_power_is_the_rate_of_its_energy_minus_the_dissipation():
    """v . Q = -dU/dt - P_damping at a state with dashpots and friction on every pair kind: what makes
    E + W_damping constant in a run (v tangent to the Euler-parameter norms)."""
    bodies, shapes = scene_3d()
    contact = Contact(shapes, ContactLaw(stiffness=1e6, restitution=0.4, friction=0.5, slip_velocity=1e-3))
    q = stacked(bodies)
    v = 0.05 * RNG.standard_normal(len(q))
    for s in (0, 7, 14):
        p = q[s + 3:s + 7]
        v[s + 3:s + 7] -= (v[s + 3:s + 7] @ p) * p
    qs, vs = contact._split(q), contact._split(v)
    h = 1e-7
    dU_dt = (contact.potential(contact._split(q + h * v)) - contact.potential(contact._split(q - h * v))) / (2 * h)
    P = contact.powers(0.0, qs, vs)
    assert P["damping"] > 0 and P["loads"] == 0.0
    assert v @ contact.stacked_forces(q, v) == pytest.approx(-dU_dt - P["damping"], rel=1e-6)


@pytest.mark.slow
def test_a_flexible_beam_dropped_on_the_ground_by_its_nodes_closes_its_energy_balance():
    """A free beam (FlexibleBody) lying 2 mm into the ground by its node spheres is thrown up and bent
    (index3-alpha, frictionless, restitution 0.5): E(t) - E(0) + W_damping stays within 1 % of the
    dissipated work (the trapezoidal rule of the works over the steps)."""
    from flexmbs.system import System
    body = beam_body()
    contact = Contact([Surface(body, radius=0.012), Plane(None, (0, 0, 1))],
                      ContactLaw(stiffness=1e5, effective_mass=0.02, restitution=0.5))
    system = System([body], gravity=(0, 0, -9.81), forces=[contact])
    res = fm.run(system, method="index3-alpha", h=1e-4, t_end=0.015, dt_out=1e-4, store=False)
    assert res.status == "finished" and res.contacts["contact"]["count"].max() == 5
    dissipated = res.energies["W_damping"][-1]
    assert dissipated > 0.01 and np.abs(res.q[:, 7:]).max() > 1e-3                # it bends
    assert np.abs(res.energy_balance_error()).max() < 0.01 * dissipated


@pytest.mark.slow
@pytest.mark.parametrize("formulation", ["gibbs-appell", "hamilton", "maggi", "kane"])
def test_formulations_agree_on_a_ball_that_lands_and_slides(formulation):
    """A ball thrown sideways lands, slips and bounces (friction, restitution 0.7): every formulation gives
    lagrange's position (RK45 at rtol 1e-8, max_step 2e-3 below the contact time)."""
    from flexmbs.system import System

    def run(name):
        ball = RigidBodyEP("ball", 1.0, 0.004 * np.eye(3), position=(0, 0, 0.15), velocity=(0.3, 0, 0))
        law = ContactLaw(stiffness=1e6, restitution=0.7, friction=0.3, slip_velocity=1e-2)
        system = System([ball], gravity=(0, 0, -9.81), forces=[Contact([Sphere(ball, 0.1), Plane(None, (0, 0, 1))],
                                                                       law)])
        return fm.run(system, formulation=name, method="RK45", rtol=1e-8, t_end=0.3, dt_out=0.05, store=False,
                      max_step=2e-3)
    ref, res = run("lagrange"), run(formulation)
    assert ref.status == res.status == "finished" and ref.q[-1, 0] > 0.05          # it moved on after landing
    np.testing.assert_allclose(res.q[:, :3], ref.q[:, :3], rtol=0, atol=1e-5)
