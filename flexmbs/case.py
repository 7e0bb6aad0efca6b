"""One command line for every case script.

A case script (``cases/*.py``) has a module docstring, a ``DEFAULTS`` dict (parameter name ->
default value) and ``run(out=None, **params)``; it may have ``check(params)``, which raises
`CaseError` naming the parameter whose value is wrong.  Its command line is built from those:

.. code:: python

    from flexmbs.case import run_command

    def main(argv=None):
        runs, params, out, options, seconds = run_command("rotating_bar", __doc__, run, argv, DEFAULTS,
                                                          help=HELP, choices=CHOICES, check=check)
        ...                                 # the case's own printed lines

`run_command(name, description, run, argv, defaults, *, clear=True, quiet=None, **options)` is
the whole prologue of a case's ``main``: `command_line`, `parse_case_args`, `prepare_output`,
``run(out=out, **given)`` (the parameters given on the command line), `record_output`; it
returns a `CaseRun` ``(result, params, out, options, seconds)``.  The steps below are its parts.

`command_line(name, description, defaults, *, help=None, choices=None, types=None, flags=None,
check=None, run_time=None)` returns an `argparse.ArgumentParser` (whose description says the
case's run time at its defaults, its ``RUN_TIME``) with

- ``--key-with-dashes VALUE`` for every ``DEFAULTS`` key, typed like its default by the rules
  of ``flexmbs run --set`` (`flexmbs.parameters`): integers, numbers (``pi``, ``pi/100``
  accepted), strings, comma-separated lists; a key whose default is None takes ``types[key]``
  (default: a Python literal or a string);
- for a boolean key, ``--key`` alone (True) or ``--key true|false``, and ``--no-key`` when the
  default is True;
- ``choices[key]``: the allowed values of a key (checked by the parser and by
  `check_parameters`);
- ``flags``: extra flag options, option string -> (key, value), e.g.
  ``{"--undeformed-start": ("static_start", False)}``;
- ``--out DIR`` (default ``out/<name>``), ``--no-plots`` (skip plots and GIFs: the ``plots``
  parameter if the case has one, else ``options.plots``) and ``-v/--verbose`` (repeatable).

The case may add its own options to the parser; they end up in ``options``.

`parse_case_args(parser, argv)` returns ``(params, out, options)``: ``params`` every parameter
(defaults and the values given), ``out`` the output directory (a `pathlib.Path`, checked to be
creatable but not created), ``options`` an `argparse.Namespace` with ``verbose``, ``plots``
and the case's own options.  Bad values end the program like every argparse error (usage,
a message naming the option, exit status 2) before anything is written.  It also shows the
progress of the runs for the rest of the program (`flexmbs.progress.for_program`: a bar on a
terminal, a line every 10 s in a log).

`write_summary(out, summary)` writes DIR/summary.json with the keys that say what ran
(``kernel_installed``, ``kernel``); every case writes its summary with it.

`check_parameters(params, ...)` checks the values of a case's parameters by their own names
(the rules every case shares, by name: ``elements`` >= 1, ``t_end`` > 0, 0 < ``dt_out`` <=
``t_end``, 0 < ``rtol`` < 1, ``h`` > 0, ``damping`` >= 0, finite numbers), so that an error
names the parameter the user set, not the library argument it becomes.

`system_run_options(method, ...)` gives the arguments of `flexmbs.run` for a multibody case's
choice of integrator (formulation, step or tolerances), and `recording_into(out)` streams the
runs of a case into DIR/results.h5 (the CLI's recording when it runs the case).

`prepare_output(out, clear=True, parser=None)` makes the output directory and clears the previous run's files
(only those a run listed in ``DIR/.flexmbs_files``, never a user's own files) and says so;
`record_output(out, before)` lists the files the run wrote in that manifest.

`write_run_histories(out, result, p, figures)` writes one run's results.npz and summary.json
(`write_run`) and, when plots are wanted, the time histories ``figures(result, p)`` names
(file name -> arguments of `flexmbs.plots.history_panels`).
"""
from __future__ import annotations

import argparse
import logging
import math
import os
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .parameters import FALSE, TRUE, ParameterError, _coerce, _short, _type_name

__all__ = ["CaseError", "CaseRun", "run_command", "command_line", "parse_case_args", "check_parameters", "check_output_dir",
           "prepare_output", "record_output", "resolve", "write_summary", "write_results", "write_run",
           "write_run_histories", "MANIFEST",
           "system_run_options", "recording_into"]

