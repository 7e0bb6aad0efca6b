"""The implicit midpoint rule's Newton defaults (issue 20, item 13): they work on the documented
cases at h = 1e-3 s, and a step that does not converge names the options to change and their values.

The documented nonlinear midpoint runs are the pendulums of cases/flexible_pendulum.py: the pinned
corotational beam (its default integrator, h = 1e-3 s; with the Jacobian of the step start only, 4
corrections ended the run at t = 0.476 s, residual 1.02e-10 of its terms) and the floating-frame
beam on an Index1 System (with its 10 ms old Jacobian the run failed at t = 0.003 s); and the free
(mean-axis) beam of tests/test_mean_axis.py.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from flexmbs import simulate
from flexmbs.formulations.index1 import Index1

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))
sys.path.insert(0, str(ROOT / "tests"))

import flexible_pendulum  # noqa: E402
from test_mean_axis import free_beam  # noqa: E402



def pendulum(model: str):
    """The pendulum of cases/flexible_pendulum.py at its defaults (E = 50 MPa, 8 elements), the pin
    eliminated (`SupportedBody`, the corotational model's Newton iteration on the beam alone)."""
    p = dict(flexible_pendulum.DEFAULTS, pin="eliminated")
    return {"corotational": flexible_pendulum._corotational,
            "floating-frame": flexible_pendulum._floating_frame}[model](p)


def test_corotational_pendulum_runs_past_the_old_failure_with_the_defaults():
    """Default newton_max_iter = 4 at h = 1e-3 s, past t = 0.476 s where the first Jacobian alone
    failed; the refresh is rare (measured: 508 Jacobians in 500 steps) and the step is the converged
    one: the energy T + V_g + U stays within 2e-4 of the weight's drop (midpoint: O(h^2))."""
    pm = pendulum("corotational")
    sol = simulate(pm.form, (0.0, 0.5), pm.x0, method="midpoint", h=1e-3, t_eval=[0.0, 0.5])
    assert sol.status == "finished", sol.message
    assert sol.n_steps < sol.n_jac < 1.1 * sol.n_steps
    E = pm.form.energy(sol.x)
    drop = pm.mass * flexible_pendulum.DEFAULTS["gravity"] * flexible_pendulum.DEFAULTS["length"] / 2
    assert abs(E[-1] - E[0]) < 2e-4 * drop


@pytest.mark.slow
def test_stale_jacobian_of_an_index1_system_is_refreshed():
    """The floating-frame pendulum (Index1, Jacobian kept for 10 ms) at h = 1e-3 s: it failed at
    t = 0.003 s; now the Jacobian is evaluated again where the corrections stall (measured: 46
    Jacobians in 50 steps, against 5 intervals of 10 ms)."""
    pm = pendulum("floating-frame")
    sol = simulate(pm.form, (0.0, 0.05), pm.x0, method="midpoint", h=1e-3, t_eval=[0.0, 0.05])
    assert sol.status == "finished", sol.message
    assert sol.n_jac > 5


def test_free_mean_axis_beam_runs_at_1e_3():
    """A free flexible body (mean axes, spinning at 2 rad/s, bending) with the defaults at h = 1e-3 s."""
    system, x0, body = free_beam("mean-axis", eps=0.2, spin=2.0)
    form = Index1(system, solver="augmented")
    x0 = form.state0(x0[:system.n_q], x0[system.n_q:])
    sol = simulate(form, (0.0, 0.1), x0, method="midpoint", h=1e-3, t_eval=[0.0, 0.1])
    assert sol.status == "finished", sol.message


# (the run, the message it now ends with; the residual's digits, from the LU, replaced by RESIDUAL)
NEWTON_TABLE = [
    ("floating-frame pendulum, h = 1e-3 s, newton_max_iter = 0", dict(model="floating-frame", newton_max_iter=0),
     "Newton iterations of the implicit midpoint rule did not converge at t = 0 with h = 0.001 s (residual RESIDUAL "
     "after `newton_max_iter` = 0 corrections, then 0 more with the Jacobian evaluated at the step's midpoint). "
     "The formulation is nonlinear in x at this step size: reduce `h` (now 0.001 s) or raise `newton_max_iter` "
     "(now 0)."),
    ("corotational pendulum, h = 0.1 s, defaults", dict(model="corotational", h=0.1),
     "Newton iterations of the implicit midpoint rule did not converge at t = 0 with h = 0.1 s (residual RESIDUAL "
     "after `newton_max_iter` = 4 corrections, then 4 more with the Jacobian evaluated at the step's midpoint). "
     "The formulation is nonlinear in x at this step size: reduce `h` (now 0.1 s) or raise `newton_max_iter` "
     "(now 4)."),
]


@pytest.mark.parametrize("what, run, message", NEWTON_TABLE, ids=[row[0] for row in NEWTON_TABLE])
def test_newton_failure_names_the_options_and_their_values(what, run, message):
    """A step that does not converge, even with the Jacobian evaluated again: status "failed", the
    start kept, and the message names h and newton_max_iter with their values."""
    run = dict(run)
    pm = pendulum(run.pop("model"))
    h = run.pop("h", 1e-3)
    sol = simulate(pm.form, (0.0, 0.5), pm.x0, method="midpoint", h=h, **run)
    assert sol.status == "failed" and sol.t.tolist() == [0.0]
    assert re.sub(r"residual \S+ after", "residual RESIDUAL after", sol.message) == message
