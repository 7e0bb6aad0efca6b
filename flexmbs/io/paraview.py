"""ParaView files: an XDMF + HDF5 time series of a run, and one state as VTU.

Both are written through meshio.  The mesh is the body in its frame (undeformed nodes, padded
to 3D); each time step carries the point data ``displacement`` and ``velocity`` (3 components,
planar results padded with a zero z component, body-frame components relative to the frame)
and the cell data of ``Results.element_data`` (``axial_force`` of bars and beams, ``stress``
and ``von_mises`` of solids).  Beams and bars are line cells, solids their own cells.  In
ParaView, apply *Warp By Vector* with ``displacement`` (and a scale factor) to see the
deformed body.
"""
from __future__ import annotations

import contextlib
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..results import Results

__all__ = ["write_xdmf", "write_vtu", "export_paraview"]


def _pad3(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if a.shape[-1] == 3:
        return a
    return np.concatenate([a, np.zeros(a.shape[:-1] + (3 - a.shape[-1],))], axis=-1)


def _cells(results: Results) -> list[tuple[str, np.ndarray]]:
    if results.cells:
        return [(k, np.asarray(v, dtype=np.int64)) for k, v in results.cells.items()]
    n_nodes = len(results.nodes)                  # e.g. a results.npz: the nodes as vertices
    return [("vertex", np.arange(n_nodes, dtype=np.int64)[:, None])]


def _cell_data(results: Results, i: int, cells) -> dict[str, list[np.ndarray]]:
    if len(cells) != 1 or cells[0][0] == "vertex":
        return {}
    n_el = len(cells[0][1])
    return {k: [np.asarray(v[i], dtype=float)] for k, v in results.element_data.items()
            if np.shape(v)[1:2] == (n_el,)}


def _writer_class():
    """meshio's time-series writer, with the node count of Polyline topologies (meshio is
    imported here, when a file is written, not with flexmbs).

    NOTE: meshio 5.3 writes line cells as ``TopologyType="Polyline"`` without
    ``NodesPerElement``, which the XDMF model requires for polylines (VTK's XDMF2 reader
    infers it from the array's shape; other readers need it); this adds it.
    """
    from meshio.xdmf.time_series import TimeSeriesWriter

    class _Writer(TimeSeriesWriter):
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

    return _Writer


def write_xdmf(results: Results, path, every: int = 1) -> Path:
    """Write the time series of ``results`` as ``path`` (.xdmf) and its data file (.h5) beside it.

    Parameters
    ----------
    results : Results
    path : str or Path
        The XDMF file; the heavy data go to the same name with suffix ``.h5``.
    every : int
        Write every ``every``-th output (the last one always).

    Returns
    -------
    Path
        The XDMF file (open it in ParaView with the *Xdmf3 Reader S* or *Xdmf3 Reader T*).
    """
    path = Path(path).with_suffix(".xdmf")
    if not (isinstance(every, int) and every >= 1):
        raise ValueError(f"`every` must be a positive integer, got {every!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    cells = _cells(results)
    n_t = len(results.t)
    steps = sorted(set(range(0, n_t, every)) | ({n_t - 1} if n_t else set()))
    # NOTE: meshio writes the .h5 file into the working directory, not beside the .xdmf
    with contextlib.chdir(path.parent), _writer_class()(path.name) as writer:
        writer.write_points_cells(_pad3(results.nodes), cells)
        for i in steps:
            writer.write_data(float(results.t[i]),
                              point_data={"displacement": _pad3(results.displacement[i]),
                                          "velocity": _pad3(results.velocity[i])},
                              cell_data=_cell_data(results, i, cells))
    return path


def write_vtu(results: Results, path, index: int = -1) -> Path:
    """Write output ``index`` (default the last) of ``results`` as one VTU file.

    The time [s] is stored as the field data ``TimeValue`` that ParaView shows as the time.
    """
    path = Path(path).with_suffix(".vtu")
    n_t = len(results.t)
    if not -n_t <= index < n_t:
        raise IndexError(f"`index` must be in [{-n_t}, {n_t - 1}] (the run has {n_t} outputs), got {index}")
    path.parent.mkdir(parents=True, exist_ok=True)
    cells = _cells(results)
    import meshio
    mesh = meshio.Mesh(_pad3(results.nodes), cells,
                       point_data={"displacement": _pad3(results.displacement[index]),
                                   "velocity": _pad3(results.velocity[index])},
                       cell_data=_cell_data(results, index, cells))
    meshio.vtu.write(path, mesh)
    # NOTE: meshio's VTU writer drops field data; VTK's TimeValue goes before the <Piece>
    text = path.read_bytes()
    at = text.index(b"<Piece")
    time_value = (b'<FieldData><DataArray type="Float64" Name="TimeValue" NumberOfTuples="1" '
                  b'format="ascii">' + repr(float(results.t[index])).encode() + b"</DataArray></FieldData>\n")
    path.write_bytes(text[:at] + time_value + text[at:])
    return path


def export_paraview(results: Results, directory, stem: str = "paraview", every: int = 1) -> dict[str, Path]:
    """``DIR/STEM.xdmf`` (+ ``.h5``) with every output and ``DIR/STEM_final.vtu`` with the last."""
    directory = Path(directory)
    files = {"xdmf": write_xdmf(results, directory / f"{stem}.xdmf", every=every)}
    if len(results.t):
        files["vtu"] = write_vtu(results, directory / f"{stem}_final.vtu")
    return files
