"""Regenerate the sample meshes of this folder (see README.md).

Run ``python meshes/make_meshes.py``; it overwrites the files next to it.  The
meshes come from `flexmbs.mesh.generate` and are written by meshio through
`flexmbs.mesh.write`, which turns named sets into Gmsh physical groups, Abaqus
``*NSET``/``*ELSET`` and VTU ``nset:``/``elset:`` arrays.  Each file is read back
and its sets are checked.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from flexmbs.mesh import Mesh, generate, read, write
from flexmbs.mesh.faces import boundary_faces

logger = logging.getLogger("make_meshes")
HERE = Path(__file__).resolve().parent


def beam_line() -> Mesh:
    """1 m cantilever along x, 20 line cells; groups clamped (x=0), tip (x=1), beam."""
    m = generate.line(20, 1.0)
    return Mesh(m.points, m.cells, node_sets={"clamped": [0], "tip": [20]},
                element_sets={"beam": {"line": np.arange(20)}}, source="beam_line")


def plate_quad(nx: int = 20, ny: int = 4) -> Mesh:
    """1 x 0.2 m plate of quads; line groups left (x=0) and right (x=1), quad group plate."""
    m = generate.rectangle(nx, ny, 1.0, 0.2, cell="quad")
    left, right = m.node_sets["left"], m.node_sets["right"]
    # boundary lines, counter-clockwise around the plate: up the right edge, down the left
    lines = np.vstack([np.stack([right[:-1], right[1:]], axis=1),
                       np.stack([left[1:], left[:-1]], axis=1)])
    return Mesh(m.points, {"quad": m.cells["quad"], "line": lines},
                element_sets={"plate": {"quad": np.arange(nx * ny)},
                              "right": {"line": np.arange(ny)},
                              "left": {"line": np.arange(ny, 2 * ny)}}, source="plate_quad")


def plate_tri() -> Mesh:
    """1 x 0.2 m plate of triangles; node sets left, right, bottom, top; element set plate."""
    m = generate.rectangle(20, 4, 1.0, 0.2, cell="triangle")
    return Mesh(m.points, m.cells, node_sets=m.node_sets,
                element_sets={"plate": m.element_sets["all"]}, source="plate_tri")


def bar_tetra() -> Mesh:
    """1 x 0.1 x 0.1 m bar of tetrahedra; node sets clamped (x=0), tip (x=1); element set bar."""
    m = generate.box(10, 2, 2, 1.0, 0.1, 0.1, cell="tetra")
    return Mesh(m.points, m.cells,
                node_sets={"clamped": m.node_sets["xmin"], "tip": m.node_sets["xmax"]},
                element_sets={"bar": m.element_sets["all"]}, source="bar_tetra")


def bar_hex(nx: int = 10, ny: int = 2, nz: int = 2) -> Mesh:
    """1 x 0.1 x 0.1 m bar of hexahedra; quad groups clamped (x=0), tip (x=1); hex group bar."""
    m = generate.box(nx, ny, nz, 1.0, 0.1, 0.1, cell="hexahedron")
    hexes = m.cells["hexahedron"]
    first, last = np.arange(0, len(hexes), nx), np.arange(nx - 1, len(hexes), nx)
    # faces x = 0 and x = 1 of the end cells, outward normals (-x and +x)
    quads = np.vstack([hexes[first][:, [0, 4, 7, 3]], hexes[last][:, [1, 2, 6, 5]]])
    n_face = ny * nz
    return Mesh(m.points, {"hexahedron": hexes, "quad": quads},
                element_sets={"bar": {"hexahedron": np.arange(len(hexes))},
                              "clamped": {"quad": np.arange(n_face)},
                              "tip": {"quad": np.arange(n_face, 2 * n_face)}}, source="bar_hex")


def bar_tetra10(nx: int = 4, ny: int = 1, nz: int = 1) -> Mesh:
    """1 x 0.1 x 0.1 m bar of second-order tetrahedra (tetra10) with its end faces as 6-node
    triangles (triangle6), as Gmsh writes a second-order mesh (Mesh.ElementOrder = 2);
    groups bar (tetra10), clamped (x = 0), tip (x = 1) and top (z = 0.1) (triangle6)."""
    m = generate.box(nx, ny, nz, 1.0, 0.1, 0.1, cell="tetra10")
    faces = boundary_faces(m, "tetra10")                      # outward, corners then mid-edge nodes
    centre = m.points[faces[:, :3]].mean(axis=1)
    groups = {"clamped": centre[:, 0] == 0.0, "tip": np.isclose(centre[:, 0], 1.0),
              "top": np.isclose(centre[:, 2], 0.1)}
    tri6 = np.vstack([faces[mask] for mask in groups.values()])
    counts = np.cumsum([0] + [int(mask.sum()) for mask in groups.values()])
    element_sets = {"bar": {"tetra10": np.arange(len(m.cells["tetra10"]))}}
    element_sets.update({name: {"triangle6": np.arange(counts[k], counts[k + 1])} for k, name in enumerate(groups)})
    return Mesh(m.points, {"tetra10": m.cells["tetra10"], "triangle6": tri6}, element_sets=element_sets,
                source="bar_tetra10")


SAMPLES = {  # file name: (builder, write options, sets that reading must find)
    "beam_line.msh": (beam_line, {"msh_version": "4.1", "binary": False},
                      ["clamped", "tip", "beam"]),
    "plate_quad.msh": (plate_quad, {"msh_version": "2.2", "binary": False},
                       ["left", "right", "plate"]),
    "plate_tri.vtu": (plate_tri, {}, ["left", "right", "bottom", "top", "plate"]),
    "bar_tetra.inp": (bar_tetra, {}, ["clamped", "tip", "bar"]),
    "bar_hex.msh": (bar_hex, {"msh_version": "4.1", "binary": True}, ["clamped", "tip", "bar"]),
    "bar_tetra10.msh": (bar_tetra10, {"msh_version": "4.1", "binary": False}, ["clamped", "tip", "top", "bar"]),
}


def main(folder: Path = HERE) -> None:
    """Write every sample mesh into ``folder`` and check that reading finds its sets."""
    for name, (build, options, sets) in SAMPLES.items():
        path = folder / name
        mesh = build()
        write(mesh, path, **options)
        back = read(path)
        missing = [s for s in sets if s not in back.node_sets]
        if missing or back.n_nodes != mesh.n_nodes:
            raise RuntimeError(f"{path}: read back {back}, missing node sets {missing}")
        logger.info("%s: %s (%.1f kB)", path.name, back, path.stat().st_size / 1e3)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    main()
