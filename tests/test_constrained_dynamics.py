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

    def initial_state(self, t, q=None, v=None, assemble=False):
        """(q, v) as given (default: the chain hanging horizontally, at rest): the tests build consistent states."""
        q = self.initial_coordinates() if q is None else np.array(q, float)
        return q, np.zeros(self.n_q) if v is None else np.array(v, float)

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


def test_the_one_eigenvalue_cut_off_of_k_plus():
    """`kept_eigenvalues` (w > rtol max(w, 0), the cut-off `pinv_symmetric_solve`, `kinetic_rank` and
    `udwadia_kalaba_history` share) on one spectrum and a stack: at rtol = 1e-10 of the largest 2, an
    eigenvalue 1e-10 is dropped, 3e-10 kept; a spectrum with no positive eigenvalue keeps none.  K^+ b then
    equals K's pseudo-inverse on the kept eigenvectors V_k diag(1 / w_k) V_k^T b of the K built from them, to the
    round-off of the kept 3e-10 beside the dropped 1e-10, eps |K| / 2e-10 ~ 2e-6 of the largest entry."""
    w = np.array([-1e-14, 1e-10, 3e-10, 2.0])
    assert udwadia_kalaba.kept_eigenvalues(w).tolist() == [False, False, True, True]
    stack = np.stack([w, [-3.0, -2.0, -1.0, 0.0]])
    assert udwadia_kalaba.kept_eigenvalues(stack).tolist() == [[False, False, True, True], [False] * 4]
    V = np.linalg.qr(np.random.default_rng(4).standard_normal((4, 4)))[0]
    K, b = V @ np.diag(w) @ V.T, np.arange(1.0, 5.0)
    ref = V[:, 2:] @ ((V[:, 2:].T @ b) / w[2:])
    assert np.abs(udwadia_kalaba.pinv_symmetric_solve(K, b) - ref).max() <= 1e-5 * np.abs(ref).max()


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


# -- every integrator applies the stabilisation --------------------------------------------------
@pytest.mark.parametrize("method", ["RK45", "DOP853", "AB4", "midpoint", "Radau", "BDF", "generalized-alpha"])
def test_coordinate_partitioning_after_every_step_of_every_integrator(method):
    """Violations at round-off at every step (AB4's RK4 start-up steps included) for every method."""
    chain = PointChain([1.0, 2.0, 0.5], [1.0, 0.7, 1.2])
    q0, v0 = chain_state(chain, [1.0, 2.0, -0.5], [0.0, 0.0, 0.0])
    form = Index1(chain, solver="augmented", stabilization="coordinate-partitioning")
    kw = dict(h=2e-3) if method in ("AB4", "midpoint", "generalized-alpha") else dict(rtol=1e-6, atol=1e-8)
    sol = simulate(form, (0.0, 0.3), np.concatenate([q0, v0]), method=method, **kw)
    assert sol.success, sol.message
    V = np.array([form.violations(t, x) for t, x in zip(sol.t, sol.x)])
    assert V[:, 0].max() < 1e-13 and V[:, 1].max() < 1e-12
    free = Index1(chain, solver="augmented")
    sol_free = simulate(free, (0.0, 0.3), np.concatenate([q0, v0]), method=method, **kw)
    drift = max(free.violations(t, x)[1] for t, x in zip(sol_free.t, sol_free.x))
    assert drift > 100 * V[:, 1].max()        # without it the violations drift (test is not vacuous)


def test_ab4_history_uses_corrected_states():
    """AB4's stored derivatives are those at the corrected states (one evaluation per AB4 step)."""
    from flexmbs.integrators import AdamsBashforth4
    chain = PointChain([1.0, 2.0], [1.0, 0.7])
    q0, v0 = chain_state(chain, [1.0, 2.0], [0.0, 0.0])
    form = Index1(chain, solver="udwadia-kalaba", stabilization="coordinate-partitioning")
    ab4 = AdamsBashforth4(form, 0.0, np.concatenate([q0, v0]), 1.0, h=5e-3)
    for _ in range(6):
        ab4.step()
        np.testing.assert_array_equal(ab4._f_hist[0], form.rhs(ab4.t, ab4.x))
    n_rhs = form.n_rhs
    ab4.step()
    assert form.n_rhs - n_rhs == 1                # one evaluation per AB4 step, after the correction


