"""Generalized-alpha on the index-3 equations of constrained mechanical systems (Arnold-Bruls form).

The equations are the differential-algebraic system of index 3 of `flexmbs.System`

.. code:: text

    M(q) q'' + C_q(q, t)^T lam = Q(t, q, q')          C(q, t) = 0

integrated with the constrained generalized-alpha method of Arnold and Bruls [1]_ (the
equilibrium and the position constraints are imposed at t_{n+1}; ``a`` is the algorithmic
acceleration, ``qdd`` the true one):

.. code:: text

    q_{n+1} = q_n + h v_n + h^2 (1/2 - beta) a_n + h^2 beta a_{n+1}
    v_{n+1} = v_n + h (1 - gamma) a_n + h gamma a_{n+1}
    (1 - alpha_m) a_{n+1} + alpha_m a_n = (1 - alpha_f) qdd_{n+1} + alpha_f qdd_n
    M(q_{n+1}) qdd_{n+1} + C_q^T lam_{n+1} = Q(t_{n+1}, q_{n+1}, v_{n+1}),   C(q_{n+1}, t_{n+1}) = 0

with the parameters of Chung and Hulbert [2]_ from the spectral radius at infinite frequency
``rho_inf`` in [0, 1):

.. code:: text

    alpha_m = (2 rho_inf - 1) / (rho_inf + 1)    alpha_f = rho_inf / (rho_inf + 1)
    gamma = 1/2 - alpha_m + alpha_f              beta = (gamma + 1/2)^2 / 4

Why generalized-alpha and not HHT: for the same rho_inf both damp the high frequencies and are
second order in q and v [1]_, but generalized-alpha keeps second order with the whole range
rho_inf in [0, 1) (HHT only down to rho_inf = 1/2) and has less low-frequency damping at equal
high-frequency damping [2]_.  rho_inf = 1 (no numerical damping) is refused: the O(h) start-up
error of the multipliers and accelerations is then not damped (measured on the pendulum of
cases/pendulum_a01.py, h = 1e-3: the second differences of lam between steps are 20 times
larger at rho_inf = 0.9999 than at 0.99).

Coefficient sets and step-size control.  The loop below is parametrised by (alpha_m, alpha_f, gamma,
beta) only: methods "hht" (`Index3HHT`) and "newmark" (`Index3Newmark`) run it, on both paths,
with the coefficients of `SCHEMES`; "index3-alpha-adaptive" (`Index3AdaptiveAlpha`, both paths too)
adds a local error estimate, rejection and growth of the steps, with ``rtol``/``atol`` on q and v
(docs/integrators.md, "Step-size control").

Newton's method.  The unknowns are q_{n+1} and the scaled multipliers mu = lam / beta'; q'',
v and a follow from q_{n+1} (dq'' / dq = beta', dv / dq = gamma'):

.. code:: text

    beta' = (1 - alpha_m) / (h^2 beta (1 - alpha_f))       gamma' = gamma / (h beta)

    r(q, mu) = [ (M q'' - Q) / beta' + C_q^T mu ]          S = [ M + (gamma'/beta') C_t + K_t / beta'   C_q^T ]
               [ C(q, t)                        ]              [ C_q                                      -eps I ]

    K_t = d(M q'' - Q + C_q^T lam)/dq at fixed q'', v, lam   C_t = -dQ/dq'

Multiplying the equilibrium rows by 1/beta' ~ h^2 and solving for mu instead of lam is the
scaling of Bottasso, Bauchau and Cardona [3]_: without it the condition number of S grows
like h^-4; with it S tends to the well-conditioned [[M, C_q^T], [C_q, 0]] as h -> 0.  K_t and C_t
come from forward finite differences of the system's functions, or, for a `flexmbs.System` with a
body that gives its exact derivatives (`Body.tangent`: the corotational beams; `System.body_tangents`),
from `System.tangent_matrices` (those bodies' blocks, differences body by body for the others) (option ``tangent``: "finite-difference"; "none"
keeps only M and C_q, a cheaper, linearly converging iteration).
S is factorized by LU and reused across the Newton iterations (modified Newton).  When it is
rebuilt is the option ``refactor``: "step", at the first iteration of every step from M and
C_q at the predictor (evaluated there anyway for the residual) and the kept K_t, C_t;
"contraction", kept into the next step while the last step's corrections contracted at
most by ``keep_rate`` (1e-3, the rate θ of the converged step, measured on corrections above
the Newton tolerance: `converged_rate`; a last correction that meets the tolerance by itself
is mostly round-off, and its ratio to the one before differed between the numpy path and the
kernel); "rate", kept across steps
until the corrections contract slowly; "auto" (default), "contraction" when the compiled
kernel runs the steps and "step" on the numpy path (there an evaluation costs several
rebuilds of S, in the kernel about a quarter of one: docs/design.md).  In every
policy S is rebuilt when the contraction rate of the corrections exceeds ``refactor_rate``
(0.3) or the iteration has not converged after ``newton_max_iter``; K_t and C_t are kept
across steps and recomputed only when the slowly contracting S had been built in the same
step (an older S is first rebuilt with the kept tangent).  (Measured on the double four-bar,
h = 1e-3: a matrix kept across steps contracts by only ~0.1 per iteration, 7.6 iterations a
step; rebuilt every step from fresh C_q, 2-3 iterations, for one small dense LU.  On the
coupled slider-crank at h = 2.91e-5 s with "contraction": 38 new tangents in two revolutions
when every slow contraction brought one, 1 when only a matrix of the same step does.)

The compiled kernel (`flexmbs.compiled`, option ``kernel``: "auto", "compiled", "numpy")
runs the same iteration in C for systems of `RigidBodyEP`, `FlexibleBody` and joint-batch
joints, many steps per call (`advance`, used by `flexmbs.simulate`); tests/test_compiled.py
checks that both give the same steps.
The quadratic-velocity part of C_t (Coriolis and gyroscopic terms, which change with the
velocities) is refreshed at every rebuild when the system gives its exact dQ_v/dv
(``quadratic_velocity_jacobian``): C_t = C_t,kept + dQ_v/dv(kept) - dQ_v/dv(now).  (Measured on
the coupled slider-crank: the kept C_t limits the contraction to about 1e-3 per iteration, 4.3
evaluations a step; refreshed, about 1e-5 and 2.1 evaluations.)  In the same way the elastic
part of K_t (elastic and stiffening forces, which enter Q with a minus sign) is refreshed when
the system gives the bodies' analytic stiffness K_el = -dQ_el/dq (``elastic_stiffness``, e.g.
`flexmbs.bodies.FlexibleBody` with ``stiffening="axial-strain"``, whose stiffness changes with
the deformation): K_t = K_t,kept - K_el(kept) + K_el(now).  (Measured on the coupled
slider-crank with axial-strain stiffening, 8 elements, h = 2.91e-5 s: 4.33 evaluations a step
and 7 finite-difference tangents over two revolutions with the kept K_t; refreshed, 2.05 and
one, and the CPU time per step from 1.58 to 1.01 ms.)  What is not refreshed (the q-dependence
of M q'', of C_q^T lam and of the applied forces) stays as kept until the next recomputation.
The iteration stops when the estimated error e of the new iterate's accelerations is small,
beta' e <= ``newton_tol`` (1e-8) |q''|_inf, with e = |dq|_inf after the first correction and
e = theta / (1 - theta) |dq|_inf once the corrections of a matrix built in this step contract
at the rate theta = |dq_k| / |dq_(k-1)| < 1 (the rest of the geometric series), or when dq is
at the round-off of q (|dq|_inf <= 16 eps max(|q|_inf, 1)).  With a matrix kept from earlier
steps one ratio does not do: a slow mode of a stale matrix can be nearly absent from the first
correction, and theta then underestimates it (measured on IFToMM A02 at h = 5e-4 over 10 s:
the tip 1.85e-5 m off with the one-ratio estimate, 1.16e-5 m, as with "step", without it).
Option ``kept_stop``: "rate" (default) estimates e = theta / (1 - theta) |dq_k|_inf from the third
correction on when the three decrease, with theta the larger of the last two ratios and of the
largest rate the matrix showed in the earlier steps it converged (`_iterate_error`); "correction"
takes e = |dq|_inf with a kept matrix (the rule before; "rate" ends A02 at the same error and saves a
sixth of the slider-crank's evaluations, docs/design.md).
Near a singular configuration the round-off of the solve grows with the condition number of S
and the corrections stop contracting: corrections below 1e-12 max(|q|_inf, 1) that no longer
halve are accepted as converged, and so, once the corrections no longer halve, is an iterate
whose residual is at round-off (|r_q| <=
64 eps times the largest of |M q''|/beta', |Q|/beta', |C_q^T mu| and |M| max(|q|_inf, 1), the
last being the round-off of q carried into M q''/beta'; |C| <= 64 eps max(|q|_inf, 1)) whatever the size of the
next correction (on the 40-four-bar the corrections there stay at 1e-10 with the residual at
1e-15).  A stop on |dq| relative to |q| alone would not do: dq is
h^2 beta times the error of q'', so the accelerations and, through them, the velocities would
carry an error growing like 1/h^2.
|C| is then at the round-off of C_q dq.

Redundant constraints (rank-deficient C_q, e.g. the Bricard mechanism) or singular
configurations make the saddle-point matrix singular.  The option ``regularization`` (eps >= 0,
relative to the size of C_q M^-1 C_q^T, estimated as mean |C_q row|^2 / mean |diag M|) puts
-eps I in the multiplier block: S is then
regular, the converged solution is unchanged (the residual is the exact one), and the
multipliers' component in the null space of C_q^T, which the equations leave free, is not
moved.  None (default): 1e-10 if C_q at t0 is rank deficient (System.mobility reports
redundant constraints), else 0.

Start: M qdd_0 + C_q^T lam_0 = Q, C_q qdd_0 = gamma (least-squares/minimum-norm when
rank deficient), a_0 = qdd_0.  Arnold and Bruls [1]_ show second order for q and v; with
a_0 = qdd_0 the multipliers and qdd have an O(h) error in the first steps that rho_inf < 1
damps out.  The velocity constraint C_q v + C_t = 0 is not imposed (index 3): it holds to O(h^2).

The method steps a `flexmbs.formulations.terms.DAETerm` (`ConstrainedProblem.term`: the
System's callables of the same names); an ODETerm is taken by the index-3 form of its System
(``dae``: Index1, Maggi) or, without one, by its second-order form (``second_order``:
M q'' = f(t, q, v), constant M, analytic K and C; `SecondOrderSystem`), as the Arnold-Bruls form
of Chung-Hulbert.

The state is x = (q, v); the multipliers of the last step are ``integrator.lam`` and
``integrator.qdd`` the accelerations.  Dense output: cubic Hermite with x' = (v, qdd); the
multipliers between the step points are linear in t (`dense_multipliers`), and `simulate` keeps
them at every output (``Solution.lam``; the compiled kernel writes them with the states), so
that reactions and drive torques need no second solve after the run.

Not built on flexmbs.newton: that loop takes a residual and a solve and iterates to a
residual norm; here the factorization is kept across steps, rebuilt on slow contraction
(which needs the correction norms of consecutive iterations) and the stop is on the
correction, so the loop is written out below.

References
----------
.. [1] M. Arnold, O. Bruls, Convergence of the generalized-alpha scheme for constrained
       mechanical systems, Multibody Syst. Dyn. 18 (2007) 185-202, doi:10.1007/s11044-007-9084-0.
.. [2] J. Chung, G. M. Hulbert, A time integration algorithm for structural dynamics with
       improved numerical dissipation: the generalized-alpha method, J. Appl. Mech. 60 (1993)
       371-375, doi:10.1115/1.2900803.
.. [3] C. L. Bottasso, O. A. Bauchau, A. Cardona, Time-step-size-independent conditioning and
       sensitivity to perturbations in the numerical solution of index three differential
       algebraic equations, SIAM J. Sci. Comput. 29 (2007) 397-414, doi:10.1137/050638503.
.. [4] H. M. Hilber, T. J. R. Hughes, R. L. Taylor, Improved numerical dissipation for time
       integration algorithms in structural dynamics, Earthq. Eng. Struct. Dyn. 5 (1977) 283-292,
       doi:10.1002/eqe.4290050306.
.. [5] N. M. Newmark, A method of computation for structural dynamics, J. Eng. Mech. Div. ASCE 85
       (1959) 67-94, doi:10.1061/JMCEA3.0000098.
"""
from __future__ import annotations

