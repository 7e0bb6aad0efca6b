"""The pre-stress of geometric stiffening solved without a factor of K: conjugate gradients with
Jacobi or algebraic multigrid (pyamg) give the same K_geo as the direct solve, to the solver's
tolerance; small models keep the factorization."""
import numpy as np
import pytest
from scipy import sparse

import flexmbs as fm
from flexmbs.sparse_solve import CG_RTOL, DIRECT_BELOW, amg_available, spd_factor, spd_solve
from flexmbs.assembly.assembler import dense_array

CG_BACKENDS = ["jacobi-cg", pytest.param("amg-cg", marks=pytest.mark.skipif(
    not amg_available(), reason="pyamg not installed (extra flexmbs[amg])"))]


def spinning_box(solver, n=6, **kw):
    """A clamped steel Tet4 box on a spin-up frame, with a tip load: 12 + 1 unit pre-stress cases."""
    mesh = fm.generate.box(n, 2, 2, 1.0, 0.2, 0.2, cell="tetra")
    el = fm.Tet4(fm.Material(2.1e11, 7800.0, 0.3))
    return fm.Model(mesh, el, fixed=[("xmin", "all")], motion=fm.motion.SpinUp(10.0, 1.0), dense_below=0,
                    loads=[fm.NodalLoad("xmax", "v", 10.0)], prestress_solver=solver, **kw)


@pytest.mark.parametrize("backend", CG_BACKENDS)
def test_cg_solves_equal_the_factorization(backend):
    """|x_cg - x_direct| / |x_direct| stays within cond(K) times the residual tolerance; on this
    box it is below 1e-7 (cond(K) ~ 1e4 here)."""
    md = spinning_box("direct")
    F = np.column_stack([-md.inv.m_O[2], -md.inv.d[0, 0]])
    X_ref = spd_factor(md.K).solve(F)
    X, info = spd_solve(md.K, F, backend=backend)
    assert info.startswith(backend) and "iterations" in info
    assert np.linalg.norm(md.K @ X - F, axis=0).max() <= 10 * CG_RTOL * np.linalg.norm(F, axis=0).max()
    assert np.abs(X - X_ref).max() <= 1e-7 * np.abs(X_ref).max()


@pytest.mark.parametrize("backend", CG_BACKENDS)
def test_geometric_stiffness_by_cg_equals_the_direct_one(backend):
    """Every unit K_geo,j of a model whose pre-stress ran by CG equals the direct one to 1e-7
    relative (the tolerance that CG_RTOL = 1e-10 gives through cond(K))."""
    ref, md = spinning_box("direct"), spinning_box(backend)
    assert md.prestress_info.startswith(backend)
    assert ref.prestress_info in ("superlu", "cholmod")
    assert md._Kg_keys == ref._Kg_keys and len(ref._Kg) == 13
    for Kg, Kg_ref in zip(md._Kg, ref._Kg):
        assert abs(Kg - Kg_ref).max() <= 1e-7 * abs(Kg_ref).max()


def test_auto_factorizes_small_models():
    md = spinning_box("auto", n=3)
    assert md.n_dofs < DIRECT_BELOW
    assert md.prestress_info in ("superlu", "cholmod")


def rigid_modes(md):
    """(n_dofs, 6): unit translations and rotations (omega x X) of the free DOFs."""
    node, comp = md.free // 3, md.free % 3
    X = md.mesh.points[node]
    out = np.zeros((md.n_dofs, 6))
    for r in range(3):
        out[comp == r, r] = 1.0
        out[:, 3 + r] = np.cross(np.eye(3)[r], X)[np.arange(md.n_dofs), comp]
    return out


def test_amg_uses_the_rigid_body_modes():
    """With the rigid modes as near null space the multigrid preconditioner needs few iterations:
    fewer than half of Jacobi's on the same problem."""
    pytest.importorskip("pyamg")
    md = spinning_box("direct", n=8)
    f = -md.inv.m_O[2]
    _, jacobi = spd_solve(md.K, f, backend="jacobi-cg")
    _, amg = spd_solve(md.K, f, backend="amg-cg", near_null=rigid_modes(md))
    its = lambda info: int(info.split("(")[1].split()[0])  # noqa: E731
    assert its(amg) < 0.5 * its(jacobi)


