"""ParaView's file formats written with h5py and numpy: an XDMF 3 time series (XML + HDF5) and a
VTK XML UnstructuredGrid (.vtu).  `flexmbs.io.paraview` decides what goes into them.

- **XDMF** (`XdmfSeries`): the XML ``Xdmf`` > ``Domain`` > a temporal collection ``Grid`` of one
  ``Grid`` per output, and the ``Grid`` "mesh" (``Geometry`` and ``Topology``) the outputs include
  by an XInclude xpointer; the heavy data are HDF5 datasets referenced as ``FILE.h5:/NAME``
  (XDMF Model and Format, https://www.xdmf.org/index.php/XDMF_Model_and_Format: Grid, Topology,
  Geometry, Attribute, DataItem, Time, Information).  The files are those meshio 5.3's
  ``TimeSeriesWriter`` wrote before (the collection ``TimeSeries_meshio``, the mesh grid
  ``mesh``, datasets ``data0``, ``data1``, ...), which users' ParaView states name, with
  ``NodesPerElement="2"`` on a ``Polyline`` topology and vertices counted in a ``Mixed`` one
  (the model requires both; VTK's XDMF reader needs the second).
- **VTU** (`write_vtu_file`): VTK's XML UnstructuredGrid (VTK User's Guide, "VTK File Formats",
  XML formats: Piece, Points, Cells with connectivity, offsets and types, PointData, CellData,
  FieldData), every array in ASCII, each float as its shortest exact repr: one state is small,
  the text is exact and any reader takes it.  Not appended raw binary: meshio's reader (the
  project's tests and users read these files with it) renumbers the offsets of appended raw
  arrays one by one and can give an array another's data when a renumbered offset equals a raw
  one (meshio 5.3.5, ``_parse_raw_binary``).  NaN (a cell field on the cells of bodies without
  it) is written ``nan``, which VTK 9's XML reader and meshio read.  The time is the field data
  ``TimeValue``.

Cell types are meshio's names (flexmbs meshes use meshio's node order, which is VTK's except for
the wedge).  Why not meshio: its import (CLI, every format, rich) cost 75-140 ms of CPU in every
command that writes ParaView files, more than the writing (docs/benchmarks.md, section 13.1).
"""
from __future__ import annotations

import errno
import itertools
import re
import sys
from pathlib import Path

import numpy as np


__all__ = ["XdmfSeries", "write_vtu_file", "attribute_type", "xdmf_number_type", "XDMF_TOPOLOGY", "VTK_CELL_TYPE",
           "SERIES_INDEX", "XmlElement", "sub_element", "comment", "xml_text"]

#: meshio cell type -> XDMF TopologyType (XDMF Model and Format, "Topology")
XDMF_TOPOLOGY = {"vertex": "Polyvertex", "line": "Polyline", "line3": "Edge_3", "triangle": "Triangle",
                 "triangle6": "Triangle_6", "quad": "Quadrilateral", "quad8": "Quadrilateral_8",
                 "quad9": "Quadrilateral_9", "tetra": "Tetrahedron", "tetra10": "Tetrahedron_10",
                 "pyramid": "Pyramid", "wedge": "Wedge", "wedge15": "Wedge_15", "hexahedron": "Hexahedron",
                 "hexahedron20": "Hexahedron_20", "hexahedron27": "Hexahedron_27"}
#: meshio cell type -> its number in an XDMF ``Mixed`` topology (XdmfTopologyType.cpp of the XDMF library)
XDMF_MIXED_INDEX = {"vertex": 0x1, "line": 0x2, "triangle": 0x4, "quad": 0x5, "tetra": 0x6, "pyramid": 0x7,
                    "wedge": 0x8, "hexahedron": 0x9, "line3": 0x22, "quad9": 0x23, "triangle6": 0x24, "quad8": 0x25,
                    "tetra10": 0x26, "wedge15": 0x28, "hexahedron20": 0x30, "hexahedron27": 0x32}
