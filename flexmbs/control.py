"""Digital controllers: a user's control law sampled at its own period, its outputs held between
samples (zero-order hold), the compiled step running between the samples.

.. code:: text

    t_k = t0 + k T                                   sample times (k = 0, 1, ... while t_k < t_end)
    y_k = sense(q(t_k), q'(t_k))                     the declared sensed quantities
    u_k = law(t_k, y_k)                              the actuator values
    u(t) = u_k   for t_k < t <= t_k + T  (u(t0) = u_0)    held: a function of t between samples

A `Controller` declares what it reads (``sense``: `joint_angle`, `joint_rate`, `body_position`,
`body_velocity`, `body_angular_velocity`) and what it drives (``act``: `Output` signals).  An
`Output` is a function of time, the held value, so it drives a body through the time-function
loads of `flexmbs.bodies.loads` (``output.torque(axis)``, ``output.force(point, direction)``),
which the compiled kernel reads as the held values the samples set: the whole run stays on the
compiled path (`flexmbs.compiled`).  A load written as a function of the state,
``load(body, t, q, v)``, stays possible; it runs on the numpy path.

``flexmbs.run(system, method="index3-alpha", h=..., controllers=[c])`` runs the controllers: the
step is shrunk so that it divides every period (as it is aligned with the outputs:
`flexmbs.integrators.simulate.step_used`), the law is called at each sample time with the state of
the step that ends there, and the step after it applies the new values.  The compiled kernel does
this within its call (`KernelSampling`): it evaluates the sensors of `RigidBodyEP` and `RigidBodyNatural` bodies in C,
calls back into Python for the law only, and reads the held loads' vectors from an array that the
sample writes, so no chunk of steps ends at a sample.  The held value is left-continuous (u on (t_k, t_k + T]): the implicit
step that ends at t_k imposes equilibrium at t_k with the forces of its own interval, before the
law has seen the state at t_k.

Each controller keeps its samples (`Controller.record`: the sample times, the sensed values and
the outputs); a System run also writes the held value of each output at every output time to the
results file (datasets ``controls/NAME``) and describes the controllers in its metadata
(``controllers``).
"""
from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Mapping

import numpy as np

from .user_functions import UserFunctionError, evaluate, non_finite, raised

__all__ = ["Controller", "Output", "Sensor", "State", "joint_angle", "joint_rate", "body_position", "body_velocity",
           "body_angular_velocity", "ControlLoop", "ControlError"]

SAMPLE_RTOL = 1e-9      # a time within SAMPLE_RTOL T of a sample time is that sample time


class ControlError(ValueError):
    """A controller, its sensors or outputs given wrongly, or read where no controller samples them."""


