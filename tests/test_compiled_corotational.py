"""Planar corotational beams on the compiled step (issue 22, item 4): csrc ``corot2d_bodies`` and the planar
joints on beam nodes against the numpy System (the reference).

- the kernel's M, Q, C, C_q and gamma equal the numpy System's to round-off at random states: the flexible
  pendulum (cases/flexible_pendulum.py: a 2D Spherical on Node(0), packed as planar revolute rows) and a
  tilted beam between two RigidBody2D bodies (PlanarRevolute on a beam node, PlanarPrismatic on Node(0),
  reference angle beta_0 != 0); with formulation="gibbs-appell" the same M and Q (LinearInertia: M_GA = M,
  g = 0), checked against the numpy GibbsAppellSystem;
- index3-alpha compiled and numpy take the same steps (refactor="step": the same tangent at each step, so
  q agrees to round-off; q to 1e-12 over 0.05 s), Lagrange and Gibbs-Appell, and the run says which path ran.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs import Material, System
from flexmbs.bodies.corotational import CorotationalBeam2D, Node
from flexmbs.bodies.planar import RigidBody2D
from flexmbs.compiled import CompiledSystem, kernel_status
from flexmbs.constraints.joints import Spherical
from flexmbs.constraints.planar import PlanarPrismatic, PlanarRevolute
from flexmbs.forces import RotationalSpringDamper, SpringDamper
from flexmbs.formulations.gibbs_appell_system import GibbsAppellSystem

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import flexible_pendulum  # noqa: E402
from kernel_reference import assert_same_steps, close  # noqa: E402

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason=f"the kernel is {kernel_status()}")


def pendulum():
    """The case's corotational pendulum with its pin joint (8 elements, 27 coordinates)."""
    p = dict(flexible_pendulum.DEFAULTS, integrator="index3-alpha")
    return flexible_pendulum.MODELS["corotational"](p).system


def beam_between_bodies():
    """A beam along (0.6, 0.8) (beta_0 = 53 deg), lumped mass, its Node(0) on a prismatic joint to the ground
    (axis along the beam), its last node pinned to a disk that is pinned to the ground."""
    beam = CorotationalBeam2D.line("beam", (0.0, 0.0), (0.6, 0.8), 4, Material(E=2e9, rho=2700.0), 1e-4, 1e-9,
                                   mass="lumped")
    disk = RigidBody2D("disk", 2.0, 0.05, position=(1.0, 0.8), angle=0.3)
    joints = [PlanarPrismatic(None, beam, axis=(0.6, 0.8), at=(0.0, 0.0), name="slide"),
              PlanarRevolute(beam, disk, at=(0.6, 0.8), name="tip pin"),
              PlanarRevolute(disk, None, at=(1.0, 0.8), name="disk pin")]
    return System([beam, disk], joints, gravity=(0.3, -9.81))


def beam_on_a_body():
    """Two beams (consistent mass without rotary inertia; four elements given out of order) and a disk: the
    first beam pinned to the ground at its Node(0) and to the disk at its tip by 2D Spherical joints, the
    second beam pinned to the first one's Node(2) by a PlanarRevolute (the planar batch's point rows and
    the planar revolute rows together)."""
    steel = Material(E=2e9, rho=7800.0)
    a = CorotationalBeam2D("a", [[0.0, 0.0], [0.25, 0.05], [0.5, 0.1], [0.75, 0.15], [1.0, 0.2]], steel, 1e-4, 1e-9,
                           elements=np.array([[2, 3], [0, 1], [3, 4], [1, 2]]), rotary_inertia=False)
    b = CorotationalBeam2D.line("b", (0.5, 0.1), (0.5, -0.5), 3, steel, 1e-4, 1e-9)
    disk = RigidBody2D("disk", 1.5, 0.02, position=(1.2, 0.2), angle=-0.4)
    joints = [Spherical(None, a, s_j=Node(0), name="root"),
              Spherical(a, disk, s_i=Node(4), s_j=(-0.2 * np.cos(0.4), -0.2 * np.sin(0.4)), name="tip"),
              PlanarRevolute(a, b, at=(0.5, 0.1), name="branch")]
    return System([a, disk, b], joints, gravity=(0.0, -9.81))


