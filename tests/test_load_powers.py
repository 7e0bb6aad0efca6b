"""The bodies' loads' powers over many rows at once (issue 22, item 1; `flexmbs.bodies.base.Body.powers`,
the ``power_history`` of `flexmbs.bodies.loads`' point_load, torque_load and spring_to_ground).

The reference values in tests/data/load_powers_before_87a8a53.json are the power of each load of each
body, P = q' . load(body, t, q, v) one row at a time, recorded with commit 87a8a53 (before the batching)
by ``PYTHONPATH=$PWD python tests/test_load_powers.py --record PATH`` run in that commit's checkout; the
rows' (t, q, v) are stored with them.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import CorotationalBeam2D, CorotationalBeam3D, FlexibleBody, PointMass, RigidBody2D, RigidBodyEP
from flexmbs.bodies.loads import point_load, spring_to_ground, torque_load
from flexmbs.bodies.natural import RigidBodyNatural
from flexmbs.system import System

CASES = Path(__file__).resolve().parents[1] / "cases"
sys.path.insert(0, str(CASES))

import andrews_squeezer  # noqa: E402

REFERENCE = Path(__file__).parent / "data" / "load_powers_before_87a8a53.json"
STEEL = fm.Material(E=2e9, rho=1200.0, nu=0.3)


def push(t):
    """A force of time [N] (3D)."""
    return np.array([3.0 * np.sin(20.0 * t), -1.0 + t, 0.5 * np.cos(7.0 * t)])


def push_2d(t):
    """A force of time [N] (2D)."""
    return np.array([3.0 * np.sin(20.0 * t), -1.0 + t])


def twist(t):
    """A torque of time [N m] (3D)."""
    return np.array([0.2, -0.4 * t, 1.0 + np.sin(9.0 * t)])


def twist_2d(t):
    """A torque of time [N m] (2D)."""
    return 1.0 + np.sin(9.0 * t)


POINTS_3D = [(0.1, 0.2, -0.05), (0.0, -0.1, 0.2), (0.05, 0.0, 0.0), (0.1, 0.0, 0.0), (0.0, 0.1, 0.0)]
POINTS_2D = [(0.1, 0.2), (0.0, -0.1), (0.05, 0.0), (0.1, 0.0), (0.0, 0.1)]


def loads_3d(s=POINTS_3D):
    """Every kind of built-in load on a 3D body, at the body points s: forces global and body-fixed,
    constant and of time, torques likewise, springs to the ground with and without a damper."""
    return [point_load(s[0], (1.0, -2.0, 0.5)),
            point_load(s[1], push, local=True),
            point_load(s[2], push),
            torque_load((0.3, -0.1, 0.2)),
            torque_load(twist, local=True),
            torque_load((0.0, 0.7, -0.2), local=True),
            spring_to_ground(s[3], (1.0, 1.0, 0.5), 50.0, 0.3, damping=2.0),
            spring_to_ground(s[4], (-1.0, 0.0, 0.0), 20.0, 0.0)]


def loads_2d(s=POINTS_2D):
    """The same kinds on a 2D body (a torque is a number)."""
    return [point_load(s[0], (1.0, -2.0)),
            point_load(s[1], push_2d, local=True),
            point_load(s[2], push_2d),
            torque_load(0.3),
            torque_load(twist_2d, local=True),
            spring_to_ground(s[3], (1.0, 1.0), 50.0, 0.3, damping=2.0),
            spring_to_ground(s[4], (-1.0, 0.0), 20.0, 0.0)]


def every_body_kind():
    """One body of each kind that takes ``loads``, each with every kind of built-in load."""
    nodes_2d = [[0.0, 0.0], [0.25, 0.05], [0.5, 0.1]]          # a beam's markers are its nodes (offsets from node 0)
    nodes_3d = [[0.0, 0.0, 0.0], [0.3, 0.05, 0.0], [0.6, 0.1, 0.05]]
    bodies = [RigidBodyEP("ep", 2.0, np.diag([0.1, 0.2, 0.3]), position=(0.2, 0.1, 0.0), loads=loads_3d()),
              RigidBodyNatural("natural", 1.5, np.diag([0.02, 0.03, 0.04]), position=(0.4, -0.5, 0.2),
                               loads=loads_3d()),
              RigidBody2D("planar", 1.0, 0.05, position=(1.0, 0.2), angle=0.4, loads=loads_2d()),
              PointMass("point", 0.5, (0.3, -0.4, 0.1), loads=loads_3d()),
              PointMass("point_2d", 0.5, (0.3, -0.4), loads=loads_2d()),
              CorotationalBeam2D("beam_2d", nodes_2d, STEEL, 1e-4, 1e-9,
                                 loads=loads_2d([nodes_2d[k] for k in (2, 1, 0, 1, 2)])),
              CorotationalBeam3D("beam_3d", nodes_3d, STEEL, 4e-4, 1.5e-8, 2.5e-8, 3e-8,
                                 loads=loads_3d([nodes_3d[k] for k in (2, 1, 0, 1, 2)]))]
    return bodies


def squeezer_bodies():
    """IFToMM A03's bodies (`cases/andrews_squeezer.py`): the motor torque on K1, the spring on K3."""
    return list(andrews_squeezer.build()[1])


