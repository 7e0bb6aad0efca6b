"""The FMI 2.0 co-simulation slave of an FMU made by `flexmbs.fmi.export`: pythonfmu's ``Fmi2Slave``
calling a `flexmbs.fmi.CoSimulation`.  The only module of flexmbs that imports pythonfmu.

The FMU's ``resources/`` hold ``flexmbs_fmu.json`` (`CONFIG`: the factory, its parameters, the
inputs, outputs, step and units), the factory's source file when it is not an installed module,
and ``flexmbs_fmu.py`` (`SCRIPT`, pythonfmu's entry point).  The FMI calls map to the
co-simulation as

.. code:: text

    fmi2SetupExperiment(t0, t_end)     the run's interval (t_end: the model description's stopTime if
                                       the master gives none)
    fmi2ExitInitializationMode         build the System (factory) and start the run: outputs at t0
    fmi2DoStep(t, dt)                  CoSimulation.advance: the inputs set since the last step held
                                       on (t, t + dt]; fmi2Error with the message if it fails
    fmi2Terminate                      CoSimulation.close
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from pathlib import Path
from xml.etree.ElementTree import Element, SubElement

from pythonfmu import DefaultExperiment, Fmi2Causality, Fmi2Slave, Fmi2Variability, Real
from pythonfmu.enums import Fmi2Status

from .cosim import UNITS, CoSimulation, FMIError

__all__ = ["SystemSlave", "CONFIG", "SCRIPT", "load_factory"]

CONFIG = "flexmbs_fmu.json"
SCRIPT_NAME = "flexmbs_fmu"
SCRIPT = '''"""pythonfmu's entry point of an FMU made by flexmbs.fmi.export (flexmbs must be installed)."""
from flexmbs.fmi.slave import SystemSlave, keep

keep(globals())      # pythonfmu runs this file again at each instantiation: see flexmbs.fmi.slave.keep


class FlexmbsFMU(SystemSlave):
    """A flexmbs System as an FMI 2.0 co-simulation slave, as resources/flexmbs_fmu.json describes it."""
'''
_KEPT: list = []


def keep(namespace: dict) -> None:
    """Hold one more reference to the entry point's module namespace, each time its file runs.

    NOTE: pythonfmu 0.7's loader (src/pythonfmu/PySlaveInstance.cpp, ``findClass``) runs the entry
    point's source in the module's namespace at every fmi2Instantiate and then releases that
    namespace, which it only borrowed (``Py_DECREF(pGlobals)`` of ``PyModule_GetDict``): without
    this, the second instance in one process (two FMUs, or one simulated twice) frees the
    namespace of a live module and crashes the importer.  One reference per run balances it."""
    _KEPT.append(namespace)


def load_factory(config: dict, resources: Path):
    """The System factory the configuration names: ``function`` of the shipped ``file`` in
    ``resources`` (imported under a name of its own) or of the installed ``module``."""
    source = config["factory"]
    if "file" in source:
        path = Path(resources) / source["file"]
        name = f"_flexmbs_fmu_{path.stem}_{config['id'].replace('-', '_')}"
        module = sys.modules.get(name)
        if module is None:
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
    else:
        module = importlib.import_module(source["module"])
    return getattr(module, source["function"])


def unit_definitions(units) -> Element:
    """<UnitDefinitions> of the FMI 2.0 model description for the unit names ``units`` (`UNITS`)."""
    node = Element("UnitDefinitions")
    for name in sorted(set(units)):
        SubElement(SubElement(node, "Unit", {"name": name}), "BaseUnit",
                   {k: str(v) for k, v in UNITS[name].items()})
    return node


class SystemSlave(Fmi2Slave):
    """The slave: a `CoSimulation` of the configuration in ``resources/flexmbs_fmu.json``."""

    author = "flexmbs"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.config = config = json.loads((Path(self.resources) / CONFIG).read_text(encoding="utf-8"))
        self.modelName = config["model_name"]
        self.description = config["description"]
        self.version = config["flexmbs_version"]
        self.default_experiment = DefaultExperiment(start_time=config["start_time"], stop_time=config["stop_time"],
                                                    step_size=config["step"])
        self._inputs = {i["name"]: float(i["start"]) for i in config["inputs"]}
        self._outputs = {name: 0.0 for name, _ in config["variables"]}
        self._interval = (config["start_time"], config["stop_time"])
        self._sim = None
        for i in config["inputs"]:
            self.register_variable(Real(i["name"], causality=Fmi2Causality.input,
                                        variability=Fmi2Variability.continuous, start=float(i["start"]), description=i["description"] or None,
                                        getter=lambda n=i["name"]: self._inputs[n],
                                        setter=lambda v, n=i["name"]: self._inputs.__setitem__(n, float(v))))
        for name, unit in config["variables"]:
            self.register_variable(Real(name, causality=Fmi2Causality.output, variability=Fmi2Variability.continuous,
                                        getter=lambda n=name: self._outputs[n]))

    def to_xml(self, model_options=None):
        """pythonfmu's model description with the units: <UnitDefinitions> after <CoSimulation> (the
        order of the FMI 2.0 schema) and the ``unit`` of every <Real>."""
        root = super().to_xml(model_options or {})
        units = {i["name"]: i["unit"] for i in self.config["inputs"]} | dict(self.config["variables"])
        root.insert(list(root).index(root.find("CoSimulation")) + 1, unit_definitions(units.values()))
        for var in root.find("ModelVariables"):
            var.find("Real").set("unit", units[var.get("name")])
        return root

    def setup_experiment(self, start_time, stop_time=None, tolerance=None):
        self._interval = (float(start_time), self.config["stop_time"] if stop_time is None else float(stop_time))

    def exit_initialization_mode(self):
        c = self.config
        try:
            self._sim = CoSimulation(load_factory(c, Path(self.resources)), c["inputs"], c["outputs"], c["step"],
                                     h=c["h"], parameters=c["parameters"], rho_inf=c["rho_inf"])
            self._sim.inputs.update(self._inputs)
            self._outputs.update(self._sim.start(*self._interval))
        except Exception as err:
            self.log(f"flexmbs FMU: the run could not start: {err}", Fmi2Status.error)
            raise

    def do_step(self, current_time, step_size):
        if self._sim is None:
            self.log("flexmbs FMU: fmi2DoStep before fmi2ExitInitializationMode", Fmi2Status.error)
            return False
        self._sim.inputs.update(self._inputs)
        try:
            self._outputs.update(self._sim.advance(current_time, step_size))
        except FMIError as err:
            self.log(f"flexmbs FMU: {err}", Fmi2Status.error)
            return False
        return True

    def terminate(self):
        if self._sim is not None:
            self._sim.close()
