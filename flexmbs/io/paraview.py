"""ParaView files: an XDMF + HDF5 time series of a run, and one state as VTU.

Both are written by `flexmbs.io.vtk_formats` (h5py and numpy; no meshio), in two versions:

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
``stress`` [Pa] and ``von_mises`` [Pa] of solids; plates add ``stress_bottom`` [Pa] (``stress``
is their top surface's) and ``shear_force`` [N/m] (the resultants Q_x, Q_y, body axes in every
file).  The stresses (`TENSOR_KEYS`) are written in ParaView's
component order of a symmetric tensor, **XX, YY, ZZ, XY, YZ, XZ** (`paraview_stress`;
flexmbs' own Voigt order in `Results.element_data` is xx, yy, zz, yz, xz, xy), in body
components in the body-frame files and ``R sigma R^T`` in the global ones.

A multibody `System` run (``Results.bodies``): `write_results_xdmf` writes every body in one
time series in the global frame (flexible meshes with their displacement and element data,
rigid bodies as boxes of their inertia with their axes, joints as points; docs/paraview.md,
"Mechanisms"), `write_results_vtu` its last state; `export_paraview` writes both for such a
run.  `write_system_xdmf` writes the same from a System and its coordinates q.

Units (SI) are in the files: the XDMF ``Domain`` has ``Information`` elements ``units``
(JSON: array name -> unit) and ``frame`` (body or global), its HDF5 file the same as root
attributes, and a VTU file an XML comment after its header.
"""
from __future__ import annotations

import errno
import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..results import Results
from ..rotations import ep_to_matrix, pad3 as _pad3
if TYPE_CHECKING:
    from .vtk_formats import XdmfSeries

__all__ = ["write_xdmf", "write_vtu", "export_paraview", "paraview_stress", "write_results_xdmf", "write_results_vtu",
           "write_system_xdmf", "body_placements", "marker_paths", "inertia_box", "display_shape", "global_scene",
           "UNITS", "FRAMES", "PARTS"]

log = logging.getLogger(__name__)

#: units of the arrays in the ParaView files
UNITS = {"coordinates": "m", "time": "s", "displacement": "m", "velocity": "m/s", "axial_force": "N",
         "stress": "Pa", "stress_bottom": "Pa", "von_mises": "Pa", "shear_force": "N/m"}
#: element data that are stress tensors in Voigt order (plates: ``stress_bottom`` at z = -t/2)
TENSOR_KEYS = ("stress", "stress_bottom")
FRAMES = ("body", "global")
# Voigt (xx, yy, zz, yz, xz, xy) -> ParaView (XX, YY, ZZ, XY, YZ, XZ)
_TO_PARAVIEW = [0, 1, 2, 5, 3, 4]
_VOIGT_PAIRS = [(0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1)]


def paraview_stress(voigt, rotation=None) -> np.ndarray:
    """Stresses (..., 6) in flexmbs' Voigt order xx, yy, zz, yz, xz, xy -> ParaView's order
    XX, YY, ZZ, XY, YZ, XZ; with ``rotation`` R (3, 3), or (..., 3, 3) broadcast against the
    stresses' leading axes, the components of ``R sigma R^T`` (body -> global components)."""
    voigt = np.asarray(voigt, dtype=float)
    if voigt.shape[-1] != 6:
        raise ValueError(f"`voigt` must have 6 components in its last axis, got shape {voigt.shape}")
    if rotation is None:
        return voigt[..., _TO_PARAVIEW]
    sigma = np.zeros(voigt.shape[:-1] + (3, 3))
    for k, (a, b) in enumerate(_VOIGT_PAIRS):
        sigma[..., a, b] = sigma[..., b, a] = voigt[..., k]
    R = np.asarray(rotation, dtype=float)
    sigma = np.einsum("...ia,...ab,...jb->...ij", R, sigma, R)
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


def _states(results: Results, steps, cells, frame: str):
    """(points (n_s, N, 3), point_data, cell_data) of the outputs ``steps`` in the given frame, all
    at once: the body frame's points are X (N, 3); the global frame's

        r = r_O + R (X + u),   R u,   v = v_O + R (omega x (X + u) + u')

    per output (omega in body components); the stresses in ParaView's order (`paraview_stress`),
    R sigma R^T in the global frame.  A cell field is (n_s, n_el, ...)."""
    steps = np.asarray(steps, dtype=int)
    X = _pad3(results.nodes)
    u = _pad3(np.asarray(results.displacement)[steps])
    v = _pad3(np.asarray(results.velocity)[steps])
    R = None
    if frame == "body":
        points, point_data = X, {"displacement": u, "velocity": v}
    else:
        fr = {k: np.asarray(a, dtype=float)[steps] for k, a in results.frame.items()}
        R = fr["rotation"]
        Rt = np.swapaxes(R, -1, -2)
        x = X + u
        points = fr["origin"][:, None] + x @ Rt
        absolute = fr["origin_velocity"][:, None] + (np.cross(fr["omega"][:, None], x) + v) @ Rt
        point_data = {"displacement": u @ Rt, "velocity": absolute}
    cell_data = {}
    if len(cells) == 1 and cells[0][0] != "vertex":
        n_el = len(cells[0][1])
        for k, a in results.element_data.items():
            if np.shape(a)[1:2] != (n_el,):
                continue
            a = np.asarray(a, dtype=float)[steps]
            if k in TENSOR_KEYS and a.shape[-1] == 6:
                a = paraview_stress(a, None if R is None else R[:, None])
            cell_data[k] = a
    return points, point_data, cell_data