import logging
import time

import numpy as np

from ..formulations.constrained import ConstrainedProblem
from ..formulations.terms import DAETerm, ODETerm, SecondOrderSystem
from .. import kernel_schema as schema
from ..user_functions import UserFunctionError
from .base import EPS, Integrator, Factorization

log = logging.getLogger(__name__)

__all__ = ["Index3GeneralizedAlpha", "Index3HHT", "Index3Newmark", "ConstrainedProblem", "REFACTOR", "SCHEMES",
           "Index3AdaptiveAlpha", "StepControl", "local_error_coefficients"]

REFACTOR = ("auto", "rate", "step", "contraction")     # `refactor`; the kernel takes index - 1
KEPT_STOP = ("correction", "rate")                     # `kept_stop`; the kernel takes the index
CHUNK_SECONDS = 0.2         # about how long one call of the compiled kernel runs (progress, interrupts)
OUTPUTS_PER_CALL = 4096     # output times handed to a call of the adaptive kernel (at least; `_handed_over`)

STALL = 1e-12       # corrections that stop contracting below STALL max(|q|, 1): round-off, accepted
ROUND_OFF = 64 * EPS    # a residual this small relative to the size of its terms is converged


def generalized_alpha_coefficients(rho_inf: float) -> tuple[float, float, float, float]:
    """(alpha_m, alpha_f, gamma, beta) of generalized-alpha, Chung and Hulbert [2]_:
    alpha_m = (2 rho_inf - 1) / (rho_inf + 1), alpha_f = rho_inf / (rho_inf + 1),
    gamma = 1/2 - alpha_m + alpha_f, beta = (gamma + 1/2)^2 / 4; order 2 for rho_inf in [0, 1]."""
    alpha_m = (2 * rho_inf - 1) / (rho_inf + 1)
    alpha_f = rho_inf / (rho_inf + 1)
    gamma = 0.5 - alpha_m + alpha_f
    return alpha_m, alpha_f, gamma, 0.25 * (gamma + 0.5) ** 2


def hht_coefficients(rho_inf: float) -> tuple[float, float, float, float]:
    """(alpha_m, alpha_f, gamma, beta) of the HHT-alpha method, Hilber, Hughes and Taylor [4]_:
    alpha_m = 0, alpha_f = (1 - rho_inf) / (1 + rho_inf) (their alpha is -alpha_f, in
    [-1/3, 0]), gamma = 1/2 + alpha_f, beta = (1 + alpha_f)^2 / 4; order 2 for rho_inf in [1/2, 1].

    With alpha_m = 0 the Arnold-Bruls relation a_{n+1} = (1 - alpha_f) qdd_{n+1} + alpha_f qdd_n
    weights the inertia and force terms of M qdd = Q as HHT weights the forces: for constant M and
    linear Q the steps are those of HHT."""
    alpha_f = (1 - rho_inf) / (1 + rho_inf)
    return 0.0, alpha_f, 0.5 + alpha_f, 0.25 * (1 + alpha_f) ** 2


def newmark_coefficients(rho_inf: float) -> tuple[float, float, float, float]:
    """(alpha_m, alpha_f, gamma, beta) of Newmark's method [5]_ with numerical damping:
    alpha_m = alpha_f = 0, gamma = (3 - rho_inf) / (2 (1 + rho_inf)) (> 1/2 for rho_inf < 1),
    beta = (gamma + 1/2)^2 / 4.

    With this beta the amplification matrix at omega h -> infinity has the double eigenvalue
    (gamma - 3/2) / (gamma + 1/2) = -rho_inf (docs/integrators.md, "Newmark and HHT"); gamma > 1/2
    makes the method first order (the velocity update's local error is (gamma - 1/2) h^2 q''').
    rho_inf = 9/11 gives gamma = 0.6, beta = 0.3025."""
    gamma = (3 - rho_inf) / (2 * (1 + rho_inf))
    return 0.0, 0.0, gamma, 0.25 * (gamma + 0.5) ** 2


SCHEMES = {"generalized-alpha": generalized_alpha_coefficients, "hht": hht_coefficients,
           "newmark": newmark_coefficients}     # the coefficient sets of the one correction loop


def converged_rate(d_norm: float, d_prev: float | None, d_prev2: float | None, negligible: bool) -> float:
    """The contraction rate theta of a converged step, which `refactor` "contraction" compares with
    ``keep_rate``: |dq_k| / |dq_(k-1)| of its last two corrections, or, when the last one is
    negligible (it meets the tolerance by itself, beta' |dq_k| <= newton_tol |q''|, or is at the
    round-off of q), that of the two before it (0 without two before it: the first correction
    above the tolerance took the iterate there).

    A negligible correction is mostly round-off: its digits depend on the order of the sums and on
    the LU's code (LAPACK on the numpy path, the kernel's own in C), and so did the decision.  (Measured on the coupled slider-crank, 8
    elements, h = 2.91e-5 s: beta' = 4.7e9, the tolerance on |dq| about 1e-14 against 3.6e-15 for
    the round-off of q; the last correction of a step with a kept matrix 1e-16 to 6e-14, so that
    its ratio to the one before, 5e-4 to 5e-3 around keep_rate = 1e-3, differed between the
    numpy path and the kernel from step 66 on: 131 against 124 LUs in a quarter revolution.)
    """
    if d_prev is None:
        return 0.0
    if not negligible:
        return d_norm / max(d_prev, 1e-300)
    return 0.0 if d_prev2 is None else d_prev / max(d_prev2, 1e-300)


