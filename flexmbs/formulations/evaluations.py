"""Where the index-1 formulations of a System take its terms: the compiled kernel or the System's numpy.

The accelerations of formulations "lagrange" (augmented) and "udwadia-kalaba" need M, Q, C_q and
gamma at every evaluation, the projections after each step (coordinate partitioning) C, C_q and C_t.
On the numpy path the System evaluates them body by body and joint by joint (about a hundred Python
and numpy calls for the triple pendulum, docs/benchmarks.md sec. 6); on the compiled path
`KernelEvaluations` takes M, Q, C and C_q from one kernel call (`flexmbs.compiled.CompiledSystem.terms`,
the call method radau-dae makes), gamma and C_t from a second one (`CompiledSystem.constraint_rates`;
C_t = 0 without one when the kernel's rows are scleronomic, no drivers).  Each formulation's
own formula (the saddle-point solve, the Udwadia-Kalaba pseudo-inverse, the partitioning's Newton
iteration) stays its own, in numpy, on these small matrices: only the evaluation moves.

`choose` is the option ``kernel`` ("auto", "compiled", "numpy"), as index3-alpha's and radau-dae's:
"auto" takes the kernel when the System qualifies and says why not otherwise.
"""
from __future__ import annotations

import numpy as np

__all__ = ["KernelEvaluations", "choose"]


class KernelEvaluations:
    """The System's evaluations of the index-1 formulations, M, Q, C and C_q by the compiled kernel.

    Has the System's ``residual``, ``jacobian``, ``time_derivative``, ``gamma``, ``n_q`` and ``n_c``,
    so that a stabilisation's ``correct`` takes it in the System's place.  C and C_q of the last
    (t, q) are kept: the partitioning asks for both at one state, and they do not depend on v.
    """

    def __init__(self, system, compiled):
        self.system, self.compiled = system, compiled
        self.n_q, self.n_c = system.n_q, system.n_c
        self._zero_v = np.zeros(system.n_q)
        self._kept = (None, None, None)          # (t, q's bytes, (C, C_q))

    def terms(self, t: float, q: np.ndarray, v: np.ndarray):
        """(M, Q, C, C_q) at (t, q, v): one kernel call."""
        M, Q, C, Cq = self.compiled.terms(t, q, v)
        self._kept = (t, q.tobytes(), (C, Cq))
        return M, Q, C, Cq

    def constraint_terms(self, t: float, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(C, C_q) at (t, q), the kept ones when (t, q) is the last state evaluated."""
        kept_t, kept_q, kept = self._kept
        if kept_t == t and kept_q == q.tobytes():
            return kept
        return self.terms(t, q, self._zero_v)[2:]

    def residual(self, t: float, q: np.ndarray) -> np.ndarray:
        """C(q, t)."""
        return self.constraint_terms(t, q)[0]

    def jacobian(self, t: float, q: np.ndarray) -> np.ndarray:
        """C_q(q, t)."""
        return self.constraint_terms(t, q)[1]

    def time_derivative(self, t: float, q: np.ndarray) -> np.ndarray:
        """C_t: zero when the kernel's rows are scleronomic (no drivers), else the kernel's (it depends
        on t and q only)."""
        if self.compiled.scleronomic:
            return np.zeros(self.n_c)
        return self.compiled.constraint_rates(t, q, self._zero_v)[1]

    def gamma(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """gamma of C_q q'' = gamma, by the kernel (csrc ``constraint_rates``)."""
        return self.compiled.constraint_rates(t, q, v)[0]


def choose(system, kernel: str, refusal: str | None = None) -> tuple[KernelEvaluations | None, str, str | None]:
    """(evaluations, path, reason) for option ``kernel``: the `KernelEvaluations` of ``system`` and
    "compiled" when the kernel takes it, else (None, "numpy", why not).  ``refusal``: why the
    formulation itself keeps the numpy path for this system (None: it does not).

    Raises
    ------
    ValueError
        ``kernel`` not one of `flexmbs.compiled.KERNEL_CHOICES`, or "compiled" for a system the kernel does not take
        (the message says why).
    """
    from ..compiled import choose_kernel
    from ..system import System
    if refusal is None and not isinstance(system, System):
        refusal = f"the equations are a {type(system).__name__}, not a flexmbs.System"
    initial = (system.initial_coordinates(), system.initial_velocities()) if refusal is None else None
    compiled, reason = choose_kernel(kernel, system.compiled if refusal is None else None, refusal,
                                     check=lambda c: c.terms(0.0, *initial))        # an old kernel: refused
    if compiled is None:
        return None, "numpy", reason
    return KernelEvaluations(system, compiled), "compiled", None
