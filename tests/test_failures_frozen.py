"""Bad uses of the plain classes that replaced dataclasses (`flexmbs.frozen`): (call, message it prints)."""
import numpy as np
import pytest

from flexmbs.formulations.terms import ODETerm
from flexmbs.integrators.budget import RunSize
from flexmbs.motion import FrameState
from flexmbs.results import Results


def _term():
    return ODETerm(name="t", n_state=1, rhs=lambda t, x: x)


CASES = [
    ("RunSize(...).replace(step=2)", lambda: RunSize(steps=1, outputs=2, memory_bytes=3).replace(step=2),
     TypeError, "RunSize.replace: unknown field(s) step; the fields are steps, outputs, memory_bytes, disk_bytes"),
    ("Results(t).replace(statuss=..., energy=...)",
     lambda: Results(t=np.zeros(1)).replace(statuss="failed", energy={}),
     TypeError, "Results.replace: unknown field(s) energy, statuss; the fields are t, delta,"),
    ("term.rhs = ...", lambda: setattr(_term(), "rhs", None), AttributeError, "cannot assign to field 'rhs'"),
    ("del frame_state.R", lambda: delattr(FrameState(*[np.zeros(3)] * 6), "R"), AttributeError,
     "cannot delete field 'R'"),
    ("ODETerm(name=..., n_state=...) without rhs", lambda: ODETerm(name="t", n_state=1), TypeError,
     "missing 1 required keyword-only argument: 'rhs'"),
]


@pytest.mark.parametrize("call, error, message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_message(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)
