"""RATTLE: the symplectic, time-reversible integrator of mechanical systems with holonomic constraints.

The equations are those of index3-alpha (`flexmbs.formulations.terms.DAETerm`):

.. code:: text

    M q'' + C_q(q, t)^T lam = Q(t, q, q'),      C(q, t) = 0

With the momentum p = M q' and ``Q_n = Q(t_n, q_n, v_n)``, ``G_n = C_q(q_n, t_n)``, one step of
RATTLE [1]_ (Hairer, Lubich and Wanner [2]_, sec. VII.1.4, eq. (1.26), with H = 1/2 p^T M^-1 p + U(q)
and -U_q = Q) is, written in the velocities v = M^-1 p:

.. code:: text

    v_{n+1/2} = v_n + h/2 M^-1 (Q_n - G_n^T lam_n)
    q_{n+1}   = q_n + h v_{n+1/2}
    0         = C(q_{n+1}, t_{n+1})                                  (lam_n: Newton, below)
    v_{n+1}   = v_{n+1/2} + h/2 M^-1 (Q_{n+1} - G_{n+1}^T mu_n)
    0         = G_{n+1} v_{n+1} + C_t(q_{n+1}, t_{n+1})              (mu_n: one linear solve)

Newton for the multipliers.  With Lam = h^2/2 lam_n the new position is
``q_{n+1}(Lam) = q* - M^-1 G_n^T Lam``, ``q* = q_n + h v_n + h^2/2 M^-1 Q_n``, and Newton's
iteration on C(q_{n+1}(Lam)) = 0 is

.. code:: text

    (G(q_{n+1}) M^-1 G_n^T) dLam = C(q_{n+1}),     Lam <- Lam + dLam

started from the last step's multipliers.  It stops when |C(q_{n+1}, t_{n+1})|_inf <=
``newton_tol`` (in the units of the constraints; the round-off 64 eps max(|q|_inf, 1) when that
is larger), so the position constraints hold to the Newton tolerance at every step; it fails
with a message after ``newton_max_iter`` iterations.  The velocity projection is linear in
``nu = h/2 mu_n``: with ``u = v_{n+1/2} + h/2 M^-1 Q_{n+1}``,

.. code:: text

    (G_{n+1} M^-1 G_{n+1}^T) nu = G_{n+1} u + C_t,      v_{n+1} = u - M^-1 G_{n+1}^T nu

Properties [2]_ (Theorems VII.1.3, VII.1.4 and sec. VIII.1): for Q = -U_q(q) (conservative,
scleronomic) the map (q_n, p_n) -> (q_{n+1}, p_{n+1}) is symplectic on the constraint manifold
and time-reversible (stepping back from (q_{n+1}, -v_{n+1}) returns (q_n, -v_n)), of order 2; the
energy error then stays bounded, O(h^2), over exponentially long times instead of drifting.
tests/test_rattle.py checks the order, the reversibility, the bounded energy error and the
constraints at every step.

Round-off.  The position and velocity are updated by their increments, q_{n+1} = q_n + dq with
dq = h v_n + h^2/2 M^-1 Q_n - M^-1 G_n^T Lam and v_{n+1} = v_n + dv (the kicks and the projection
written as dv), and with ``compensated`` (the default) these sums are compensated (Kahan,
`compensated_sum`): the low-order bits each sum loses are carried to the next step's increment.  A
plain sum rounds to eps |q| a step, and over a long run with nearly repeating increments those
roundings add up linearly (Brouwer's law is violated); compensated, the state carries the
round-off of the increments, eps |dq|, and the invariants' error stays near round-off (Hairer,
McLachlan and Razakarivony, BIT 48 (2008) 231-243; [2]_ sec. VIII.5; measured in
docs/benchmarks.md sec. 29).  It costs a few vector operations a step; ``compensated=False`` gives
the plain sums.  A corrected state (``correct_state``) starts without compensation.

Constraints.  Only holonomic ones: a System with velocity constraints (`KnifeEdge`,
`VelocityConstraint`: ``DAETerm.holonomic`` False) is refused, as they have no position equation
for the Newton step.

Mass matrix.  The steps above are those of a constant M (``DAETerm.mass_matrix_constant``:
every body declares ``constant_mass``, i.e. bodies in natural coordinates, planar bodies,
point masses, corotational beams, and second-order forms M q'' = f of a Model); M is factorized
once (Cholesky) at the start.  A configuration-dependent M(q) (rigid bodies in Euler
parameters, floating-frame flexible bodies) takes the generalized RATTLE for
H(q, p) = 1/2 p^T Mbar(q)^-1 p + U(q) ([2]_, eq. VII.(1.26)): p_{n+1/2} implicit through
H_q(q_n, p_{n+1/2}), q_{n+1} by the trapezoid of H_p, Newton on (p_{n+1/2}, q_{n+1}, lam)
(`flexmbs.integrators.rattle_mq`), with Mbar = M plus a term along the Euler parameters that
vanishes on the constraint manifold and dT/dq from the bodies
(`flexmbs.formulations.constrained_hamiltonian`, ``DAETerm.hamiltonian``).  Its forces are
explicit, so a step above the stability limit 2 / omega_max of the stiffest elastic mode at t0
is refused (ValueError).  A singular constant M (a body without inertia, such as the point
pendulum of A01 modelled as a `RigidBody2D` with I_G = 0) is refused.

Forces that depend on the velocities (dampers) or on time are admitted: Q_{n+1} is then
Q(t_{n+1}, q_{n+1}, v_{n+1}), solved by fixed-point iteration with the velocity projection until
|v_{n+1}^(k) - v_{n+1}^(k-1)|_inf <= ``newton_tol`` max(|v_{n+1}|_inf, 1) (forces that do not
depend on v: two evaluations).  The method stays second order and symmetric, but is symplectic
only for conservative forces.

Redundant constraints make G M^-1 G^T singular: a C_q of lower rank than its rows at t0 is
refused (ValueError; index3-alpha with its ``regularization`` runs them), and a step that meets a
singular matrix or does not converge fails with a message.  Singular positions passed between two
steps do not stop it (measured on the double four-bar of cases/double_four_bar.py, h = 1e-3 s:
through its three singular positions in 3 s, B0 within 7.1e-5 m of the exact solution over 10 s).

Outputs.  The state is x = (q, v).  ``lam`` is the multipliers of the index-1 equations at the
state of the step point, ``[[M, C_q^T], [C_q, 0]] [q''; lam] = [Q; gamma]`` (computed when read,
e.g. at the outputs; RATTLE's own lam_n and mu_n are the O(h) one-sided values at the ends of the
step), and the dense output is the cubic Hermite interpolant with x' = (v, q'') of the same
equations.

References
----------
.. [1] H. C. Andersen, Rattle: a "velocity" version of the Shake algorithm for molecular
       dynamics calculations, J. Comput. Phys. 52 (1983) 24-34, doi:10.1016/0021-9991(83)90014-1.
.. [2] E. Hairer, C. Lubich, G. Wanner, Geometric Numerical Integration, 2nd ed., Springer 2006,
       sec. VII.1, doi:10.1007/3-540-30666-8.
"""
from __future__ import annotations


