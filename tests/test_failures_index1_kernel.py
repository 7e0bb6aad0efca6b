"""Issue 22, item 4: bad values of the index-1 formulations' option ``kernel`` (`flexmbs.formulations.evaluations`).

Rows are (description, the call, the message it now prints); the whole message is compared.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import flexmbs as fm
from flexmbs.bodies import PointMass
from flexmbs.compiled import kernel_status
from flexmbs.formulations.index1 import Index1

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))

import triple_pendulum  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_compiled_natural import user_loaded  # noqa: E402

KERNEL = "`kernel` must be 'auto', 'compiled' or 'numpy', got {!r}."


def free_point():
    return fm.System([PointMass("p", 2.0, position=(0.0, 0.0, 1.0))], [], gravity=(0.0, 0.0, -9.81))


ROWS = [
    ("an unknown path", lambda: Index1(triple_pendulum.build("euler-parameters"), kernel="gpu"), KERNEL.format("gpu")),
    ("not a string", lambda: Index1(triple_pendulum.build("euler-parameters"), kernel=True), KERNEL.format(True)),
    ("None", lambda: Index1(triple_pendulum.build("euler-parameters"), kernel=None), KERNEL.format(None)),
    ("through flexmbs.run", lambda: fm.run(triple_pendulum.build("euler-parameters"), formulation="udwadia-kalaba",
                                           method="AB4", h=1e-3, t_end=1e-3, store=False,
                                           formulation_options=dict(kernel="C")), KERNEL.format("C")),
]
COMPILED_ROWS = [   # "compiled" where the kernel cannot: refused, with why
    ("a user's load callable", lambda: Index1(user_loaded(), kernel="compiled"),
     "`kernel` 'compiled' cannot run this system: body 'bar1': its load 0 is a user callable, which the compiled kernel cannot evaluate (flexmbs.bodies.loads' torque_load, point_load and spring_to_ground it can; a law of the state sampled by a flexmbs.control.Controller it can too)."),
    ("the augmented block solve", lambda: Index1(free_point(), solver="augmented", kernel="compiled"),
     "`kernel` 'compiled' cannot run this system: the augmented accelerations are solved with the bodies' mass "
     "blocks (n_c = 0 or n_q + n_c >= 200), which the kernel does not give."),
]


@pytest.mark.parametrize("what, call, message", ROWS + (COMPILED_ROWS if kernel_status().installed else []),
                         ids=[r[0] for r in ROWS + (COMPILED_ROWS if kernel_status().installed else [])])
def test_bad_kernel_option(what, call, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()
