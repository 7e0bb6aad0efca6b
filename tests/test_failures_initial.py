"""Initial states: never integrated when inconsistent, initial velocities never dropped (issue 20, items 3, 12).

Every entry point (the index-1 route with every solver and stabilisation, index3-alpha on the
numpy and the compiled path, the five formulations of the quasi-velocity comparison (`system_formulation`), `flexmbs.run` of a
System, and `simulate` given a raw x0) starts from the bodies' own initial state unless told otherwise,
checks it against the constraints (`System.consistency`: |C| <= 1e-8 max(1, |q|_inf), |C_q v +
C_t| <= 1e-8 times the size of its terms) and refuses an inconsistent state naming the worst
constraint, the level and the size, or, with ``assemble=True``, projects it onto the constraints
with an `InitialStateWarning` saying how far it moved.

Reference values: the pendulum is IFToMM A01's (1 kg on a 1 m link pinned at the origin,
released at rest from the horizontal, g = 9.81 m/s^2).  Released from the horizontal, its
speed is g t (1 + O(theta^2)), theta = g t^2 / (2 L): 0.0981 m/s at t = 0.01 s, to 1e-7.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import RigidBodyEP
from flexmbs.bodies.planar import RigidBody2D
from flexmbs.constraints.planar import PlanarRevolute
from flexmbs.formulations.index1 import Index1
from flexmbs.formulations.registry import system_formulation
from flexmbs.integrators import ConstrainedProblem, simulate
from flexmbs.rotations import ep_E
from flexmbs.system import InconsistentStateError, InitialStateWarning, System

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import cart_pendulum  # noqa: E402
import three_bodies  # noqa: E402
from _comparison import FORMULATIONS, registry_formulation  # noqa: E402

G = 9.81
FAR = np.array([2.0, 0.0, 0.0])         # the 1 m pendulum's mass 2 m from its pivot
PULL = np.array([5.0, 0.0, 0.0])        # 5 m/s along the link: breaks the pin
T_OUT = np.linspace(0.0, 0.05, 6)


def pendulum() -> System:
    """IFToMM A01: 1 kg at (1, 0) m on a pin at the origin ('pivot'), gravity -9.81 m/s^2 along y."""
    body = RigidBody2D("pendulum", 1.0, 0.0, position=(1.0, 0.0))
    return System([body], [PlanarRevolute(None, body, at=(0.0, 0.0), name="pivot")], gravity=(0.0, -G))


def raw(q, v):
    return np.concatenate([q, v])


def run(system, q0=None, v0=None, t_end=0.05, t_eval=T_OUT, method="index3-alpha", **options):
    """`flexmbs.run` of a System from (q0, v0) to ``t_end``, index3-alpha at h = 1 ms, no results file."""
    step = dict(h=1e-3) if method == "index3-alpha" else {}
    return fm.run(system, method=method, q0=q0, v0=v0, t_end=t_end, t_eval=t_eval, store=False, **step, **options)


POSITION = (r"inconsistent initial state at t = 0: constraint 'pivot' violated at the position level by "
            r"\|C\| = 1 \(tolerance 2e-08\); it is not integrated\. Correct q0/v0, or pass assemble=True")
VELOCITY = (r"inconsistent initial state at t = 0: constraint 'pivot' violated at the velocity level by "
            r"\|C_q v \+ C_t\| = 5 \(tolerance 5e-08\); it is not integrated\. Correct q0/v0, or pass assemble=True")
WHEEL = r"constraint 'wheel' violated at the velocity level by \|C_q v \+ C_t\| = 0\.001 \(tolerance 1e-08\)"
WHEEL_V0 = cart_pendulum.build().system.initial_velocities() + np.array([0.0, 1e-3, 0.0])

BAD_INITIAL_STATES = [
    # (what is called, the message it now gives)
    ("flexmbs.run DOP853 (index-1 lagrange): 1 m pendulum 2 m from its pivot",
     lambda s: run(s, FAR, method="DOP853"), POSITION),
    ("flexmbs.run index3-alpha: 1 m pendulum 2 m from its pivot", lambda s: run(s, FAR), POSITION),
    ("Index1 augmented, no stabilisation", lambda s: Index1(s).state0(FAR), POSITION),
    ("Index1 udwadia-kalaba", lambda s: Index1(s, solver="udwadia-kalaba").state0(FAR), POSITION),
    ("Index1 baumgarte", lambda s: Index1(s, stabilization="baumgarte").state0(FAR), POSITION),
    ("Index1 coordinate-partitioning", lambda s: Index1(s, stabilization="coordinate-partitioning").state0(FAR),
     POSITION),
    ("ConstrainedProblem.state0", lambda s: ConstrainedProblem(s).state0(FAR), POSITION),
    ("system_formulation lagrange", lambda s: system_formulation("lagrange", s).state0(FAR), POSITION),
    ("system_formulation maggi", lambda s: system_formulation("maggi", s).state0(FAR), POSITION),
    ("simulate, a raw x0, index-1 RK45", lambda s: simulate(Index1(s), (0, 0.05), raw(FAR, 0 * FAR), "RK45"),
     POSITION),
    ("simulate, a raw x0, index3-alpha numpy path",
     lambda s: simulate(ConstrainedProblem(s), (0, 0.05), raw(FAR, 0 * FAR), "index3-alpha", h=1e-3,
                        kernel="numpy"), POSITION),
    ("simulate, a raw x0, index3-alpha compiled path when available",
     lambda s: simulate(ConstrainedProblem(s), (0, 0.05), raw(FAR, 0 * FAR), "index3-alpha", h=1e-3,
                        kernel="auto"), POSITION),
    ("flexmbs.run DOP853: a pin-breaking initial velocity", lambda s: run(s, None, PULL, method="DOP853"), VELOCITY),
    ("flexmbs.run index3-alpha: a pin-breaking initial velocity", lambda s: run(s, None, PULL), VELOCITY),
    ("Index1 coordinate-partitioning: a pin-breaking initial velocity",
     lambda s: Index1(s, stabilization="coordinate-partitioning").state0(v0=PULL), VELOCITY),
    ("system_formulation maggi: a pin-breaking initial velocity",
     lambda s: system_formulation("maggi", s).state0(v0=PULL), VELOCITY),
    ("system_formulation kane: a wheel slipping sideways (u0 would drop it)",
     lambda s: system_formulation("kane", cart_pendulum.build().system).state0(v0=WHEEL_V0), WHEEL),
    ("system_formulation volterra: a wheel slipping sideways",
     lambda s: system_formulation("volterra", cart_pendulum.build().system).state0(v0=WHEEL_V0), WHEEL),
    ("q0 of the wrong length", lambda s: Index1(s).state0(np.zeros(2)),
     r"`q0` must have shape \(system.n_q,\) = \(3,\), got \(2,\)"),
    ("v0 not finite", lambda s: run(s, None, [np.nan, 0.0, 0.0]),
     r"`v0` must be finite \(it contains NaN or inf\)"),
]


@pytest.mark.parametrize("call, message", [row[1:] for row in BAD_INITIAL_STATES],
                         ids=[row[0] for row in BAD_INITIAL_STATES])
def test_an_inconsistent_initial_state_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call(pendulum())


def test_the_refusal_names_the_constraint_level_and_size():
    with pytest.raises(InconsistentStateError) as err:
        run(pendulum(), FAR, method="DOP853")
    assert (err.value.names, err.value.level, err.value.size, err.value.tol) == (("pivot",), "position", 1.0, 2e-8)


def test_the_tolerance_is_1e_8_of_the_coordinates_size():
    """|C| = 5e-9 m on a 1 m pendulum passes (as given, not moved), 5e-8 m is refused."""
    system = pendulum()
    q, v = system.initial_state(0.0, [1.0 + 5e-9, 0.0, 0.0])
    assert q[0] == 1.0 + 5e-9 and not v.any()
    with pytest.raises(InconsistentStateError, match=r"\|C\| = 5e-08 \(tolerance 1e-08\)"):
        system.initial_state(0.0, [1.0 + 5e-8, 0.0, 0.0])


@pytest.mark.parametrize("integrator, kernel", [("DOP853", None), ("index3-alpha", "numpy"), ("index3-alpha", "auto")])
def test_the_far_pendulum_is_assembled_on_request_and_swings_at_1_m(integrator, kernel):
    """assemble=True moves the mass 1 m back to its link (warned); the run then swings at 1 m and
    starts at g t, not at the 755 m/s of a first step that jumped back onto the constraint."""
    system = pendulum()
    moved = (r"'pivot' violated at the position level by \|C\| = 1 .*"
             r"positions moved by up to 1 \(body 'pendulum'\), velocities by up to 0")
    with pytest.warns(InitialStateWarning, match=moved):
        q0, v0 = system.initial_state(0.0, FAR, None, assemble=True)
    problem = Index1(system) if integrator == "DOP853" else ConstrainedProblem(system)
    options = dict(rtol=1e-10, atol=1e-12) if kernel is None else dict(h=1e-3, kernel=kernel)
    sol = simulate(problem, (0.0, 0.05), raw(q0, v0), integrator, t_eval=T_OUT, **options)
    assert sol.status == "finished"
    np.testing.assert_allclose(np.hypot(sol.x[:, 0], sol.x[:, 1]), 1.0, atol=1e-9)
    speed = np.hypot(sol.x[:, 3], sol.x[:, 4])
    assert speed[0] == 0.0 and abs(speed[1] - G * 0.01) < 1e-5


@pytest.mark.parametrize("integrator", ["DOP853", "index3-alpha"])
def test_a_pin_breaking_velocity_is_assembled_on_request_and_the_pivot_holds(integrator):
    """The 5 m/s along the link is removed (minimum-norm correction: C_q = [[1, 0, 0], [0, 1, -1]] at
    the horizontal, so v = 0); the pivot no longer drifts 0.25 m in 0.05 s."""
    system = pendulum()
    with pytest.warns(InitialStateWarning, match=r"velocity level .* = 5 .*velocities by up to 5 \(body 'pendulum'\)"):
        res = run(system, None, PULL, method=integrator, assemble=True)
    np.testing.assert_allclose(res.v[0], 0.0, atol=1e-15)
    assert system.residual_norms(res.t, res.q).max() < 1e-8


def test_a_consistent_state_runs_without_a_warning(recwarn):
    res = run(pendulum(), t_end=0.01, t_eval=[0.0, 0.01], method="DOP853")
    assert res.status == "finished" and not [w for w in recwarn if w.category is InitialStateWarning]


# -- initial velocities are never dropped ---------------------------------------------------------
OMEGA = np.array([0.0, 0.0, 10.0])


def spinning_top() -> System:
    """A free body (Euler parameters) moving at 1 m/s and spinning at 10 rad/s about its principal z axis."""
    return System([RigidBodyEP("top", 2.0, [0.1, 0.2, 0.3], velocity=(1.0, 0.0, 0.0), angular_velocity=OMEGA)])


def first_state(res):
    """x0 = (q, v) at the first output of a run's `Results`."""
    return np.concatenate([res.q[0], res.v[0]])


