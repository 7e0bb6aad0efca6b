"""Case parameters: values given as text (``--set``, CSV, TOML) typed like the case's DEFAULTS."""
from __future__ import annotations

import ast
import math
import numbers

__all__ = ["ParameterError", "parse_parameters"]

# numbers.Integral and numbers.Real include numpy's integer and float scalars (numpy registers them)
# without importing numpy: `flexmbs cases` and `flexmbs --version` start without it.
TRUE, FALSE = {"true", "yes", "on", "1"}, {"false", "no", "off", "0"}


class ParameterError(ValueError):
    """An unknown parameter or a value of the wrong type; the message lists the valid keys."""


def _type_name(default) -> str:
    if isinstance(default, bool):
        return "a boolean (true/false)"
    if isinstance(default, numbers.Integral):
        return "an integer"
    if isinstance(default, numbers.Real):
        return "a number"
    if isinstance(default, str):
        return "a string"
    if isinstance(default, (tuple, list)):
        return f"a comma-separated list of {_type_name(default[0]).split(' ', 1)[1] if default else 'values'}"
    return "a Python literal"


def _coerce(value, default):
    """``value`` (a string from --set, or a TOML value) as the type of ``default``; ValueError if not."""
    text = isinstance(value, str)
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if text and value.strip().lower() in TRUE | FALSE:
            return value.strip().lower() in TRUE
        raise ValueError
    if isinstance(default, numbers.Integral):
        if isinstance(value, bool):
            raise ValueError
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if text:
            return int(value.strip().replace("_", ""))
        raise ValueError
    if isinstance(default, numbers.Real):
        if isinstance(value, bool):
            raise ValueError
        if isinstance(value, (int, float)):
            return float(value)
        if text:
            expr = value.strip().lower()
            if expr in ("pi", "np.pi") or expr.replace(" ", "").startswith(("pi/", "np.pi/")):
                num = expr.replace(" ", "").split("/", 1)
                return math.pi / (float(num[1]) if len(num) > 1 else 1.0)
            return float(value)
        raise ValueError
    if isinstance(default, str):
        if text:
            return value
        raise ValueError
    if isinstance(default, (tuple, list)):
        items = [v for v in value.split(",") if v.strip()] if text else value
        if not isinstance(items, (list, tuple)):
            raise ValueError
        out = [_coerce(v, default[0]) for v in items] if default else list(items)
        return type(default)(out)
    if text:                                           # a None or other default: a literal or a string
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value
    return value


def parse_parameters(case: str, defaults: dict, values: dict) -> dict:
    """Check ``values`` (key -> string or TOML value) against ``defaults`` and convert them.

    Raises
    ------
    ParameterError
        An unknown key or a value of the wrong type; the message lists the valid keys.
    """
    valid = ", ".join(f"{k} ({_short(v)})" for k, v in defaults.items())
    params = {}
    for key, value in values.items():
        key = key.replace("-", "_")
        if key not in defaults:
            import difflib                           # here: only a wrong key needs it
            close = difflib.get_close_matches(key, defaults, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ParameterError(f"unknown parameter {key!r} for case {case}{hint}\n"
                                 f"valid keys (default): {valid}")
        try:
            params[key] = _coerce(value, defaults[key])
        except (ValueError, TypeError):
            raise ParameterError(f"parameter {key!r} of case {case} must be {_type_name(defaults[key])} "
                                 f"(default {_short(defaults[key])}), got {value!r}\n"
                                 f"valid keys (default): {valid}") from None
    return params


def _short(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (tuple, list)):
        return ",".join(_short(v) for v in value)
    return repr(value) if isinstance(value, str) else str(value)
