"""Bad input of the stacked reaction blocks (issue 22, item 1), each row (call, message it prints):
`ReactionBlocks` refuses constraints it cannot stack, naming them and why (the one place:
`unstacked_reason`), and the stacked frame markers refuse markers of bodies without frame markers."""
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs.constraints.batch import JointBatch
from flexmbs.constraints.reaction_blocks import ReactionBlocks

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_system import triple_pendulum  # noqa: E402

NATURAL = triple_pendulum("natural")
EP = triple_pendulum("ep")


def _stacked_natural_markers():
    joint = NATURAL.constraint("A")
    batch = JointBatch([joint], [[0, None]], [0], NATURAL.n_q, joint.n_c, 3)
    return batch.jacobian_history(np.zeros(1), np.zeros((1, NATURAL.n_q + 8)))


ROWS = [
    ("a joint on natural coordinates", lambda: ReactionBlocks(NATURAL, [NATURAL.constraint("A")]),
     ValueError, r"ReactionBlocks: `constraints` must be joints whose reactions can be stacked over outputs "
                 r"\(`unstacked_reason` None\), got 'A': body 'body1' \(RigidBodyNatural\) has no frame markers "
                 r"\(q = \(R, p, \.\.\.\), points R \+ A\(p\) \(y0 \+ Phi q\[e\]\)\)"),
    ("an internal constraint", lambda: ReactionBlocks(EP, [EP.constraints[0]]),
     ValueError, r"got 'body1.euler_parameter_norm': EulerParameterNorm is not a joint of primitives \(its C_q "
                 r"comes from its own `jacobian`\)"),
    ("stacked markers of a natural-coordinate body", _stacked_natural_markers,
     RuntimeError, r"_Markers.evaluate_stacked: markers on bodies without frame markers are evaluated one "
                   r"configuration at a time; check `stackable\(\)` first"),
]


@pytest.mark.parametrize("what, call, error, message", ROWS, ids=[r[0] for r in ROWS])
def test_message(what, call, error, message):
    with pytest.raises(error, match=message):
        call()
