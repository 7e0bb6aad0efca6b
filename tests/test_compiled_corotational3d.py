"""Spatial corotational beams on the compiled step (issue 22, item 4): csrc ``corot3d_bodies`` and the joint
batch's MARKER_COROT3D markers against the numpy System (the reference, flexmbs/bodies/corotational.py and
flexmbs/elements/corotational3d.py).

- the kernel's M, Q, C, C_q, gamma and K_el equal the numpy System's to 1e-12 of their size on bent, moving
  states (coordinates perturbed by O(0.3), rates O(2): |Q| ~ 1e5 N, mostly internal forces): the flexible
  pendulum of benchmarks/bench_corotational.py (a Spherical on Node(0)) and a beam clamped to a hub on an axle
  (Fixed: node 0's section vectors R(psi_0) u in dot1 rows) with a ball joint at its tip and a spring on a node;
  the rotary terms (M_psi = T J0 T^T, Q_v) on their own scale on a thick, soft, spinning beam; f_int = 0 in a
  rigid motion;
- index3-alpha compiled and numpy take the same steps (refactor="step", and the numpy path's tangent by the
  whole system's forward differences, the kernel's arithmetic: `System.tangent_matrices` taken away), q to
  1e-12 m (measured 1.6e-16 m over 30 steps), and ``kernel="auto"`` takes the kernel;
- the index-1 route (formulation "lagrange", coordinate partitioning, the midpoint rule) takes M, Q, C, C_q
  from the kernel and follows the numpy path.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import RigidBodyEP
from flexmbs.bodies.corotational import CorotationalBeam3D, Node
from flexmbs.compiled import CompiledSystem, kernel_status
from flexmbs.constraints.joints import Fixed, Revolute, Spherical
from flexmbs.forces import SpringDamper
from kernel_reference import assert_same_steps, close

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason=f"the kernel is {kernel_status()}")

SIDE = 0.02


def pendulum():
    """benchmarks/bench_corotational.py's 3D pendulum: 8 elements (n_q = 54), pinned at Node(0), gravity -y."""
    beam = CorotationalBeam3D.line("pendulum", (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), 8,
                                   fm.Material(E=5e7, rho=1000.0, nu=0.3), SIDE ** 2, SIDE ** 4 / 12, SIDE ** 4 / 12,
                                   0.141 * SIDE ** 4)
    return fm.System([beam], [Spherical(None, beam, s_j=Node(0), name="pin")], gravity=(0.0, -9.81, 0.0))


def beam_on_a_hub():
    """A skew beam (4 elements given out of order, unequal Iy, Iz, the sections' axes from an ``orientation``)
    clamped to a hub on an axle (Fixed on Node(0): point and dot1 rows with the beam's section vectors), a ball
    joint to a tip body at Node(4) and a spring-damper from the ground to Node(2)."""
    nodes = np.linspace(0.0, 1.0, 5)[:, None] * np.array([0.8, 0.3, 0.1])
    beam = CorotationalBeam3D("beam", nodes, fm.Material(E=5e7, rho=1000.0, nu=0.3), 4e-4, 1.3e-8, 1.4e-8, 2.2e-8,
                              elements=np.array([[2, 3], [0, 1], [3, 4], [1, 2]]), orientation=(0.2, 0.1, 1.0))
    hub = RigidBodyEP("hub", 2.0, [0.1, 0.2, 0.25], position=(0.0, 0.0, 0.0))
    tip = RigidBodyEP("tip", 0.5, [0.01, 0.02, 0.02], position=(0.8, 0.3, 0.1))
    joints = [Revolute(hub, None, at=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0), name="axle"),
              Fixed(hub, beam, s_j=Node(0), at=(0.0, 0.0, 0.0), name="clamp"),
              Spherical(beam, tip, s_i=Node(4), at=(0.8, 0.3, 0.1), name="ball")]
    forces = [SpringDamper(None, (0.5, 0.5, 0.0), beam, Node(2), 300.0, damping=2.0, name="spring")]
    return fm.System([hub, beam, tip], joints, gravity=(0.0, -9.81, 0.0), forces=forces)


SYSTEMS = {"pendulum": pendulum, "beam-on-a-hub": beam_on_a_hub}


@needs_kernel
@pytest.mark.parametrize("name", list(SYSTEMS))
def test_kernel_terms_equal_the_numpy_system(name):
    system = SYSTEMS[name]()
    compiled = CompiledSystem(system)
    rng = np.random.default_rng(7)
    for t in (0.0, 0.3):
        q = system.initial_coordinates() + 0.3 * rng.standard_normal(system.n_q)
        v = 2.0 * rng.standard_normal(system.n_q)
        got = compiled.evaluate(t, q, v)
        Q = system.forces(t, q, v)
        assert np.abs(Q).max() > 1e3                                   # the internal forces are in it
        assert close(got["M"], system.mass_matrix(q))
        assert close(got["Q"], Q)
        assert close(got["C"], system.residual(t, q))
        assert close(got["Cq"], system.jacobian(t, q))
        gamma, Ct = compiled.constraint_rates(t, q, v)
        assert close(gamma, system.gamma(t, q, v)) and not Ct.any()
        K = system.elastic_stiffness(t, q, v)          # the spring's material stiffness; none for the beam
        assert close(got["K"], np.zeros_like(got["K"]) if K is None else K)


