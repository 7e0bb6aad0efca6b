"""Bad input to the kernel's terms of N states at once (`CompiledSystem.terms_history`, csrc
``py_terms_history``): a ValueError naming the argument, its expected and given shape; a law that fails at one
of the times names it and the time; a kernel built before the entry is refused (`Unsupported`) saying to rebuild.
Skipped without the compiled kernel."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs import compiled
from flexmbs.bodies import RigidBody2D
from flexmbs.compiled import Unsupported, kernel_status
from flexmbs.constraints import CoordinateDriver
from flexmbs.constraints.planar import PlanarRevolute
from flexmbs.user_functions import UserFunctionError

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not kernel_status().installed, reason=f"compiled kernel {kernel_status()}")


def law(t):
    """The driven angle of `crank`: finite before t = 0.5 s, NaN after (a user's law that breaks)."""
    return (2.0 * t, 2.0, 0.0) if t < 0.5 else (np.nan, 2.0, 0.0)


def crank():
    """A planar crank on a revolute to the ground, its angle driven by `law`: n_q = 3, n_c = 3."""
    body = RigidBody2D("crank", 1.0, 0.1, position=(0.1, 0.0))
    return fm.System([body], [PlanarRevolute(None, body, at=(0.0, 0.0), name="pivot"),
                              CoordinateDriver(body, 2, law, name="drive")], gravity=(0.0, -9.81)).compiled()


def states(T):
    return np.zeros((len(T), 3)), np.zeros((len(T), 3))


def old_kernel():
    """The module `_flexmbs_kernel` as loaded from a build that predates terms_history."""
    c = crank()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(compiled, "_kernel", type("OldKernel", (), {"__file__": "old.so"})())
        c.terms_history([0.0], *states([0.0]))


def kernel_call(count, rows):
    """The kernel's entry itself with ``rows`` rows of q and ``count`` states."""
    import _flexmbs_kernel
    c = crank()
    q = np.zeros((rows, 3))
    law_rows = c.laws(np.zeros(max(count, 0)))
    _flexmbs_kernel.terms_history(c.handle, count, q, q.copy(), law_rows, np.empty((2, 3, 3)), np.empty((2, 3)),
                                  np.empty((2, 3)), np.empty((2, 3, 3)), np.empty((2, 3)), np.empty((2, 3)))


def bench(argv):
    """benchmarks/bench_multiplier_history.py's main with ``argv``."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_multiplier_history
    bench_multiplier_history.main(argv)


FAILURES = [   # (what, call, error, the message it prints)
    ("T a matrix", lambda: crank().terms_history(np.zeros((2, 2)), *states([0, 1])), ValueError,
     r"`T` must be a vector of times, got an array of shape \(2, 2\)"),
    ("T not numbers", lambda: crank().terms_history("abc", *states([0])), ValueError,
     r"`T` must be a vector of times, got 'abc'"),
    ("Q of another number of states", lambda: crank().terms_history([0.0, 0.1], np.zeros((3, 3)), np.zeros((2, 3))),
     ValueError, r"`Q` must be \(2, 3\) \(a row of n_q = 3 numbers at each of the 2 times\), got shape \(3, 3\)"),
    ("V not numbers", lambda: crank().terms_history([0.0], np.zeros((1, 3)), [["a", "b", "c"]]), ValueError,
     r"`V` must be \(1, 3\) .*, got \[\['a', 'b', 'c'\]\]"),
    ("a law NaN at one of the times", lambda: crank().terms_history([0.0, 0.4, 0.6], *states([0, 0, 0])),
     UserFunctionError, r"driver 'drive': its law gave NaN or inf at t = 0\.6"),
    ("a kernel built before terms_history", old_kernel, Unsupported,
     r"the compiled kernel old\.so has no terms_history .*rebuild it \(`python setup\.py build_ext --inplace`\)"),
    ("the kernel: q shorter than count states", lambda: kernel_call(2, 1), ValueError,
     r"kernel terms_history: q must hold at least 6 items, got 3"),
    ("the kernel: a negative count", lambda: kernel_call(-1, 1), ValueError,
     r"kernel terms_history: count must be a number of states >= 0, got -1"),
    ("benchmarks/bench_multiplier_history.py --checkout without a directory", lambda: bench(["--checkout", "before"]),
     SystemExit, r"--checkout must be LABEL=DIR with an existing directory, got 'before'"),
]


@pytest.mark.parametrize("call, error, message", [row[1:] for row in FAILURES], ids=[row[0] for row in FAILURES])
def test_bad_input_is_named(call, error, message):
    with pytest.raises(error, match=message):
        call()
