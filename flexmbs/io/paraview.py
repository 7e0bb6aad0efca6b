"""ParaView files: an XDMF + HDF5 time series of a run, and one state as VTU.

Both are written through meshio, in two versions:

- **body frame** (``STEM.xdmf``, ``STEM_final.vtu``): the mesh is the body in its frame
  (undeformed nodes ``X``, padded to 3D); each time step carries the point data
  ``displacement`` and ``velocity`` (body-frame components, relative to the frame: ``u``
  and ``u'``).  In ParaView apply *Warp By Vector* with ``displacement`` (and a scale
  factor) to see the deformed body.
- **global frame** (``STEM_global.xdmf``, ``STEM_global_final.vtu``): the nodes are at
  their global positions ``r = r_O + R (X + u)`` at each time (the geometry moves: a spinning
  blade turns in ParaView); ``displacement`` is ``R u`` and ``velocity`` the absolute
  velocity ``v_O + R (omega x (X + u) + u')``, both in global components.

The cell data are those of ``Results.element_data``: ``axial_force`` [N] of bars and beams,
``stress`` [Pa] and ``von_mises`` [Pa] of solids.  ``stress`` is written in ParaView's
component order of a symmetric tensor, **XX, YY, ZZ, XY, YZ, XZ** (`paraview_stress`;
flexmbs' own Voigt order in `Results.element_data` is xx, yy, zz, yz, xz, xy), in body
components in the body-frame files and ``R sigma R^T`` in the global ones.

Units (SI) are in the files: the XDMF ``Domain`` has ``Information`` elements ``units``
(JSON: array name -> unit) and ``frame`` (body or global), its HDF5 file the same as root
attributes, and a VTU file an XML comment after its header.
"""
from __future__ import annotations

import contextlib
import errno
import json
import logging
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..results import Results
from ..rotations import pad3 as _pad3

__all__ = ["write_xdmf", "write_vtu", "export_paraview", "paraview_stress", "UNITS", "FRAMES"]

log = logging.getLogger(__name__)

#: units of the arrays in the ParaView files
UNITS = {"coordinates": "m", "time": "s", "displacement": "m", "velocity": "m/s", "axial_force": "N",
         "stress": "Pa", "von_mises": "Pa"}
FRAMES = ("body", "global")
# Voigt (xx, yy, zz, yz, xz, xy) -> ParaView (XX, YY, ZZ, XY, YZ, XZ)
_TO_PARAVIEW = [0, 1, 2, 5, 3, 4]
_VOIGT_PAIRS = [(0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1)]


def paraview_stress(voigt, rotation=None) -> np.ndarray:
    """Stresses (..., 6) in flexmbs' Voigt order xx, yy, zz, yz, xz, xy -> ParaView's order
    XX, YY, ZZ, XY, YZ, XZ; with ``rotation`` R (3, 3) the components of ``R sigma R^T``
    (body -> global components)."""
    voigt = np.asarray(voigt, dtype=float)
    if voigt.shape[-1] != 6:
        raise ValueError(f"`voigt` must have 6 components in its last axis, got shape {voigt.shape}")
    if rotation is None:
        return voigt[..., _TO_PARAVIEW]
    sigma = np.zeros(voigt.shape[:-1] + (3, 3))
    for k, (a, b) in enumerate(_VOIGT_PAIRS):
        sigma[..., a, b] = sigma[..., b, a] = voigt[..., k]
    R = np.asarray(rotation, dtype=float)
    sigma = np.einsum("ia,...ab,jb->...ij", R, sigma, R)
    return np.stack([sigma[..., a, b] for a, b in ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2))], axis=-1)


def _cells(results: Results) -> list[tuple[str, np.ndarray]]:
    if results.cells:
        return [(k, np.asarray(v, dtype=np.int64)) for k, v in results.cells.items()]
    n_nodes = len(results.nodes)                  # e.g. a results.npz without cells: the nodes as vertices
    return [("vertex", np.arange(n_nodes, dtype=np.int64)[:, None])]


def _check_frame(results: Results, frame: str) -> None:
    if frame not in FRAMES:
        raise ValueError(f"`frame` must be one of {FRAMES}, got {frame!r}")
    if frame == "global" and not results.frame:
        raise ValueError("`frame='global'` needs the frame motion, which these results do not hold (a file "
                         "written before flexmbs stored it); write the body frame, or run the case again")


