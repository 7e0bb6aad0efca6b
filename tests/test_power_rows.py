"""The bodies' and contacts' powers and potentials over many rows at once (issue 22, item 1, thirteenth
round: `flexmbs.bodies.flexible.FlexibleBody.powers` "stiffening", `flexmbs.contact.Contact.power_history`
and ``potential_history``, the controller's held loads `flexmbs.control.Output` as functions of time).

The reference values in tests/data/power_rows_before_994d047.json are the per-row values of the code at
commit 994d047 (before this batching), recorded by ``python tests/test_power_rows.py --record PATH`` run
against that commit's flexmbs (``git archive 994d047 | tar -x -C DIR``, then from DIR with PYTHONPATH=DIR,
this file's cases/ being unchanged since): the flexible bodies' ``powers`` (the stiffening power then a list over rows
of ``geometric_stiffness_force``), the contacts' one-state ``powers`` and ``potential``, and the works and
energy balance of whole runs (the controlled pendulum, the incline block sticking and sliding, the bouncing
ball).  The rows' (t, q, v) are stored with them.  The recorded contacts of a row are compared with
`record_at_994d047`, that commit's `Contact.record` kept here.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

CASES = Path(__file__).resolve().parents[1] / "cases"
sys.path.insert(0, str(CASES))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bouncing_ball  # noqa: E402
import controlled_pendulum  # noqa: E402
import incline_block  # noqa: E402
import slider_crank  # noqa: E402
import spinup_beam  # noqa: E402
from power_reference import assert_element_as_recorded, close, element_sides, per_state_values  # noqa: E402

REFERENCE = Path(__file__).parent / "data" / "power_rows_before_994d047.json"
STICK = dict(angle=20.0, mu=0.6)                  # tan(20 deg) = 0.36 < mu: the block sticks
SLIP = dict(angle=30.0, mu=0.2)                   # tan(30 deg) = 0.58 > mu: it slides


def flexible_systems() -> dict:
    """{name: (System, body)}: the spin-up beam on its hub with "omega" stiffening (cases/spinup_beam.py),
    the coupled slider-crank's reduced rod with "modal-stress" stiffening (cases/slider_crank.py)."""
    system, _, beam, _ = spinup_beam.build_coupled(elements=4, coupled_stiffening="omega")
    sc, rod, _ = slider_crank.build_coupled(elements=6, rod_modes=3, coupled_stiffening="modal-stress")
    return {"spinup omega": (system, beam), "slider-crank modal-stress": (sc, rod)}


def contact_systems(drop_height=0.005) -> dict:
    """{name: System}: the incline block (a Box on a Plane, 2D) sticking and sliding, the bouncing ball
    (a Sphere on a Plane, 3D) ``drop_height`` [m] above the plane (5 mm: the rows' positions reach it)."""
    def incline(extra):
        p = dict(incline_block.DEFAULTS)
        p.update(extra)
        return incline_block.build(p)
    return {"incline stick": incline(STICK), "incline slip": incline(SLIP),
            "bouncing ball": bouncing_ball.build(dict(bouncing_ball.DEFAULTS, drop_height=drop_height))}


def rows(system, n=12, seed=5):
    """(t (n,), q (n, n_q), v (n, n_q)): states about the start, positions 1 mm to 3 cm off (contacts on and
    off), speeds alternately 0.5 m/s and 1e-4 m/s off (friction slipping and sticking, below the slip velocity)."""
    rng = np.random.default_rng(seed)
    q0, v0 = system.initial_coordinates(), system.initial_velocities()
    scale = np.where(np.arange(n) % 3 == 0, 1e-3, 0.03)[:, None]
    q = q0 + scale * rng.standard_normal((n, len(q0)))
    v = v0 + np.where(np.arange(n) % 2 == 0, 0.5, 1e-4)[:, None] * rng.standard_normal((n, len(q0)))
    return np.linspace(0.0, 0.3, n), q, v


