"""Cubic satellite with a deployable boom (seed 001, sec. 3.3, Tables 4-6): five formulations compared.

Data of the paper (Tables 4 and 5, issue 13): satellite mass m_g = 2000 kg, cube side
l = 2.5 m, inertia about its centre of mass in body axes as eq. (75),

    J = [[I_xx, -I_xy, -I_xz], [-I_xy, I_yy, -I_yz], [-I_xz, -I_yz, I_zz]],
    I_xx, I_yy, I_zz = 1400, 900, 1100 kg m^2,  I_xy, I_xz, I_yz = 5, 8, 3 kg m^2;

a point mass m = 1 kg on a massless boom along the satellite's body x axis through its centre
of mass, rooted at the centre of the +x face: r_m = R + A [l/2 + rho, 0, 0]^T, A = Rz(psi)
Ry(theta) Rx(phi), R = (X, Y, Z) the satellite's centre of mass.  Coordinates
q = (psi, theta, phi, rho, X, Y, Z) (eq. 76); initial state psi = pi/8, theta = pi/12,
phi = 0.08 rad, rho = a = 0.5 m, X = Y = Z = 0, psi' = -0.1, theta' = 0.05, phi' = -0.05 rad/s,
rho' = 0, X' = 2, Y' = 1, Z' = 0 m/s.  The boom's motor pushes the mass along the boom with
F(t) = -0.018 sin(0.089 t) + 0.012 cos(0.0485 t) N (eq. 79) and the satellite back with the
reaction at the boom root (on the body x axis through the centre of mass: no torque); their
generalized force is F along rho only (power F rho').  No gravity; 50 s.

Quasi-velocities (eq. 78): u = (omega, rho', X', Y', Z'), omega the satellite's angular
velocity in body axes (omega = (phi' - psi' s_theta, theta' c_phi + psi' c_theta s_phi,
-theta' s_phi + psi' c_theta c_phi)); X, Y, Z are ignorable (eq. 77), u_NI = (omega, rho').

Writes DIR/results.npz (t, q (n_t, 7) in the order above, qdot, energy_error = T - W_F - T(0)
[J], momentum (n_t, 3) [N s]) and DIR/summary.json; ``--table`` runs all five formulations
and writes table6.csv/.md, each run in DIR/<formulation>/ and the plots fig13_energy.png,
fig14_momentum.png, fig15_coordinates.png.
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

M_SAT, M_TIP, SIDE, A0 = 2000.0, 1.0, 2.5, 0.5                  # Table 4 [kg, kg, m, m]
IXX, IYY, IZZ, IXY, IXZ, IYZ = 1400.0, 900.0, 1100.0, 5.0, 8.0, 3.0   # Table 4 [kg m^2]
INERTIA = np.array([[IXX, -IXY, -IXZ], [-IXY, IYY, -IYZ], [-IXZ, -IYZ, IZZ]])   # eq. (75)
COORDINATES = ("psi", "theta", "phi", "rho", "X", "Y", "Z")
Q0 = (np.pi / 8, np.pi / 12, 0.08, A0, 0.0, 0.0, 0.0)            # Table 5
V0 = (-0.1, 0.05, -0.05, 0.0, 2.0, 1.0, 0.0)                     # Table 5


def boom_force(t):
    """|F| of eq. (79) [N]."""
    return -0.018 * np.sin(0.089 * t) + 0.012 * np.cos(0.0485 * t)


def _applied(t, q, v):
    Q = np.zeros(7)
    Q[3] = boom_force(t)
    return Q


def body_rates_jacobian(t, q):
    """Y of u = (omega_body, rho', X', Y', Z') = Y q' (complex-safe)."""
    psi, th, ph = q[0], q[1], q[2]
    s, c = np.sin, np.cos
    z = 0 * psi
    one = z + 1
    rows = [[-s(th), z, one, z, z, z, z],
            [c(th) * s(ph), c(ph), z, z, z, z, z],
            [c(th) * c(ph), -s(ph), z, z, z, z, z],
            [z, z, z, one, z, z, z],
            [z, z, z, z, one, z, z], [z, z, z, z, z, one, z], [z, z, z, z, z, z, one]]
    return np.array(rows)


def build() -> QVModel:
    """The satellite in the paper's coordinates, initial state of Table 5."""
    J = TreeJoint
    joints = [J("X", "prismatic", (1, 0, 0), "X"), J("Y", "prismatic", (0, 1, 0), "Y", parent="X"),
              J("Z", "prismatic", (0, 0, 1), "Z", parent="Y"),
              J("psi", "revolute", (0, 0, 1), "psi", parent="Z"),
              J("theta", "revolute", (0, 1, 0), "theta", parent="psi"),
              J("phi", "revolute", (1, 0, 0), "phi", parent="theta"),
              J("boom", "prismatic", (1, 0, 0), "rho", parent="phi", offset=(SIDE / 2, 0.0, 0.0))]
    parts = [TreePart("satellite", "phi", M_SAT, INERTIA), TreePart("mass", "boom", M_TIP)]
    body = TreeBody("satellite", COORDINATES, joints, parts, q0=Q0, v0=V0, applied=_applied, marker_frame="phi")
    return QVModel(System([body]), COORDINATES, Y=body_rates_jacobian,
                   Y_reduced=lambda t, q: body_rates_jacobian(t, q)[:4], ignorable=("X", "Y", "Z"))


DEFAULTS = dict(COMMON_DEFAULTS)
RUN_TIME = "about 7 s"     # at the defaults on a 2-core machine (--help says it; measured, issue 20)
HELP = common_help("Table 6")
SUMMARY = {"max_energy_error": "max |E(t) - E(0)| [J]", "max_momentum_error": "max |P(t) - P(0)| [N s]"}  # flexmbs.sweep
CHOICES = common_choices()
STEMS = dict(coordinates="fig15_coordinates", energy="fig13_energy", momentum="fig14_momentum")


def check(p):
    check_common(p, DEFAULTS, CHOICES)


def run(out=None, **params):
    """One formulation (or all five with ``table=True``); returns the summary (or summaries)."""
    p = resolve("satellite_boom", DEFAULTS, params, check)
    return run_case(build, p, out, stem="table6", title="Satellite with boom", stems=STEMS,
                    caption="Satellite with a deployable boom (seed 001, Table 6 analogue): max over 50 s of "
                            "|energy error| [J], |P_x - P_x(0)| and |P - P(0)| [N s], largest coordinate difference "
                            "to the reduced Volterra run; CPU time of the run (outputs recorded included) and "
                            "wall time of the integration [s].")


def main(argv=None):
    return case_main("satellite_boom", __doc__, DEFAULTS, HELP, CHOICES, check, run, argv, run_time=RUN_TIME)


if __name__ == "__main__":
    sys.exit(call_quietly(main))