# -- the triple spherical pendulum on flexmbs.System ------------------------------------------------
CASES = __import__("pathlib").Path(__file__).resolve().parents[1] / "cases"
__import__("sys").path.insert(0, str(CASES))
import triple_pendulum as tp  # noqa: E402


def consistent_random_state(system, rng):
    """A state on the constraint manifold away from the initial one: perturbed, then assembled."""
    q = system.initial_coordinates() + 0.2 * rng.standard_normal(system.n_q)
    return system.assemble(0.0, q, rng.standard_normal(system.n_q), tol=1e-13)


@pytest.mark.parametrize("coordinates", ["natural", "euler-parameters"])
def test_triple_pendulum_af_and_uke_agree_to_round_off(coordinates):
    system = tp.build(coordinates)
    rng = np.random.default_rng(7)
    for _ in range(3):
        q, v = consistent_random_state(system, rng)
        a1, l1 = augmented.accelerations(system, 0.0, q, v)
        a2, l2 = udwadia_kalaba.accelerations(system, 0.0, q, v)
        assert np.abs(a1 - a2).max() <= 1e-11 * np.abs(a1).max()
        assert np.abs(l1 - l2).max() <= 1e-11 * np.abs(l1).max()
        np.testing.assert_allclose(system.jacobian(0.0, q) @ a1, system.gamma(0.0, q, v),
                                   atol=1e-10 * np.abs(a1).max())


def test_triple_pendulum_released_horizontal_initial_accelerations():
    """At release from rest every point accelerates downward only; both coordinate systems agree."""
    tips = []
    for coordinates in ("natural", "euler-parameters"):
        system = tp.build(coordinates)
        form = Index1(system)
        q, v = form.physical(0.0, form.state0())
        a, _ = form.accelerations(0.0, q, v)
        body = system.bodies[2]
        sl = system.slice(body)
        tips.append(body.point_jacobian(q[sl], tp.TIP) @ a[sl])
    np.testing.assert_allclose(tips[0], tips[1], atol=1e-12)
    np.testing.assert_allclose(tips[0][:2], 0.0, atol=1e-12)
    assert tips[0][2] < -9.81                      # the whipping tip falls faster than g


def test_triple_pendulum_both_coordinate_systems_same_tip_motion_and_energy():
    """NACF and RPCF-EP, DOP853 at rtol 1e-10: same tip motion; energy conserved (E0 = 0: bars at z = 0)."""
    runs = {c: tp.simulate_case(c, "udwadia-kalaba", "none", "DOP853", 1e-3, 1e-10, 0.5, 0.05)
            for c in ("natural", "euler-parameters")}
    (rn, sn), (re, se) = runs["natural"], runs["euler-parameters"]
    assert np.abs(rn["tip"] - re["tip"]).max() < 1e-7
    assert np.abs(rn["tip_velocity"] - re["tip_velocity"]).max() < 1e-6
    assert abs(rn["energy"][0]) < 1e-12
    for s in (sn, se):
        assert s["max_energy_error"] < 1e-7       # J; kinetic energy at 0.5 s about 60 J
    assert rn["tip"][-1, 2] < -0.5                # it has fallen


@pytest.mark.parametrize("coordinates", ["natural", "euler-parameters"])
def test_triple_pendulum_coordinate_partitioning_keeps_violations_at_round_off_with_ab4(coordinates):
    r, s = tp.simulate_case(coordinates, "augmented", "coordinate-partitioning", "AB4", 2e-3, 1e-8, 0.6, 0.02)
    assert s["max_constraint_position"] < 1e-13 and s["max_constraint_velocity"] < 1e-12
    r0, s0 = tp.simulate_case(coordinates, "augmented", "none", "AB4", 2e-3, 1e-8, 0.6, 0.02)
    assert s0["max_constraint_position"] > 1e3 * s["max_constraint_position"]
    v = r0["constraint_velocity"]
    assert v[-1] > 100 * v[1] > 0                 # drift grows without stabilisation
    np.testing.assert_allclose(r["tip"], r0["tip"], atol=1e-5)


