"""Adaptive methods from SciPy: explicit Runge-Kutta (RK45, DOP853) and implicit Radau, BDF.

Each wraps a public ``scipy.integrate.OdeSolver`` on ``x' = term.rhs(t, x)`` and uses
its ``step()``, ``dense_output()`` and counters ``nfev, njev, nlu``:

.. code:: text

    method   scipy class  declared order  dense output               Jacobian
    RK45     RK45         5               quartic interpolant        -
    DOP853   DOP853       8               7th-order interpolant      -
    Radau    Radau        5               cubic collocation poly.    M_full^{-1} J (dense)
    BDF      BDF          variable 1..5   current BDF polynomial     M_full^{-1} J (dense)

The implicit ones receive ``jac(t, x) = M_full(t)^{-1} J(t)``: J from the term's ``jacobian``
and M_full, recomputed only when its ``jacobian_key(t)`` changes (then ``M_full`` is
factorized by sparse LU, counted in ``n_lu``) and solved densely (fine for small models; a
warning above 2000 states).

``n_rejected`` of RK45/DOP853 is the number of rejected trial steps, from the function
evaluations (every trial costs ``n_stages`` evaluations); scipy's Radau and BDF do not expose
their rejections, so ``n_rejected`` stays 0 for them.

References
----------
.. [1] J. R. Dormand, P. J. Prince, A family of embedded Runge-Kutta formulae, J. Comput.
       Appl. Math. 6 (1980) 19-26, doi:10.1016/0771-050X(80)90013-3.
.. [2] E. Hairer, S. P. Norsett, G. Wanner, Solving Ordinary Differential Equations I,
       2nd ed., Springer (1993), sec. II.10 (DOP853), doi:10.1007/978-3-540-78862-1.
.. [3] E. Hairer, G. Wanner, Solving Ordinary Differential Equations II, 2nd ed., Springer
       (1996), sec. IV.8 (RADAU5), doi:10.1007/978-3-642-05221-7.
.. [4] L. F. Shampine, M. W. Reichelt, The MATLAB ODE suite, SIAM J. Sci. Comput. 18 (1997)
       1-22, doi:10.1137/S1064827594276424 (the NDF/BDF scheme of scipy's BDF).
"""
from __future__ import annotations

import warnings
from typing import ClassVar

import numpy as np

from .base import Integrator
from ..lazy import LazyModule

sparse = LazyModule("scipy.sparse")

__all__ = ["RK45", "DOP853", "Radau", "BDF"]

DENSE_JACOBIAN_WARN_ABOVE = 2000


class ScipyIntegrator(Integrator):
    """Adaptive method that wraps a ``scipy.integrate.OdeSolver`` subclass on the term's ``rhs``.

    ``rtol`` and ``atol`` set the accuracy; ``h`` is the first trial step (default: scipy's
    own choice).

    Other Parameters
    ----------------
    max_step : float, default inf
        Largest step [s] the error control may take.
    divergence_limit : float, default 1e12
        The run stops with status "diverged" when ``|x|_inf`` exceeds it.
    """

    adaptive = True
    needs = "first_order"
    uses_tolerances = True
    method_options = {"max_step": np.inf}
    solver_name: ClassVar[str]            # the scipy.integrate class (imported when first used)

    @property
    def solver_class(self):
        from scipy import integrate
        return getattr(integrate, self.solver_name)
    uses_jacobian: ClassVar[bool] = False

    def _setup(self) -> None:
        self._nonfinite_at: float | None = None
        self._dense_output = None
        self._own_lu = 0                                  # LUs of M_full for the Jacobian
        kwargs = {"rtol": self.rtol, "atol": self.atol, "max_step": self.options["max_step"]}
        if self.h is not None:
            kwargs["first_step"] = min(self.h, self.t_end - self.t0)
        if self.uses_jacobian:
            n = self.term.n_state
            if n > DENSE_JACOBIAN_WARN_ABOVE:
                warnings.warn(f"'{self.name}' uses a dense {n} x {n} Jacobian; for models with more "
                              f"than {DENSE_JACOBIAN_WARN_ABOVE} states prefer 'midpoint' or "
                              "'generalized-alpha' (sparse LU).", stacklevel=3)
            self._jac_key = self._jac_value = None
            kwargs["jac"] = self._jac
        with np.errstate(all="ignore"):
            self._solver = self.solver_class(self._fun, self.t0, self.x.copy(), self.t_end, **kwargs)
        self._sync_counters()

    def _fun(self, t: float, x: np.ndarray) -> np.ndarray:
        xdot = self.term.rhs(t, x)
        if self._nonfinite_at is None and not np.all(np.isfinite(xdot)):
            self._nonfinite_at = t
        return xdot

    def _jac(self, t: float, x: np.ndarray) -> np.ndarray:
        """d(x')/dx = M_full(t)^{-1} J(t), dense; recomputed only when the Jacobian key changes."""
        key = self.term.jacobian_key(t)
        if self._jac_value is None or key != self._jac_key:
            J = self.term.jacobian(t, x)
            self.n_jac += 1
            J = J.toarray() if sparse.issparse(J) else np.asarray(J, dtype=float)
            from scipy.sparse.linalg import splu
            M_lu = splu(sparse.csc_matrix(self._mass_matrix_full(t)))
            self._own_lu += 1
            self._jac_key, self._jac_value = key, M_lu.solve(J)
        return self._jac_value

    def _sync_counters(self) -> None:
        self.n_rhs = self._solver.nfev
        self.n_lu = self._solver.nlu + self._own_lu

    def _step_impl(self) -> tuple[bool, str | None]:
        nfev = self._solver.nfev
        message = self._trial_step()
        self._sync_counters()
        self._count_rejected(self._solver.nfev - nfev)
        if self._solver.status == "failed":
            cause = ("" if self._nonfinite_at is None else " The right-hand side returned non-finite "
                     f"values first at t = {self._nonfinite_at:.6g}.")
            return False, (f"Step-size underflow at t = {self._solver.t:.6g} ({message}).{cause} The "
                           "solution may be singular or the model unstable; if the problem is stiff, try "
                           "an implicit method ('Radau', 'BDF', 'midpoint') or looser `rtol`/`atol`.")
        self.t, self.x = float(self._solver.t), np.array(self._solver.y)
        return True, None

    def _trial_step(self) -> str | None:
        """One step of the scipy solver (its message)."""
        return self._solver.step()

    def _count_rejected(self, nfev_step: int) -> None:
        """Rejected trials of the step (none counted by default)."""

    def _after_step(self) -> None:
        self._dense_output = None

    def _state_corrected(self) -> None:
        """Hand the corrected state to the scipy solver: y (and BDF's D[0], the current value of
        its difference table), and f(t, y) where the method keeps it (RK45/DOP853: first stage of
        the next step; Radau).  The dense output of the last step still ends at the uncorrected
        value (the difference is the size of the correction)."""
        s = self._solver
        s.y = self.x.copy()
        if self.solver_name == "BDF":
            s.D[0] = s.y
        if hasattr(s, "f"):
            s.f = s.fun(s.t, s.y)
        self._sync_counters()

    def _dense_impl(self, t: float) -> np.ndarray:
        if self._dense_output is None:
            self._dense_output = self._solver.dense_output()
            self._sync_counters()
        return self._dense_output(t)