log = logging.getLogger("flexmbs.case")

MANIFEST = ".flexmbs_files"          # the files the last run wrote into an output directory


class CaseError(ValueError):
    """A case parameter with a value the case cannot run with; ``key`` is the parameter."""

    def __init__(self, key: str, message: str):
        self.key, self.detail = key, message
        super().__init__(f"parameter {key!r}: {message}")


# ------------------------------------------------------------------------------------ the parser
class CaseParser(argparse.ArgumentParser):
    """An ArgumentParser that knows the case's name, DEFAULTS and check (see `command_line`)."""

    case_name: str
    defaults: dict
    check = None


def _option(key: str) -> str:
    return "--" + key.replace("_", "-")


def _typed(key: str, default, kind=None):
    """argparse ``type`` callable: text -> the type of ``default`` (or ``kind``)."""
    def convert(text):
        try:
            if kind is not None:
                return kind(text)
            return _coerce(text, default)
        except (ValueError, TypeError):
            what = _type_name(kind()) if kind in (int, float, str) else _type_name(default)
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    convert.__name__ = _type_name(default) if kind is None else getattr(kind, "__name__", "value")
    return convert


def _boolean(text: str) -> bool:
    value = text.strip().lower()
    if value not in TRUE | FALSE:
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return value in TRUE


def command_line(name: str, description: str, defaults: dict, *, help: dict | None = None,
                 choices: dict | None = None, types: dict | None = None, flags: dict | None = None,
                 check=None, run_time: str | None = None) -> CaseParser:
    """The argument parser of case ``name``: one option per ``defaults`` key (module docstring).

    Parameters
    ----------
    name : str
        The case name; ``--out`` defaults to ``out/<name>``.
    description : str
        The case's docstring (its first line is shown by ``--help``).
    defaults : dict
        The case's DEFAULTS.
    help : dict, optional
        key -> help text of the option.
    choices : dict, optional
        key -> allowed values.
    types : dict, optional
        key -> type (``float``, ``int``, ``str``) of a key whose default is None.
    flags : dict, optional
        extra flag option (e.g. ``"--undeformed-start"``) -> (key, value it sets).
    check : callable, optional
        ``check(params)`` raising `CaseError` (or ValueError) for bad values; run by `parse_case_args`.
    run_time : str, optional
        How long the case runs at its defaults on a 2-core machine (the case's ``RUN_TIME``, e.g.
        "about 70 s"); ``--help`` says it after the description.
    """
    help, choices, types, flags = help or {}, choices or {}, types or {}, flags or {}
    for what, keys in (("help", help), ("choices", choices), ("types", types)):
        unknown = sorted(set(keys) - set(defaults))
        if unknown:
            raise ValueError(f"command_line({name!r}): {what} for keys {unknown} not in DEFAULTS")
    first = (description or name).strip().splitlines()[0]
    if run_time:
        first += f" Run time at the defaults: {run_time} on a 2-core machine."
    parser = CaseParser(prog=f"{name}.py", description=first,
                        epilog=f"`flexmbs run {name} --set KEY=VALUE` takes the same parameters (with underscores).")
    parser.case_name, parser.defaults, parser.check = name, dict(defaults), check
    group = parser.add_argument_group("parameters (DEFAULTS of the case)")
    for key, default in defaults.items():
        text = help.get(key, key.replace("_", " "))
        opt = _option(key)
        if isinstance(default, bool):
            group.add_argument(opt, dest=key, nargs="?", const=True, type=_boolean, metavar="true|false",
                               default=argparse.SUPPRESS, help=f"{text} (default {str(default).lower()})")
            if default and f"--no-{opt[2:]}" not in flags:
                group.add_argument(f"--no-{opt[2:]}", dest=key, action="store_const", const=False,
                                   default=argparse.SUPPRESS,
                                   help="skip the plots and GIF animations" if key == "plots"
                                   else f"the same as {opt} false")
            continue
        kind = types.get(key)
        if key in choices:
            allowed = list(choices[key])
            kind = kind or (type(allowed[0]) if allowed and default is None else None)
            group.add_argument(opt, dest=key, type=_typed(key, default, kind), choices=allowed,
                               default=argparse.SUPPRESS,
                               help=f"{text} (default {_short(default)}; one of {', '.join(map(str, allowed))})")
        else:
            group.add_argument(opt, dest=key, type=_typed(key, default, kind), metavar=key.upper(),
                               default=argparse.SUPPRESS, help=f"{text} (default {_short(default)})")
    for option, (key, value) in flags.items():
        if key not in defaults:
            raise ValueError(f"command_line({name!r}): flag {option} sets {key!r}, not a DEFAULTS key")
        group.add_argument(option, dest=key, action="store_const", const=value, default=argparse.SUPPRESS,
                           help=f"set {key} = {value}")
    general = parser.add_argument_group("output")
    general.add_argument("--out", type=Path, default=Path("out") / name, metavar="DIR",
                         help=f"output directory (default out/{name})")
    if "plots" not in defaults:
        general.add_argument("--no-plots", dest="_plots", action="store_false", default=True,
                             help="skip the plots and GIF animations (results files only)")
    general.add_argument("-v", "--verbose", action="count", default=0,
                         help="say more of what is done (repeat for more)")
    return parser