#: meshio cell type -> VTK cell type (VTK's vtkCellType.h; file-format document, "Cell types")
VTK_CELL_TYPE = {"vertex": 1, "line": 3, "triangle": 5, "quad": 9, "tetra": 10, "hexahedron": 12, "wedge": 13,
                 "pyramid": 14, "line3": 21, "triangle6": 22, "quad8": 23, "tetra10": 24, "hexahedron20": 25,
                 "wedge15": 26, "quad9": 28, "hexahedron27": 29}
# meshio's (gmsh's) wedge numbers its triangles the other way round from VTK's
_VTK_NODE_ORDER = {"wedge": [0, 2, 1, 3, 5, 4]}
_XINCLUDE = "{http://www.w3.org/2003/XInclude}include"
_COLLECTION, _MESH = "TimeSeries_meshio", "mesh"     # the names the files have always had
_TIME = "@T@"                                        # an output's time in its template
#: an output's index in the series step's template (`XdmfSeries.series_step`)
SERIES_INDEX = "@K@"
_SERIES_NAME = f"step {SERIES_INDEX}"
_SERIES_BLOCK = 4096                                 # series steps joined and written at a time


# -- XML: the elements of the XDMF file and their text ----------------------------------------------
# Byte for byte what ``xml.etree.ElementTree.tostring(root)`` writes of the same tree.  Importing
# ElementTree (with the pyexpat and ElementPath modules it loads, and the codec of its ``us-ascii``
# output) cost about 3 ms of every command that writes ParaView files (``python -X importtime``;
# docs/design.md, "The ParaView series of a System run without a call per output"), which only builds
# a tree and writes it out.  `XmlElement` keeps what the writer uses of an ElementTree element (tag,
# attributes in the order set, text, children; ``set``, ``append``, ``insert``, ``remove``), and
# `xml_text` serialises it as ElementTree does (Python 3.11's ``_serialize_xml``, method "xml", short
# empty elements, no declaration for ASCII):
#
# - an element ``<tag a="v" ...>text children</tag>``, or ``<tag a="v" />`` without text and children;
# - a comment (`comment`) ``<!--text-->``, its text as it is;
# - attribute values with ``& < > "`` and CR, LF, tab escaped (``&amp; &lt; &gt; &quot; &#13; &#10;
#   &#09;``), text with ``& < >``;
# - a tag ``{uri}name`` as ``nsK:name``, K the order in which the tree's elements (depth first) first
#   use the namespace, each declared ``xmlns:nsK="uri"`` on the root before its attributes (the
#   writer's one namespace, XInclude's, is not one of ElementTree's well-known prefixes);
# - characters outside ASCII as decimal character references ``&#NNN;``.
#
# tests/test_xdmf_xml.py compares the text with ElementTree's on trees with each of these.
_ATTRIBUTE_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("\r", "&#13;"),
                      ("\n", "&#10;"), ("\t", "&#09;"))
_TEXT_ESCAPES = _ATTRIBUTE_ESCAPES[:3]


class XmlElement:
    """An XML element: ``tag`` (None for a comment), ``attrib`` (name -> str, in the order set),
    ``text`` and ``children``."""

    __slots__ = ("tag", "attrib", "text", "children")

    def __init__(self, tag: str | None, attrib: dict[str, str] | None = None, text: str | None = None):
        self.tag = tag
        self.attrib = dict(attrib or {})
        self.text = text
        self.children: list[XmlElement] = []

    def set(self, name: str, value: str) -> None:
        self.attrib[name] = value

    def append(self, child: XmlElement) -> None:
        self.children.append(child)

    def insert(self, index: int, child: XmlElement) -> None:
        self.children.insert(index, child)

    def remove(self, child: XmlElement) -> None:
        self.children.remove(child)


def sub_element(parent: XmlElement, tag: str, **attrib: str) -> XmlElement:
    """A new element ``tag`` with the attributes ``attrib``, appended to ``parent``."""
    child = XmlElement(tag, attrib)
    parent.append(child)
    return child


def comment(text: str) -> XmlElement:
    """A comment ``<!--text-->`` (to append to an element)."""
    return XmlElement(None, text=text)