def _state(results: Results, i: int, cells, frame: str):
    """(points, point_data, cell_data) of output i in the given frame."""
    X = _pad3(results.nodes)
    u, v = _pad3(results.displacement[i]), _pad3(results.velocity[i])
    R = None
    if frame == "body":
        points, point_data = X, {"displacement": u, "velocity": v}
    else:
        fr = {k: np.asarray(a[i], dtype=float) for k, a in results.frame.items()}
        R = fr["rotation"]
        x = X + u
        points = fr["origin"] + x @ R.T
        absolute = fr["origin_velocity"] + (np.cross(fr["omega"], x) + v) @ R.T
        point_data = {"displacement": u @ R.T, "velocity": absolute}
    cell_data = {}
    if len(cells) == 1 and cells[0][0] != "vertex":
        n_el = len(cells[0][1])
        for k, a in results.element_data.items():
            if np.shape(a)[1:2] != (n_el,):
                continue
            a = np.asarray(a[i], dtype=float)
            if k == "stress" and a.shape[-1] == 6:
                a = paraview_stress(a, R)
            cell_data[k] = [a]
    return points, point_data, cell_data


def _units_json() -> str:
    return json.dumps(UNITS)


def _writer_class():
    """meshio's time-series writer, with the node count of Polyline topologies and, for the
    global frame, the node positions of each time step (meshio is imported here, when a file
    is written, not with flexmbs).

    NOTE: meshio 5.3 writes line cells as ``TopologyType="Polyline"`` without
    ``NodesPerElement``, which the XDMF model requires for polylines (VTK's XDMF2 reader
    infers it from the array's shape; other readers need it); this adds it.

    On a full disk the data file is released (`flexmbs.io.store._release`: HDF5 would crash
    the process at its next close), both files are removed and an OSError with errno ENOSPC
    names the data file.
    """
    from meshio.xdmf.time_series import TimeSeriesWriter

    from .store import _release, is_disk_full

    class _Writer(TimeSeriesWriter):
        def __exit__(self, exc_type, exc, tb):
            failed = exc
            if failed is None and self.data_format == "HDF":
                try:
                    self.h5_file.flush()             # what the close would write, where a failure is safe
                except (OSError, RuntimeError) as err:
                    failed = err
            if failed is None or not is_disk_full(failed) or self.data_format != "HDF":
                return super().__exit__(exc_type, exc, tb)
            h5 = Path(self.h5_filename).resolve()
            _release(self.h5_file)
            h5.unlink(missing_ok=True)
            Path(self.filename).unlink(missing_ok=True)
            raise OSError(errno.ENOSPC, "No space left on device", str(h5)) from failed

        def numpy_to_xml_string(self, data):
            """One HDF5 dataset per array, as meshio's, created with h5py's low-level calls
            (2.3 times faster: thousands of small datasets in a long time series)."""
            if self.data_format != "HDF":
                return super().numpy_to_xml_string(data)
            import h5py
            data = np.ascontiguousarray(data)
            name = f"data{self.data_counter}"
            self.data_counter += 1
            ds = h5py.h5d.create(self.h5_file.id, name.encode(), h5py.h5t.py_create(data.dtype),
                                 h5py.h5s.create_simple(data.shape))
            ds.write(h5py.h5s.ALL, h5py.h5s.ALL, data)
            return f"{Path(self.h5_filename).name}:/{name}"

        def cells(self, cells, grid: ET.Element) -> None:
            super().cells(cells, grid)
            for topology in grid.iter("Topology"):
                if topology.get("TopologyType") == "Polyline":
                    topology.set("NodesPerElement", "2")

        def info(self, name: str, value: str) -> None:
            ET.SubElement(self.domain, "Information", Name=name, Value=value)

        def write_moving(self, t: float, points: np.ndarray, point_data, cell_data) -> None:
            """A time step with its own geometry (the topology is the mesh grid's)."""
            self.write_data(t, point_data=point_data, cell_data=cell_data)
            grid = self.collection[-1]
            include = grid[0]
            include.set("xpointer", f'xpointer(//Grid[@Name="{self.mesh_name}"]/*[self::Topology])')
            self.points(grid, np.asarray(points, dtype=float))
            geometry = grid[-1]
            grid.remove(geometry)
            grid.insert(1, geometry)

    return _Writer


def _check_room(results: Results, h5: Path, steps: list, frame: str) -> None:
    """Raise an OSError with errno ENOSPC naming ``h5`` if the disk has less free space than
    its data need: the nodal and element arrays of each step (and the node positions in the
    global frame), with 2 kB of HDF5 headers per array.  A prediction, checked before
    writing because HDF5 may fail on a full disk where no error can be caught (in the
    deallocation of a dataset), which crashes the process at exit."""
    import shutil
    nodal = results.nodes.shape[0] * 3
    arrays = [nodal, nodal, *(np.asarray(a[0]).size for a in results.element_data.values())]
    arrays += [nodal] if frame == "global" else []
    need = len(steps) * (8 * sum(arrays) + 2048 * len(arrays)) + 2 ** 20
    free = shutil.disk_usage(h5.parent).free
    if free < need:
        raise OSError(errno.ENOSPC, f"No space left on device (about {need} bytes needed, {free} free)", str(h5))


