"""Failures named by their cause (issue 20, item 5).

Each row is a failing run or a bad input and the message it now prints: a non-finite or raising
driver law or load is named with the time where it enters (on the numpy and the compiled path of
index3-alpha alike, with the same outputs up to the last completed step); the failure diagnosis
tells over-constrained systems, an explicit method's instability and Euler parameters off the unit
norm from one another.
"""
import numpy as np
import pytest

from flexmbs.bodies import RigidBodyEP
from flexmbs.bodies.loads import torque_load
from flexmbs.compiled import kernel_status
from flexmbs.constraints import AngleDriver, Revolute
from flexmbs.integrators import ConstrainedProblem, simulate
from flexmbs.system import System

Z = np.array([0.0, 0.0, 1.0])
KERNELS = ["numpy", pytest.param("compiled", marks=pytest.mark.skipif(not kernel_status().installed,
                                                                      reason=f"{kernel_status()}"))]


def driven_hub(law, loads=()):
    """A hub on a revolute joint to the ground, turned by an angle driver 'drive' (laws of rate 3 rad/s at
    t = 0, the hub's own: a consistent start), under gravity."""
    hub = RigidBodyEP("hub", 2.0, [0.1, 0.2, 0.3], centroid=[0.1, 0.0, 0.0], angular_velocity=[0.0, 0.0, 3.0],
                      loads=list(loads))
    return System([hub], [Revolute(None, hub, at=np.zeros(3), axis=Z, name="pivot"),
                          AngleDriver(None, hub, Z, law, name="drive")], gravity=[0.0, -9.81, 0.0])


def run_index3(system, kernel, t_end=0.1, h=1e-3, q0=None, **options):
    problem = ConstrainedProblem(system)
    q0 = system.initial_coordinates() if q0 is None else q0
    x0 = problem.state0(q0, system.initial_velocities())
    return simulate(problem, (0.0, t_end), x0, method="index3-alpha", h=h, kernel=kernel, **options)


def spin(t):
    return (3.0 * t, 3.0, 0.0)


def nan_after(t):
    return (np.nan if t > 0.05 else 3.0 * t, 3.0, 0.0)


def raise_after(t):
    if t > 0.05:
        raise RuntimeError("the table ends at t = 0.05")
    return spin(t)


def torque(t):
    return np.array([0.0, 0.0, np.nan if t > 0.05 else 1.0])


def raising_torque(t):
    if t > 0.05:
        raise KeyError("t")
    return np.array([0.0, 0.0, 1.0])


LAWS = [  # (the run, the message it now prints)
    (lambda k: run_index3(driven_hub(nan_after), k),
     "The step from t = 0.05 failed: driver 'drive': its law gave NaN or inf at t = 0.051 "
     "((f, f', f'') = (nan, 3, 0)); a law or load must be finite at every time of the run"),
    (lambda k: run_index3(driven_hub(raise_after), k),
     "The step from t = 0.05 failed: driver 'drive': its law raised RuntimeError at t = 0.051: "
     "the table ends at t = 0.05"),
    (lambda k: run_index3(driven_hub(spin, [torque_load(torque, local=True)]), k),
     "The step from t = 0.05 failed: body 'hub': load 0 gave NaN or inf at t = 0.051; a law or load "
     "must be finite at every time of the run"),
    (lambda k: run_index3(driven_hub(spin, [torque_load(raising_torque)]), k),
     "The step from t = 0.05 failed: body 'hub': load 0 raised KeyError at t = 0.051: 't'"),
]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("run, message", LAWS)
def test_a_failing_law_or_load_is_named_with_its_time_and_the_outputs_are_kept(run, message, kernel):
    """Both paths stop at the step to t = 0.051 with the same message and the outputs up to t = 0.05,
    those of a run whose law does not fail (the first 51 step points)."""
    sol = run(kernel)
    assert sol.kernel == kernel
    assert (sol.status, sol.message) == ("failed", message)
    assert len(sol.t) == 51 and sol.t[-1] == pytest.approx(0.05)
    clean = run_index3(driven_hub(spin), "numpy", t_end=0.05)
    assert np.abs(sol.x[:, :7] - clean.x[:, :7]).max() <= 1e-9     # the same steps, to Newton's tolerance


def test_a_user_load_giving_nan_is_named_on_every_method():
    """A user's load callable (numpy path only) and an explicit method: the same cause, not "reduce h"."""
    from flexmbs.formulations.index1 import Index1

    def push(body, t, q, v):
        return np.full(7, np.nan) if t > 0.05 else np.zeros(7)

    system = driven_hub(spin, [push])
    formulation = Index1(system)
    sol = simulate(formulation, (0.0, 0.1), formulation.state0(), method="RK45")
    assert sol.status == "failed" and sol.t[-1] <= 0.05 + 1e-12
    assert "body 'hub': load 0 gave NaN or inf at t = " in sol.message and "reduce" not in sol.message.lower()


