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

Each name is imported from its module at its first use (`flexmbs.lazy.lazy_package`), and
`INTEGRATORS` imports the module of the method a run asks for (`flexmbs.lazy.LazyTable`): a run
loads its own integrator, not all fourteen.  See ``docs/integrators.md``.
"""
from ..lazy import lazy_package
# the driver every run uses, imported now: `simulate` must be the function, and the import of a
# submodule sets the package's attribute of its name to the module (the names below rebind it)
from .simulate import INTEGRATORS, Solution, simulate

# public name -> the module it comes from
_PUBLIC = {
    "Integrator": "flexmbs.integrators.base",
    "RK45": "flexmbs.integrators.rk", "DOP853": "flexmbs.integrators.rk", "Radau": "flexmbs.integrators.rk",
    "BDF": "flexmbs.integrators.rk",
    "AdamsBashforth4": "flexmbs.integrators.adams_bashforth",
    "ImplicitMidpoint": "flexmbs.integrators.midpoint",
    "GeneralizedAlpha": "flexmbs.integrators.generalized_alpha",
    "Index3GeneralizedAlpha": "flexmbs.integrators.index3_alpha",
    "Index3AdaptiveAlpha": "flexmbs.integrators.index3_alpha",
    "Index3HHT": "flexmbs.integrators.index3_alpha", "Index3Newmark": "flexmbs.integrators.index3_alpha",
    "ConstrainedProblem": "flexmbs.integrators.index3_alpha",
    "Rattle": "flexmbs.integrators.rattle",
    "RadauDAE": "flexmbs.integrators.radau_dae",
    "ExactLinear": "flexmbs.integrators.exact",
    "RunSizeWarning": "flexmbs.integrators.budget", "check_run_size": "flexmbs.integrators.budget",
}

__all__ = [*_PUBLIC, "INTEGRATORS", "Solution", "simulate"]

__getattr__, __dir__ = lazy_package(__name__, _PUBLIC)