def parse_case_args(parser: CaseParser, argv=None) -> tuple[dict, Path, argparse.Namespace]:
    """``(params, out, options)`` from the command line ``argv`` (module docstring).

    Exits with status 2 and a message naming the option for a value of the wrong type, a value
    ``check`` refuses, or an ``--out`` that is a file or cannot be created; nothing is written.
    """
    _, params, out, options = _parse_given(parser, argv)
    return params, out, options


def _parse_given(parser: CaseParser, argv) -> tuple[dict, dict, Path, argparse.Namespace]:
    """`parse_case_args` and, first, the parameters given on the command line (no defaults)."""
    ns = vars(parser.parse_args(argv))
    given = {k: ns.pop(k) for k in list(ns) if k in parser.defaults}
    params = {**parser.defaults, **given}
    out = ns.pop("out")
    # --no-plots of a case without a `plots` parameter is the hidden option _plots
    plots = params["plots"] if "plots" in parser.defaults else ns.pop("_plots", True)
    options = argparse.Namespace(**ns, plots=plots)
    if parser.check is not None:
        try:
            parser.check(params)
        except CaseError as err:
            opt = _option(err.key) if err.key in parser.defaults else err.key
            parser.error(f"argument {opt}: {err.detail}")
        except ValueError as err:
            parser.error(str(err))
    try:
        check_output_dir(out)
    except ValueError as err:
        parser.error(f"argument --out: {err}")
    level = {0: logging.INFO}.get(options.verbose, logging.DEBUG)
    logging.basicConfig(level=level, format="%(message)s")
    from . import progress
    progress.for_program()              # a bar on a terminal, a line every few seconds in a log
    return given, params, out, options


class CaseRun(NamedTuple):
    """One run of a case from its command line (`run_command`)."""

    result: object              # what the case's ``run`` returned
    params: dict                # every parameter: the defaults and the values given
    out: Path                   # the output directory
    options: argparse.Namespace  # verbose, plots and the case's own options
    seconds: float              # wall time from making ``out`` to listing the files written


def run_command(name: str, description: str, run, argv, defaults: dict, *, clear: bool = True,
                quiet: int | None = None, **command_line_options) -> CaseRun:
    """The command line of case ``name``: parse ``argv``, make the output directory, ``run``, list
    the files written.

    The steps every case's ``main(argv)`` takes: the parser `command_line(name, description,
    defaults, **command_line_options)`; `parse_case_args` (bad input ends the program, status 2,
    nothing written); `prepare_output` (``clear=False``: keep the previous run's files, for a case
    that resumes); ``run(out=out, **given)`` with the parameters given on the command line only,
    as ``flexmbs run NAME --set KEY=VALUE`` passes them (the case's `resolve` adds the defaults,
    and the case can tell a value given from a default); `record_output`.  With ``quiet`` (a
    `logging` level) and no ``-v``, the "flexmbs" logger is held at that level during the run
    (restored after it: ``main`` may run inside another program).  A `CaseError` that ``run``
    raises (a value found bad only once the run has read its inputs) ends the program like a
    bad option, and removes the output directory if this run made it and left it empty.

    Returns
    -------
    CaseRun
        ``(result, params, out, options, seconds)``: what ``run`` returned, every parameter,
        the output directory, the options (verbose, plots, the case's own) and the wall time of
        the run and its output.
    """
    parser = command_line(name, description, defaults, **command_line_options)
    given, params, out, options = _parse_given(parser, argv)
    tic = time.perf_counter()
    existed = out.is_dir()
    out, before = prepare_output(out, clear=clear, parser=parser)
    flexmbs_log = logging.getLogger("flexmbs")
    level = flexmbs_log.level
    if quiet is not None and not options.verbose:
        flexmbs_log.setLevel(quiet)
    try:
        result = run(out=out, **given)
    except CaseError as err:
        if not existed and not any(out.iterdir()):
            out.rmdir()
        opt = _option(err.key) if err.key in defaults else err.key
        parser.error(f"argument {opt}: {err.detail}")
    finally:
        flexmbs_log.setLevel(level)
    record_output(out, before)
    return CaseRun(result, params, out, options, time.perf_counter() - tic)


