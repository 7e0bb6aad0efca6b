"""A System advanced one communication step at a time, its inputs held: the core of the FMU.

.. code:: text

    t_k = t0 + k T                      the FMU's sample times (T = ``step``; t_end - t0 = K T)
    y_k = sense(q(t_k), q'(t_k))        the outputs after the master's step that ends at t_k
    u(t) = u_k   on (t_k, t_k + T]      the inputs the master set before that step, held

This is a digital controller (`flexmbs.control`) whose law is the master: the System runs as one
``flexmbs.run(system, method="index3-alpha", controllers=[c])`` with a `Controller` ``c`` of
period T that senses the declared outputs and drives one `flexmbs.control.Output` per input.  The
run runs in a worker thread; at each sample its law hands y_k to the master and waits for the
inputs of the next communication step (`CoSimulation.advance`).  So the integrator keeps its
state from one communication step to the next (one run from t0 to t_end, no restart), the
inputs are held exactly as a controller's outputs are (left-continuous zero-order hold), and the
compiled kernel runs the steps between the samples as it does for any controlled run.  A master's
step dt = N T takes N samples, the inputs held over all of them.

The outputs are named ``NAME.QUANTITY``: ``JOINT.angle`` [rad] and ``JOINT.rate`` [rad/s] of a
`Revolute` joint (`flexmbs.control.joint_angle`, `joint_rate`); ``BODY.position`` [m],
``BODY.velocity`` [m/s] of its reference point and ``BODY.angular_velocity`` [rad/s]
(`body_position`, `body_velocity`, `body_angular_velocity`), whose components are the scalar
variables ``BODY.position[1]`` ... (1-based, as FMI's structured names).
"""
from __future__ import annotations

import inspect
import math
import queue
import threading
from collections.abc import Callable, Mapping

import numpy as np

from .. import control

__all__ = ["CoSimulation", "FMIError", "QUANTITIES", "UNITS", "Input", "output_sensors", "checked_inputs"]

STEP_RTOL = 1e-9        # a time within STEP_RTOL T of a sample time is that sample time
NO_INPUT = "no_input"   # the held output of an FMU without inputs (its controller must drive one)

# FMI 2.0 base units (modelDescription.xml's UnitDefinitions): exponents of kg, m, s, rad
UNITS = {"1": {}, "m": {"m": 1}, "rad": {"rad": 1}, "m/s": {"m": 1, "s": -1}, "rad/s": {"rad": 1, "s": -1},
         "N": {"kg": 1, "m": 1, "s": -2}, "N.m": {"kg": 1, "m": 2, "s": -2}, "s": {"s": 1}}

# output quantity -> (what it names, the sensor maker of flexmbs.control, unit)
QUANTITIES = {"angle": ("joint", control.joint_angle, "rad"), "rate": ("joint", control.joint_rate, "rad/s"),
              "position": ("body", control.body_position, "m"), "velocity": ("body", control.body_velocity, "m/s"),
              "angular_velocity": ("body", control.body_angular_velocity, "rad/s")}


class FMIError(ValueError):
    """An FMU or co-simulation given wrongly, or stepped out of turn; the message says what to change."""


class Input:
    """One input of the FMU: a value the master sets, held over each communication step, that the
    System's factory receives as a `flexmbs.control.Output` named ``name`` (``output.torque(axis)``,
    ``output.force(point, direction)``, or a driver's law ``lambda t: (output(t), 0.0, 0.0)``).

    Parameters
    ----------
    name : str
        The FMI variable's name and the factory's keyword argument (a Python identifier).
    unit : str
        One of `UNITS` ("N.m" for a joint torque, "N" for a force, "rad" or "m" for a set-point).
    start : float, default 0.0
        The value before the master sets one.
    description : str, optional
    """

    def __init__(self, name: str, unit: str, start: float = 0.0, description: str = ""):
        if not isinstance(name, str) or not name.isidentifier():
            raise FMIError(f"`inputs`: an input's name must be a Python identifier (the factory's keyword), got "
                           f"{name!r}")
        if unit not in UNITS:
            raise FMIError(f"`inputs`: input {name!r}: `unit` must be one of {sorted(UNITS)}, got {unit!r}")
        start = finite_number(start, f"`inputs`: input {name!r}: `start`")
        self.name, self.unit, self.start, self.description = name, unit, start, str(description)

    def __repr__(self) -> str:
        return f"Input({self.name!r}, {self.unit!r}, start={self.start!r})"

    def describe(self) -> dict:
        """The input as the FMU's configuration stores it."""
        return {"name": self.name, "unit": self.unit, "start": self.start, "description": self.description}


