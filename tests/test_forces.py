"""Force elements between two bodies (issue 26, item 1; flexmbs/forces.py): generalized forces,
stored energy, dissipated and actuator work, tangents, on rigid, planar and flexible bodies."""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import FlexibleBody, Interface, Node, PointMass, RigidBody2D, RigidBodyEP
from flexmbs.compiled import CompiledSystem, Unsupported
from flexmbs.constraints import Revolute
from flexmbs.forces import Bushing, ForceLaw, RotationalSpringDamper, SpringDamper
from flexmbs.system import System


def cubic_law(t, d, d_dot):
    """A user's law: a hardening spring and a viscous damper, F = -3 |d|^2 d - 0.1 d'."""
    return -3.0 * d * (d @ d) - 0.1 * d_dot


def rigid_pair(c=0.0, actuator=None, law=True):
    """Two free rigid bodies (Euler parameters) tumbling, held by a spring-damper(-actuator), a
    rotational spring-damper and a bushing (and a user's law); no gravity."""
    a = RigidBodyEP("a", 2.0, np.diag([0.1, 0.2, 0.3]), position=(0, 0, 0), velocity=(0.1, 0.2, 0),
                    angular_velocity=(0.3, -0.2, 0.5))
    b = RigidBodyEP("b", 1.0, np.diag([0.05, 0.1, 0.12]), position=(1, 0.2, 0), angular_velocity=(0.1, 0.4, -0.3))
    forces = [SpringDamper(a, (0.1, 0, 0), b, (0, 0.1, 0.05), 100.0, 0.8, damping=c, actuator=actuator),
              RotationalSpringDamper(a, b, 5.0, 0.1, 0.01 * c, axis=(0, 0, 1)),
              Bushing(a, b, [10, 20, 30, 1, 2, 3], 0.01 * c, at=(0.5, 0.1, 0))]
    if law:
        forces.append(ForceLaw(a, (0, 0, 0), b, (0, 0, 0), cubic_law))
    return System([a, b], forces=forces)


def planar_pair():
    """Two planar bodies with the same elements (2D: the bushing has 3 components)."""
    a = RigidBody2D("a", 2.0, 0.1, position=(0, 0), velocity=(0.1, 0.2), angular_velocity=0.3)
    b = RigidBody2D("b", 1.0, 0.05, position=(1, 0.2), angle=0.4, angular_velocity=-0.5)
    return System([a, b], forces=[SpringDamper(a, (0.1, 0), b, (0, 0.1), 100.0, 0.8, damping=2.0),
                                  RotationalSpringDamper(a, b, 5.0, 0.1, 0.3),
                                  Bushing(a, b, [10, 20, 1], [0.1, 0.2, 0.01]),
                                  ForceLaw(None, (0, 0), b, (0.1, 0), cubic_law)])


def flexible_and_rigid():
    """A free beam (FlexibleBody, 3 elements) and a rigid body: a spring at a mesh node, a bushing
    between their frames and a user's law at an Interface of two nodes."""
    beam = fm.BeamEB3D(fm.Material(E=2e8, rho=1000.0), area=1e-3, Iy=1e-6, Iz=1e-6, J=2e-6)
    model = fm.Model(fm.generate.line(3, 1.0, dim=3), beam, fixed=[("start", "all")])
    flex = FlexibleBody(model, "beam", stiffening="none")
    rigid = RigidBodyEP("hub", 1.0, np.diag([0.05, 0.1, 0.12]), position=(1.2, 0.1, 0.0))
    return System([flex, rigid], forces=[SpringDamper(flex, Node(3), rigid, (0, 0, 0), 50.0, 0.1, damping=1.0),
                                         Bushing(flex, rigid, 20.0, 0.1, at=(1.0, 0.0, 0.0)),
                                         ForceLaw(flex, Interface([2, 3]), rigid, (0, 0.05, 0), cubic_law)])


def perturbed(system, seed=1):
    rng = np.random.default_rng(seed)
    q, v = system.initial_coordinates(), system.initial_velocities()
    return q + 0.03 * rng.standard_normal(len(q)), v + 0.1 * rng.standard_normal(len(v))


