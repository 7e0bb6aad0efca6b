"""HDF5 objects created with h5py's low-level calls, as its high-level ``create_dataset`` and
``attrs[...] =`` create them.

h5py's high-level calls cost about half a millisecond each in Python (argument checks, property
lists built anew, the object registry), which a run's results file paid some fifty times when it
began (its time series, the bodies' meshes and the dimension scales: about 45 ms of a 0.4 s
process, docs/benchmarks.md 20.6).  These functions make the same objects with the same creation
properties as h5py's defaults (no time stamps, no attribute creation order, intermediate groups
created, variable-length UTF-8 strings): a reader cannot tell them apart (tests/test_lean_outputs.py
compares them property by property, tests/test_h5_layout.py the attributes of `set_attribute`).

`attach_scales` writes what HDF5's ``H5DSattach_scale`` writes for many datasets at once: each
dataset's DIMENSION_LIST and each scale's REFERENCE_LIST once, where ``H5DSattach_scale``
rewrites the scale's list at every axis (a scale shared by N datasets costs O(N^2)); for fewer
than `BULK_FROM` datasets it calls ``H5DSattach_scale``, which is faster there.
"""
from __future__ import annotations

from functools import lru_cache

import h5py
import numpy as np

__all__ = ["new_dataset", "open_object", "set_attribute", "text_attribute", "attach_scales"]


@lru_cache(maxsize=None)
def _link_properties():
    """h5py's default link creation list: intermediate groups created (by HDF5, with the new
    object's time tracking: none, as h5py's ``create_dataset`` makes them), ASCII names."""
    lcpl = h5py.h5p.create(h5py.h5p.LINK_CREATE)
    lcpl.set_create_intermediate_group(True)
    return lcpl


@lru_cache(maxsize=None)
def _text_types():
    """(file type, memory type) of a str attribute as h5py writes it: variable-length UTF-8, from
    an object array of str (h5py's ``attrs.create``), and the scalar dataspace of an attribute."""
    dtype = h5py.string_dtype()
    return h5py.h5t.py_create(dtype, logical=True), h5py.h5t.py_create(dtype), h5py.h5s.create(h5py.h5s.SCALAR)


@lru_cache(maxsize=256)
def _dataset_properties(chunks: tuple | None):
    """h5py's defaults of a new dataset (``track_times=False``, attributes in name order) and the
    chunk shape, if any: one list per chunk shape, which HDF5 copies into each dataset it makes."""
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    if chunks is not None:
        dcpl.set_chunk(chunks)
    dcpl.set_obj_track_times(False)
    dcpl.set_attr_creation_order(0)
    return dcpl


@lru_cache(maxsize=256)
def _space(shape: tuple, limits: tuple | None):
    """The dataspace of ``shape`` with ``limits`` (None: fixed), made once per shape (HDF5 copies it)."""
    return h5py.h5s.create_simple(shape, limits)


@lru_cache(maxsize=None)
def _number_type(dtype: np.dtype):
    return h5py.h5t.py_create(dtype, logical=True)


def _file_type(dtype: np.dtype):
    """The HDF5 type h5py stores ``dtype`` as, made once for a number and for h5py's str dtype (a
    str dtype is told from other object dtypes by its metadata, which np.dtype's hash leaves out:
    other objects' types are made each time)."""
    if dtype.kind in "biufc":
        return _number_type(dtype)
    info = h5py.check_string_dtype(dtype)
    if info is not None and info.encoding == "utf-8" and info.length is None:
        return _text_types()[0]
    return h5py.h5t.py_create(dtype, logical=True)


def new_dataset(group_id, path: str, data=None, *, dtype=None, shape=None, maxshape=None, chunks=None):
    """A new dataset at ``path`` (slashes: groups created) under ``group_id`` (an h5py GroupID or
    FileID) with ``data`` written, or empty of ``shape`` and ``dtype``; ``maxshape`` None axes
    unlimited.  Returns its h5py DatasetID.

    What ``h5py.Group.create_dataset(path, shape, dtype, data, maxshape=..., chunks=...)`` makes,
    without its Python overhead (the caller's arguments are trusted: internal use only): HDF5
    finds or creates the groups of ``path`` itself, and the property lists, dataspaces and number
    types are made once and reused."""
    if data is not None:
        data = np.asarray(data, dtype=dtype)
        shape, dtype = data.shape, data.dtype
    dtype = np.dtype(dtype)
    limits = None if maxshape is None else tuple(h5py.h5s.UNLIMITED if m is None else m for m in maxshape)
    dsid = h5py.h5d.create(group_id, path.encode(), _file_type(dtype), _space(tuple(shape), limits),
                           dcpl=_dataset_properties(None if chunks is None else tuple(chunks)),
                           lcpl=_link_properties())
    if data is not None and data.size:
        dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(data))
    return dsid


