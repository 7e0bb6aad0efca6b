"""The joint reactions in closed form (issue 22): on a body whose one internal constraint is the
Euler-parameter norm (`RigidBodyEP`, a `FlexibleBody` on its tangent frame) the stacked reactions take
F = Q_R, T = E(p) w / (2 |p|^2), mu = p . w / (2 |p|^2) with w = Q_p - V^T F
(`flexmbs.constraints.reaction_blocks.frame_reaction`), the rows of R and p of Q_b = B_b [F; T; mu].

- at random states (|p| off 1) and random multipliers they equal the per-output reference formula, the
  least-squares solution of all rows of B_b (`Constraint.reaction`, one lstsq per joint and output), on the
  coupled slider-crank and on a System of revolute, spherical and prismatic joints and a driver on rigid
  and flexible bodies, also with one flexible body on its mean axes (its pairs by least squares in the
  same blocks);
- x is the exact solution of B_b x = Q_b for a Q_b in the range of B_b;
- physics: a body spinning freely on a revolute feels the centripetal force m omega^2 rho and no torque;
- where |p|^2 <= QR_RTOL the rows go to the least squares (the pseudo-inverse), as before;
- the drivers' C_t from their directions alone (`_Markers.evaluate_stacked`'s ``which``) are the numbers of
  every marker's evaluation.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs import BeamEB2D, Material, Model, generate
from flexmbs.bodies import FlexibleBody, Node, RigidBodyEP
from flexmbs.constraints import AngleDriver, Prismatic, Revolute, Spherical
from flexmbs.constraints.batch import JointBatch
from flexmbs.mechanisms import constant_speed
from flexmbs.constraints.reaction_blocks import QR_RTOL, ReactionBlocks, frame_reaction, least_squares, norm_only
from flexmbs.system import System

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))

import slider_crank  # noqa: E402

SLIDER_CRANK = ["crank pivot", "drive", "pin A", "pin B", "slide"]
MIXED = ["pivot", "drive", "ball", "hinge", "pin", "guide"]


def mixed(reference="supports"):
    """A driven hub on a revolute, a clamped-free beam on a spherical joint at the hub, a rod hinged to the
    beam's tip (revolute between two flexible bodies), a tip body on a spherical joint at the rod's end and a
    prismatic guide to the ground (redundant rows do not matter here: random multipliers).  ``reference``
    "mean-axis": the rod free-free on its mean axes (internal constraints: the Euler-parameter norm and the
    mean-axis conditions), whose pairs take the least squares beside the others' closed form."""
    z = np.array([0.0, 0.0, 1.0])
    hub = RigidBodyEP("hub", 2.0, [0.1, 0.2, 0.3], centroid=[0.05, 0.01, -0.02], angular_velocity=3.0 * z)
    el = BeamEB2D(Material(E=7e10, rho=2700.0), area=1e-4, I=1e-9)
    beam = FlexibleBody(Model(generate.line(4, 0.5), el, fixed=[("start", "all")]), "beam", position=[0.1, 0.0, 0.0])
    fixed = [] if reference == "mean-axis" else [("start", "u"), ("start", "v"), ("end", "v")]
    rod = FlexibleBody(Model(generate.line(3, 0.4), el, fixed=fixed), "rod", position=[0.6, 0.0, 0.0],
                       reference=reference)
    tip = RigidBodyEP("tip", 0.3, [1e-3, 2e-3, 3e-3], position=[1.0, 0.0, 0.0])
    constraints = [Revolute(None, hub, at=np.zeros(3), axis=z, name="pivot"),
                   AngleDriver(None, hub, z, constant_speed(3.0), name="drive"),
                   Spherical(hub, beam, s_j=Node(0), name="ball"),
                   Revolute(beam, rod, s_i=Node(4), s_j=Node(0), axis=z, name="hinge"),
                   Spherical(rod, tip, s_i=Node(3), name="pin"),
                   Prismatic(None, tip, at=[1.0, 0.0, 0.0], axis=[1.0, 0.0, 0.0], name="guide")]
    return System([hub, beam, rod, tip], constraints)


