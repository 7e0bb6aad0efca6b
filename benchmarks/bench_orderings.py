"""Orderings and preconditioners for H = M/h + h K/4 of the Tet4 boxes: SuperLU's fill and time, CG's iterations.

    OMP_NUM_THREADS=1 python benchmarks/bench_orderings.py [--grids 40x8x8 90x18x18] [--large 50000]
    python benchmarks/bench_orderings.py --quick     # a smoke test of the script, not a measurement

H is the symmetric positive definite part of the midpoint rule's step matrix at rest (h = 1e-5 s,
flexmbs/integrators/sparse_step.py) of the boxes of `bench_scaling.py` (``build("solid", grid,
steel())``: 1 x 0.2 x 0.2 m steel Tet4, clamped at x = 0; 40 x 8 x 8 cells = 9 720 free
DOFs, 90 x 18 x 18 = 97 470).  Each choice is run once per grid, in CPU time
(``time.process_time``), on the right-hand side b = H x, x from ``numpy.random.default_rng(0)``:

- SuperLU (`scipy.sparse.linalg.splu`) with ``MMD_AT_PLUS_A`` in symmetric mode with diagonal
  pivots, which is what `flexmbs.sparse_solve.spd_factor` does without CHOLMOD; ``COLAMD``
  (SciPy's default settings); ``MMD_ATA`` (SciPy's defaults but the ordering): fill of L + U
  (and its ratio to nnz(H)), factorization time, one solve;
- ``spilu`` with drop tolerance 1e-3 as right preconditioner of GMRES (`gmres_right`): fill,
  factorization time, iterations;
- CG (`scipy.sparse.linalg.cg`) preconditioned by the diagonal of H (Jacobi) and by the
  inverses of its 3 x 3 node blocks: iterations.

All solves to the relative residual 1e-13.  On grids with more than ``--large`` DOFs only
``--large-choices`` run (default: the two SuperLU orderings that matter and Jacobi; ``MMD_ATA``
and ``spilu`` fill several GB there).  docs/benchmarks.md, section 12.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import LinearOperator, cg, spilu, splu

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_build import grid  # noqa: E402
from bench_scaling import build, steel  # noqa: E402

from flexmbs.integrators.sparse_step import gmres_right  # noqa: E402

H_STEP = 1e-5
RTOL = 1e-13
LABEL = {"mmd_at_plus_a": "SuperLU, `MMD_AT_PLUS_A` (flexmbs)", "colamd": "SuperLU, `COLAMD` (SciPy's default)",
         "mmd_ata": "SuperLU, `MMD_ATA`", "spilu": "`spilu`, drop 1e-3, as GMRES preconditioner",
         "jacobi": "Jacobi (CG)", "block_jacobi": "3 x 3 node-block Jacobi (CG)"}
SUPERLU = {"mmd_at_plus_a": dict(permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True}),
           "colamd": dict(permc_spec="COLAMD"), "mmd_ata": dict(permc_spec="MMD_ATA")}


def step_matrix_at_rest(model, h: float = H_STEP) -> sparse.csc_matrix:
    """H = M/h + h K/4: the midpoint rule's step matrix of a body at rest on a fixed frame."""
    return sparse.csc_matrix(model.M / h + (0.25 * h) * model.K)


def cpu(f):
    """(f(), the CPU time it took [s])."""
    c0 = time.process_time()
    out = f()
    return out, time.process_time() - c0


def superlu_row(H, b, choice: str) -> dict:
    """Fill, factorization and solve time of SuperLU with the settings SUPERLU[choice]."""
    lu, factor_s = cpu(lambda: splu(H, **SUPERLU[choice]))
    _, solve_s = cpu(lambda: lu.solve(b))
    return dict(fill=lu.L.nnz + lu.U.nnz, factor_s=factor_s, solve_s=solve_s)


def spilu_row(H, b) -> dict:
    """Fill and time of an incomplete LU (drop 1e-3), and GMRES's iterations with it."""
    ilu, factor_s = cpu(lambda: spilu(H, drop_tol=1e-3))
    _, k, converged = gmres_right(H, ilu.solve, b, None, RTOL, 200)
    return dict(fill=ilu.L.nnz + ilu.U.nnz, factor_s=factor_s, iterations=k if converged else None)