def test_triple_pendulum_baumgarte_reduces_drift():
    """AB4, h = 4 ms, 4 s.  Without stabilisation the position violation jumps at each fast swing of
    the tip and stays; with Baumgarte terms (alpha = beta = 10/s) it decays between the swings
    (measured: about 1.2e-6 against 1e-7 on 2.5 s - 4 s)."""
    mean = {}
    for stab in ("none", "baumgarte"):
        r, s = tp.simulate_case("natural", "augmented", stab, "AB4", 4e-3, 1e-8, 4.0, 0.1)
        late = r["t"] >= 2.5
        mean[stab] = r["constraint_position"][late].mean()
    assert mean["baumgarte"] < 0.3 * mean["none"]


def hinged_bar(two_bearings: bool):
    """A bar (Euler parameters) hinged to the ground about Y: by one revolute joint, or by two
    coaxial revolute joints 0.5 m apart on the axis (10 equations of rank 5: 5 redundant)."""
    from flexmbs.bodies import RigidBodyEP
    from flexmbs.constraints import Revolute
    from flexmbs.system import System
    bar = RigidBodyEP("bar", 2.0, (0.01, 0.7, 0.7), position=(1.0, 0.0, 0.0))
    joints = [Revolute(None, bar, at=(0.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0), name="bearing 1")]
    if two_bearings:
        joints.append(Revolute(None, bar, at=(0.0, 0.5, 0.0), axis=(0.0, 1.0, 0.0), name="bearing 2"))
    return System([bar], joints, gravity=(0.0, 0.0, -9.81))


def test_redundant_hinge_detected_and_solved_by_uke():
    one, two = hinged_bar(False), hinged_bar(True)
    mob = two.mobility(0.0, two.initial_coordinates())
    assert mob["dof"] == 1 and len(mob["redundant_rows"]) == 5
    for stab in ("none", "coordinate-partitioning"):       # the AF solve itself needs full rank
        with pytest.raises(RedundantConstraintError, match="bearing 2"):
            Index1(two, solver="augmented", stabilization=stab).state0()
    x0 = Index1(two, solver="udwadia-kalaba").state0()
    q, v = x0[:7], x0[7:]
    with pytest.raises(RedundantConstraintError):
        augmented.accelerations(two, 0.0, q, v)
    a1, _ = augmented.accelerations(one, 0.0, q, v)
    a2, lam = udwadia_kalaba.accelerations(two, 0.0, q, v)
    np.testing.assert_allclose(a2, a1, atol=1e-12)
    # released horizontal: angular acceleration m g d / J_hinge, d = 1 m, J_hinge = 0.7 + 2 * 1^2
    omega_dot = 2.0 * 9.81 * 1.0 / (0.7 + 2.0)
    np.testing.assert_allclose(a2[2], -omega_dot * 1.0, rtol=1e-12)       # centroid falls: z'' = -d w'
    forms = {"one": Index1(one, solver="udwadia-kalaba", stabilization="coordinate-partitioning"),
             "two": Index1(two, solver="udwadia-kalaba", stabilization="coordinate-partitioning")}
    sols = {k: simulate(f, (0.0, 0.5), x0, method="AB4", h=5e-3, t_eval=np.linspace(0, 0.5, 6))
            for k, f in forms.items()}
    np.testing.assert_allclose(sols["two"].x, sols["one"].x, atol=1e-10)
    V = np.array([forms["two"].violations(t, x) for t, x in zip(sols["two"].t, sols["two"].x)])
    assert V.max() < 1e-12
    assert forms["two"].stabilization.partition.redundant.size == 5