class Index3GeneralizedAlpha(Integrator):
    """Arnold-Bruls generalized-alpha for M q'' + C_q^T lam = Q, C = 0; fixed step, order 2.

    Options: ``rho_inf`` (0.8), ``newton_tol`` (1e-8), ``newton_max_iter`` (12),
    ``refactor_rate`` (0.3), ``refactor`` ("auto", "step", "rate" or "contraction"), ``keep_rate`` (1e-3),
    ``kept_stop`` ("rate" or "correction": the Newton stop with a matrix kept from earlier steps, module
    docstring), ``tangent`` ("finite-difference" or "none"),
    ``regularization`` (None: automatic, see the module docstring), ``kernel`` ("auto", "compiled"
    or "numpy": where the steps of a `flexmbs.System` run; "auto" takes the compiled kernel when the
    system qualifies, see `flexmbs.compiled`; ``integrator.kernel`` says which ran, and
    ``integrator.kernel_reason`` why not the compiled one).
    """

    name = "index3-alpha"
    order = 2
    scheme = "generalized-alpha"        # its coefficients: SCHEMES[scheme](rho_inf)
    rho_inf_min = 0.0                   # the smallest rho_inf of the scheme's order
    rho_inf_note = ""
    compiled_reason: str | None = None  # why the kernel cannot step this method (None: it can)
    adaptive = False
    needs = "second_order"
    accepts = (DAETerm, ODETerm)
    requires = ("index3",)
    has_multipliers = True
    method_options = {"rho_inf": 0.8, "newton_tol": 1e-8, "newton_max_iter": 12, "refactor_rate": 0.3,
                      "tangent": "finite-difference", "regularization": None, "refactor": "auto",
                      "kernel": "auto", "keep_rate": 1e-3, "kept_stop": "rate"}

    @classmethod
    def _refusal(cls, term) -> str | None:
        """Velocity-level (nonholonomic) constraints have no position equation for the index-3 step to
        impose, so it would let them drift (a gear pair off its ratio by 1.7 % in 0.5 s, whatever h):
        refused, naming the routes that impose them."""
        dae = term if isinstance(term, DAETerm) else term.dae
        if dae is not None and not dae.holonomic:
            return (f"method {cls.name!r} imposes constraints at the position level (index 3), and "
                    f"{term.name!r} has velocity constraints without a position equation (KnifeEdge, "
                    "VelocityConstraint, GearPair, RackPinion); run it with an index-1 formulation "
                    "('lagrange', 'udwadia-kalaba', 'gibbs-appell': e.g. method 'DOP853') or a quasi-velocity "
                    "one ('maggi', 'kane', 'volterra')")
        return None

    def _prepared(self, term) -> DAETerm:
        """The DAETerm stepped: ``term`` itself, or of an ODETerm the index-3 form of its System
        (``dae``), else its second-order form without constraints (`SecondOrderSystem`)."""
        if isinstance(term, DAETerm):
            return term
        if term.dae is not None:
            return term.dae
        return SecondOrderSystem(term.second_order).term(term)

    # -- setup ----------------------------------------------------------------------------------
    def _setup(self) -> None:
        rho, low = self.options["rho_inf"], self.rho_inf_min
        try:
            rho = float(rho)
        except (TypeError, ValueError):
            rho = np.nan
        if not low <= rho < 1.0:
            raise ValueError(f"`rho_inf` must lie in [{low:g}, 1) for method {self.name!r} (1 leaves the "
                             f"multipliers undamped{self.rho_inf_note}), got {self.options['rho_inf']!r}.")
        self.rho_inf = rho
        self.alpha_m, self.alpha_f, self.gamma, self.beta = SCHEMES[self.scheme](rho)
        self._tol = float(self.options["newton_tol"])
        self._max_iter = int(self.options["newton_max_iter"])
        self._rate = float(self.options["refactor_rate"])
        if not (self._tol > 0 and self._max_iter >= 1 and 0 < self._rate < 1):
            raise ValueError("`newton_tol` must be > 0, `newton_max_iter` >= 1 and `refactor_rate` in "
                             f"(0, 1), got {self._tol!r}, {self._max_iter!r}, {self._rate!r}.")
        self._tangent = self.options["tangent"]
        if self._tangent not in ("finite-difference", "none"):
            raise ValueError(f"`tangent` must be 'finite-difference' or 'none', got {self._tangent!r}.")

        sys = self._sys = self.term
        self.n = int(sys.n_q)
        q, v = self.x[:self.n], self.x[self.n:]
        if sys.check_model is not None:         # a flexmbs.System, once per run (both paths): refuse a body or
            sys.check_model(self.t, q, v)       # joint changed since it was built, name a load of the wrong size
        Cq = np.atleast_2d(np.asarray(sys.jacobian(self.t, q), float)).reshape(-1, self.n)
        self.n_c = Cq.shape[0]
        reg = self.options["regularization"]
        if reg is None:
            deficient = self.n_c > 0 and np.linalg.matrix_rank(Cq) < self.n_c
            reg = 1e-10 if deficient else 0.0
        reg = float(reg)
        if not reg >= 0:
            raise ValueError(f"`regularization` must be >= 0 or None, got {self.options['regularization']!r}.")
        self.regularization = reg
        self.qdd, self.lam = self._consistent_accelerations(self.t, q, v)
        self._lam_old = None              # the multipliers at t_old, after a step (`dense_multipliers`)
        self._a = self.qdd.copy()
        self._xdot_new = np.concatenate([v, self.qdd])
        self._lu = None
        self._lu_h = None
        self._KC = None                   # kept K_t, C_t (finite differences)
        refactor = self.options["refactor"]
        if refactor not in REFACTOR:
            raise ValueError(f"`refactor` must be one of {', '.join(map(repr, REFACTOR))}, got {refactor!r}.")
        self._keep_rate = float(self.options["keep_rate"])
        if not 0 <= self._keep_rate < 1:
            raise ValueError(f"`keep_rate` must lie in [0, 1), got {self.options['keep_rate']!r}.")
        self._theta = 0.0                 # contraction rate of the last step's corrections
        self._kept_stop = self.options["kept_stop"]
        if self._kept_stop not in KEPT_STOP:
            raise ValueError(f"`kept_stop` must be one of {', '.join(map(repr, KEPT_STOP))}, got {self._kept_stop!r}.")
        self._theta_lu = 0.0              # the largest rate the current S showed in the steps it converged
        self.n_newton = 0                 # Newton iterations, all steps
        self._C_state = None              # (t, q) of `constraint_residual`
        terms = sys.constraint_terms
        self._constraint_terms = terms if terms is not None else (
            lambda t, q: (np.asarray(sys.residual(t, q), float), np.asarray(sys.jacobian(t, q), float)))
        self._setup_kernel()
        if refactor == "auto":          # module docstring: what an evaluation costs against an LU
            refactor = "contraction" if self.kernel == "compiled" else "step"
        self.refactor = refactor

    # -- the compiled kernel ----------------------------------------------------------------------
    def _setup_kernel(self) -> None:
        """``kernel`` option: pack the system for the compiled kernel (`flexmbs.compiled`) when it
        qualifies; `advance` is then the compiled path (None on the numpy path)."""
        from ..compiled import choose_kernel
        self.advance = None
        self._compiled, self.kernel_reason = choose_kernel(self.options["kernel"], self._sys.compiled,
                                                           self._compiled_refusal())
        self.kernel = "numpy" if self._compiled is None else "compiled"
        if self._compiled is None:
            return
        n, m = self.n, self.n_c
        N = n + m
        q, v = self.x[:n], self.x[n:]
        self._kstate = tuple(np.ascontiguousarray(a, dtype=float) for a in (
            q.copy(), v.copy(), self._a.copy(), self.qdd.copy(), self.lam.copy(), np.zeros((N, N)),
            np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n)),
            np.zeros(3 * n * n + m * n + 11 * n + 3 * m + 2 * N + 10 + N * N)))
        # has LU, has K_t and C_t, has elastic bodies; counters: evaluations, tangents, LUs, Newton iterations
        self._kflags = np.array([0, 0, int(self._compiled.has_elastic), 0, 0, 0, 0, 0], dtype=np.int64)
        self._kpiv = np.zeros(3 * max(N, 1), dtype=np.int32)     # pivots, row ends, column ranges
        self._chunk = 64                  # steps of the first call of the kernel; then sized by time
        self._kparams = None              # (near_rtol, params, ints) of the last kernel call
        self._sampling = None             # (ControlLoop, its flexmbs.control.KernelSampling) of a controlled run
        self.kernel, self.kernel_reason, self.advance = "compiled", None, self._advance

    def _compiled_refusal(self) -> str | None:
        """Why the kernel cannot step this method with these options (None: it can): ``compiled_reason``."""
        return self.compiled_reason

    def _advance(self, t_out, near_rtol: float, controls=None, every_step: bool = False):
        """Steps in the compiled kernel for about ``CHUNK_SECONDS`` (until t_end or a failure; the
        number of steps is sized from the last call's time, so that a progress report or an
        interrupt waits no longer than that); returns the outputs reached, (times, states
        (k, 2 n_q)), at the times ``t_out`` (sorted, all later than t; None: every step) with
        simulate's rule: the step point within ``near_rtol`` h, else the cubic Hermite of the step.
        Status, message, counters and the state are updated as by `step`.  Also returns their
        multipliers (k, n_c), as `dense_multipliers` gives them.  ``controls`` (a
        `flexmbs.control.ControlLoop`, started): its controllers are sampled within the kernel's call,
        after every step that ends at a sample time (`flexmbs.control.KernelSampling`).
        ``every_step``: the kernel also reports every step point it takes (for `simulate`'s
        ``step_integrand``), and a fourth array (k,) of bool says which rows are step points."""
        n = self.n
        times, hs = self._schedule(self._chunk)
        if not times.size or not times[0] > self.t:
            self.status, self.message = "failed", self._underflow_message()
            empty = (np.zeros(0), np.zeros((0, 2 * n)), np.zeros((0, self.n_c)))
            return empty + (np.zeros(0, dtype=bool),) if every_step else empty
        if t_out is None:
            t_out, is_step = times, np.ones(len(times), dtype=bool)
        else:
            t_out = t_out[:np.searchsorted(t_out, times[-1] + near_rtol * self.h, side="right")]
            is_step = np.zeros(len(t_out), dtype=bool)
            if every_step:            # the step points and the outputs, in time (a tie: the step first)
                order = np.argsort(np.concatenate([times, t_out]), kind="stable")
                t_out = np.concatenate([times, t_out])[order]
                is_step = np.concatenate([np.ones(len(times), dtype=bool), is_step])[order]
        tic = time.perf_counter()
        sampling = self._kernel_sampling(controls)
        done, status, d_norm, t_out, x_out, lam_out, x_old, failure = self._kernel(times, hs, t_out, near_rtol,
                                                                                    sampling)
        self.n_steps += done
        if done == len(times) and failure is None:
            rate = done / max(time.perf_counter() - tic, 1e-6)
            self._chunk = int(min(max(rate * CHUNK_SECONDS, 16), 1 << 16))
        if done and status != 2:
            self.t_old, self.x_old, self._xdot_old = float(x_old[4 * n]), x_old[:2 * n].copy(), x_old[2 * n:4 * n].copy()
        if status == 5:                  # a controller's sample failed after the last step taken
            self._check_state()
            self._sample_failure(sampling.error)
        elif status == 1:
            self.status, self.message = "failed", self._newton_failure(d_norm, float(times[done]))
        elif status == 2:                # non-finite residual: the step is taken with it, as on the numpy path
            self.t_old, self.x_old, self._xdot_old = self.t, self.x, self._xdot_new
            self.t = float(times[done])
            self.x = np.concatenate([x_old[:n], x_old[n:2 * n] * np.nan])
            self._xdot_new = None
            self.n_steps += 1
            self._check_state()
        elif done:
            self._check_state()
        if failure is not None and self.status == "running":   # a law failed at the next step's time
            self.status, self.message = "failed", self._step_failure(self.t, failure)
        return (t_out, x_out, lam_out, is_step[:len(t_out)]) if every_step else (t_out, x_out, lam_out)

    def _kernel_sampling(self, controls):
        """The `flexmbs.control.KernelSampling` of the ControlLoop ``controls`` (made at its first chunk,
        then kept), or None without controllers."""
        if controls is None:
            return None
        if self._sampling is None or self._sampling[0] is not controls:
            self._sampling = (controls, controls.kernel_sampling(self._compiled, *self._kstate[:2]))
        return self._sampling[1]

    def _sample_failure(self, error) -> None:
        """Stop the run on the error of a controller's sample within the kernel's steps, as
        `flexmbs.integrators.simulate` stops it on the numpy path (`stop`: the outputs so far are kept):
        a law's or an output's `UserFunctionError` (or an ArithmeticError) becomes the message, any other
        exception (stage "raise") is raised."""
        stage, err = error
        if stage == "raise":
            raise err
        if stage == "held":
            self.status, self.message = "failed", self._step_failure(self.t, err)
        elif self.status == "running":
            self.stop(f"The controller's sample at t = {self.t:.6g} failed: {err}")

    def _kernel(self, times, hs, t_out, near_rtol: float, sampling=None):
        """The kernel's steps at ``times`` (step sizes ``hs``), with the outputs at ``t_out``: updates the
        counters but n_steps and, after ``done`` accepted steps, t, x, the accelerations and
        multipliers; returns (done, status (0 ok, 1 Newton failed, 2 non-finite residual, 3 diverged, 4
        non-finite state), last correction, output times reached, their states and multipliers, x_old buffer: the
        state and x' before the last accepted step and its time, or the failing iterate (status 2),
        failure).  The laws are tabulated first (`CompiledSystem.tabulate`): if one fails at a time,
        only the steps before it run and ``failure`` is its `UserFunctionError` (else None).  With
        ``sampling`` (a `flexmbs.control.KernelSampling`) the kernel samples the controllers within the
        steps and reads the held outputs it sets (status 5: a sample failed, ``sampling.error``)."""
        n = self.n
        laws, failure = self._compiled.tabulate(times, held_by_kernel=sampling is not None)
        times, hs = times[:len(laws)], hs[:len(laws)]
        control = None
        if sampling is not None and len(times):
            control = sampling.control(self.n_steps, times, self.t_end)
            if control is None:                        # a held output failed at the first step's time
                failure, times, hs = sampling.error[1], times[:0], hs[:0]
        if not len(times):
            return 0, 0, 0.0, t_out[:0], np.empty((0, 2 * n)), np.empty((0, self.n_c)), None, failure
        t_out = np.ascontiguousarray(t_out, dtype=float)
        x_out = np.empty((len(t_out), 2 * n))
        lam_out = np.empty((len(t_out), self.n_c))
        x_old = np.empty(4 * n + 1)
        x_old[4 * n] = self.t
        info = np.zeros(4, dtype=np.int64)
        params, ints = self._kernel_params(near_rtol)
        before = self._kflags[3:7].copy()
        d_norm = self._compiled.steps(params, ints, self._kstate, self._kflags, self._kpiv, times, hs, laws,
                                      t_out, x_out, lam_out, x_old, info, control)
        done, i_out, status = (int(x) for x in info[:3])
        self._kernel_taken(before, times, done)
        return done, status, d_norm, t_out[:i_out], x_out[:i_out], lam_out[:i_out], x_old, failure

    def _kernel_params(self, near_rtol: float) -> tuple[np.ndarray, np.ndarray]:
        """The kernel's (params, int params) of this run (``Params`` of csrc/index3_kernel.c), made once."""
        if self._kparams is None or self._kparams[0] != near_rtol:          # the same for every call of a run
            self._kparams = (near_rtol, np.array([self.alpha_m, self.alpha_f, self.gamma, self.beta, self._tol,
                                                  self._rate, self.regularization, self.divergence_limit, near_rtol,
                                                  self._keep_rate]),
                             np.array([self._max_iter, int(self._tangent == "finite-difference"),
                                       REFACTOR.index(self.refactor) - 1, KEPT_STOP.index(self._kept_stop)],
                                      dtype=np.int64))
        return self._kparams[1:]

    def _kernel_taken(self, before: np.ndarray, times: np.ndarray, done: int) -> None:
        """After a call of the kernel: its counters (``before``: flags[3:7] before the call) added to the
        integrator's, and, after ``done`` accepted steps ending at ``times``, t, x, the accelerations and
        multipliers from the kernel's state."""
        rhs, jac, lu, newton = (int(x) for x in self._kflags[3:7] - before)
        self.n_rhs += rhs
        self.n_jac += jac
        self.n_lu += lu
        self.n_newton += newton
        if done:
            q, v, a, qdd, lam = self._kstate[:5]
            self._lam_old = self.lam if done == 1 else None     # the kernel keeps the others' to itself
            self.t = float(times[done - 1])
            self.x = np.concatenate([q, v])
            self._a, self.qdd, self.lam = a.copy(), qdd.copy(), lam.copy()
            self._xdot_new = np.concatenate([v, qdd])
            self._C_state = (self.t, q.copy())

    def _kernel_step(self) -> tuple[bool, str | None]:
        """One step in the kernel, for `step` (simulate calls `advance` instead, but for an integrand,
        whose quadrature needs every step's dense output); `step` counts it and checks the state."""
        times, hs = self._schedule(1)
        if not times.size or not times[0] > self.t:
            return False, self._underflow_message()
        _, status, d_norm, _, _, _, x_old, failure = self._kernel(times, hs, np.zeros(0), 0.0)
        if failure is not None:
            raise failure                              # `step` reports it as on the numpy path
        if status == 1:
            return False, self._newton_failure(d_norm, float(times[0]))
        if status == 2:                                # the numpy path takes the step with it
            self.t, self.x = float(times[0]), np.concatenate([x_old[:self.n], x_old[self.n:2 * self.n] * np.nan])
        return True, None

    @property
    def constraint_residual(self) -> float:
        """|C|_inf after the last step (0 before the first)."""
        if self._C_state is None or not self.n_c:
            return 0.0
        return float(np.abs(self._sys.residual(*self._C_state)).max())

    def _consistent_accelerations(self, t, q, v):
        """qdd, lam from [[M, C_q^T], [C_q, 0]] [qdd; lam] = [Q; gamma] (least squares if singular)."""
        sys = self._sys
        M = np.asarray(sys.mass_matrix(q), float)
        Q = np.asarray(sys.forces(t, q, v), float)
        self.n_rhs += 1
        n, m = self.n, self.n_c
        if m == 0:
            return np.linalg.solve(M, Q), np.zeros(0)
        Cq = np.asarray(sys.jacobian(t, q), float)
        A = np.block([[M, Cq.T], [Cq, np.zeros((m, m))]])
        b = np.concatenate([Q, np.asarray(sys.gamma(t, q, v), float)])
        try:
            if np.linalg.matrix_rank(A) < n + m:
                raise np.linalg.LinAlgError
            z = np.linalg.solve(A, b)
        except np.linalg.LinAlgError:
            z = np.linalg.lstsq(A, b, rcond=None)[0]
        return z[:n], z[n:]

    def dense_multipliers(self, t: float) -> np.ndarray:
        """The multipliers at t in the last step [t_old, t]: linear in t between the step's ends,
        lam(t) = lam_old + (t - t_old) / (t_new - t_old) (lam_new - lam_old), O(h^2) like the
        steps' own multipliers (the kernel interpolates its outputs the same way)."""
        if self.t_old is None or self._lam_old is None:
            raise RuntimeError("`dense_multipliers` is available only after a step taken by `step`.")
        if self.t == self.t_old:
            return self.lam.copy()
        s = (float(t) - self.t_old) / (self.t - self.t_old)
        return (1.0 - s) * self._lam_old + s * self.lam

    def _xdot(self, t, x):
        qdd, _ = self._consistent_accelerations(t, x[:self.n], x[self.n:])
        return np.concatenate([x[self.n:], qdd])

    # -- Newton ---------------------------------------------------------------------------------
    def _factor(self, t, q, v, qdd, lam, h, M, Cq, new_tangent: bool):
        """LU of the scaled iteration matrix S from M, C_q at q and the (kept or new) K_t, C_t."""
        n, m = self.n, self.n_c
        bp = (1 - self.alpha_m) / (h * h * self.beta * (1 - self.alpha_f))
        gp = self.gamma / (h * self.beta)
        S = np.zeros((n + m, n + m))
        S[:n, :n] = M
        if self._tangent == "finite-difference":
            Kt, Ct = self._current_tangents(t, q, v, qdd, lam, new_tangent)
            S[:n, :n] += Kt / bp + (gp / bp) * Ct
        if m:
            S[:n, n:] = Cq.T
            S[n:, :n] = Cq
            if self.regularization > 0:
                # size of the Schur complement C_q M^-1 C_q^T: |C_q row|^2 / mean mass
                m_mean = max(float(np.mean(np.abs(np.diag(M)))), 1e-300)
                eps = self.regularization * max(float(np.mean(np.sum(Cq * Cq, axis=1))) / m_mean, 1e-300)
                S[n:, n:] = -eps * np.eye(m)
        self._lu = Factorization(S)
        self._lu_h = h
        self._theta_lu = 0.0
        self.n_lu += 1

    def _current_tangents(self, t, q, v, qdd, lam, new_tangent: bool):
        """(K_t, C_t) at (t, q, v): new ones by `_tangents` if ``new_tangent`` (or none kept), else the
        kept ones with their analytic parts refreshed (module docstring):

        .. code:: text

            K_t = K_t,kept - K_el(kept) + K_el(now)        K_el = -dQ_el/dq   (System.elastic_stiffness)
            C_t = C_t,kept + dQ_v/dv(kept) - dQ_v/dv(now)  (System.quadratic_velocity_jacobian)
        """
        sys = self._sys
        qvj = sys.quadratic_velocity_jacobian
        kel = sys.elastic_stiffness
        if new_tangent or self._KC is None:
            Kt, Ct = self._KC = self._tangents(t, q, v, qdd, lam)
            Dv = None if qvj is None else qvj(q, v)
            Kel = None if kel is None else kel(t, q, v)
            # the kept parts without their analytic ones: C_t,kept + dQ_v/dv(kept), K_t,kept - K_el(kept)
            self._Ct_rest = None if Dv is None else Ct + Dv
            self._Kt_rest = None if Kel is None else Kt - Kel
            return self._KC
        Kt, Ct = self._KC
        if self._Ct_rest is not None:                  # the quadratic-velocity part of C_t, current
            Ct = self._Ct_rest - qvj(q, v)
        if self._Kt_rest is not None:                  # the elastic part of K_t, current
            Kt = self._Kt_rest + kel(t, q, v)
        return Kt, Ct

    def _tangents(self, t, q, v, qdd, lam):
        """K_t = d(M qdd - Q + C_q^T lam)/dq, C_t = -dQ/dv: analytic (``tangent``), the System's
        (``tangent_matrices``: the bodies' exact blocks, differences body by body), or forward
        differences of the whole system."""
        sys, n = self._sys, self.n
        self.n_jac += 1
        if sys.tangent is not None:
            return sys.tangent(t, q, v)
        if sys.tangent_matrices is not None:
            return sys.tangent_matrices(t, q, v, qdd, lam)

        def g(qq):
            out = np.asarray(sys.mass_matrix(qq), float) @ qdd - np.asarray(sys.forces(t, qq, v), float)
            if self.n_c:
                out = out + np.asarray(sys.jacobian(t, qq), float).T @ lam
            return out

        g0 = g(q)
        Kt = np.empty((n, n))
        for j in range(n):
            dj = 1.5e-8 * max(1.0, abs(q[j]))
            qq = q.copy()
            qq[j] += dj
            Kt[:, j] = (g(qq) - g0) / dj
        Q0 = np.asarray(sys.forces(t, q, v), float)
        Ct = np.empty((n, n))
        for j in range(n):
            dj = 1.5e-8 * max(1.0, abs(v[j]))
            vv = v.copy()
            vv[j] += dj
            Ct[:, j] = -(np.asarray(sys.forces(t, q, vv), float) - Q0) / dj
        self.n_rhs += 2 * n + 1
        return Kt, Ct

    def _iterate_error(self, d_norm: float, d_prev: float | None, d_prev2: float | None, fresh: bool) -> float:
        """The estimated error |q - q*|_inf of the iterate after the correction d_norm (the ones before it:
        d_prev, d_prev2, None where there is none), the rest of the geometric series of the corrections:

        .. code:: text

            e = theta / (1 - theta) |dq_k|      matrix built in this step (``fresh``): theta = |dq_k| / |dq_(k-1)|
                                                kept from earlier steps (``kept_stop`` "rate"), from the third
                                                correction on, all three decreasing: theta = max(|dq_k| / |dq_(k-1)|,
                                                |dq_(k-1)| / |dq_(k-2)|, theta_lu)
            e = |dq_k|                          otherwise

        theta_lu is the largest rate the kept matrix showed in the steps it converged since it was built:
        a slow mode of a stale matrix can be nearly absent from the first correction, so that one ratio
        underestimates it (IFToMM A02, docs/design.md); two successive ratios and the matrix's history do not
        (A02 ends at the same error as with |dq_k|, docs/benchmarks.md)."""
        if d_prev is None or not d_norm < d_prev:
            return d_norm
        if fresh:
            theta = d_norm / d_prev
        elif self._kept_stop == "rate" and d_prev2 is not None and d_prev < d_prev2:
            theta = max(d_norm / d_prev, d_prev / d_prev2, self._theta_lu)
        else:
            return d_norm
        return theta / (1.0 - theta) * d_norm if theta < 1.0 else d_norm

    def _converged(self, theta: float) -> None:
        """A step converged with the contraction rate ``theta`` (`converged_rate`): the rate that decides whether
        the matrix is kept (``refactor`` "contraction"), and the largest the matrix has shown (`_iterate_error`)."""
        self._theta = theta
        self._theta_lu = max(self._theta_lu, theta)

    def _newton_failure(self, d_norm: float, t_next: float) -> str:
        """The message of Newton's failure in the step from self.t to ``t_next``."""
        head = (f"Newton iterations of index3-alpha did not converge at t = {self.t:.6g} "
                f"(last correction {d_norm:.3g} after {self._max_iter} iterations with a "
                "fresh iteration matrix)")
        cause = self._cause(self.t, self.x, t_next)
        if cause:
            return f"{head}: {cause}"
        return (f"{head}. Reduce `h`, raise `newton_max_iter`, or, if the constraints are redundant or the "
                "configuration singular, set `regularization` (e.g. 1e-10).")

    def _cause(self, t: float, x: np.ndarray, t_next: float | None = None) -> str | None:
        """`Integrator._cause`, and first: constraints that cannot all hold (`System.over_constrained`),
        for which Newton's corrections grow or stall whatever the step, at q of (t, x) and the time t
        or the time the failing step was heading for (``t_next``; by default ``self.t``, the end of an
        accepted step): drivers that move the constraints beyond reach show only there."""
        q = x[:self.n]
        check = self._sys.over_constrained
        if check is not None and self.n_c and np.isfinite(q).all():
            for when in dict.fromkeys((t, self.t if t_next is None else t_next)):
                cause = check(when, q)
                if cause:
                    return cause
        return super()._cause(t, x)

    def _step_impl(self) -> tuple[bool, str | None]:
        if self._compiled is not None:
            return self._kernel_step()
        step = self._next_step()
        if step is None:
            return False, self._underflow_message()
        t1, h = step
        outcome, q1, mu, d_norm = self._solve_step(t1, h)
        if outcome == "failed":
            return False, self._newton_failure(d_norm, t1)
        self._accept(t1, h, q1, mu, finite=outcome == "converged")
        return True, None

    def _predictor(self, h: float) -> tuple[np.ndarray, np.ndarray]:
        """(q_hat, v_hat), the parts of q_{n+1}, v_{n+1} known from step n:
        q_{n+1} = q_hat + h^2 beta a_{n+1},  v_{n+1} = v_hat + h gamma a_{n+1}."""
        n, beta, gamma = self.n, self.beta, self.gamma
        q0, v0, a0 = self.x[:n], self.x[n:], self._a
        return q0 + h * v0 + h * h * (0.5 - beta) * a0, v0 + h * (1 - gamma) * a0

    def _kinematics(self, q1: np.ndarray, h: float):
        """(a_{n+1}, v_{n+1}, qdd_{n+1}) of the step of size h from the end of step n to q1 (module
        docstring: the Newmark relations and the alpha-weighted accelerations)."""
        am, af, gamma, beta = self.alpha_m, self.alpha_f, self.gamma, self.beta
        q_hat, v_hat = self._predictor(h)
        a1 = (q1 - q_hat) / (h * h * beta)
        return a1, v_hat + h * gamma * a1, ((1 - am) * a1 + am * self._a - af * self.qdd) / (1 - af)

    def _accept(self, t1: float, h: float, q1: np.ndarray, mu: np.ndarray, finite: bool = True) -> None:
        """Take the step to (t1, q1) with the scaled multipliers mu (``finite`` False: a non-finite
        residual, taken with v = NaN so that the base guard of `step` reports it)."""
        a1, v1, qdd1 = self._kinematics(q1, h)
        if not finite:
            self.t, self.x = t1, np.concatenate([q1, v1 * np.nan])
            return
        bp = (1 - self.alpha_m) / (h * h * self.beta * (1 - self.alpha_f))
        self.t = t1
        self.x = np.concatenate([q1, v1])
        self._lam_old = self.lam
        self._a, self.qdd, self.lam = a1, qdd1, mu * bp
        self._xdot_new = np.concatenate([v1, qdd1])
        self._C_state = (t1, q1)

    def _solve_step(self, t1: float, h: float):
        """Newton's iteration of the step of size h to t1 from the current state, which it leaves
        unchanged (the kept factorization and tangents are updated); returns (outcome, q1, mu,
        last correction), outcome "converged", "non-finite" (a non-finite residual at q1) or
        "failed" (not converged with a fresh matrix and tangent)."""
        sys, n, m = self._sys, self.n, self.n_c
        am, af, beta = self.alpha_m, self.alpha_f, self.beta
        a0, qdd0 = self._a, self.qdd
        bp = (1 - am) / (h * h * beta * (1 - af))
        q_hat, _ = self._predictor(h)

        def start():
            # predictor qdd1 = qdd0, lam1 = lam0 (measured on the coupled slider-crank: a linear
            # extrapolation of qdd and lam does no better, their high-frequency part is not smooth)
            a1 = (qdd0 - am * a0) / (1 - am)
            return q_hat + h * h * beta * a1, self.lam / bp

        qdd0_max = float(np.abs(qdd0).max()) if n else 0.0
        if self._lu is not None and (self._lu_h != h or self.refactor == "step"
                                     or (self.refactor == "contraction" and self._theta > self._keep_rate)):
            self._lu = None
        new_tangent = False
        d_norm = np.inf
        for attempt in range(2):
            q1, mu = start()
            fresh = False
            d_prev = d_prev2 = None
            for _ in range(self._max_iter):
                a1, v1, qdd1 = self._kinematics(q1, h)
                M = np.asarray(sys.mass_matrix(q1), float)
                Q = np.asarray(sys.forces(t1, q1, v1), float)
                self.n_rhs += 1
                Mqdd = M @ qdd1
                r_q = (Mqdd - Q) / bp
                Cq = None
                if m:
                    C, Cq = self._constraint_terms(t1, q1)
                    react = Cq.T @ mu
                    r = np.concatenate([r_q + react, C])
                else:
                    react = 0.0
                    r = r_q
                if not np.isfinite(r).all():
                    return "non-finite", q1, mu, d_norm
                if d_prev2 is not None and d_prev > 0.5 * d_prev2:
                    # the corrections stopped contracting: accept if the residual itself is at
                    # round-off (near singular configurations the corrections are then round-off
                    # of an ill-conditioned solve)
                    # sizes of the terms of r_q; M q_scale: the round-off of q in M q''/beta'
                    q_scale = max(1.0, float(np.abs(q1).max()))
                    r_scale = max(float(np.abs(Mqdd).max()) / bp, float(np.abs(Q).max()) / bp,
                                  float(np.abs(react).max()), float(np.abs(M).max()) * q_scale)
                    if (np.abs(r[:n]).max() <= ROUND_OFF * r_scale
                            and (m == 0 or np.abs(r[n:]).max() <= ROUND_OFF * q_scale)):
                        self._converged(d_prev / d_prev2)
                        return "converged", q1, mu, d_norm
                if self._lu is None:
                    self._factor(t1, q1, v1, qdd1, mu * bp, h, M, Cq, new_tangent)
                    fresh, new_tangent = True, False
                d = -self._lu.solve(r)
                self.n_newton += 1
                q1 = q1 + d[:n]
                mu = mu + d[n:]
                d_norm = float(np.abs(d[:n]).max()) if n else 0.0
                if not np.isfinite(d_norm):
                    break
                # stop when the correction of the accelerations (beta' dq) is newton_tol of their
                # size, or when dq is at the round-off of q
                a_scale = max(float(np.abs(qdd1).max()), qdd0_max, 1e-300) if n else 1.0
                q_scale = max(1.0, float(np.abs(q1).max()))
                stalled = d_prev is not None and d_norm > 0.5 * d_prev and d_norm <= STALL * q_scale
                err = self._iterate_error(d_norm, d_prev, d_prev2, fresh)
                negligible = bp * d_norm <= self._tol * a_scale or d_norm <= 16 * EPS * q_scale
                if bp * err <= self._tol * a_scale or negligible or stalled:
                    self._converged(converged_rate(d_norm, d_prev, d_prev2, negligible))
                    return "converged", q1, mu, d_norm
                if d_prev is not None and d_norm > self._rate * d_prev:
                    # slow contraction: a new matrix at the next iterate, with new tangents if the
                    # matrix was already built in this step (else its age is the likely cause)
                    self._lu, new_tangent = None, fresh
                d_prev, d_prev2 = d_norm, d_prev
            self._lu, new_tangent = None, True                 # retry with a fresh matrix and tangent
        return "failed", q1, mu, d_norm