# -- outputs: held values, functions of t ----------------------------------------------------------
class Output:
    """An actuator value set by a `Controller` at its samples and held in between (zero-order hold).

    ``output(t)`` is the value held at t (left-continuous: the value of the last sample before t,
    the first sample's at t0), so an Output is a function of time for the loads of
    `flexmbs.bodies.loads`; `torque` and `force` make those loads.

    Parameters
    ----------
    name : str
        The name the law's returned dict uses, and the results file's dataset ``controls/NAME``.
    shape : tuple, default ()
        () for a number (a torque about an axis, a force along a direction), (3,) for a vector.
    """

    def __init__(self, name: str, shape=()):
        if not isinstance(name, str) or not name or "/" in name:
            raise ControlError(f"Output: `name` must be a non-empty string without '/', got {name!r}")
        if shape not in ((), (3,), [3]):
            raise ControlError(f"Output {name!r}: `shape` must be () (a number) or (3,) (a vector), got {shape!r}")
        self.name = name
        self.shape = tuple(shape)
        self._owner = None                 # its Controller
        self._running = False
        self._times: list[float] = []
        self._values: list = []
        self._period = math.inf

    def __repr__(self) -> str:
        return f"Output({self.name!r}, shape={self.shape})"

    #: a function of time that also takes an array of times (`flexmbs.bodies.loads.values_of_time`: the powers of
    #: its loads over a block of outputs in one call, `at_times`)
    vectorized = True

    def __call__(self, t):
        """The value held at t: u_k for t_k < t <= t_k + T, u_0 at t <= t0; at an array of times t (n,), the
        values (n, *shape) at once (`at_times`)."""
        if np.ndim(t):
            return self.at_times(np.asarray(t, dtype=float))
        if not self._running:
            owner = ("no Controller has sampled it" if self._owner is None
                     else f"its Controller {self._owner.name!r} is not running; after a run read `held(t)`")
            raise ControlError(f"control output {self.name!r} is read at t = {float(t):.6g} outside a controlled run "
                               f"({owner}); pass its Controller to flexmbs.run(system, method='index3-alpha', "
                               "controllers=[...])")
        times = self._times
        tol = SAMPLE_RTOL * self._period
        if t > times[-1] + tol:
            if t > times[-1] + self._period + tol:
                raise ControlError(f"control output {self.name!r} is read at t = {float(t):.6g}, beyond its hold "
                                   f"interval ({times[-1]:.6g}, {times[-1] + self._period:.6g}]: the integrator did not "
                                   "stop at the sample time")
            return self._values[-1]
        return self._values[max(bisect.bisect_left(times, t - tol) - 1, 0)]

    def held(self, t) -> np.ndarray:
        """The held values at the times ``t`` (n,) at once, (n, *shape), as `__call__` gives them
        (the results' ``controls/NAME``)."""
        t = np.asarray(t, dtype=float)
        if not self._times:
            return np.zeros((len(t), *self.shape))
        times = np.asarray(self._times)
        k = np.maximum(np.searchsorted(times, t - SAMPLE_RTOL * self._period, side="left") - 1, 0)
        return np.asarray(self._values, dtype=float).reshape(len(times), *self.shape)[k]

    def at_times(self, t) -> np.ndarray:
        """The held values at the times ``t`` (k,) (the step times of one chunk of the compiled kernel, the
        outputs or Gauss points of the works' powers), (k, *shape): those of `__call__` at each time (the
        error of a read outside the run or beyond the hold checked at the latest time), at once."""
        t = np.asarray(t, dtype=float).reshape(-1)
        if not len(t):
            return np.zeros((0, *self.shape))
        first, latest = float(t.min()), float(t.max())
        times, tol = self._times, SAMPLE_RTOL * self._period
        if self._running and times[-1] + tol < first and latest <= times[-1] + self._period + tol:
            last = self._values[-1]                      # the whole chunk in the current hold
            return np.full(len(t), last) if self.shape == () else np.tile(last, (len(t), 1))
        self(latest)                                     # the error of a read outside the run or the hold
        return self.held(t)

    def torque(self, axis=None, local: bool = False, sign: float = 1.0):
        """A `flexmbs.bodies.loads.torque_load` of this output: ``sign * u(t) * axis`` for a number
        (``axis`` global, or body-fixed if ``local``), ``sign * u(t)`` for a vector.  A torque between
        two bodies: ``u.torque(axis_j, local=True)`` on body j and ``u.torque(axis_i, local=True,
        sign=-1)`` on body i (both the joint's axis, in each body's coordinates)."""
        from .bodies.loads import torque_load
        return torque_load(self._vector_of(axis, "torque", "axis", sign), local=local)

    def force(self, point, direction=None, local: bool = False, sign: float = 1.0):
        """A `flexmbs.bodies.loads.point_load` at the body point ``point``: ``sign * u(t) * direction``
        for a number, ``sign * u(t)`` for a vector (global, or body-fixed if ``local``)."""
        from .bodies.loads import point_load
        return point_load(point, self._vector_of(direction, "force", "direction", sign), local=local)

    def _vector_of(self, direction, what: str, arg: str, sign: float) -> Callable:
        """t -> sign u(t) e (a number u along the given vector e), or sign u(t) (a vector u)."""
        sign = float(sign)
        if self.shape == (3,):
            if direction is not None:
                raise ControlError(f"Output {self.name!r} is a vector: its {what} takes no `{arg}`, got {direction!r}")
            e = np.eye(3)
        else:
            try:
                e = np.asarray(direction, dtype=float)
            except (TypeError, ValueError):
                e = None
            if e is None or e.shape != (3,) or not np.all(np.isfinite(e)):
                raise ControlError(f"Output {self.name!r}.{what}: `{arg}` must be a vector of 3 finite numbers, got "
                                   f"{direction!r}")
        return _Scaled(self, sign * e)

    # the controller's side
    def _start(self, owner, period: float) -> None:
        self._owner, self._period, self._running = owner, period, True
        self._times, self._values = [], []

    def _hold(self, t: float, value) -> None:
        self._times.append(t)
        self._values.append(value)


