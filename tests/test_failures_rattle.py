"""Bad input and numerical failures of method "rattle" (flexmbs/integrators/rattle.py): each row is
(what is done, the message it now gives).  Misuse raises a ValueError naming the argument; a step
that fails ends the run with status "failed", the message naming the cause and what to change,
and the outputs before it kept.  Admitted, with a constant M and with M(q): holonomic constraints
(rheonomic too, with C_t), and any forces: velocity-dependent ones by a fixed-point iteration (a row
below when it diverges) and time-dependent ones; the map is symplectic only for conservative forces.
Refused: velocity (nonholonomic) constraints, redundant ones, a singular constant M, an M(q) without
the System's Hamiltonian, and with M(q) a step above the stability limit of the elastic forces."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies.planar import RigidBody2D
from flexmbs.bodies.point import PointMass
from flexmbs.constraints.nonholonomic import VelocityConstraint
from flexmbs.constraints.planar import PlanarRevolute
from flexmbs.integrators import simulate
from flexmbs.system import System

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))
sys.path.insert(0, str(ROOT / "tests"))

import pendulum_a01  # noqa: E402
import triple_pendulum  # noqa: E402
from test_rattle import damper  # noqa: E402
from test_rattle_mq import heavy_top  # noqa: E402


def rod(redundant: bool = False) -> System:
    """A uniform rod pinned at one end (a second, identical pin with ``redundant``)."""
    body = RigidBody2D("rod", 1.0, 1.0 / 12, position=(0.5, 0.0))
    joints = [PlanarRevolute(None, body, at=(0.0, 0.0), name="pivot")]
    if redundant:
        joints.append(PlanarRevolute(None, body, at=(0.0, 0.0), name="pivot2"))
    return System([body], joints, gravity=(0.0, -9.81))


def skate() -> System:
    """A point mass whose velocity must stay along x: y' = 0, a velocity constraint (nonholonomic)."""
    mass = PointMass("skate", 1.0, position=(0.0, 0.0, 0.0), velocity=(1.0, 0.0, 0.0))
    return System([mass], [VelocityConstraint(mass, lambda t, q: np.array([[0.0, 1.0, 0.0]]), name="blade")])


def varying_mass_term():
    """A unit-stiffness spring whose mass m(q) = 1 + q^2 depends on q (no constraints), built by hand:
    no `hamiltonian`."""
    from flexmbs.formulations.terms import DAETerm
    return DAETerm(name="spring", n_q=1, mass_matrix=lambda q: np.array([[1.0 + q[0] ** 2]]),
                   forces=lambda t, q, v: -q - q * v**2, residual=lambda t, q: np.zeros(0),
                   jacobian=lambda t, q: np.zeros((0, 1)), gamma=lambda t, q, v: np.zeros(0),
                   time_derivative=lambda t, q: np.zeros(0))


def stiff_satellite() -> System:
    """cases/flexible_satellite.py's hub and plate panels (2 x 1 elements, 2 modes and the static modes)."""
    import flexible_satellite
    from flexmbs.reduction import reduce
    p = dict(flexible_satellite.DEFAULTS, torque=False, elements=2, width_elements=1)
    return flexible_satellite.build(reduce(flexible_satellite.panel_model(p), 2), p)


def run(system, **options):
    return fm.run(system, method="rattle", t_end=0.1, dt_out=0.1, store=False, **{"h": 1e-2, **options})


ALPHA_METHODS = "'index3-alpha', 'index3-alpha-adaptive', 'hht', 'newmark'"   # index3-alpha and its variants, in the order of INTEGRATORS

