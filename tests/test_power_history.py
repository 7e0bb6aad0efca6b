"""The force elements' powers and potentials over many rows at once (issue 22, item 1;
`flexmbs.forces.ForceElement.power_history` and ``potential_history``, `flexmbs.System.power_history`
and ``energy_history``).

The reference values in tests/data/power_history_before_48bb870.json are the per-state ``powers`` and
``potential`` of every element of the systems below, one row at a time, recorded with commit 48bb870
(before the batching) by ``python tests/test_power_history.py --record PATH`` run against that commit's
flexmbs; the rows' (t, q, v) are stored with them.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import FlexibleBody, Interface, Node, PointMass, RigidBody2D, RigidBodyEP
from flexmbs.bodies.natural import RigidBodyNatural
from flexmbs.constraints import JointFriction, JointLimit, Prismatic, Revolute
from flexmbs.constraints.planar import PlanarPrismatic
from flexmbs.contact import Box, Contact, ContactLaw, Plane, Sphere
from flexmbs.forces import (Bushing, ForceLaw, RotationalSpringDamper, SpringDamper, element_power_history,
                            powerless)
from flexmbs.system import System

CASES = Path(__file__).resolve().parents[1] / "cases"
sys.path.insert(0, str(CASES))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import andrews_squeezer  # noqa: E402
from power_reference import assert_element_as_recorded, close, per_state_values  # noqa: E402

REFERENCE = Path(__file__).parent / "data" / "power_history_before_48bb870.json"


def cubic_law(t, d, d_dot):
    """A user's law: a hardening spring and a viscous damper, F = -3 |d|^2 d - 0.1 d'."""
    return -3.0 * d * (d @ d) - 0.1 * d_dot


def pulse(t):
    """An actuator's force of time [N or N m]."""
    return 40.0 * np.sin(50.0 * t) + 3.0


def squeezer():
    """IFToMM A03 (Andrews' squeezer, `cases/andrews_squeezer.py`) with its spring to the ground as a
    `SpringDamper` (the case's own spring, a body load, stays too), damped and actuated; a rotational
    spring-damper-actuator about the joint P, a stop (both sides, 0.01 rad) on the revolute B and joint
    friction on A5."""
    system, K = andrews_squeezer.build()
    spring = next(load.spec for load in K[2].loads if getattr(load, "spec", ("",))[0] == "spring")
    _, s, anchor, k, l0, _ = spring
    joints = {c.name: c for c in system.constraints}
    forces = [SpringDamper(None, anchor, K[2], s, k, l0, damping=50.0, actuator=pulse, name="A03 spring"),
              RotationalSpringDamper.about(joints["P"], 2.0, 0.05, damping=0.01, actuator=0.3),
              JointLimit(joints["B"], lower=-0.01, upper=0.01, stiffness=1e4, restitution=0.4, exponent=1.5),
              JointFriction(joints["A5"], 0.2, creep_speed=1e-2)]
    return System(K, list(joints.values()), forces=forces)


def spatial():
    """Two free rigid bodies (Euler parameters) with every kind of element: a spring-damper-actuator, a
    rotational one, a bushing, a user's law, a stop and friction on a revolute, a stop on a prismatic."""
    a = RigidBodyEP("a", 2.0, np.diag([0.1, 0.2, 0.3]), position=(0, 0, 0))
    b = RigidBodyEP("b", 1.0, np.diag([0.05, 0.1, 0.12]), position=(1, 0.2, 0))
    pin = Revolute(a, b, at=(0.5, 0.1, 0.0), axis=(0, 0.6, 0.8))
    slide = Prismatic(a, b, at=(0.5, 0.1, 0.0), axis=(1, 0, 0))
    return System([a, b], forces=[
        SpringDamper(a, (0.1, 0, 0), b, (0, 0.1, 0.05), 100.0, 0.8, damping=1.5, actuator=pulse),
        RotationalSpringDamper(a, b, 5.0, 0.1, 0.02, actuator=np.cos, axis=(0, 0, 1)),
        Bushing(a, b, [10, 20, 30, 1, 2, 3], [0.1, 0.2, 0.3, 0.01, 0.02, 0.03], at=(0.5, 0.1, 0)),
        ForceLaw(a, (0, 0, 0), b, (0, 0, 0), cubic_law),
        JointLimit(pin, lower=-0.02, upper=0.02, stiffness=1e3, restitution=0.3),
        JointFriction(pin, 0.5, creep_speed=0.05),
        JointLimit(slide, lower=-0.01, upper=0.01, stiffness=1e5, restitution=0.6, exponent=1.5)])


