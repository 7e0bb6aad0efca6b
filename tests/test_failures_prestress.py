"""Bad input and failures of the lean SPD solves (`flexmbs.sparse_solve.spd_solve`, the pre-stress of
`Model`, `flexmbs.reduction.lobpcg_modes`): each row is (what is given, the message it now prints)."""
import numpy as np
import pytest
from scipy import sparse

import flexmbs as fm
import flexmbs.sparse_solve as ss
from flexmbs.reduction import lobpcg_modes
from flexmbs.sparse_solve import IterativeSolveError, SPDFactorizationError, spd_solve


def box(**kw):
    return fm.Model(fm.generate.box(12, 3, 3, 1.0, 0.2, 0.2, cell="tetra"), fm.Tet4(fm.Material(2.1e11, 7800.0, 0.3)),
                    fixed=[("xmin", "all")], dense_below=0, **kw)


def model_solver_name(monkeypatch):
    box(motion=fm.motion.SpinUp(10.0, 1.0), prestress_solver="lu")


def backend_name(monkeypatch):
    spd_solve(sparse.identity(3, format="csr"), np.ones(3), backend="qr")


def amg_missing(monkeypatch):
    monkeypatch.setattr(ss, "amg_available", lambda: False)
    spd_solve(sparse.identity(3, format="csr"), np.ones(3), backend="amg-cg")


def cg_too_few_iterations(monkeypatch):
    md = box()
    spd_solve(md.K, -md.inv.m_O[2], backend="jacobi-cg", maxiter=3)


def jacobi_negative_diagonal(monkeypatch):
    spd_solve(sparse.diags([1.0, -1.0, 2.0]).tocsr(), np.ones(3), backend="jacobi-cg")


def lobpcg_too_few_iterations(monkeypatch):
    md = box()
    lobpcg_modes(md.K, md.M, 4, "jacobi-cg", rtol=1e-14, maxiter=1)


def reduced_rigid_modes(monkeypatch):
    from flexmbs.reduction import reduce
    reduce(box(), 2).rigid_modes()


CASES = [
    ("rigid modes of a ReducedModel", reduced_rigid_modes, ValueError,
     r"a ReducedModel has modal coordinates, not nodal DOFs: its rigid modes are `reduced.full.rigid_modes\(\)`"),
    ("Model(prestress_solver='lu')", model_solver_name, ValueError,
     r"`prestress_solver` must be one of \['auto', 'direct', 'cholmod', 'superlu', 'amg-cg', 'jacobi-cg'\], got 'lu'"),
    ("spd_solve(backend='qr')", backend_name, ValueError, r"`backend` must be one of \['auto', 'direct'"),
    ("backend='amg-cg' without pyamg", amg_missing, ValueError,
     r"`backend` 'amg-cg' needs pyamg: pip install 'flexmbs\[amg\]'"),
    ("CG with maxiter=3", cg_too_few_iterations, IterativeSolveError,
     r"conjugate gradients \(jacobi-cg\) stopped after 3 iterations at the relative residual .* \(tolerance 1e-10\) "
     r"for right-hand side 0: .* install the extra flexmbs\[amg\] \(pyamg\) or scikit-sparse"),
    ("Jacobi on a matrix with a negative diagonal", jacobi_negative_diagonal, SPDFactorizationError,
     r"the matrix has 1 diagonal entries <= 0: not positive definite"),
    ("LOBPCG with maxiter=1", lobpcg_too_few_iterations, IterativeSolveError,
     r"LOBPCG \(jacobi-cg\) did not converge in 3 runs of 1 iterations: mode \d+ has the relative residual .* \(tolerance 1e-14\)"),
]


@pytest.mark.parametrize("what, call, error, message", CASES, ids=[c[0] for c in CASES])
def test_failure_message(monkeypatch, what, call, error, message):
    with pytest.raises(error, match=message):
        call(monkeypatch)
