"""Natural-coordinate rigid bodies on the compiled step (issue 22, item 4): csrc ``natural_*`` against the numpy
path (flexmbs/bodies/natural.py, the reference).

- M, Q, C, C_q, dQ_v/dv, gamma and C_t from the kernel equal the System's to round-off at random states off
  the constraints, on Pappalardo and Guida's triple pendulum in natural coordinates and on a system mixing
  natural and Euler-parameter bodies, a revolute and a prismatic joint (its dot1, dot2 rows on natural
  markers), gravity along all three axes, an offset centroid, a full inertia and every load the kernel
  applies to a natural body (a point force of t, a body-fixed one, a global and a body-fixed torque, a damped
  spring to the ground), and on one with every force element on natural bodies (K_el too); with
  ``formulation="gibbs-appell"`` the kernel's M_GA and Q_a - g are the numpy ones;
- index3-alpha (and index3-alpha-adaptive) on the natural triple pendulum, on the mixed system and on one with every force element on
  natural bodies (spring-dampers, a rotational spring-damper with an actuator, a bushing, a joint stop, joint
  friction: their sides SIDE natural) takes the numpy steps, and so does the case's default run
  (Udwadia-Kalaba, coordinate partitioning, AB4) with ``kernel`` "compiled" against "numpy";
- a controller's sensors on natural bodies are evaluated by the kernel and give the Python sensors' values;
- what the kernel still refuses on a natural body (a user's load callable) is named
  (tests/test_failures_natural_kernel.py).
Skipped when the kernel is not installed.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import RigidBodyEP, RigidBodyNatural
from flexmbs.bodies.loads import point_load, spring_to_ground, torque_load
from flexmbs.compiled import CompiledSystem, kernel_status
from flexmbs.constraints import Prismatic, Revolute, Spherical
from flexmbs.constraints.limits import JointFriction, JointLimit
from flexmbs.forces import Bushing, RotationalSpringDamper, SpringDamper
from flexmbs.formulations.gibbs_appell_system import GibbsAppellSystem
from flexmbs.formulations.stabilization import make_stabilization
from flexmbs.system import System

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import triple_pendulum  # noqa: E402
from kernel_reference import numpy_system_terms  # noqa: E402

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason=f"the kernel is {kernel_status()}")


def mixed():
    """A natural body (full inertia, offset centroid, every kernel load) on a revolute joint to the ground, an
    Euler-parameter body on a spherical joint to it and a second natural body on a prismatic joint to that one,
    under gravity along all three axes."""
    J = np.array([[0.3, 0.02, -0.01], [0.02, 0.4, 0.03], [-0.01, 0.03, 0.5]])
    c, s = np.cos(0.4), np.sin(0.4)
    turned = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    loads = [point_load([0.1, 0.2, -0.1], lambda t: np.array([np.sin(t), 2.0, -1.0 + t])),
             point_load([0.0, 0.3, 0.1], [0.5, 0.0, 0.2], local=True),
             torque_load(lambda t: np.array([0.1, -0.2, 1.0 + t])),
             torque_load([0.3, 0.1, -0.4], local=True),
             spring_to_ground([0.2, 0.0, 0.1], [1.3, 0.4, 0.1], 50.0, 0.2, damping=0.7)]
    a = RigidBodyNatural("a", 2.0, J, centroid=(0.1, -0.2, 0.3), position=(0.2, 0.0, 0.1), orientation=turned,
                         angular_velocity=(0.0, 0.0, 2.0), loads=loads)
    b = RigidBodyEP("b", 1.5, [0.02, 0.1, 0.1], position=(1.2, 0.3, 0.1))
    d = RigidBodyNatural("d", 0.7, [0.01, 0.05, 0.05], position=(2.0, 0.3, 0.1), velocity=(0.3, 0.0, 0.0))
    joints = [Revolute(None, a, at=(0.2, 0.0, 0.1), axis=(0.0, 0.0, 1.0), name="pin"),
              Spherical(a, b, at=(0.8, 0.3, 0.1), name="ball"),
              Prismatic(b, d, at=(2.0, 0.3, 0.1), axis=(1.0, 0.0, 0.0), name="slide")]
    return System([a, b, d], joints, gravity=(0.5, -9.81, -1.0))


def forced():
    """Force elements with natural-body sides (SIDE natural): two natural bars on revolute joints (one to the
    ground, one to the first), a prismatic block on the second; a spring-damper from the ground and one to an
    Euler-parameter body, a rotational spring-damper with an actuator between the bars, a bushing to the ground,
    a stop on the first revolute and friction on the prismatic joint."""
    z, x = (0.0, 0.0, 1.0), (1.0, 0.0, 0.0)
    a = RigidBodyNatural("a", 2.0, [0.01, 0.7, 0.7], position=(1.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 1.0))
    b = RigidBodyNatural("b", 1.0, [0.01, 0.3, 0.3], centroid=(0.1, 0.0, 0.0), position=(2.5, 0.0, 0.0))
    c = RigidBodyEP("c", 0.5, [0.01, 0.01, 0.01], position=(3.0, 0.0, 0.0))
    pin, hinge = Revolute(None, a, at=(0.0, 0.0, 0.0), axis=z, name="pin"), Revolute(a, b, at=(2.0, 0.0, 0.0), axis=z,
                                                                                     name="hinge")
    slide = Prismatic(b, c, at=(3.0, 0.0, 0.0), axis=x, name="slide")
    forces = [SpringDamper(None, (0.5, 1.0, 0.3), a, np.array([0.5, 0.1, 0.0]), 30.0, 0.2, damping=0.4, name="s1"),
              SpringDamper(a, np.array([0.2, 0.0, 0.1]), c, np.array([0.0, 0.05, 0.0]), 20.0, damping=0.3, name="s2"),
              RotationalSpringDamper(a, b, 5.0, rest_angle=0.1, damping=0.2, actuator=lambda t: 0.3 + t, axis=z,
                                     name="rot"),
              Bushing(b, None, [10.0, 20.0, 30.0, 1.0, 2.0, 3.0], [0.1, 0.2, 0.3, 0.01, 0.02, 0.03], name="bush"),
              JointLimit(pin, -0.2, 0.05, stiffness=1e3, restitution=0.5, name="stop"),
              JointFriction(slide, 0.4, creep_speed=1e-2, name="rub")]
    return System([a, b, c], [pin, hinge, slide], gravity=(0.0, -9.81, 0.0), forces=forces)


SYSTEMS = {"triple pendulum": lambda: triple_pendulum.build("natural"), "mixed": mixed, "force elements": forced}


def random_states(system, seed: int, n: int = 3):
    """n states near the initial one: q off the constraints by 5e-2 (|a| != 1, a.b != 0), v of size 2."""
    rng = np.random.default_rng(seed)
    for t in np.linspace(0.0, 0.4, n):
        yield (t, system.initial_coordinates() + 5e-2 * rng.standard_normal(system.n_q),
               system.initial_velocities() + 2.0 * rng.standard_normal(system.n_q))


def assert_close(got, ref, what):
    """Equal to 1e-13 of the reference's largest entry (or of 1)."""
    scale = max(np.abs(ref).max(), 1.0)
    assert np.abs(got - ref).max() <= 1e-13 * scale, (what, np.abs(got - ref).max(), scale)