SYSTEMS = {"every_body_kind": every_body_kind, "squeezer": squeezer_bodies}


def rows(body, n=7, seed=5):
    """(t (n,), Q (n, n_q), V (n, n_q)): states about the body's initial one."""
    rng = np.random.default_rng(seed)
    q0, v0 = body.initial_coordinates(), body.initial_velocities()
    return (np.linspace(0.0, 0.3, n), q0 + 0.03 * rng.standard_normal((n, len(q0))),
            v0 + 0.5 * rng.standard_normal((n, len(q0))))


def per_row_powers(body, t, Q, V) -> list:
    """[P (n,) of each load]: q' . load(body, t, q, v) one row at a time (what `Body.powers` summed before
    the batching)."""
    return [[float(load(body, float(tk), q, v) @ v) for tk, q, v in zip(t, Q, V)] for load in body.loads]


def record(path) -> None:
    """Write the rows and each load's per-row power of every body of `SYSTEMS` to ``path`` (JSON)."""
    data = {}
    for name, build in SYSTEMS.items():
        for body in build():
            t, Q, V = rows(body)
            data[f"{name}/{body.name}"] = {"t": t.tolist(), "q": Q.tolist(), "v": V.tolist(),
                                           "powers": per_row_powers(body, t, Q, V)}
    Path(path).write_text(json.dumps(data, indent=1))


@pytest.fixture(scope="module")
def reference():
    return json.loads(REFERENCE.read_text())


def close(new, old, what):
    """new == old to 1e-12 of the largest value (round-off of a different order of operations)."""
    old = np.asarray(old, dtype=float)
    scale = max(1.0, float(np.max(np.abs(old)))) if old.size else 1.0
    np.testing.assert_allclose(new, old, rtol=1e-12, atol=1e-12 * scale, err_msg=what)


def bodies_with_names():
    return [(f"{name}/{body.name}", body) for name, build in SYSTEMS.items() for body in build()]


@pytest.mark.parametrize("key", [key for key, _ in bodies_with_names()])
def test_each_load_gives_the_recorded_per_row_power_for_all_rows_at_once(key, reference):
    """Each built-in load's ``power_history`` on the stacked rows equals q' . load(body, t, q, v) recorded
    one row at a time before the batching (commit 87a8a53), and `Body.powers` their sum."""
    body = dict(bodies_with_names())[key]
    ref = reference[key]
    t, Q, V = (np.array(ref[k]) for k in ("t", "q", "v"))
    for i, (load, old) in enumerate(zip(body.loads, ref["powers"], strict=True)):
        close(load.power_history(body, t, Q, V, f"load {i}"), old, f"{key}: load {i} ({load.__name__})")
    total = np.sum(ref["powers"], axis=0) if body.loads else np.zeros(len(t))
    close(body.powers(t, Q, V, None)["loads"], total, f"{key}: Body.powers")


def test_a_users_load_callable_makes_body_powers_row_by_row():
    """A load without ``power_history`` (a user's function of one state) is evaluated at each row, and so
    then is the whole body (`applied`): P = q' . (Q_user + Q_point) at every row."""
    calls = []

    def drag(body, t, q, v):
        calls.append(t)
        return -0.3 * v

    push_load = point_load((0.1, 0.0, 0.0), (0.0, 1.0, 0.0))
    body = PointMass("m", 1.0, (0.0, 0.0, 0.0), loads=[drag, push_load])
    t, Q, V = rows(body, n=4)
    P = body.powers(t, Q, V, None)["loads"]
    np.testing.assert_allclose(P, -0.3 * np.sum(V * V, axis=1) + V[:, 1], rtol=1e-14)
    assert calls == t.tolist()


