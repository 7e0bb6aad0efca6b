"""Large-model machinery on small meshes: pattern assembly, SPD solves, the Schur midpoint step."""
import numpy as np
import pytest
from scipy import sparse

import flexmbs as fm
from flexmbs.assembly import Assembler
from flexmbs.integrators.midpoint import SchurFactorization
from flexmbs.integrators.base import Factorization
from flexmbs.sparse_solve import spd_factor
from flexmbs.assembly.assembler import dense_array


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
@pytest.mark.parametrize("formulation", ["lagrange", "hamilton"])
def test_iterative_schur_solve_runs_like_the_direct_one(solver, formulation):
    """Midpoint on a spin-up frame (the step matrix changes at every step) with a reused
    preconditioner ("reuse") or Jacobi ("iterative"), and with "direct": the same run to 1e-9.
    Both take the n x n step matrix of `sparse_step` (its counters: step matrices in n_jac,
    factorizations in n_lu): Lagrange's S = M/h + C_eff/2 + h K_eff/4, Hamilton's the same
    without [k(eps)] (`flexmbs.integrators.midpoint`)."""
    md = _box_model(3, motion=fm.motion.SpinUp(20.0, 0.001), dense_below=0)
    node = md.mesh.nodes("xmax")[0]
    out = {}
    for name in ("direct", solver):
        res = fm.run(md, formulation=formulation, method="midpoint", h=1e-5, t_end=2e-4, dt_out=1e-4,
                     linear_solver=name, compute_energies=False)
        out[name] = res.displacement[:, node]
        assert res.stats["n_jac"] == 20                       # a new step matrix at every step
        assert res.stats["n_lu"] == {"direct": 20, "reuse": 1, "iterative": 0}[name]
    scale = np.abs(out["direct"]).max()
    assert scale > 0
    assert np.abs(out[solver] - out["direct"]).max() < 1e-9 * scale


def _spin_model(n=3, **kw):
    """A sparse box on a frame with omega and eps about a skew axis, damping and stiffening."""
    axis = np.array([0.3, 0.5, 1.0]) / np.linalg.norm([0.3, 0.5, 1.0])
    return _box_model(n, motion=fm.motion.SpinUp(20.0, 0.001, axis=axis), dense_below=0,
                      damping=(2.0, 1e-6), **kw)


def test_sparse_sum_equals_the_sparse_additions():
    """A(c) on the union pattern equals sum_k c_k A_k added by scipy, for terms whose patterns
    differ (a diagonal, a full block pattern, a single off-diagonal pattern, an empty one)."""
    from flexmbs.sparse_sum import SparseSum
    md = _box_model(3, dense_below=0)
    n = md.n_dofs
    mats = [md.M, md.K, sparse.identity(n, format="csr"), md.inv.S[(0, 1)], sparse.csr_array((n, n))]
    s = SparseSum(mats)
    for c in ([1.0, 2.0, -3.0, 0.5, 7.0], [0.0, 1e-3, 0.0, -2.0, 0.0]):
        ref = sum(ci * A for ci, A in zip(c, mats))
        got = s.matrix(c)
        assert got.nnz == s.nnz                              # the one pattern, zeros kept
        np.testing.assert_allclose(got.toarray(), ref.toarray(), rtol=0, atol=1e-14 * abs(ref).max())
    with pytest.raises(ValueError, match="`c` must have 5 coefficients"):
        s.data([1.0, 2.0])


def test_frame_terms_combine_to_the_frame_matrices():
    """K_eff(t) = sum a_k A_k and C_eff(t) = sum b_k A_k equal frame_stiffness and frame_damping
    (omega and eps about a skew axis, Rayleigh damping, geometric stiffening); the terms flagged
    skew are skew-symmetric and the rest combine to a symmetric K_eff - [k(eps)]."""
    md = _spin_model()
    mats, skew = md.frame_terms()
    assert md.stiffening and skew.any()
    for t in (0.0, 3e-4, 2e-3):
        a, b = md.frame_coefficients(t)
        K = sum(ai * A for ai, A in zip(a, mats))
        C = sum(bi * A for bi, A in zip(b, mats))
        K_ref, C_ref = md.frame_stiffness(t), md.frame_damping(t)
        assert abs(K - K_ref).max() <= 1e-14 * abs(K_ref).max()
        assert abs(C - C_ref).max() <= 1e-14 * abs(C_ref).max()
        sym = sum(ai * A for ai, A, sk in zip(a, mats, skew) if not sk)
        assert abs(sym - sym.T).max() <= 1e-14 * abs(sym).max()
    for A, sk in zip(mats, skew):
        if sk:
            assert abs(A + A.T).max() == 0.0


