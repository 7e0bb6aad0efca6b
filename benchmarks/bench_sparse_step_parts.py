"""Where a steady implicit midpoint step of a large spinning solid goes: CPU time per part of the sparse step.

    OMP_NUM_THREADS=1 python benchmarks/bench_sparse_step_parts.py [--grid 90x18x18] [--steps 10]
    python benchmarks/bench_sparse_step_parts.py --quick     # a smoke test of the script, not a measurement

The Tet4 box of `bench_scaling.py` (``build("solid", grid, steel(), spin_up())``: 1 x 0.2 x 0.2 m
steel, clamped at x = 0, on ``SpinUp(10 rad/s, 1 s)`` with geometric stiffening; 90 x 18 x 18
cells = 97 470 free DOFs) takes ``--steps`` steps of the midpoint rule from rest at t0 = 0.5 s (mid spin-up: S(t)
changes at every step), h = 1e-5 s, as `flexmbs/integrators/sparse_step.py` takes them, with
both of its solvers for the step matrix S = M/h + C_eff/2 + h K_eff/4:

- ``"auto"`` (what the midpoint rule picks on a moving frame, "iterative"): BiCGSTAB with the
  diagonal of S as preconditioner (`bicgstab_right`), from the previous step's dv;
- ``"reuse"``: GMRES (`gmres_right`) preconditioned by one factorization of the symmetric part
  H of S at the first step (`flexmbs.sparse_solve.spd_factor`), timed apart ("once": forming
  H and factorizing it).

The step is the module's (S(t_mid) dv = f(t_mid, q0 + h v0/2, v0), q1 = q0 + h v0 + h dv/2,
v1 = v0 + dv), written out here so that each part has its own timer; with the same tolerances
it gives the states `ImplicitMidpoint` gives (tests/test_failures_benchmarks.py).  Printed per
solver, CPU time per step (``time.process_time``, mean over the steps): the total, the products
with S, the preconditioner, the rest of the Krylov iteration (its vector work), forming S
(`SecondOrderStepMatrix.matrix`), the right-hand side f (`generalized_force`), and the Krylov
iterations per step.  docs/benchmarks.md, section 12.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_build import grid  # noqa: E402
from bench_scaling import build, spin_up, steel  # noqa: E402

from flexmbs.formulations import FORMULATIONS  # noqa: E402
from flexmbs.integrators.sparse_step import SecondOrderStepMatrix, bicgstab_right, gmres_right  # noqa: E402
from flexmbs.sparse_solve import spd_factor  # noqa: E402

PARTS = ("total", "products with S", "preconditioner", "other Krylov work", "forming S", "right-hand side f")
SOLVERS = {"auto": "`\"auto\"` (Jacobi-BiCGSTAB)", "reuse": "`\"reuse\"` (GMRES, factor of H)"}


class Timed:
    """The matrix or function ``f`` with the CPU time of each ``f @ x`` or ``f(x)`` added to
    ``seconds[key]``."""

    def __init__(self, f, seconds: dict, key: str):
        self.f, self.seconds, self.key = f, seconds, key

    def _timed(self, call, x):
        c0 = time.process_time()
        y = call(x)
        self.seconds[self.key] += time.process_time() - c0
        return y

    def __call__(self, x):
        return self._timed(self.f, x)

    def __matmul__(self, x):
        return self._timed(self.f.__matmul__, x)


def symmetric_part_factor(S):
    """A factorization of H = (S + S^T)/2, the symmetric part of the step matrix: M/h + C/2 +
    h/4 ([k] + K_geo + [k(omega)]), what the "reuse" solver factorizes (its skew terms, the
    G_i and [k(eps)], cancel here; it sums the others: the two agree to round-off)."""
    return spd_factor((S + S.T) * 0.5)


def preconditioner(step, S, solver: str, factor):
    """(the preconditioner's solve, the Krylov method, its iteration limit, the factor kept):
    the inverse diagonal of S for "auto", the factor of H (made at the first step) for "reuse"."""
    if solver == "auto":
        inv_diag = 1.0 / S.diagonal()
        return (lambda r: inv_diag * r), bicgstab_right, step.iterative_max_iter, None
    factor = factor if factor is not None else symmetric_part_factor(S)
    return factor.solve, gmres_right, step.reuse_max_iter, factor


def midpoint_steps(model, solver: str, steps: int, h: float = 1e-5, t0: float = 0.5) -> dict:
    """``steps`` sparse midpoint steps of ``model`` (Lagrange, from rest at ``t0``) with ``solver``
    ("auto": Jacobi-BiCGSTAB, "reuse": GMRES with one factor of H).  Returned: the CPU time of
    each part of PARTS summed over the steps (the preconditioner's set-up counts as
    "preconditioner", except the factorization of H: ``factor_s``), ``iterations`` in all, and
    the final state ``x`` = (q, v)."""
    if solver not in SOLVERS:
        raise ValueError(f"`solver` must be one of {list(SOLVERS)}, got {solver!r}")
    form = FORMULATIONS["lagrange"](model)
    n = model.n_dofs
    step = SecondOrderStepMatrix(model, "iterative" if solver == "auto" else "reuse")
    s = dict.fromkeys(PARTS, 0.0)
    s.update(factor_s=0.0, iterations=0, krylov=0.0, solves=0.0)
    q, v, dv, t, factor = np.zeros(n), np.zeros(n), None, t0, None
    for _ in range(steps):
        t_mid = t + 0.5 * h
        c0 = time.process_time()
        b = form.generalized_force(t_mid, q + (0.5 * h) * v, v)
        c1 = time.process_time()
        S = step.matrix(h, t_mid)
        c2 = time.process_time()
        had_factor = factor is not None
        psolve, krylov, max_iter, factor = preconditioner(step, S, solver, factor)
        c3 = time.process_time()
        if solver == "reuse" and not had_factor:
            s["factor_s"] += c3 - c2
        else:
            s["preconditioner"] += c3 - c2
        dv, k, converged = krylov(Timed(S, s, "products with S"), Timed(psolve, s, "solves"), b, dv,
                                  step.tol, max_iter)
        c4 = time.process_time()
        if not converged:
            raise RuntimeError(f"{solver}: the Krylov solve did not reach the relative residual {step.tol:g} in "
                               f"{k} iterations at t = {t_mid:.6g} s: take a smaller h or the other solver")
        q, v, t = q + h * v + (0.5 * h) * dv, v + dv, t + h
        c5 = time.process_time()
        s["right-hand side f"] += c1 - c0
        s["forming S"] += c2 - c1
        s["krylov"] += c4 - c3
        s["total"] += c5 - c0
        s["iterations"] += k
    s["total"] -= s["factor_s"]
    s["preconditioner"] += s["solves"]
    s["other Krylov work"] = s["krylov"] - s["products with S"] - s["solves"]
    s["x"] = np.concatenate([q, v])
    return s


def command(argv) -> str:
    """The command line of this run (``argv``: its arguments), for the "Measured:" line."""
    return " ".join(["python", "benchmarks/bench_sparse_step_parts.py", *argv])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", type=grid, default=(90, 18, 18), help="cells of the Tet4 box (90x18x18: 97 470 DOFs)")
    ap.add_argument("--steps", type=int, default=10, help="steps timed per solver")
    ap.add_argument("--quick", action="store_true", help="a 576-DOF box, 3 steps: a smoke test, not a measurement")
    a = ap.parse_args(argv)
    if a.steps < 1:
        ap.error(f"--steps must be at least 1, got {a.steps}")
    cells, steps = ((12, 3, 3), 3) if a.quick else (a.grid, a.steps)
    args = sys.argv[1:] if argv is None else argv
    print(f"Measured: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, `{command(args)}`, {platform.machine()}, "
          f"python {platform.python_version()}, numpy {np.__version__}, OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS')}, load average {os.getloadavg()[0]:.1f}; CPU time per step, "
          f"mean of {steps} steps")
    c0 = time.process_time()
    model = build("solid", cells, steel(), spin_up())
    build_s = time.process_time() - c0
    print(f"\n{cells[0]} x {cells[1]} x {cells[2]} cells, {model.n_dofs} free DOFs, built with stiffening in "
          f"{build_s:.3g} s of CPU; h = 1e-5 s from t0 = 0.5 s")
    print("\n| `linear_solver` | " + " | ".join(PARTS) + " | iterations |")
    print("|---|" + "---:|" * (len(PARTS) + 1))
    for solver, label in SOLVERS.items():
        r = midpoint_steps(model, solver, steps)
        once = f" + {r['factor_s']:.3g} once" if r["factor_s"] else ""
        cells_s = [f"{r[p] / steps:.2g}" for p in PARTS]
        cells_s[0] += once
        print(f"| {label} | " + " | ".join(cells_s) + f" | {r['iterations'] / steps:.3g} |")
    if a.quick:
        print("quick mode: a smoke test of the script, not a measurement (run without --quick)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
