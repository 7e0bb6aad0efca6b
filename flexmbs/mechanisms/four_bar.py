"""Planar four-bar linkage: loop closure, assembly branches and the Grashof type.

Ground pivots O2 (crank) at the origin and O4 at ``ground * e(ground_angle)``; crank
O2-A, coupler A-B, rocker (follower) O4-B.  Coordinates: the crank angle phi (input), the
coupler angle theta3 and the rocker angle theta4, all from the global x axis:

.. code:: text

    crank e(phi) + coupler e(theta3) - rocker e(theta4) - ground e(theta1) = 0
    det Phi_q = det [coupler n(theta3), -rocker n(theta4)] = -coupler rocker sin(theta4 - theta3)

so the sign of sin(theta4 - theta3) is the assembly branch: ``branch = +1`` ("open") puts
B to the left of the line from the crank pin A to the rocker pivot O4, ``-1`` ("crossed")
to its right.  The transmission angle mu (between coupler and rocker) has
sin(mu) = |sin(theta4 - theta3)|; mu = 0 or pi is a singular position (a change point of a
Grashof linkage with s + l = p + q, or a toggle where a non-Grashof crank must stop).

Grashof's condition [1]_: with s, l the shortest and longest links and p, q the others,
s + l < p + q lets the shortest link rotate fully; s + l = p + q is a change-point linkage;
s + l > p + q: no link turns fully (triple rocker).

References
----------
.. [1] R. L. Norton, Design of Machinery, 5th ed., McGraw-Hill (2012), sec. 2.12 (Grashof
       condition) and sec. 4.5 (closed-form position of the four-bar).
"""
from __future__ import annotations

import math
from enum import Enum

import numpy as np

from .linkage import AssemblyError, Linkage, Vec

__all__ = ["FourBar", "GrashofType", "grashof"]


class GrashofType(Enum):
    """Grashof class of a four-bar, by which link is the shortest."""

    CRANK_ROCKER = "crank-rocker"            # Grashof, crank shortest: crank turns, rocker rocks
    DOUBLE_CRANK = "double-crank"            # Grashof, ground shortest (drag link)
    ROCKER_CRANK = "rocker-crank"            # Grashof, rocker shortest: the follower turns
    DOUBLE_ROCKER = "double-rocker"          # Grashof, coupler shortest: the coupler turns
    CHANGE_POINT = "change-point"            # s + l = p + q: links become collinear
    TRIPLE_ROCKER = "triple-rocker"          # non-Grashof: no link turns fully

    @property
    def crank_turns(self) -> bool:
        """True if the input crank can make full turns."""
        return self in (GrashofType.CRANK_ROCKER, GrashofType.DOUBLE_CRANK, GrashofType.CHANGE_POINT)


def grashof(ground: float, crank: float, coupler: float, rocker: float, rtol: float = 1e-12) -> GrashofType:
    """Grashof type of a four-bar with these link lengths [m].

    >>> grashof(0.30, 0.08, 0.30, 0.25).value
    'crank-rocker'
    """
    lengths = np.array([ground, crank, coupler, rocker], dtype=float)
    if lengths.shape != (4,) or not np.all(np.isfinite(lengths)) or np.any(lengths <= 0):
        raise ValueError(f"link lengths must be positive and finite, got {lengths.tolist()}")
    s, l = lengths.min(), lengths.max()
    pq = lengths.sum() - s - l
    if abs(s + l - pq) <= rtol * lengths.sum():
        return GrashofType.CHANGE_POINT
    if s + l > pq:
        return GrashofType.TRIPLE_ROCKER
    shortest = int(np.argmin(lengths))
    return (GrashofType.DOUBLE_CRANK, GrashofType.CRANK_ROCKER, GrashofType.DOUBLE_ROCKER,
            GrashofType.ROCKER_CRANK)[shortest]