class _Scaled:
    """t -> u(t) E of an `Output` u: its value times a direction (a number) or a matrix (a vector), the
    function of time of its loads; ``at_times`` gives a chunk's step times at once (`flexmbs.compiled`), and
    so does a call with an array of times (``vectorized``: the loads' powers over a block of outputs,
    `flexmbs.bodies.loads.values_of_time`)."""

    vectorized = True

    def __init__(self, output: Output, E: np.ndarray):
        self.output, self.E = output, E

    def __call__(self, t) -> np.ndarray:
        """u(t) E (3,) at one time; (n, 3) at an array of times t (n,) (`at_times`)."""
        if np.ndim(t):
            return self.at_times(np.asarray(t, dtype=float))
        return self.output(t) * self.E if self.output.shape == () else self.E @ self.output(t)

    def at_times(self, t) -> np.ndarray:
        u = self.output.at_times(t)
        return u[:, None] * self.E if self.output.shape == () else u @ self.E.T


# -- sensors ------------------------------------------------------------------------------------
class State:
    """The state at one sample as the sensors read it: the System, q, q' and each body's rotation A
    and global angular velocity omega, each computed once per sample however many sensors read it."""

    def __init__(self, system, q, v):
        self.system, self.q, self.v = system, q, v
        self._rotations: dict = {}
        self._omegas: dict = {}

    def coordinates(self, body):
        """(q, q') of ``body``."""
        sl = self.system.slice(body)
        return self.q[sl], self.v[sl]

    def rotation(self, body) -> np.ndarray:
        """A (body -> global) of ``body``."""
        key = id(body)
        if key not in self._rotations:
            self._rotations[key] = body.rotation(self.coordinates(body)[0])
        return self._rotations[key]

    def angular_velocity(self, body) -> np.ndarray:
        """The global angular velocity of ``body`` (the ground, None: zero)."""
        if body is None:
            return np.zeros(3)
        key = id(body)
        if key not in self._omegas:
            self._omegas[key] = np.asarray(body.angular_velocity(*self.coordinates(body)), dtype=float)
        return self._omegas[key]

    def direction(self, body, u) -> np.ndarray:
        """Global components A u of the body-fixed direction u (the ground, None: u itself)."""
        return u if body is None else self.rotation(body) @ u


class Sensor:
    """What a controller reads from the state at a sample: ``read(state)`` of a `State`; its bodies
    must be the System's.  Made by `joint_angle`, `joint_rate`, `body_position`, `body_velocity` and
    `body_angular_velocity`.

    ``kernel`` declares the same quantity for the compiled kernel, which evaluates it in C at the
    sample when its bodies are `RigidBodyEP` or `RigidBodyNatural` bodies or the ground (csrc/index3_kernel.c ``sense``;
    `KernelSampling`): (kind, {name: body-fixed vector}), kind one of `flexmbs.compiled.SENSOR_KINDS`; None:
    read in Python from a `State`.  `from_kernel` turns the kernel's numbers into the value.  The
    vectors are named by the fields of `flexmbs.kernel_schema.SENSOR_R` ("u", "w", "x")."""

    def __init__(self, what: str, bodies: tuple, read: Callable, shape=(), kernel: tuple | None = None):
        self.what, self.bodies, self.read, self.shape = what, bodies, read, tuple(shape)
        self.kernel = kernel

    def from_kernel(self, raw: np.ndarray):
        """The sensed value from the kernel's numbers ``raw`` (its width): a float, or a copy."""
        return float(raw[0]) if self.shape == () else raw.copy()

    def __repr__(self) -> str:
        return self.what

    def check(self, system) -> None:
        """ControlError naming the body of this sensor that is not a body of ``system``."""
        members = {id(b) for b in system.bodies}
        for b in self.bodies:
            if b is not None and id(b) not in members:
                raise ControlError(f"sensor {self.what}: body {b.name!r} is not a body of the System run")

    def reset(self) -> None:
        """Forget what the last run left (`joint_angle`'s last angle, for the unwrapping)."""


