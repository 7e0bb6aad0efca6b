"""Bad input to System.momentum, System.rigid_motion_generators and System.rigid_motion_velocities,
and body kinds without rigid-motion generators: each a clear error naming the argument (or the body
kind), what was expected and what was given (issue 21, item 7)."""
import re

import numpy as np
import pytest

from flexmbs import Material
from flexmbs.bodies import PointMass, RigidBodyEP
from flexmbs.bodies.corotational import CorotationalBeam3D
from flexmbs.bodies.tree import TreeBody, TreeJoint, TreePart
from flexmbs.system import System

SPATIAL = System([RigidBodyEP("a", 1.0, [1.0, 1.0, 1.0])])            # n_q = 7
PLANAR = System([PointMass("p", 1.0, (0.0, 1.0))])                   # n_q = 2
Q, V = SPATIAL.initial_coordinates(), np.zeros(7)
TREE = System([TreeBody("pendulum", ("theta",), [TreeJoint("theta", "revolute", (0, 1, 0), "theta")],
                        [TreePart("bob", "theta", 2.0, centroid=(0, 0, -1.0))], q0=(0.3,))])

BEAM = CorotationalBeam3D.line("c3", (0, 0, 0), (1, 0, 0), 1, Material(E=1e7, rho=1e3), 1e-3, 1e-7, 1e-7, 2e-7)
Q_TURNED = BEAM.initial_coordinates()
Q_TURNED[9:12] = (0.0, 0.0, 2.0 * np.pi)                              # node 1 turned by a full revolution

ROWS = [
    ("momentum, q of the wrong length", lambda: SPATIAL.momentum(np.zeros(6), V),
     ValueError, "System.momentum: `q` must be a finite array of shape (7,), got [0.0, 0.0, 0.0, 0.0, 0.0, 0.0] "
                 "(shape (6,))"),
    ("momentum, v with a NaN", lambda: SPATIAL.momentum(Q, np.full(7, np.nan)),
     ValueError, "System.momentum: `v` must be a finite array of shape (7,), got [nan, nan, nan, nan, nan, nan, "
                 "nan] (shape (7,))"),
    ("momentum, a planar point for a spatial system", lambda: SPATIAL.momentum(Q, V, point=(0.0, 0.0)),
     ValueError, "System.momentum: `point` must be a finite array of shape (3,), got [0.0, 0.0] (shape (2,))"),
    ("momentum, a point that is text", lambda: SPATIAL.momentum(Q, V, point="origin"),
     ValueError, "System.momentum: `point` must be a finite array of shape (3,), got 'origin'"),
    ("rigid_motion_velocities, a scalar spin in 3D", lambda: SPATIAL.rigid_motion_velocities(Q, 2.0),
     ValueError, "System.rigid_motion_velocities: `angular_velocity` must be a finite array of shape (3,), got "
                 "2.0 (shape ())"),
    ("rigid_motion_velocities, a vector spin in 2D", lambda: PLANAR.rigid_motion_velocities(np.zeros(2), (0, 0, 1)),
     ValueError, "System.rigid_motion_velocities: `angular_velocity` must be a finite array of shape (), got "
                 "[0.0, 0.0, 1.0] (shape (3,))"),
    ("rigid_motion_velocities, velocity of the wrong length",
     lambda: SPATIAL.rigid_motion_velocities(Q, (0, 0, 1), velocity=(1.0, 0.0)),
     ValueError, "System.rigid_motion_velocities: `velocity` must be a finite array of shape (3,), got [1.0, 0.0] "
                 "(shape (2,))"),
    ("rigid_motion_generators, q of the wrong length", lambda: SPATIAL.rigid_motion_generators(np.zeros(3)),
     ValueError, "System.rigid_motion_generators: `q` must be a finite array of shape (7,), got [0.0, 0.0, 0.0] "
                 "(shape (3,))"),
    ("momentum of a corotational 3D beam with a node turned by 2 pi",
     lambda: System([BEAM]).momentum(Q_TURNED, np.zeros(12)),
     ValueError, "CorotationalBeam3D 'c3': the rotation vector of node 1 has |psi| = 6.28319 rad, at the 2 pi where "
                 "its tangent operator T(psi) is singular, so the rate of psi under a global rotation is not defined "
                 "there"),
    ("momentum of a TreeBody (analyst's coordinates)", lambda: TREE.momentum(np.array([0.3]), np.array([1.0])),
     NotImplementedError, "TreeBody 'pendulum': rigid_motion_generators is not available: its coordinates are the "
                          "analyst's joint angles and lengths from the ground, which a global rigid motion does not "
                          "map into themselves; compute the momentum from linear_momentum and the parts' velocities "
                          "instead"),
]


@pytest.mark.parametrize("call, error, message", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_bad_input_is_refused_with_its_message(call, error, message):
    with pytest.raises(error, match=re.escape(message) + "$"):
        call()
