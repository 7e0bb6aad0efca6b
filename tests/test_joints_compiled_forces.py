"""Force elements between bodies and point masses on the compiled step (issue 22, item 4; issue 26,
item 5): the kernel's Q, K_el and M against the numpy path's at random states (round-off), whole
index3-alpha runs on both paths (the quarter car of cases/quarter_car.py, two tumbling rigid bodies),
and what it still refuses, by name."""
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import PointMass, RigidBody2D, RigidBodyEP
from flexmbs.compiled import CompiledSystem, Unsupported, kernel_status
from flexmbs.constraints import JointLimit
from flexmbs.constraints.planar import PlanarRevolute
from flexmbs.forces import Bushing, ForceLaw, RotationalSpringDamper, SpringDamper
from flexmbs.rotations import axis_angle_to_matrix
from flexmbs.system import System

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import quarter_car  # noqa: E402

pytestmark = pytest.mark.skipif(not kernel_status().installed, reason="the compiled kernel is not installed")


def spatial(actuator=None):
    """Two tumbling rigid bodies (and the ground) held by every compiled kind: springs (one with an
    actuator), rotational springs, a bushing."""
    rng = np.random.default_rng(0)
    a = RigidBodyEP("a", 1.5, np.diag([0.2, 0.3, 0.4]), position=(0, 0, 0), angular_velocity=(0.3, -0.2, 0.5),
                    orientation=axis_angle_to_matrix(rng.standard_normal(3), 0.7), centroid=(0.02, -0.01, 0.03))
    b = RigidBodyEP("b", 1.0, np.diag([0.1, 0.3, 0.2]), position=(1, 0.2, 0), angular_velocity=(0.1, 0.4, -0.3),
                    orientation=axis_angle_to_matrix(rng.standard_normal(3), 1.3))
    forces = [SpringDamper(a, (0.1, 0.2, -0.3), b, (0.3, 0, 0.1), 50.0, 0.5, damping=2.0, actuator=actuator),
              SpringDamper(None, (1, 2, 3), a, (0, 0.1, 0), 20.0, damping=1.0),
              RotationalSpringDamper(a, b, 7.0, rest_angle=0.2, damping=0.3, axis=(0.3, 0.4, 0.5)),
              RotationalSpringDamper(None, b, 3.0, damping=0.1, axis=(0, 0, 1)),
              Bushing(a, b, [10, 20, 30, 1, 2, 3], [0.1, 0.2, 0.3, 0.01, 0.02, 0.03], at=(0.5, 0.1, 0))]
    return System([a, b], gravity=(0, 0, -9.81), forces=forces)


def planar():
    """Two planar bodies and a point mass, all 2D kinds between them and the ground."""
    p = RigidBody2D("p", 1.0, 0.1, position=(0.3, 0.1), angle=0.4, angular_velocity=0.5)
    r = RigidBody2D("r", 2.0, 0.2, angle=-0.2, position=(1, 1), velocity=(0.1, -0.2))
    m = PointMass("m", 3.0, position=(0.5, -1.0))
    forces = [SpringDamper(p, (0.1, 0.2), r, (0.3, -0.1), 40.0, 0.7, damping=1.5),
              SpringDamper(None, (0, 0), m, (0.1, 0), 30.0, damping=0.5), SpringDamper(m, (0, 0), r, (0.2, 0.1), 10.0),
              RotationalSpringDamper(p, r, 5.0, rest_angle=0.1, damping=0.2),
              RotationalSpringDamper(None, p, 2.0, damping=0.3),
              Bushing(p, r, [10, 20, 1], [0.1, 0.2, 0.01]), Bushing(m, None, [5, 6, 7], 0.1)]
    return System([p, r, m], [PlanarRevolute(None, p, at=(0.0, 0.0))], gravity=(0, -9.81), forces=forces)