@needs_kernel
@pytest.mark.parametrize("name", list(SYSTEMS))
def test_terms_equal_the_numpy_path(name):
    """M, Q, C, C_q, dQ_v/dv (zero: M constant), gamma and C_t (zero: no drivers) at three random states;
    the rigidity rows' C and gamma and the loads are far above the tolerance (leaving one out fails)."""
    system = SYSTEMS[name]()
    compiled = CompiledSystem(system)
    for t, q, v in random_states(system, 5):
        got = compiled.evaluate(t, q, v)
        ref = numpy_system_terms(system, t, q, v)       # K zeros where there are no force elements
        for key, value in ref.items():
            assert_close(got[key], value, key)
        gamma, Ct = compiled.constraint_rates(t, q, v)
        assert_close(gamma, system.gamma(t, q, v), "gamma")
        assert_close(Ct, system.time_derivative(t, q), "C_t")
        rows = system.rows(system.constraint(f"{system.bodies[0].name}.rigidity"))
        assert np.abs(ref["C"][rows]).min() > 1e-6 and np.abs(gamma[rows]).min() > 1e-6
        if name == "mixed":
            a = system.bodies[0]
            sl = system.slice(a)
            assert np.abs(a.applied(t, q[sl], v[sl])).min() > 1e-3
        if name == "force elements":
            assert np.abs(system.element_forces(t, q, v)).max() > 1.0 and np.abs(ref["K"]).max() > 1.0


