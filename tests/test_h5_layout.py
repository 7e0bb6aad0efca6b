"""results.h5 written with the dimension scales attached in bulk (`flexmbs.io.h5create.attach_scales`)
is the file HDF5's ``H5DSattach_scale``, called one axis at a time, writes (issue 22): every object's
kind, shape, limits, chunks, type, fill value, creation properties, data and attributes, the
dimension scale attributes with their references resolved to the objects' paths, and what
``h5py.h5ds`` and ``Dataset.dims`` report, for a Model run and a System run with rigid and flexible
bodies."""
from __future__ import annotations

import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

import flexmbs as fm
import flexmbs.io.h5create as h5create
from flexmbs.io import recording

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))


def per_axis(labels) -> None:
    """The reference: each axis's scale attached by HDF5's ``H5DSattach_scale`` (the path before the bulk one)."""
    for ds, scales in labels:
        for axis, scale in enumerate(scales):
            if scale is not None:
                h5py.h5ds.attach_scale(ds, scale, axis)


def _value(f, value):
    """An attribute's or dataset's value with every object reference replaced by the path of its object
    (addresses differ between two files that hold the same objects)."""
    if isinstance(value, h5py.Reference):
        return f[value].name
    if isinstance(value, np.void) or (isinstance(value, np.ndarray) and value.dtype.names):
        return [_value(f, value[name]) for name in value.dtype.names] if value.ndim == 0 else \
            [_value(f, v) for v in value]
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "O":
            return [_value(f, v) for v in value.ravel()], value.shape
        return value.dtype.str, value.shape, value.tolist()
    if isinstance(value, np.generic):
        return value.dtype.str, value.item()
    return value


def _type(type_id) -> tuple:
    """An HDF5 type as its class, size and encoding (compound members, their offsets and types, the
    sign of an integer, the string's padding and character set: all of it)."""
    return type_id.get_class(), type_id.get_size(), type_id.encode()


def _scales_seen(f, ds) -> list:
    """What h5py.h5ds and ``Dataset.dims`` report of dataset ``ds``'s axes: per axis the number of
    scales, their paths in the order of H5DSiterate, their labels, and ``dims[k]``'s names (None for a
    dataset without scales, on which H5DSiterate fails)."""
    if "DIMENSION_LIST" not in ds.attrs:
        return None
    found = []
    for axis in range(ds.ndim):
        names = []
        h5py.h5ds.iterate(ds.id, axis, lambda scale_id: names.append(h5py.h5i.get_name(scale_id).decode()), 0)
        assert all(h5py.h5ds.is_attached(ds.id, f[name].id, axis) for name in names)
        found.append((h5py.h5ds.get_num_scales(ds.id, axis), names, h5py.h5ds.get_label(ds.id, axis),
                      [scale.name for scale in ds.dims[axis].values()], list(ds.dims[axis].keys())))
    return found


def describe(path) -> dict:
    """Every object of the HDF5 file at ``path`` with all that a reader can see of it (h5dump -A with
    the data, the creation properties, and the dimension scales as h5py.h5ds reports them)."""
    out = {}
    with h5py.File(path, "r") as f:
        def one(key, obj):
            plist = obj.id.get_create_plist()
            attrs = {}
            for name in obj.attrs:
                aid = obj.attrs.get_id(name)
                attrs[name] = (_type(aid.get_type()), aid.shape, _value(f, obj.attrs[name]))
            common = (plist.get_obj_track_times(), plist.get_attr_creation_order(), attrs)
            if isinstance(obj, h5py.Dataset):
                scale = h5py.h5ds.is_scale(obj.id)
                out[key] = ("dataset", obj.shape, obj.maxshape, obj.chunks, _type(obj.id.get_type()),
                            _value(f, np.asarray(obj.fillvalue)), plist.get_layout(), plist.get_fill_time(),
                            plist.get_alloc_time(), plist.get_nfilters(), common,
                            _value(f, obj[()]) if obj.size else None,
                            (scale, h5py.h5ds.get_scale_name(obj.id) if scale else None),
                            None if scale else _scales_seen(f, obj))
            else:
                out[key] = ("group", plist.get_link_creation_order(), common)
        one("/", f)
        f.visititems(one)
    return out


