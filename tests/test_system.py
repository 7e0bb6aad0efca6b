"""System: layout, assembled terms, consistent initial conditions, mobility, errors."""
import numpy as np
import pytest

from flexmbs.bodies import RigidBodyEP, RigidBodyNatural
from flexmbs.constraints import ConstraintError, CoordinateDriver, Revolute, Spherical
from flexmbs.rotations import rotation_z
from flexmbs.system import System

KINDS = {"ep": RigidBodyEP, "natural": RigidBodyNatural}


def triple_pendulum(kind):
    """Seed 000's triple pendulum (Table 1 data, ../shared/BENCHMARKS.md sec. 6a): bars 4 x 0.4 x 0.4 m,
    horizontal, A = (0,0,0) -> B = (4,0,0) -> C = (4,4,0) -> D = (8,4,0), frames at the centroids."""
    cls = KINDS[kind]
    b1 = cls("body1", 2.0, [0.053, 2.693, 2.693], position=(2, 0, 0))
    b2 = cls("body2", 3.0, [0.080, 4.040, 4.040], position=(4, 2, 0), orientation=rotation_z(np.pi / 2))
    b3 = cls("body3", 4.0, [0.107, 5.387, 5.387], position=(6, 4, 0))
    joints = [Spherical(b1, None, at=(0, 0, 0), name="A"), Spherical(b1, b2, at=(4, 0, 0), name="B"),
              Spherical(b2, b3, at=(4, 4, 0), name="C")]
    return System([b1, b2, b3], joints, gravity=(0, 0, -9.81))


@pytest.mark.parametrize("kind", list(KINDS))
def test_layout_and_assembled_terms(kind):
    sys = triple_pendulum(kind)
    n = 7 if kind == "ep" else 12
    n_int = 1 if kind == "ep" else 6
    assert sys.n_q == 3 * n and sys.n_c == 3 * n_int + 9
    assert sys.slice(sys.bodies[1]) == slice(n, 2 * n)
    assert sys.rows(sys.constraint("A")) == slice(3 * n_int, 3 * n_int + 3)
    q, v = sys.initial_coordinates(), sys.initial_velocities()
    assert np.abs(sys.residual(0.0, q)).max() < 1e-14
    M = sys.mass_matrix(q)
    assert np.allclose(M[:n, n:], 0.0) and np.allclose(M, M.T)
    assert np.allclose(M[n:2 * n, n:2 * n], sys.bodies[1].mass_matrix(q[n:2 * n]))
    J = sys.jacobian(0.0, q)
    assert J.shape == (sys.n_c, sys.n_q)
    assert sys.energy(q, v) == (0.0, 0.0)                      # at rest in the plane z = 0
    m = sys.mobility(0.0, q)
    assert m["dof"] == 9 and m["rank"] == sys.n_c and m["redundant"] == []


def test_both_coordinate_systems_give_the_same_initial_accelerations():
    """Augmented system of the triple pendulum at rest: the tip D accelerates the same way."""
    out = {}
    for kind in KINDS:
        sys = triple_pendulum(kind)
        q, v = sys.initial_coordinates(), sys.initial_velocities()
        M, C = sys.mass_matrix(q), sys.jacobian(0.0, q)
        K = np.block([[M, C.T], [C, np.zeros((sys.n_c, sys.n_c))]])
        sol = np.linalg.solve(K, np.concatenate([sys.forces(0.0, q, v), sys.gamma(0.0, q, v)]))
        b3 = sys.bodies[2]
        sl = sys.slice(b3)
        acc = b3.point_jacobian(q[sl], np.array([2.0, 0, 0])) @ sol[sl]
        out[kind] = acc
        forces = sys.reactions(0.0, q, sol[sys.n_q:])
        out[kind + "A"] = forces["A"]["bodies"]["body1"]["force"]
    assert out["ep"][2] < -9.81                 # a horizontal chain falls faster than g at its tip
    assert np.allclose(out["ep"], out["natural"], atol=1e-10)
    assert np.allclose(out["epA"], out["naturalA"], atol=1e-9)


@pytest.mark.parametrize("kind", list(KINDS))
def test_assemble_perturbed_triple_pendulum(kind):
    sys = triple_pendulum(kind)
    q0 = sys.initial_coordinates()
    rng = np.random.default_rng(3)
    q_guess = q0 + 0.05 * rng.standard_normal(sys.n_q)
    v_guess = rng.standard_normal(sys.n_q)
    assert np.abs(sys.residual(0.0, q_guess)).max() > 1e-2
    q, v = sys.assemble(0.0, q_guess, v_guess)
    assert np.abs(sys.residual(0.0, q)).max() < 1e-12
    assert np.abs(sys.jacobian(0.0, q) @ v).max() < 1e-10
    assert np.abs(q - q0).max() < 0.2
    # fixed coordinates stay where they are
    q2, _ = sys.assemble(0.0, q_guess, fixed=[(sys.bodies[2], 0)])
    assert q2[sys.slice(sys.bodies[2]).start] == q_guess[sys.slice(sys.bodies[2]).start]


def test_overconstrained_system_cannot_assemble_and_names_the_joint():
    """A bar pinned at both ends to ground points farther apart than its pins."""
    bar = RigidBodyEP("bar", 1.0, [0.01, 0.1, 0.1], position=(0.5, 0, 0))
    left = Spherical(bar, None, at=(0, 0, 0), name="left")
    right = Spherical(bar, None, s_i=(0.5, 0, 0), s_j=(1.2, 0, 0), name="right", tol=1.0)
    sys = System([bar], [left, right])
    with pytest.raises(ConstraintError, match="left|right") as err:
        sys.assemble(0.0, sys.initial_coordinates())
    assert set(err.value.names) & {"left", "right"}


def test_conflicting_driver_velocity_is_reported():
    bar = RigidBodyEP("bar", 1.0, [0.01, 0.1, 0.1], position=(0.5, 0, 0))
    pin = Revolute(bar, None, at=(0, 0, 0), axis=(0, 0, 1), name="pin")
    slide = CoordinateDriver(bar, 2, lambda t: (0.0, 1.0, 0.0), name="lift")       # z' = 1 against the pin
    sys = System([bar], [pin, slide])
    with pytest.raises(ConstraintError, match="velocity"):
        sys.assemble(0.0, sys.initial_coordinates())


def test_mobility_finds_the_redundant_constraint():
    """A door on two coaxial revolute hinges: 1 DOF, 5 redundant equations (in the second hinge)."""
    door = RigidBodyNatural("door", 10.0, [1.0, 1.2, 0.3], position=(0.4, 0, 1.0))
    h1 = Revolute(door, None, at=(0, 0, 0.2), axis=(0, 0, 1), name="lower")
    h2 = Revolute(door, None, at=(0, 0, 1.8), axis=(0, 0, 1), name="upper")
    sys = System([door], [h1, h2])
    m = sys.mobility(0.0, sys.initial_coordinates())
    assert m["dof"] == 1 and m["n_c"] - m["rank"] == 5
    assert m["redundant"] == ["upper"]


def test_system_bad_input():
    a = RigidBodyEP("a", 1.0, [1, 1, 1])
    with pytest.raises(ValueError, match="unique"):
        System([a, RigidBodyEP("a", 1.0, [1, 1, 1])])
    other = RigidBodyEP("other", 1.0, [1, 1, 1])
    with pytest.raises(ValueError, match="not in `bodies`"):
        System([a], [Spherical(a, other, at=(0, 0, 0))])
    with pytest.raises(ValueError, match="gravity"):
        System([a], gravity=(0, -9.81))