def run_works(name):
    """(works dict at the end, max |E - E0 - W|, max |E|) of the run ``name``."""
    import flexmbs as fm
    from flexmbs.analysis import output_times
    if name == "controlled pendulum":
        p = dict(controlled_pendulum.DEFAULTS, t_end=0.5, plots=False)
        system, pin, tau = controlled_pendulum.build(p)
        res = fm.run(system, formulation="index3", method="index3-alpha", h=p["h"], rho_inf=p["rho_inf"],
                     t_end=p["t_end"], t_eval=output_times(p["t_end"], p["dt_out"]),
                     controllers=[controlled_pendulum.pd_controller(p, pin, tau)])
    elif name.startswith("incline"):
        system = contact_systems()[name]
        res = fm.run(system, t_end=0.1, t_eval=output_times(0.1, 0.01), method="Radau", rtol=1e-6)
    else:
        system = contact_systems(drop_height=bouncing_ball.DEFAULTS["drop_height"])[name]
        res = fm.run(system, t_end=0.5, t_eval=output_times(0.5, 0.01), method="RK45", rtol=1e-8)
    works = {k: float(res.energies[k][-1]) for k in ("W_loads", "W_damping", "W_drivers", "W_stiffening")
             if k in res.energies}
    return works, float(np.abs(res.energy_balance_error()).max()), float(np.abs(res.energies["total"]).max())


RUNS = ("controlled pendulum", "incline stick", "incline slip", "bouncing ball")


def record(path) -> None:
    """Write the rows and the per-row values of `flexible_systems` and `contact_systems` and the works of
    `RUNS` to ``path`` (JSON)."""
    data = {"flexible": {}, "contact": {}, "runs": {}}
    for name, (system, body) in flexible_systems().items():
        t, q, v = rows(system)
        sl = system.slice(body)
        P = body.powers(t, q[:, sl], v[:, sl], system.gravity)
        data["flexible"][name] = {"t": t.tolist(), "q": q.tolist(), "v": v.tolist(),
                                  "values": {k: np.asarray(x).tolist() for k, x in P.items()}}
    for name, system in contact_systems().items():
        t, q, v = rows(system)
        data["contact"][name] = {"t": t.tolist(), "q": q.tolist(), "v": v.tolist(),
                                 "values": per_state_values(system, t, q, v)}
    for name in RUNS:
        works, balance, scale = run_works(name)
        data["runs"][name] = {"works": works, "balance": balance, "scale": scale}
    Path(path).write_text(json.dumps(data, indent=1))


if __name__ == "__main__" and sys.argv[1:2] == ["--record"]:
    record(sys.argv[2])


@pytest.fixture(scope="module")
def reference():
    return json.loads(REFERENCE.read_text())


# -- the controller's held outputs as functions of time ---------------------------------------------
def held_output(shape=()):
    """An `Output` holding 0.5 from t = 0, -1.5 from 0.01 and 2.0 from 0.02 (samples every 0.01 s), as a
    running Controller leaves it (its sampling side: ``_start``, ``_hold``)."""
    from flexmbs.control import Output
    u = Output("u", shape)
    u._start(None, 0.01)
    for tk, value in ((0.0, 0.5), (0.01, -1.5), (0.02, 2.0)):
        u._hold(tk, value if shape == () else value * np.array([1.0, -2.0, 3.0]))
    return u


@pytest.mark.parametrize("shape", [(), (3,)])
def test_a_held_output_gives_all_times_at_once_as_one_time_each(shape):
    """`Output` and its loads' functions (``u.torque``'s u(t) E) at an array of times: the values of one call
    per time (zero-order hold: u_k on (t_k, t_k + T], the sample itself still the previous value)."""
    from flexmbs.bodies.loads import values_of_time
    u = held_output(shape)
    t = np.array([0.0, 0.004, 0.01, 0.0100001, 0.015, 0.02, 0.025, 0.03])
    one = np.array([u(float(tk)) for tk in t])
    close(u(t), one, "Output")
    expected = {(): [0.5, 0.5, 0.5, -1.5, -1.5, -1.5, 2.0, 2.0]}.get(shape)
    if expected is not None:
        np.testing.assert_array_equal(u(t), expected)
    f = u.torque((0.0, 1.0, 0.0)) if shape == () else u.torque()
    fn = f.spec[1]
    close(values_of_time(fn, t, "torque", (3,)), np.array([fn(float(tk)) for tk in t]), "torque")


