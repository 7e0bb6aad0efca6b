"""The bodies' energies and the System's forces over many rows at once (issue 22, item 1, fourteenth round:
`flexmbs.bodies.natural.RigidBodyNatural.energies`, `flexmbs.bodies.tree.TreeBody.energies`).

The reference values in tests/data/energy_rows_before_774fc5f.json are the per-row values of the code at
commit 774fc5f (before this batching, where both kinds took `flexmbs.bodies.base.Body.energies`, one
``energy`` call per row), recorded by ``python tests/test_energy_rows.py --record PATH`` from this branch's
start: `System.energy_history` (T, V_g, U) and `System.forces` row by row of a natural-coordinate triple
pendulum (cases/triple_pendulum.py), the cart pendulum's tree body (cases/cart_pendulum.py) and the bouncing
ball (cases/bouncing_ball.py, a contact), with the rows' (t, q, v) stored with them.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

CASES = Path(__file__).resolve().parents[1] / "cases"
sys.path.insert(0, str(CASES))

import bouncing_ball  # noqa: E402
import cart_pendulum  # noqa: E402
import triple_pendulum  # noqa: E402

REFERENCE = Path(__file__).parent / "data" / "energy_rows_before_774fc5f.json"


def systems() -> dict:
    """{name: System}: natural-coordinate triple pendulum, the cart pendulum (one tree body), the bouncing
    ball 5 mm above its plane (the rows' positions reach it: contact on and off)."""
    return {"natural triple pendulum": triple_pendulum.build("natural"),
            "tree cart pendulum": cart_pendulum.build().system,
            "bouncing ball": bouncing_ball.build(dict(bouncing_ball.DEFAULTS, drop_height=0.005))}


def rows(system, n=11, seed=7):
    """(t (n,), q (n, n_q), v (n, n_q)): states about the start, 1 mm to 3 cm off, speeds 0.5 m/s off."""
    rng = np.random.default_rng(seed)
    q0, v0 = system.initial_coordinates(), system.initial_velocities()
    scale = np.where(np.arange(n) % 3 == 0, 1e-3, 0.03)[:, None]
    return (np.linspace(0.0, 0.3, n), q0 + scale * rng.standard_normal((n, len(q0))),
            v0 + 0.5 * rng.standard_normal((n, len(q0))))


def record(path) -> None:
    """Write the per-row `System.energy` and `System.forces` of every system in `systems` to ``path``."""
    out = {}
    for name, system in systems().items():
        t, q, v = rows(system)
        out[name] = dict(t=t.tolist(), q=q.tolist(), v=v.tolist(),
                         energy=[list(system.energy(qk, vk)) for qk, vk in zip(q, v)],
                         forces=[system.forces(float(tk), qk, vk).tolist() for tk, qk, vk in zip(t, q, v)])
    Path(path).write_text(json.dumps(out))


if __name__ == "__main__" and sys.argv[1:2] == ["--record"]:
    record(sys.argv[2])


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads(REFERENCE.read_text())


@pytest.mark.parametrize("name", ["natural triple pendulum", "tree cart pendulum", "bouncing ball"])
def test_energy_history_gives_the_recorded_per_row_values_all_rows_at_once(name, reference):
    """(T, V_g, U) of `System.energy_history` on all rows at once equal the per-row values recorded at 774fc5f."""
    ref = reference[name]
    system = systems()[name]
    E = np.array(system.energy_history(np.array(ref["q"]), np.array(ref["v"]))).T
    expected = np.array(ref["energy"])
    np.testing.assert_allclose(E, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())


@pytest.mark.parametrize("name", ["natural triple pendulum", "tree cart pendulum"])
def test_energy_history_takes_no_per_row_energy_call(name, reference, monkeypatch):
    """`System.energy_history` of natural-coordinate and tree bodies calls no one-state ``energy``: the rows
    go to the body's ``energies`` at once (a per-row loop would call ``energy`` and fail here)."""
    system = systems()[name]
    kinds = {type(b) for b in system.bodies}

    def per_row(*args, **kwargs):
        raise AssertionError("energy called row by row")
    for kind in kinds:
        monkeypatch.setattr(kind, "energy", per_row)
    ref = reference[name]
    T, V, U = system.energy_history(np.array(ref["q"]), np.array(ref["v"]))
    np.testing.assert_allclose(T, np.array(ref["energy"])[:, 0], rtol=1e-12)


@pytest.mark.parametrize("name", ["natural triple pendulum", "tree cart pendulum", "bouncing ball"])
def test_force_history_gives_the_recorded_per_row_forces_all_rows_at_once(name, reference):
    """`System.force_history` on all rows at once equals `System.forces` recorded row by row at 774fc5f (the
    bouncing ball's contact on and off: its rows reach the plane)."""
    ref = reference[name]
    system = systems()[name]
    Q = system.force_history(np.array(ref["t"]), np.array(ref["q"]), np.array(ref["v"]))
    expected = np.array(ref["forces"])
    np.testing.assert_allclose(Q, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())


def test_bouncing_ball_forces_of_the_rows_come_from_one_contact_evaluation(reference, monkeypatch):
    """The contact's forces of all rows come from one `row_state` (a per-row loop would call it per row), and the
    rows reached the plane (some row has a contact force, some none)."""
    from flexmbs.contact.element import Contact
    system = systems()["bouncing ball"]
    calls = []
    row_state = Contact.row_state
    monkeypatch.setattr(Contact, "row_state", lambda self, Q, V: calls.append(len(Q)) or row_state(self, Q, V))
    ref = reference["bouncing ball"]
    Q = system.force_history(np.array(ref["t"]), np.array(ref["q"]), np.array(ref["v"]))
    assert calls == [len(ref["t"])]
    weight = system.force_history(np.zeros(1), np.array(ref["q"])[:1] + [0, 0, 1.0, 0, 0, 0, 0], np.zeros((1, 7)))
    contact = np.abs(Q[:, :3] - weight[0, :3]).max(axis=1)
    assert contact.max() > 1e-6 and contact.min() == 0.0
