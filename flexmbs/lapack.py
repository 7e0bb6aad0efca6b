"""LAPACK routines for an array's type, looked up once (``scipy.linalg.get_lapack_funcs``).

Small dense systems are solved by calling LAPACK directly (getrf/getrs, potrf/potrs, gecon):
the scipy wrappers' checks cost more than the factorization at these sizes.  The lookup itself
is cached by routine names and dtype, so real and complex arrays (the complex-step derivatives
of the quasi-velocity formulations) each get their own routines.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["lapack"]


@lru_cache(maxsize=None)
def _lookup(names: tuple[str, ...], dtype_char: str) -> tuple:
    from scipy.linalg import get_lapack_funcs
    return tuple(get_lapack_funcs(names, dtype=np.dtype(dtype_char)))


def lapack(names: tuple[str, ...], A: np.ndarray) -> tuple:
    """The LAPACK routines ``names`` (e.g. ``("getrf", "getrs")``) for the dtype of ``A``."""
    return _lookup(tuple(names), np.asarray(A).dtype.char)
