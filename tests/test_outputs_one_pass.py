"""Outputs in one pass (issue 22, item 1): the multipliers at the outputs come from index3-alpha's
own solution (``Solution.lam``, numpy path and compiled kernel), and the joint reactions and drive
torques of all outputs from blocks stacked over the outputs (`System.reaction_history`,
`flexmbs.constraints.reaction_blocks`).

- the batched reactions equal `System.reactions` (one lstsq per joint per output) at random states,
  for the stacked joints (rigid and flexible frame bodies) and for those computed one output at a
  time (natural coordinates), which say so (`ReactionsPerOutputWarning`); blocks of outputs join
  into the one-pass result; the stacked least squares equals the pseudo-inverse, also where B is
  rank-deficient;
- ``Solution.lam`` is the same on both paths, at step points and between them (linear in t);
- the coupled slider-crank's drive torque from the integrator's multipliers (``Results.multipliers``
  of `flexmbs.run`) equals the one from multipliers solved again at each output (index-1,
  `resolved_multipliers`) once the start-up error of the index-3 multipliers (O(h), damped like
  rho_inf^steps) has decayed.
"""
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
import flexmbs.system
from flexmbs.compiled import kernel_status
from flexmbs.constraints.reaction_blocks import least_squares, unstacked_reason
from flexmbs.formulations.index1 import Index1
from flexmbs.integrators import ConstrainedProblem, simulate
from flexmbs.mechanisms.coupled import axial_torque

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import slider_crank  # noqa: E402
from test_system import triple_pendulum  # noqa: E402

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason=f"{kernel_status()}")
JOINTS = ["crank pivot", "drive", "pin A", "pin B", "slide"]
QUARTER = 2 * np.pi / 150.0 / 4          # a quarter revolution of the crank at 150 rad/s [s]


@pytest.fixture(scope="module")
def system():
    return slider_crank.build_coupled(elements=2)[0]


def assert_equal_to_per_output(system, batched, t, q, lam, names):
    """``batched`` (`System.reaction_history`) equals `System.reactions` (one lstsq per joint and output)
    at every output: frames to 1e-15, forces and torques to 1e-12 of the joint's largest value."""
    for i in range(len(t)):
        single = system.reactions(t[i], q[i], lam[i], names=names)
        for name in names:
            np.testing.assert_allclose(batched[name]["rotation"][i], single[name]["rotation"], atol=1e-15)
            np.testing.assert_allclose(batched[name]["origin"][i], single[name]["origin"], atol=1e-14)
            for body, ref in single[name]["bodies"].items():
                scale = max(np.abs(ref["force"]).max(), np.abs(ref["torque"]).max())
                assert scale > 0.1                                  # a nonzero reaction
                for key in ("force", "torque"):
                    err = np.abs(batched[name]["bodies"][body][key][i] - ref[key]).max()
                    assert err <= 1e-12 * scale, (name, body, key, err / scale)