def test_triple_pendulum_cli_writes_the_arrays_and_keys_of_issue_12(tmp_path):
    assert tp.main(["--coordinates", "euler-parameters", "--solver", "augmented", "--stabilization", "baumgarte",
                    "--integrator", "RK45", "--rtol", "1e-6", "--t-end", "0.05", "--dt-out", "0.01",
                    "--out", str(tmp_path), "--no-plots"]) == 0
    data = np.load(tmp_path / "results.npz")
    n_t = 6
    assert data["t"].shape == (n_t,)
    assert data["tip"].shape == data["tip_velocity"].shape == (n_t, 3)
    for key in ("energy", "constraint_position", "constraint_velocity"):
        assert data[key].shape == (n_t,)
    np.testing.assert_allclose(data["tip"][0], [8.0, 4.0, 0.0], atol=1e-12)
    summary = __import__("json").loads((tmp_path / "summary.json").read_text())
    for key in ("max_constraint_position", "max_constraint_velocity", "max_energy_error", "solve_s"):
        assert np.isfinite(summary[key])
    res = __import__("flexmbs").load_results(tmp_path)          # the run, streamed by flexmbs.run
    assert res.status == "finished" and list(res.bodies) == ["bar1", "bar2", "bar3"]
    assert (res.metadata["formulation"], res.metadata["method"], res.metadata["stabilization"]) == (
        "lagrange", "RK45", "baumgarte")
    np.testing.assert_array_equal(res.energies["total"], data["energy"])
    assert res.multipliers.shape == (n_t, 3 * 3 + 3)            # 3 spherical joints, 3 Euler-parameter norms
    assert summary["n_steps"] == res.stats["n_steps"]


def test_triple_pendulum_table_mode(tmp_path):
    assert tp.main(["--table", "--t-end", "0.02", "--dt-out", "0.01", "--out", str(tmp_path), "--no-plots"]) == 0
    for name in ("table2.csv", "table2.md", "table3.csv", "table3.md"):
        assert (tmp_path / name).is_file()
    rows = (tmp_path / "table2.csv").read_text().splitlines()
    assert len(rows) == 5 and {r.split(",")[0] for r in rows[1:]} == {"NACF", "RPCF-EP"}
    assert (tmp_path / "natural-udwadia-kalaba" / "results.npz").is_file()


def test_coordinate_partitioning_newton_after_a_large_violation():
    """A state 1e-2 off the manifold: Newton iterations on the dependent coordinates to |C| <= 1e-9,
    independent coordinates and velocities untouched, velocity violation at round-off."""
    system = tp.build("natural")
    rng = np.random.default_rng(3)
    q, v = consistent_random_state(system, rng)
    q_bad = q + 1e-2 * rng.standard_normal(q.size)
    stab = CoordinatePartitioning(tol=1e-9)
    q1, v1 = stab.correct(system, 0.0, q_bad, v)
    p = stab.partition
    assert stab.n_newton >= 1
    assert np.abs(system.residual(0.0, q1)).max() <= 1e-9
    np.testing.assert_array_equal(q1[p.independent], q_bad[p.independent])
    np.testing.assert_array_equal(v1[p.independent], v[p.independent])
    assert np.abs(system.jacobian(0.0, q1) @ v1).max() < 1e-12 * (1 + np.abs(v).max())


def test_partition_chosen_again_when_its_pivot_degrades():
    """Single pendulum: hanging down, y is the dependent coordinate; at 1.5 rad its pivot 2 y has
    fallen to cos(1.5) = 0.07 of its value and x is chosen instead."""
    chain = PointChain([1.0], [1.0])
    stab = CoordinatePartitioning()
    q, v = chain_state(chain, [0.0], [1.0])
    stab.correct(chain, 0.0, q, v)
    assert list(stab.partition.dependent) == [1]
    q, v = chain_state(chain, [1.5], [1.0])
    q1, v1 = stab.correct(chain, 0.0, q + 1e-10, v)
    assert list(stab.partition.dependent) == [0] and stab.n_partitions == 2
    assert abs(chain.residual(0.0, q1)[0]) < 1e-15 and abs(chain.jacobian(0.0, q1) @ v1)[0] < 1e-14