def planar_and_points():
    """Planar bodies and point masses: every element kind, a stop on a planar prismatic, a spring on a
    point mass (and the ground)."""
    a = RigidBody2D("a", 2.0, 0.1, position=(0, 0))
    b = RigidBody2D("b", 1.0, 0.05, position=(1, 0.2), angle=0.4)
    m = PointMass("m", 0.5, (0.3, -0.4))
    guide = PlanarPrismatic(a, b, axis=(0.6, 0.8), at=(0.5, 0.1))
    return System([a, b, m], forces=[
        SpringDamper(a, (0.1, 0), b, (0, 0.1), 100.0, 0.8, damping=2.0, actuator=pulse),
        SpringDamper(m, (0, 0), b, (0.05, 0), 30.0, damping=0.5, name="to the mass"),
        SpringDamper(None, (0.0, -1.0), m, (0, 0), 10.0, 0.7, damping=0.2, name="mass to ground"),
        RotationalSpringDamper(a, b, 5.0, 0.1, 0.3, actuator=0.7),
        RotationalSpringDamper(None, a, 2.0, damping=0.1, name="a to ground"),
        Bushing(a, b, [10, 20, 1], [0.1, 0.2, 0.01]),
        ForceLaw(None, (0, 0), b, (0.1, 0), cubic_law),
        JointLimit(guide, lower=-0.01, upper=0.01, stiffness=1e4, restitution=0.5),
        JointFriction(guide, 0.3, creep_speed=0.02)])


def flexible_and_natural():
    """A free beam (FlexibleBody: markers that move with its deformation, a Node and an Interface), a
    rigid body in natural coordinates and one in Euler parameters."""
    beam = fm.BeamEB3D(fm.Material(E=2e8, rho=1000.0), area=1e-3, Iy=1e-6, Iz=1e-6, J=2e-6)
    model = fm.Model(fm.generate.line(3, 1.0, dim=3), beam, fixed=[("start", "all")])
    flex = FlexibleBody(model, "beam", stiffening="none")
    rigid = RigidBodyEP("hub", 1.0, np.diag([0.05, 0.1, 0.12]), position=(1.2, 0.1, 0.0))
    nat = RigidBodyNatural("nat", 1.5, np.diag([0.02, 0.03, 0.04]), position=(0.4, -0.5, 0.2))
    return System([flex, rigid, nat], forces=[
        SpringDamper(flex, Node(3), rigid, (0, 0, 0), 50.0, 0.1, damping=1.0),
        SpringDamper(flex, Interface([1, 2]), nat, (0.05, 0, 0), 30.0, damping=0.4, name="interface"),
        Bushing(flex, rigid, 20.0, 0.1, at=(1.0, 0.0, 0.0)),
        RotationalSpringDamper(nat, rigid, 3.0, damping=0.2, axis=(0.0, 1.0, 0.0)),
        ForceLaw(flex, Interface([2, 3]), rigid, (0, 0.05, 0), cubic_law)])


def contact_scene():
    """Spheres on a plane and a box, with friction (`flexmbs.contact`)."""
    a = RigidBodyEP("a", 1.0, 0.01 * np.eye(3), position=(0.0, 0.0, 0.098))
    b = RigidBodyEP("b", 2.0, 0.02 * np.eye(3), position=(0.17, 0.03, 0.11))
    shapes = [Sphere(a, 0.1), Sphere(b, 0.08), Plane(None, (0, 0, 1)), Box(b, (0.05, 0.04, 0.06), at=(-0.08, 0, -0.06))]
    law = ContactLaw(stiffness=1e6, restitution=0.5, friction=0.3)
    return System([a, b], forces=[Contact(shapes, law)])


SYSTEMS = {"squeezer": squeezer, "spatial": spatial, "planar_and_points": planar_and_points,
           "flexible_and_natural": flexible_and_natural, "contact": contact_scene}


