"""Bad input and refusals of index3-alpha-adaptive on the compiled kernel (tests/test_compiled_adaptive.py
checks its steps): each row is (what is wrong, the call, the message it now gives)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from flexmbs.bodies import RigidBody2D
from flexmbs.compiled import kernel_status, time_law
from flexmbs.constraints.planar import PlanarRevolute
from flexmbs.integrators import ConstrainedProblem, simulate
from flexmbs.integrators.index3_alpha import Index3AdaptiveAlpha
from flexmbs.system import System

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason=f"the kernel is {kernel_status()}")


def problem(redundant: bool = False):
    """A bar pinned to the ground (pinned twice: ``redundant``), its problem and start."""
    bar = RigidBody2D("bar", 1.0, 1.0 / 12.0, position=(0.5, 0.0), angle=0.0)
    pins = [PlanarRevolute(None, bar, at=(0.0, 0.0), name=f"pin{k}") for k in range(1 + redundant)]
    system = System([bar], pins, gravity=(0.0, -9.81))
    p = ConstrainedProblem(system)
    return p, p.state0(system.initial_coordinates(), system.initial_velocities())


def run(redundant=False, **options):
    p, x0 = problem(redundant)
    return simulate(p, (0.0, 0.1), x0, method="index3-alpha-adaptive", **options)


def advance_with_controls():
    p, x0 = problem()
    it = Index3AdaptiveAlpha(p, 0.0, x0, 0.1, rtol=1e-6, kernel="compiled")
    return it.advance(np.array([0.05]), 1e-9, controls=object())


def declared(affine):
    """A law of t declaring ``affine`` (`flexmbs.compiled.time_law`), its TIME_LAW row."""
    def law(t):
        return 0.0, 0.0, 0.0
    law.affine = affine
    return time_law(law, "driver 'spin': its law")


BAD_INPUT = [
    ("a law's `affine` with 4 numbers", lambda: declared(((0.0, 1.0, 0.0, 0.0), (1.0, 0.0, 0.0))),
     "driver 'spin': its law declares `affine` = ((0.0, 1.0, 0.0, 0.0), (1.0, 0.0, 0.0)); expected (offset, rate), "
     "two finite vectors of at most 3 numbers (its values offset + rate t)"),
    ("a law's `affine` not finite", lambda: declared(((np.nan, 1.0, 0.0), (1.0, 0.0, 0.0))),
     "driver 'spin': its law declares `affine` = ((nan, 1.0, 0.0), (1.0, 0.0, 0.0)); expected (offset, rate)"),
    ("a law's `affine` not a pair", lambda: declared("fast"),
     "driver 'spin': its law declares `affine` = 'fast'; expected (offset, rate), two finite vectors"),
    ("the compiled kernel asked for with redundant constraints", lambda: run(True, kernel="compiled"),
     "`kernel` 'compiled' cannot run this system: step-size control (index3-alpha-adaptive) with `regularization` "
     "> 0 (redundant constraints) runs on the numpy path: its projections are least-squares solves."),
    ("the compiled kernel asked for with a regularization", lambda: run(kernel="compiled", regularization=1e-10),
     "`kernel` 'compiled' cannot run this system: step-size control (index3-alpha-adaptive) with `regularization` "
     "> 0 (redundant constraints) runs on the numpy path"),
]


@pytest.mark.parametrize("what, call, message", BAD_INPUT, ids=[row[0] for row in BAD_INPUT])
def test_refusal_names_the_cause(what, call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


@needs_kernel
def test_controllers_are_refused_on_the_compiled_steps():
    """`simulate` refuses controllers with any method but index3-alpha; the kernel's adaptive steps refuse
    them too, naming the method that runs them, if handed some directly."""
    with pytest.raises(ValueError, match=re.escape("`controls`: digital controllers run with method 'index3-alpha' "
                                                   "(sampled every N fixed steps), not with index3-alpha-adaptive")):
        advance_with_controls()


def driven(kernel):
    """The bar's angle driven by a law that raises beyond t = 0.05 s (a user's table ending there)."""
    from flexmbs.constraints import CoordinateDriver
    bar = RigidBody2D("bar", 1.0, 1.0 / 12.0, position=(0.5, 0.0), angle=0.0)

    def law(t):
        if t > 0.05:
            raise ValueError("the table ends at 0.05 s")
        return 2.0 * t * t, 4.0 * t, 4.0
    system = System([bar], [PlanarRevolute(None, bar, at=(0.0, 0.0), name="pin"),
                            CoordinateDriver(bar, 2, law, name="swing")], gravity=(0.0, -9.81))
    p = ConstrainedProblem(system)
    x0 = p.state0(system.initial_coordinates(), system.initial_velocities())
    return simulate(p, (0.0, 0.1), x0, method="index3-alpha-adaptive", rtol=1e-6, kernel=kernel,
                    t_eval=np.linspace(0.0, 0.1, 11))


@needs_kernel
def test_a_failing_law_stops_the_compiled_steps_as_the_numpy_ones():
    """A law that raises at a trial step's time (asked of Python by the kernel, csrc ``adaptive_terms``)
    stops the run with the numpy path's message, naming the driver and the time; the outputs before it
    are kept."""
    a, b = driven("numpy"), driven("compiled")
    assert b.kernel == "compiled"
    assert a.status == b.status == "failed"
    assert "driver 'swing': its law" in b.message and "the table ends at 0.05 s" in b.message
    assert a.message == b.message
    np.testing.assert_array_equal(a.t, b.t)
    assert 0.0 < b.t[-1] <= 0.05 and len(b.t) > 1


def pulled_bar():
    """A bar (1 m, centre at 0.5 m from its pin, 0.5 rad up) pinned to the ground, its centre's x driven
    outwards at 1 m/s: beyond reach after 0.061 s (0.5 - 0.5 cos 0.5); full rank at the start (the compiled
    path takes it), the constraints cannot all hold from then on."""
    from flexmbs.constraints import CoordinateDriver
    th = 0.5
    x0 = 0.5 * np.cos(th)
    bar = RigidBody2D("bar", 1.0, 1.0 / 12.0, position=(x0, 0.5 * np.sin(th)), angle=th)
    return System([bar], [PlanarRevolute(None, bar, at=(0.0, 0.0), name="pin"),
                          CoordinateDriver(bar, 0, lambda t: (x0 + t, 1.0, 0.0), name="pull")], gravity=(0.0, -9.81))


@needs_kernel
def test_step_size_underflow_is_the_numpy_paths():
    """A bar pulled beyond its pin's reach (`pulled_bar`): the compiled steps fall to the round-off of t as the
    numpy ones do (kernel status 6) and stop with the same message, which names the last h tried (the
    kernel's h_next) and the cause, and with the same outputs."""
    import flexmbs as fm
    runs = {k: fm.run(pulled_bar(), formulation="index3", method="index3-alpha-adaptive", rtol=1e-6,
                      t_end=0.1, dt_out=1e-3, kernel=k, refactor="step", assemble=True) for k in ("numpy", "compiled")}
    a, b = runs["numpy"], runs["compiled"]
    assert a.metadata.get("kernel") == "numpy" and b.metadata.get("kernel") == "compiled"
    assert a.status == b.status == "failed"
    assert b.message == a.message and "rejected every step down to" in b.message, (a.message, b.message)
    np.testing.assert_array_equal(a.t, b.t)
