"""Offset slider-crank: crank O-A, connecting rod A-B, slider B on the line y = offset.

Coordinates: the crank angle phi (input), the rod angle theta and the slider position s
(x of B), from the global x axis:

.. code:: text

    crank e(phi) + rod e(theta) - s e(0) - offset e(pi/2) = 0
    det Phi_q = det [rod n(theta), -e(0)] = rod cos(theta)

``branch = +1`` puts the slider to the right of the crank pin (cos theta > 0), ``-1`` to
its left.  cos(theta) = 0 (rod normal to the slide) is a singular position; it is reached
only if crank + |offset| >= rod, when the crank cannot turn fully.  The dead centres
(crank and rod aligned) are not singular for a crank input: only for a slider input.

References
----------
.. [1] R. L. Norton, Design of Machinery, 5th ed., McGraw-Hill (2012), sec. 4.6 (position of
       the offset slider-crank).
"""
from __future__ import annotations

import math

import numpy as np

from .linkage import AssemblyError, Linkage, Vec

__all__ = ["SliderCrank"]


class SliderCrank(Linkage):
    """A slider-crank driven by its crank.

    Parameters
    ----------
    crank, rod : float
        Lengths O-A and A-B [m].
    offset : float
        Height of the slide line above the crank pivot O [m].
    branch : {+1, -1} or {"right", "left"}
        Side of the slider (module docstring).

    Notes
    -----
    Points: "O", "A", "B".  Links (first joint, second joint): "crank" (O, A), "rod" (A, B).
    """

    outline = ("O", "A", "B")          # joints in drawing order
    BRANCHES = {"right": 1, "left": -1}

    def __init__(self, crank: float, rod: float, offset: float = 0.0, branch=1, **options):
        if isinstance(branch, str):
            if branch not in self.BRANCHES:
                raise ValueError(f"`branch` must be one of {sorted(self.BRANCHES)} or +1/-1, got {branch!r}")
            branch = self.BRANCHES[branch]
        for name, value in (("crank", crank), ("rod", rod)):
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"`{name}` must be a positive length, got {value!r}")
        if not np.isfinite(offset):
            raise ValueError(f"`offset` must be finite, got {offset!r}")
        self.crank, self.rod, self.offset = float(crank), float(rod), float(offset)
        r, l, e = self.crank, self.rod, self.offset
        loop = [Vec(r, "phi"), Vec(l, "theta"), Vec("s", 0.0, -1), Vec(e, np.pi / 2, -1)]
        points = {"O": [], "A": [Vec(r, "phi")], "B": [Vec("s", 0.0), Vec(e, np.pi / 2)]}
        links = {"crank": ("O", "A"), "rod": ("A", "B")}
        super().__init__(("theta", "s"), [loop], points, links, branch=branch, **options)

    def __repr__(self):
        return f"SliderCrank(crank={self.crank}, rod={self.rod}, offset={self.offset}, branch={self.branch:+d})"

    @property
    def crank_turns(self) -> bool:
        """True if the crank can make full turns (crank + |offset| < rod)."""
        return self.crank + abs(self.offset) < self.rod

    def guess(self, phi: float) -> np.ndarray:
        """Closed-form position: B on the slide line at distance ``rod`` from A."""
        r, l, e = self.crank, self.rod, self.offset
        Ax, Ay = r * math.cos(phi), r * math.sin(phi)
        h = e - Ay
        if abs(h) > l * (1.0 + 1e-12):
            raise AssemblyError(
                f"the slider-crank cannot close at crank angle phi = {phi:.10g} rad "
                f"({np.degrees(phi):.4f} deg): the crank pin is {abs(h):.6g} m from the slide line, "
                f"more than the rod length {l:.6g} m (crank + |offset| = {r + abs(e):.6g} m >= rod, so "
                "the crank cannot turn fully)", phi)
        w = math.sqrt(max(l * l - h * h, 0.0))
        Bx = Ax + self.branch * w
        return np.array([math.atan2(h, Bx - Ax), Bx])

    def guess_many(self, phi) -> np.ndarray | None:
        """`guess` for many crank angles at once (N, 2); None where the crank cannot reach."""
        r, l, e = self.crank, self.rod, self.offset
        phi = np.asarray(phi, dtype=float)
        Ax, Ay = r * np.cos(phi), r * np.sin(phi)
        h = e - Ay
        if np.any(np.abs(h) > l * (1.0 + 1e-12)):
            return None                        # `solve` raises the AssemblyError
        w = np.sqrt(np.maximum(l * l - h * h, 0.0))
        Bx = Ax + self.branch * w
        return np.stack([np.arctan2(h, Bx - Ax), Bx], axis=1)