ENTRY_POINTS = {
    "Index1().state0()": lambda s: Index1(s).state0(),
    "Index1(udwadia-kalaba).state0()": lambda s: Index1(s, solver="udwadia-kalaba").state0(),
    "Index1(baumgarte).state0()": lambda s: Index1(s, stabilization="baumgarte").state0(),
    "Index1(coordinate-partitioning).state0()": lambda s: Index1(s, stabilization="coordinate-partitioning").state0(),
    "system_formulation(lagrange).state0()": lambda s: system_formulation("lagrange", s).state0(),
    "system_formulation(maggi).state0()": lambda s: system_formulation("maggi", s).state0(),
    "ConstrainedProblem().state0()": lambda s: ConstrainedProblem(s).state0(),
    "flexmbs.run(q0=None, v0=None) DOP853": lambda s: first_state(run(s, t_end=0.01, t_eval=[0.0], method="DOP853")),
    "flexmbs.run(q0=None, v0=None) index3-alpha": lambda s: first_state(run(s, t_end=0.01, t_eval=[0.0])),
}


@pytest.mark.parametrize("entry", ENTRY_POINTS.values(), ids=ENTRY_POINTS.keys())
def test_a_free_body_keeps_its_spin_through_every_entry_point(entry):
    system = spinning_top()
    x0 = entry(system)
    q, v = x0[:7], x0[7:]
    np.testing.assert_allclose(v, system.initial_velocities(), rtol=0, atol=1e-14)
    np.testing.assert_allclose(2 * ep_E(q[3:]) @ v[3:], OMEGA, rtol=1e-14)      # omega = 2 E(p) p'
    np.testing.assert_allclose(v[:3], [1.0, 0.0, 0.0])