@needs_kernel
@pytest.mark.parametrize("name", list(SYSTEMS))
def test_gibbs_appell_terms_equal_the_numpy_path(name):
    """With formulation="gibbs-appell": M_GA = M and g = 0 for the natural bodies (their points are linear in
    q), the Euler-parameter body's from csrc ``rigid_ga``: the kernel's M and Q equal the numpy M_GA and
    Q_a - g to 1e-13."""
    system = SYSTEMS[name]()
    ga = GibbsAppellSystem(system)
    compiled = CompiledSystem(system, formulation="gibbs-appell")
    for t, q, v in random_states(system, 7):
        got = compiled.evaluate(t, q, v)
        M, g = ga.body_terms.inertia_terms(q, v)
        assert_close(got["M"], M, "M_GA")
        assert_close(got["Q"], ga.body_terms.active_forces(t, q, v) - g, "Q_a - g")


def _same_run(a, b, tol):
    """Both finished, on the path asked for, with the same steps, q equal to ``tol`` (absolute: |q| ~ 1-8)."""
    assert a.success and b.success, (a.message, b.message)
    assert (a.metadata["kernel"], b.metadata["kernel"]) == ("numpy", "compiled")
    assert a.stats["n_steps"] == b.stats["n_steps"]
    assert np.abs(a.q - b.q).max() <= tol, np.abs(a.q - b.q).max()


@needs_kernel
def test_index3_alpha_takes_the_numpy_steps():
    """The natural triple pendulum by index3-alpha, 0.2 s at h = 1e-3 s: q to 1e-10 (the same Newton iterations
    on the same equations; measured 2.6e-12)."""
    system = triple_pendulum.build("natural")
    runs = [fm.run(system, method="index3-alpha", h=1e-3, t_end=0.2, dt_out=0.01, store=False, kernel=kernel)
            for kernel in ("numpy", "compiled")]
    _same_run(*runs, 1e-10)
    assert np.abs(runs[0].q[-1] - runs[0].q[0]).max() > 0.1            # it moved


@needs_kernel
@pytest.mark.filterwarnings("ignore:initial state at t = 0 assembled")
@pytest.mark.parametrize("name, t_end", [("mixed", 0.2), ("force elements", 0.1)])
def test_mixed_systems_take_the_numpy_steps(name, t_end):
    """The mixed system (natural and Euler-parameter bodies, revolute, spherical and prismatic joints, the loads)
    and the force elements' system by index3-alpha at h = 1e-3 s from their assembled initial states: q to 1e-10
    (measured 2.5e-13 and, with the stiff stop, 3.7e-11 over 0.2 s)."""
    system = SYSTEMS[name]()
    runs = [fm.run(system, method="index3-alpha", h=1e-3, t_end=t_end, dt_out=0.01, store=False, kernel=kernel,
                   assemble=True) for kernel in ("numpy", "compiled")]
    _same_run(*runs, 1e-10)
    assert np.abs(runs[0].q[-1] - runs[0].q[0]).max() > 1e-2


@needs_kernel
def test_index3_alpha_adaptive_takes_the_numpy_steps():
    """index3-alpha-adaptive on the natural triple pendulum, 0.3 s at rtol 1e-6: the kernel's step-size control
    takes gamma of the rigidity rows and of the joints on natural markers from csrc ``constraint_rates``; the
    same trial steps (36 and 4 rejections on both paths), t within 1e-12 of t_end, q within 1e-10 (measured
    2.1e-14 and 1.4e-13)."""
    from flexmbs.integrators import ConstrainedProblem, simulate
    system = triple_pendulum.build("natural")
    problem = ConstrainedProblem(system)
    x0 = problem.state0(system.initial_coordinates(), system.initial_velocities())
    a, b = (simulate(problem, (0.0, 0.3), x0, method="index3-alpha-adaptive", kernel=kernel, refactor="step",
                     rtol=1e-6, atol=1e-8) for kernel in ("numpy", "compiled"))
    assert a.status == b.status == "finished" and (a.kernel, b.kernel) == ("numpy", "compiled")
    assert (a.n_steps, a.n_rejected, a.n_rhs) == (b.n_steps, b.n_rejected, b.n_rhs) and a.n_rejected > 0
    assert np.abs(a.t - b.t).max() <= 1e-12 * a.t[-1]
    assert np.abs(a.x[:, :system.n_q] - b.x[:, :system.n_q]).max() <= 1e-10