@pytest.mark.parametrize("build", [rigid_pair, planar_pair, flexible_and_rigid])
def test_tangent_equals_central_differences_of_the_forces(build):
    """K_f = -dQ_f/dq and C_f = -dQ_f/dv (`System.element_tangent`) against central differences of
    `System.element_forces` (step 1e-6: truncation ~1e-12, round-off ~1e-10 relative)."""
    s = build()
    q, v = perturbed(s)
    K, C = s.element_tangent(0.3, q, v)
    h, n = 1e-6, s.n_q
    Kfd, Cfd = np.empty((n, n)), np.empty((n, n))
    for j in range(n):
        e = h * np.eye(n)[j]
        Kfd[:, j] = -(s.element_forces(0.3, q + e, v) - s.element_forces(0.3, q - e, v)) / (2 * h)
        Cfd[:, j] = -(s.element_forces(0.3, q, v + e) - s.element_forces(0.3, q, v - e)) / (2 * h)
    assert np.abs(K - Kfd).max() <= 1e-6 * np.abs(Kfd).max()
    assert np.abs(C - Cfd).max() <= 1e-6 * np.abs(Cfd).max()
    Km, Cm = s.element_tangent(0.3, q, v, geometric=False)      # the material part alone: C is all of it
    np.testing.assert_array_equal(Cm, C)
    assert np.abs(Km - K).max() > 0


@pytest.mark.parametrize("build", [rigid_pair, planar_pair])
def test_spring_forces_are_minus_the_gradient_of_their_energy(build):
    """At rest and without the user's law (no potential), Q_f = -dU/dq with U the springs' stored
    energy (`SystemEnergy.strain`), central differences."""
    s = build()
    s = System(s.bodies, forces=[f for f in s.force_elements if not isinstance(f, ForceLaw)])
    q, _ = perturbed(s)
    zero = np.zeros(s.n_q)
    h = 1e-6
    grad = np.array([(s.energy(q + h * e, zero).strain - s.energy(q - h * e, zero).strain) / (2 * h)
                     for e in np.eye(s.n_q)])
    np.testing.assert_allclose(s.element_forces(0.0, q, zero), -grad, atol=1e-7 * np.abs(grad).max())


def test_conservative_spring_system_conserves_its_energy():
    """T + V + U of two bodies on springs (no damping, no law) is constant to the integrator's accuracy
    while the springs exchange 0.96 J of E = 1.26 J with the bodies: DOP853 at rtol 1e-10 (measured
    drift 9.4e-11 J in 0.25 s); index3-alpha at h = 1 ms (rho_inf 0.8 dissipates: measured 1.9e-7 J in
    0.1 s)."""
    res = fm.run(rigid_pair(law=False), method="DOP853", t_end=0.25, dt_out=0.01, rtol=1e-10, atol=1e-12,
                 store=False)
    E = res.energies["total"]
    assert np.ptp(res.energies["strain"]) > 0.5                  # the springs do work on the bodies
    assert np.abs(E - E[0]).max() < 1e-9 * E[0]
    res = fm.run(rigid_pair(law=False), method="index3-alpha", h=1e-3, t_end=0.1, dt_out=0.01, store=False)
    E = res.energies["total"]
    assert np.abs(E - E[0]).max() < 2e-6 * E[0]


def test_dissipated_work_closes_the_balance_with_dampers():
    """With dampers the total falls by W_damping = int g'^T diag(c) g' dt (growing); the balance closes
    to the integrator's tolerance, the works integrated on DOP853's dense output at every step
    (measured 1.5e-9 J of W_damping = 0.54 J in 0.25 s; the trapezoidal rule over the outputs at
    dt_out = 2.5 ms it replaced left 3.6e-5 J)."""
    res = fm.run(rigid_pair(c=2.0, law=False), method="DOP853", t_end=0.25, dt_out=0.0025, rtol=1e-10,
                 atol=1e-12, store=False)
    e = res.energies
    assert np.all(np.diff(e["W_damping"]) >= 0) and e["W_damping"][-1] > 0.5
    assert np.all(e["W_loads"] == 0)
    assert np.abs(res.energy_balance_error()).max() < 1e-8 * e["W_damping"][-1]


