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
    assert sys.energy(q, v) == (0.0, 0.0, 0.0)                 # at rest in the plane z = 0, rigid
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
        only = sys.reactions(0.0, q, sol[sys.n_q:], names=["A"])             # one joint's reaction only
        assert list(only) == ["A"] and np.array_equal(only["A"]["bodies"]["body1"]["force"], out[kind + "A"])
        with pytest.raises(ValueError, match=r"no given constraint named \['Z'\]"):
            sys.reactions(0.0, q, sol[sys.n_q:], names=["A", "Z"])
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
    assert set(err.value.names) == {"left", "right"}


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


def test_batched_terms_equal_the_per_body_terms():
    """Mixed bodies (batched by class): M, Q, C, C_q, C_t, gamma equal a plain loop over the objects."""
    from flexmbs.constraints import AngleDriver, Prismatic
    rng = np.random.default_rng(7)
    bodies = [RigidBodyEP("e1", 1.0, [0.1, 0.2, 0.25], position=(1, 0, 0), centroid=(0.1, 0, 0.05)),
              RigidBodyNatural("n1", 2.0, [0.3, 0.2, 0.4], position=(2, 0, 0), centroid=(0, 0.1, 0)),
              RigidBodyEP("e2", 1.5, [0.2, 0.2, 0.3], position=(3, 0, 0)),
              RigidBodyNatural("n2", 1.0, [0.1, 0.1, 0.15], position=(4, 0, 0))]
    cons = [Spherical(bodies[0], None, at=(0.5, 0, 0)), Revolute(bodies[0], bodies[1], at=(1.5, 0, 0), axis=(0, 1, 0)),
            Prismatic(bodies[1], bodies[2], at=(2.5, 0, 0), axis=(1, 0, 0)),
            AngleDriver(bodies[2], bodies[3], (1, 0, 0), lambda t: (0.1 * t, 0.1, 0.0))]
    sys = System(bodies, cons, gravity=(0, 0, -9.81))
    q = sys.initial_coordinates() + 0.1 * rng.standard_normal(sys.n_q)
    v = rng.standard_normal(sys.n_q)
    t = 0.3
    M = np.zeros((sys.n_q, sys.n_q))
    Q = np.zeros(sys.n_q)
    for b in bodies:
        sl = sys.slice(b)
        M[sl, sl] = b.mass_matrix(q[sl])
        Q[sl] = b.forces(t, q[sl], v[sl], sys.gravity)
    C, J, Ct, g = (np.zeros(sys.n_c), np.zeros((sys.n_c, sys.n_q)), np.zeros(sys.n_c), np.zeros(sys.n_c))
    for c in sys.constraints:
        r = sys.rows(c)
        qs = [np.zeros(0) if b is None else q[sys.slice(b)] for b in c.bodies]
        vs = [np.zeros(0) if b is None else v[sys.slice(b)] for b in c.bodies]
        C[r], Ct[r], g[r] = c.residual(t, qs), c.time_derivative(t, qs), c.gamma(t, qs, vs)
        for b, blk in zip(c.bodies, c.jacobian(t, qs)):
            if b is not None:
                J[r, sys.slice(b)] = blk
    assert np.allclose(sys.mass_matrix(q), M, rtol=1e-14, atol=1e-14)
    assert np.allclose(sys.forces(t, q, v), Q, rtol=1e-13, atol=1e-13)
    assert np.allclose(sys.residual(t, q), C, atol=1e-14)
    assert np.allclose(sys.jacobian(t, q), J, atol=1e-14)
    assert np.allclose(sys.time_derivative(t, q), Ct, atol=1e-14) and np.any(Ct)
    assert np.allclose(sys.gamma(t, q, v), g, atol=1e-13)


