"""The ``flexmbs`` command (also ``python -m flexmbs``).

.. code:: text

    flexmbs run CASE [--set KEY=VALUE ...] [--out DIR]   run a case of cases/ (CASE: file name without .py)
    flexmbs run FILE.toml [--set KEY=VALUE ...]          the same with the parameters in a TOML file
    flexmbs cases                                        list the cases with their one-line description
    flexmbs bench [TIMING OPTIONS]                       time the formulations (cases/timing.py)
    flexmbs results FILE                                 the runs in a results file, their status and metadata
                                                         (a System run: bodies, constraints, energy drift)
    flexmbs export FILE [--run NAME] [--out DIR]         ParaView files (XDMF + HDF5, VTU) from a results file
    flexmbs view DIR [--field NAME] [--time T]           play a run's bodies in 3D (pyvista: pip install "flexmbs[view]")
    flexmbs view DIR --screenshot FILE [--time T]        one frame saved off-screen (--video FILE.mp4|.gif: the run)
    flexmbs mesh info FILE                               a mesh file's cells, sets and size
    flexmbs fmu CASE [--out FILE.fmu]                    an FMI 2.0 co-simulation FMU (`flexmbs.fmi`, docs/fmi.md)
    flexmbs info                                         versions of flexmbs and its dependencies, the kernel

A case is any ``cases/*.py`` with a module docstring, a ``DEFAULTS`` dict (its parameter names,
with underscores, and default values) and ``run(out=None, **params)``.  ``--set`` values are
parsed to the type of the ``DEFAULTS`` entry; the case's ``check(params)``, if it has one,
refuses bad values by their names (`flexmbs.case`).  Bad input of any kind is found before the
output directory is made, and exits with status 2 (1: a run failed; 74: the disk is full, with
"no space left on device: N outputs kept in FILE"; 130: interrupted).  A
second run into the same directory removes the files the first listed in ``.flexmbs_files``
(unless the case sets ``RESUMES = True``).  ``run`` writes into ``--out`` (default
``out/CASE``): what the case writes itself (``results.npz``, plots), ``results.h5`` (every
run of the case, streamed while it runs: see `flexmbs.load_results`), ParaView files of each
run in it (`flexmbs.io.export_paraview`: a Model's run in its body and the global frame, a
System's run every body and joint in the global frame; none with ``--no-paraview`` or the case
parameter ``paraview=false``) and ``case.toml`` (the resolved parameters; ``flexmbs run
DIR/case.toml`` repeats the run).  A case that integrates without `flexmbs.run` leaves no
results.h5, and the command says so ("case X ran without flexmbs.run: no results.h5").

The cases directory is ``--cases DIR`` (an error, status 2, if it does not exist), else the
first that exists of ``$FLEXMBS_CASES``, ``./cases`` and the cases that ship with flexmbs
(``flexmbs/cases`` of an installed wheel, ``cases/`` of the source tree; see
`flexmbs.package_data`).  ``info`` also says whether the compiled kernel of index3-alpha is
installed (`flexmbs.compiled.kernel_status`).
"""
from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import logging
import math
import numbers
import os
import signal
import sys
import threading
from pathlib import Path

from .frozen import FrozenFields
from .parameters import ParameterError, _short, _type_name, parse_parameters as _parse_parameters

__all__ = ["main", "CLIError", "find_cases_dir", "discover_cases", "load_case", "parse_parameters",
           "read_case_toml", "dump_toml"]

log = logging.getLogger("flexmbs.cli")

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_IO = 74                        # a file could not be written (the disk is full): EX_IOERR of sysexits.h


class CLIError(Exception):
    """Bad input on the command line or in a case file; the message says what to change."""


# ----------------------------------------------------------------------------------------- cases
class CaseInfo(FrozenFields):
    """A case script found in the cases directory (read from its code object, not run: `_module_names`)."""

    def __init__(self, name: str, path: Path, summary: str):
        self._set_fields(locals())


def find_cases_dir(explicit=None) -> Path:
    """The cases directory: ``explicit`` (``--cases``: it must exist), ``$FLEXMBS_CASES``,
    ``./cases`` or the shipped cases."""
    from .package_data import package_data_dir
    if explicit and not Path(explicit).is_dir():
        what = "is not a directory" if Path(explicit).exists() else "does not exist"
        raise CLIError(f"--cases: {explicit} {what}; give the directory of the case scripts (cases/*.py)")
    candidates = [Path(explicit)] if explicit else []
    if os.environ.get("FLEXMBS_CASES"):
        candidates.append(Path(os.environ["FLEXMBS_CASES"]))
    candidates += [Path.cwd() / "cases", package_data_dir("cases")]
    for c in candidates:
        if c is not None and c.is_dir():
            return c
    raise CLIError("no cases directory found (looked in $FLEXMBS_CASES, ./cases and the cases installed with "
                   "flexmbs, which are missing: reinstall flexmbs); pass --cases DIR")


def _case_info(path: Path) -> CaseInfo | None:
    """CaseInfo of a file with a docstring, a module-level DEFAULTS and a run function, else None.

    Read from the file's code object (`_module_names`), which Python's bytecode cache holds once
    the case has run: parsing the source with ``ast`` cost 7 ms for the triple pendulum's case and
    19 ms for the slider-crank's in every run (docs/benchmarks.md 20.6)."""
    try:
        names, doc = _module_names(path)
    except (SyntaxError, UnicodeDecodeError, ValueError, OSError, ImportError) as err:
        log.warning("skipping %s: %s", path, err)
        return None
    if not {"DEFAULTS", "run"} <= names:
        return None
    import inspect
    doc = inspect.cleandoc(doc).strip() if doc else ""
    return CaseInfo(path.stem, path, doc.splitlines()[0] if doc else "")


