"""index3-alpha's Newton options refused by name, before a step: (description, call, the message it
now prints).  ``kept_stop`` (the stop with a matrix kept from earlier steps, docs/integrators.md) takes
"rate" or "correction"; the kernel's entry point refuses another code (tests/test_failures_input.py)."""
import re

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import RigidBodyEP
from flexmbs.constraints import Spherical
from flexmbs.system import System


def pendulum() -> System:
    """A ball of 1 kg on a spherical joint 1 m above it, under gravity."""
    bob = RigidBodyEP("bob", 1.0, np.diag([0.01, 0.01, 0.01]), position=(1.0, 0.0, 0.0))
    return System([bob], [Spherical(None, bob, at=(0.0, 0.0, 0.0))], gravity=(0.0, -9.81, 0.0))


def run(**options):
    return fm.run(pendulum(), method="index3-alpha", h=1e-3, dt_out=1e-3, t_end=0.01, store=False, **options)


ROWS = [
    ("kept_stop not one of the rules", lambda: run(kept_stop="always"),
     "`kept_stop` must be one of 'correction', 'rate', got 'always'."),
    ("kept_stop as a flag", lambda: run(kept_stop=True),
     "`kept_stop` must be one of 'correction', 'rate', got True."),
    ("kept_stop on the numpy path", lambda: run(kept_stop="fast", kernel="numpy"),
     "`kept_stop` must be one of 'correction', 'rate', got 'fast'."),
]


@pytest.mark.parametrize("what, call, message", ROWS, ids=[r[0] for r in ROWS])
def test_message(what, call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


def test_the_rules_named_run():
    """Both rules run the same pendulum to the end (the table's calls fail on the value alone)."""
    for stop in ("rate", "correction"):
        assert run(kept_stop=stop).status == "finished"