@pytest.mark.parametrize("kind", list(KINDS))
def test_bricard_mechanism_has_one_dof_and_one_redundant_equation(kind):
    """IFToMM A04 (../shared/BENCHMARKS.md sec. 6e, geometry as in Exudyn's bricardMechanism.py): five 1 kg rods
    and six revolute joints; Grubler gives 0 DOF, the mechanism moves with 1, so one equation is redundant."""
    P = np.array([(0, 0, 0), (1, 0, 0), (1, -1, 0), (1, -1, 1), (0, -1, 1), (0, 0, 1)], dtype=float)
    axes = np.eye(3)[[1, 2, 0, 1, 2, 0]]
    rods = []
    for i in range(5):
        d = np.abs(P[i + 1] - P[i])
        J = (1.0 / 12.0) * ((0.01 + 0.01) * d + (1.0 + 0.01) * (1.0 - d))    # 1 x 0.1 x 0.1 m cuboid, 1 kg
        rods.append(KINDS[kind](f"rod{i}", 1.0, J, position=0.5 * (P[i] + P[i + 1])))
    sides = [None] + rods + [None]
    joints = [Revolute(sides[i], sides[i + 1], at=P[i % 6] if i < 5 else P[5], axis=axes[i], name=f"J{i}")
              for i in range(6)]
    sys = System(rods, joints, gravity=(0, -9.81, 0))
    q = sys.initial_coordinates()
    m = sys.mobility(0.0, q)
    assert m["n_c"] - m["rank"] == 1 and m["dof"] == 1
    assert len(m["redundant"]) == 1 and m["redundant"][0].startswith("J")
    # it can still be assembled from a perturbed guess (least-squares Newton steps)
    q2, _ = sys.assemble(0.0, q + 1e-3 * np.random.default_rng(1).standard_normal(sys.n_q))
    assert np.abs(sys.residual(0.0, q2)).max() < 1e-12


@pytest.mark.parametrize("kind", list(KINDS))
def test_angle_driver_turns_a_crank(kind):
    """A crank on a revolute joint, driven by theta(t) = 0.3 + 2 t + t^2: assembled positions and velocities
    follow the law (rotation about the axis by theta, angular velocity theta')."""
    from flexmbs.constraints import AngleDriver
    from flexmbs.rotations import axis_angle_to_matrix
    k = np.array([0.0, 0.6, 0.8])
    crank = KINDS[kind]("crank", 1.0, [0.01, 0.1, 0.1], position=(0.5, 0, 0), centroid=(0.1, 0, 0))
    law = lambda t: (0.3 + 2 * t + t * t, 2 + 2 * t, 2.0)
    sys = System([crank], [Revolute(crank, None, at=(0.2, 0, 0), axis=k, name="pin"),
                           AngleDriver(None, crank, k, law, name="motor")])
    q = sys.initial_coordinates()
    for t in np.linspace(0.0, 1.3, 14):          # continuation: the sine form has a second root at theta = f + pi
        q, v = sys.assemble(t, q)
        th, thd, _ = law(t)
        A = crank.rotation(q)
        assert np.allclose(A, axis_angle_to_matrix(k, th), atol=1e-10)
        assert np.allclose(crank.angular_velocity(q, v), thd * k, atol=1e-9)
        assert np.allclose(crank.point(q, np.array([-0.3, 0, 0])), (0.2, 0, 0), atol=1e-12)
    assert sys.mobility(0.0, q)["dof"] == 0


def _simulate(sys, t_end, rtol=1e-10):
    """Index-1 augmented formulation with DOP853 (a test helper; the solvers live in flexmbs.formulations)."""
    from scipy.integrate import solve_ivp
    n, m = sys.n_q, sys.n_c

    def rhs(t, x):
        q, v = x[:n], x[n:]
        Cq = sys.jacobian(t, q)
        K = np.block([[sys.mass_matrix(q), Cq.T], [Cq, np.zeros((m, m))]])
        return np.concatenate([v, np.linalg.solve(K, np.concatenate([sys.forces(t, q, v), sys.gamma(t, q, v)]))[:n]])

    x0 = np.concatenate([sys.initial_coordinates(), sys.initial_velocities()])
    return solve_ivp(rhs, (0.0, t_end), x0, method="DOP853", rtol=rtol, atol=rtol, dense_output=True)