# the series writers place this many outputs at a time: their memory does not grow with the run
SERIES_BLOCK = 1024


def _units_json() -> str:
    return json.dumps(UNITS)


def _check_room(h5: Path, n_steps: int, sizes: list[int]) -> None:
    """Raise an OSError with errno ENOSPC naming ``h5`` if the disk has less free space than
    ``n_steps`` steps of arrays of ``sizes`` numbers need, at 8 bytes a number with 2 kB of
    HDF5 headers per array.  A prediction, checked before writing because HDF5 may fail on a
    full disk where no error can be caught (in the deallocation of a dataset), which crashes
    the process at exit."""
    from ..disk import free_bytes
    need = n_steps * (8 * sum(sizes) + 2048 * len(sizes)) + 2 ** 20
    free = free_bytes(h5.parent)
    if free < need:
        raise OSError(errno.ENOSPC, f"No space left on device (about {need} bytes needed, {free} free)", str(h5))


def _result_sizes(results: Results, frame: str) -> list[int]:
    """Numbers in each array of one step of `write_xdmf`: displacement, velocity, the element
    data and, in the global frame, the node positions."""
    nodal = results.nodes.shape[0] * 3
    sizes = [nodal, nodal, *(np.asarray(a[0]).size for a in results.element_data.values())]
    return sizes + ([nodal] if frame == "global" else [])


def output_steps(n_t: int, every) -> list[int]:
    """Indices of the outputs a time series holds: every ``every``-th one and the last."""
    if not (isinstance(every, (int, np.integer)) and not isinstance(every, bool) and every >= 1):
        raise ValueError(f"`every` must be a positive integer, got {every!r}")
    return sorted(set(range(0, n_t, int(every))) | ({n_t - 1} if n_t else set()))


