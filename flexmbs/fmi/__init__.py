"""FMI 2.0 co-simulation: a flexmbs System as an FMU (pythonfmu), its inputs held over each step.

.. code:: text

    flexmbs.fmi.export(factory, "model.fmu", inputs={"torque": "N.m"},
                       outputs=["pin.angle", "pin.rate", "rod.position"], step=1e-3)
    flexmbs fmu CASE --out model.fmu                    the same from the command line (docs/fmi.md)

`CoSimulation` (flexmbs/fmi/cosim.py) is the stepping core, usable without FMI; `export`
(fmu.py) writes the FMU and needs the extra ``pip install "flexmbs[fmi]"``; `flexmbs.fmi.slave`
is the class the FMU runs (the only module that imports pythonfmu); command.py is ``flexmbs fmu``.
The names are imported on first use (as ``flexmbs``'s own), so that ``flexmbs --help`` imports no numpy.
"""
import importlib

_PUBLIC = {"export": "flexmbs.fmi.fmu", "CoSimulation": "flexmbs.fmi.cosim", "Input": "flexmbs.fmi.cosim",
           "FMIError": "flexmbs.fmi.cosim", "QUANTITIES": "flexmbs.fmi.cosim", "UNITS": "flexmbs.fmi.cosim",
           "output_sensors": "flexmbs.fmi.cosim"}

__all__ = list(_PUBLIC)


def __getattr__(name: str):
    """The public ``name`` imported from its submodule on first use (then cached as a global)."""
    source = _PUBLIC.get(name)
    if source is None:
        raise AttributeError(f"module 'flexmbs.fmi' has no attribute {name!r}")
    value = getattr(importlib.import_module(source), name)
    globals()[name] = value
    return value