@pytest.mark.parametrize("build", [lambda: spatial(actuator=np.sin), planar], ids=["3D", "2D"])
def test_the_kernels_forces_and_stiffness_equal_the_numpy_paths(build):
    """Q (with the elements' G^T F), K_el (their k G^T G) and M (point masses) at three random states:
    measured 3.6e-15 of |Q| 38, 5.3e-15 of |K| 36."""
    s = build()
    cs = CompiledSystem(s)
    rng = np.random.default_rng(1)
    for t in (0.0, 0.3, 1.1):
        q = s.initial_coordinates() + 0.05 * rng.standard_normal(s.n_q)
        v = rng.standard_normal(s.n_q)
        got = cs.evaluate(t, q, v)
        Q, K = s.forces(t, q, v), s.elastic_stiffness(t, q, v)
        np.testing.assert_allclose(got["Q"], Q, atol=1e-12 * np.abs(Q).max())
        np.testing.assert_allclose(got["K"], K, atol=1e-12 * np.abs(K).max())
        np.testing.assert_allclose(got["M"], s.mass_matrix(q), atol=1e-14)


def runs(build, **options):
    out = []
    for kernel in ("compiled", "numpy"):
        res = fm.run(build(), method="index3-alpha", kernel=kernel, store=False, **options)
        assert res.status == "finished" and res.metadata["kernel"] == kernel, res.message
        out.append(res)
    return out


def test_the_quarter_car_runs_on_the_compiled_step_as_on_numpy():
    """cases/quarter_car.py's two point masses and two springs on the compiled step: the same states as
    the numpy path (measured: identical bits) and still the closed form to second order."""
    p = dict(quarter_car.DEFAULTS)
    fast, slow = runs(lambda: quarter_car.build(p), h=1e-3, t_end=0.3, dt_out=0.01)
    np.testing.assert_allclose(fast.q, slow.q, atol=1e-12)
    np.testing.assert_allclose(fast.v, slow.v, atol=1e-10)
    y_s = fast.q[:, 3] - quarter_car.equilibrium(p)[1]
    assert np.abs(y_s - quarter_car.closed_form(fast.t, p)[:, 0]).max() < 1e-5


def test_tumbling_bodies_on_springs_run_on_the_compiled_step_as_on_numpy():
    """Every spatial kind with an actuator of time: the same states on both paths to round-off (measured
    1.1e-13 in q, 1.4e-12 in v, 3e-13 J) with the same refactoring policy ("auto" keeps the compiled
    step's LU across steps, the numpy path's not: then they agree to the Newton tolerance, 2.7e-11 in q)."""
    fast, slow = runs(lambda: spatial(actuator=lambda t: 2.0 * np.sin(3.0 * t)), h=1e-3, t_end=0.1, dt_out=0.05,
                      refactor="step")
    np.testing.assert_allclose(fast.q, slow.q, atol=1e-11)
    np.testing.assert_allclose(fast.v, slow.v, atol=1e-10)
    np.testing.assert_allclose(fast.energies["total"], slow.energies["total"], rtol=1e-11)


def test_what_the_kernel_does_not_evaluate_is_refused_by_name():
    a = RigidBodyEP("a", 1.0, np.eye(3) * 0.1)
    b = RigidBodyEP("b", 1.0, np.eye(3) * 0.1, position=(1.0, 0, 0))
    law = ForceLaw(a, (0, 0, 0), b, (0, 0, 0), lambda t, d, dd: -d)
    with pytest.raises(Unsupported, match="force element 'ForceLaw\\(a, b\\)' is a ForceLaw: a user's force law is a "
                                          "Python callable"):
        CompiledSystem(System([a, b], forces=[law]))
    loaded = PointMass("m", 1.0, position=(0, 0, 0), loads=[lambda body, t, q, v: np.zeros(3)])
    with pytest.raises(Unsupported, match="body 'm' is a PointMass with loads"):
        CompiledSystem(System([loaded]))
    bar = RigidBody2D("bar", 1.0, 0.1)
    m = PointMass("p", 1.0, position=(0, 0))
    with pytest.raises(Unsupported, match="a RotationalSpringDamper on a PointMass"):
        CompiledSystem(System([m, bar], forces=[RotationalSpringDamper(m, bar, 1.0)]))


def test_a_spring_on_a_flexible_bodys_node_is_refused_by_name():
    """A body's marker object (a mesh node) is evaluated by the body on the numpy path only."""
    from test_forces import flexible_and_rigid
    with pytest.raises(Unsupported, match="force element 'SpringDamper\\(beam, hub\\)' joins body 'beam', a "
                                          "FlexibleBody"):
        CompiledSystem(flexible_and_rigid())