SYSTEMS = {"slider-crank": (lambda: slider_crank.build_coupled(elements=2)[0], SLIDER_CRANK), "mixed": (mixed, MIXED),
           "mixed-mean-axis": (lambda: mixed("mean-axis"), MIXED)}


def random_states(system, n, seed=7):
    """(t, q, lam): n states near the initial one (|p| off 1 by about 5 %) and multipliers of size 100."""
    rng = np.random.default_rng(seed)
    q = system.initial_coordinates() + 0.05 * rng.standard_normal((n, system.n_q))
    return rng.uniform(0.0, 0.05, n), q, 100.0 * rng.standard_normal((n, system.n_c))


@pytest.mark.parametrize("name", SYSTEMS)
def test_closed_form_reactions_equal_the_per_output_least_squares(name):
    """Every joint's force and torque on each body at 6 random states: `System.reaction_history` (closed form on
    every body here but the mean-axis rod) against `System.reactions` (one lstsq of all rows of B_b per joint and output) to 1e-10 of
    the joint's largest value; frames to round-off."""
    build, names = SYSTEMS[name]
    system = build()
    assert [norm_only(b) for b in system.bodies] == [b.name != "rod" or name != "mixed-mean-axis"
                                                      for b in system.bodies]
    t, q, lam = random_states(system, 6)
    history = system.reaction_history(t, q, lam, names)
    checked = 0
    for i in range(len(t)):
        single = system.reactions(t[i], q[i], lam[i], names=names)
        for joint in names:
            np.testing.assert_allclose(history[joint]["rotation"][i], single[joint]["rotation"], rtol=0, atol=1e-14)
            for body, ref in single[joint]["bodies"].items():
                scale = max(np.abs(ref["force"]).max(), np.abs(ref["torque"]).max())
                assert scale > 1e-2                                 # a nonzero reaction: the test can fail
                for key in ("force", "torque"):
                    err = np.abs(history[joint]["bodies"][body][key][i] - ref[key]).max()
                    assert err <= 1e-10 * scale, (joint, body, key, err / scale)
                    checked += 1
    assert checked == 2 * len(t) * sum(len(single[j]["bodies"]) for j in names)


def test_frame_reaction_is_the_exact_solution_of_the_basis():
    """Q_b = B_b x for a random x (F, T, mu) and the slider-crank's bases at random states (the rod's 31 x 7
    and the rigid bodies' 7 x 7): `frame_reaction` returns x to 1e-12 of its size, and so does the least
    squares of all rows."""
    system = SYSTEMS["slider-crank"][0]()
    t, q, _ = random_states(system, 5, seed=3)
    blocks = ReactionBlocks(system, [system.constraint(n) for n in SLIDER_CRANK])
    QE = np.concatenate((q, np.broadcast_to(JointBatch.extend(np.zeros(0)), (len(q), 8))), axis=1)
    J = blocks.markers.evaluate_stacked(QE)[1]
    rng = np.random.default_rng(5)
    for c, marks in zip(blocks.constraints, blocks.point):
        for b, k in zip(c.bodies, marks):
            if b is None:
                continue
            sl = system.slice(b)
            B = blocks.basis(b, k, J, blocks.body_columns(0.0, q, b))
            x = rng.standard_normal((len(t), 7))
            Q = np.einsum("tqk,tk->tq", B, x)
            got, solved = frame_reaction(Q, J[:, k, :, 3:7], q[:, sl.start + 3:sl.start + 7])
            assert solved.all()
            np.testing.assert_allclose(got, x, rtol=0, atol=1e-12 * np.abs(x).max())
            np.testing.assert_allclose(least_squares(B, Q), x, rtol=0, atol=1e-12 * np.abs(x).max())


