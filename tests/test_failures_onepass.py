"""Bad input of the one-pass outputs (issue 22, item 1): `System.reaction_history` and
`Index3GeneralizedAlpha.dense_multipliers`, each row (call, message it prints)."""
import sys
from pathlib import Path

from types import SimpleNamespace

import numpy as np
import pytest

from flexmbs.compiled import version_mismatch
from flexmbs.integrators import ConstrainedProblem
from flexmbs.integrators.index3_alpha import Index3GeneralizedAlpha

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))

import slider_crank  # noqa: E402

SYSTEM = slider_crank.build_coupled(elements=2)[0]
N_Q, N_C = SYSTEM.n_q, SYSTEM.n_c
T = np.zeros(3)


def _raise(message):
    """The message `version_mismatch` gives, raised as `kernel_status` reports it."""
    raise RuntimeError(message)


def _integrator():
    problem = ConstrainedProblem(SYSTEM)
    q0 = SYSTEM.initial_coordinates()
    return Index3GeneralizedAlpha(problem, 0.0, problem.state0(q0, SYSTEM.initial_velocities()), 1e-3,
                                  h=1e-4, rho_inf=0.9, kernel="numpy")


ROWS = [
    ("q of the wrong length", lambda: SYSTEM.reaction_history(T, np.zeros((2, N_Q)), np.zeros((3, N_C)), ["drive"]),
     ValueError, rf"System.reaction_history: `q` must be an array \(3, {N_Q}\) \(one row per time of `t`\), "
                 rf"got shape \(2, {N_Q}\)"),
    ("lam of one state", lambda: SYSTEM.reaction_history(T, np.zeros((3, N_Q)), np.zeros(N_C), ["drive"]),
     ValueError, rf"System.reaction_history: `lam` must be an array \(3, {N_C}\) \(one row per time of `t`\), "
                 rf"got shape \({N_C},\)"),
    ("no outputs", lambda: SYSTEM.reaction_history([], np.zeros((0, N_Q)), np.zeros((0, N_C)), ["drive"]),
     ValueError, r"System.reaction_history: `t` must be a vector of at least one time, got shape \(0,\)"),
    ("unknown joint", lambda: SYSTEM.reaction_history(T, np.zeros((3, N_Q)), np.zeros((3, N_C)), ["pin C"]),
     ValueError, r"System: no constraint 'pin C'; constraints: \["),
    ("a kernel built from older sources", lambda: _raise(version_mismatch(SimpleNamespace(VERSION=1, __file__="k.so"))),
     RuntimeError, r"the compiled kernel k.so is version 1, this flexmbs calls version 4; rebuild it "
                   r"\(`python setup.py build_ext --inplace` in the source tree, or reinstall flexmbs\)"),
    ("dense multipliers before a step", lambda: _integrator().dense_multipliers(0.0),
     RuntimeError, r"`dense_multipliers` is available only after a step taken by `step`\."),
]


@pytest.mark.parametrize("what, call, error, message", ROWS, ids=[r[0] for r in ROWS])
def test_message(what, call, error, message):
    with pytest.raises(error, match=message):
        call()
