"""The block-diagonal mass solves (flexmbs.block_mass, augmented.solve_block_saddle_point; issue 26,
item 5): the same accelerations and multipliers as the dense saddle point on existing systems, the
point masses' closed form, the stacked evaluation of point masses and of a contact, and the one
helper that decides (`uses_block_mass`)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.block_mass import BlockMass
from flexmbs.bodies import RigidBodyEP
from flexmbs.bodies.point import PointMass
from flexmbs.constraints import Spherical
from flexmbs.contact import Contact, ContactLaw, Plane, Sphere
from flexmbs.formulations import augmented
from flexmbs.formulations.stabilization import stabilized_gamma
from flexmbs.system import System

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import slider_crank  # noqa: E402
import triple_pendulum  # noqa: E402

RNG = np.random.default_rng(26)
G = np.array([0.0, 0.0, -9.81])


def chain(n: int) -> System:
    """n rigid bodies (Euler parameters, 2 m long) hanging from spherical joints, along x."""
    bodies = [RigidBodyEP(f"b{i}", 1.0 + i, np.diag([0.1 + 0.01 * i, 1.0, 1.0 + 0.01 * i]), position=(2 * i + 1, 0, 0))
              for i in range(n)]
    joints = [Spherical(None, bodies[0], at=(0, 0, 0), name="j0")] + [
        Spherical(bodies[i - 1], bodies[i], at=(2 * i, 0, 0), name=f"j{i}") for i in range(1, n)]
    return System(bodies, joints, gravity=G)


def points(n: int, loads=()) -> System:
    """n free point masses of masses 1..n kg (the first with ``loads``) under gravity."""
    return System([PointMass(f"p{i}", 1.0 + i, RNG.standard_normal(3), velocity=RNG.standard_normal(3),
                             loads=loads if i == 0 else ()) for i in range(n)], gravity=G)


def random_state(system: System):
    """A consistent state away from the initial one (perturbed, then assembled)."""
    q = system.initial_coordinates() + 0.1 * RNG.standard_normal(system.n_q)
    return system.assemble(0.0, q, RNG.standard_normal(system.n_q), tol=1e-13)


def both_solves(system: System, q, v, t: float = 0.0):
    """((q'', lam) dense, (q'', lam) by the blocks) at (t, q, v)."""
    Q, Cq = system.forces(t, q, v), system.jacobian(t, q)
    gamma = stabilized_gamma(system, t, q, v, Cq, 0.0, 0.0)
    return (augmented.solve_saddle_point(system.mass_matrix(q), Q, Cq, gamma),
            augmented.solve_block_saddle_point(system.mass_blocks(q), Q, Cq, gamma))


SYSTEMS = {"triple pendulum, natural": lambda: triple_pendulum.build("natural"),
           "triple pendulum, euler parameters": lambda: triple_pendulum.build("euler-parameters"),
           "slider-crank, flexible rod": lambda: slider_crank.build_coupled(elements=4)[0],
           "chain of 30 rigid bodies": lambda: chain(30)}


@pytest.mark.parametrize("name", SYSTEMS)
def test_block_saddle_point_equals_the_dense_one_to_round_off(name):
    system = SYSTEMS[name]()
    q, v = random_state(system) if "slider" not in name else system.initial_state()
    (a1, l1), (a2, l2) = both_solves(system, q, v)
    assert np.abs(a2 - a1).max() <= 1e-12 * np.abs(a1).max(), name
    assert np.abs(l2 - l1).max() <= 1e-12 * np.abs(l1).max(), name


def test_mass_blocks_are_the_bodies_own_mass_matrices():
    system = slider_crank.build_coupled(elements=4)[0]
    q, _ = system.initial_state()
    M = np.zeros((system.n_q, system.n_q))
    for b in system.bodies:
        sl = system.slice(b)
        M[sl, sl] = b.mass_matrix(q[sl])
    np.testing.assert_array_equal(system.mass_blocks(q).dense(), M)
    np.testing.assert_array_equal(system.mass_matrix(q), M)


def test_free_point_masses_accelerate_by_their_closed_form():
    """q'' = g + F / m (a load F on the first mass): the blocks' division, equal to the dense solve."""
    F = np.array([3.0, -2.0, 1.0])
    system = points(50, loads=[lambda body, t, q, v: F])
    q, v = system.initial_state()
    qdd, lam = augmented.accelerations(system, 0.0, q, v)
    m = np.repeat(1.0 + np.arange(50), 3)
    expected = np.tile(G, 50) + np.concatenate([F, np.zeros(147)]) / m
    np.testing.assert_allclose(qdd, expected, rtol=1e-15, atol=1e-15)
    assert lam.shape == (0,)
    np.testing.assert_allclose(both_solves(system, q, v)[0][0], expected, rtol=1e-14, atol=1e-14)


