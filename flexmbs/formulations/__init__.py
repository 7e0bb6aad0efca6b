"""Formulations of the equations of motion.  ``FORMULATIONS``: the classes of a Model on its
prescribed frame, by name, read from the one table of formulations (`registry.REGISTRY`, which
also builds a System's formulations).

Each public name is imported from its module at its first use (`flexmbs.lazy.lazy_package`), and
``FORMULATIONS[name]`` imports the module of that formulation only (`flexmbs.lazy.LazyTable`):
a System run loads none of the Model's three classes."""
from ..lazy import lazy_package

# public name -> the module it comes from
_PUBLIC = {
    "Formulation": "flexmbs.formulations.base", "SecondOrderForm": "flexmbs.formulations.base",
    "Lagrange": "flexmbs.formulations.lagrange", "GibbsAppell": "flexmbs.formulations.gibbs_appell",
    "Hamilton": "flexmbs.formulations.hamilton", "FORMULATIONS": "flexmbs.formulations.registry",
    "Energies": "flexmbs.formulations._common", "energies": "flexmbs.formulations._common",
}

__all__ = list(_PUBLIC)

__getattr__, __dir__ = lazy_package(__name__, _PUBLIC)