def stops_and_friction():
    """Joint stops and friction on every coordinate kind: a 3D revolute and prismatic between rigid bodies,
    a planar revolute and prismatic, each pressed into its stop at the states of the test."""
    from flexmbs.constraints import JointFriction, Prismatic, Revolute
    from flexmbs.constraints.planar import PlanarPrismatic
    rng = np.random.default_rng(3)
    a = RigidBodyEP("a", 1.5, np.diag([0.2, 0.3, 0.4]), orientation=axis_angle_to_matrix(rng.standard_normal(3), 0.7))
    b = RigidBodyEP("b", 1.0, np.diag([0.1, 0.3, 0.2]), position=(1, 0.2, 0))
    hinge, slider = Revolute(None, a, at=(0, 0, 0), axis=(0.3, 0.4, 0.5)), Prismatic(a, b, at=(0.5, 0, 0), axis=(1, 1, 0))
    spatial_forces = [JointLimit(hinge, -0.01, 0.01, stiffness=1e4, restitution=0.5, exponent=1.5),
                      JointFriction(hinge, 0.3, creep_speed=1e-2),
                      JointLimit(slider, -0.02, 0.02, stiffness=1e5, restitution=0.3), JointFriction(slider, 2.0)]
    p = RigidBody2D("p", 1.0, 0.1, position=(0.3, 0.1), angle=0.4)
    r = RigidBody2D("r", 2.0, 0.2, angle=0.4, position=(1, 1))
    pin, guide = PlanarRevolute(None, p, at=(0.0, 0.0)), PlanarPrismatic(p, r, axis=(0.6, 0.8), at=(1.0, 1.0))
    planar_forces = [JointLimit(pin, upper=0.01, stiffness=1e3, restitution=0.7), JointFriction(pin, 0.2),
                     JointLimit(guide, lower=-0.01, stiffness=1e4), JointFriction(guide, 0.5, creep_speed=1e-3)]
    return (System([a, b], [hinge, slider], gravity=(0, 0, -9.81), forces=spatial_forces),
            System([p, r], [pin, guide], gravity=(0, -9.81), forces=planar_forces))


def test_the_kernels_joint_stops_and_friction_equal_the_numpy_paths():
    """Q and K_el (the stops' -dF/dx G^T G) at states that press every stop in, unloading and loading."""
    for s in stops_and_friction():
        cs = CompiledSystem(s)
        rng = np.random.default_rng(4)
        pressed = 0
        for t in range(6):
            q = s.initial_coordinates() + 0.05 * rng.standard_normal(s.n_q)
            v = rng.standard_normal(s.n_q)
            got = cs.evaluate(0.1 * t, q, v)
            Q, K = s.forces(0.1 * t, q, v), s.elastic_stiffness(0.1 * t, q, v)
            np.testing.assert_allclose(got["Q"], Q, atol=1e-12 * np.abs(Q).max())
            np.testing.assert_allclose(got["K"], K, atol=1e-12 * max(np.abs(K).max(), 1.0))
            pressed += np.abs(K).max() > 0
        assert pressed >= 3                                       # the stops were in contact


def test_a_pendulum_on_its_stop_runs_on_the_compiled_step_as_on_numpy():
    """tests/test_joints_limits.py's pendulum into its stop (index3-alpha, h = 1e-4) and one with joint
    friction: the same states on both paths to round-off with the same refactorization."""
    from test_joints_limits import pendulum
    from flexmbs.constraints import JointFriction
    stop = lambda: pendulum(lambda pin: [JointLimit(pin, lower=-0.05, stiffness=3e6, restitution=0.3, exponent=1.5)],
                            omega0=-3.0)
    fast, slow = runs(stop, h=1e-4, t_end=0.03, dt_out=1e-3, refactor="step")
    np.testing.assert_allclose(fast.q, slow.q, atol=1e-11)
    assert fast.q[:, 2].min() < -0.05 < fast.q[-1, 2]              # it hit the stop and came off it
    rubbing = lambda: pendulum(lambda pin: [JointFriction(pin, 1.0, creep_speed=1e-2)], theta0=0.5 - np.pi / 2)
    fast, slow = runs(rubbing, h=1e-3, t_end=0.3, dt_out=0.05, refactor="step")
    np.testing.assert_allclose(fast.q, slow.q, atol=1e-11)