@needs_kernel
def test_the_kept_node_and_element_terms_follow_every_change():
    """csrc ``corot3d_update`` keeps each node's rotary terms and each element's force from the last call and
    computes them again only where q or psi' changed: a sequence of states that differ from the previous one in
    one node's position, one node's rotation vector, one node's psi' or x', two nodes at once, or nothing, and
    then the first state again, gives the numpy System's M and Q at each (1e-12 of their size)."""
    system = beam_on_a_hub()
    beam = system.bodies[1]
    o = system.slice(beam).start
    compiled = CompiledSystem(system)
    rng = np.random.default_rng(13)
    q0 = system.initial_coordinates() + 0.3 * rng.standard_normal(system.n_q)
    v0 = 2.0 * rng.standard_normal(system.n_q)
    changes = [(), [("q", o + 6 * 2)], [("q", o + 6 * 4 + 4)], [("v", o + 6 * 1 + 5)], [("v", o + 6 * 3)],
               [("q", o + 1), ("q", o + 6 * 3 + 3)], (), "back"]
    q, v = q0.copy(), v0.copy()
    for change in changes:
        if change == "back":
            q, v = q0.copy(), v0.copy()
        for which, k in change if change != "back" else ():
            (q if which == "q" else v)[k] += 0.1
        got = compiled.evaluate(0.0, q, v)
        assert close(got["M"], system.mass_matrix(q)), change
        assert close(got["Q"], system.forces(0.0, q, v)), change


@needs_kernel
def test_the_rotary_terms_equal_the_numpy_beams():
    """The rotary terms on their own scale: a thick (10 cm), soft (E = 1 kPa) beam spinning at O(20) rad/s without
    gravity, so that the quadratic-velocity terms Q_v are a large part of Q on the psi's: the kernel's M on the
    psi's (T J0 T^T, J0 ~ 2e-3 kg m^2 against a translational mass ~ 0.4 kg) and its Q there to 1e-12 of their
    own size."""
    beam = CorotationalBeam3D.line("spinner", (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), 4,
                                   fm.Material(E=1e3, rho=1000.0, nu=0.3), 0.01, 0.01 ** 2 / 12, 0.01 ** 2 / 18,
                                   0.141 * 0.1 ** 4)
    system = fm.System([beam])
    rng = np.random.default_rng(11)
    q = system.initial_coordinates() + 0.5 * rng.standard_normal(system.n_q)
    v = 20.0 * rng.standard_normal(system.n_q)
    got = CompiledSystem(system).evaluate(0.0, q, v)
    rot = (3 + 6 * np.arange(beam.n_nodes)[:, None] + np.arange(3)).ravel()
    Q, Qv = system.forces(0.0, q, v), beam.quadratic_velocity(q, v)
    assert np.abs(Qv[rot]).max() > 0.1 * np.abs(Q[rot]).max()
    M = system.mass_matrix(q)
    assert np.abs(M[np.ix_(rot, rot)] - np.kron(np.eye(beam.n_nodes), np.ones((3, 3))) * M[np.ix_(rot, rot)]).max() == 0
    assert not np.allclose(M[3:6, 3:6], beam.section_inertia[0])        # M depends on psi
    assert close(got["M"][np.ix_(rot, rot)], M[np.ix_(rot, rot)], 1e-12 * 0.01)
    assert close(got["Q"][rot], Q[rot])


@needs_kernel
def test_the_internal_force_vanishes_in_a_rigid_motion():
    """A rigid rotation of the whole pendulum by a rotation vector phi (every node's section turned alike,
    psi_k = phi, positions R(phi) X_k + c) at rest leaves only the weight in Q: f_int = 0 to round-off of EA/L_0
    (the corotational frame takes the rigid motion out, elements/corotational3d.py)."""
    system = pendulum()
    beam = system.bodies[0]
    phi = np.array([0.4, -1.1, 0.7])
    from flexmbs.elements.corotational3d import rotation_vector_matrix
    R = rotation_vector_matrix(phi)
    q = np.column_stack([beam.nodes @ R.T + (0.3, -0.2, 0.1), np.tile(phi, (beam.n_nodes, 1))]).ravel()
    got = CompiledSystem(system).evaluate(0.0, q, np.zeros(system.n_q))["Q"]
    weight = beam.gravity_force(system.gravity)
    assert np.abs(got - weight).max() <= 1e-9 * np.max(beam.EA / beam.length0)


