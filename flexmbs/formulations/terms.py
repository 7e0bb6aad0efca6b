"""Terms: what an integrator sees of a formulation (issue 21).

A formulation hands the integrators one small frozen object, built by its ``term()``; the
integrators of `flexmbs.integrators` read only its fields, never the formulation or its
`flexmbs.System`:

.. code:: text

    ODETerm    M_full x' = F(t, x)                          (Lagrange, Gibbs-Appell, Hamilton, Index1,
               its second-order form M q'' = f(t, q, v)      SupportedBody, Maggi, Kane, Volterra, ...)
               and the fast paths it declares
    DAETerm    M(q) q'' + C_q^T lam = Q(t, q, q'),  C = 0    (ConstrainedProblem, for index3-alpha)

A field that is None is a capability the formulation does not have (no Jacobian, no
second-order form, no constant-coefficient form, no kernel); each integrator class declares
once which kind of term it accepts and which capabilities it requires
(`flexmbs.integrators.base.Integrator.accepts`, ``requires``), and `check_fits` compares the
two in one place.  The pattern follows scipy's ``OdeSolver`` (the solver is given one
callable ``fun(t, y)`` and counts its own calls of it, ``nfev``) and Chrono's timesteppers
(a ``ChTimestepper`` advances a ``ChIntegrable``, which gives its state, its right-hand side
and the one correction solve with the coefficients the method asks for): the problem states
what it can do, the method asks only that.

`as_term` turns what `simulate` is given into a term: a term as it is, else the object's
``term()``.
"""
from __future__ import annotations

from typing import Any, Callable, Hashable

import numpy as np

from ..assembly.assembler import dense_array
from ..frozen import FrozenFields
from .base import SecondOrderForm


__all__ = ["ODETerm", "DAETerm", "SparseStep", "SecondOrderSystem", "NotATermError", "as_term",
           "index3_term", "system_checks", "system_method", "CAPABILITIES"]


class SparseStep(FrozenFields):
    """The n x n step of a sparse model on a moving frame (`flexmbs.integrators.sparse_step`):
    what the midpoint rule and generalized-alpha step instead of the 2n x 2n system.

    Attributes
    ----------
    model : flexmbs.Model
        The sparse model whose constant matrices ``frame_terms()`` and coefficients
        ``frame_coefficients(t)`` form S(t) (`SecondOrderStepMatrix`); ``M``, ``steady`` and
        ``n_dofs`` pick the solver.
    canonical : bool
        False: the state is (delta, delta') and ``force`` is f of [m] delta'' = f(t, delta, delta');
        True: Hamilton's (delta, p), stepped with S_H (no h/4 [k(eps)]) and dp by back-substitution
        (`flexmbs.integrators.midpoint`), with ``forcing`` and ``gyroscopic_dot``.
    force : callable or None
        f(t, q, v) of the velocity form (``canonical`` False).
    forcing : callable or None
        F(t, x) of Hamilton's descriptor form (``canonical`` True).
    gyroscopic_dot : callable or None
        G(omega(t)) v, product by product (``canonical`` True).
    compiled : bool
        The formulation's rhs is its compiled constant-coefficient form (``evaluation="compiled"``):
        the midpoint rule then keeps its 2n x 2n path, generalized-alpha takes this step anyway
        (as before terms existed).
    """

    def __init__(self, *, model: Any, canonical: bool = False, force: Callable | None = None,
                 forcing: Callable | None = None, gyroscopic_dot: Callable | None = None, compiled: bool = False):
        self._set_fields(locals())


