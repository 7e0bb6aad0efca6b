"""Small array helpers: what numpy's own spelling makes costly at start-up, and a fixed start vector."""
from __future__ import annotations

import numpy as np

__all__ = ["sorted_unique", "lanczos_start"]


def sorted_unique(values) -> np.ndarray:
    """The distinct values of ``values`` (flattened), ascending: ``np.unique(values)``.

    Why not ``np.unique``: in numpy 2.4 its default call asks ``np.ma.is_masked`` and so imports
    ``numpy.ma`` (12-20 ms of CPU, a fifth of a short run's imports after numpy).  One sort and the
    mask ``s[k] != s[k - 1]`` give the same array."""
    s = np.sort(np.asarray(values).ravel())
    keep = np.empty(s.shape, dtype=bool)
    keep[:1] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def lanczos_start(n: int) -> np.ndarray:
    """The start vector of the shift-invert Lanczos iterations (scipy's ``eigsh(..., v0=)``): the same
    pseudo-random vector (seed 0) in every process.  Without it ARPACK draws its own from the process's
    state, so two runs of one model got different bases of the same modes (signs, and the rotation
    within a pair of equal frequencies, as the bending pairs of a square rod), and different
    reduced coordinates q (a coupled slider-crank with the solid rod: 1.8e-3 apart after 3
    revolutions); a generic vector has a component along every mode, as the iteration needs."""
    return np.random.default_rng(0).standard_normal(n)