class Index3HHT(Index3GeneralizedAlpha):
    """HHT-alpha [4]_ on the index-3 equations: the correction loop of index3-alpha (numpy path and
    compiled kernel) with alpha_m = 0, alpha_f = (1 - rho_inf) / (1 + rho_inf) (`hht_coefficients`);
    fixed step, order 2 for rho_inf in [1/2, 1)."""

    name = "hht"
    order = 2
    scheme = "hht"
    rho_inf_min = 0.5
    rho_inf_note = "; below 1/2 HHT is not second order"


class Index3Newmark(Index3GeneralizedAlpha):
    """Newmark's method [5]_ on the index-3 equations with the numerical damping of gamma > 1/2: the
    correction loop of index3-alpha (numpy path and compiled kernel) with alpha_m = alpha_f = 0
    (`newmark_coefficients`); fixed step, order 1."""

    name = "newmark"
    order = 1
    scheme = "newmark"


def local_error_coefficients(alpha_m: float, alpha_f: float, gamma: float, beta: float) -> tuple[float, float]:
    """(c_q, c_v) of the local errors of a step of generalized-alpha (any of `SCHEMES` with
    gamma = 1/2 - alpha_m + alpha_f, i.e. second order),

    .. code:: text

        q_{n+1} - q(t_{n+1}) = c_q h^3 q''' + O(h^4)       v_{n+1} - v(t_{n+1}) = c_v h^3 q'''' + O(h^4)

        c_q = beta - 1/6 + delta/2        c_v = eps + gamma (1/2 + delta) - 1/6        delta = alpha_m - alpha_f
        eps = (1 - alpha_f)/2 - (1 - alpha_m)(1/2 + delta)

    Derived (docs/integrators.md, "Step-size control of index3-alpha") from the expansion of the
    algorithmic accelerations of a smooth solution, a_n = qdd(t_n) + delta h q''' + eps h^2 q'''',
    which the relation (1 - alpha_m) a_{n+1} + alpha_m a_n = (1 - alpha_f) qdd_{n+1} + alpha_f qdd_n
    fixes, put into the Newmark updates of q and v.  For alpha_m = alpha_f = 1/2 (rho_inf = 1)
    c_v = 1/12, the trapezoidal rule's; c_q = 1/12 + delta^2/4 > 0 for every rho_inf.
    """
    delta = alpha_m - alpha_f
    eps = 0.5 * (1 - alpha_f) - (1 - alpha_m) * (0.5 + delta)
    return beta - 1.0 / 6.0 + 0.5 * delta, eps + gamma * (0.5 + delta) - 1.0 / 6.0


