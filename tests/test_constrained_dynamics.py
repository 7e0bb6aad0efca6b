"""Acceleration solvers (augmented formulation, Udwadia-Kalaba), the index-1 form and its
stabilisation (none, Baumgarte, coordinate partitioning).

Two kinds of system:
- `PointChain`, written here: a planar chain of point masses in Cartesian coordinates with
  distance constraints |r_i - r_{i-1}|^2 - L_i^2 = 0 (optionally a redundant copy of the first
  constraint, or an extra massless coordinate tied to x_1, which makes M singular).  Small
  enough to check against closed forms.
- the triple spherical pendulum of cases/triple_pendulum.py (Pappalardo and Guida 2018) on
  flexmbs.System, in Euler parameters and in natural coordinates.
"""
from __future__ import annotations

import numpy as np
import pytest

from flexmbs.formulations import augmented, udwadia_kalaba
from flexmbs.formulations.index1 import Index1
from flexmbs.formulations.stabilization import (RedundantConstraintError, full_pivot_lu,
                                                CoordinatePartitioning)
from flexmbs.integrators import simulate

G = 9.81


class PointChain:
    """Planar chain of point masses m_i hanging from the origin by rods of lengths L_i.

    q = (x_1, y_1, ..., x_N, y_N[, s]); gravity -g along y.  Constraints
    C_i = |d_i|^2 - L_i^2, d_i = r_i - r_{i-1} (r_0 = 0), so C_q q'' = gamma_i = -2 |d_i'|^2.
    ``redundant=True`` appends 2 C_1 (a dependent row); ``massless=True`` appends a coordinate
    s without mass and the constraint s - x_1 = 0 (M singular, positive definite on the null
    space of C_q).  Implements the System methods the solvers use.
    """

    def __init__(self, masses, lengths, redundant=False, massless=False):
        self.m = np.asarray(masses, float)
        self.L = np.asarray(lengths, float)
        self.N = self.m.size
        self.redundant, self.massless = redundant, massless
        self.n_q = 2 * self.N + int(massless)
        self.n_c = self.N + int(redundant) + int(massless)

    def _d(self, q):
        r = q[:2 * self.N].reshape(self.N, 2)
        return r - np.vstack([np.zeros(2), r[:-1]])

    def mass_matrix(self, q):
        M = np.zeros((self.n_q, self.n_q))
        M[np.arange(2 * self.N), np.arange(2 * self.N)] = np.repeat(self.m, 2)
        return M

    def forces(self, t, q, v):
        Q = np.zeros(self.n_q)
        Q[1:2 * self.N:2] = -self.m * G
        return Q

    def residual(self, t, q):
        d = self._d(q)
        C = list(np.sum(d * d, axis=1) - self.L ** 2)
        if self.redundant:
            C.append(2 * C[0])
        if self.massless:
            C.append(q[-1] - q[0])
        return np.array(C)

    def jacobian(self, t, q):
        d = self._d(q)
        J = np.zeros((self.n_c, self.n_q))
        for i in range(self.N):
            J[i, 2 * i:2 * i + 2] = 2 * d[i]
            if i:
                J[i, 2 * i - 2:2 * i] = -2 * d[i]
        k = self.N
        if self.redundant:
            J[k] = 2 * J[0]
            k += 1
        if self.massless:
            J[k, -1], J[k, 0] = 1.0, -1.0
        return J

    def time_derivative(self, t, q):
        return np.zeros(self.n_c)

    def gamma(self, t, q, v):
        dv = self._d(v)
        g = list(-2 * np.sum(dv * dv, axis=1))
        if self.redundant:
            g.append(2 * g[0])
        if self.massless:
            g.append(0.0)
        return np.array(g)

    def energy(self, q, v):
        vv = v[:2 * self.N].reshape(self.N, 2)
        y = q[1:2 * self.N:2]
        return 0.5 * np.sum(self.m * np.sum(vv * vv, axis=1)), float(np.sum(self.m * G * y))

    def initial_coordinates(self):
        r = np.cumsum(np.column_stack([self.L, np.zeros(self.N)]), axis=0)
        q = r.ravel()
        return np.append(q, q[0]) if self.massless else q

    def assemble(self, t, q, v=None, tol=1e-12, fixed=()):
        return np.array(q, float), np.zeros(self.n_q) if v is None else np.array(v, float)

    def mobility(self, t, q):
        J = self.jacobian(t, q)
        rank = np.linalg.matrix_rank(J)
        return {"n_q": self.n_q, "n_c": self.n_c, "rank": rank, "dof": self.n_q - rank,
                "redundant": ["C1 copy"] * (self.n_c - rank)}


