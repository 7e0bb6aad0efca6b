"""Bad input named by its cause (issue 20, items 7 and 8).

- item 8: each bad argument of a body, a load, a joint or a System, and `flexmbs sweep --scheduler`
  without dask, ends in a message naming the argument, what was expected and what was given (the
  table below: the call and the message it now prints); the kernel's private entry points refuse
  arrays of the wrong type, size or index range with an exception instead of reading them;
- item 7: a body or joint changed after its System was built is refused on both paths (numpy and
  compiled), so the two can no longer give different answers; a System built again with the new
  values runs the same on both.
"""
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs.bodies import Node, RigidBody2D, RigidBodyEP
from flexmbs.bodies.loads import point_load, torque_load
from flexmbs.compiled import CompiledSystem, kernel_status
from flexmbs.constraints import Distance, Spherical
from flexmbs.integrators import ConstrainedProblem, simulate
from flexmbs.system import System

CASES = Path(__file__).resolve().parents[1] / "cases"

pytestmark = pytest.mark.usefixtures("restore_logging")    # tests/conftest.py
needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason=f"{kernel_status()}")


def bob(name="bob", mass=0.5, **kwargs):
    return RigidBodyEP(name, mass, [1e-3, 1e-3, 1e-3], position=[0.3, 0.0, 0.0], **kwargs)


def pendulum(body, length=None):
    """``body`` (at (0.3, 0, 0)) on a spherical joint at the origin, with a distance ``length`` to the point
    0.4 above it when given (0.4: the initial distance), under gravity."""
    joints = [Spherical(None, body, at=np.zeros(3), name="pivot")]
    if length is not None:
        joints.append(Distance(None, body, at_i=[0.3, 0.0, 0.4], s_j=[0.0, 0.0, 0.0], length=length, name="tether"))
    return System([body], joints, gravity=[0.0, 0.0, -9.81])


def run(system, kernel, t_end=0.01, h=1e-3):
    problem = ConstrainedProblem(system)
    q0 = system.initial_coordinates()
    return simulate(problem, (0.0, t_end), problem.state0(q0, 0 * q0), method="index3-alpha", h=h,
                    t_eval=np.linspace(0.0, t_end, 6), rho_inf=0.9, kernel=kernel)


def user_load_of_length_3(body, t, q, v):
    return np.zeros(3)


