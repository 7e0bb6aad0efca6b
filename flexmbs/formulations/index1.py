"""Index-1 first-order form of a constrained multibody system, for every integrator of `simulate`.

State ``x = (q, v)``, ``v = q'`` (n_state = 2 n_q), M_full = I:

.. code:: text

    q' = v
    v' = q''(t, q, v)        from the augmented formulation or the Udwadia-Kalaba equations

with the constraints differentiated twice (C_q q'' = gamma, or gamma - 2 alpha C' - beta^2 C
with Baumgarte terms).  Coordinate partitioning acts through ``correct_state(t, x)``, which
every integrator calls after each accepted step (start-up steps of AB4 included; AB4 then
evaluates the derivative at the corrected state, so its history holds derivatives at
corrected states: ``flexmbs/integrators/adams_bashforth.py``).

The implicit integrators ('midpoint', 'Radau', 'BDF') get a Jacobian d(x')/dx by forward
differences of ``rhs`` (2 n_q evaluations), reused while ``jacobian_key(t)`` is unchanged:
it changes every ``jacobian_refresh`` seconds (a modified Newton iteration).  The
generalized-alpha method runs the second-order form ``I q'' = q''(t, q, v)`` (``second_order``;
K = -dq''/dq and C = -dq''/dv by the same differences); it is then an index-1 method like the
others, not the index-3 integration of constrained systems (issue 12, item 5).
"""
from __future__ import annotations

import logging
from typing import Hashable

import numpy as np

from . import augmented, evaluations, udwadia_kalaba
from .base import SecondOrderForm, forward_difference_jacobian
from .stabilization import (Baumgarte, CoordinatePartitioning, NoStabilization, RedundantConstraintError,
                            make_stabilization, stabilized_gamma, violations)
from ..lazy import LazyModule

sparse = LazyModule("scipy.sparse")

__all__ = ["Index1", "SOLVERS", "HistoryKernel", "chunked_multiplier_history", "chunks_of_history", "history_chunks",
           "history_states", "system_terms_history"]

log = logging.getLogger("flexmbs.constrained")

SOLVERS = {"augmented": augmented.accelerations, "udwadia-kalaba": udwadia_kalaba.accelerations}
# the same solvers on given terms (M, Q, C_q, gamma): the compiled path's (`flexmbs.formulations.evaluations`)
SOLVES = {"augmented": augmented.solve_saddle_point, "udwadia-kalaba": udwadia_kalaba.solve_udwadia_kalaba}
# the same solvers on the terms of N states stacked: the multipliers at the outputs (`Index1.multiplier_history`)
HISTORIES = {"augmented": augmented.saddle_point_history, "udwadia-kalaba": udwadia_kalaba.udwadia_kalaba_history}
# outputs per stacked solve: the coupled slider-crank's 1441 outputs (66 x 66 saddle points) took 0.39 s in one
# stack, whose 150 MB of temporaries are fresh pages, against 0.06 s in stacks of 64 (2026-11-27)
HISTORY_CHUNK = 64
HISTORY_BYTES = 2 ** 24     # the stacked matrices of a chunk at most 16 MB (a large System: fewer states a chunk)


