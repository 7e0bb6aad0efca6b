"""Bad input to the dense (scipy-free) path of small models: each row is a call and the message it
now prints (issue 22, a small flexible body without scipy)."""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.model import dense_spd_solve
from flexmbs.modal import generalized_eigh
from flexmbs.motion import ConstantRotation

STEEL = fm.Material(2e11, 7800.0)


def spinning_beam(**kwargs):
    return fm.Model(fm.generate.line(4, 1.0), fm.BeamEB2D(STEEL, 1e-4, 1e-9), motion=ConstantRotation(3.0),
                    fixed=[("start", "all")], **kwargs)


ROWS = [
    ("modes with a massless DOF", lambda: generalized_eigh(np.eye(2), np.diag([1.0, 0.0])),
     "the mass matrix is not positive definite (a DOF without mass?): the modes K phi = w^2 M phi need M > 0"),
    ("pre-stress of an unsupported stiffness", lambda: dense_spd_solve(np.diag([1.0, -1.0]), np.ones((2, 1))),
     "geometric stiffening needs a supported body (the stiffness is not positive definite: "),
    ("unknown pre-stress solver of a dense model", lambda: spinning_beam(prestress_solver="lu"),
     "`prestress_solver` must be one of ['auto', "),
    ("free-floating dense model with stiffening", lambda: fm.Model(
        fm.generate.line(4, 1.0), fm.BeamEB2D(STEEL, 1e-4, 1e-9), motion=ConstantRotation(3.0)),
     "geometric stiffening needs a supported body: 3 rigid-body motion(s) of the body are not held by `fixed`"),
]


@pytest.mark.parametrize("call, message", [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_bad_input_says_what_is_wrong(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert message in str(err.value)


def test_a_dense_model_is_what_the_rows_run_on():
    assert spinning_beam().dense and spinning_beam().prestress_info == "dense Cholesky (numpy)"
