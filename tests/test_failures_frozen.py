"""Bad uses of the plain classes that replaced dataclasses (`flexmbs.frozen`): (call, message it prints)."""
import numpy as np
import pytest

from flexmbs.formulations.terms import ODETerm
from flexmbs.frozen import FrozenFields
from flexmbs.integrators.budget import RunSize
from flexmbs.motion import FrameState
from flexmbs.results import Results


def _term():
    return ODETerm(name="t", n_state=1, rhs=lambda t, x: x)


def _declare(init, **body):
    """A FrozenFields class declared with ``init`` as its __init__ (what a bad declaration raises)."""
    return type("Bad", (FrozenFields,), {"__init__": init, **body})


def _init_args(self, *args):
    self._set_fields(locals())


def _init_kwargs(self, a, **rest):
    self._set_fields(locals())


def _init_a_b(self, a, b=1):
    self._set_fields(locals())


class _Base(FrozenFields):
    def __init__(self, a):
        self._set_fields(locals())


def _init_super():
    class Child(_Base):
        def __init__(self, a):
            super().__init__(a)
    return Child


CASES = [
    ("__init__(self, *args)", lambda: _declare(_init_args), TypeError,
     "Bad.__init__ must declare the fields as named parameters, without *args, **kwargs or free variables "
     "(none), got the signature ('self',)"),
    ("__init__(self, a, **rest)", lambda: _declare(_init_kwargs), TypeError,
     "Bad.__init__ must declare the fields as named parameters, without *args, **kwargs or free variables "
     "(none), got the signature ('self', 'a')"),
    ("__init__ calling super()", _init_super, TypeError,
     "Child.__init__ must declare the fields as named parameters, without *args, **kwargs or free variables "
     "(__class__), got the signature ('self', 'a')"),
    ("_fields other than the __init__'s parameters", lambda: _declare(_init_a_b, _fields=("a",)), TypeError,
     "Bad._fields ('a',) differs from its __init__'s parameters ('a', 'b'); the parameters are the declaration "
     "(drop `_fields`)"),
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