class Index1:
    """A constrained `System` as ``x' = f(t, x)`` with ``x = (q, q')``.

    Parameters
    ----------
    system : flexmbs.System
        Bodies and constraints (mass_matrix, forces, residual, jacobian, time_derivative,
        gamma, energy, initial_state, mobility).
    solver : {"augmented", "udwadia-kalaba"}
        How q'' and the multipliers are computed at each evaluation.
    stabilization : {"none", "baumgarte", "coordinate-partitioning"} or a stabilisation object
    alpha, beta : float
        Baumgarte coefficients [1/s] (``stabilization="baumgarte"`` only).
    tol : float
        Newton tolerance of the coordinate partitioning (default 1e-9).
    jacobian_refresh : float
        Seconds between Jacobian updates for the implicit integrators.
    kernel : {"auto", "compiled", "numpy"}
        Where M, Q, C and C_q are evaluated (`flexmbs.formulations.evaluations`): "auto" (default) the
        compiled kernel when it takes the System, else the System's numpy (the reference); "compiled"
        refuses a System the kernel does not take.  The solvers and the stabilisation stay numpy.
    **solver_options
        Passed to the solver (``rcond_min`` for AF; ``weight``, ``rtol`` for UKE).

    Attributes
    ----------
    n_rhs : int
        Evaluations of the accelerations.
    lam : ndarray or None
        Multipliers of the last evaluation.
    kernel : {"compiled", "numpy"}
        The path the evaluations take; ``kernel_reason`` says why not the kernel (None on it).
    """

    name = "index-1"
    second_state = "delta_dot"
    mass_matrix_constant = True
    linear = False

    def __init__(self, system, solver: str = "augmented", stabilization="none", *, alpha: float | None = None,
                 beta: float | None = None, tol: float | None = None, jacobian_refresh: float = 1e-2,
                 kernel: str = "auto", **solver_options):
        if solver not in SOLVERS:
            raise ValueError(f"`solver` must be one of {', '.join(repr(s) for s in SOLVERS)}, got {solver!r}.")
        options = {}
        if alpha is not None or beta is not None:
            if stabilization != "baumgarte":
                raise ValueError("`alpha`/`beta` are the Baumgarte coefficients: give them with "
                                 f"stabilization='baumgarte' (got stabilization={stabilization!r}).")
            options.update({k: v for k, v in (("alpha", alpha), ("beta", beta)) if v is not None})
        if tol is not None:
            if stabilization != "coordinate-partitioning":
                raise ValueError("`tol` is the Newton tolerance of stabilization='coordinate-partitioning' "
                                 f"(got stabilization={stabilization!r}).")
            options["tol"] = tol
        if not (np.isfinite(jacobian_refresh) and jacobian_refresh > 0):
            raise ValueError(f"`jacobian_refresh` must be a positive time [s], got {jacobian_refresh!r}.")
        self.system = system
        self.solver = solver
        self._solve = SOLVERS[solver]
        self._solver_options = solver_options
        self.stabilization = make_stabilization(stabilization, **options)
        if isinstance(self.stabilization, CoordinatePartitioning):
            from ..constraints.nonholonomic import require_holonomic
            require_holonomic(system, "Coordinate partitioning (a position projection)")
        self.n = system.n_q
        self.n_state = 2 * self.n
        self.n_rhs = 0
        self.lam: np.ndarray | None = None
        self.jacobian_refresh = float(jacobian_refresh)
        self._I = None                              # M_full = I, sparse, built when asked (`mass_matrix_full`)
        blocks = solver == "augmented" and augmented.uses_block_mass(system)
        self._kernel_history = True                 # the kernel's terms_history (False: the kernel predates it)
        self._kernel, self.kernel, self.kernel_reason = evaluations.choose(
            system, kernel, "the augmented accelerations are solved with the bodies' mass blocks (n_c = 0 or "
                            f"n_q + n_c >= {augmented.BLOCK_SADDLE_MIN}), which the kernel does not give" if blocks
            else None)

    # -- states ----------------------------------------------------------------------------------
    def state0(self, q0=None, v0=None, t0: float = 0.0, assemble: bool = False) -> np.ndarray:
        """x(t0) = (q0, v0), by default the bodies' own initial coordinates and velocities, checked
        against the constraints by ``System.initial_state``: an inconsistent state is refused
        (`flexmbs.system.InconsistentStateError`), or, with ``assemble=True``, projected onto the
        constraints (positions, then velocities) with a warning saying how far it moved.

        Checks the mobility: redundant constraints with the augmented formulation raise a
        `RedundantConstraintError` naming them.
        """
        q0, v0 = self.system.initial_state(t0, q0, v0, assemble=assemble)
        self.check_redundancy(t0, q0)
        return np.concatenate([q0, v0])

    def check_redundancy(self, t: float, q: np.ndarray) -> dict:
        """System.mobility at (t, q); raises for redundant constraints under the augmented formulation."""
        mob = self.system.mobility(t, q)
        self.mobility = mob
        redundant = _redundant_names(mob)
        over = getattr(self.system, "over_constrained", None)
        cause = over(t, q) if redundant and over is not None else None
        if cause:                                  # redundant and inconsistent: no solver helps
            raise RedundantConstraintError(f"The system cannot start: {cause}", names=redundant)
        if redundant and self.solver == "augmented":
            raise RedundantConstraintError(
                f"The system has {len(redundant)} redundant constraint equation(s) ({', '.join(redundant)}): "
                "the saddle-point matrix of the augmented formulation is singular. Use "
                "solver='udwadia-kalaba' (Moore-Penrose pseudo-inverse), or remove the redundant "
                "constraint(s).")
        if redundant:
            log.info("%d redundant constraint equation(s) (%s): the Udwadia-Kalaba pseudo-inverse gives "
                     "the least-norm multipliers%s", len(redundant), ", ".join(redundant),
                     "; coordinate partitioning drops them" if isinstance(self.stabilization, CoordinatePartitioning)
                     else "")
        return mob

    @staticmethod
    def physical(t, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q, v) from x, for x (2 n,) or (n_t, 2 n)."""
        x = np.asarray(x)
        n = x.shape[-1] // 2
        return x[..., :n], x[..., n:]

    # -- the first-order system ------------------------------------------------------------------
    def accelerations(self, t: float, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q'', lam) by the chosen solver, with the Baumgarte terms when chosen: on the compiled path
        the solver's own solve (`SOLVES`) on M, Q, C_q and gamma of two kernel calls (`acceleration_terms`)."""
        if self._kernel is None:
            s = self.stabilization
            return self._solve(self.system, t, q, v, alpha=s.alpha, beta=s.beta, **self._solver_options)
        return SOLVES[self.solver](*self.acceleration_terms(t, q, v), t=t, **self._solver_options)

    def acceleration_terms(self, t: float, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, ...]:
        """(M, Q, C_q, gamma_s) of ``M q'' + C_q^T lam = Q, C_q q'' = gamma_s`` at (t, q, v): from the kernel
        (`flexmbs.formulations.evaluations`) or the System, gamma_s with the Baumgarte terms when chosen."""
        s = self.stabilization
        if self._kernel is None:
            Cq = self.system.jacobian(t, q)
            return (self.system.mass_matrix(q), self.system.forces(t, q, v), Cq,
                    stabilized_gamma(self.system, t, q, v, Cq, s.alpha, s.beta))
        M, Q, C, Cq = self._kernel.terms(t, q, v)
        return M, Q, Cq, stabilized_gamma(self._kernel, t, q, v, Cq, s.alpha, s.beta, C=C)

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """x' = (v, q''(t, q, v))."""
        self.n_rhs += 1
        n = self.n
        q, v = x[:n], x[n:]
        qdd, self.lam = self.accelerations(t, q, v)
        return np.concatenate([v, qdd])

    def forcing_full(self, t: float, x: np.ndarray) -> np.ndarray:
        """F(t, x) = x' (M_full = I)."""
        return self.rhs(t, x)

    def mass_matrix_full(self, t: float | None = None):
        """The identity (the accelerations are solved for in `rhs`), sparse; built at the first call, so
        that the explicit methods, which never ask, do not import scipy.sparse."""
        if self._I is None:
            self._I = sparse.identity(self.n_state, format="csr")
        return self._I

    def jacobian(self, t: float, x: np.ndarray) -> np.ndarray:
        """d(x')/dx by forward differences of `rhs`, step sqrt(eps) max(1, |x_i|)."""
        return forward_difference_jacobian(self.rhs, t, x)

    @property
    def second_order(self) -> SecondOrderForm:
        """``I q'' = f(t, q, v)`` with f the accelerations, for generalized-alpha."""
        n = self.n

        def f(t, q, v):
            self.n_rhs += 1
            return self.accelerations(t, q, v)[0]

        cache = {}

        def dadx(t, q, v):
            x = np.concatenate([q, v])
            key = (t, x.tobytes())
            if cache.get("key") != key:                     # K and C are asked for at one state
                cache["key"], cache["J"] = key, self.jacobian(t, x)[n:]
            return cache["J"]

        def K(t, q, v):
            return -dadx(t, q, v)[:, :n]

        def C(t, q, v):
            return -dadx(t, q, v)[:, n:]

        # M = I dense: K and C are dense difference matrices, so the step matrix is dense whatever M is
        return SecondOrderForm(M=np.eye(n), f=f, K=K, C=C, key=self.jacobian_key)

    def jacobian_key(self, t: float) -> Hashable:
        """Changes every `jacobian_refresh` seconds (the Jacobian depends on the state)."""
        return int(np.floor(t / self.jacobian_refresh))

    def term(self):
        """What the integrators see (`flexmbs.formulations.terms.ODETerm`): x' = (v, q''), M_full = I,
        the difference Jacobian, the stabilisation's correction, the second-order form, the
        index-3 form of the same System (index3-alpha) and its start and range checks."""
        from .constrained import ConstrainedProblem
        from .terms import ODETerm, system_checks
        dae = ConstrainedProblem(self.system).term().replace(correct_state=self.correct_state)
        return ODETerm(name=self.name, n_state=self.n_state, rhs=self.rhs, jacobian=self.jacobian,
                       jacobian_key=self.jacobian_key, correct_state=self.correct_state, linear=self.linear,
                       second_order=self.second_order, dae=dae, kernel=self.kernel, kernel_reason=self.kernel_reason,
                       **system_checks(self.system, self.physical))

    # -- stabilisation and monitoring ------------------------------------------------------------
    def correct_state(self, t: float, x: np.ndarray) -> np.ndarray:
        """The stabilisation's correction of an accepted state (x itself when there is none), with C, C_q
        from the kernel on the compiled path."""
        n = self.n
        out = self.stabilization.correct(self.system if self._kernel is None else self._kernel, t, x[:n], x[n:])
        if out is None:
            return x
        return np.concatenate(out)

    def violations(self, t: float, x: np.ndarray) -> tuple[float, float]:
        """(||C||_2, ||C_q q' + C_t||_2) at the state x."""
        return violations(self.system, t, x[:self.n], x[self.n:])

    def energy(self, x: np.ndarray) -> float:
        """E = T + V_g + U [J]: kinetic, gravitational and strain energy (`System.energy`)."""
        return float(sum(self.system.energy(x[:self.n], x[self.n:])))

    def multipliers(self, t: float, x: np.ndarray) -> np.ndarray:
        """Multipliers lam at the state x (the reactions are System.reactions(t, q, lam))."""
        return self.accelerations(t, x[:self.n], x[self.n:])[1]

    def multiplier_history(self, t: np.ndarray, x: np.ndarray) -> np.ndarray:
        """lam (N, n_c) at the states x (N, n_state) and times t (N,), e.g. the outputs of a run: the terms
        of the states (on the compiled path one kernel call per `HISTORY_CHUNK` states,
        `flexmbs.compiled.CompiledSystem.terms_history`, the laws' time rows from one evaluation of the laws;
        on the numpy path `acceleration_terms` state by state), then the solver's equations on all of them at
        once (`HISTORIES`: one stacked solve per `HISTORY_CHUNK` states).  The same lam as `multipliers`
        state by state, to round-off; the augmented formulation's sparse saddle point of a large System
        (`augmented.uses_block_mass`) stays one state at a time (a stacked dense matrix of
        n_q + n_c >= `augmented.BLOCK_SADDLE_MIN` rows per output would not fit)."""
        t, x = history_states(t, x, self.n_state, f"{type(self).__name__}.multiplier_history")
        n, m = self.n, self.system.n_c
        if m == 0 or not len(t):
            return np.zeros((len(t), m))
        if self._kernel is None and self.solver == "augmented" and augmented.uses_block_mass(self.system):
            return np.array([self.multipliers(float(tk), xk) for tk, xk in zip(t, x)]).reshape(len(t), m)
        return np.concatenate([self._stacked_multipliers(t[c], x[c]) for c in history_chunks(len(t), n + m)])

    def _stacked_multipliers(self, t: np.ndarray, x: np.ndarray) -> np.ndarray:
        """lam (N, n_c) of one chunk of `multiplier_history`: the terms of its states, one stacked solve."""
        M, Q, Cq, gamma = self._stacked_terms(t, x)
        return HISTORIES[self.solver](M, Q, Cq, gamma, t=t, **self._solver_options)[1]

    def _stacked_terms(self, t: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, ...]:
        """(M, Q, C_q, gamma_s) of `acceleration_terms` at the states x (N, n_state), stacked: on the compiled
        path from one kernel call (`CompiledSystem.terms_history`) with gamma_s by `stacked_gamma`; on the numpy
        path, with a kernel built before that entry (`Unsupported`, said once in the log) or in a subclass that
        solves other terms than the kernel's M and Q (`GibbsAppellSystem`'s M_GA, Q_a - g), state by state, but
        with the System's own terms (no kernel) Q = `System.force_history` of all the states at once (the
        contacts' forces, the cost of the contact cases' outputs) and M, C_q, gamma_s state by state."""
        n = self.n
        own_terms = type(self).acceleration_terms is Index1.acceleration_terms      # M, Q of the kernel's System
        if self._kernel is not None and self._kernel_history and own_terms:
            from ..compiled import Unsupported
            try:
                M, Q, C, Cq, gamma, Ct = self._kernel.compiled.terms_history(t, x[:, :n], x[:, n:])
            except Unsupported as err:
                log.info("The multipliers at the outputs take the kernel's terms state by state: %s", err)
                self._kernel_history = False
            else:
                s = self.stabilization
                return M, Q, Cq, stacked_gamma(gamma, Ct, C, Cq, x[:, n:], s.alpha, s.beta)
        if self._kernel is None and own_terms:
            return self._system_terms_history(t, x)
        terms = [self.acceleration_terms(float(tk), xk[:n], xk[n:]) for tk, xk in zip(t, x)]
        return tuple(np.array(column) for column in zip(*terms))

    def _system_terms_history(self, t: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, ...]:
        """(M, Q, C_q, gamma_s) of `acceleration_terms` without a kernel at the states x (N, n_state): Q of all
        states by one `System.force_history`, M, C_q and gamma_s (`stabilized_gamma`) state by state."""
        n, s, system = self.n, self.stabilization, self.system
        q, v = x[:, :n], x[:, n:]
        Cq = [system.jacobian(float(tk), qk) for tk, qk in zip(t, q)]
        gamma = [stabilized_gamma(system, float(tk), qk, vk, Ck, s.alpha, s.beta) for tk, qk, vk, Ck in zip(t, q, v, Cq)]
        M = [system.mass_matrix(qk) for qk in q]
        return np.array(M), system.force_history(t, q, v), np.array(Cq), np.array(gamma)


