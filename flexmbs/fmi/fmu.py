"""`export`: a System factory packaged as an FMI 2.0 co-simulation FMU by pythonfmu.

The FMU is pythonfmu's: a binary that runs Python in the importing process and calls the slave
class of `flexmbs.fmi.slave` (which runs a `flexmbs.fmi.CoSimulation`), the model description,
and ``resources/`` with the configuration (``flexmbs_fmu.json``), the factory's source file (unless
it is a module of an installed package) and pythonfmu's own Python files.  flexmbs itself is not
in the FMU: the importing machine needs a Python with flexmbs (and numpy, scipy, ...) installed,
the one the importer runs in (fmpy: its own).
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import re
import sys
import tempfile
import uuid
from pathlib import Path

from .cosim import CoSimulation, FMIError, checked_inputs, finite_number, interval_error

__all__ = ["export", "factory_source", "require_pythonfmu"]

INSTALL = 'pip install "flexmbs[fmi]" (or: pip install pythonfmu)'


def require_pythonfmu():
    """The pythonfmu module, or an ImportError that says how to install it."""
    try:
        return importlib.import_module("pythonfmu")
    except ImportError as err:
        raise ImportError(f"exporting an FMU needs pythonfmu, which is not installed ({err}); install it: "
                          f"{INSTALL}") from None


def _module_of_file(path: Path):
    """The script ``path`` imported as a module of its own (its directory first on sys.path, so that
    it can import its siblings)."""
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(f"_flexmbs_fmu_source_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def factory_source(factory) -> tuple:
    """(function, source, file to ship or None) of ``factory``: a module-level function, or a string
    "FILE.py:FUNCTION" or "MODULE:FUNCTION".  ``source`` is how the FMU finds it again when it
    starts: {"file": name, "function": f} (the file ships in the FMU) or {"module": m, "function": f}
    (a module of an installed package, which the importing machine must have too)."""
    if isinstance(factory, str):
        target, sep, function = factory.rpartition(":")
        if not sep or not target or not function.isidentifier():
            raise FMIError(f"`factory` as a string must be 'FILE.py:FUNCTION' or 'MODULE:FUNCTION', got {factory!r}")
        if target.endswith(".py"):
            path = Path(target)
            if not path.is_file():
                raise FMIError(f"`factory` {factory!r}: the file {path} does not exist")
            module, source, ship = _module_of_file(path), {"file": path.name}, path
        else:
            try:
                module = importlib.import_module(target)
            except ImportError as err:
                raise FMIError(f"`factory` {factory!r}: the module {target!r} cannot be imported ({err})") from None
            source, ship = _source_of_module(module)
        fn = getattr(module, function, None)
        if not callable(fn):
            raise FMIError(f"`factory` {factory!r}: {target} has no function {function!r}")
        return fn, {**source, "function": function}, ship
    if not inspect.isfunction(factory) or "<" in factory.__qualname__:
        raise FMIError(f"`factory` must be a function defined at the top level of a module (the FMU finds it by "
                       f"its name when it starts), got {getattr(factory, '__qualname__', type(factory).__name__)!r}")
    module = sys.modules.get(factory.__module__)
    if factory.__module__ == "__main__" or module is None:
        raise FMIError(f"`factory` {factory.__name__!r} is defined in the script being run (__main__), which the FMU "
                       "cannot import again: define it in a module file and import it, or give 'FILE.py:FUNCTION'")
    source, ship = _source_of_module(module)
    return factory, {**source, "function": factory.__name__}, ship


def _source_of_module(module) -> tuple[dict, Path | None]:
    """A module of a package: found by its name; a module on its own (a script, a case): its file ships."""
    spec = getattr(module, "__spec__", None)
    if spec is not None and spec.parent and not spec.name.startswith("_flexmbs_fmu_"):
        return {"module": spec.name}, None
    path = getattr(module, "__file__", None)
    if path is None:
        raise FMIError(f"`factory`: its module {module.__name__!r} has no file to put in the FMU")
    return {"file": Path(path).name}, Path(path)


def model_identifier(path: Path) -> str:
    """The FMU's model identifier (the name of its binary): the file name, as a C identifier."""
    name = re.sub(r"\W", "_", path.stem)
    return name if name and not name[0].isdigit() else f"fmu_{name}"