def differences(a: dict, b: dict) -> dict:
    return {k: (a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}


def bar_model():
    """The spinning 4-element bar under a tip load of tests/test_results_io.py."""
    bar = fm.Bar2(fm.Material(E=210e9, rho=50_000.0), area=0.2e-4)
    load = fm.NodalLoad("end", "u", 1.0, lambda t: np.sin(200.0 * t))
    return fm.Model(fm.generate.line(4, 1.0), bar, motion=fm.motion.ConstantRotation(15.0),
                    fixed=[("start", "all")], loads=[load])


def model_run(path):
    fm.run(bar_model(), store=path, formulation="hamilton", method="DOP853", rtol=1e-6, t_end=1e-3, dt_out=1e-4)


def system_run(path):
    """The coupled slider-crank (cases/slider_crank.py): a crank, a slider and a floating-frame rod of 2
    elements, 0.02 revolution."""
    import slider_crank
    with recording(path):
        slider_crank.run(out=path.parent / "case", coupled=True, plots=False, elements=2, revolutions=0.02,
                         degrees_out=2.0)


@pytest.mark.parametrize("run", [model_run, system_run], ids=["model", "system"])
def test_scales_attached_in_bulk_make_the_file_of_h5ds(run, tmp_path, monkeypatch):
    """The same run written with the scales attached in bulk and one axis at a time by HDF5: every object
    the same (the run's time series, meshes, dimension scales, the datasets written at the end)."""
    bulk, reference = tmp_path / "bulk" / "results.h5", tmp_path / "h5ds" / "results.h5"
    bulk.parent.mkdir()
    reference.parent.mkdir()
    monkeypatch.setattr(h5create, "BULK_FROM", 0)           # in bulk however few the datasets
    run(bulk)
    monkeypatch.setattr(h5create, "attach_scales", per_axis)
    run(reference)
    got, expected = describe(bulk), describe(reference)
    for desc in (got, expected):            # the times and the version differ between runs, not the layout
        desc["/"][2][2].pop("created")
        for key, value in desc.items():
            if value[0] == "group" and "metadata" in value[2][2]:
                value[2][2].pop("metadata")
            if value[0] == "group" and "stats" in value[2][2]:
                value[2][2].pop("stats")
    assert differences(got, expected) == {}
    scales = [k for k, v in got.items() if v[0] == "dataset" and v[12][0]]
    assert len(scales) >= 10 and all("REFERENCE_LIST" in got[k][10][2] for k in scales)


def test_a_dataset_labelled_in_part_keeps_the_order_h5ds_gives(tmp_path, monkeypatch):
    """A dataset whose DIMENSION_LIST exists (an axis labelled before) goes through H5DSattach_scale, and so
    does the rest of the call, so that a shared scale's records stay in the order of the call; a scale
    that already has records gets the new ones after them."""
    def write(path, attach):
        with h5py.File(path, "w", libver=("v110", "latest")) as f:
            t = f.create_dataset("t", data=np.arange(4.0))
            axis = f.create_dataset("axis", data=np.zeros(3, dtype="f4"))
            h5py.h5ds.set_scale(t.id, b"t")
            h5py.h5ds.set_scale(axis.id, b"axis")
            a, b, c = (f.create_dataset(k, data=np.zeros((4, 3))) for k in "abc")
            h5py.h5ds.attach_scale(c.id, t.id, 0)                       # before: c's time axis, t's first record
            attach([(a.id, [t.id, axis.id]), (b.id, [t.id, None]), (c.id, [None, axis.id])])
            attach([(b.id, [None, axis.id])])
    monkeypatch.setattr(h5create, "BULK_FROM", 0)
    write(tmp_path / "bulk.h5", h5create.attach_scales)
    write(tmp_path / "h5ds.h5", per_axis)
    got = describe(tmp_path / "bulk.h5")
    assert differences(got, describe(tmp_path / "h5ds.h5")) == {}
    records = {k: [(path, axis[1]) for path, axis in got[k][10][2]["REFERENCE_LIST"][2]] for k in ("t", "axis")}
    assert records == {"t": [("/c", 0), ("/a", 0), ("/b", 0)], "axis": [("/a", 1), ("/c", 1), ("/b", 1)]}


def test_the_scale_attributes_have_the_types_h5ds_writes(tmp_path, monkeypatch):
    """DIMENSION_LIST: variable-length lists of H5T_STD_REF_OBJ, one per axis; REFERENCE_LIST: the
    compound {dataset: H5T_STD_REF_OBJ at 0, dimension: H5T_NATIVE_UINT at 8} of 16 bytes (HDF5's
    hl/src/H5DS.c), equal (H5Tequal) to what H5DSattach_scale writes."""
    with h5py.File(tmp_path / "types.h5", "w", libver=("v110", "latest")) as f:
        scales = []
        for name in ("s1", "s2"):
            scales.append(f.create_dataset(name, data=np.zeros(3, dtype="f4")))
            h5py.h5ds.set_scale(scales[-1].id, name.encode())
        a, b = f.create_dataset("a", data=np.zeros((2, 3))), f.create_dataset("b", data=np.zeros((2, 3)))
        h5py.h5ds.attach_scale(a.id, scales[0].id, 1)
        monkeypatch.setattr(h5create, "BULK_FROM", 0)
        h5create.attach_scales([(b.id, [None, scales[1].id])])
        for attr, (x, y) in (("DIMENSION_LIST", (a, b)), ("REFERENCE_LIST", scales)):
            assert h5py.h5a.open(x.id, attr.encode()).get_type() == h5py.h5a.open(y.id, attr.encode()).get_type()
        records = h5py.h5a.open(scales[1].id, b"REFERENCE_LIST").get_type()
        assert records.get_size() == 16 and records.get_member_offset(1) == 8
        assert records.get_member_type(0) == h5py.h5t.STD_REF_OBJ
        assert records.get_member_type(1).get_sign() == h5py.h5t.SGN_NONE
        assert b.dims[1][0].name == "/s2" and list(b.dims[0].keys()) == []
        assert h5py.h5ds.is_attached(b.id, scales[1].id, 1) and not h5py.h5ds.is_attached(b.id, scales[0].id, 1)


def test_set_attribute_writes_what_h5pys_attrs_write(tmp_path):
    """`flexmbs.io.h5create.set_attribute` (the results file's, run group's and datasets' attributes)
    makes what ``attrs[name] = value`` makes: a str, an int and a float, on the root group, a group and
    a dataset, and a value replaced by another (the run's status at its end)."""
    values = {"format": "flexmbs-results", "format_version": 1, "order": 3, "scale": 0.5, "status": "finished"}

    def write(path, setter):
        with h5py.File(path, "w", libver=("v110", "latest")) as f:
            g = f.create_group("run")
            ds = g.create_dataset("t", data=np.arange(3.0))
            for obj in (f, g, ds):
                setter(obj, "status", "running")
                for name, value in values.items():
                    setter(obj, name, value)

    def high_level(obj, name, value):
        obj.attrs[name] = value
    write(tmp_path / "high.h5", high_level)
    write(tmp_path / "low.h5", lambda obj, name, value: h5create.set_attribute(obj.id, name, value))
    got = describe(tmp_path / "low.h5")
    assert differences(got, describe(tmp_path / "high.h5")) == {}
    assert got["run"][2][2]["status"][2] == "finished" and got["run/t"][10][2]["order"][2] == ("<i8", 3)


def test_many_datasets_are_labelled_in_bulk_as_h5ds_labels_them(tmp_path):
    """From `BULK_FROM` datasets in one call `attach_scales` writes the lists itself (its default path
    for a large System): 70 series sharing ``t`` and ``axis`` give the file H5DS gives."""
    def write(path, attach):
        with h5py.File(path, "w", libver=("v110", "latest")) as f:
            t = h5create.new_dataset(f.id, "t", np.arange(2.0))
            axis = h5create.new_dataset(f.id, "axis", np.zeros(3, dtype="f4"))
            h5py.h5ds.set_scale(t, b"t")
            h5py.h5ds.set_scale(axis, b"axis")
            attach([(h5create.new_dataset(f.id, f"bodies/b{k}/position", np.zeros((2, 3))), [t, axis])
                    for k in range(70)])
    assert 70 >= h5create.BULK_FROM
    write(tmp_path / "bulk.h5", h5create.attach_scales)
    write(tmp_path / "h5ds.h5", per_axis)
    got = describe(tmp_path / "bulk.h5")
    assert differences(got, describe(tmp_path / "h5ds.h5")) == {}
    assert len(got["t"][10][2]["REFERENCE_LIST"][2]) == 70