def test_a_held_output_read_beyond_its_hold_at_some_time_of_an_array_is_refused():
    """An array of times reaching past the hold (the integrator did not stop at a sample) raises as a read at
    that one time does, whatever the order of the times."""
    from flexmbs.control import ControlError
    u = held_output()
    with pytest.raises(ControlError, match="beyond its hold interval"):
        u(np.array([0.05, 0.01]))


def test_the_controlled_pendulum_evaluates_its_held_torque_once_per_block(reference, monkeypatch):
    """cases/controlled_pendulum.py on 0.5 s: the works and the energy balance E - E0 - W of commit 994d047, and
    the held torque's power over each block of steps by one vectorised call, no call at one time (before: one
    per step, 15 306 on the 3 s run; the sampling itself reads it once per sample)."""
    from flexmbs import control
    from flexmbs.system import System
    calls = {"one": 0, "blocks": 0, "inside": False}
    one_time, power_history = control._Scaled.__call__, System.power_history

    def counted(self, t):                       # the calls at one time made for the works' powers
        calls["one"] += calls["inside"] and np.ndim(t) == 0
        return one_time(self, t)

    def block(self, *args, **kwargs):
        calls["inside"], calls["blocks"] = True, calls["blocks"] + 1
        try:
            return power_history(self, *args, **kwargs)
        finally:
            calls["inside"] = False
    monkeypatch.setattr(control._Scaled, "__call__", counted)
    monkeypatch.setattr(System, "power_history", block)
    works, balance, scale = run_works("controlled pendulum")
    ref = reference["runs"]["controlled pendulum"]
    for key, W in ref["works"].items():
        close(works[key], W, key, rtol=1e-10)
    assert balance == pytest.approx(ref["balance"], rel=1e-6, abs=1e-12 * ref["scale"])
    assert calls["blocks"] > 0 and calls["one"] == 0


# -- the flexible bodies' stiffening power ----------------------------------------------------------
@pytest.mark.parametrize("name", ["spinup omega", "slider-crank modal-stress"])
def test_flexible_powers_give_the_recorded_per_row_values_all_rows_at_once(name, reference):
    """`FlexibleBody.powers` (its "stiffening" power now `stiffening_power`, all rows at once) equals the values
    recorded at 994d047, whose stiffening power was a list over rows of ``geometric_stiffness_force``; and so
    does -delta' . `geometric_stiffness_force` at each row now (the step's one-state force)."""
    system, body = flexible_systems()[name]
    ref = reference["flexible"][name]
    t, q, v = (np.array(ref[k]) for k in ("t", "q", "v"))
    sl = system.slice(body)
    P = body.powers(t, q[:, sl], v[:, sl], system.gravity)
    assert set(P) == set(ref["values"])
    for key, old in ref["values"].items():
        close(P[key], old, f"{name}: {key}")
    assert np.any(np.abs(ref["values"]["stiffening"]) > 0)
    one = [-body.geometric_stiffness_force(float(tk), qk, vk, system.gravity) @ vk[7:]
           for tk, qk, vk in zip(t, q[:, sl], v[:, sl])]
    close(P["stiffening"], one, f"{name}: one row at a time")


def test_the_omega_coefficients_of_all_rows_are_those_of_each_row():
    """`FlexibleBody._omega_coefficient_history` (A_f = omega omega^T - |omega|^2 I, alpha = -A^T g, the load
    factors) equals the step's one-state `_omega_coefficients` (A_f = tilde(omega)^2) row by row, with gravity."""
    system, body = flexible_systems()["spinup omega"]
    t, q, v = rows(system)
    sl = system.slice(body)
    g = np.array([0.3, -9.81, 1.2])
    C = body._omega_coefficient_history(t, q[:, sl], v[:, sl], g)
    close(C, [body._omega_coefficients(tk, qk, vk, g) for tk, qk, vk in zip(t, q[:, sl], v[:, sl])], "coefficients")
    assert np.any(C[:, body._omega_columns() >= 9])                       # the gravity columns take part


