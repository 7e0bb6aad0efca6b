"""The cases' outputs of all rows at once (issue 22, the process outside the solve, second round):
each against the per-output loop it replaced, on a run's own states."""
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import triple_pendulum  # noqa: E402


@pytest.mark.parametrize("coordinates", ["euler-parameters", "natural"])
def test_triple_pendulum_tip_is_the_per_output_point(coordinates):
    """`triple_pendulum.tip` against body.point(q, s_D) and point_jacobian(q, s_D) q' output by output (the
    loop before), on an index3-alpha run: the same formulas (A(p) unnormalised, V(p, s) p'), so the same
    numbers to round-off (|r_D| ~ 1 m, |r_D'| up to 22 m/s)."""
    system = triple_pendulum.build(coordinates)
    res = fm.run(system, method="index3-alpha", h=1e-3, t_end=1.0, t_eval=np.linspace(0.0, 1.0, 101), store=False)
    body = system.bodies[2]
    sl = system.slice(body)
    pos, vel = triple_pendulum.tip(system, res.q, res.v)
    loop_pos = np.array([body.point(q[sl], triple_pendulum.TIP) for q in res.q])
    loop_vel = np.array([body.point_jacobian(q[sl], triple_pendulum.TIP) @ v[sl] for q, v in zip(res.q, res.v)])
    np.testing.assert_allclose(pos, loop_pos, rtol=0, atol=1e-14)
    np.testing.assert_allclose(vel, loop_vel, rtol=0, atol=1e-13)
