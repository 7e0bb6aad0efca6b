"""Bad loads met by the works' powers over rows (`flexmbs.bodies.base.Body.powers`, the loads'
``power_history``, `flexmbs.bodies.loads.values_of_time`): each row is (what is wrong, the message it
now gives), the error named by the body, the load's index and the time, as at one state."""
from __future__ import annotations

import re

import numpy as np
import pytest

from flexmbs.bodies import PointMass, RigidBody2D
from flexmbs.bodies.loads import point_load, spring_to_ground, torque_load
from flexmbs.user_functions import UserFunctionError


def vectorized(f):
    f.vectorized = True
    return f


def fails_late(t):
    if t > 0.15:
        raise RuntimeError("table ends at 0.15")
    return np.zeros(3)


def factor_failing_late(t):
    if t > 0.15:
        raise RuntimeError("table ends at 0.15")
    return 1.0


def nan_late(t):
    return np.array([0.0, np.nan if t > 0.15 else 1.0, 0.0])


@vectorized
def one_number_a_time(t):
    return np.zeros(len(t))                            # (n_t,): a number at each time, not a vector


@vectorized
def vector_raising(t):
    raise KeyError("no such table")


T = np.array([0.0, 0.1, 0.2])


def beam_with_a_failing_load():
    """A free FlexibleBody whose Model's nodal load factor raises after t = 0.15."""
    import flexmbs as fm
    from flexmbs.bodies import FlexibleBody
    beam = fm.BeamEB3D(fm.Material(E=2e8, rho=1000.0), area=1e-3, Iy=1e-6, Iz=1e-6, J=2e-6)
    model = fm.Model(fm.generate.line(3, 1.0, dim=3), beam, fixed=[("start", "all")],
                     loads=[fm.NodalLoad("end", "w", 1.0), fm.NodalLoad("end", "v", 2.0, factor_failing_late)])
    return FlexibleBody(model, "m", stiffening="none")

ROWS = [
    ("a force function that raises at a later time",
     lambda: PointMass("m", 1.0, (1, 0, 0), loads=[point_load((0, 0, 0), fails_late)]),
     UserFunctionError, "body 'm': load 0 raised RuntimeError at t = 0.2: table ends at 0.15"),
    ("a force function that gives NaN at a later time",
     lambda: PointMass("m", 1.0, (1, 0, 0), loads=[point_load((0, 0, 0), nan_late)]),
     UserFunctionError, "body 'm': load 0 gave NaN or inf at t = 0.2; a law or load must be finite"),
    ("a vectorized force returning a number at each time",
     lambda: PointMass("m", 1.0, (1, 0, 0), loads=[point_load((0, 0, 0), one_number_a_time)]),
     ValueError, "body 'm': load 0 declares `vectorized` and must return an array of shape (3, 3) (a value of "
                 "shape (3,) at each of the 3 times), got shape (3,)"),
    ("a vectorized torque that raises",
     lambda: RigidBody2D("plate", 1.0, 0.1, loads=[torque_load(vector_raising)]),
     UserFunctionError, "body 'plate': load 0 (vectorized, at 3 times) raised KeyError at t = 0: 'no such table'"),
    ("a 2D torque function giving a vector",
     lambda: RigidBody2D("plate", 1.0, 0.1, loads=[torque_load(lambda t: [0.0, 0.0, t] if t > 0 else 0.0)]),
     ValueError, "body 'plate': load 0 must give numbers of shape () at each t, got [0.0, 0.0, 0.1] (shape "
                 "(3,)) at t = 0.1"),
    ("a force function giving a string at a later time",
     lambda: PointMass("m", 1.0, (1, 0, 0), loads=[point_load((0, 0, 0), lambda t: "up" if t > 0.15 else np.zeros(3))]),
     ValueError, "body 'm': load 0 must give numbers of shape (3,) at each t, got 'up' (shape ()) at t = 0.2"),
    ("a flexible body's nodal load factor that raises at a later time", beam_with_a_failing_load,
     UserFunctionError, "`loads[1].f` raised RuntimeError at t = 0.2: table ends at 0.15"),
    ("a spring to the ground through its anchor",
     lambda: PointMass("m", 1.0, (1, 0, 0), loads=[spring_to_ground((0, 0, 0), (0, 0, 0), 10.0, 0.5)]),
     ValueError, "spring_to_ground on body 'm': the spring has zero length (its direction is undefined)"),
]


@pytest.mark.parametrize("what, build, error, message", ROWS, ids=[r[0] for r in ROWS])
def test_bad_load_over_rows_is_named(what, build, error, message):
    body = build()
    Q = np.tile(body.initial_coordinates(), (3, 1))
    if body.name == "m" and "spring" in what:
        Q[1] = 0.0                                     # the second row on the anchor
    V = np.ones_like(Q)
    with pytest.raises(error, match=re.escape(message)):
        body.powers(T, Q, V, None)