# -- contacts ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["incline stick", "incline slip", "bouncing ball"])
def test_contact_histories_give_the_recorded_per_row_values_all_rows_at_once(name, reference):
    """`Contact.power_history` and ``potential_history`` (one `row_state` for all rows) equal the one-state
    ``powers`` and ``potential`` recorded at 994d047 row by row, with contacts active and not, sticking (|v_t|
    below the slip velocity) and sliding; the one-state forms (now one row of the histories) too."""
    system, ref = contact_systems()[name], reference["contact"][name]
    t, q, v = (np.array(ref[k]) for k in ("t", "q", "v"))
    (f,) = system.force_elements
    old = ref["values"][f.name]
    assert 0 < np.count_nonzero(old["potential"]) < len(t)                  # rows with and without contact
    assert_element_as_recorded(system, f, t, q, v, old, f"{name}:")


def test_a_contact_evaluates_a_block_of_rows_in_one_state(monkeypatch):
    """The System's powers and energies of a block of rows call `Contact.row_state` once for all rows (before:
    one `Contact.state` per row), and the rows' states hold each row's contacts as `state` does."""
    from flexmbs.contact import Contact
    system = contact_systems()["incline slip"]
    t, q, v = rows(system, n=30)
    (f,) = system.force_elements
    Qs, Vs = element_sides(system, f, q, v)
    st = f.row_state(np.hstack(Qs), np.hstack(Vs))
    body, row = f.carriers.body_of(st.body_b)
    for k in range(len(t)):
        one = f.state(q[k, system.slice(f.bodies[0])], v[k, system.slice(f.bodies[0])])
        close(np.sort(st.f_n[row == k]), np.sort(one.f_n), f"row {k}: f_n")
        assert np.all(body[row == k] == one.body_b)
    calls = {"rows": 0}
    row_state = Contact.row_state

    def counted(self, Q, V):
        calls["rows"] += 1
        return row_state(self, Q, V)
    monkeypatch.setattr(Contact, "row_state", counted)
    system.power_history(t, q, v)
    system.energy_history(q, v)
    assert calls["rows"] == 2


def test_a_3d_scene_with_spheres_a_box_and_a_plane_on_many_rows_takes_each_rows_pairs_only():
    """Spheres on a plane and a box (tests/test_power_history.py's contact scene) at 60 rows: far more
    primitives in the block than `flexmbs.contact.broad.SMALL`, each row's pairs by themselves (the rows'
    primitives overlap in space, never across rows): the histories equal one state per row."""
    from test_power_history import contact_scene
    system = contact_scene()
    t, q, v = rows(system, n=60, seed=9)
    q[:, 2::7] -= 0.01                                                      # the spheres pressed in
    (f,) = system.force_elements
    Qs, Vs = element_sides(system, f, q, v)
    per_row = per_state_values(system, t, q, v)[f.name]
    assert np.count_nonzero(per_row["potential"]) > 10
    close(f.power_history(t, Qs, Vs)["damping"], per_row["damping"], "damping")
    close(f.potential_history(Qs), per_row["potential"], "potential")


@pytest.mark.parametrize("name", [pytest.param("incline stick", marks=pytest.mark.slow),      # 3-5 s each
                                  pytest.param("incline slip", marks=pytest.mark.slow), "bouncing ball"])
