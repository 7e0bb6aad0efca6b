"""Where the cases and sample meshes that ship with flexmbs are.

They live at the top of the source tree (``cases/``, ``meshes/``) and are mapped into the
package when it is built (pyproject.toml: ``flexmbs.cases`` -> ``cases``, ``flexmbs.meshes``
-> ``meshes``), so an installed wheel has them as ``flexmbs/cases`` and ``flexmbs/meshes``.
A source checkout on ``sys.path`` or an editable install has them beside the package.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["package_data_dir", "PACKAGE_DATA"]

PACKAGE_DATA = ("cases", "meshes")
_PACKAGE = Path(__file__).resolve().parent


def package_data_dir(name: str) -> Path | None:
    """The shipped directory ``name`` ("cases" or "meshes"): inside the installed package, else
    beside it in the source tree; None if neither exists."""
    if name not in PACKAGE_DATA:
        raise ValueError(f"`name` must be one of {PACKAGE_DATA}, got {name!r}")
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    return None