def test_triple_pendulum_moves_the_same_in_both_coordinate_systems():
    """Same tip path D(t) over 0.6 s from NACF and RPCF-EP; energy conserved; constraints kept."""
    tips = {}
    for kind in KINDS:
        sys = triple_pendulum(kind)
        sol = _simulate(sys, 0.6)
        b3 = sys.bodies[2]
        sl = sys.slice(b3)
        tips[kind] = np.array([b3.point(sol.sol(t)[:sys.n_q][sl], np.array([2.0, 0, 0])) for t in (0.2, 0.4, 0.6)])
        x = sol.y[:, -1]
        assert abs(sum(sys.energy(x[:sys.n_q], x[sys.n_q:]))) < 1e-7        # starts at T + V = 0
        assert np.abs(sys.residual(0.6, x[:sys.n_q])).max() < 1e-7
    assert tips["ep"][-1][2] < -0.5                                         # it has fallen
    assert np.allclose(tips["ep"], tips["natural"], atol=1e-7)


@pytest.mark.parametrize("dim", [2, 3])
def test_point_mass_pendulum_on_a_distance_constraint(dim):
    """IFToMM A01 (../shared/BENCHMARKS.md sec. 6b): 1 kg on a massless 1 m link, released horizontal.
    Bottom speed sqrt(2 g L) by energy; at the bottom the link tension is 3 m g."""
    from flexmbs.bodies import PointMass
    from flexmbs.constraints import Distance
    g = np.zeros(dim)
    g[1] = -9.81
    origin = np.zeros(dim)
    start = origin.copy()
    start[0] = 1.0
    bob = PointMass("P1", 1.0, start)
    link = Distance(None, bob, at_i=origin, name="link")
    sys = System([bob], [link], gravity=g)
    assert link.length == 1.0 and sys.mobility(0.0, sys.initial_coordinates())["dof"] == dim - 1
    sol = _simulate(sys, 2.0)
    # first passage through the bottom: x = 0 (quarter period of the large-amplitude pendulum, 0.5915 s)
    from scipy.optimize import brentq
    t_b = brentq(lambda t: sol.sol(t)[0], 0.3, 0.8)
    x = sol.sol(t_b)
    q, v = x[:dim], x[dim:]
    assert np.allclose(q[:2], [0.0, -1.0], atol=1e-8)
    assert np.isclose(np.linalg.norm(v), np.sqrt(2 * 9.81), rtol=1e-8)
    Cq = sys.jacobian(t_b, q)
    K = np.block([[sys.mass_matrix(q), Cq.T], [Cq, np.zeros((1, 1))]])
    lam = np.linalg.solve(K, np.concatenate([sys.forces(t_b, q, v), sys.gamma(t_b, q, v)]))[dim:]
    F = sys.reactions(t_b, q, lam)["link"]["bodies"]["P1"]["force"]
    assert np.allclose(F[:2], [0.0, 3 * 9.81], atol=1e-6)            # link pulls up with 3 m g


def test_velocity_level_constraint_takes_part_in_the_velocity_projection_only():
    """A velocity-level constraint (issue 13's kind) on a point mass, v_y = 0.5: positions untouched by
    assemble, velocities projected onto it."""
    from flexmbs.bodies import PointMass
    from flexmbs.constraints.base import Constraint

    class VelocityY(Constraint):
        n_c, holonomic, name = 1, False, "vy"

        def __init__(self, body):
            self.bodies = (body,)

        def residual(self, t, qs):
            raise AssertionError("a velocity-level constraint has no position residual")

        def jacobian(self, t, qs):
            return [np.array([[0.0, 1.0]])]

        def time_derivative(self, t, qs):
            return np.array([-0.5])

        def gamma(self, t, qs, vs):
            return np.zeros(1)

    p = PointMass("p", 1.0, (0.3, 0.4))
    sys = System([p], [VelocityY(p)])
    q, v = sys.assemble(0.0, np.array([0.3, 0.4]), np.array([1.0, 2.0]))
    assert np.array_equal(q, [0.3, 0.4]) and np.allclose(v, [1.0, 0.5])
    assert np.array_equal(sys.residual(0.0, q), [0.0])