def test_point_masses_are_one_batch_with_the_forces_of_each_body():
    system = points(20, loads=[lambda body, t, q, v: -2.0 * v])
    q, v = system.initial_state()
    expected = np.concatenate([b.forces(0.0, q[system.slice(b)], v[system.slice(b)], G) for b in system.bodies])
    np.testing.assert_array_equal(system.forces(0.0, q, v), expected)
    assert len(system.mass_blocks(q).groups) == 1             # one stacked group, no loop over the 20 bodies


def test_contact_forces_stacked_equal_the_per_body_split():
    """System.element_forces gathers a contact's coordinates by one index array; the element's own
    per-body protocol (generalized_forces on the split states) gives the same Q."""
    bodies = [PointMass(f"s{i}", 0.004, (0.02 * i, 0.0, 0.009 - 0.001 * i), velocity=(0.1, 0.0, -1.0))
              for i in range(6)]
    contact = Contact([Sphere(b, 0.01) for b in bodies] + [Plane(None, (0, 0, 1))], ContactLaw(stiffness=1e5,
                                                                                              friction=0.3))
    system = System(bodies, gravity=G, forces=[contact])
    q, v = system.initial_state()
    per_body = contact.generalized_forces(0.0, [q[system.slice(b)] for b in bodies],
                                          [v[system.slice(b)] for b in bodies])
    expected = np.concatenate(per_body)
    assert np.count_nonzero(expected[2::3]) == 6                # every sphere touches the floor
    np.testing.assert_allclose(system.element_forces(0.0, q, v), expected, rtol=1e-15, atol=0.0)


@pytest.mark.parametrize("build, blocks", [(lambda: triple_pendulum.build("natural"), False),
                                           (lambda: points(3), True), (lambda: chain(30), True)])
def test_one_helper_decides_dense_or_blocks(build, blocks):
    """Small constrained systems keep the dense LU (cheaper below BLOCK_SADDLE_MIN); free bodies and
    large constrained systems use the blocks."""
    assert augmented.uses_block_mass(build()) is blocks


def test_index1_run_of_a_large_chain_keeps_its_energy():
    """flexmbs.run of 30 rigid bodies (n_q + n_c = 390: the sparse saddle point) by DOP853: T + V_g
    is conserved to the integrator's tolerance (no damping, no drivers)."""
    system = chain(30)
    res = fm.run(system, formulation="lagrange", method="DOP853", t_end=0.05, rtol=1e-9, atol=1e-11, dt_out=0.01)
    E = res.energies["total"]
    assert res.status == "finished", res.message
    assert np.abs(E - E[0]).max() <= 1e-6 * max(1.0, np.abs(res.energies["potential"]).max())
    assert np.abs(res.energies["kinetic"][-1]) > 1e-3 * np.abs(res.energies["potential"]).max()   # it moved


def test_block_solve_of_constant_blocks_is_the_inverse():
    """Constant non-diagonal blocks keep their inverse: M^-1 b by one product equals the solve."""
    A = RNG.standard_normal((4, 3, 3))
    blocks = A @ A.swapaxes(1, 2) + 3 * np.eye(3)
    from flexmbs.block_mass import MassGroup, constant_inverse
    idx = np.arange(12).reshape(4, 3)
    b = RNG.standard_normal(12)
    kept = BlockMass(12, (MassGroup(idx, blocks, tuple("abcd"), constant_inverse(blocks)),)).solve(b)
    solved = BlockMass(12, (MassGroup(idx, blocks, tuple("abcd")),)).solve(b)
    np.testing.assert_allclose(kept, solved, rtol=1e-13)
    np.testing.assert_allclose(BlockMass(12, (MassGroup(idx, blocks, tuple("abcd")),)).dense() @ kept, b, rtol=1e-12)


def test_body_fields_of_a_run_are_split_by_name_in_one_pass():
    """`bodies_from_series` gives each body its own cells and element data, also for a name that is the
    start of another's ('a', 'ab'), from one pass over the keys (the 1000-sphere run's 2.6 s after)."""
    from flexmbs.body_motion import bodies_from_series
    series = {"bodies/a/element_data/stress": np.ones((2, 3)), "bodies/ab/element_data/stress": np.zeros((2, 4)),
              "bodies/ab/position": np.ones((2, 3))}
    static = {"bodies/a/cells/line": np.array([[0, 1]]), "bodies/ab/cells/line": np.array([[0, 1], [1, 2]])}
    out = bodies_from_series({"a": "flexible", "ab": "flexible", "c": "rigid"}, series, static, 2)
    assert out["a"].element_data["stress"].shape == (2, 3) and out["ab"].element_data["stress"].shape == (2, 4)
    assert len(out["a"].cells["line"]) == 1 and len(out["ab"].cells["line"]) == 2
    assert out["c"].cells == {} and out["c"].element_data == {}
    assert np.isnan(out["a"].position).all() and (out["ab"].position == 1).all()
