"""Bad input and numerical failures of index3-alpha's coefficient sets and step-size control
("hht", "newmark", "index3-alpha-adaptive"; flexmbs/integrators/index3_alpha.py): each row is (what is
done, the message it now gives).  Misuse raises a ValueError naming the argument, what was expected
and what was given; a failing run ends with status "failed", the message naming the cause and what
to change, and the outputs before it kept."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.integrators import ConstrainedProblem, simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import pendulum_a01  # noqa: E402


def pendulum():
    system, _ = pendulum_a01.build()
    problem = ConstrainedProblem(system)
    q0 = system.initial_coordinates()
    return system, problem, problem.state0(q0, 0 * q0)


def run(method, **kwargs):
    _, problem, x0 = pendulum()
    return simulate(problem, (0.0, 0.1), x0, method=method, **kwargs)


BAD_INPUT = [
    ("hht below its second-order range", lambda: run("hht", h=1e-3, rho_inf=0.3),
     "`rho_inf` must lie in [0.5, 1) for method 'hht' (1 leaves the multipliers undamped; below 1/2 HHT is not "
     "second order), got 0.3."),
    ("newmark without damping", lambda: run("newmark", h=1e-3, rho_inf=1.0),
     "`rho_inf` must lie in [0, 1) for method 'newmark' (1 leaves the multipliers undamped), got 1.0."),
    ("rho_inf not a number", lambda: run("index3-alpha-adaptive", rho_inf="high"),
     "`rho_inf` must lie in [0, 1) for method 'index3-alpha-adaptive' (1 leaves the multipliers undamped), "
     "got 'high'."),
    ("a negative max_step", lambda: run("index3-alpha-adaptive", max_step=-1.0),
     "`max_step` must be a positive number (inf: no bound), got -1.0."),
    ("max_step not a number", lambda: run("index3-alpha-adaptive", max_step="small"),
     "`max_step` must be a positive number (inf: no bound), got 'small'."),
    ("rtol of 1 or more", lambda: run("index3-alpha-adaptive", rtol=2.0),
     "`rtol` is a relative tolerance and must be below 1 (e.g. 1e-6), got 2.0."),
    ("hht without h", lambda: run("hht"),
     "`h` (the step size) is required by the fixed-step method 'hht'; give e.g. h=1e-3."),
    ("an unknown method name on a System", lambda: fm.run(pendulum()[0], method="index3-hht", h=1e-3, t_end=0.1),
     "`method` must be one of"),
]


@pytest.mark.parametrize("what, call, message", BAD_INPUT, ids=[row[0] for row in BAD_INPUT])
def test_bad_input_names_the_argument(what, call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


def test_step_size_underflow_names_constraints_that_cannot_all_hold():
    """A bar pinned at one end whose centre a driver pulls beyond the pin's reach (tests/
    test_failures_causes.py): Newton fails at every step size, the steps fall to the round-off of t,
    and the message names the over-constrained joints instead of a generic "reduce the step"; the
    outputs before it are kept.  (Before: "finished" with |C| = 8e-4 at t = 0.05 s, iterates accepted
    as stalled at small steps.)"""
    from test_failures_causes import bar_pulled_beyond_reach
    system = bar_pulled_beyond_reach()
    sol = fm.run(system, formulation="index3", method="index3-alpha-adaptive", rtol=1e-6, t_end=0.05, dt_out=5e-4)
    assert sol.status == "failed"
    assert re.match(r"Step-size underflow at t = 0\.00\d+: index3-alpha-adaptive rejected every step down to "
                    r"\S+ s \(the error estimate or Newton's iteration failed at every step size\): the constraints "
                    r"cannot all hold \(over-constrained\)", sol.message), sol.message
    assert "(dependent: pull)" in sol.message
    assert 1 < len(sol.t) < 101 and sol.t[0] == 0.0
    # the steps hold |C| <= rtol max(|q|, 1) = 1e-6; the outputs between them are their Hermite interpolant
    assert system.residual_norms(sol.t, sol.q).max() <= 2e-6
