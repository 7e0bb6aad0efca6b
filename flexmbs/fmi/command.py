"""``flexmbs fmu SOURCE --out FILE.fmu``: `flexmbs.fmi.export` from the command line.

.. code:: text

    flexmbs fmu CASE [--out FILE.fmu] [--set KEY=VALUE ...]     a case that declares its FMU (below)
    flexmbs fmu FILE.py:FUNCTION --input NAME=UNIT ... --output NAME.QUANTITY ... --step T
    flexmbs fmu MODULE:FUNCTION  ...                              a factory of an installed module

A case declares its FMU with a module-level dict ``FMU = dict(system="FUNCTION", inputs={name: unit},
outputs=[...], step=T)``, ``FUNCTION(**inputs, **parameters) -> System`` (cases/controlled_pendulum.py);
``--input``, ``--output``, ``--step``, ``--h`` and ``--stop-time`` replace its entries.  ``--set`` gives the
factory's keyword parameters, typed by its defaults.  Without pythonfmu the command says what to
install (status 2, as for any bad input).
"""
from __future__ import annotations

import inspect
from pathlib import Path

__all__ = ["add_parser", "cmd_fmu"]


def add_parser(sub, common) -> None:
    """The ``fmu`` subcommand's parser."""
    p = sub.add_parser("fmu", parents=[common], help="package a System as an FMI 2.0 co-simulation FMU (pythonfmu)",
                       description="Package the System of a case (its FMU dict) or of a factory FILE.py:FUNCTION as "
                                   "an FMI 2.0 co-simulation FMU: inputs held over each communication step, the "
                                   "outputs at the communication points (docs/fmi.md). The FMU runs where Python "
                                   "with flexmbs is installed.")
    p.add_argument("source", metavar="CASE|FILE.py:FUNCTION|MODULE:FUNCTION")
    p.add_argument("--out", metavar="FILE.fmu", help="the FMU to write (default: ./NAME.fmu)")
    p.add_argument("--input", action="append", metavar="NAME=UNIT",
                   help="an input, the factory's keyword (units: N.m, N, rad, m, rad/s, m/s, s, 1); repeatable")
    p.add_argument("--output", action="append", metavar="NAME.QUANTITY",
                   help="an output: JOINT.angle, JOINT.rate, BODY.position, BODY.velocity, BODY.angular_velocity; "
                        "repeatable")
    p.add_argument("--step", type=float, metavar="T",
                   help="the FMU's sample period [s] (the master's steps: multiples of it)")
    p.add_argument("--h", type=float, metavar="H", help="the step of index3-alpha inside the FMU (default: --step)")
    p.add_argument("--stop-time", type=float, metavar="T", help="the default experiment's stop time [s] (default 1)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="a keyword parameter of the factory; repeatable")


def _declared(args, CLIError) -> tuple[str, dict, str]:
    """(factory "FILE.py:FUNCTION" or "MODULE:FUNCTION", the case's FMU dict or {}, the FMU's default name)."""
    from ..cli import find_case, load_case
    if ":" in args.source:
        target = args.source.rpartition(":")[0]
        return args.source, {}, Path(target).stem if target.endswith(".py") else target.rpartition(".")[2]
    module = load_case(find_case(args.source, args.cases))
    spec = getattr(module, "FMU", None)
    if not isinstance(spec, dict) or not isinstance(spec.get("system"), str):
        raise CLIError(f"case {args.source} declares no FMU (a dict FMU = dict(system='FUNCTION', inputs=..., "
                       "outputs=..., step=...)); give the factory as FILE.py:FUNCTION with --input, --output and "
                       "--step")
    return f"{module.__file__}:{spec['system']}", spec, args.source


def _inputs(items, CLIError) -> dict:
    out = {}
    for item in items:
        name, sep, unit = item.partition("=")
        if not sep or not name.strip() or not unit.strip():
            raise CLIError(f"--input expects NAME=UNIT (e.g. --input torque=N.m), got {item!r}")
        out[name.strip()] = unit.strip()
    return out


def cmd_fmu(args) -> int:
    """Write the FMU; print what it declares."""
    from ..cli import EXIT_OK, CLIError, parse_sets, parse_parameters
    from . import FMIError, export
    from .fmu import factory_source, require_pythonfmu
    try:
        require_pythonfmu()
    except ImportError as err:
        raise CLIError(str(err)) from None
    source, spec, stem = _declared(args, CLIError)
    inputs = _inputs(args.input, CLIError) if args.input else spec.get("inputs", {})
    outputs = args.output or spec.get("outputs")
    step = args.step if args.step is not None else spec.get("step")
    missing = [flag for flag, value in (("--output", outputs), ("--step", step)) if not value]
    if missing:
        raise CLIError(f"give {' and '.join(missing)} (the source {args.source} declares no FMU default for them)")
    out = Path(args.out) if args.out else Path(f"{stem}.fmu")
    try:
        function = factory_source(source)[0]
        defaults = {k: p.default for k, p in inspect.signature(function).parameters.items()
                    if p.default is not inspect.Parameter.empty and k not in inputs}
        parameters = parse_parameters(args.source, defaults, parse_sets(args.set))
        path = export(source, out, inputs=inputs, outputs=outputs, step=step, h=args.h if args.h else spec.get("h"),
                      parameters=parameters, stop_time=args.stop_time if args.stop_time else spec.get("stop_time", 1.0))
    except FMIError as err:
        raise CLIError(str(err)) from None
    from .cosim import checked_inputs
    shown = ", ".join(f"{i.name} [{i.unit}]" for i in checked_inputs(inputs)) or "none"
    print(f"wrote {path}: FMI 2.0 co-simulation; inputs {shown}; outputs {', '.join(outputs)}; step {step:g} s. "
          "It runs in an importer whose Python has flexmbs installed (docs/fmi.md).")
    return EXIT_OK
