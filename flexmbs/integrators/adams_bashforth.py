"""Fourth-order Adams-Bashforth with a classical Runge-Kutta start (as used in ref. [1]).

Explicit, fixed step, on ``x' = f(t, x) = term.rhs(t, x)``:

.. code:: text

    x_{k+1} = x_k + h/24 (55 f_k - 59 f_{k-1} + 37 f_{k-2} - 9 f_{k-3})      k >= 3
    x_1, x_2, x_3: classical RK4 (k1..k4), which supplies f_0 .. f_3

One evaluation of ``rhs`` per AB4 step (four per RK4 step), made after the step is accepted
and corrected by the term (``correct_state``, e.g. a constraint projection), so that the
history f_k, f_{k-1}, ... holds derivatives at the corrected states: the method stays the same
multistep formula on the projected sequence x_k, and the history is not restarted.  A step shorter than ``h`` (the
last one, when ``h`` does not divide the interval) is an RK4 step, which keeps the order.
Dense output: cubic Hermite from x and f at both ends (no extra evaluation).

References
----------
.. [1] C. M. Pappalardo, D. Guida, On the computational methods for solving the
       differential-algebraic equations of motion of multibody systems, Machines 6 (2018) 20,
       doi:10.3390/machines6020020.
.. [2] E. Hairer, S. P. Norsett, G. Wanner, Solving Ordinary Differential Equations I,
       2nd ed., Springer (1993), sec. III.1, doi:10.1007/978-3-540-78862-1.
"""
from __future__ import annotations

import numpy as np

from .base import Integrator

__all__ = ["AdamsBashforth4"]


class AdamsBashforth4(Integrator):
    """Adams-Bashforth, 4 steps, order 4, started by 3 classical RK4 steps.

    ``method="AB4"``; needs ``h``.  Explicit: one evaluation of the right-hand side per step,
    stable only for ``h`` well below the period of the highest mode.

    Other Parameters
    ----------------
    divergence_limit : float, default 1e12
        The run stops with status "diverged" when ``|x|_inf`` exceeds it.
    """

    name = "AB4"
    order = 4
    adaptive = False
    needs = "first_order"
    explicit = True
    B = np.array([55.0, -59.0, 37.0, -9.0]) / 24.0      # weights of f_k, f_{k-1}, f_{k-2}, f_{k-3}
    n_start = 3                                          # RK4 steps before AB4 has its 4 values

    def _setup(self) -> None:
        self._f_hist = [self._rhs(self.t, self.x)]       # f_k, f_{k-1}, ... newest first
        self._xdot_new = self._f_hist[0]

    def _rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        self.n_rhs += 1
        return self.term.rhs(t, x)

    def _step_impl(self) -> tuple[bool, str | None]:
        step = self._next_step()
        if step is None:
            return False, self._underflow_message()
        t_next, h = step
        t, x, f_hist = self.t, self.x, self._f_hist
        if h == self.h and len(f_hist) == 4:
            x_new = x + h * (self.B @ np.asarray(f_hist))
        else:
            x_new = self._rk4(t, x, f_hist[0], h)
            if h != self.h:                                # equal spacing lost: start again
                f_hist = f_hist[:0]
        self._f_hist = f_hist[:3]                       # f_new is added by _after_step
        self.t, self.x = t_next, x_new
        return True, None

    def _after_step(self) -> None:
        """f_{k+1} = f(t_{k+1}, x_{k+1}) at the accepted state, after the formulation's correction.

        Evaluated here rather than in the step so that a constraint projection of x_{k+1}
        (the term's ``correct_state``) is seen by the history: every stored f_j is the
        derivative at the corrected x_j, start-up RK4 steps included, at one evaluation per step.
        """
        f_new = self._rhs(self.t, self.x)
        self._f_hist = [f_new] + self._f_hist
        self._xdot_new = f_new

    def _rk4(self, t: float, x: np.ndarray, k1: np.ndarray, h: float) -> np.ndarray:
        """Classical Runge-Kutta step, k1 = f(t, x) given."""
        k2 = self._rhs(t + h / 2, x + h / 2 * k1)
        k3 = self._rhs(t + h / 2, x + h / 2 * k2)
        k4 = self._rhs(t + h, x + h * k3)
        return x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
