"""Radau IIA of order 5 on the stabilised index-2 (GGL) equations of constrained mechanical systems.

The equations are those of index3-alpha (`flexmbs.formulations.terms.DAETerm`), written in the
stabilised index-2 form of Gear, Gupta and Leimkuhler [1]_ (GGL), with the unknowns
y = (q, v, lam, mu), n_q + n_q + n_c + n_c of them:

.. code:: text

    q' = v - C_q^T mu                      (mu = 0 on the exact solution)
    M(q) v' = Q(t, q, v) - C_q^T lam
    0 = C(q, t)                            (position constraints)
    0 = C_q(q, t) v + C_t(q, t)            (velocity constraints)

i.e. ``M_full(y) y' = F(t, y)`` with M_full = diag(I, M(q), 0, 0).  Both constraint levels hold at
the step points; the multiplier mu pays for the position constraint, so the system is of index 2
(Hessenberg) instead of 3.  Why GGL and not the index-3 form: on index 3 Radau IIA (3 stages)
converges with order 5 in q but only 3 in v and 1 in lam; on the index-2 GGL form the
differential components q, v are of order 2s - 1 = 5 and the multipliers of order s = 3 (Hairer
and Wanner [2]_, sec. VII.4, and sec. VII.1 for the stabilised index-2 form).

The method.  The 3-stage Radau IIA collocation method [2]_ (sec. IV.5, Table 5.6, and IV.8): nodes
c = ((4 - sqrt 6)/10, (4 + sqrt 6)/10, 1), A_ij = int_0^c_i l_j(s) ds with the Lagrange polynomials
l_j of the nodes (computed below from the collocation conditions sum_j A_ij c_j^(k-1) = c_i^k / k),
b = last row of A (stiffly accurate: y_{n+1} = Y_3).  With Z_i = Y_i - y_n the stage equations are

.. code:: text

    G_i(Z) = M_full(Y_i) (1/h) sum_j (A^-1)_ij Z_j - F(t_n + c_i h, Y_i) = 0,      i = 1, 2, 3

(the collocation conditions at the nodes, with the state-dependent M(q) at each stage).

Simplified Newton ([2]_ sec. IV.8).  One Jacobian J = dF/dy and one M_full0 at (t_n, y_n) (kept
across steps while Newton contracts fast), the iteration
``(h^-1 A^-1 (x) M_full0 - I (x) J) dZ = -G(Z)`` is decoupled by the real transformation
T^-1 A^-1 T = [[gamma, 0, 0], [0, alpha, -beta], [0, beta, alpha]] (the eigenvalues of A^-1:
gamma = 3.6378, alpha +- i beta = 2.6811 +- 3.0504 i; T from its eigenvectors, computed below): with
dW = (T^-1 (x) I) dZ and R = -(T^-1 (x) I) G(Z),

.. code:: text

    (gamma/h M_full0 - J) dW_1 = R_1                                  one real LU, N x N
    ((alpha + i beta)/h M_full0 - J) (dW_2 + i dW_3) = R_2 + i R_3      one complex LU, N x N

N = 2 n_q + 2 n_c.  J's blocks: the exact ones, dF_q/dv = I, dC/dq = d(C_q v + C_t)/dv = C_q and
the columns of lam and mu, -C_q^T; by forward differences over q, at fixed v, lam and acceleration
a_n, those of the v rows, d(Q - C_q^T lam - M(q) a_n)/dq (the K_t of index3-alpha), and of the
velocity constraint, d(C_q v + C_t)/dq; over v, dQ/dv (the forces alone); d(C_q^T mu)/dq is left
out (mu ~ 0: simplified Newton).  A term with an analytic tangent (K, C) and no
constraints (a Model's second-order form) uses it instead.  The iteration stops as in RADAU5
([2]_ sec. IV.8): with the rate theta_k = |dZ_k| / |dZ_(k-1)|, when
theta/(1 - theta) |dZ_k| <= ``newton_tol`` (default max(10 eps / rtol, min(0.03, sqrt(rtol)))),
|.| the rms of the q and v components of all stages in units of atol + rtol |y_n| (the multipliers
follow them through the constraints); it is abandoned, and the step retried with a smaller h and a
fresh Jacobian, when theta >= 0.99, when the predicted last correction exceeds the tolerance, or
after ``newton_max_iter`` (7) iterations.

Error estimate ([2]_ sec. IV.8: RADAU5's).  The embedded method of order 3
y^_{n+1} = y_n + h (gamma_0 f(y_n) + sum_i b^_i Y'_i), gamma_0 = 1/gamma, gives

.. code:: text

    err = (gamma/h M_full0 - J)^-1 [ F(t_n, y_n) + M_full(y_n) sum_i d_i Z_i / h ]
    d = gamma (b^ - b)^T A^-1 = (-(13 + 7 sqrt 6)/3, (-13 + 7 sqrt 6)/3, -1/3)

(d computed below from the order conditions of b^; tests/test_radau_dae.py checks it against
these values).  After a rejected or a first step with err >= 1 the estimate is filtered once
more, err <- (gamma/h M_full0 - J)^-1 [F(t_n, y_n + err) + M_full(y_n) sum_i d_i Z_i / h], as
RADAU5 does.  NOTE: M_full(y_n) in the bracket, not the M_full0 of a kept Jacobian: for a consistent
y_n the differential rows of the bracket are F(y_n) - M_full(y_n) y'(t_n) + O(h) = O(h)
(sum_i d_i c_i = -1), while with M_full0 they keep (M(q_n) - M(q_0)) v' whatever h (measured on the
coupled slider-crank, rigid bodies in Euler parameters and a floating-frame rod: err = 0.40 at every
h down to 1e-10 s).  NOTE: the algebraic rows of F (C and C_q v + C_t) are set to 0 in both: at a converged
state they hold Newton's leftover, not the step's error, and (gamma/h M_full0 - J)^-1 maps them to
a correction of v of about C_q^+ (C_q v + C_t) whatever h, so the estimate could not fall below it
by shrinking h (measured on IFToMM A03 at rtol = 1e-6: |C_q v + C_t| = 1.7e-10 after a step,
e_v 2.9 tolerances at every h down to 1e-14 s, a step-size underflow at t = 1.3e-4 s).
What enters the norm: the rms over 3 n_q + n_c components,

.. code:: text

    e_q / s_q,   e_v / s_v,   h C_q^T e_mu / s_q,   h e_lam / s_lam
    s_q = atol_q + rtol max(|q_n|, |q_{n+1}|),   s_v = atol_v + rtol max(|v_n|, |v_{n+1}|)
    s_lam = min(atol) + rtol max(|lam_n|_inf, |lam_{n+1}|_inf)

The multipliers' estimates are those of index-2 components, of one order in h lower than the
others; as in RADAU5 they enter multiplied by h (its scaling of the index-2 variables, [3]_).
mu's is carried by C_q^T into the positions it would move over one step (mu has no scale of its
own: it is 0 on the exact solution); lam's is relative to the largest multiplier (a joint without
load has lam = 0, which a per-component scale would turn into atol in newtons).  NOTE: not
h M^-1 C_q^T e_lam, the velocities it would move: M is singular for rigid bodies in Euler
parameters (no inertia along p), and M^-1 C_q^T reached 6e120 on the coupled slider-crank.

Steps: h_new = h / max(1/8, min(5, err^(1/4) / fac)), fac = 0.9 (2 k_max + 1) / (2 k_max + k)
(fewer Newton iterations k, a bolder step), and for accepted steps after the first the predictive
controller of Gustafsson ([2]_ sec. IV.8); err > 1 rejects the step (no growth on the retry).  The
Jacobian is kept into the next step when the converged rate theta was below 0.1 (RADAU5's default
is 1e-3; here a finite-difference J costs n_q + 1 evaluations of the System and n_q of the forces:
docs/design.md), and the LU when h then changes by less than 20 %.

Outputs.  The state is x = (q, v).  Dense output: the collocation polynomial (degree 3 through
y_n and the stages), its q then projected onto C(q, t) = 0 (Gauss-Newton, minimum-norm steps)
and its v onto C_q v + C_t = 0, so that the constraints hold at every output as at the step
points (the interpolant alone misses them by O(h^4)).  ``lam``: the GGL multipliers of the last
stage (order 3), between step points the collocation polynomial's.

Singular configurations.  Where C_q loses rank (the singular positions of IFToMM A02, links in
line) the multipliers of the exact solution have a pole: on A02's exact branch max |lam| is 1151 N
at 1e-4 s before the singular instant t* and 11 186 N at 1e-5 s, while the reactions C_q^T lam
stay at 23.9 N (measured with the index-1 accelerations, tests/test_radau_dae.py).  Exact GGL rows
then ask Newton to follow lam ~ 1 / |t - t*| with a Jacobian frozen at the step's start: the
steps shrink geometrically towards t* and never cross it (a step-size underflow at t* - 1.2e-4 s,
measured).  The rows are therefore regularised, C - eps_q mu = 0 and C_q v + C_t - eps_v lam = 0,
in the residual and in the iteration matrix: the constraints become stiff compliant elements
(the penalty view of García de Jalón and Bayo [4]_, the constraint regularisation of
Lacoursière [5]_; "constraint force mixing" in ODE and Chrono).  With eps = tau |C_q|^2 (positions)
and tau |C_q|^2 / |M| (velocities), the sizes of C_q C_q^T and C_q M^-1 C_q^T, a constraint
violation relaxes with the time constant tau (option ``relaxation``, default RELAXATION rtol =
1e-6 rtol s) and the lam of a singular direction is bounded by the time it has to grow; elsewhere
the regularisation moves the velocity constraint by tau times the reaction's acceleration, an error
proportional to rtol as the step control's own (A02 at rtol 1e-6: 1e-12 s x 30 m/s^2 = 3e-11 m/s;
A03, whose reactions are large, q(0.03) 6.0e-7 rad from the reference at rtol 1e-6 against 2.1e-7
with exact rows, 4.0e-8 against 3.4e-9 at 1e-7).  The equations are then of index 1 in lam and mu;
Radau IIA, stiffly accurate and L-stable, takes the relaxation without steps of its size.  On A02
(N = 2, rtol 1e-6) the run passes the ten singular instants of 10 s (docs/design.md).
``relaxation = 0`` gives the exact GGL rows (a singular configuration then stops the run).

Tight tolerances near a singular configuration: a crawl, stopped.  Measured on A02 (N = 2) at rtol 1e-8,
atol 1e-11 (both paths): the steps are normal until t* - 3.9e-3 s, where sigma_min / sigma_max of C_q is
3.8e-3 and max |lam| only 63 N; there h falls to 5e-11 .. 3e-9 s and stays (124 000 accepted steps in 20 s
of CPU on the compiled path without passing t* - 3.9e-3 s; before the check below, 8 min of CPU over the
10 s without passing t*).  Not an underflow (h stays 1e4 times above the round-off of t), not rejections
by the error estimate (numpy path: 3859 accepted steps at err 0.01 to 0.04, 2394 Newton failures, no
rejection by err): Newton's velocity corrections stop contracting at a round-off floor of about
1e-14 to 4e-14 / (sigma_min / sigma_max) m/s (medians of |dv|_inf over the iterations: 3.5e-12 at
3.8e-3, 8.4e-11 at 5.1e-4, 4.8e-10 at 8.5e-5), and the iteration's stop for stalled corrections,
newton_tol rtol |v|_inf (4.8e-12 m/s at rtol 1e-8, 1.5e-10 at 1e-7, 5e-9 at 1e-6), falls below that
floor at sigma_min / sigma_max ~ 8e-3 at rtol 1e-8 (t* - 4e-3 s), ~ 3e-4 at 1e-7 (where the run takes
20 times the steps of 1e-6 but passes) and ~ 8e-6 at 1e-6 (where the regularisation already bounds the
singular direction).  Shrinking h does not lower the floor until h sigma_min^2 / (gamma |M|), the
singular direction's share of the Schur complement of the iteration matrix, falls to eps_v: about 1e-9 s
with eps_v ~ 1e-14, the crawl's steps.  Accepting stalled corrections up to rtol |v|_inf (tried) let
Newton converge but the error estimate, fed the same round-off, then held h at 4e-8 s after t*: at atol
1e-11 the tolerances are below what double precision resolves there (cond(C_q) eps |v| > atol).  A larger
relaxation passes (1e-11 s at rtol 1e-8: A02's 10 s in 51 504 steps, 2.2e-6 m from the exact solution,
more than rtol 1e-7's 8.3e-7 m), but a floor on it would floor A03's error (above).  So the run stops:
a window of CRAWL_STEPS (1000) trial steps that advanced t by less than CRAWL_STEPS CRAWL_FRACTION
(t_end - t0), a mean step of 1e-9 of the span (the run would need more than 1e9 steps), ends it
with a message naming the singular configuration and the options (looser rtol/atol, a larger
``relaxation``, index3-alpha), the outputs before it kept: A02 at rtol 1e-8 stops at t = 0.7104 s after
0.2 s of CPU compiled, 12 s on the numpy path (tests/test_failures_radau.py).

Where it runs.  Option ``kernel`` ("auto", "compiled", "numpy"), as index3-alpha's: on "compiled"
(and on "auto" when the System qualifies, `flexmbs.compiled`) the steps between two outputs run in one
call of the kernel (`CompiledSystem.radau_steps`, csrc/index3_kernel.c ``radau_steps``): the trial
interval, the starting values, J, the real LU and a complex LU of its own, the Newton iteration, the
error estimate and the step control above, line for line with `_step_impl` (the numpy path, the
reference), the constants passed in the declared RADAU row (flexmbs/kernel_schema.py); the kernel
evaluates M, Q, C, C_q and C_t itself (``bodies``, ``constraints``, ``constraint_rates``) and the laws'
time rows where they are affine, else asks Python for them once per trial step.  The call stops after
the step that reaches the next output, hands back every step point and computes the outputs in that
step (the dense output above, its projections by Householder QR: the minimum-norm corrections numpy's
lstsq gives; where C_q lost rank `_dense_impl` does it in Python); the start's consistent
accelerations and the failure messages use the System's callables (docs/design.md, "The step loop on
the compiled step").

Scope.  Holonomic constraints only (velocity constraints have no position level for C(q) = 0:
refused, as by the other index-3 methods), C_t is needed (``DAETerm.time_derivative``).
Redundant constraints at the start are refused (the regularisation is sized for the singular
instants of a mechanism, not for rows that never hold independently).

References
----------
.. [1] C. W. Gear, B. Leimkuhler, G. K. Gupta, Automatic integration of Euler-Lagrange equations
       with constraints, J. Comput. Appl. Math. 12-13 (1985) 77-90, doi:10.1016/0377-0427(85)90008-1.
.. [2] E. Hairer, G. Wanner, Solving Ordinary Differential Equations II, Stiff and
       Differential-Algebraic Problems, 2nd ed., Springer 1996, doi:10.1007/978-3-642-05221-7.
.. [3] E. Hairer, G. Wanner, RADAU5 (Fortran), 1996 (the code of [2]_ sec. IV.8: the step-size
       and Newton controls above follow its published description, not its text).
.. [4] J. García de Jalón, E. Bayo, Kinematic and Dynamic Simulation of Multibody Systems: The
       Real-Time Challenge, Springer 1994, doi:10.1007/978-1-4612-2600-0 (penalty and augmented
       Lagrangian formulations, which pass singular positions).
.. [5] C. Lacoursière, Ghosts and machines: regularized variational methods for interactive
       simulations of multibodies with dry frictional contacts, PhD thesis, Umeå University, 2007.
"""
from __future__ import annotations