def set_attribute(object_id, name: str, value) -> None:
    """Attribute ``name`` of an object = ``value``, a str or a number, as ``obj.attrs[name] = value``
    writes it (a str: a scalar variable-length UTF-8 string; a number: a scalar of its numpy type),
    replacing an attribute of that name."""
    key = name.encode()
    if h5py.h5a.exists(object_id, key):
        h5py.h5a.delete(object_id, key)
    if isinstance(value, str):
        file_type, memory_type, scalar = _text_types()
        value = np.array(value, dtype=h5py.string_dtype())
    else:
        value = np.asarray(value)
        file_type, scalar = _file_type(value.dtype), _text_types()[2]
        memory_type = file_type
    h5py.h5a.create(object_id, key, file_type, scalar).write(value, mtype=memory_type)


def text_attribute(object_id, name: str) -> str | None:
    """The str attribute ``name`` of an object as `set_attribute` (or h5py's ``attrs[name] =
    str``) writes it, or None if the object has no attribute of that name."""
    if not h5py.h5a.exists(object_id, name.encode()):
        return None
    _, memory_type, _ = _text_types()
    value = np.empty((), dtype=h5py.string_dtype())
    h5py.h5a.open(object_id, name.encode()).read(value, mtype=memory_type)
    return value[()].decode("utf-8")                          # h5py's memory type gives the UTF-8 bytes


def open_object(group_id, path: str):
    """The h5py ObjectID (GroupID, DatasetID, ...) at ``path`` under ``group_id``, or None if
    there is none."""
    try:
        return h5py.h5o.open(group_id, path.encode())
    except KeyError:
        return None


#: datasets in one `attach_scales` call from which it writes the scale attributes itself (below, H5DS)
BULK_FROM = 64


@lru_cache(maxsize=None)
def _scale_types():
    """The HDF5 types of the Dimension Scale attributes as ``H5DSattach_scale`` writes them (HDF5's
    hl/src/H5DS.c with the native VOL connector's old-style object references), each also the
    memory type of the numpy layout it is written from:

    - DIMENSION_LIST of a dataset of rank r: r variable-length lists of H5T_STD_REF_OBJ, list k
      the scales of axis k; in memory r ``hvl_t`` {size_t len; void *p}, p pointing at len
      ``hobj_ref_t``;
    - REFERENCE_LIST of a scale: one record per (dataset, axis) it labels, the C struct
      ``{hobj_ref_t dataset; unsigned int dimension}``: H5T_STD_REF_OBJ at 0, H5T_NATIVE_UINT at
      its aligned offset 8, 16 bytes.

    An ``hobj_ref_t`` is the address of the object's header in the file (HDF5 File Format
    Specification, "Object Reference"), which `_addresses` reads.
    """
    dimension_list = h5py.h5t.vlen_create(h5py.h5t.STD_REF_OBJ)
    hvl_t = np.dtype([("len", np.uintp), ("p", np.uintp)])
    record = np.dtype([("dataset", np.uint64), ("dimension", np.uintc)], align=True)    # the C struct
    reference_list = h5py.h5t.create(h5py.h5t.COMPOUND, record.itemsize)
    reference_list.insert(b"dataset", record.fields["dataset"][1], h5py.h5t.STD_REF_OBJ)
    reference_list.insert(b"dimension", record.fields["dimension"][1], h5py.h5t.py_create(np.dtype(np.uintc)))
    return (dimension_list, hvl_t), (reference_list, record)


def _addresses(objects: dict) -> dict:
    """The address of each object of ``objects`` (key -> h5py ObjectID) in its file, by the same key:
    its old-style object reference (``hobj_ref_t``)."""
    return {key: h5py.h5o.get_info(obj).addr for key, obj in objects.items()}


def _dimension_lists(scales: list, hvl_t):
    """The DIMENSION_LISTs (`_scale_types`) of datasets whose axes have at most one scale each, one
    after the other: ``scales`` lists the address of each axis's scale (None: no scale), the datasets'
    axes in turn.  Returns (the hvl_t array, one per axis, and the references it points at, to be
    kept while it is written)."""
    has = np.array([address is not None for address in scales], dtype=bool)
    refs = np.array([address or 0 for address in scales], dtype=np.uint64)
    lists = np.zeros(len(scales), dtype=hvl_t)
    lists["len"] = has
    lists["p"] = np.where(has, refs.ctypes.data + refs.itemsize * np.arange(len(scales), dtype=np.uintp), 0)
    return lists, refs                                  # an empty list: length 0, NULL, as H5DS writes it