class StepControl:
    """The step-size controller of index3-alpha-adaptive: the error norm of a step and the next step.

    .. code:: text

        err = rms( e_q / (atol + rtol max(|q_n|, |q_n+1|)),  e_v / (atol + rtol max(|v_n|, |v_n+1|)) )
        h_next = h min(max_factor, max(min_factor, safety err^(-1/3)))      (local error O(h^3))

    a step with err > 1 is rejected and retried with h_next (no growth after a rejection in the
    same step).  The multipliers are not controlled: they follow from q through the constraints'
    Jacobian and are O(h^2) like q and v (Arnold and Bruls [1]_).  The form of the controller is
    the usual one of the embedded Runge-Kutta methods (E. Hairer, S. P. Norsett, G. Wanner, Solving
    Ordinary Differential Equations I, 2nd ed., Springer 1993, sec. II.4, doi:10.1007/978-3-540-78862-1).
    """

    safety, min_factor, max_factor = 0.9, 0.2, 5.0

    def __init__(self, rtol: float, atol, n: int):
        atol = np.broadcast_to(np.asarray(atol, float), (2 * n,)) if np.ndim(atol) else np.full(2 * n, float(atol))
        self.rtol, self.atol_q, self.atol_v = rtol, atol[:n], atol[n:]

    def norm(self, e_q, e_v, q0, q1, v0, v1) -> float:
        """The rms of the errors in units of their tolerances (1: at the tolerance)."""
        s_q = self.atol_q + self.rtol * np.maximum(np.abs(q0), np.abs(q1))
        s_v = self.atol_v + self.rtol * np.maximum(np.abs(v0), np.abs(v1))
        w = np.concatenate([e_q / s_q, e_v / s_v])
        return float(np.sqrt(np.mean(w * w))) if w.size else 0.0

    def factor(self, err: float, rejected: bool) -> float:
        """h_next / h after a step of error norm ``err`` (no growth after a rejection)."""
        f = self.max_factor if err == 0 else self.safety * err ** (-1.0 / 3.0)
        return min(1.0 if rejected else self.max_factor, max(self.min_factor, f))


