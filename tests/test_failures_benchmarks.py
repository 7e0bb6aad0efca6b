"""The benchmark scripts behind the tables of docs/benchmarks.md (issue 20, item 14).

- bench_sparse_step_parts.py times the parts of the sparse midpoint step by taking the step
  itself: its states and iteration counts are those of `ImplicitMidpoint`, on both solvers.
- bench_orderings.py's node-block preconditioner inverts H's 3 x 3 node blocks.
- Bad arguments of the new scripts: a table of (arguments, the message they now print).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_coupled_cases  # noqa: E402
import bench_orderings  # noqa: E402
import bench_sparse_step_parts  # noqa: E402
from bench_scaling import build, spin_up, steel  # noqa: E402

from flexmbs.formulations import FORMULATIONS  # noqa: E402
from flexmbs.integrators.midpoint import ImplicitMidpoint  # noqa: E402


@pytest.fixture(scope="module")
def spinning_box():
    # 12 x 3 x 3 cells: 576 free DOFs, above Model's dense_below (400), so the midpoint rule
    # takes the sparse step of flexmbs/integrators/sparse_step.py
    return build("solid", (12, 3, 3), steel(), spin_up())


@pytest.mark.parametrize(("solver", "linear_solver"), [("auto", "iterative"), ("reuse", "reuse")])
def test_the_timed_step_is_the_midpoint_rules_step(spinning_box, solver, linear_solver):
    model = spinning_box
    timed = bench_sparse_step_parts.midpoint_steps(model, solver, 4, h=1e-5, t0=0.5)
    form = FORMULATIONS["lagrange"](model)
    zero = np.zeros(model.n_dofs)
    integ = ImplicitMidpoint(form, 0.5, form.state0(zero, zero), 0.5 + 4e-5, h=1e-5, linear_solver=linear_solver)
    for _ in range(4):
        integ.step()
    assert integ.n_lin_iter == timed["iterations"] > 0
    scale = np.abs(integ.x).max()
    assert scale > 0 and np.abs(timed["x"] - integ.x).max() <= 1e-10 * scale
    parts = [timed[p] for p in bench_sparse_step_parts.PARTS[1:]]
    assert min(parts) >= 0.0 and sum(parts) <= timed["total"] * (1 + 1e-9) + 1e-9
    assert (timed["factor_s"] > 0) == (solver == "reuse")


def test_node_block_inverses_invert_the_node_blocks():
    rng = np.random.default_rng(1)
    blocks = [b @ b.T + 3 * np.eye(3) for b in rng.standard_normal((4, 3, 3))]
    coupling = sparse.coo_matrix(([0.1, 0.1, 0.2, 0.2], ([0, 3, 5, 10], [3, 0, 10, 5])), shape=(12, 12))
    H = sparse.block_diag(blocks, format="csc") + coupling          # entries between nodes, outside the blocks
    P = bench_orderings.node_block_inverses(H)
    for i, b in enumerate(blocks):
        assert P[3 * i:3 * i + 3, 3 * i:3 * i + 3].toarray() @ b == pytest.approx(np.eye(3), abs=1e-12)
    assert P.nnz == 4 * 9


BAD_ARGUMENTS = [
    (bench_sparse_step_parts, ["--steps", "0"], "--steps must be at least 1, got 0"),
    (bench_sparse_step_parts, ["--grid", "90x18"], "a grid is three cell counts like 40x8x8, got '90x18'"),
    (bench_coupled_cases, ["--repeats", "0"], "--repeats must be at least 1, got 0"),
    (bench_orderings, ["--grids", "40x8x0"], "a grid needs at least one cell in each direction, got '40x8x0'"),
    (bench_orderings, ["--choices", "cholesky"], "argument --choices: invalid choice: 'cholesky'"),
]


@pytest.mark.parametrize(("script", "argv", "message"), BAD_ARGUMENTS,
                         ids=[f"{s.__name__} {' '.join(a)}" for s, a, _ in BAD_ARGUMENTS])
def test_a_bad_argument_is_named(script, argv, message, capsys):
    with pytest.raises(SystemExit):
        script.main(argv)
    assert message in capsys.readouterr().err


def test_an_unknown_solver_is_named(spinning_box):
    with pytest.raises(ValueError, match=r"`solver` must be one of \['auto', 'reuse'\], got 'direct'"):
        bench_sparse_step_parts.midpoint_steps(spinning_box, "direct", 1)