class ODETerm(FrozenFields):
    """``M_full x' = F(t, x)`` of a formulation, with the fast paths it declares.

    Attributes
    ----------
    name : str
        The formulation's name, for messages.
    n_state : int
        Length of the state x.
    rhs : callable
        ``rhs(t, x) -> x' = M_full^-1 F(t, x)`` (the explicit and scipy methods, dense output).
    forcing : callable or None
        ``forcing(t, x) -> F(t, x)`` (the midpoint rule); None: ``rhs`` (M_full = I).
    mass_matrix_full : callable or None
        M_full, dense or sparse; None: the identity.
    mass_matrix_constant : bool
        True: M_full is asked for once (``mass_matrix_full()``).
    mass_matrix_takes_t : bool
        A non-constant M_full is ``mass_matrix_full(t)`` (a descriptor form whose M_full moves
        with the frame: Hamilton); False: ``mass_matrix_full()``.
    jacobian : callable or None
        ``jacobian(t, x) -> dF/dx`` (dense or sparse); needed by the implicit first-order methods.
    jacobian_key : callable or None
        ``jacobian_key(t) -> Hashable``: equal keys mean equal Jacobians and equal M_full, so
        factorizations are reused while it repeats.
    correct_state : callable or None
        ``correct_state(t, x) -> x``, called after every accepted step (a constraint projection);
        returning x itself means no change.
    linear : bool
        F is affine in x and ``jacobian`` exact: one Newton solve is the step (option ``linear``
        of the implicit methods, None, takes this).
    second_order : SecondOrderForm or None
        ``M q'' = f(t, q, v)`` with x = (q, v), K = -df/dq, C = -df/dv (generalized-alpha,
        index3-alpha); None where the state is not (q, q') (momenta, quasi-velocities).
    affine : callable or None
        ``affine() -> AffineSecondOrder`` (`flexmbs.formulations.affine`): the second-order form
        of a small dense model as constant matrices times coefficients, built when first asked
        for (the midpoint rule's reduced n x n step).
    sparse_step : SparseStep or None
        The n x n step of a sparse model (`SparseStep`); None for dense models and
        formulations without one.
    linear_system : callable or None
        ``linear_system() -> (A, c, B)`` of x' = A x + c + B f(t) (method "exact"), computed when
        first asked for; raises ValueError naming why a model has no constant coefficients.
    load_functions : tuple
        The time function f_j of each column of B: None for a constant load (f_j = 1), else the
        load's function (method "exact" integrates `flexmbs.signals.Harmonic` ones exactly).
    dae : DAETerm or None
        The same system as a constrained index-3 problem in the same state (q, q') (index-1 forms
        of a `flexmbs.System`): what index3-alpha integrates instead of ``second_order``.
    check_initial : callable or None
        ``check_initial(t0, x0)`` raises `flexmbs.system.InconsistentStateError` for a start that
        violates the constraints (formulations of a System); None: every x0 is admissible.
    range_check : callable or None
        ``range_check(t, x, stacklevel) -> str or None``: the warning text of the flexible bodies
        that leave the range of their linear-strain model over the outputs (t (n_t,), x
        (n_t, n_state)); `simulate` appends it to the run's message.
    kernel, kernel_reason : str or None
        Where the term evaluates its system ("compiled" or "numpy": the index-1 forms of a System,
        `flexmbs.formulations.evaluations`) and why not the kernel; None: no kernel applies.  The
        integrator reports them (`Solution.kernel`) unless it has a path of its own.
    """

    def __init__(self, *, name: str, n_state: int, rhs: Callable[[float, np.ndarray], np.ndarray],
                 forcing: Callable[[float, np.ndarray], np.ndarray] | None = None,
                 mass_matrix_full: Callable | None = None, mass_matrix_constant: bool = True,
                 mass_matrix_takes_t: bool = False, jacobian: Callable | None = None,
                 jacobian_key: Callable[[float], Hashable] | None = None,
                 correct_state: Callable[[float, np.ndarray], np.ndarray] | None = None, linear: bool = False,
                 second_order: SecondOrderForm | None = None, affine: Callable[[], Any] | None = None,
                 sparse_step: SparseStep | None = None, linear_system: Callable[[], tuple] | None = None,
                 load_functions: tuple = (), dae: "DAETerm | None" = None,
                 check_initial: Callable[[float, np.ndarray], None] | None = None,
                 range_check: Callable[[np.ndarray, np.ndarray, int], str | None] | None = None,
                 kernel: str | None = None, kernel_reason: str | None = None):
        self._set_fields(locals())
        if forcing is None:                      # M_full = I: F is x'
            self.__dict__["forcing"] = rhs

    def has(self, capability: str) -> bool:
        """Whether the term gives ``capability``, one of `CAPABILITIES`."""
        return CAPABILITIES[capability][0](self)


