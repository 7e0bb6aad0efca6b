"""A `flexmbs.System` as the index-3 problem of index3-alpha (`ConstrainedProblem`)."""
from __future__ import annotations

import numpy as np

__all__ = ["ConstrainedProblem"]


class ConstrainedProblem:
    """A `flexmbs.System` as a problem for `flexmbs.simulate` with the index-3 method.

    Parameters
    ----------
    system : flexmbs.System
        Bodies and constraints.

    Attributes
    ----------
    n_state : int
        2 n_q; the state is x = (q, v).
    """

    name = "constrained-index3"

    def __init__(self, system):
        for attr in ("n_q", "mass_matrix", "forces", "residual", "jacobian", "gamma"):
            if not hasattr(system, attr):
                raise TypeError(f"`system` must be a flexmbs.System (it lacks `{attr}`), "
                                f"got {type(system).__name__}.")
        self.system = system
        self.n_q = int(system.n_q)
        self.n_state = 2 * self.n_q

    def state0(self, q0=None, v0=None, t0: float = 0.0, assemble: bool = False):
        """x0 = (q0, v0), by default the bodies' own initial state, checked against the constraints
        (refused if inconsistent, or assembled with ``assemble=True``: ``System.initial_state``)."""
        return np.concatenate(self.system.initial_state(t0, q0, v0, assemble=assemble))

    def physical(self, t, x):
        """(q, v) from states x (..., 2 n_q)."""
        return x[..., :self.n_q], x[..., self.n_q:]

    def term(self):
        """What index3-alpha sees (`flexmbs.formulations.terms.DAETerm`): the System's mass matrix,
        forces, constraints and their Jacobian, the analytic parts of the tangent it gives, its
        checks (start, changed bodies and loads, constraints that cannot all hold), C_t, whether
        M is constant (every body's ``constant_mass``), whether every constraint is holonomic, the
        Hamiltonian of method "rattle" with M(q) (built when asked for) and
        the compiled kernel's packing (the optional ones None for a hand-made system without them:
        `flexmbs.formulations.terms.system_method`)."""
        from ..constraints.nonholonomic import nonholonomic_constraints
        from .terms import DAETerm, system_checks, system_method
        s = self.system
        optional = {name: system_method(s, name) for name in (
            "constraint_terms", "tangent_matrices", "quadratic_velocity_jacobian", "elastic_stiffness", "over_constrained", "compiled")}
        body_tangents = system_method(s, "body_tangents")
        if body_tangents is None or not body_tangents():     # no body's own block: the whole system's differences
            optional["tangent_matrices"] = None
        checks_model = system_method(s, "check_unchanged") is not None
        bodies = system_method(s, "bodies")
        return DAETerm(name=self.name, n_q=self.n_q, mass_matrix=s.mass_matrix, forces=s.forces,
                       residual=s.residual, jacobian=s.jacobian, gamma=s.gamma, **optional,
                       time_derivative=system_method(s, "time_derivative"),
                       mass_matrix_constant=bodies is not None and all(b.constant_mass for b in bodies),
                       holonomic=not nonholonomic_constraints(s),
                       hamiltonian=self._hamiltonian if bodies is not None else None,
                       check_model=self._check_model if checks_model else None,
                       **system_checks(s, self.physical))

    def _hamiltonian(self):
        """H(q, p) of the System for method "rattle" with M(q) (`ConstrainedHamiltonian`)."""
        from .constrained_hamiltonian import ConstrainedHamiltonian
        return ConstrainedHamiltonian(self.system)

    def _check_model(self, t, q, v) -> None:
        """Refuse a body or joint changed since the System was built, name a load of the wrong size."""
        self.system.check_unchanged()
        self.system.check_loads(t, q, v)