def _revolute(joint, maker: str):
    from .constraints.joints import Revolute
    if not isinstance(joint, Revolute):
        raise ControlError(f"{maker}: `joint` must be a flexmbs.constraints.Revolute, got "
                           f"{type(joint).__name__}{' ' + repr(joint.name) if hasattr(joint, 'name') else ''}")
    return joint


class _JointAngle(Sensor):
    """`joint_angle`: keeps the last angle to unwrap the next one."""

    def __init__(self, joint):
        (self._bi, self._bj), (Ri, Rj) = joint.bodies, joint.R     # R_k: the joint frame in body k (ground: global)
        self._xi, self._yi, self._xj = Ri[:, 0].copy(), Ri[:, 1].copy(), Rj[:, 0].copy()
        self._last = None
        super().__init__(f"joint_angle({joint.name!r})", joint.bodies, self._angle,
                         kernel=("angle", {"u": self._xi, "w": self._yi, "x": self._xj}))

    def _angle(self, state: State) -> float:
        xj = state.direction(self._bj, self._xj)
        return self._unwrapped(math.atan2(float(xj @ state.direction(self._bi, self._yi)),
                                          float(xj @ state.direction(self._bi, self._xi))))

    def from_kernel(self, raw: np.ndarray) -> float:
        return self._unwrapped(float(raw[0]))

    def _unwrapped(self, theta: float) -> float:
        """theta + 2 pi k nearest the last sample's angle (continuous across +-pi); kept as the last."""
        if self._last is not None:
            theta += 2 * math.pi * round((self._last - theta) / (2 * math.pi))
        self._last = theta
        return theta

    def reset(self) -> None:
        self._last = None


def joint_angle(joint) -> Sensor:
    """The angle [rad] of body j relative to body i about a `Revolute` joint's axis, zero in the
    configuration the joint was built in, positive by the right-hand rule about the axis, continuous
    across +-pi (unwrapped against the last sample):

    .. code:: text

        theta = atan2(x_j . y_i, x_j . x_i),   (x, y)_k = A_k R_k[:, 0:2]   (R_k: the joint frame in body k)
    """
    return _JointAngle(_revolute(joint, "joint_angle"))


def joint_rate(joint) -> Sensor:
    """The rate [rad/s] of `joint_angle`: (omega_j - omega_i) . z_i, z_i = A_i R_i[:, 2]."""
    joint = _revolute(joint, "joint_rate")
    (bi, bj), zi = joint.bodies, joint.R[0][:, 2].copy()

    def read(state):
        return float((state.angular_velocity(bj) - state.angular_velocity(bi)) @ state.direction(bi, zi))
    return Sensor(f"joint_rate({joint.name!r})", (bi, bj), read, kernel=("rate", {"u": zi}))


def _body(body, maker: str):
    from .bodies.base import Body
    if not isinstance(body, Body):
        raise ControlError(f"{maker}: `body` must be a body of the System (e.g. a RigidBodyEP), got "
                           f"{type(body).__name__}")
    return body


def _point(body, point, maker: str) -> np.ndarray:
    try:
        s = np.asarray(point, dtype=float)
    except (TypeError, ValueError):
        s = None
    if s is None or s.shape != (body.dim,) or not np.all(np.isfinite(s)):
        raise ControlError(f"{maker}: `point` must be {body.dim} finite numbers (a point in body {body.name!r}'s "
                           f"coordinates), got {point!r}")
    return s


