"""Issue 23: Kane and Volterra on a System refuse a body kind that does not give its parts' kinematics, naming
it and the kinds that do.  Rows are (description, call, message it now gives)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import flexmbs as fm
from flexmbs.bodies import CorotationalBeam3D
from flexmbs.formulations.registry import system_formulation
from flexmbs.system import System

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))


def beam3d_system():
    beam = CorotationalBeam3D.line("beam3d", (0, 0, 0), (1, 0, 0), 2, fm.Material(E=2e11, rho=7870.0),
                                   1e-4, 1e-9, 1e-9, 2e-9)
    return System([beam])


KINDS = ("The body kinds that do: PointMass, RigidBody2D, RigidBodyEP, RigidBodyNatural, FlexibleBody, "
         "CorotationalBeam2D, TreeBody. Use formulation 'lagrange' or 'index3' for this system")
ROWS = [
    ("kane on a 3D corotational beam", lambda: system_formulation("kane", beam3d_system()),
     "formulation 'kane' needs bodies that provide kinematics(), active_forces(); body 'beam3d' "
     f"(CorotationalBeam3D) does not. {KINDS}"),
    ("volterra on a 3D corotational beam", lambda: system_formulation("volterra", beam3d_system()),
     "formulation 'volterra' needs bodies that provide kinematics(), active_forces(); body 'beam3d' "
     f"(CorotationalBeam3D) does not. {KINDS}"),
    ("slider_crank's kane without --coupled", lambda: __import__("slider_crank").run(
        formulation="kane", revolutions=0.01, plots=False),
     "'kane' runs the coupled model only (--coupled)"),
    ("slider_crank's volterra without --coupled", lambda: __import__("slider_crank").run(
        formulation="volterra", revolutions=0.01, plots=False),
     "'volterra' runs the coupled model only (--coupled)"),
    ("slider_crank's table without --coupled", lambda: __import__("slider_crank").run(table=True, plots=False),
     "compares the formulations of the coupled model: add --set coupled=true"),
    ("slider_crank's table on the solid rod", lambda: __import__("slider_crank").run(
        table=True, coupled=True, rod="solid", plots=False),
     "compares the formulations on the beam rod (rod='beam'), got rod='solid'"),
]


@pytest.mark.parametrize("description, call, message", ROWS, ids=[r[0] for r in ROWS])
def test_refusals_name_the_cause(description, call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert message in str(err.value), str(err.value)
