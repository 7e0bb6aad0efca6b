"""Bad input to Gibbs-Appell on the compiled step (issue 23, item 5): each row is (what, call, the message it
now gives).  The kernel evaluates Lagrange's or Gibbs-Appell's terms, declared in its header, and refuses a
Gibbs-Appell system packed without its flexible bodies' mass points before any step."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import flexmbs as fm
from flexmbs import compiled
from flexmbs.compiled import CompiledSystem, kernel_status

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import slider_crank  # noqa: E402
import triple_pendulum  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_compiled_natural import user_loaded  # noqa: E402

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason="the compiled kernel is not installed")


_mass_point_arrays = compiled.mass_point_arrays


def _without_mass_points():
    """Packs the slider-crank for Gibbs-Appell with its rod's mass points left out (none packed)."""
    system = slider_crank.build_coupled(elements=2)[0]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(compiled, "mass_point_arrays", lambda model: _mass_point_arrays(None))
        CompiledSystem(system, formulation="gibbs-appell")


ROWS = [
    ("a formulation the kernel does not evaluate",
     lambda: CompiledSystem(triple_pendulum.build("euler-parameters"), formulation="hamilton"),
     r"CompiledSystem: `formulation` must be one of 'lagrange', 'gibbs-appell', got 'hamilton'"),
    ("Gibbs-Appell with kernel='compiled' on bodies the kernel does not take",
     lambda: fm.run(user_loaded(), formulation="gibbs-appell", method="index3-alpha", h=1e-4,
                    t_end=1e-3, dt_out=1e-4, store=False, kernel="compiled"),
     r"`kernel` 'compiled' cannot run this system: body 'bar1': its load 0 is a user callable, which the compiled "
     r"kernel cannot evaluate"),
    ("a Gibbs-Appell system packed without its mass points", _without_mass_points,
     r"kernel system: flexible body 0 has 0 mass points; Gibbs-Appell's terms need them \(CompiledSystem\(system, "
     r"formulation='gibbs-appell'\) packs them\)"),
]


@needs_kernel
@pytest.mark.parametrize("what, call, message", ROWS, ids=[r[0] for r in ROWS])
def test_message(what, call, message):
    with pytest.raises(ValueError, match=message):
        call()
