"""Formulations of the equations of motion.  ``FORMULATIONS``: the classes of a Model on its
prescribed frame, by name, read from the one table of formulations (`registry.REGISTRY`, which
also builds a System's formulations)."""
from .base import Formulation, SecondOrderForm
from .lagrange import Lagrange
from .gibbs_appell import GibbsAppell
from .hamilton import Hamilton
from ._common import Energies, energies

from .registry import REGISTRY

FORMULATIONS = {name: entry.prescribed() for name, entry in REGISTRY.items() if entry.prescribed is not None}

__all__ = ["Formulation", "SecondOrderForm", "Lagrange", "GibbsAppell", "Hamilton", "FORMULATIONS",
           "Energies", "energies"]