# ---------------------------------------------------------------------------------- value checks
def _number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def check_parameters(params: dict, defaults: dict | None = None, *, choices: dict | None = None,
                     positive=(), nonnegative=(), at_least: dict | None = None) -> dict:
    """Check case parameters by name; returns ``params``, raises `CaseError` naming the key.

    Rules: every number finite (when its default is); ``choices[key]``: one of the listed
    values (None allowed if the default is None); ``positive`` keys > 0; ``nonnegative``
    keys >= 0; ``at_least[key]``: minimum; and, for the keys every case shares, by name:
    ``elements`` >= 1, ``t_end``, ``h`` > 0, 0 < ``dt_out`` <= ``t_end``, 0 < ``rtol`` < 1,
    ``damping`` (a damping ratio) >= 0, ``gif_frames`` >= 0, ``workers`` >= 1, 0 <= ``rho_inf`` < 1
    (the spectral radius at infinite frequency of the generalized-alpha methods).
    """
    defaults = defaults or {}
    for key, value in params.items():
        default = defaults.get(key)
        finite_default = not (isinstance(default, float) and not math.isfinite(default))
        if _number(value) and finite_default and not math.isfinite(float(value)):
            raise CaseError(key, f"must be a finite number, got {value!r}")
    for key, allowed in (choices or {}).items():
        if key in params and params[key] not in allowed and not (params[key] is None and defaults.get(key, 0) is None):
            raise CaseError(key, f"must be one of {', '.join(map(str, allowed))}, got {params[key]!r}")
    minimum = {"elements": 1, "workers": 1, "gif_frames": 0, "damping": 0.0}
    minimum.update({k: 0.0 for k in nonnegative})
    minimum.update(at_least or {})
    strict = set(positive) | {"t_end", "h", "dt_out"}
    for key in strict:
        value = params.get(key)
        if _number(value) and not value > 0:
            raise CaseError(key, f"must be positive, got {value!r}")
    for key, low in minimum.items():
        value = params.get(key)
        if _number(value) and value < low:
            what = "a damping ratio, must be >= 0" if key == "damping" else f"must be >= {low:g}"
            raise CaseError(key, f"{what}, got {value!r}")
    rtol = params.get("rtol")
    if _number(rtol) and not 0.0 < rtol < 1.0:
        raise CaseError("rtol", f"a relative tolerance, must lie in (0, 1), got {rtol!r}")
    rho_inf = params.get("rho_inf")
    if _number(rho_inf) and not 0.0 <= rho_inf < 1.0:
        raise CaseError("rho_inf", f"must lie in [0, 1), got {rho_inf!r}")
    t_end, dt_out = params.get("t_end"), params.get("dt_out")
    if _number(t_end) and _number(dt_out) and dt_out > t_end:
        raise CaseError("dt_out", f"the output interval must not exceed t_end = {_short(t_end)} s, "
                                  f"got {_short(dt_out)} s")
    return params


def write_summary(out, summary: dict) -> Path:
    """DIR/summary.json: ``summary`` and what ran, ``kernel_installed`` (bool) and ``kernel``
    ("compiled", "numpy", "mixed" or "none": the path of the index3-alpha runs since the last
    summary, `flexmbs.compiled.summary_keys`); a summary that names its ``kernel`` keeps it.
    Every case writes its summary.json with this, whole or not at all (`_write_whole`)."""
    import json

    from .compiled import summary_keys
    ran = summary_keys()
    if summary.get("kernel") is not None:
        del ran["kernel"]
    path = Path(out) / "summary.json"
    text = json.dumps({**summary, **ran}, indent=2, default=float)
    _write_whole(path, lambda part: part.write_text(text, encoding="utf-8"))
    return path