def node_block_inverses(H, dofs_per_node: int = 3) -> sparse.csr_matrix:
    """The block diagonal of inverses of H's node blocks (the free DOFs come node by node, whole
    nodes clamped, so consecutive triples are the nodes' x, y, z)."""
    n = H.shape[0]
    if n % dofs_per_node:
        raise ValueError(f"H has {n} rows, not a multiple of {dofs_per_node} DOFs per node")
    nb = n // dofs_per_node
    i = np.arange(n).reshape(nb, dofs_per_node)
    rows, cols = np.repeat(i, dofs_per_node, axis=1), np.tile(i, (1, dofs_per_node))
    blocks = np.asarray(H[rows.ravel(), cols.ravel()]).reshape(nb, dofs_per_node, dofs_per_node)
    return sparse.block_diag(list(np.linalg.inv(blocks)), format="csr")


def cg_iterations(H, b, precondition) -> int | None:
    """CG's iterations to the relative residual RTOL with the preconditioner matrix
    ``precondition``; None when it did not converge in 5000."""
    count = [0]

    def counted(_):
        count[0] += 1

    P = LinearOperator(H.shape, matvec=lambda r: precondition @ r, dtype=float)
    _, info = cg(H, b, rtol=RTOL, atol=0.0, maxiter=5000, M=P, callback=counted)
    return count[0] if info == 0 else None


def measure(cells, choices) -> list[dict]:
    """One row per choice on the box of ``cells``."""
    model = build("solid", cells, steel())
    H = step_matrix_at_rest(model)
    b = H @ np.random.default_rng(0).standard_normal(H.shape[0])
    rows = []
    for choice in choices:
        if choice in SUPERLU:
            r = superlu_row(H, b, choice)
        elif choice == "spilu":
            r = spilu_row(H, b)
        else:
            P = sparse.diags(1.0 / H.diagonal()) if choice == "jacobi" else node_block_inverses(H)
            r = dict(iterations=cg_iterations(H, b, P))
        rows.append(dict(r, dofs=model.n_dofs, nnz=H.nnz, choice=choice))
    return rows


def cell(r: dict, key: str, fmt: str) -> str:
    return "" if key not in r else ("did not converge" if r[key] is None else format(r[key], fmt))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grids", type=grid, nargs="+", default=[(40, 8, 8), (90, 18, 18)])
    ap.add_argument("--choices", nargs="+", choices=list(LABEL), default=list(LABEL))
    ap.add_argument("--large", type=int, default=50_000, help="above this many DOFs only --large-choices run")
    ap.add_argument("--large-choices", nargs="+", choices=list(LABEL), default=["mmd_at_plus_a", "colamd", "jacobi"])
    ap.add_argument("--quick", action="store_true", help="a 576-DOF box: a smoke test, not a measurement")
    a = ap.parse_args(argv)
    grids = [(12, 3, 3)] if a.quick else a.grids
    args = sys.argv[1:] if argv is None else argv
    print(f"Measured: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"`{' '.join(['python', 'benchmarks/bench_orderings.py', *args])}`, {platform.machine()}, python "
          f"{platform.python_version()}, numpy {np.__version__}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, "
          f"load average {os.getloadavg()[0]:.1f}; CPU time, one run per row")
    print("\n| free DOFs | choice | fill of L + U (x nnz(H)) | factorization [s] | one solve [s] | iterations |")
    print("|---:|---|---:|---:|---:|---:|")
    for cells in grids:
        dofs = 3 * (cells[0] * (cells[1] + 1) * (cells[2] + 1))          # the x = 0 face clamped
        for r in measure(cells, a.large_choices if dofs > a.large else a.choices):
            fill = f"{r['fill']:.3g} ({r['fill'] / r['nnz']:.1f})" if "fill" in r else "none"
            print(f"| {r['dofs']} | {LABEL[r['choice']]} | {fill} | {cell(r, 'factor_s', '.3g')} | "
                  f"{cell(r, 'solve_s', '.3g')} | {cell(r, 'iterations', 'd')} |")
    if a.quick:
        print("quick mode: a smoke test of the script, not a measurement (run without --quick)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