def test_a_law_failing_at_the_start_is_bad_input():
    """At t0 there is no output to keep: a ValueError naming the driver."""
    with pytest.raises(ValueError, match=r"driver 'drive': its law gave NaN or inf at t = 0 "):
        run_index3(driven_hub(lambda t: (np.nan, 0.0, 0.0)), "numpy")


@pytest.mark.parametrize("method, message", [
    ("midpoint", "The step from t = 0.05 failed: `loads[0].f` gave NaN or inf at t = 0.0505 (f = nan); a law or "
                 "load must be finite at every time of the run"),
    ("DOP853", "`loads[0].f` gave NaN or inf at t = "),                # just after 0.05: the steps adapt
])
def test_a_nodal_load_factor_giving_nan_is_named(method, message):
    """flexmbs.run(model): the midpoint method's block of load factors and the right-hand side of the
    other methods name the load, not the step size; the outputs before it are kept."""
    import flexmbs
    from flexmbs import BeamEB2D, Material, Model, NodalLoad, generate
    beam = BeamEB2D(Material(E=7e8, rho=2700.0), area=1e-4, I=1e-9)          # soft: few steps of DOP853
    model = Model(generate.line(4, 0.5), beam, fixed=[("start", "all")],
                  loads=[NodalLoad("end", "v", 1.0, f=lambda t: np.nan if t > 0.05 else 1.0)])
    res = flexmbs.run(model, method=method, h=1e-3, t_end=0.1, compute_energies=False)
    assert res.status == "failed" and message in res.message and 0.04 <= res.t[-1] <= 0.05


EP_NORM_2 = ("body 'hub': its Euler parameters p = q[3:7] = [2.0, 0.0, 0.0, 0.0] have norm |p| = 2; they must "
             "have unit norm (within 1e-06): give p / |p| (and p' with p.p' = 0), e.g. from "
             "System.initial_coordinates()")


def hub_state_with_norm_two():
    """x0 = (q0, v0) of `driven_hub` with its Euler parameters doubled (|p| = 2)."""
    system = driven_hub(spin)
    q0 = system.initial_coordinates()
    q0[3:7] *= 2.0
    return system, np.concatenate([q0, system.initial_velocities()])


def test_the_system_names_euler_parameters_off_the_unit_norm():
    system, x0 = hub_state_with_norm_two()
    with pytest.raises(ValueError) as err:
        system.check_start(x0[:7])
    assert str(err.value) == EP_NORM_2
    system.check_start(system.initial_coordinates())                  # |p| = 1 passes


@pytest.mark.parametrize("kernel", KERNELS)
def test_euler_parameters_of_norm_two_are_refused_at_the_start(kernel):
    """Before: a Newton failure at t = 0.002 that never mentioned the norm (index3-alpha).  (The
    pattern also admits a general consistency check of the start naming the body's norm constraint.)"""
    system, x0 = hub_state_with_norm_two()
    with pytest.raises(ValueError, match=r"(?i)'hub.*euler"):
        simulate(ConstrainedProblem(system), (0.0, 0.1), x0, method="index3-alpha", h=1e-3, kernel=kernel)


def test_euler_parameters_of_norm_two_are_refused_by_the_index1_form():
    """Before: DOP853 finished with |p| = 2 (a wrong rotation, silently); state0 refuses it too, by the
    norm (System.initial_state checks the bodies' starts before the constraints), and
    assembling on request (state0(..., assemble=True)) brings p onto the norm, as documented."""
    from flexmbs.formulations.index1 import Index1
    system, x0 = hub_state_with_norm_two()
    formulation = Index1(system)
    with pytest.raises(ValueError, match=r"(?i)'hub.*euler"):
        simulate(formulation, (0.0, 0.01), x0, method="DOP853")
    q0 = x0[:7]
    with pytest.raises(ValueError, match=r"body 'hub': its Euler parameters .* have norm \|p\| = 2; they must have "
                                         r"unit norm"):
        formulation.state0(q0)
    x0 = formulation.state0(q0, assemble=True)
    assert np.linalg.norm(x0[3:7]) == pytest.approx(1.0, abs=1e-9)


def bar_tied_too_far():
    """A bar pinned at one end (x = -0.5) whose other end (x = 0.5) is tied to the ground point x = 0.8
    by a distance 0.1: the tie's row depends on the pin's and no motion can close it."""
    from flexmbs.constraints import Distance, Spherical
    bar = RigidBodyEP("bar", 1.0, [0.01, 0.1, 0.1])
    return System([bar], [Spherical(None, bar, at=[-0.5, 0.0, 0.0], name="pin"),
                          Distance(None, bar, at_i=[0.8, 0.0, 0.0], s_j=[0.5, 0.0, 0.0], length=0.1, name="tie")],
                  gravity=[0.0, -9.81, 0.0])