# (what is given, the call, the message it now prints)
TABLE = [
    ("RigidBodyEP(mass='1')", lambda: RigidBodyEP("crank", "1", [1e-3, 1e-3, 1e-3]),
     "body 'crank' (RigidBodyEP): `mass` must be a positive number, got '1' (str)"),
    ("RigidBodyEP(mass=None)", lambda: RigidBodyEP("crank", None, [1e-3, 1e-3, 1e-3]),
     "body 'crank' (RigidBodyEP): `mass` must be a positive number, got None (NoneType)"),
    ("RigidBodyEP(mass=-1)", lambda: RigidBodyEP("crank", -1, [1e-3, 1e-3, 1e-3]),
     "body 'crank' (RigidBodyEP): `mass` must be a positive number, got -1 (int)"),
    ("RigidBodyEP(inertia='x')", lambda: RigidBodyEP("crank", 1.0, "x"),
     "body 'crank': `inertia` must be numbers, got 'x' (str)"),
    ("RigidBodyEP(position='abc')", lambda: RigidBodyEP("crank", 1.0, [1e-3, 1e-3, 1e-3], position="abc"),
     "body 'crank': `position` must be numbers, got 'abc' (str)"),
    ("RigidBody2D(mass='1')", lambda: RigidBody2D("crank", "1", 0.1),
     "body 'crank' (RigidBody2D): `mass` must be a positive number, got '1' (str)"),
    ("RigidBody2D(inertia='x')", lambda: RigidBody2D("crank", 1.0, "x"),
     "body 'crank' (RigidBody2D): `inertia` must be a number, got 'x' (str)"),
    ("a string in the constraint list", lambda: System([bob()], ["pivot"]),
     "System: `constraints` entry 0 must be a constraint (flexmbs.constraints: Revolute, Spherical, Distance, ...), "
     "got 'pivot' (str, without name, bodies, n_c, residual, jacobian)"),
    ("a string as the body list", lambda: System("bob"),
     "System: `bodies` must be a sequence, each entry a body (flexmbs.bodies: RigidBodyEP, RigidBody2D, FlexibleBody, "
     "...); got 'bob' (str)"),
    ("Node(2) on a rigid body", lambda: Spherical(None, bob(), at=np.zeros(3), s_j=Node(2), name="pivot"),
     "joint 'pivot': `s_j` is Node(index=2), which body 'bob' does not take as a marker; give a vector of 3 numbers "
     "(a point in the body's coordinates), or a Node(i) on a flexible or corotational body"),
    ("torque_load('abc')", lambda: torque_load("abc"),
     "torque_load: `torque` must be a finite number, a vector of finite numbers or a function of t, got 'abc' (str)"),
    ("point_load(force='abc')", lambda: point_load([0.0, 0.0, 0.0], "abc"),
     "point_load: `force` must be a finite number, a vector of finite numbers or a function of t, got 'abc' (str)"),
    ("a 2-component force on a 3D body", lambda: run(pendulum(bob(loads=[point_load([0.0, 0.0, 0.0], [1.0, 2.0])])),
                                                     "auto"),
     "body 'bob': load 0 (point_load): its force at t = 0 has shape (2,); the body is 3D, so it needs shape (3,)"),
    ("a torque law of 2 components on a 3D body", lambda: run(pendulum(bob(loads=[torque_load(lambda t: [0.0, t])])),
                                                              "numpy"),
     "body 'bob': load 0 (torque_load): its torque at t = 0 has shape (2,); the body is 3D, so it needs shape (3,)"),
    ("loads= a single callable", lambda: bob(loads=user_load_of_length_3),
     "body 'bob': `loads` must be a sequence of loads, got the single callable 'user_load_of_length_3'; "
     "write loads=[load]"),
    ("a user load of the wrong length", lambda: run(pendulum(bob(loads=[user_load_of_length_3])), "auto"),
     "body 'bob': load 0 (user_load_of_length_3) returns a generalized force of shape (3,); the body has 7 "
     "coordinates, so it must return shape (7,)"),
]


@pytest.mark.parametrize("call, message", [r[1:] for r in TABLE], ids=[r[0] for r in TABLE])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=re.escape(message) + "$"):
        call()


def test_sweep_with_a_scheduler_without_dask_says_what_to_install(tmp_path, capsys, monkeypatch):
    """`flexmbs sweep --scheduler ADDR` without dask.distributed: exit status 2 (bad input), the message
    names the extra to install, nothing is written."""
    from flexmbs.cli import main
    monkeypatch.setitem(sys.modules, "distributed", None)          # import distributed -> ImportError
    out = tmp_path / "s"
    code = main(["sweep", "rotating_bar", "--cases", str(CASES), "--grid", "elements=3,4", "--scheduler",
                 "tcp://127.0.0.1:8786", "--out", str(out)])
    assert code == 2
    err = capsys.readouterr().err
    assert "flexmbs sweep: error: a Dask scheduler is given (`scheduler`, --scheduler: tcp://127.0.0.1:8786) but " \
           "dask.distributed is not installed" in err
    assert 'install it with: pip install "flexmbs[dask]"' in err
    assert not out.exists()


