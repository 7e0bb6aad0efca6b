"""`SYSTEM_INTEGRATORS`: the integrators that run a `flexmbs.System`, sorted by name
(`flexmbs.formulations.registry.system_methods`).

A System runs by `flexmbs.run(system, formulation=..., method=...)`; its `Results` hold the
energies (``energies["total"]`` = T + V_g + U) and `System.residual_norms` gives ||C|| at each
output.  This module is kept only for its last user, `flexmbs.formulation_comparison.common_choices`,
which leaves the library with issue 21 (item 6); it goes with it.
"""
from __future__ import annotations

from .formulations.registry import system_methods

__all__ = ["SYSTEM_INTEGRATORS"]

SYSTEM_INTEGRATORS = system_methods()