def body_position(body, point=None) -> Sensor:
    """The global position [m] of the body point ``point`` (default the body's reference point)."""
    body = _body(body, "body_position")
    s = _point(body, np.zeros(body.dim) if point is None else point, "body_position")
    return Sensor(f"body_position({body.name!r})", (body,),
                  lambda state: body.point(state.coordinates(body)[0], s), (body.dim,), kernel=("position", {"u": s}))


def body_velocity(body, point=None) -> Sensor:
    """The global velocity [m/s] of the body point ``point`` (default the reference point)."""
    body = _body(body, "body_velocity")
    s = _point(body, np.zeros(body.dim) if point is None else point, "body_velocity")
    return Sensor(f"body_velocity({body.name!r})", (body,),
                  lambda state: body.point_velocity(*state.coordinates(body), s), (body.dim,),
                  kernel=("velocity", {"u": s}))


def body_angular_velocity(body) -> Sensor:
    """The body's global angular velocity [rad/s] ((3,) in 3D, a number in 2D)."""
    body = _body(body, "body_angular_velocity")
    return Sensor(f"body_angular_velocity({body.name!r})", (body,),
                  lambda state: body.angular_velocity(*state.coordinates(body)), (3,) if body.dim == 3 else (),
                  kernel=("omega", {}))


