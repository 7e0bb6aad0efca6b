"""What the compiled step refuses around planar corotational beams (issue 22, item 4): each row is (what,
call, the message it now gives); the spatial beam's are in tests/test_failures_corot3d_kernel.py.  The beams
themselves are compiled (tests/test_compiled_corotational.py); these stay on the numpy path with
kernel="auto" and are refused, naming the joint or the body and why, with kernel="compiled" or
`CompiledSystem`."""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs import Material, System
from flexmbs.bodies import PointMass
from flexmbs.bodies.corotational import CorotationalBeam2D, Node
from flexmbs.compiled import CompiledSystem, kernel_status
from flexmbs.constraints.joints import Distance, Spherical
from flexmbs.constraints.planar import PlanarPrismatic, PlanarRevolute
from flexmbs.forces import Bushing

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason="the compiled kernel is not installed")

STEEL = Material(E=2e11, rho=7870.0)


def _beam(name="beam", **kwargs):
    return CorotationalBeam2D.line(name, (0.0, 0.0), (1.0, 0.0), 2, STEEL, 1e-4, 1e-9, **kwargs)


def _pack(bodies, joints=(), forces=(), gravity=(0.0, -9.81)):
    CompiledSystem(System(bodies, list(joints), gravity=gravity, forces=list(forces)))


ROWS = [
    ("a beam with a user's load callable",
     lambda: _pack([_beam("loaded", loads=[lambda body, t, q, v: np.zeros(9)])]),
     r"body 'loaded' is a CorotationalBeam2D with loads \(user callables\), which the compiled kernel cannot "
     r"evaluate"),
    ("a planar prismatic joint on a beam node other than Node(0)",
     lambda: _pack([b := _beam()], [PlanarPrismatic(None, b, axis=(1.0, 0.0), at=(0.5, 0.0), name="slide")]),
     r"joint 'slide' \(PlanarPrismatic\) is on node 1 of the corotational beam 'beam': its point moves with that "
     r"node while its axes turn with node 0's section, which the compiled kernel does not evaluate \(on Node\(0\) "
     r"it does\)"),
    ("a planar revolute joint on a point mass",
     lambda: _pack([b := _beam(), m := PointMass("m", 1.0, position=(1.0, 0.0))],
                   [PlanarRevolute(b, m, at=(1.0, 0.0), name="hinge")]),
     r"joint 'hinge' \(PlanarRevolute\) joins body 'm', a PointMass; the compiled kernel takes planar joints between "
     r"RigidBody2D bodies, CorotationalBeam2D nodes and the ground"),
    ("a 2D Distance joint on beam nodes",
     lambda: _pack([b := _beam()], [Spherical(None, b, s_j=Node(0), name="pin"),
                                    Distance(None, b, s_i=(1.0, 1.0), s_j=Node(2), name="rope")]),
     r"joint 'rope' \(Distance\) in the plane has rows other than point rows, which the compiled kernel does not "
     r"evaluate on planar bodies \(a 2D Spherical, PlanarRevolute and PlanarPrismatic it does\)"),
    ("a bushing on a beam",
     lambda: _pack([b := _beam()], forces=[Bushing(None, b, [10.0, 10.0, 1.0], at=(1.0, 0.0), name="mount")]),
     r"force element 'mount' \(Bushing\) acts on the corotational beam 'beam'; the compiled kernel evaluates "
     r"SpringDamper and RotationalSpringDamper on its nodes"),
    ("kernel='compiled' on a loaded beam, by flexmbs.run",
     lambda: fm.run(System([_beam("loaded", loads=[lambda body, t, q, v: np.zeros(9)])], gravity=(0.0, -9.81)),
                    formulation="index3", method="index3-alpha", h=1e-3, t_end=1e-3, dt_out=1e-3, store=False,
                    kernel="compiled"),
     r"`kernel` 'compiled' cannot run this system: body 'loaded' is a CorotationalBeam2D with loads"),
]


@needs_kernel
@pytest.mark.parametrize("what, call, message", ROWS, ids=[r[0] for r in ROWS])
def test_refusal_names_what_and_why(what, call, message):
    with pytest.raises(ValueError, match=message):
        call()