def beam_on_springs():
    """The pendulum's beam hanging from the ground by a spring-damper at Node(0) with an actuator of t, a
    spring-damper from its Node(5) to a disk on a pin, and a rotational spring-damper between the ground and
    the beam (node 0's section turns the beam's vectors)."""
    beam = CorotationalBeam2D.line("beam", (0.0, 0.0), (1.0, 0.0), 8, Material(E=5e7, rho=1000.0), 4e-4, 4e-4 ** 2 / 12)
    disk = RigidBody2D("disk", 1.0, 0.01, position=(0.6, -0.5))
    forces = [SpringDamper(None, (0.0, 0.3), beam, Node(0), 800.0, damping=3.0, actuator=lambda t: 2.0 * t,
                           name="hanger"),
              SpringDamper(beam, Node(5), disk, (0.05, 0.0), 300.0, rest_length=0.4, damping=1.0, name="link"),
              RotationalSpringDamper(None, beam, 5.0, damping=0.2, name="twist")]
    return System([beam, disk], [PlanarRevolute(disk, None, at=(0.6, -0.5), name="disk pin")], gravity=(0.0, -9.81),
                  forces=forces)


SYSTEMS = {"pendulum": pendulum, "beam-between-bodies": beam_between_bodies, "beam-on-a-body": beam_on_a_body,
           "beam-on-springs": beam_on_springs}


def _states(system, rng, k=3):
    for t in (0.0, 0.013, 0.2)[:k]:
        q = system.initial_coordinates() + 0.05 * rng.standard_normal(system.n_q)
        v = system.initial_velocities() + 2.0 * rng.standard_normal(system.n_q)
        yield t, q, v


@needs_kernel
@pytest.mark.parametrize("name", list(SYSTEMS))
def test_kernel_terms_equal_the_numpy_system(name):
    """M, Q (gravity, the elements' internal forces: |Q| ~ 1e4 N at these perturbations, and the force elements'),
    C, C_q and gamma to 1e-12 of their size; dQ_v/dv zero (constant M); K_el the numpy System's: the force
    elements' material stiffness, none for the beam (its tangent is by finite differences on both paths)."""
    system = SYSTEMS[name]()
    compiled = CompiledSystem(system)
    for t, q, v in _states(system, np.random.default_rng(3)):
        got = compiled.evaluate(t, q, v)
        Q = system.forces(t, q, v)
        assert np.abs(Q).max() > 100.0                               # the internal forces are in it
        assert close(got["M"], system.mass_matrix(q))
        assert close(got["Q"], Q)
        assert close(got["C"], system.residual(t, q))
        assert close(got["Cq"], system.jacobian(t, q))
        assert not got["D"].any()
        K = system.elastic_stiffness(t, q, v)     # the force elements' material stiffness; none for the beam
        assert close(got["K"], np.zeros_like(got["K"]) if K is None else K)
        assert (K is None) == (not system.force_elements)
        gamma, Ct = compiled.constraint_rates(t, q, v)
        assert close(gamma, system.gamma(t, q, v)) and not Ct.any()


@needs_kernel
@pytest.mark.parametrize("name", list(SYSTEMS))
def test_kernel_terms_equal_the_numpy_gibbs_appell(name):
    """formulation="gibbs-appell": the beam's M_GA = M and g = 0 (its points linear in q), as the numpy
    GibbsAppellSystem's inertia terms and active forces."""
    system = SYSTEMS[name]()
    ga = GibbsAppellSystem(system)
    compiled = CompiledSystem(system, formulation="gibbs-appell")
    for t, q, v in _states(system, np.random.default_rng(5)):
        got = compiled.evaluate(t, q, v)
        M, g = ga.body_terms.inertia_terms(q, v)
        assert close(got["M"], M)
        assert close(got["Q"], ga.body_terms.active_forces(t, q, v) - g)