# -- the controller -----------------------------------------------------------------------------
class Controller:
    """A digital controller: ``law(t, sensed) -> outputs`` called every ``period`` seconds from t0,
    its outputs held in between.

    Parameters
    ----------
    period : float
        The sample period T [s].
    sense : dict[str, Sensor]
        What the law reads, by name: ``sensed[name]`` is the sensor's value at the sample.
    act : Output or sequence of Output
        What the law drives.
    law : callable
        ``law(t, sensed) -> {output name: value}`` (with one output, its value alone may be returned):
        a number for an Output of shape (), 3 numbers for shape (3,).
    name : str, optional
        For messages and the metadata; default "controller".
    """

    def __init__(self, period, sense: Mapping, act, law: Callable, name: str = "controller"):
        self.name = str(name)
        try:
            T = float(period)
        except (TypeError, ValueError):
            T = math.nan
        if not (math.isfinite(T) and T > 0) or isinstance(period, bool):
            raise ControlError(f"Controller {self.name!r}: `period` must be a positive number of seconds, got "
                               f"{period!r}")
        if not isinstance(sense, Mapping) or not all(isinstance(k, str) and isinstance(s, Sensor)
                                                     for k, s in sense.items()):
            raise ControlError(f"Controller {self.name!r}: `sense` must be a dict {{name: sensor}} of "
                               "flexmbs.control sensors (joint_angle, joint_rate, body_position, ...), got "
                               f"{sense!r}")
        outputs = [act] if isinstance(act, Output) else list(act) if isinstance(act, (list, tuple)) else None
        if not outputs or not all(isinstance(o, Output) for o in outputs):
            raise ControlError(f"Controller {self.name!r}: `act` must be an Output or a non-empty list of "
                               f"flexmbs.control.Output, got {act!r}")
        names = [o.name for o in outputs]
        if len(set(names)) != len(names):
            raise ControlError(f"Controller {self.name!r}: the outputs of `act` must have distinct names, got {names}")
        if not callable(law):
            raise ControlError(f"Controller {self.name!r}: `law` must be callable law(t, sensed) -> outputs, got "
                               f"{type(law).__name__}")
        self.period, self.sense, self.outputs, self.law = T, dict(sense), outputs, law
        self._names = {o.name: None for o in outputs}.keys()
        self._record_t: list[float] = []
        self._record_sensed: list[dict] = []

    def _checked(self, o: Output, value, t: float):
        """The law's ``value`` for output ``o``: a float (shape ()) or a (3,) array, finite;
        `UserFunctionError` naming the controller, the output and t otherwise."""
        what = f"the law of controller {self.name!r}"
        if o.shape == () and type(value) is float or isinstance(value, (int, np.floating)):
            u = float(value)
            if not math.isfinite(u):
                raise non_finite(f"{what} (output {o.name!r})", t, repr(value))
            return u
        try:
            u = np.array(value, dtype=float)
        except (TypeError, ValueError):
            u = None
        if u is None or u.shape != o.shape or isinstance(value, (bool, str)):
            raise UserFunctionError(f"{what} returned {value!r} for output {o.name!r} at t = {t:.6g}; it must be "
                                    f"{'a number' if o.shape == () else '3 numbers'}")
        if not np.all(np.isfinite(u)):
            raise non_finite(f"{what} (output {o.name!r})", t, repr(value))
        return float(u) if o.shape == () else u

    def __repr__(self) -> str:
        return f"Controller({self.name!r}, period={self.period:g}, outputs={[o.name for o in self.outputs]})"

    @property
    def record(self) -> dict:
        """The samples of the last run: ``t`` (n_s,), ``sensed`` {name: (n_s, ...)} and ``outputs``
        {name: (n_s, ...)} (the values held from each sample time)."""
        n = len(self._record_t)
        return {"t": np.array(self._record_t, dtype=float),
                "sensed": {k: np.array([s[k] for s in self._record_sensed], dtype=float).reshape(n, *s_.shape)
                           for k, s_ in self.sense.items()},
                "outputs": {o.name: np.asarray(o._values, dtype=float).reshape(n, *o.shape) for o in self.outputs}}

    def describe(self) -> dict:
        """The controller for a run's metadata: name, period, sensors, outputs."""
        return {"name": self.name, "period": self.period, "sense": {k: repr(s) for k, s in self.sense.items()},
                "act": [o.name for o in self.outputs]}

    def _start(self, system) -> None:
        for s in self.sense.values():
            s.check(system)
            s.reset()
        for o in self.outputs:
            o._start(self, self.period)
        self._record_t, self._record_sensed = [], []

    def _stop(self) -> None:
        for o in self.outputs:
            o._running = False

    def sample(self, state: State, t: float) -> None:
        """Read the sensors in ``state`` (a `State` at t), call the law, check and hold its outputs from t on.
        `flexmbs.user_functions.UserFunctionError` naming the controller if the law raises, gives
        other outputs than ``act`` or values of the wrong shape, NaN or inf."""
        self.apply(t, {k: s.read(state) for k, s in self.sense.items()})

    def apply(self, t: float, sensed: dict) -> None:
        """Call the law with the ``sensed`` values at t, check and hold its outputs from t on (`sample`,
        whose errors it raises; `KernelSampling` reads the sensors itself)."""
        try:
            out = self.law(t, sensed)
        except Exception as err:            # `evaluate`, without building the name at every sample
            raise raised(f"the law of controller {self.name!r}", t, err) from err
        if type(out) is not dict and not isinstance(out, Mapping):
            if len(self.outputs) != 1:
                raise UserFunctionError(f"the law of controller {self.name!r} returned {type(out).__name__} at t = "
                                        f"{t:.6g}; with several outputs it must return a dict {{name: value}} with "
                                        f"the names {[o.name for o in self.outputs]}")
            out = {self.outputs[0].name: out}
        if out.keys() != self._names:
            raise UserFunctionError(f"the law of controller {self.name!r} returned the outputs {sorted(out)} at t = "
                                    f"{t:.6g}; it must return exactly {sorted(self._names)}")
        values = [self._checked(o, out[o.name], t) for o in self.outputs]
        self._record_t.append(t)
        self._record_sensed.append(sensed)
        for o, value in zip(self.outputs, values):
            o._hold(t, value)


