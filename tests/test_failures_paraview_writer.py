"""Bad input to the ParaView writers of `flexmbs.io.vtk_formats` (h5py and numpy, no meshio): each
call and the message it now prints (a ValueError or TypeError naming the argument)."""
import numpy as np
import pytest

from flexmbs.io.vtk_formats import XdmfSeries, write_vtu_file

TRIANGLE = [("triangle", [[0, 1, 2]])]


def vtu(tmp, **kw):
    args = dict(points=np.eye(3), cells=TRIANGLE)
    write_vtu_file(tmp / "x.vtu", **{**args, **kw})


def series(tmp, points=np.eye(3), cells=TRIANGLE, point_data=None, cell_data=None):
    with XdmfSeries(tmp / "x.xdmf") as s:
        s.write_mesh(points, cells)
        s.write_step(0.0, point_data, cell_data)


CASES = [  # (description, call(tmp_path), error, message it now prints)
    ("vtu: a polygon cell", lambda tmp: vtu(tmp, cells=[("polygon", [[0, 1, 2]])]), ValueError,
     "`cells`: cell type 'polygon' cannot be written to a ParaView file; the types written are ['hexahedron', "
     "'hexahedron20', 'hexahedron27', 'line', 'line3', 'pyramid', 'quad', 'quad8', 'quad9', 'tetra', 'tetra10', "
     "'triangle', 'triangle6', 'vertex', 'wedge', 'wedge15']"),
    ("vtu: points of one row", lambda tmp: vtu(tmp, points=np.zeros(3)), ValueError,
     "`points` must be an (n, 2) or (n, 3) array, got shape (3,)"),
    ("vtu: a point field of 2 rows for 3 points", lambda tmp: vtu(tmp, point_data={"u": np.zeros((2, 3))}),
     ValueError, "`point_data['u']` must have one row per point (3), got 2"),
    ("vtu: a cell field of 2 rows for 1 cell", lambda tmp: vtu(tmp, cell_data={"s": [np.zeros(2)]}), ValueError,
     "`cell_data['s']` must have one row per cell (1), got 2"),
    ("vtu: a complex point field", lambda tmp: vtu(tmp, point_data={"u": np.zeros(3, dtype=complex)}), TypeError,
     "`u` must hold integers or floats to be written to a VTU file, got dtype complex128"),
    ("xdmf: points (3, 4)", lambda tmp: series(tmp, points=np.zeros((3, 4))), ValueError,
     "`points` must be an (n, 2) or (n, 3) array, got shape (3, 4)"),
    ("xdmf: a scalar cell field for 1 cell", lambda tmp: series(tmp, cell_data={"s": 1.0}), ValueError,
     "`cell_data['s']` must have one row per cell (1), got 0"),
    ("xdmf: a text point field", lambda tmp: series(tmp, point_data={"name": np.array(["a", "b", "c"])}), TypeError,
     "`name` must hold integers or floats to be written to an XDMF file, got dtype <U1"),
]


@pytest.mark.parametrize(("call", "error", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_message(tmp_path, call, error, message):
    with pytest.raises(error) as info:
        call(tmp_path)
    assert str(info.value) == message