REFUSED = [
    ("a hand-made DAETerm whose M depends on q, without the System's Hamiltonian",
     lambda: simulate(varying_mass_term(), (0.0, 0.1), np.array([1.0, 0.0]), method="rattle", h=1e-2),
     "method 'rattle' with a mass matrix M(q) that depends on the coordinates needs the System's Hamiltonian "
     "(`DAETerm.hamiltonian`: a flexmbs.System through ConstrainedProblem); 'spring' does not give it; methods "
     f"that fit this term: {ALPHA_METHODS}, 'radau-dae'."),
    ("the satellite's plate panels with their static modes (up to 4.8 kHz) at h = 5 ms",
     lambda: run(stiff_satellite(), h=5e-3),
     "`h` = 0.005 s is above the stability limit of method 'rattle', h < 2 / omega_max = "),
    ("A01's point pendulum: a RigidBody2D with I_G = 0 (M singular)",
     lambda: run(pendulum_a01.build()[0]),
     "method 'rattle' needs a positive definite mass matrix (it steps q' = M^-1 p); 'constrained-index3' has a "
     "singular or indefinite one (a body without mass or inertia, e.g. a RigidBody2D with I_G = 0): give every "
     f"body mass and inertia; methods that fit this term: {ALPHA_METHODS}, 'radau-dae'."),
    ("two identical pins (redundant constraints)",
     lambda: run(rod(redundant=True)),
     "method 'rattle' needs independent constraints (C_q of full row rank), but C_q of 'constrained-index3' at "
     "t0 = 0 has rank 2 < 4 rows (redundant constraints or a singular start: System.mobility names them); remove "
     "the redundant constraints or use method 'index3-alpha' (option `regularization`)."),
    ("a point mass held by a velocity constraint (nonholonomic)",
     lambda: run(skate()),
     "method 'rattle' integrates holonomic constraints C(q, t) = 0; 'constrained-index3' has velocity constraints "
     "without a position equation (nonholonomic: KnifeEdge, VelocityConstraint); methods that fit this term: "
     "none."),                                  # the index-3 methods refuse velocity constraints too
    ("newton_tol=0", lambda: run(rod(), newton_tol=0.0), "`newton_tol` must be a positive number, got 0.0."),
    ("newton_max_iter=2.5", lambda: run(rod(), newton_max_iter=2.5),
     "`newton_max_iter` must be an integer >= 1, got 2.5."),
    ("compensated='yes'", lambda: run(rod(), compensated="yes"),
     "`compensated` must be True or False, got 'yes'."),
    ("no h", lambda: run(rod(), h=None),
     "`h` (the step size) is required by the fixed-step method 'rattle'; give e.g. h=1e-3."),
    ("the triple pendulum case with integrator=rattle and its default stabilization",
     lambda: triple_pendulum.run(integrator="rattle", t_end=0.1),
     "parameter 'stabilization': rattle solves the index-3 equations and keeps C = 0 itself; use "
     "stabilization=none with it, got 'coordinate-partitioning'"),
    ("formulation 'lagrange' with method 'rattle'", lambda: run(rod(), formulation="lagrange"),
     "formulation 'lagrange' does not run with method 'rattle'; the combinations for a System are: "),
]


@pytest.mark.parametrize("call, message", [row[1:] for row in REFUSED], ids=[row[0] for row in REFUSED])
def test_refused_with_a_message(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


FAILED = [
    ("h = 0.5 s on the triple pendulum with newton_max_iter=2",
     lambda: fm.run(triple_pendulum.build("natural"), method="rattle", h=0.5, t_end=1.0, dt_out=0.5,
                    newton_max_iter=2, store=False),
     "RATTLE's step from t = 0 to 0.5 failed: Newton's iteration for the multipliers did not converge in "
     "`newton_max_iter` = 2 iterations (|C|_inf = "),
    ("the heavy top (Euler parameters, M(q)) with newton_max_iter=1",
     lambda: fm.run(heavy_top(), method="rattle", h=2e-2, t_end=0.1, dt_out=0.02, newton_max_iter=1, store=False),
     "RATTLE's step from t = 0 to 0.02 failed: Newton's iteration for (p_{n+1/2}, q_{n+1}, lam) did not converge "
     "in `newton_max_iter` = 1 iterations ("),
    ("a damper with c h / 2m = 2.5 (the velocity iteration diverges)",
     lambda: simulate(damper(500.0), (0.0, 1.0), np.array([0.0, 1.0]), method="rattle", h=0.01),
     "RATTLE's step from t = 0 to 0.01 failed: the fixed-point iteration of the velocity-dependent forces "
     "Q(t, q, v) did not converge in `newton_max_iter` = 20 iterations (damping too strong for this step: it "
     "converges when h/2 |M^-1 dQ/dv| < 1): reduce `h` or use method 'index3-alpha'."),
]


@pytest.mark.parametrize("call, message", [row[1:] for row in FAILED], ids=[row[0] for row in FAILED])
def test_failed_step_stops_with_a_message_and_keeps_the_start(call, message):
    res = call()
    assert res.status == "failed"
    assert res.message.startswith(message)
    assert len(res.t) == 1 and res.t[0] == 0.0

