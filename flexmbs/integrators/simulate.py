"""The driver: `simulate` steps an integrator from the registry and collects the outputs.

.. code:: text

    simulate(formulation, (t0, t_end), x0, method)  ->  Solution(t, x, integrals, status, ...)

The formulation is asked for its term once (``formulation.term()``, `flexmbs.formulations.terms`;
a term is taken as it is); the integrator sees only the term, and whether the method fits it
is checked in one place (`flexmbs.integrators.base.check_fits`).

Outputs are at exactly the requested ``t_eval`` (default: every step point): a step point
is used as is, any other time is evaluated by the method's dense output on the step that
contains it.  For a fixed-step method and equally spaced ``t_eval`` aligned with the step
grid ``t0 + k h``, ``h`` is shrunk to ``dt_out / ceil(dt_out / h)`` so that every output time
is a step point; otherwise the outputs come from the Hermite dense output.

``integrand(t, x) -> (k,)`` is integrated from t0 step by step, by Gauss-Legendre on the dense
interpolant of each step with the fewest points n whose error stays below the method's
(`step_rule`): n points leave O(h^(2n+1)) a step, O(h^(2n)) over a run, and a fixed-step method of
order p leaves O(h^p), so 2n >= p + 1, n = p // 2 + 1: 2 points for the second-order methods
(midpoint, generalized-alpha), 3 for AB4.  The adaptive methods (RK45, DOP853, Radau, BDF), whose
steps are as long as their tolerance allows, and an integrand that says it is not smooth
(``integrand.smooth = False``: a contact's power) take 5 (exact to degree 9).  The integral at the
step points does not depend on the outputs; at an output inside a step it is the integral of the
polynomial through the step's n Gauss values (`StepRule.partial_weights`, O(h^(n+1)) on that
step alone, not accumulated).

``step_integrand(t, x, lam) -> (N, k)`` (N states at once, with the method's multipliers) is
integrated by the trapezoidal rule over the steps, at every step, on the compiled path as on the
numpy path (`trapezoid_over_steps`): the quadrature of a second-order method (index3-alpha), whose
multipliers are known at the step points only.  Its integral at an output does not depend on the
other outputs, and a run stopped early keeps it up to its last output.
"""
from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from .budget import check_run_size, check_step_fits
from ..formulations.terms import as_term
from ..frozen import FrozenFields
from ..lazy import LazyTable
from ..quadrature import gauss_legendre
from .base import (Integrator, check_options, validate_h, validate_t_span, validate_tolerances,
                   validate_x0)

if TYPE_CHECKING:
    from .exact import ExactLinear

__all__ = ["INTEGRATORS", "Solution", "simulate", "step_used", "trapezoid_over_steps", "StepRule", "step_rule"]

log = logging.getLogger(__name__)

# method name -> "module:class", each imported when a run asks for it (`flexmbs.lazy.LazyTable`):
# a compiled index3-alpha run loads neither RATTLE's augmented solver nor scipy's Radau and BDF
INTEGRATORS: Mapping[str, type[Integrator]] = LazyTable({
    "RK45": "flexmbs.integrators.rk:RK45",
    "DOP853": "flexmbs.integrators.rk:DOP853",
    "AB4": "flexmbs.integrators.adams_bashforth:AdamsBashforth4",
    "midpoint": "flexmbs.integrators.midpoint:ImplicitMidpoint",
    "generalized-alpha": "flexmbs.integrators.generalized_alpha:GeneralizedAlpha",
    "Radau": "flexmbs.integrators.rk:Radau",
    "BDF": "flexmbs.integrators.rk:BDF",
    "index3-alpha": "flexmbs.integrators.index3_alpha:Index3GeneralizedAlpha",
    "index3-alpha-adaptive": "flexmbs.integrators.index3_alpha:Index3AdaptiveAlpha",
    "hht": "flexmbs.integrators.index3_alpha:Index3HHT",
    "newmark": "flexmbs.integrators.index3_alpha:Index3Newmark",
    "rattle": "flexmbs.integrators.rattle:Rattle",
    "radau-dae": "flexmbs.integrators.radau_dae:RadauDAE",
    "exact": "flexmbs.integrators.exact:ExactLinear",
})

MAX_STEP_POINTS = 5             # Gauss points a step at most (exact to degree 9: DOP853's order 8 needs 5)
STEP_POINT_RTOL = 1e-9          # an output time this close (relative to h) to a step point is that point


