"""Failures of the block-diagonal mass solves (issue 26, item 5): each row a call and the message it
now prints."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs.block_mass import BlockMass, MassGroup
from flexmbs.constraints import Spherical
from flexmbs.formulations import augmented
from flexmbs.formulations.stabilization import RedundantConstraintError
from flexmbs.system import System

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_block_mass import chain  # noqa: E402


def redundant_chain_accelerations():
    """A chain of 30 rigid bodies (the sparse saddle point) pinned twice at the same point."""
    s = chain(30)
    s2 = System(s.bodies, list(s.constraints[s.n_internal:]) + [Spherical(None, s.bodies[0], at=(0, 0, 0),
                                                                          name="again")], gravity=s.gravity)
    return augmented.accelerations(s2, 0.0, s2.initial_coordinates(), s2.initial_velocities())


def singular_block_solve():
    """Two 3 x 3 blocks, body 'b' without mass."""
    blocks = np.array([np.eye(3), np.zeros((3, 3))])
    return BlockMass(6, (MassGroup(np.arange(6).reshape(2, 3), blocks, ("a", "b")),)).solve(np.ones(6))


ROWS = [
    (redundant_chain_accelerations, RedundantConstraintError,
     "The saddle-point matrix [[M, C_q^T], [C_q, 0]] of the augmented formulation is singular at t = 0 (ratio of "
     "the sparse LU's smallest to largest pivot 0.000e+00, below the limit 1e-13): the constraint Jacobian C_q has "
     "dependent rows (redundant constraints, or a singular configuration), or M is not positive definite on its "
     "null space. See System.mobility for the redundant constraints; use solver='udwadia-kalaba' (pseudo-inverse) "
     "or remove them."),
    (singular_block_solve, np.linalg.LinAlgError,
     "the mass matrix of body 'b' is singular and no constraint takes its null space out (M q'' = Q has no unique "
     "solution): give the body a positive mass and inertia (every coordinate must carry inertia), or constrain its "
     "massless coordinates"),
]


@pytest.mark.parametrize("call, error, message", ROWS, ids=[r[0].__name__ for r in ROWS])
def test_failure_message(call, error, message):
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        call()
