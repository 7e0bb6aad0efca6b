"""Results files: runs streamed to HDF5 while they run, and `load_results`.

One file holds one or more runs (a case may run several, e.g. undamped and damped), each a
group.  Layout, format ``flexmbs-results`` version 1:

.. code:: text

    /                           attrs: format, format_version, flexmbs_version, created, main
    /<run>/                     attrs: metadata (JSON), status, message, stats (JSON), order
    /<run>/nodes                (n_nodes, dim)         undeformed nodes, body frame [m]
    /<run>/cells/<type>         (n_el, nodes per cell) the element's cells (meshio names)
    /<run>/t                    (n_t,)                 output times [s]
    /<run>/delta, delta_dot     (n_t, n)               free DOFs [m, rad] and rates
    /<run>/displacement         (n_t, n_nodes, dim)    nodal displacements, body frame [m]
    /<run>/velocity             (n_t, n_nodes, dim)    [m/s]
    /<run>/energies             (n_t, 8)               [J] T, T2, T1, T0, V, V_geo, V_g, jacobi
    /<run>/works                (n_t, 4)               [J] W_loads, W_damping, W_frame, W_stiffening
    /<run>/element_data/<name>  (n_t, n_el, ...)       e.g. axial_force [N], stress [Pa]
    /<run>/frame/origin         (n_t, 3)               frame origin, global [m]
    /<run>/frame/origin_velocity (n_t, 3)              its velocity, global [m/s]
    /<run>/frame/rotation       (n_t, 3, 3)            R, body -> global components
    /<run>/frame/euler_parameters (n_t, 4)             e0, e1, e2, e3 of R
    /<run>/frame/omega          (n_t, 3)               angular velocity, body components [rad/s]

Every dataset has an attribute ``units`` (e.g. "m", "Pa", "1" for dimensionless; for the
DOFs "m or rad"), the root an attribute ``units`` naming the system (SI).

``energies`` and ``works`` are tables: their attribute ``columns`` (JSON) names the columns
(see `flexmbs.Results` for their meaning).  The works are integrals over the whole run and
are written when it ends.

Outputs are appended to each time series and flushed as the run goes on: `flexmbs.run` writes
them in blocks, at least every half second of wall time (and at the end, and before an
exception ends the run), so that writing does not cost more than the integration.
During a run the file is in HDF5's single-writer/multiple-reader (SWMR) mode, in which the
library orders its writes so that the file on disk is always consistent: a run that is
killed, crashes or diverges leaves a readable file with every output written before.
`load_results` opens files in SWMR read mode, so a file can also be read while it is written.
"""
from __future__ import annotations

import datetime
import json
import logging
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import h5py
import numpy as np

from ..results import Results

__all__ = ["ResultsFile", "RunWriter", "load_results", "save_results", "list_runs", "recording",
           "active_recording",
           "FORMAT", "FORMAT_VERSION"]

log = logging.getLogger(__name__)

FORMAT = "flexmbs-results"
FORMAT_VERSION = 1
LIBVER = ("v110", "latest")          # SWMR needs the HDF5 1.10 file format (ParaView's HDF5 reads it)
CHUNK_BYTES = 32 * 1024              # target chunk size of the time series
INCOMPLETE = "incomplete"            # status of a run whose writer never closed it
UNITS_SYSTEM = "SI: m, kg, s, N, Pa, J, rad"
#: units of the datasets of a run (by name; element data by its own name)
UNITS = {"nodes": "m", "t": "s", "delta": "m or rad", "delta_dot": "m/s or rad/s", "displacement": "m",
         "velocity": "m/s", "energies": "J", "works": "J", "axial_force": "N", "stress": "Pa",
         "von_mises": "Pa", "origin": "m", "origin_velocity": "m/s", "rotation": "1", "euler_parameters": "1",
         "omega": "rad/s"}


def _units(key: str) -> str | None:
    return UNITS.get(key.rsplit("/", 1)[-1])


def _version() -> str:
    from .. import __version__
    return __version__


