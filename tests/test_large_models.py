"""Large-model machinery on small meshes: pattern assembly, SPD solves, the Schur midpoint step."""
import numpy as np
import pytest
from scipy import sparse

import flexmbs as fm
from flexmbs.assembly import Assembler
from flexmbs.integrators.midpoint import SchurFactorization
from flexmbs.integrators.base import Factorization
from flexmbs.sparse_solve import spd_factor


def _box_model(n=3, **kw):
    mesh = fm.generate.box(n, 1, 1, 1.0, 0.2, 0.2, cell="tetra")
    el = fm.Tet4(fm.Material(2.1e11, 7800.0, 0.3))
    return fm.Model(mesh, el, fixed=[("xmin", "all")], **kw)


def test_pattern_assembly_equals_coo_assembly():
    """The bincount-on-a-node-pattern assembly sums the same entries as a COO -> CSR scatter."""
    mesh = fm.generate.box(3, 2, 2, cell="tetra10")
    el = fm.Tet10(fm.Material(2.1e11, 7800.0, 0.3))
    cells = mesh.cells["tetra10"]
    X = mesh.points[cells]
    asm = Assembler(cells, mesh.n_nodes, 3, chunk=7)              # several chunks
    k = el.k(X)
    ii = np.broadcast_to(asm.element_dofs[:, :, None], k.shape).ravel()
    jj = np.broadcast_to(asm.element_dofs[:, None, :], k.shape).ravel()
    ref = sparse.coo_array((k.ravel(), (ii, jj)), shape=(asm.n_dofs,) * 2).toarray()
    np.testing.assert_allclose(asm.matrix(k).toarray(), ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    np.testing.assert_allclose(asm.matrix_from(el.k, X).toarray(), ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    sigma = np.tile(np.diag([1.0, 2.0, -0.5]), (len(cells), 1, 1))
    kg = el.k_geo(X, sigma)
    ref_g = sparse.coo_array((kg.ravel(), (ii, jj)), shape=(asm.n_dofs,) * 2).toarray()
    placed = asm.diagonal_place(asm.scalar(el.k_geo_scalar(X, sigma))).toarray()
    np.testing.assert_allclose(placed, ref_g, rtol=0, atol=1e-12 * np.abs(ref_g).max())


def test_spd_factor_solves_a_stiffness():
    md = _box_model(4)
    f = np.random.default_rng(0).standard_normal((md.n_dofs, 3))
    u = spd_factor(md.K).solve(f)
    assert np.abs(md.K @ u - f).max() < 1e-9 * np.abs(f).max()


@pytest.mark.parametrize("formulation", ["lagrange", "gibbs-appell", "hamilton"])
@pytest.mark.parametrize("dense_below", [10_000, 0])
def test_schur_step_equals_full_system_solve(formulation, dense_below):
    """The n x n Schur solve gives the 2n x 2n system's solution to round-off, dense and sparse."""
    from flexmbs.formulations import FORMULATIONS
    md = _box_model(2, motion=fm.motion.ConstantRotation(5.0), damping=(1.0, 1e-5),
                    dense_below=dense_below)
    form = FORMULATIONS[formulation](md)
    h = 1e-4
    J = form.jacobian(0.3)
    Mf = form.mass_matrix_full(0.3)
    A = Mf / h - 0.5 * (J.toarray() if sparse.issparse(J) and dense_below else J)
    if dense_below and sparse.issparse(A):
        A = A.toarray()
    schur = SchurFactorization(A, form.n)
    assert schur._full is None                        # the identity block was found
    b = np.random.default_rng(1).standard_normal(2 * form.n)
    x = schur.solve(b)
    x_ref = Factorization(A).solve(b)
    assert np.abs(x - x_ref).max() < 1e-9 * np.abs(x_ref).max()


@pytest.mark.parametrize("solver", ["reuse", "iterative"])
def test_iterative_schur_solve_runs_like_the_direct_one(solver):
    """Midpoint on a spin-up frame (the step matrix changes at every step) with a reused
    preconditioner ("reuse") or Jacobi ("iterative"), and with "direct": the same run to 1e-9."""
    md = _box_model(3, motion=fm.motion.SpinUp(20.0, 0.001), dense_below=0)
    node = md.mesh.nodes("xmax")[0]
    out = {}
    for name in ("direct", solver):
        res = fm.run(md, formulation="lagrange", method="midpoint", h=1e-5, t_end=2e-4, dt_out=1e-4,
                     linear_solver=name, compute_energies=False)
        out[name] = res.displacement[:, node]
        if name == "reuse":
            assert res.stats["n_lu"] == 20                    # a new step matrix at every step
    scale = np.abs(out["direct"]).max()
    assert scale > 0
    assert np.abs(out[solver] - out["direct"]).max() < 1e-9 * scale


def test_stiffness_estimate_and_warning():
    """omega_max of a small box equals the dense eigenvalue; a stiff explicit run is announced
    with its number of steps; the stability limits are those of the methods' coefficients."""
    from scipy.linalg import eigh
    from flexmbs.stiffness import StiffnessWarning, check_explicit, imaginary_stability_limit, largest_frequency
    md = _box_model(2)
    lam = eigh(md.K.toarray(), md.M.toarray(), eigvals_only=True)[-1]
    assert abs(largest_frequency(md) - np.sqrt(lam)) <= 1e-8 * np.sqrt(lam)
    # AB4's imaginary stability interval is short (about 0.43), DOP853's long (about 6)
    assert 0.42 < imaginary_stability_limit("AB4") < 0.44
    assert 5.5 < imaginary_stability_limit("DOP853") < 6.5
    with pytest.warns(StiffnessWarning, match="this model is stiff: use midpoint or generalized-alpha"):
        steps = check_explicit(md, "DOP853", (0.0, 10.0), warn_steps=1000)
    assert steps == pytest.approx(np.sqrt(lam) * 10.0 / imaginary_stability_limit("DOP853"), rel=1e-6)
    assert check_explicit(md, "midpoint", (0.0, 10.0)) is None


def test_power_iteration_estimate_on_a_sparse_model():
    from scipy.linalg import eigh
    from flexmbs.stiffness import largest_frequency
    mesh = fm.generate.box(8, 4, 4, 1.0, 0.3, 0.3, cell="tetra")
    md = fm.Model(mesh, fm.Tet4(fm.Material(2.1e11, 7800.0, 0.3)), fixed=[("xmin", "all")])
    assert md.n_dofs > 400
    w = largest_frequency(md, iterations=200)
    w_ref = np.sqrt(eigh(md.K.toarray(), md.M.toarray(), eigvals_only=True)[-1])
    assert 0.9 * w_ref < w <= w_ref * (1 + 1e-9)