class HistoryKernel:
    """The compiled kernel's evaluations of ``system`` for the stacked terms of a ``multiplier_history``
    (`evaluations.choose` with "auto": a `KernelEvaluations`, or None on the numpy path), chosen at the first
    call and kept (packing a System for the kernel is not free): for the formulations whose steps stay numpy
    (maggi, kane, volterra, hamilton), whose multipliers at the outputs take the kernel's `terms_history`.
    A kernel that refuses `terms_history` (`flexmbs.compiled.Unsupported`: built before that entry) is
    forgotten: the rest of the history, and the later ones, take the System's numpy without asking again."""

    def __init__(self, system):
        self.system = system
        self._chosen = False
        self._kernel = None

    def __call__(self):
        if not self._chosen:
            self._kernel, self._chosen = evaluations.choose(self.system, "auto")[0], True
        return self._kernel

    def terms_history(self, t: np.ndarray, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, ...] | None:
        """(M, Q, C_q, gamma, C_t) of N states by one kernel call (`flexmbs.compiled.CompiledSystem.terms_history`),
        or None on the numpy path: no kernel, or one that refused (said once in the log, then remembered)."""
        kernel = self()
        if kernel is None:
            return None
        from ..compiled import Unsupported
        try:
            M, Q, _, Cq, gamma, Ct = kernel.compiled.terms_history(t, q, v)
        except Unsupported as err:
            log.info("The multipliers at the outputs take the System's terms state by state: %s", err)
            self._kernel = None
            return None
        return M, Q, Cq, gamma, Ct