@pytest.mark.parametrize("name", FORMULATIONS)
def test_the_five_formulations_start_from_the_bodies_velocities(name):
    """three_bodies floats free with the spin V0 of its module: every formulation's state0() is
    that motion (the quasi-velocity ones through u0)."""
    model = three_bodies.build()
    system = model.system
    entry, options = registry_formulation(model, name, "DOP853")     # the case's Y, ignorable
    form = system_formulation(entry, system, **options)
    _, v = form.physical(0.0, form.state0())
    assert np.abs(system.initial_velocities()).max() > 0.1
    np.testing.assert_allclose(np.ravel(v), system.initial_velocities(), rtol=1e-12, atol=1e-12)


def test_the_spin_is_kept_through_the_run():
    """Torque-free spin about a principal axis: omega stays (0, 0, 10) rad/s, the centroid moves at 1 m/s."""
    system = spinning_top()
    res = run(system, t_end=0.1, t_eval=[0.0, 0.1], method="DOP853", rtol=1e-10, atol=1e-12)
    q, v = res.q[-1], res.v[-1]
    np.testing.assert_allclose(2 * ep_E(q[3:]) @ v[3:], OMEGA, atol=1e-7)
    np.testing.assert_allclose(q[:3], [0.1, 0.0, 0.0], atol=1e-10)