def rows(system, n=9, seed=3):
    """(t (n,), q (n, n_q), v (n, n_q)): states about the start, the joints' stops pressed in at some."""
    rng = np.random.default_rng(seed)
    q0, v0 = system.initial_coordinates(), system.initial_velocities()
    q = q0 + 0.03 * rng.standard_normal((n, len(q0)))
    v = v0 + 0.5 * rng.standard_normal((n, len(q0)))
    return np.linspace(0.0, 0.2, n), q, v


def record(path) -> None:
    """Write the rows and the per-state values of every system of `SYSTEMS` to ``path`` (JSON)."""
    data = {}
    for name, build in SYSTEMS.items():
        system = build()
        t, q, v = rows(system)
        data[name] = {"t": t.tolist(), "q": q.tolist(), "v": v.tolist(), "values": per_state_values(system, t, q, v)}
    Path(path).write_text(json.dumps(data, indent=1))


@pytest.fixture(scope="module")
def reference():
    return json.loads(REFERENCE.read_text())


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_every_element_gives_the_recorded_per_state_values_for_all_rows_at_once(name, reference):
    """Each element's ``power_history`` and ``potential_history`` on the stacked rows equal the one-state
    values recorded before the batching (commit 48bb870), and so does its one-state ``powers`` now."""
    system, ref = SYSTEMS[name](), reference[name]
    t, q, v = (np.array(ref[k]) for k in ("t", "q", "v"))
    for f in system.force_elements:
        assert_element_as_recorded(system, f, t, q, v, ref["values"][f.name], f"{name}: {f.name}")


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_system_power_and_energy_histories_sum_the_recorded_element_values(name, reference):
    """`System.power_history` and ``energy_history`` (U) add the elements' recorded values to the bodies'
    (the bodies' own powers and strain energy, evaluated as before)."""
    system, ref = SYSTEMS[name](), reference[name]
    t, q, v = (np.array(ref[k]) for k in ("t", "q", "v"))
    bare = System(system.bodies, system.constraints[system.n_internal:], gravity=system.gravity)
    P, P0 = system.power_history(t, q, v), bare.power_history(t, q, v)
    values = ref["values"].values()
    for key in ("damping", "loads"):
        close(P[key] - P0[key], np.sum([x[key] for x in values], axis=0), f"{name}: {key}")
    U, U0 = system.energy_history(q, v)[2], bare.energy_history(q, v)[2]
    close(U - U0, np.sum([x["potential"] for x in values], axis=0), f"{name}: U")


def test_power_history_equals_the_jacobian_form_at_each_row():
    """Independent of the recorded values: g' of `measure_history` (the markers' rates) equals G v from
    ``measures`` (the markers' Jacobians) row by row, for every kind of measure and body (round-off)."""
    for build in SYSTEMS.values():
        system = build()
        t, q, v = rows(system, n=4, seed=11)
        for f in system.force_elements:
            if not hasattr(f, "measure_history"):
                continue
            sls = [None if b is None else system.slice(b) for b in f.bodies]
            Qs = [np.zeros((len(t), 0)) if sl is None else q[:, sl] for sl in sls]
            Vs = [np.zeros((len(t), 0)) if sl is None else v[:, sl] for sl in sls]
            g, gd = f.measure_history(Qs, Vs)
            for k in range(len(t)):
                gk, G = f.measures([Q[k] for Q in Qs])
                close(g[k], gk, f"{f.name}: g")
                close(gd[k], sum(Gb @ V[k] for Gb, V in zip(G, Vs)), f"{f.name}: g'")


class OneStateSpring:
    """A user's force element giving one state only (``powers``, ``potential``): a linear spring of
    stiffness k from the ground's origin to a point mass, with a dashpot c."""

    def __init__(self, body, k=20.0, c=0.5):
        self.name, self.bodies, self.k, self.c = "user spring", (None, body), k, c

    def generalized_forces(self, t, qs, vs):
        return [np.zeros(0), -self.k * qs[1] - self.c * vs[1]]

    def potential(self, qs):
        return 0.5 * self.k * float(qs[1] @ qs[1])

    def powers(self, t, qs, vs):
        return {"damping": self.c * float(vs[1] @ vs[1]), "loads": 0.0}

    def tangent(self, t, qs, vs, geometric=True):
        return self.k * np.eye(3), self.c * np.eye(3)