def _escaped(text, escapes) -> str:
    if not isinstance(text, str):
        raise TypeError(f"cannot serialize {text!r} (type {type(text).__name__})")
    for plain, entity in escapes:
        if plain in text:
            text = text.replace(plain, entity)
    return text


def _elements(root: XmlElement):
    """The elements of the tree of ``root``, depth first (ElementTree's ``iter`` order)."""
    yield root
    for child in root.children:
        yield from _elements(child)


def _namespace_prefixes(root: XmlElement) -> dict[str, str]:
    """{uri: "nsK"} of the namespaced tags ``{uri}name`` of the tree, K in the order of first use."""
    prefixes: dict[str, str] = {}
    for element in _elements(root):
        if element.tag is not None and element.tag[:1] == "{":
            uri = element.tag[1:].rsplit("}", 1)[0]
            prefixes.setdefault(uri, f"ns{len(prefixes)}")
    return prefixes


def _write(parts: list[str], element: XmlElement, prefixes: dict[str, str], declare: bool) -> None:
    """Appends the text of ``element`` and its children to ``parts`` (the namespace declarations on
    it if ``declare``: the root)."""
    if element.tag is None:
        parts.append(f"<!--{element.text}-->")
        return
    tag = element.tag
    if tag[:1] == "{":
        uri, name = tag[1:].rsplit("}", 1)
        tag = f"{prefixes[uri]}:{name}"
    parts.append("<" + tag)
    if declare:
        for uri, prefix in sorted(prefixes.items(), key=lambda item: item[1]):
            parts.append(f' xmlns:{prefix}="{_escaped(uri, _ATTRIBUTE_ESCAPES)}"')
    for name, value in element.attrib.items():
        parts.append(f' {name}="{_escaped(value, _ATTRIBUTE_ESCAPES)}"')
    if element.text or element.children:
        parts.append(">")
        if element.text:
            parts.append(_escaped(element.text, _TEXT_ESCAPES))
        for child in element.children:
            _write(parts, child, prefixes, False)
        parts.append(f"</{tag}>")
    else:
        parts.append(" />")


def xml_text(root: XmlElement) -> str:
    """The text of the tree of ``root``, ASCII: ``ET.tostring(root).decode("ascii")`` of the same tree."""
    parts: list[str] = []
    _write(parts, root, _namespace_prefixes(root), True)
    return "".join(parts).encode("ascii", "xmlcharrefreplace").decode("ascii")


def xdmf_number_type(dtype, name: str = "data") -> tuple[str, str]:
    """(DataType, Precision) of an XDMF DataItem holding numbers of ``dtype``: Int, UInt or Float
    and the bytes a number (``name``: the array, for the error)."""
    dtype = np.dtype(dtype)
    kinds = {"i": "Int", "u": "UInt", "f": "Float"}
    if dtype.kind not in kinds or dtype.itemsize not in (1, 2, 4, 8):
        raise TypeError(f"`{name}` must hold integers or floats to be written to an XDMF file, got dtype {dtype}")
    return kinds[dtype.kind], str(dtype.itemsize)


def attribute_type(shape) -> str:
    """XDMF AttributeType of an array of ``shape`` (n, ...) (XDMF Model and Format, "Attribute"):
    Scalar (n,) or (n, 1), Vector (n, 2 or 3), Tensor6 (n, 6) (symmetric: XX, XY, XZ, YY, YZ, ZZ),
    Tensor (n, 9) or (n, 3, 3), Matrix otherwise."""
    tail = tuple(shape[1:])
    if tail in ((), (1,)):
        return "Scalar"
    if tail in ((2,), (3,)):
        return "Vector"
    if tail in ((9,), (3, 3)):
        return "Tensor"
    return "Tensor6" if tail == (6,) else "Matrix"


def _joined(blocks) -> np.ndarray:
    """One array of the cells of all blocks: a field given per cell block (a list) is joined."""
    if isinstance(blocks, (list, tuple)):
        return np.concatenate([np.asarray(b) for b in blocks])
    return np.asarray(blocks)


