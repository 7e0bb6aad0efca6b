"""The ParaView export of a System run (`flexmbs.io.paraview.export_paraview`: paraview.xdmf, its .h5 and
paraview_final.vtu) writes the same files as the straightforward per-output path it replaced (issue 22,
the whole process as fast as its solve): the XDMF and VTU text byte for byte, every dataset and root
attribute of the .h5 (names, shapes, dtypes, values, NaN where NaN).

The reference (`reference_export`) is the writer as it was at the start of the change (commit 9bf4ddc),
one output at a time: the scene of each output placed on its own (`global_scene(results, [i])`), each
output's Grid made from the template by its own ``str.format``, the last output's VTU from a copy of the
results at that output.  Its XML tree is serialised by `flexmbs.io.vtk_formats.xml_text`, which
tests/test_xdmf_xml.py compares with ElementTree's text of the same trees.  The scenes are
`global_scene`'s in both (its placing is checked against the bodies in tests/test_paraview_system.py);
what is compared is how the writer gathers and writes them.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.body_motion import body_histories, body_outputs, joint_histories
from flexmbs.io import paraview
from flexmbs.io.paraview import PARTS, export_paraview, global_scene, output_steps, write_results_vtu
from flexmbs.io.vtk_formats import XdmfSeries, attribute_type, comment, sub_element, xdmf_number_type
from flexmbs.results import Results

CASES = Path(__file__).resolve().parents[1] / "cases"


def reference_xdmf(results: Results, path: Path, every: int) -> None:
    """paraview.xdmf and .h5 of ``results`` as commit 9bf4ddc wrote them, output by output."""
    steps = output_steps(len(results.t), every)
    points, cells, point_data, cell_data, constant = global_scene(results, steps[:1])
    info = {"units": json.dumps(paraview.UNITS), "frame": "global", "bodies": json.dumps(list(results.bodies)),
            "joints": json.dumps(list(results.joints)), "parts": json.dumps(PARTS)}
    path.parent.mkdir(parents=True, exist_ok=True)
    with XdmfSeries(path, info) as writer:
        writer.write_mesh(points[0], cells)
        series = {}

        def slab(parent, name, one):
            shape = (len(steps),) + one.shape
            series[name] = writer.h5.create_dataset(f"series/{name}", shape=shape, dtype=one.dtype)
            number, precision = xdmf_number_type(one.dtype)
            item = sub_element(parent, "DataItem", ItemType="HyperSlab", Type="HyperSlab",
                               Dimensions=" ".join(map(str, one.shape)))
            item.append(comment(f"series/{name} at output @K@"))
            select = sub_element(item, "DataItem", Dimensions=f"3 {len(shape)}", Format="XML")
            select.text = " ".join(["@K@"] + ["0"] * one.ndim + ["1"] * len(shape) + ["1"]
                                   + [str(n) for n in one.shape])
            source = sub_element(item, "DataItem", DataType=number, Precision=precision, Format="HDF",
                                 Dimensions=" ".join(map(str, shape)))
            source.text = f"{writer.data_name}:/series/{name}"

        grid = writer.step_grid("@T@", moving=True)
        grid.set("Name", "@STEP@")
        slab(sub_element(grid, "Geometry", GeometryType="XYZ"), "geometry", points[0])
        for center, fields in (("Node", point_data), ("Cell", cell_data)):
            for name, a in fields.items():
                attribute = sub_element(grid, "Attribute", Name=name, AttributeType=attribute_type(a[0].shape),
                                        Center=center)
                slab(attribute, name, a[0])
        for name, data in constant.items():
            writer.constant_cell_field(grid, name, data)
        for k, i in enumerate(steps):                                   # one output at a time
            points, _, point_data, cell_data, _ = global_scene(results, [i])
            for name, data in {"geometry": points, **point_data, **cell_data}.items():
                series[name][k] = data[0]
    text = path.read_text()
    start = text.index('<Grid Name="@STEP@"')
    end = text.index("</Grid>", start) + len("</Grid>")
    template = text[start:end].replace("@STEP@", "step {k}").replace("@K@", "{k}").replace("@T@", "{t}")
    grids = [template.format(k=k, t=repr(float(results.t[i]))) for k, i in enumerate(steps)]
    path.write_text(text[:start] + "".join(grids) + text[end:])


def reference_export(results: Results, directory: Path, every: int) -> None:
    reference_xdmf(results, directory / "paraview.xdmf", every)
    last = len(results.t) - 1
    at_last = Results(t=results.t[[last]], bodies={n: body_outputs(b, [last]) for n, b in results.bodies.items()},
                      joints={n: r[[last]] for n, r in results.joints.items()},
                      contacts={n: {k: v[[last]] for k, v in c.items()} for n, c in results.contacts.items()})
    write_results_vtu(at_last, directory / "paraview_final.vtu")


def h5_contents(path: Path) -> dict:
    """{dataset name: (shape, dtype, values)} and the root attributes (value, string type) of an HDF5 file."""
    out = {}
    with h5py.File(path, "r") as f:
        out["/attrs"] = {name: (value, h5py.check_string_dtype(f.attrs.get_id(name).dtype))
                         for name, value in f.attrs.items()}
        f.visititems(lambda name, item: out.__setitem__(name, (item.shape, item.dtype.str, item[()]))
                     if isinstance(item, h5py.Dataset) else None)
    return out


def assert_same_files(new: Path, ref: Path) -> None:
    for name in ("paraview.xdmf", "paraview_final.vtu"):
        assert (new / name).read_bytes() == (ref / name).read_bytes(), name
    a, b = h5_contents(new / "paraview.h5"), h5_contents(ref / "paraview.h5")
    assert a.keys() == b.keys() and a["/attrs"] == b["/attrs"]
    for name in a.keys() - {"/attrs"}:
        assert a[name][:2] == b[name][:2], name
        np.testing.assert_array_equal(a[name][2], b[name][2], err_msg=name)     # NaN equals NaN here


@pytest.fixture(scope="module")
def triple():
    """The triple pendulum (Euler parameters, index3-alpha) over 0.5 s, 51 outputs: rigid boxes, their
    axes and three joints."""
    sys.path.insert(0, str(CASES))
    import triple_pendulum
    system = triple_pendulum.build("euler-parameters")
    return fm.run(system, formulation="index3", method="index3-alpha", h=1e-3, t_end=0.5, dt_out=0.01)


@pytest.fixture(scope="module")
def slider_crank(tmp_path_factory):
    """The coupled slider-crank over half a revolution, 61 outputs: a floating-frame rod with its
    axial force between rigid bodies."""
    sys.path.insert(0, str(CASES))
    import slider_crank
    res, _, _ = slider_crank.run(out=tmp_path_factory.mktemp("sc"), coupled=True, plots=False, revolutions=0.5,
                                 degrees_out=3.0)
    return res


@pytest.fixture(scope="module")
def mixed():
    """A hexahedral solid (stress tensors, von Mises) on a turning frame, a 3D corotational beam and
    a point mass at made-up coordinates (`body_histories`), with a contact's records: one slot in
    contact, one empty (NaN)."""
    from flexmbs.bodies import CorotationalBeam3D, FlexibleBody, PointMass
    from flexmbs.rotations import matrix_to_ep, rotation_z
    from flexmbs.system import System
    mat = fm.Material(E=70e9, rho=2700.0, nu=0.3)
    solid = FlexibleBody(fm.Model(fm.generate.box(2, 1, 1, 1.0, 0.2, 0.1), fm.Hex8(mat)), "solid",
                         reference="mean-axis")
    beam = CorotationalBeam3D.line("beam", (0.0, 0.0, 1.0), (1.0, 0.0, 1.0), 3, mat, 1e-4, 1e-9, 1e-9, 2e-9)
    system = System([solid, beam, PointMass("mass", 1.0, position=(0.0, 1.0, 2.0))])
    n_t = 13
    rng = np.random.default_rng(7)
    q = system.initial_coordinates() + 1e-3 * rng.standard_normal((n_t, system.n_q))
    frame = system.slice(solid)
    q[:, frame.start + 3:frame.start + 7] = [matrix_to_ep(rotation_z(0.3 * k)) for k in range(n_t)]
    point = rng.standard_normal((n_t, 2, 3))
    force = rng.standard_normal((n_t, 2, 3))
    point[:, 1] = force[:, 1] = np.nan
    contacts = {"floor": {"point": point, "normal_force": force, "friction_force": 0.1 * force,
                          "depth": np.abs(point[..., 0]), "bodies": np.zeros((n_t, 2, 2), dtype=np.int64),
                          "count": np.ones(n_t, dtype=np.int64)}}
    return Results(t=np.linspace(0.0, 0.12, n_t), bodies=body_histories(system, q, np.zeros_like(q)),
                   joints=joint_histories(system, q), contacts=contacts)


@pytest.mark.parametrize("every", [1, 3])
@pytest.mark.parametrize("block", [None, 8])
@pytest.mark.parametrize("case", ["triple", "slider_crank", "mixed"])
def test_export_writes_the_files_of_the_per_output_path(case, every, block, request, tmp_path, monkeypatch):
    """Byte for byte and array for array, with every output and every third (the last always), in one
    block and in blocks of 8 outputs (`SERIES_BLOCK`: consecutive outputs as views, every third as copies)."""
    results = request.getfixturevalue(case)
    reference_export(results, tmp_path / "ref", every)
    if block is not None:
        monkeypatch.setattr(paraview, "SERIES_BLOCK", block)
    export_paraview(results, tmp_path / "new", every=every)
    assert_same_files(tmp_path / "new", tmp_path / "ref")


def test_the_comparison_sees_one_changed_digit(triple, tmp_path):
    """`assert_same_files` fails on a time that differs in its last bit (the XDMF text) and on one node
    moved by one ulp (the .h5): the test above cannot pass by comparing nothing."""
    reference_export(triple, tmp_path / "ref", 1)
    t = triple.t.copy()
    t[5] = np.nextafter(t[5], 1.0)
    export_paraview(triple.replace(t=t), tmp_path / "time")
    with pytest.raises(AssertionError, match="paraview.xdmf"):
        assert_same_files(tmp_path / "time", tmp_path / "ref")
    name = next(iter(triple.bodies))
    position = triple.bodies[name].position.copy()
    position[3, 0] = np.nextafter(position[3, 0], np.inf)
    moved = triple.replace(bodies={**triple.bodies, name: triple.bodies[name].replace(position=position)})
    export_paraview(moved, tmp_path / "moved")
    (tmp_path / "moved" / "paraview.xdmf").write_bytes((tmp_path / "ref" / "paraview.xdmf").read_bytes())
    with pytest.raises(AssertionError, match="geometry"):
        assert_same_files(tmp_path / "moved", tmp_path / "ref")