def test_gmres_right_solves_a_nonsymmetric_system():
    """Right-preconditioned GMRES: the true residual meets the tolerance; with the exact
    inverse as preconditioner it takes one iteration; too few iterations are reported."""
    from flexmbs.integrators.sparse_step import gmres_right
    rng = np.random.default_rng(3)
    n = 60
    B = rng.standard_normal((n, n))
    A = np.eye(n) * 8.0 + B - B.T + 0.3 * rng.standard_normal((n, n))
    b = rng.standard_normal(n)
    x, k, ok = gmres_right(A, lambda r: r / 8.0, b, None, 1e-12, 200)
    assert ok and np.linalg.norm(b - A @ x) <= 1e-11 * np.linalg.norm(b)
    x, k, ok = gmres_right(A, lambda r: np.linalg.solve(A, r), b, np.ones(n), 1e-12, 5)
    assert ok and k == 1 and np.linalg.norm(b - A @ x) <= 1e-11 * np.linalg.norm(b)
    x, k, ok = gmres_right(A, lambda r: r / 8.0, b, None, 1e-12, 3)
    assert not ok and k == 3


@pytest.mark.parametrize("solver,n_lu", [("direct", 20), ("reuse", 1), ("iterative", 0)])
def test_sparse_step_matrix_equals_the_full_system(solver, n_lu):
    """The n x n step of `sparse_step` (every solver) equals the 2n x 2n midpoint system solved
    by LU (``reduced=False``), to the Krylov tolerance, on a frame with omega and eps about a
    skew axis, damping and stiffening; "iterative" factorizes nothing, "reuse" once."""
    md = _spin_model()
    kw = dict(formulation="lagrange", method="midpoint", h=1e-5, t_end=2e-4, dt_out=5e-5,
              compute_energies=False)
    ref = fm.run(md, linear_solver="direct", reduced=False, **kw)
    res = fm.run(md, linear_solver=solver, **kw)
    assert (res.stats["n_lu"], res.stats["n_jac"], res.stats["n_rhs"]) == (n_lu, 20, 20)
    assert (res.stats["n_lin_iter"] > 0) == (solver != "direct")
    for name in ("displacement", "velocity"):
        a, r = getattr(res, name), getattr(ref, name)
        assert np.abs(r).max() > 0
        assert np.abs(a - r).max() <= 1e-9 * np.abs(r).max()


def test_gibbs_appell_takes_the_same_sparse_step():
    """Gibbs-Appell has Lagrange's Jacobian blocks, so it takes the same n x n step matrix;
    its run equals Lagrange's to the Krylov tolerance."""
    md = _spin_model()
    kw = dict(method="midpoint", h=1e-5, t_end=1e-4, dt_out=5e-5, compute_energies=False)
    a = fm.run(md, formulation="gibbs-appell", **kw)
    b = fm.run(md, formulation="lagrange", **kw)
    assert a.stats["n_lu"] == 0 and a.stats["n_jac"] == 10       # "auto": iterative, spin-up
    assert np.abs(a.displacement - b.displacement).max() <= 1e-9 * np.abs(b.displacement).max()