def _module_names(path: Path) -> tuple[set[str], str | None]:
    """(the names the module at ``path`` binds at its top level, its docstring or None), from its
    code object as an import gets it (`importlib.machinery.SourceFileLoader.get_code`: the cached
    bytecode when it is current, else compiled, the source not executed).  The names are those of
    the module's own STORE_NAME instructions: assignments, functions and classes, also those in an
    ``if`` or ``try`` block at the top level and the names imports bind; the docstring is the
    constant stored as ``__doc__`` before any other name."""
    import dis
    import importlib.machinery
    code = importlib.machinery.SourceFileLoader(path.stem, str(path)).get_code(path.stem)
    names, doc, constant = set(), None, None
    for ins in dis.get_instructions(code):
        if ins.opname == "STORE_NAME":
            if ins.argval == "__doc__" and not names and isinstance(constant, str):
                doc = constant
            names.add(ins.argval)
        constant = ins.argval if ins.opname == "LOAD_CONST" else None
    return names, doc


def discover_cases(directory) -> dict[str, CaseInfo]:
    """Every case of ``directory``, by name, sorted."""
    found = (_case_info(p) for p in sorted(Path(directory).glob("*.py")) if not p.name.startswith("_"))
    return {c.name: c for c in found if c is not None}


def _import(path: Path):
    """Import a script as the module named after its file (its directory goes on sys.path, so
    that sibling imports such as ``import rotating_bar`` work)."""
    directory = str(path.parent)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    module = sys.modules.get(path.stem)
    if module is not None and Path(getattr(module, "__file__", "") or "").resolve() == path.resolve():
        return module
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[path.stem]
        raise
    return module


def load_case(info: CaseInfo):
    """Import a case script as a module and check it has DEFAULTS and run."""
    module = _import(info.path)
    for attr in ("DEFAULTS", "run"):
        if not hasattr(module, attr):
            raise CLIError(f"case {info.name} ({info.path}) has no `{attr}`")
    return module


def find_case(name: str, cases_dir) -> CaseInfo:
    """The case ``name`` of the cases directory: its own file is read (`_case_info`), the others only
    to list them when ``name`` is not a case."""
    directory = find_cases_dir(cases_dir)
    path = directory / f"{name}.py"
    if Path(name).name == name and not name.startswith("_") and path.is_file():
        info = _case_info(path)
        if info is not None:
            return info
    cases = discover_cases(directory)
    if name not in cases:
        if (directory / f"{name}.py").is_file():
            hint = " (for the formulation timing use `flexmbs bench`)" if name == "timing" else ""
            raise CLIError(f"{directory / (name + '.py')} is not a case: a case has a module docstring, "
                           f"a DEFAULTS dict and a run function{hint}")
        import difflib                          # here, not at the top: a run never needs it
        close = difflib.get_close_matches(name, cases, n=1)
        raise CLIError(f"no case {name!r} in {directory}{'; did you mean ' + repr(close[0]) + '?' if close else ''} "
                       f"Cases: {', '.join(cases) or 'none'}")
    return cases[name]


# ------------------------------------------------------------------------------------ parameters
def parse_parameters(case: str, defaults: dict, values: dict) -> dict:
    """``parameters.parse_parameters`` with its errors as usage errors of the command."""
    try:
        return _parse_parameters(case, defaults, values)
    except ParameterError as err:
        raise CLIError(str(err)) from None


def check_case_values(module, name: str, params: dict) -> None:
    """The case's own ``check(params)`` (if it has one), its errors as usage errors naming the parameter."""
    from .case import CaseError
    check = getattr(module, "check", None)
    if check is None:
        return
    try:
        check(params)
    except CaseError as err:
        raise CLIError(f"parameter {err.key!r} of case {name}: {err.detail}") from None
    except ValueError as err:
        raise CLIError(f"case {name}: {err}") from None


def parse_sets(items) -> dict:
    """``--set KEY=VALUE`` items as {KEY: VALUE} (values stay strings; `parse_parameters` types them)."""
    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CLIError(f"--set expects KEY=VALUE (e.g. --set t_end=0.5), got {item!r}")
        out[key.strip()] = value.strip()
    return out


