"""Named dimensions of a results file's datasets (HDF5 dimension scales, netCDF-4 style).

Every axis of every dataset of a run gets a dimension scale, so that a netCDF-4 reader
(tested: ``xarray.open_dataset(path, group=RUN, engine="h5netcdf")``) sees named dimensions
with ``t`` as the time coordinate instead of ``phony_dim_*``:

.. code:: text

    dimension        length       values (a coordinate)          used by
    t                n_t          the output times [s]           axis 0 of every time series
    node             n_nodes      -                              nodes, displacement, velocity
    component        dim          "x", "y"(, "z")                the same, last axis
    dof              n            -                              delta, delta_dot
    element          n_el         -                              element_data/*
    voigt            6            "xx", "yy", "zz", "yz", "xz", "xy"   element_data/stress
    axis             3            "x", "y", "z" (global)         3-vectors: positions, omega, joints/*
    body_axis        3            "x", "y", "z" (body frame)     columns of a rotation matrix
    euler_parameter  4            "e0", "e1", "e2", "e3"         euler_parameters
    energy, work     n_columns    the table's column names       energies, works
    coordinate       n_q          -                              q, v, q_dot (System run)
    constraint       n_c          the rows' names (`row_labels`)  multipliers (System run)

``node``, ``component``, ``dof`` and ``element`` of a System run's flexible body live in its
group ``bodies/NAME`` (netCDF lets a group see the dimensions of its ancestors, and a
group's own shadow them); the others in the run's group.  An axis that fits none of these
gets a dimension of its own, ``PATH.k`` in the run group (the dataset's path with "."
for "/", and the axis number), e.g. ``cells.line.0`` and ``cells.line.1`` for the cells'
connectivity ``cells/line``.  `is_dimension` tells the scale datasets from the data.

Scales are attached when a run creates its time series (HDF5 forbids new objects once a
file is in SWMR mode) and, for the datasets written at its end, when it ends; a killed
run's file has the first ones.
"""
from __future__ import annotations

import json

import numpy as np

__all__ = ["label_dimensions", "is_dimension", "row_labels", "RUN_DIMENSIONS", "BODY_DIMENSIONS"]

#: dimensions kept in the run's group, with their values where they have fixed ones
RUN_DIMENSIONS = {"t": None, "axis": ("x", "y", "z"), "body_axis": ("x", "y", "z"),
                  "euler_parameter": ("e0", "e1", "e2", "e3"), "voigt": ("xx", "yy", "zz", "yz", "xz", "xy"),
                  "energy": None, "work": None, "coordinate": None, "constraint": None}
#: dimensions kept in the group of the body (or run) whose mesh they count
BODY_DIMENSIONS = ("node", "component", "dof", "element")
#: dimensions of the axes after the first (time) one, by dataset name
AXES = {"delta": ("dof",), "delta_dot": ("dof",), "displacement": ("node", "component"),
        "elastic_velocity": ("node", "component"), "energies": ("energy",), "works": ("work",),
        "q": ("coordinate",), "v": ("coordinate",), "q_dot": ("coordinate",), "multipliers": ("constraint",),
        "euler_parameters": ("euler_parameter",), "stress": ("element", "voigt"),
        "stress_bottom": ("element", "voigt")}
NOT_A_VARIABLE = "This is a netCDF dimension but not a netCDF variable."     # netCDF-4's marker of an index


def row_labels(names) -> list[str]:
    """Unique labels of the multipliers' rows from their constraints' names (one name per row): a
    constraint of one row keeps its name, the k-th row of one of several is "NAME[k]"."""
    names = list(names)
    counts = {n: names.count(n) for n in names}
    seen: dict[str, int] = {}
    labels = []
    for n in names:
        k = seen[n] = seen.get(n, -1) + 1
        labels.append(n if counts[n] == 1 else f"{n}[{k}]")
    return labels