def test_steady_frame_factorizes_the_step_matrix_once():
    """On a constant spin S is constant: "auto" factorizes it once for the whole run."""
    md = _box_model(3, motion=fm.motion.ConstantRotation(30.0), dense_below=0)
    res = fm.run(md, formulation="lagrange", method="midpoint", h=1e-5, t_end=1e-4, dt_out=1e-4,
                 compute_energies=False)
    ref = fm.run(md, formulation="lagrange", method="midpoint", h=1e-5, t_end=1e-4, dt_out=1e-4,
                 compute_energies=False, reduced=False, linear_solver="direct")
    assert (res.stats["n_lu"], res.stats["n_jac"]) == (1, 1)
    assert np.abs(res.displacement - ref.displacement).max() <= 1e-9 * np.abs(ref.displacement).max()


def test_threaded_products_equal_the_serial_ones(monkeypatch):
    """Products with S by row blocks in 3 threads: the same run, to the Krylov tolerance."""
    from flexmbs.integrators import sparse_step
    md = _spin_model()
    kw = dict(formulation="lagrange", method="midpoint", h=1e-5, t_end=1e-4, dt_out=5e-5,
              compute_energies=False)
    ref = fm.run(md, matvec_threads=1, **kw)
    monkeypatch.setattr(sparse_step, "THREADED_NNZ", 0)
    S = sparse_step.SecondOrderStepMatrix(md, "iterative", threads=3)
    assert S.threads == 3
    x = np.random.default_rng(2).standard_normal(md.n_dofs)
    A = S.matrix(1e-5, 0.3e-3)
    assert np.abs(S._S_op @ x - A @ x).max() <= 1e-12 * np.abs(A @ x).max()
    res = fm.run(md, matvec_threads=3, **kw)
    assert np.abs(res.displacement - ref.displacement).max() <= 1e-9 * np.abs(ref.displacement).max()
    with pytest.raises(ValueError, match="`matvec_threads` must be None or an integer >= 1"):
        fm.run(md, matvec_threads=0, **kw)


@pytest.mark.parametrize("solver", ["iterative", "reuse"])
def test_generalized_alpha_takes_the_sparse_step_matrix(solver):
    """Generalized-alpha on a sparse model solves its S = (1 - alpha_m) M + (1 - alpha_f)
    (gamma h C + beta h^2 K) like the midpoint rule (no LU of M or S for "iterative"); the run
    equals the LU path (taken with ``linear=False``, Newton-checked) to 1e-9."""
    md = _spin_model()
    kw = dict(formulation="lagrange", method="generalized-alpha", h=1e-5, t_end=2e-4, dt_out=5e-5,
              compute_energies=False)
    ref = fm.run(md, linear=False, **kw)
    res = fm.run(md, linear_solver=solver, **kw)
    assert res.stats["n_lu"] == {"iterative": 0, "reuse": 1}[solver] and res.stats["n_jac"] == 20
    for name in ("displacement", "velocity"):
        a, r = getattr(res, name), getattr(ref, name)
        assert np.abs(a - r).max() <= 1e-9 * np.abs(r).max()


def test_iterative_steps_conserve_the_energy_of_a_free_vibration():
    """Midpoint conserves the energy 1/2 v^T M v + 1/2 q^T K q of an undamped linear model
    exactly; with Jacobi-BiCGSTAB to 1e-13 it holds to 1e-10 over 200 steps of a sparse box
    released from a bending shape (a fixed frame: "auto" would factorize, so "iterative" is
    asked for)."""
    from flexmbs.formulations import FORMULATIONS
    from flexmbs.integrators.midpoint import ImplicitMidpoint
    md = _box_model(4, dense_below=0)
    form = FORMULATIONS["lagrange"](md)
    y = md.mesh.points[:, 0] ** 2
    q0 = md.expand(np.zeros(md.n_dofs)).reshape(-1, 3)
    q0[:, 2] = 1e-4 * y
    q0 = q0.ravel()[md.free]
    integ = ImplicitMidpoint(form, 0.0, np.concatenate([q0, np.zeros(md.n_dofs)]), 2e-3, h=1e-5,
                             linear_solver="iterative")
    energy = lambda x: 0.5 * (x[md.n_dofs:] @ (md.M @ x[md.n_dofs:]) + x[:md.n_dofs] @ (md.K @ x[:md.n_dofs]))  # noqa: E731
    E0 = energy(integ.x)
    kinetic = 0.0
    while integ.status == "running":
        integ.step()
        v = integ.x[md.n_dofs:]
        kinetic = max(kinetic, 0.5 * v @ (md.M @ v))
    assert integ.n_lu == 0 and integ.n_lin_iter > 0
    assert kinetic > 0.1 * E0                             # it vibrates: energy changes form
    assert abs(energy(integ.x) - E0) <= 1e-10 * E0


