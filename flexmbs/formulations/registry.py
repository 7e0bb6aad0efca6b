"""The one table of formulations: what each takes (a Model on its prescribed frame, a System) and
with which integrators it runs; `choose` checks a combination in one place.

==================  ==========================================  ===================================
name                a Model on a prescribed frame               a System (bodies on joints)
==================  ==========================================  ===================================
lagrange            Lagrange's equations, frame eliminated      index-1: M q'' + C_q^T lam = Q,
                    (`Lagrange`)                                C_q q'' = gamma, augmented matrix
                                                                (`Index1`, solver "augmented")
gibbs-appell        Gibbs-Appell (`GibbsAppell`)                the bodies' acceleration energy, M_GA q''
                                                                + C_q^T lam = Q_a - g, index 1 (and its
                                                                index-3 form: index3-alpha)
                                                                (`GibbsAppellSystem`)
hamilton            Hamilton's canonical equations (`Hamilton`) (q, p), p = M q' + C_q^T sigma, the
                                                                constraints at the velocity level
                                                                (`HamiltonSystem`): first-order methods
udwadia-kalaba      --                                          index-1, Udwadia-Kalaba equations
index3              --                                          M q'' + C_q^T lam = Q, C = 0 (index 3,
                                                                `ConstrainedProblem`): index3-alpha
maggi               --                                          state (q, q'), Lagrange's equations projected
                                                                on the admissible velocities W (`Maggi`)
kane, volterra,     --                                          state (q, u), q' = W u + X, from the bodies'
volterra-reduced                                                parts (`kinematics`: rigid parts, mass
                                                                points) (`flexmbs.formulations.quasi_velocities`)
==================  ==========================================  ===================================

A Model's formulations run with every integrator (method "exact" needs a steady frame, which the
integrator checks); a System's index-1 formulations with every method but "exact" (affine
equations of a steady frame only), "index3-alpha" (and its variants "index3-alpha-adaptive", "hht",
"newmark": `ALPHA_METHODS`), "rattle" and "radau-dae" (the index-3 DAE: formulation "index3"), but
gibbs-appell also with the index3-alpha family and radau-dae (its own index-3 form); hamilton and the
quasi-velocity formulations with the first-order methods (not "generalized-alpha", which steps a
second-order form M q'' = f); "index3" only with the index3-alpha family, "rattle" and "radau-dae"
(`INDEX3_METHODS`).  tests/test_registry.py checks
this table against the integrators' own declarations (`Integrator.refusal` of each term).
"""
from __future__ import annotations

from typing import Callable

from ..frozen import FrozenFields
from ..lazy import LazyTable

__all__ = ["Entry", "REGISTRY", "FORMULATIONS", "ALPHA_METHODS", "INDEX3_METHODS", "choose", "system_formulations", "system_formulation", "system_methods",
           "DEFAULT_SYSTEM_METHOD"]

DEFAULT_SYSTEM_METHOD = "index3-alpha"
ALPHA_METHODS = frozenset({"index3-alpha", "index3-alpha-adaptive", "hht", "newmark"})   # one correction loop
INDEX3_METHODS = ALPHA_METHODS | {"rattle", "radau-dae"}     # the methods of the index-3 DAE (formulation "index3")
NOT_FOR_SYSTEMS = frozenset({"exact"}) | INDEX3_METHODS      # methods of a System's index-1 forms: all others
FIRST_ORDER_METHODS = frozenset({"RK45", "DOP853", "AB4", "midpoint", "Radau", "BDF"})   # x' = f(t, x) only


def _index1(solver: str) -> Callable:
    def build(system, **options):
        from .index1 import Index1
        return Index1(system, solver=solver, **options)
    return build


def _gibbs_appell(system, **options):
    from .gibbs_appell_system import GibbsAppellSystem
    return GibbsAppellSystem(system, **options)


def _hamilton(system, **options):
    from .hamilton_system import HamiltonSystem
    return HamiltonSystem(system, **options)


def _index3(system, **options):
    if options:
        raise TypeError(f"formulation 'index3' takes no options, got {sorted(options)}")
    from .constrained import ConstrainedProblem
    return ConstrainedProblem(system)


def _quasi_velocity(name: str) -> Callable:
    def build(system, Y=None, Z=None, ignorable="auto"):
        from .kane import Kane
        from .maggi import Maggi
        from .quasi_velocities import QuasiVelocities
        from .volterra import ReducedVolterra, Volterra
        if name == "volterra-reduced":
            return ReducedVolterra(system, QuasiVelocities(system, Y=Y, Z=Z, ignorable=ignorable))
        return {"maggi": Maggi, "kane": Kane, "volterra": Volterra}[name](system, QuasiVelocities(system, Y=Y, Z=Z))
    return build