def _check_rows(kind: str, fields: dict, n: int) -> None:
    """Each array of ``fields`` (point or cell data, ``kind``) has one row per point or cell."""
    for name, data in fields.items():
        rows = len(data) if np.ndim(data) else 0
        if rows != n:
            raise ValueError(f"`{kind}[{name!r}]` must have one row per {kind.split('_')[0]} ({n}), got {rows}")


def _check_points(points: np.ndarray) -> None:
    if points.ndim != 2 or points.shape[1] not in (2, 3):
        raise ValueError(f"`points` must be an (n, 2) or (n, 3) array, got shape {points.shape}")


def _cell_blocks(cells) -> list[tuple[str, np.ndarray]]:
    """Cells as [(meshio cell type, connectivity (n, k) int64)], from a dict or a list of pairs."""
    blocks = list(cells.items()) if isinstance(cells, dict) else list(cells)
    out = []
    for cell_type, conn in blocks:
        if cell_type not in VTK_CELL_TYPE:
            raise ValueError(f"`cells`: cell type {cell_type!r} cannot be written to a ParaView file; "
                             f"the types written are {sorted(VTK_CELL_TYPE)}")
        out.append((cell_type, np.asarray(conn, dtype=np.int64).reshape(len(conn), -1)))
    return out


class XdmfSeries:
    """An XDMF 3 temporal collection ``path`` (.xdmf) whose heavy data go to ``path.with_suffix('.h5')``
    (``data0``, ``data1``, ... in the order written).  Used as a context manager: the XML is written
    and the HDF5 file closed at exit, after an exception as well (the outputs so far stay readable).

    On a full disk the data file is released (`flexmbs.io.store._release`: HDF5 would crash the
    process at its next close), both files are removed and an OSError with errno ENOSPC names the
    data file.

    Attributes
    ----------
    h5 : h5py.File
        The data file (open between enter and exit).
    collection : XmlElement
        The temporal collection Grid: one child Grid per output.
    data_name : str
        The data file's name as the XML refers to it (beside the XDMF file).
    """

    def __init__(self, path, info: dict[str, str] | None = None):
        self.path = Path(path)
        self.data_name = self.path.with_suffix(".h5").name
        self.info = dict(info or {})
        self.root = XmlElement("Xdmf", {"Version": "3.0"})
        self.domain = sub_element(self.root, "Domain")
        self.collection = sub_element(self.domain, "Grid", Name=_COLLECTION, GridType="Collection",
                                      CollectionType="Temporal")
        self.h5 = None
        self.n_points = self.n_cells = 0          # of the mesh, once written
        self._count = 0
        self._constant: dict[str, str] = {}
        self._h5_types: dict[tuple, tuple] = {}    # (dtype, shape) -> h5py (type, space), made once
        self._templates: dict[tuple, int] = {}     # a step's structure -> its template's number
        self._steps: list[tuple[int, str, list[int]]] = []    # (template, time, dataset numbers)
        self._series_times: list[float] | None = None            # the times of `series_step`'s copies

    def __enter__(self) -> "XdmfSeries":
        import h5py

        from .h5create import set_attribute
        self.h5 = h5py.File(self.path.with_suffix(".h5"), "w")
        for name, value in self.info.items():
            sub_element(self.domain, "Information", Name=name, Value=value)
            set_attribute(self.h5.id, name, value)              # what ``h5.attrs[name] = value`` writes
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        from .store import _release, is_disk_full
        failed = exc
        if failed is None:
            try:
                self.h5.flush()                  # what the close would write, where a failure is safe
            except (OSError, RuntimeError) as err:
                failed = err
        if failed is not None and is_disk_full(failed):
            h5 = self.path.with_suffix(".h5").resolve()
            _release(self.h5)
            h5.unlink(missing_ok=True)
            self.path.unlink(missing_ok=True)
            raise OSError(errno.ENOSPC, "No space left on device", str(h5)) from failed
        with open(self.path, "wb") as f:
            f.writelines(self._xml_pieces())
        self.h5.close()
        if failed is not None and exc is None:
            raise failed

    # -- heavy data -------------------------------------------------------------------------------
    def dataset(self, data) -> str:
        """Stores ``data`` as the next dataset ``dataK`` and returns its reference ``FILE.h5:/dataK``.
        Created with h5py's low-level calls: 2.3 times faster than ``create_dataset``, for the
        thousands of small datasets of a long series."""
        return f"{self.data_name}:/data{self._store(data)}"

    def _store(self, data) -> int:
        """The number K of the new dataset ``dataK`` holding ``data``; its HDF5 type and dataspace
        are made once per dtype and shape (a long series has thousands of datasets of a few shapes)."""
        import h5py
        data = np.ascontiguousarray(data)
        key = (data.dtype.str, data.shape)
        if key not in self._h5_types:
            self._h5_types[key] = (h5py.h5t.py_create(data.dtype), h5py.h5s.create_simple(data.shape))
        number = self._count
        self._count += 1
        ds = h5py.h5d.create(self.h5.id, f"data{number}".encode(), *self._h5_types[key])
        ds.write(h5py.h5s.ALL, h5py.h5s.ALL, data)
        return number

    def data_item(self, parent: XmlElement, data, reference: str | None = None, name: str = "data") -> XmlElement:
        """A DataItem of ``data`` (stored now, or the dataset ``reference`` already holding it)."""
        data = np.asarray(data)
        number, precision = xdmf_number_type(data.dtype, name)
        item = sub_element(parent, "DataItem", DataType=number, Dimensions=" ".join(map(str, data.shape)),
                           Format="HDF", Precision=precision)
        item.text = reference if reference is not None else self.dataset(data)
        return item

    # -- light data -------------------------------------------------------------------------------
    def geometry(self, grid: XmlElement, points, reference: str | None = None) -> XmlElement:
        """The Geometry XYZ (or XY) of node positions ``points`` (n, 3) (or (n, 2))."""
        points = np.asarray(points)
        _check_points(points)
        geometry = sub_element(grid, "Geometry", GeometryType="XYZ" if points.shape[1] == 3 else "XY")
        self.data_item(geometry, points, reference, name="points")
        return geometry

    def topology(self, grid: XmlElement, cells) -> XmlElement:
        """The Topology of ``cells``: one cell type as its own TopologyType (a Polyline with
        ``NodesPerElement``), several as ``Mixed``: per cell its type number, for a polyvertex or
        polyline its node count, then its nodes."""
        blocks = _cell_blocks(cells)
        if len(blocks) == 1:
            cell_type, conn = blocks[0]
            topology = sub_element(grid, "Topology", TopologyType=XDMF_TOPOLOGY[cell_type],
                                   NumberOfElements=str(len(conn)))
            if cell_type == "line":
                topology.set("NodesPerElement", "2")
            self.data_item(topology, conn)
            return topology
        rows = []
        for cell_type, conn in blocks:
            head = [np.full((len(conn), 1), XDMF_MIXED_INDEX[cell_type])]
            if cell_type in ("vertex", "line"):
                head.append(np.full((len(conn), 1), conn.shape[1]))
            rows.append(np.hstack([*head, conn]).ravel())
        topology = sub_element(grid, "Topology", TopologyType="Mixed",
                               NumberOfElements=str(sum(len(c) for _, c in blocks)))
        self.data_item(topology, np.concatenate(rows))
        return topology

    def attribute(self, grid: XmlElement, name: str, data, center: str, reference: str | None = None) -> XmlElement:
        """An Attribute ``name`` centred on nodes or cells (``center`` "Node" or "Cell")."""
        data = np.asarray(data)
        attribute = sub_element(grid, "Attribute", Name=name, AttributeType=attribute_type(data.shape),
                                Center=center)
        self.data_item(attribute, data, reference, name)
        return attribute

    def write_mesh(self, points, cells) -> None:
        """The Grid "mesh": the Geometry and Topology the outputs include."""
        grid = sub_element(self.domain, "Grid", Name=_MESH, GridType="Uniform")
        self.geometry(grid, points)
        self.topology(grid, cells)
        self.n_points, self.n_cells = len(points), sum(len(c) for _, c in _cell_blocks(cells))

    def step_grid(self, t, moving: bool) -> XmlElement:
        """An output's Grid in the collection: the mesh's Topology (and Geometry unless ``moving``)
        included by an xpointer, and its Time (``t`` as text: a float's repr, or a placeholder)."""
        grid = sub_element(self.collection, "Grid")
        parts = "self::Topology" if moving else "self::Topology or self::Geometry"
        sub_element(grid, _XINCLUDE, xpointer=f'xpointer(//Grid[@Name="{_MESH}"]/*[{parts}])')
        sub_element(grid, "Time", Value=str(t))
        return grid

    def write_step(self, t: float, point_data=None, cell_data=None) -> None:
        """An output on the mesh's geometry (a cell field may be given per cell block)."""
        self._step(t, None, point_data, cell_data, None)

    def write_moving_step(self, t: float, points, point_data=None, cell_data=None, constant=None) -> None:
        """An output with its own node positions ``points`` (the Geometry goes before the Time);
        the cell fields ``constant`` (name -> array) are stored once and every output refers to
        them (a dataset costs about 0.2 ms to create: a field that does not change needs no
        dataset per output)."""
        points = np.asarray(points, dtype=float)
        _check_points(points)
        self._step(t, points, point_data, cell_data, constant)

    def _step(self, t, points, point_data, cell_data, constant) -> None:
        """Stores an output's arrays (its fields, then its geometry, then the constant fields at
        their first use: the datasets' order of old) and records its time and dataset numbers.
        Its XML is made at the end from a template Grid, one per structure of an output (`xml`):
        building and serialising an element tree of thousands of outputs cost as much as their
        HDF5 datasets."""
        point_data = {name: np.asarray(data) for name, data in (point_data or {}).items()}
        cell_data = {name: _joined(blocks) for name, blocks in (cell_data or {}).items()}
        constant = {name: np.asarray(data) for name, data in (constant or {}).items()}
        _check_rows("point_data", point_data, self.n_points)
        _check_rows("cell_data", cell_data, self.n_cells)
        for name, data in {**point_data, **cell_data}.items():
            xdmf_number_type(data.dtype, name)                   # a bad field stops before any is stored
        arrays = [*point_data.values(), *cell_data.values(), *([] if points is None else [points])]
        numbers = [self._store(data) for data in arrays]
        for name, data in constant.items():
            if name not in self._constant:
                self._constant[name] = self.dataset(data)
        structure = (tuple((name, a.shape, a.dtype.str) for name, a in point_data.items()),
                     tuple((name, a.shape, a.dtype.str) for name, a in cell_data.items()),
                     None if points is None else points.shape,
                     tuple((name, a.shape, a.dtype.str, self._constant[name]) for name, a in constant.items()))
        if structure not in self._templates:
            self._templates[structure] = self._template(len(self._templates), points, point_data, cell_data,
                                                        constant)
        self._steps.append((self._templates[structure], str(t), numbers))

    def _template(self, number: int, points, point_data, cell_data, constant) -> int:
        """A step Grid named ``@TEMPLATE<number>@`` whose time is ``@T@`` and whose datasets are
        ``data@R0@``, ``data@R1@``, ... in the order `_step` stores them."""
        grid = self.step_grid(_TIME, moving=points is not None)
        grid.set("Name", f"@TEMPLATE{number}@")
        k = 0
        for center, fields in (("Node", point_data), ("Cell", cell_data)):
            for name, data in fields.items():
                self.attribute(grid, name, data, center, reference=f"{self.data_name}:/data@R{k}@")
                k += 1
        if points is not None:
            geometry = self.geometry(grid, points, reference=f"{self.data_name}:/data@R{k}@")
            grid.remove(geometry)
            grid.insert(1, geometry)
        for name, data in constant.items():
            self.attribute(grid, name, data, "Cell", reference=self._constant[name])
        return number

    def series_step(self, times) -> XmlElement:
        """The Grid ``step @K@`` of the collection, on a moving geometry at the time ``@T@``: a
        template the caller fills (its DataItems select output ``@K@``, `SERIES_INDEX`, of datasets
        over all outputs) and the file holds once per time of ``times`` (n_t,), named ``step k``,
        ``@K@`` replaced by k and ``@T@`` by the time's repr (`xml`).  One template and one join of
        the outputs' texts: no element and no format call per output."""
        grid = self.step_grid(_TIME, moving=True)
        grid.set("Name", _SERIES_NAME)
        self._series_times = np.asarray(times, dtype=float).tolist()
        return grid

    def xml(self) -> bytes:
        """The XDMF file's text: the element tree with each output's Grid (its template with its
        time and dataset numbers) in place of the templates, which are contiguous in the collection,
        or the `series_step` template's copies in its place."""
        return b"".join(self._xml_pieces())

    def _xml_pieces(self):
        """`xml` in pieces: the series' copies a block of `_SERIES_BLOCK` outputs at a time (the
        text of every output of a long run is not held at once)."""
        text = xml_text(self.root)
        if self._series_times is not None:
            start = text.index(f'<Grid Name="{_SERIES_NAME}"')
            end = text.index("</Grid>", start) + len("</Grid>")
            yield text[:start].encode("ascii")
            yield from _repeated(text[start:end], self._series_times)
            yield text[end:].encode("ascii")
            return
        if not self._templates:
            yield text.encode("ascii")
            return
        formats, spans = [], []
        for number in range(len(self._templates)):
            head = f'<Grid Name="@TEMPLATE{number}@">'
            start = text.index(head)
            end = text.index("</Grid>", start) + len("</Grid>")
            spans.append((start, end))
            body = "<Grid>" + text[start + len(head):end]
            body = body.replace("{", "{{").replace("}", "}}").replace(_TIME, "{0}")
            formats.append(re.sub(r"@R(\d+)@", r"{1[\1]}", body))
        first, last = spans[0][0], spans[-1][1]
        if any(b != c for (_, b), (c, _) in zip(spans[:-1], spans[1:])):
            raise RuntimeError("the step templates of an XDMF series must be contiguous in its collection")
        steps = "".join(formats[template].format(t, numbers) for template, t, numbers in self._steps)
        yield (text[:first] + steps + text[last:]).encode("ascii")

    def constant_cell_field(self, grid: XmlElement, name: str, data) -> None:
        """A cell Attribute whose dataset is written at its first use only."""
        data = np.asarray(data)
        if name not in self._constant:
            self._constant[name] = self.dataset(data)
        self.attribute(grid, name, data, "Cell", reference=self._constant[name])