# ------------------------------------------------------------------------------------------ TOML
def read_case_toml(path) -> tuple[str, dict, str | None]:
    """(case, parameters, out) from a case file.

    .. code:: toml

        case = "rotating_bar"          # required
        out = "out/my_run"             # optional output directory
        [parameters]                   # optional; the case's DEFAULTS keys
        elements = 20
    """
    import tomllib                              # 8 ms of imports: only for a case file
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CLIError(f"case file {path} not found") from None
    except tomllib.TOMLDecodeError as err:
        raise CLIError(f"{path} is not valid TOML: {err}") from None
    unknown = sorted(set(data) - {"case", "out", "parameters", "flexmbs_version", "written"})
    if unknown:
        raise CLIError(f"{path}: unknown top-level keys {unknown}; a case file has `case`, `out` and a "
                       "[parameters] table")
    if not isinstance(data.get("case"), str):
        raise CLIError(f"{path}: `case` must name a case (e.g. case = \"rotating_bar\"), "
                       f"got {data.get('case')!r}")
    params = data.get("parameters", {})
    if not isinstance(params, dict):
        raise CLIError(f"{path}: `parameters` must be a table ([parameters])")
    out = data.get("out")
    return data["case"], params, None if out is None else str(out)


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        value = float(value)
        return ("inf" if value > 0 else "-inf") if math.isinf(value) else "nan" if math.isnan(value) else repr(value)
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def dump_toml(case: str, params: dict, out=None) -> str:
    """A case file (see `read_case_toml`) with every parameter; None values become comments."""
    from . import __version__
    lines = ["# flexmbs case file: `flexmbs run THIS_FILE` repeats the run.",
             f'flexmbs_version = "{__version__}"',
             f'written = "{datetime.datetime.now().astimezone().isoformat(timespec="seconds")}"',
             f"case = {_toml_value(case)}"]
    if out is not None:
        lines.append(f"out = {_toml_value(Path(out).as_posix())}")
    lines += ["", "[parameters]"]
    for key, value in params.items():
        lines.append(f"# {key} = None (not set)" if value is None else f"{key} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


# -------------------------------------------------------------------------------------- commands
def _configure_logging(verbosity: int) -> None:
    level = {-1: logging.ERROR, 0: logging.WARNING}.get(verbosity, logging.INFO)
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    if sys.stderr.isatty():
        from rich.logging import RichHandler
        handler = RichHandler(show_time=False, show_path=False)
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    else:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(True)


def _results_list(returned) -> dict[str, object]:
    from .results import Results
    if isinstance(returned, Results):
        return {"run": returned}
    if isinstance(returned, dict):
        return {str(k): v for k, v in returned.items() if isinstance(v, Results)}
    return {}


def _add_unstored(results_file, returned) -> None:
    """Add to the results file the runs a case returns without having called flexmbs.run (no
    store).  A function of its own so that no loop variable keeps a case's Results alive
    while the CLI reads the runs back from the file (each would be held twice)."""
    from .results import Results
    for name, res in _results_list(returned).items():
        if isinstance(res, Results) and res.metadata.get("file") is None:
            results_file.add(res, name)


def _sigterm(signum, frame):
    raise KeyboardInterrupt(f"{signal.Signals(signum).name}")


def accuracy_line(path: Path) -> str | None:
    """The line that says the error a case reached against its reference, from its summary.json's
    common keys ``accuracy_error``, ``accuracy_measure``, ``accuracy_target`` and ``meets_target``
    (the IFToMM cases write them); None when the file or the keys are absent."""
    try:
        s = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(s, dict) or s.get("accuracy_error") is None or "accuracy_target" not in s:
        return None
    verdict = "met" if s.get("meets_target") else "NOT met"
    return (f"accuracy: {s.get('accuracy_measure', 'error')} = {s['accuracy_error']:.2e} "
            f"(target {s['accuracy_target']:g}: {verdict})")


def cmd_run(args) -> int:
    from . import io
    from .integrators.budget import release_freed_memory
    from . import progress as progress_mod
    from .case import MANIFEST, CaseError, prepare_output

    target = args.case
    file_params, file_out = {}, None
    if target.endswith(".toml"):
        target, file_params, file_out = read_case_toml(args.case)
    info = find_case(target, args.cases)
    module = load_case(info)
    defaults = dict(module.DEFAULTS)
    params = parse_parameters(info.name, defaults, file_params)
    params.update(parse_parameters(info.name, defaults, parse_sets(args.set)))
    if getattr(args, "no_plots", False):
        if "plots" not in defaults:
            raise CLIError(f"--no-plots: case {info.name} has no `plots` parameter (it draws no plots to skip)")
        params["plots"] = False
    if getattr(args, "no_paraview", False) and "paraview" in defaults:
        params["paraview"] = False           # recorded in case.toml
    out = Path(args.out or file_out or Path("out") / info.name)
    resolved = {**defaults, **params}
    paraview = not getattr(args, "no_paraview", False) and resolved.get("paraview", True) is not False
    check_case_values(module, info.name, resolved)            # before anything is written
    try:
        existed = out.is_dir()
        out, before = prepare_output(out, clear=not getattr(module, "RESUMES", False))
    except ValueError as err:
        raise CLIError(f"--out: {err}") from None
    (out / "case.toml").write_text(dump_toml(info.name, resolved, out), encoding="utf-8")
    h5 = out / "results.h5"
    log.info("case %s -> %s (parameters %s)", info.name, out, params or "defaults")
    verbose = getattr(args, "verbose", 0)
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _sigterm) if main_thread else None
    interrupted, returned, bad, full, last = False, None, None, None, None
    try:
        try:
            with io.recording(h5, metadata={"case": info.name, "parameters": resolved}) as results_file, \
                    progress_mod.display(enabled=False if verbose < 0 else None):
                try:
                    returned = module.run(out=out, **params)
                    _add_unstored(results_file, returned)
                    last = results_file.take_last()     # the last run's Results, if no run opened after it
                except KeyboardInterrupt:
                    interrupted = True
                except CaseError as err:                 # a value only the run could judge: nothing kept
                    bad = err
        except OSError as err:                           # a full disk: the error says what was kept
            if not io.is_disk_full(err):
                raise
            full = err
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
        try:
            runs = io.list_runs(h5) if h5.is_file() else {}
        except io.DamagedFileError:                      # cut off by a full disk before its first run
            if full is None:
                raise
            runs = {}
        if not runs and h5.is_file():
            h5.unlink()                      # an empty results file would only confuse
        if out.is_dir() and bad is None:
            _record_output(out, before)
    if bad is not None:
        _remove_new_files(out, before, existed)
        raise CLIError(f"parameter {bad.key!r} of case {info.name}: {bad.detail}")
    if full is not None:
        return _stopped_on_full_disk(info.name, out, h5, runs, full)
    code = EXIT_INTERRUPTED if interrupted else EXIT_OK
    # one run: its Results as the run returned it (the same arrays as the file's); several: read back from
    # the file one at a time, so that no two are held at once
    held = last[1] if last is not None and list(runs) == [last[0]] else None
    last = None
    if runs:
        returned = None                  # read back from the file below, one run at a time: not held twice
        release_freed_memory()           # the case's arrays' heap, before the first run is read back
    print(f"{info.name}: {'interrupted' if interrupted else 'done'}, output in {out}/")
    for name, status in runs.items():
        res = held if held is not None else io.load_results(h5, name)
        held = None
        t_last = f"t = {res.t[-1]:.6g} s" if len(res.t) else "no output"
        solve = res.stats.get("solve_s")
        print(f"  run {name}: {status}, {len(res.t)} outputs to {t_last}"
              + (f", solve {solve:.3g} s" if solve is not None else "")
              + (f" ({res.message})" if status != "finished" else ""))
        # NOTE: "diverged" can be the answer (spinup_beam's unstiffened run diverges by design)
        if res.bodies:
            print("\n".join(f"    {line}" for line in system_summary(res)))
        if status in ("failed", "error") and code == EXIT_OK:
            code = EXIT_FAILED
        if paraview and len(res.t):
            stem = "paraview" if len(runs) == 1 else f"paraview_{name}"
            try:
                files = io.export_paraview(res, out, stem=stem, every=args.every)
            except OSError as err:                 # the run's files are whole; the ParaView ones removed
                if not io.is_disk_full(err):
                    raise
                _record_output(out, before)
                print(f"flexmbs run: error: {_disk_full_message(err, h5, runs)}", file=sys.stderr)
                return EXIT_IO
            print(f"    ParaView: {', '.join(p.name for p in files.values())}")
    _record_output(out, before)
    accuracy = accuracy_line(out / "summary.json")
    if accuracy:
        print(f"  {accuracy}")
    if runs:
        print(f"  results: {h5} (flexmbs.load_results({str(h5)!r}"
              + (")" if len(runs) == 1 else ", run=NAME)") + f"), parameters: {out / 'case.toml'}")
    else:
        files = sorted(p.name for p in out.iterdir() if p.name not in ("case.toml", MANIFEST)) if out.is_dir() else []
        print(f"  case {info.name} ran without flexmbs.run: no results.h5; the case wrote "
              f"{', '.join(files) or 'no files'}; parameters: {out / 'case.toml'}")
    return code


