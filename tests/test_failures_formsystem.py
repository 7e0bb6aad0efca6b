"""Issue 23: Gibbs-Appell and Hamilton on a System refuse what they cannot run, naming it.

Rows are (description, call, message it now gives)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import CorotationalBeam3D, RigidBodyEP
from flexmbs.constraints import Spherical
from flexmbs.formulations.registry import system_formulation
from flexmbs.system import System

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))


def beam3d_system():
    beam = CorotationalBeam3D.line("beam3d", (0, 0, 0), (1, 0, 0), 2, fm.Material(E=2e11, rho=7870.0),
                                   1e-4, 1e-9, 1e-9, 2e-9)
    return System([beam])


def pendulum():
    rod = RigidBodyEP("rod", 2.0, np.diag([0.2, 0.2, 1e-3]), position=(0.0, 0.0, -0.5))
    return System([rod], [Spherical(rod, None, at=(0.0, 0.0, 0.0))], gravity=(0.0, 0.0, -9.81))


ROWS = [
    ("gibbs-appell on a 3D corotational beam", lambda: system_formulation("gibbs-appell", beam3d_system()),
     "formulation 'gibbs-appell' needs bodies that provide gibbs_appell(), active_forces(); body 'beam3d' "
     "(CorotationalBeam3D) does not. The body kinds that do: PointMass, RigidBody2D, RigidBodyEP, RigidBodyNatural, "
     "FlexibleBody, CorotationalBeam2D, TreeBody. Use formulation 'lagrange' or 'index3' for this system"),
    ("hamilton on a 3D corotational beam", lambda: system_formulation("hamilton", beam3d_system()),
     "formulation 'hamilton' needs bodies that provide kinetic_energy_gradient(), active_forces(); body 'beam3d' "
     "(CorotationalBeam3D) does not."),
    ("hamilton with a negative jacobian_refresh", lambda: system_formulation("hamilton", pendulum(),
                                                                            jacobian_refresh=-1.0),
     "`jacobian_refresh` must be a positive time [s], got -1.0."),
    ("hamilton with generalized-alpha", lambda: fm.run(pendulum(), formulation="hamilton", method="generalized-alpha",
                                                       h=1e-3, t_end=0.01, store=False),
     "formulation 'hamilton' does not run with method 'generalized-alpha'"),
    ("slider_crank's maggi without --coupled", lambda: __import__("slider_crank").run(
        formulation="maggi", revolutions=0.01, plots=False),
     "'maggi' runs the coupled model only (--coupled)"),
    ("gibbs-appell with Baumgarte coefficients but no Baumgarte", lambda: system_formulation(
        "gibbs-appell", pendulum(), alpha=5.0),
     "`alpha`/`beta` are the Baumgarte coefficients: give them with stabilization='baumgarte'"),
]


@pytest.mark.parametrize("description, call, message", ROWS, ids=[r[0] for r in ROWS])
def test_refusals_name_the_cause(description, call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert message in str(err.value), str(err.value)