def test_vanishing_euler_parameters_take_the_least_squares():
    """The crank's p scaled to |p|^2 = QR_RTOL / 4 at one output: `frame_reaction` leaves that row
    (solved False), and `reaction_history` gives there what the per-output lstsq gives (the
    pseudo-inverse), finite; the other outputs keep the closed form."""
    system = SYSTEMS["slider-crank"][0]()
    t, q, lam = random_states(system, 3, seed=9)
    crank = system.slice(system.body("crank"))
    p = q[1, crank.start + 3:crank.start + 7]
    q[1, crank.start + 3:crank.start + 7] = p * np.sqrt(QR_RTOL / 4.0) / np.linalg.norm(p)
    solved = frame_reaction(np.ones((3, 7)), np.zeros((3, 3, 4)), q[:, crank.start + 3:crank.start + 7])[1]
    assert solved.tolist() == [True, False, True]
    history = system.reaction_history(t, q, lam, ["crank pivot", "drive"])
    for i in range(3):
        single = system.reactions(t[i], q[i], lam[i], names=["crank pivot", "drive"])
        for joint, ref in single.items():
            for key in ("force", "torque"):
                got = history[joint]["bodies"]["crank"][key][i]
                assert np.isfinite(got).all()
                want = ref["bodies"]["crank"][key]
                assert np.abs(got - want).max() <= 1e-8 * np.abs(want).max(), (i, joint, key)


def test_evaluate_stacked_of_some_markers_equals_those_of_all():
    """`_Markers.evaluate_stacked` with ``which`` (a subset, repeated and out of order) gives the rows of
    the evaluation of every marker, positions and Jacobians, exactly."""
    system = mixed()
    t, q, _ = random_states(system, 4, seed=2)
    markers = system._joints.markers
    QE = np.concatenate((q, np.broadcast_to(JointBatch.extend(np.zeros(0)), (len(q), 8))), axis=1)
    r, J = markers.evaluate_stacked(QE)
    elastic = int(np.flatnonzero(np.abs(markers.Phi).sum(axis=(1, 2)) > 0)[0])    # a point on a flexible body
    which = np.array([3, elastic, 0, 3, len(markers.spec) - 1])
    r_some, J_some = markers.evaluate_stacked(QE, which=which)
    np.testing.assert_array_equal(r_some, r[:, which])
    np.testing.assert_array_equal(J_some, J[:, which])
    assert np.abs(J_some[:, 1, :, 7:]).max() > 0.0                      # its elastic columns are compared


def test_a_body_spinning_on_a_revolute_feels_the_centripetal_force_and_no_torque():
    """A rigid body turning freely at omega about the revolute's axis z through its reference point, centroid
    at rho on its x axis, principal axes along the body's: on the exact motion (theta = omega t, no gravity)
    the pivot pushes the body toward the axis with m omega^2 rho and, about the reaction point, no torque
    (the angular momentum about it, (I_zz + m rho^2) omega z, is constant).  Multipliers from the index-1
    accelerations at each output (`Index1.multiplier_history`), reactions stacked in closed form."""
    from flexmbs.formulations.index1 import Index1
    m, rho, omega = 2.0, 0.3, 5.0
    z = np.array([0.0, 0.0, 1.0])
    body = RigidBodyEP("rotor", m, [0.01, 0.02, 0.03], centroid=[rho, 0.0, 0.0], angular_velocity=omega * z)
    system = System([body], [Revolute(None, body, at=np.zeros(3), axis=z, name="pivot")])
    t = np.linspace(0.0, 1.0, 7)
    half = 0.5 * omega * t
    q = np.zeros((len(t), 7))
    q[:, 3], q[:, 6] = np.cos(half), np.sin(half)                             # p(theta) about z
    v = np.zeros((len(t), 7))
    v[:, 3], v[:, 6] = -0.5 * omega * np.sin(half), 0.5 * omega * np.cos(half)
    lam = Index1(system, solver="augmented").multiplier_history(t, np.hstack([q, v]))
    history = system.reaction_history(t, q, lam, ["pivot"])["pivot"]
    force = np.einsum("tij,tj->ti", history["rotation"], history["bodies"]["rotor"]["force"])
    toward_axis = -np.stack([np.cos(omega * t), np.sin(omega * t), 0.0 * t], axis=1)
    np.testing.assert_allclose(force, m * omega ** 2 * rho * toward_axis, rtol=0, atol=1e-10 * m * omega ** 2 * rho)
    np.testing.assert_allclose(history["bodies"]["rotor"]["torque"], 0.0, atol=1e-10 * m * omega ** 2 * rho)
