"""The Models' nodal loads on the compiled step (issue 22, item 4): what stays refused, and how a failing load
factor stops a compiled run.  Each row is (what, call, the message it now gives)."""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs import BeamEB2D, DistributedLoad, Material, Model, NodalLoad, Quad4, SurfaceLoad, generate
from flexmbs.bodies import FlexibleBody
from flexmbs.compiled import CompiledSystem, kernel_status
from flexmbs.system import System

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason=f"the kernel is {kernel_status()}")

ALU = Material(E=7e10, rho=2700.0)


def beam(*loads) -> System:
    """A cantilever (4 BeamEB2D elements, 0.5 m) with ``loads`` as its one body."""
    model = Model(generate.line(4, 0.5), BeamEB2D(ALU, area=1e-4, I=1e-9), fixed=[("start", "all")], loads=list(loads))
    return System([FlexibleBody(model, "beam")])


def plate_with_traction() -> FlexibleBody:
    """A plane-stress strip (2 x 1 Quad4) with a traction on its right edge."""
    model = Model(generate.rectangle(2, 1), Quad4(Material(E=7e10, rho=2700.0, nu=0.3), 0.01),
                  fixed=[(np.array([0, 3]), "all")], loads=[SurfaceLoad(faces={"line": np.array([[2, 5]])},
                                                                          traction=(1.0, 0.0, 0.0))])
    return FlexibleBody(model, "plate")


def compiled_run(system, method: str):
    """``method`` on the compiled step to 10 ms: (its status, message, last output time)."""
    res = fm.run(system, method=method, h=1e-4, t_end=0.01, store=False, kernel="compiled")
    assert res.metadata["kernel"] == "compiled"
    return res.status, res.message, float(res.t[-1])


def nan_after_5ms(t):
    return np.nan if t > 0.005 else 1.0


ROWS = [
    ("a load factor that gives an array",
     lambda: CompiledSystem(beam(NodalLoad("end", "v", 1.0, lambda t: np.array([1.0, t])))),
     "body 'beam': its Model's `loads[0].f` gives an array of shape (2,) at t = 0, not a number"),
    ("a load factor that raises at t = 0 (the run's first evaluation; was the bare ZeroDivisionError)",
     lambda: fm.run(beam(NodalLoad("end", "v", 1.0, lambda t: 1.0 / 0.0)), method="index3-alpha", h=1e-4,
                    t_end=1e-3, dt_out=1e-4, store=False, kernel="compiled"),
     "`loads[0].f` raised ZeroDivisionError at t = 0: float division by zero"),
    ("a load factor that raises at t = 0, packed for the kernel",
     lambda: CompiledSystem(beam(NodalLoad("end", "v", 1.0, lambda t: 1.0 / 0.0))),
     "body 'beam': its Model's `loads[0].f` raised ZeroDivisionError at t = 0: float division by zero"),
    ("a DistributedLoad on a FlexibleBody (refused by the body)",
     lambda: beam(DistributedLoad((0.0, -1.0, 0.0))),
     "body 'beam': `model.loads[0]` is a DistributedLoad, which a FlexibleBody does not take yet; apply nodal loads "
     "or the System's gravity"),
    ("a SurfaceLoad on a FlexibleBody (refused by the body; was an AttributeError of its nodal loads)",
     plate_with_traction,
     "body 'plate': `model.loads[0]` is a SurfaceLoad, which a FlexibleBody does not take yet; apply nodal loads "
     "or the System's gravity"),
]


@needs_kernel
@pytest.mark.parametrize("what, call, message", ROWS, ids=[r[0] for r in ROWS])
def test_message(what, call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert str(err.value) == message


RUNS = [
    ("index3-alpha", "The step from t = 0.005 failed: body 'beam': its Model's `loads[0].f` gave NaN or inf at "
                     "t = 0.0051; a law or load must be finite at every time of the run", 0.005),
    ("index3-alpha-adaptive", "body 'beam': its Model's `loads[0].f` gave NaN or inf at t = 0.005", None),
]


@needs_kernel
@pytest.mark.parametrize("method, message, t_last", RUNS, ids=[r[0] for r in RUNS])
def test_a_load_factor_giving_nan_stops_the_compiled_run(method, message, t_last):
    """A factor that is NaN after 5 ms: the compiled run stops at the step that reaches it, names the body and
    the load (the numpy path names the load: `loads[0].f`, tests/test_failures_causes.py), and keeps the
    outputs before it."""
    status, said, t = compiled_run(beam(NodalLoad("end", "v", 1.0, nan_after_5ms)), method)
    assert status == "failed" and message in said
    assert (t == t_last) if t_last is not None else 0.004 <= t <= 0.005
