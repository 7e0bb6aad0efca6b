"""Issue 22, item 3: what `flexmbs.control` refuses, and how a controller that fails in a run stops it.

Rows are (description, call, message it now gives): bad input is a ControlError (a ValueError) naming
the argument, what was expected and what was given; a law that fails at a sample after t0 stops the
run ("failed"), keeping the outputs up to that sample.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import flexmbs as fm
from flexmbs import control
from flexmbs.bodies import RigidBodyEP
from flexmbs.constraints import Revolute, Spherical
from flexmbs.system import System

AXIS = (0.0, 1.0, 0.0)


def pendulum(loads=()):
    rod = RigidBodyEP("rod", 1.0, np.diag([1 / 12, 1 / 12, 1e-4]), position=(0.0, 0.0, -0.5), loads=list(loads))
    pin = Revolute(None, rod, at=(0.0, 0.0, 0.0), axis=AXIS, name="pin")
    return System([rod], [pin], gravity=(0.0, 0.0, -9.81)), pin, rod


def controlled(law, period=1e-3, method="index3-alpha", **kwargs):
    """A run of the pendulum whose torque ``law(t, sensed)`` sets, sampled every ``period``."""
    tau = control.Output("torque")
    system, pin, _ = pendulum([tau.torque(AXIS)])
    c = control.Controller(period, {"angle": control.joint_angle(pin)}, tau, law, name="pd")
    options = dict(method=method, h=1e-3, t_end=0.01, dt_out=1e-3, store=False)
    options.update(kwargs)
    return fm.run(system, controllers=[c], **options)


def law_then(bad, at=0.004):
    """A law that returns 0 before t = ``at``, then ``bad`` (or raises it if it is an exception)."""
    def law(t, sensed):
        if t < at - 1e-12:
            return 0.0
        if isinstance(bad, Exception):
            raise bad
        return bad
    return law


def read_after_run():
    """The held torque read as a function of t once its run has ended."""
    tau = control.Output("torque")
    system, pin, _ = pendulum([tau.torque(AXIS)])
    c = control.Controller(1e-3, {}, tau, lambda t, s: 1.0, name="pd")
    fm.run(system, method="index3-alpha", h=1e-3, t_end=0.005, dt_out=1e-3, store=False, controllers=[c])
    assert tau.held([0.001, 0.0015])[1] == 1.0              # what to read instead
    return tau(0.001)


_, PIN, ROD = pendulum()
OTHER = RigidBodyEP("other", 1.0, np.eye(3))

REFUSED = [
    ("period zero", lambda: control.Controller(0.0, {}, control.Output("u"), lambda t, s: 0.0),
     "Controller 'controller': `period` must be a positive number of seconds, got 0.0"),
    ("period a string", lambda: control.Controller("1ms", {}, control.Output("u"), lambda t, s: 0.0),
     "Controller 'controller': `period` must be a positive number of seconds, got '1ms'"),
    ("sense a list", lambda: control.Controller(1e-3, [control.joint_angle(PIN)], control.Output("u"), lambda t, s: 0),
     "Controller 'controller': `sense` must be a dict {name: sensor} of flexmbs.control sensors (joint_angle, "
     "joint_rate, body_position, ...), got [joint_angle('pin')]"),
    ("act a string", lambda: control.Controller(1e-3, {}, "torque", lambda t, s: 0.0),
     "Controller 'controller': `act` must be an Output or a non-empty list of flexmbs.control.Output, got 'torque'"),
    ("two outputs of one name", lambda: control.Controller(1e-3, {}, [control.Output("u"), control.Output("u")],
                                                           lambda t, s: {}),
     "Controller 'controller': the outputs of `act` must have distinct names, got ['u', 'u']"),
    ("law not callable", lambda: control.Controller(1e-3, {}, control.Output("u"), 3.0),
     "Controller 'controller': `law` must be callable law(t, sensed) -> outputs, got float"),
    ("output name with a slash", lambda: control.Output("a/b"),
     "Output: `name` must be a non-empty string without '/', got 'a/b'"),
    ("output of shape (2,)", lambda: control.Output("u", shape=(2,)),
     "Output 'u': `shape` must be () (a number) or (3,) (a vector), got (2,)"),
    ("torque axis of 2 numbers", lambda: control.Output("u").torque((0.0, 1.0)),
     "Output 'u'.torque: `axis` must be a vector of 3 finite numbers, got (0.0, 1.0)"),
    ("vector output with an axis", lambda: control.Output("u", (3,)).torque(AXIS),
     "Output 'u' is a vector: its torque takes no `axis`, got (0.0, 1.0, 0.0)"),
    ("angle of a spherical joint", lambda: control.joint_angle(Spherical(ROD, None, at=(0.0, 0.0, 0.0), name="ball")),
     "joint_angle: `joint` must be a flexmbs.constraints.Revolute, got Spherical 'ball'"),
    ("position of a point of 2 numbers", lambda: control.body_position(ROD, (0.0, 1.0)),
     "body_position: `point` must be 3 finite numbers (a point in body 'rod''s coordinates), got (0.0, 1.0)"),
    ("velocity of a joint, not a body", lambda: control.body_velocity(PIN),
     "body_velocity: `body` must be a body of the System (e.g. a RigidBodyEP), got Revolute"),
    ("controllers with RK45", lambda: controlled(lambda t, s: 0.0, method="RK45", h=None),
     "`controllers`: digital controllers run with method 'index3-alpha', got method 'RK45'"),
    ("controllers not a list", lambda: fm.run(pendulum()[0], method="index3-alpha", h=1e-3, t_end=0.01, dt_out=1e-3,
                                              store=False, controllers="pd"),
     "`controllers` must be a list of flexmbs.control.Controller, got 'pd'"),
    ("a sensor of a body not in the system",
     lambda: fm.run(pendulum()[0], method="index3-alpha", h=1e-3, t_end=0.01, dt_out=1e-3, store=False,
                    controllers=[control.Controller(1e-3, {"x": control.body_position(OTHER)}, control.Output("u"),
                                                    lambda t, s: 0.0)]),
     "sensor body_position('other'): body 'other' is not a body of the System run"),
    ("periods that the step does not divide",
     lambda: fm.run(pendulum()[0], method="index3-alpha", h=1e-3, t_end=0.01, dt_out=1e-3, store=False,
                    controllers=[control.Controller(1e-3, {}, control.Output("u"), lambda t, s: 0.0),
                                 control.Controller(1.5e-3, {}, control.Output("w"), lambda t, s: 0.0)]),
     "the controllers' periods [0.001, 0.0015] are not all whole multiples of the step h = 0.001 s (not [0.0015]); "
     "give periods that are multiples of the shortest one"),
    ("the torque read without its controller",
     lambda: fm.run(pendulum([control.Output("torque").torque(AXIS)])[0], method="index3-alpha", h=1e-3,
                    t_end=0.01, dt_out=1e-3, store=False),
     "control output 'torque' is read at t = 0 outside a controlled run (no Controller has sampled it); pass its "
     "Controller to flexmbs.run(system, method='index3-alpha', controllers=[...])"),
    ("the torque read after its run", read_after_run,
     "control output 'torque' is read at t = 0.001 outside a controlled run (its Controller 'pd' is not running; "
     "after a run read `held(t)`); pass its Controller to flexmbs.run(system, method='index3-alpha', "
     "controllers=[...])"),
    ("law returns other outputs at t0", lambda: controlled(lambda t, s: {"force": 1.0}),
     "the law of controller 'pd' returned the outputs ['force'] at t = 0; it must return exactly ['torque']"),
    ("law returns a string at t0", lambda: controlled(lambda t, s: "1"),
     "the law of controller 'pd' returned '1' for output 'torque' at t = 0; it must be a number"),
    ("law returns 3 numbers for a number at t0", lambda: controlled(lambda t, s: [1.0, 2.0, 3.0]),
     "the law of controller 'pd' returned [1.0, 2.0, 3.0] for output 'torque' at t = 0; it must be a number"),
]


@pytest.mark.parametrize("call, message", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert message in str(err.value)


STOPPED = [
    ("law gives NaN at t = 4 ms", law_then(math.nan),
     "The controller's sample at t = 0.004 failed: the law of controller 'pd' (output 'torque') gave NaN or inf at "
     "t = 0.004 (nan); a law or load must be finite at every time of the run"),
    ("law raises at t = 4 ms", law_then(ZeroDivisionError("division by zero")),
     "The controller's sample at t = 0.004 failed: the law of controller 'pd' raised ZeroDivisionError at "
     "t = 0.004: division by zero"),
]


@pytest.mark.parametrize("kernel", ["compiled", "numpy"])
@pytest.mark.parametrize("law, message", [r[1:] for r in STOPPED], ids=[r[0] for r in STOPPED])
def test_a_law_failing_in_the_run_stops_it_keeping_the_outputs(law, message, kernel):
    from flexmbs.compiled import kernel_status
    if kernel == "compiled" and not kernel_status().installed:
        pytest.skip("the compiled kernel is not installed")
    res = controlled(law, kernel=kernel)
    assert res.status == "failed" and res.message == message
    np.testing.assert_allclose(res.t, 1e-3 * np.arange(5), atol=1e-15)      # the outputs to the sample at 4 ms