# -- item 7: a system changed after it was built -------------------------------------------------------
@needs_kernel
@pytest.mark.parametrize("change, message", [
    (lambda b, s: setattr(b, "mass", 2.0), "body 'bob' changed after the System was built: its `mass` was 0.5, now 2.0"),
    (lambda b, s: b.centroid.__setitem__(0, 0.05),                        # in place
     "body 'bob' changed after the System was built: its `centroid` was [0.0, 0.0, 0.0], now [0.05, 0.0, 0.0]"),
    (lambda b, s: setattr(s.constraint("tether"), "length", 0.7),
     "constraint 'tether' changed after the System was built: its `length` was 0.4, now 0.7"),
    (lambda b, s: s.constraint("pivot").s[1].__setitem__(0, 0.1),          # a joint's body point, in place
     "constraint 'pivot' changed after the System was built: its `s` was [[0.0, 0.0, 0.0], [-0.3, 0.0, 0.0]], now "
     "[[0.0, 0.0, 0.0], [0.1, 0.0, 0.0]]"),
], ids=["mass", "centroid-in-place", "distance-length", "joint-point-in-place"])
def test_a_system_changed_after_a_compiled_run_is_refused_on_both_paths(change, message):
    """Before: the compiled path packed the body's new mass while the numpy path kept the one its batch
    was built with (0.036 apart; 0.27 here with the centroid moved too).  Now the change is refused where
    a run starts and where the system is packed, naming what changed; the runs before it are unaffected."""
    body = bob()
    system = pendulum(body, length=0.4)
    first = run(system, "compiled")
    assert first.kernel == "compiled" and first.status == "finished"
    change(body, system)
    for kernel in ("numpy", "compiled"):
        with pytest.raises(ValueError, match=re.escape(message)):
            run(system, kernel)
    with pytest.raises(ValueError, match=re.escape(message)):
        CompiledSystem(system)


@needs_kernel
def test_a_system_built_again_with_the_new_values_runs_the_same_on_both_paths():
    """The remedy the message gives: a new body (mass 2 instead of 0.5, the centroid moved), a new System;
    both paths then agree to the Newton tolerance (1e-10 of the state's size; tests/test_compiled.py's
    same_steps asks 1e-11 on q) and the new body swings differently."""
    runs = {}
    for mass, centroid in ((0.5, (0.0, 0.0, 0.0)), (2.0, (0.05, 0.0, 0.0))):
        system = pendulum(bob(mass=mass, centroid=centroid))
        runs[mass] = [run(system, k, t_end=0.05) for k in ("numpy", "compiled")]
        a, b = runs[mass]
        assert a.kernel == "numpy" and b.kernel == "compiled" and a.status == b.status == "finished"
        assert np.abs(a.x - b.x).max() <= 1e-10 * max(1.0, np.abs(a.x).max())
    assert np.abs(runs[2.0][0].x - runs[0.5][0].x).max() > 1e-3