def finite_number(value, what: str) -> float:
    """``value`` as a finite float; FMIError naming ``what`` otherwise."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = math.nan
    if not math.isfinite(x) or isinstance(value, bool):
        raise FMIError(f"{what} must be a finite number, got {value!r}")
    return x


def checked_inputs(inputs) -> list[Input]:
    """``inputs`` as a list of `Input`: a list of Input, a dict {name: unit}, or configuration dicts
    (`Input.describe`); FMIError naming what is wrong."""
    if isinstance(inputs, Mapping):
        inputs = [Input(name, unit) for name, unit in inputs.items()]
    if not isinstance(inputs, (list, tuple)):
        raise FMIError(f"`inputs` must be a dict {{name: unit}} or a list of flexmbs.fmi.Input, got {inputs!r}")
    out = [Input(**i) if isinstance(i, Mapping) else i for i in inputs]
    if not all(isinstance(i, Input) for i in out):
        raise FMIError(f"`inputs` must be a dict {{name: unit}} or a list of flexmbs.fmi.Input, got {inputs!r}")
    names = [i.name for i in out]
    if len(set(names)) != len(names):
        raise FMIError(f"`inputs`: the names must be distinct, got {names}")
    return out


def _sensor(system, spec) -> tuple:
    """(sensor, unit) of the output ``spec`` "NAME.QUANTITY" of ``system``; FMIError naming it."""
    if not isinstance(spec, str) or "." not in spec:
        raise FMIError(f"`outputs`: each output must be a string 'NAME.QUANTITY' (QUANTITY one of "
                       f"{sorted(QUANTITIES)}), got {spec!r}")
    name, quantity = spec.rsplit(".", 1)
    if quantity not in QUANTITIES:
        raise FMIError(f"`outputs`: {spec!r}: the quantity must be one of {sorted(QUANTITIES)}, got {quantity!r}")
    kind, make, unit = QUANTITIES[quantity]
    try:
        target = system.body(name) if kind == "body" else system.constraint(name)
        return make(target), unit
    except ValueError as err:            # no such body or joint; a joint that is not a Revolute
        raise FMIError(f"`outputs`: {spec!r}: {err}") from None


def output_sensors(system, outputs) -> tuple[dict, dict]:
    """({spec: Sensor}, {scalar name: (spec, component or None, unit)}) of the declared ``outputs``
    ("NAME.QUANTITY", module docstring) of ``system``; a vector quantity gives the scalars
    ``spec[1]``, ``spec[2]`` ... (1-based)."""
    if isinstance(outputs, str) or not isinstance(outputs, (list, tuple)) or not outputs:
        raise FMIError(f"`outputs` must be a non-empty list of 'NAME.QUANTITY' strings, got {outputs!r}")
    if len(set(outputs)) != len(outputs):
        raise FMIError(f"`outputs`: the names must be distinct, got {list(outputs)}")
    sensors, scalars = {}, {}
    for spec in outputs:
        sensor, unit = _sensor(system, spec)
        sensors[spec] = sensor
        if sensor.shape == ():
            scalars[spec] = (spec, None, unit)
        else:
            scalars.update({f"{spec}[{k + 1}]": (spec, k, unit) for k in range(sensor.shape[0])})
    return sensors, scalars


def interval_error(t0: float, t_end: float, step: float) -> str | None:
    """Why [t0, t_end] is not a run of whole steps ``step`` (t_end - t0 = K step, K >= 1), or None."""
    n = (t_end - t0) / step
    if not (t_end > t0 and abs(n - round(n)) <= STEP_RTOL * max(n, 1.0)):
        return (f"the stop time {t_end!r} must lie a whole number of steps `step` = {step:g} s after the start time "
                f"{t0!r} (the FMU samples at t0 + k step)")
    return None


class _Stopped(Exception):
    """The master ended the co-simulation before the stop time (raised in the law: the run stops)."""


class CoSimulation:
    """A `flexmbs.System` advanced by communication steps with held inputs (module docstring).

    Parameters
    ----------
    factory : callable
        ``factory(**inputs, **parameters) -> flexmbs.System``: ``inputs`` are `flexmbs.control.Output`
        objects named after the declared inputs, which the System's loads or drivers read.
    inputs : dict {name: unit} or list of Input
    outputs : list of str
        "NAME.QUANTITY" (module docstring).
    step : float
        The sample period T [s]: the master's communication steps must be whole multiples of it.
    h : float, optional
        The step of index3-alpha (default ``step``; shrunk to divide ``step``).
    parameters : dict, optional
        Keyword arguments of ``factory`` besides the inputs.
    rho_inf : float, default 0.8
        index3-alpha's spectral radius at infinite frequency.

    Examples
    --------
    >>> sim = CoSimulation(pendulum, {"torque": "N.m"}, ["pin.angle"], step=1e-3)   # doctest: +SKIP
    >>> sim.start(0.0, 1.0); sim.inputs["torque"] = 0.5; sim.advance(0.0, 1e-3)       # doctest: +SKIP
    {'pin.angle': ...}
    """

    def __init__(self, factory: Callable, inputs, outputs, step: float, *, h: float | None = None,
                 parameters: Mapping | None = None, rho_inf: float = 0.8):
        from ..system import System
        self.step = finite_number(step, "`step`")
        if self.step <= 0:
            raise FMIError(f"`step` must be a positive number of seconds, got {step!r}")
        self.h = self.step if h is None else finite_number(h, "`h`")
        if not 0 < self.h <= self.step:
            raise FMIError(f"`h` must lie in (0, step = {self.step:g}] s, got {h!r}")
        self.rho_inf = finite_number(rho_inf, "`rho_inf`")
        self.declared_inputs = checked_inputs(inputs)
        if not callable(factory):
            raise FMIError(f"`factory` must be a function factory(**inputs, **parameters) -> flexmbs.System, got "
                           f"{type(factory).__name__}")
        parameters = dict(parameters or {})
        clash = sorted(set(parameters) & {i.name for i in self.declared_inputs})
        if clash:
            raise FMIError(f"`parameters` {clash} have the names of inputs; give them other names")
        self._held = {i.name: control.Output(i.name) for i in self.declared_inputs}
        try:
            inspect.signature(factory).bind(**self._held, **parameters)
        except TypeError as err:
            raise FMIError(f"`factory` {getattr(factory, '__name__', factory)!r} cannot be called with the inputs "
                           f"{list(self._held)} and the parameters {sorted(parameters)} as keywords: {err}") from None
        system = factory(**self._held, **parameters)
        if not isinstance(system, System):
            raise FMIError(f"`factory` {getattr(factory, '__name__', factory)!r} must return a flexmbs.System, got "
                           f"{type(system).__name__}")
        self.system = system
        self.sensors, self.scalars = output_sensors(system, outputs)
        self.inputs = {i.name: i.start for i in self.declared_inputs}
        self.outputs = {name: 0.0 for name in self.scalars}
        self.time = None
        self.status, self.message = "created", ""
        # no inputs (outputs only): the controller drives an output that nothing reads
        act = list(self._held.values()) or [control.Output(NO_INPUT)]
        self.controller = control.Controller(self.step, self.sensors, act, self._law, name="fmi")
        self._to_master: queue.Queue = queue.Queue()
        self._to_worker: queue.Queue = queue.Queue()
        self._target = None
        self._values = dict(self.inputs)
        self._worker = None
        self.results = None

    # -- the master's side ------------------------------------------------------------------------
    def start(self, t0: float = 0.0, t_end: float = 1.0) -> dict:
        """Start the run on [t0, t_end] and return the outputs at t0.  FMIError if ``t_end - t0`` is
        not a whole number of steps, or if the run cannot start (e.g. inconsistent initial state)."""
        if self._worker is not None:
            raise FMIError("the co-simulation is already started; make a new CoSimulation for another run")
        t0, t_end = finite_number(t0, "the start time"), finite_number(t_end, "the stop time")
        bad = interval_error(t0, t_end, self.step)
        if bad:
            raise FMIError(bad)
        self.t0, self.t_end = t0, t_end
        self._worker = threading.Thread(target=self._run, name="flexmbs-fmu", daemon=True)
        self._worker.start()
        self._receive()
        return dict(self.outputs)

    def advance(self, t: float, dt: float) -> dict:
        """Advance from t to t + dt with the current ``inputs`` held; return the outputs at t + dt.
        FMIError if t is not the current time, dt not a whole number of steps, t + dt beyond the
        stop time, or the run failed (its message)."""
        if self._worker is None:
            raise FMIError("`advance` before `start`: start the co-simulation first")
        if self.status != "running":
            raise FMIError(f"the co-simulation is {self.status}{': ' + self.message if self.message else ''}")
        t, dt = finite_number(t, "the communication point `t`"), finite_number(dt, "the communication step `dt`")
        tol = STEP_RTOL * self.step
        if abs(t - self.time) > tol * max(1.0, abs(t) / self.step):
            raise FMIError(f"the communication point t = {t!r} is not the FMU's time {self.time!r}")
        n = dt / self.step
        if not (dt > 0 and abs(n - round(n)) <= STEP_RTOL * max(n, 1.0)):
            raise FMIError(f"the communication step dt = {dt!r} must be a whole multiple of the FMU's step "
                           f"{self.step:g} s")
        target = self.t0 + (round((self.time - self.t0) / self.step) + round(n)) * self.step
        if target > self.t_end + tol:
            raise FMIError(f"the step to t = {t + dt:g} goes beyond the stop time {self.t_end:g} the run was "
                           "started with")
        unknown = sorted(set(self.inputs) - {i.name for i in self.declared_inputs})
        if unknown:
            raise FMIError(f"`inputs`: {unknown} are not inputs of this co-simulation; its inputs are "
                           f"{[i.name for i in self.declared_inputs]}")
        values = {name: finite_number(value, f"input {name!r}") for name, value in self.inputs.items()}
        self._to_worker.put((target, values))
        self._receive()
        return dict(self.outputs)

    def close(self) -> None:
        """End the run (before the stop time: it stops at the current time) and wait for its thread."""
        if self._worker is None:
            return
        if self._worker.is_alive():
            self._to_worker.put(None)
            self._worker.join()
        if self.status == "running":
            self.status = "closed"

    def _receive(self) -> None:
        """Wait for the worker's outputs at the next communication point (a sample, or the end of the run)."""
        kind, t, payload = self._to_master.get()
        if kind == "error":
            self.status, self.message = "failed", f"{type(payload).__name__}: {payload}"
            raise FMIError(f"the run could not go on: {self.message}") from payload
        if kind == "end" and not payload[0] == "finished":
            self.status, self.message = "failed", payload[1]
            raise FMIError(f"the run stopped after t = {self.time:.6g} (the last communication point; the outputs "
                           f"are those there): {payload[1]}")
        self._set_outputs(payload[2] if kind == "end" else payload)
        self.time = t
        self.status = "running" if kind == "sample" else "finished"

    def _set_outputs(self, sensed: dict) -> None:
        for name, (spec, k, _) in self.scalars.items():
            self.outputs[name] = float(sensed[spec] if k is None else sensed[spec][k])

    # -- the worker's side ----------------------------------------------------------------------
    def _law(self, t: float, sensed: dict):
        """The controller's law: at a communication point, hand the outputs to the master and wait for
        the inputs of the next step; between them, keep the inputs held."""
        if self._target is None or t >= self._target - STEP_RTOL * self.step:
            self._to_master.put(("sample", t, sensed))
            command = self._to_worker.get()
            if command is None:
                raise _Stopped(f"the co-simulation was ended by the master at t = {t:.6g}")
            self._target, self._values = command
        return dict(self._values) if self._held else {NO_INPUT: 0.0}

    def _run(self) -> None:
        """The run from t0 to t_end (one `flexmbs.run`), then the outputs at t_end."""
        from ..system_run import run_system
        try:
            res = run_system(self.system, formulation="index3", method="index3-alpha", h=self.h,
                             t0=self.t0, t_end=self.t_end, t_eval=np.array([self.t0, self.t_end]),
                             rho_inf=self.rho_inf, controllers=[self.controller], store=False, name="fmu")
            self.results = res
            payload = (res.status, res.message, None)
            if res.status == "finished":
                q_dot = res.v if res.q_dot is None else res.q_dot
                state = control.State(self.system, res.q[-1], q_dot[-1])
                payload = (res.status, res.message, {k: s.read(state) for k, s in self.sensors.items()})
            self._to_master.put(("end", float(res.t[-1]) if len(res.t) else self.t0, payload))
        except BaseException as err:          # noqa: BLE001 -- handed to the master, who raises it
            self._to_master.put(("error", self.t0, err))