@pytest.mark.parametrize("kind", list(KINDS))
def test_angle_driver_reaction_is_the_motor_torque(kind):
    """A crank turned at constant speed about a horizontal axis: the motor torque balances the moment of the
    weight about the axis (no angular acceleration), and the driver applies no force."""
    from flexmbs.constraints import AngleDriver
    m, g = 2.0, np.array([0.0, 0.0, -9.81])
    k = np.array([0.0, 1.0, 0.0])
    crank = KINDS[kind]("crank", m, [0.01, 0.1, 0.1], position=(0.4, 0, 0))
    pin = Revolute(crank, None, at=(0, 0, 0), axis=k, name="pin")
    motor = AngleDriver(None, crank, k, lambda t: (3.0 * t, 3.0, 0.0), name="motor")
    sys = System([crank], [pin, motor], gravity=g)
    q = sys.initial_coordinates()
    for t in (0.0, 0.2, 0.45):
        q, v = sys.assemble(t, q)
        Cq = sys.jacobian(t, q)
        K = np.block([[sys.mass_matrix(q), Cq.T], [Cq, np.zeros((sys.n_c, sys.n_c))]])
        sol = np.linalg.lstsq(K, np.concatenate([sys.forces(t, q, v), sys.gamma(t, q, v)]), rcond=None)[0]
        r = sys.reactions(t, q, sol[sys.n_q:])["motor"]
        T = r["rotation"] @ r["bodies"]["crank"]["torque"]
        F = r["bodies"]["crank"]["force"]
        rC = crank.point(q[sys.slice(crank)], np.zeros(3))
        assert np.allclose(F, 0.0, atol=1e-9)
        assert np.isclose(T @ k, -np.cross(rC, m * g) @ k, atol=1e-9)


def test_subclass_overriding_forces_is_not_batched_away():
    class Pushed(RigidBodyEP):
        def forces(self, t, q, v, gravity):
            return super().forces(t, q, v, gravity) + np.array([1.0, 0, 0, 0, 0, 0, 0])

    a, b = RigidBodyEP("a", 1.0, [1, 1, 1]), Pushed("b", 1.0, [1, 1, 1])
    sys = System([a, b])
    Q = sys.forces(0.0, sys.initial_coordinates(), sys.initial_velocities())
    assert Q[sys.slice(b)][0] == 1.0 and Q[sys.slice(a)][0] == 0.0


@pytest.mark.parametrize("kind", list(KINDS))
def test_kinematics_of_a_driven_slider_crank(kind):
    """3D slider-crank in the x-z plane: crank r = 0.1 m turned at theta = 5 t + t^2 about y by an angle driver,
    rod l = 0.3 m (spherical joint at the crank pin), slider on a prismatic joint along x.  The slider's
    position, velocity and acceleration match x = r cos(th) + sqrt(l^2 - r^2 sin^2(th)) and its derivatives
    (by finite differences of the closed form)."""
    from flexmbs.constraints import AngleDriver, Prismatic
    r, l = 0.1, 0.3
    cls = KINDS[kind]
    y = (0, 1, 0)
    crank = cls("crank", 1.0, [0.01, 0.02, 0.02], position=(r / 2, 0, 0))
    x0 = r + l
    rod = cls("rod", 1.0, [0.01, 0.05, 0.05], position=(r + l / 2, 0, 0))
    slider = cls("slider", 1.0, [0.01, 0.01, 0.01], position=(x0, 0, 0))
    law = lambda t: (5 * t + t * t, 5 + 2 * t, 2.0)

    def build(wrist):
        return System([crank, rod, slider], [
            Revolute(crank, None, at=(0, 0, 0), axis=y, name="main"), AngleDriver(None, crank, y, law, name="motor"),
            Spherical(crank, rod, at=(r, 0, 0), name="pin"), wrist,
            Prismatic(slider, None, at=(x0, 0, 0), axis=(1, 0, 0), name="guide")])

    # spherical joints at both ends of the rod: it spins freely about its axis, 1 DOF; kinematics refuses
    sys = build(Spherical(rod, slider, at=(x0, 0, 0), name="wrist"))
    assert sys.mobility(0.0, sys.initial_coordinates())["dof"] == 1
    with pytest.raises(ConstraintError, match="degree"):
        sys.kinematics(0.1, sys.initial_coordinates())
    # a revolute at the slider: 0 DOF with 13 equations on 12 coordinates of rod and slider, one redundant
    sys = build(Revolute(rod, slider, at=(x0, 0, 0), axis=y, name="wrist"))
    m = sys.mobility(0.0, sys.initial_coordinates())
    assert m["dof"] == 0 and m["n_c"] - m["rank"] == 1
    xs = lambda th: r * np.cos(th) + np.sqrt(l * l - (r * np.sin(th)) ** 2)
    q = sys.initial_coordinates()
    for t in np.linspace(0.0, 0.4, 9):
        q, v, a = sys.kinematics(t, q)
        th, thd, thdd = law(t)
        h = 1e-4
        x, xp, xm = xs(th), xs(th + h), xs(th - h)
        dx, ddx = (xp - xm) / (2 * h), (xp - 2 * x + xm) / h**2
        sl = sys.slice(slider)
        J = slider.point_jacobian(q[sl], np.zeros(3))
        # the angle driver turns the crank about +y: a point at angle th from +x goes to z = -r sin(th)
        assert np.isclose(slider.point(q[sl], np.zeros(3))[0], x, atol=1e-10)
        assert np.isclose((J @ v[sl])[0], dx * thd, atol=1e-6)
        assert np.isclose((J @ a[sl] + slider.point_bias(q[sl], v[sl], np.zeros(3)))[0], ddx * thd**2 + dx * thdd,
                          atol=1e-4)


