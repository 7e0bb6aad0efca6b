"""Three rigid bodies joined by two revolute joints, floating free (seed 001, sec. 3.2, Table 3).

The paper takes this example's data from another paper; the data here are chosen (issue 13)
and stated.  Middle body: a box of mass 10 kg with the inertia of eq. (75),
I_xx, I_yy, I_zz = 2, 3, 4 kg m^2 and I_xy, I_xz, I_yz = 0.1, 0.2, 0.3 kg m^2 (entered with
minus signs off the diagonal), about its centre of mass (X, Y, Z), orientation
A = Rz(psi) Ry(theta) Rx(phi).  Body 1: a slender bar, 2 kg, 1 m, hinged at A = (0.5, 0, 0)
(middle-body axes) about the middle body's y axis, angle gamma_1, pointing along +x at
gamma_1 = 0; its centre of mass 0.5 m from A; inertia (0.01, 2/12, 2/12) kg m^2.  Body 3:
a bar, 3 kg, 1 m, hinged at B = (-0.5, 0, 0) about the middle body's z axis, angle
gamma_2, pointing along -x; inertia (0.015, 0.25, 0.25) kg m^2.  No forces or torques (the
paper sets them to zero), no gravity; 50 s.  Coordinates q = (psi, theta, phi, gamma_1,
gamma_2, X, Y, Z) (eq. 72), initial values (0.1, 0.2, 0.3, 0.4, -0.5, 0, 0, 0) and rates
(0.2, -0.1, 0.3, 1.0, -0.8, 0.5, -0.2, 0.1) (rad/s, m/s).

Quasi-velocities (eq. 74): u = (omega_m, gamma_1', gamma_2', X', Y', Z'), omega_m the middle
body's angular velocity in its own axes; X, Y, Z are ignorable (eq. 73) and u_NI the first
five.  Energy and linear momentum are conserved.

Writes DIR/results.npz (t, q (n_t, 8), qdot, energy_error [J], momentum (n_t, 3) [N s]) and
DIR/summary.json; ``--table`` runs the five formulations and writes table3.csv/.md, each run in
DIR/<formulation>/ and fig08_energy.png, fig09_momentum.png, fig10_coordinates.png.
Each run goes through ``flexmbs.run``: under ``flexmbs run`` it is also a run of DIR/results.h5,
named after its formulation (cases/_comparison.py).
"""
from __future__ import annotations

import sys

import numpy as np

from flexmbs.bodies.tree import TreeBody, TreeJoint, TreePart
from flexmbs.case import resolve
from flexmbs.pipes import call_quietly
from _comparison import (COMMON_DEFAULTS, QVModel, case_main, check_common, common_choices,
                         common_help, run_case)
from flexmbs.system import System

M_MID, M1, M3 = 10.0, 2.0, 3.0                                      # [kg] (chosen)
IXX, IYY, IZZ, IXY, IXZ, IYZ = 2.0, 3.0, 4.0, 0.1, 0.2, 0.3           # [kg m^2] (chosen)
INERTIA_MID = np.array([[IXX, -IXY, -IXZ], [-IXY, IYY, -IYZ], [-IXZ, -IYZ, IZZ]])   # eq. (75)
INERTIA_1 = (0.01, 2.0 / 12.0, 2.0 / 12.0)
INERTIA_3 = (0.015, 0.25, 0.25)
HINGE = 0.5                                                            # |OA| = |OB| [m]
BAR = 1.0                                                              # bar lengths [m]
COORDINATES = ("psi", "theta", "phi", "gamma1", "gamma2", "X", "Y", "Z")
Q0 = (0.1, 0.2, 0.3, 0.4, -0.5, 0.0, 0.0, 0.0)
V0 = (0.2, -0.1, 0.3, 1.0, -0.8, 0.5, -0.2, 0.1)


def body_rates_jacobian(t, q):
    """Y of u = (omega_m (middle body axes), gamma_1', gamma_2', X', Y', Z') = Y q' (complex-safe)."""
    th, ph = q[1], q[2]
    s, c = np.sin, np.cos
    z = 0 * th
    one = z + 1
    e = [[z] * 8 for _ in range(8)]
    e[0][0], e[0][2] = -s(th), one
    e[1][0], e[1][1] = c(th) * s(ph), c(ph)
    e[2][0], e[2][1] = c(th) * c(ph), -s(ph)
    for k in range(3, 8):
        e[k][k] = one
    return np.array(e)


def build() -> QVModel:
    """The three bodies in the coordinates of eq. (72), initial state of the module docstring."""
    J = TreeJoint
    joints = [J("X", "prismatic", (1, 0, 0), "X"), J("Y", "prismatic", (0, 1, 0), "Y", parent="X"),
              J("Z", "prismatic", (0, 0, 1), "Z", parent="Y"),
              J("psi", "revolute", (0, 0, 1), "psi", parent="Z"),
              J("theta", "revolute", (0, 1, 0), "theta", parent="psi"),
              J("phi", "revolute", (1, 0, 0), "phi", parent="theta"),
              J("A", "revolute", (0, 1, 0), "gamma1", parent="phi", offset=(HINGE, 0.0, 0.0)),
              J("B", "revolute", (0, 0, 1), "gamma2", parent="phi", offset=(-HINGE, 0.0, 0.0))]
    parts = [TreePart("middle", "phi", M_MID, INERTIA_MID),
             TreePart("body1", "A", M1, INERTIA_1, centroid=(BAR / 2, 0.0, 0.0)),
             TreePart("body3", "B", M3, INERTIA_3, centroid=(-BAR / 2, 0.0, 0.0))]
    body = TreeBody("three bodies", COORDINATES, joints, parts, q0=Q0, v0=V0, marker_frame="phi")
    return QVModel(System([body]), COORDINATES, Y=body_rates_jacobian,
                   Y_reduced=lambda t, q: body_rates_jacobian(t, q)[:5], ignorable=("X", "Y", "Z"))


DEFAULTS = dict(COMMON_DEFAULTS)
RUN_TIME = "about 11 s"     # at the defaults on a 2-core machine (--help says it; measured, issue 20)
HELP = common_help("Table 3")
SUMMARY = {"max_energy_error": "max |E(t) - E(0)| [J]", "max_momentum_error": "max |P(t) - P(0)| [N s]"}  # flexmbs.sweep
CHOICES = common_choices()
STEMS = dict(coordinates="fig10_coordinates", energy="fig08_energy", momentum="fig09_momentum")


def check(p):
    check_common(p, DEFAULTS, CHOICES)


def run(out=None, **params):
    """One formulation (or all five with ``table=True``); returns the summary (or summaries)."""
    p = resolve("three_bodies", DEFAULTS, params, check)
    return run_case(build, p, out, stem="table3", title="Three free bodies", stems=STEMS,
                    caption="Three rigid bodies with two revolute joints, floating free (seed 001, Table 3 "
                            "analogue): max over the run of |energy error| [J], |P_x - P_x(0)| and |P - P(0)| "
                            "[N s], largest coordinate difference to the reduced Volterra run; CPU time of the "
                            "run (outputs recorded included) and wall time of the integration [s].")


def main(argv=None):
    return case_main("three_bodies", __doc__, DEFAULTS, HELP, CHOICES, check, run, argv, run_time=RUN_TIME)


if __name__ == "__main__":
    sys.exit(call_quietly(main))