def test_a_function_of_time_is_called_per_row_once_vectorized_and_never_as_a_constant():
    """F(t) of a point load: a constant (``affine``) is not called, a function of t once per row, one that
    declares ``vectorized`` once with the array t; all give P = F(t) . r_P' (a point mass: r_P' = q')."""
    calls = []

    def force(t):
        calls.append(t)
        return np.stack([np.ones_like(t), 2.0 * t, np.zeros_like(t)], axis=-1)

    body = PointMass("m", 1.0, (0.0, 0.0, 0.0))
    t, Q, V = rows(body, n=5)
    expected = V[:, 0] + 2.0 * t * V[:, 1]
    np.testing.assert_allclose(point_load((0, 0, 0), force).power_history(body, t, Q, V), expected, rtol=1e-14)
    assert calls == t.tolist()
    force.vectorized = True
    calls.clear()
    np.testing.assert_allclose(point_load((0, 0, 0), force).power_history(body, t, Q, V), expected, rtol=1e-14)
    assert len(calls) == 1 and np.array_equal(calls[0], t)
    constant = point_load((0, 0, 0), (1.0, 2.0, 0.0))
    np.testing.assert_allclose(constant.power_history(body, t, Q, V), V[:, 0] + 2.0 * V[:, 1], rtol=1e-14)


def test_the_torque_power_is_the_closed_form_of_a_spinning_body():
    """Independent of the recorded values: a torque T about the global z on a body spinning at omega about
    z gives P = T omega (RigidBodyEP at p = (cos(phi/2), 0, 0, sin(phi/2)), p' = omega/2 (-sin, 0, 0, cos));
    a body-fixed torque T e_x on a planar body, T theta'."""
    body = RigidBodyEP("spin", 1.0, np.eye(3), loads=[torque_load((0.0, 0.0, 1.5))])
    phi, omega = np.array([0.0, 0.7, 2.0]), np.array([3.0, -1.0, 0.5])
    Q = np.zeros((3, 7))
    Q[:, 3], Q[:, 6] = np.cos(phi / 2), np.sin(phi / 2)
    V = np.zeros((3, 7))
    V[:, 3], V[:, 6] = -0.5 * omega * np.sin(phi / 2), 0.5 * omega * np.cos(phi / 2)
    np.testing.assert_allclose(body.powers(np.zeros(3), Q, V, None)["loads"], 1.5 * omega, rtol=1e-14)
    plate = RigidBody2D("plate", 1.0, 0.1, loads=[torque_load(0.4, local=True)])
    V2 = np.column_stack([np.ones(3), np.zeros(3), omega])
    np.testing.assert_allclose(plate.powers(np.zeros(3), np.zeros((3, 3)), V2, None)["loads"], 0.4 * omega,
                               rtol=1e-14)


def loaded_beam():
    """A free FlexibleBody whose Model has nodal loads: a force of time and a constant one, a moment, on
    two node sets (the tip, the middle node)."""
    x = np.linspace(0.0, 1.0, 4)
    mesh = fm.Mesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(3), np.arange(1, 4)])},
                   node_sets={"start": np.array([0]), "end": np.array([3]), "mid": np.array([1, 2])})
    beam = fm.BeamEB3D(fm.Material(2e3, 1000.0, 0.3), 1e-3, 1e-7, 2e-7, 3e-7)
    model = fm.Model(mesh, beam, fixed=[("start", "all")],
                     loads=[fm.NodalLoad("end", "w", 2.0, np.cos), fm.NodalLoad("mid", "v", -0.7),
                            fm.NodalLoad("end", "theta_x", 0.5, lambda t: 1.0 + t), fm.NodalLoad("end", "u", 0.3)])
    return FlexibleBody(model, "beam", stiffening="none")


def test_a_flexible_bodys_nodal_loads_give_their_per_row_power_at_once():
    """`FlexibleBody.nodal_load_powers` on all rows equals q' . applied_forces(t, q, no gravity) row by row
    (the one-state generalized forces the powers summed before), and `powers` adds it to ``loads``."""
    body = loaded_beam()
    t, Q, V = rows(body, n=6, seed=2)
    per_row = np.array([body.applied_forces(float(tk), q, None) @ v for tk, q, v in zip(t, Q, V)])
    P = body.nodal_load_powers(t, Q, V)
    close(P, per_row, "nodal loads")
    close(body.powers(t, Q, V, (0.0, 0.0, -9.81))["loads"], per_row, "FlexibleBody.powers loads")


def test_no_rows_give_empty_load_powers():
    """A block without rows (n_t = 0) gives an empty P, without calling a function of t."""
    for body in (every_body_kind()[0], loaded_beam()):
        empty = np.zeros((0, body.n_q))
        assert body.powers(np.zeros(0), empty, empty, None)["loads"].shape == (0,)


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--record":
    record(sys.argv[2])