OVER_CONSTRAINED = ("the constraints cannot all hold (over-constrained): at t = 0 their residual |C|_inf = 0.4 cannot "
                    "be reduced, as C_q has rank 4 < 5 rows (dependent: tie) and 0.0632 of C is outside its range "
                    "(in bar.euler_parameter_norm, pin, tie). Check the points, axes, lengths and laws of these "
                    "constraints, or remove the one that over-constrains the system.")


def bar_pulled_beyond_reach():
    """A bar along x pinned at its end x = -0.5, whose centre a driver 'pull' moves to x = t^2 / 2: at
    t = 0 the start is consistent (C = 0, C_q v + C_t = 0) with the driver's row dependent on the
    pin's; after it the centre would have to leave the pin's reach."""
    from flexmbs.constraints import CoordinateDriver, Spherical
    bar = RigidBodyEP("bar", 1.0, [0.01, 0.1, 0.1])
    return System([bar], [Spherical(None, bar, at=[-0.5, 0.0, 0.0], name="pin"),
                          CoordinateDriver(bar, 0, lambda t: (0.5 * t * t, t, 1.0), name="pull")],
                  gravity=[0.0, -9.81, 0.0])


@pytest.mark.parametrize("kernel", KERNELS)
def test_constraints_driven_beyond_reach_are_named_over_constrained(kernel):
    """Before: "Reduce `h`, raise `newton_max_iter`, or ... set `regularization`", none of which helps."""
    sol = run_index3(bar_pulled_beyond_reach(), kernel, t_end=0.05)
    assert sol.status == "failed" and len(sol.t) == 1
    assert sol.message == (
        "Newton iterations of index3-alpha did not converge at t = 0 (last correction 0.00192 after 12 iterations "
        "with a fresh iteration matrix): the constraints cannot all hold (over-constrained): at t = 0.001 their "
        "residual |C|_inf = 5e-07 cannot be reduced, as C_q has rank 4 < 5 rows (dependent: pull) and 2.22e-07 of "
        "C is outside its range (in bar.euler_parameter_norm, pin, pull). Check the points, axes, lengths and laws "
        "of these constraints, or remove the one that over-constrains the system.")


@pytest.mark.parametrize("kernel", KERNELS)
def test_an_inconsistent_over_constrained_start_is_not_called_a_dynamic_instability(kernel):
    """Before: "diverged ... a dynamic instability, e.g. a rotating body above its critical speed".  (A
    start checked for consistency is refused before it runs; the evidence is the same.)"""
    problem = ConstrainedProblem(bar_tied_too_far())
    x0 = np.concatenate([problem.system.initial_coordinates(), problem.system.initial_velocities()])
    try:
        sol = simulate(problem, (0.0, 0.01), x0, method="index3-alpha", h=1e-3, kernel=kernel)
    except ValueError as err:                          # an initial-state check that refuses it
        assert "tie" in str(err)
        return
    assert sol.status == "diverged" and "instability" not in sol.message
    assert sol.message.startswith("The response grows without bound: ")
    assert sol.message.endswith(OVER_CONSTRAINED) and len(sol.t) == 1


def test_an_inconsistent_over_constrained_system_is_refused_by_the_index1_form():
    """Before: "redundant ... use solver='udwadia-kalaba'", which cannot make the constraints hold."""
    from flexmbs.formulations.index1 import Index1
    from flexmbs.formulations.stabilization import RedundantConstraintError
    system = bar_tied_too_far()
    for solver in ("augmented", "udwadia-kalaba"):
        with pytest.raises(RedundantConstraintError) as err:
            Index1(system, solver=solver).check_redundancy(0.0, system.initial_coordinates())
        assert str(err.value) == "The system cannot start: " + OVER_CONSTRAINED


def test_a_consistent_system_is_not_over_constrained():
    """The evidence is not vacuous: the pendulum of these tests (redundant rows: none) and a bar tied
    where it can reach (the same dependent rows, C = 0) give None."""
    from flexmbs.constraints import Distance, Spherical
    system = driven_hub(spin)
    assert system.over_constrained(0.3, system.initial_coordinates()) is None
    bar = RigidBodyEP("bar", 1.0, [0.01, 0.1, 0.1])
    tied = System([bar], [Spherical(None, bar, at=[-0.5, 0.0, 0.0], name="pin"),
                          Distance(None, bar, at_i=[0.8, 0.0, 0.0], s_j=[0.5, 0.0, 0.0], name="tie")])
    assert tied.mobility(0.0, tied.initial_coordinates())["redundant"] == ["tie"]
    assert tied.over_constrained(0.0, tied.initial_coordinates()) is None