@needs_kernel
def test_the_internal_force_vanishes_in_a_rigid_motion():
    """A rigid motion of the beam (translation, rotation by 2.5 rad with the sections turned alike, every other
    one a whole turn more or less: theta_k = 2.5 + 2 pi (k mod 3 - 1), which the wrap of the local angles to
    (-pi, pi] takes out) leaves only the weight in Q: f_int = 0 to round-off of EA/L_0.  Without the wrap
    the end moments would be (2 EI / L_0) 2 pi (3, 3) ~ 20 N m."""
    system = pendulum()
    beam = system.bodies[0]
    compiled = CompiledSystem(system)
    a = 2.5
    R = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    turns = 2.0 * np.pi * (np.arange(beam.n_nodes) % 3 - 1)
    q = np.column_stack([beam.nodes @ R.T + (0.3, -0.2), a + turns]).ravel()
    got = compiled.evaluate(0.0, q, np.zeros(system.n_q))["Q"]
    weight = beam.gravity_force(system.gravity)
    assert np.abs(got - weight).max() <= 1e-9 * np.max(beam.EA / beam.length0)
    assert np.abs(system.forces(0.0, q, np.zeros(system.n_q)) - weight).max() <= 1e-9 * np.max(beam.EA / beam.length0)


def _runs(system_of, formulation, t_end=0.05, h=1e-3):
    t = np.linspace(0.0, t_end, 6)
    return [fm.run(system_of(), formulation=formulation, method="index3-alpha", h=h, t_end=t_end, t_eval=t,
                   store=False, kernel=kernel, refactor="step", rho_inf=0.99) for kernel in ("numpy", "compiled")]


@needs_kernel
@pytest.mark.parametrize("name, formulation", [("pendulum", "index3"), ("pendulum", "gibbs-appell"),
                                               ("beam-on-springs", "index3")])
def test_steps_follow_the_numpy_steps(name, formulation):
    """The flexible pendulum (and the beam on springs), 50 steps of 1 ms: the same steps, q to 1e-12 m
    (measured 6e-16 on the pendulum), v to 1e-9 of its size, the multipliers to 1e-9 of theirs (measured
    2e-12 N of 5 N)."""
    a, b = _runs(SYSTEMS[name], formulation)
    assert_same_steps(a, b, 50)


@needs_kernel
def test_auto_takes_the_kernel_for_the_pendulum():
    """kernel="auto" (the default) runs the corotational pendulum compiled (its summary.json says so)."""
    res = fm.run(pendulum(), formulation="index3", method="index3-alpha", h=1e-3, t_end=5e-3, dt_out=1e-3,
                 store=False)
    assert res.success and res.metadata["kernel"] == "compiled"


@needs_kernel
def test_the_case_default_route_takes_the_kernels_terms():
    """The case's default: the index-1 augmented form with coordinate partitioning and the midpoint rule
    takes M, Q, C, C_q from the kernel (formulation option kernel="auto") and gives the numpy path's states
    to 1e-10 of their size over 20 steps (the same steps and evaluations)."""
    out = {}
    for kernel in ("compiled", "numpy"):
        out[kernel] = fm.run(pendulum(), formulation="lagrange", method="midpoint", h=1e-3, t_end=0.02,
                             dt_out=0.005, store=False, newton_max_iter=20,
                             formulation_options=dict(stabilization="coordinate-partitioning", kernel=kernel))
        assert out[kernel].success, out[kernel].message
    c, n = out["compiled"], out["numpy"]
    assert (c.metadata["kernel"], n.metadata["kernel"]) == ("compiled", "numpy")
    assert (c.stats["n_steps"], c.stats["n_rhs"]) == (n.stats["n_steps"], n.stats["n_rhs"])
    assert np.abs(c.q - n.q).max() <= 1e-10 * np.abs(n.q).max()
    assert np.abs(c.v - n.v).max() <= 1e-10 * np.abs(n.v).max()
