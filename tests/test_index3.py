"""Planar bodies and joints, and the index-3 generalized-alpha integrator ('index3-alpha').

- RigidBody2D: marker Jacobians and biases against finite differences, energy, bad input;
- PlanarRevolute, PlanarPrismatic: C_q blocks against central differences of C, gamma against
  the second time derivative of C along a path, body-to-body and body-to-ground, bad input;
- index3-alpha on the simple pendulum (closed form: ../shared/BENCHMARKS.md sec. 6b, IFToMM
  A01): accuracy, measured order 2, energy conservation at small numerical damping (error
  O(h^2), independent of rho_inf), constraint residual at round-off after every step;
- the scaled iteration matrix: condition number independent of h (Bottasso, Bauchau,
  Cardona, SIAM J. Sci. Comput. 29 (2007) 397);
- bad input of the integrator.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs.bodies import RigidBody2D, RigidBodyEP
from flexmbs.bodies.loads import spring_to_ground, torque_load
from flexmbs.constraints import PlanarPrismatic, PlanarRevolute
from flexmbs.integrators import ConstrainedProblem, Index3GeneralizedAlpha, simulate
from flexmbs.system import System

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import pendulum_a01  # noqa: E402


def bodies():
    a = RigidBody2D("a", 2.0, 0.3, position=(0.4, -0.2), angle=0.7)
    b = RigidBody2D("b", 1.5, 0.1, position=(1.1, 0.5), angle=-1.2)
    return a, b


def path(q0, seed):
    """A smooth path q(t) through q0 with its derivatives (need not satisfy the constraints)."""
    d1, d2 = 0.3 * np.random.default_rng(seed).standard_normal((2, q0.size))
    return (lambda t: q0 + d1 * np.sin(t) + d2 * (1 - np.cos(2 * t)),
            lambda t: d1 * np.cos(t) + 2 * d2 * np.sin(2 * t),
            lambda t: -d1 * np.sin(t) + 4 * d2 * np.cos(2 * t))


# -- the planar body ---------------------------------------------------------------------------
def test_body_markers_against_finite_differences():
    a, _ = bodies()
    q, v, acc = path(a.initial_coordinates(), 3)
    t, h, s = 0.4, 1e-6, np.array([0.3, -0.25])
    J = a.point_jacobian(q(t), s)
    fd = np.column_stack([(a.point(q(t) + h * e, s) - a.point(q(t) - h * e, s)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(J, fd, atol=1e-9)
    # r'' = J q'' + bias along the path, against the second difference of r(q(t))
    r2 = (a.point(q(t + 1e-4), s) - 2 * a.point(q(t), s) + a.point(q(t - 1e-4), s)) / 1e-8
    np.testing.assert_allclose(J @ acc(t) + a.point_bias(q(t), v(t), s), r2, atol=1e-6)
    u = np.array([0.6, 0.8])
    Jv = a.vector_jacobian(q(t), u)
    fdv = np.column_stack([(a.vector(q(t) + h * e, u) - a.vector(q(t) - h * e, u)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(Jv, fdv, atol=1e-9)
    u2 = (a.vector(q(t + 1e-4), u) - 2 * a.vector(q(t), u) + a.vector(q(t - 1e-4), u)) / 1e-8
    np.testing.assert_allclose(Jv @ acc(t) + a.vector_bias(q(t), v(t), u), u2, atol=1e-6)
    # power of a point force: F . r_P' = Q . q'
    F = np.array([1.3, -0.4])
    assert a.point_force(q(t), s, F) @ v(t) == pytest.approx(F @ (J @ v(t)), rel=1e-12)


def test_body_energy_and_loads():
    a = RigidBody2D("a", 2.0, 0.3, position=(0.4, -0.2), angle=0.7, velocity=(1.0, -2.0), angular_velocity=3.0)
    q, v = a.initial_coordinates(), a.initial_velocities()
    T, V = a.energy(q, v, (0.0, -9.81))
    assert T == pytest.approx(0.5 * 2.0 * 5.0 + 0.5 * 0.3 * 9.0)
    assert V == pytest.approx(2.0 * 9.81 * -0.2)
    np.testing.assert_allclose(a.forces(0.0, q, v, (0.0, -9.81)), [0.0, -2 * 9.81, 0.0])
    # a spring to ground: its generalized force is minus the gradient of 1/2 k (l - l0)^2
    s, anchor, k, l0 = np.array([0.2, 0.1]), np.array([1.0, 1.0]), 50.0, 0.4
    b = RigidBody2D("b", 1.0, 0.1, position=(0.4, -0.2), angle=0.7,
                    loads=[spring_to_ground(s, anchor, k, l0), torque_load(lambda t: 2.0 * t)])

    def potential(qq):
        return 0.5 * k * (np.linalg.norm(b.point(qq, s) - anchor) - l0) ** 2

    grad = np.array([(potential(q + 1e-6 * e) - potential(q - 1e-6 * e)) / 2e-6 for e in np.eye(3)])
    np.testing.assert_allclose(b.forces(1.5, q, v, None), -grad + [0, 0, 3.0], atol=1e-7)


@pytest.mark.parametrize("kwargs, match", [
    (dict(mass=0.0, inertia=1.0), "mass"),
    (dict(mass=1.0, inertia=-0.1), "inertia"),
    (dict(mass=1.0, inertia=0.1, position=(1.0, 2.0, 3.0)), "position"),
])
def test_body_bad_input_names_the_body(kwargs, match):
    with pytest.raises(ValueError, match=f"(?s)'bad'.*{match}"):
        RigidBody2D("bad", **kwargs)


# -- the planar joints -------------------------------------------------------------------------
JOINTS = {
    "revolute": lambda i, j: PlanarRevolute(i, j, at=(0.8, 0.1)),
    "prismatic": lambda i, j: PlanarPrismatic(i, j, at=(0.8, 0.1), axis=(0.6, -0.8)),
}


@pytest.mark.parametrize("ground", [False, True])
@pytest.mark.parametrize("kind", JOINTS)
def test_joint_jacobian_and_gamma(kind, ground):
    a, b = bodies()
    c = JOINTS[kind](None if ground else a, b)
    qs0 = [np.zeros(0) if x is None else x.initial_coordinates() for x in c.bodies]
    paths = [path(q, 5 + k) for k, q in enumerate(qs0)]
    t, h = 0.3, 1e-6
    qs = [p[0](t) for p in paths]
    vs = [p[1](t) for p in paths]
    acc = [p[2](t) for p in paths]
    np.testing.assert_allclose(c.residual(0.0, qs0), 0.0, atol=1e-14)       # assembled by construction
    blocks = c.jacobian(t, qs)
    assert [B.shape for B in blocks] == [(2, q.size) for q in qs]
    for k, B in enumerate(blocks):
        for i in range(qs[k].size):
            qp, qm = [x.copy() for x in qs], [x.copy() for x in qs]
            qp[k][i] += h
            qm[k][i] -= h
            np.testing.assert_allclose(B[:, i], (c.residual(t, qp) - c.residual(t, qm)) / (2 * h), atol=1e-8)
    # C'' = C_q q'' - gamma along the path (second central difference of C(q(t)))
    dt = 1e-4
    C2 = (c.residual(t, [p[0](t + dt) for p in paths]) - 2 * c.residual(t, qs)
          + c.residual(t, [p[0](t - dt) for p in paths])) / dt**2
    Cqa = sum(B @ x for B, x in zip(blocks, acc))
    np.testing.assert_allclose(Cqa - c.gamma(t, qs, vs), C2, atol=2e-6)


def test_prismatic_frees_the_slide_only():
    a, b = bodies()
    c = PlanarPrismatic(a, b, at=(0.8, 0.1), axis=(0.6, -0.8))
    qa, qb = a.initial_coordinates(), b.initial_coordinates()
    slide = qb + np.array([0.6, -0.8, 0.0]) * 0.37          # body b moved along the axis
    np.testing.assert_allclose(c.residual(0.0, [qa, slide]), 0.0, atol=1e-14)
    assert abs(c.residual(0.0, [qa, qb + [0.8, 0.6, 0.0]])[0]) > 0.1           # across the axis
    assert abs(c.residual(0.0, [qa, qb + [0.0, 0.0, 0.2]])[1]) > 0.1           # turned


def test_joint_bad_input():
    a, b = bodies()
    with pytest.raises(ValueError, match="'gap'.*do not coincide"):
        PlanarRevolute(a, b, s_i=(0.0, 0.0), s_j=(0.0, 0.0), name="gap")
    with pytest.raises(ValueError, match="planar body"):
        PlanarRevolute(RigidBodyEP("c", 1.0, [1.0, 1.0, 1.0]), b, at=(0.0, 0.0))
    with pytest.raises(ValueError, match="axis"):
        PlanarPrismatic(a, b, at=(0.0, 0.0), axis=(0.0, 0.0))


# -- index3-alpha on the pendulum --------------------------------------------------------------
def pendulum_run(h, t_end, **options):
    system, _ = pendulum_a01.build()
    problem = ConstrainedProblem(system)
    q0 = system.initial_coordinates()
    sol = simulate(problem, (0.0, t_end), problem.state0(q0, 0 * q0), method="index3-alpha", h=h,
                   t_eval=np.linspace(0.0, t_end, 11), **options)
    assert sol.success, sol.message
    return system, sol


def test_pendulum_order_two():
    """Global error at t = 1 s of P1 against the closed form ~ h^2 (declared order 2)."""
    hs, errors = [4e-3, 2e-3, 1e-3], []
    for h in hs:
        _, sol = pendulum_run(h, 1.0)
        errors.append(np.abs(sol.x[-1, :2] - pendulum_a01.exact([1.0])[0]).max())
    order = np.polyfit(np.log(hs), np.log(errors), 1)[0]
    print(f"index3-alpha, pendulum: errors {errors}, order {order:.2f}")
    assert abs(order - Index3GeneralizedAlpha.order) < 0.3
    assert errors[-1] < 2e-5


def test_pendulum_energy_conservation_at_small_damping():
    """rho_inf = 0.95: the energy error is O(h^2) (the method's accuracy, not its damping)."""
    drift = []
    for h in (2e-3, 1e-3):
        system, sol = pendulum_run(h, 5.0, rho_inf=0.95)
        E = np.array([sum(system.energy(x[:3], x[3:])) for x in sol.x])
        drift.append(np.abs(E - E[0]).max())
    mgl = 9.81
    assert drift[1] < 2e-5 * mgl
    assert 3.0 < drift[0] / drift[1] < 5.0


def test_constraint_residual_at_round_off_after_every_step():
    system, _ = pendulum_a01.build()
    problem = ConstrainedProblem(system)
    q0 = system.initial_coordinates()
    integ = Index3GeneralizedAlpha(problem, 0.0, problem.state0(q0, 0 * q0), 1.0, h=1e-3)
    worst = 0.0
    while integ.status == "running":
        integ.step()
        worst = max(worst, integ.constraint_residual)
    assert integ.status == "finished" and worst < 1e-13
    # the equilibrium M q'' + C_q^T lam = Q holds with the integrator's q'' and multipliers
    q, v = integ.x[:3], integ.x[3:]
    res = system.mass_matrix(q) @ integ.qdd + system.jacobian(integ.t, q).T @ integ.lam - system.forces(integ.t, q, v)
    assert np.abs(res).max() < 1e-6 * 9.81


def test_scaled_iteration_matrix_conditioning_is_independent_of_h():
    """cond(S) stays bounded as h -> 0 with the scaling (it would grow like h^-4 without)."""
    a = RigidBody2D("a", 2.0, 0.3, position=(0.5, 0.0))
    b = RigidBody2D("b", 1.0, 0.1, position=(1.5, 0.0))
    system = System([a, b], [PlanarRevolute(None, a, at=(0.0, 0.0)), PlanarRevolute(a, b, at=(1.0, 0.0))],
                    gravity=(0.0, -9.81))
    problem = ConstrainedProblem(system)
    q0 = system.initial_coordinates()
    conds = []
    for h in (1e-2, 1e-4, 1e-6):
        integ = Index3GeneralizedAlpha(problem, 0.0, problem.state0(q0, 0 * q0), 1.0, h=h, kernel="numpy")
        integ.step()                                  # the numpy path keeps its LU where this reads it
        lu, piv = integ._lu._lu
        U = np.triu(lu)
        L = np.tril(lu, -1) + np.eye(len(lu))
        S = L @ U
        conds.append(np.linalg.cond(S))
    print("cond(S) at h = 1e-2, 1e-4, 1e-6:", conds)
    assert max(conds) < 10 * min(conds) and max(conds) < 1e4


def test_unconstrained_second_order_form_and_bad_input():
    system, _ = pendulum_a01.build()
    problem = ConstrainedProblem(system)
    x0 = problem.state0(system.initial_coordinates(), np.zeros(3))
    with pytest.raises(ValueError, match="rho_inf"):
        Index3GeneralizedAlpha(problem, 0.0, x0, 1.0, h=1e-3, rho_inf=1.0)
    with pytest.raises(ValueError, match="tangent"):
        Index3GeneralizedAlpha(problem, 0.0, x0, 1.0, h=1e-3, tangent="exact")
    with pytest.raises(ValueError, match="refactor"):
        Index3GeneralizedAlpha(problem, 0.0, x0, 1.0, h=1e-3, refactor="never")
    with pytest.raises(TypeError, match="System"):
        ConstrainedProblem(object())

    class NoSystem:
        n_state = 6
    with pytest.raises(ValueError, match="ConstrainedProblem"):
        Index3GeneralizedAlpha(NoSystem(), 0.0, x0, 1.0, h=1e-3)


def test_revolute_reaction_of_a_hanging_body_is_its_weight():
    """At rest below the pivot the joint carries the weight: force (0, m g) on the body."""
    body = RigidBody2D("bob", 2.0, 0.1, position=(0.0, -1.0), angle=-np.pi / 2)
    system = System([body], [PlanarRevolute(None, body, at=(0.0, 0.0), name="pivot")], gravity=(0.0, -9.81))
    problem = ConstrainedProblem(system)
    q0 = system.initial_coordinates()
    integ = Index3GeneralizedAlpha(problem, 0.0, problem.state0(q0, 0 * q0), 1.0, h=1e-2)
    np.testing.assert_allclose(integ.qdd, 0.0, atol=1e-12)
    r = system.reactions(0.0, q0, integ.lam)["pivot"]["bodies"]["bob"]
    np.testing.assert_allclose(r["force"], [0.0, 2.0 * 9.81], atol=1e-10)
    assert abs(r["torque"]) < 1e-10


def test_block_on_an_inclined_prismatic_slide():
    """A block on a frictionless slide at 30 degrees: s(t) = g sin(30 deg) t^2 / 2 down the slope,
    exact for the index-3 method (constant acceleration); the normal reaction is m g cos(30 deg)."""
    alpha = np.radians(30.0)
    down = np.array([-np.cos(alpha), -np.sin(alpha)])
    block = RigidBody2D("block", 3.0, 0.2, position=(0.0, 0.0), angle=alpha)
    slide = PlanarPrismatic(None, block, at=(0.0, 0.0), axis=down, name="slide")
    system = System([block], [slide], gravity=(0.0, -9.81))
    problem = ConstrainedProblem(system)
    q0 = system.initial_coordinates()
    sol = simulate(problem, (0.0, 1.0), problem.state0(q0, 0 * q0), method="index3-alpha", h=0.05,
                   t_eval=[0.0, 0.5, 1.0])
    s_exact = 0.5 * 9.81 * np.sin(alpha) * sol.t**2
    np.testing.assert_allclose(sol.x[:, :2], s_exact[:, None] * down, atol=1e-10)
    np.testing.assert_allclose(sol.x[:, 2], alpha, atol=1e-12)
    integ = Index3GeneralizedAlpha(problem, 0.0, problem.state0(q0, 0 * q0), 1.0, h=0.05)
    Q_c = -system.jacobian(0.0, q0).T @ integ.lam                  # constraint force on the block
    n = np.array([-down[1], down[0]])
    assert Q_c[:2] @ n == pytest.approx(3.0 * 9.81 * np.cos(alpha) * np.sign(n[1]), rel=1e-12)


def test_driven_slider_crank_follows_its_kinematics():
    """A rheonomic driver (crank angle = w t) and a prismatic slide: the slider position is the
    closed-form kinematics x = r cos(phi) + sqrt(l^2 - r^2 sin(phi)^2), to round-off."""
    from flexmbs.constraints import CoordinateDriver
    w, r, length = 10.0, 0.1, 0.3
    crank = RigidBody2D("crank", 1.0, 1e-3, position=(r / 2, 0.0))
    rod = RigidBody2D("rod", 1.0, 1e-2, position=(r + length / 2, 0.0))
    slider = RigidBody2D("slider", 0.5, 1e-3, position=(r + length, 0.0))
    system = System([crank, rod, slider],
                    [PlanarRevolute(None, crank, at=(0.0, 0.0)), PlanarRevolute(crank, rod, at=(r, 0.0)),
                     PlanarRevolute(rod, slider, at=(r + length, 0.0)),
                     PlanarPrismatic(None, slider, at=(r + length, 0.0), axis=(1.0, 0.0)),
                     CoordinateDriver(crank, 2, lambda t: (w * t, w, 0.0))], gravity=(0.0, -9.81))
    q, v = system.assemble(0.0, system.initial_coordinates(), np.zeros(system.n_q))
    problem = ConstrainedProblem(system)
    sol = simulate(problem, (0.0, 0.5), problem.state0(q, v), method="index3-alpha", h=1e-3,
                   t_eval=np.linspace(0.0, 0.5, 6))
    phi = w * sol.t
    np.testing.assert_allclose(sol.x[:, 2], phi, atol=1e-12)
    np.testing.assert_allclose(sol.x[:, 6], r * np.cos(phi) + np.sqrt(length**2 - (r * np.sin(phi))**2), atol=1e-12)


def free_vibration_energy_left(omega_h, rho_inf, steps=100, h=1e-3):
    """A block on a prismatic slide held by a stiff spring (omega = omega_h / h), released from
    1 mm: its energy after ``steps`` index3-alpha steps over its initial energy."""
    from flexmbs.bodies.loads import spring_to_ground
    m, far = 2.0, 1e3                                      # anchor far away: the spring is linear in x
    k = m * (omega_h / h) ** 2
    block = RigidBody2D("block", m, 0.1, position=(1e-3, 0.0), loads=[spring_to_ground((0, 0), (-far, 0), k, far)])
    system = System([block], [PlanarPrismatic(None, block, at=(0.0, 0.0), axis=(1.0, 0.0), name="slide")])
    problem = ConstrainedProblem(system)
    q0 = system.initial_coordinates()
    sol = simulate(problem, (0.0, steps * h), problem.state0(q0, 0 * q0), method="index3-alpha", h=h,
                   rho_inf=rho_inf, t_eval=[0.0, steps * h])
    E = 0.5 * k * sol.x[:, 0] ** 2 + 0.5 * m * sol.x[:, 3] ** 2
    return E[-1] / E[0]


def test_numerical_damping_keeps_resolved_modes_and_removes_unresolved_ones():
    """The fixed-step policy of docs/integrators.md: a mode with omega h = 0.1 (63 steps a period)
    keeps its energy over 100 steps (measured 1 - 7e-7 at rho_inf = 0.9), one with omega h = 1000
    (a stiff axial mode of a flexible body at the step of its bending modes) loses it (4.6e-5 left
    at rho_inf = 0.9, 3.8e-14 at 0.8), and rho_inf -> 1 removes the damping."""
    assert free_vibration_energy_left(0.1, 0.9) > 1.0 - 1e-5
    assert free_vibration_energy_left(1e3, 0.9) < 1e-3
    assert free_vibration_energy_left(1e3, 0.8) < 1e-10
    assert abs(free_vibration_energy_left(1e3, 1.0 - 1e-9) - 1.0) < 1e-6


@pytest.mark.parametrize("d_norm, d_prev, d_prev2, negligible, rate", [
    (2e-10, 2e-6, None, False, 1e-4),        # a fresh matrix, stopped by theta / (1 - theta) |dq|: its own rate
    (1e-14, None, None, True, 0.0),          # the first correction met the tolerance
    (1e-14, 2e-6, None, True, 0.0),          # the second one did: no rate above round-off to measure
    (4.65e-16, 1.56e-13, 2.30e-11, True, 1.56e-13 / 2.30e-11),   # step 66 of the slider-crank (below)
    (1.00e-16, 1.56e-13, 2.30e-11, True, 1.56e-13 / 2.30e-11),   # ... with other round-off digits: the same
    (1.0e-13, 2.0e-13, 4.0e-13, False, 0.5),  # stalled, not at the tolerance: its (slow) rate
])
def test_converged_rate_ignores_a_negligible_last_correction(d_norm, d_prev, d_prev2, negligible, rate):
    """refactor="contraction" keeps the LU while the converged step's rate is at most keep_rate (1e-3).
    The corrections of the numpy path at step 66 of a quarter revolution of the coupled slider-crank
    (8 elements, h = 2.91e-5 s) were 4.45e-6, 4.43e-8, 2.30e-11, 1.56e-13, 4.65e-16: the last is
    below the round-off of q (3.6e-15), the kernel's was 9e-17, so that the last ratio (3.0e-3 against
    6.0e-4) kept the LU on one path and not on the other. The rate of the two before is 6.8e-3 on both."""
    from flexmbs.integrators.index3_alpha import converged_rate
    assert converged_rate(d_norm, d_prev, d_prev2, negligible) == pytest.approx(rate, rel=1e-12, abs=0.0)
