"""`flexmbs.io.vtk_formats.xml_text` writes the text ElementTree writes of the same tree
(``ET.tostring(root)``): on trees with each rule of the comment above it, and on the XDMF files
themselves, a Model's series (its templates of several structures, body and global frames) and a
System's, written once with it and once with ElementTree serialising the writer's tree."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.io import vtk_formats
from flexmbs.io.paraview import write_results_xdmf, write_xdmf
from flexmbs.io.vtk_formats import XdmfSeries, XmlElement, comment, sub_element, xml_text

from test_results_io import RUN, bar_model
from test_system_paraview import mechanism

XI = "{http://www.w3.org/2003/XInclude}include"


def as_etree(element: XmlElement):
    """The same tree as ElementTree elements."""
    if element.tag is None:
        return ET.Comment(element.text)
    out = ET.Element(element.tag, dict(element.attrib))
    out.text = element.text
    out.extend(as_etree(child) for child in element.children)
    return out


def etree_text(root: XmlElement) -> str:
    return ET.tostring(as_etree(root)).decode("ascii")


def empty():
    return XmlElement("Xdmf")


def escapes():
    root = XmlElement("Xdmf", {"Version": "3.0", "Name": 'a&b <c> "d"\r\n\tend', "Other": "x"})
    item = sub_element(root, "DataItem", Format="XML", Dimensions="3")
    item.text = "1 & 2 < 3 > 0 \"q\" 'p'\n\tx"
    sub_element(root, "Empty", Value="")
    sub_element(root, "EmptyText").text = ""
    return root


def non_ascii():
    root = XmlElement("Xdmf", {"bodies": '["Stütze", "腕"]'})
    sub_element(root, "Information", Name="units", Value="m/s²").text = "µ ∂ é"
    return root


def comments_and_namespaces():
    root = XmlElement("Xdmf", {"Version": "3.0"})
    grid = sub_element(sub_element(root, "Domain"), "Grid", Name="step @K@")
    sub_element(grid, XI, xpointer='xpointer(//Grid[@Name="mesh"]/*[self::Topology])')
    item = sub_element(grid, "DataItem", ItemType="HyperSlab")
    item.append(comment("series/geometry at output @K@ & <not escaped>"))
    sub_element(item, "{urn:other}thing", a="1")
    sub_element(root, XI, xpointer="x")
    return root


def moved_children():
    root = XmlElement("Grid")
    first, second = sub_element(root, "A"), sub_element(root, "B")
    sub_element(root, "C")
    root.remove(second)
    root.insert(0, second)
    first.set("Name", "a")
    first.set("Name", "b")                                  # set again: keeps its place
    return root


TREES = [empty, escapes, non_ascii, comments_and_namespaces, moved_children]


@pytest.mark.parametrize("tree", TREES, ids=[t.__name__ for t in TREES])
def test_text_is_elementtrees(tree):
    root = tree()
    assert xml_text(root) == etree_text(root)


def test_a_value_that_is_no_text_is_refused_as_by_elementtree():
    """(ElementTree: ``TypeError: cannot serialize 3 (type int)``.)"""
    root = XmlElement("Xdmf", {"Version": 3})
    with pytest.raises(TypeError) as ours:
        xml_text(root)
    with pytest.raises(TypeError) as theirs:
        etree_text(root)
    assert str(ours.value) == str(theirs.value) == "cannot serialize 3 (type int)"


def written_twice(write, tmp_path, monkeypatch) -> tuple[bytes, bytes]:
    """The .xdmf text ``write(path)`` makes with `xml_text`, and with ElementTree serialising the tree."""
    ours = write(tmp_path / "ours" / "s.xdmf")
    monkeypatch.setattr(vtk_formats, "xml_text", etree_text)
    theirs = write(tmp_path / "theirs" / "s.xdmf")
    return ours.read_bytes(), theirs.read_bytes()


def several_structures(path):
    path.parent.mkdir(parents=True)
    with XdmfSeries(path, {"frame": "body", "units": '{"u": "m"}'}) as series:
        series.write_mesh(np.eye(3), [("triangle", [[0, 1, 2]])])
        series.write_step(0.0, {"u": np.zeros((3, 3))})
        series.write_step(0.25, {"u": np.ones((3, 3))}, {"e": [np.array([7.0])]})
        series.write_moving_step(0.5, np.eye(3), {"u": np.ones((3, 3))}, constant={"part": np.array([1])})
    return path


@pytest.fixture(scope="module")
def bar():
    """A spinning bar under an end load (a Model's run, with its frame motion), 21 outputs."""
    return fm.run(bar_model(), **RUN)


@pytest.mark.parametrize("frame", ["body", "global"])
def test_a_models_series_is_elementtrees(bar, frame, tmp_path, monkeypatch):
    ours, theirs = written_twice(lambda path: write_xdmf(bar, path, frame=frame), tmp_path, monkeypatch)
    assert ours == theirs and b"ns0:include" in ours


def test_a_series_of_several_structures_is_elementtrees(tmp_path, monkeypatch):
    ours, theirs = written_twice(several_structures, tmp_path, monkeypatch)
    assert ours == theirs and ours.count(b"<Grid>") == 3


def test_a_systems_series_is_elementtrees(tmp_path, monkeypatch):
    results = fm.run(mechanism(), t_end=0.02, h=1e-3, dt_out=0.01)
    ours, theirs = written_twice(lambda path: write_results_xdmf(results, path, every=1), tmp_path, monkeypatch)
    assert ours == theirs and b'<Grid Name="step 2">' in ours


@pytest.mark.skipif(not __import__("flexmbs.compiled").compiled.kernel_status().installed,
                    reason="the compiled kernel is not installed")
def test_a_run_writing_its_paraview_files_imports_no_elementtree(tmp_path):
    """The triple pendulum's `flexmbs run` (section 13.3's command, 10 steps) writes its ParaView files
    without loading xml.etree or pyexpat (about 3 ms of its process: docs/design.md)."""
    from test_startup import ROOT, loaded_modules
    argv = ["run", "triple_pendulum", "-q", "--cases", str(ROOT / "cases"), "--out", str(tmp_path / "out"),
            "--set", "t_end=0.01", "--set", "coordinates=euler-parameters", "--set", "integrator=index3-alpha",
            "--set", "stabilization=none", "--no-plots"]
    loaded = loaded_modules(argv, tmp_path)
    assert (tmp_path / "out" / "paraview.xdmf").is_file() and "flexmbs.io.vtk_formats" in loaded
    assert not loaded & {"xml.etree.ElementTree", "pyexpat"}, sorted(loaded & {"xml.etree.ElementTree", "pyexpat"})