class Entry(FrozenFields):
    """One formulation: ``prescribed`` its class for a Model as ``"module:Class"`` (None: none; imported
    on use by `flexmbs.formulations.FORMULATIONS`, a `flexmbs.lazy.LazyTable`), ``system(system,
    **options)`` its builder for a System (None: none), ``system_methods`` the integrators that run
    it on a System (None: all but `NOT_FOR_SYSTEMS`), ``state_velocity`` what the state's second
    part is on a System ("q_dot", "u" for the quasi-velocities, "p" for Hamilton's momenta)."""

    def __init__(self, name: str, prescribed: str | None = None, system: Callable | None = None,
                 system_methods: frozenset | None = None, state_velocity: str = "q_dot"):
        self._set_fields(locals())


REGISTRY: dict[str, Entry] = {e.name: e for e in (
    Entry("lagrange", prescribed="flexmbs.formulations.lagrange:Lagrange", system=_index1("augmented")),
    Entry("gibbs-appell", prescribed="flexmbs.formulations.gibbs_appell:GibbsAppell", system=_gibbs_appell,
          system_methods=FIRST_ORDER_METHODS | {"generalized-alpha"} | ALPHA_METHODS | {"radau-dae"}),
    Entry("hamilton", prescribed="flexmbs.formulations.hamilton:Hamilton", system=_hamilton, system_methods=FIRST_ORDER_METHODS,
          state_velocity="p"),
    Entry("udwadia-kalaba", system=_index1("udwadia-kalaba")),
    Entry("index3", system=_index3, system_methods=INDEX3_METHODS),
    # state (q, q'), Maggi's equations in q''; none of the quasi-velocity forms is a second-order form
    # M q'' = f (generalized-alpha's), whatever their state
    Entry("maggi", system=_quasi_velocity("maggi"), system_methods=FIRST_ORDER_METHODS),
    *(Entry(n, system=_quasi_velocity(n), system_methods=FIRST_ORDER_METHODS, state_velocity="u")
      for n in ("kane", "volterra", "volterra-reduced")),
)}


def system_formulations() -> list[str]:
    """Names of the formulations a System runs with."""
    return [n for n, e in REGISTRY.items() if e.system is not None]


def system_formulation(name: str, system, **options):
    """The formulation ``name`` of ``system``, built by its registry entry with ``options``
    (e.g. ``Y``, ``Z``, ``ignorable`` of the quasi-velocity forms, ``stabilization`` of
    lagrange): the object `flexmbs.simulate` integrates, with ``state0`` and ``physical``.
    A name that is not a System's formulation raises a ValueError listing those that are."""
    entry = REGISTRY.get(name)
    if entry is None or entry.system is None:
        why = "is not a formulation" if entry is None else "runs a Model on a prescribed frame only"
        raise ValueError(f"`name` {name!r} {why}; a System's formulations are {', '.join(system_formulations())}")
    return entry.system(system, **options)


def system_methods(formulation: str | None = None, methods=None) -> list[str]:
    """The integrators that run a System with ``formulation`` (None: with any of its
    formulations, i.e. every method but "exact"), sorted by name; ``methods`` the integrators'
    names (default `flexmbs.integrators.INTEGRATORS`).  The choices of a case's ``integrator``."""
    if methods is None:
        from ..integrators import INTEGRATORS as methods
    if formulation is None:
        return sorted({m for n in system_formulations() for m in _methods(REGISTRY[n], methods)})
    entry = REGISTRY.get(formulation)
    if entry is None or entry.system is None:
        raise ValueError(f"`formulation` must be one of {system_formulations()} (a System's), got {formulation!r}")
    return sorted(_methods(entry, methods))


def _methods(entry: Entry, methods) -> list[str]:
    return [m for m in methods if (m in entry.system_methods if entry.system_methods is not None
                                   else m not in NOT_FOR_SYSTEMS)]


def choose(formulation: str, method: str | None, methods) -> tuple[Entry, str]:
    """The registry's entry and the method for a System run, with ``formulation`` "auto" resolved
    ("index3" for index3-alpha, rattle and radau-dae, else "lagrange") and ``method`` None the default index3-alpha;
    a combination that does not fit raises a ValueError that lists those that do.
    ``methods``: the integrators' names (`flexmbs.integrators.INTEGRATORS`)."""
    method = DEFAULT_SYSTEM_METHOD if method is None else method
    if method not in methods:
        raise ValueError(f"`method` must be one of {sorted(methods)}, got {method!r}")
    if formulation == "auto":
        formulation = "index3" if method in INDEX3_METHODS else "lagrange"
    combos = "; ".join(f"{n}: {', '.join(_methods(REGISTRY[n], methods))}" for n in system_formulations())
    entry = REGISTRY.get(formulation)
    if entry is None or entry.system is None:
        why = ("is not a formulation" if entry is None else
               "runs a Model on a prescribed frame only (flexmbs.run(model, ...))")
        raise ValueError(f"`formulation` {formulation!r} {why}; a System runs with: {combos}")
    if method not in _methods(entry, methods):
        raise ValueError(f"formulation {formulation!r} does not run with method {method!r}; the combinations "
                         f"for a System are: {combos}")
    return entry, method



# the classes of a Model on its prescribed frame, by name (the entries' ``prescribed``), each imported
# when it is looked up
FORMULATIONS = LazyTable({name: e.prescribed for name, e in REGISTRY.items() if e.prescribed is not None})
