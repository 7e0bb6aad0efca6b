"""Time functions of loads that the exact integrator recognises.

A load's time factor f(t) may be any callable; `Harmonic` is one whose form is known:

.. code:: text

    f(t) = amplitude sin(omega t + phase)

Because s = sin(omega t + phase) and c = cos(omega t + phase) solve the linear ODE
s' = omega c, c' = -omega s, a steady linear model driven by harmonic loads is one
autonomous linear system, which method "exact" (`flexmbs.integrators.exact`) integrates
with matrix exponentials, without quadrature of the load.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["Harmonic"]


class Harmonic:
    """f(t) = amplitude sin(omega t + phase); callable on a number or an array of times.

    Parameters
    ----------
    omega : float
        Angular frequency [rad/s] (2 pi / period).
    amplitude : float
        Factor of the sine (default 1).
    phase : float
        Phase at t = 0 [rad] (default 0; pi/2 gives a cosine).
    """

    __slots__ = ("omega", "amplitude", "phase")

    def __init__(self, omega: float, amplitude: float = 1.0, phase: float = 0.0):
        for name, value in (("omega", omega), ("amplitude", amplitude), ("phase", phase)):
            if not (isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(value)):
                raise ValueError(f"`{name}` of Harmonic must be a finite number, got {value!r}")
        self.omega, self.amplitude, self.phase = float(omega), float(amplitude), float(phase)

    def __call__(self, t):
        if isinstance(t, (int, float)):
            return self.amplitude * math.sin(self.omega * t + self.phase)
        return self.amplitude * np.sin(self.omega * np.asarray(t, dtype=float) + self.phase)

    def __repr__(self):
        return f"Harmonic(omega={self.omega!r}, amplitude={self.amplitude!r}, phase={self.phase!r})"

    def __eq__(self, other):
        return isinstance(other, Harmonic) and (self.omega, self.amplitude, self.phase) == (
            other.omega, other.amplitude, other.phase)

    def __hash__(self):
        return hash((Harmonic, self.omega, self.amplitude, self.phase))
