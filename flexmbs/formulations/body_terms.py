"""What the Gibbs-Appell, Hamilton, Kane and Volterra formulations of a `flexmbs.System` ask of its bodies, checked in
one place and assembled over the bodies.

Each body kind declares the terms it provides as methods (docs/formulations_system.md):

.. code:: text

    gibbs_appell(Q, V) -> (M, g)          dS/dq'' = M q'' + g, S = 1/2 sum m |a|^2 (k states at once)
    kinetic_energy_gradient(Q, V) -> dT/dq at fixed q' (k states at once)
    active_forces(t, q, v, gravity)       the generalized forces that are not inertia
    kinematics(Q) -> PartKinematics       the body's mass as rigid parts or mass points: v_i = B_i q',
                                          omega_i = D_i q', inertia I_i (Kane, Volterra; complex-safe)

Provided by PointMass, RigidBody2D, RigidBodyEP, RigidBodyNatural, FlexibleBody, CorotationalBeam2D
and TreeBody (and by the ``batch`` evaluators of the rigid kinds, n bodies at once); a System with any
other body kind (CorotationalBeam3D) is refused by `check_bodies` with a message naming the body and
its kind.  `BodyTerms` assembles them over a System's bodies.
"""
from __future__ import annotations

import numpy as np

__all__ = ["BodyKindError", "BodyTerms", "GIBBS_APPELL", "HAMILTON", "KANE_VOLTERRA", "check_bodies"]

GIBBS_APPELL = ("gibbs_appell", "active_forces")
HAMILTON = ("kinetic_energy_gradient", "active_forces")
KANE_VOLTERRA = ("kinematics", "active_forces")
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


class BodyTerms:
    """The bodies' terms of ``system`` assembled over its bodies, checked once (`check_bodies` with
    ``methods``): bodies of one class with a ``batch`` evaluator that gives the terms (rigid bodies in
    Euler parameters, planar bodies, natural coordinates) are evaluated together on stacked
    coordinates, as ``System.mass_matrix`` and ``System.forces`` do; the others one by one."""

    def __init__(self, system, methods: tuple, formulation: str):
        check_bodies(system, methods, formulation)
        self.system = system
        groups: dict = {}
        for b in system.bodies:
            batched = "batch" in type(b).__dict__
            groups.setdefault((type(b), b.n_q) if batched else id(b), []).append(b)
        self._groups, self._single, self._loaded = [], [], []
        for members in groups.values():
            batch = type(members[0]).batch(members) if "batch" in type(members[0]).__dict__ else None
            if batch is not None and all(callable(getattr(batch, m, None)) for m in methods):
                idx = np.array([np.arange(system.slice(b).start, system.slice(b).stop) for b in members])
                self._groups.append((batch, idx))
                self._loaded.extend((b, system.slice(b)) for b in members if b.loads)
            else:
                self._single.extend(members)

    def inertia_terms(self, q, v) -> tuple[np.ndarray, np.ndarray]:
        """(M_GA (n_q, n_q), g (n_q,)) of dS/dq'' = M_GA q'' + g: the bodies' `gibbs_appell`, block-diagonal."""
        n = self.system.n_q
        M, g = np.zeros((n, n)), np.empty(n)
        for batch, idx in self._groups:
            Mb, g[idx] = batch.gibbs_appell(q[idx], v[idx])
            M[idx[:, :, None], idx[:, None, :]] = Mb
        for b in self._single:
            sl = self.system.slice(b)
            Mb, gb = b.gibbs_appell(q[None, sl], v[None, sl])
            M[sl, sl], g[sl] = Mb[0], gb[0]
        return M, g

    def kinetic_energy_gradient(self, q, v) -> np.ndarray:
        """dT/dq at fixed q' (n_q,): the bodies' `kinetic_energy_gradient`."""
        out = np.empty(self.system.n_q)
        for batch, idx in self._groups:
            out[idx] = batch.kinetic_energy_gradient(q[idx], v[idx])
        for b in self._single:
            sl = self.system.slice(b)
            out[sl] = b.kinetic_energy_gradient(q[None, sl], v[None, sl])[0]
        return out

    def active_forces(self, t, q, v) -> np.ndarray:
        """The generalized forces that are not inertia (n_q,), with the System's gravity: the batches' and
        the single bodies' `active_forces`, the loads of the batched bodies added."""
        s, gravity = self.system, self.system.gravity
        out = np.empty(s.n_q)
        for batch, idx in self._groups:
            out[idx] = batch.active_forces(t, q[idx], v[idx], gravity)
        for b, sl in self._loaded:
            out[sl] += b.applied(t, q[sl], v[sl])
        for b in self._single:
            sl = s.slice(b)
            out[sl] = b.active_forces(t, q[sl], v[sl], gravity)
        if s.force_elements:                            # springs, dampers and actuators between bodies
            out += s.element_forces(t, q, v)
        return out