def write_xdmf(results: Results, path, every: int = 1, frame: str = "body") -> Path:
    """Write the time series of ``results`` as ``path`` (.xdmf) and its data file (.h5) beside it.

    Parameters
    ----------
    results : Results
    path : str or Path
        The XDMF file; the heavy data go to the same name with suffix ``.h5``.
    every : int
        Write every ``every``-th output (the last one always).
    frame : {"body", "global"}
        Body frame (fixed mesh, body components) or global frame (the nodes at
        ``r_O + R (X + u)`` at each time, global components); see the module docstring.

    Returns
    -------
    Path
        The XDMF file (open it in ParaView with the *Xdmf3 Reader S* or *Xdmf3 Reader T*).
    """
    path = Path(path).with_suffix(".xdmf")
    if not (isinstance(every, int) and every >= 1):
        raise ValueError(f"`every` must be a positive integer, got {every!r}")
    _check_frame(results, frame)
    path.parent.mkdir(parents=True, exist_ok=True)
    cells = _cells(results)
    n_t = len(results.t)
    steps = sorted(set(range(0, n_t, every)) | ({n_t - 1} if n_t else set()))
    _check_room(results, path.with_suffix(".h5").resolve(), steps, frame)
    # NOTE: meshio writes the .h5 file into the working directory, not beside the .xdmf
    with contextlib.chdir(path.parent), _writer_class()(path.name) as writer:
        writer.info("units", _units_json())
        writer.info("frame", frame)
        writer.h5_file.attrs["units"] = _units_json()
        writer.h5_file.attrs["frame"] = frame
        if frame == "body" or not steps:
            writer.write_points_cells(_pad3(results.nodes), cells)
        else:
            writer.write_points_cells(_state(results, steps[0], cells, frame)[0], cells)
        for i in steps:
            points, point_data, cell_data = _state(results, i, cells, frame)
            if frame == "body":
                writer.write_data(float(results.t[i]), point_data=point_data, cell_data=cell_data)
            else:
                writer.write_moving(float(results.t[i]), points, point_data, cell_data)
    return path


def write_vtu(results: Results, path, index: int = -1, frame: str = "body") -> Path:
    """Write output ``index`` (default the last) of ``results`` as one VTU file, in the body
    or the global ``frame`` (see `write_xdmf`).

    The time [s] is stored as the field data ``TimeValue`` that ParaView shows as the time.
    """
    path = Path(path).with_suffix(".vtu")
    n_t = len(results.t)
    if not -n_t <= index < n_t:
        raise IndexError(f"`index` must be in [{-n_t}, {n_t - 1}] (the run has {n_t} outputs), got {index}")
    _check_frame(results, frame)
    path.parent.mkdir(parents=True, exist_ok=True)
    cells = _cells(results)
    import meshio
    points, point_data, cell_data = _state(results, index, cells, frame)
    meshio.vtu.write(path, meshio.Mesh(points, cells, point_data=point_data, cell_data=cell_data))
    # NOTE: meshio's VTU writer drops field data; VTK's TimeValue goes before the <Piece>
    text = path.read_bytes()
    at = text.index(b"<Piece")
    time_value = (b'<FieldData><DataArray type="Float64" Name="TimeValue" NumberOfTuples="1" '
                  b'format="ascii">' + repr(float(results.t[index])).encode() + b"</DataArray></FieldData>\n")
    text = text[:at] + time_value + text[at:]
    head = text.index(b"?>") + 2 if text.startswith(b"<?xml") else 0
    comment = f"\n<!-- flexmbs: frame {frame}; units {_units_json()}; stress components XX YY ZZ XY YZ XZ -->"
    path.write_bytes(text[:head] + comment.encode() + text[head:])
    return path


def export_paraview(results: Results, directory, stem: str = "paraview", every: int = 1) -> dict[str, Path]:
    """``DIR/STEM.xdmf`` (+ ``.h5``) with every output and ``DIR/STEM_final.vtu`` with the last,
    in the body frame, and the same in the global frame (``STEM_global.xdmf``,
    ``STEM_global_final.vtu``) when the results hold the frame motion."""
    directory = Path(directory)
    tic = time.perf_counter()
    files = {"xdmf": write_xdmf(results, directory / f"{stem}.xdmf", every=every)}
    if len(results.t):
        files["vtu"] = write_vtu(results, directory / f"{stem}_final.vtu")
    if results.frame:
        files["xdmf_global"] = write_xdmf(results, directory / f"{stem}_global.xdmf", every=every, frame="global")
        if len(results.t):
            files["vtu_global"] = write_vtu(results, directory / f"{stem}_global_final.vtu", frame="global")
    log.info("wrote %s (%.2f s)", ", ".join(str(f) for f in files.values()), time.perf_counter() - tic)
    return files
