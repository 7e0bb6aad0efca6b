"""The integrator interface: one stepping loop, status, counters and guards for every method.

Every method advances the term of a formulation (`flexmbs.formulations.terms`), its first-order
system

.. code:: text

    M_full x' = F(t, x),        x = (q, y),  y = q' ("delta_dot") or p (momentum)

or, for methods with ``needs = "second_order"``, its second-order form ``M q'' = f(t, q, v)``
(index3-alpha: the index-3 equations of a `DAETerm`), by one step per call of `Integrator.step`.
Each method class declares once what it accepts (``accepts``: the kinds of term; ``requires``:
the capabilities an `ODETerm` must give, `flexmbs.formulations.terms.CAPABILITIES`; ``_refusal``
for what more it checks, e.g. method "exact"'s loads), and `check_fits` compares them with the
term in one place: a term that does not fit is a ValueError that names what is missing and
lists the methods that fit it.  The base class does what is common to all of
them [1]_: it refuses to step when not running, records ``t_old, x_old``, counts the steps,
and after every step checks the new state:

.. code:: text

    x not finite                    -> status "failed"    (message: t, smaller step / implicit method)
    |x|_inf > divergence_limit      -> status "diverged"  (message: the response grows without bound)
    t == t_end                      -> status "finished"

and a failure's message gives the cause that the evidence shows (`_cause`) instead of the
generic advice: an explicit method's growth of |x|, or (index3-alpha) constraints that cannot
all hold.  A law or load that fails in a step (`flexmbs.user_functions.UserFunctionError`, an
ArithmeticError) is a "failed" step named by it.

A subclass gives only the maths: ``_setup()`` (once, after validation) and
``_step_impl() -> (success, message)``; a failed step (Newton not converging, step-size
underflow) is a status and a message that says what to change, never an exception.

The fixed-step methods share the step schedule ``t_k = t0 + k h`` (the last step is cut to
end exactly at ``t_end``) and the dense output: the cubic Hermite interpolant of ``x`` and
``x'`` at both ends of the step (exact for cubics, interpolation error O(h^4)), so that
dense values are accurate to O(h^min(order, 4)).

References
----------
.. [1] SciPy, ``scipy/integrate/_ivp/base.py``, class ``OdeSolver`` (step/status pattern).
"""
from __future__ import annotations

import operator
import warnings
from abc import ABC, abstractmethod
from typing import ClassVar, Literal

import numpy as np

from ..formulations.terms import CAPABILITIES, ODETerm, as_term
from ..lapack import lapack
from ..user_functions import UserFunctionError
from ..lazy import LazyModule

sparse = LazyModule("scipy.sparse")

__all__ = [
    "Integrator",
    "validate_t_span",
    "validate_x0",
    "validate_h",
    "validate_tolerances",
    "check_options",
    "check_consistent",
    "check_fits",
]

Status = Literal["running", "finished", "failed", "diverged"]
EPS = np.finfo(float).eps
GROWTH = 1e3            # |x|_inf beyond GROWTH times its start: an explicit method's growth is the evidence
IMPLICIT_METHODS_HINT = "'midpoint', 'generalized-alpha', 'Radau', 'BDF'"


# -- validation at the boundary ------------------------------------------------------------------
def validate_t_span(t_span) -> tuple[float, float]:
    """(t0, t_end) as floats, finite and increasing."""
    try:
        t0, t_end = (float(t) for t in t_span)
    except (TypeError, ValueError):
        raise ValueError(f"`t_span` must be a pair (t0, t_end) of numbers, got {t_span!r}.") from None
    if not (np.isfinite(t0) and np.isfinite(t_end)):
        raise ValueError(f"`t_span` must be finite, got {t_span!r}.")
    if not t_end > t0:
        raise ValueError(f"`t_span` must be increasing (t0 < t_end), got ({t0!r}, {t_end!r}).")
    return t0, t_end


def validate_x0(x0, n_state: int) -> np.ndarray:
    """x0 as a finite float array of shape (n_state,)."""
    x0 = np.asarray(x0, dtype=float)
    if x0.shape != (n_state,):
        raise ValueError(f"`x0` must have shape (formulation.n_state,) = ({n_state},), got {x0.shape}.")
    if not np.all(np.isfinite(x0)):
        raise ValueError("`x0` must be finite (it contains NaN or inf).")
    return x0.copy()