def test_actuator_spring_moves_a_mass_as_the_closed_form_and_its_work_is_counted():
    """A point mass m on the x axis, a spring (k, l0) to the origin and a constant actuator force f:
    x(t) = l0 + f/k + (x0 - l0 - f/k) cos(w t), w = sqrt(k/m); the actuator's work W_loads =
    f (x(t) - x0) exactly (its power f x' integrated; measured 1.1e-9 J, the balance 1.5e-9 J, with
    the works on DOP853's dense output at every step)."""
    m, k, l0, f, x0 = 2.0, 50.0, 1.0, 3.0, 1.2
    mass = PointMass("m", m, position=(x0, 0.0, 0.0))
    s = System([mass], forces=[SpringDamper(None, (0, 0, 0), mass, (0, 0, 0), k, l0, actuator=f)])
    res = fm.run(s, method="DOP853", t_end=1.0, dt_out=0.01, rtol=1e-11, atol=1e-12, store=False)
    w = np.sqrt(k / m)
    x = l0 + f / k + (x0 - l0 - f / k) * np.cos(w * res.t)
    np.testing.assert_allclose(res.q[:, 0], x, atol=1e-8)
    np.testing.assert_allclose(res.energies["W_loads"], f * (res.q[:, 0] - x0), atol=1e-8)
    assert np.abs(res.energy_balance_error()).max() < 1e-8


def test_rotational_spring_about_a_revolute_oscillates_at_sqrt_k_over_j():
    """A disc on a revolute joint to the ground about z with a torsion spring k: theta(t) =
    theta0 cos(sqrt(k/J) t) (the spring measures theta from the start, rest_angle = -theta0)."""
    J, k, th0 = 0.5, 8.0, 0.3
    disc = RigidBodyEP("disc", 3.0, np.diag([0.3, 0.3, J]))
    axle = Revolute(None, disc, at=np.zeros(3), axis=(0, 0, 1), name="axle")
    spring = RotationalSpringDamper.about(axle, k, rest_angle=-th0)
    res = fm.run(System([disc], [axle], forces=[spring]), method="index3-alpha", h=2e-3, t_end=0.6, dt_out=0.02,
                 store=False)
    theta = np.array([spring.measures([np.zeros(0), q[:7]])[0][0] for q in res.q])
    np.testing.assert_allclose(theta + th0, th0 * np.cos(np.sqrt(k / J) * res.t), atol=2e-3 * th0)


def test_gibbs_appell_and_lagrange_agree_with_force_elements():
    """The force elements enter the active forces of Gibbs-Appell as they enter Q of Lagrange: the same
    motion to the integrators' tolerance."""
    runs = [fm.run(rigid_pair(c=1.0), formulation=form, method="DOP853", t_end=0.2, dt_out=0.05, rtol=1e-10,
                   atol=1e-12, store=False) for form in ("lagrange", "gibbs-appell")]
    np.testing.assert_allclose(runs[0].q, runs[1].q, atol=1e-8)


def test_compiled_kernel_refuses_force_elements_by_name():
    """SpringDamper, RotationalSpringDamper and Bushing run on the compiled step
    (tests/test_joints_compiled_forces.py); a user's ForceLaw is refused by name."""
    with pytest.raises(Unsupported, match="force element 'ForceLaw\\(a, b\\)' is a ForceLaw: a user's force law is "
                                          "a Python callable"):
        CompiledSystem(rigid_pair())


def test_every_force_element_kind_is_declared_in_the_kernel_schema():
    from flexmbs import forces
    from flexmbs.kernel_schema import KINDS
    for name in forces.__all__:
        if name != "ForceElement":
            assert KINDS[name].startswith("refused: " if name == "ForceLaw" else "compiled: "), name


def test_quasi_velocity_formulations_take_the_force_elements():
    """Kane, Volterra and Maggi read the applied forces body by body (`applied_forces` of a TreeBody)
    and add the force elements' (`quasi_velocities.applied_forces`): a cart pendulum on a spring-damper
    to the ground moves as with Lagrange."""
    from flexmbs.bodies.tree import TreeBody, TreeJoint, TreePart

    def build():
        body = TreeBody("cart pendulum", ("x", "theta"),
                        [TreeJoint("cart", "prismatic", (1, 0, 0), "x"),
                         TreeJoint("A", "revolute", (0, 0, 1), "theta", parent="cart")],
                        [TreePart("cart", "cart", 2.0),
                         TreePart("link", "A", 1.0, (1 / 12, 0.0, 1 / 12), centroid=(0.0, -0.5, 0.0))],
                        q0=(0.1, 0.3), v0=(0.0, 0.0))
        spring = SpringDamper(None, (-1.0, 0.0, 0.0), body, (0.0, 0.0, 0.0), 50.0, 1.0, damping=0.5)
        return System([body], forces=[spring], gravity=(0, -9.81, 0))

    runs = {form: fm.run(build(), formulation=form, method="DOP853", rtol=1e-10, atol=1e-12, t_end=0.3, dt_out=0.1,
                         store=False).q for form in ("lagrange", "kane", "volterra", "maggi")}
    assert abs(runs["lagrange"][-1, 0] - 0.1) > 0.04                  # the spring pulls the cart back
    for form in ("kane", "volterra", "maggi"):
        np.testing.assert_allclose(runs[form], runs["lagrange"], atol=1e-8, err_msg=form)