class Index3AdaptiveAlpha(Index3GeneralizedAlpha):
    """index3-alpha with step-size control: ``rtol``, ``atol`` on q and v (not on the multipliers).

    The local error of each step is estimated from the algorithmic accelerations (no extra solve),

    .. code:: text

        e_q = c_q h^2 (a_{n+1} - a_n)                                  (~ c_q h^3 q''')
        e_v = c_v h^3 2 [(a_{n+1} - a_n)/h - (a_n - a_{n-1})/h_{n-1}] / (h + h_{n-1})   (~ c_v h^3 q'''')

    with `local_error_coefficients` (the estimate of q is that of Zienkiewicz and Xie [6]_ for
    Newmark, with the shift delta = alpha_m - alpha_f of the algorithmic accelerations added; the
    first step, without a_{n-1}, is controlled on q alone), and `StepControl` accepts, rejects and
    sizes the steps.  A step whose Newton iteration does not converge is retried with h / 4.
    The control is per step: the global error is about proportional to rtol^(2/3)
    (h ~ rtol^(1/3), error ~ h^2).  Options: those of index3-alpha (the fixed-step mode, the
    default for reproducible benchmarks) and ``max_step`` (inf); ``h``, if given, is the first trial
    step (default: h0 = sqrt(2 / d2), d2 the rms of qdd_0 / (atol + rtol |q_0|), the step in which
    qdd_0 alone moves q by its tolerance, at most (t_end - t0) / 100).  Dense output: the cubic
    Hermite of index3-alpha on each accepted step.  ``integrator.local_error``: (e_q, e_v) of the last
    accepted step, projected onto the constraints' tangent space (`_tangent_projection`).

    On the compiled kernel (``kernel``, as index3-alpha's) the whole control runs in csrc ``py_steps``
    (its ``adaptive_*`` functions): the trial interval, Newton's iteration, the check of the
    constraints, the projection of v, the consistent accelerations, the estimate and the next h, as
    here, with `StepControl`'s constants, ``max_step``, t_end, c_q and c_v handed over in the ADAPTIVE
    row of `flexmbs.kernel_schema`.  What the kernel does not evaluate it asks of Python at each trial
    step (`_terms`): the laws' time row at t_{n+1} when a driver's law or a load's function of t is a
    user's Python callable; constant_speed's laws and constant loads (their ``affine`` declaration,
    `flexmbs.compiled.time_law`) and gamma and C_t of every constraint (csrc ``constraint_rates``) the
    kernel has itself, so that without a user's law no trial step calls Python.  Both paths take the
    same trial steps (tests/test_compiled_adaptive.py).  With ``regularization`` > 0 the steps run on
    the numpy path (`flexmbs.kernel_schema.METHODS`).

    References
    ----------
    .. [6] O. C. Zienkiewicz, Y. M. Xie, A simple error estimator and adaptive time stepping
           procedure for dynamic analysis, Earthq. Eng. Struct. Dyn. 20 (1991) 871-887,
           doi:10.1002/eqe.4290200907.
    """

    name = "index3-alpha-adaptive"
    adaptive = True
    uses_tolerances = True
    method_options = {**Index3GeneralizedAlpha.method_options, "max_step": np.inf}

    def _setup(self) -> None:
        super()._setup()
        self.max_step = self._positive_option("max_step", "a positive number (inf: no bound)")
        self.control = StepControl(self.rtol, self.atol, self.n)
        self.c_q, self.c_v = local_error_coefficients(self.alpha_m, self.alpha_f, self.gamma, self.beta)
        self._h_next = min(self.h if self.h is not None else self._first_step(), self.max_step)
        self._qdd_c = self.qdd.copy()     # the consistent accelerations at (t, q, v), for the estimate
        self.local_error = None           # (e_q, e_v) estimated for the last accepted step (numpy path)
        self._prev = None                 # (t_{n-1}, (qdd_n - qdd_{n-1}) / h_{n-1}), for e_v
        if self._compiled is not None:
            self._setup_adaptive_kernel()

    def _compiled_refusal(self) -> str | None:
        """The kernel steps index3-alpha-adaptive but with redundant constraints or at a singular start
        (``regularization`` > 0): the projections and consistent accelerations are then least-squares
        solves on the numpy path, which the kernel's LU does not reproduce."""
        if self.regularization > 0:
            return schema.METHODS[f"{self.name}, regularized"][len("refused: "):]
        return None

    def _setup_adaptive_kernel(self) -> None:
        """The arrays of the kernel's step-size control (csrc/index3_kernel.c, ``Adaptive``): its state
        (consistent accelerations, the last divided difference, t_prev, has_prev, h_next, rejected),
        the probe (q, v, C_t and gamma at a trial's end, written by the kernel), scratch and pivots."""
        n, m = self.n, self.n_c
        N = n + m
        self._astate = np.zeros(2 * n + 4)
        self._astate[:n] = self._qdd_c
        self._astate[2 * n + 2] = self._h_next
        self._probe = np.zeros(2 * n + 2 * m)
        self._ascratch = np.zeros(2 * N * N + N + 4 * n)
        self._apiv = np.zeros(3 * max(N, 1), dtype=np.int32)
        self._atol2 = np.ascontiguousarray(np.concatenate([self.control.atol_q, self.control.atol_v]), dtype=float)
        self._law_failure = None
        self._law_row = np.zeros((1, 0))
        python = self._compiled.python_laws
        if python:                                      # say what costs a Python call per trial step
            log.info("index3-alpha-adaptive on the compiled kernel asks Python once per trial step for the laws of t "
                     "that are users' callables (%s); constant_speed's laws and constant loads it evaluates itself",
                     "; ".join(python))

    def _adaptive_row(self, every_step: bool, t_cover: float) -> np.ndarray:
        """The kernel's ADAPTIVE row (flexmbs/kernel_schema.py): `StepControl`'s constants as the class has
        them, ``max_step``, t_end, c_q, c_v, whether every step point is a row, and t_cover."""
        c = self.control
        return np.array(schema.ADAPTIVE.row(rtol=c.rtol, safety=c.safety, min_factor=c.min_factor,
                                            max_factor=c.max_factor, max_step=self.max_step, t_end=self.t_end,
                                            c_q=self.c_q, c_v=self.c_v, every_step=int(every_step),
                                            t_cover=t_cover), dtype=float)

    def _handed_over(self, wanted: np.ndarray, near_rtol: float, k: int) -> tuple[np.ndarray, float]:
        """The output times handed to one kernel call, and t_cover, the first one not handed over (inf: none):
        those of the first trial step (its interval as `_trial_interval` gives it, within ``near_rtol`` h),
        and at least the next max(k, OUTPUTS_PER_CALL).  The kernel stops before a trial step that would reach t_cover, and the
        next call takes that trial (the controller's state is kept): a call's rows stay bounded, and
        the steps do not depend on the calls."""
        trial = self._trial_interval(self._h_next)
        first = 0 if trial is None else int(np.searchsorted(wanted, trial[0] + near_rtol * trial[1], side="right"))
        cut = max(first, min(len(wanted), max(k, OUTPUTS_PER_CALL)))
        return wanted[:cut], (float(wanted[cut]) if cut < len(wanted) else np.inf)

    def _terms(self, kind: int, t: float) -> bool:
        """What the kernel asks of Python at a trial step (csrc ``adaptive_terms``) when a law of t is a
        user's Python callable (kind 0, the only one: `flexmbs.compiled.time_law`): the time row of the laws
        at t.  False when a law fails (its `UserFunctionError` kept for the message)."""
        try:
            self._compiled.law_row(t, self._law_row[0])
        except UserFunctionError as err:
            self._law_failure = err
            return False
        return True

    def _adaptive_kernel(self, k: int, wanted: np.ndarray, every_step: bool, near_rtol: float):
        """At most k accepted steps in the kernel, with the rows at the times ``wanted`` (sorted, after t)
        and, with ``every_step``, at every step point: returns (done, status (as `_kernel`'s; 6 step-size
        underflow, 7 a law failed), the time the kernel stopped at, x_old buffer, row times, states (rows,
        2 n), multipliers, is_step); n_rejected, the counters and the state after ``done`` steps are
        updated, n_steps and the status are not."""
        n, m = self.n, self.n_c
        tw = 3 * (len(self._compiled.drivers) + self._compiled.n_vectors)
        times, hs = np.zeros(k), np.zeros(k)
        laws = np.zeros((k, tw))
        self._law_row = laws                        # terms(0, t) writes its first row
        wanted, t_cover = self._handed_over(wanted, near_rtol, k)
        n_rows = len(wanted) + (k if every_step else 0)
        rows_t, rows_step = np.zeros(n_rows), np.zeros(n_rows, dtype=np.int64)
        x_out, lam_out = np.empty((n_rows, 2 * n)), np.empty((n_rows, m))
        x_old = np.empty(4 * n + 1)
        x_old[4 * n] = self.t
        info, counts = np.zeros(4, dtype=np.int64), np.zeros(2, dtype=np.int64)
        params, ints = self._kernel_params(near_rtol)
        before = self._kflags[3:7].copy()
        adaptive = (self._adaptive_row(every_step, t_cover), self._atol2, self._astate, self._probe, self._ascratch,
                    self._apiv, counts, self._terms, rows_t, rows_step)
        self._compiled.steps(params, ints, self._kstate, self._kflags, self._kpiv, times, hs, laws, wanted, x_out,
                             lam_out, x_old, info, None, adaptive)
        done, status, rows = int(info[0]), int(info[2]), int(counts[1])
        self._kernel_taken(before, times, done)
        self.n_rejected += int(counts[0])
        self._h_next = float(self._astate[2 * n + 2])
        self._qdd_c = self._astate[:n].copy()
        if done:
            self._xdot_new = np.concatenate([self.x[n:], self._qdd_c])
        if done and status == 0:         # the call ended on an accepted step: its estimates in the scratch
            N = n + m
            self.local_error = tuple(self._ascratch[2 * N * N + N + k * n:2 * N * N + N + (k + 1) * n].copy()
                                     for k in (2, 3))
        t_stop = float(times[done]) if status == 2 else self.t
        return done, status, t_stop, x_old, rows_t[:rows], x_out[:rows], lam_out[:rows], rows_step[:rows].astype(bool)

    def _adaptive_failure(self, status: int) -> str | None:
        """The message of the kernel's ``status`` 6 (step-size underflow) or 7 (a law failed), else None."""
        if status == 6:
            return self._adaptive_underflow(self.t + self._h_next)
        if status == 7:
            return self._step_failure(self.t, self._law_failure)
        return None

    def _advance(self, t_out, near_rtol: float, controls=None, every_step: bool = False):
        """`Index3GeneralizedAlpha._advance` with the steps of the step-size control: the kernel chooses
        them (``advance`` of `simulate`; rows at ``t_out``, or at every step point when None)."""
        if controls is not None:
            raise ValueError("`controls`: digital controllers run with method 'index3-alpha' (sampled every N "
                             "fixed steps), not with index3-alpha-adaptive")
        wanted = np.zeros(0) if t_out is None else np.ascontiguousarray(t_out, dtype=float)
        n = self.n
        tic = time.perf_counter()
        done, status, t_stop, x_old, t, x, lam, is_step = self._adaptive_kernel(
            self._chunk, wanted, every_step or t_out is None, near_rtol)
        self.n_steps += done
        if done and status != 2:
            self.t_old, self.x_old, self._xdot_old = float(x_old[4 * n]), x_old[:2 * n].copy(), x_old[2 * n:4 * n].copy()
        if status == 2:                  # non-finite residual: the step is taken with it, as on the numpy path
            self.t_old, self.x_old, self._xdot_old = self.t, self.x, self._xdot_new
            self.t, self.x = t_stop, np.concatenate([x_old[:n], x_old[n:2 * n] * np.nan])
            self._xdot_new = None
            self.n_steps += 1
            self._check_state()
        elif status in (6, 7):
            self.status, self.message = "failed", self._adaptive_failure(status)
        elif done:
            self._check_state()
        if done == self._chunk and status == 0:
            rate = done / max(time.perf_counter() - tic, 1e-6)
            self._chunk = int(min(max(rate * CHUNK_SECONDS, 16), 1 << 16))
        return (t, x, lam, is_step) if every_step else (t, x, lam)

    def _first_step(self) -> float:
        """h0 = sqrt(2 / d2), d2 = rms(qdd_0 / (atol + rtol |q_0|)), at most (t_end - t0) / 100."""
        n = self.n
        q0 = self.x[:n]
        d2 = float(np.sqrt(np.mean((self.qdd / (self.control.atol_q + self.rtol * np.abs(q0))) ** 2))) if n else 0.0
        span = self.t_end - self.t0
        return min(np.sqrt(2.0 / d2) if d2 > 0 else span, span / 100.0)

    def _local_error(self, t1: float, qdd1: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(e_q, e_v, d1) of the step to t1 with the consistent accelerations qdd1 at its end:
        e_q = c_q h^3 q''', e_v = c_v h^3 q'''' with q''' ~ d1 = (qdd1 - qdd_n) / h and q'''' the
        second divided difference of the consistent accelerations at t_{n-1}, t_n, t_{n+1}."""
        h = t1 - self.t
        d1 = (qdd1 - self._qdd_c) / h
        e_q = self.c_q * h ** 3 * d1
        if self._prev is None:
            return e_q, np.zeros_like(d1), d1
        t_prev, d1_prev = self._prev
        return e_q, self.c_v * h ** 3 * 2.0 * (d1 - d1_prev) / (t1 - t_prev), d1

    def _step_impl(self) -> tuple[bool, str | None]:
        if self._compiled is not None:          # one step in the kernel; `step` counts it and checks the state
            _, status, t_stop, x_old, *_ = self._adaptive_kernel(1, np.zeros(0), False, 0.0)
            if status in (6, 7):
                return False, self._adaptive_failure(status)
            if status == 2:
                self.t, self.x = t_stop, np.concatenate([x_old[:self.n], x_old[self.n:2 * self.n] * np.nan])
            return True, None
        n, rejected = self.n, False
        while True:
            trial = self._trial_interval(self._h_next)
            if trial is None:
                return False, self._adaptive_underflow(self.t + min(self._h_next, self.max_step))
            t1, h = trial
            outcome, q1, mu, d_norm = self._solve_step(t1, h)
            if outcome == "failed" or (outcome == "converged" and not self._constraints_hold(t1, q1)):
                self.n_rejected += 1
                self._h_next, rejected = h / 4.0, True
                continue
            if outcome == "non-finite":
                self._accept(t1, h, q1, mu, finite=False)
                return True, None
            _, v1, _ = self._kinematics(q1, h)
            project = self._tangent_projection(t1, q1)
            v1 = project(v1, np.asarray(self._sys.time_derivative(t1, q1), float).reshape(self.n_c)
                         if self.n_c else None)
            qdd1, _ = self._consistent_accelerations(t1, q1, v1)
            e_q, e_v, d1 = self._local_error(t1, qdd1)
            if self._prev is not None:     # the first step keeps the whole e_q (its e_v is 0): conservative
                e_q, e_v = project(e_q), project(e_v)
            err = self.control.norm(e_q, e_v, self.x[:n], q1, self.x[n:], v1)
            if not np.isfinite(err) or err > 1.0:
                self.n_rejected += 1
                self._h_next = h * (self.control.min_factor if not np.isfinite(err) else self.control.factor(err, True))
                rejected = True
                continue
            self._prev = (self.t, d1)
            self.local_error = (e_q, e_v)
            self._accept(t1, h, q1, mu)
            self.x = np.concatenate([q1, v1])
            self._qdd_c = qdd1
            self._xdot_new = np.concatenate([v1, qdd1])
            self._h_next = h * self.control.factor(err, rejected)
            return True, None

    @classmethod
    def _refusal(cls, term) -> str | None:
        refused = super()._refusal(term)
        if refused is not None:
            return refused
        dae = term if isinstance(term, DAETerm) else term.dae
        if dae is not None and dae.n_q and dae.time_derivative is None:
            return (f"method {cls.name!r} needs the constraints' time derivative C_t (`time_derivative`) to "
                    "project the velocities onto C_q v + C_t = 0 after each step")
        return None

    def _tangent_projection(self, t: float, q: np.ndarray):
        """The M-orthogonal projection onto the constraints' tangent space at (t, q), as a function
        w, r -> w + dw with [[M, C_q^T], [C_q, 0]] [dw; nu] = [0; -(C_q w + r)] (one factorization for
        the velocities, r = C_t, and the error estimates, r = 0).

        Why the velocities: index 3 leaves C_q v + C_t = O(h^2); a next step of size h << h_prev
        turns that residual into a correction of q of O(h h_prev^2), and into the algorithmic
        accelerations a = (q - q_hat) / (h^2 beta) as O(h_prev^2 / h), which an error estimate then
        takes for an error and shrinks h further (measured on the pendulum of cases/pendulum_a01.py
        after steps of 1e-2 s: a_x = -0.31 at h = 1e-2, -46 at h = 1e-5, and the steps fell to
        round-off).  The projection moves v by O(h^2): the order stays 2.  Why the estimates: the
        error of q across the constraints is removed by them (C(q) = 0 holds at every step), and
        so is that of v by this projection; only the tangential part remains (measured on the
        pendulum: |e_q| over the true local error, median 6.2 unprojected, see the test)."""
        sys, n, m = self._sys, self.n, self.n_c
        if not m:
            return lambda w, r=None: w
        M = np.asarray(sys.mass_matrix(q), float)
        Cq = np.asarray(sys.jacobian(t, q), float)
        A = np.block([[M, Cq.T], [Cq, -self.regularization * np.eye(m)]])
        solve = ((lambda b: np.linalg.lstsq(A, b, rcond=None)[0]) if self.regularization > 0
                 else Factorization(A).solve)

        def project(w, r=None):
            res = Cq @ w if r is None else Cq @ w + r
            return w + solve(np.concatenate([np.zeros(n), -res]))[:n]
        return project

    def _constraints_hold(self, t1: float, q1: np.ndarray) -> bool:
        """|C(q1, t1)|_inf <= rtol max(|q1|_inf, 1): Newton's iterate is on the constraints.

        Why: at small steps Newton's corrections (h^2 beta times those of q'') fall below the
        round-off bound at which `_solve_step` accepts a stalled iteration, whether or not C = 0
        (measured: a bar driven beyond its pin's reach, tests/test_failures_step.py, "finished" at
        steps of 1e-4 s with |C| = 8e-4); the step is then treated as a Newton failure."""
        if not self.n_c:
            return True
        C, _ = self._constraint_terms(t1, q1)
        return float(np.abs(C).max()) <= self.rtol * max(float(np.abs(q1).max()), 1.0)

    def _adaptive_underflow(self, t_next: float) -> str:
        """The message of a step size fallen to the round-off of t: the cause the evidence shows
        (`_cause`: constraints that cannot all hold), else what to change."""
        head = (f"Step-size underflow at t = {self.t:.6g}: index3-alpha-adaptive rejected every step down to "
                f"{self._h_next:.3g} s (the error estimate or Newton's iteration failed at every step size)")
        cause = self._cause(self.t, self.x, t_next)
        if cause:
            return f"{head}: {cause}"
        return (f"{head}; loosen `rtol`/`atol`, or, if the configuration is singular or the constraints "
                "redundant, set `regularization` (e.g. 1e-10).")