def test_bad_input_names_the_argument():
    from flexmbs.formulations.stabilization import Baumgarte
    chain = PointChain([1.0], [1.0])
    with pytest.raises(ValueError, match="`solver`"):
        Index1(chain, solver="lu")
    with pytest.raises(ValueError, match="`stabilization`"):
        Index1(chain, stabilization="projection")
    with pytest.raises(ValueError, match="baumgarte"):
        Index1(chain, alpha=5.0)
    with pytest.raises(ValueError, match="`alpha`"):
        Baumgarte(alpha=-1.0)
    with pytest.raises(ValueError, match=r"`q0` must have shape \(system.n_q,\)"):
        Index1(tp.build("natural")).state0(q0=np.zeros(3))
    with pytest.raises(ValueError, match="`weight`"):
        udwadia_kalaba.solve_udwadia_kalaba(np.eye(2), np.zeros(2), np.ones((1, 2)), np.zeros(1), weight=0.0)


def test_motion_without_mass_or_constraint_is_reported():
    """A massless point on a rod: its tangential motion has neither mass nor a constraint."""
    chain = PointChain([0.0], [1.0])
    q, v = chain_state(chain, [0.3], [0.0])
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        udwadia_kalaba.accelerations(chain, 0.0, q, v)
    with pytest.raises(RedundantConstraintError, match="singular"):
        augmented.accelerations(chain, 0.0, q, v)


@pytest.mark.slow
def test_triple_pendulum_tight_tolerance_ten_seconds():
    """DOP853 at rtol 1e-11 through 10 s of chaotic motion: the two coordinate systems agree to
    1e-9 m at the tip (measured 1.3e-12, 6.9e-12, 3.0e-10 m at 1, 5, 10 s) and conserve energy."""
    runs = {c: tp.simulate_case(c, "udwadia-kalaba", "none", "DOP853", 1e-3, 1e-11, 10.0, 0.5)
            for c in ("natural", "euler-parameters")}
    (rn, sn), (re, se) = runs["natural"], runs["euler-parameters"]
    assert np.abs(rn["tip"] - re["tip"]).max() < 1e-9
    i = np.flatnonzero(np.isclose(rn["t"], 10.0))[0]
    np.testing.assert_allclose(rn["tip"][i], [-4.79831855, -3.76676003, -1.33330228], atol=1e-7)
    assert max(sn["max_energy_error"], se["max_energy_error"]) < 1e-7


def test_failed_correction_stops_the_run_and_keeps_the_results():
    """Newton of the partitioning not allowed to iterate after a coarse step: status 'failed', a
    message saying what to change, the outputs before it kept."""
    chain = PointChain([1.0, 2.0, 0.5], [1.0, 0.7, 1.2])
    q0, v0 = chain_state(chain, [1.0, 2.0, -0.5], [0.0, 0.0, 0.0])
    form = Index1(chain, stabilization=CoordinatePartitioning(max_iter=0))
    sol = simulate(form, (0.0, 2.0), np.concatenate([q0, v0]), method="AB4", h=0.05)
    assert sol.status == "failed"
    assert "coordinate partitioning" in sol.message and "reduce the step" in sol.message
    assert sol.t.size >= 2 and sol.t[-1] < 2.0


def test_output_times_end_at_t_end():
    for t_end, dt in ((0.3, 0.05), (20.0, 0.01), (1.0, 0.3)):
        t = tp.output_times(t_end, dt)
        assert t[0] == 0.0 and t[-1] == t_end and np.all(np.diff(t) > 0)
        assert np.allclose(np.diff(t)[:-1], dt)


def test_triple_pendulum_with_index3_alpha_says_what_ran(tmp_path, capsys):
    """index3-alpha has its own Newton on the index-3 equations: the case refuses a stabilisation
    it would not honour, and the summary names the index-3 solve, not an acceleration solver."""
    with pytest.raises(SystemExit) as exit_:
        tp.main(["--integrator", "index3-alpha", "--t-end", "0.05", "--out", str(tmp_path / "a")])
    assert exit_.value.code == 2 and "use stabilization=none" in capsys.readouterr().err
    summary = tp.run(coordinates="natural", integrator="index3-alpha", stabilization="none", t_end=0.05,
                     dt_out=0.01, plots=False)
    assert summary["solver"] == "index-3 (index3-alpha)" and summary["max_constraint_position"] < 1e-12