def write_results(out, arrays: dict, summary: dict) -> None:
    """DIR/results.npz (the named ``arrays``) and DIR/summary.json (``summary``, `write_summary`)
    of one run.

    Each file is written whole or not at all (`_write_whole`).  results.npz is not compressed
    (``np.savez``): zlib cost 15 ms of the coupled slider-crank's 0.6 s process for 0.3 MB saved
    (docs/benchmarks.md 20.6); ``np.load`` reads the same arrays.

    Raises
    ------
    flexmbs.io.DiskFullError
        The disk is full: "no space left on device: N outputs kept in DIR/results.npz" (N the
        outputs ``arrays["t"]`` holds, 0 if results.npz could not be written), and which
        file is missing.
    """
    from .io.store import DiskFullError, is_disk_full

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    npz, n = out / "results.npz", len(np.atleast_1d(arrays.get("t", ())))
    try:
        _write_whole(npz, lambda path: np.savez(path, **arrays))
    except OSError as err:
        if is_disk_full(err):
            raise DiskFullError(npz, 0, f"the run's {n} outputs and its summary.json could not be written") from err
        raise
    try:
        write_summary(out, summary)
    except OSError as err:
        if is_disk_full(err):
            raise DiskFullError(npz, n, "summary.json could not be written") from err
        raise


def _write_whole(path: Path, write) -> None:
    """``write(part)`` into ``part`` next to ``path``, then renamed to ``path``: a failed write
    (a full disk) leaves no cut-off file, and no previous one that would pass for this run's."""
    part = path.with_name(f".{path.stem}.part{path.suffix}")        # np.savez keeps a .npz suffix
    path.unlink(missing_ok=True)
    try:
        write(part)
        os.replace(part, path)
    except BaseException:
        part.unlink(missing_ok=True)
        raise


def write_run(out, result: dict, p: dict) -> bool:
    """`write_results` of one run's ``result`` (its arrays, and its ``summary`` as summary.json);
    True when plots are wanted: option ``plots`` on and at least two outputs."""
    write_results(out, {k: v for k, v in result.items() if k != "summary"}, result["summary"])
    return bool(p.get("plots", True)) and len(result["t"]) >= 2


def write_run_histories(out, result: dict, p: dict, figures) -> None:
    """`write_run` of one run's ``result``, then, when plots are wanted, its time histories:
    ``figures(result, p)`` -> {file name: keyword arguments of `flexmbs.plots.history_panels`
    (``panels``, ``title``, ``xlabel``)}, each drawn into DIR/<file name>.

    ``figures`` is called only when plots are wanted (option ``plots`` on and at least two
    outputs), so that a run without plots neither imports matplotlib nor builds the curves.
    """
    if not write_run(out, result, p):
        return
    from . import plots
    for name, panels in figures(result, p).items():
        plots.save(plots.history_panels(**panels), Path(out) / name)


def system_run_options(method: str, *, h: float, rtol: float, atol: float | None = None,
                       rho_inf: float | None = None, index1: str = "lagrange",
                       formulation_options: dict | None = None) -> dict:
    """Arguments of `flexmbs.run(system, ...)` for a multibody case's integrator ``method``.

    index3-alpha, hht and newmark run the formulation "index3" with the step ``h`` and ``rho_inf``,
    index3-alpha-adaptive the same with ``rtol`` and ``atol`` (default ``rtol / 100``) and no ``h``,
    radau-dae likewise without ``rho_inf``, rattle the same formulation with the step ``h``; any other
    method runs the index-1 formulation ``index1`` ("lagrange": the augmented accelerations, or
    "udwadia-kalaba") with its ``formulation_options`` (e.g. ``stabilization``): a fixed-step
    method with ``h``, an adaptive one with ``rtol`` and ``atol`` (default ``rtol / 100``) and
    no ``h`` (it would be the first trial step, and change the run).
    """
    from .formulations.registry import ALPHA_METHODS, INDEX3_METHODS, system_methods
    from .integrators import INTEGRATORS
    if method not in system_methods():
        raise ValueError(f"`method` must be one of {system_methods()} (the integrators that run a System), "
                         f"got {method!r}")
    if method == "rattle":
        return dict(formulation="index3", method=method, h=h)
    if method in INDEX3_METHODS:        # index3-alpha and its coefficient sets (hht, newmark), adaptive or not; radau-dae
        damping = {} if rho_inf is None or method not in ALPHA_METHODS else {"rho_inf": rho_inf}
        if INTEGRATORS[method].uses_tolerances:
            return dict(formulation="index3", method=method, h=None, rtol=rtol,
                        atol=rtol / 100 if atol is None else atol, **damping)
        return dict(formulation="index3", method=method, h=h, **damping)
    options = dict(formulation=index1, method=method, formulation_options=formulation_options)
    if INTEGRATORS[method].uses_tolerances:
        return dict(options, h=None, rtol=rtol, atol=rtol / 100 if atol is None else atol)
    return dict(options, h=h)


