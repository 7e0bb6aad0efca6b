"""The formulation table (flexmbs/formulations/registry.py) against the integrators' own declarations:
every (formulation, method) pair the table lets a System run passes the integrator's fit check
(`flexmbs.integrators.base.check_fits`) on that formulation's term, so the two cannot drift apart."""
import numpy as np
import pytest

from flexmbs.bodies import RigidBodyEP, RigidBodyNatural
from flexmbs.bodies.tree import TreeBody, TreeJoint, TreePart
from flexmbs.constraints import KnifeEdge, Spherical
from flexmbs.formulations.registry import (INDEX3_METHODS, REGISTRY, system_formulation, system_formulations,
                                           system_methods)
from flexmbs.formulations.terms import as_term
from flexmbs.integrators import INTEGRATORS
from flexmbs.system import System


def pendulum():
    rod = RigidBodyEP("rod", 2.0, np.diag([0.2, 0.2, 1e-3]), position=(0.0, 0.0, -0.5))
    return System([rod], [Spherical(rod, None, at=(0.0, 0.0, 0.0))], gravity=(0.0, 0.0, -9.81))


def natural_pendulum():
    """The same rod in natural coordinates: a constant mass matrix (method "rattle" takes both: its M(q) path is
    tests/test_rattle_mq.py)."""
    rod = RigidBodyNatural("rod", 2.0, np.diag([0.2, 0.2, 1e-3]), position=(0.0, 0.0, -0.5))
    return System([rod], [Spherical(rod, None, at=(0.0, 0.0, 0.0))], gravity=(0.0, 0.0, -9.81))


def sleigh():
    """Chaplygin's sleigh (tests/test_quasi_velocities.py): X and Y are ignorable."""
    joints = [TreeJoint("X", "prismatic", (1, 0, 0), "X"), TreeJoint("Y", "prismatic", (0, 1, 0), "Y", parent="X"),
              TreeJoint("theta", "revolute", (0, 0, 1), "theta", parent="Y")]
    body = TreeBody("sleigh", ("X", "Y", "theta"), joints, [TreePart("sleigh", "theta", 3.0, (0.1, 0.2, 0.25))],
                    q0=(0.0, 0.0, 0.3), v0=(1.2 * np.cos(0.3), 1.2 * np.sin(0.3), 0.8))
    return System([body], [KnifeEdge(body, (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), name="blade")])


SYSTEMS = {"lagrange": pendulum, "udwadia-kalaba": pendulum, "index3": natural_pendulum, "maggi": pendulum,
           "gibbs-appell": pendulum, "hamilton": pendulum,
           "kane": sleigh, "volterra": sleigh, "volterra-reduced": sleigh}


def test_every_system_formulation_has_a_test_system():
    assert set(SYSTEMS) == set(system_formulations())


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_the_table_allows_only_what_the_integrators_accept(name):
    term = as_term(system_formulation(name, SYSTEMS[name]()))
    allowed = system_methods(name)
    assert allowed, name
    for method in allowed:
        assert INTEGRATORS[method].refusal(term) is None, (name, method, INTEGRATORS[method].refusal(term))


def test_the_table_refuses_what_no_term_of_a_system_can_take():
    """'exact' needs the affine equations of a steady prescribed frame: no System formulation has it."""
    for name in system_formulations():
        assert "exact" not in system_methods(name)
    assert REGISTRY["index3"].system_methods == frozenset({"index3-alpha", "index3-alpha-adaptive", "hht", "newmark",
                                                           "rattle", "radau-dae"})


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_the_table_allows_everything_the_integrators_accept_but_its_stated_exceptions(name):
    """The only methods the table withholds from a term that accepts them: the methods of the index-3 DAE
    (`INDEX3_METHODS`: index3-alpha and its variants, rattle, radau-dae) for the index-1 and Maggi forms
    (their System's index-3 DAE is the formulation "index3")."""
    term = as_term(system_formulation(name, SYSTEMS[name]()))
    accepted = {m for m in INTEGRATORS if INTEGRATORS[m].refusal(term) is None}
    assert accepted - set(system_methods(name)) <= INDEX3_METHODS


def test_the_models_formulations_come_from_the_same_table():
    """`FORMULATIONS` (a Model's classes, by name) is read from the registry: one table of names."""
    from flexmbs.formulations import FORMULATIONS
    assert list(FORMULATIONS) == [n for n, e in REGISTRY.items() if e.prescribed is not None]
    assert all(cls.name == name for name, cls in FORMULATIONS.items())
