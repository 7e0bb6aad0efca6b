"""Time integration of the formulations' equations of motion.

``simulate(formulation, t_span, x0, method, ...)`` runs one of `INTEGRATORS`:

.. code:: text

    name                class               order  step      needs
    "RK45"              RK45                5      adaptive  M_full x' = F(t, x)
    "DOP853"            DOP853              8      adaptive  M_full x' = F(t, x)
    "AB4"               AdamsBashforth4     4      fixed     M_full x' = F(t, x)
    "midpoint"          ImplicitMidpoint    2      fixed     M_full x' = F(t, x), jacobian
    "generalized-alpha" GeneralizedAlpha    2      fixed     M q'' = f(t, q, v)  (second_order)
    "Radau"             Radau               5      adaptive  M_full x' = F(t, x), jacobian
    "BDF"               BDF                 1..5   adaptive  M_full x' = F(t, x), jacobian
    "index3-alpha"      Index3GeneralizedAlpha 2   fixed     M q'' + C_q^T lam = Q, C = 0 (ConstrainedProblem)
    "index3-alpha-adaptive" Index3AdaptiveAlpha 2  adaptive  the same, rtol/atol on q and v (both paths)
    "hht"               Index3HHT           2      fixed     the same, HHT-alpha coefficients
    "newmark"           Index3Newmark       1      fixed     the same, Newmark coefficients (gamma > 1/2)
    "rattle"            Rattle              2      fixed     the same, holonomic (symplectic, reversible; M(q): Newton)
    "radau-dae"         RadauDAE            5      adaptive  the same as GGL index 2, Radau IIA, rtol/atol on q and v (numpy path)
    "exact"             ExactLinear         exact  outputs   x' = A x + c + B f(t) (steady, linear)

See ``docs/integrators.md``.
"""
from .adams_bashforth import AdamsBashforth4
from .base import Integrator
from .budget import RunSizeWarning, check_run_size
from .exact import ExactLinear
from .generalized_alpha import GeneralizedAlpha
from .index3_alpha import ConstrainedProblem, Index3AdaptiveAlpha, Index3GeneralizedAlpha, Index3HHT, Index3Newmark
from .midpoint import ImplicitMidpoint
from .radau_dae import RadauDAE
from .rattle import Rattle
from .rk import BDF, DOP853, RK45, Radau
from .simulate import INTEGRATORS, Solution, simulate

__all__ = [
    "Integrator",
    "RK45",
    "DOP853",
    "AdamsBashforth4",
    "ImplicitMidpoint",
    "GeneralizedAlpha",
    "Index3GeneralizedAlpha",
    "Index3AdaptiveAlpha",
    "Index3HHT",
    "Index3Newmark",
    "ConstrainedProblem",
    "Rattle",
    "RadauDAE",
    "Radau",
    "BDF",
    "ExactLinear",
    "INTEGRATORS",
    "Solution",
    "simulate",
    "RunSizeWarning",
    "check_run_size",
]