def validate_h(h, required: bool, method: str) -> float | None:
    """Step size: positive and finite; required by fixed-step methods."""
    if h is None:
        if required:
            raise ValueError(f"`h` (the step size) is required by the fixed-step method '{method}'; "
                             "give e.g. h=1e-3.")
        return None
    try:
        h = float(h)
    except (TypeError, ValueError):
        raise ValueError(f"`h` must be a positive number, got {h!r}.") from None
    if not (np.isfinite(h) and h > 0):
        raise ValueError(f"`h` must be a positive finite number, got {h!r}.")
    return h


def validate_tolerances(rtol, atol) -> tuple[float, float | np.ndarray]:
    """0 < rtol < 1 (scalar) and atol > 0 (scalar or per state component)."""
    try:
        rtol = float(rtol)
    except (TypeError, ValueError):
        raise ValueError(f"`rtol` must be a positive number, got {rtol!r}.") from None
    if not (np.isfinite(rtol) and rtol > 0):
        raise ValueError(f"`rtol` must be positive, got {rtol!r}.")
    if rtol >= 1.0:
        raise ValueError(f"`rtol` is a relative tolerance and must be below 1 (e.g. 1e-6), got {rtol!r}.")
    atol_arr = np.asarray(atol, dtype=float)
    if atol_arr.ndim > 1 or not np.all(np.isfinite(atol_arr)) or not np.all(atol_arr > 0):
        raise ValueError(f"`atol` must be positive (a number or one per state component), got {atol!r}.")
    return rtol, (float(atol_arr) if atol_arr.ndim == 0 else atol_arr)


def check_consistent(term, t0: float, x0: np.ndarray) -> None:
    """Refuse an x0 that violates the constraints of the term's `flexmbs.System` (no run starts
    from an inconsistent state): its ``check_initial`` (``System.initial_state``) raises
    `InconsistentStateError` naming the worst constraint, the level and the size.  Terms without
    a System (``check_initial`` None) pass."""
    if term.check_initial is not None:
        term.check_initial(t0, x0)


def check_fits(cls: type[Integrator], term) -> None:
    """The one check of which method runs which term: raise a ValueError if method ``cls`` cannot
    integrate ``term`` (`Integrator.refusal`), naming why and the methods of
    `flexmbs.integrators.INTEGRATORS` that fit the term."""
    reason = cls.refusal(term)
    if reason is None:
        return
    from .simulate import INTEGRATORS
    fits = [name for name, other in INTEGRATORS.items() if other.refusal(term) is None]
    raise ValueError(f"{reason}; methods that fit this term: "
                     + (", ".join(repr(name) for name in fits) if fits else "none") + ".")


def check_options(cls: type[Integrator], options: dict, stacklevel: int) -> dict:
    """Known options of `cls` merged with their defaults; unknown ones warn and are dropped."""
    known = cls.option_defaults()
    unknown = sorted(set(options) - set(known))
    if unknown:
        warnings.warn(f"Unknown options for method '{cls.name}': {', '.join(unknown)}; they are ignored. "
                      f"Options of '{cls.name}': {', '.join(sorted(known))}.", stacklevel=stacklevel)
    return {**known, **{k: v for k, v in options.items() if k in known}}