def _runs(system_of):
    """The same 30 steps of 1 ms on both paths (refactor="step"); the numpy path's tangent by the whole system's
    forward differences (`System.tangent_matrices` taken away), as the kernel's csrc ``tangents``."""
    opts = dict(formulation="index3", method="index3-alpha", h=1e-3, t_end=0.03, t_eval=np.linspace(0.0, 0.03, 4),
                store=False, refactor="step", rho_inf=0.99)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(fm.System, "tangent_matrices", None)
        numpy = fm.run(system_of(), kernel="numpy", **opts)
    return numpy, fm.run(system_of(), kernel="compiled", **opts)


@needs_kernel
@pytest.mark.parametrize("name", list(SYSTEMS))
def test_steps_follow_the_numpy_steps(name):
    a, b = _runs(SYSTEMS[name])
    assert_same_steps(a, b, 30)


@needs_kernel
def test_auto_takes_the_kernel_for_the_pendulum():
    res = fm.run(pendulum(), formulation="index3", method="index3-alpha", h=1e-3, t_end=5e-3, dt_out=1e-3,
                 store=False)
    assert res.success and res.metadata["kernel"] == "compiled"


@needs_kernel
def test_the_index1_route_takes_the_kernels_terms():
    """The index-1 augmented form (coordinate partitioning, the midpoint rule) takes M, Q, C, C_q from the kernel
    (formulation option kernel="auto") and gives the numpy path's states to 1e-10 of their size over 10 steps
    (the same steps and evaluations)."""
    out = {}
    for kernel in ("compiled", "numpy"):
        out[kernel] = fm.run(pendulum(), formulation="lagrange", method="midpoint", h=1e-3, t_end=0.01, dt_out=0.005,
                             store=False, newton_max_iter=20,
                             formulation_options=dict(stabilization="coordinate-partitioning", kernel=kernel))
        assert out[kernel].success, out[kernel].message
    c, n = out["compiled"], out["numpy"]
    assert (c.metadata["kernel"], n.metadata["kernel"]) == ("compiled", "numpy")
    assert (c.stats["n_steps"], c.stats["n_rhs"]) == (n.stats["n_steps"], n.stats["n_rhs"])
    assert np.abs(c.q - n.q).max() <= 1e-10 * np.abs(n.q).max()
    assert np.abs(c.v - n.v).max() <= 1e-10 * np.abs(n.v).max()


def test_the_energies_of_all_outputs_at_once_equal_the_row_by_row_ones():
    """`CorotationalBeam3D.strain_energies` and ``energies`` over a block of outputs (one batch of elements and
    sections) equal `strain_energy` and `energy` row by row to round-off (no kernel needed)."""
    system = pendulum()
    beam = system.bodies[0]
    rng = np.random.default_rng(3)
    Q = beam.initial_coordinates() + 0.3 * rng.standard_normal((7, beam.n_q))
    V = 2.0 * rng.standard_normal((7, beam.n_q))
    U = np.array([beam.strain_energy(q) for q in Q])
    E = np.array([beam.energy(q, v, system.gravity) for q, v in zip(Q, V)])
    T, Vg = beam.energies(Q, V, system.gravity)
    assert np.abs(beam.strain_energies(Q) - U).max() <= 1e-12 * np.abs(U).max()
    assert np.abs(T - E[:, 0]).max() <= 1e-12 * np.abs(E[:, 0]).max()
    assert np.abs(Vg - E[:, 1]).max() <= 1e-12 * np.abs(E[:, 1]).max()
    assert beam.strain_energies(Q[:0]).shape == (0,) and beam.energies(Q[:0], V[:0], None)[1].shape == (0,)


@needs_kernel
def test_the_adaptive_steps_follow_the_numpy_steps():
    """index3-alpha-adaptive (the kernel's step-size control, its velocity projection and consistent
    accelerations from csrc ``constraint_rates`` on the beam's node markers) takes the numpy path's steps on the
    pendulum's first 2 ms (37 steps): the same steps, q to 1e-9 m (the numpy path's tangent is the beam's own,
    the kernel's by differences: the two agree to the Newton tolerance, measured 6e-14 m over 20 ms)."""
    runs = [fm.run(pendulum(), formulation="index3", method="index3-alpha-adaptive", h=1e-3, t_end=2e-3,
                   t_eval=np.linspace(0.0, 2e-3, 3), store=False, kernel=kernel, rtol=1e-4)
            for kernel in ("numpy", "compiled")]
    a, b = runs
    assert a.success and b.success, (a.message, b.message)
    assert (a.metadata["kernel"], b.metadata["kernel"]) == ("numpy", "compiled")
    assert a.stats["n_steps"] == b.stats["n_steps"] > 20
    assert np.abs(a.q - b.q).max() <= 1e-9 and np.abs(a.q[-1] - a.q[0]).max() > 1e-5