def recording_into(out):
    """The `flexmbs.io.recording` of DIR/results.h5 for ``out`` (every `flexmbs.run` inside
    streams into it; the CLI's own recording of the same file is reused), or, for ``out`` None,
    a context that records nothing."""
    import contextlib

    from .io import recording
    return recording(Path(out) / "results.h5") if out is not None else contextlib.nullcontext()


# ----------------------------------------------------------------------------- output directory
def check_output_dir(out) -> Path:
    """``out`` as a Path if it is a directory or can be made one (nothing is created); else ValueError."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} exists and is not a directory; give a directory for the output")
    parent = out
    while not parent.exists():                         # the nearest existing ancestor must be a writable dir
        if parent.parent == parent:
            break
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        raise ValueError(f"cannot create {out}: {parent} is a file, not a directory")
    if parent.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write in {parent} (permission denied); choose another output directory")
    return out


def _snapshot(out: Path) -> dict:
    return {p.relative_to(out).as_posix(): (p.stat().st_mtime_ns, p.stat().st_size)
            for p in out.rglob("*") if p.is_file() and p.name != MANIFEST}


def prepare_output(out, clear: bool = True, parser: argparse.ArgumentParser | None = None) -> tuple[Path, dict]:
    """Make the output directory; remove the files the previous run listed in its manifest.

    Returns ``(out, before)``; pass ``before`` to `record_output` after the run.  Files the
    previous run did not write (a user's own files) are left alone; with ``clear=False``
    (a case that resumes, such as a parameter study: module attribute ``RESUMES = True``)
    nothing is removed.  Raises ValueError if the directory cannot be made, or, given the case's
    ``parser``, ends the program with its usage error (status 2).
    """
    try:
        out = check_output_dir(out)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ValueError(f"cannot create the output directory {out}: {err.strerror or err}") from None
    except ValueError as err:
        if parser is None:
            raise
        parser.error(f"argument --out: {err}")
    manifest = out / MANIFEST
    removed = []
    if clear and manifest.is_file():
        for line in manifest.read_text(encoding="utf-8").splitlines():
            name = line.strip()
            if not name or Path(name).is_absolute() or ".." in Path(name).parts:
                continue
            path = out / name
            if not path.parent.resolve().is_relative_to(out.resolve()):     # a linked folder: not ours
                continue
            if path.is_file() or path.is_symlink():
                path.unlink()
                removed.append(name)
        manifest.unlink()
    if removed:
        shown = ", ".join(sorted(removed)[:6]) + (", ..." if len(removed) > 6 else "")
        print(f"{out}: removed {len(removed)} file(s) of the previous run ({shown})")
    return out, _snapshot(out)


def record_output(out, before: dict) -> list[str]:
    """List in ``DIR/.flexmbs_files`` the files under ``out`` the run wrote (new or changed
    since ``before``, the snapshot `prepare_output` returned); returns their names."""
    out = Path(out)
    if not out.is_dir():
        return []
    now = _snapshot(out)
    names = sorted(k for k, v in now.items() if before.get(k) != v)
    if (out / MANIFEST).is_file():                  # a nested run (the CLI around a case main) listed some
        listed = (out / MANIFEST).read_text(encoding="utf-8").split()
        names = sorted(set(names) | {n for n in listed if (out / n).is_file()})
    (out / MANIFEST).write_text("".join(n + "\n" for n in names), encoding="utf-8")
    return names


def resolve(name: str, defaults: dict, params: dict, check=None) -> dict:
    """``{**defaults, **params}`` after refusing unknown keys and running ``check`` on it.

    Raises
    ------
    flexmbs.parameters.ParameterError
        An unknown key (the message lists the valid keys and suggests the closest).
    CaseError
        A value ``check`` refuses.
    """
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        import difflib
        close = difflib.get_close_matches(unknown[0], defaults, n=1)
        raise ParameterError(f"unknown parameter(s) {unknown} for case {name}"
                             f"{'; did you mean ' + repr(close[0]) + '?' if close else ''}; "
                             f"valid keys: {', '.join(defaults)}")
    p = {**defaults, **params}
    if check is not None:
        check(p)
    from .compiled import forget_paths
    forget_paths()                      # the case starts: its summary speaks of its own runs
    return p