def test_contact_runs_keep_their_works_and_energy_balance(name, reference):
    """The incline block sticking and sliding (Radau, 0.1 s, as the case runs) and the bouncing ball (0.5 s,
    its first impact): the works and max |E - E0 - W| of commit 994d047 (the works' quadrature unchanged,
    its powers batched)."""
    works, balance, scale = run_works(name)
    ref = reference["runs"][name]
    for key, W in ref["works"].items():
        close(works[key], W, key, rtol=1e-9)
    assert balance == pytest.approx(ref["balance"], rel=1e-3, abs=1e-12 * ref["scale"])


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("n1, n_rows", [(5, 7), (30, 4), (200, 3)])
def test_the_broad_phase_by_group_finds_each_groups_pairs_of_brute_force(dim, n1, n_rows):
    """`overlapping_pairs(lo, hi, group)`: the pairs of each group alone (`brute_force_pairs`), none across
    groups, with the groups' boxes on top of each other, by every pair of a group (at most `SMALL` a group)
    and by the cell grid (more), a large box and a point in each group."""
    from flexmbs.contact.broad import SMALL, brute_force_pairs, overlapping_pairs
    rng = np.random.default_rng(n1 + dim)
    c = rng.uniform(0.0, 5.0, (n_rows, n1, dim))
    r = rng.uniform(0.01, 0.4, (n_rows, n1))
    r[:, :2] = [3.0, 0.0]
    lo, hi = (c - r[..., None]).reshape(-1, dim), (c + r[..., None]).reshape(-1, dim)
    group = np.repeat(np.arange(n_rows), n1)
    got = set(zip(*(x.tolist() for x in overlapping_pairs(lo, hi, group))))
    want = set()
    for k in range(n_rows):
        i, j = brute_force_pairs(lo[group == k], hi[group == k])
        want |= set(zip((i + k * n1).tolist(), (j + k * n1).tolist()))
    assert got == want and len(want) > n_rows
    assert (n1 > SMALL) == (n1 == 200)


def record_at_994d047(f, q, v) -> dict:
    """`Contact.record` of one state as commit 994d047 computed it (its code, on `Contact.state`): the reference
    of `Contact.record_history`."""
    st = f.state(q, v)
    order = np.argsort(-st.f_n, kind="stable")[:f.slots]
    m = len(order)
    out = {"point": np.full((f.slots, 3), np.nan), "normal_force": np.full((f.slots, 3), np.nan),
           "friction_force": np.full((f.slots, 3), np.nan), "depth": np.full(f.slots, np.nan),
           "bodies": np.full((f.slots, 2), -2, dtype=np.int64), "count": np.int64(len(st.delta))}
    pad = (0, 3 - f.dim)
    out["point"][:m] = np.pad(0.5 * (st.r_a + st.r_b)[order], ((0, 0), pad))
    out["normal_force"][:m] = np.pad((st.f_n[:, None] * st.n)[order], ((0, 0), pad))
    out["friction_force"][:m] = np.pad(st.F_t[order], ((0, 0), pad))
    out["depth"][:m] = st.delta[order]
    ground = len(f.bodies)
    out["bodies"][:m] = np.where(np.stack([st.body_a, st.body_b], 1)[order] == ground, -1,
                                 np.stack([st.body_a, st.body_b], 1)[order])
    return out


@pytest.mark.parametrize("name, slots", [("incline slip", 32), ("bouncing ball", 32), ("spheres", 3)])
def test_contact_records_of_all_rows_are_those_of_each_row(name, slots):
    """`Contact.record_history` (the results' contacts/NAME/... of a block of outputs, `contact_fields`) equals
    `record` of 994d047 at each row: the largest normal forces first, ``slots`` of them (3 < the 5 to 7
    contacts of the scene's rows: cut), NaN and -2 in the empty slots, the ground -1."""
    from flexmbs.contact import Contact
    from flexmbs.contact.record import KEYS, contact_fields
    from test_power_history import contact_scene
    if name == "spheres":
        system = contact_scene()
        f = system.force_elements[0]
        system.force_elements[0] = Contact(f.shapes, f.law, slots=slots)
        t, q, v = rows(system, n=40, seed=9)
        q[:, 2::7] -= 0.01
    else:
        system = contact_systems()[name]
        t, q, v = rows(system, n=40)
    (f,) = system.force_elements
    fields = contact_fields(system, q, v)
    Qs, Vs = element_sides(system, f, q, v)
    counts = []
    for k in range(len(t)):
        old = record_at_994d047(f, np.hstack(Qs)[k], np.hstack(Vs)[k])
        counts.append(int(old["count"]))
        for key in KEYS:
            new = fields[f"contacts/{f.name}/{key}"][k]
            if key in ("bodies", "count"):
                np.testing.assert_array_equal(new, old[key], err_msg=f"{name}: row {k} {key}")
            else:
                np.testing.assert_allclose(new, old[key], rtol=1e-12, atol=1e-15, err_msg=f"{name}: row {k} {key}")
    assert max(counts) > 0 and (name == "spheres" or 0 in counts)          # rows without contact too
    if name == "spheres":
        assert max(counts) > slots