@needs_kernel
def test_case_default_takes_the_numpy_steps():
    """The case's default (Udwadia-Kalaba, coordinate partitioning, AB4, h = 1e-3 s) for 0.03 s with kernel
    "compiled" and "numpy": q to 1e-10 (measured 4.4e-16)."""
    system = triple_pendulum.build("natural")
    runs = [fm.run(system, formulation="udwadia-kalaba", method="AB4", h=1e-3, t_end=0.03, dt_out=0.01, store=False,
                   formulation_options=dict(stabilization=make_stabilization("coordinate-partitioning"),
                                            kernel=kernel)) for kernel in ("numpy", "compiled")]
    _same_run(*runs, 1e-10)
    assert np.abs(runs[0].q[-1] - runs[0].q[0]).max() > 1e-4


def natural_double_pendulum(loads):
    """Two natural-coordinate rods (1 kg, 1 m) in a chain about y, the lower tilted 0.4 rad and carrying
    ``loads`` (tests/test_control_kernel.py's double pendulum in natural coordinates); (System, lower joint)."""
    c, s = np.cos(0.4), np.sin(0.4)
    J, axis = np.diag([1 / 12, 1 / 12, 1e-4]), (0.0, 1.0, 0.0)
    upper = RigidBodyNatural("upper", 1.0, J, position=(0.0, 0.0, -0.5))
    lower = RigidBodyNatural("lower", 1.0, J, position=(0.5 * s, 0.0, -1.0 - 0.5 * c),
                             orientation=np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]), loads=loads)
    mid = Revolute(upper, lower, at=(0.0, 0.0, -1.0), axis=axis, name="mid")
    return System([upper, lower], [Revolute(None, upper, at=(0.0, 0.0, 0.0), axis=axis, name="top"), mid],
                  gravity=(0.0, 0.0, -9.81)), mid


@needs_kernel
def test_kernel_sensors_of_natural_bodies_give_the_python_sensors_values():
    """A PD controller at 1 kHz on the natural double pendulum: the kernel evaluates its sensors in C (csrc
    ``natural_frame_at``; Python reads them at t0 only, as for Euler parameters), and each value it sensed equals the Python sensor's `read` of
    the state written at that sample (round-off, as tests/test_control_kernel.py for Euler parameters)."""
    from flexmbs import control
    tau = control.Output("torque")
    system, mid = natural_double_pendulum([tau.torque((0.0, 1.0, 0.0))])
    lower = system.bodies[1]
    sense = {"angle": control.joint_angle(mid), "rate": control.joint_rate(mid),
             "r": control.body_position(lower, (0.1, 0.0, -0.5)), "v": control.body_velocity(lower, (0.1, 0.0, -0.5)),
             "w": control.body_angular_velocity(lower)}
    c = control.Controller(1e-3, sense, tau, lambda t, s: -2.0 * s["rate"] - 5.0 * (s["angle"] - 0.2))
    read_in_python = []
    for name, s in sense.items():                   # count the Python reads during the run
        s.read = (lambda read, name: lambda state: read_in_python.append(name) or read(state))(s.read, name)
    res = fm.run(system, method="index3-alpha", h=2.5e-4, t_end=0.05, dt_out=1e-3, controllers=[c], store=False,
                 kernel="compiled")
    assert res.status == "finished" and res.metadata["kernel"] == "compiled"
    assert read_in_python == list(sense)            # the first sample, at t0, before the kernel's call, only
    rec = c.record
    assert len(rec["t"]) == 50
    for s in sense.values():
        s.reset()
    for k in range(50):
        state = control.State(system, res.q[k], res.v[k])
        for name, s in sense.items():
            np.testing.assert_allclose(rec["sensed"][name][k], s.read(state), rtol=0, atol=1e-13,
                                       err_msg=f"sensor {name} at sample {k}")
    assert np.abs(rec["sensed"]["rate"]).max() > 0.1 and np.abs(rec["sensed"]["w"]).max() > 0.1


def user_loaded():
    """A natural-coordinate pendulum whose load is a user's own callable, which the compiled kernel does not
    evaluate (the system the refusals of kernel="compiled" are tested on: tests/test_compiled_index1.py,
    test_compiled_radau.py, test_failures_index1_kernel.py, test_failures_gakernel.py)."""
    def drag(body, t, q, v):
        return -0.1 * v
    bar = RigidBodyNatural("bar1", 2.0, [0.053, 2.693, 2.693], position=(2.0, 0.0, 0.0), loads=[drag])
    return System([bar], [Spherical(None, bar, at=(0.0, 0.0, 0.0), name="A")], gravity=(0.0, 0.0, -9.81))