def is_dimension(key: str) -> bool:
    """Whether the dataset at ``key`` (its path in the run group) is a dimension scale that
    `label_dimensions` added, not data: a `RUN_DIMENSIONS` name (but ``t``) or an
    unnamed axis's ``PATH.k`` in the run group, or a `BODY_DIMENSIONS` name in the run group
    or a body's group.  Decided by the path alone (no attribute read: also for a damaged file)."""
    parts = key.split("/")
    if len(parts) == 1:
        return key != "t" and (key in RUN_DIMENSIONS or key in BODY_DIMENSIONS or "." in key)
    return parts[0] == "bodies" and len(parts) == 3 and parts[2] in BODY_DIMENSIONS


def _axes(key: str, shape: tuple, series: bool) -> list[str | None]:
    """The dimension of each axis of dataset ``key`` (None: none of the named ones)."""
    name = key.rsplit("/", 1)[-1]
    if name == "nodes":
        return ["node", "component"]
    if not series:
        return [None] * len(shape)
    rest = list(shape[1:])
    if name == "velocity" and len(rest) == 2:                    # a Model's nodal velocities
        names = ["node", "component"]
    elif name in AXES and len(AXES[name]) == len(rest):
        names = list(AXES[name])
    elif key.startswith(("element_data/", "bodies/")) and "/element_data/" in f"/{key}" and rest:
        names = ["element"] + [None] * (len(rest) - 1)
    elif rest == [3]:
        names = ["axis"]
    elif rest == [3, 3]:
        names = ["axis", "body_axis"]
    else:
        names = [None] * len(rest)
    return ["t"] + names


def _home(key: str, dimension: str) -> str:
    """The path (in the run group) of the group that holds ``dimension`` for dataset ``key``: a
    body's group for its mesh's dimensions, else the run group ("")."""
    parts = key.split("/")
    if dimension in BODY_DIMENSIONS and parts[0] == "bodies" and len(parts) >= 3:
        return "/".join(parts[:2])
    return ""


def _values(dimension: str, size: int, labels: dict) -> np.ndarray | None:
    """The coordinate values of ``dimension`` (None for an index without values)."""
    import h5py                          # where it is used: `import flexmbs` stays light
    fixed = RUN_DIMENSIONS.get(dimension)
    if dimension == "component" and size <= 3:
        fixed = ("x", "y", "z")[:size]
    if fixed is None:
        fixed = labels.get(dimension)
    if fixed is None or len(fixed) != size:
        return None
    return np.array(list(fixed), dtype=h5py.string_dtype())


class _Scales:
    """The dimension scales of a run group, found or created once each (a cache: HDF5's lookups
    cost about a tenth of a millisecond each, which a run with many datasets felt).  ``known``: all
    the group's datasets by path, where the caller holds them (a new run's), so that a scale not
    among them is created without a lookup."""

    def __init__(self, group_id, labels: dict, known: dict | None = None):
        self.group_id, self.labels, self.known, self.found = group_id, labels, known, {}

    def get(self, home: str, name: str, size: int):
        """The scale ``name`` of group ``home`` of length ``size`` (an h5py DatasetID), or None if
        that group has a dataset of that name that is no scale of that length."""
        path = f"{home}/{name}" if home else name
        if path not in self.found:
            self.found[path] = self._find_or_create(path, name, size)
        scale, length = self.found[path]
        return scale if length == size else None

    def _find_or_create(self, path: str, name: str, size: int) -> tuple:
        """(the scale at ``path``, found or created, and its length), or (None, None) if ``path``
        is taken by something else."""
        import h5py                          # where it is used: `import flexmbs` stays light
        from .h5create import new_dataset, open_object
        found = open_object(self.group_id, path) if self.known is None else self.known.get(path)
        if found is not None:
            if isinstance(found, h5py.h5d.DatasetID) and h5py.h5ds.is_scale(found) and found.rank == 1:
                return found, found.shape[0]
            return None, None
        values = _values(name, size, self.labels) if "." not in name else None
        if values is None:
            ds = new_dataset(self.group_id, path, np.zeros(size, dtype="f4"))
            h5py.h5ds.set_scale(ds, f"{NOT_A_VARIABLE}{size:10d}".encode())
        else:
            ds = new_dataset(self.group_id, path, values)
            h5py.h5ds.set_scale(ds, name.encode())
        return ds, size