def _time_series(path: Path, info: dict) -> XdmfSeries:
    """The time series ``path`` (.xdmf, its .h5 beside it) with the ``info`` (name -> text) as
    XDMF ``Information`` elements and HDF5 root attributes.  The writers are imported here: every
    System run imports this module for `display_shape` and `marker_paths`, not to write files."""
    from .vtk_formats import XdmfSeries
    path.parent.mkdir(parents=True, exist_ok=True)
    return XdmfSeries(path, info)


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
    steps = output_steps(len(results.t), every)
    _check_frame(results, frame)
    cells = _cells(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    _check_room(path.with_suffix(".h5").resolve(), len(steps), _result_sizes(results, frame))
    with _time_series(path, {"units": _units_json(), "frame": frame}) as writer:
        if frame == "body" or not steps:
            writer.write_mesh(_pad3(results.nodes), cells)
        else:
            writer.write_mesh(_states(results, steps[:1], cells, frame)[0][0], cells)
        for first in range(0, len(steps), SERIES_BLOCK):         # the fields of a block of outputs at a time
            block = steps[first:first + SERIES_BLOCK]
            points, point_data, cell_data = _states(results, block, cells, frame)
            for k, i in enumerate(block):                         # one HDF5 dataset per array and output
                fields = {n: a[k] for n, a in point_data.items()}, {n: [a[k]] for n, a in cell_data.items()}
                if frame == "body":
                    writer.write_step(float(results.t[i]), *fields)
                else:
                    writer.write_moving_step(float(results.t[i]), points[k], *fields)
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
    points, point_data, cell_data = _states(results, [index], cells, frame)
    points = points if frame == "body" else points[0]
    return _vtu_with_time(path, points, cells, {n: a[0] for n, a in point_data.items()},
                          {n: [a[0]] for n, a in cell_data.items()}, float(results.t[index]), frame)


def _vtu_with_time(path: Path, points, cells, point_data, cell_data, t: float, frame: str) -> Path:
    """A VTU file of one state with its time ``t`` as VTK's ``TimeValue`` and the frame and units
    in an XML comment after its header."""
    from .vtk_formats import write_vtu_file
    return write_vtu_file(path, points, cells, point_data, cell_data, {"TimeValue": np.array([float(t)])},
                          f"flexmbs: frame {frame}; units {_units_json()}; stress components XX YY ZZ XY YZ XZ")


def export_paraview(results: Results, directory, stem: str = "paraview", every: int = 1) -> dict[str, Path]:
    """A Model's run: ``DIR/STEM.xdmf`` (+ ``.h5``) with every output and ``DIR/STEM_final.vtu``
    with the last, in the body frame, and the same in the global frame (``STEM_global.xdmf``,
    ``STEM_global_final.vtu``) when the results hold the frame motion.

    A System's run (``results.bodies``): every body in the global frame, ``DIR/STEM.xdmf``
    (`write_results_xdmf`) and ``DIR/STEM_final.vtu`` (`write_results_vtu`); a body frame has
    no meaning for several bodies."""
    directory = Path(directory)
    tic = time.perf_counter()
    if results.bodies:
        files = {"xdmf": write_results_xdmf(results, directory / f"{stem}.xdmf", every=every)}
        files["vtu"] = write_results_vtu(results, directory / f"{stem}_final.vtu")
        log.info("wrote %s (%.2f s)", ", ".join(str(f) for f in files.values()), time.perf_counter() - tic)
        return files
    files = {"xdmf": write_xdmf(results, directory / f"{stem}.xdmf", every=every)}
    if len(results.t):
        files["vtu"] = write_vtu(results, directory / f"{stem}_final.vtu")
    if results.frame:
        files["xdmf_global"] = write_xdmf(results, directory / f"{stem}_global.xdmf", every=every, frame="global")
        if len(results.t):
            files["vtu_global"] = write_vtu(results, directory / f"{stem}_global_final.vtu", frame="global")
    log.info("wrote %s (%.2f s)", ", ".join(str(f) for f in files.values()), time.perf_counter() - tic)
    return files


# -- mechanisms: every body of a System in one file ------------------------------------------------
#: values of the cell field ``part`` of `write_system_xdmf`: what a cell draws
PARTS = {"body": 0, "axis_x": 1, "axis_y": 2, "axis_z": 3, "joint": 4, "contact": 5}
_SMALLEST_SIDE = 0.02          # a box's half-size is at least this fraction of its largest one (visible)
# ParaView's XX, YY, ZZ, XY, YZ, XZ -> the XDMF model's Tensor6 order XX, XY, XZ, YY, YZ, ZZ (xdmf.org,
# "XDMF Model and Format", Attribute), in which VTK's XDMF reader expands a Tensor6 to 9 components
_PARAVIEW_TO_XDMF_TENSOR6 = [0, 3, 5, 1, 4, 2]


def body_placements(body, Q) -> tuple[np.ndarray, np.ndarray]:
    """Origin (n_t, 3) and rotation body -> global (n_t, 3, 3) of ``body`` at the coordinates
    ``Q`` (n_t, body.n_q) (`flexmbs.body_motion.body_frame`: all outputs at once when the body's q
    starts with (R, p) or is a planar (x, y, theta); other bodies through their public
    ``point(q, 0)`` and ``rotation(q)``, one output at a time)."""
    from ..body_motion import body_frame
    return body_frame(body, Q)


def marker_paths(body, Q, s) -> np.ndarray:
    """Global positions (n_t, 3) of the marker ``s`` of ``body`` at the coordinates ``Q``:
    r = R + A(p) (y0 + Phi q[columns]) from the body's ``frame_marker`` for all outputs at
    once, else its ``point(q, s)`` one output at a time."""
    Q = np.asarray(Q, dtype=float)
    if hasattr(body, "frame_marker"):
        y0, columns, Phi = body.frame_marker(s)
        y = y0 + Q[:, columns] @ Phi.T
        return Q[:, :3] + np.einsum("tij,tj->ti", ep_to_matrix(Q[:, 3:7]).reshape(len(Q), 3, 3), y)
    return np.array([_pad3(body.point(q, s)) for q in Q]).reshape(len(Q), 3)


def inertia_box(mass: float, principal) -> np.ndarray:
    """Half-sizes (a, b, c) [m] of the uniform box of mass m whose principal moments about its
    centre are (J1, J2, J3): J1 = m (b^2 + c^2) / 3 and cyclic, so

        a^2 = 3 (J2 + J3 - J1) / (2 m),  b^2 = 3 (J3 + J1 - J2) / (2 m),  c^2 = 3 (J1 + J2 - J3) / (2 m);

    a half-size below 2 % of the largest (a thin rod or plate) is raised to it so the box shows."""
    J = np.asarray(principal, dtype=float)
    half = np.sqrt(np.maximum(1.5 * (J.sum() - 2.0 * J) / mass, 0.0))
    return np.maximum(half, _SMALLEST_SIDE * half.max())


def _box(half) -> tuple[np.ndarray, list]:
    """The 8 corners (meshio's hexahedron order) of the box [-a, a] x [-b, b] x [-c, c], one hexahedron."""
    signs = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                      [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=float)
    return signs * half, [("hexahedron", np.arange(8)[None])]


def display_shape(body) -> tuple[np.ndarray, list]:
    """(points (n, 3) in body coordinates, cells) of a rigid body as drawn: the box of its mass and
    principal inertias at its centroid along its principal axes (`inertia_box`); a planar body a
    square plate of side 2 a, I_G = 2 m a^2 / 3, a quarter as thick; a point mass (or a planar
    body without inertia, or another body) a vertex.  `flexmbs.body_motion` stores it as the
    body's ``BodyResults.nodes`` and ``cells``."""
    from ..bodies.base import RigidBody
    from ..bodies.planar import RigidBody2D
    if isinstance(body, RigidBody):
        J, V = np.linalg.eigh(body.inertia_centroid)
        corners, cells = _box(inertia_box(body.mass, J))
        return body.centroid + corners @ V.T, cells
    if isinstance(body, RigidBody2D) and body.inertia > 0:
        a = np.sqrt(1.5 * body.inertia / body.mass)
        return _box(np.array([a, a, 0.25 * a]))
    return np.zeros((1, 3)), [("vertex", np.zeros((1, 1), dtype=np.int64))]


def _user_shape(name: str, shape) -> tuple[np.ndarray, list]:
    """(points (n, 3), cells) of ``shapes[name]``: a meshio.Mesh or (points, cells), cells a
    dict or list of (cell type, connectivity)."""
    if hasattr(shape, "points") and hasattr(shape, "cells"):
        points, cells = shape.points, [(c.type, c.data) for c in shape.cells]
    elif isinstance(shape, (tuple, list)) and len(shape) == 2:
        points, cells = shape
        cells = list(cells.items()) if isinstance(cells, dict) else list(cells)
    else:
        raise TypeError(f"`shapes[{name!r}]` must be a meshio.Mesh or (points, cells), got {type(shape).__name__}")
    points = np.asarray(points, dtype=float)
    if points.ndim != 2 or points.shape[1] not in (2, 3) or not len(points) or not np.all(np.isfinite(points)):
        raise ValueError(f"`shapes[{name!r}]`: the points must be a finite (n, 2) or (n, 3) array, "
                         f"got shape {points.shape}")
    out = []
    for cell_type, conn in cells:
        conn = np.asarray(conn)
        if conn.ndim != 2 or not np.issubdtype(conn.dtype, np.integer) or conn.min(initial=0) < 0 \
                or conn.max(initial=0) >= len(points):
            raise ValueError(f"`shapes[{name!r}]`: the {cell_type!r} cells must be an integer (n, k) array of "
                             f"point indices in [0, {len(points) - 1}], got {conn.dtype} {conn.shape}")
        out.append((str(cell_type), conn.astype(np.int64)))
    if not out:
        raise ValueError(f"`shapes[{name!r}]` has no cells")
    return _pad3(points), out


def _axes(length: float) -> tuple[np.ndarray, list, list]:
    """Frame axes: the origin and the tips of x, y, z at ``length``, three line cells."""
    points = np.vstack([np.zeros(3), length * np.eye(3)])
    return points, [("line", np.array([[0, 1], [0, 2], [0, 3]]))], [PARTS["axis_x"], PARTS["axis_y"], PARTS["axis_z"]]


def _placed(origin, A, Y) -> np.ndarray:
    """Global positions (n_t, n, 3) r = R + A y of body points Y (n, 3) or (n_t, n, 3)."""
    Y = np.broadcast_to(Y, (len(A),) + np.shape(Y)[-2:])
    return origin[:, None] + np.einsum("tij,tpj->tpi", A, Y)


def _piece(points, cells, parts, point_data=None, cell_data=None) -> dict:
    return dict(points=points, cells=cells, parts=np.asarray(parts, dtype=np.int64), point_data=point_data or {},
                cell_data=cell_data or {})


def _flexible_piece(b) -> dict:
    """A flexible body (`BodyResults`): its mesh at R + A (X + u), point data ``displacement`` A u,
    cell data its element data (``axial_force``; ``stress`` R sigma R^T in the XDMF Tensor6 order,
    ``von_mises``)."""
    elements = dict(b.element_data)
    for k in TENSOR_KEYS:
        if k in elements:
            elements[k] = paraview_stress(elements[k], b.rotation[:, None])[..., _PARAVIEW_TO_XDMF_TENSOR6]
    cells = [(k, np.asarray(c, dtype=np.int64)) for k, c in b.cells.items()]
    return _piece(b.global_positions(), cells, np.full(sum(len(c) for _, c in cells), PARTS["body"]),
                  {"displacement": b.global_displacement()}, elements)


def _corotational_piece(b) -> dict:
    """A corotational beam (`BodyResults`): its nodes joined by its elements, point data
    ``displacement`` from the reference nodes."""
    cells = [(k, np.asarray(c, dtype=np.int64)) for k, c in b.cells.items()]
    return _piece(b.global_positions(), cells, np.full(sum(len(c) for _, c in cells), PARTS["body"]),
                  {"displacement": b.global_displacement()})


def _rigid_piece(b) -> dict:
    """A rigid body or point mass (`BodyResults`): its shape (``nodes``, ``cells``: `display_shape`
    or the user's) placed at R + A y, and its frame axes as three line cells, 0.75 times the
    shape's largest extent long (1.5 times a box's largest half-size; none for a vertex)."""
    Y = _pad3(b.nodes) if b.nodes is not None else np.zeros((1, 3))
    cells = [(k, np.asarray(c, dtype=np.int64)) for k, c in b.cells.items()] or \
        [("vertex", np.zeros((1, 1), dtype=np.int64))]
    parts = [PARTS["body"]] * sum(len(c) for _, c in cells)
    length = 0.75 * float(np.ptp(Y, axis=0).max())
    if length > 0:
        axes, axis_cells, axis_parts = _axes(length)
        cells = cells + [(t, c + len(Y)) for t, c in axis_cells]
        Y, parts = np.vstack([Y, axes]), parts + axis_parts
    return _piece(_placed(b.position, b.rotation, Y), cells, parts)


def _joint_piece(joints: dict, n_t: int) -> dict:
    """The joints ({name: positions (n_t, 3)}, `Results.joints`) as vertices."""
    points = np.stack(list(joints.values()), axis=1) if joints else np.zeros((n_t, 0, 3))
    cells = [("vertex", np.arange(len(joints))[:, None])] if joints else []
    return _piece(points, cells, [PARTS["joint"]] * len(joints))


def _contact_piece(contacts: dict, n_t: int) -> dict:
    """The contacts ({name: its records}, `Results.contacts`) as vertices at their points, cell data
    ``normal_force`` and ``friction_force`` [N] on the contacts' side b; an empty slot is a vertex at
    the origin with zero forces (ParaView: *Threshold* on ``part`` 5, or on the forces)."""
    if not contacts:
        return _piece(np.zeros((n_t, 0, 3)), [], [])
    points = np.concatenate([np.nan_to_num(c["point"]) for c in contacts.values()], axis=1)
    data = {k: np.concatenate([np.nan_to_num(c[k]) for c in contacts.values()], axis=1)
            for k in ("normal_force", "friction_force")}
    n = points.shape[1]
    return _piece(points, [("vertex", np.arange(n)[:, None])], [PARTS["contact"]] * n, cell_data=data)


def _results_pieces(results: Results) -> tuple[list[dict], list[int]]:
    """One piece per body of ``results.bodies`` (and one of the joints, body index -1, and one of the
    contacts, -2)."""
    draw = {"flexible": _flexible_piece, "corotational": _corotational_piece}
    pieces = [draw.get(b.kind, _rigid_piece)(b) for b in results.bodies.values()]
    owners = list(range(len(pieces)))
    joints = _joint_piece(results.joints, len(results.t))
    if len(joints["parts"]):
        pieces.append(joints)
        owners.append(-1)
    contacts = _contact_piece(results.contacts, len(results.t))
    if len(contacts["parts"]):
        pieces.append(contacts)
        owners.append(-2)
    return pieces, owners


def _merged(pieces, owners) -> tuple[np.ndarray, list, dict, dict, dict]:
    """Points (n_t, N, 3), cell blocks, point data and cell data (n_t, n_cells, ...) of all
    pieces in one grid (a field a piece lacks is 0 on its points (displacement) or NaN on its
    cells) and the constant cell fields ``body`` (index in system.bodies, -1 joints) and
    ``part`` (`PARTS`)."""
    offsets = np.cumsum([0] + [p["points"].shape[1] for p in pieces])
    n_t = pieces[0]["points"].shape[0]
    points = np.concatenate([p["points"] for p in pieces], axis=1)
    cells = [(t, c + offsets[k]) for k, p in enumerate(pieces) for t, c in p["cells"]]
    displacement = np.concatenate([p["point_data"].get("displacement", np.zeros(p["points"].shape))
                                   for p in pieces], axis=1)
    n_cells = [len(p["parts"]) for p in pieces]
    cell_data = {}
    for name in dict.fromkeys(k for p in pieces for k in p["cell_data"]):
        tail = next(np.shape(p["cell_data"][name])[2:] for p in pieces if name in p["cell_data"])
        cell_data[name] = np.concatenate([p["cell_data"].get(name, np.full((n_t, n) + tail, np.nan))
                                          for p, n in zip(pieces, n_cells)], axis=1)
    constant = {"body": np.repeat(np.asarray(owners, dtype=np.int64), n_cells),
                "part": np.concatenate([p["parts"] for p in pieces])}
    return points, cells, {"displacement": displacement}, cell_data, constant


def global_scene(results: Results, steps) -> tuple[np.ndarray, list, dict, dict, dict]:
    """Every body and joint of a System run at the outputs ``steps`` in one grid in the global frame,
    as `write_results_xdmf` writes it and `flexmbs.viewer` draws it: all outputs at once, no loop
    over them.

    Returns
    -------
    points : ndarray (n_s, N, 3)
        Node positions [m] at each of the n_s outputs: a flexible body's R + A (X + u), a rigid
        body's shape and axes R + A y, a corotational beam's nodes, the joints.
    cells : list of (meshio cell type, ndarray (n, k))
        The cell blocks, indices into the N points.
    point_data : dict
        ``displacement`` (n_s, N, 3): the elastic displacement A u in global components (0 on
        the points of rigid bodies and joints).
    cell_data : dict[str, ndarray (n_s, n_cells, ...)]
        The bodies' element data (``axial_force``, ``von_mises``, ``stress`` in the XDMF Tensor6
        order), NaN on the cells of bodies without it.
    constant : dict[str, ndarray (n_cells,)]
        ``body`` (index in ``results.bodies``, -1 the joints) and ``part`` (`PARTS`).
    """
    return _merged(*_results_pieces(_at_outputs(results, steps)))


def _check_results(results) -> None:
    if not isinstance(results, Results):
        raise TypeError(f"`results` must be a flexmbs.Results, got {type(results).__name__}")
    if not results.bodies:
        raise ValueError("`results` holds no bodies (a Model's run: write it with `write_xdmf` or "
                         "`export_paraview`); the global-frame series of every body needs a System's run")


def write_results_xdmf(results: Results, path, every: int = 1) -> Path:
    """Write every body of a `System` run (``results.bodies`` and ``results.joints``) as ``path``
    (.xdmf) and its data file (.h5) beside it: one XDMF temporal collection in the global frame,
    one grid per output.  The data file holds one dataset per field over all outputs
    (``series/geometry`` (n_t, N, 3), ``series/displacement``, ``series/NAME`` of the cell fields),
    from which each grid selects its output by an XDMF ``HyperSlab`` (`_series_step`).

    Each output's grid holds all bodies (cell field ``body``: the body's index in
    ``results.bodies``, the System's order, -1 for the joints, -2 for the contacts; ``part``: `PARTS`,
    0 the body, 1-3 its x, y, z axis, 4 a joint, 5 a contact):

    - a flexible body: its mesh with the nodes at ``R + A (X + u)``, point data
      ``displacement`` (``A u``, the elastic displacement in global components), cell data
      ``axial_force`` [N] (bars, beams) or ``stress`` [Pa] (global components in the XDMF
      model's Tensor6 order XX, XY, XZ, YY, YZ, ZZ, which VTK's XDMF reader expands to the
      full tensor) and ``von_mises`` (solids), NaN on the other bodies' cells;
    - a corotational beam: its nodes joined by its elements (a polyline), ``displacement``
      from its reference nodes;
    - a rigid body: its shape (``BodyResults.nodes``, ``cells``: the box of its mass and
      principal inertias, `display_shape`) at ``R + A y``, plus its frame axes as three line
      cells from its reference point, 0.75 times the shape's largest extent long (1.5 times the
      box's largest half-size); a point mass: a vertex;
    - the joints: vertices at ``results.joints`` (names in the XDMF ``Information`` "joints",
      in order);
    - the contacts (`Results.contacts`): a vertex per recorded slot at its point, cell data
      ``normal_force`` and ``friction_force`` [N] (on side b), an empty slot at the origin with zero
      forces.

    Parameters
    ----------
    results : Results
        Of a System run (`flexmbs.run(system)`, or `flexmbs.load_results` of its file).
    path : str or Path
        The XDMF file; the heavy data go to the same name with suffix ``.h5``.
    every : int
        Write every ``every``-th output (the last one always).

    Returns
    -------
    Path
        The XDMF file (ParaView: *Xdmf3 Reader S/T* or *XDMF Reader*; colour by ``body``,
        *Threshold* on ``part`` to hide the axes or the joints).
    """
    path = Path(path).with_suffix(".xdmf")
    _check_results(results)
    steps = output_steps(len(results.t), every)
    if not steps:
        raise ValueError("`results` has no output: there is nothing to write")
    blocks = [steps[first:first + SERIES_BLOCK] for first in range(0, len(steps), SERIES_BLOCK)]
    points, cells, point_data, cell_data, constant = global_scene(results, blocks[0])
    path.parent.mkdir(parents=True, exist_ok=True)
    _check_room(path.with_suffix(".h5").resolve(), len(steps),
                [points[0].size, point_data["displacement"][0].size, *(a[0].size for a in cell_data.values())])
    info = {"units": _units_json(), "frame": "global", "bodies": json.dumps(list(results.bodies)),
            "joints": json.dumps(list(results.joints)), "parts": json.dumps(PARTS)}
    tic = time.perf_counter()
    with _time_series(path, info) as writer:
        writer.write_mesh(points[0], cells)
        series = _series_step(writer, np.asarray(results.t)[steps], {"geometry": points}, point_data, cell_data,
                              constant)
        first = len(blocks[0])
        for block in blocks[1:]:                                  # the fields of a block of outputs at a time
            points, _, point_data, cell_data, _ = global_scene(results, block)
            for name, data in {"geometry": points, **point_data, **cell_data}.items():
                series[name][first:first + len(block)] = data
            first += len(block)
    log.info("wrote %s (%d outputs, %.2f s)", path, len(steps), time.perf_counter() - tic)
    return path


def _series_step(writer: XdmfSeries, t, geometry, point_data, cell_data, constant) -> dict:
    """Creates one HDF5 dataset ``/series/NAME`` (n_t, ...) per field, of the shape and type of its
    first block of outputs (n_b, ...) in ``geometry`` ({"geometry": (n_b, N, 3)}), ``point_data`` and
    ``cell_data``, holding that block (all of the field when n_b = n_t), stores the ``constant`` cell
    fields once, and fills the writer's series step (`XdmfSeries.series_step`, one copy per output
    time of ``t`` (n_t,)): its geometry and attributes are XDMF ``HyperSlab``s of output ``@K@`` of
    those datasets (start k 0 ..., stride 1, count 1 n ...).  Returns {name: its dataset} for the
    caller to fill with the other blocks.  One dataset per field, not per output: HDF5 datasets cost
    about 0.3 ms each to create (docs/benchmarks.md, sec. 11.4), made by `flexmbs.io.h5create`'s
    low-level calls (h5py's ``create_dataset`` costs half a millisecond more in Python)."""
    import h5py

    from .h5create import new_dataset
    from .vtk_formats import SERIES_INDEX, attribute_type, comment, sub_element, xdmf_number_type
    series = {}
    n_t = len(t)

    def slab(parent, name, block) -> None:
        """A HyperSlab DataItem of output @K@ of the dataset /series/NAME (n_t, ...) of ``block``'s
        type, which holds ``block`` (n_b, ...) at its start."""
        one = block[0]
        shape = (n_t,) + one.shape
        whole = len(block) == n_t
        series[name] = h5py.Dataset(new_dataset(writer.h5.id, f"series/{name}", block if whole else None,
                                                shape=shape, dtype=block.dtype))
        if not whole:
            series[name][:len(block)] = block
        number, precision = xdmf_number_type(one.dtype)
        item = sub_element(parent, "DataItem", ItemType="HyperSlab", Type="HyperSlab",
                           Dimensions=" ".join(map(str, one.shape)))
        # NOTE: VTK's XDMF reader keys its geometry cache on the text of the Geometry's first
        # DataItem's first child (vtkXdmfHeavyData::ReadUniformData) and logs an error for each
        # step when that child is an element; this comment is that child, one per output
        item.append(comment(f"series/{name} at output {SERIES_INDEX}"))
        select = sub_element(item, "DataItem", Dimensions=f"3 {len(shape)}", Format="XML")
        select.text = " ".join([SERIES_INDEX] + ["0"] * one.ndim + ["1"] * len(shape) + ["1"]
                               + [str(n) for n in one.shape])
        source = sub_element(item, "DataItem", DataType=number, Precision=precision, Format="HDF",
                             Dimensions=" ".join(map(str, shape)))
        source.text = f"{writer.data_name}:/series/{name}"

    grid = writer.series_step(t)
    slab(sub_element(grid, "Geometry", GeometryType="XYZ"), "geometry", np.asarray(geometry["geometry"]))
    for center, fields in (("Node", point_data), ("Cell", cell_data)):
        for name, block in fields.items():
            block = np.asarray(block)
            attribute = sub_element(grid, "Attribute", Name=name, AttributeType=attribute_type(block.shape[1:]),
                                    Center=center)
            slab(attribute, name, block)
    for name, data in constant.items():
        writer.constant_cell_field(grid, name, np.asarray(data))
    return series


def write_results_vtu(results: Results, path, index: int = -1) -> Path:
    """Write output ``index`` (default the last) of a System run as one VTU file: every body and
    joint in the global frame as in `write_results_xdmf` (the ``stress`` in ParaView's order XX,
    YY, ZZ, XY, YZ, XZ, as `write_vtu`), with its time as VTK's ``TimeValue``."""
    path = Path(path).with_suffix(".vtu")
    _check_results(results)
    n_t = len(results.t)
    if not -n_t <= index < n_t:
        raise IndexError(f"`index` must be in [{-n_t}, {n_t - 1}] (the run has {n_t} outputs), got {index}")
    at = _at_outputs(results, [index % n_t])
    points, cells, point_data, cell_data, constant = _merged(*_results_pieces(at))
    for k in TENSOR_KEYS:                           # back from the XDMF Tensor6 order to ParaView's
        if k in cell_data:
            cell_data[k] = cell_data[k][..., np.argsort(_PARAVIEW_TO_XDMF_TENSOR6)]
    rows = np.cumsum([0] + [len(c) for _, c in cells])          # VTU cell data: one array per cell block
    fields = {**{n: a[0] for n, a in cell_data.items()}, **constant}
    path.parent.mkdir(parents=True, exist_ok=True)
    return _vtu_with_time(path, points[0], cells, {n: a[0] for n, a in point_data.items()},
                          {n: [v[a:b] for a, b in zip(rows[:-1], rows[1:])] for n, v in fields.items()},
                          float(at.t[0]), "global")


def _at_outputs(results: Results, steps) -> Results:
    """The bodies, joints and times of ``results`` at the outputs ``steps`` (``results`` itself if
    those are all its outputs: no copy; views of its arrays if they are consecutive, as the blocks
    of a series written with ``every=1`` are: no copy either)."""
    from ..body_motion import body_outputs
    steps = np.asarray(steps)
    if len(steps) == len(results.t) and np.array_equal(steps, np.arange(len(results.t))):
        return results
    if len(steps) and steps[-1] - steps[0] == len(steps) - 1 and np.all(np.diff(steps) == 1):
        steps = slice(int(steps[0]), int(steps[-1]) + 1)
    return Results(t=np.asarray(results.t)[steps], bodies={n: body_outputs(b, steps) for n, b in results.bodies.items()},
                   joints={n: np.asarray(r)[steps] for n, r in results.joints.items()},
                   contacts={n: {k: np.asarray(v)[steps] for k, v in c.items()} for n, c in results.contacts.items()})


def _check_system_input(system, t, q, shapes) -> tuple[np.ndarray, np.ndarray, dict]:
    from ..system import System
    if not isinstance(system, System):
        raise TypeError(f"`system` must be a flexmbs.System, got {type(system).__name__}")
    t, q = np.asarray(t, dtype=float), np.asarray(q, dtype=float)
    if t.ndim != 1:
        raise ValueError(f"`t` must be a 1-D array of output times, got shape {t.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError(f"`t` must be finite, got {int(np.sum(~np.isfinite(t)))} non-finite values")
    if q.shape != (len(t), system.n_q):
        raise ValueError(f"`q` must have shape (len(t), system.n_q) = ({len(t)}, {system.n_q}) (the coordinates; "
                         f"of a state x = (q, v) pass x[:, :system.n_q]), got {q.shape}")
    if not np.all(np.isfinite(q)):
        raise ValueError(f"`q` has {int(np.sum(~np.isfinite(q)))} non-finite values (a failed run: pass the "
                         "outputs before the failure)")
    shapes = {} if shapes is None else shapes
    if not isinstance(shapes, dict):
        raise TypeError(f"`shapes` must be a dict {{body name: meshio.Mesh or (points, cells)}}, "
                        f"got {type(shapes).__name__}")
    names = [b.name for b in system.bodies]
    unknown = sorted(set(shapes) - set(names))
    if unknown:
        raise ValueError(f"`shapes` names no body of the system: {unknown}; bodies: {names}")
    return t, q, shapes


def write_system_xdmf(system, t, q, path, every: int = 1, shapes: dict | None = None) -> Path:
    """Write the motion of every body of a multibody ``system`` at the coordinates ``q`` as
    ``path`` (.xdmf, its data file .h5 beside it): one XDMF time series in the global frame,
    the same as `write_results_xdmf` of a run's `Results` (the bodies of
    `flexmbs.body_motion.body_histories`, the joints of ``joint_histories``), which writes it.

    Parameters
    ----------
    system : flexmbs.System
    t : array (n_t,)
        Output times [s].
    q : array (n_t, system.n_q)
        The coordinates at those times (of a state x = (q, v): ``x[:, :system.n_q]``).
    path : str or Path
        The XDMF file; the heavy data go to the same name with suffix ``.h5``.
    every : int
        Write every ``every``-th output (the last one always).
    shapes : dict, optional
        ``{body name: meshio.Mesh or (points, cells)}``: a rigid body's or point mass's shape in
        its body coordinates (relative to its reference point) instead of `display_shape`.

    Returns
    -------
    Path
        The XDMF file (see `write_results_xdmf`).
    """
    from ..body_motion import body_histories, joint_histories
    t, q, shapes = _check_system_input(system, t, q, shapes)
    steps = output_steps(len(t), every)
    if not steps:
        raise ValueError("`t` is empty: there is no output to write")
    bodies = body_histories(system, q[steps], np.zeros_like(q[steps]))
    for name, shape in shapes.items():
        bodies[name] = _with_shape(bodies[name], shape)
    results = Results(t=t[steps], bodies=bodies, joints=joint_histories(system, q[steps]))
    return write_results_xdmf(results, path)


def _with_shape(body, shape):
    """``body`` (`BodyResults` of a rigid body or point mass) drawn as the user's ``shape``."""
    if body.kind not in ("rigid", "point"):
        raise ValueError(f"`shapes[{body.name!r}]`: body {body.name!r} is {body.kind}; it is drawn as its mesh "
                         "(shapes replace the box of a rigid body or the vertex of a point mass)")
    points, cells = _user_shape(body.name, shape)
    joined = {}
    for cell_type, conn in cells:
        joined[cell_type] = np.vstack([joined[cell_type], conn]) if cell_type in joined else conn
    return body.replace(nodes=points, cells=joined)