def _rows(names) -> str:
    """Constraint names of the multiplier rows, a constraint's k rows as "name (k)"."""
    counts = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    return ", ".join(n if k == 1 else f"{n} ({k})" for n, k in counts.items())


def system_summary(res) -> list[str]:
    """Lines that describe a System run (`Results.bodies`): its bodies and kinds, its constraints,
    formulation and integrator, and how far its total energy T + V_g + U moved over the outputs,
    max |E(t) - E(t0)|, absolute and relative to |E(t0)| (``energies["total"]``; NaN outputs of a
    damaged file left out): its drift when nothing does work on the System, else mostly the work
    of its drivers, loads and damping."""
    import numpy as np
    md = res.metadata
    lines = ["bodies: " + ", ".join(f"{n} ({b.kind})" for n, b in res.bodies.items()),
             f"constraints: {len(res.constraint_names)} rows: {_rows(res.constraint_names) or 'none'}"
             + (f"; joints drawn: {', '.join(res.joints)}" if res.joints else ""),
             f"{md.get('formulation')} + {md.get('method')} (h {_number(md.get('h'))}"
             + (f", rtol {md['rtol']}" if "rtol" in md else "") + ")"]
    e = res.energies
    total = np.asarray(e.get("total", ()), dtype=float)
    if len(total) and np.isfinite(total).all():
        worked = {k[2:]: float(np.abs(w).max()) for k, w in e.items() if k.startswith("W_") and np.any(w)}
        line = f"energy: total T + V_g + U = {total[0]:.6g} J at t0"
        if any(k.startswith("W_") for k in e):
            err = res.energy_balance_error()
            line += (", works " + (", ".join(f"{k} {w:.4g} J" for k, w in worked.items()) if worked else "none")
                     + (f"; balance error max |E - E(t0) - W| = {np.abs(err).max():.3g} J"
                        if np.isfinite(err).all() else "; balance unknown (a work is NaN: see the metadata 'works')"))
        else:                        # a stopped run: the works are written at its end
            line += f", max |E - E(t0)| = {float(np.abs(total - total[0]).max()):.3g} J (no works: the run did not end)"
        lines.append(line)
    return lines


def _number(value) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _record_output(out: Path, before: dict) -> None:
    """`flexmbs.case.record_output`; on a full disk the list is not written (the run's own error
    says the disk is full), so the next run into ``out`` does not remove this one's files."""
    from . import io
    from .case import MANIFEST, record_output
    try:
        record_output(out, before)
    except OSError as err:
        if not io.is_disk_full(err):
            raise
        (out / MANIFEST).unlink(missing_ok=True)
        log.warning("no space left on device for %s: a new run into %s will not remove this run's files",
                    out / MANIFEST, out)


def _stopped_on_full_disk(case: str, out: Path, h5: Path, runs: dict, err: OSError) -> int:
    """Report a case stopped by a full disk: its runs as the results file has them (no ParaView
    files: there is no room), and the error; returns `EXIT_IO`."""
    from . import io
    print(f"{case}: stopped, the disk is full; output in {out}/")
    for name, status in runs.items():
        res = io.load_results(h5, name)
        print(f"  run {name}: {status}, {len(res.t)} outputs" + (f" to t = {res.t[-1]:.6g} s" if len(res.t) else ""))
    print(f"flexmbs run: error: {_disk_full_message(err, h5, runs)}", file=sys.stderr)
    return EXIT_IO


def _disk_full_message(err: OSError, h5: Path | None = None, runs: dict | None = None) -> str:
    """"no space left on device: N outputs kept in FILE": a `flexmbs.io.DiskFullError`'s own
    message, else (a write of other code, e.g. a plot) the outputs in the results file ``h5``
    and the file that could not be written."""
    from . import io
    if isinstance(err, io.DiskFullError):
        return str(err)
    what = f"{err.filename} could not be written" if err.filename else str(err)
    if h5 is not None and runs:
        kept = sum(len(io.load_results(h5, name).t) for name in runs)
        return f"no space left on device: {kept} outputs kept in {h5}; {what}"
    return f"no space left on device: {what}"


def _remove_new_files(out: Path, before: dict, existed: bool) -> None:
    """Remove what a run that stopped on bad input wrote into ``out`` (and ``out`` if it was new)."""
    import shutil
    from .case import MANIFEST, _snapshot
    if not out.is_dir():
        return
    if not existed:
        shutil.rmtree(out, ignore_errors=True)
        return
    for name, stamp in _snapshot(out).items():
        if before.get(name) != stamp:
            (out / name).unlink(missing_ok=True)
    (out / MANIFEST).unlink(missing_ok=True)


