"""FlexibleBody (floating frame of reference) and PrescribedFrame.

- M and Q_v against a finite-difference Lagrange derivation from T = 1/2 sum_p m_p |r_p'|^2
  over the mass points (an independent route: no inertia invariant);
- markers' Jacobians and biases, PrescribedFrame's C_q, C_t and gamma against finite differences;
- the bridge (issue 12 item 7, issue 14 item 1): a FlexibleBody whose frame is driven by a
  PrescribedFrame, integrated through the generic constrained path (System, augmented
  formulation, index-1 form), gives the motion of today's fast path fm.run(model) to integrator
  tolerance on the rotating bar (Vlase, Nicolescu, Marin, Mathematics 8 (2020) 1401, sec. 4a),
  the spin-up beam (Kane, Ryan, Banerjee, J. Guid. Control Dyn. 10 (1987) 139; data of
  cases/spinup_beam.py) and the slider-crank rod (Simeon 1996; data of cases/slider_crank.py).
"""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.assembly.mass_points import body_mass_points
from flexmbs.bodies import FlexibleBody, Node
from flexmbs.bodies.flexible import _V_matrices
from flexmbs.constraints import PrescribedFrame
from flexmbs.formulations import Lagrange, energies
from flexmbs.formulations.index1 import Index1
from flexmbs.integrators import simulate
from flexmbs.mechanisms import SliderCrank, constant_speed, flexible_link
from flexmbs.motion import ConstantRotation, GeneralMotion, SpinUp
from flexmbs.rotations import ep_to_matrix
from flexmbs.system import System
from flexmbs.assembly.assembler import dense_array

RNG = np.random.default_rng(11)


def beam_3d():
    x = np.linspace(0.0, 1.0, 4)
    mesh = fm.Mesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(3), np.arange(1, 4)])},
                   node_sets={"start": np.array([0]), "end": np.array([3])})
    beam = fm.BeamEB3D(fm.Material(2e3, 1000.0, 0.3), 1e-3, 1e-7, 2e-7, 3e-7, rotary_inertia=True)
    return fm.Model(mesh, beam, fixed=[("start", "all")], point_masses=[("end", 0.3)],
                    loads=[fm.NodalLoad("end", "w", 2.0, np.cos), fm.NodalLoad("end", "theta_x", 0.5)])


def planar_beam():
    beam = fm.BeamEB2D(fm.Material(E=2e3, rho=1000.0), area=1e-3, I=1e-6)
    return fm.Model(fm.generate.line(3, 1.0), beam, fixed=[("start", "all")],
                    loads=[fm.NodalLoad("end", "v", 0.5, lambda t: np.cos(4 * t))])


def kinetic_energy(points, q, v):
    """T = 1/2 sum_p m_p |R' + d(A y_p)/dp p' + A Phi_p delta'|^2, from the mass points."""
    p = q[3:7]
    V, A = _V_matrices(p), ep_to_matrix(p)
    u, ud = points.displacements(q[7:], v[7:])
    r_dot = v[:3] + np.einsum("kab,pb,k->pa", V, points.x + u, v[3:7]) + ud @ A.T
    return 0.5 * points.m @ np.einsum("pa,pa->p", r_dot, r_dot)


def test_V_matrices_are_the_derivatives_of_A():
    """V_k = dA/dp_k from the constant basis: equal to the term-by-term formula and to central
    differences of A(p) (A is quadratic in p, so they are exact up to round-off)."""
    from flexmbs.bodies.flexible import _V_terms
    rng = np.random.default_rng(2)
    for _ in range(20):
        p = rng.standard_normal(4)
        V = _V_matrices(p)
        assert np.array_equal(V, _V_terms(p))
        fd = np.array([(ep_to_matrix(p + 1e-3 * e) - ep_to_matrix(p - 1e-3 * e)) / 2e-3 for e in np.eye(4)])
        assert np.allclose(V, fd, rtol=0, atol=1e-12 * max(1.0, np.abs(p).max()))


