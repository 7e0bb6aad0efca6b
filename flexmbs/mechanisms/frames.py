"""A link's rigid kinematics as the prescribed frame of a flexible link.

The frame of a link is its chord frame: origin at the first joint P1, x axis along the
chord to the second joint P2, z normal to the plane.  With d = P2 - P1 (global),

.. code:: text

    r_O = P1,  v_O = P1',  a_O = P1''
    theta = atan2(d_y, d_x),  omega = (d x d') / |d|^2,
    eps = (d x d'') / |d|^2 - 2 (d . d') (d x d') / |d|^4

(``LinkageState.link``).  `link_motion` wraps them, for a crank-angle law phi(t), in a
`flexmbs.motion.PlanarMotion`; the positions are solved anew at each time (Newton from the
closed-form start, so the result does not depend on the order of the calls).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..motion import PlanarMotion
from .linkage import Linkage

__all__ = ["link_motion", "LinkFrame"]


class LinkFrame:
    """Chord-frame kinematics of one link at time t, for a crank-angle law; cached per t.

    Parameters
    ----------
    linkage : Linkage
    link : str
        Name of the link (``linkage.links``).
    crank : callable t -> (phi, phi', phi'')
        The input law, e.g. ``constant_speed(omega)``.
    """

    def __init__(self, linkage: Linkage, link: str, crank: Callable):
        if not isinstance(linkage, Linkage):
            raise TypeError(f"`linkage` must be a flexmbs.mechanisms.Linkage, got {type(linkage).__name__}")
        if link not in linkage.links:
            raise ValueError(f"unknown link {link!r}; valid: {sorted(linkage.links)}")
        if not callable(crank):
            raise TypeError(f"`crank` must be a callable t -> (phi, phi', phi''), got {crank!r}")
        self.linkage, self.link, self.crank = linkage, link, crank
        self._t = None
        self._theta_prev = None

    def __call__(self, t: float):
        """(r, v, a, theta, omega, eps) of the chord frame at t (r, v, a global (2,))."""
        if t != self._t:
            phi, phi_dot, phi_ddot = self.crank(t)
            r, v, a, theta, omega, eps = self.linkage.chord(self.link, phi, phi_dot, phi_ddot)
            if self._theta_prev is not None:          # continuous angle (a 2 pi jump is harmless)
                theta += 2.0 * math.pi * round((self._theta_prev - theta) / (2.0 * math.pi))
            self._theta_prev = theta
            self._t, self._value = t, (r, v, a, theta, omega, eps)
        return self._value

    def many(self, t):
        """(r (N, 2), v (N, 2), a (N, 2), theta, omega, eps (N,)) at the times ``t`` (N,), from
        one vectorised solution of the loop equations (`Linkage.solve`); theta continuous."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        laws = _crank_laws(self.crank, t)
        c = self.linkage.solve_many(*laws).link(self.link)
        return c.r, c.v, c.a, c.theta, c.omega, c.eps

    def check_path(self, t_span, n_per_turn: int = 720):
        """Solve the kinematics along the crank angles of ``t_span`` and raise
        `SingularPositionError` / `AssemblyError` if the path meets a singular position or
        leaves the assembly range (before a simulation starts)."""
        t0, t1 = map(float, t_span)
        phi0, phi1 = self.crank(t0)[0], self.crank(t1)[0]
        n = max(int(np.ceil(abs(phi1 - phi0) / (2 * np.pi) * n_per_turn)), 200)
        ts = np.linspace(t0, t1, n + 1)
        laws = np.array([self.crank(t) for t in ts])
        return self.linkage.solve(laws[:, 0], laws[:, 1], laws[:, 2])


def _crank_laws(crank, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(phi, phi', phi'') (N,) each of a crank law at the times t: one call if it takes arrays."""
    try:
        laws = tuple(np.broadcast_to(np.asarray(v, dtype=float), t.shape) for v in crank(t))
    except Exception:                     # NOTE: a law written for scalars only
        laws = None
    if laws is None or len(laws) != 3:
        laws = tuple(np.array(v) for v in zip(*(crank(float(ti)) for ti in t)))
    return laws


def link_motion(linkage: Linkage, link: str, crank: Callable, t_span=None) -> PlanarMotion:
    """`PlanarMotion` of the chord frame of ``link`` (origin at its first joint, x axis toward
    its second joint) for the crank-angle law ``crank``: t -> (phi, phi', phi'').

    With ``t_span`` the path is checked first (`LinkFrame.check_path`).

    >>> from flexmbs.mechanisms import SliderCrank, constant_speed
    >>> m = link_motion(SliderCrank(0.15, 0.30), "rod", constant_speed(150.0))
    >>> s = m.state(0.0)
    >>> round(float(s.omega[2]), 6), [round(float(x), 6) for x in s.a_O[:2]]
    (-75.0, [-3375.0, 0.0])
    """
    frame = LinkFrame(linkage, link, crank)
    if t_span is not None:
        frame.check_path(t_span)

    def x(t):
        r, v, a, *_ = frame(t)
        return r[0], v[0], a[0]

    def y(t):
        r, v, a, *_ = frame(t)
        return r[1], v[1], a[1]

    def theta(t):
        return frame(t)[3:]

    def many(t):
        r, v, a, th, om, ep = frame.many(t)
        return (r[:, 0], v[:, 0], a[:, 0]), (r[:, 1], v[:, 1], a[:, 1]), (th, om, ep)

    motion = PlanarMotion(x, y, theta, many=many)
    motion.link_frame = frame
    return motion