class Solution(FrozenFields):
    """What `simulate` returns; on failure the outputs computed before it are kept.

    Attributes
    ----------
    t : ndarray, shape (n_out,)
    x : ndarray, shape (n_out, n_state)
    integrals : ndarray, shape (n_out, k), or None
        Integral of ``integrand`` (or ``step_integrand``) from t0 to each output time.
    status : {"finished", "failed", "diverged"}
    message : str
    success : bool
        ``status == "finished"``.
    n_rhs, n_jac, n_lu, n_steps, n_rejected : int
        The integrator's counters.
    n_lin_iter : int
        Krylov iterations of the linear solves in all (0 where every solve is direct).
    n_newton : int
        Newton iterations in all, of the methods that count them (``index3-alpha`` and its variants,
        ``radau-dae``, ``rattle``); 0 for the others.
    wall_time : float
        Seconds spent in `simulate`.
    method : str
    order : int
        Declared order of the method.
    kernel : str or None
        Where index3-alpha ran its steps ("compiled" or "numpy"); None for the other methods.
    h : float or None
        The step a fixed-step method took (`step_used`: ``h`` aligned with the outputs); for
        the adaptive methods the first trial step given, or None.
    kernel_reason : str or None
        Why index3-alpha ran on the numpy path (e.g. a user's load of the state, which the compiled
        kernel cannot evaluate; `flexmbs.compiled.CompiledSystem`); None on the compiled path and
        for the other methods.
    lam : ndarray, shape (n_out, n_c), or None
        index3-alpha: the multipliers of its own solution at each output (those of the step at a
        step point, linear in t between step points: `Index3GeneralizedAlpha.dense_multipliers`),
        on both paths; None for the other methods.
    """

    def __init__(self, t: np.ndarray, x: np.ndarray, integrals: np.ndarray | None, status: str, message: str,
                 success: bool, n_rhs: int, n_jac: int, n_lu: int, n_steps: int, n_rejected: int, wall_time: float,
                 method: str, order: int, n_lin_iter: int = 0, n_newton: int = 0, kernel: str | None = None,
                 h: float | None = None, lam: np.ndarray | None = None, kernel_reason: str | None = None):
        self._set_fields(locals())


def validate_method(method) -> type[Integrator]:
    """The integrator class registered under ``method``."""
    if method not in INTEGRATORS:
        raise ValueError(f"`method` must be one of {', '.join(repr(m) for m in INTEGRATORS)}, "
                         f"got {method!r}.")
    return INTEGRATORS[method]


def validate_t_eval(t_eval, t0: float, t_end: float) -> np.ndarray | None:
    """Sorted output times within t_span."""
    if t_eval is None:
        return None
    t_eval = np.asarray(t_eval, dtype=float)
    if t_eval.ndim != 1 or t_eval.size == 0:
        raise ValueError(f"`t_eval` must be a non-empty 1-D array of times, got shape {t_eval.shape}.")
    if not np.all(np.isfinite(t_eval)):
        raise ValueError("`t_eval` must be finite.")
    if np.any(np.diff(t_eval) < 0):
        raise ValueError("`t_eval` must be sorted (increasing).")
    if t_eval[0] < t0 or t_eval[-1] > t_end:
        raise ValueError(f"`t_eval` must lie within `t_span` = ({t0!r}, {t_end!r}), "
                         f"got [{t_eval[0]!r}, {t_eval[-1]!r}].")
    return t_eval


def validate_callable(value, name: str):
    if value is not None and not callable(value):
        raise TypeError(f"`{name}` must be callable or None, got {type(value).__name__}.")
    return value


def aligned_step(h: float, t0: float, t_eval: np.ndarray | None) -> float:
    """h shrunk so that equally spaced output times aligned with t0 + k h are step points."""
    if t_eval is None or t_eval.size < 2:
        return h
    dt_out = np.diff(t_eval)
    if dt_out.size > 1 and dt_out[-1] < dt_out[0] * (1 - 1e-9):
        dt_out = dt_out[:-1]                         # a shorter last interval ending at t_end (output_times)
    if dt_out[0] <= 0 or np.max(np.abs(dt_out - dt_out[0])) > 1e-9 * dt_out[0]:
        return h                                     # not equally spaced
    h_out = dt_out[0] / np.ceil(dt_out[0] / h * (1 - 1e-12))
    k0 = (t_eval[0] - t0) / h_out
    if abs(k0 - round(k0)) > 1e-9 * max(1.0, k0):
        return h                                     # not on a grid from t0
    return h_out