# -- a user's force law declaring `vectorized` ----------------------------------------------------------
def cubic(t, d, d_dot):
    """F = -3 |d|^2 d - 0.1 d' (tests/test_power_history.py's law), for one state (dim,) or rows (n, dim)."""
    return -3.0 * d * np.sum(d * d, axis=-1, keepdims=True) - 0.1 * d_dot


def test_a_vectorized_force_law_gives_the_power_of_all_rows_in_one_call():
    """`ForceLaw.power_history` with a law declaring ``vectorized = True``: one call for all rows, the values
    of the same law called row by row (1e-12), and the one-state force unchanged."""
    from flexmbs.bodies import RigidBodyEP
    from flexmbs.forces import ForceLaw
    from flexmbs.system import System
    calls = {"n": 0}

    def law(t, d, d_dot):
        calls["n"] += 1
        return cubic(t, d, d_dot)
    law.vectorized = True
    a = RigidBodyEP("a", 2.0, np.diag([0.1, 0.2, 0.3]))
    b = RigidBodyEP("b", 1.0, np.diag([0.05, 0.1, 0.12]), position=(1, 0.2, 0))
    fast, slow = ForceLaw(a, (0, 0, 0), b, (0, 0, 0), law), ForceLaw(a, (0, 0, 0), b, (0, 0, 0), cubic)
    system = System([a, b])
    t, q, v = rows(system, n=25)
    Qs, Vs = [q[:, system.slice(a)], q[:, system.slice(b)]], [v[:, system.slice(a)], v[:, system.slice(b)]]
    calls["n"] = 0
    P = fast.power_history(t, Qs, Vs)["loads"]
    assert calls["n"] == 1
    close(P, slow.power_history(t, Qs, Vs)["loads"], "vectorized law")
    qs, vs = [Q[3] for Q in Qs], [V[3] for V in Vs]
    close(np.concatenate(fast.generalized_forces(0.1, qs, vs)), np.concatenate(slow.generalized_forces(0.1, qs, vs)),
          "one state")


def test_a_sphere_in_a_hole_on_many_rows_gives_each_rows_contact():
    """cases/crank_clearance.py's journal (a Sphere) in its Hole (2D) at 40 rows, the journal shifted by up to 1.5
    times the clearance (in contact at some rows, free at others): `Contact.power_history`, ``potential_history``
    and ``record_history`` equal one `state` per row (the holes are tested per row, not all rows against all)."""
    import crank_clearance
    p = dict(crank_clearance.DEFAULTS)
    system, f = crank_clearance.build(p)
    t, q, v = rows(system, n=40, seed=2)
    q = np.tile(system.initial_coordinates(), (40, 1))
    slider = system.slice(system.bodies[2])
    q[:, slider.start:slider.start + 2] += 1.5 * p["clearance"] * np.random.default_rng(2).uniform(-1, 1, (40, 2))
    Qs, Vs = element_sides(system, f, q, v)
    per_row = per_state_values(system, t, q, v)[f.name]
    assert 0 < np.count_nonzero(per_row["potential"]) < len(t)
    close(f.power_history(t, Qs, Vs)["damping"], per_row["damping"], "damping")
    close(f.potential_history(Qs), per_row["potential"], "potential")
    depth = f.record_history(np.hstack(Qs), np.hstack(Vs))["depth"]
    for k in range(len(t)):
        np.testing.assert_allclose(depth[k], record_at_994d047(f, np.hstack(Qs)[k], np.hstack(Vs)[k])["depth"],
                                   rtol=1e-12, atol=1e-18)


