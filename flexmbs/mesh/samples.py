"""The sample meshes that ship with flexmbs (``meshes/`` of the source tree), by name.

.. code:: python

    import flexmbs as fm
    fm.mesh.samples()                    # ['bar_hex.msh', 'bar_tetra.inp', 'beam_line.msh', ...]
    mesh = fm.mesh.sample("beam_line")   # the same as fm.mesh.read(fm.mesh.sample_path("beam_line"))

meshes/README.md (installed as flexmbs/meshes/README.md) describes each file and its named sets.
"""
from __future__ import annotations

from pathlib import Path

from ..package_data import package_data_dir
from .io import FORMATS, read
from .mesh import Mesh, MeshError

__all__ = ["samples", "sample_path", "sample"]


def _directory() -> Path:
    directory = package_data_dir("meshes")
    if directory is None:
        raise MeshError("the sample meshes are not installed (no flexmbs/meshes in the package and no meshes/ "
                        "beside it); reinstall flexmbs from its wheel or source tree")
    return directory


def samples() -> list[str]:
    """File names of the sample meshes, sorted."""
    return sorted(p.name for p in _directory().iterdir() if p.suffix.lower() in FORMATS)


def sample_path(name: str) -> Path:
    """Path of the sample mesh ``name``: a file name (``"beam_line.msh"``) or its stem (``"beam_line"``)."""
    if not isinstance(name, (str, Path)):
        raise TypeError(f"`name` must be a sample mesh name such as 'beam_line', got {type(name).__name__}")
    name = Path(name).name
    names = samples()
    if name in names:
        return _directory() / name
    stems = [n for n in names if Path(n).stem == name]
    if len(stems) == 1:
        return _directory() / stems[0]
    if len(stems) > 1:
        raise MeshError(f"sample mesh {name!r} is ambiguous: give one of {stems}")
    import difflib                               # here: only an unknown name needs it
    close = difflib.get_close_matches(name, names + [Path(n).stem for n in names], n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise MeshError(f"no sample mesh {name!r}{hint} The samples: {', '.join(names)}")


def sample(name: str, **read_options) -> Mesh:
    """Read the sample mesh ``name`` (see `sample_path`); ``read_options`` go to `flexmbs.mesh.read`."""
    return read(sample_path(name), **read_options)
