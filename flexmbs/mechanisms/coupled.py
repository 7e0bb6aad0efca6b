"""Coupled rigid-flexible mechanisms: integration on the index-3 route and post-processing.

A coupled mechanism is a `flexmbs.System` of rigid bodies and `FlexibleBody`s joined by joints
and driven by driving constraints or torques: the elastic deformation acts back on the
motion (docs/coupled.md).  This module holds what the coupled cases share:

- `integrate`: Arnold-Bruls generalized-alpha (``index3-alpha``) with a fixed step ``h``
  and numerical damping ``rho_inf``, started from the bodies' initial coordinates and
  velocities;
- `multipliers`: the multipliers at the output states solved again from the index-1
  accelerations (M, C_q^T; C_q, 0) (q'', lam) = (Q, gamma), one solve per output: a reference
  for the integrator's own ``Solution.lam`` (which the cases use; they differ by the
  integrator's error, tests/test_coupled.py);
- `axial_torque`: the torque a constraint applies on a body about a global axis at all outputs,
  from `System.reaction_history` (one batched least-squares solve per body); `torque_about`
  the same from a history already computed (one pass over the outputs for several joints);
- `angular_momentum`: H_a = a . `System.momentum`(q, q').angular, the momentum conjugate to a rigid
  rotation of the whole system about the global axis a through the origin, per output.
"""
from __future__ import annotations

import numpy as np

from ..formulations.index1 import Index1
from ..integrators import ConstrainedProblem, simulate

__all__ = ["integrate", "multipliers", "axial_torque", "torque_about", "angular_momentum"]


def integrate(system, t_end: float, h: float, t_eval=None, rho_inf: float = 0.9, **options):
    """Solution of ``system`` over [0, t_end] by index3-alpha with the fixed step ``h``."""
    problem = ConstrainedProblem(system)
    x0 = problem.state0(system.initial_coordinates(), system.initial_velocities())
    return simulate(problem, (0.0, float(t_end)), x0, method="index3-alpha", h=h, t_eval=t_eval,
                    rho_inf=rho_inf, **options)


def multipliers(system, t, x) -> np.ndarray:
    """lam (n_t, n_c) at the states x (n_t, 2 n_q), solved again from the index-1 (augmented)
    accelerations at each output: a reference for the integrator's ``Solution.lam``."""
    form = Index1(system, solver="augmented")
    return np.array([form.multipliers(float(ti), xi) for ti, xi in zip(t, x)])


def axial_torque(system, constraint, body, t, x, lam, axis=(0.0, 0.0, 1.0)) -> np.ndarray:
    """Torque [N m] that ``constraint`` applies on ``body`` about the global ``axis``, per output
    (`System.reaction_history`, `torque_about`)."""
    history = system.reaction_history(t, np.asarray(x)[:, :system.n_q], lam, [constraint.name])
    return torque_about(history[constraint.name], body, axis)


def torque_about(reaction, body, axis=(0.0, 0.0, 1.0)) -> np.ndarray:
    """a . (R T) per output: the torque T on ``body`` of one constraint's entry ``reaction`` of
    `System.reaction_history`, in the joint's frame R, about the global axis a."""
    a = np.asarray(axis, dtype=float)
    return np.einsum("tij,tj->ti", reaction["rotation"], reaction["bodies"][body.name]["torque"]) @ a


def angular_momentum(system, x, axis=(0.0, 0.0, 1.0)) -> np.ndarray:
    """H_a = a . H (`System.momentum`, about the origin) for the global ``axis`` a, per state x (n_t, 2 n_q)."""
    n = system.n_q
    a = np.asarray(axis, dtype=float)
    return np.array([a @ system.momentum(xi[:n], xi[n:]).angular for xi in np.atleast_2d(x)])