def _repeated(template: str, times: list[float]):
    """The text ``template`` once per time of ``times``, copy k with `SERIES_INDEX` replaced by k
    and ``@T@`` by repr(times[k]), as ASCII bytes a block of `_SERIES_BLOCK` copies at a time.  The
    template is cut at its placeholders into literals L_0, P_1, L_1, ... and the copies are one
    join of zip(L_0, P_1[k], L_1, ...) over k: C iterators, no Python call per output (a
    ``str.format`` per output cost 14 ms for the coupled slider-crank's 1441, the join 1.7 ms)."""
    parts = re.split(f"({re.escape(SERIES_INDEX)}|{re.escape(_TIME)})", template)
    for first in range(0, len(times), _SERIES_BLOCK):
        block = times[first:first + _SERIES_BLOCK]
        columns = {SERIES_INDEX: list(map(str, range(first, first + len(block)))), _TIME: list(map(repr, block))}
        streams = [columns[p] if k % 2 else itertools.repeat(p, len(block)) for k, p in enumerate(parts)]
        yield "".join(itertools.chain.from_iterable(zip(*streams))).encode("ascii")


# -- VTU -------------------------------------------------------------------------------------------
_VTK_NUMBER = {"f": "Float", "i": "Int", "u": "UInt"}


def _vtk_type(dtype, name: str) -> str:
    """VTK XML DataArray type of ``dtype``: Float32/64, Int8-64, UInt8-64 (``name``: the array)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in _VTK_NUMBER:
        raise TypeError(f"`{name}` must hold integers or floats to be written to a VTU file, got dtype {dtype}")
    return f"{_VTK_NUMBER[dtype.kind]}{8 * dtype.itemsize}"


def _data_array(name: str, data, extra: str = "") -> str:
    """A DataArray in ASCII: floats as Python's shortest repr that reads back to the same double
    (``nan`` for NaN, which VTK 9's XML reader and meshio read), integers as they are."""
    data = np.asarray(data)
    components = int(np.prod(data.shape[1:], dtype=int)) if data.ndim > 1 else 1
    text = " ".join(map(str, data.ravel().tolist()))
    return (f'<DataArray type="{_vtk_type(data.dtype, name)}" Name="{name}"'
            + (f' NumberOfComponents="{components}"' if data.ndim > 1 else "")
            + f'{extra} format="ascii">{text}</DataArray>')


def _connectivity(blocks) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(connectivity, offsets (the end of each cell's nodes), VTK types) of the cell blocks."""
    conn = [c[:, _VTK_NODE_ORDER[t]] if t in _VTK_NODE_ORDER else c for t, c in blocks]
    sizes = np.concatenate([np.full(len(c), c.shape[1], dtype=np.int64) for c in conn]) if conn else \
        np.zeros(0, dtype=np.int64)
    types = np.concatenate([np.full(len(c), VTK_CELL_TYPE[t], dtype=np.uint8) for t, c in blocks]) if blocks else \
        np.zeros(0, dtype=np.uint8)
    flat = np.concatenate([c.ravel() for c in conn]) if conn else np.zeros(0, dtype=np.int64)
    return flat, np.cumsum(sizes), types


def write_vtu_file(path, points, cells, point_data=None, cell_data=None, field_data=None, comment: str = "") -> Path:
    """Write one unstructured grid as a VTU file (VTK XML UnstructuredGrid, version 1.0, every
    array in ASCII: see the module docstring).

    Parameters
    ----------
    path : str or Path
    points : array (n, 3)
        Node positions (2 columns are padded with z = 0, as VTK's points are 3D).
    cells : dict or list of (meshio cell type, connectivity (n_c, k))
    point_data : dict[str, array (n, ...)]
    cell_data : dict[str, array or list of arrays, one per cell block]
    field_data : dict[str, array]
        Data of the whole grid (``TimeValue``: the time ParaView shows).
    comment : str
        An XML comment after the XML declaration.
    """
    points = np.asarray(points, dtype=float)
    _check_points(points)
    if points.shape[1] == 2:
        points = np.column_stack([points, np.zeros(len(points))])
    blocks = _cell_blocks(cells)
    lines = ['<?xml version="1.0"?>']
    if comment:
        lines.append(f"<!-- {comment.replace('--', '- -')} -->")
    order = "LittleEndian" if sys.byteorder == "little" else "BigEndian"
    lines += [f'<VTKFile type="UnstructuredGrid" version="1.0" byte_order="{order}">',
              "<UnstructuredGrid>"]
    if field_data:
        lines += ["<FieldData>"] + [_data_array(n, np.atleast_1d(v), f' NumberOfTuples="{np.size(v)}"')
                                    for n, v in field_data.items()] + ["</FieldData>"]
    n_cells = sum(len(c) for _, c in blocks)
    cell_data = {name: _joined(blocks) for name, blocks in (cell_data or {}).items()}
    _check_rows("point_data", point_data or {}, len(points))
    _check_rows("cell_data", cell_data, n_cells)
    lines += [f'<Piece NumberOfPoints="{len(points)}" NumberOfCells="{n_cells}">',
              "<Points>", _data_array("Points", points), "</Points>"]
    connectivity, offsets, types = _connectivity(blocks)
    lines += ["<Cells>", _data_array("connectivity", connectivity), _data_array("offsets", offsets),
              _data_array("types", types), "</Cells>"]
    if point_data:
        lines += ["<PointData>"] + [_data_array(n, v) for n, v in point_data.items()] + ["</PointData>"]
    if cell_data:
        lines += ["<CellData>"] + [_data_array(n, v) for n, v in cell_data.items()] + ["</CellData>"]
    lines += ["</Piece>", "</UnstructuredGrid>", "</VTKFile>", ""]
    path = Path(path)
    path.write_text("\n".join(lines), encoding="ascii")
    return path