import logging
import time
import warnings

import numpy as np

from .. import kernel_schema as schema
from ..formulations.base import forward_difference_jacobian
from ..formulations.terms import DAETerm, ODETerm, index3_term
from ..user_functions import UserFunctionError
from .base import EPS, Factorization, Integrator
from .index3_alpha import CHUNK_SECONDS

log = logging.getLogger("flexmbs")

__all__ = ["RadauDAE", "RADAU_C", "RADAU_A", "RADAU_T", "RADAU_EIGENVALUES", "RADAU_ERROR_WEIGHTS"]


def collocation_matrix(c: np.ndarray) -> np.ndarray:
    """A of the collocation method with nodes c: sum_j A_ij c_j^(k-1) = c_i^k / k, k = 1..s
    ([2]_ sec. IV.5, the simplifying assumption C(s))."""
    s = len(c)
    V = np.vander(c, s, increasing=True)                     # V_jk = c_j^(k-1)
    rhs = np.array([[ci ** k / k for k in range(1, s + 1)] for ci in c])
    return np.linalg.solve(V.T, rhs.T).T


def real_block_form(Ainv: np.ndarray) -> tuple[np.ndarray, float, float, float]:
    """(T, gamma, alpha, beta) with T^-1 A^-1 T = [[gamma, 0, 0], [0, alpha, -beta], [0, beta, alpha]]:
    T = [e, u, w] from the real eigenvector e (eigenvalue gamma) and u + i w the eigenvector of
    alpha - i beta (beta > 0), since A^-1 u = alpha u + beta w, A^-1 w = -beta u + alpha w."""
    lam, vec = np.linalg.eig(Ainv)
    real = int(np.argmin(np.abs(lam.imag)))
    pair = int(np.argmin(lam.imag))                          # alpha - i beta
    T = np.column_stack([vec[:, real].real, vec[:, pair].real, vec[:, pair].imag])
    return T, float(lam[real].real), float(lam[pair].real), float(-lam[pair].imag)