import numpy as np

from ..formulations.augmented import solve_saddle_point
from ..formulations.terms import DAETerm, ODETerm, index3_term
from .base import EPS, Integrator

__all__ = ["Rattle"]

ROUND_OFF = 64 * EPS        # |C| this small relative to max(|q|, 1) is at the round-off of q


def positive_definite(M) -> bool:
    """Whether the square matrix M is symmetric positive definite (a Cholesky factorization exists)."""
    M = np.asarray(M, dtype=float)
    if M.ndim != 2 or M.shape[0] != M.shape[1] or not np.allclose(M, M.T, rtol=1e-12, atol=0.0):
        return False
    from scipy.linalg import cho_factor
    try:
        cho_factor(M)
    except np.linalg.LinAlgError:
        return False
    return True


class StepFailed(Exception):
    """A step that cannot be taken; its text is the cause and the remedy (`Rattle._step_impl` makes
    it the run's message)."""


def compensated_sum(y: np.ndarray, dy: np.ndarray, carry: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(y_{n+1}, e_{n+1}) of y_{n+1} = y_n + dy by compensated (Kahan) summation: the increment and the
    low-order part e_n that the last sum lost are added, a = dy + e_n, y_{n+1} = fl(y_n + a), and the part
    of a that this sum loses is kept, e_{n+1} = (y_n - y_{n+1}) + a (exact in binary floating point
    when |y_n| >= |a|: Kahan's compensation).  The state then carries the round-off of computing the
    small increment, ~eps |dy|, instead of that of the sum, ~eps |y| (Hairer, McLachlan and
    Razakarivony, BIT 48 (2008) 231-243; Hairer, Lubich and Wanner, GNI sec. VIII.5)."""
    a = dy + carry
    y1 = y + a
    return y1, (y - y1) + a


def hidden_constraint_multiplier(G: np.ndarray, Minv_GT: np.ndarray, Ct: np.ndarray, mass: str = "M"):
    """u -> nu = (G M^-1 G^T)^-1 (G u + C_t): the multiplier (h/2 mu_n) that projects the velocity u of
    the second half kick onto the hidden constraint G v + C_t = 0 (``Minv_GT`` = M^-1 G^T; ``mass`` names
    M in the message).  `StepFailed` when G M^-1 G^T is singular (redundant constraints, a singular
    configuration)."""
    if not G.shape[0]:
        return lambda u: np.zeros(0)
    try:
        S = np.linalg.inv(G @ Minv_GT)
    except np.linalg.LinAlgError:
        raise StepFailed(f"the matrix C_q {mass}^-1 C_q^T of the velocity projection is singular: the constraints "
                         "are redundant or the configuration is singular. RATTLE needs independent constraints; "
                         "use method 'index3-alpha' (option `regularization`)") from None
    return lambda u: S @ (G @ u + Ct)


def hidden_constraint_projection(multiplier, Minv_GT: np.ndarray, base: np.ndarray):
    """du -> du - M^-1 G^T nu(base + du): the increment du of the second half kick's velocity over
    ``base`` (v_n), projected so that base + du lies on the hidden constraint G v + C_t = 0 (``multiplier``
    from `hidden_constraint_multiplier`, ``Minv_GT`` = M^-1 G^T).  Increments, so that the step's
    velocity can be summed with `compensated_sum`."""
    return lambda du: du - Minv_GT @ multiplier(base + du)


def forces_fixed_point(kick, project, forces, Q1: np.ndarray, dv1: np.ndarray, base: np.ndarray, tol: float,
                       max_iter: int):
    """(dv, Q(base + dv)) of dv = project(kick(Q(base + dv))), the velocity increment over ``base`` (v_n)
    of the second half kick of RATTLE when the forces depend on the velocities, by fixed-point iteration
    from (Q1, dv1); None if the forces are not finite.  ``forces`` takes the velocity base + dv.
    Converged when Q repeats or v changes by at most ``tol`` max(1, |v|_inf); `StepFailed` after
    ``max_iter`` iterations (it contracts when h/2 |M^-1 dQ/dv| < 1)."""
    for _ in range(max_iter):
        if not np.isfinite(Q1).all():
            return None
        dv_new = project(kick(Q1))
        Q_new = forces(base + dv_new)
        change = float(np.abs(dv_new - dv1).max(initial=0.0))
        dv1 = dv_new
        if np.array_equal(Q_new, Q1) or change <= tol * max(1.0, float(np.abs(base + dv1).max(initial=0.0))):
            return dv1, Q_new
        Q1 = Q_new
    raise StepFailed("the fixed-point iteration of the velocity-dependent forces Q(t, q, v) did not converge "
                     f"in `newton_max_iter` = {max_iter} iterations (damping too strong for this step: it "
                     "converges when h/2 |M^-1 dQ/dv| < 1): reduce `h` or use method 'index3-alpha'")


class Rattle(Integrator):
    """RATTLE for M q'' + C_q^T lam = Q, C = 0; fixed step, order 2, symplectic (constant M: the explicit
    kick-drift-kick; M(q): the generalized step of `flexmbs.integrators.rattle_mq`).

    Options: ``newton_tol`` (1e-10: the bound on |C|_inf after every step, and the relative
    bound of the fixed-point iteration of velocity-dependent forces), ``newton_max_iter`` (20),
    ``compensated`` (True: the updates q_{n+1} = q_n + dq and v_{n+1} = v_n + dv, p_{n+1} = p_n + dp
    with M(q), summed with Kahan's compensation, `compensated_sum`; False: plain sums).
    """

    name = "rattle"
    order = 2
    adaptive = False
    needs = "second_order"
    accepts = (DAETerm, ODETerm)
    requires = ("index3",)
    has_multipliers = True
    method_options = {"newton_tol": 1e-10, "newton_max_iter": 20, "compensated": True}

    @classmethod
    def _refusal(cls, term) -> str | None:
        """A term with nonholonomic constraints, whose M depends on q without the System's Hamiltonian
        (``DAETerm.hamiltonian``), whose constant M is not positive definite, or whose constraints' C_t
        is not given (module docstring)."""
        dae = term if isinstance(term, DAETerm) else term.dae
        if dae is None:                     # a second-order form M q'' = f: constant M, no constraints
            return None
        if not dae.holonomic:
            return (f"method 'rattle' integrates holonomic constraints C(q, t) = 0; {term.name!r} has velocity "
                    "constraints without a position equation (nonholonomic: KnifeEdge, VelocityConstraint)")
        if not dae.mass_matrix_constant and dae.hamiltonian is None:
            return (f"method 'rattle' with a mass matrix M(q) that depends on the coordinates needs the System's "
                    f"Hamiltonian (`DAETerm.hamiltonian`: a flexmbs.System through ConstrainedProblem); "
                    f"{term.name!r} does not give it")
        if dae.time_derivative is None:
            return (f"method 'rattle' needs the constraints' time derivative C_t (`time_derivative`); "
                    f"{term.name!r} does not give it")
        if dae.mass_matrix_constant and not positive_definite(dae.mass_matrix(np.zeros(dae.n_q))):     # constant: any q gives it
            return (f"method 'rattle' needs a positive definite mass matrix (it steps q' = M^-1 p); {term.name!r} "
                    "has a singular or indefinite one (a body without mass or inertia, e.g. a RigidBody2D with "
                    "I_G = 0): give every body mass and inertia")
        return None

    def _prepared(self, term) -> DAETerm:
        return index3_term(term)

    # -- setup ----------------------------------------------------------------------------------
    def _setup(self) -> None:
        self._tol = self._positive_option("newton_tol", finite=True)
        self._max_iter = self._count_option("newton_max_iter")
        self._compensated = self.options["compensated"]
        if self._compensated is not True and self._compensated is not False:
            raise ValueError(f"`compensated` must be True or False, got {self._compensated!r}.")
        sys = self._sys = self.term
        self.n = n = int(sys.n_q)
        q, v = self.x[:n], self.x[n:]
        if sys.check_model is not None:          # a flexmbs.System: refuse a changed body, a load of the wrong size
            sys.check_model(self.t, q, v)
        if sys.mass_matrix_constant:
            self._varying = None
            self.M = np.asarray(sys.mass_matrix(q), dtype=float)           # positive definite: `_refusal`
            from scipy.linalg import cho_factor, cho_solve
            self._Minv = cho_solve(cho_factor(self.M), np.eye(n))          # M^-1, once: M is constant
            self._Q = np.asarray(sys.forces(self.t, q, v), dtype=float)
            self.n_rhs += 1
        else:                                    # M(q): the generalized step (rattle_mq), Q = Q_a
            from .rattle_mq import GeneralizedRattleStep
            hamiltonian = sys.hamiltonian()
            self._check_stability(hamiltonian.mass_matrix(q), q, v)
            self._varying = GeneralizedRattleStep(sys, hamiltonian, self._tol, self._max_iter, self._compensated)
            self._Q = self._varying.active_forces(self.t, q, v)
        C, self._G = self._sys.constraints(self.t, q)
        self.n_c = len(C)
        rank = np.linalg.matrix_rank(self._G) if self.n_c else 0
        if rank < self.n_c:
            raise ValueError(
                f"method 'rattle' needs independent constraints (C_q of full row rank), but C_q of {self.term.name!r} "
                f"at t0 = {self.t:g} has rank {rank} < {self.n_c} rows (redundant constraints or a singular start: "
                "System.mobility names them); remove the redundant constraints or use method 'index3-alpha' "
                "(option `regularization`).")
        self._Lam_h = np.zeros(self.n_c)         # lam_n of the last step (h^2/2 lam_n / h^2: the Newton start)
        self._n_newton = 0
        self._cache = None                       # (t, qdd, lam) of `_accelerations` at the step point
        self._carry = (None, None)               # (the state x, the compensation of its last sum; constant M)

    def _check_stability(self, M, q, v) -> None:
        """Refuse a step h above the stability limit 2 / omega_max of the explicit force evaluation
        (RATTLE is Stormer-Verlet in the forces: stable for h omega < 2), omega_max^2 the largest
        eigenvalue of K_el v = omega^2 M v at the start (the bodies' elastic stiffness and the force
        elements' material one, `DAETerm.elastic_stiffness`; the constraints only lower it); nothing
        to check without elastic stiffness.  Done on the M(q) path, where a stiff flexible body is
        the usual case; without it the positions blow up and the step fails on a non-positive Mbar."""
        if self.term.elastic_stiffness is None or self.h is None:
            return
        K = self.term.elastic_stiffness(self.t, q, v)
        if K is None:
            return
        from scipy.linalg import eigvalsh

        from ..assembly.assembler import dense_array
        K = dense_array(K)
        omega_max = float(np.sqrt(max(eigvalsh(0.5 * (K + K.T), M, subset_by_index=[len(M) - 1, len(M) - 1])[0], 0.0)))
        if omega_max > 0 and self.h * omega_max >= 2.0:
            raise ValueError(
                f"`h` = {self.h:g} s is above the stability limit of method 'rattle', h < 2 / omega_max = "
                f"{2.0 / omega_max:.3g} s (omega_max = {omega_max:.4g} rad/s = {omega_max / (2 * np.pi):.4g} Hz, the "
                f"stiffest elastic mode of {self.term.name!r} at t0): RATTLE evaluates the forces explicitly. Reduce "
                "`h`, keep fewer (or no static) modes of the flexible bodies, or use method 'index3-alpha'.")

    # -- the step -------------------------------------------------------------------------------
    def _step_impl(self) -> tuple[bool, str | None]:
        step = self._next_step()
        if step is None:
            return False, self._underflow_message()
        t1, h = step
        if self._varying is not None:
            return self._step_varying(t1, h)
        n = self.n
        q0, v0 = self.x[:n], self.x[n:]
        carry = self._carry[1] if self._carry[0] is self.x else np.zeros(2 * n)   # none after a correction
        MinvGT0 = self._Minv @ self._G.T                              # M^-1 G_n^T (n, n_c)
        a0 = self._Minv @ self._Q                                     # M^-1 Q_n
        dq_free = h * v0 + 0.5 * h * h * a0                           # q* - q_n
        try:
            found = self._positions(t1, q0, dq_free, carry[:n], MinvGT0, h)
            if found is None:                   # non-finite constraints: the base guard reports the state
                return self._non_finite(t1, q0 + dq_free)
            q1, carry_q, G1, Lam = found
            dv_half = 0.5 * h * a0 - MinvGT0 @ Lam / h               # v_{n+1/2} - v_n; h/2 lam_n = Lam / h
            found = self._velocities(t1, h, q1, G1, v0, dv_half)
            if found is None:                   # non-finite forces: likewise
                return self._non_finite(t1, q1)
        except StepFailed as failure:
            return False, f"RATTLE's step from t = {self.t:.6g} to {t1:.6g} failed: {failure}."
        dv, Q1 = found
        v1, carry_v = compensated_sum(v0, dv, carry[n:])
        self._Lam_h = Lam / (h * h)
        self.t, self.x = t1, np.concatenate([q1, v1])
        self._carry = (self.x, np.concatenate([carry_q, carry_v])) if self._compensated else (None, None)
        self._Q, self._G = Q1, G1
        self._cache = None
        self._xdot_new = None
        return True, None

    def _step_varying(self, t1: float, h: float) -> tuple[bool, str | None]:
        """The step with M(q): `flexmbs.integrators.rattle_mq.GeneralizedRattleStep`."""
        n, stepper = self.n, self._varying
        q0, v0 = self.x[:n], self.x[n:]
        n_before = stepper.n_rhs
        try:
            found = stepper.step(t1, h, q0, v0, self._Q, self._G, self._Lam_h)
        except StepFailed as failure:
            return False, f"RATTLE's step from t = {self.t:.6g} to {t1:.6g} failed: {failure}."
        finally:
            self.n_rhs += stepper.n_rhs - n_before
        if found is None:                       # non-finite constraints or forces: the base guard reports the state
            return self._non_finite(t1, q0)
        q1, v1, self._Q, self._G, self._Lam_h = found
        self.t, self.x = t1, np.concatenate([q1, v1])
        self._cache = None
        self._xdot_new = None
        return True, None

    @property
    def n_newton(self) -> int:
        """Newton corrections so far (of the multipliers with constant M, of (p_{n+1/2}, q_{n+1}, lam) with M(q))."""
        return self._n_newton + (self._varying.n_newton if self._varying is not None else 0)

    def _positions(self, t1: float, q0: np.ndarray, dq_free: np.ndarray, carry: np.ndarray, MinvGT0: np.ndarray,
                   h: float):
        """(q_{n+1}, its compensation, C_q at it, Lam = h^2/2 lam_n) by Newton on
        C(q_n + dq_free - M^-1 G_n^T Lam) = 0 (the sum compensated: `compensated_sum`), or None if the
        constraints are not finite; `StepFailed` if Newton does not converge."""
        Lam = self._Lam_h * (h * h)                      # start: the last step's multipliers
        for k in range(self._max_iter + 1):
            q1, carry1 = compensated_sum(q0, dq_free - MinvGT0 @ Lam if self.n_c else dq_free, carry)
            C1, G1 = self._sys.constraints(t1, q1)
            c_norm = float(np.abs(C1).max(initial=0.0))
            if not np.isfinite(c_norm):
                return None
            if c_norm <= max(self._tol, ROUND_OFF * max(1.0, float(np.abs(q1).max()))):
                return q1, carry1, G1, Lam
            if k == self._max_iter:
                break
            try:
                Lam = Lam + np.linalg.solve(G1 @ MinvGT0, C1)
            except np.linalg.LinAlgError:
                raise StepFailed("the matrix C_q(q_{n+1}) M^-1 C_q(q_n)^T of Newton's iteration is singular: the "
                                 "constraints are redundant or the configuration is singular (C_q loses rank). "
                                 "RATTLE needs independent constraints; use method 'index3-alpha' (option "
                                 "`regularization`)") from None
            self._n_newton += 1
        raise StepFailed(f"Newton's iteration for the multipliers did not converge in `newton_max_iter` = "
                         f"{self._max_iter} iterations (|C|_inf = {c_norm:.3g} > `newton_tol` = {self._tol:.3g}). "
                         "Reduce `h` or raise `newton_max_iter`")

    def _velocities(self, t1: float, h: float, q1: np.ndarray, G1: np.ndarray, v0: np.ndarray,
                    dv_half: np.ndarray):
        """(v_{n+1} - v_n, Q(t_{n+1}, q_{n+1}, v_{n+1})): the second half kick projected onto
        G_{n+1} v + C_t = 0, iterated on the forces' dependence on v; or None if the forces are not
        finite; `StepFailed` if the iteration does not converge."""
        sys = self._sys
        Ct = np.asarray(sys.time_derivative(t1, q1), dtype=float).reshape(self.n_c)
        Minv_GT = self._Minv @ G1.T
        project = hidden_constraint_projection(hidden_constraint_multiplier(G1, Minv_GT, Ct), Minv_GT, v0)

        def forces(v):
            self.n_rhs += 1
            return np.asarray(sys.forces(t1, q1, v), dtype=float)
        dv_guess = 2.0 * dv_half                          # v_{n+1} ~ 2 v_{n+1/2} - v_n
        return forces_fixed_point(lambda Q: dv_half + 0.5 * h * (self._Minv @ Q), project, forces,
                                  forces(v0 + dv_guess), dv_guess, v0, self._tol, self._max_iter)

    def _non_finite(self, t1: float, q1: np.ndarray) -> tuple[bool, None]:
        """Take the step to t1 with non-finite velocities, so that the base guard reports a
        non-finite state (as index3-alpha does with non-finite forces)."""
        self.t, self.x = t1, np.concatenate([q1, np.full(self.n, np.nan)])
        self._cache = None
        self._xdot_new = None
        return True, None

    def _state_corrected(self) -> None:
        """The term's ``correct_state`` moved the state: the forces and C_q of the next step's first
        half kick are those of the corrected state."""
        q, v = self.x[:self.n], self.x[self.n:]
        self._carry = (None, None)               # the compensation belongs to the state before the correction
        if self._varying is not None:
            self._varying.forget()
            self._Q = self._varying.active_forces(self.t, q, v)
        else:
            self._Q = np.asarray(self._sys.forces(self.t, q, v), dtype=float)
            self.n_rhs += 1
        self._G = self._sys.constraints(self.t, q)[1]
        self._cache = None

    # -- multipliers and dense output -----------------------------------------------------------
    def _accelerations(self, t: float, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q'', lam) of the index-1 equations [[M, C_q^T], [C_q, 0]] [q''; lam] = [Q; gamma] at (t, x)."""
        sys, n = self._sys, self.n
        q, v = x[:n], x[n:]
        Q = np.asarray(sys.forces(t, q, v), dtype=float)
        self.n_rhs += 1
        M = self.M if self._varying is None else np.asarray(sys.mass_matrix(q), dtype=float)
        if not self.n_c:
            return (self._Minv @ Q if self._varying is None else np.linalg.solve(M, Q)), np.zeros(0)
        G = self._sys.constraints(t, q)[1]
        return solve_saddle_point(M, Q, G, np.asarray(sys.gamma(t, q, v), dtype=float), t=t)

    @property
    def lam(self) -> np.ndarray:
        """The multipliers at the current step point (index-1 equations at its state; module docstring)."""
        if self._cache is None or self._cache[0] != self.t:
            qdd, lam = self._accelerations(self.t, self.x)
            self._cache = (self.t, qdd, lam)
        return self._cache[2]

    def dense_multipliers(self, t: float) -> np.ndarray:
        """The multipliers at t in the last step, from the index-1 equations at the dense state."""
        t = float(t)
        if t == self.t:
            return self.lam
        return self._accelerations(t, self.dense(t))[1]

    def _xdot(self, t: float, x: np.ndarray) -> np.ndarray:
        """x' = (v, q'') for the Hermite dense output."""
        if t == self.t and x is self.x:
            self.lam                                   # fills the cache of the step point
            return np.concatenate([x[self.n:], self._cache[1]])
        return np.concatenate([x[self.n:], self._accelerations(t, x)[0]])