def test_a_users_element_with_one_state_powers_keeps_working_row_by_row():
    """A force element without ``power_history`` (a user's, duck-typed) is evaluated row by row."""
    m = PointMass("m", 1.0, (0.3, -0.2, 0.5))
    system = System([m], forces=[OneStateSpring(m)])
    t, q, v = rows(system, n=5)
    P = system.power_history(t, q, v)
    np.testing.assert_allclose(P["damping"], 0.5 * np.sum(v * v, axis=1), rtol=1e-15)
    np.testing.assert_allclose(P["loads"], 0.0)
    np.testing.assert_allclose(system.energy_history(q, v)[2], 10.0 * np.sum(q * q, axis=1), rtol=1e-15)


def test_an_affine_actuator_is_evaluated_without_calling_it_per_row():
    """A constant actuator (declared ``affine`` by `flexmbs.bodies.loads._of_time`) gives f_a at all rows
    at once; a function of t is called once per row, or once with the array t when it declares
    ``vectorized``: all give g' f_a."""
    a = PointMass("a", 1.0, (1.0, 0.0, 0.0))
    calls = []

    def force(t):
        calls.append(t)
        return 2.0 + t

    springs = [SpringDamper(None, (0, 0, 0), a, (0, 0, 0), 1.0, actuator=2.5, name="constant"),
               SpringDamper(None, (0, 0, 0), a, (0, 0, 0), 1.0, actuator=force, name="of t")]
    t = np.array([0.0, 0.5, 1.0])
    Q, V = np.array([[1.0, 0, 0], [2.0, 0, 0], [0, 3.0, 0]]), np.array([[1.0, 0, 0], [0, 1.0, 0], [0, -2.0, 0]])
    rate = np.array([1.0, 0.0, -2.0])                      # l' = e . v
    empty = np.zeros((3, 0))
    np.testing.assert_allclose(springs[0].power_history(t, [empty, Q], [empty, V])["loads"], 2.5 * rate)
    np.testing.assert_allclose(springs[1].power_history(t, [empty, Q], [empty, V])["loads"], (2.0 + t) * rate)
    assert calls == [0.0, 0.5, 1.0]
    force.vectorized = True                                # declared: one call with the array t
    calls.clear()
    np.testing.assert_allclose(springs[1].power_history(t, [empty, Q], [empty, V])["loads"], (2.0 + t) * rate)
    assert len(calls) == 1 and np.array_equal(calls[0], t)


def test_a_spring_without_damper_or_actuator_gives_zero_powers_without_its_measures(monkeypatch):
    """g' is not needed when c = 0 and there is no actuator: the powers are zero, the measures not evaluated."""
    a = PointMass("a", 1.0, (1.0, 0.0, 0.0))
    spring = SpringDamper(None, (0, 0, 0), a, (0, 0, 0), 10.0)

    def refuse(*args):
        raise AssertionError("measure_history evaluated")
    monkeypatch.setattr(spring, "measure_history", refuse)
    P = spring.power_history(np.zeros(4), [np.zeros((4, 0)), np.ones((4, 3))], [np.zeros((4, 0)), np.ones((4, 3))])
    assert set(P) == {"damping", "loads"} and not np.any(P["damping"]) and not np.any(P["loads"])


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_no_rows_give_empty_powers_and_energies(name):
    """A block without rows (n_t = 0) gives empty arrays, as the row-by-row sums did."""
    system = SYSTEMS[name]()
    q = np.zeros((0, system.n_q))
    P = system.power_history(np.zeros(0), q, q)
    assert all(x.shape == (0,) for x in P.values())
    assert system.energy_history(q, q)[2].shape == (0,)


def springs_only():
    """Planar bodies and a point mass joined by springs without dampers or actuators only: a spring, a
    rotational spring, a bushing (no damping) and a spring to the ground."""
    a = RigidBody2D("a", 2.0, 0.1, position=(0, 0))
    b = RigidBody2D("b", 1.0, 0.05, position=(1, 0.2), angle=0.4)
    m = PointMass("m", 0.5, (0.3, -0.4))
    return System([a, b, m], forces=[
        SpringDamper(a, (0.1, 0), b, (0, 0.1), 100.0, 0.8),
        RotationalSpringDamper(a, b, 5.0, 0.1),
        Bushing(a, b, [10, 20, 1], 0.0),
        SpringDamper(None, (0.0, -1.0), m, (0, 0), 10.0, 0.7)], gravity=(0.0, -9.81))