def _jsonable(value):
    """JSON fallback: numpy scalars and arrays as Python numbers and lists, anything else as str."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return str(value)


def to_json(value) -> str:
    """``json.dumps`` that accepts numpy values, tuples, paths and other objects (as strings)."""
    return json.dumps(value, default=_jsonable)


class ResultsFile:
    """An HDF5 results file to which runs are added while they run.

    Creating it truncates ``path``.  Each `open_run` adds a group and returns its `RunWriter`;
    runs are written one after the other.

    Parameters
    ----------
    path : str or Path
    metadata : dict, optional
        Merged into every run's metadata (the run's own keys win), e.g. the case and its
        resolved parameters.
    """

    def __init__(self, path, metadata: dict | None = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.metadata = dict(metadata or {})
        self.runs: list[str] = []
        self._active: RunWriter | None = None
        with h5py.File(self.path, "w", libver=LIBVER) as f:
            f.attrs["format"] = FORMAT
            f.attrs["format_version"] = FORMAT_VERSION
            f.attrs["flexmbs_version"] = _version()
            f.attrs["created"] = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
            f.attrs["main"] = ""
            f.attrs["units"] = UNITS_SYSTEM

    def open_run(self, name: str | None = None, *, nodes, cells: dict, metadata: dict | None = None
                 ) -> RunWriter:
        """Add a run group (name made unique with a suffix _2, _3, ...) and return its writer.

        Parameters
        ----------
        name : str, optional
            Default "run".
        nodes : ndarray, shape (n_nodes, dim)
        cells : dict[str, ndarray]
            Cell type -> connectivity of the cells the results refer to.
        metadata : dict, optional
        """
        if self._active is not None and not self._active.closed:
            raise RuntimeError(f"run {self._active.name!r} of {self.path} is still being written; "
                               "finish or abort it before opening another")
        base = str(name or "run").replace("/", "_")
        unique, k = base, 1
        while unique in self.runs:
            k += 1
            unique = f"{base}_{k}"
        writer = RunWriter(self.path, unique, nodes, cells, {**self.metadata, **(metadata or {})},
                           order=len(self.runs))
        self.runs.append(unique)
        self._active = writer
        return writer

    def add(self, results: Results, name: str | None = None) -> str:
        """Add a whole `Results` as a run (e.g. one computed without a store); returns its name."""
        with self.open_run(name or results.metadata.get("run"), nodes=results.nodes, cells=results.cells,
                           metadata=results.metadata) as writer:
            works = {k: v for k, v in results.energies.items() if k.startswith("W_")}
            energies = {k: v for k, v in results.energies.items() if k not in works}
            for i, t in enumerate(results.t):
                fields = {"t": t, "delta": results.delta[i], "delta_dot": results.delta_dot[i],
                          "displacement": results.displacement[i], "velocity": results.velocity[i]}
                if energies:
                    fields["energies"] = {k: v[i] for k, v in energies.items()}
                fields.update({f"element_data/{k}": v[i] for k, v in results.element_data.items()})
                fields.update({f"frame/{k}": v[i] for k, v in results.frame.items()})
                writer.append(fields)
            writer.finish(results.status, results.message, results.stats,
                          series={"works": works} if works else None)
        return writer.name

    def __repr__(self) -> str:
        return f"ResultsFile({str(self.path)!r}, runs={self.runs})"


class RunWriter:
    """Appends the outputs of one run to its group, flushing after each; see `ResultsFile`.

    Use `append` for each output, then `finish` (or `abort` on an exception).  As a context
    manager it aborts on an exception and otherwise finishes with status "finished" if
    `finish` was not called.
    """

    def __init__(self, path: Path, name: str, nodes, cells: dict, metadata: dict, order: int):
        self.path, self.name = Path(path), name
        self.n = 0
        self.closed = False
        self.last_t: float | None = None
        self._series: dict[str, h5py.Dataset] | None = None
        self._f = h5py.File(self.path, "a", libver=LIBVER)
        g = self._f.create_group(name)
        g.attrs["metadata"] = to_json(metadata)
        g.attrs["status"] = "running"
        g.attrs["message"] = "the run has started; no status was recorded yet"
        g.attrs["stats"] = "{}"
        g.attrs["order"] = order
        g.create_dataset("nodes", data=np.asarray(nodes, dtype=float)).attrs["units"] = UNITS["nodes"]
        for cell_type, conn in cells.items():
            g.create_dataset(f"cells/{cell_type}", data=np.asarray(conn, dtype=np.int64))
        self._f.attrs["main"] = name
        self._g = g
        self._f.flush()

    def _create(self, fields: dict) -> None:
        self._series, self._memspace, self._columns = {}, {}, {}
        for key, value in fields.items():
            if isinstance(value, dict):
                self._columns[key] = list(value)
                value = list(value.values())
            shape = np.shape(value)
            row_bytes = 8 * max(int(np.prod(shape)), 1)
            rows = int(np.clip(CHUNK_BYTES // row_bytes, 1, 4096))
            ds = self._g.create_dataset(key, shape=(0, *shape), maxshape=(None, *shape), chunks=(rows, *shape),
                                        dtype="f8")
            if key in self._columns:
                ds.attrs["columns"] = json.dumps(self._columns[key])
            if _units(key):
                ds.attrs["units"] = _units(key)
            self._series[key] = ds
            self._memspace[key] = (ds.id, tuple(shape), h5py.h5s.create_simple((1, *shape)),
                                   (0,) * len(shape))
        self._f.swmr_mode = True         # no new objects from here on; the file stays consistent

    def append(self, fields: dict[str, np.ndarray]) -> None:
        """Append one output and flush.

        Parameters
        ----------
        fields : dict[str, array_like or dict[str, float]]
            Dataset path in the run group (e.g. ``"t"``, ``"displacement"``,
            ``"element_data/axial_force"``) -> value at this output; a dict of scalars is a
            table row (e.g. ``"energies": {"T": ..., "V": ...}``).  The first call fixes the
            keys, shapes and columns.
        """
        self.append_many({k: ({c: [x] for c, x in v.items()} if isinstance(v, dict) else np.asarray(v)[None])
                          for k, v in fields.items()})

    def append_many(self, fields: dict[str, np.ndarray]) -> None:
        """Append N outputs at once and flush: as `append`, every value with a leading axis
        of length N (tables: a dict of columns of length N)."""
        if self.closed:
            raise RuntimeError(f"run {self.name!r} of {self.path} is closed")
        rows = {k: (np.stack([np.asarray(c, dtype=np.float64) for c in v.values()], axis=-1)
                    if isinstance(v, dict) else np.asarray(v, dtype=np.float64)) for k, v in fields.items()}
        n_new = {len(v) for v in rows.values()}
        if len(n_new) != 1:
            raise ValueError(f"`fields` must all have the same number of outputs, got {sorted(n_new)}")
        n_new = n_new.pop()
        if n_new == 0:
            return
        if self._series is None:
            self._create({k: ({c: 0.0 for c in v} if isinstance(v, dict) else rows[k][0])
                          for k, v in fields.items()})
        elif fields.keys() != self._memspace.keys():
            raise ValueError(f"`fields` must have the keys of the first output {sorted(self._series)}, "
                             f"got {sorted(fields)}")
        # NOTE: h5py's low-level calls: 3 times faster than ds.resize + ds[n] = value
        for key, (dsid, row_shape, _, zeros) in self._memspace.items():
            value = fields[key]
            if key in self._columns:
                value = np.stack([np.asarray(value[c], dtype=np.float64) for c in self._columns[key]], axis=-1)
            value = np.ascontiguousarray(value, dtype=np.float64).reshape((n_new, *row_shape))
            dsid.set_extent((self.n + n_new, *row_shape))
            space = dsid.get_space()
            space.select_hyperslab((self.n, *zeros), (n_new, *row_shape))
            dsid.write(h5py.h5s.create_simple((n_new, *row_shape)), space, value)
        self.n += n_new
        t = fields.get("t")
        self.last_t = float(np.asarray(t)[-1]) if t is not None else np.nan
        self._f.flush()

    def finish(self, status: str = "finished", message: str = "", stats: dict | None = None,
               series: dict[str, np.ndarray] | None = None) -> None:
        """Close the run with its status, message and stats; ``series`` adds whole datasets
        (n_t, ...), or tables given as dicts of columns, such as the works, which are only
        known at the end."""
        if self.closed:
            return
        self._f.close()
        with h5py.File(self.path, "a", libver=LIBVER) as f:
            g = f[self.name]
            for key, value in (series or {}).items():
                if key in g:
                    del g[key]
                if isinstance(value, dict):
                    ds = g.create_dataset(key, data=np.stack([np.asarray(v, dtype=float) for v in value.values()],
                                                             axis=-1).reshape(-1, len(value)))
                    ds.attrs["columns"] = json.dumps(list(value))
                else:
                    ds = g.create_dataset(key, data=np.asarray(value, dtype=float))
                if _units(key):
                    ds.attrs["units"] = _units(key)
            g.attrs["status"] = status
            g.attrs["message"] = message
            g.attrs["stats"] = to_json(stats or {})
        self.closed = True

    def abort(self, exc: BaseException) -> None:
        """Close the run after an exception: status "interrupted" for Ctrl-C, else "error"."""
        if self.closed:
            return
        where = (f"{self.n} outputs to t = {self.last_t:.6g} s were kept" if self.n
                 else "no output was written")
        if isinstance(exc, KeyboardInterrupt):
            status, message = "interrupted", f"interrupted ({str(exc) or 'Ctrl-C'}); {where}"
        else:
            status, message = "error", f"{type(exc).__name__}: {exc}; {where}"
        try:
            self.finish(status, message)
        except Exception:                    # NOTE: never hide the original exception
            log.exception("could not record the status of run %r in %s", self.name, self.path)
            self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is not None:
            self.abort(exc)
        else:
            self.finish()
        return False


# ------------------------------------------------------------------------------------ recording
_RECORDING: ContextVar[ResultsFile | None] = ContextVar("flexmbs_recording", default=None)


def active_recording() -> ResultsFile | None:
    """The `ResultsFile` of the innermost `recording` block, or None."""
    return _RECORDING.get()


@contextmanager
def recording(path, metadata: dict | None = None):
    """Stream every `flexmbs.run` inside the block into the results file ``path``.

    A case that calls `flexmbs.run` several times gets one run group per call.  A nested
    ``recording`` of the same path reuses the outer file.

    Examples
    --------
    >>> with recording("out/results.h5", metadata={"case": "mine"}):   # doctest: +SKIP
    ...     res = flexmbs.run(model, t_end=0.1)
    """
    current = _RECORDING.get()
    if current is not None and current.path.resolve() == Path(path).resolve():
        yield current
        return
    results_file = ResultsFile(path, metadata=metadata)
    token = _RECORDING.set(results_file)
    try:
        yield results_file
    finally:
        _RECORDING.reset(token)


# -------------------------------------------------------------------------------------- reading
def _open(path: Path) -> h5py.File:
    if not path.is_file():
        raise FileNotFoundError(f"results file {path} not found (working directory {Path.cwd()})")
    try:
        f = h5py.File(path, "r", swmr=True)
    except OSError as err:
        raise ValueError(f"cannot read {path} as an HDF5 results file ({err})") from err
    if f.attrs.get("format") != FORMAT:
        f.close()
        raise ValueError(f"{path} is an HDF5 file but not a flexmbs results file (no format "
                         f"attribute {FORMAT!r})")
    return f


def _runs(f: h5py.File) -> list[str]:
    names = [k for k in f if isinstance(f[k], h5py.Group) and "order" in f[k].attrs]
    return sorted(names, key=lambda k: int(f[k].attrs["order"]))


def list_runs(path) -> dict[str, str]:
    """Run names of a results file, in the order they ran, with their status."""
    with _open(Path(path)) as f:
        return {name: _status(f[name])[0] for name in _runs(f)}


def _status(g: h5py.Group) -> tuple[str, str]:
    status, message = str(g.attrs.get("status", INCOMPLETE)), str(g.attrs.get("message", ""))
    if status == "running":
        n = len(g["t"]) if "t" in g else 0
        last = f" to t = {g['t'][n - 1]:.6g} s" if n else ""
        return INCOMPLETE, (f"the run is still running, or it was killed before it finished; its {n} "
                            f"outputs{last} are in the file")
    return status, message


def _group_arrays(g: h5py.Group | None, n: int) -> dict[str, np.ndarray]:
    if g is None:
        return {}
    return {k: np.asarray(v[:n]) for k, v in g.items() if isinstance(v, h5py.Dataset)}


def _table(g: h5py.Group, key: str, n: int) -> dict[str, np.ndarray]:
    if key not in g:
        return {}
    ds = g[key]
    data = np.asarray(ds[:n])
    return {c: data[:, j] for j, c in enumerate(json.loads(ds.attrs["columns"]))}


def load_results(path, run: str | None = None) -> Results:
    """Load a run from a results file into `flexmbs.Results`.

    Parameters
    ----------
    path : str or Path
        ``results.h5`` written by `flexmbs.run` (``store=...`` or inside `recording`), also
        while it is written or after its run was killed, or a ``results.npz`` export.
    run : str, optional
        Run name for files with several runs (see `list_runs`); default the file's main run
        (the last one started).

    Returns
    -------
    Results
        ``t``, ``displacement``, ``velocity``, ``nodes``, ``delta``, ``delta_dot``,
        ``energies``, ``cells``, ``element_data``, ``status``, ``message``, ``stats`` and
        ``metadata``.  A run that never finished has status "incomplete" (killed),
        "interrupted" (Ctrl-C) or "error", and the outputs written before.

    Examples
    --------
    >>> res = load_results("out/rotating_bar/results.h5")              # doctest: +SKIP
    >>> res.t.shape, res.displacement.shape, res.metadata["formulation"]  # doctest: +SKIP
    """
    path = Path(path)
    if path.suffix.lower() == ".npz":
        return _load_npz(path)
    with _open(path) as f:
        runs = _runs(f)
        if not runs:
            raise ValueError(f"{path} holds no run")
        if run is None:
            main = str(f.attrs.get("main", ""))
            run = main if main in runs else runs[-1]
        elif run not in runs:
            raise KeyError(f"`run` must be one of {runs} (the runs in {path}), got {run!r}")
        g = f[run]
        series = [g[k] for k in ("t", "delta", "delta_dot", "displacement", "velocity", "energies") if k in g]
        for group in ("element_data", "frame"):
            if group in g:
                series += [d for d in g[group].values() if isinstance(d, h5py.Dataset)]
        # NOTE: a run killed between two datasets' appends leaves them one output apart
        n = min((len(d) for d in series), default=0)
        nodes = np.asarray(g["nodes"][()])
        n_nodes, dim = nodes.shape
        n_dofs = g["delta"].shape[1] if "delta" in g else 0

        def series_or_empty(key, shape):
            return np.asarray(g[key][:n]) if key in g else np.zeros((n, *shape))

        status, message = _status(g)
        return Results(
            t=series_or_empty("t", ()), delta=series_or_empty("delta", (n_dofs,)),
            delta_dot=series_or_empty("delta_dot", (n_dofs,)),
            displacement=series_or_empty("displacement", (n_nodes, dim)),
            velocity=series_or_empty("velocity", (n_nodes, dim)), nodes=nodes,
            energies={**_table(g, "energies", n), **_table(g, "works", n)}, status=status, message=message,
            stats=json.loads(g.attrs.get("stats", "{}")),
            metadata={**json.loads(g.attrs.get("metadata", "{}")), "run": run,
                      "file": str(path), "runs": runs},
            cells={k: np.asarray(v[()]) for k, v in g["cells"].items()} if "cells" in g else {},
            element_data=_group_arrays(g.get("element_data"), n), frame=_group_arrays(g.get("frame"), n))


def _load_npz(path: Path) -> Results:
    if not path.is_file():
        raise FileNotFoundError(f"results file {path} not found (working directory {Path.cwd()})")
    with np.load(path) as z:
        data = {k: z[k] for k in z.files}
    missing = sorted({"t", "displacement", "nodes"} - set(data))
    if missing:
        raise ValueError(f"{path} is not a flexmbs results.npz: it lacks {missing}")
    n_t = len(data["t"])
    empty = np.zeros((n_t, 0))
    return Results(
        t=data["t"], delta=data.get("delta", empty), delta_dot=data.get("delta_dot", empty),
        displacement=data["displacement"], velocity=data.get("velocity", np.zeros_like(data["displacement"])),
        nodes=data["nodes"],
        energies={k[len("energy_"):]: v for k, v in data.items() if k.startswith("energy_")},
        status=str(data.get("status", "finished")), message=str(data.get("message", "")),
        metadata={"file": str(path), "units": "SI (m, kg, s, N, rad)"},
        frame={k[len("frame_"):]: v for k, v in data.items() if k.startswith("frame_")},
        cells={k[len("cells_"):]: v for k, v in data.items() if k.startswith("cells_")},
        element_data={k[len("element_"):]: v for k, v in data.items() if k.startswith("element_")})


def save_results(results: Results, path, name: str | None = None) -> Path:
    """Write a whole `Results` (e.g. one computed without a store) as a new results file."""
    results_file = ResultsFile(path)
    results_file.add(results, name)
    return results_file.path