def embedded_error_weights(c: np.ndarray, A: np.ndarray, gamma: float) -> np.ndarray:
    """d = gamma (b^ - b)^T A^-1 of the error estimate: b^ with b^_0 = gamma_0 = 1/gamma on f(y_n)
    and order 3, gamma_0 + sum_i b^_i c_i^0 = 1, sum_i b^_i c_i = 1/2, sum_i b^_i c_i^2 = 1/3."""
    gamma0 = 1.0 / gamma
    V = np.vander(c, len(c), increasing=True)
    b_hat = np.linalg.solve(V.T, np.array([1.0 - gamma0, 0.5, 1.0 / 3.0]))
    return gamma * (b_hat - A[-1]) @ np.linalg.inv(A)


SQRT6 = np.sqrt(6.0)
RADAU_C = np.array([(4 - SQRT6) / 10, (4 + SQRT6) / 10, 1.0])
RADAU_A = collocation_matrix(RADAU_C)
RADAU_AINV = np.linalg.inv(RADAU_A)
RADAU_T, _GAMMA, _ALPHA, _BETA = real_block_form(RADAU_AINV)
RADAU_TI = np.linalg.inv(RADAU_T)
RADAU_EIGENVALUES = (_GAMMA, _ALPHA, _BETA)
RADAU_ERROR_WEIGHTS = embedded_error_weights(RADAU_C, RADAU_A, _GAMMA)
DENSE_NODES = np.concatenate([[0.0], RADAU_C])              # the collocation polynomial's nodes in s

SAFETY, MAX_GROWTH, MAX_SHRINK = 0.9, 8.0, 5.0
KEEP_JACOBIAN_RATE = 0.1          # a converged rate below this keeps J into the next step
KEEP_LU_RATIO = 1.2                # h_new / h in [1, 1.2): keep h and the LU
RELAXATION = 1e-6                  # [s] default relaxation time of the regularised constraints per unit of rtol


def lagrange_weights(s: float) -> np.ndarray:
    """Weights w_k(s) of the polynomial through the values at DENSE_NODES (0, c_1, c_2, c_3):
    u(s) = sum_k w_k(s) u_k, s = (t - t_n) / h."""
    nodes = DENSE_NODES
    w = np.ones(len(nodes))
    for k, sk in enumerate(nodes):
        for j, sj in enumerate(nodes):
            if j != k:
                w[k] *= (s - sj) / (sk - sj)
    return w


class NewtonFailed(Exception):
    """Newton's iteration of a step did not converge; ``factor`` is the step's reduction, ``non_finite``
    whether the term gave NaN or inf at a stage."""

    def __init__(self, factor: float, non_finite: bool = False):
        super().__init__(factor)
        self.factor, self.non_finite = factor, non_finite


class SingularIteration(Exception):
    """The iteration matrix gamma/h M_full - J is singular (C_q has lost rank: h does not change that)."""


#: csrc radau_steps' status: the steps reached the output, t_end or the call's count; a step-size underflow; a
#: singular iteration matrix; a non-finite state after NON_FINITE_RETRIES; a law of t failed; a non-finite or
#: diverging state after an accepted step; a crawl (`RadauDAE._crawling`)
RUN_OK, RUN_UNDERFLOW, RUN_SINGULAR, RUN_NON_FINITE, RUN_LAW_FAILED, RUN_STATE, RUN_CRAWL = range(7)
#: the controller's state the kernel keeps (csrc ``RS_*``): t, t_old, h_old, has_poly, h_next, theta, faccon,
#: h_acc, err_acc, has_acc, has_jac, has_f0, lu_h, the start of the last step taken, the trial steps of the crawl
#: check's current window and the t it started at
(RS_T, RS_T_OLD, RS_H_OLD, RS_HAS_POLY, RS_H_NEXT, RS_THETA, RS_FACCON, RS_H_ACC, RS_ERR_ACC, RS_HAS_ACC, RS_HAS_JAC,
 RS_HAS_F0, RS_LU_H, RS_T_PREV, RS_CRAWL, RS_CRAWL_T) = range(16)
RS_WIDTH = 16
STEPS_PER_CALL = 4096      # at most this many steps in one call of the kernel (its points' buffer)
FIRST_CALL_STEPS = 16      # the first call's steps; then as many as take about CHUNK_SECONDS (index3-alpha's)
OUTPUTS_PER_CALL = 4096    # at most this many output times handed to one call (the rows it may fill)

NEAR_SINGULAR = 1e-2       # sigma_min / sigma_max of C_q below this at an underflow: named as its cause
NON_FINITE_RETRIES = 3      # steps cut by 4 after non-finite stages before the state is reported non-finite
#: a crawl: CRAWL_STEPS trial steps in a row (accepted or rejected) that advanced t by less than CRAWL_STEPS
#: CRAWL_FRACTION (t_end - t0) stop the run (at that pace the span would take more than 1e9 trials; module
#: docstring, "Singular configurations": IFToMM A02 at rtol 1e-8 crawled at 2e-9 s a step)
CRAWL_FRACTION = 1e-9
CRAWL_STEPS = 1000