class DAETerm(FrozenFields):
    """``M(q) q'' + C_q(q, t)^T lam = Q(t, q, q')``, ``C(q, t) = 0``: what index3-alpha integrates.

    The state is x = (q, v), n_state = 2 n_q.  The callables are those of `flexmbs.System` of the
    same names (`ConstrainedProblem.term`), or of a second-order form without constraints
    (`SecondOrderSystem.term`).

    Attributes
    ----------
    name : str
    n_q : int
        Coordinates.
    mass_matrix : callable
        ``mass_matrix(q) -> M`` (n_q, n_q).
    forces : callable
        ``forces(t, q, v) -> Q`` (n_q,).
    residual : callable
        ``residual(t, q) -> C`` (n_c,).
    jacobian : callable
        ``jacobian(t, q) -> C_q`` (n_c, n_q).
    gamma : callable
        ``gamma(t, q, v)``: the right-hand side of C_q q'' = gamma (the start's accelerations).
    constraint_terms : callable or None
        ``constraint_terms(t, q) -> (C, C_q)`` in one pass; None: ``residual`` and ``jacobian``.
    tangent : callable or None
        ``tangent(t, q, v) -> (K, C)`` = (-dQ/dq, -dQ/dv), analytic; None: finite differences.
    tangent_matrices : callable or None
        ``tangent_matrices(t, q, v, qdd, lam) -> (K_t, C_t)`` = (d(M q'' - Q + C_q^T lam)/dq, -dQ/dv)
        (`flexmbs.System.tangent_matrices`: the bodies' own exact blocks where they give them, forward
        differences body by body elsewhere); None: index3-alpha differences the whole system.
    quadratic_velocity_jacobian : callable or None
        ``(q, v) -> dQ_v/dv``: refreshes the quadratic-velocity part of a kept C_t.
    elastic_stiffness : callable or None
        ``(t, q, v) -> K_el = -dQ_el/dq`` or None: refreshes the elastic part of a kept K_t.
    over_constrained : callable or None
        ``(t, q) -> str or None``: the constraints that cannot all hold (a failure's cause).
    check_model : callable or None
        ``(t, q, v)``: refuses a body or joint changed since the system was built and names a
        load of the wrong size, once per run.
    compiled : callable or None
        ``compiled() -> CompiledSystem`` (`flexmbs.compiled`), or ValueError saying why the kernel
        cannot run the system; None: no kernel (not a flexmbs.System).
    correct_state, check_initial, range_check : callable or None
        As in `ODETerm` (``correct_state``: the stabilisation of an index-1 form whose index-3
        form this is, applied after the steps taken one at a time, as before terms existed).
    mass_matrix_constant : bool
        True: M does not depend on q (every body declares ``constant_mass``: natural coordinates,
        planar bodies, point masses, corotational beams; a second-order form's M); what method
        "rattle" steps explicitly (q' = M^-1 p with one factorization of M); False: its M(q) path
        (``hamiltonian``).  Default False.
    time_derivative : callable or None
        ``time_derivative(t, q) -> C_t`` (n_c,), of the velocity constraint C_q q' + C_t = 0
        (`flexmbs.System.time_derivative`); None: not given (method "rattle" needs it).
    holonomic : bool
        True (default): every constraint is holonomic, C(q, t) = 0; False: some rows are velocity
        constraints a q' + b = 0 with no position equation (`flexmbs.constraints.KnifeEdge`,
        `VelocityConstraint`), which method "rattle" does not integrate.
    hamiltonian : callable or None
        ``hamiltonian() -> ConstrainedHamiltonian`` (`flexmbs.formulations.constrained_hamiltonian`):
        Mbar(q), dTbar/dq at fixed q' and the active forces of a System whose M depends on q, built
        when first asked for (method "rattle" with M(q)); raises ValueError naming a body without
        dT/dq.  None: not given (a hand-made system, or a constant M).
    """

    def __init__(self, *, name: str, n_q: int, mass_matrix: Callable, forces: Callable, residual: Callable,
                 jacobian: Callable, gamma: Callable, constraint_terms: Callable | None = None,
                 tangent: Callable | None = None, tangent_matrices: Callable | None = None,
                 quadratic_velocity_jacobian: Callable | None = None, elastic_stiffness: Callable | None = None,
                 over_constrained: Callable | None = None, check_model: Callable | None = None,
                 compiled: Callable | None = None,
                 correct_state: Callable[[float, np.ndarray], np.ndarray] | None = None,
                 check_initial: Callable[[float, np.ndarray], None] | None = None,
                 range_check: Callable[[np.ndarray, np.ndarray, int], str | None] | None = None,
                 mass_matrix_constant: bool = False, time_derivative: Callable | None = None,
                 holonomic: bool = True, hamiltonian: Callable | None = None):
        self._set_fields(locals())

    @property
    def n_state(self) -> int:
        """2 n_q: the state is (q, v)."""
        return 2 * self.n_q

    def constraints(self, t: float, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(C (n_c,), C_q (n_c, n_q)) at (t, q): ``constraint_terms`` in one pass where the term
        has it, else ``residual`` and ``jacobian``."""
        if self.constraint_terms is not None:
            C, G = self.constraint_terms(t, q)
        else:
            C, G = self.residual(t, q), self.jacobian(t, q)
        C = np.atleast_1d(np.asarray(C, dtype=float))
        return C, np.asarray(G, dtype=float).reshape(len(C), self.n_q)


# capability -> (test on an ODETerm, what it is, for the messages of `check_fits`)
CAPABILITIES: dict[str, tuple[Callable[[ODETerm], bool], str]] = {
    "jacobian": (lambda term: term.jacobian is not None and term.jacobian_key is not None,
                 "a Jacobian dF/dx with its key (`jacobian`, `jacobian_key`)"),
    "second_order": (lambda term: term.second_order is not None,
                     "the second-order form M q'' = f(t, q, v) of a state (q, q') (second_state 'delta_dot': "
                     "Lagrange, Gibbs-Appell, Index1, SupportedBody; states of momenta or quasi-velocities "
                     "have none)"),
    "index3": (lambda term: term.dae is not None or term.second_order is not None,
               "a constrained second-order system: flexmbs.integrators.ConstrainedProblem(system), or a "
               "formulation with a second-order form M q'' = f(t, q, v)"),
    "linear_system": (lambda term: term.linear_system is not None,
                      "a linear term with constant coefficients (a model on a steady prescribed frame: "
                      "Lagrange, Gibbs-Appell, Hamilton)"),
}


class NotATermError(TypeError, ValueError):
    """Given something that is neither a term nor has ``term()``: a TypeError (the wrong kind of
    object), and a ValueError as the integrators raised for a formulation that did not fit
    before terms existed (their callers catch that)."""


def as_term(obj) -> ODETerm | DAETerm:
    """The term of ``obj``: ``obj`` itself if it is an `ODETerm` or a `DAETerm`, else ``obj.term()``.

    Raises
    ------
    NotATermError
        If ``obj`` has no ``term()``, or its ``term()`` returns something else.
    """
    if isinstance(obj, (ODETerm, DAETerm)):
        return obj
    make = getattr(obj, "term", None)
    if not callable(make):
        raise NotATermError(
            "`formulation` must be a flexmbs formulation (Lagrange, GibbsAppell, Hamilton, Index1, "
            "SupportedBody, Maggi, Kane, Volterra, or flexmbs.integrators.ConstrainedProblem(system) for "
            "index3-alpha: anything with a `term()` method) or an ODETerm or DAETerm of "
            f"flexmbs.formulations.terms, got {type(obj).__name__}.")
    term = make()
    if not isinstance(term, (ODETerm, DAETerm)):
        raise NotATermError(f"`{type(obj).__name__}.term()` must return an ODETerm or a DAETerm, got "
                            f"{type(term).__name__}.")
    return term


def index3_term(term: ODETerm | DAETerm) -> DAETerm:
    """The `DAETerm` a method of the index-3 equations steps for ``term`` (one that fits
    ``requires = ("index3",)``): a DAETerm itself; of an ODETerm, the index-3 form of its System
    (``dae``: Index1, Maggi), else its second-order form as a system without constraints
    (`SecondOrderSystem`)."""
    if isinstance(term, DAETerm):
        return term
    if term.dae is not None:
        return term.dae
    return SecondOrderSystem(term.second_order).term(term)


def system_method(system, name: str):
    """The bound method ``name`` of a System-like object, or None if it has none.

    The one place where the optional parts of a system are looked up, when its term is built:
    a `flexmbs.System` has them all; a hand-made system with the core methods (``n_q``,
    ``mass_matrix``, ``forces``, ``residual``, ``jacobian``, ``gamma``, as the test systems of
    tests/test_constrained_dynamics.py) runs without the others, whose fields stay None."""
    return getattr(system, name, None)


def system_checks(system, physical) -> dict:
    """``check_initial`` and ``range_check`` of a term whose state ``physical(t, x) -> (q, q')``
    belongs to the `flexmbs.System` ``system``: the start checked by ``System.initial_state``
    (Euler-parameter norms, then the constraints), and the range warning of its flexible bodies
    (`flexmbs.validity.system_range_warning`, on q = the first n_q components of every state).
    Either is None for a system without ``initial_state`` or without ``bodies``."""
    initial_state = system_method(system, "initial_state")

    def check_initial(t0, x0):
        q, v = physical(t0, x0)
        initial_state(t0, np.ravel(q), np.ravel(v))

    def range_check(t, x, stacklevel):
        from ..validity import system_range_warning
        return system_range_warning(system, t, x[:, :system.n_q], stacklevel=stacklevel + 1)

    return {"check_initial": None if initial_state is None else check_initial,
            "range_check": None if system_method(system, "bodies") is None else range_check}


class SecondOrderSystem:
    """``M q'' = f(t, q, v)`` of a term's second-order form as a system without constraints, for
    index3-alpha (the Arnold-Bruls form of Chung-Hulbert on an unconstrained model)."""

    def __init__(self, so: SecondOrderForm):
        M = so.M
        self._M = dense_array(M)
        self._so = so
        self.n_q = self._M.shape[0]

    def mass_matrix(self, q):
        return self._M

    def residual(self, t, q):
        return np.zeros(0)

    def jacobian(self, t, q):
        return np.zeros((0, self.n_q))

    def gamma(self, t, q, v):
        return np.zeros(0)

    def time_derivative(self, t, q):
        return np.zeros(0)

    def tangent(self, t, q, v):
        """(-dQ/dq, -dQ/dv) = (K, C), analytic, dense."""
        return dense_array(self._so.K(t, q, v)), dense_array(self._so.C(t, q, v))

    def term(self, of: ODETerm) -> DAETerm:
        """The DAETerm of this system; ``of``, the ODETerm whose second-order form it is, gives the
        name and the start and range checks."""
        return DAETerm(name=of.name, n_q=self.n_q, mass_matrix=self.mass_matrix, forces=self._so.f,
                       residual=self.residual, jacobian=self.jacobian, gamma=self.gamma, tangent=self.tangent,
                       correct_state=of.correct_state, check_initial=of.check_initial, range_check=of.range_check,
                       mass_matrix_constant=True, time_derivative=self.time_derivative)