def chain_state(chain, angles, rates):
    """Consistent (q, v) of a chain from absolute link angles (from the downward vertical) and rates."""
    angles, rates = np.asarray(angles, float), np.asarray(rates, float)
    e = np.column_stack([np.sin(angles), -np.cos(angles)])
    de = np.column_stack([np.cos(angles), np.sin(angles)]) * rates[:, None]
    q = np.cumsum(chain.L[:, None] * e, axis=0).ravel()
    v = np.cumsum(chain.L[:, None] * de, axis=0).ravel()
    if chain.massless:
        q, v = np.append(q, q[0]), np.append(v, v[0])
    return q, v


# -- the solvers -------------------------------------------------------------------------------
@pytest.mark.parametrize("solve", [augmented.accelerations, udwadia_kalaba.accelerations], ids=["AF", "UKE"])
def test_pendulum_released_from_rest_closed_form(solve):
    """Simple pendulum at rest at angle th: tangential acceleration g sin(th), rod tension m g cos(th)."""
    m, L, th = 2.0, 1.5, 0.7
    chain = PointChain([m], [L])
    q, v = chain_state(chain, [th], [0.0])
    qdd, lam = solve(chain, 0.0, q, v)
    np.testing.assert_allclose(qdd, -G * np.sin(th) * np.array([np.cos(th), np.sin(th)]), atol=1e-13)
    # the constraint force -C_q^T lam = -2 r lam is the rod's pull -T e_r, T = m g cos(th)
    np.testing.assert_allclose(2 * L * lam[0], m * G * np.cos(th), rtol=1e-13)


def test_spinning_pendulum_closed_form():
    """Pendulum hanging straight down spinning at w: centripetal acceleration L w^2, T = m (g + L w^2)."""
    m, L, w = 1.3, 0.8, 3.0
    chain = PointChain([m], [L])
    q, v = chain_state(chain, [0.0], [w])
    for solve in (augmented.accelerations, udwadia_kalaba.accelerations):
        qdd, lam = solve(chain, 0.0, q, v)
        np.testing.assert_allclose(qdd, [0.0, L * w * w], atol=1e-12)
        np.testing.assert_allclose(2 * L * lam[0], m * (G + L * w * w), rtol=1e-13)


def random_states(chain, rng, n=5):
    for _ in range(n):
        yield chain_state(chain, rng.uniform(-np.pi, np.pi, chain.N), rng.normal(0, 2, chain.N))


def test_af_and_uke_agree_to_round_off():
    """Same accelerations and multipliers from the two solvers (full-rank constraints)."""
    chain = PointChain([1.0, 2.0, 0.5], [1.0, 0.7, 1.2])
    rng = np.random.default_rng(1)
    for q, v in random_states(chain, rng):
        a1, l1 = augmented.accelerations(chain, 0.0, q, v)
        a2, l2 = udwadia_kalaba.accelerations(chain, 0.0, q, v)
        assert np.abs(a1 - a2).max() <= 1e-12 * np.abs(a1).max()
        assert np.abs(l1 - l2).max() <= 1e-12 * np.abs(l1).max()
        # the accelerations satisfy both equations
        np.testing.assert_allclose(chain.jacobian(0, q) @ a1, chain.gamma(0, q, v), atol=1e-11)