# -- the interface -------------------------------------------------------------------------------
class Integrator(ABC):
    """One time-integration method stepping ``M_full x' = F(t, x)`` from ``t0`` to ``t_end``.

    Parameters
    ----------
    term : ODETerm, DAETerm or a formulation
        What the method integrates (`flexmbs.formulations.terms`); a formulation is taken by its
        ``term()``.  It must fit the method (`check_fits`), else a ValueError lists the methods
        that fit it.
    t0, t_end : float
        Initial and final time, ``t0 < t_end``.
    x0 : ndarray, shape (n_state,)
        Initial state in the formulation's own variables.
    h : float, optional
        Step size; required by fixed-step methods, the first trial step of adaptive ones.
    rtol : float, default 1e-6
        Relative tolerance of the adaptive methods (fixed-step methods do not use it).
    atol : float or ndarray, default 1e-9
        Absolute tolerance of the adaptive methods.
    **options
        Method options (see ``option_defaults()``); every method accepts
        ``divergence_limit`` (default 1e12), the bound on ``|x|_inf`` above which the
        response is declared diverged.  Unknown options warn.

    Attributes
    ----------
    term : ODETerm or DAETerm
        The term integrated (the only view of the formulation the method has).
    t, x : float, ndarray (n_state,)
        Current time and state.
    t_old, x_old : float, ndarray or None
        Start of the last step (None before the first step).
    h : float or None
        Nominal step size (fixed-step methods) or the given first step.
    status : {"running", "finished", "failed", "diverged"}
    message : str or None
        Why the integrator stopped, and what to change if it failed.
    n_rhs, n_jac, n_lu, n_steps, n_rejected : int
        Evaluations of ``rhs``/``forcing_full``/``f``, Jacobian evaluations, LU factorizations,
        accepted steps, rejected trial steps.
    n_newton : int
        Newton iterations, of the methods that count them (index3-alpha and its variants, radau-dae,
        rattle); 0 for the others.
    """

    name: ClassVar[str]
    order: ClassVar[int]                                    # declared, tested
    adaptive: ClassVar[bool]
    needs: ClassVar[Literal["first_order", "second_order"]]  # the form it steps (x' or q'')
    accepts: ClassVar[tuple[type, ...]] = (ODETerm,)         # the kinds of term it integrates
    requires: ClassVar[tuple[str, ...]] = ()                 # capabilities of an ODETerm (CAPABILITIES)
    has_multipliers: ClassVar[bool] = False                 # `lam`, `dense_multipliers` (index3-alpha)
    outputs_in_blocks: ClassVar[bool] = False               # `output_blocks` instead of steps (exact)
    kernel: str | None = None                               # where the steps ran, or the term's evaluations
    kernel_reason: str | None = None                        # why not the compiled path (on the numpy one)
    advance = None                                          # many steps per call (index3-alpha's kernel)
    lam = None                                              # multipliers of the last step
    n_newton = 0                                            # Newton iterations of the methods that count them
    uses_tolerances: ClassVar[bool] = False                 # rtol, atol
    explicit: ClassVar[bool] = False                        # RK45, DOP853, AB4: bounded stability region
    h_optional: ClassVar[bool] = False                      # a fixed-step method with a default step
    method_options: ClassVar[dict[str, object]] = {}        # method options -> defaults
    base_options: ClassVar[dict[str, object]] = {"divergence_limit": 1e12}

    def __init__(self, term, t0: float, x0, t_end: float, h: float | None = None,
                 rtol: float = 1e-6, atol: float = 1e-9, **options):
        self.t0, self.t_end = validate_t_span((t0, t_end))
        self.h = validate_h(h, required=not (self.adaptive or self.h_optional), method=self.name)
        self.rtol, self.atol = validate_tolerances(rtol, atol)
        term = as_term(term)
        check_fits(type(self), term)
        self.term = term = self._prepared(term)
        if isinstance(term, ODETerm) and term.kernel is not None:     # where the term evaluates its system
            self.kernel, self.kernel_reason = term.kernel, term.kernel_reason
        x0 = validate_x0(x0, term.n_state)
        check_consistent(term, self.t0, x0)     # Euler-parameter norms first, then the constraints
        if not self.uses_tolerances and (rtol != 1e-6 or np.any(np.asarray(atol) != 1e-9)):
            warnings.warn(f"`rtol` and `atol` are not used by the fixed-step method '{self.name}'; "
                          "its accuracy is set by `h`.", stacklevel=2)
        self.options = check_options(type(self), options, stacklevel=3)
        self.divergence_limit = float(self.options["divergence_limit"])
        if not self.divergence_limit > 0:
            raise ValueError("`divergence_limit` must be positive, got "
                             f"{self.options['divergence_limit']!r}.")

        self.t, self.x = self.t0, x0
        self._size0 = float(np.max(np.abs(x0), initial=0.0))     # |x0|_inf, for the growth in `_cause`
        self.t_old: float | None = None
        self.x_old: np.ndarray | None = None
        self.status: Status = "running"
        self.message: str | None = None
        self.n_rhs = self.n_jac = self.n_lu = self.n_steps = self.n_rejected = 0
        self.n_lin_iter = 0                            # Krylov iterations (iterative linear solves)
        self._xdot_old: np.ndarray | None = None      # x' at (t_old, x_old), for Hermite
        self._xdot_new: np.ndarray | None = None      # x' at (t, x)
        self._M_full_const = None
        self._setup()

    @classmethod
    def option_defaults(cls) -> dict[str, object]:
        """Every option the method accepts, with its default."""
        return {**cls.base_options, **cls.method_options}

    @classmethod
    def refusal(cls, term) -> str | None:
        """Why this method cannot integrate ``term`` (None: it can): a kind of term it does not
        accept, a capability in ``requires`` the ODETerm lacks, or what `_refusal` finds."""
        if not isinstance(term, cls.accepts):
            kinds = " or ".join(kind.__name__ for kind in cls.accepts)
            return (f"method {cls.name!r} integrates an {kinds}; {term.name!r} gives a "
                    f"{type(term).__name__}")
        if isinstance(term, ODETerm):
            for capability in cls.requires:
                if not term.has(capability):
                    return f"method {cls.name!r} needs {CAPABILITIES[capability][1]}; {term.name!r} does not give it"
        return cls._refusal(term)

    @classmethod
    def _refusal(cls, term) -> str | None:
        """What more than ``accepts`` and ``requires`` a method checks (None: nothing)."""
        return None

    def _prepared(self, term):
        """The term the method steps, from one that fits it (index3-alpha: the DAETerm of an ODETerm)."""
        return term

    # -- what a subclass gives ------------------------------------------------------------------
    def _setup(self) -> None:
        """Method-specific initialisation, after validation (t, x, h, options are set)."""

    @abstractmethod
    def _step_impl(self) -> tuple[bool, str | None]:
        """Advance ``self.t, self.x`` by one step; return (success, message)."""

    def _dense_impl(self, t: float) -> np.ndarray:
        """Interpolant on [t_old, t]; default: cubic Hermite from x and x' at both ends."""
        if self._xdot_old is None:
            self._xdot_old = self._xdot(self.t_old, self.x_old)
        if self._xdot_new is None:
            self._xdot_new = self._xdot(self.t, self.x)
        h = self.t - self.t_old
        s = (t - self.t_old) / h
        h00 = (1 + 2 * s) * (1 - s) ** 2
        h10 = s * (1 - s) ** 2
        h01 = s * s * (3 - 2 * s)
        h11 = s * s * (s - 1)
        return h00 * self.x_old + h01 * self.x + h * (h10 * self._xdot_old + h11 * self._xdot_new)

    def _mass_matrix_full(self, t: float):
        """M_full(t) of the term: the identity when it gives none, the one asked for once when
        it is constant, else ``mass_matrix_full(t)`` (``mass_matrix_takes_t``) or
        ``mass_matrix_full()``.

        A formulation may write its equations in a descriptor form whose M_full depends on t
        (through the frame motion); equal ``jacobian_key(t)`` must then mean equal M_full too.
        """
        term = self.term
        if term.mass_matrix_full is None:
            if self._M_full_const is None:
                self._M_full_const = sparse.identity(term.n_state, format="csr")
            return self._M_full_const
        if term.mass_matrix_constant:
            if self._M_full_const is None:
                self._M_full_const = term.mass_matrix_full()
            return self._M_full_const
        return term.mass_matrix_full(t) if term.mass_matrix_takes_t else term.mass_matrix_full()

    def _xdot(self, t: float, x: np.ndarray) -> np.ndarray:
        """x' = M_full^{-1} F(t, x) for the Hermite dense output."""
        self.n_rhs += 1
        return self.term.rhs(t, x)

    # -- the stepping loop ----------------------------------------------------------------------
    def step(self) -> str | None:
        """Advance one step; returns the message if the integrator stopped, else None.

        Raises
        ------
        RuntimeError
            If the status is not "running".
        """
        if self.status != "running":
            raise RuntimeError(f"Attempt to step an integrator whose status is '{self.status}'.")
        t, x, xdot = self.t, self.x, self._xdot_new
        self._xdot_new = None
        try:
            with np.errstate(all="ignore"):       # non-finite values become a status below
                success, message = self._step_impl()
        except (ArithmeticError, np.linalg.LinAlgError) as err:   # e.g. a singular system, Newton
            success, message = False, self._step_failure(t, err, x)
        if not success:
            self.t, self.x, self._xdot_new = t, x, xdot
            self.status, self.message = "failed", message
            return message
        self.t_old, self.x_old, self._xdot_old = t, x, xdot
        self.n_steps += 1
        try:
            self._correct_state()
            self._after_step()                  # e.g. AB4's evaluation at the new state
        except (ArithmeticError, np.linalg.LinAlgError) as err:
            self.status = "failed"
            cause = self._cause(self.t, self.x)
            self.message = (f"The evaluation after the step to t = {self.t:.6g} failed"
                            + (f" ({type(err).__name__} at that state): {cause}" if cause else f": {err}"))
            return self.message
        self._check_state()
        return self.message if self.status != "running" else None

    def _step_failure(self, t: float, err: Exception, x: np.ndarray | None = None) -> str:
        """The message of a step from (t, x) stopped by ``err`` (an ArithmeticError or LinAlgError of
        the formulation, or a `flexmbs.user_functions.UserFunctionError` of a law or load): the cause
        that `_cause` finds at (t, x) (the error, e.g. a singular saddle-point matrix of an exploded
        state, is then its consequence and only named), else the error's own message."""
        cause = None if x is None or isinstance(err, UserFunctionError) else self._cause(t, x)
        if cause:
            return f"The step from t = {t:.6g} failed ({type(err).__name__} at that state): {cause}"
        return f"The step from t = {t:.6g} failed: {err}"

    def stop(self, message: str) -> None:
        """End the run with status "failed" and ``message``, the state that of the last step: for the
        driver (`simulate`) when what it evaluates on that step (the dense output, whose Hermite
        derivatives evaluate the formulation and its laws) fails as a step would."""
        self.status, self.message = "failed", message

    def _cause(self, t: float, x: np.ndarray) -> str | None:
        """The cause of a failure that the evidence at the last state not in question (t, x) (the
        start of the failing or diverging step) shows, or None (the generic advice stands).

        Here: on an explicit method, |x|_inf grown beyond GROWTH times |x0|_inf.  Its stability
        region is bounded, so the prime suspect is a step beyond its limit (a stiff model: stiff
        springs, Baumgarte terms, high elastic frequencies), which an implicit method or a smaller
        step cures; a model unstable in itself grows on every method.  (Subclasses add their own
        evidence: index3-alpha, constraints that cannot all hold.)
        """
        finite = np.abs(x[np.isfinite(x)])
        size = float(finite.max(initial=0.0))
        if not (self.explicit and size > GROWTH * max(self._size0, EPS)):
            return None
        return (f"the state grew from |x|_inf = {self._size0:.3g} at t0 = {self.t0:.6g} to {size:.3g} at t = {t:.6g} "
                f"on the explicit method '{self.name}': an instability, most likely of the method (the step is "
                "beyond its stability limit: the model is stiff). Use an implicit method "
                f"({IMPLICIT_METHODS_HINT}) or a smaller step (`h`, or `max_step` of the adaptive methods); if "
                "the growth stays, the model itself is unstable (a dynamic instability).")

    def _check_state(self) -> None:
        """Status after accepted steps: "failed" on a non-finite state, "diverged" beyond
        ``divergence_limit``, "finished" at t_end (the state reached so far is kept)."""
        if not np.all(np.isfinite(self.x)):
            self.status = "failed"
            cause = self._cause(self.t_old, self.x_old)
            self.message = (
                f"The state became non-finite (NaN or inf) in the step from t = {self.t_old:.6g} to "
                f"t = {self.t:.6g}: " + (cause or "reduce the step size `h` or tighten `rtol`/`atol`; if the "
                                          f"model is stiff use an implicit method ({IMPLICIT_METHODS_HINT})."))
        else:
            size = float(np.max(np.abs(self.x), initial=0.0))
            if size > self.divergence_limit:
                self.status = "diverged"
                cause = self._cause(self.t_old, self.x_old) or self._cause(self.t, self.x)
                self.message = (
                    f"The response grows without bound: |x|_inf = {size:.3g} exceeds "
                    f"`divergence_limit` = {self.divergence_limit:.3g} at t = {self.t:.6g}: " + (cause or (
                        "the model is probably unstable (a dynamic instability, e.g. a rotating body above its "
                        "critical speed, or a missing stiffening term such as geometric stiffening); if "
                        "the growth is numerical, reduce `h` or use an implicit method.")))
            elif self.t >= self.t_end:
                self.t = self.t_end
                self.status = "finished"
                self.message = f"Reached t_end = {self.t_end:.6g}."

    def _correct_state(self) -> None:
        """The term's correction of the accepted state, if it has one (constraint stabilisation).

        A term's ``correct_state(t, x) -> x`` (e.g. the index-1 form of a
        constrained multibody system, which projects ``x`` back onto the constraint manifold)
        is called after every accepted step of every method, start-up steps included, before
        ``_after_step``.  When it returns a new array the state is replaced, the cached
        derivative is dropped and ``_state_corrected`` lets the method update its own copies of
        the state, so that its next step starts from the corrected state.  A non-finite state
        is left for the guard of `step`.
        """
        correct = self.term.correct_state
        if correct is None or not np.all(np.isfinite(self.x)):
            return
        x = correct(self.t, self.x)
        if x is not self.x:
            self.x = np.asarray(x, dtype=float)
            self._xdot_new = None
            self._state_corrected()

    def _state_corrected(self) -> None:
        """Hook after `_correct_state` replaced ``self.x`` (methods that keep a copy update it)."""

    def _after_step(self) -> None:
        """Hook after an accepted (and corrected) step (e.g. to drop cached dense output)."""

    def dense(self, t: float) -> np.ndarray:
        """State on the last step [t_old, t] from the method's interpolant.

        Parameters
        ----------
        t : float
            Time in [t_old, t] of the last step.

        Returns
        -------
        ndarray, shape (n_state,)
        """
        if self.t_old is None:
            raise RuntimeError("`dense` is available only after the first step.")
        t = float(t)
        slack = 1e-9 * (self.t - self.t_old) + 4 * EPS * abs(self.t)
        if not (self.t_old - slack <= t <= self.t + slack):
            raise ValueError(f"`t` = {t!r} must lie in the last step [t_old, t] = "
                             f"[{self.t_old!r}, {self.t!r}].")
        if t == self.t:
            return self.x.copy()
        if t == self.t_old:
            return self.x_old.copy()
        with np.errstate(all="ignore"):
            return self._dense_impl(t)

    # -- the fixed-step schedule ----------------------------------------------------------------
    def _next_step(self) -> tuple[float, float] | None:
        """(t_next, h_step) of the fixed-step schedule t_k = t0 + k h, or None on underflow.

        ``h_step`` is exactly the nominal ``h`` unless the step is the last, shortened one, so
        that factorizations keyed by the step size are reused.
        """
        t_next = self.t0 + (self.n_steps + 1) * self.h
        if t_next >= self.t_end - 1e-9 * self.h:
            t_next = self.t_end
        if not t_next > self.t:
            return None
        h_step = t_next - self.t
        if abs(h_step - self.h) <= 8 * EPS * max(abs(self.t), abs(t_next), self.h):
            h_step = self.h                   # the step is nominal up to round-off in t
        return t_next, h_step

    def _count_option(self, name: str) -> int:
        """The option ``name`` as an integer >= 1 (an iteration count), or ValueError naming it."""
        value = self.options[name]
        try:
            number = operator.index(value)
        except TypeError:
            number = 0
        if number < 1:
            raise ValueError(f"`{name}` must be an integer >= 1, got {value!r}.")
        return number

    def _positive_option(self, name: str, expected: str = "a positive number", finite: bool = False) -> float:
        """The option ``name`` as a float > 0 (and finite if ``finite``), or ValueError naming it and
        what was ``expected``."""
        value = self.options[name]
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = np.nan
        if not number > 0 or (finite and not np.isfinite(number)):
            raise ValueError(f"`{name}` must be {expected}, got {value!r}.")
        return number

    def _trial_interval(self, h_next: float) -> tuple[float, float] | None:
        """(t1, h) of the next trial step of an adaptive method from its proposed size ``h_next``:
        h = min(h_next, max_step), and t1 = t_end exactly when t + h reaches t_end within 1e-9 h
        (so that the last step does not leave a sliver); None when h is not above the round-off
        of t, 16 eps max(|t|, 1) (a step-size underflow: the method reports its own cause)."""
        h = min(h_next, self.max_step)
        t1 = self.t + h
        if t1 >= self.t_end - 1e-9 * h:
            t1 = self.t_end
        h = t1 - self.t
        if not h > 16 * EPS * max(abs(self.t), 1.0):
            return None
        return t1, h

    def _schedule(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(t_next, h_step) of the next (at most) k steps of the schedule of `_next_step`, as arrays
        (for methods that take many steps in one call); shorter if t_end comes first."""
        j = np.arange(self.n_steps + 1, self.n_steps + k + 1, dtype=float)
        t_next = self.t0 + j * self.h
        last = np.flatnonzero(t_next >= self.t_end - 1e-9 * self.h)
        if last.size:
            t_next = t_next[:last[0] + 1]
            t_next[-1] = self.t_end
        t_prev = np.concatenate(([self.t], t_next[:-1]))
        h_step = t_next - t_prev
        nominal = np.abs(h_step - self.h) <= 8 * EPS * np.maximum(np.maximum(np.abs(t_prev), np.abs(t_next)), self.h)
        h_step[nominal] = self.h
        return t_next, h_step

    def _underflow_message(self) -> str:
        return (f"Step-size underflow at t = {self.t:.6g}: the step `h` = {self.h:.3g} is below the "
                "spacing of floating-point numbers there; increase `h`.")


class Factorization:
    """LU of a square matrix, real or complex: LAPACK for dense arrays (small models), SuperLU for sparse ones.

    The dense path calls LAPACK ``getrf``/``getrs`` directly, the routines behind
    ``scipy.linalg.lu_factor``/``lu_solve`` (same results), without their per-call wrapper
    overhead, which dominates for the small matrices refactorized at every step of a
    time-dependent frame motion.
    """

    def __init__(self, A):
        if sparse.issparse(A):
            from scipy.sparse.linalg import splu
            self._lu, self.dense = splu(sparse.csc_matrix(A)), False
        else:
            A = np.asarray(A)
            A = A if np.iscomplexobj(A) else A.astype(float, copy=False)    # complex: radau-dae's pair
            getrf, self._getrs = lapack(("getrf", "getrs"), A)
            lu, piv, info = getrf(A)
            if info < 0:
                raise ValueError(f"illegal value in argument {-info} of LAPACK getrf")
            if info > 0:
                from scipy.linalg import LinAlgWarning
                warnings.warn(f"Diagonal number {info} is exactly zero. Singular matrix.",
                              LinAlgWarning, stacklevel=2)
            self._lu, self.dense = (lu, piv), True

    def solve(self, b: np.ndarray) -> np.ndarray:
        if self.dense:
            x, info = self._getrs(*self._lu, b)
            if info < 0:
                raise ValueError(f"illegal value in argument {-info} of LAPACK getrs")
            return x
        return self._lu.solve(b)




def _linear_option(value, term) -> bool:
    """The ``linear`` option of the implicit methods: None -> the term's ``linear``."""
    if value is None:
        return bool(term.linear)
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"`linear` must be True, False or None, got {value!r}.")
    return bool(value)


def as_operator(A):
    """Dense arrays stay dense; anything sparse becomes CSC (for arithmetic and SuperLU)."""
    return sparse.csc_matrix(A) if sparse.issparse(A) else np.asarray(A, dtype=float)
