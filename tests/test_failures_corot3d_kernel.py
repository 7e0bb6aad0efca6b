"""What the compiled step refuses around spatial corotational beams (issue 22, item 4): each row is (what, call,
the message it now gives).  The beams themselves are compiled (tests/test_compiled_corotational3d.py); these stay
on the numpy path with kernel="auto" and are refused, naming the joint, force element or body and why, with
kernel="compiled" or `CompiledSystem`."""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs import Material, System
from flexmbs.bodies import RigidBodyEP
from flexmbs.bodies.corotational import CorotationalBeam3D, Node
from flexmbs.compiled import CompiledSystem, kernel_status
from flexmbs.constraints.joints import Revolute, Spherical
from flexmbs.forces import Bushing, RotationalSpringDamper

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason="the compiled kernel is not installed")

STEEL = Material(E=2e11, rho=7870.0, nu=0.3)
G = (0.0, -9.81, 0.0)


def _beam(name="beam", **kwargs):
    return CorotationalBeam3D.line(name, (0, 0, 0), (1, 0, 0), 2, STEEL, 1e-4, 1e-9, 1e-9, 2e-9, **kwargs)


def _pack(bodies, joints=(), forces=(), formulation="lagrange"):
    CompiledSystem(System(bodies, list(joints), gravity=G, forces=list(forces)), formulation=formulation)


ROWS = [
    ("a revolute joint with its point on node 2 and its axis on the beam (node 0's section)",
     lambda: _pack([b := _beam(), h := RigidBodyEP("hub", 1.0, [0.1, 0.1, 0.1], position=(1.0, 0.0, 0.0))],
                   [Revolute(b, h, s_i=Node(2), at=(1.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0), name="hinge")]),
     r"joint 'hinge' \(Revolute\) is on node 2 of the corotational beam 'beam': its point moves with that node while "
     r"its axes turn with node 0's section \(CorotationalBeam3D.vector\), which the compiled kernel does not "
     r"evaluate \(on Node\(0\) it does\)"),
    ("a beam with a user's load callable",
     lambda: _pack([_beam("loaded", loads=[lambda body, t, q, v: np.zeros(18)])]),
     r"body 'loaded' is a CorotationalBeam3D with loads \(user callables\), which the compiled kernel cannot "
     r"evaluate"),
    ("Gibbs-Appell's terms",
     lambda: _pack([_beam()], formulation="gibbs-appell"),
     r"body 'beam' is a CorotationalBeam3D, which the compiled kernel evaluates in Lagrange's form only: the numpy "
     r"GibbsAppellSystem has no Gibbs-Appell terms for it"),
    ("a rotational spring-damper on the beam",
     lambda: _pack([b := _beam()], [Spherical(None, b, s_j=Node(0), name="pin")],
                   forces=[RotationalSpringDamper(None, b, 5.0, axis=(0.0, 0.0, 1.0), name="twist")]),
     r"force element 'twist' \(RotationalSpringDamper\) acts on the spatial corotational beam 'beam'; the compiled "
     r"kernel evaluates SpringDamper on its nodes"),
    ("a bushing on the beam",
     lambda: _pack([b := _beam()], forces=[Bushing(None, b, [10.0] * 6, at=(1.0, 0.0, 0.0), name="mount")]),
     r"force element 'mount' \(Bushing\) acts on the spatial corotational beam 'beam'; the compiled kernel "
     r"evaluates SpringDamper on its nodes"),
    ("kernel='compiled' with the hinge on node 2, by flexmbs.run",
     lambda: fm.run(System([b := _beam(), h := RigidBodyEP("hub", 1.0, [0.1, 0.1, 0.1], position=(1.0, 0.0, 0.0))],
                           [Revolute(b, h, s_i=Node(2), at=(1.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0), name="hinge")],
                           gravity=G),
                    formulation="index3", method="index3-alpha", h=1e-3, t_end=1e-3, dt_out=1e-3, store=False,
                    kernel="compiled"),
     r"`kernel` 'compiled' cannot run this system: joint 'hinge' \(Revolute\) is on node 2 of the corotational beam"),
]


@needs_kernel
@pytest.mark.parametrize("what, call, message", ROWS, ids=[r[0] for r in ROWS])
def test_refusal_names_what_and_why(what, call, message):
    with pytest.raises(ValueError, match=message):
        call()


@needs_kernel
def test_the_refused_hinge_runs_on_the_numpy_path_with_kernel_auto():
    """kernel="auto" runs the hinge on node 2 on the numpy path and says why."""
    b, h = _beam(), RigidBodyEP("hub", 1.0, [0.1, 0.1, 0.1], position=(1.0, 0.0, 0.0))
    res = fm.run(System([b, h], [Revolute(b, h, s_i=Node(2), at=(1.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0), name="hinge"),
                                 Spherical(None, b, s_j=Node(0), name="pin")], gravity=G),
                 formulation="index3", method="index3-alpha", h=1e-4, t_end=2e-4, dt_out=1e-4, store=False)
    assert res.success and res.metadata["kernel"] == "numpy"
