"""Bad input to contact (flexmbs.contact): each row a call and the message it now prints."""
from __future__ import annotations

import re

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import RigidBodyEP
from flexmbs.bodies.natural import RigidBodyNatural
from flexmbs.bodies.planar import RigidBody2D
from flexmbs.contact import Box, Capsule, Contact, ContactLaw, Plane, Points, Sphere, Surface
from flexmbs.system import System

BALL = RigidBodyEP("ball", 1.0, 0.004 * np.eye(3), position=(0.0, 0.0, 0.2))
DISK = RigidBody2D("disk", 1.0, 0.01)
LAW = ContactLaw(stiffness=1e5)


def natural_body():
    return RigidBodyNatural("brick", 1.0, 0.01 * np.eye(3))


ROWS = [
    (lambda: ContactLaw(), "ContactLaw: give either `stiffness` [N/m^n] or `youngs_modulus` [Pa] (Hertz), got "
                           "stiffness=None, youngs_modulus=None"),
    (lambda: ContactLaw(stiffness=-1.0), "ContactLaw: `stiffness` must be a finite number in (0, inf], got -1.0"),
    (lambda: ContactLaw(stiffness=1e5, restitution=1.5),
     "ContactLaw: `restitution` must be a finite number in (0, 1], got 1.5"),
    (lambda: ContactLaw(stiffness=1e5, friction="high"),
     "ContactLaw: `friction` must be a finite number in [0, inf], got 'high'"),
    (lambda: ContactLaw(stiffness=1e5, damping="coulomb"),
     "ContactLaw: `damping` must be one of ['scaled', 'hunt-crossley'], got 'coulomb'"),
    (lambda: ContactLaw(stiffness=1e5, damping="hunt-crossley"),
     "ContactLaw: damping 'hunt-crossley' needs `impact_velocity` [m/s], the impact speed at which the restitution "
     "is `restitution`"),
    (lambda: ContactLaw(stiffness=1e5, impact_velocity=1.0),
     "ContactLaw: `impact_velocity` is for damping 'hunt-crossley' (the 'scaled' dashpot gives the restitution at "
     "every impact speed), got 1.0"),
    (lambda: ContactLaw(youngs_modulus=2e11, exponent=1.0),
     "ContactLaw: Hertz's stiffness (`youngs_modulus`) is for exponent 1.5, got exponent 1.0; give `stiffness` for "
     "another exponent"),
    (lambda: Sphere(BALL, 0.0), "Sphere: `radius` must be a finite number > 0, got 0.0"),
    (lambda: Plane(None, (0, 0, 0)), "Plane: `normal` must be a nonzero vector, got (0, 0, 0)"),
    (lambda: Plane(BALL, (0, 1)), "Plane: `normal` must be a finite vector of 3 components, got (0, 1)"),
    (lambda: Box(DISK, (0.1, -0.1)), "Box: `half_sizes` must be > 0, got (0.1, -0.1)"),
    (lambda: Box(DISK, (0.1, 0.1), orientation=np.ones((2, 2))),
     "Box: `orientation` must be a rotation matrix (2, 2) (2D: or an angle [rad]), got array([[1., 1.],"),
    (lambda: Capsule(BALL, (0, 0, 0), (0, 0, 0), 0.1),
     "Capsule: `a` and `b` must differ (use a Sphere), got (0, 0, 0) and (0, 0, 0)"),
    (lambda: Points(BALL, [[0, 0]]), "Points: `markers` must be finite points (n, 3) in body coordinates or a list "
                                     "of markers (Node), got [[0, 0]]"),
    (lambda: Surface(BALL), "Surface: give `points` (the vertices in body coordinates) for RigidBodyEP; only a "
                            "FlexibleBody gives its own (the boundary nodes of its mesh)"),
    (lambda: Sphere("ball", 0.1), "Sphere: `body` must be a body (flexmbs.bodies) or None (the ground), got 'ball' "
                                  "(str)"),
    (lambda: Contact(Sphere(BALL, 0.1), LAW), "Contact: `shapes` must hold at least two shapes (contact is between "
                                              "two), got 1"),
    (lambda: Contact([Sphere(BALL, 0.1), "ground"], LAW),
     "Contact: `shapes` entry 1 must be a contact shape (flexmbs.contact: Sphere, Plane, Box, Capsule, Points, "
     "Surface), got 'ground' (str)"),
    (lambda: Contact([Sphere(BALL, 0.1), Plane(None, (0, 0, 1))], {"k": 1e5}),
     "Contact: `law` must be a flexmbs.contact.ContactLaw, got {'k': 100000.0} (dict)"),
    (lambda: Contact([Sphere(None, 0.1, at=(0, 0, 0)), Plane(None, (0, 0, 1))], LAW),
     "Contact 'contact': every shape is on the ground; put at least one on a body"),
    (lambda: Contact([Sphere(BALL, 0.1), Sphere(DISK, 0.1)], LAW),
     "Contact 'contact': the shapes and bodies must have one dimension, got [2, 3]"),
    (lambda: Contact([Sphere(natural_body(), 0.1), Plane(None, (0, 0, 1))], LAW),
     "Contact: body 'brick' is a RigidBodyNatural; contact shapes ride on RigidBodyEP, FlexibleBody, RigidBody2D "
     "and PointMass bodies (whose points the contact evaluates all at once)"),
    (lambda: Contact([Box(BALL, (0.1, 0.1, 0.1)), Plane(None, (0, 0, 1))], ContactLaw(youngs_modulus=2e11)),
     "Contact 'contact': Hertz's stiffness (`youngs_modulus`) needs radii, but the corners of a Box and Points or "
     "a Surface of radius 0 have none; give the ContactLaw a `stiffness`"),
    (lambda: Contact([Sphere(BALL, 0.1), Plane(None, (0, 0, 1))], LAW, slots=0),
     "Contact 'contact': `slots` must be an integer >= 1, got 0"),
    (lambda: fm.run(System([BALL], gravity=(0, 0, -9.81), forces=[Contact([Sphere(BALL, 0.1), Plane(None, (0, 0, 1))],
                                                                           LAW)]), method="AB4", h=1e-4, t_end=0.01,
                    store=False),
     "`method` 'AB4' cannot run force element 'contact' (Contact): a multistep method extrapolates the forces of "
     "past steps, which straddle the onset of a contact (a jump or a kink of the force) and it has no error "
     "control to shorten its step there; use an adaptive method (RK45, DOP853, Radau, BDF, index3-alpha-adaptive)"),
    (lambda: fm.run(System([BALL], gravity=(0, 0, -9.81), forces=[Contact([Sphere(BALL, 0.1), Plane(None, (0, 0, 1))],
                                                                           LAW)]), method="rattle", h=1e-4, t_end=0.01,
                    store=False),
     "`method` 'rattle' cannot run force element 'contact' (Contact): RATTLE is symplectic for forces of a "
     "potential, -dU/dq; the contact's dashpot and friction depend on the velocities and dissipate"),
]


@pytest.mark.parametrize("call, message", ROWS, ids=[m[:50] for _, m in ROWS])
def test_bad_contact_input_is_named(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()