def export(factory, path, *, inputs, outputs, step: float, h: float | None = None, parameters: dict | None = None,
           rho_inf: float = 0.8, start_time: float = 0.0, stop_time: float = 1.0, description: str | None = None):
    """Package the System that ``factory`` builds as an FMI 2.0 co-simulation FMU.

    The FMU advances the System by the master's communication steps dt (whole multiples of
    ``step``) with the inputs held over each (zero-order hold, as `flexmbs.control` holds a
    controller's outputs), in one index3-alpha run from the start to the stop time
    (`flexmbs.fmi.CoSimulation`), and gives the declared outputs at each communication point.

    Parameters
    ----------
    factory : function or str
        ``factory(**inputs, **parameters) -> flexmbs.System``, each input a `flexmbs.control.Output`
        that the System's loads or drivers read (e.g. ``torque.torque(axis)``).  A function defined
        at the top level of a module, or "FILE.py:FUNCTION" / "MODULE:FUNCTION".
    path : str or Path
        The FMU file to write (``.fmu``).
    inputs : dict {name: unit} or list of flexmbs.fmi.Input
        The FMI inputs (causality input, variability continuous, start 0 unless given), units from
        `flexmbs.fmi.UNITS` ("N.m", "N", "rad", "m", ...).
    outputs : list of str
        "JOINT.angle", "JOINT.rate", "BODY.position", "BODY.velocity", "BODY.angular_velocity"
        (`flexmbs.fmi.QUANTITIES`); a vector gives the scalars "BODY.position[1]" ... .
    step : float
        The FMU's sample period [s]: the model description's stepSize; the master's steps must be
        whole multiples of it.
    h : float, optional
        The step of index3-alpha inside the FMU (default ``step``; shrunk to divide it).
    parameters : dict, optional
        Further keyword arguments of ``factory`` (numbers, strings, lists: stored as JSON).
    rho_inf : float, default 0.8
        index3-alpha's spectral radius at infinite frequency.
    start_time, stop_time : float, default 0.0, 1.0
        The default experiment; a master's own interval (fmi2SetupExperiment) replaces it.  The
        interval must be a whole number of steps.
    description : str, optional
        The model description's description.

    Returns
    -------
    Path
        The FMU written.

    Raises
    ------
    ImportError
        pythonfmu is not installed (the message says what to install).
    flexmbs.fmi.FMIError
        A bad argument, named (the System is built once here, so the outputs' joints and bodies
        and the factory's signature are checked before the FMU is written).

    Examples
    --------
    >>> export(pendulum, "pendulum.fmu", inputs={"torque": "N.m"},
    ...        outputs=["pin.angle", "pin.rate", "rod.position"], step=1e-3)   # doctest: +SKIP
    """
    pythonfmu = require_pythonfmu()
    from .. import __version__
    from .slave import CONFIG, SCRIPT, SCRIPT_NAME
    path = Path(path)
    if path.suffix != ".fmu":
        raise FMIError(f"`path` must name a .fmu file, got {str(path)!r}")
    function, source, ship = factory_source(factory)
    parameters = dict(parameters or {})
    try:
        json.dumps(parameters)
    except (TypeError, ValueError) as err:
        raise FMIError(f"`parameters` must be JSON values (numbers, strings, lists, dicts): {err}") from None
    declared = checked_inputs(inputs)
    sim = CoSimulation(function, declared, outputs, step, h=h, parameters=parameters, rho_inf=rho_inf)
    start_time, stop_time = finite_number(start_time, "`start_time`"), finite_number(stop_time, "`stop_time`")
    bad = interval_error(start_time, stop_time, sim.step)
    if bad:
        raise FMIError(f"`stop_time`: {bad}")
    name = model_identifier(path)
    config = dict(model_name=name, id=str(uuid.uuid4()), flexmbs_version=__version__, factory=source,
                  parameters=parameters, inputs=[i.describe() for i in declared], outputs=list(outputs),
                  variables=[[k, s[2]] for k, s in sim.scalars.items()], step=sim.step, h=sim.h, rho_inf=sim.rho_inf,
                  start_time=start_time, stop_time=stop_time,
                  description=description or (f"flexmbs {__version__}: the System of {source['function']}(), "
                                              f"inputs held over each step of {sim.step:g} s, index3-alpha"))
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="flexmbs_fmu_") as tmp:
        tmp = Path(tmp)
        script = tmp / f"{SCRIPT_NAME}.py"
        script.write_text(SCRIPT, encoding="utf-8")
        files = [tmp / CONFIG]
        files[0].write_text(json.dumps(config, indent=1), encoding="utf-8")
        if ship is not None:
            files.append(ship)
        pythonfmu.FmuBuilder.build_FMU(script, dest=path, project_files=files,
                                       canHandleVariableCommunicationStepSize=True)
    return path
