"""LAPACK routines for an array's type, looked up once.

Small dense systems are solved by calling LAPACK directly (getrf/getrs, potrf/potrs, gecon):
the scipy wrappers' checks cost more than the factorization at these sizes.  The lookup itself
is cached by routine names and dtype, so real and complex arrays (the complex-step derivatives
of the quasi-velocity formulations) each get their own routines.

The routines are scipy's f2py wrappers of LAPACK, the extension module ``scipy.linalg._flapack``
that ``scipy.linalg.get_lapack_funcs`` hands out.  That module is loaded by itself
(`flapack_module`): importing the package ``scipy.linalg`` to reach it costs 0.31 s of CPU
(scipy's array-API layer, every decomposition and solver module) against 0.007 s for the
extension module alone (2026-11-27, x86_64, scipy 1.16), more than the whole solve of a short
index-1 run.  The routines and so the results are the same.  When ``scipy.linalg`` is imported
already, or the module cannot be loaded alone (another layout of scipy), ``get_lapack_funcs``
gives them.
"""
from __future__ import annotations

import logging
import sys
from functools import lru_cache

import numpy as np

__all__ = ["lapack", "flapack_module"]

log = logging.getLogger(__name__)

PREFIXES = {"f": "s", "d": "d", "F": "c", "D": "z"}     # dtype char -> LAPACK's type letter


@lru_cache(maxsize=None)
def flapack_module():
    """scipy's LAPACK extension module ``_flapack`` loaded without the package ``scipy.linalg``, or None
    (scipy.linalg imported already, or no such module file: then `lapack` asks ``get_lapack_funcs``)."""
    if "scipy.linalg" in sys.modules:
        return None
    import importlib.machinery
    import importlib.util
    from pathlib import Path
    scipy_spec = importlib.util.find_spec("scipy")             # finds the package without importing it
    if scipy_spec is None or not scipy_spec.submodule_search_locations:
        return None
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    paths = [Path(d) / "linalg" / f"_flapack{s}" for d in scipy_spec.submodule_search_locations for s in suffixes]
    path = next((p for p in paths if p.is_file()), None)
    if path is None:
        return None
    loader = importlib.machinery.ExtensionFileLoader("_flapack", str(path))
    spec = importlib.util.spec_from_file_location("_flapack", str(path), loader=loader)
    before = sys.modules.get("_flapack")
    try:
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except ImportError as err:                              # e.g. a module built for another numpy
        log.debug("scipy's _flapack not loaded alone (%s): scipy.linalg.get_lapack_funcs", err)
        return None
    finally:                         # its initialisation registers it: not a top-level module of this process
        if before is None:
            sys.modules.pop("_flapack", None)
        else:
            sys.modules["_flapack"] = before
    return module


@lru_cache(maxsize=None)
def _lookup(names: tuple[str, ...], dtype_char: str) -> tuple:
    module, prefix = flapack_module(), PREFIXES.get(dtype_char)
    if module is not None and prefix is not None and all(hasattr(module, prefix + n) for n in names):
        return tuple(getattr(module, prefix + n) for n in names)
    from scipy.linalg import get_lapack_funcs
    return tuple(get_lapack_funcs(names, dtype=np.dtype(dtype_char)))


def lapack(names: tuple[str, ...], A: np.ndarray) -> tuple:
    """The LAPACK routines ``names`` (e.g. ``("getrf", "getrs")``) for the dtype of ``A``."""
    return _lookup(tuple(names), np.asarray(A).dtype.char)
