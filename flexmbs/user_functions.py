"""The user's functions of time (drivers' laws, loads), called and checked where their values enter.

A law or a load that raises, or gives NaN or inf, is named with the time at which it did so,
instead of leaving a non-finite state to be blamed on the step size.  In a step the error
stops the run with status "failed" and the outputs so far, on the numpy and on the compiled
path of ``index3-alpha`` alike (docs/integrators.md, "Failures").
"""
from __future__ import annotations

import math

__all__ = ["UserFunctionError", "evaluate", "raised", "non_finite", "require_finite"]


class UserFunctionError(ValueError, ArithmeticError):
    """A user's function (a driver's law, a load) raised or gave NaN or inf at a time t.

    A ValueError: at the start of a run it is bad input.  An ArithmeticError: in a step, the
    integrators' guard (`flexmbs.integrators.base.Integrator.step`) turns it into status
    "failed" with this message, keeping the outputs computed before the step.
    """


def evaluate(what: str, t: float, f, *args):
    """``f(*args)``; any exception it raises becomes a `UserFunctionError` naming ``what`` and t
    (the original exception is its ``__cause__``).  Hot paths that would rather not build ``what``
    at every call write the same try/except with `raised`."""
    try:
        return f(*args)
    except UserFunctionError:
        raise
    except Exception as err:
        raise raised(what, t, err) from err


def raised(what: str, t: float, err: Exception) -> UserFunctionError:
    """The error of ``what`` having raised ``err`` at t (raise it ``from err``)."""
    return UserFunctionError(f"{what} raised {type(err).__name__} at t = {t:.6g}: {err}")


def non_finite(what: str, t: float, shown: str | None = None) -> UserFunctionError:
    """The error of ``what`` having given NaN or inf at t (``shown``: the value as the message gives it)."""
    value = "" if shown is None else f" ({shown})"
    return UserFunctionError(f"{what} gave NaN or inf at t = {t:.6g}{value}; a law or load must be finite at "
                             "every time of the run")


def require_finite(values, what: str, t: float, shown: str | None = None) -> None:
    """`non_finite` raised unless every entry of ``values`` (an iterable of floats) is finite."""
    if not all(math.isfinite(x) for x in values):
        raise non_finite(what, t, shown)
