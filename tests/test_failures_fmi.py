"""Issue 27, item 4: what `flexmbs.fmi` (the FMU's core, `export`, `flexmbs fmu`) refuses, and how a run
that fails inside the FMU says so.

Rows are (description, call, message it now prints): bad input is an FMIError (a ValueError) naming
the argument, what was expected and what was given; a communication step out of turn is refused
with what the FMU expects; a run that fails stops the co-simulation with the run's message.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs.bodies import RigidBodyEP
from flexmbs.bodies.loads import torque_load
from flexmbs.constraints import Revolute
from flexmbs.fmi import CoSimulation, FMIError
from flexmbs.system import System

CASES = Path(__file__).resolve().parents[1] / "cases"
sys.path.insert(0, str(CASES))
import pendulum_a01  # noqa: E402

AXIS = np.array([0.0, 1.0, 0.0])


def pendulum(torque, broken_after=math.inf):
    """The rod on its pin driven by the held ``torque``; a load that raises after ``broken_after`` s."""
    def broken(t):
        if t > broken_after:
            raise RuntimeError("sensor cable cut")
        return np.zeros(3)
    rod = RigidBodyEP("rod", 1.0, np.diag([1 / 12, 1 / 12, 1e-4]), position=(0.0, 0.0, -0.5),
                      loads=[torque.torque(AXIS), torque_load(broken)])
    return System([rod], [Revolute(None, rod, at=(0.0, 0.0, 0.0), axis=AXIS, name="pin")], gravity=(0.0, 0.0, -9.81))


def driven(angle):
    """A driver whose law reads the set-point input: refused by the run (docs/fmi.md)."""
    from flexmbs.constraints.driving import AngleDriver
    rod = RigidBodyEP("rod", 1.0, np.diag([1 / 12, 1 / 12, 1e-4]), position=(0.0, 0.0, -0.5))
    return System([rod], [Revolute(None, rod, at=(0.0, 0.0, 0.0), axis=AXIS, name="pin"),
                          AngleDriver(None, rod, AXIS, lambda t: (angle(t), 0.0, 0.0), name="drive")])


def a01():
    return pendulum_a01.build()[0]


def a01_tuple():
    return pendulum_a01.build()


def sim(**kwargs):
    options = dict(factory=pendulum, inputs={"torque": "N.m"}, outputs=["pin.angle"], step=1e-3)
    options.update(kwargs)
    return CoSimulation(options.pop("factory"), options.pop("inputs"), options.pop("outputs"), options.pop("step"),
                        **options)


def started(t_end=0.01, **kwargs):
    s = sim(**kwargs)
    s.start(0.0, t_end)
    return s


def advanced(*steps, inputs=None, **kwargs):
    """A co-simulation started on [0, 0.01] and stepped (t, dt) by ``steps``, inputs set first."""
    s = started(**kwargs)
    s.inputs.update(inputs or {})
    try:
        for t, dt in steps:
            s.advance(t, dt)
    finally:
        s.close()


def started_twice():
    s = started()
    try:
        s.start(0.0, 0.01)
    finally:
        s.close()


def after_failure():
    """The run fails in the step after t = 3 ms; the master tries once more."""
    s = started(parameters={"broken_after": 0.003})
    try:
        for k in range(5):
            try:
                s.advance(k * 1e-3, 1e-3)
            except FMIError:
                pass
        s.advance(0.003, 1e-3)
    finally:
        s.close()


REFUSED = [
    ("step zero", lambda: sim(step=0.0), "`step` must be a positive number of seconds, got 0.0"),
    ("step NaN", lambda: sim(step=math.nan), "`step` must be a finite number, got nan"),
    ("h beyond the step", lambda: sim(h=2e-3), "`h` must lie in (0, step = 0.001] s, got 0.002"),
    ("unit unknown", lambda: sim(inputs={"torque": "Nm"}),
     "`inputs`: input 'torque': `unit` must be one of ['1', 'N', 'N.m', 'm', 'm/s', 'rad', 'rad/s', 's'], got 'Nm'"),
    ("input name with a space", lambda: sim(inputs={"joint torque": "N.m"}),
     "`inputs`: an input's name must be a Python identifier (the factory's keyword), got 'joint torque'"),
    ("inputs a string", lambda: sim(inputs="torque"),
     "`inputs` must be a dict {name: unit} or a list of flexmbs.fmi.Input, got 'torque'"),
    ("outputs empty", lambda: sim(outputs=[]), "`outputs` must be a non-empty list of 'NAME.QUANTITY' strings, got []"),
    ("output without a quantity", lambda: sim(outputs=["pin"]),
     "`outputs`: each output must be a string 'NAME.QUANTITY' (QUANTITY one of ['angle', 'angular_velocity', "
     "'position', 'rate', 'velocity']), got 'pin'"),
    ("output quantity unknown", lambda: sim(outputs=["pin.torque"]),
     "`outputs`: 'pin.torque': the quantity must be one of ['angle', 'angular_velocity', 'position', 'rate', "
     "'velocity'], got 'torque'"),
    ("output of a missing body", lambda: sim(outputs=["arm.position"]),
     "`outputs`: 'arm.position': System: no body 'arm'; bodies: ['rod']"),
    ("angle of a planar joint", lambda: sim(factory=a01, inputs={}, outputs=["pivot.angle"]),
     "`outputs`: 'pivot.angle': joint_angle: `joint` must be a flexmbs.constraints.Revolute, got PlanarRevolute "
     "'pivot'"),
    ("outputs twice", lambda: sim(outputs=["pin.angle", "pin.angle"]),
     "`outputs`: the names must be distinct, got ['pin.angle', 'pin.angle']"),
    ("factory not callable", lambda: sim(factory="pendulum"),
     "`factory` must be a function factory(**inputs, **parameters) -> flexmbs.System, got str"),
    ("factory without the input's keyword", lambda: sim(factory=a01),
     "`factory` 'a01' cannot be called with the inputs ['torque'] and the parameters [] as keywords: got an "
     "unexpected keyword argument 'torque'"),
    ("factory returns a tuple", lambda: sim(factory=a01_tuple, inputs={}, outputs=["pendulum.position"]),
     "`factory` 'a01_tuple' must return a flexmbs.System, got tuple"),
    ("a parameter named as an input", lambda: sim(parameters={"torque": 1.0}),
     "`parameters` ['torque'] have the names of inputs; give them other names"),
    ("stop time not a whole number of steps", lambda: started(t_end=0.0105),
     "the stop time 0.0105 must lie a whole number of steps `step` = 0.001 s after the start time 0.0 (the FMU "
     "samples at t0 + k step)"),
    ("started twice", started_twice,
     "the co-simulation is already started; make a new CoSimulation for another run"),
    ("advance before start", lambda: sim().advance(0.0, 1e-3),
     "`advance` before `start`: start the co-simulation first"),
    ("advance from another time", lambda: advanced((0.005, 1e-3)),
     "the communication point t = 0.005 is not the FMU's time 0.0"),
    ("communication step of 1.5 samples", lambda: advanced((0.0, 1.5e-3)),
     "the communication step dt = 0.0015 must be a whole multiple of the FMU's step 0.001 s"),
    ("a step beyond the stop time", lambda: advanced((0.0, 0.02)),
     "the step to t = 0.02 goes beyond the stop time 0.01 the run was started with"),
    ("an input not declared", lambda: advanced((0.0, 1e-3), inputs={"force": 1.0}),
     "`inputs`: ['force'] are not inputs of this co-simulation; its inputs are ['torque']"),
    ("input NaN", lambda: advanced((0.0, 1e-3), inputs={"torque": math.nan}),
     "input 'torque' must be a finite number, got nan"),
    ("rho_inf 1 (index3-alpha's own check, at the first step)", lambda: advanced((0.0, 1e-3), rho_inf=1.0),
     "the run could not go on: ValueError: `rho_inf` must lie in [0, 1) for method 'index3-alpha' (1 leaves the "
     "multipliers undamped), got 1.0."),
    ("a driver's law reads an input", lambda: started(factory=driven, inputs={"angle": "rad"}),
     "the run could not go on: UserFunctionError: driver 'drive': its law raised ControlError at t = 0: control "
     "output 'angle' is read at t = 0 outside a controlled run (no Controller has sampled it)"),
    ("a load fails in the run; the master steps again", after_failure,
     "the co-simulation is failed: The step from t = 0.003 failed: body 'rod': load 1 raised RuntimeError at "
     "t = 0.004: sensor cable cut"),
]


@pytest.mark.parametrize("call, message", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert message in str(err.value)


def test_a_failed_run_keeps_its_message_and_the_outputs_before():
    s = started(parameters={"broken_after": 0.003})
    y = [s.advance(k * 1e-3, 1e-3) for k in range(3)]
    with pytest.raises(FMIError, match=r"the run stopped after t = 0.003 \(the last communication point; the "
                                        r"outputs are those there\): The step from t = 0.003 failed"):
        s.advance(0.003, 1e-3)
    assert s.status == "failed" and s.time == pytest.approx(0.003) and s.outputs == y[-1]
    s.close()


# -- export and the command ---------------------------------------------------------------------
def export(**kwargs):
    pytest.importorskip("pythonfmu")
    from flexmbs.fmi import export
    options = dict(factory=pendulum, path="pendulum.fmu", inputs={"torque": "N.m"}, outputs=["pin.angle"], step=1e-3)
    options.update(kwargs)
    return export(options.pop("factory"), options.pop("path"), **options)


EXPORT_REFUSED = [
    ("path not .fmu", lambda: export(path="pendulum.zip"), "`path` must name a .fmu file, got 'pendulum.zip'"),
    ("factory a lambda", lambda: export(factory=lambda torque: None),
     "`factory` must be a function defined at the top level of a module (the FMU finds it by its name when it "
     "starts), got '<lambda>.<locals>.<lambda>'"),
    ("factory a string without function", lambda: export(factory="model.py"),
     "`factory` as a string must be 'FILE.py:FUNCTION' or 'MODULE:FUNCTION', got 'model.py'"),
    ("factory file missing", lambda: export(factory="nowhere.py:system"),
     "`factory` 'nowhere.py:system': the file nowhere.py does not exist"),
    ("factory module missing", lambda: export(factory="no_such_module:system"),
     "`factory` 'no_such_module:system': the module 'no_such_module' cannot be imported (No module named "
     "'no_such_module')"),
    ("factory function missing", lambda: export(factory="math:system"), "`factory` 'math:system': math has no function "
                                                                        "'system'"),
    ("parameters not JSON", lambda: export(parameters={"broken_after": np.array([1.0])}),
     "`parameters` must be JSON values (numbers, strings, lists, dicts): Object of type ndarray is not JSON "
     "serializable"),
    ("stop time not a whole number of steps", lambda: export(stop_time=1.0005),
     "`stop_time`: the stop time 1.0005 must lie a whole number of steps `step` = 0.001 s after the start time 0.0"),
]


@pytest.mark.parametrize("call, message", [r[1:] for r in EXPORT_REFUSED], ids=[r[0] for r in EXPORT_REFUSED])
def test_export_refuses_named(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert message in str(err.value)


COMMAND_REFUSED = [
    ("a case without FMU", ["pendulum_a01"],
     "flexmbs fmu: error: case pendulum_a01 declares no FMU (a dict FMU = dict(system='FUNCTION', inputs=..., "
     "outputs=..., step=...)); give the factory as FILE.py:FUNCTION with --input, --output and --step"),
    ("--input without a unit", ["controlled_pendulum", "--input", "torque"],
     "flexmbs fmu: error: --input expects NAME=UNIT (e.g. --input torque=N.m), got 'torque'"),
    ("a factory without --output and --step", [f"{__file__}:pendulum", "--input", "torque=N.m"],
     f"flexmbs fmu: error: give --output and --step (the source {__file__}:pendulum declares no FMU default for them)"),
    ("an unknown parameter", ["controlled_pendulum", "--set", "mas=2"],
     "flexmbs fmu: error: unknown parameter 'mas' for case controlled_pendulum; did you mean 'mass'?"),
    ("a bad output", ["controlled_pendulum", "--output", "pin.angl"],
     "flexmbs fmu: error: `outputs`: 'pin.angl': the quantity must be one of ['angle', 'angular_velocity', "
     "'position', 'rate', 'velocity'], got 'angl'"),
]


@pytest.mark.parametrize("argv, message", [r[1:] for r in COMMAND_REFUSED], ids=[r[0] for r in COMMAND_REFUSED])
def test_command_refuses_named(argv, message, capsys, tmp_path, monkeypatch):
    pytest.importorskip("pythonfmu")
    from flexmbs.cli import main
    monkeypatch.chdir(tmp_path)
    assert main(["--cases", str(CASES), "fmu", *argv]) == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.glob("*.fmu"))


def test_command_without_pythonfmu_says_what_to_install(capsys, monkeypatch, tmp_path):
    from flexmbs.cli import main
    monkeypatch.setitem(sys.modules, "pythonfmu", None)            # import pythonfmu -> ImportError
    monkeypatch.chdir(tmp_path)
    assert main(["--cases", str(CASES), "fmu", "controlled_pendulum"]) == 2
    err = capsys.readouterr().err
    assert "flexmbs fmu: error: exporting an FMU needs pythonfmu, which is not installed" in err
    assert 'install it: pip install "flexmbs[fmi]" (or: pip install pythonfmu)' in err


def test_a_bad_communication_step_in_fmpy_is_an_error_with_the_reason(tmp_path):
    """fmpy steps by 1.5 samples: fmi2DoStep returns fmi2Error (fmpy ends the run there, at t = 0), and
    the FMU's log says why."""
    fmpy = pytest.importorskip("fmpy")
    path = export(path=tmp_path / "pendulum.fmu", stop_time=0.03)
    logged = []
    result = fmpy.simulate_fmu(str(path), stop_time=0.03, output_interval=1.5e-3, debug_logging=True,
                               logger=lambda *args: logged.append(args[-1].decode()))
    assert np.max(result["time"]) == 0.0
    assert ("flexmbs FMU: the communication step dt = 0.0015 must be a whole multiple of the FMU's step 0.001 s"
            in logged)