def random_states(system, n, seed=7):
    """(t, q, lam) of n random states near the initial one and random multipliers of size 100."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, 0.05, n)
    q = system.initial_coordinates() + 0.05 * rng.standard_normal((n, system.n_q))
    return t, q, 100.0 * rng.standard_normal((n, system.n_c))


def test_batched_reactions_equal_the_per_output_ones_at_random_states(system):
    """Every joint's force and torque on each of its bodies, 6 random states and multipliers: the
    stacked blocks (all five joints of the coupled slider-crank are stacked: no warning) and the
    per-output lstsq agree to 1e-12 of the joint's largest value."""
    assert [unstacked_reason(system.constraint(name)) for name in JOINTS] == [None] * len(JOINTS)
    t, q, lam = random_states(system, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", flexmbs.system.ReactionsPerOutputWarning)
        batched = system.reaction_history(t, q, lam, JOINTS)
    assert_equal_to_per_output(system, batched, t, q, lam, JOINTS)


def test_stacked_reactions_of_a_mean_axis_body_equal_the_per_output_ones():
    """A flexible pendulum on its mean axes (test_mean_axis.py; internal constraints: the Euler-parameter
    norm and the constant mean-axis conditions, both batched) is stacked, and its pin's reaction at 5
    random states equals `System.reactions` to 1e-12."""
    from test_mean_axis import pendulum
    pinned = pendulum("mean-axis", 1e9)[0]
    assert unstacked_reason(pinned.constraint("pin")) is None
    t, q, lam = random_states(pinned, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", flexmbs.system.ReactionsPerOutputWarning)
        history = pinned.reaction_history(t, q, lam, ["pin"])
    assert_equal_to_per_output(pinned, history, t, q, lam, ["pin"])


def test_stacked_reactions_never_assemble_per_output(system, monkeypatch):
    """The coupled slider-crank's reactions at 300 outputs call none of the per-output assemblies
    (`System.jacobian`, `Constraint.reaction_basis`, `Constraint.frame`, a body's `point_jacobian`
    or `torque`): they would raise here."""
    from flexmbs.constraints.base import Constraint

    def refused(*args, **kwargs):
        raise AssertionError("a per-output assembly was called")

    t, q, lam = random_states(system, 300, seed=5)
    expected = system.reaction_history(t[:4], q[:4], lam[:4], JOINTS)
    monkeypatch.setattr(type(system), "jacobian", refused)
    for cls in {Constraint, *(type(system.constraint(name)) for name in JOINTS)}:
        for method in ("reaction_basis", "frame"):
            if method in cls.__dict__:
                monkeypatch.setattr(cls, method, refused)
    for body in system.bodies:
        monkeypatch.setattr(type(body), "point_jacobian", refused)
        monkeypatch.setattr(type(body), "torque", refused)
    history = system.reaction_history(t, q, lam, JOINTS)
    assert history["pin B"]["bodies"]["rod"]["force"].shape == (300, 3)
    ref = expected["drive"]["bodies"]["crank"]["torque"]
    np.testing.assert_allclose(history["drive"]["bodies"]["crank"]["torque"][:4], ref, rtol=0,
                               atol=1e-12 * np.abs(ref).max())


def test_blocks_of_outputs_join_into_the_one_pass_result(system, monkeypatch):
    """7 outputs in blocks of 3 (3 + 3 + 1) give the arrays of one block of 7 to 1e-12 of their size."""
    t, q, lam = random_states(system, 7, seed=3)
    whole = system.reaction_history(t, q, lam, JOINTS)
    monkeypatch.setattr(flexmbs.system, "REACTION_BLOCK", 3)
    parts = system.reaction_history(t, q, lam, JOINTS)
    for name in JOINTS:
        for key in ("origin", "rotation"):
            np.testing.assert_allclose(parts[name][key], whole[name][key], rtol=0, atol=1e-15)
        for body, ref in whole[name]["bodies"].items():
            for key, value in ref.items():
                assert parts[name]["bodies"][body][key].shape == value.shape == (7, 3)
                np.testing.assert_allclose(parts[name]["bodies"][body][key], value, rtol=0,
                                           atol=1e-12 * np.abs(value).max() + 1e-300)


def test_constraints_on_bodies_without_frame_markers_say_they_are_computed_per_output():
    """The natural-coordinate triple pendulum (test_system.py) is not stacked: reaction_history warns,
    naming the joints and why, and still equals `System.reactions`; its reaction at A equals the
    stacked one of the Euler-parameter pendulum at the same (physical) state at rest (the two
    coordinate systems agree to 1e-9, as test_system's initial accelerations)."""
    out = {}
    for kind in ("natural", "ep"):
        system = triple_pendulum(kind)
        q, v = system.initial_coordinates(), system.initial_velocities()
        M, C = system.mass_matrix(q), system.jacobian(0.0, q)
        K = np.block([[M, C.T], [C, np.zeros((system.n_c, system.n_c))]])
        lam = np.linalg.solve(K, np.concatenate([system.forces(0.0, q, v), system.gamma(0.0, q, v)]))[system.n_q:]
        t, Q, L = np.zeros(2), np.array([q, q]), np.array([lam, lam])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            history = system.reaction_history(t, Q, L, ["A", "B", "C"])
        said = [str(w.message) for w in caught if issubclass(w.category, flexmbs.system.ReactionsPerOutputWarning)]
        if kind == "natural":
            assert said == ["System.reaction_history: the reactions of 'A' (body 'body1' (RigidBodyNatural) has no "
                            "frame markers (q = (R, p, ...), points R + A(p) (y0 + Phi q[e]))); 'B' (body 'body1' "
                            "(RigidBodyNatural) has no frame markers (q = (R, p, ...), points R + A(p) (y0 + Phi "
                            "q[e]))); 'C' (body 'body2' (RigidBodyNatural) has no frame markers (q = (R, p, ...), "
                            "points R + A(p) (y0 + Phi q[e]))) are computed one output at a time"]
        else:
            assert said == []
        assert_equal_to_per_output(system, history, t, Q, L, ["A", "B", "C"])
        out[kind] = history["A"]["bodies"]["body1"]["force"]
    np.testing.assert_allclose(out["ep"], out["natural"], atol=1e-9)
    assert np.abs(out["ep"]).max() > 1.0


@pytest.mark.parametrize("rank_deficient", [False, True])
def test_stacked_least_squares_equals_the_pseudo_inverse(rank_deficient):
    """`least_squares` of 5 random (9, 4) systems equals pinv's solution to 1e-12; with the last column
    a copy of the first (rank 3) it takes the pseudo-inverse's minimum-norm solution there."""
    rng = np.random.default_rng(11)
    B, Q = rng.standard_normal((5, 9, 4)), rng.standard_normal((5, 9))
    if rank_deficient:
        B[2, :, 3] = B[2, :, 0]
    ref = np.einsum("tkm,tm->tk", np.linalg.pinv(B, rcond=np.finfo(float).eps * 9), Q)
    np.testing.assert_allclose(least_squares(B, Q), ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    if rank_deficient:
        assert abs(ref[2, 0] - ref[2, 3]) < 1e-12          # the minimum-norm split of the two equal columns


@needs_kernel
@pytest.mark.parametrize("t_eval, between", [(np.linspace(0.0, QUARTER / 8, 9), False),     # step points
                                             (np.linspace(0.3, 1.0, 7) * QUARTER / 8, True)])  # between them
def test_solution_multipliers_are_the_same_on_both_paths(system, t_eval, between):
    """``Solution.lam`` (n_out, n_c) of the kernel and of the numpy path agree to 1e-9 of their size
    (with the same refactorization policy the paths' steps agree to round-off amplified by Newton's
    tolerance, tests/test_compiled.py; by their defaults, "contraction" and "step", they stop Newton at
    different iterates, each within newton_tol), at step points and between them (the kernel's
    interpolation against `dense_multipliers`)."""
    problem = ConstrainedProblem(system)
    x0 = problem.state0(system.initial_coordinates(), system.initial_velocities())
    sols = [simulate(problem, (0.0, QUARTER / 8), x0, method="index3-alpha", h=2.91e-5, t_eval=t_eval,
                     rho_inf=0.9, kernel=k, refactor="contraction")
            for k in ("compiled", "numpy")]
    assert [s.kernel for s in sols] == ["compiled", "numpy"]
    assert sols[0].lam.shape == (len(t_eval), system.n_c)
    steps = sols[1].t / sols[1].h
    assert np.any(np.abs(steps - np.round(steps)) > 0.1) == between
    scale = np.abs(sols[1].lam).max()
    assert np.abs(sols[0].lam - sols[1].lam).max() <= 1e-9 * scale


def resolved_multipliers(system, t, q, v) -> np.ndarray:
    """lam (n_t, n_c) solved again at each output (t, q, v) from the index-1 (augmented) accelerations
    (M, C_q^T; C_q, 0) (q'', lam) = (Q, gamma) (`Index1.multipliers`): a reference independent of
    the index-3 steps' own multipliers."""
    form = Index1(system, solver="augmented")
    return np.array([form.multipliers(float(tk), np.concatenate([qk, vk])) for tk, qk, vk in zip(t, q, v)])


def test_drive_torque_from_the_integrator_equals_the_resolved_one(system):
    """Drive torque of the coupled slider-crank over a quarter revolution (h = 2.91e-5 s, rho_inf = 0.9)
    from ``Results.multipliers`` (the index-3 steps' own, ``Solution.lam``) vs from the index-1
    multipliers solved again at each output (`resolved_multipliers`).  The index-3
    multipliers carry an O(h) start-up error damped like rho_inf^steps (index3_alpha's docstring):
    measured 1.7e-3 of the peak in the first 10 outputs of the 2-revolution case, 3e-8 after 100
    outputs (200 steps); here after 200 steps the two agree to 1e-6 of the peak."""
    t_eval = np.linspace(0.0, QUARTER, 181)                      # 2 steps per output
    res = fm.run(system, method="index3-alpha", h=2.91e-5, t_end=QUARTER, t_eval=t_eval, rho_inf=0.9, store=False)
    assert res.success
    drive, crank = system.constraint("drive"), system.body("crank")
    own = axial_torque(system, drive, crank, res.t, res.q, res.multipliers)
    again = axial_torque(system, drive, crank, res.t, res.q, resolved_multipliers(system, res.t, res.q, res.v))
    peak = np.abs(again).max()
    late = res.t > 200 * res.metadata["h"]
    assert np.abs(own - again)[late].max() <= 1e-6 * peak
    assert np.abs(own - again)[:5].max() > 1e-6 * peak          # the start-up error is there (test can fail)