def step_used(method: str, h: float | None, t0: float, t_eval, warn: bool = True, periods=None) -> float | None:
    """The step a run of ``method`` takes for a requested ``h``: for a fixed-step method and
    equally spaced output times, ``aligned_step`` (h shrunk to dt_out / ceil(dt_out / h)); else
    ``h``.  A step larger than the output interval becomes the output interval, with a warning
    (``warn``; `flexmbs.run` asks for the step it records without one: `simulate` warns).
    With controllers (``periods``: their sample periods) the step must also divide every period
    (`flexmbs.control.control_step`: the aligned step if it does, else the shortest period in whole
    steps of at most h, the outputs then from the dense output)."""
    cls = validate_method(method)
    if h is None or cls.uses_tolerances:
        return h
    t_eval = None if t_eval is None else np.asarray(t_eval, dtype=float)
    used = aligned_step(h, t0, t_eval)
    if periods:
        from ..control import control_step
        used = control_step(h, periods, used)
    if used < h * (1 - 1e-12) and warn:
        # larger than the output interval beyond round-off (a caller's h = dt_out (1 + 1e-9), kept off
        # the ceil's edge, is the output interval)
        if (t_eval is not None and len(t_eval) > 1 and used * (1 + 1e-9) >= float(t_eval[1] - t_eval[0])
                and h > used * (1 + 1e-6)):
            warnings.warn(f"`h` = {h:g} s is larger than the output interval dt_out = {used:g} s: the step used "
                          f"is {used:g} s (recorded as h; give h <= dt_out to choose it).", stacklevel=3)
        else:
            log.info("h = %g s shrunk to %g s so that the output times are step points", h, used)
    return used


class StepRule(FrozenFields):
    """The n-point Gauss-Legendre rule on [0, 1] by which `simulate` integrates its ``integrand`` over a
    step: nodes ``xi`` (n,), weights ``w`` (n,), and ``partial``, the coefficients of int_0^s l_i for the
    Lagrange polynomials l_i through the nodes (`partial_weights`)."""

    def __init__(self, xi: np.ndarray, w: np.ndarray, partial: tuple):
        self._set_fields(locals())

    def partial_weights(self, s: float) -> np.ndarray:
        """w_i(s) = int_0^s l_i, (n,): int_a^(a + s h) P dt = h w(s) . P(a + xi h) for P of degree < n, and
        w(1) = ``w``, so the integral at an output inside a step is that of the polynomial through the
        step's n Gauss values (error O(h^(n+1)) on that step), and the step's own sum is Gauss's."""
        return np.array([np.polyval(c, s) for c in self.partial])