def test_iterative_solver_switches_to_a_factorization_when_it_stalls():
    """With Jacobi allowed one iteration, the step matrix's symmetric part is factorized once
    and the run continues with it (GMRES), to the same results as the direct solve."""
    from flexmbs.formulations import FORMULATIONS
    from flexmbs.integrators.midpoint import ImplicitMidpoint
    md = _spin_model()
    form = FORMULATIONS["lagrange"](md)
    x0 = np.zeros(form.n_state)
    out = {}
    for name, opts in (("direct", {}), ("iterative", dict(iterative_max_iter=1))):
        integ = ImplicitMidpoint(form, 0.0, x0, 1e-4, h=1e-5, linear_solver=name, **opts)
        while integ.status == "running":
            integ.step()
        out[name] = integ.x
        if name == "iterative":
            assert integ._second.solver == "reuse" and integ.n_lu == 1 and integ.n_lin_iter > 0
    assert np.abs(out["iterative"] - out["direct"]).max() <= 1e-9 * np.abs(out["direct"]).max()


def test_mass_factorization_is_deferred_to_the_first_solve():
    """A formulation does not factorize M until an M^-1 solve is asked for (implicit steps on
    the n x n step matrix never ask); then rhs solves with it."""
    from flexmbs.formulations import FORMULATIONS
    md = _box_model(3, dense_below=0)
    form = FORMULATIONS["lagrange"](md)
    assert form._M_solver._factor is None
    x = np.random.default_rng(0).standard_normal(form.n_state)
    acc = form.rhs(0.0, x)[form.n:]
    f = form.forcing_full(0.0, x)[form.n:]
    assert np.abs(md.M @ acc - f).max() <= 1e-10 * np.abs(f).max()


def test_stiffness_estimate_and_warning():
    """omega_max of a small box equals the dense eigenvalue; a stiff explicit run is announced
    with its number of steps; the stability limits are those of the methods' coefficients."""
    from scipy.linalg import eigh
    from flexmbs.stiffness import StiffnessWarning, check_explicit, imaginary_stability_limit, largest_frequency
    md = _box_model(2)
    lam = eigh(dense_array(md.K), dense_array(md.M), eigvals_only=True)[-1]
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
    w_ref = np.sqrt(eigh(dense_array(md.K), dense_array(md.M), eigvals_only=True)[-1])
    assert 0.9 * w_ref < w <= w_ref * (1 + 1e-9)


@pytest.mark.parametrize("jacobi", [True, False], ids=["Jacobi", "symmetric-part factorization"])
def test_iterative_schur_solve_of_the_two_n_system_meets_its_tolerance(jacobi):
    """The 2n x 2n midpoint path's iterative solve (`_Iterative`: the project's BiCGSTAB, with
    the diagonal or a factorization of the symmetric part as preconditioner) against a direct
    solve of a nonsymmetric sparse matrix (skew part as a gyroscopic block would give)."""
    from scipy.sparse.linalg import spsolve
    from flexmbs.integrators.midpoint import _Iterative
    n = 300
    A = sparse.random(n, n, density=0.02, random_state=1)
    S = sparse.csr_array(10.0 * sparse.eye(n) + 1.5 * A - 0.5 * A.T)
    b = np.random.default_rng(0).standard_normal(n)
    ref = spsolve(sparse.csc_matrix(S), b)
    it = _Iterative(S, 1e-13, jacobi=jacobi)
    x = it.solve(b)
    assert np.linalg.norm(S @ x - b) <= 1e-12 * np.linalg.norm(b)
    assert np.abs(x - ref).max() <= 1e-11 * np.abs(ref).max()
    assert it.iterations > 0
