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
DOFs "m or rad"), the root an attribute ``units`` naming the system (SI).  Every axis of every
dataset is a named netCDF-4 dimension (an HDF5 dimension scale, ``t`` the time coordinate;
`flexmbs.io.dimensions`), so that ``xarray.open_dataset(path, group=RUN, engine="h5netcdf")``
opens a run.

``energies`` and ``works`` are tables: their attribute ``columns`` (JSON) names the columns
(see `flexmbs.Results` for their meaning).  A Model run's works are integrals over the whole
run, written when it ends; a System run's works are accumulated at every step and streamed
with the outputs (`flexmbs.system_run`), so a stopped run keeps them up to its last output.

Outputs are appended to each time series and flushed as the run goes on: `flexmbs.run` writes
them in blocks, at least every half second of wall time (and at the end, and before an
exception ends the run), so that writing does not cost more than the integration.
During a run the file is in HDF5's single-writer/multiple-reader (SWMR) mode, in which the
library orders its writes so that the file on disk is always consistent: a run that is
killed, crashes or diverges leaves a readable file with every output written before.
`load_results` reads such files, also while they are written, and truncated ones; it uses
HDF5's SWMR read mode, which waits for hours on a damaged file, only for a file it sees
growing (see `flexmbs.io.recovery` and `_read`): a damaged file fails at once, and the
outputs stored wholly before a truncation are recovered.

