"""Time to compute element matrices and inertia integrals, and to assemble them, for large meshes.

    python benchmarks/bench_elements.py [--n 100000] [--repeats 3]

Element arrays (stiffness k, inertia integrals m, m_O, S[a, b], d[a, b]) are computed
vectorised over all elements; assembly scatters them into CSR matrices.  Median of repeats.
"""
from __future__ import annotations

import argparse
import platform
import time

import numpy as np

import flexmbs as fm
from flexmbs.assembly import Assembler, assemble_invariants


def _median(f, repeats):
    times = []
    for _ in range(repeats):
        tic = time.perf_counter()
        f()
        times.append(time.perf_counter() - tic)
    return float(np.median(times))


def cases(n):
    steel = fm.Material(2.1e11, 7800.0, 0.3)
    yield "BeamEB2D", fm.BeamEB2D(steel, 1e-4, 1e-9), fm.generate.line(n, 10.0)
    yield "BeamEB3D", fm.BeamEB3D(steel, 1e-4, 2e-9, 1e-9, 2.5e-9), fm.generate.line(n, 10.0, dim=3)
    nx = int(round((n / 6 / 4) ** (1 / 3) * 4)) or 1       # ~n tetrahedra: 6 per hexahedron of an nx x ny x ny grid
    ny = max(1, nx // 4)
    yield "Tet4", fm.Tet4(steel), fm.generate.box(nx, ny, ny, 4.0, 1.0, 1.0, cell="tetra")
    yield "Hex8", fm.Hex8(steel), fm.generate.box(nx, ny, ny * 6, 4.0, 1.0, 1.0, cell="hexahedron")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="approximate number of elements")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    print(f"machine: {platform.processor() or platform.machine()}, {platform.system()}, python "
          f"{platform.python_version()}, numpy {np.__version__}")
    print(f"{'element':9s} {'n_el':>8s} {'n_dofs':>8s} {'k [s]':>8s} {'inertia [s]':>12s} {'assembly [s]':>13s}")
    for name, element, mesh in cases(a.n):
        cells = mesh.cells[element.cell_type]
        X = mesh.points[cells]
        t_k = _median(lambda: element.k(X), a.repeats)
        t_i = _median(lambda: element.inertia_integrals(X), a.repeats)
        asm = Assembler(cells, mesh.n_nodes, element.dofs_per_node)
        t_a = _median(lambda: (asm.matrix(element.k(X)),
                               assemble_invariants(element, X, cells, mesh.n_nodes)), a.repeats)
        print(f"{name:9s} {len(cells):8d} {asm.n_dofs:8d} {t_k:8.3f} {t_i:12.3f} {t_a:13.3f}")


if __name__ == "__main__":
    main()