@lru_cache(maxsize=None)
def step_rule(order: int, smooth: bool = True, adaptive: bool = False) -> StepRule:
    """The Gauss rule for the integrand of a fixed-step method of ``order`` p: the fewest points n whose
    error stays below the method's.  Over a step of length h the n-point rule's error is
    h^(2n+1) (n!)^4 / ((2n + 1) ((2n)!)^3) P^(2n), O(h^(2n)) summed over a run, against the method's
    global O(h^p): 2n >= p + 1, n = p // 2 + 1, at least 1 and at most `MAX_STEP_POINTS`.

    That estimate holds as h -> 0 with P smooth within the step.  An ``adaptive`` method's steps are as
    long as its tolerance allows, h times the solution's rates of order one, where no power of h is
    small (measured: RK45 at rtol 1e-6 on tests/test_works_per_step.py's pendulum, Hamilton's form,
    a balance error of 6.7e-6 J with 3 points against 7.0e-7 J with 4 or 5), and an integrand that is
    not ``smooth`` (a contact's or a stop's power, with a kink where it begins) converges slowly with
    any n: both get `MAX_STEP_POINTS`."""
    n = MAX_STEP_POINTS if adaptive or not smooth else min(MAX_STEP_POINTS, max(1, int(order) // 2 + 1))
    x, w = gauss_legendre(2 * n - 1)
    xi = 0.5 * (x + 1.0)
    partial = []
    for i in range(n):
        others = np.delete(xi, i)
        partial.append(np.polyint(np.atleast_1d(np.poly(others)) / np.prod(xi[i] - others)))
    return StepRule(xi=xi, w=0.5 * w, partial=tuple(partial))


def _gauss_values(integrator: Integrator, integrand, rule: StepRule, a: float, b: float) -> np.ndarray:
    """integrand(t, x(t)) (n, k) at the n Gauss points of ``rule`` on [a, b] on the dense output of the
    last step (one call with all points if the integrand is ``vectorized``)."""
    t = a + rule.xi * (b - a)
    if getattr(integrand, "vectorized", False):
        x = np.stack([integrator.dense(ti) for ti in t])
        return np.asarray(integrand(t, x), dtype=float).reshape(len(t), -1)
    return np.stack([np.atleast_1d(np.asarray(integrand(ti, integrator.dense(ti)), dtype=float)) for ti in t])


def trapezoid_over_steps(start, t, P, is_step, near: float):
    """The running trapezoidal rule over the steps, and its value at outputs inside a step.

    .. code:: text

        W(t_j) = W(t_(j-1)) + (t_j - t_(j-1)) (P(t_j) + P(t_(j-1))) / 2        at the step points t_j
        W(t)   = W(t_j) + (t - t_j) (P(t) + P(t_j)) / 2                         at an output t_j < t < t_(j+1)

    The sum runs from step to step (``np.cumsum``, sequential), so the value at a step point is
    the same however the steps are grouped into calls and whatever the outputs are.

    Parameters
    ----------
    start : (float, ndarray (k,), ndarray (k,))
        (t, P, W) at the last step point before these rows (t0, P(t0), 0 at the start).
    t : ndarray, shape (N,)
        Times of the rows, sorted: step points and outputs (a time may be both).
    P : ndarray, shape (N, k)
        The integrand at each row.
    is_step : ndarray of bool, shape (N,)
        The rows that are step points.
    near : float
        An output within ``near`` of a step point is that step point.

    Returns
    -------
    W : ndarray, shape (N, k)
        The integral at each row.
    start : tuple
        (t, P, W) at the last step point, for the next rows.
    """
    t_a, P_a, W_a = start
    ts = np.concatenate([[t_a], t[is_step]])
    Ps = np.vstack([P_a[None], P[is_step]])
    Ws = np.cumsum(np.vstack([W_a[None], 0.5 * np.diff(ts)[:, None] * (Ps[1:] + Ps[:-1])]), axis=0)
    j = np.searchsorted(ts, t + near, side="right") - 1
    W = Ws[j] + 0.5 * (t - ts[j])[:, None] * (P + Ps[j])
    W[is_step] = Ws[1:]
    return W, (float(ts[-1]), Ps[-1], Ws[-1])


def _step_values(step_integrand, t, x, lam) -> np.ndarray:
    """``step_integrand`` at the rows (t (N,), x (N, n_state), lam (N, n_c) or None), checked: (N, k)."""
    P = np.asarray(step_integrand(t, x, lam), dtype=float)
    if P.ndim != 2 or P.shape[0] != len(t):
        raise ValueError(f"`step_integrand` must return an array (N, k) for N = {len(t)} states, got shape "
                         f"{P.shape}.")
    return P


def _hand_on(on_output, on_outputs, T, X, W=None) -> None:
    """Hand the outputs T (N,), X (N, n_state) and their integrals W (N, k) or None to the caller:
    ``on_outputs`` once for the block, else ``on_output`` row by row (with w where there is W)."""
    if on_outputs is not None:
        on_outputs(T, X) if W is None else on_outputs(T, X, W)
    elif on_output is not None:
        for k in range(len(T)):
            on_output(float(T[k]), X[k]) if W is None else on_output(float(T[k]), X[k], W[k])


def _simulate_exact(integrator: ExactLinear, t_eval, integrand, on_output, on_outputs, progress,
                    start) -> Solution:
    """The outputs of method "exact", block by block (`ExactLinear.output_blocks`): each
    block's outputs and their integrals (with an ``integrand``) go to ``on_outputs`` (or
    ``on_output`` one by one) and its end time to
    ``progress`` before the next block is computed.  ``t_eval`` None: the step points t0 + k h."""
    t0, t_end = integrator.t0, integrator.t_end
    if t_eval is None:
        n = max(1, int(np.ceil((t_end - t0) / integrator.h * (1 - 1e-12))))
        t_eval = np.minimum(t0 + integrator.h * np.arange(n + 1), t_end)
        t_eval[-1] = t_end
    x_out = np.empty((len(t_eval), integrator.term.n_state))      # filled block by block
    ws, done = [], 0
    for t, x, w in integrator.output_blocks(t_eval, integrand):
        x_out[done:done + len(t)] = x
        done += len(t)
        ws.append(w)
        _hand_on(on_output, on_outputs, np.asarray(t, dtype=float), x, w)
        if progress is not None:
            progress(float(t[-1]))
    t_out, x_out = np.array(t_eval[:done], dtype=float), x_out[:done]
    integrals = None if integrand is None else (np.concatenate(ws) if ws else np.zeros((0, 0)))
    cls = type(integrator)
    return Solution(
        t=t_out, x=x_out, integrals=integrals, status=integrator.status,
        message=integrator.message or "", success=integrator.status == "finished", n_rhs=integrator.n_rhs,
        n_jac=0, n_lu=0, n_steps=integrator.n_steps, n_rejected=0, wall_time=time.perf_counter() - start,
        method=cls.name, order=cls.order, h=integrator.h)


def _sample(integrator: Integrator, controls) -> None:
    """Sample the controllers due after the integrator's last step (`flexmbs.control.ControlLoop`),
    while it runs; a law that fails stops the run with its message (the outputs so far are kept)."""
    from ..user_functions import UserFunctionError
    if controls is None or integrator.status != "running" or not controls.due(integrator.n_steps):
        return
    try:
        controls.sample(integrator.t, integrator.x, integrator.n_steps)
    except (UserFunctionError, ArithmeticError) as err:
        integrator.stop(f"The controller's sample at t = {integrator.t:.6g} failed: {err}")


def _with_range_warning(term, integrator, t: np.ndarray, x: np.ndarray) -> str:
    """The integrator's message, followed by the term's ``range_check`` text (a System's:
    `flexmbs.validity.system_range_warning`) when a flexible body left the range of its
    linear-strain model (not after a divergence, whose message names its cause)."""
    message = integrator.message or ""
    if term.range_check is None or integrator.status == "diverged" or not len(t):
        return message
    text = term.range_check(t, x, 4)            # the warning points at the caller of `simulate`
    return message if text is None else f"{message} Warning: {text}"


def simulate(formulation, t_span, x0, method: str = "DOP853", t_eval=None, h: float | None = None,
             rtol: float = 1e-6, atol: float = 1e-9,
             integrand: Callable[[float, np.ndarray], np.ndarray] | None = None,
             on_output: Callable[[float, np.ndarray], None] | None = None,
             on_outputs: Callable[[np.ndarray, np.ndarray], None] | None = None,
             progress: Callable[[float], None] | None = None, keep_bytes: int = 0,
             write_to: tuple | None = None, controls=None, step_integrand: Callable | None = None,
             **options) -> Solution:
    """Integrate a formulation's equations of motion over ``t_span``.

    Parameters
    ----------
    formulation : flexmbs.formulations.Formulation, ConstrainedProblem, ODETerm or DAETerm
        ``M_full x' = F(t, x)`` (and its second-order form for 'generalized-alpha'), or the
        index-3 equations of a System (`ConstrainedProblem`, for 'index3-alpha'): its ``term()``
        is taken once (`flexmbs.formulations.terms`), a term as it is.
    t_span : (float, float)
        ``(t0, t_end)``, increasing.
    x0 : ndarray, shape (n_state,)
        Initial state in the formulation's variables (``formulation.state0(...)``).  For a
        formulation of a `flexmbs.System` it must satisfy the constraints
        (``System.consistency``): an inconsistent x0 raises `flexmbs.system.InconsistentStateError`
        naming the worst constraint; ``formulation.state0(q0, v0, assemble=True)`` projects it.
    method : str, default "DOP853"
        One of `INTEGRATORS`: 'RK45', 'DOP853', 'AB4', 'midpoint', 'generalized-alpha',
        'Radau', 'BDF'.
    t_eval : array_like, shape (n_out,), optional
        Sorted output times within t_span; default: every step point (t0 included).
    h : float, optional
        Step size, required by the fixed-step methods ('AB4', 'midpoint',
        'generalized-alpha'); the first trial step of the adaptive ones.
    rtol : float, default 1e-6
        Relative tolerance of the adaptive methods.
    atol : float or ndarray, default 1e-9
        Absolute tolerance of the adaptive methods, in the state's units.
    integrand : callable, optional
        ``integrand(t, x) -> (k,)``; its integral from t0 to each output time is returned
        in ``Solution.integrals`` (e.g. the work of the drive torque), by Gauss-Legendre on the
        dense output of every step with the points the method's order needs (`step_rule`: 2 for
        the fixed-step second-order methods, 3 for AB4; 5 for the adaptive methods and for an
        integrand with the attribute ``smooth = False``), whatever the outputs.
    on_output : callable, optional
        ``on_output(t, x)``, called at every output time as soon as it is computed; with an
        ``integrand`` or a ``step_integrand``, ``on_output(t, x, w)`` with w (k,) its integral to t.
    on_outputs : callable, optional
        ``on_outputs(T, X)`` (``on_outputs(T, X, W)`` with an integral), the outputs in blocks as
        they are computed: T (N,), X (N, n_state), W (N, k), in order (the many outputs of one call
        of a compiled kernel in one block, no Python call per output).  Give ``on_output`` or
        ``on_outputs``, not both.
    progress : callable, optional
        ``progress(t)``, called after every step.  Default: the run's progress is shown by the
        innermost `flexmbs.progress` display, if there is one (a bar on a terminal, a line every
        few seconds in a log).
    keep_bytes : int, default 0
        Bytes per output the caller keeps besides the state (e.g. `flexmbs.run`'s fields), for
        the size check before the run (`flexmbs.integrators.budget.check_run_size`).
    write_to : (path, int), optional
        A results file and the bytes written to it per output, checked against the free disk.
    controls : flexmbs.control.ControlLoop, optional
        Digital controllers (method 'index3-alpha' only): ``h`` is shrunk to divide their periods
        (`step_used`), they are sampled at t0 before the integrator starts and after every step that
        ends at one of their sample times but the last, before the next step (the compiled kernel
        samples them within its call: `flexmbs.control.KernelSampling`).  A law that fails there
        stops the run ("failed", the outputs so far kept).
    step_integrand : callable, optional
        ``step_integrand(t (N,), x (N, n_state), lam (N, n_c) or None) -> (N, k)``, at N states at
        once with the method's multipliers (None for a method without): integrated by the
        trapezoidal rule over the steps, at every step, also in the compiled kernel's calls (which
        then report every step point: index3-alpha's ``advance(..., every_step=True)``); the
        integral is returned in ``Solution.integrals`` (`trapezoid_over_steps`).  Not with
        ``integrand``.
    **options
        Method options (e.g. ``rho_inf``, ``max_step``, ``divergence_limit``); unknown ones warn.

    Returns
    -------
    Solution
        Outputs, status ("finished", "failed", "diverged"), message and counters.  A failed
        or diverged run keeps the outputs before the failing step.  For a System's formulation
        whose flexible bodies leave the range of the linear-strain model, the message ends with
        the warning of `flexmbs.validity.system_range_warning`.  Its ``kernel`` (the path
        index3-alpha took) is also noted for the case's summary (`flexmbs.compiled.note_path`).

    Raises
    ------
    ValueError
        Bad arguments, a method that does not fit the formulation's term (the message lists
        the methods that do), ``h`` > t_end - t0, or outputs that cannot fit in the available memory
        or on the free disk (`flexmbs.integrators.budget`); beyond 1e7 steps or 1 GB of
        outputs a `RunSizeWarning` says so before the run starts.

    Examples
    --------
    >>> sol = simulate(formulation, (0.0, 1.0), x0, method="midpoint", h=1e-3,
    ...                t_eval=np.linspace(0.0, 1.0, 11))             # doctest: +SKIP
    """
    from .. import progress as progress_display
    from ..compiled import note_path
    if integrand is not None and step_integrand is not None:
        raise ValueError("`integrand` and `step_integrand`: give one of them (the integral is returned in "
                         "Solution.integrals), got both")
    if on_output is not None and on_outputs is not None:
        raise ValueError("`on_output` and `on_outputs`: give one of them (one output a call, or blocks of outputs), "
                         "got both")
    args = (as_term(formulation), t_span, x0, method, t_eval, h, rtol, atol, integrand, on_output, on_outputs,
            controls, step_integrand)
    shown = progress_display.current() if progress is None else None
    if shown is None:
        sol = _simulate(*args, progress, keep_bytes, write_to, **options)
    else:
        t0, t_end = validate_t_span(t_span)
        with shown.task(str(method), t0, t_end) as report:
            sol = _simulate(*args, report, keep_bytes, write_to, **options)
    note_path(sol.kernel)
    return sol


def _simulate(term, t_span, x0, method, t_eval, h, rtol, atol, integrand, on_output, on_outputs, controls,
              step_integrand, progress, keep_bytes, write_to, **options) -> Solution:
    """`simulate` with every argument given (the term taken, the progress callback resolved)."""
    start = time.perf_counter()
    cls = validate_method(method)
    t0, t_end = validate_t_span(t_span)
    x0 = validate_x0(x0, term.n_state)
    h = validate_h(h, required=not (cls.adaptive or cls.h_optional), method=method)
    rtol, atol = validate_tolerances(rtol, atol)
    t_eval = validate_t_eval(t_eval, t0, t_end)
    for value, name in ((integrand, "integrand"), (on_output, "on_output"), (on_outputs, "on_outputs"),
                        (progress, "progress"), (step_integrand, "step_integrand")):
        validate_callable(value, name)
    known = check_options(cls, options, stacklevel=4)   # the caller of `simulate`
    known = {k: v for k, v in known.items() if k in options}
    tolerances = {"rtol": rtol, "atol": atol}
    if not cls.uses_tolerances:
        if rtol != 1e-6 or np.any(np.asarray(atol) != 1e-9):
            warnings.warn(f"`rtol` and `atol` are not used by the fixed-step method '{method}'; its "
                          "accuracy is set by `h`.", stacklevel=3)
        tolerances = {}
    check_step_fits(h, (t0, t_end))
    if controls is not None and method != "index3-alpha":
        raise ValueError(f"`controls`: digital controllers run with method 'index3-alpha' (its chunks of steps end "
                         f"at the sample times, on the compiled and the numpy path), got method {method!r}")
    h = step_used(method, h, t0, t_eval, periods=None if controls is None else controls.periods)
    check_run_size((t0, t_end), h, None if t_eval is None else t_eval.size,
                   8 * (1 + term.n_state) + int(keep_bytes), fixed_step=not cls.adaptive,
                   disk_path=None if write_to is None else write_to[0],
                   disk_bytes_per_output=0 if write_to is None else write_to[1])

    if controls is not None:
        controls.start(t0, h, x0)                   # the first sample: the loads at t0 need its outputs
    integrator = cls(term, t0, x0, t_end, h=h, **tolerances, **known)
    if cls.outputs_in_blocks:
        if step_integrand is not None:
            raise ValueError(f"`step_integrand`: method {method!r} computes its outputs in blocks, not step by "
                             "step; give `integrand` (its Gauss quadrature on the exact solution)")
        return _simulate_exact(integrator, t_eval, integrand, on_output, on_outputs, progress, start)

    out_t: list[np.ndarray] = []                    # blocks of outputs: (N,), (N, n_state), (N, k), (N, n_c)
    out_x: list[np.ndarray] = []
    out_int: list[np.ndarray] = []
    out_lam: list[np.ndarray] = []
    multipliers = integrator.dense_multipliers if cls.has_multipliers else None    # index3-alpha: lam at the outputs
    acc = None
    rule = step_rule(cls.order, getattr(integrand, "smooth", True), cls.adaptive)    # the Gauss points a step
    if integrand is not None:
        acc = np.zeros_like(np.atleast_1d(np.asarray(integrand(t0, x0), dtype=float)))
        if acc.ndim != 1:
            raise ValueError(f"`integrand` must return a 1-D array (k,), got shape {acc.shape}.")
    lam0 = integrator.lam
    carry = None                                    # (t, P, W) at the last step point (step_integrand)
    if step_integrand is not None:
        P0 = _step_values(step_integrand, np.array([t0]), x0[None], None if multipliers is None else lam0[None])
        carry = (t0, P0[0], np.zeros(P0.shape[1]))

    def emit_block(T, X, LAM, Wb) -> None:
        """Keep the outputs T (N,), X (N, n_state), LAM (N, n_c) or None and their integrals Wb
        (N, k) or None (copies), and hand them on: ``on_outputs`` once, or ``on_output`` row by row."""
        out_t.append(np.array(T, dtype=float))
        out_x.append(np.array(X))
        if multipliers is not None:
            out_lam.append(np.array(LAM))
        if Wb is not None:
            out_int.append(np.array(Wb, dtype=float))
        _hand_on(on_output, on_outputs, out_t[-1], out_x[-1], None if Wb is None else out_int[-1])

    def emit(t: float, x: np.ndarray, lam=None, w=None) -> None:
        """One output (its integral w, else the running one)."""
        w = acc if w is None else w
        emit_block([t], np.asarray(x)[None], None if multipliers is None else np.asarray(lam)[None],
                   None if w is None else np.asarray(w, dtype=float)[None])

    def emit_rows(t, x, lam, is_step, is_out) -> None:
        """Emit the rows ``is_out`` of step points and outputs (t sorted), with the step
        integral carried over the rows ``is_step`` (`trapezoid_over_steps`)."""
        nonlocal carry
        W = None
        if carry is not None and len(t):
            P = _step_values(step_integrand, t, x, lam)
            steps = np.concatenate([[carry[0]], t[is_step]])
            near = STEP_POINT_RTOL * (float(np.min(np.diff(steps))) if len(steps) > 1 else integrator.h or 0.0)
            W, carry = trapezoid_over_steps(carry, t, P, is_step, near)
        if acc is not None and W is None:
            W = np.broadcast_to(acc, (len(t), acc.size))
        if is_out.any():
            emit_block(t[is_out], x[is_out], None if lam is None else lam[is_out], None if W is None else W[is_out])

    i_out = 0
    if t_eval is None:
        emit(t0, x0, lam0, None if carry is None else carry[2])
    else:
        while i_out < t_eval.size and t_eval[i_out] == t0:
            emit(t0, x0, lam0, None if carry is None else carry[2])
            i_out += 1

    # methods that take many steps in one call (index3-alpha's compiled kernel) emit the outputs
    # they reach (with a step integrand also every step point); not with an integrand, whose
    # quadrature needs the dense output of every step
    advance = integrator.advance if integrand is None else None
    while integrator.status == "running" and advance is not None:
        # the controllers are sampled within the call, after each step that ends at a sample time
        wanted = None if t_eval is None else t_eval[i_out:]
        if carry is None:
            t_out, x_out, lam_out = advance(wanted, STEP_POINT_RTOL, controls)
            is_step, is_out = np.zeros(len(t_out), dtype=bool), np.ones(len(t_out), dtype=bool)
        else:
            t_out, x_out, lam_out, is_step = advance(wanted, STEP_POINT_RTOL, controls, every_step=True)
            is_out = np.ones(len(t_out), dtype=bool) if t_eval is None else ~is_step
        emit_rows(t_out, x_out, lam_out if multipliers is not None else None, is_step, is_out)
        i_out += int(np.count_nonzero(is_out)) if t_eval is not None else 0
        if progress is not None:
            progress(integrator.t)

    while integrator.status == "running":
        integrator.step()
        if integrator.status not in ("running", "finished"):
            break
        t_a, t_b = integrator.t_old, integrator.t
        near = STEP_POINT_RTOL * (t_b - t_a)
        rows = []                   # (t, x, lam, is_step, is_out) of this step, sorted
        G = None                    # the integrand at the step's Gauss points
        try:            # the dense output evaluates the formulation (and its laws) at the step's ends
            if t_eval is not None:
                while i_out < t_eval.size and t_eval[i_out] <= t_b + near:
                    te = float(t_eval[i_out])
                    at_end = abs(te - t_b) <= near
                    if acc is not None and G is None:
                        G = _gauss_values(integrator, integrand, rule, t_a, t_b)
                    x_e = integrator.x if at_end else integrator.dense(te)
                    lam_e = None if multipliers is None else integrator.lam if at_end else multipliers(te)
                    if acc is not None:
                        weights = rule.w if at_end else rule.partial_weights((te - t_a) / (t_b - t_a))
                        w_e = acc + (t_b - t_a) * (weights @ G)       # at the step's end: its sum below
                        emit(te, x_e, lam_e, w_e)
                    elif carry is None:
                        emit(te, x_e, lam_e)
                    else:
                        rows.append((te, x_e, lam_e, False, True))
                    i_out += 1
            if acc is not None:
                G = _gauss_values(integrator, integrand, rule, t_a, t_b) if G is None else G
                acc = acc + (t_b - t_a) * (rule.w @ G)
            if carry is not None:
                rows.append((t_b, integrator.x, None if multipliers is None else integrator.lam, True, t_eval is None))
                t_r, x_r, lam_r, s_r, o_r = zip(*rows)
                emit_rows(np.array(t_r), np.array(x_r), None if multipliers is None else np.array(lam_r),
                          np.array(s_r), np.array(o_r))
        except (ArithmeticError, np.linalg.LinAlgError) as err:    # as a failing step: the outputs so far
            integrator.stop(f"The outputs of the step from t = {t_a:.6g} to t = {t_b:.6g} failed: {err}")
            break
        if t_eval is None and carry is None:
            emit(t_b, integrator.x, None if multipliers is None else integrator.lam)
        _sample(integrator, controls)
        if progress is not None:
            progress(t_b)

    n_state = term.n_state
    t_out = np.concatenate(out_t) if out_t else np.zeros(0)
    x_out = np.concatenate(out_x).astype(float, copy=False) if out_x else np.zeros((0, n_state))
    return Solution(
        t=t_out, x=x_out,
        integrals=(None if acc is None and carry is None
                   else np.concatenate(out_int) if out_int
                   else np.zeros((0, (acc if carry is None else carry[2]).size))),
        status=integrator.status, message=_with_range_warning(term, integrator, t_out, x_out),
        success=integrator.status == "finished",
        n_rhs=integrator.n_rhs, n_jac=integrator.n_jac, n_lu=integrator.n_lu,
        n_steps=integrator.n_steps, n_rejected=integrator.n_rejected,
        wall_time=time.perf_counter() - start, method=method, order=cls.order,
        n_lin_iter=integrator.n_lin_iter, n_newton=integrator.n_newton, kernel=integrator.kernel, h=h,
        kernel_reason=integrator.kernel_reason if integrator.kernel == "numpy" else None,
        lam=None if multipliers is None else (np.concatenate(out_lam).astype(float, copy=False) if out_lam
                                              else np.zeros((0, integrator.n_c))))
