"""Bad input to plate stresses, surface loads on plates, rigid interfaces and imported bodies (issue 24,
flexmbs/elements/plate.py, flexmbs/model.py, flexmbs/reduction.py, flexmbs/io/fe_import.py): each row is
(what is given, the error, the message it now prints)."""
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import FlexibleBody, Interface
from flexmbs.elements import PlateMITC4
from flexmbs.model import SurfaceLoad
from flexmbs.io.fe_import import ImportedBody
from flexmbs.reduction import reduce

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import slider_crank as sc  # noqa: E402

STEEL = fm.Material(E=200e9, rho=7800.0, nu=0.3)
SQUARE = np.array([[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]]])
PLATE = PlateMITC4(STEEL, 0.01)
STRIP = fm.generate.rectangle(2, 1, z=0.0)
BOX = fm.generate.box(4, 1, 1, 1.0, 0.1, 0.1, cell="tetra")
BAR = fm.Model(BOX, fm.Tet4(STEEL), fixed=[("xmin", "all")])
FREE_BAR = fm.Model(BOX, fm.Tet4(STEEL))
SIDE = [int(i) for i in np.flatnonzero((BOX.points[:, 1] == 0) & (BOX.points[:, 0] > 0))]   # meets xmax
EDGE = [int(i) for i in np.flatnonzero((BOX.points[:, 1] == 0) & (BOX.points[:, 2] == 0))]   # nodes on a line

# an imported body built from a native one's matrices (the file formats are tested in test_fe_import.py)
IMPORTED = ImportedBody(FREE_BAR.M, FREE_BAR.K, BOX.points, np.arange(1, BOX.n_nodes + 1), ("test", "test"))
TIP = {"tip": BOX.nodes("xmax")}


def imported_with(load):
    return IMPORTED.model(fixed=[(BOX.nodes("xmin"), "all")], node_sets=TIP, loads=[load])


def marker_point(model, marker):
    body = FlexibleBody(model, "bar")
    return body.point(body.initial_coordinates(), marker)

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
    ("a rigid Interface with weights", lambda: Interface("xmax", weights=(1.0, 2.0), rigid=True), ValueError,
     "`weights` belong to an averaging interface; a rigid one (rigid=True) moves its nodes as one rigid body and "
     "takes no weights"),
    ("rigid given as text", lambda: Interface("xmax", rigid="yes"), TypeError,
     "`rigid` must be True or False, got 'yes'"),
    ("a rigid Interface on a full Model", lambda: marker_point(BAR, Interface("xmax", rigid=True)), ValueError,
     "body 'bar': Interface 'xmax' is rigid, but the Model is a full one: flexmbs builds a rigid interface into a "
     "reduced basis only; use reduce(model, n_modes, rigid_interfaces=['xmax']) (or an averaging Interface)"),
    ("a rigid Interface on a basis that does not tie it",
     lambda: marker_point(reduce(BAR, 2, static_modes=False), Interface("xmax", rigid=True)), ValueError,
     "body 'bar': Interface 'xmax' is rigid, but the reduced Model's basis does not tie that node set rigidly; "
     "reduce with rigid_interfaces=['xmax'] (or use an averaging Interface)"),
    ("a rigid interface on supported nodes", lambda: reduce(BAR, 2, rigid_interfaces=["xmin"]), ValueError,
     "`rigid_interfaces[0]`: a rigid interface cannot hold supported DOFs: 12 of its nodes' DOFs are in `fixed`"),
    ("rigid interfaces sharing nodes", lambda: reduce(BAR, 2, rigid_interfaces=["xmax", SIDE]), ValueError,
     "`rigid_interfaces[1]` shares nodes with an earlier set; give disjoint node sets"),
    ("a rigid interface of nodes on one line", lambda: reduce(BAR, 2, rigid_interfaces=[EDGE[1:]]), ValueError,
     "`rigid_interfaces[0]`: the interface's 4 node(s) cannot carry the 6 rigid-body motions of a rigid interface "
     "(their rigid modes have rank 5); give nodes that span a surface"),
    ("a rigid interface on a free-free body",
     lambda: reduce(FREE_BAR, 2, rigid_interfaces=["xmax"], static_modes=False), ValueError,
     "`rigid_interfaces` needs a supported body; the model has 6 rigid-body motion(s) that its supports leave "
     "free: support it with `fixed`"),
    ("craig-bampton without an interface", lambda: reduce(BAR, 2, method="craig-bampton"), ValueError,
     "`interface` (node set, indices or mask) or `rigid_interfaces` is needed for 'craig-bampton'"),
    ("a SurfaceLoad on an imported body", lambda: imported_with(SurfaceLoad("tip", pressure=1e3)), ValueError,
     "`loads[0]`: an imported body has no faces (the exporting code keeps its elements), so it takes no "
     "SurfaceLoad; give the face's consistent nodal forces as NodalLoads (e.g. exported as a load vector by that "
     "code)"),
    ("a load per volume on an imported body", lambda: imported_with(fm.DistributedLoad((0, 0, 1.0), per="volume")),
     ValueError, "`loads[0].per` must be 'mass' for an imported body (a load per volume or length needs the density "
     "and the section, which the imported M does not give), got 'volume'"),
    ("a load on an element set of an imported body",
     lambda: imported_with(fm.DistributedLoad((0, 0, 1.0), per="mass", elements="all")), ValueError,
     "`loads[0].elements`: an imported body has no elements; a DistributedLoad acts on the whole body "
     "(elements=None), got 'all'"),
    ("a body force that is not a 3-vector", lambda: imported_with(fm.DistributedLoad((0, 1.0), per="mass")),
     ValueError, "`loads[0].value` must be a finite 3-vector [N/kg] (body frame), got (0, 1.0)"),
    ("a load of another kind", lambda: imported_with((0, 0, 1.0)), TypeError,
     "`loads[0]` must be a NodalLoad or a DistributedLoad (per mass) for an imported body, got tuple"),
    ("a nodal load on a rotation of an imported body", lambda: imported_with(fm.NodalLoad("tip", "theta", 1.0)),
     ValueError, "unknown DOF 'theta' for NodeTranslations; valid: ['u', 'v', 'w'] or 'all'"),
    ("gravity that is not a 3-vector", lambda: IMPORTED.model(gravity=(0.0, -9.81)), ValueError,
     "`gravity` must be a 3-vector (global components), got (0.0, -9.81)"),
    ("the slider-crank's interface on the beam rod", lambda: sc.run(interface="rigid"), ValueError,
     "parameter 'interface': is bearing B of the solid rod: add --set rod=solid (got rod='beam')"),
    ("the slider-crank's interface misspelt", lambda: sc.run(coupled=True, rod="solid", interface="rbe2"), ValueError,
     "parameter 'interface': must be one of averaging, rigid, got 'rbe2'"),
]


@pytest.mark.parametrize("what, call, error, message", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input_is_named(what, call, error, message):
    with pytest.raises(error) as err:
        call()
    assert message in str(err.value)
