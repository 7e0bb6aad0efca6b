"""One entry point for the five formulations of a constrained multibody system (issue 13).

``make_formulation(name, system, Y=..., Y_reduced=..., ignorable=...)`` returns an object for
`flexmbs.simulate` with ``state0()``, ``physical(t, x) -> (q, q')``, ``n_state`` and
``n_equations`` (the size of the linear system solved per evaluation):

=================== ============================= ============ ==============
name                equations                     state        n_equations
=================== ============================= ============ ==============
lagrange            M q'' + a^T lam = Q, a q''=g  (q, q')      m + r
maggi               W^T(M q'' - Q) = 0, a q''=g   (q, q')      m
kane                Kane / Gibbs-Appell           (q, u)       p = m - r
volterra            Volterra                      (q, u)       p
volterra-reduced    Volterra, dynamical constr.   (q, u_NI)    p - s
=================== ============================= ============ ==============
"""
from __future__ import annotations

import numpy as np

from .index1 import Index1
from .kane import Kane
from .maggi import Maggi
from .quasi_velocities import QuasiVelocities
from .volterra import ReducedVolterra, Volterra

__all__ = ["FORMULATION_NAMES", "make_formulation", "Lagrange"]

FORMULATION_NAMES = ("lagrange", "maggi", "kane", "volterra", "volterra-reduced")


class Lagrange(Index1):
    """Lagrange's equations with multipliers (the index-1 augmented formulation), no stabilisation."""

    def __init__(self, system):
        super().__init__(system, solver="augmented", stabilization="none")
        self.n_equations = system.n_q + system.n_c

    @staticmethod
    def physical(t, x):
        x = np.atleast_2d(x)
        n = x.shape[-1] // 2
        return x[:, :n], x[:, n:]


def make_formulation(name: str, system, *, Y=None, Z=None, Y_reduced=None, Z_reduced=None, ignorable="auto"):
    """The formulation ``name`` (one of FORMULATION_NAMES) of ``system``.

    Y, Z: the p quasi-velocities u = Y q' + Z of maggi, kane and volterra (default: null-space
    basis); Y_reduced, Z_reduced: the p - s non-ignorable ones of volterra-reduced; ignorable:
    "auto" or the declared ignorable coordinates.
    """
    if name not in FORMULATION_NAMES:
        raise ValueError(f"`formulation` must be one of {', '.join(FORMULATION_NAMES)}, got {name!r}")
    if name == "lagrange":
        return Lagrange(system)
    if name == "volterra-reduced":
        qv = QuasiVelocities(system, Y=Y_reduced, Z=Z_reduced, ignorable=ignorable)
        return ReducedVolterra(system, qv)
    qv = QuasiVelocities(system, Y=Y, Z=Z)
    return {"maggi": Maggi, "kane": Kane, "volterra": Volterra}[name](system, qv)