class RadauDAE(Integrator):
    """Radau IIA (3 stages, order 5) on the GGL form of M q'' + C_q^T lam = Q, C = 0; adaptive.

    Options: ``newton_tol`` (None: max(10 eps / rtol, min(0.03, sqrt(rtol)))), ``newton_max_iter``
    (7), ``max_step`` (inf), ``relaxation`` (None: RELAXATION rtol = 1e-6 rtol s, the constraints'
    relaxation time, module docstring "Singular configurations"; 0: exact constraint rows), ``kernel``
    ("auto": the compiled kernel's evaluations where the System qualifies, "compiled", "numpy"; module
    docstring).  ``h``, if given, is the first trial step (default: from the start's
    accelerations, see `_first_step`).  ``rtol``/``atol`` on q and v (``atol`` a number or one per
    component of x = (q, v)); the multipliers enter the error norm through the q and v they move
    (module docstring).
    """

    name = "radau-dae"
    order = 5
    adaptive = True
    uses_tolerances = True
    needs = "second_order"
    accepts = (DAETerm, ODETerm)
    requires = ("index3",)
    has_multipliers = True
    kernel = "numpy"
    kernel_reason = "kernel='numpy'"
    method_options = {"newton_tol": None, "newton_max_iter": 7, "max_step": np.inf, "relaxation": None,
                      "kernel": "auto"}

    @classmethod
    def _refusal(cls, term) -> str | None:
        """Velocity constraints without a position level, or constraints without C_t (module docstring)."""
        dae = term if isinstance(term, DAETerm) else term.dae
        if dae is None:                     # a second-order form M q'' = f: no constraints
            return None
        if not dae.holonomic:
            return (f"method {cls.name!r} imposes C(q, t) = 0 and C_q v + C_t = 0 (the GGL form), and "
                    f"{term.name!r} has velocity constraints without a position equation (KnifeEdge, "
                    "VelocityConstraint, GearPair, RackPinion); run it with an index-1 formulation "
                    "('lagrange': e.g. method 'Radau' or 'DOP853') or a quasi-velocity one ('maggi', 'kane')")
        if dae.n_q and dae.time_derivative is None:
            return (f"method {cls.name!r} needs the constraints' time derivative C_t (`time_derivative`) for "
                    f"C_q v + C_t = 0; {term.name!r} does not give it")
        return None

    def _prepared(self, term) -> DAETerm:
        return index3_term(term)

    # -- setup ----------------------------------------------------------------------------------
    def _setup(self) -> None:
        self._max_iter = self._count_option("newton_max_iter")
        self.max_step = self._positive_option("max_step", "a positive number (inf: no bound)")
        tol = self.options["newton_tol"]
        self.newton_tol = (max(10 * EPS / self.rtol, min(0.03, self.rtol ** 0.5)) if tol is None
                           else self._positive_option("newton_tol", "a positive number (None: from rtol)"))
        sys = self._sys = self.term
        self.n = n = int(sys.n_q)
        q, v = self.x[:n], self.x[n:]
        if sys.check_model is not None:
            sys.check_model(self.t, q, v)
        C0, G0 = self._sys.constraints(self.t, q)
        self.n_c = m = len(C0)
        rank = np.linalg.matrix_rank(G0) if m else 0
        if rank < m:
            raise ValueError(
                f"method 'radau-dae' needs independent constraints (C_q of full row rank: its iteration matrix "
                f"holds C_q twice), but C_q of {self.term.name!r} at t0 = {self.t:g} has rank {rank} < {m} rows "
                "(redundant constraints or a singular start: System.mobility names them); remove the redundant "
                "constraints or use method 'index3-alpha' (option `regularization`).")
        self.N = 2 * n + 2 * m
        self._setup_kernel(q, v)
        atol = np.asarray(self.atol, float)
        atol = np.broadcast_to(atol, (2 * n,)) if atol.ndim else np.full(2 * n, float(atol))
        self._atol_q, self._atol_v = atol[:n], atol[n:]
        self._atol_lam = float(np.min(atol)) if atol.size else 0.0      # the multipliers' absolute tolerance
        qdd, lam = self._consistent_accelerations(self.t, q, v, G0)
        self._eps_q, self._eps_v = self._compliances(q, G0)
        self._a = qdd                         # the acceleration at which J's v rows are taken
        self._y = np.concatenate([q, v, lam, np.zeros(m)])
        self._f0 = None                       # (F(t_n, y_n), M_full(y_n)), for the error estimate
        self._jac = None                      # (J, M_full0, C_q) at the Jacobian's point
        self._lu = None                       # (h, real LU, complex LU)
        self._poly = None                     # (t_n, h, values (4, N)) of the last accepted step
        self._faccon = 1.0
        self._theta = 1.0
        self._h_acc = self._err_acc = None    # Gustafsson's controller
        self._h_next = min(self.h if self.h is not None else self._first_step(qdd), self.max_step)
        self._crawl_step = CRAWL_FRACTION * (self.t_end - self.t0)
        self._crawl, self._crawl_t = 0, self.t    # the trial steps of the crawl check's window and its start
        self.n_newton = 0
        self.lam = lam
        if self._compiled is not None:
            self._setup_kernel_step()

    def _setup_kernel(self, q, v) -> None:
        """``kernel`` option ("auto", "compiled", "numpy"): evaluate M, Q, C and C_q through the compiled
        kernel when the System qualifies: the steps between outputs in one call (`_advance`, csrc
        ``radau_steps``), the start's and the dense output's evaluations through
        `flexmbs.compiled.CompiledSystem.terms` (module docstring, "Where it runs")."""
        from ..compiled import choose_kernel
        self._compiled, self.kernel_reason = choose_kernel(self.options["kernel"], self._sys.compiled,
                                                           check=lambda c: c.terms(self.t, q, v))
        self.kernel = "numpy" if self._compiled is None else "compiled"
        if self._compiled is None:
            return
        self._scleronomic = self._compiled.scleronomic     # C_t = 0: the kernel's only rheonomic rows are drivers

    def _setup_kernel_step(self) -> None:
        """The arrays of the compiled steps (csrc ``radau_steps``, `CompiledSystem.radau_steps`): the RADAU row of
        this run's constants (flexmbs/kernel_schema.py), atol of (q, v), the state (y, a, the last step's
        polynomial, the controller's scalars), the kept J with M_full0's M and C_q, the real and complex LUs and
        their pivots, F(t_n, y_n) with M(q_n), scratch, the counters and the laws' time rows of a trial."""
        n, m, N = self.n, self.n_c, self.N
        self._row = np.array(schema.RADAU.row(
            rtol=self.rtol, newton_tol=self.newton_tol, max_iter=self._max_iter, eps_q=self._eps_q, eps_v=self._eps_v,
            atol_lam=self._atol_lam, fd_step=np.sqrt(EPS), gamma=_GAMMA, alpha=_ALPHA, beta=_BETA, c=RADAU_C,
            ainv=RADAU_AINV, t=RADAU_T, ti=RADAU_TI, d=RADAU_ERROR_WEIGHTS, safety=SAFETY, max_growth=MAX_GROWTH,
            max_shrink=MAX_SHRINK, keep_jacobian=KEEP_JACOBIAN_RATE, keep_lu=KEEP_LU_RATIO,
            non_finite_retries=NON_FINITE_RETRIES, max_step=self.max_step, t_end=self.t_end,
            divergence_limit=self.divergence_limit, crawl_step=self._crawl_step, crawl_steps=CRAWL_STEPS), dtype=float)
        self._katol = np.ascontiguousarray(np.concatenate([self._atol_q, self._atol_v]), dtype=float)
        self._ky, self._ka = self._y.copy(), np.array(self._a, dtype=float)
        self._kpoly, self._kscal = np.zeros(4 * N), np.zeros(RS_WIDTH)
        self._kscal[[RS_T, RS_H_NEXT, RS_THETA, RS_FACCON, RS_LU_H]] = self.t, self._h_next, self._theta, self._faccon, np.nan
        self._kjac = np.zeros(N * N + n * n + m * n)
        self._klu = np.zeros(4 * N * N)
        self._kpiv = np.zeros(4 * max(N, 1), dtype=np.int32)
        self._kstart = np.zeros(N + n * n)
        self._kscratch = np.zeros(n * n + m * n + 2 * n + 3 * m + 17 * N)
        self._kcount = np.zeros(6, dtype=np.int64)
        self._klaws = np.zeros((4, self._compiled.time_row_width))
        self._kpoints = np.zeros(STEPS_PER_CALL * (1 + 2 * n + m))
        python = self._compiled.python_laws
        self._kterms = self._kernel_laws if python or self._compiled.held_loads else None
        self._law_failure = None
        self._chunk = FIRST_CALL_STEPS        # steps of the next call (sized by time: progress, interrupts)
        self.advance = self._advance
        log.info("radau-dae runs its steps in the compiled kernel (csrc radau_steps, one call between outputs)%s",
                 f"; it asks Python once per trial step for the laws of t that are users' callables ({'; '.join(python)})"
                 if python else "")

    def _terms(self, t, q, v, mass: bool = True, forces: bool = True, constraints: bool = True):
        """(M, Q, C, C_q) at (t, q, v): one kernel call on the compiled path (all four); on the numpy path
        the System's callables, those not asked for None.  Counts an evaluation of the forces."""
        if forces:
            self.n_rhs += 1
        if self._compiled is not None:
            return self._compiled.terms(t, q, v)
        sys = self._sys
        C, G = sys.constraints(t, q) if constraints else (None, None)
        return (np.asarray(sys.mass_matrix(q), float) if mass else None,
                np.asarray(sys.forces(t, q, v), float) if forces else None, C, G)

    def _compliances(self, q, G) -> tuple[float, float]:
        """(eps_q, eps_v) of the regularised constraint rows C - eps_q mu = 0, C_q v + C_t - eps_v lam = 0:
        tau |C_q|^2 and tau |C_q|^2 / |M| (mean squared row of C_q and mean |diag M|: the sizes of
        C_q C_q^T and C_q M^-1 C_q^T, as index3-alpha's `regularization`), tau the option ``relaxation``
        [s] (None: RELAXATION rtol; 0: none).  Module docstring, "Singular configurations"."""
        tau = self.options["relaxation"]
        if tau is None:
            tau = RELAXATION * self.rtol
        elif not (isinstance(tau, (int, float, np.floating)) and not isinstance(tau, bool) and tau >= 0
                  and np.isfinite(tau)):
            raise ValueError(f"`relaxation` must be a time >= 0 in seconds (None: 1e-6 rtol s, 0: exact "
                             f"constraints), got {tau!r}.")
        self.relaxation = float(tau)
        if not self.n_c or not tau:
            return 0.0, 0.0
        S_q = float(np.mean(np.sum(G * G, axis=1)))
        m_mean = max(float(np.mean(np.abs(np.diag(np.asarray(self._sys.mass_matrix(q), float))))), 1e-300)
        return tau * S_q, tau * S_q / m_mean

    def _first_step(self, qdd: np.ndarray) -> float:
        """h0 = 0.1 (1 / d2)^(1/2), d2 = rms(qdd_0 / (atol + rtol |q_0|)) (qdd_0 alone moves q by
        about 1 % of its tolerance), at most (t_end - t0) / 100; the controller grows it by up to 8
        a step."""
        q0 = self.x[:self.n]
        d2 = float(np.sqrt(np.mean((qdd / (self._atol_q + self.rtol * np.abs(q0))) ** 2))) if self.n else 0.0
        span = self.t_end - self.t0
        return min(0.1 / np.sqrt(d2) if d2 > 0 else span, span / 100.0)

    # -- the term's evaluations ---------------------------------------------------------------------
    def _constraint_velocity(self, t: float, q: np.ndarray, v: np.ndarray, G: np.ndarray) -> np.ndarray:
        """C_q v + C_t at (t, q) (on the compiled path C_t is the kernel's, `CompiledSystem.constraint_rates`,
        and 0 without drivers)."""
        if not self.n_c:
            return np.zeros(0)
        if self._compiled is not None:
            if self._scleronomic:
                return G @ v
            return G @ v + self._compiled.constraint_rates(t, q, v)[1]
        return G @ v + np.asarray(self._sys.time_derivative(t, q), dtype=float).reshape(self.n_c)

    def _consistent_accelerations(self, t, q, v, G):
        """(q'', lam) of [[M, C_q^T], [C_q, 0]] [q''; lam] = [Q; gamma] (least squares if singular)."""
        sys, n, m = self._sys, self.n, self.n_c
        M = np.asarray(sys.mass_matrix(q), float)
        Q = np.asarray(sys.forces(t, q, v), float)
        self.n_rhs += 1
        A = np.block([[M, G.T], [G, np.zeros((m, m))]])
        b = np.concatenate([Q, np.asarray(sys.gamma(t, q, v), float).reshape(m)])
        z = np.linalg.lstsq(A, b, rcond=None)[0]
        return z[:n], z[n:]

    def _split(self, y: np.ndarray):
        """(q, v, lam, mu) of y."""
        n, m = self.n, self.n_c
        return y[:n], y[n:2 * n], y[2 * n:2 * n + m], y[2 * n + m:]

    def _stage_residual(self, t: float, y: np.ndarray, yd: np.ndarray) -> np.ndarray:
        """M_full(y) y' - F(t, y) at one stage: (q' - v + C_q^T mu, M v' - Q + C_q^T lam, -C, -(C_q v + C_t))."""
        q, v, lam, mu = self._split(y)
        n = self.n
        M, Q, C, G = self._terms(t, q, v)
        return np.concatenate([yd[:n] - v + G.T @ mu, M @ yd[n:2 * n] - Q + G.T @ lam, self._eps_q * mu - C,
                               self._eps_v * lam - self._constraint_velocity(t, q, v, G)])

    def _F(self, t: float, y: np.ndarray, a: np.ndarray | None = None) -> np.ndarray:
        """F(t, y) = (v - C_q^T mu, Q - C_q^T lam [- M(q) a], C, C_q v + C_t): the right-hand side of
        M_full y' = F; with ``a`` the v rows carry -M(q) a (for J's d(M(q) a)/dq)."""
        return self._rhs(y, *self._terms(t, y[:self.n], y[self.n:2 * self.n], mass=a is not None), t, a)

    def _rhs(self, y, M, Q, C, G, t, a=None) -> np.ndarray:
        """F(t, y) of `_F` from the terms (M, Q, C, C_q) at y (M only with ``a``)."""
        q, v, lam, mu = self._split(y)
        Fv = Q - G.T @ lam
        if a is not None:
            Fv = Fv - M @ a
        return np.concatenate([v - G.T @ mu, Fv, C - self._eps_q * mu,
                               self._constraint_velocity(t, q, v, G) - self._eps_v * lam])

    # -- Jacobian and factorizations --------------------------------------------------------------
    def _position_rows(self, t: float, q: np.ndarray, v: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """(Q - C_q^T lam - M(q) a_n, C_q v + C_t) at q: the rows of F whose q-derivatives J needs by
        differences (the v rows with -M(q) a_n, the K_t of index3-alpha)."""
        M, Q, C, G = self._terms(t, q, v)
        Fv = Q - G.T @ lam - M @ self._a
        return np.concatenate([Fv, self._constraint_velocity(t, q, v, G)])

    def _forces_of_v(self, q: np.ndarray):
        """v -> Q(t, q, v) at fixed q (dQ/dv by differences: the forces alone)."""
        def forces(t, v):
            return self._terms(t, q, v, mass=False, constraints=False)[1]
        return forces

    def _jacobian(self) -> None:
        """J = dF/dy and M_full0 at (t_n, y_n) (module docstring), with C_q there."""
        n, m, N = self.n, self.n_c, self.N
        t, y = self.t, self._y
        q, v, lam, mu = self._split(y)
        sys = self._sys
        M, _, _, G = self._terms(t, q, v, forces=False)
        J = np.zeros((N, N))
        if sys.tangent is not None and m == 0 and sys.mass_matrix_constant:
            K, Cd = sys.tangent(t, q, v)
            J[:n, n:2 * n] = np.eye(n)
            J[n:, :n], J[n:, n:] = -np.asarray(K, float), -np.asarray(Cd, float)
        else:
            J[:n, n:2 * n] = np.eye(n)                            # q' = v - C_q^T mu (d(C_q^T mu)/dq: mu ~ 0)
            J[:n, 2 * n + m:] = -G.T
            J[n:2 * n, 2 * n:2 * n + m] = -G.T
            J[2 * n:2 * n + m, :n] = G                            # C
            J[2 * n + m:, n:2 * n] = G                            # C_q v + C_t
            J[2 * n:2 * n + m, 2 * n + m:] = -self._eps_q * np.eye(m)
            J[2 * n + m:, 2 * n:2 * n + m] = -self._eps_v * np.eye(m)
            rows = forward_difference_jacobian(lambda tt, qq: self._position_rows(tt, qq, v, lam), t, q)
            J[n:2 * n, :n], J[2 * n + m:, :n] = rows[:n], rows[n:]
            J[n:2 * n, n:2 * n] = forward_difference_jacobian(self._forces_of_v(q), t, v)
        M_full = np.zeros((N, N))
        M_full[:n, :n] = np.eye(n)
        M_full[n:2 * n, n:2 * n] = M
        self._jac = (J, M_full, G)
        self._lu = None
        self.n_jac += 1

    def _factor(self, h: float):
        """The real and complex LUs of gamma/h M_full0 - J and (alpha + i beta)/h M_full0 - J."""
        if self._lu is None or self._lu[0] != h:
            from scipy.linalg import LinAlgWarning                  # imported where used (startup)
            J, M_full = self._jac[:2]
            with warnings.catch_warnings():
                warnings.simplefilter("error", LinAlgWarning)         # an exactly zero pivot
                try:
                    self._lu = (h, Factorization(_GAMMA / h * M_full - J),
                                Factorization((_ALPHA + 1j * _BETA) / h * M_full - J.astype(complex)))
                except LinAlgWarning:
                    raise SingularIteration from None
            self.n_lu += 2
        return self._lu[1], self._lu[2]

    # -- the step -------------------------------------------------------------------------------
    def _step_impl(self) -> tuple[bool, str | None]:
        if self._compiled is not None:
            return self._kernel_step()
        n = self.n
        rejected, first, non_finite = False, self._poly is None, 0
        if self._f0 is None:
            self._f0 = self._start_terms(self.t, self._y)
        while True:
            trial = self._trial_interval(self._h_next)
            if trial is None:
                return False, self._underflow()
            t1, h = trial
            if self._crawling():
                return False, self._crawl_message()
            fresh = self._jac is None
            if fresh:
                self._jacobian()
            try:
                Z, newt = self._newton(h)
            except SingularIteration:
                return False, self._singular_message()
            except NewtonFailed as failure:
                non_finite += failure.non_finite
                if non_finite > NON_FINITE_RETRIES:        # the base guard of `step` reports it
                    self.t, self.x = t1, np.full(2 * n, np.nan)
                    return True, None
                self.n_rejected += 1
                self._h_next, rejected = h * failure.factor, True
                if not fresh:
                    self._jac = None                       # retry with a Jacobian at y_n
                continue
            err = self._error_norm(h, Z, first or rejected)
            if not np.isfinite(err):
                self.n_rejected += 1
                self._h_next, rejected = h / MAX_SHRINK, True
                continue
            fac = min(SAFETY, SAFETY * (2 * self._max_iter + 1) / (newt + 2 * self._max_iter))
            quot = max(1.0 / MAX_GROWTH, min(MAX_SHRINK, max(err, 1e-10) ** 0.25 / fac))
            if err > 1.0:
                self.n_rejected += 1
                self._h_next = h * 0.1 if first and not rejected else min(h / quot, h)
                rejected = True
                continue
            if self._h_acc is not None:                      # Gustafsson's predictive controller
                gus = self._h_acc / h * (err * err / self._err_acc) ** 0.25 / SAFETY
                quot = max(quot, max(1.0 / MAX_GROWTH, min(MAX_SHRINK, gus)))
            self._h_acc, self._err_acc = h, max(1e-2, err)
            h_new = h / quot
            if rejected:
                h_new = min(h_new, h)
            if self._theta <= KEEP_JACOBIAN_RATE and 1.0 <= h_new / h < KEEP_LU_RATIO:
                h_new = h                                  # keep the LU
            self._accept(t1, h, Z)
            if self._theta > KEEP_JACOBIAN_RATE:
                self._jac = None
            self._h_next = h_new
            return True, None

    def _crawling(self) -> bool:
        """Counts a trial step from t; True when a window of CRAWL_STEPS of them advanced t by less than
        CRAWL_STEPS CRAWL_FRACTION (t_end - t0), a mean step at which the span would take more than 1e9 trials:
        the run crawls (module docstring, "Singular configurations"); then the next window starts."""
        if self._crawl == 0:
            self._crawl_t = self.t
        self._crawl += 1
        if self._crawl < CRAWL_STEPS:
            return False
        self._crawl = 0
        return self.t - self._crawl_t < CRAWL_STEPS * self._crawl_step

    def _starting_values(self, h: float) -> np.ndarray:
        """Z_i^0: the last step's collocation polynomial extrapolated to t_n + c_i h, minus y_n (zero on
        the first step)."""
        if self._poly is None:
            return np.zeros((3, self.N))
        t_old, h_old, values = self._poly
        s = (self.t - t_old + RADAU_C * h) / h_old
        return np.stack([lagrange_weights(si) @ values for si in s]) - self._y

    def _newton(self, h: float) -> tuple[np.ndarray, int]:
        """The converged stage increments Z (3, N) and the number of iterations; `NewtonFailed`."""
        n = self.n
        lu1, lu2 = self._factor(h)
        Z = self._starting_values(h)
        y0 = self._y
        scale = np.concatenate([self._atol_q + self.rtol * np.abs(y0[:n]),
                                self._atol_v + self.rtol * np.abs(y0[n:2 * n])])
        faccon = max(self._faccon, EPS) ** 0.8
        theta, thq_old, dyn_old = self._theta, None, None
        t_stage = self.t + RADAU_C * h
        for k in range(self._max_iter):
            Yd = RADAU_AINV @ Z / h
            R = np.stack([self._stage_residual(t_stage[i], y0 + Z[i], Yd[i]) for i in range(3)])
            if not np.isfinite(R).all():
                raise NewtonFailed(0.25, non_finite=True)
            RW = -(RADAU_TI @ R)
            dW1 = lu1.solve(RW[0])
            dW23 = lu2.solve(RW[1] + 1j * RW[2])
            dZ = RADAU_T @ np.stack([dW1, dW23.real, dW23.imag])
            self.n_newton += 1
            if not np.isfinite(dZ).all():
                raise NewtonFailed(0.25, non_finite=True)
            dyn = float(np.sqrt(np.mean((dZ[:, :2 * n] / scale) ** 2))) if n else 0.0
            if k >= 1:
                thq = dyn / dyn_old
                theta = thq if thq_old is None else np.sqrt(thq * thq_old)
                thq_old = thq
                stalled = self._stalled(dZ, y0)
                if theta >= 0.99 and not stalled:
                    raise NewtonFailed(0.5)
                faccon = theta / (1.0 - theta) if theta < 0.99 else 99.0
                predicted = faccon * dyn * theta ** (self._max_iter - 1 - k) / self.newton_tol
                if predicted >= 1.0 and stalled:
                    self._faccon, self._theta = 1.0, theta
                    return Z + dZ, k + 1
                if predicted >= 1.0:
                    q_newt = max(1e-4, min(20.0, predicted))
                    raise NewtonFailed(0.8 * q_newt ** (-1.0 / (4 + self._max_iter - 1 - k)))
            dyn_old = max(dyn, EPS)
            Z = Z + dZ
            if faccon * dyn <= self.newton_tol:
                self._faccon, self._theta = faccon, theta
                return Z, k + 1
        raise NewtonFailed(0.5)

    def _stalled(self, dZ: np.ndarray, y0: np.ndarray) -> bool:
        """Corrections below Newton's tolerance measured against the largest component of q and of v,
        |dZ_q|_inf <= newton_tol rtol |q|_inf and likewise for v, though not against the component-wise
        scale atol + rtol |y_i|: near a singular configuration the round-off of the solve, amplified by
        the conditioning of C_q, stops their contraction there (measured on IFToMM A02 at t = 0.712 s,
        sigma_min / sigma_max of C_q = 0.0013: |dv| stalling at 3e-11 m/s with |v|_inf = 4.9 m/s, a velocity
        component near 0 with atol = 1e-9 in every step size down to 1e-14 s, a step-size underflow)."""
        n = self.n
        tol = self.newton_tol * self.rtol
        return bool(np.abs(dZ[:, :n]).max() <= tol * np.abs(y0[:n]).max()
                    and np.abs(dZ[:, n:2 * n]).max() <= tol * np.abs(y0[n:2 * n]).max())

    def _error_norm(self, h: float, Z: np.ndarray, filter_twice: bool) -> float:
        """The rms error of the step in units of the tolerances (module docstring: RADAU5's estimate,
        the multipliers' parts carried into q and v)."""
        G = self._jac[2]
        lu1 = self._lu[1]
        F0, M_full = self._f0
        mz = M_full @ (RADAU_ERROR_WEIGHTS @ Z) / h
        err = lu1.solve(self._differential(F0) + mz)
        y0, y1 = self._y, self._y + Z[2]
        norm = self._scaled_norm(err, h, y0, y1, G)
        if norm >= 1.0 and filter_twice:
            err = lu1.solve(self._differential(self._F(self.t, y0 + err)) + mz)
            norm = self._scaled_norm(err, h, y0, y1, G)
        return norm

    def _start_terms(self, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(F(t, y), M_full(y)) at the start of a step, for the error estimate."""
        n, N = self.n, self.N
        M, Q, C, G = self._terms(t, y[:n], y[n:2 * n])
        M_full = np.zeros((N, N))
        M_full[:n, :n] = np.eye(n)
        M_full[n:2 * n, n:2 * n] = M
        return self._rhs(y, M, Q, C, G, t), M_full

    def _differential(self, F: np.ndarray) -> np.ndarray:
        """F with its algebraic rows (C, C_q v + C_t) set to 0 for the error estimate (module
        docstring: they hold Newton's leftover, not the step's error)."""
        F = F.copy()
        F[2 * self.n:] = 0.0
        return F

    def _scaled_norm(self, err, h, y0, y1, G) -> float:
        """rms of (e_q / s_q, e_v / s_v, h C_q^T e_mu / s_q, h e_lam / s_lam) (module docstring)."""
        n, m = self.n, self.n_c
        e_q, e_v, e_lam, e_mu = self._split(err)
        s_q = self._atol_q + self.rtol * np.maximum(np.abs(y0[:n]), np.abs(y1[:n]))
        s_v = self._atol_v + self.rtol * np.maximum(np.abs(y0[n:2 * n]), np.abs(y1[n:2 * n]))
        parts = [e_q / s_q, e_v / s_v]
        if m:
            lam = max(float(np.abs(self._split(y0)[2]).max()), float(np.abs(self._split(y1)[2]).max()))
            parts += [h * (G.T @ e_mu) / s_q, h * e_lam / (self._atol_lam + self.rtol * lam)]
        w = np.concatenate(parts)
        return float(np.sqrt(np.mean(w * w))) if w.size else 0.0

    def _accept(self, t1: float, h: float, Z: np.ndarray) -> None:
        """Take the step: y_{n+1} = Y_3; keep the collocation polynomial, the acceleration v' at t_{n+1}
        (J's next point) and F(t_{n+1}, y_{n+1})."""
        n = self.n
        y0 = self._y
        self._poly = (self.t, h, np.vstack([y0, y0 + Z]))
        self._a = (RADAU_AINV @ Z / h)[2, n:2 * n]
        self._y = y0 + Z[2]
        self.t = t1
        self.x = self._y[:2 * n].copy()
        self.lam = self._split(self._y)[2].copy()
        self._f0 = self._start_terms(t1, self._y) if np.isfinite(self._y).all() else None

    def _kernel_laws(self, t: float, h: float) -> bool:
        """The laws' time rows at t and the stage times t + c_i h, written for the kernel (csrc ``radau_laws``);
        False when a law fails (its `UserFunctionError` kept for the message)."""
        try:
            self._klaws[:] = self._compiled.law_rows(np.concatenate([[t], t + RADAU_C * h]))
        except UserFunctionError as err:
            self._law_failure = err
            return False
        return True

    def _kernel_steps(self, wanted: np.ndarray, near_rtol: float, max_steps: int, step_point: bool = False):
        """Steps in the kernel (csrc ``radau_steps``) up to the one that reaches the first of the times ``wanted``
        (sorted; within near_rtol h; with ``step_point`` only one step), t_end, ``max_steps`` (at most
        STEPS_PER_CALL) or a failure: (status, steps taken, the accepted steps' points (k, 1 + 2 n_q + n_c): t, q,
        v, lam, the outputs reached in the last step (rows (j, 2 n_q + n_c): q, v, lam; done (j,): which the
        kernel computed)).  The counters but n_steps, the state and the controller's (t, x, lam, the last
        step's polynomial, h_next, theta) are updated from the kernel's."""
        before = self._kcount.copy()
        n, m = self.n, self.n_c
        width = 1 + 2 * n + m
        t_stop = -np.inf if step_point else float(wanted[0]) if wanted.size else np.inf
        wanted = np.ascontiguousarray(wanted, dtype=float)
        rows, done = np.empty((len(wanted), 2 * n + m)), np.zeros(len(wanted) + 1, dtype=np.int64)
        status = self._compiled.radau_steps(self._row, self._katol, self._ky, self._ka, self._kpoly, self._kscal,
                                            self._kjac, self._klu, self._kpiv, self._kstart, self._kscratch,
                                            self._kcount, self._klaws, self._kterms, t_stop, near_rtol,
                                            self._kpoints[:max_steps * width], wanted, rows, done)
        steps, rejected, jac, lu, rhs, newton = (int(x) for x in self._kcount - before)
        self.n_rejected += rejected
        self.n_jac += jac
        self.n_lu += lu
        self.n_rhs += rhs
        self.n_newton += newton
        n, N, scal = self.n, self.N, self._kscal
        self._y = self._ky.copy()
        self._a = self._ka.copy()
        self.t, self.x = float(scal[RS_T]), self._y[:2 * n].copy()
        self.lam = self._split(self._y)[2].copy()
        self._h_next, self._theta, self._faccon = float(scal[RS_H_NEXT]), float(scal[RS_THETA]), float(scal[RS_FACCON])
        if scal[RS_HAS_POLY]:
            self._poly = (float(scal[RS_T_OLD]), float(scal[RS_H_OLD]), self._kpoly.reshape(4, N).copy())
        accepted = steps - (status == RUN_NON_FINITE)
        reached = int(done[-1])
        return (status, steps, self._kpoints[:accepted * width].reshape(accepted, width).copy(), rows[:reached],
                done[:reached].astype(bool))

    def _kernel_failure(self, status: int) -> str | None:
        """The message of the kernel's failing ``status`` (None: the steps went on or a state to check)."""
        if status == RUN_UNDERFLOW:
            return self._underflow()
        if status == RUN_SINGULAR:
            return self._singular_message()
        if status == RUN_LAW_FAILED:
            return self._step_failure(self.t, self._law_failure)
        if status == RUN_CRAWL:
            return self._crawl_message()
        return None

    def _kernel_step(self) -> tuple[bool, str | None]:
        """One step in the kernel, for `step` (simulate calls `advance` instead but with an integrand, whose
        quadrature needs every step's dense output); `step` counts it and checks the state."""
        status = self._kernel_steps(np.zeros(0), 0.0, 1, step_point=True)[0]
        message = self._kernel_failure(status)
        return message is None, message

    def _advance(self, t_out, near_rtol: float, controls=None, every_step: bool = False):
        """Steps in the kernel up to the one that reaches the first time of ``t_out`` (sorted, after t; None:
        every step point is a row), for `simulate`: returns the rows reached, (times, states (k, 2 n_q),
        multipliers (k, n_c)), at the times of ``t_out`` (all in the last step: simulate's rule, the step point
        within ``near_rtol`` h, else the dense output) and, with ``every_step`` or without ``t_out``, at every
        step point (the kernel's points); with ``every_step`` a fourth array says which rows are step points.
        Status, message, counters and the state are updated as by `step`.  Digital controllers (``controls``)
        run with index3-alpha, not here (`flexmbs.run` refuses them)."""
        if controls is not None:
            raise ValueError("`controls`: digital controllers run with method 'index3-alpha', not with radau-dae")
        wanted = np.zeros(0) if t_out is None else np.asarray(t_out, dtype=float)
        t_a, x_a = self.t, self.x
        tic = time.perf_counter()
        status, steps, points, rows, done = self._kernel_steps(wanted[:OUTPUTS_PER_CALL], near_rtol, self._chunk)
        if steps == self._chunk:                   # a call of about CHUNK_SECONDS (index3-alpha's rule)
            rate = steps / max(time.perf_counter() - tic, 1e-6)
            self._chunk = int(min(max(rate * CHUNK_SECONDS, FIRST_CALL_STEPS), STEPS_PER_CALL))
        self.n_steps += steps
        message = self._kernel_failure(status)
        if steps:                       # the state before the last step taken
            self.t_old = float(self._kscal[RS_T_PREV])
            self.x_old = (x_a if steps == 1 else points[-1, 1:1 + 2 * self.n].copy()) if status == RUN_NON_FINITE \
                else self._poly[2][0, :2 * self.n].copy()
        if message is not None:
            self.status, self.message = "failed", message
        elif steps:
            self._check_state()
        if len(rows) == OUTPUTS_PER_CALL and status == RUN_OK:     # more outputs in the step than handed over
            near = near_rtol * (self.t - self.t_old)
            more = wanted[OUTPUTS_PER_CALL:int(np.searchsorted(wanted, self.t + near, side="right"))]
            rows = np.concatenate([rows, np.full((len(more), rows.shape[1]), np.nan)])
            done = np.concatenate([done, np.zeros(len(more), dtype=bool)])
        rows = self._rows(points, wanted[:len(rows)], rows, done, t_out is None or every_step, near_rtol)
        return rows if every_step else rows[:3]

    def _rows(self, points: np.ndarray, times: np.ndarray, rows: np.ndarray, done: np.ndarray, step_points: bool,
              near_rtol: float):
        """(times, states, multipliers, is_step) of the steps of a call: the outputs at ``times``, all in the
        last step [t_old, t], from the kernel's ``rows`` (q, v, lam) where ``done``, else from `dense` (C_q lost
        rank there: numpy's least squares; or beyond the OUTPUTS_PER_CALL handed over) and, with
        ``step_points``, the accepted steps' ``points`` (after a step point at a tie); the step point's state
        within ``near_rtol`` h (simulate's rule)."""
        n = self.n
        x, lam = rows[:, :2 * n].copy(), rows[:, 2 * n:].copy()
        near = near_rtol * (self.t - self.t_old)
        for k in np.flatnonzero(~done):
            try:
                at_end = abs(times[k] - self.t) <= near
                x[k] = self.x if at_end else self.dense(times[k])
                lam[k] = self.lam if at_end else self.dense_multipliers(times[k])
            except (ArithmeticError, np.linalg.LinAlgError) as err:       # as simulate's outputs of a step
                self.stop(f"The outputs of the step from t = {self.t_old:.6g} to t = {self.t:.6g} failed: {err}")
                times, x, lam = times[:k], x[:k], lam[:k]
                break
        if not step_points:
            return times, x, lam, np.zeros(len(times), dtype=bool)
        t_all = np.concatenate([points[:, 0], times])
        order = np.argsort(t_all, kind="stable")                  # a tie: the step point first
        return (t_all[order], np.concatenate([points[:, 1:1 + 2 * n], x])[order],
                np.concatenate([points[:, 1 + 2 * n:], lam])[order],
                np.concatenate([np.ones(len(points), dtype=bool), np.zeros(len(times), dtype=bool)])[order])

    def _singular_message(self) -> str:
        """The message of a singular iteration matrix at (t, x): the constraints that cannot all hold, if the
        System names them, else C_q's loss of rank and what to do."""
        head = f"radau-dae's iteration matrix is singular at t = {self.t:.6g}"
        check = self._sys.over_constrained
        cause = check(self.t, self.x[:self.n]) if check is not None and self.n_c else None
        if cause:
            return f"{head}: {cause}"
        return (f"{head}: C_q has lost rank there (a singular configuration, or constraints that became "
                "redundant: System.mobility names them). Use method 'index3-alpha' (option `regularization`), "
                "which passes singular configurations.")

    def _underflow(self) -> str:
        head = (f"Step-size underflow at t = {self.t:.6g}: radau-dae rejected every step down to {self._h_next:.3g} s "
                "(Newton's iteration or the error estimate failed at every step size)")
        check = self._sys.over_constrained
        cause = check(self.t, self.x[:self.n]) if check is not None and self.n_c else None
        if cause:
            return f"{head}: {cause}"
        ratio = self._rank_ratio()
        if ratio < NEAR_SINGULAR:
            rows = ("the exact GGL rows (`relaxation` = 0) do not pass; set `relaxation` (default 1e-6 rtol s)"
                    if self._eps_v == 0 else
                    f"the regularised rows (`relaxation` = {self.relaxation:g} s) did not pass it; raise `relaxation`")
            return (f"{head}: C_q is nearly singular there (smallest / largest singular value {ratio:.2g}), a "
                    f"singular configuration of the mechanism, which {rows} or use method 'index3-alpha' (option "
                    "`regularization`), which passes it.")
        return (f"{head}; loosen `rtol`/`atol`, or raise `newton_max_iter`.")

    def _crawl_message(self) -> str:
        """The message of a crawl: where, how slow, the singular configuration if C_q is nearly singular there
        (round-off in the constraint rows, amplified by C_q's conditioning, above the tolerances: module
        docstring, "Singular configurations"), and the options to change."""
        head = (f"radau-dae crawls at t = {self.t:.6g}: its last {CRAWL_STEPS} trial steps advanced t by less than "
                f"{CRAWL_STEPS * self._crawl_step:.3g} s (a mean step below {CRAWL_FRACTION:g} of the span: the run "
                "would take more than 1e9 steps)")
        ratio = self._rank_ratio()
        if ratio < NEAR_SINGULAR:
            return (f"{head}: C_q is nearly singular there (smallest / largest singular value {ratio:.2g}), a "
                    "singular configuration of the mechanism, where the round-off of the constraint rows, amplified "
                    f"by C_q's conditioning, exceeds the tolerances (rtol = {self.rtol:g}); loosen `rtol`/`atol`, "
                    f"raise `relaxation` (now {self.relaxation:g} s; 1e-11 s passes IFToMM A02 at rtol 1e-8) or "
                    "use method 'index3-alpha' (option `regularization`), which passes it.")
        return f"{head}; loosen `rtol`/`atol`, or raise `newton_max_iter`."

    def _rank_ratio(self) -> float:
        """sigma_min / sigma_max of C_q at the current state (1 without constraints)."""
        if not self.n_c:
            return 1.0
        sigma = np.linalg.svd(self._sys.constraints(self.t, self.x[:self.n])[1], compute_uv=False)
        return float(sigma[-1] / sigma[0]) if sigma[0] > 0 else 0.0

    # -- dense output -----------------------------------------------------------------------------
    def _dense_impl(self, t: float) -> np.ndarray:
        """The collocation polynomial at t, q projected onto C = 0 and v onto C_q v + C_t = 0."""
        n = self.n
        y = self._polynomial(t)
        q, v = y[:n], y[n:2 * n]
        if not self.n_c:
            return np.concatenate([q, v])
        for _ in range(4):                              # Gauss-Newton, minimum-norm corrections
            C, G = self._sys.constraints(t, q)
            if float(np.abs(C).max()) <= 64 * EPS * max(1.0, float(np.abs(q).max())):
                break
            q = q - np.linalg.lstsq(G, C, rcond=None)[0]
        G = self._sys.constraints(t, q)[1]
        v = v - np.linalg.lstsq(G, self._constraint_velocity(t, q, v, G), rcond=None)[0]
        return np.concatenate([q, v])

    def _polynomial(self, t: float) -> np.ndarray:
        t_old, h, values = self._poly
        return lagrange_weights((t - t_old) / h) @ values

    def dense_multipliers(self, t: float) -> np.ndarray:
        """The multipliers lam at t in the last step: the collocation polynomial's."""
        t = float(t)
        if t == self.t or self._poly is None:
            return self.lam
        return self._split(self._polynomial(t))[2].copy()
