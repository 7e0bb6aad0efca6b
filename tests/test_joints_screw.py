"""The screw joint (issue 26, item 2): its Jacobian against central differences of its residual and
its gamma against the second time derivative along a path (as tests/test_joints.py), for both
rigid-body kinds, body-to-body and body-to-ground; a nut descending a vertical screw against its
closed form; its reactions stacked over the outputs like the other joints'; its rows in the compiled
kernel."""
import warnings

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import RigidBodyEP
from flexmbs.compiled import CompiledSystem, kernel_status
from flexmbs.constraints import Screw
from flexmbs.system import ReactionsPerOutputWarning, System

from test_joints import AXIS, P, check_constraint, make_bodies


@pytest.mark.parametrize("kind", ["ep", "natural"])
@pytest.mark.parametrize("pitch", [0.3, -0.05])
def test_screw_derivatives(kind, pitch):
    a, b = make_bodies(kind)
    for i, j in ((a, b), (a, None), (None, b)):
        c = Screw(i, j, at=P, axis=AXIS, pitch=pitch)
        qs = [np.zeros(0) if x is None else x.initial_coordinates() for x in c.bodies]
        assert c.n_c == 5 and np.abs(c.residual(0.0, qs)).max() < 1e-12
        check_constraint(c)


def nut(m=2.0, Iz=0.01, p=0.05):
    body = RigidBodyEP("nut", m, np.diag([0.02, 0.02, Iz]))
    return body, System([body], [Screw(None, body, at=(0, 0, 0), axis=(0, 0, 1), pitch=p, name="thread")],
                        gravity=(0, 0, -9.81))


def test_nut_descends_the_screw_at_the_closed_form_rate_and_its_reactions_are_stacked():
    """A nut (m, I_z about the axis) on a vertical screw of pitch p under gravity: with d = p theta / (2 pi),
    T + V = m d'^2 / 2 + I_z theta'^2 / 2 + m g d gives d'' = -g / (1 + I_z (2 pi / p)^2 / m).  The joint
    carries the axial force F_z = m (g + d'') and the torque T_z = I_z theta'' on the nut."""
    m, Iz, p, g = 2.0, 0.001, 0.05, 9.81
    body, s = nut(m, Iz, p)
    res = fm.run(s, method="DOP853", rtol=1e-10, atol=1e-12, t_end=0.5, dt_out=0.05, store=False)
    a = -g / (1.0 + Iz * (2 * np.pi / p) ** 2 / m)
    np.testing.assert_allclose(res.q[:, 2], 0.5 * a * res.t ** 2, atol=1e-8)      # measured 1.6e-10
    theta = np.array([np.arctan2(body.rotation(q[:7])[1, 0], body.rotation(q[:7])[0, 0]) for q in res.q])
    wrapped = np.angle(np.exp(1j * (2 * np.pi * res.q[:, 2] / p - theta)))
    assert np.abs(wrapped).max() < 1e-8                     # more than two turns: the screw does not wrap
    assert 2 * np.pi * res.q[-1, 2] / p < -4 * np.pi
    # the reactions from index3-alpha's multipliers (second order: d off by 3.8e-5 m at h = 1e-3)
    res = fm.run(s, method="index3-alpha", h=1e-3, t_end=0.5, dt_out=0.05, store=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReactionsPerOutputWarning)
        r = s.reaction_history(res.t, res.q, res.multipliers, ["thread"])["thread"]["bodies"]["nut"]
    np.testing.assert_allclose(r["force"][1:, 2], m * (g + a), rtol=1e-3)
    np.testing.assert_allclose(r["torque"][1:, 2], Iz * 2 * np.pi * a / p, rtol=1e-3)
    np.testing.assert_allclose(r["force"][1:, :2], 0.0, atol=1e-6)


@pytest.mark.skipif(not kernel_status().installed, reason="the compiled kernel is not installed")
def test_the_screw_runs_on_the_compiled_step_as_on_numpy():
    """The kernel's screw rows: C and C_q equal the joint batch's at random states (round-off), and a
    nut spun down a screw between two free bodies gives the same states on both paths with the same
    refactorization (measured 5e-15 m; 23 against 2500 us a step)."""
    a, b = make_bodies("ep")
    s = System([a, b], [Screw(a, b, at=P, axis=AXIS, pitch=0.3, name="thread")], gravity=(0, 0, -9.81))
    cs = CompiledSystem(s)
    rng = np.random.default_rng(2)
    for t in (0.0, 0.4):
        q = s.initial_coordinates() + 0.05 * rng.standard_normal(s.n_q)
        got = cs.evaluate(t, q, np.zeros(s.n_q))
        np.testing.assert_allclose(got["C"], s.residual(t, q), atol=1e-14)
        np.testing.assert_allclose(got["Cq"], s.jacobian(t, q), atol=1e-13)
    out = [fm.run(nut(Iz=0.001)[1], method="index3-alpha", h=1e-3, t_end=0.2, dt_out=0.05, store=False, kernel=k,
                  refactor="step") for k in ("compiled", "numpy")]
    assert [r.metadata["kernel"] for r in out] == ["compiled", "numpy"]
    np.testing.assert_allclose(out[0].q, out[1].q, atol=1e-12)
    assert out[0].q[-1, 2] < -0.01                               # it went down the thread
