"""Small models assembled dense (issue 22, a small flexible body without scipy).

`flexmbs.Model` chooses the format once (``dense_below`` free DOFs) and hands it to its
`flexmbs.assembly.Assembler`: the same block sums, written into an ndarray instead of a CSR array.
The same model assembled both ways (``dense_below`` huge or 0) must give the same matrices, the
dense ones exactly (the same floating-point numbers), the geometric stiffnesses to round-off
(their pre-stress is solved by numpy's Cholesky against scipy's sparse LU), and the same run.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.assembly.assembler import csr_parts, dense_array, is_sparse, restrict, triplet_matrix
from flexmbs.integrators.exact import balance, expm
from flexmbs.modal import generalized_eigh, natural_frequencies
from flexmbs.motion import ConstantRotation
from flexmbs.signals import Harmonic

STEEL = fm.Material(2e11, 7800.0, nu=0.3)


def both(mesh, element, **kwargs):
    """(dense, sparse): one model assembled both ways."""
    dense = fm.Model(mesh, element, dense_below=10**9, **kwargs)
    sparse = fm.Model(mesh, element, dense_below=0, **kwargs)
    assert dense.dense and not sparse.dense
    return dense, sparse


MODELS = {
    "bar, spinning, loaded, damped": (lambda: fm.generate.line(10, 1.0), lambda: fm.Bar2(STEEL, 2e-5),
                                      dict(motion=ConstantRotation(15.0), fixed=[("start", "all")],
                                           damping=(1.0, 1e-5), loads=[fm.NodalLoad("end", "u", 1.0)])),
    "beam with a tip mass": (lambda: fm.generate.line(6, 1.0), lambda: fm.BeamEB2D(STEEL, 1e-4, 1e-9),
                             dict(motion=ConstantRotation(5.0), fixed=[("start", "all")],
                                  point_masses=[("end", 2.0)])),
    "hexahedra (node-pattern blocks)": (lambda: fm.generate.box(2, 1, 1), lambda: fm.elements.Hex8(STEEL),
                                        dict(motion=ConstantRotation(5.0), fixed=[("xmin", "all")])),
}


def relative(a, b) -> float:
    a, b = dense_array(a), dense_array(b)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


@pytest.mark.parametrize("name", list(MODELS))
def test_dense_and_sparse_assembly_give_the_same_matrices(name):
    mesh, element, kwargs = MODELS[name]
    d, s = both(mesh(), element(), **kwargs)
    assert not is_sparse(d.K) and is_sparse(s.K)
    for a, b in [(d.K, s.K), (d.M, s.M), (d.C_damp, s.C_damp), (d.node_translations(), s.node_translations()),
                 *[(d.inv.S[k], s.inv.S[k]) for k in s.inv.S],
                 *[(Ga, Gb) for Ga, Gb in zip(d.inv.G, s.inv.G) if Gb is not None]]:
        assert isinstance(a, np.ndarray)
        assert np.array_equal(a, dense_array(b))                 # the same sums, written elsewhere
    assert [G is None for G in d.inv.G] == [G is None for G in s.inv.G]
    assert d.stiffening == s.stiffening
    if d.stiffening:                                             # numpy Cholesky against sparse LU
        assert isinstance(d.geometric_stiffness(0.0), np.ndarray)
        assert relative(d.geometric_stiffness(0.0), s.geometric_stiffness(0.0)) < 1e-12
        assert relative(d.static_displacements, s.static_displacements) < 1e-12
        assert d.prestress_info == "dense Cholesky (numpy)"


def test_a_run_of_the_dense_model_equals_the_sparse_models_run():
    """The rotating bar (README's job, Rayleigh damping) on the exact integrator: every output equal
    to 1e-12 of its largest value."""
    mesh, element, kwargs = MODELS["bar, spinning, loaded, damped"]
    kwargs = {**kwargs, "loads": [fm.NodalLoad("end", "u", 1.0, Harmonic(200.0))]}
    d, s = both(mesh(), element(), **kwargs)
    rd, rs = (fm.run(m, method="exact", t_end=0.01, dt_out=1e-4) for m in (d, s))
    assert rd.status == rs.status == "finished"
    for a, b in [(rd.delta, rs.delta), (rd.delta_dot, rs.delta_dot), (rd.displacement, rs.displacement)]:
        assert np.abs(a - b).max() <= 1e-12 * np.abs(b).max()


def test_natural_frequencies_of_the_dense_model_equal_the_sparse_models():
    mesh, element, kwargs = MODELS["bar, spinning, loaded, damped"]
    d, s = both(mesh(), element(), **kwargs)
    wd, phid = natural_frequencies(d, n_modes=3)
    ws, phis = natural_frequencies(s, n_modes=3)
    assert np.allclose(wd, ws, rtol=1e-12, atol=0)
    assert np.allclose(np.abs(phid), np.abs(phis), rtol=1e-8, atol=1e-10 * np.abs(phis).max())


def test_generalized_eigh_solves_k_phi_equal_w2_m_phi():
    """Two masses m1, m2 on springs k1 (to ground), k2 (between): det(K - w2 M) = 0 in closed form,
    m1 m2 w2^2 - (m1 k2 + m2 (k1 + k2)) w2 + k1 k2 = 0."""
    m1, m2, k1, k2 = 2.0, 1.0, 300.0, 100.0
    K = np.array([[k1 + k2, -k2], [-k2, k2]])
    M = np.diag([m1, m2])
    b, c = m1 * k2 + m2 * (k1 + k2), k1 * k2
    closed = np.sort(np.roots([m1 * m2, -b, c]))
    w2, Phi = generalized_eigh(K, M)
    assert np.allclose(w2, closed, rtol=1e-14)
    assert np.allclose(Phi.T @ M @ Phi, np.eye(2), atol=1e-14)
    assert np.allclose(K @ Phi, M @ Phi * w2, atol=1e-12 * k1)


def test_expm_of_a_stiff_damped_oscillator_equals_the_closed_form():
    """x'' + c x' + k x = 0 over h: expm([[0, 1], [-k, -c]] h) from the eigenvalues
    lambda = (-c +- sqrt(c^2 - 4 k)) / 2, exp(A h) = V diag(exp(lambda h)) V^-1, for modes up to
    k = 1e8 with c = 1e-3 k (the norm of A h is 1e3 times its spectral radius: balancing)."""
    ks = np.array([1e3, 1e6, 1e8])
    n, h = len(ks), 1e-4
    A = np.block([[np.zeros((n, n)), np.eye(n)], [-np.diag(ks), -1e-3 * np.diag(ks)]])
    E = expm(A * h)
    for i, k in enumerate(ks):
        lam = np.roots([1.0, 1e-3 * k, k]).astype(complex)
        V = np.array([[1.0, 1.0], lam])
        ref = (V * np.exp(lam * h)) @ np.linalg.inv(V)
        block = E[np.ix_([i, n + i], [i, n + i])]
        assert np.abs(block - ref.real).max() <= 1e-13 * np.abs(ref).max()
    assert np.allclose(expm(np.zeros((3, 3))), np.eye(3)) and expm(np.zeros((0, 0))).shape == (0, 0)
    B, d = balance(A * h)
    assert np.array_equal(np.log2(d), np.round(np.log2(d)))          # powers of two: exact scalings
    assert np.allclose(B, (A * h) * d[None, :] / d[:, None], rtol=0, atol=0)
    assert np.abs(B).sum(axis=0).max() < 1e-2 * np.abs(A * h).sum(axis=0).max()


def test_matrix_helpers_keep_the_format():
    A = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0], [4.0, 0.0, 5.0]])
    assert np.array_equal(restrict(A, np.array([0, 2])), [[1.0, 2.0], [4.0, 5.0]])
    indptr, indices, data = csr_parts(A)
    assert indptr.tolist() == [0, 2, 3, 5] and indices.tolist() == [0, 2, 1, 0, 2]
    assert data.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    T = triplet_matrix([1.0, 2.0, 3.0], [0, 0, 2], [1, 1, 0], (3, 2), dense=True)
    assert np.array_equal(T, [[0.0, 3.0], [0.0, 0.0], [3.0, 0.0]])            # duplicates summed
    Ts = triplet_matrix([1.0, 2.0, 3.0], [0, 0, 2], [1, 1, 0], (3, 2), dense=False)
    assert is_sparse(Ts) and np.array_equal(Ts.toarray(), T)
    assert all(np.array_equal(x, y) for x, y in zip(csr_parts(Ts), csr_parts(T)))