def test_a_controller_output_drives_a_spring_actuator():
    """The actuator as a controller's `Output` (zero-order hold, index3-alpha on the numpy path): a
    P law f = K_p (x_t - x) on a mass held by a spring (k, l0) settles at the static balance
    k (x - l0) = K_p (x_t - x), x = (k l0 + K_p x_t) / (k + K_p) = 1.2 m (critically damped,
    measured 1.19985 m after 1.5 s)."""
    from flexmbs import control
    k, l0, Kp, xt = 50.0, 1.0, 50.0, 1.4
    mass = PointMass("m", 2.0, position=(1.0, 0.0, 0.0))
    force = control.Output("f")
    spring = SpringDamper(None, (0, 0, 0), mass, (0, 0, 0), k, l0, damping=20.0, actuator=force)
    law = control.Controller(0.01, {"x": control.body_position(mass)}, force, lambda t, s: Kp * (xt - s["x"][0]))
    res = fm.run(System([mass], forces=[spring]), method="index3-alpha", h=2e-3, t_end=1.5, dt_out=0.05, store=False,
                 controllers=[law])
    assert res.status == "finished"
    assert res.q[-1, 0] == pytest.approx((k * l0 + Kp * xt) / (k + Kp), abs=1e-3)
    assert res.energies["W_loads"][-1] > 1.0                    # the actuator's work is counted


def test_springs_on_a_flexible_body_conserve_energy():
    """A spinning free beam (FlexibleBody) and a rigid body held by springs at a mesh node, at an
    Interface of two nodes and by a bushing between their frames: T + V + U (the beam's strain energy
    and the springs') is constant up to index3-alpha's dissipation (rho_inf 0.95, h = 1 ms: measured
    7.9e-6 J of 0.55 J in 0.2 s while the stored energy swings by 0.14 J; DOP853 at rtol 1e-10 keeps
    8.5e-14 J over 0.3 s, but takes 80 s on the stiff beam)."""
    beam = fm.BeamEB3D(fm.Material(E=2e8, rho=1000.0), area=1e-3, Iy=1e-6, Iz=1e-6, J=2e-6)
    model = fm.Model(fm.generate.line(3, 1.0, dim=3), beam, fixed=[("start", "all")])
    flex = FlexibleBody(model, "beam", stiffening="none", angular_velocity=(0, 0, 1.0))
    rigid = RigidBodyEP("hub", 1.0, np.diag([0.05, 0.1, 0.12]), position=(1.2, 0.1, 0.0))
    s = System([flex, rigid], forces=[SpringDamper(flex, Node(3), rigid, (0, 0, 0), 50.0, 0.1),
                                      Bushing(flex, rigid, 20.0, at=(1.0, 0.0, 0.0)),
                                      SpringDamper(flex, Interface([1, 2]), rigid, (0, 0.05, 0), 30.0, name="second")])
    res = fm.run(s, method="index3-alpha", h=1e-3, t_end=0.1, dt_out=0.01, rho_inf=0.95, store=False)
    E = res.energies["total"]
    assert np.ptp(res.energies["strain"]) > 0.05
    assert np.abs(E - E[0]).max() < 5e-5 * E[0]


def test_rotational_spring_about_a_planar_revolute():
    """2D: a disc (J) on a PlanarRevolute with a torsion spring, `about` the joint, rest angle -th0:
    phi - phi0 = th0 (cos(sqrt(k/J) t) - 1)."""
    from flexmbs.constraints.planar import PlanarRevolute
    J, k, th0, phi0 = 0.5, 8.0, 0.2, 0.3
    disc = RigidBody2D("d", 1.0, J, angle=phi0)
    pin = PlanarRevolute(None, disc, at=(0.0, 0.0))
    res = fm.run(System([disc], [pin], forces=[RotationalSpringDamper.about(pin, k, rest_angle=-th0)]),
                 method="DOP853", rtol=1e-10, atol=1e-12, t_end=1.0, dt_out=0.1, store=False)
    np.testing.assert_allclose(res.q[:, 2] - phi0, th0 * (np.cos(np.sqrt(k / J) * res.t) - 1.0), atol=1e-8)
