"""What every formulation gives the integrators.

A formulation turns a `Model` (an elastic body on a prescribed moving frame) into a
first-order system in its own state ``x = (delta, y)`` of length ``2 n``:

.. code:: text

    M_full(t) x' = F(t, x)

``y`` is the velocity ``delta'`` (Lagrange, Gibbs-Appell; M_full = diag(I, m), constant,
``mass_matrix_constant = True``) or the momentum ``p`` conjugate to ``delta`` (Hamilton,
whose descriptor form has M_full(t) = [[m, 0], [G(omega(t)) + C, I]]).  Equal
``jacobian_key(t)`` values mean equal M_full(t) and equal Jacobians.  The equations of the moving-frame FE model are
linear in the state, ``F(t, x) = Jac(t) x + b(t)``: ``jacobian(t)`` is exact and an
implicit step needs one linear solve.

Integrators see only the formulation's `term()`, an `flexmbs.formulations.terms.ODETerm` of
these callables (``rhs``, ``forcing_full``, ``mass_matrix_full``, ``jacobian``,
``jacobian_key``, the second-order form ``second_order`` for generalized-alpha, None where the
state is not (delta, delta')) and of the fast paths the formulation declares (the sparse n x n
step of a large model, method "exact"'s constant-coefficient form ``linear_system``).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, Hashable

import numpy as np
from ..assembly.assembler import dense_array, is_sparse
from ..frozen import Fields
from ..lazy import LazyModule

sparse = LazyModule("scipy.sparse")

__all__ = ["Formulation", "VelocityFormulation", "SecondOrderForm", "SparseSolver", "forward_difference_jacobian"]


class SparseSolver:
    """Factorization of a constant symmetric positive definite matrix, reused for every solve.

    Below ``dense_below`` unknowns the inverse is formed once from a Cholesky factorization
    (a consistent mass matrix is well conditioned, and a small matvec beats a triangular
    solve's call overhead); above, a sparse SPD factorization (`flexmbs.sparse_solve`) is
    kept.  Either is computed at the first ``solve``: implicit methods on the sparse n x n
    step matrix never need M^-1, which for a 1e5-DOF solid costs seconds and a factor's fill.
    """

    def __init__(self, A, dense_below: int = 400):
        self.n = A.shape[0]
        self.dense = self.n < dense_below
        self._A = A
        self._inv = self._factor = None

    def solve(self, b: np.ndarray) -> np.ndarray:
        if self.dense:
            if self._inv is None:
                self._inv = spd_inverse(dense_array(self._A))
            return self._inv @ b
        if self._factor is None:
            from ..sparse_solve import spd_factor
            self._factor = spd_factor(self._A)
        return self._factor.solve(b)


def spd_inverse(A: np.ndarray) -> np.ndarray:
    """A^-1 of a dense symmetric positive definite A from its Cholesky factor A = L L^T:
    A^-1 = L^-T L^-1 (``numpy.linalg.cholesky``; a matrix that is not positive definite raises
    numpy's LinAlgError, as a mass matrix with a massless DOF does)."""
    L_inv = np.linalg.solve(np.linalg.cholesky(A), np.eye(len(A)))
    return L_inv.T @ L_inv


class SecondOrderForm(Fields):
    """``M q'' = f(t, q, v)`` with constant ``M``, ``K(t) = -df/dq`` and ``C(t) = -df/dv``.

    ``affine``: for small (dense) linear models, the same equations as constant matrices times
    time coefficients (`flexmbs.formulations.affine.AffineSecondOrder`), else None.  A plain class
    (`flexmbs.frozen.Fields`: a mutable dataclass's repr and ==, unhashable, ``replace``).
    """

    def __init__(self, M: sparse.csr_array, f: callable, K: callable, C: callable, key: callable,
                 affine: object = None):
        self._set_fields(locals())


class Formulation(ABC):
    """Base of the formulations; subclasses implement their own principle.

    Parameters
    ----------
    model : flexmbs.Model
        The body, its frame motion, loads, damping and boundary conditions.
    """

    name: ClassVar[str]
    second_state: ClassVar[str]          # "delta_dot" or "p"
    mass_matrix_constant: ClassVar[bool] = True
    linear: ClassVar[bool] = True        # F affine in x, jacobian exact: one Newton solve is exact
    compile_auto: ClassVar[bool] = True  # evaluation="auto" compiles steady dense models

    def __init__(self, model, evaluation: str = "auto"):
        if evaluation not in ("auto", "terms", "compiled"):
            raise ValueError(f"`evaluation` must be 'auto', 'terms' or 'compiled', got {evaluation!r}")
        self.model = model
        self.n = model.n_dofs
        self.n_state = 2 * self.n
        self._M_solver = SparseSolver(model.M)
        self.n_rhs = 0
        self.evaluation = evaluation
        self._compiled = None
        if evaluation == "compiled" or (evaluation == "auto" and self.compile_auto and model.steady
                                        and model.dense):
            if not model.steady:
                raise ValueError("`evaluation='compiled'` needs a steady frame (constant spin, fixed "
                                 "origin, no gravity in a rotating frame); use 'terms'")
            self._compiled = self._compile()

    # -- the first-order system ------------------------------------------------------------------
    @abstractmethod
    def state0(self, delta0, delta_dot0, t0: float = 0.0) -> np.ndarray:
        """State x(t0) from the physical displacements and velocities."""

    @abstractmethod
    def physical(self, t: float, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(delta, delta') from the state; x may be (2n,) or (n_t, 2n) with t (n_t,)."""

    @abstractmethod
    def forcing_full(self, t: float, x: np.ndarray) -> np.ndarray:
        """F(t, x) of M_full x' = F(t, x)."""

    @abstractmethod
    def jacobian(self, t: float, x: np.ndarray | None = None):
        """dF/dx (2n, 2n), exact (the equations are linear in x); dense ndarray for small
        models, CSR otherwise (integrators accept both)."""

    def mass_matrix_full(self, t: float | None = None):
        """M_full(t): Lagrange, Gibbs-Appell: diag(I, M), constant; Hamilton: see hamilton.py.  Dense
        for a dense model (its M an ndarray: ``model.dense``), else CSR."""
        if not is_sparse(self.model.M):
            n, M = self.n, dense_array(self.model.M)
            out = np.zeros((2 * n, 2 * n))
            out[:n, :n], out[n:, n:] = (np.eye(n), M) if self.second_state == "delta_dot" else (M, np.eye(n))
            return out
        I = sparse.identity(self.n, format="csr")
        blocks = (I, self.model.M) if self.second_state == "delta_dot" else (self.model.M, I)
        return sparse.csr_array(sparse.block_diag(blocks, format="csr"))

    def _compile(self):
        """Constant-coefficient form x' = A x + c + B f(t) of a steady model's equations.

        Built from this formulation's own exact Jacobian and forcing: A = M_full^-1 dF/dx,
        c = M_full^-1 F(0, 0) without the loads, B = M_full^-1 [0; Q] (every formulation takes
        the nodal loads {q} = Q f(t) in its second block).  Dense: small models only.
        """
        q0 = self.model.q_ext(0.0)
        F0 = self.forcing_full(0.0, np.zeros(self.n_state))
        F0[self.n:] -= q0
        E = np.zeros((self.n_state, self.model.Q.shape[1]))
        E[self.n:] = self.model.Q
        n_s = self.n_state                              # one LU of M_full for the three right-hand sides
        X = np.linalg.solve(dense_array(self.mass_matrix_full(0.0)),
                            np.column_stack([dense_array(self.jacobian(0.0)), F0, E]))
        return X[:, :n_s], X[:, n_s], X[:, n_s + 1:]

    def linear_system(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(A, c, B) of x' = A x + c + B f(t), f = ``model.load_factors(t)``: the steady model's
        equations in constant-coefficient form (dense), compiled once.

        Raises
        ------
        ValueError
            If the model is not steady (its matrices or frame loads change in time).
        """
        if self._compiled is not None:
            return self._compiled
        if getattr(self, "_linear_system", None) is None:
            if not self.model.steady:
                raise ValueError(
                    "the model's equations do not have constant coefficients: its frame is not steady "
                    "(constant spin or fixed frame, origin at rest, no gravity in a rotating frame, no "
                    "stiffening by time-varying loads), so there is no x' = A x + c + B f(t) form")
            self._linear_system = self._compile()     # rhs keeps the evaluation asked for
        return self._linear_system

    @property
    def evaluates_compiled(self) -> bool:
        """True when `rhs` evaluates the compiled constant-coefficient form x' = A x + c + B f(t)
        (``evaluation="compiled"``, or "auto" on a steady dense model), False when it evaluates the terms."""
        return self._compiled is not None

    def solve_mass(self, F: np.ndarray) -> np.ndarray:
        """M^{-1} F with the Model's mass matrix M (n_dofs, n_dofs), factorized once; F (n_dofs,)."""
        return self._M_solver.solve(F)

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """x' = M_full^{-1} F(t, x) with the factorization of M computed once."""
        self.n_rhs += 1
        if self._compiled is not None:
            A, c, B = self._compiled
            out = A @ x + c
            if B.shape[1]:
                out += B @ self.model.load_factors(t)
            return out
        F = self.forcing_full(t, x)
        n = self.n
        if self.second_state == "delta_dot":
            return np.concatenate([F[:n], self._M_solver.solve(F[n:])])
        return np.concatenate([self._M_solver.solve(F[:n]), F[n:]])

    def jacobian_key(self, t: float) -> Hashable:
        """Equal keys mean equal Jacobians (lets implicit methods reuse factorizations)."""
        return self.model.matrix_key(t)

    @property
    def second_order(self) -> SecondOrderForm | None:
        """The second-order form for methods like generalized-alpha (None for momentum states)."""
        return None

    def term(self):
        """What the integrators see (`flexmbs.formulations.terms.ODETerm`): this formulation's
        callables, its second-order form, the sparse n x n step of a sparse model
        (`sparse_step`), and the constant-coefficient form of method "exact" with the loads'
        time functions."""
        from .terms import ODETerm
        return ODETerm(name=self.name, n_state=self.n_state, rhs=self.rhs, forcing=self.forcing_full,
                       mass_matrix_full=self.mass_matrix_full, mass_matrix_constant=self.mass_matrix_constant,
                       mass_matrix_takes_t=True, jacobian=self.jacobian, jacobian_key=self.jacobian_key,
                       linear=self.linear, second_order=self._second_order_form(), affine=self._affine_form(),
                       sparse_step=None if self.model.dense else self.sparse_step(),
                       linear_system=self.linear_system, load_functions=self.model.load_functions)

    def _second_order_form(self) -> SecondOrderForm | None:
        """The second-order form of the term (without the affine part, which `_affine_form` gives)."""
        return None

    def _affine_form(self):
        """``affine()`` of the term: a callable giving the affine second-order form, or None."""
        return None

    def sparse_step(self):
        """The n x n step of a sparse model (`flexmbs.formulations.terms.SparseStep`), or None."""
        return None


class VelocityFormulation(Formulation):
    """The first-order form x = (delta, delta') of equations [m] delta'' = f(t, delta, delta').

    Subclasses say how f is computed (`generalized_force`): Lagrange from the derivatives of
    the kinetic energy, Gibbs-Appell from the accelerations of the mass points.  The Jacobian
    blocks are the exact derivatives of f, the same matrices for both:
    df/d delta = -([k] + K_geo + [k(eps)] + [k(omega)]) (``Model.frame_stiffness``) and
    df/d delta' = -(C + [c]) (``Model.frame_damping``).
    """

    second_state: ClassVar[str] = "delta_dot"

    @abstractmethod
    def generalized_force(self, t: float, delta: np.ndarray, delta_dot: np.ndarray) -> np.ndarray:
        """f(t, delta, delta') with [m] delta'' = f."""

    def state0(self, delta0, delta_dot0, t0=0.0):
        return np.concatenate([np.asarray(delta0, float), np.asarray(delta_dot0, float)])

    def physical(self, t, x):
        x = np.asarray(x)
        return x[..., :self.n], x[..., self.n:]

    def forcing_full(self, t, x):
        delta, delta_dot = x[:self.n], x[self.n:]
        return np.concatenate([delta_dot, self.generalized_force(t, delta, delta_dot)])

    def _K_t(self, t):
        return self.model.frame_stiffness(t)

    def _C_t(self, t):
        return self.model.frame_damping(t)

    def jacobian(self, t, x=None):
        """[[0, I], [-K_eff(t), -C_eff(t)]]: dense for small models, CSR otherwise."""
        K, C = self._K_t(t), self._C_t(t)
        if not is_sparse(K):
            n = self.n
            return np.block([[np.zeros((n, n)), np.eye(n)], [-K, -C]])
        I = sparse.identity(self.n, format="csr")
        Z = sparse.csr_array((self.n, self.n))
        return sparse.csr_array(sparse.block_array([[Z, I], [-K, -C]], format="csr"))

    @property
    def second_order(self):
        return self._second_order_form()

    def _second_order_form(self):
        return SecondOrderForm(M=self.model.M_op, f=self.generalized_force,
                               K=lambda t, q=None, v=None: self._K_t(t),
                               C=lambda t, q=None, v=None: self._C_t(t),
                               key=self.jacobian_key)

    def sparse_step(self):
        """[m] delta'' = f(t, delta, delta') stepped as S(t) dv = f (`flexmbs.integrators.sparse_step`)."""
        from .terms import SparseStep
        return SparseStep(model=self.model, force=self.generalized_force, compiled=self._compiled is not None)


def forward_difference_jacobian(rhs, t: float, x) -> np.ndarray:
    """d(x')/dx of ``x' = rhs(t, x)`` by forward differences, step sqrt(eps) max(1, |x_i|):
    for the formulations whose Jacobian is not derived (the constrained index-1 and
    quasi-velocity forms); implicit methods need it only for their iteration matrix."""
    x = np.asarray(x, dtype=float)
    f0 = rhs(t, x)
    J = np.empty((len(f0), len(x)))
    for i in range(len(x)):
        dx = np.sqrt(np.finfo(float).eps) * max(1.0, abs(x[i]))
        xp = x.copy()
        xp[i] += dx
        J[:, i] = (rhs(t, xp) - f0) / dx
    return J