def test_uke_weight_does_not_change_the_result():
    chain = PointChain([1.0, 2.0], [1.0, 0.7])
    q, v = chain_state(chain, [0.3, -1.2], [0.5, 2.0])
    a1, l1 = udwadia_kalaba.accelerations(chain, 0.0, q, v, weight=1.0)
    a2, l2 = udwadia_kalaba.accelerations(chain, 0.0, q, v, weight=37.0)
    np.testing.assert_allclose(a1, a2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(l1, l2, rtol=1e-11)


def test_singular_mass_matrix():
    """A massless coordinate tied by a constraint: M singular, both solvers give the chain's motion."""
    plain = PointChain([1.0, 2.0], [1.0, 0.7])
    tied = PointChain([1.0, 2.0], [1.0, 0.7], massless=True)
    assert np.linalg.matrix_rank(tied.mass_matrix(None)) == tied.n_q - 1
    q, v = chain_state(plain, [0.3, -1.2], [0.5, 2.0])
    qt, vt = chain_state(tied, [0.3, -1.2], [0.5, 2.0])
    a_ref, l_ref = augmented.accelerations(plain, 0.0, q, v)
    for solve in (augmented.accelerations, udwadia_kalaba.accelerations):
        a, lam = solve(tied, 0.0, qt, vt)
        np.testing.assert_allclose(a[:4], a_ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(a[4], a[0], atol=1e-12)
        np.testing.assert_allclose(lam[:2], l_ref, rtol=1e-12)
        assert abs(lam[2]) < 1e-12               # the massless coordinate needs no force


def test_redundant_constraints_af_refuses_uke_solves():
    """A dependent constraint row: AF raises, UKE gives the accelerations of the plain chain and the
    least-norm multipliers (lam_1, lam_copy) = lam (1, 2) / 5 of lam_1 + 2 lam_copy = lam."""
    plain = PointChain([1.0, 2.0], [1.0, 0.7])
    red = PointChain([1.0, 2.0], [1.0, 0.7], redundant=True)
    q, v = chain_state(plain, [0.3, -1.2], [0.5, 2.0])
    with pytest.raises(RedundantConstraintError, match="udwadia-kalaba"):
        augmented.accelerations(red, 0.0, q, v)
    a_ref, l_ref = augmented.accelerations(plain, 0.0, q, v)
    a, lam = udwadia_kalaba.accelerations(red, 0.0, q, v)
    np.testing.assert_allclose(a, a_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lam, [l_ref[0] / 5, l_ref[1], 2 * l_ref[0] / 5], rtol=1e-10)
    assert udwadia_kalaba.kinetic_rank(red.mass_matrix(q), red.jacobian(0, q)) == 2


def test_index1_refuses_augmented_with_redundant_constraints():
    red = PointChain([1.0, 2.0], [1.0, 0.7], redundant=True)
    with pytest.raises(RedundantConstraintError, match="C1 copy"):
        Index1(red, solver="augmented").state0()
    x0 = Index1(red, solver="udwadia-kalaba").state0()
    assert x0.shape == (8,)


def test_full_pivot_lu_rank_and_pivots():
    A = np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 1.0, 3.0]])     # rank 2
    rows, cols, r, piv = full_pivot_lu(A)
    assert r == 2
    assert set(rows[:r]) in ({0, 2}, {1, 2})
    assert piv[0] == 4.0                                                   # largest entry first
    assert np.linalg.matrix_rank(A[np.ix_(rows[:r], cols[:r])]) == 2


# -- integration of the stand-in chain ---------------------------------------------------------
def test_energy_conserved_chain_dop853():
    chain = PointChain([1.0, 2.0, 0.5], [1.0, 0.7, 1.2])
    q0, v0 = chain_state(chain, [1.0, 2.0, -0.5], [0.0, 0.0, 0.0])
    form = Index1(chain, solver="udwadia-kalaba")
    sol = simulate(form, (0.0, 2.0), np.concatenate([q0, v0]), method="DOP853", rtol=1e-11, atol=1e-12)
    assert sol.success
    E = np.array([form.energy(x) for x in sol.x])
    assert np.abs(E - E[0]).max() < 1e-7 * np.abs(E).max()
