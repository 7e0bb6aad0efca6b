"""Gibbs-Appell equations of a `flexmbs.System`: the acceleration energy of every body's mass, with
the constraints' multipliers at the acceleration level (as the index-1 Lagrange formulation).

Each body gives the gradient of its acceleration energy S = 1/2 sum_i m_i |a_i|^2 (its mass points:
a flexible body's quadrature points, a rigid body's inertia about its centre of mass), affine in the
accelerations (`flexmbs.formulations.body_terms`):

.. code:: text

    dS/dq'' = M_GA(q) q'' + g(q, q')        g = dS/dq'' at q'' = 0: the velocity-product terms

Gibbs-Appell's equations with the constraint forces, dS/dq'' + C_q^T lam = Q_a (Q_a: the active
forces, gravity, loads, elastic, damping, stiffening), and the constraints at the acceleration level
C_q q'' = gamma are one saddle-point system, solved as in `flexmbs.formulations.augmented`:

.. code:: text

    [ M_GA  C_q^T ] [ q'' ]   [ Q_a - g ]
    [ C_q   0     ] [ lam ] = [ gamma   ]

State x = (q, q'), the same first-order form, stabilisation options and second-order form
(generalized-alpha) as `Index1`; index3-alpha integrates M_GA q'' + C_q^T lam = Q_a - g, C = 0
(the index-3 form of these equations), on the compiled kernel when the System qualifies (it
evaluates M_GA and g itself, from the same mass points: `flexmbs.compiled`), else on the numpy path.  docs/formulations_system.md derives the body terms and compares them with Lagrange's.

References
----------
.. [1] P. Appell, Sur une forme generale des equations de la dynamique, J. Reine Angew. Math. 121
       (1900) 310-319, doi:10.1515/crll.1900.121.310.
.. [2] S. Vlase et al., review of Lagrange, Gibbs-Appell, Maggi and Hamilton equations for FE models
       of elastic multibody systems (../shared/seeds/004), eqs. (31)-(45).
"""
from __future__ import annotations


import numpy as np

from .augmented import solve_saddle_point
from .body_terms import GIBBS_APPELL, BodyTerms
from .index1 import Index1
from .stabilization import stabilized_gamma

__all__ = ["GibbsAppellSystem"]


class GibbsAppellSystem(Index1):
    """Gibbs-Appell's equations of a `System` (module docstring); options as `Index1`'s (stabilisation,
    ``jacobian_refresh``), the solver is the augmented saddle-point system."""

    name = "gibbs-appell"

    def __init__(self, system, stabilization="none", **options):
        self.body_terms = BodyTerms(system, GIBBS_APPELL, self.name)
        super().__init__(system, solver="augmented", stabilization=stabilization, **options)

    def inertia(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(M_GA, g) at (q, q') (`BodyTerms.inertia_terms`), kept for the last (q, q'): index3-alpha asks
        for M_GA(q) and Q_a - g at the same state."""
        key = (q.tobytes(), v.tobytes())
        if self.__dict__.get("_inertia_key") != key:
            self._inertia_key, self._inertia_terms = key, self.body_terms.inertia_terms(q, v)
        return self._inertia_terms

    def accelerations(self, t: float, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q'', lam) of ``[[M_GA, C_q^T], [C_q, 0]] [q''; lam] = [Q_a - g; gamma]`` (with the Baumgarte
        terms when chosen)."""
        return solve_saddle_point(*self.acceleration_terms(t, q, v), t=t)

    def acceleration_terms(self, t: float, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, ...]:
        """(M_GA, Q_a - g, C_q, gamma_s) at (t, q, v), the System's numpy (`Index1.acceleration_terms` with
        Gibbs-Appell's matrix and forces; its `Index1.multiplier_history` solves them stacked)."""
        M, g = self.inertia(q, v)
        Cq = self.system.jacobian(t, q)
        s = self.stabilization
        gamma = stabilized_gamma(self.system, t, q, v, Cq, s.alpha, s.beta)
        return M, self.body_terms.active_forces(t, q, v) - g, Cq, gamma

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """M_GA(q) (it does not depend on q': that of the last (q, q') if q is its q)."""
        key = self.__dict__.get("_inertia_key")
        if key is not None and key[0] == q.tobytes():
            return self._inertia_terms[0]
        return self.body_terms.inertia_terms(q, np.zeros_like(q))[0]

    def forces(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Q_a - g: the right-hand side of M_GA q'' + C_q^T lam = Q_a - g."""
        return self.body_terms.active_forces(t, q, v) - self.inertia(q, v)[1]

    def term(self):
        """`Index1.term` with this formulation's accelerations, and its index-3 form for index3-alpha:
        M_GA and Q_a - g in place of the System's M and Q, with the compiled kernel evaluating the same
        terms in C (`flexmbs.compiled.CompiledSystem` with ``formulation="gibbs-appell"``); no analytic
        dg/dv (Lagrange's dQ_v/dv is not this formulation's): the tangent by finite differences."""
        ode = super().term()
        dae = ode.dae.replace(name=self.name, mass_matrix=self.mass_matrix, forces=self.forces, tangent=None,
                              tangent_matrices=None, quadratic_velocity_jacobian=None, compiled=self.compiled)
        return ode.replace(name=self.name, dae=dae)

    def compiled(self):
        """This System packed for the compiled kernel with Gibbs-Appell's terms (M_GA and Q_a - g from the
        bodies' mass points and inertia, csrc ``rigid_ga``, ``flex_ga``); raises `flexmbs.compiled.Unsupported`
        (a ValueError) naming what the kernel does not evaluate."""
        from ..compiled import CompiledSystem
        return CompiledSystem(self.system, formulation=self.name)
