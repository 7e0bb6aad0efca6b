"""One run of a constrained multibody `System`, and the histories every multibody case writes.

`integrate_system` integrates a `flexmbs.system.System` from (q0, v0) either with the index-3
generalized-alpha method (``integrator="index3-alpha"``: `ConstrainedProblem`, step ``h``,
``rho_inf``) or on the index-1 route (`flexmbs.formulations.index1.Index1` with the given
solver and stabilisation, state x = (q, v), fed to any other method of
`flexmbs.integrators`: fixed-step methods take ``h``, adaptive ones ``rtol`` and
``atol = atol_factor * rtol``).

An explicit method on a system with a stiff flexible body warns first (`flexmbs.stiffness.check_explicit`:
"this system is stiff ...: use index3-alpha").

`SYSTEM_INTEGRATORS` lists the methods that can integrate a System this way (every method of
flexmbs but ``exact``, which needs the affine equations of a steady model).

`energy_history` and `constraint_history` evaluate E = T + V_g + U (kinetic, gravity, strain) and ||C(t, q)||_2 at every output.
"""
from __future__ import annotations

import numpy as np

from .integrators import INTEGRATORS

__all__ = ["SYSTEM_INTEGRATORS", "integrate_system", "energy_history", "constraint_history"]

SYSTEM_INTEGRATORS = sorted(name for name in INTEGRATORS if name != "exact")


def integrate_system(system, q0, v0, t_end: float, t_eval, *, integrator: str = "index3-alpha", h: float = 1e-3,
                     rho_inf: float = 0.8, rtol: float = 1e-10, atol_factor: float = 1e-2,
                     solver: str = "augmented", stabilization="none", assemble: bool = False):
    """Solution (`flexmbs.integrators.Solution`, x = (q, v) per output) of one run from t = 0 to ``t_end``.

    ``q0``, ``v0``: the initial state (None: the bodies' own, `System.initial_state`), checked
    against the constraints: an inconsistent one is refused (`flexmbs.system.InconsistentStateError`)
    unless ``assemble=True``, which projects it onto the constraints with a warning.
    """
    from flexmbs.integrators import ConstrainedProblem, simulate

    q0, v0 = system.initial_state(0.0, q0, v0, assemble=assemble)
    if integrator == "index3-alpha":
        return simulate(ConstrainedProblem(system), (0.0, t_end), np.concatenate([q0, v0]), method="index3-alpha",
                        h=h, t_eval=t_eval, rho_inf=rho_inf)
    from flexmbs.formulations.index1 import Index1
    from flexmbs.stiffness import check_explicit
    check_explicit(system, integrator, (0.0, float(t_end)))      # a stiff flexible body: say so before hours
    problem = Index1(system, solver=solver, stabilization=stabilization)
    kw = dict(rtol=rtol, atol=rtol * atol_factor) if INTEGRATORS[integrator].uses_tolerances else dict(h=h)
    return simulate(problem, (0.0, t_end), np.concatenate([q0, v0]), method=integrator, t_eval=t_eval, **kw)


def energy_history(system, q, v) -> np.ndarray:
    """E = T + V_g + U (n_t,) [J] of the system at every row of q, v (n_t, n_q): kinetic, gravitational
    and strain energy (`System.energy`)."""
    return np.array([sum(system.energy(qk, vk)) for qk, vk in zip(q, v)])


def constraint_history(system, t, q) -> np.ndarray:
    """||C(t, q)||_2 (n_t,) at every output."""
    return np.array([np.linalg.norm(system.residual(tk, qk)) for tk, qk in zip(t, q)])
