"""Bad input to plate stresses, surface loads on plates, rigid interfaces and imported bodies (issue 24,
flexmbs/elements/plate.py, flexmbs/model.py, flexmbs/reduction.py, flexmbs/io/fe_import.py): each row is
(what is given, the error, the message it now prints)."""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.elements import PlateMITC4
from flexmbs.model import SurfaceLoad

STEEL = fm.Material(E=200e9, rho=7800.0, nu=0.3)
SQUARE = np.array([[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]]])
PLATE = PlateMITC4(STEEL, 0.01)
STRIP = fm.generate.rectangle(2, 1, z=0.0)

ROWS = [
    ("plate stress above its top surface", lambda: PLATE.stress(SQUARE, np.zeros((1, 20)), z=0.01), ValueError,
     "`z` must be a height in [-t/2, t/2] = [-0.005, 0.005] m from the mid-surface, got 0.01"),
    ("plate stress at a height given as text", lambda: PLATE.stress(SQUARE, np.zeros((1, 20)), z="top"), ValueError,
     "`z` must be a height in [-t/2, t/2] = [-0.005, 0.005] m from the mid-surface, got 'top'"),
    ("plate stress of element DOFs of the wrong size", lambda: PLATE.shear_force(SQUARE, np.zeros((1, 12))),
     ValueError, "`u_e` must have shape (1, 20), got (1, 12)"),
    ("a SurfaceLoad on the plate's own quad cells",
     lambda: fm.Model(STRIP, PLATE, fixed=[("left", "all")], loads=[SurfaceLoad("all", pressure=1e3)]), ValueError,
     "`loads[0].faces` (set 'all') holds quad cells, the plate itself: a SurfaceLoad on a PlateMITC4 acts on its "
     "edges (line cells); load its surface with DistributedLoad((0, 0, -p / thickness), per='volume') for a "
     "pressure p"),
]


@pytest.mark.parametrize("what, call, error, message", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input_is_named(what, call, error, message):
    with pytest.raises(error) as err:
        call()
    assert message in str(err.value)
