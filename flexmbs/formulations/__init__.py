"""Formulations of the equations of motion; all take ``(model)`` and feed the same integrators."""
from .base import Formulation, SecondOrderForm
from .lagrange import Lagrange
from .gibbs_appell import GibbsAppell
from .hamilton import Hamilton
from ._common import Energies, energies

FORMULATIONS = {cls.name: cls for cls in (Lagrange, GibbsAppell, Hamilton)}

__all__ = ["Formulation", "SecondOrderForm", "Lagrange", "GibbsAppell", "Hamilton", "FORMULATIONS",
           "Energies", "energies"]