class ControlLoop:
    """The controllers of one run, for `flexmbs.simulate`: samples each at t0 + k T_c, the steps
    counted on the step grid t0 + n h (T_c = N_c h): `start` at t0, `due` and `sample` after a step
    (the numpy path), or `kernel_sampling` for the compiled kernel, which samples within its steps."""

    def __init__(self, system, controllers, state: Callable):
        if isinstance(controllers, Controller):
            controllers = [controllers]
        if not isinstance(controllers, (list, tuple)) or not all(isinstance(c, Controller) for c in controllers):
            raise ControlError(f"`controllers` must be a list of flexmbs.control.Controller, got {controllers!r}")
        if len({id(c) for c in controllers}) != len(controllers):
            raise ControlError("`controllers` lists the same Controller twice")
        names = [o.name for c in controllers for o in c.outputs]
        if len(set(names)) != len(names):
            raise ControlError(f"`controllers`: the outputs of all controllers must have distinct names, got {names}")
        self.system, self.controllers, self._state = system, list(controllers), state
        self.periods = [c.period for c in self.controllers]
        self._every = None
        self.outputs = [o for c in self.controllers for o in c.outputs]

    def start(self, t0: float, h: float, x0) -> None:
        """Steps per period N_c = T_c / h (ControlError unless h divides every period) and the
        samples at t0."""
        every = [T / h for T in self.periods]
        bad = [T for T, n in zip(self.periods, every) if abs(n - round(n)) > SAMPLE_RTOL * n or round(n) < 1]
        if bad:
            raise ControlError(f"the controllers' periods {self.periods} are not all whole multiples of the step "
                               f"h = {h:g} s (not {bad}); give periods that are multiples of the shortest one")
        self._every = [int(round(n)) for n in every]
        for c in self.controllers:
            c._start(self.system)
        self.sample(t0, x0, 0)

    def due(self, n_steps: int) -> bool:
        return any(n_steps % N == 0 for N in self._every)

    def sample(self, t: float, x, n_steps: int) -> None:
        """Sample the controllers due at step ``n_steps`` (time t, state x)."""
        state = State(self.system, *self._state(t, x))
        for c, N in zip(self.controllers, self._every):
            if n_steps % N == 0:
                c.sample(state, float(t))

    def stop(self) -> None:
        for c in self.controllers:
            c._stop()

    def held(self, T) -> dict[str, np.ndarray]:
        """The value of each output at the times T (n,): ``controls/NAME`` of the results file."""
        return {f"controls/{o.name}": o.held(T) for o in self.outputs}

    def kernel_sampling(self, compiled, q: np.ndarray, v: np.ndarray) -> KernelSampling:
        """The `KernelSampling` of these controllers for the compiled system ``compiled``, whose kernel
        keeps the state in ``q``, ``v`` (read in place at the samples)."""
        return KernelSampling(self.system, list(zip(self.controllers, self._every)), compiled, q, v)


