"""The compiled index3-alpha step (csrc/index3_kernel.c `py_steps`) against trajectories recorded with the kernel
before its Newton corrections formed C_q^T mu without the dense C_q (issue 22; docs/design.md, "The Newton
corrections with a kept matrix").

tests/data/compiled_step_before_994d047.json holds, for each system below, the outputs (t, q, v, multipliers) of
a few hundred index3-alpha steps (kept matrix, `kept_stop="rate"`, the defaults) recorded by `record()` with the
kernel of commit 994d047 built in its own checkout:

    git archive 994d047 | tar -x -C /tmp/kbefore && cd /tmp/kbefore && python setup.py build_ext --inplace
    cd /tmp/kbefore && PYTHONPATH=$PWD:<this checkout>/tests python -c "import test_compiled_step as t; t.record()"

The corrections now sum C_q^T mu in another order (per marker, then through its Jacobian), so the iterates agree
to round-off, not to the bit: the same counts, and the states and multipliers to round-off as an index-3 step
carries it on (RELATIVE).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import Node, RigidBodyEP
from flexmbs.compiled import kernel_status
from flexmbs.constraints import AngleDriver, Revolute, Spherical
from flexmbs.forces import SpringDamper

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))

import slider_crank  # noqa: E402
import test_compiled_corotational as corot2d  # noqa: E402
import test_compiled_corotational3d as corot3d  # noqa: E402
import triple_pendulum  # noqa: E402

RECORDED = Path(__file__).parent / "data" / "compiled_step_before_994d047.json"

pytestmark = pytest.mark.skipif(not kernel_status().installed, reason=f"the kernel is {kernel_status()}")


def driven_spring():
    """A crank driven at 3 + 2 t rad/s about z (Revolute + AngleDriver), a link on it by a ball joint, and a
    spring-damper from the ground to the link: a System with a force element and a rheonomic row. The start is
    consistent: the crank's centre (0.2, 0, 0) moves at 3 z x (0.2, 0, 0) = (0, 0.6, 0), the ball (0.4, 0, 0)
    and with it the non-turning link at (0, 1.2, 0)."""
    z = np.array([0.0, 0.0, 1.0])
    crank = RigidBodyEP("crank", 1.0, [0.01, 0.02, 0.02], position=(0.2, 0.0, 0.0), velocity=(0.0, 0.6, 0.0),
                        angular_velocity=3.0 * z)
    link = RigidBodyEP("link", 0.5, [0.02, 0.01, 0.02], position=(0.4, -0.3, 0.0), velocity=(0.0, 1.2, 0.0))
    joints = [Revolute(None, crank, at=(0.0, 0.0, 0.0), axis=z, name="pin"),
              AngleDriver(None, crank, z, lambda t: (3.0 * t + t * t, 3.0 + 2.0 * t, 2.0), name="drive"),
              Spherical(crank, link, at=(0.4, 0.0, 0.0), name="ball")]
    forces = [SpringDamper(None, (0.5, -0.8, 0.1), link, (0.0, -0.3, 0.0), 200.0, damping=1.5, name="spring")]
    return fm.System([crank, link], joints, gravity=(0.0, -9.81, 0.0), forces=forces)


# name: (system builder, h, steps); each with a kept matrix over several hundred steps
CASES = {"slider-crank": (lambda: slider_crank.build_coupled(elements=8)[0], 3e-5, 300),
         "triple-pendulum-ep": (lambda: triple_pendulum.build("euler-parameters"), 1e-3, 300),
         "corotational-3d-hub": (corot3d.beam_on_a_hub, 1e-3, 200),
         "corotational-2d-on-a-body": (corot2d.beam_on_a_body, 1e-3, 200),
         "driver-and-spring": (driven_spring, 1e-3, 300)}


COUNTS = ("n_steps", "n_rhs", "n_jac", "n_lu", "n_newton")


def trajectory(name: str) -> dict:
    """The outputs of index3-alpha (rho_inf 0.9, the default kept matrix and Newton stop) on the compiled kernel:
    t, q, v and the multipliers at 11 times over the case's steps, and the run's counts (COUNTS)."""
    build, h, steps = CASES[name]
    t_end = h * steps
    res = fm.run(build(), method="index3-alpha", kernel="compiled", h=h, t_end=t_end,
                 t_eval=np.linspace(0.0, t_end, 11), rho_inf=0.9, store=False)
    assert res.status == "finished" and res.metadata["kernel"] == "compiled", res.message
    return {"t": np.asarray(res.t).tolist(), "q": np.asarray(res.q).tolist(), "v": np.asarray(res.v).tolist(),
            "lam": np.asarray(res.multipliers).tolist(), "counts": {k: int(res.stats[k]) for k in COUNTS}}


def record(path: Path = RECORDED) -> None:
    """Write every case's `trajectory` to ``path`` (run with the kernel to compare against: the module's doc)."""
    out = {"about": "index3-alpha on the compiled kernel (rho_inf 0.9, kept matrix, kept_stop 'rate'), outputs at "
                    "11 times; recorded by tests/test_compiled_step.py record() with the kernel of 994d047 built "
                    "in /tmp/kbefore (git archive 994d047), before the corrections' C_q^T mu without the dense C_q"}
    out.update({name: trajectory(name) for name in CASES})
    path.write_text(json.dumps(out))


# The largest difference allowed from the recorded run, relative to the recorded quantity's size (or 1). An
# index-3 step turns a round-off change of q into one of lambda larger by about 1/h^2 (lambda ~ M q'' ~ q / h^2
# through the constraints), and the steps carry it on. Measured over all five cases (x86_64, gcc -O2): the
# rewritten kernel against the recorded one 1.0e-12 (q), 5.3e-11 (v), 9.1e-8 (lambda, the triple pendulum); the
# numpy path, the same method summed in yet another order, against the recorded kernel 8.1e-11, 4.1e-9, 1.1e-7.
RELATIVE = {"q": 1e-11, "v": 1e-9, "lam": 1e-6}


@pytest.mark.parametrize("name", list(CASES))
def test_the_steps_equal_the_recorded_kernels(name):
    """The same counts (steps, evaluations, tangents, LUs, Newton iterations: the same Newton path), q, v and the
    multipliers at every output equal to the recorded kernel's to round-off (RELATIVE), and the system moved (q
    changed by more than 1e-4)."""
    rec = json.loads(RECORDED.read_text())[name]
    got = trajectory(name)
    assert got["counts"] == rec["counts"]
    np.testing.assert_array_equal(got["t"], rec["t"])
    for key, rel in RELATIVE.items():
        want, have = np.asarray(rec[key]), np.asarray(got[key])
        assert np.abs(have - want).max() <= rel * max(np.abs(want).max(), 1.0), (key, np.abs(have - want).max())
    q = np.asarray(rec["q"])
    assert np.abs(q[-1] - q[0]).max() > 1e-4