def history_states(t, x, n_state: int, who: str) -> tuple[np.ndarray, np.ndarray]:
    """(t (N,), x (N, n_state)) of a ``multiplier_history(t, x)`` as float arrays (x (n_state,) with one time is
    taken as one row); ValueError naming ``t`` or ``x`` (with ``who``, the method) otherwise, and for a state
    with NaN or inf (naming its time)."""
    try:
        times = np.asarray(t, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{who}: `t` must be the times, a vector of numbers, got {t!r}") from None
    try:
        states = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        states = None
    if states is not None and states.shape == (n_state,) and len(times) == 1:
        states = states[None]
    if states is None or states.shape != (len(times), n_state):
        raise ValueError(f"{who}: `x` must be ({len(times)}, {n_state}), a state of n_state = {n_state} numbers at "
                         f"each of the {len(times)} times `t`, got "
                         f"{'shape ' + str(states.shape) if states is not None else repr(x)}")
    bad = ~np.isfinite(states).all(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"{who}: `x` must be finite, got NaN or inf in the state at t = {times[k]:.6g} (row {k})")
    return times, states


def chunked_multiplier_history(form, stacked, t, x, hint: str) -> np.ndarray:
    """lam (N, n_c) of ``form.multiplier_history(t, x)`` (a formulation with ``n_state`` and ``system``) whose
    chunks ``stacked(t, x)`` solves: the arguments checked (`history_states`), zeros (N, n_c) when the System has
    no constraints or there are no states, else `chunks_of_history` with ``hint``, what to change at a singular
    matrix.  The preamble Maggi's, Kane's, Volterra's and Hamilton's `multiplier_history` share."""
    who = f"{type(form).__name__}.multiplier_history"
    t, x = history_states(t, x, form.n_state, who)
    system = form.system
    if system.n_c == 0 or not len(t):
        return np.zeros((len(t), system.n_c))
    return chunks_of_history(stacked, t, x, system.n_q + system.n_c, hint, who)


def chunks_of_history(stacked, t: np.ndarray, x: np.ndarray, width: int, hint: str, who: str) -> np.ndarray:
    """lam (N, n_c) of ``stacked(t, x)``, a formulation's multipliers of a chunk of states by stacked solves, over
    the chunks of `history_chunks` (``width`` = n_q + n_c).  A singular matrix in a stack (numpy's `LinAlgError`,
    which names no state) is looked for state by state with the same ``stacked`` and raised again naming the
    output's time and ``hint``, what to change."""
    out = []
    for c in history_chunks(len(t), width):
        try:
            out.append(stacked(t[c], x[c]))
        except np.linalg.LinAlgError:
            for k in range(c.start, c.stop):
                try:
                    stacked(t[k:k + 1], x[k:k + 1])
                except np.linalg.LinAlgError as err:
                    raise np.linalg.LinAlgError(f"{who}: a singular matrix at the output t = {t[k]:.6g} ({err}): "
                                                f"{hint}") from err
            raise
    return np.concatenate(out)


def history_chunks(N: int, width: int) -> list[slice]:
    """The slices of N states taken at once by the stacked solves of the multipliers at the outputs
    (`Index1.multiplier_history`, Maggi's, Kane's, Volterra's and Hamilton's): `HISTORY_CHUNK` states, fewer
    when the stacked matrices of ``width`` x ``width`` (n_q + n_c) would pass `HISTORY_BYTES`, at least one."""
    chunk = int(min(HISTORY_CHUNK, max(1, HISTORY_BYTES // (8 * max(width, 1) ** 2))))
    return [slice(i, min(i + chunk, N)) for i in range(0, N, chunk)]


def system_terms_history(system, kernel: HistoryKernel | None, t: np.ndarray, q: np.ndarray,
                         v: np.ndarray) -> tuple[np.ndarray, ...]:
    """(M, Q, C_q, gamma, C_t) of Lagrange's equations ``M q'' + C_q^T lam = Q, C_q q'' = gamma`` (the constraints'
    C_q q' + C_t = 0) at N states, stacked ((N, n, n), (N, n), (N, m, n), (N, m), (N, m)): on the compiled path
    (``kernel`` the formulation's `HistoryKernel`) one kernel call (`HistoryKernel.terms_history`), else (``kernel``
    None, no kernel, or a kernel built before that entry: said in the log once) the System's numpy evaluations
    state by state.  t (N,), q, v (N, n_q)."""
    terms = None if kernel is None else kernel.terms_history(t, q, v)
    if terms is not None:
        return terms
    s, N = system, len(t)
    rows = [(s.mass_matrix(qk), s.forces(tk, qk, vk), s.jacobian(tk, qk), s.gamma(tk, qk, vk),
             s.time_derivative(tk, qk)) for tk, qk, vk in zip(t, q, v)]
    shapes = ((s.n_q, s.n_q), (s.n_q,), (s.n_c, s.n_q), (s.n_c,), (s.n_c,))
    return tuple(np.array(column, dtype=float).reshape((N,) + shape) for column, shape in zip(zip(*rows), shapes))


def stacked_gamma(gamma: np.ndarray, Ct: np.ndarray, C: np.ndarray, Cq: np.ndarray, v: np.ndarray,
                  alpha: float = 0.0, beta: float = 0.0) -> np.ndarray:
    """gamma_s (N, n_c) of N states at once, `stabilization.stabilized_gamma`'s equation row by row:

    .. code:: text

        gamma_s = gamma - 2 alpha (C_q q' + C_t) - beta^2 C

    from the stacked gamma, C_t, C (N, n_c), C_q (N, n_c, n_q) and q' (N, n_q); gamma itself when
    alpha = beta = 0."""
    if alpha:
        gamma = gamma - 2.0 * alpha * (np.einsum("kij,kj->ki", Cq, v) + Ct)
    if beta:
        gamma = gamma - beta * beta * C
    return gamma


def _redundant_names(mobility: dict) -> list[str]:
    """Names of the redundant constraints reported by System.mobility."""
    for key in ("redundant", "redundant_constraints"):
        if key in mobility:
            value = mobility[key]
            return [str(v) for v in value] if not isinstance(value, (int, np.integer)) else (
                [f"{value} equation(s)"] if value else [])
    return []


__all__ += ["NoStabilization", "Baumgarte", "CoordinatePartitioning"]
