"""Bad input to the kernel's schema and to its control tuple (issue 22, items 3 and 4): each row is
(what, call, exception, the message it now gives).  The kernel's own entry points refuse rows that
do not fit the system before a step is taken."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from flexmbs import kernel_schema as schema
from flexmbs.bodies import RigidBodyEP
from flexmbs.compiled import KERNEL_VERSION, NO_CONTROL, kernel_status, version_mismatch
from flexmbs.constraints import Revolute
from flexmbs.integrators import ConstrainedProblem
from flexmbs.system import System

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason="the compiled kernel is not installed")


def _raise(message):
    raise RuntimeError(message)


ROWS = [
    ("a missing field", lambda: schema.LOAD_I.row(kind=0, offset=0, local=0),
     ValueError, r"kernel record LOAD_I: fields \['kind', 'offset', 'local', 'vector'\]; missing \['vector'\], "
                 r"unknown \[\]"),
    ("an unknown field", lambda: schema.PLANAR_BODY.row(mass=1.0, inertia=0.1, J=2.0),
     ValueError, r"kernel record PLANAR_BODY: fields \['mass', 'inertia'\]; missing \[\], unknown \['J'\]"),
    ("a vector too long for its field", lambda: schema.PLANAR_REVOLUTE.row(s_i=(1.0, 2.0, 3.0), s_j=(0.0, 0.0)),
     ValueError, r"kernel record PLANAR_REVOLUTE: field 's_i' holds 2 numbers, got 3"),
    ("a packed system without an array", lambda: schema.arrays(("header", "gravity"), "the system", header=1),
     ValueError, r"kernel arrays of the system: missing \['gravity'\], unknown \[\]"),
    ("a packed system with an undeclared array",
     lambda: schema.arrays(("header",), "flexible body 'rod'", header=1, springs=2),
     ValueError, r"kernel arrays of flexible body 'rod': missing \[\], unknown \['springs'\]"),
    ("a kernel built from another declaration",
     lambda: _raise(version_mismatch(SimpleNamespace(VERSION=KERNEL_VERSION, SCHEMA="HEADER/i64:n:1", __file__="k.so"))),
     RuntimeError, r"the compiled kernel k.so was built from another declaration of its rows than "
                   r"flexmbs/kernel_schema.py \(first difference: 'HEADER/i64:n:1'\); rebuild it"),
    ("a kernel without a declaration",
     lambda: _raise(version_mismatch(SimpleNamespace(VERSION=KERNEL_VERSION, __file__="k.so"))),
     RuntimeError, r"the compiled kernel k.so was built from another declaration of its rows than "
                   r"flexmbs/kernel_schema.py \(no SCHEMA\); rebuild it"),
]


@pytest.mark.parametrize("what, call, error, message", ROWS, ids=[r[0] for r in ROWS])
def test_message(what, call, error, message):
    with pytest.raises(error, match=message):
        call()


def _integrator():
    """index3-alpha on the compiled kernel for a rod on a revolute joint (7 coordinates)."""
    from flexmbs.integrators.index3_alpha import Index3GeneralizedAlpha
    rod = RigidBodyEP("rod", 1.0, np.diag([1 / 12, 1 / 12, 1e-4]), position=(0.0, 0.0, -0.5))
    system = System([rod], [Revolute(None, rod, at=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0), name="pin")],
                    gravity=(0.0, 0.0, -9.81))
    problem = ConstrainedProblem(system)
    q0 = system.initial_coordinates()
    return Index3GeneralizedAlpha(problem, 0.0, problem.state0(q0, 0 * q0), 0.01, h=1e-3, rho_inf=0.9,
                                  kernel="compiled")


def _step(it, control):
    n = it.n
    times = hs = np.array([1e-3])
    params = np.array([it.alpha_m, it.alpha_f, it.gamma, it.beta, 1e-8, 0.3, 0.0, 1e6, 1e-9, 1e-3])
    info = np.zeros(4, dtype=np.int64)
    it._compiled.steps(params, np.array([12, 1, 1, 1], dtype=np.int64), it._kstate, it._kflags, it._kpiv, times, hs,
                       it._compiled.laws(times), np.zeros(0), np.zeros((0, 2 * n)), np.zeros((0, it.n_c)),
                       np.empty(4 * n + 1), info, control)
    return info


def _control(sample=lambda step: True, sensor=(2, 0, -1, 0), sensed=3, sides=("rigid", "ground")):
    """The control tuple of one sensor: its SENSOR_I row (kind, offset_i, offset_j, out) and its sides' kinds."""
    ints = np.array(list(sensor) + [schema.CODES["SIDE"].index(x) for x in sides], dtype=np.int64)
    return (np.ones(1, dtype=np.int64), sample, np.zeros(0), np.zeros(0, dtype=np.int64), ints,
            np.zeros(schema.SENSOR_R.width), np.zeros(sensed))


KERNEL_ROWS = [
    ("a sample that is not callable", dict(sample="pd"),
     TypeError, r"kernel steps: the control's sample must be callable or None"),
    ("a sensor of a body beyond the coordinates", dict(sensor=(2, 5, -1, 0)),
     ValueError, r"kernel steps: sensor 0 \(kind 2, coordinates 5, -1, output 0\) does not fit 7 coordinates and "
                 r"3 sensed values"),
    ("a natural body's sensor beyond the coordinates (12 of them)", dict(sides=("natural", "ground")),
     ValueError, r"kernel steps: sensor 0 \(kind 2, coordinates 0, -1, output 0\) does not fit 7 coordinates and "
                 r"3 sensed values"),
    ("a sensor's output beyond the sensed values", dict(sensor=(3, 0, -1, 1)),
     ValueError, r"kernel steps: sensor 0 \(kind 3, coordinates 0, -1, output 1\) does not fit 7 coordinates and "
                 r"3 sensed values"),
    ("a sensor of an unknown kind", dict(sensor=(9, 0, -1, 0)),
     ValueError, r"kernel steps: sensor 0 \(kind 9, coordinates 0, -1, output 0\) does not fit"),
]


@needs_kernel
@pytest.mark.parametrize("what, kwargs, error, message", KERNEL_ROWS, ids=[r[0] for r in KERNEL_ROWS])
def test_kernel_control_tuple_is_checked_before_a_step(what, kwargs, error, message):
    it = _integrator()
    q = it._kstate[0].copy()
    with pytest.raises(error, match=message):
        _step(it, _control(**kwargs))
    np.testing.assert_array_equal(it._kstate[0], q)            # no step was taken


@needs_kernel
def test_the_kernel_names_a_missing_array():
    import _flexmbs_kernel
    packed = dict(_integrator()._compiled._packed)
    del packed["load_r"]
    with pytest.raises(ValueError, match="kernel system: missing array load_r"):
        _flexmbs_kernel.system(packed)
    with pytest.raises(TypeError, match=r"kernel system: arrays\['flexible'\] must be a list of dicts"):
        _flexmbs_kernel.system({})


@needs_kernel
def test_the_kernel_calls_the_sample_after_its_step_and_stops_when_told():
    it = _integrator()
    seen = []

    def sample(step):
        seen.append((step, it._kstate[0].copy()))
        return False
    info = _step(it, _control(sample=sample))
    assert info[0] == 1 and info[2] == 5 and seen[0][0] == 0            # one step, then stopped (status 5)
    assert _step(_integrator(), NO_CONTROL)[2] == 0