def contact_scenes() -> dict:
    """{name: (Contact, bodies)}: tests/test_contact.py's 3D scene (every pair kind: sphere-plane, -sphere,
    -box, -capsule), three balls on a triangulated floor (a Surface of the ground: sphere-triangle, the
    deepest triangle kept per ball), a beam's nodes on the ground (flexible: the nodes' deformation columns)."""
    from test_contact import beam_body, scene_3d
    from flexmbs.bodies import RigidBodyEP
    from flexmbs.contact import Contact, ContactLaw, Plane, Sphere, Surface
    bodies, shapes = scene_3d()
    every = Contact(shapes, ContactLaw(stiffness=1e6, restitution=0.5, friction=0.3))
    pts = np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0]])
    balls = [RigidBodyEP(f"b{k}", 1.0, 0.004 * np.eye(3), position=p) for k, p in
             enumerate([(0.5, -0.3, 0.098), (0.2, 0.2, 0.097), (1.05, 0.0, 0.0)])]
    floor = Contact([Surface(None, points=pts, triangles=[[0, 1, 2], [0, 2, 3]])] + [Sphere(b, 0.1) for b in balls],
                    ContactLaw(stiffness=1e6, restitution=0.8, friction=0.2))
    beam = beam_body()
    nodes = Contact([Surface(beam, radius=0.012), Plane(None, (0, 0, 1))],
                    ContactLaw(stiffness=1e5, effective_mass=0.1, friction=0.4))
    return {"every pair kind": (every, bodies), "triangulated floor": (floor, balls), "beam nodes": (nodes, [beam])}


@pytest.mark.parametrize("name", ["every pair kind", "triangulated floor", "beam nodes"])
def test_every_pair_kind_on_many_rows_gives_each_rows_contacts(name):
    """The contact scenes of `contact_scenes` at 30 rows about their start (positions 5 mm off, a beam's elastic
    coordinates 1e-4 off): `Contact.power_history`, ``potential_history`` and ``record_history`` equal one
    `state` per row (994d047's `record`)."""
    f, bodies = contact_scenes()[name]
    rng = np.random.default_rng(4)
    q0 = np.concatenate([b.initial_coordinates() for b in bodies])
    Q = q0 + 5e-3 * rng.standard_normal((30, len(q0)))
    V = np.where(np.arange(30) % 2 == 0, 0.3, 1e-5)[:, None] * rng.standard_normal((30, len(q0)))
    cut = np.cumsum([b.n_q for b in bodies])[:-1]
    Qs, Vs = np.split(Q, cut, axis=1), np.split(V, cut, axis=1)
    t = np.linspace(0.0, 0.1, 30)
    P, U = f.power_history(t, Qs, Vs)["damping"], f.potential_history(Qs)
    rec = f.record_history(Q, V)
    for k in range(30):
        qs, vs = [x[k] for x in Qs], [x[k] for x in Vs]
        close(P[k], f.powers(t[k], qs, vs)["damping"], f"{name}: row {k} damping")
        st = f.state(Q[k], np.zeros_like(Q[k]))
        close(U[k], np.sum(f.law.energy(st.delta, st.k)), f"{name}: row {k} potential")
        old = record_at_994d047(f, Q[k], V[k])
        np.testing.assert_array_equal(rec["bodies"][k], old["bodies"], err_msg=f"{name}: row {k}")
        np.testing.assert_allclose(rec["normal_force"][k], old["normal_force"], rtol=1e-12, atol=1e-12)
    assert np.count_nonzero(U) > 5