class KernelSampling:
    """The controllers sampled from inside the compiled kernel's steps: one kernel call runs many
    samples (csrc/index3_kernel.c ``steps``, its control tuple; `flexmbs.compiled.CompiledSystem.steps`).

    After each step that ends at a sample time t_k the kernel evaluates the sensors of `RigidBodyEP` and
    `RigidBodyNatural` bodies and the ground in C (``Sensor.kernel``) into ``sensed`` and calls this object with the
    step's index; it reads the other sensors in Python from the kernel's (q, v), calls the laws of
    the controllers due (`Controller.apply`) and writes the held load vectors of the next step,
    u(t_{k+1}) E of each held load (`flexmbs.compiled.CompiledSystem.held_loads`), to ``held``, which
    the kernel reads instead of a tabulated function of t.  Between samples no Python runs.

    ``error``: (stage, exception) of the sample that stopped the steps ("sample": the law or a sensor,
    a `UserFunctionError` or ArithmeticError; "held": a held output read at the next step's time; "raise":
    any other exception, which the integrator raises), else None.
    """

    def __init__(self, system, due: list, compiled, q: np.ndarray, v: np.ndarray):
        from .compiled import SENSOR_WIDTH
        self.system, self._q, self._v = system, q, v
        self._loads = compiled.held_loads
        self.held = np.zeros(3 * compiled.n_vectors)
        self.held_mask = np.zeros(compiled.n_vectors, dtype=np.int64)
        self.held_mask[[k for k, _, _ in self._loads]] = 1
        ints, reals, width = [], [], 0
        self._plan = []                    # (controller, steps per period, [(name, sensor, slice or None)])
        for c, N in due:
            reads = []
            for name, sensor in c.sense.items():
                row = None if sensor.kernel is None else compiled.sensor_row(*sensor.kernel[:1], sensor.bodies,
                                                                             sensor.kernel[1], width)
                if row is None:
                    reads.append((name, sensor, None))
                    continue
                ints.append(row[0])
                reals.append(row[1])
                w = SENSOR_WIDTH[sensor.kernel[0]]
                reads.append((name, sensor, slice(width, width + w)))
                width += w
            self._plan.append((c, N, reads))
        self.sensor_ints = np.array(ints, dtype=np.int64).reshape(-1)
        self.sensor_reals = np.array(reals, dtype=float).reshape(-1)
        self.sensed = np.zeros(width)
        self._every = np.array([N for _, N, _ in self._plan], dtype=np.int64)
        self._base, self._times = 0, np.zeros(0)
        self.error = None

    def control(self, n_steps: int, times: np.ndarray, t_end: float) -> tuple | None:
        """The control tuple of the kernel's call for the steps ``n_steps + 1, ...`` ending at ``times``:
        the held vectors are first set for the first of them; None (``error`` set) if a held output
        fails there.  No sample at t_end, where the run ends (as on the numpy path)."""
        self._base, self._times, self.error = n_steps, times, None
        if not self._fill(float(times[0])):
            return None
        j = n_steps + 1 + np.arange(len(times), dtype=np.int64)
        sample_at = ((j[:, None] % self._every[None, :] == 0).any(axis=1) & (times < t_end)).astype(np.int64)
        return (sample_at, self, self.held, self.held_mask, self.sensor_ints, self.sensor_reals, self.sensed)

    def __call__(self, step: int) -> bool:
        """The kernel's call after step ``step`` of the chunk (ending at a sample time): sample the
        controllers due there and set the held vectors of the next step; False (``error`` set) stops the
        kernel after this step."""
        t = float(self._times[step])
        n_steps = self._base + step + 1
        try:
            state = None
            for c, N, reads in self._plan:
                if n_steps % N:
                    continue
                sensed = {}
                for name, sensor, at in reads:
                    if at is not None:
                        sensed[name] = sensor.from_kernel(self.sensed[at])
                        continue
                    if state is None:          # a sensor the kernel does not evaluate: the numpy one
                        state = State(self.system, self._q.copy(), self._v.copy())
                    sensed[name] = sensor.read(state)
                c.apply(t, sensed)
        except (UserFunctionError, ArithmeticError) as err:     # the run stops with its message
            self.error = ("sample", err)
            return False
        except Exception as err:               # not the user's function's: raised after the kernel's call
            self.error = ("raise", err)
            return False
        return step + 1 >= len(self._times) or self._fill(float(self._times[step + 1]))

    def _fill(self, t: float) -> bool:
        """The held load vectors at t (u(t) E, as the loads' functions of t give them) into ``held``."""
        try:
            for k, f, what in self._loads:
                value = np.ravel(evaluate(what, t, f, t))
                self.held[3 * k:3 * k + value.size] = value     # a planar torque or force: its first 1 or 2
        except Exception as err:
            self.error = ("held", err)
            return False
        return True


def control_step(h: float, periods, aligned: float) -> float:
    """The step of a controlled run: ``aligned`` (h aligned with the outputs) if it divides every
    sample period, else the shortest period divided into whole steps of at most h,
    T_min / ceil(T_min / h) (the outputs then come from the dense output)."""
    def divides(step):
        return all(abs(T / step - round(T / step)) <= SAMPLE_RTOL * T / step for T in periods)
    if divides(aligned):
        return aligned
    T = min(periods)
    return T / math.ceil(T / h * (1 - 1e-12))
