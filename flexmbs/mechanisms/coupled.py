"""Coupled rigid-flexible mechanisms: post-processing of their runs.

A coupled mechanism is a `flexmbs.System` of rigid bodies and `FlexibleBody`s joined by joints
and driven by driving constraints or torques: the elastic deformation acts back on the
motion (docs/coupled.md).  The cases run it by `flexmbs.run` (index3-alpha with a fixed step
``h`` and ``rho_inf``), whose `Results` hold the coordinates ``q``, velocities ``v`` and the
index-3 steps' own multipliers ``multipliers`` at the outputs.  This module holds the
post-processing the coupled cases share:

- `axial_torque`: the torque a constraint applies on a body about a global axis at all outputs,
  from `System.reaction_history` (one batched least-squares solve per body); `torque_about`
  the same from a history already computed (one pass over the outputs for several joints);
- `angular_momentum`: H_a = a . `System.momentum`(q, q').angular, the momentum conjugate to a rigid
  rotation of the whole system about the global axis a through the origin, per output.
"""
from __future__ import annotations

import numpy as np

__all__ = ["axial_torque", "torque_about", "angular_momentum"]


def axial_torque(system, constraint, body, t, q, lam, axis=(0.0, 0.0, 1.0)) -> np.ndarray:
    """Torque [N m] that ``constraint`` applies on ``body`` about the global ``axis``, per output, at the
    coordinates q (n_t, n_q) and multipliers lam (n_t, n_c) (e.g. ``Results.q``, ``Results.multipliers``;
    `System.reaction_history`, `torque_about`)."""
    if lam is None:
        raise ValueError("axial_torque: `lam` is None: this run has no multipliers (`Results.multipliers` is None "
                         "for the quasi-velocity formulations and for a run read back from a results file that "
                         "stopped before its end); give lam (n_t, n_c), e.g. the multipliers of an index3-alpha run")
    history = system.reaction_history(t, q, lam, [constraint.name])
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