@pytest.mark.parametrize("make", [beam_3d, planar_beam], ids=["3D beam with tip mass", "planar beam"])
def test_mass_matrix_and_quadratic_velocity_vector_from_the_kinetic_energy(make):
    md = make()
    body = FlexibleBody(md)
    pts = body_mass_points(md, dense=True)
    n = body.n_q
    # off the constraint manifold on purpose: the formulas are identities of the exact polynomial
    q = np.concatenate([RNG.standard_normal(3), RNG.standard_normal(4), 1e-2 * RNG.standard_normal(n - 7)])
    v = RNG.standard_normal(n)
    T = lambda q, v: kinetic_energy(pts, q, v)  # noqa: E731
    I = np.eye(n)
    dT_dv = lambda q, v: np.array([(T(q, v + e) - T(q, v - e)) / 2.0 for e in I])  # noqa: E731  (T quadratic in v)
    M_fd = np.array([(dT_dv(q, v + e) - dT_dv(q, v - e)) / 2.0 for e in I])
    M = body.mass_matrix(q)
    np.testing.assert_allclose(M, M_fd, rtol=0, atol=1e-12 * np.abs(M).max())
    h = 1e-5
    Mdot_v = (dT_dv(q + h * v, v) - dT_dv(q - h * v, v)) / (2 * h)
    dT_dq = np.array([(T(q + h * e, v) - T(q - h * e, v)) / (2 * h) for e in I])
    Qv_fd = dT_dq - Mdot_v                                   # Q_v = -M' q' + dT/dq
    np.testing.assert_allclose(body.quadratic_velocity(q, v), Qv_fd, rtol=0, atol=1e-8 * np.abs(Qv_fd).max())
    # the same body as a rigid body at delta = 0: M_dd is the consistent mass at |p| = 1
    q0 = body.initial_coordinates()
    np.testing.assert_allclose(body.mass_matrix(q0)[7:, 7:], dense_array(md.M), rtol=1e-14)


def test_markers_against_finite_differences():
    md = beam_3d()
    body = FlexibleBody(md, position=(0.1, 0.2, 0.3), orientation=ep_to_matrix([0.9, 0.1, -0.3, 0.2]
                                                                               / np.linalg.norm([0.9, 0.1, -0.3, 0.2])))
    n = body.n_q
    q = body.initial_coordinates() + np.concatenate([np.zeros(7), 1e-2 * RNG.standard_normal(n - 7)])
    v = RNG.standard_normal(n)
    h = 1e-6
    for s in (Node(2), Node(3), np.array([0.3, 0.1, -0.2])):
        J = body.point_jacobian(q, s)
        fd = np.column_stack([(body.point(q + h * e, s) - body.point(q - h * e, s)) / (2 * h) for e in np.eye(n)])
        np.testing.assert_allclose(J, fd, rtol=0, atol=1e-8)
        # r'' along q(t) = q + t v (q'' = 0) is the bias
        acc = (body.point(q + 1e-4 * v, s) - 2 * body.point(q, s) + body.point(q - 1e-4 * v, s)) / 1e-8
        np.testing.assert_allclose(body.point_bias(q, v, s), acc, rtol=0, atol=1e-5 * np.abs(acc).max())
    u = np.array([0.0, 1.0, 0.5])
    acc = (body.vector(q + 1e-4 * v, u) - 2 * body.vector(q, u) + body.vector(q - 1e-4 * v, u)) / 1e-8
    np.testing.assert_allclose(body.vector_bias(q, v, u), acc, rtol=0, atol=1e-5 * np.abs(acc).max())
    # a node follows the deformation; the frame point does not
    X3 = md.mesh.points[3]
    d = np.zeros(n)
    d[7:] = 1e-2
    assert not np.allclose(body.point(q0 := body.initial_coordinates(), Node(3)), body.point(q0 + d, Node(3)))
    np.testing.assert_allclose(body.point(q0, Node(3)), body.position + body.orientation @ X3)


def test_bad_input_names_the_body():
    bad = fm.Model(fm.generate.line(2, 1.0), fm.BeamEB2D(fm.Material(1e3, 1e3), 1e-3, 1e-6))
    with pytest.raises(ValueError, match="'loose'.*rigid-body modes"):
        FlexibleBody(bad, "loose")
    body = FlexibleBody(planar_beam(), "rod")
    with pytest.raises(ValueError, match="'rod': no node 9"):
        body.point(body.initial_coordinates(), Node(9))


def spatial_motion():
    return GeneralMotion(
        lambda t: (np.array([0.1 * t**2, np.sin(t), 0.2 * t]), np.array([0.2 * t, np.cos(t), 0.2]),
                   np.array([0.2, -np.sin(t), 0.0])),
        lambda t: (np.array([3 * t, 0.2 * np.sin(2 * t), t**2]), np.array([3.0, 0.4 * np.cos(2 * t), 2 * t]),
                   np.array([0.0, -0.8 * np.sin(2 * t), 2.0])))


