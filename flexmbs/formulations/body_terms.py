"""What the Gibbs-Appell and Hamilton formulations of a `flexmbs.System` ask of its bodies, checked in
one place and assembled over the bodies.

Each body kind declares the terms it provides as methods (docs/formulations_system.md):

.. code:: text

    gibbs_appell(Q, V) -> (M, g)          dS/dq'' = M q'' + g, S = 1/2 sum m |a|^2 (k states at once)
    kinetic_energy_gradient(Q, V) -> dT/dq at fixed q' (k states at once)
    active_forces(t, q, v, gravity)       the generalized forces that are not inertia

Provided by PointMass, RigidBody2D, RigidBodyEP, RigidBodyNatural, FlexibleBody, CorotationalBeam2D
and TreeBody; a System with any other body kind (CorotationalBeam3D) is refused by `check_bodies` with a message
naming the body and its kind.
"""
from __future__ import annotations

import numpy as np

__all__ = ["BodyKindError", "GIBBS_APPELL", "HAMILTON", "check_bodies", "inertia_terms", "active_forces",
           "kinetic_energy_gradient"]

GIBBS_APPELL = ("gibbs_appell", "active_forces")
HAMILTON = ("kinetic_energy_gradient", "active_forces")
PROVIDED_BY = "PointMass, RigidBody2D, RigidBodyEP, RigidBodyNatural, FlexibleBody, CorotationalBeam2D, TreeBody"


class BodyKindError(ValueError):
    """A body kind that does not provide the terms a formulation needs."""


def check_bodies(system, methods: tuple, formulation: str) -> None:
    """Raise `BodyKindError` naming every body of ``system`` that lacks one of ``methods``."""
    missing = [f"{b.name!r} ({type(b).__name__})" for b in system.bodies
               if not all(callable(getattr(b, m, None)) for m in methods)]
    if missing:
        raise BodyKindError(
            f"formulation {formulation!r} needs bodies that provide {', '.join(m + '()' for m in methods)}; "
            f"body {', '.join(missing)} does not. The body kinds that do: {PROVIDED_BY}. Use formulation "
            "'lagrange' or 'index3' for this system")


def _per_body(system, q, v, method: str) -> list:
    """[(slice, method(q_b[None], v_b[None]))] of every body (k = 1)."""
    return [(system.slice(b), getattr(b, method)(q[None, system.slice(b)], v[None, system.slice(b)]))
            for b in system.bodies]


def inertia_terms(system, q, v) -> tuple[np.ndarray, np.ndarray]:
    """(M_GA (n_q, n_q), g (n_q,)) of dS/dq'' = M_GA q'' + g: the bodies' `gibbs_appell`, block-diagonal."""
    M = np.zeros((system.n_q, system.n_q))
    g = np.empty(system.n_q)
    for sl, (Mb, gb) in _per_body(system, q, v, "gibbs_appell"):
        M[sl, sl] = Mb[0]
        g[sl] = gb[0]
    return M, g


def kinetic_energy_gradient(system, q, v) -> np.ndarray:
    """dT/dq at fixed q' (n_q,): the bodies' `kinetic_energy_gradient`."""
    out = np.empty(system.n_q)
    for sl, d in _per_body(system, q, v, "kinetic_energy_gradient"):
        out[sl] = d[0]
    return out


def active_forces(system, t, q, v) -> np.ndarray:
    """The generalized forces that are not inertia (n_q,): the bodies' `active_forces` with the System's gravity."""
    out = np.empty(system.n_q)
    for b in system.bodies:
        sl = system.slice(b)
        out[sl] = b.active_forces(t, q[sl], v[sl], system.gravity)
    return out