def test_tangent_matrices_equal_whole_system_differences():
    from flexmbs.bodies.loads import spring_to_ground
    rng = np.random.default_rng(11)
    bodies = [RigidBodyEP("e", 1.0, [0.1, 0.2, 0.25], position=(1, 0, 0), centroid=(0.1, 0, 0.05),
                          loads=[spring_to_ground((0.2, 0, 0), (0, 1, 0), 30.0, 0.5, damping=2.0)]),
              RigidBodyNatural("n", 2.0, [0.3, 0.2, 0.4], position=(2, 0, 0), centroid=(0, 0.1, 0))]
    sys = System(bodies, [Spherical(bodies[0], None, at=(0.5, 0, 0)),
                          Revolute(bodies[0], bodies[1], at=(1.5, 0, 0), axis=(0, 1, 0))], gravity=(0, 0, -9.81))
    q = sys.initial_coordinates() + 0.05 * rng.standard_normal(sys.n_q)
    v, a = rng.standard_normal((2, sys.n_q))
    lam = rng.standard_normal(sys.n_c)
    K, C = sys.tangent_matrices(0.2, q, v, a, lam)

    def g(qq):
        return sys.mass_matrix(qq) @ a - sys.forces(0.2, qq, v) + sys.jacobian(0.2, qq).T @ lam

    h = 1e-6
    K_fd = np.column_stack([(g(q + h * e) - g(q - h * e)) / (2 * h) for e in np.eye(sys.n_q)])
    C_fd = np.column_stack([-(sys.forces(0.2, q, v + h * e) - sys.forces(0.2, q, v - h * e)) / (2 * h)
                            for e in np.eye(sys.n_q)])
    assert np.allclose(K, K_fd, atol=1e-6 * np.abs(K_fd).max())
    assert np.allclose(C, C_fd, atol=1e-6 * np.abs(C_fd).max()) and np.abs(C).max() > 0.1


def test_euler_parameter_norm_serves_longer_coordinate_vectors():
    """A body whose q is (R, p, extra): the norm's Jacobian spans its n_q, batched or not."""
    from flexmbs.bodies import EulerParameterNorm

    class Longer(RigidBodyEP):
        n_q = 9

        def initial_coordinates(self):
            return np.concatenate([super().initial_coordinates(), [0.1, 0.2]])

        def internal_constraints(self):
            return [EulerParameterNorm(self)]

        def mass_matrix(self, q):
            M = np.eye(9)
            M[:7, :7] = super().mass_matrix(q[:7])
            return M

        def forces(self, t, q, v, gravity):
            return np.concatenate([super().forces(t, q[:7], v[:7], gravity), [0.0, 0.0]])

    bodies = [Longer("x", 1.0, [1, 1, 1]), Longer("y", 1.0, [1, 1, 1], position=(1, 0, 0))]
    sys = System(bodies)
    J = sys.jacobian(0.0, sys.initial_coordinates())
    assert J.shape == (2, 18) and np.allclose(J[1, 12:16], 2 * bodies[1].initial_coordinates()[3:7])