class ExplicitRK(ScipyIntegrator):
    """Embedded explicit Runge-Kutta pair; every trial step costs ``n_stages`` evaluations.

    A trial step whose stage meets an arithmetic failure of the right-hand side (a singular
    saddle-point matrix, say, at a stage far into a stiff contact or stop) is rejected like one
    whose error is too large: the step is retried at a quarter of its size, at most
    ``STAGE_FAILURE_RETRIES`` times, before the failure stops the run.  scipy's explicit
    Runge-Kutta step changes its state (t, y, f, h) only after all its stages are evaluated, so
    a failed trial leaves it at the last accepted step.
    """

    explicit = True
    STAGE_FAILURE_RETRIES = 12           # 4^-12 = 6e-8 of the step that failed

    def _trial_step(self) -> str | None:
        self._failed_nfev = 0
        for _ in range(self.STAGE_FAILURE_RETRIES):
            nfev = self._solver.nfev
            try:
                return self._solver.step()
            except ArithmeticError:
                self._solver.h_abs *= 0.25
                self.n_rejected += 1
                self._failed_nfev += self._solver.nfev - nfev
        return self._solver.step()

    def _count_rejected(self, nfev_step: int) -> None:
        """The trials of the step that completed their stages, less the accepted one (the trials
        stopped by a stage's failure are counted in `_trial_step`)."""
        trials = (nfev_step - self._failed_nfev) // self.solver_class.n_stages
        self.n_rejected += max(trials - 1, 0)


class RK45(ExplicitRK):
    """Dormand-Prince 5(4), scipy's ``RK45`` [1]_ (local extrapolation: order 5).

    ``method="RK45"``.  Options (see `ScipyIntegrator`): ``max_step`` (default inf),
    ``divergence_limit`` (default 1e12).
    """

    name = "RK45"
    order = 5
    solver_name = "RK45"


class DOP853(ExplicitRK):
    """Dormand-Prince 8(5,3), scipy's ``DOP853`` [2]_.

    ``method="DOP853"``.  Options (see `ScipyIntegrator`): ``max_step`` (default inf),
    ``divergence_limit`` (default 1e12).
    """

    name = "DOP853"
    order = 8
    solver_name = "DOP853"


class Radau(ScipyIntegrator):
    """Implicit Radau IIA, 3 stages, order 5, scipy's ``Radau`` [3]_; L-stable.

    ``method="Radau"``.  Options (see `ScipyIntegrator`): ``max_step`` (default inf),
    ``divergence_limit`` (default 1e12).
    """

    name = "Radau"
    order = 5
    solver_name = "Radau"
    uses_jacobian = True
    requires = ("jacobian",)


class BDF(ScipyIntegrator):
    """Variable-order (1 to 5) BDF/NDF, scipy's ``BDF`` [4]_; declared order is the maximum, 5.

    ``method="BDF"``.  Options (see `ScipyIntegrator`): ``max_step`` (default inf),
    ``divergence_limit`` (default 1e12).
    """

    name = "BDF"
    order = 5
    solver_name = "BDF"
    uses_jacobian = True
    requires = ("jacobian",)