def test_prescribed_frame_derivatives():
    body = FlexibleBody(planar_beam())
    pf = PrescribedFrame(body, spatial_motion())
    t, h = 0.7, 1e-5
    fs, p, pd, _ = pf.reference(t)
    q = np.concatenate([fs.r_O, p, 1e-2 * RNG.standard_normal(body.n_e)])
    np.testing.assert_allclose(pf.residual(t, [q]), 0.0, atol=1e-14)
    v = np.concatenate([fs.v_O, pd, RNG.standard_normal(body.n_e)])
    Cq = pf.jacobian(t, [q])[0]
    np.testing.assert_allclose(Cq @ v + pf.time_derivative(t, [q]), 0.0, atol=1e-12)   # the motion is a solution
    fd_t = (pf.residual(t + h, [q]) - pf.residual(t - h, [q])) / (2 * h)
    np.testing.assert_allclose(pf.time_derivative(t, [q]), fd_t, atol=1e-8)
    # gamma: along any q(s) = q + (s - t) v + (s - t)^2 / 2 qdd, d^2 C(s, q(s))/ds^2 = C_q qdd - gamma
    qdd = RNG.standard_normal(body.n_q)
    path = lambda s: pf.residual(s, [q + (s - t) * v + 0.5 * (s - t) ** 2 * qdd])  # noqa: E731
    hh = 1e-4
    d2 = (path(t + hh) - 2.0 * path(t) + path(t - hh)) / hh**2
    np.testing.assert_allclose(Cq @ qdd - pf.gamma(t, [q], [v]), d2, rtol=0, atol=1e-5 * np.abs(d2).max())


def run_bridge(md, t_end, rtol=1e-10, atol=1e-12, n_out=6):
    """Generic constrained path vs fm.run(md); returns the relative error, the runs and the system."""
    body = FlexibleBody.from_model(md, "link")
    pf = PrescribedFrame(body, md.motion)
    system = System([body], [pf], gravity=md.gravity if np.any(md.gravity) else None)
    form = Index1(system, solver="augmented")
    t_eval = np.linspace(0.0, t_end, n_out)
    sol = simulate(form, (0.0, t_end), form.state0(), method="DOP853", rtol=rtol, atol=atol, t_eval=t_eval)
    ref = fm.run(md, formulation="lagrange", method="DOP853", rtol=rtol, atol=1e-2 * atol, t_end=t_end,
                 dt_out=t_end / (n_out - 1))
    delta = sol.x[:, 7:body.n_q]
    err = np.abs(delta - ref.delta).max() / np.abs(ref.delta).max()
    return err, sol, ref, form, body, pf


def rotating_bar(n):
    A = 0.2e-4
    return fm.Model(fm.generate.line(n, 1.0), fm.Bar2(fm.Material(210e9, 1.0 / A), A),
                    motion=ConstantRotation(15.0), fixed=[("start", "all")],
                    loads=[fm.NodalLoad("end", "u", 1.0, lambda t: np.sin(200.0 * t))])


def spinup_beam(n, omega_s=6.0, t_s=15.0):
    beam = fm.BeamEB2D(fm.Material(E=7.0e10, rho=3000.0), 4.0e-4, 2.0e-7)
    return fm.Model(fm.generate.line(n, 10.0), beam, motion=SpinUp(omega_s, t_s), fixed=[("start", "all")])


def slider_crank_rod(n):
    element = fm.BeamEB2D(fm.Material(E=2e11, rho=7870.0), area=0.008**2, I=0.008**4 / 12.0)
    # the body's geometric stiffening has no eps and a_O terms (they are accelerations): compare without it
    return flexible_link(SliderCrank(0.15, 0.30, 0.0), "rod", constant_speed(150.0), element, n,
                         ends="pinned-sliding", end_mass=0.075552, stiffening=False)


# short runs (explicit DOP853 is held by the stiff axial and rotational DOFs); the slow test below
# runs the cases' own sizes and laws
BRIDGES = {"rotating bar": (lambda: rotating_bar(3), 0.002),
           "spin-up beam (0.2 s law)": (lambda: spinup_beam(2, 6.0, 0.2), 0.05),
           "slider-crank rod": (lambda: slider_crank_rod(2), 0.0004)}


def frame_powers(md, sol, ref, form, body, pf):
    """Power of the prescribed frame's multipliers, F.v_O + T.omega, and the fast path's P_frame."""
    lagrange = Lagrange(md, evaluation="terms")
    rows = form.system.rows(pf)
    P_lam, P_frame = [], []
    for t, x, d, v in zip(sol.t, sol.x, ref.delta, ref.delta_dot):
        q, qd = x[:body.n_q], x[body.n_q:]
        _, lam = form.accelerations(t, q, qd)
        F, T = pf.frame_loads(t, [q], lam[rows])
        P_lam.append(F @ qd[:3] + T @ body.body_angular_velocity(q, qd))
        dd = lagrange.rhs(t, np.concatenate([d, v]))[md.n_dofs:]
        P_frame.append(energies(md, t, d, v, dd).P_frame)
    return np.array(P_lam), np.array(P_frame)


