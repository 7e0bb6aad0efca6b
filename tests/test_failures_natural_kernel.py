"""Issue 22, item 4: what the compiled kernel still refuses on natural-coordinate bodies (flexmbs/compiled.py,
`flexmbs.kernel_schema.KINDS`): a user's own load callable (bodies, their markers, loads made by
flexmbs.bodies.loads and force elements on them are compiled); the refusal names the body and the load, and
kernel="compiled" says it.

Rows are (description, the call, the message it now prints); the whole message is compared.  Skipped when the
kernel is not installed (then every system runs on the numpy path).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import flexmbs as fm
from flexmbs.compiled import CompiledSystem, Unsupported, kernel_status

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_compiled_natural import user_loaded  # noqa: E402

pytestmark = pytest.mark.skipif(not kernel_status().installed, reason=f"the kernel is {kernel_status()}")

USER_LOAD = ("body 'bar1': its load 0 is a user callable, which the compiled kernel cannot evaluate "
             "(flexmbs.bodies.loads' torque_load, point_load and spring_to_ground it can; a law of the state sampled "
             "by a flexmbs.control.Controller it can too)")

ROWS = [
    ("a user's load callable on a natural body", lambda: CompiledSystem(user_loaded()), Unsupported, USER_LOAD),
    ("the same through index3-alpha, kernel='compiled'",
     lambda: fm.run(user_loaded(), method="index3-alpha", h=1e-3, t_end=1e-3, dt_out=1e-3, store=False,
                    kernel="compiled"),
     ValueError, f"`kernel` 'compiled' cannot run this system: {USER_LOAD}."),
]


@pytest.mark.parametrize("what, call, error, message", ROWS, ids=[r[0] for r in ROWS])
def test_refused_on_natural_bodies(what, call, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()