def _labelled_axes(ds) -> set[int]:
    """The axes of dataset ``ds`` (an h5py DatasetID) that have a dimension scale already."""
    import h5py                          # where it is used: `import flexmbs` stays light
    if not h5py.h5a.exists(ds, b"DIMENSION_LIST"):           # one look for a new dataset
        return set()
    return {axis for axis in range(ds.rank) if h5py.h5ds.get_num_scales(ds, axis)}


def _scales_of(scales: _Scales, key: str, ds, shape: tuple, names: list) -> list:
    """The scale to attach to each axis of dataset ``ds`` (an h5py DatasetID) at ``key`` of ``shape``:
    that of its dimension ``names[axis]`` (None: one of its own, `_axes`), or None for an axis that
    has one."""
    labelled, found = _labelled_axes(ds), []
    for axis, name in enumerate(names):
        if axis in labelled:
            found.append(None)                                  # labelled before (idempotent)
            continue
        scale = None if name is None else scales.get(_home(key, name), name, shape[axis])
        if scale is None:                                       # unnamed, or a clash of lengths
            scale = scales.get("", f"{key.replace('/', '.')}.{axis}", shape[axis])
        found.append(scale)
    return found


def label_dimensions(g: h5py.Group, static, only=None, datasets: dict | None = None) -> None:
    """Attach a dimension scale to every axis of every dataset of run group ``g`` (see the
    module); datasets labelled before are left as they are.

    Parameters
    ----------
    g : h5py.Group
        The run's group, in a file open for writing and not in SWMR mode.
    static : callable
        ``static(key)``: whether the dataset at ``key`` is written once (no time axis).
    only : iterable of str, optional
        Label only these datasets (paths in ``g``), e.g. those a run writes at its end, when the
        others were labelled before: HDF5 takes about a millisecond per dataset to look at.
    datasets : dict[str, h5py DatasetID], optional
        The group's datasets by path, where the caller holds them all (a writer that has just
        created them): labelled in the order of a walk of the group, without the walk.
    """
    import h5py                          # where it is used: `import flexmbs` stays light
    from .h5create import attach_scales, open_object, text_attribute
    t = open_object(g.id, "t") if datasets is None else datasets.get("t")
    if t is not None and not h5py.h5ds.is_scale(t):
        h5py.h5ds.set_scale(t, b"t")
    labels = {}
    for key, dim in (("energies", "energy"), ("works", "work")):
        table = open_object(g.id, key)
        columns = None if table is None else text_attribute(table, "columns")
        if columns is not None:
            labels[dim] = json.loads(columns)
    names = json.loads(text_attribute(g.id, "metadata") or "{}").get("system", {}).get("constraint_names")
    if names:
        labels["constraint"] = row_labels(names)
    if datasets is not None:                  # HDF5 visits a group's links by name, depth first
        found = sorted(datasets.items(), key=lambda item: item[0].split("/"))
    elif only is None:
        found = []
        g.visititems(lambda key, obj: found.append((key, obj.id)) if isinstance(obj, h5py.Dataset) else None)
    else:
        found = [(key, ds) for key, ds in ((key, open_object(g.id, key)) for key in only) if ds is not None]
    scales, attached = _Scales(g.id, labels, known=datasets), []
    for key, ds in found:
        shape = ds.shape
        if key == "t" or is_dimension(key) or not shape:
            continue
        attached.append((ds, _scales_of(scales, key, ds, shape, _axes(key, shape, not static(key)))))
    attach_scales(attached)                 # each dataset's and each scale's list written once
