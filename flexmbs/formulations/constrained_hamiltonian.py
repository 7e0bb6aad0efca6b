"""The Hamiltonian H(q, p) = 1/2 p^T Mbar(q)^-1 p + U(q) of a `flexmbs.System` whose mass matrix M(q)
depends on the coordinates: what method "rattle" steps for such a system (docs/design.md, "RATTLE with
M(q)").

A body in Euler parameters (`RigidBodyEP`, and the frame of a `FlexibleBody`) has a singular M:
its kinetic energy sees p' only through w = 2 G(p) p', and G(p) p = 0, so M [0; p] = 0 and
p = M^-1 (momenta) does not exist.  Its normalisation C_e = p.p - 1 = 0 holds along every motion
with p.p' = 0, so adding to T a term that vanishes with p.p' changes neither T nor the motion on the
constraint manifold (the added force is along C_e's gradient, taken up by its multiplier).  With
one constant weight w_b per such body,

.. code:: text

    Tbar(q, q') = T(q, q') + sum_b 2 w_b (p_b . p_b')^2 = 1/2 q'^T Mbar(q) q'
    Mbar = M + sum_b 4 w_b [0; p_b] [0; p_b]^T                      (positive definite)
    dTbar/dq = dT/dq + sum_b 4 w_b (p_b . p_b') [0; p_b']            (at fixed q')
    w_b = tr M_pp,b(q0) / 12                                          (M_pp,b: the 4 x 4 block of p_b)

For a rigid body M_pp = 4 G^T J G, whose trace is 4 tr J (G G^T = I): w_b = tr J / 3, the mean of
the principal inertias, so the added eigenvalue 4 w_b along p is of the size of the others (4 J_i)
and Mbar is as well conditioned as the body's inertia allows (the 4 x 4 inertia diag(w_b, J) in the
frame (p, G), as Hairer, Lubich and Wanner write the rigid body in quaternions, Geometric Numerical
Integration, 2nd ed., sec. VII.5).  w_b is computed once, at the System's initial coordinates, so
that Tbar is one function of (q, q') for the whole run.

dT/dq at fixed q' is the bodies' own analytic one (`flexmbs.formulations.body_terms.BodyTerms`, as
Hamilton's formulation of a System uses: RigidBodyEP, FlexibleBody, ...), not a difference of M;
the forces that are not inertia (gravity, loads, force elements) are ``BodyTerms.active_forces``.
Then, with v = Mbar(q)^-1 p, H_p = v and H_q = -dTbar/dq (fixed v) - Q_a for Q_a = -U_q.
"""
from __future__ import annotations

import numpy as np

from .body_terms import HAMILTON, PROVIDED_BY, BodyTerms

__all__ = ["ConstrainedHamiltonian"]


class ConstrainedHamiltonian:
    """Mbar(q), dTbar/dq and the active forces of a System (module docstring).

    Parameters
    ----------
    system : flexmbs.System

    Raises
    ------
    ValueError
        If a body does not give dT/dq (``kinetic_energy_gradient``: CorotationalBeam3D), naming it.
    """

    def __init__(self, system):
        missing = [f"{b.name!r} ({type(b).__name__})" for b in system.bodies
                   if not all(callable(getattr(b, m, None)) for m in HAMILTON)]
        if missing:
            raise ValueError(f"method 'rattle' with a mass matrix M(q) needs dT/dq of every body "
                             f"(kinetic_energy_gradient()); body {', '.join(missing)} does not give it "
                             f"(the body kinds that do: {PROVIDED_BY}): use method 'index3-alpha'")
        self.body_terms = BodyTerms(system, HAMILTON, "rattle")
        self.system = system
        self.ep = self._euler_parameter_columns(system)
        M0 = np.asarray(system.mass_matrix(system.initial_coordinates()), dtype=float)
        self.weights = np.trace(M0[self.ep[:, :, None], self.ep[:, None, :]], axis1=1, axis2=2) / 12.0

    @staticmethod
    def _euler_parameter_columns(system) -> np.ndarray:
        """(n_b, 4) the columns of q holding each body's Euler parameters p_b: those of its
        normalisation (`EulerParameterNorm`, the nonzero entries of its row 2 p_b^T)."""
        from ..bodies.rigid import EulerParameterNorm
        starts = [system.slice(c.bodies[0]).start + 3 for c in system.constraints[:system.n_internal]
                  if isinstance(c, EulerParameterNorm)]
        return np.array([np.arange(s, s + 4) for s in starts], dtype=int).reshape(-1, 4)

    def mass_matrix(self, q) -> np.ndarray:
        """Mbar(q) (n_q, n_q) = M(q) + sum_b 4 w_b [0; p_b] [0; p_b]^T."""
        M = np.array(self.system.mass_matrix(q), dtype=float)
        P = q[self.ep]
        M[self.ep[:, :, None], self.ep[:, None, :]] += 4.0 * self.weights[:, None, None] * P[:, :, None] * P[:, None, :]
        return M

    def kinetic_energy_gradient(self, q, v) -> np.ndarray:
        """dTbar/dq at fixed q' (n_q,) = the bodies' dT/dq + sum_b 4 w_b (p_b . p_b') [0; p_b']."""
        g = self.body_terms.kinetic_energy_gradient(q, v)
        P, Pd = q[self.ep], v[self.ep]
        g[self.ep] += 4.0 * (self.weights * np.einsum("ba,ba->b", P, Pd))[:, None] * Pd
        return g

    def active_forces(self, t, q, v) -> np.ndarray:
        """Q_a (n_q,): the generalized forces that are not inertia (gravity, loads, force elements)."""
        return self.body_terms.active_forces(t, q, v)