@pytest.mark.parametrize("backend", CG_BACKENDS)
def test_lobpcg_modes_equal_the_dense_eigenproblem(backend):
    """The 6 lowest eigenvalues of (K, M) by LOBPCG equal scipy.linalg.eigh's to 1e-10 relative
    (LOBPCG_RTOL = 1e-8 on the residual gives them to about 1e-16 .. 1e-12), the modes are
    M-orthonormal and each one's relative residual is within the tolerance."""
    from scipy.linalg import eigh
    from flexmbs.reduction import LOBPCG_RTOL, lobpcg_modes
    md = fm.Model(fm.generate.box(12, 3, 3, 1.0, 0.2, 0.2, cell="tetra"), fm.Tet4(fm.Material(2.1e11, 7800.0, 0.3)),
                  fixed=[("xmin", "all")], dense_below=0)
    lam_ref = eigh(dense_array(md.K), dense_array(md.M), eigvals_only=True)[:6]
    lam, X = lobpcg_modes(md.K, md.M, 6, backend, near_null=md.rigid_modes())
    assert np.abs(lam / lam_ref - 1).max() <= 1e-10
    np.testing.assert_allclose(X.T @ (md.M @ X), np.eye(6), atol=1e-10)
    res = np.linalg.norm(md.K @ X - (md.M @ X) * lam, axis=0) / (lam * np.linalg.norm(md.M @ X, axis=0))
    assert res.max() <= 10 * LOBPCG_RTOL


def test_rigid_modes_are_the_null_space_of_the_unsupported_stiffness():
    """Model.rigid_modes: K R = 0 for a body without supports (the near null space given to AMG)."""
    md = fm.Model(fm.generate.box(3, 2, 2, 1.0, 0.2, 0.2, cell="tetra"), fm.Tet4(fm.Material(2.1e11, 7800.0, 0.3)))
    R = md.rigid_modes()
    assert R.shape == (md.n_dofs, 6) and np.linalg.matrix_rank(R) == 6
    assert np.abs(md.K @ R).max() <= 1e-12 * abs(md.K).max() * np.abs(R).max()


@pytest.mark.slow
def test_reduce_of_a_large_model_by_lobpcg_equals_shift_invert():
    """Above DIRECT_BELOW (without CHOLMOD) `reduce` takes its modes by LOBPCG and its static modes
    by CG, with no factor of K: the reduced body's lowest frequencies equal those of shift-invert
    Lanczos on a factor of K to 1e-10, and its static modes' span holds K^-1 of the unit loads."""
    from flexmbs.reduction import _lowest_modes, reduce
    from flexmbs.sparse_solve import cholmod_available, solve_backend
    if cholmod_available():
        pytest.skip("with CHOLMOD, reduce factorizes K")
    md = fm.Model(fm.generate.box(60, 10, 10, 1.0, 0.2, 0.2, cell="tetra"), fm.Tet4(fm.Material(2.1e11, 7800.0, 0.3)),
                  fixed=[("xmin", "all")])
    assert md.n_dofs > DIRECT_BELOW and solve_backend(md.n_dofs).endswith("-cg")
    red = reduce(md, 6)
    lam_ref, _ = _lowest_modes(md.K, md.M, 6, factor=spd_factor(md.K))
    assert np.abs(red.omega2[:6] / lam_ref - 1).max() <= 1e-10
    u = spd_factor(md.K).solve(-md.inv.m_O[2])                  # the static mode of a unit z load
    coef = red.Phi.T @ (md.M @ u)                                # M-orthonormal basis: projection
    assert np.linalg.norm(red.Phi @ coef - u) <= 1e-8 * np.linalg.norm(u)


def test_reduce_reuses_the_prestress_solutions():
    """`Model.static_displacements` are K^-1 of the unit cases (-d[a, b], -m_O[c], Q) in reduce's
    order, so the reduced model of a stiffened body has the same basis as that of the same body
    without stiffening, whose static modes reduce solves itself: equal Ritz values to 1e-10."""
    stiff, plain = spinning_box("direct"), spinning_box("direct", stiffening=False)
    U = stiff.static_displacements
    F = np.column_stack([-stiff.inv.d[a, b] for a in range(3) for b in range(3) if np.any(stiff.inv.d[a, b])]
                        + [-stiff.inv.m_O[c] for c in range(3)] + [stiff.Q[:, 0]])
    assert U.shape == F.shape and plain.static_displacements is None
    assert np.abs(stiff.K @ U - F).max() <= 1e-8 * np.abs(F).max()
    from flexmbs.reduction import reduce
    a, b = reduce(stiff, 4), reduce(plain, 4)
    assert a.n_dofs == b.n_dofs and a.static_displacements is None
    assert np.abs(a.omega2 / b.omega2 - 1).max() <= 1e-10