A full disk stops the run with `DiskFullError` ("no space left on device: N outputs kept in
FILE", an OSError with errno ENOSPC); the file keeps the N outputs written wholly before and
the run's status is "disk full".  HDF5 cannot close a file whose writes fail (it crashes the
process at the next attempt), so the writer closes it with its writes sent nowhere
(`_release`), then cuts the time series to those N outputs and records the status in two
short sessions, in the ``RESERVE_BYTES`` (64 kB) it set aside next to the file
(``.FILE.reserve``, removed when the run ends) and frees for them.
"""
from __future__ import annotations

import datetime
import errno
import json
import logging
import math
import os
import time
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import h5py
import numpy as np

from ..frozen import Fields
from ..results import Results, contacts_by_name
from .dimensions import is_dimension, label_dimensions
from .h5create import new_dataset, set_attribute
from .recovery import RepairedView, Superblock, closed_header, intact_rows, read_superblock

__all__ = ["ResultsFile", "RunWriter", "load_results", "save_results", "list_runs", "results_path", "recording",
           "active_recording", "DamagedFileError", "DiskFullError", "is_disk_full", "truncation",
           "FORMAT", "FORMAT_VERSION", "DISK_FULL"]

log = logging.getLogger(__name__)

FORMAT = "flexmbs-results"
FORMAT_VERSION = 1
LIBVER = ("v110", "latest")          # SWMR needs the HDF5 1.10 file format (ParaView's HDF5 reads it)
CHUNK_BYTES = 32 * 1024              # target chunk size of the time series
INCOMPLETE = "incomplete"            # status of a run whose writer never closed it
DISK_FULL = "disk full"              # status of a run stopped because the disk was full
RESERVE_BYTES = 64 * 1024            # disk set aside while a run writes, to record its end on a full disk
UNITS_SYSTEM = "SI: m, kg, s, N, Pa, J, rad"
#: units of the datasets of a run (by name; element data by its own name)
UNITS = {"nodes": "m", "t": "s", "delta": "m or rad", "delta_dot": "m/s or rad/s", "displacement": "m",
         "velocity": "m/s", "energies": "J", "works": "J", "axial_force": "N", "stress": "Pa",
         "stress_bottom": "Pa", "shear_force": "N/m", "von_mises": "Pa", "origin": "m", "origin_velocity": "m/s",
         "rotation": "1", "euler_parameters": "1",
         "omega": "rad/s", "position": "m", "angular_velocity": "rad/s", "elastic_velocity": "m/s",
         "q": "m or 1 (rad, Euler parameters)", "v": "m/s or rad/s", "q_dot": "m/s or 1/s",
         "multipliers": "N, N m or (Euler parameter constraints) J", "normal_force": "N", "friction_force": "N",
         "depth": "m", "point": "m", "count": "1"}


def _units(key: str) -> str | None:
    """The units of the dataset at ``key``: a joint's position (``joints/NAME``) is in m, the
    others by their name (`UNITS`)."""
    if key.startswith("joints/"):
        return "m"
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


class DiskFullError(OSError):
    """The disk filled up while a results file was written (errno ENOSPC).

    The message is "no space left on device: N outputs kept in FILE" (and what else was
    lost); ``path`` is FILE, ``kept`` is N, the outputs of the run that the file holds.
    """

    def __init__(self, path, kept: int, detail: str = ""):
        self.path, self.kept, self.detail = Path(path), int(kept), detail
        super().__init__(errno.ENOSPC, f"no space left on device: {self.kept} outputs kept in {path}"
                         + (f"; {detail}" if detail else ""), str(path))

    def __str__(self) -> str:
        return self.strerror

    def __reduce__(self):                  # e.g. from a sweep's worker process
        return type(self), (self.path, self.kept, self.detail)


def is_disk_full(err: BaseException) -> bool:
    """Whether ``err`` says the disk is full: an OSError with errno ENOSPC, or HDF5's error,
    which h5py raises as a RuntimeError (or OSError) whose text names the errno of the write
    that failed ("errno = 28")."""
    if isinstance(err, OSError) and err.errno == errno.ENOSPC:
        return True
    return isinstance(err, (OSError, RuntimeError)) and f"errno = {errno.ENOSPC}," in str(err)


def _release(f: h5py.File | None) -> None:
    """Close ``f`` after a write to it failed, without HDF5 writing to the file again.

    Closing a file makes HDF5 write what its caches hold; on a full disk that fails, the close
    stops half-way, and the next close of the file or of any of its objects (at the latest at
    exit) crashes the process: a segmentation fault in ``H5D__flush_all_cb`` (HDF5 2.0).  So
    the file's descriptor is pointed at the null device first: the close succeeds, what it
    writes goes nowhere, and the file on disk keeps what was written before the failure.
    """
    if f is None or not f.id.valid:
        return
    name = f.filename                   # NOTE: a half-closed file crashes on every call, even this
    try:
        fd = f.id.get_vfd_handle()
        null = os.open(os.devnull, os.O_RDWR)
        try:
            os.dup2(null, fd)
        finally:
            os.close(null)
    except (OSError, RuntimeError, TypeError) as err:      # not a POSIX descriptor: close as it is
        log.warning("closing %s after a failed write without redirecting it (%s)", name, err)
    try:
        f.close()
    except (OSError, RuntimeError) as err:                 # the failed write's own error is raised
        log.info("closing %s after a failed write: %s", name, err)


def _reserve_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.reserve")


def _set_aside(path: Path) -> Path:
    """Write ``RESERVE_BYTES`` (random, so that no file system stores them as a hole or
    compresses them) next to ``path``: the room `RunWriter` frees to record a run's end when
    the disk is full (HDF5 then needs a few kB at the end of the file)."""
    reserve = _reserve_path(path)
    try:
        reserve.write_bytes(os.urandom(RESERVE_BYTES))
    except OSError:
        reserve.unlink(missing_ok=True)
        raise
    return reserve


def _clear_flags(path: Path) -> None:
    """Clear the consistency flags that a writer released by `_release` left in the file's
    superblock (HDF5 refuses to open such a file for writing).  A file shorter than its
    recorded end (its last writes failed) is extended to it, with a hole that takes no space."""
    sb = read_superblock(path)
    if sb is None or not sb.open_for_writing:
        return
    if sb.truncated:
        os.truncate(path, sb.eof)
    with open(path, "r+b") as f:
        f.write(closed_header(sb))


def _session(path: Path, write) -> None:
    """``write(f)`` on the file opened for appending, flushed and closed.

    A failed write (a full disk) releases the file (`_release`) and raises."""
    _clear_flags(path)
    f = h5py.File(path, "a", libver=LIBVER)
    try:
        write(f)
        f.flush()
    except BaseException:
        _release(f)
        raise
    f.close()            # after a flush: only the superblock, in place


def _cut(path: Path, name: str, keep: int) -> None:
    """Cut the time series of run ``name`` to their first ``keep`` outputs: those written wholly
    before a failed write, which may have extended them (with rows it never wrote)."""
    def cut(f):
        for ds in _series(f[name]):
            if len(ds) > keep:
                ds.resize(keep, axis=0)
    _session(path, cut)


def _record(path: Path, name: str, status: str, message: str, stats: dict | None = None,
            series: dict | None = None) -> None:
    """Write the end of run ``name`` into its group: status, message, stats and the whole
    ``series`` (see `RunWriter.finish`)."""
    def record(f):
        g = f[name]
        for key, value in (series or {}).items():
            if key in g:
                del g[key]
            if isinstance(value, dict):
                ds = new_dataset(g.id, key, np.stack([np.asarray(v, dtype=float) for v in value.values()],
                                                     axis=-1).reshape(-1, len(value)))
                set_attribute(ds, "columns", json.dumps(list(value)))
            else:
                ds = new_dataset(g.id, key, np.asarray(value, dtype=float))
            if _units(key):
                set_attribute(ds, "units", _units(key))
        set_attribute(g.id, "status", status)
        set_attribute(g.id, "message", message)
        set_attribute(g.id, "stats", to_json(stats or {}))
        labelled = "t" in g and h5py.h5ds.is_scale(g["t"].id)      # the time series were, when they began
        label_dimensions(g, _static, only=list(series or {}) if labelled else None)
    _session(path, record)


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
        self._last: tuple | None = None           # (name, Results) of the last run, until another opens
        try:
            self._create()
        except (OSError, RuntimeError) as err:
            if is_disk_full(err):
                raise DiskFullError(self.path, 0) from err
            raise

    def _create(self) -> None:
        f = h5py.File(self.path, "w", libver=LIBVER)
        try:
            for key, value in (("format", FORMAT), ("format_version", FORMAT_VERSION), ("flexmbs_version", _version()),
                               ("created", datetime.datetime.now().astimezone().isoformat(timespec="seconds")),
                               ("main", ""), ("units", UNITS_SYSTEM)):
                set_attribute(f.id, key, value)
            f.flush()
        except BaseException:
            _release(f)
            raise
        f.close()

    def open_run(self, name: str | None = None, *, nodes, cells: dict, metadata: dict | None = None,
                 static: dict | None = None) -> RunWriter:
        """Add a run group (name made unique with a suffix _2, _3, ...) and return its writer.

        Parameters
        ----------
        name : str, optional
            Default "run".
        nodes : ndarray, shape (n_nodes, dim)
        cells : dict[str, ndarray]
            Cell type -> connectivity of the cells the results refer to.
        metadata : dict, optional
        static : dict[str, ndarray], optional
            Datasets written once with the run's group (path in the group -> array), e.g. a
            System run's ``bodies/NAME/nodes`` and ``bodies/NAME/cells/TYPE``.
        """
        if self._active is not None and not self._active.closed:
            raise RuntimeError(f"run {self._active.name!r} of {self.path} is still being written; "
                               "finish or abort it before opening another")
        base = str(name or "run").replace("/", "_")
        unique, k = base, 1
        while unique in self.runs:
            k += 1
            unique = f"{base}_{k}"
        self._last = None                   # a finished run's Results is not held while another runs
        writer = RunWriter(self.path, unique, nodes, cells, {**self.metadata, **(metadata or {})},
                           order=len(self.runs), static=static)
        self.runs.append(unique)
        self._active = writer
        return writer

    def keep_last(self, name: str, results: Results) -> None:
        """Hold the `Results` of the run ``name`` just finished (`flexmbs.run` gives it), until the
        next run opens or `take_last` hands it over: ``flexmbs run`` summarises a case's one run from
        it instead of reading the file back (the same arrays, held once: the run returned them)."""
        self._last = (name, results)

    def take_last(self) -> tuple | None:
        """(name, Results) of the last run if no run opened after it (`keep_last`), else None; the
        file holds it no longer."""
        last, self._last = self._last, None
        return last

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

    A full disk stops the run with `DiskFullError`: the file keeps the outputs written
    wholly before, and the run's status is "disk full" (recorded with the ``RESERVE_BYTES``
    that the writer sets aside next to the file while it writes).
    """

    def __init__(self, path: Path, name: str, nodes, cells: dict, metadata: dict, order: int,
                 static: dict | None = None):
        self.path, self.name = Path(path), name
        self.n = 0
        self.closed = False
        self.last_t: float | None = None
        self._series: dict[str, h5py.h5d.DatasetID] | None = None     # the time series, once created
        self._static: dict[str, h5py.h5d.DatasetID] = {}                 # the datasets written once
        self._f: h5py.File | None = None
        try:
            self._reserve: Path | None = _set_aside(self.path)
        except OSError as err:
            if is_disk_full(err):
                raise DiskFullError(self.path, 0, f"run {name!r} could not start") from err
            raise
        with self._stopping_on_full_disk():
            self._f = h5py.File(self.path, "a", libver=LIBVER)
            g = self._f.create_group(name)
            for key, value in (("metadata", to_json(metadata)), ("status", "running"),
                               ("message", "the run has started; no status was recorded yet"), ("stats", "{}"),
                               ("order", order)):
                set_attribute(g.id, key, value)
            self._static = {"nodes": new_dataset(g.id, "nodes", np.asarray(nodes, dtype=float))}
            set_attribute(self._static["nodes"], "units", UNITS["nodes"])
            for cell_type, conn in cells.items():
                self._static[f"cells/{cell_type}"] = new_dataset(g.id, f"cells/{cell_type}",
                                                                 np.asarray(conn, dtype=np.int64))
            for key, value in (static or {}).items():
                value = np.asarray(value)
                ds = self._static[key] = new_dataset(g.id, key, value if value.dtype.kind in "iu" else value.astype(float))
                if _units(key):
                    set_attribute(ds, "units", _units(key))
            set_attribute(self._f.id, "main", name)
            self._g = g
            self._f.flush()

    @contextmanager
    def _stopping_on_full_disk(self, ended: tuple[str, str] | None = None):
        """Writes to the file; a full disk in them stops the run (`_stop_on_full_disk`)."""
        try:
            yield
        except (OSError, RuntimeError) as err:
            if is_disk_full(err) and not isinstance(err, DiskFullError):
                self._stop_on_full_disk(err, ended)
            raise

    def _stop_on_full_disk(self, err: BaseException, ended: tuple[str, str] | None = None) -> None:
        """Close the run after a write failed on a full disk, and raise `DiskFullError`.

        The file is released (`_release`), the reserve freed, and the run recorded with status
        "disk full" and its time series cut to the ``n`` outputs written wholly before.
        ``ended``: the (status, message) of an integration that had ended when the disk filled.
        """
        _release(self._f)
        self.closed = True
        self._free_reserve()
        detail = f"the run had ended ({ended[0]}: {ended[1]}); its works are lost" if ended else ""
        error = DiskFullError(self.path, self.n, detail)
        try:
            _cut(self.path, self.name, self.n)
            _record(self.path, self.name, DISK_FULL, str(error))
        except (OSError, RuntimeError, ValueError, KeyError) as failed:
            log.error("the status of run %r could not be recorded in %s: %s", self.name, self.path, failed)
            error = DiskFullError(self.path, self.n, "; ".join(
                filter(None, [detail, f"the file could not record it ({failed})"])))
        raise error from err

    def _free_reserve(self) -> None:
        if self._reserve is not None:
            self._reserve.unlink(missing_ok=True)
            self._reserve = None

    def _create(self, fields: dict) -> None:
        """The run's time series, one per key of the first output ``fields`` (chunks of about
        ``CHUNK_BYTES``, at most 4096 rows), with their units and columns, and the dimension scales
        of every dataset of the run; then SWMR mode."""
        self._series, self._memspace, self._columns = {}, {}, {}
        for key, value in fields.items():
            if isinstance(value, dict):
                self._columns[key] = list(value)
                value = list(value.values())
            shape = np.shape(value)
            rows = min(max(CHUNK_BYTES // (8 * max(math.prod(shape), 1)), 1), 4096)
            ds = new_dataset(self._g.id, key, dtype="f8", shape=(0, *shape), maxshape=(None, *shape),
                             chunks=(rows, *shape))
            self._series[key] = ds
            self._memspace[key] = (ds, tuple(shape), (0,) * len(shape))
        for key, ds in self._series.items():      # after all of them: HDF5 is slower interleaving the two
            if key in self._columns:
                set_attribute(ds, "columns", json.dumps(self._columns[key]))
            if _units(key):
                set_attribute(ds, "units", _units(key))
        # netCDF readers' names of the axes (flexmbs.io.dimensions), of the datasets held here: no walk
        label_dimensions(self._g, _static, datasets={**self._static, **self._series})
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
        if self._series is not None and fields.keys() != self._memspace.keys():
            raise ValueError(f"`fields` must have the keys of the first output {sorted(self._series)}, "
                             f"got {sorted(fields)}")
        with self._stopping_on_full_disk():
            if self._series is None:
                self._create({k: ({c: 0.0 for c in v} if isinstance(v, dict) else rows[k][0])
                              for k, v in fields.items()})
            # NOTE: h5py's low-level calls: 3 times faster than ds.resize + ds[n] = value
            for key, (dsid, row_shape, zeros) in self._memspace.items():
                value = fields[key]
                if key in self._columns:
                    value = np.stack([np.asarray(value[c], dtype=np.float64) for c in self._columns[key]], axis=-1)
                value = np.ascontiguousarray(value, dtype=np.float64).reshape((n_new, *row_shape))
                dsid.set_extent((self.n + n_new, *row_shape))
                space = dsid.get_space()
                space.select_hyperslab((self.n, *zeros), (n_new, *row_shape))
                dsid.write(h5py.h5s.create_simple((n_new, *row_shape)), space, value)
            self._f.flush()
        self.n += n_new                  # counted once on disk: a full disk keeps the n before
        t = fields.get("t")
        self.last_t = float(np.asarray(t)[-1]) if t is not None else np.nan

    def finish(self, status: str = "finished", message: str = "", stats: dict | None = None,
               series: dict[str, np.ndarray] | None = None) -> None:
        """Close the run with its status, message and stats; ``series`` adds whole datasets
        (n_t, ...), or tables given as dicts of columns, such as the works, which are only
        known at the end.  A full disk raises `DiskFullError` (see the class)."""
        if self.closed:
            return
        with self._stopping_on_full_disk(ended=(status, message)):
            self._f.flush()              # a failure here leaves the file open, to be released
            self._f.close()
            _record(self.path, self.name, status, message, stats, series)
        self.closed = True
        self._free_reserve()

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
        except DiskFullError as err:         # NOTE: never hide the original exception
            log.error("%s", err)
        except Exception:
            log.exception("could not record the status of run %r in %s", self.name, self.path)
            self.closed = True
            self._free_reserve()

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
class DamagedFileError(ValueError):
    """A results file that cannot be read as it was written (truncated or corrupted); the
    message says what is wrong and what can still be recovered."""


_H5_ERRORS = (OSError, RuntimeError, KeyError)      # what h5py raises on unreadable metadata or data
_RETRIES = (0.02, 0.1, 0.3)                          # waits [s] before re-reading a file a writer holds


class _UnknownRun(KeyError):
    """`run` names no run of the file (not damage)."""


def _attr(obj, key: str, default, lost: list | None = None):
    """``obj.attrs.get(key, default)``; for a truncated file (``lost`` a list) an attribute in the
    missing part gives ``default`` and is noted in ``lost``."""
    if lost is None:
        return obj.attrs.get(key, default)
    try:
        return obj.attrs.get(key, default)
    except _H5_ERRORS:
        lost.append(key)
        return default


def _truncation(path: Path, sb: Superblock) -> str:
    return (f"results file {path} is damaged: it ends at byte {sb.size} but its HDF5 header records "
            f"{sb.eof} bytes ({sb.size / sb.eof:.1%} of it is there: a copy or download cut short, or a full "
            f"disk)")


def truncation(path) -> str | None:
    """What is missing from a truncated results file (its size against the size its HDF5 header
    records), or None if the file is not truncated.  Other damage shows when it is read."""
    try:
        sb = read_superblock(Path(path))
    except (OSError, ValueError):
        return None
    return _truncation(Path(path), sb) if sb is not None and sb.truncated else None


@contextmanager
def _open(path: Path, swmr: bool = False):
    """The results file as an ``h5py.File`` and its superblock if it is truncated (else None).

    A clean file opens in the normal read mode, a file that a writer holds or left (flags set)
    or a truncated one through `RepairedView` (see `flexmbs.io.recovery`).  ``swmr``: HDF5's
    SWMR read mode, only for a file seen growing (a live writer, see `_read`).
    """
    if not path.is_file():
        raise FileNotFoundError(f"results file {path} not found (working directory {Path.cwd()})")
    if swmr:
        f = h5py.File(path, "r", swmr=True)
        try:
            if f.attrs.get("format") != FORMAT:
                raise ValueError(f"{path} is an HDF5 file but not a flexmbs results file")
            yield f, None
        finally:
            f.close()
        return
    try:
        sb = read_superblock(path)
    except ValueError as err:
        if "damaged" in str(err):
            raise DamagedFileError(f"results file {err}; nothing can be recovered") from None
        raise ValueError(f"cannot read {path} as an HDF5 results file ({err})") from None
    view = RepairedView(path, sb) if sb is not None and (sb.truncated or sb.open_for_writing) else None
    truncated = sb if sb is not None and sb.truncated else None
    try:
        f = h5py.File(view, "r") if view is not None else _open_plain(path)
    except _H5_ERRORS as err:
        if view is not None:
            view.close()
        if truncated is not None:
            raise DamagedFileError(f"{_truncation(path, truncated)}. Nothing can be recovered: the file's root "
                                   f"group lies in the missing part ({err})") from None
        raise ValueError(f"cannot read {path} as an HDF5 results file ({err})") from err
    try:
        try:
            fmt = f.attrs.get("format")
        except _H5_ERRORS as err:
            if truncated is None:
                raise DamagedFileError(f"results file {path} is damaged: its header is unreadable ({err})") from None
            if not _safe_runs(f):
                raise DamagedFileError(f"{_truncation(path, truncated)}. Nothing can be recovered: its header and "
                                       f"its runs are in the missing part ({err})") from None
            fmt = FORMAT                                  # the attribute is in the missing part; the runs are not
        if fmt != FORMAT:
            raise ValueError(f"{path} is an HDF5 file but not a flexmbs results file (no format "
                             f"attribute {FORMAT!r})")
        yield f, truncated
    finally:
        f.close()
        if view is not None:
            view.close()


def _open_plain(path: Path) -> h5py.File:
    try:
        return h5py.File(path, "r")
    except OSError as err:
        if "lock" not in str(err).lower():
            raise
        log.info("opening %s without file locking (%s)", path, err)
        return h5py.File(path, "r", locking=False)      # e.g. a file system without locks


def _read(path, read):
    """``read(f, truncated)`` on the open file.

    A file that a writer holds may be caught mid-write: while it creates the file or opens a
    run (HDF5's write lock held; the file may be shorter than its header says), or, in SWMR
    mode (flags set, no lock), with objects past the end-of-file address read at the open.
    Such a file is read again after a short wait before it is called damaged, and a file seen
    growing meanwhile (so a live writer's, which SWMR keeps consistent) is read in HDF5's SWMR
    read mode, the one mode that follows a growing file.  A file that does not change is never
    read in SWMR mode, which would wait for hours on a damaged one.
    """
    path = Path(path)
    swmr, size = False, _size(path)
    for wait in (*_RETRIES, None):
        try:
            with _open(path, swmr) as (f, truncated):
                if truncated is not None and wait is not None and _write_locked(path):
                    raise DamagedFileError(_truncation(path, truncated))       # being created: try again
                try:
                    return read(f, truncated)
                except _UnknownRun:
                    raise
                except _H5_ERRORS as err:
                    if truncated is not None:
                        raise DamagedFileError(f"{_truncation(path, truncated)}. Nothing can be recovered: "
                                               f"the part that holds its runs is missing ({err})") from None
                    raise DamagedFileError(f"results file {path} is damaged: {err}") from None
        except (_UnknownRun, FileNotFoundError):
            raise
        except ValueError:                      # DamagedFileError, or no HDF5 file (yet)
            if wait is None:
                raise
            time.sleep(wait)
            now = _size(path)
            grew, size = now != size, now
            if not (grew or _write_locked(path)):
                raise
            flagged, cut = _state(path)
            swmr = grew and flagged and not cut


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def _state(path: Path) -> tuple[bool, bool]:
    """(a writer has the file open or was killed with it open, the file is truncated), from
    its superblock; (False, False) if it cannot be read."""
    try:
        sb = read_superblock(path)
    except (OSError, ValueError):
        return False, False
    return (sb.open_for_writing, sb.truncated) if sb is not None else (False, False)


def _write_locked(path: Path) -> bool:
    """Another open file holds HDF5's exclusive lock on ``path`` (POSIX flock; False elsewhere)."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def _safe_runs(f: h5py.File) -> list[str]:
    try:
        return _runs(f)
    except _H5_ERRORS:
        return []


def _runs(f: h5py.File) -> list[str]:
    names = [k for k in f if isinstance(f[k], h5py.Group) and "order" in f[k].attrs]
    return sorted(names, key=lambda k: int(f[k].attrs["order"]))


def list_runs(path) -> dict[str, str]:
    """Run names of a results file (or of an output directory's results.h5, `results_path`), in
    the order they ran, with their status ("damaged" for a run of a truncated file that lost
    outputs or cannot be read)."""
    path = results_path(path)
    def read(f, truncated):
        runs = {}
        for name in _runs(f):
            if truncated is None:              # the status alone: no walk of the run's series
                runs[name] = _status(f[name], 0)[0]
                continue
            try:
                ext = _extent(f[name], truncated)
                runs[name] = ext.status if ext.n == ext.written and not ext.lost else "damaged"
            except _H5_ERRORS:
                runs[name] = "damaged"
        return runs
    return _read(path, read)


AT_END = ("works", "multipliers")          # whole datasets a run writes when it ends (`RunWriter.finish`)


def _written_at_end(key: str, ds) -> bool:
    """A dataset of `AT_END` written whole when the run ended (a Model run's works, the multipliers),
    not a streamed time series: a System run streams its works with the outputs (resizable along t)."""
    return key in AT_END and ds.maxshape[0] is not None


def _static(key: str) -> bool:
    """A dataset written once when the run starts: its ``nodes`` and ``cells/*``, and a body's
    ``bodies/NAME/nodes`` and ``bodies/NAME/cells/*``."""
    parts = key.split("/")
    if parts[0] == "bodies" and len(parts) >= 3:
        parts = parts[2:]
    return parts[0] in ("nodes", "cells")


def _series_keys(g: h5py.Group) -> list[str]:
    """Paths of the run's time series (one row per output): every dataset of its group but the
    static ones, those written at the end (`AT_END`) and the dimension scales
    (`flexmbs.io.dimensions`)."""
    return list(_series_datasets(g))


def _series_datasets(g: h5py.Group) -> dict[str, h5py.Dataset]:
    """The run's time series (`_series_keys`) by path, each opened once in one walk of the group."""
    found = {}

    def walk(group, prefix):
        for k in group:
            obj = group[k]
            key = f"{prefix}{k}"
            if isinstance(obj, h5py.Dataset):
                if not _static(key) and not _written_at_end(key, obj) and not is_dimension(key):
                    found[key] = obj
            else:
                walk(obj, f"{key}/")
    walk(g, "")
    return found


def _series(g: h5py.Group) -> list[h5py.Dataset]:
    return list(_series_datasets(g).values())


def _written(g: h5py.Group, series=None) -> int:
    """Outputs stored in every time series of the run group ``g`` (``series``: its
    `_series_datasets`, if already opened)."""
    # NOTE: a run killed between two datasets' appends leaves them one output apart
    return min((len(d) for d in (_series(g) if series is None else series.values())), default=0)


class _Extent(Fields):
    """What a truncation left of a run: the datasets that can be opened, the outputs stored
    wholly before the cut, and what is lost."""

    # datasets: key (e.g. "t", "element_data/stress") -> h5py.Dataset; n: outputs intact in every readable time
    # series; written: outputs written (the shortest readable time series); lost: datasets and attributes in the
    # missing part; status: the run's recorded status

    def __init__(self, datasets: dict, n: int, written: int, lost: list, status: str):
        self._set_fields(locals())


def _extent(g: h5py.Group, truncated: Superblock, lost: list | None = None) -> _Extent:
    """The `_Extent` of a run of a truncated file (attributes found missing are added to
    ``lost``); raises if the run's group, nodes, cells or times are unreadable."""
    lost = [] if lost is None else lost
    for name in ("nodes", *(f"cells/{k}" for k in g.get("cells", {}))):
        if intact_rows(g[name], truncated.size) < len(g[name]):
            raise OSError(f"its {name} lie in the missing part")
    series = _series_keys(g)
    keys = series + [k for k in AT_END if k in g and k not in series]
    datasets, rows = {}, {}
    for key in keys:
        try:
            datasets[key] = g[key]
            rows[key] = intact_rows(datasets[key], truncated.size)
        except _H5_ERRORS:
            datasets.pop(key, None)
            lost.append(key)
    if "t" not in datasets:
        raise OSError("its output times lie in the missing part")
    series = [k for k in series if k in datasets]
    written = min(len(datasets[k]) for k in series)
    n = min(min(rows[k] for k in series), written)
    for key in AT_END:
        if key in datasets and key not in series and rows[key] < len(datasets[key]):
            del datasets[key]
            lost.append(key)
    return _Extent(datasets, n, written, lost, str(_attr(g, "status", "unknown (in the missing part)", lost)))


def _frame(datasets, n: int, lost: list | None) -> dict[str, np.ndarray]:
    """The frame motion's series (`flexmbs.motion.FRAME_KEYS`): all of them or none (a file
    written before flexmbs stored them, or a truncation that took one of them)."""
    from ..motion import FRAME_KEYS
    frame = {k.split("/", 1)[1]: np.asarray(d[:n]) for k, d in datasets.items() if k.startswith("frame/")}
    if frame and set(frame) != set(FRAME_KEYS):
        if lost is not None:
            lost.extend(f"frame/{k}" for k in FRAME_KEYS if k not in frame)
        return {}
    return frame


def _status(g: h5py.Group, n: int, lost: list | None = None) -> tuple[str, str]:
    """(status, message) of run group ``g`` as recorded; a run still "running" is `INCOMPLETE`, its
    message naming the ``n`` outputs stored (the status does not depend on ``n``)."""
    status = str(_attr(g, "status", "unknown (in the missing part)", lost))
    message = str(_attr(g, "message", "", lost))
    if status == "running":
        last = f" to t = {g['t'][n - 1]:.6g} s" if n else ""
        return INCOMPLETE, (f"the run is still running, or it was killed before it finished; its {n} "
                            f"outputs{last} are in the file")
    return status, message


def _table(datasets, key: str, n: int, lost: list | None = None) -> dict[str, np.ndarray]:
    if key not in datasets:
        return {}
    ds = datasets[key]
    columns = _attr(ds, "columns", None, lost)
    if columns is None:
        return {}
    data = np.asarray(ds[:n])
    return {c: data[:, j] for j, c in enumerate(json.loads(columns))}


def results_path(path) -> Path:
    """``path`` itself, or ``path/results.h5`` for an output directory (`flexmbs run --out DIR`)."""
    path = Path(path)
    if path.is_dir():
        if not (path / "results.h5").is_file():
            raise FileNotFoundError(f"{path} is a directory without a results.h5 (the results file that "
                                    "`flexmbs run --out DIR` writes); give the results file's path")
        return path / "results.h5"
    return path


def load_results(path, run: str | None = None) -> Results:
    """Load a run from a results file into `flexmbs.Results`.

    Parameters
    ----------
    path : str or Path
        ``results.h5`` written by `flexmbs.run` (``store=...`` or inside `recording`), also
        while it is written or after its run was killed, or a ``results.npz`` export; or the
        output directory of `flexmbs run` (``--out DIR``), for its ``DIR/results.h5``.
    run : str, optional
        Run name for files with several runs (see `list_runs`); default the file's main run
        (the last one started).

    Returns
    -------
    Results
        ``t``, ``displacement``, ``velocity``, ``nodes``, ``delta``, ``delta_dot``,
        ``energies``, ``cells``, ``element_data``, ``status``, ``message``, ``stats`` and
        ``metadata``.  A run that never finished has status "incomplete" (killed),
        "interrupted" (Ctrl-C), "error" or "disk full", and the outputs written before.  A run of a
        truncated file has status "damaged" if it lost outputs: it holds those stored wholly
        before the cut, and its message says how many of how many, and the status it had.

    Raises
    ------
    DamagedFileError
        (a ValueError) The file, or the run asked for, cannot be read at all: the message
        says why and which runs can still be recovered.  Reading never waits: a damaged
        file fails at once.

    Examples
    --------
    >>> res = load_results("out/rotating_bar/results.h5")              # doctest: +SKIP
    >>> res.t.shape, res.displacement.shape, res.metadata["formulation"]  # doctest: +SKIP
    """
    path = results_path(path)
    if path.suffix.lower() == ".npz":
        return _load_npz(path)

    def read(f, truncated):
        runs = _runs(f)
        if not runs:
            raise ValueError(f"{path} holds no run")
        name = run
        if name is None:
            main = str(_attr(f, "main", "", None if truncated is None else []))
            name = main if main in runs else runs[-1]
        elif name not in runs:
            raise _UnknownRun(f"`run` must be one of {runs} (the runs in {path}), got {name!r}")
        if truncated is None:
            return _load_run(f, name, path)
        try:
            return _load_run(f, name, path, truncated)
        except _H5_ERRORS as err:
            recoverable = []
            for other in runs:
                try:
                    ext = _extent(f[other], truncated)
                    recoverable.append(f"{other!r} ({ext.n} of {ext.written} outputs)")
                except _H5_ERRORS:
                    pass
            raise DamagedFileError(
                f"{_truncation(path, truncated)}. Run {name!r} cannot be recovered ({err}); "
                + (f"runs that can: {', '.join(recoverable)}" if recoverable else "no run can")) from None
    return _read(path, read)


def _load_run(f: h5py.File, run: str, path: Path, truncated: Superblock | None = None) -> Results:
    g = f[run]
    lost = None
    if truncated is None:
        series = _series_datasets(g)                    # one walk of the run's group, each dataset opened once
        n = _written(g, series)
        datasets = {**series, **{k: g[k] for k in AT_END if k in g}}
    else:
        lost = []
        ext = _extent(g, truncated, lost)
        n, datasets = ext.n, ext.datasets
    nodes = np.asarray(g["nodes"][()])
    n_nodes, dim = nodes.shape
    n_dofs = datasets["delta"].shape[1] if "delta" in datasets else 0

    def series_or_empty(key, shape):
        if key in datasets:
            return np.asarray(datasets[key][:n])
        return np.full((n, *shape), np.nan if lost and key in lost else 0.0)    # NaN: lost to a truncation

    t = series_or_empty("t", ())
    status, message = _status(g, n, lost)
    energies = {**_table(datasets, "energies", n, lost), **_table(datasets, "works", n, lost)}
    stats = json.loads(_attr(g, "stats", "{}", lost))
    metadata = json.loads(_attr(g, "metadata", "{}", lost))
    if truncated is not None:
        kept = f"to t = {t[-1]:.6g} s" if n else "none"
        lost = list(dict.fromkeys(lost))
        if n < ext.written or lost:
            message = (f"{_truncation(path, truncated)}: {n} of the run's {ext.written} outputs were recovered "
                       f"({kept})" + (f"; lost: {', '.join(lost)}" if lost else "")
                       + f"; the run's recorded status: {status}" + (f" ({message})" if message else ""))
            status = "damaged"
            log.info("%s", message)                     # the status says it, as for a killed run
        else:
            message = f"{message} (the file is truncated after this run's data, which is whole)"
    if "system" in metadata:
        return _system_results(g, datasets, n, t, metadata["system"], series_or_empty,
                               energies=energies, status=status, message=message, stats=stats,
                               metadata={**metadata, "run": run, "file": str(path), "runs": _runs(f)})
    return Results(
        t=t, delta=series_or_empty("delta", (n_dofs,)),
        delta_dot=series_or_empty("delta_dot", (n_dofs,)),
        displacement=series_or_empty("displacement", (n_nodes, dim)),
        velocity=series_or_empty("velocity", (n_nodes, dim)), nodes=nodes,
        energies=energies, status=status, message=message, stats=stats,
        metadata={**metadata, "run": run, "file": str(path), "runs": _runs(f)},
        cells={k: np.asarray(v[()]) for k, v in g["cells"].items()} if "cells" in g else {},
        element_data={k.split("/", 1)[1]: np.asarray(d[:n]) for k, d in datasets.items()
                      if k.startswith("element_data/")},
        frame=_frame(datasets, n, lost))


def _system_results(g, datasets, n: int, t, system: dict, series_or_empty, **common) -> Results:
    """The `Results` of a System run (see `flexmbs.system_run`): q, v (q_dot), the multipliers
    (written at the end: none for a run that did not end), each body's `BodyResults` and the
    joints' positions ``joints/NAME`` (in the order of the constraints, ``constraint_names``)."""
    from ..body_motion import bodies_from_series, one_body_fields
    n_q = int(system["n_q"])
    series = {k: np.asarray(d[:n]) for k, d in datasets.items() if k.startswith("bodies/")}
    static = {}
    for name in system["bodies"]:
        if f"bodies/{name}/nodes" in g:
            static[f"bodies/{name}/nodes"] = np.asarray(g[f"bodies/{name}/nodes"][()])
        if f"bodies/{name}/cells" in g:
            static.update({f"bodies/{name}/cells/{k}": np.asarray(v[()])
                           for k, v in g[f"bodies/{name}/cells"].items()})
    bodies = bodies_from_series(system["bodies"], series, static, n)
    lam = datasets.get("multipliers")
    lam = np.asarray(lam[:n]) if lam is not None and len(lam) >= n else None
    names = list(system.get("constraint_names", ()))
    joints = {k[len("joints/"):]: np.asarray(d[:n]) for k, d in datasets.items() if k.startswith("joints/")}
    joints = dict(sorted(joints.items(), key=lambda j: names.index(j[0]) if j[0] in names else len(names)))
    return Results(t=t, q=series_or_empty("q", (n_q,)), v=series_or_empty("v", (n_q,)),
                   q_dot=np.asarray(datasets["q_dot"][:n]) if "q_dot" in datasets else None,
                   multipliers=lam, constraint_names=tuple(names), bodies=bodies, joints=joints,
                   controls={k[len("controls/"):]: np.asarray(d[:n]) for k, d in datasets.items()
                             if k.startswith("controls/")},
                   contacts=contacts_by_name({k: np.asarray(d[:n]) for k, d in datasets.items() if k.startswith("contacts/")}),
                   **one_body_fields(bodies), **common)


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