def test_an_explicit_method_blowing_up_is_named_an_instability_not_redundant_constraints():
    """AB4 at h = 0.05 on a pendulum with stiff Baumgarte terms (alpha = beta = 1e4 1/s, h beta = 500):
    before, "the saddle-point matrix ... redundant constraints"; now the growth of |x| on the
    explicit method, and the advice to use an implicit method or a smaller step."""
    from flexmbs.constraints import Spherical
    from flexmbs.formulations.index1 import Index1
    bob = RigidBodyEP("bob", 1.0, [0.01, 0.01, 0.01], position=[1.0, 0.0, 0.0])
    system = System([bob], [Spherical(None, bob, at=np.zeros(3), name="pin")], gravity=[0.0, -9.81, 0.0])
    formulation = Index1(system, stabilization="baumgarte", alpha=1e4, beta=1e4)
    sol = simulate(formulation, (0.0, 1.0), formulation.state0(), method="AB4", h=0.05)
    assert sol.status == "failed" and "redundant" not in sol.message and len(sol.t) == 2
    assert sol.message.startswith("The evaluation after the step to t = 0.1 failed (RedundantConstraintError at "
                                  "that state): the state grew from |x|_inf = 1 at t0 = 0 to ")
    assert sol.message.endswith(
        "on the explicit method 'AB4': an instability, most likely of the method (the step is beyond its "
        "stability limit: the model is stiff). Use an implicit method ('midpoint', 'generalized-alpha', 'Radau', "
        "'BDF') or a smaller step (`h`, or `max_step` of the adaptive methods); if the growth stays, the model "
        "itself is unstable (a dynamic instability).")


@pytest.mark.parametrize("kernel", KERNELS)
def test_a_failing_law_stops_the_single_step_path_alike(kernel):
    """With an integrand simulate steps one at a time (the compiled path's `_kernel_step`): the same
    message and outputs as without."""
    problem = ConstrainedProblem(driven_hub(raise_after))
    x0 = problem.state0(problem.system.initial_coordinates(), problem.system.initial_velocities())
    sol = simulate(problem, (0.0, 0.1), x0, method="index3-alpha", h=1e-3, kernel=kernel,
                   integrand=lambda t, x: x[7:8])
    assert sol.message == LAWS[1][1] and len(sol.t) == 51 and sol.integrals.shape == (51, 1)


@pytest.mark.parametrize("method, message", [
    ("midpoint", "The step from t = 0.05 failed: the frame motion (AxisRotation) gave NaN or inf at t = 0.0505; a "
                 "law or load must be finite at every time of the run"),
    ("generalized-alpha", "the frame motion (AxisRotation) gave NaN or inf at t = 0.0505"),   # at t_{n+1-alpha_f}
])
def test_a_frame_motion_law_giving_nan_is_named(method, message):
    """flexmbs.run(model) on a rotating frame whose angle law gives NaN after t = 0.05."""
    import flexmbs
    from flexmbs import BeamEB2D, Material, Model, generate, motion
    beam = BeamEB2D(Material(E=7e8, rho=2700.0), area=1e-4, I=1e-9)
    model = Model(generate.line(4, 0.5), beam, fixed=[("start", "all")],
                  motion=motion.AxisRotation(lambda t: (np.nan if t > 0.05 else t, 1.0, 0.0)))
    res = flexmbs.run(model, method=method, h=1e-3, t_end=0.1, compute_energies=False)
    assert res.status == "failed" and message in res.message and res.t[-1] == pytest.approx(0.05)


def test_a_law_failing_in_the_dense_output_keeps_the_outputs():
    """midpoint evaluates the law at the step's midpoint 0.0505, the integrand's quadrature at its end
    0.051, where the law gives NaN: before, the UserFunctionError left simulate and every output was
    lost; now status failed with the outputs up to 0.05."""
    from flexmbs.formulations.index1 import Index1
    formulation = Index1(driven_hub(lambda t: (np.nan if t > 0.0507 else 3.0 * t, 3.0, 0.0)))
    sol = simulate(formulation, (0.0, 0.1), formulation.state0(), method="midpoint", h=1e-3,
                   integrand=lambda t, x: x[:1])
    assert sol.status == "failed" and len(sol.t) == 51 and sol.integrals.shape == (51, 1)
    assert sol.message == ("The outputs of the step from t = 0.05 to t = 0.051 failed: driver 'drive': its law gave "
                           "NaN or inf at t = 0.051 ((f, f', f'') = (nan, 3, 0)); a law or load must be finite at "
                           "every time of the run")