class FourBar(Linkage):
    """A four-bar linkage driven by its crank.

    Parameters
    ----------
    ground, crank, coupler, rocker : float
        Link lengths O2-O4, O2-A, A-B, O4-B [m].
    ground_angle : float
        Angle of O2 -> O4 from the global x axis [rad].
    branch : {+1, -1} or {"open", "crossed"}
        Assembly branch (module docstring).

    Notes
    -----
    Points: "O2", "A", "B", "O4".  Links (first joint, second joint): "crank" (O2, A),
    "coupler" (A, B), "rocker" (O4, B), "ground" (O2, O4).
    """

    outline = ("O2", "A", "B", "O4")          # joints in drawing order
    BRANCHES = {"open": 1, "crossed": -1}
    det_sign = -1                 # branch +1 (open) has sin(theta4 - theta3) > 0, det Phi_q < 0

    def __init__(self, ground: float, crank: float, coupler: float, rocker: float, ground_angle: float = 0.0,
                 branch=1, **options):
        if isinstance(branch, str):
            if branch not in self.BRANCHES:
                raise ValueError(f"`branch` must be one of {sorted(self.BRANCHES)} or +1/-1, got {branch!r}")
            branch = self.BRANCHES[branch]
        self.type = grashof(ground, crank, coupler, rocker)     # also validates the lengths
        self.ground, self.crank, self.coupler, self.rocker = map(float, (ground, crank, coupler, rocker))
        self.ground_angle = float(ground_angle)
        a, b, c, d, t1 = self.crank, self.coupler, self.rocker, self.ground, self.ground_angle
        loop = [Vec(a, "phi"), Vec(b, "theta3"), Vec(c, "theta4", -1), Vec(d, t1, -1)]
        points = {"O2": [], "A": [Vec(a, "phi")], "B": [Vec(a, "phi"), Vec(b, "theta3")], "O4": [Vec(d, t1)]}
        links = {"crank": ("O2", "A"), "coupler": ("A", "B"), "rocker": ("O4", "B"), "ground": ("O2", "O4")}
        super().__init__(("theta3", "theta4"), [loop], points, links, branch=branch, **options)

    def __repr__(self):
        return (f"FourBar(ground={self.ground}, crank={self.crank}, coupler={self.coupler}, "
                f"rocker={self.rocker}, branch={self.branch:+d}; {self.type.value})")

    def crank_range(self) -> tuple[float, float] | None:
        """(phi_min, phi_max) of the crank angles where the links close, or None if the crank
        turns fully; for a non-Grashof crank the two ends are toggle (singular) positions."""
        a, b, c, d = self.crank, self.coupler, self.rocker, self.ground
        # |O4 - A|^2 = a^2 + d^2 - 2 a d cos(phi - theta1) must lie in [(b - c)^2, (b + c)^2]
        lo = (a * a + d * d - (b + c) ** 2) / (2 * a * d)         # cos(phi - theta1) >= lo
        hi = (a * a + d * d - (b - c) ** 2) / (2 * a * d)         # cos(phi - theta1) <= hi
        if lo <= -1.0 and hi >= 1.0:
            return None
        if lo > 1.0 or hi < -1.0 or lo > hi:
            return (np.nan, np.nan)
        if hi < 1.0 and lo > -1.0:
            # two separate arcs, symmetric about the ground line; report the upper one
            return (self.ground_angle + np.arccos(hi), self.ground_angle + np.arccos(lo))
        if lo > -1.0:                                # the arc around phi - theta1 = 0
            w = np.arccos(lo)
            return (self.ground_angle - w, self.ground_angle + w)
        w = np.arccos(hi)                            # the arc around phi - theta1 = pi
        return (self.ground_angle + w, self.ground_angle + 2 * np.pi - w)

    def guess(self, phi: float) -> np.ndarray:
        """Closed-form position on the chosen branch: B at the intersection of the circles
        |B - A| = coupler and |B - O4| = rocker."""
        a, b, c, d = self.crank, self.coupler, self.rocker, self.ground
        Ax, Ay = a * math.cos(phi), a * math.sin(phi)
        fx, fy = d * math.cos(self.ground_angle) - Ax, d * math.sin(self.ground_angle) - Ay
        f = math.hypot(fx, fy)
        slack = 1e-12 * (a + b + c + d)
        if not (abs(b - c) - slack <= f <= b + c + slack):
            rng = self.crank_range()
            where = ("the crank turns fully elsewhere" if rng is None else
                     f"the crank can only reach [{np.degrees(rng[0]):.3f}, {np.degrees(rng[1]):.3f}] deg "
                     "(and its mirror image about the ground line)" if np.all(np.isfinite(rng)) else
                     "no crank angle assembles")
            raise AssemblyError(
                f"the four-bar cannot close at crank angle phi = {phi:.10g} rad ({np.degrees(phi):.4f} deg): "
                f"the distance from the crank pin A to the rocker pivot O4 is {f:.6g} m, outside "
                f"[|coupler - rocker|, coupler + rocker] = [{abs(b - c):.6g}, {b + c:.6g}] m; {where}; "
                f"Grashof type {self.type.value}", phi)
        # B = A + x u + branch * y n(u), u = f_vec / f, x along A->O4, y to the left of it
        x = (b * b - c * c + f * f) / (2 * f)
        y = self.branch * math.sqrt(max(b * b - x * x, 0.0))
        ux, uy = fx / f, fy / f
        ABx, ABy = x * ux - y * uy, x * uy + y * ux          # B - A
        return np.array([math.atan2(ABy, ABx), math.atan2(ABy - fy, ABx - fx)])

    def transmission_angle(self, state) -> np.ndarray:
        """Transmission angle mu in [0, pi] (between coupler and rocker) of a `LinkageState`."""
        th3, th4 = state["theta3"][0], state["theta4"][0]
        return np.abs(np.angle(np.exp(1j * (th4 - th3))))
