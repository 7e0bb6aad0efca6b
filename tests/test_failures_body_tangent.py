"""Bad inputs of the bodies' own tangents (`Body.tangent`, `rotary_inertia_tangent`): each row is a call and the
message it now prints."""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies.corotational import CorotationalBeam2D
from flexmbs.elements.corotational3d import rotary_inertia_tangent


class _Beam(CorotationalBeam2D):
    """A planar beam whose `tangent` returns what the row gives."""

    given = None

    def tangent(self, t, q, v, qdd, gravity):
        return self.given


def _system_tangent(given):
    beam = _Beam.line("beam", (0.0, 0.0), (1.0, 0.0), 1, fm.Material(E=1e6, rho=1000.0), 1e-4, 1e-9)
    beam.given = given
    system = fm.System([beam])
    n = system.n_q
    return system.tangent_matrices(0.0, np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(0))


ROWS = [
    ("tangent returns a K_b of the wrong size", lambda: _system_tangent((np.eye(5), np.zeros((6, 6)))),
     "System: body 'beam': `tangent` returned K_b of shape (5, 5), expected (6, 6) (its n_q), or None to have "
     "the System difference the body"),
    ("tangent returns a C_b of the wrong size", lambda: _system_tangent((np.eye(6), np.zeros(6))),
     "System: body 'beam': `tangent` returned C_b of shape (6,), expected (6, 6) (its n_q), or None to have "
     "the System difference the body"),
    ("tangent returns one matrix", lambda: _system_tangent(np.eye(6)),
     "System: body 'beam': `tangent` must return (K_b, C_b), two (6, 6) arrays, or None, got ndarray"),
    ("tangent returns a number", lambda: _system_tangent(1.0),
     "System: body 'beam': `tangent` must return (K_b, C_b), two (6, 6) arrays, or None, got float"),
    ("rotary_inertia_tangent with psi of 2 components",
     lambda: rotary_inertia_tangent(np.zeros((2, 2)), np.zeros((2, 2)), np.zeros((2, 2)), np.zeros((2, 3, 3))),
     "rotary_inertia_tangent: expected psi, psi_dot, psi_ddot (n, 3) and J0 (n, 3, 3), got shapes (2, 2), (2, 2), "
     "(2, 2) and (2, 3, 3)"),
    ("rotary_inertia_tangent with J0 of another node count",
     lambda: rotary_inertia_tangent(np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((3, 3, 3))),
     "rotary_inertia_tangent: expected psi, psi_dot, psi_ddot (n, 3) and J0 (n, 3, 3), got shapes (2, 3), (2, 3), "
     "(2, 3) and (3, 3, 3)"),
]


@pytest.mark.parametrize("call, message", [(r[1], r[2]) for r in ROWS], ids=[r[0] for r in ROWS])
def test_bad_input_says_what_was_expected(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == message