def test_euler_parameter_norms_of_bodies_of_different_sizes_form_one_batch():
    """The norm reads q[:7] only (`batch_columns`): bodies of 7 and 9 coordinates share one batch, and
    its C, C_q and gamma equal each constraint's own, zero outside the body's (R, p) columns."""

    class Longer(RigidBodyEP):
        n_q = 9

        def initial_coordinates(self):
            return np.concatenate([super().initial_coordinates(), [0.1, 0.2]])

    bodies = [RigidBodyEP("a", 1.0, [1, 2, 3]), Longer("b", 2.0, [1, 1, 1], position=(1, 0, 0))]
    sys = System(bodies)                                           # their internal norms
    assert len(sys._constraint_groups) == 1 and not sys._single_constraints
    rng = np.random.default_rng(5)
    q, v = rng.standard_normal(sys.n_q), rng.standard_normal(sys.n_q)
    C, J = sys.constraint_terms(0.0, q)
    g = sys.gamma(0.0, q, v)
    for c in sys.constraints:
        rows, cols = sys.rows(c), sys.slice(c.bodies[0])
        assert np.allclose(C[rows], c.residual(0.0, [q[cols]]), rtol=1e-15, atol=0)
        assert np.allclose(J[rows][:, cols], c.jacobian(0.0, [q[cols]])[0], rtol=1e-15, atol=0)
        assert np.allclose(g[rows], c.gamma(0.0, [q[cols]], [v[cols]]), rtol=1e-15, atol=0)
    assert np.count_nonzero(J) == 8                                 # 4 per row: the Euler parameters


def test_batched_planar_revolutes_equal_the_joints_one_by_one():
    """The stacked evaluation of planar revolute joints (System._pair_groups) gives each joint's own
    C, C_q and gamma, with ground joints on either side; and C_q matches central differences of C."""
    from flexmbs.bodies.planar import RigidBody2D
    from flexmbs.constraints.planar import PlanarPrismatic, PlanarRevolute
    a = RigidBody2D("a", 2.0, 0.3, position=(0.5, 0.0), angle=0.0)
    b = RigidBody2D("b", 1.5, 0.1, position=(1.0, 0.5), angle=np.pi / 2)
    c = RigidBody2D("c", 1.0, 0.2, position=(1.5, 1.0), angle=0.0)
    joints = [PlanarRevolute(a, None, at=(0.0, 0.0)), PlanarRevolute(a, b, at=(1.0, 0.0)),
              PlanarRevolute(b, c, at=(1.0, 1.0)), PlanarRevolute(None, c, at=(2.0, 1.0)),
              PlanarPrismatic(a, c, axis=(1.0, 0.0), at=(1.5, 1.0))]
    s = System([a, b, c], joints, gravity=(0.0, -9.81))
    assert [len(r) for _, r in s._pair_groups] == [4]              # the prismatic one stays single
    rng = np.random.default_rng(3)
    q = s.initial_coordinates() + 0.2 * rng.standard_normal(s.n_q)
    v = rng.standard_normal(s.n_q)
    C, J, g = s.residual(0.0, q), s.jacobian(0.0, q), s.gamma(0.0, q, v)
    for k, jt in enumerate(s.constraints):
        rows, qs, vs = s.rows(jt), s._split(q, k), s._split(v, k)
        np.testing.assert_allclose(C[rows], jt.residual(0.0, qs), rtol=0, atol=1e-15)
        np.testing.assert_allclose(g[rows], jt.gamma(0.0, qs, vs), rtol=0, atol=1e-14)
        blocks = np.zeros((jt.n_c, s.n_q))
        for sl, blk in zip(s._cslices[k], jt.jacobian(0.0, qs)):
            if sl is not None:
                blocks[:, sl] += blk
        np.testing.assert_allclose(J[rows], blocks, rtol=0, atol=1e-15)
    h = 1e-6
    fd = np.column_stack([(s.residual(0.0, q + h * e) - s.residual(0.0, q - h * e)) / (2 * h) for e in np.eye(s.n_q)])
    np.testing.assert_allclose(J, fd, rtol=0, atol=1e-8)