def cmd_sweep(args) -> int:
    """Every combination of --grid values (and the rows of --list) as an independent case."""
    import contextlib
    import csv

    from .progress import Display
    from .sweep import MissingExtra, SweepInterrupted, sweep
    info = find_case(args.case, args.cases)
    grid = {}
    for item in args.grid or ():
        key, sep, values = item.partition("=")
        if not sep or not key.strip() or not values.strip():
            raise CLIError(f"--grid expects KEY=V1,V2,... (e.g. --grid omega=10,15,20), got {item!r}")
        grid[key.strip()] = [v.strip() for v in values.split(",") if v.strip()]
    listed = []
    if args.list:
        path = Path(args.list)
        if not path.is_file():
            raise CLIError(f"--list: no file {path}")
        with open(path, newline="") as f:
            listed = [{k.strip(): v.strip() for k, v in row.items() if v is not None and v.strip()}
                      for row in csv.DictReader(f)]
        if not listed:
            raise CLIError(f"--list: {path} has no rows (a header of parameter names, then one set a row)")
    out = Path(args.out or Path("out") / f"sweep_{info.name}")
    display = Display(enabled=None if args.verbose >= 0 else False)
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _sigterm) if main_thread else None     # stops as Ctrl-C does
    try:
        with contextlib.ExitStack() as stack:
            bar = {}

            def progress(done, total):          # the bar opens when the sweep knows its size
                if "update" not in bar:
                    bar["update"] = stack.enter_context(display.counter(f"sweep {info.name}", total, "cases"))
                if bar["update"]:
                    bar["update"](done)

            rows = sweep(info.path, grid=grid, listed=listed, fixed=parse_sets(args.set), out=out,
                         workers=args.workers, scheduler=args.scheduler, progress=progress,
                         retries=args.retries, retry_failed=not args.no_retry_failed)
    except (ParameterError, MissingExtra) as err:        # bad input (exit 2), nothing written
        raise CLIError(str(err)) from None
    except SweepInterrupted as stop:               # summary.csv written, the unfinished cases recorded
        rows = stop.rows
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print(f"sweep {info.name}: {len(rows)} cases ({', '.join(f'{n} {s}' for s, n in counts.items())}); "
          f"summary {out.resolve() / 'summary.csv'}")
    for r in rows:
        if r["status"] not in ("finished", "diverged"):
            print(f"  {r['id']}: {r['status']}: {(r.get('message') or '').splitlines()[0] if r.get('message') else ''}")
    if any(r["status"] == "interrupted" for r in rows):
        print(f"flexmbs sweep: interrupted; `flexmbs sweep` with the same arguments runs the unfinished cases",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK if all(r["status"] in ("finished", "diverged") for r in rows) else EXIT_FAILED


def cmd_cases(args) -> int:
    directory = find_cases_dir(args.cases)
    cases = discover_cases(directory)
    print(f"cases in {directory}:")
    width = max((len(n) for n in cases), default=0)
    for name, info in cases.items():
        print(f"  {name:{width}s}  {info.summary}")
    if not cases:
        print("  (none)")
    print("run one with `flexmbs run CASE [--set KEY=VALUE ...] [--out DIR]`; "
          "`flexmbs params CASE` lists its keys")
    return EXIT_OK


def cmd_params(args) -> int:
    info = find_case(args.case, args.cases)
    module = load_case(info)
    print(f"{info.name}: {info.summary}")
    if getattr(module, "RUN_TIME", None):
        print(f"  run time at the defaults: {module.RUN_TIME} on a 2-core machine")
    helps = getattr(module, "HELP", {})
    for key, value in module.DEFAULTS.items():
        print(f"  {key} = {_short(value)}    ({_type_name(value)})" + (f"  {helps[key]}" if key in helps else ""))
    return EXIT_OK


def cmd_bench(args, extra) -> int:
    directory = find_cases_dir(args.cases)
    path = directory / "timing.py"
    if not path.is_file():
        raise CLIError(f"{path} not found: `flexmbs bench` runs the formulation timing of cases/timing.py")
    module = _import(path)
    return int(module.main(extra) or 0)


def cmd_results(args) -> int:
    from . import io
    args.file = str(io.results_path(args.file))          # an output directory: its results.h5
    runs = io.list_runs(args.file)
    print(f"{args.file}: {len(runs)} run(s)")
    damage = io.truncation(args.file)
    if damage:
        print(f"  {damage}; what can be recovered follows")
    damaged = bool(damage)
    for name in runs:
        try:
            res = io.load_results(args.file, name)
        except io.DamagedFileError as err:          # other runs of a truncated file may be whole
            print(f"  {name}: damaged, nothing of it can be recovered: {err}")
            damaged = True
            continue
        damaged |= res.status == "damaged"
        md = res.metadata
        t = f"t = {res.t[0]:.6g} .. {res.t[-1]:.6g} s" if len(res.t) else "no output"
        print(f"  {name}: {res.status}, {len(res.t)} outputs, {t}; {res.message}")
        if res.bodies:
            print("\n".join(f"    {line}" for line in system_summary(res)))
        else:
            print(f"    {md.get('formulation')} + {md.get('method')} (rtol {md.get('rtol')}, h {md.get('h')}), "
                  f"{md.get('element')} x {md.get('n_elements')}, {md.get('n_dofs')} DOFs, mesh {md.get('mesh_source')}")
        times = {k: v for k, v in res.stats.items() if k.endswith("_s")}
        if times:
            print("    wall time: " + ", ".join(f"{k[:-2]} {v:.3g} s" for k, v in times.items()))
        if md.get("parameters"):
            print(f"    parameters: {json.dumps(md['parameters'])}")
    return EXIT_FAILED if damaged else EXIT_OK


def cmd_export(args) -> int:
    from . import io
    from .case import check_output_dir
    args.file = str(io.results_path(args.file))          # an output directory: its results.h5
    if Path(args.file).suffix.lower() == ".npz":             # a results.npz holds one run
        if args.run is not None:
            raise CLIError(f"--run: {args.file} is a results.npz, which holds one run; leave --run out")
        runs = {"run": None}
    else:
        runs = io.list_runs(args.file) if args.run is None else {args.run: None}
    out = Path(args.out) if args.out else Path(args.file).parent
    try:
        check_output_dir(out)
    except ValueError as err:
        raise CLIError(f"--out: {err}") from None
    npz = Path(args.file).suffix.lower() == ".npz"
    damage = None if npz else io.truncation(args.file)
    if damage:
        print(f"{damage}; exporting what can be recovered", file=sys.stderr)
    failed = bool(damage)
    for name in runs:
        try:
            res = io.load_results(args.file, None if npz else name)
        except io.DamagedFileError as err:
            print(f"{name}: not exported: {err}", file=sys.stderr)
            failed = True
            continue
        if not len(res.t):
            print(f"{name} ({res.status}): no output to export; {res.message}", file=sys.stderr)
            failed = True
            continue
        failed |= res.status == "damaged"
        stem = "paraview" if len(runs) == 1 else f"paraview_{name}"
        files = io.export_paraview(res, out, stem=stem, every=args.every)
        print(f"{name} ({res.status}, {len(res.t)} outputs): {', '.join(str(p) for p in files.values())}")
    return EXIT_FAILED if failed else EXIT_OK


# the --view choices of `flexmbs view` (flexmbs.viewer.VIEWS; not imported here: the parser imports no numpy)
VIEWS = ("xy", "xz", "yz", "iso")


def _window_size(text: str) -> tuple[int, int]:
    """``WIDTHxHEIGHT`` (e.g. 1024x768) -> (width, height) in pixels."""
    width, sep, height = text.lower().partition("x")
    if not (sep and width.isdigit() and height.isdigit() and 16 <= int(width) <= 8192 and 16 <= int(height) <= 8192):
        raise CLIError(f"--size expects WIDTHxHEIGHT in pixels, each in 16..8192 (e.g. 1024x768), got {text!r}")
    return int(width), int(height)


def _option_error(err: Exception) -> CLIError:
    """A `flexmbs.viewer` (or `flexmbs.load_results`) error about its argument `name` as one about the
    option --name."""
    text = err.args[0] if isinstance(err, KeyError) and err.args else str(err)       # not KeyError's quotes
    for name in ("run", "field", "time", "scale", "clim", "screenshot", "video", "every", "fps"):
        text = text.replace(f"`{name}`", f"--{name}")
    return CLIError(text)


def cmd_view(args) -> int:
    """`flexmbs.viewer`: the run's bodies in a window, or one frame (--screenshot) or the run (--video)
    rendered off-screen.  The options and the run are checked before pyvista is needed."""
    from . import io, viewer
    from .sweep import MissingExtra
    if args.screenshot and args.video:
        raise CLIError("--screenshot and --video: give one (a picture of one output, or a video of the run)")
    if args.video and args.time is not None:
        raise CLIError("--time: a video shows every output (every N-th with --every); --time picks the frame of "
                       "--screenshot or the first frame of the window")
    size = _window_size(args.size)
    try:
        if args.screenshot:
            viewer.check_picture(Path(args.screenshot))
        if args.video:
            viewer.check_video(Path(args.video), args.every, args.fps)
        viewer.check_fps(args.fps)
        scene = viewer.Scene(io.load_results(io.results_path(args.file), args.run))
        viewer.check_field(scene, args.field)
        k = scene.n_t - 1 if args.time is None else viewer.nearest_output(scene.t, args.time)
        v = viewer.Viewer(scene, field=args.field, scale=args.scale, clim=args.clim, view=args.view,
                          off_screen=bool(args.screenshot or args.video), window_size=size)
    except (MissingExtra, RuntimeError) as err:           # no pyvista, or no display for a window
        raise CLIError(str(err)) from None
    except (ValueError, KeyError) as err:
        raise _option_error(err) from None
    t = v.show_output(k)
    where = f"t = {t:.6g} s, output {k} of {scene.n_t - 1}"
    if args.screenshot:
        print(f"{v.screenshot(args.screenshot)}: {where}")
        return EXIT_OK
    if args.video:
        frames = len(v.video_outputs(args.every))
        print(f"{v.save_video(args.video, every=args.every, fps=args.fps)}: {frames} frames (every {args.every}-th "
              f"of {scene.n_t} outputs, and the last) at {args.fps:g} per second")
        return EXIT_OK
    v.interact(fps=args.fps, save_to=Path(args.file) if Path(args.file).is_dir() else Path(args.file).parent)
    return EXIT_OK


def cmd_mesh_info(args) -> int:
    from .mesh import MeshError, check_orientation, read
    path = Path(args.file)
    try:
        mesh = read(path, check=False)
    except MeshError as err:                 # a missing, empty or unreadable file: bad input
        raise CLIError(str(err)) from None
    size = path.stat().st_size
    import hashlib
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    print(f"{path}: {size / 1024:.1f} kB, sha256 {digest[:16]}...")
    lo, hi = mesh.points.min(axis=0), mesh.points.max(axis=0)
    box = " x ".join(f"[{a:.6g}, {b:.6g}]" for a, b in zip(lo, hi))
    print(f"  nodes: {mesh.n_nodes} in {mesh.dim}D, bounding box {box} m")
    print("  cells: " + ", ".join(f"{t} {len(c)}" for t, c in mesh.cells.items()))
    print("  node sets: " + (", ".join(f"{k} ({len(v)})" for k, v in mesh.node_sets.items()) or "none"))
    print("  element sets: " + (", ".join(
        f"{k} ({', '.join(f'{t} {len(i)}' for t, i in v.items())})" for k, v in mesh.element_sets.items()) or "none"))
    from .mesh.topology import body_report
    body, ok = body_report(mesh)
    print(f"  body: {body}")
    try:
        check_orientation(mesh)
        print("  orientation: every cell positively oriented")
    except MeshError as err:
        print(f"  orientation: {err}")
        return EXIT_FAILED
    return EXIT_OK if ok else EXIT_FAILED


def cmd_info(args) -> int:
    from importlib import metadata
    import h5py
    from . import FORMULATIONS, INTEGRATORS, __version__
    from .compiled import kernel_status
    explicit = getattr(args, "cases", None)
    try:
        directory = find_cases_dir(explicit)
        cases_line = f"cases: {directory} ({', '.join(discover_cases(directory)) or 'none'})"
    except CLIError as err:
        if explicit:                                # a --cases DIR that is not there: bad input, before any output
            raise
        cases_line = f"cases: {err}"
    print(f"flexmbs {__version__} ({Path(__file__).resolve().parent})")
    import platform
    print(f"python {platform.python_version()} on {platform.platform()}")
    for dist in ("numpy", "scipy", "meshio", "h5py", "matplotlib", "rich"):
        try:
            hdf5 = f" (HDF5 {h5py.version.hdf5_version})" if dist == "h5py" else ""
            print(f"{dist} {metadata.version(dist)}{hdf5}")
        except metadata.PackageNotFoundError:
            print(f"{dist} not installed")
    print(f"formulations: {', '.join(FORMULATIONS)}")
    print(f"integrators: {', '.join(INTEGRATORS)}")
    print(f"kernel: {kernel_status()} (index3-alpha runs its "
          f"{'compiled' if kernel_status().installed else 'numpy'} path where the system qualifies)")
    print(cases_line)
    return EXIT_OK


# ------------------------------------------------------------------------------------------ main
def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``flexmbs`` parser.  ``command``: the command word of the arguments to be parsed (see
    `_command_index`): that command's parser only (argparse parses the options of one command;
    building every command's parser cost about 5 ms of every run, docs/benchmarks.md 20.6); None
    (no or an unknown command word, or a help asked before it): every command, for the list of
    commands in the help and the errors."""
    common = argparse.ArgumentParser(add_help=False)
    noise = common.add_mutually_exclusive_group()
    noise.add_argument("-q", "--quiet", dest="verbose", action="store_const", const=-1, default=argparse.SUPPRESS,
                       help="no progress bar, errors only")
    noise.add_argument("-v", "--verbose", dest="verbose", action="store_const", const=1, default=argparse.SUPPRESS,
                       help="log what is done (INFO)")
    common.add_argument("--cases", metavar="DIR", default=argparse.SUPPRESS,
                        help="cases directory (default: $FLEXMBS_CASES, ./cases, the shipped cases)")
    from . import __version__
    ap = argparse.ArgumentParser(prog="flexmbs", parents=[common],
                                 description="Flexible multibody dynamics by the finite element method.",
                                 epilog="`flexmbs COMMAND --help` for the options of a command.")
    ap.add_argument("--version", action="version", version=f"flexmbs {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name: str, help: str, **options):
        """The parser of command ``name`` (None where another command is the one parsed)."""
        if command is not None and command != name:
            return None
        return sub.add_parser(name, parents=[common], help=help, **options)

    p = add("run", help="run a case (by name or a case.toml file)",
            description="Run a case of cases/ by name, or the case and parameters of a TOML file.")
    if p is not None:
        p.add_argument("case", metavar="CASE|FILE.toml")
        p.add_argument("--set", action="append", metavar="KEY=VALUE",
                       help="a parameter (a DEFAULTS key of the case, with underscores); repeatable")
        p.add_argument("--out", metavar="DIR",
                       help="output directory (default: `out` of the TOML file, else out/CASE)")
        p.add_argument("--no-paraview", action="store_true",
                       help="do not write the ParaView files (the same as --set paraview=false for a case with that "
                            "parameter)")
        p.add_argument("--no-plots", action="store_true",
                       help="skip the case's plots and GIF animations (the same as --set plots=false)")
        p.add_argument("--every", type=int, default=1, metavar="N", help="ParaView: every N-th output (default 1)")

    p = add("params", help="list a case's parameters and defaults")
    if p is not None:
        p.add_argument("case", metavar="CASE")
    add("cases", help="list the cases")
    add("bench", help="time the formulations (cases/timing.py; its options follow)", add_help=False)
    p = add("results", help="the runs in a results file")
    if p is not None:
        p.add_argument("file", help="a results file (.h5 or .npz), or the output directory of `flexmbs run`")
    p = add("export", help="ParaView files from a results file (.h5 or .npz)")
    if p is not None:
        p.add_argument("file", help="a results file (.h5 or .npz), or the output directory of `flexmbs run`")
        p.add_argument("--run", help="one run (default: all)")
        p.add_argument("--out", metavar="DIR", help="output directory (default: the results file's)")
        p.add_argument("--every", type=int, default=1, metavar="N", help="every N-th output (default 1)")
    p = add("view", help="play a run's bodies in 3D (needs pyvista: "
            'pip install "flexmbs[view]")',
            description="Play a run's bodies in 3D: flexible bodies deformed and coloured by a field, "
                        "rigid bodies as their shapes, joints as points; a time slider, play/pause "
                        "(space), `i` saves the frame shown.  --screenshot FILE or --video FILE render "
                        "off-screen (no display needed) and exit.")
    if p is not None:
        p.add_argument("file", metavar="DIR|FILE",
                       help="the output directory of `flexmbs run`, or a results file (.h5, .npz)")
        p.add_argument("--run", help="the run to view (default: the file's main run)")
        p.add_argument("--field", default="auto", metavar="NAME",
                       help="colour the flexible bodies by NAME: displacement (|A u| [m]), axial_force [N] or "
                            "von_mises [Pa], as the run has them; none: a colour per body (default auto: von_mises, "
                            "else displacement)")
        p.add_argument("--time", type=float, metavar="T", help="show the output nearest to T [s] (default: the last)")
        p.add_argument("--screenshot", metavar="FILE", help="save that frame as a picture (.png, .jpg, ...) and exit")
        p.add_argument("--video", metavar="FILE", help="save the run as a video (.gif needs imageio, .mp4 also "
                                                       "imageio-ffmpeg) and exit")
        p.add_argument("--every", type=int, default=1, metavar="N", help="video: every N-th output (default 1)")
        p.add_argument("--fps", type=float, default=20.0,
                       help="outputs per second played or in the video (default 20)")
        p.add_argument("--scale", type=float, default=1.0,
                       help="factor on the elastic displacements drawn (default 1)")
        p.add_argument("--clim", type=float, nargs=2, metavar=("MIN", "MAX"),
                       help="fixed colour range (default: the field's range at the output shown)")
        p.add_argument("--view", choices=VIEWS, help="camera: xy (down the z axis), xz, yz (parallel projections "
                                                     "of the run's bounds) or iso (default: xy for a planar run, "
                                                     "else iso)")
        p.add_argument("--size", default="1024x768", metavar="WxH", help="picture size in pixels (default 1024x768)")
    p = add("mesh", help="mesh files: `flexmbs mesh info FILE`")
    if p is not None:
        msub = p.add_subparsers(dest="mesh_command", metavar="info", required=True)
        m = msub.add_parser("info", parents=[common], help="cells, sets and size of a mesh file")
        m.add_argument("file")
    add("info", help="versions of flexmbs and its dependencies, the compiled kernel")
    p = add("sweep", help="run a case for every combination of parameters",
            description="Run a case for the cartesian product of --grid values and the rows of "
                        "--list, each as an independent case (local worker processes, or a Dask "
                        "cluster with --scheduler or $DASK_SCHEDULER_ADDRESS); finished cases are "
                        "skipped when the sweep is run again, failed ones run again.")
    if p is not None:
        p.add_argument("case", metavar="CASE")
        p.add_argument("--grid", action="append", metavar="KEY=V1,V2,...", help="values of one parameter; repeatable")
        p.add_argument("--list", metavar="FILE.csv", help="parameter sets: a header of names, one set a row")
        p.add_argument("--set", action="append", metavar="KEY=VALUE", help="a parameter for every case; repeatable")
        p.add_argument("--out", metavar="DIR", help="output directory (default out/sweep_CASE)")
        p.add_argument("--workers", type=int, metavar="N", help="local worker processes (default: CPUs)")
        p.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="Dask scheduler address")
        p.add_argument("--retries", type=int, default=1, metavar="N",
                       help="runs again a case whose worker process died N times before it is recorded as lost "
                            "(Dask: re-runs a case that raised N times); default 1")
        p.add_argument("--no-retry-failed", action="store_true",
                       help="when the sweep is run again, keep the records of the cases that failed or were lost "
                            "(default: run them again)")
    if command in (None, "fmu"):
        from .fmi.command import add_parser as add_fmu_parser
        add_fmu_parser(sub, common)
    return ap


def cmd_fmu(args) -> int:
    from .fmi.command import cmd_fmu as fmu
    return fmu(args)


COMMANDS = {"run": cmd_run, "params": cmd_params, "cases": cmd_cases, "results": cmd_results,
            "export": cmd_export, "info": cmd_info, "sweep": cmd_sweep, "fmu": cmd_fmu, "view": cmd_view}
COMMAND_WORDS = (*COMMANDS, "bench", "mesh")          # every command `build_parser` knows


def _command_index(argv) -> int | None:
    """Index of the command word in ``argv`` (the first argument that is not a global option
    or the value of ``--cases``), or None."""
    i = 0
    while i < len(argv):
        if argv[i] == "--cases":
            i += 2
        elif argv[i].startswith("-"):
            i += 1
        else:
            return i
    return None


def main(argv=None) -> int:
    """Entry point of the ``flexmbs`` console script; returns the exit code."""
    from .pipes import call_quietly
    argv = list(sys.argv[1:] if argv is None else argv)
    # the reader of our output may go away (`flexmbs results FILE | head`): stop quietly
    return call_quietly(_main, argv)


def _main(argv: list) -> int:
    i = _command_index(argv)
    known = i is not None and argv[i] in COMMAND_WORDS and not {"-h", "--help"} & set(argv[:i])
    parser = build_parser(argv[i] if known else None)          # a help before the command lists them all
    if i is not None and argv[i] == "bench":   # the options after `bench` go to cases/timing.py
        args = parser.parse_args(argv[:i + 1])
        ours = argparse.ArgumentParser(add_help=False, allow_abbrev=False)   # timing's --case is not --cases
        ours.add_argument("--cases")
        ours.add_argument("-q", "--quiet", dest="verbose", action="store_const", const=-1)
        ours.add_argument("-v", "--verbose", dest="verbose", action="store_const", const=1)
        own, extra = ours.parse_known_args(argv[i + 1:])
        for key, value in vars(own).items():
            if value is not None:
                setattr(args, key, value)
    else:
        args, extra = parser.parse_args(argv), []
    args.verbose = getattr(args, "verbose", 0)
    args.cases = getattr(args, "cases", None)
    _configure_logging(args.verbose)
    try:
        if args.command == "bench":
            return cmd_bench(args, extra)
        if args.command == "mesh":
            return cmd_mesh_info(args)
        return COMMANDS[args.command](args)
    except CLIError as err:
        print(f"flexmbs {args.command}: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"flexmbs {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (FileNotFoundError, KeyError, ValueError) as err:
        if args.verbose > 0:
            raise
        print(f"flexmbs {args.command}: error: {err}", file=sys.stderr)
        return EXIT_USAGE if not isinstance(err, ValueError) else EXIT_FAILED
    except OSError as err:                           # e.g. the ParaView files of `export` on a full disk
        from .io import is_disk_full
        if not is_disk_full(err):
            raise
        print(f"flexmbs {args.command}: error: {_disk_full_message(err)}", file=sys.stderr)
        return EXIT_IO