def _write_list(object_id, name: bytes, file_type, values) -> None:
    """Create the 1-D attribute ``name`` of an object = ``values`` (in the layout of ``file_type``)."""
    h5py.h5a.create(object_id, name, file_type, _space((len(values),), None)).write(values, mtype=file_type)


def _records(scale, reference_list, record):
    """The records of ``scale``'s REFERENCE_LIST (a ``record`` array; empty if it has none)."""
    if not h5py.h5a.exists(scale, b"REFERENCE_LIST"):
        return np.empty(0, dtype=record)
    attr = h5py.h5a.open(scale, b"REFERENCE_LIST")
    values = np.empty(attr.shape, dtype=record)
    attr.read(values, mtype=reference_list)
    return values


def attach_scales(labels) -> None:
    """Attach dimension scales: for ``labels``, a list of (dataset, scales) with ``scales[axis]`` the
    scale to attach to that axis of ``dataset`` (None: none), h5py DatasetIDs, the attributes that
    ``H5DSattach_scale(dataset, scales[axis], axis)`` called for each dataset and axis in turn
    leaves, each written once.

    Each dataset gets its DIMENSION_LIST (one scale on each labelled axis), each scale's
    REFERENCE_LIST the records (dataset, axis) appended in that order.  The types are
    ``H5DSattach_scale``'s (`_scale_types`), so that ``h5py.h5ds`` (``is_attached``,
    ``get_num_scales``, ``iterate``), ``Dataset.dims`` and netCDF-4 readers see the same scales
    (tests/test_h5_layout.py compares the files object by object).  ``H5DSattach_scale`` reads
    and rewrites both lists at every axis, so that a scale shared by N datasets costs O(N^2);
    here each list is written once, the datasets' attributes all created before any is written
    (HDF5 takes twice as long to create an object's attribute after writing another's).

    Fewer than `BULK_FROM` datasets are labelled by ``H5DSattach_scale`` one axis at a time: HDF5
    does in C what this function does in Python, and with few datasets per scale its repeated
    reads cost less than the Python calls (docs/benchmarks.md 20.9, "Creating results.h5").  So is
    a call with a dataset that has scales already (a DIMENSION_LIST), which H5DS extends, so that
    the scales' records keep their order.  As for ``H5DSattach_scale`` the scales must be
    dimension scales (``h5py.h5ds.set_scale``) in the datasets' file, ``scales`` as long as the
    dataset's rank.
    """
    (dimension_list, hvl_t), (reference_list, record) = _scale_types()
    labels = [(ds, scales) for ds, scales in labels if any(scale is not None for scale in scales)]
    links = [(ds, axis, scale) for ds, scales in labels for axis, scale in enumerate(scales) if scale is not None]
    if len(labels) < BULK_FROM or any(h5py.h5a.exists(ds, b"DIMENSION_LIST") for ds, _ in labels):
        for ds, axis, scale in links:
            h5py.h5ds.attach_scale(ds, scale, axis)
        return
    objects, users = {}, {}                  # by id(): h5py's hash of an ObjectID asks HDF5 for the object
    for ds, axis, scale in links:
        objects[id(ds)], objects[id(scale)] = ds, scale
        users.setdefault(id(scale), []).append((id(ds), axis))
    address = _addresses(objects)
    lists, refs = _dimension_lists([None if scale is None else address[id(scale)]
                                    for _, scales in labels for scale in scales], hvl_t)
    attrs = [h5py.h5a.create(ds, b"DIMENSION_LIST", dimension_list, _space((len(scales),), None))
             for ds, scales in labels]
    start = 0
    for attr, (_, scales) in zip(attrs, labels):
        attr.write(lists[start:start + len(scales)], mtype=dimension_list)
        start += len(scales)
    for key, pairs in users.items():
        scale = objects[key]
        records = np.array([(address[ds], axis) for ds, axis in pairs], dtype=record)
        old = _records(scale, reference_list, record)
        if len(old):                                  # H5DS deletes it to write it longer
            h5py.h5a.delete(scale, b"REFERENCE_LIST")
        _write_list(scale, b"REFERENCE_LIST", reference_list, np.concatenate([old, records]))