@pytest.mark.parametrize("case", BRIDGES, ids=list(BRIDGES))
def test_bridge_prescribed_flexible_body_equals_the_fast_path(case):
    make, t_end = BRIDGES[case]
    md = make()
    err, sol, ref, form, body, pf = run_bridge(md, t_end)
    assert err < 1e-7, f"{case}: relative difference {err:.2e}"
    # the drive's power from the multipliers is the power P_frame that W_frame integrates (no load
    # of these cases works on the rigid motion: the bar's tip force is normal to its rigid velocity)
    P_lam, P_frame = frame_powers(md, sol, ref, form, body, pf)
    assert np.abs(P_frame).max() > 0
    np.testing.assert_allclose(P_lam, P_frame, rtol=0, atol=1e-7 * np.abs(P_frame).max())


SLOW_BRIDGES = {"rotating bar, 5 elements": (lambda: rotating_bar(5), 0.005),
                "spin-up beam, 4 elements": (lambda: spinup_beam(4), 1.0),
                "slider-crank rod, 4 elements": (lambda: slider_crank_rod(4), 0.003)}


@pytest.mark.slow
@pytest.mark.parametrize("case", SLOW_BRIDGES, ids=list(SLOW_BRIDGES))
def test_bridge_at_the_cases_sizes(case):
    make, t_end = SLOW_BRIDGES[case]
    err, *_ = run_bridge(make(), t_end, rtol=1e-9, atol=1e-12)
    assert err < 1e-6, f"{case}: relative difference {err:.2e}"


def test_pendulum_pinned_at_a_node_conserves_energy():
    """A free flexible body (frame not prescribed) on a revolute joint (axis z) at mesh node 0,
    released horizontally under gravity: T + V_g + strain energy is constant, the node stays on the
    pivot.  (A spherical joint would leave the rotation about the beam's axis free, which a planar
    beam, a line without section, gives no inertia.)"""
    from flexmbs.constraints import Revolute
    beam = fm.BeamEB2D(fm.Material(E=1e6, rho=1000.0), area=1e-3, I=1e-6)
    model = fm.Model(fm.generate.line(2, 1.0), beam, fixed=[("start", "all")])   # tangent frame at node 0
    body = FlexibleBody(model, "pendulum")
    pivot = Revolute(body, None, s_i=Node(0), axis=(0.0, 0.0, 1.0))
    g = np.array([0.0, -9.81, 0.0])
    system = System([body], [pivot], gravity=g)
    form = Index1(system, solver="augmented")
    t = np.linspace(0.0, 0.15, 4)
    sol = simulate(form, (0.0, t[-1]), form.state0(), method="DOP853", rtol=1e-10, atol=1e-12, t_eval=t)
    assert form.n_rhs < 3000
    energy = []
    for x in sol.x:
        q, v = x[:body.n_q], x[body.n_q:]
        T, Vg = body.energy(q, v, g)
        energy.append(T + Vg + body.strain_energy(q))
        np.testing.assert_allclose(body.point(q, Node(0)), 0.0, atol=1e-9)
    energy = np.array(energy)
    swing = abs(body.energy(sol.x[-1, :body.n_q], sol.x[-1, body.n_q:], g)[0])     # kinetic energy gained
    assert swing > 0.1 and np.abs(sol.x[-1, 7:body.n_q]).max() > 1e-4                 # it falls and bends
    assert np.abs(energy - energy[0]).max() < 1e-7 * swing


def test_augmented_and_udwadia_kalaba_agree_on_the_flexible_body():
    md = slider_crank_rod(3)
    body = FlexibleBody.from_model(md, "rod")
    system = System([body], [PrescribedFrame(body, md.motion)])
    af, uke = Index1(system, solver="augmented"), Index1(system, solver="udwadia-kalaba")
    x = af.state0()
    x[7 + body.n_q:] += 1e-3 * RNG.standard_normal(body.n_e)          # some elastic velocity
    t = 0.0
    qdd_af, lam_af = af.accelerations(t, x[:body.n_q], x[body.n_q:])
    qdd_uke, lam_uke = uke.accelerations(t, x[:body.n_q], x[body.n_q:])
    np.testing.assert_allclose(qdd_uke, qdd_af, rtol=0, atol=1e-12 * np.abs(qdd_af).max())
    np.testing.assert_allclose(lam_uke, lam_af, rtol=0, atol=1e-11 * np.abs(lam_af).max())
