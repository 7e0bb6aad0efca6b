"""HDF5 objects created with h5py's low-level calls, as its high-level ``create_dataset`` and
``attrs[...] =`` create them.

h5py's high-level calls cost about half a millisecond each in Python (argument checks, property
lists built anew, the object registry), which a run's results file paid some fifty times when it
began (its time series, the bodies' meshes and the dimension scales: about 45 ms of a 0.4 s
process, docs/benchmarks.md 20.6).  These functions make the same objects with the same creation
properties as h5py's defaults (no time stamps, no attribute creation order, intermediate groups
created, variable-length UTF-8 strings): a reader cannot tell them apart (tests/test_lean_outputs.py
compares them property by property).
"""
from __future__ import annotations

from functools import lru_cache

import h5py
import numpy as np

__all__ = ["new_dataset", "open_object", "set_text_attribute"]


@lru_cache(maxsize=None)
def _link_properties():
    """h5py's default link creation list: intermediate groups created, ASCII names."""
    lcpl = h5py.h5p.create(h5py.h5p.LINK_CREATE)
    lcpl.set_create_intermediate_group(True)
    return lcpl


@lru_cache(maxsize=None)
def _text_types():
    """(file type, memory type) of a str attribute as h5py writes it: variable-length UTF-8, from
    an object array of str (h5py's ``attrs.create``)."""
    dtype = h5py.string_dtype()
    return h5py.h5t.py_create(dtype, logical=True), h5py.h5t.py_create(dtype)


def _dataset_properties(chunks: tuple | None):
    """h5py's defaults of a new dataset (``track_times=False``, attributes in name order) and the
    chunk shape, if any."""
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    if chunks is not None:
        dcpl.set_chunk(tuple(chunks))
    dcpl.set_obj_track_times(False)
    dcpl.set_attr_creation_order(0)
    return dcpl


def _parent(group_id, path: str):
    """(the group that will hold ``path``, the last name of ``path``), its missing groups created as
    h5py's ``require_group`` creates them (``track_times=False``)."""
    *parents, name = path.split("/")
    for part in parents:
        found = open_object(group_id, part)
        if found is None:
            gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
            gcpl.set_obj_track_times(False)
            found = h5py.h5g.create(group_id, part.encode(), gcpl=gcpl)
        group_id = found
    return group_id, name


def new_dataset(group_id, path: str, data=None, *, dtype=None, shape=None, maxshape=None, chunks=None):
    """A new dataset at ``path`` (slashes: groups created) under ``group_id`` (an h5py GroupID or
    FileID) with ``data`` written, or empty of ``shape`` and ``dtype``; ``maxshape`` None axes
    unlimited.  Returns its h5py DatasetID.

    What ``h5py.Group.create_dataset(path, shape, dtype, data, maxshape=..., chunks=...)`` makes,
    without its Python overhead (the caller's arguments are trusted: internal use only)."""
    if data is not None:
        data = np.asarray(data, dtype=dtype)
        shape, dtype = data.shape, data.dtype
    dtype = np.dtype(dtype)
    parent, name = _parent(group_id, path)
    limits = None if maxshape is None else tuple(h5py.h5s.UNLIMITED if m is None else m for m in maxshape)
    space = h5py.h5s.create_simple(tuple(shape), limits)
    dsid = h5py.h5d.create(parent, name.encode(), h5py.h5t.py_create(dtype, logical=True), space,
                           dcpl=_dataset_properties(chunks))
    if data is not None and data.size:
        dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(data))
    return dsid


def set_text_attribute(object_id, name: str, value: str) -> None:
    """Attribute ``name`` of a new object = the str ``value``, as ``obj.attrs[name] = value`` writes
    it (a scalar variable-length UTF-8 string); the object must not have that attribute yet."""
    file_type, memory_type = _text_types()
    attr = h5py.h5a.create(object_id, name.encode(), file_type, h5py.h5s.create(h5py.h5s.SCALAR))
    attr.write(np.array(value, dtype=h5py.string_dtype()), mtype=memory_type)


def open_object(group_id, path: str):
    """The h5py ObjectID (GroupID, DatasetID, ...) at ``path`` under ``group_id``, or None if
    there is none."""
    try:
        return h5py.h5o.open(group_id, path.encode())
    except KeyError:
        return None