@pytest.mark.parametrize("name", [*SYSTEMS, "springs_only"])
def test_an_element_called_powerless_has_zero_powers(name):
    """`powerless` holds for the elements whose powers are zero at the rows (every element of
    `springs_only`), and for no element with a damper, an actuator or a law of its own."""
    system = {**SYSTEMS, "springs_only": springs_only}[name]()
    t, q, v = rows(system, n=5, seed=7)
    for f in system.force_elements:
        sls = [None if b is None else system.slice(b) for b in f.bodies]
        Qs = [np.zeros((len(t), 0)) if sl is None else q[:, sl] for sl in sls]
        Vs = [np.zeros((len(t), 0)) if sl is None else v[:, sl] for sl in sls]
        P = element_power_history(f, t, Qs, Vs)
        assert powerless(f) is (name == "springs_only"), f.name
        assert (not np.any(P["damping"]) and not np.any(P["loads"])) is powerless(f) or isinstance(f, JointLimit), \
            f.name                                     # a stop has power only while pressed in


def springs_and(make):
    """`springs_only` with one more element, ``make(a, b)`` on its planar bodies a and b."""
    system = springs_only()
    a, b = system.bodies[:2]
    return System(system.bodies, gravity=system.gravity, forces=[*system.force_elements, make(a, b)])


def a_stop():
    """Two planar bodies on a prismatic guide with a stop on it (no damper, but its impacts dissipate)."""
    a, b = RigidBody2D("a", 1.0, 0.1), RigidBody2D("b", 1.0, 0.1, position=(1, 0))
    guide = PlanarPrismatic(a, b, axis=(1, 0))
    return System([a, b], [guide], forces=[JointLimit(guide, lower=-0.1, upper=0.1, stiffness=1e3)])


VANISH = {   # system: whether its works vanish (`System.works_vanish`)
    "springs only": (springs_only, True),
    "springs and a damper": (lambda: springs_and(lambda a, b: SpringDamper(None, (0, 1), a, (0, 0), 1.0, damping=0.1)),
                             False),
    "springs and an actuator": (lambda: springs_and(lambda a, b: RotationalSpringDamper(None, a, 0.0, actuator=0.2)),
                                False),
    "springs and a user's law": (lambda: springs_and(lambda a, b: ForceLaw(None, (0, 0), b, (0.1, 0), cubic_law)),
                                 False),
    "a stop": (a_stop, False),
    "a user's element with one-state powers": (lambda: System([m := PointMass("m", 1.0, (0.3, 0, 0))],
                                                              forces=[OneStateSpring(m)]), False),
    "contacts": (contact_scene, False),
}


@pytest.mark.parametrize("name", list(VANISH))
def test_works_vanish_with_springs_alone(name):
    """A System whose only force elements are springs without damper and actuator has vanishing works
    (their work is in U), and its `power_history` is indeed zero at any rows; any element with power
    (damper, actuator, a user's law, a stop, a contact, a user's element) keeps the quadrature."""
    build, vanish = VANISH[name]
    system = build()
    assert system.works_vanish() is vanish
    if vanish:
        t, q, v = rows(system, n=5)
        assert not any(np.any(P) for P in system.power_history(t, q, v).values())


def test_a_run_with_springs_alone_has_zero_works_without_a_quadrature(monkeypatch):
    """`springs_only` on AB4: no quadrature of the works runs (`gauss_powers` is not asked for), the works are
    zero at every output, and T + V_g + U is conserved to the integrator's error (1.3e-9 J of 0.63 J here)."""
    import flexmbs.system_run as system_run

    def no_quadrature(system, form):
        raise AssertionError("gauss_powers asked for a System whose works vanish")
    monkeypatch.setattr(system_run, "gauss_powers", no_quadrature)
    res = fm.run(springs_only(), formulation="udwadia-kalaba", method="AB4", h=1e-3, t_end=0.2, dt_out=0.01,
                 store=False)
    assert res.status == "finished"
    assert not any(np.any(res.energies[k]) for k in ("W_loads", "W_drivers", "W_damping", "W_stiffening"))
    assert np.max(np.abs(res.energy_balance_error())) < 1e-7


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--record":
    record(sys.argv[2])