# -- the kernel's private entry points ---------------------------------------------------------------
@needs_kernel
def test_kernel_entry_points_refuse_wrong_types_sizes_and_indices():
    """Called directly with an int64 array where float64 is read, a float64 array where indices are read,
    a short array, or indices out of range: an exception naming the array, not a wrong answer or a crash."""
    import _flexmbs_kernel as kernel
    system = pendulum(bob(), length=0.4)
    packed = CompiledSystem(system)
    n, m = packed.n, packed.m
    arrays = dict(packed._packed)                                           # by the names of kernel_schema
    assert kernel.system({k: a.copy() if k != "flexible" else a for k, a in arrays.items()}) is not None

    def refused(key, value, error, text):
        bad = {k: a.copy() if k != "flexible" else a for k, a in arrays.items()}
        bad[key] = value
        with pytest.raises(error, match=text):
            kernel.system(bad)

    refused("gravity", np.zeros(4, dtype=np.int64), TypeError, "gravity must be a float64 array, got items of format")
    refused("rigid_offsets", np.zeros(1), TypeError, "rigid_offsets must be a int64 array")
    refused("rigid", arrays["rigid"][:, :5].copy(), ValueError, "rigid must hold at least 13 items, got 5")
    refused("rigid_offsets", np.array([n - 6]), ValueError, rf"rigid offsets: entry \(0, 0\) is {n - 6}, outside \[0, {n - 6}\)")
    refused("rigid_offsets", np.array([-(1 << 40)]), ValueError, "rigid offsets: entry")
    rows = arrays["point_rows"].copy()                                        # the point rows: row, marker i, j
    rows[0, 1] = 99
    refused("point_rows", rows, ValueError, rf"point markers: entry \(0, 0\) is 99, outside \[0, {arrays['header'][5]}\)")
    rows = arrays["dist_rows"].copy()                                         # the distance rows
    rows[0, 0] = m
    refused("dist_rows", rows, ValueError, rf"dist rows: entry \(0, 0\) is {m}, outside \[0, {m}\)")
    header = arrays["header"].copy()
    header[2] = -1
    refused("header", header, ValueError, "bad header")
    refused("flexible", [1], TypeError, r"kernel system: arrays\['flexible'\]\[0\] must be a dict")

    out = {k: np.zeros(s) for k, s in (("M", (n, n)), ("Q", n), ("C", m), ("Cq", (m, n)), ("D", (n, n)),
                                       ("K", (n, n)))}
    q = system.initial_coordinates()
    law = np.zeros(0)
    with pytest.raises(TypeError, match="kernel evaluate: q must be a float64 array"):
        kernel.evaluate(packed.handle, q.astype(np.int64), q.copy(), law, *out.values())
    with pytest.raises(ValueError, match=f"kernel evaluate: v must hold at least {n} items, got 3"):
        kernel.evaluate(packed.handle, q.copy(), q[:3].copy(), law, *out.values())
    with pytest.raises(TypeError, match="kernel evaluate: M must be a C-contiguous, writable float64 array"):
        kernel.evaluate(packed.handle, q.copy(), q.copy(), law, np.zeros((n, 2 * n))[:, ::2], *list(out.values())[1:])
    with pytest.raises(ValueError, match=rf"CompiledSystem.evaluate: `q` must be a vector of {n} numbers"):
        packed.evaluate(0.0, q[:3], q)


@needs_kernel
def test_kernel_steps_entry_point_refuses_wrong_types_and_indices():
    """The steps entry point: the pivots as int64 (int32 is read), the first output index and the integer
    options out of range raise before a step is taken; the same call with the right arrays steps."""
    from flexmbs.integrators.index3_alpha import Index3GeneralizedAlpha
    system = pendulum(bob())
    problem = ConstrainedProblem(system)
    q0 = system.initial_coordinates()
    it = Index3GeneralizedAlpha(problem, 0.0, problem.state0(q0, 0 * q0), 0.01, h=1e-3, rho_inf=0.9,
                                kernel="compiled")
    n = system.n_q
    times = hs = np.array([1e-3])
    params = np.array([it.alpha_m, it.alpha_f, it.gamma, it.beta, 1e-8, 0.3, 0.0, 1e6, 1e-9, 1e-3])

    def call(piv=None, ints=(12, 1, 1, 1), first=0):
        info = np.array([0, first, 0, 0], dtype=np.int64)
        it._compiled.steps(params, np.array(ints, dtype=np.int64), it._kstate, it._kflags,
                           it._kpiv if piv is None else piv, times, hs, it._compiled.laws(times),
                           np.zeros(0), np.zeros((0, 2 * n)), np.zeros((0, it.n_c)), np.empty(4 * n + 1), info)
        return info

    with pytest.raises(TypeError, match="kernel steps: piv must be a int32 array, got items of format"):
        call(piv=it._kpiv.astype(np.int64))
    with pytest.raises(ValueError, match=r"kernel steps: info\[1\] \(the first output index\) is 5, outside \[0, 0\]"):
        call(first=5)
    with pytest.raises(ValueError, match="kernel steps: int params .* got 12, 1, 7, 1"):
        call(ints=(12, 1, 7, 1))
    with pytest.raises(ValueError, match="kernel steps: int params .* got 12, 1, 1, 2"):
        call(ints=(12, 1, 1, 2))
    assert call()[0] == 1                                   # one step done with the right arrays
