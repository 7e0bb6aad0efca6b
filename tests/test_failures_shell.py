"""Bad input to PlateMITC4 (flexmbs/elements/plate.py): each row is (what is given, the message it now prints)."""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.elements import PlateMITC4

STEEL = fm.Material(E=200e9, rho=7800.0, nu=0.3)
SQUARE = np.array([[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]]])
WARPED = SQUARE.copy()
WARPED[0, 2, 2] = 0.1
CLOCKWISE = SQUARE[:, ::-1]
PLATE = PlateMITC4(STEEL, 0.01)

ROWS = [
    (lambda: PlateMITC4(STEEL, 0.0), ValueError, "`thickness` must be a positive finite number, got 0.0"),
    (lambda: PlateMITC4(STEEL, "1"), ValueError, "`thickness` must be a positive finite number, got '1'"),
    (lambda: PlateMITC4(STEEL, 0.01, shear_correction=-1), ValueError,
     "`shear_correction` must be a positive finite number, got -1"),
    (lambda: PlateMITC4(200e9, 0.01), TypeError, "`material` must be a Material, got float"),
    (lambda: PLATE.k(SQUARE[:, :3]), ValueError,
     "`X` for PlateMITC4 must have shape (n_el, 4, dim) with dim in (3,), got (1, 3, 3)"),
    (lambda: PLATE.k(WARPED), ValueError,
     "`X`: a PlateMITC4 mesh must lie in one plane z = const of the body frame (its normal is the body z axis), "
     "got z from 0 to 0.1"),
    (lambda: PLATE.mass_points(CLOCKWISE), ValueError,
     "element 0 (quad) is degenerate or clockwise seen from +z: det J = -0.25 at a quadrature point; number its "
     "nodes counter-clockwise (meshio/VTK order)"),
    (lambda: PLATE.N(SQUARE, [[0.0, 0.0, 0.0]]), ValueError, "`xi` must have shape (n_p, 2) or (2,), got (1, 3)"),
    (lambda: PLATE.k_geo(SQUARE, np.zeros((1, 3, 3))), ValueError,
     "`stress` must have shape (1, 2, 2) or (1, 4, 2, 2) (at the 2 x 2 Gauss points), got (1, 3, 3)"),
    (lambda: PLATE.k_geo(SQUARE, np.array([[[1.0, 2.0], [0.0, 1.0]]])), ValueError,
     "`stress` must be symmetric (a Cauchy stress)"),
    (lambda: PLATE.prestress(SQUARE, np.zeros((1, 24))), ValueError, "`u_e` must have shape (1, 20), got (1, 24)"),
    (lambda: PLATE.k(SQUARE[:, :, :2]), ValueError,
     "`X` for PlateMITC4 must have 3D points (n_el, 4, 3) in a plane z = const, got (1, 4, 2): a 2D mesh would "
     "drop the deflection w from the displacement fields; mesh it with generate.rectangle(..., z=0.0)"),
    (lambda: fm.generate.rectangle(2, 1, z="0"), ValueError,
     "`z` must be a finite number (the plane's height) or None, got '0'"),
    (lambda: fm.Model(fm.generate.rectangle(2, 1, z=0.0), PLATE, fixed=[("left", "theta_z")]), ValueError,
     "unknown DOF 'theta_z' for PlateMITC4; valid: ['u', 'v', 'w', 'theta_x', 'theta_y'] or 'all'"),
]


@pytest.mark.parametrize("call, error, message", ROWS, ids=[m[:40] for _, _, m in ROWS])
def test_bad_input_is_named(call, error, message):
    with pytest.raises(error) as err:
        call()
    assert message in str(err.value)
