"""Modal reduction: exact projected invariants, Ritz frequencies, static exactness, a run vs the full model."""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.reduction import craig_bampton, reduce
from flexmbs.assembly.assembler import dense_array


def _blade(**kw):
    mesh = fm.generate.box(8, 2, 1, 0.4, 0.05, 0.01, cell="tetra")
    el = fm.Tet4(fm.Material(7.0e10, 2700.0, 0.3))
    tip = fm.NodalLoad("xmax", "w", 1.0, lambda t: np.sin(300.0 * t))
    return fm.Model(mesh, el, fixed=[("xmin", "all")], loads=[tip], **kw)


def test_reduced_invariants_are_projections_of_the_full_ones():
    """m_O,r q = m_O (Phi q) and q^T S_r[a, b] q = (Phi q)^T S[a, b] (Phi q) for any q."""
    md = _blade(motion=fm.motion.ConstantRotation(20.0))
    red = reduce(md, 6)
    q = np.random.default_rng(0).standard_normal(red.n_dofs)
    delta = red.physical(q)
    np.testing.assert_allclose(red.m_O @ q, md.m_O @ delta, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(np.einsum("abn,n->ab", red.d, q), np.einsum("abn,n->ab", md.d, delta),
                               rtol=1e-10, atol=1e-14)
    for key, S in md.inv.S.items():
        assert abs(q @ (red.inv.S[key] @ q) - delta @ (S @ delta)) <= 1e-10 * abs(delta @ (md.M @ delta))
    np.testing.assert_allclose(dense_array(red.M), np.eye(red.n_dofs), atol=1e-10)   # Ritz: M-orthonormal
    assert red.mass == md.mass and len(red._Kg) == len(md._Kg)


def test_free_interface_modes_reproduce_the_lowest_frequencies_and_statics():
    md = _blade()
    red = reduce(md, 5, static_modes=True)
    from scipy.linalg import eigh
    w_full = eigh(dense_array(md.K), dense_array(md.M), eigvals_only=True)[:5]
    # Ritz values bound the exact ones from above and equal them for an exact eigenvector basis
    np.testing.assert_allclose(np.sort(red.omega2)[:5], w_full, rtol=1e-6)
    # the static response to the load column is in the basis: exact
    u_full = np.linalg.solve(dense_array(md.K), md.Q[:, 0])
    u_red = red.physical(np.linalg.solve(dense_array(red.K), red.Q[:, 0]))
    np.testing.assert_allclose(u_red, u_full, rtol=0, atol=1e-7 * np.abs(u_full).max())


def test_craig_bampton_holds_the_interface_exactly():
    """Constraint modes: a unit displacement of each interface DOF, zero at the others."""
    md = _blade()
    B = craig_bampton(md, "xmax", 4)
    tip = np.flatnonzero(np.isin(md.free // 3, md.mesh.nodes("xmax")))
    np.testing.assert_allclose(B[tip, 4:], np.eye(len(tip)), atol=0)
    np.testing.assert_allclose(B[tip, :4], 0.0, atol=0)
    red = reduce(md, 4, method="craig-bampton", interface="xmax", static_modes=False)
    u_full = np.linalg.solve(dense_array(md.K), md.Q[:, 0])     # the tip load acts on interface DOFs
    u_red = red.physical(np.linalg.solve(dense_array(red.K), red.Q[:, 0]))
    np.testing.assert_allclose(u_red, u_full, rtol=0, atol=1e-7 * np.abs(u_full).max())


def test_reduced_model_runs_and_follows_the_full_one_on_a_spinning_frame():
    """fm.run on the reduced model: the tip deflection of a spinning, tip-loaded blade within 1 %
    of the full model's over 20 ms, and stresses recovered from the modal stresses."""
    md = _blade(motion=fm.motion.ConstantRotation(20.0))
    red = reduce(md, 10)
    kw = dict(formulation="lagrange", method="midpoint", h=1e-4, t_end=0.02, dt_out=1e-3, compute_energies=False)
    full = fm.run(md, **kw)
    r = fm.run(red, **kw)
    node = md.mesh.nodes("xmax")[0]
    w_full, w_red = full.displacement[:, node, 2], r.displacement[:, node, 2]
    assert np.abs(w_full).max() > 0
    assert np.abs(w_red - w_full).max() < 1e-2 * np.abs(w_full).max()
    sigma = red.stress(r.delta[-1])
    from flexmbs.analysis import element_data
    vm = element_data(md, red.physical(r.delta[-1]))["stress"]
    np.testing.assert_allclose(sigma[:, 0, 0], vm[:, 0], rtol=1e-8, atol=1e-8 * np.abs(vm).max())
    fast = element_data(red, r.delta[-2:])["stress"]             # from the modal stresses
    slow = element_data(md, red.physical(r.delta[-2:]))["stress"]
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-9 * np.abs(slow).max())


def test_reduce_rejects_bad_input():
    md = _blade()
    with pytest.raises(ValueError, match="method"):
        reduce(md, 3, method="guyan")
    with pytest.raises(ValueError, match="interface"):
        reduce(md, 3, method="craig-bampton")


def test_the_lanczos_modes_are_the_same_at_every_call():
    """Above 600 DOFs the modes come from shift-invert Lanczos (ARPACK), started from the fixed
    `flexmbs.arrays.lanczos_start` vector: two reductions of one model give the same basis bit for
    bit (ARPACK's own random start gave other signs, and other combinations of a square bar's two
    equal-frequency bending modes, at each call and in each process)."""
    mesh = fm.generate.box(24, 3, 3, 0.4, 0.01, 0.01, cell="tetra")                # a square section
    md = fm.Model(mesh, fm.Tet4(fm.Material(7.0e10, 2700.0, 0.3)), fixed=[("xmin", "all")])
    assert md.n_dofs > 600
    first, second = reduce(md, 6, static_modes=False), reduce(md, 6, static_modes=False)
    basis = [np.stack([red.physical(e) for e in np.eye(red.n_dofs)], axis=1) for red in (first, second)]
    np.testing.assert_array_equal(basis[0], basis[1])
