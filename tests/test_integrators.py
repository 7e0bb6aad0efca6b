"""Integrators: declared orders, outputs, invariants, counters, failures and bad input.

The test formulations are small hand-written systems that implement the formulation
contract (`flexmbs.formulations.base.Formulation`) without a finite element model or the
base class:

.. code:: text

    M q'' + C q' + K q = B sin(Omega t)          M, K symmetric positive definite, constant

written Lagrange-style, x = (q, v), M_full = diag(I, M), and Hamilton-style, x = (q, p),
p = M v, M_full = diag(M, I).  Exact solution of the linear system x' = A x + b sin(Omega t):
x(t) = x_p(t) + expm(A t) (x0 - x_p(0)) (expm by the eigenvectors of A) with the periodic particular solution
x_p = P sin(Omega t) + Q cos(Omega t), (A^2 + Omega^2 I) Q = -Omega b, P = A Q / Omega.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from scipy import sparse
from scipy.linalg import solve

from flexmbs.formulations.base import SecondOrderForm
from flexmbs.formulations.terms import ODETerm
from flexmbs.integrators import INTEGRATORS, ImplicitMidpoint, RunSizeWarning, Solution, simulate
from flexmbs.assembly.assembler import dense_array

# -- test formulations ---------------------------------------------------------------------------
M3 = np.array([[2.0, 0.5, 0.0], [0.5, 2.0, 0.5], [0.0, 0.5, 1.0]])
K3 = np.array([[7.0, -3.0, 0.0], [-3.0, 5.0, -2.0], [0.0, -2.0, 2.0]])    # springs 4, 3, 2 in a chain
C3 = 0.05 * M3 + 0.02 * K3
B3 = np.array([0.0, 0.0, 1.0])
OMEGA = 1.3
Q0 = np.array([0.1, -0.2, 0.3])
V0 = np.array([0.0, 0.5, -0.1])


class Oscillator:
    """M q'' + C q' + K(t) q = B load(t); K may switch to K_late at t_switch (a new Jacobian key).

    Implements the formulation contract of `flexmbs.formulations.base.Formulation` directly
    (n_state, rhs, mass_matrix_full, forcing_full, jacobian, jacobian_key, second_order) and
    hands it to the integrators as an `ODETerm` (``term()``).
    """

    second_order = None
    mass_matrix_takes_t = False          # mass_matrix_full() without t (ScaledDescriptor: with t)

    def __init__(self, M=M3, K=K3, C=C3, B=B3, Omega=OMEGA, K_late=None, t_switch=np.inf, t_nan=np.inf):
        self.M0, self.K0, self.C0, self.B, self.Omega = M, K, C, B, Omega
        self.K_late, self.t_switch, self.t_nan = (K if K_late is None else K_late), t_switch, t_nan
        self.n = M.shape[0]
        self.n_state = 2 * self.n
        self.n_rhs = 0

    def jacobian_key(self, t):
        return int(t >= self.t_switch)

    def K(self, t):
        return self.K_late if t >= self.t_switch else self.K0

    def load(self, t):
        return self.B * (np.sin(self.Omega * t) if t <= self.t_nan else np.nan)

    def f(self, t, q, v):
        return self.load(t) - self.K(t) @ q - self.C0 @ v

    def rhs(self, t, x):
        self.n_rhs += 1
        if not hasattr(self, "_M_full_inv"):
            self._M_full_inv = np.linalg.inv(dense_array(self.mass_matrix_full()))
        return self._M_full_inv @ self.forcing_full(t, x)

    def term(self):
        """The ODETerm the integrators see (`flexmbs.formulations.terms`), from the methods above."""
        return ODETerm(name=self.name, n_state=self.n_state, rhs=self.rhs, forcing=self.forcing_full,
                       mass_matrix_full=self.mass_matrix_full, mass_matrix_constant=False,
                       mass_matrix_takes_t=self.mass_matrix_takes_t, jacobian=self.jacobian, jacobian_key=self.jacobian_key, second_order=self.second_order)


class Lagrange(Oscillator):
    """x = (q, v): q' = v, M v' = f(t, q, v)."""

    name = "test-lagrange"
    second_state = "delta_dot"

    def mass_matrix_full(self):
        return sparse.csr_array(sparse.block_diag([np.eye(self.n), self.M0]))

    def state0(self, q0, v0, t0=0.0):
        return np.concatenate([q0, v0])

    def physical(self, t, x):
        return x[..., :self.n], x[..., self.n:]

    def forcing_full(self, t, x):
        q, v = x[:self.n], x[self.n:]
        return np.concatenate([v, self.f(t, q, v)])

    def jacobian(self, t, x=None):
        Z, I = np.zeros((self.n, self.n)), np.eye(self.n)
        return sparse.csr_array(np.block([[Z, I], [-self.K(t), -self.C0]]))

    @property
    def second_order(self):
        return SecondOrderForm(M=sparse.csr_array(self.M0), f=self.f,
                               K=lambda t, q, v: sparse.csr_array(self.K(t)),
                               C=lambda t, q, v: sparse.csr_array(self.C0), key=self.jacobian_key)


class Hamilton(Oscillator):
    """x = (q, p), p = M v: M q' = p, p' = f(t, q, M^{-1} p); canonical for C = 0."""

    name = "test-hamilton"
    second_state = "p"

    def mass_matrix_full(self):
        return sparse.csr_array(sparse.block_diag([self.M0, np.eye(self.n)]))

    def state0(self, q0, v0, t0=0.0):
        return np.concatenate([q0, self.M0 @ v0])

    def physical(self, t, x):
        return x[..., :self.n], np.linalg.solve(self.M0, x[..., self.n:].T).T

    def forcing_full(self, t, x):
        q, p = x[:self.n], x[self.n:]
        return np.concatenate([p, self.f(t, q, np.linalg.solve(self.M0, p))])

    def jacobian(self, t, x=None):
        Z, I = np.zeros((self.n, self.n)), np.eye(self.n)
        return sparse.csr_array(np.block([[Z, I], [-self.K(t), -self.C0 @ np.linalg.inv(self.M0)]]))

    def energy(self, x):
        """H = p^T M^{-1} p / 2 + q^T K q / 2, x of shape (n_t, 2 n)."""
        q, p = x[:, :self.n], x[:, self.n:]
        v = np.linalg.solve(self.M0, p.T).T
        return 0.5 * np.sum(p * v, axis=1) + 0.5 * np.sum(q * (q @ self.K0), axis=1)


def exact(form: Oscillator, q0, v0, t):
    """(q, v) of the linear system with constant K at the times t, shapes (n_t, n) (see docstring)."""
    n, Mi = form.n, np.linalg.inv(form.M0)
    A = np.block([[np.zeros((n, n)), np.eye(n)], [-Mi @ form.K0, -Mi @ form.C0]])
    b = np.concatenate([np.zeros(n), Mi @ form.B])
    W = form.Omega
    Q = -W * solve(A @ A + W**2 * np.eye(2 * n), b)
    P = A @ Q / W
    lam, V = np.linalg.eig(A)                          # expm(A t) = V exp(lam t) V^-1, lam distinct
    c = np.linalg.solve(V, np.concatenate([q0, v0]) - Q)
    t = np.atleast_1d(t)[:, None]
    x = (np.exp(lam * t) * c) @ V.T
    x = x.real + P * np.sin(W * t) + Q * np.cos(W * t)
    return x[:, :n], x[:, n:]


def physical_error(form, sol, i=slice(None)):
    """max |(q, v) - exact| over the outputs i (default: all)."""
    q, v = form.physical(sol.t[i], sol.x[i])
    qe, ve = exact(form, Q0, V0, sol.t[i])
    return max(np.max(np.abs(q - qe)), np.max(np.abs(v - ve)))


def slope(x, y):
    return np.polyfit(np.log(x), np.log(y), 1)[0]


FORMS = {"lagrange": Lagrange, "hamilton": Hamilton}
# "exact" integrates only steady flexmbs models (their linear_system), not these test systems:
# tests/test_exact.py
STEPPING = [m for m in INTEGRATORS if m != "exact"]
FIXED = [m for m in STEPPING if not INTEGRATORS[m].adaptive]
ADAPTIVE = [m for m in STEPPING if INTEGRATORS[m].adaptive]
CASES = [(m, f) for m in STEPPING for f in FORMS
         if INTEGRATORS[m].needs == "first_order" or f == "lagrange"]


# -- 1. declared orders --------------------------------------------------------------------------
T_FIXED = 4.0
N_FIXED = {"AB4": [80, 160, 320, 640], "midpoint": [40, 80, 160, 320],
           "generalized-alpha": [40, 80, 160, 320], "index3-alpha": [40, 80, 160, 320],
           "rattle": [40, 80, 160, 320], "hht": [40, 80, 160, 320], "newmark": [80, 160, 320, 640]}
T_ADAPTIVE = 16.0
TOLS = {"RK45": 10.0 ** -np.arange(5, 10), "DOP853": 10.0 ** -np.arange(6, 13),
        "Radau": 10.0 ** -np.arange(5, 10), "BDF": 10.0 ** -np.arange(6, 11),
        "index3-alpha-adaptive": 10.0 ** -np.arange(4, 8), "radau-dae": 10.0 ** -np.arange(5, 10)}


@pytest.mark.parametrize("method, form_name", [c for c in CASES if c[0] in FIXED])
def test_fixed_step_order(method, form_name):
    """Global error at t_end (a step point) ~ h^order; dense output ~ h^min(order, 4)."""
    form = FORMS[form_name]()
    x0 = form.state0(Q0, V0)
    t_eval = T_FIXED * np.array([1 / 3, 1 / np.sqrt(2), 1.0])         # not step points (but the last)
    hs, err_end, err_dense = [], [], []
    for n in N_FIXED[method]:
        sol = simulate(form, (0.0, T_FIXED), x0, method=method, h=T_FIXED / n, t_eval=t_eval)
        assert sol.success, sol.message
        assert sol.n_steps == n
        hs.append(T_FIXED / n)
        err_end.append(physical_error(form, sol, -1))
        err_dense.append(physical_error(form, sol, slice(0, 2)))
    order, dense_order = INTEGRATORS[method].order, min(INTEGRATORS[method].order, 4)
    observed, observed_dense = slope(hs, err_end), slope(hs, err_dense)
    print(f"{method} ({form_name}): observed order {observed:.2f}, dense {observed_dense:.2f}")
    assert abs(observed - order) < 0.3, f"{method}: observed order {observed:.2f}, declared {order}"
    assert abs(observed_dense - dense_order) < 0.3, f"{method}: dense output order {observed_dense:.2f}"


@pytest.mark.parametrize("method, form_name", [c for c in CASES if c[0] in ADAPTIVE])
def test_adaptive_order(method, form_name):
    """Global error (max over the step points) ~ n_steps^-order over a sweep of tolerances."""
    form = FORMS[form_name]()
    x0 = form.state0(Q0, V0)
    n_steps, errors = [], []
    for tol in TOLS[method]:
        sol = simulate(form, (0.0, T_ADAPTIVE), x0, method=method, rtol=tol, atol=tol)
        assert sol.success, sol.message
        n_steps.append(sol.n_steps)
        errors.append(physical_error(form, sol))
    order = INTEGRATORS[method].order
    observed = -slope(n_steps, errors)
    print(f"{method} ({form_name}): observed order {observed:.2f} (n_steps {n_steps})")
    assert abs(observed - order) < 0.5, f"{method}: observed order {observed:.2f}, declared {order}"


# -- 2. outputs ----------------------------------------------------------------------------------
@pytest.mark.parametrize("method", STEPPING)
def test_outputs_exactly_at_t_eval(method):
    form = Lagrange()
    t_eval = np.array([0.0, 0.123, 0.5, 0.77, 1.0, 1.9, 2.0])
    seen = []
    sol = simulate(form, (0.0, 2.0), form.state0(Q0, V0), method=method, t_eval=t_eval, h=0.005,
                   rtol=1e-8 if INTEGRATORS[method].adaptive else 1e-6,
                   on_output=lambda t, x: seen.append(t))
    assert sol.success
    assert np.array_equal(sol.t, t_eval) and sol.x.shape == (t_eval.size, form.n_state)
    assert seen == list(t_eval)
    assert physical_error(form, sol) < (1e-4 if INTEGRATORS[method].order >= 2 else 2e-3)   # newmark: order 1


@pytest.mark.parametrize("method", FIXED)
def test_fixed_step_shrunk_to_equally_spaced_outputs(method):
    """h = 0.03 does not divide dt_out = 0.1: h becomes 0.1/4, every output is a step point."""
    form = Lagrange()
    t_eval = np.linspace(0.0, 1.0, 11)
    sol = simulate(form, (0.0, 1.0), form.state0(Q0, V0), method=method, t_eval=t_eval, h=0.03)
    assert sol.n_steps == 40 and np.array_equal(sol.t, t_eval)


def test_default_outputs_are_the_step_points_and_progress_is_called():
    form = Lagrange()
    times = []
    sol = simulate(form, (0.0, 1.0), form.state0(Q0, V0), method="midpoint", h=0.1, progress=times.append)
    assert sol.t.shape == (11,) and sol.t[0] == 0.0 and sol.t[-1] == 1.0
    np.testing.assert_allclose(np.diff(sol.t), 0.1, rtol=1e-12)
    assert len(times) == sol.n_steps == 10
    with pytest.raises(dataclasses.FrozenInstanceError):
        sol.status = "failed"


# -- 3. invariants and numerical damping ---------------------------------------------------------
def test_midpoint_conserves_energy_of_linear_hamiltonian_and_rk45_drifts():
    """Undamped, unforced (q, p): H is a quadratic invariant, kept by midpoint to round-off."""
    form = Hamilton(C=np.zeros((3, 3)), B=np.zeros(3))
    x0 = form.state0(Q0, V0)
    t_span = (0.0, 200.0)                               # ~90 periods of the fastest mode, 18 of the slowest
    mid = simulate(form, t_span, x0, method="midpoint", h=0.05)
    rk = simulate(form, t_span, x0, method="RK45", rtol=1e-6, atol=1e-9)
    drift_mid = np.max(np.abs(form.energy(mid.x) / form.energy(x0[None])[0] - 1))
    drift_rk = np.max(np.abs(form.energy(rk.x) / form.energy(x0[None])[0] - 1))
    print(f"relative energy drift: midpoint {drift_mid:.1e}, RK45 {drift_rk:.1e}")
    assert drift_mid < 1e-12
    assert drift_rk > 1e-6 and drift_rk > 1e4 * drift_mid


def test_generalized_alpha_numerical_damping():
    """Modes omega = 1 and 1000, h = 0.01 (omega h = 0.01 and 10), 2000 steps."""
    omega = np.array([1.0, 1000.0])
    form = Lagrange(M=np.eye(2), K=np.diag(omega**2), C=np.zeros((2, 2)), B=np.zeros(2))
    x0 = form.state0(np.array([1.0, 1e-3]), np.zeros(2))

    def modal_energy(x):
        return 0.5 * x[:, 2:] ** 2 + 0.5 * omega**2 * x[:, :2] ** 2

    E = {}
    for rho_inf in (1.0, 0.5):
        sol = simulate(form, (0.0, 20.0), x0, method="generalized-alpha", h=0.01, rho_inf=rho_inf)
        E[rho_inf] = modal_energy(sol.x) / modal_energy(x0[None])
    assert np.max(np.abs(E[1.0] - 1)) < 1e-10          # rho_inf = 1: no numerical damping, any h
    assert E[0.5][-1, 1] < 1e-10                        # high frequency damped out
    assert abs(E[0.5][-1, 0] - 1) < 1e-4                # low frequency kept (damping O(h^3) per period)


# -- 4. counters and factorization reuse ---------------------------------------------------------
def test_counters():
    form = Lagrange()
    x0, span = form.state0(Q0, V0), (0.0, 10.0)
    sol = simulate(form, span, x0, method="midpoint", h=0.01)
    assert (sol.n_steps, sol.n_lu, sol.n_jac, sol.n_rhs, sol.n_rejected) == (1000, 1, 1, 2000, 0)
    sol = simulate(form, span, x0, method="generalized-alpha", h=0.01)   # LU of M and of S
    assert (sol.n_steps, sol.n_lu, sol.n_jac, sol.n_rhs) == (1000, 2, 1, 2001)
    sol = simulate(form, span, x0, method="AB4", h=0.01)                  # f0 + 3 RK4 steps + 1 per AB4 step
    assert (sol.n_steps, sol.n_rhs, sol.n_lu, sol.n_jac) == (1000, 1 + 3 * 4 + 997, 0, 0)
    for method, n_stages in (("RK45", 6), ("DOP853", 12)):               # + f0 and the initial-step guess
        sol = simulate(form, span, x0, method=method)
        assert sol.n_rhs == n_stages * (sol.n_steps + sol.n_rejected) + 2
        assert 0 < sol.n_rejected < sol.n_steps
    for method in ("Radau", "BDF"):
        sol = simulate(form, span, x0, method=method, rtol=1e-8)
        assert sol.n_jac == 1 and 2 <= sol.n_lu < sol.n_steps < sol.n_rhs


@pytest.mark.parametrize("method", ["midpoint", "generalized-alpha"])
def test_lu_refactored_only_when_the_key_changes(method):
    """K switches at t = 5: one more Jacobian and LU; the shortened last step: one more LU."""
    form = Lagrange(K_late=2 * K3, t_switch=5.0)
    extra = 1 if method == "generalized-alpha" else 0                     # LU of M
    sol = simulate(form, (0.0, 10.0), form.state0(Q0, V0), method=method, h=0.01)
    assert (sol.n_lu, sol.n_jac) == (2 + extra, 2)
    sol = simulate(form, (0.0, 10.005), form.state0(Q0, V0), method=method, h=0.01)
    assert (sol.n_lu, sol.n_jac, sol.n_steps) == (3 + extra, 2, 1001)


class ScaledDescriptor(Lagrange):
    """The Lagrange test system times s(t) (1, then 3 from t = 1): M_full(t) x' = F(t, x).

    Same solution; the descriptor matrix M_full(t) changes with the Jacobian key.
    """

    mass_matrix_takes_t = True

    def __init__(self):
        super().__init__(t_switch=1.0)

    def s(self, t):
        return 3.0 if t >= self.t_switch else 1.0

    def mass_matrix_full(self, t=None):
        return self.s(0.0 if t is None else t) * super().mass_matrix_full()

    def forcing_full(self, t, x):
        return self.s(t) * super().forcing_full(t, x)

    def jacobian(self, t, x=None):
        return self.s(t) * super().jacobian(t, x)

    def rhs(self, t, x):
        self.n_rhs += 1
        return np.linalg.solve(dense_array(self.mass_matrix_full(t)), self.forcing_full(t, x))


@pytest.mark.parametrize("method", ["midpoint", "Radau", "BDF"])
def test_time_dependent_descriptor_mass_matrix(method):
    """mass_matrix_full(t) is re-evaluated with the Jacobian key: same result as the plain system."""
    plain, scaled = Lagrange(), ScaledDescriptor()
    kwargs = dict(method=method, h=0.01, rtol=1e-8, atol=1e-10) if method != "midpoint" else \
        dict(method=method, h=0.01)
    a = simulate(plain, (0.0, 2.0), plain.state0(Q0, V0), t_eval=[2.0], **kwargs)
    b = simulate(scaled, (0.0, 2.0), scaled.state0(Q0, V0), t_eval=[2.0], **kwargs)
    assert np.max(np.abs(a.x - b.x)) < (1e-12 if method == "midpoint" else 1e-6)
    assert b.n_jac == 2 or method == "BDF"            # BDF asks for J only when Newton stalls


# -- 5. integrals --------------------------------------------------------------------------------
def test_integrand_matches_closed_form():
    """q = cos(omega t): int_0^t q^2 = t/2 + sin(2 omega t)/(4 omega), int_0^t v q = (q^2 - 1)/2."""
    omega = 2.0
    form = Lagrange(M=np.eye(1), K=np.array([[omega**2]]), C=np.zeros((1, 1)), B=np.zeros(1))
    x0 = form.state0(np.ones(1), np.zeros(1))
    t_eval = np.array([0.0, 0.3, 1.7, 2.0])
    exact_int = np.stack([t_eval / 2 + np.sin(2 * omega * t_eval) / (4 * omega),
                          (np.cos(omega * t_eval) ** 2 - 1) / 2], axis=1)

    def integrand(t, x):
        return np.array([x[0] ** 2, x[1] * x[0]])

    sol = simulate(form, (0.0, 2.0), x0, method="DOP853", rtol=1e-11, atol=1e-12, t_eval=t_eval,
                   integrand=integrand)
    assert sol.integrals.shape == (4, 2)
    np.testing.assert_allclose(sol.integrals, exact_int, atol=1e-9)
    for method in ("midpoint", "AB4"):                  # error of the integral ~ h^order
        errors = []
        for h in (0.02, 0.01, 0.005):
            sol = simulate(form, (0.0, 2.0), x0, method=method, h=h, t_eval=t_eval, integrand=integrand)
            errors.append(np.max(np.abs(sol.integrals - exact_int)))
        observed = slope([0.02, 0.01, 0.005], errors)
        print(f"{method}: integral order {observed:.2f}")
        assert abs(observed - INTEGRATORS[method].order) < 0.3


# -- 6. robustness: a formulation that is not linear in x ----------------------------------------
class Duffing(Lagrange):
    """f = load - K q - C v - eps q^3; jacobian and K give the linear part only (inexact)."""

    eps = 20.0

    def f(self, t, q, v):
        return super().f(t, q, v) - self.eps * q**3


@pytest.mark.parametrize("method", ["midpoint", "generalized-alpha"])
def test_nonlinear_formulation_newton_iterations(method):
    """The residual check adds Newton corrections: still order 2; none allowed -> status 'failed'."""
    form = Duffing()
    x0 = form.state0(3 * Q0, V0)
    ref = simulate(form, (0.0, 2.0), x0, method="DOP853", rtol=1e-12, atol=1e-12).x[-1]
    errors = []
    for h in (0.01, 0.005):
        sol = simulate(form, (0.0, 2.0), x0, method=method, h=h)
        assert sol.success and sol.n_rhs > 2.5 * sol.n_steps          # more than one solve per step
        errors.append(np.max(np.abs(sol.x[-1] - ref)))
    assert abs(np.log2(errors[0] / errors[1]) - 2) < 0.3
    sol = simulate(form, (0.0, 2.0), x0, method=method, h=0.01, newton_max_iter=0)
    assert sol.status == "failed" and "Newton" in sol.message and "reduce `h`" in sol.message
    assert sol.t.size == 1


# -- 7. failures are statuses --------------------------------------------------------------------
@pytest.mark.parametrize("method", STEPPING)
def test_unstable_model_diverges_and_keeps_outputs(method):
    """q'' = 100 q grows like exp(10 t): |x| passes 1e12 near t = 2.7."""
    form = Lagrange(M=np.eye(1), K=np.array([[-100.0]]), C=np.zeros((1, 1)), B=np.zeros(1))
    t_eval = np.linspace(0.0, 5.0, 51)
    sol = simulate(form, (0.0, 5.0), form.state0(np.ones(1), np.zeros(1)), method=method, h=0.001,
                   t_eval=t_eval)
    assert sol.status == "diverged" and not sol.success
    assert "grows without bound" in sol.message
    assert 2.0 < sol.t[-1] < 3.0 and np.array_equal(sol.t, t_eval[:sol.t.size])
    assert np.all(np.isfinite(sol.x)) and sol.x.shape == (sol.t.size, 2)


@pytest.mark.parametrize("method", STEPPING)
def test_nan_fails_and_keeps_outputs(method):
    form = Lagrange(t_nan=1.0)
    t_eval = np.linspace(0.0, 2.0, 21)
    sol = simulate(form, (0.0, 2.0), form.state0(Q0, V0), method=method, h=0.01, t_eval=t_eval)
    assert sol.status == "failed" and not sol.success
    assert "non-finite" in sol.message
    assert 0.5 <= sol.t[-1] <= 1.0 and np.all(np.isfinite(sol.x))


def test_fixed_step_underflow_fails():
    """h below the spacing of the floats at t: 1e9 steps are announced (every one an output
    would be refused: tests/test_failures_stream.py), then the first step fails."""
    form = Lagrange()
    with pytest.warns(RunSizeWarning, match="1e[+]09 steps"):
        sol = simulate(form, (1e10, 1e10 + 1.0), form.state0(Q0, V0), method="midpoint", h=1e-9,
                       t_eval=[1e10, 1e10 + 1.0])
    assert sol.status == "failed" and "underflow" in sol.message and sol.t.size == 1


def test_misuse_raises():
    form = Lagrange()
    integrator = ImplicitMidpoint(form, 0.0, form.state0(Q0, V0), 0.1, h=0.05)
    with pytest.raises(RuntimeError, match="`dense`"):
        integrator.dense(0.0)
    while integrator.status == "running":
        integrator.step()
    with pytest.raises(ValueError, match="`t`"):
        integrator.dense(0.2)
    with pytest.raises(RuntimeError, match="finished"):
        integrator.step()


# -- 8. bad input --------------------------------------------------------------------------------
BAD_INPUTS = [
    ({"method": "Euler"}, ValueError, r"`method` must be one of .*'midpoint'"),
    ({"t_span": (1.0, 0.0)}, ValueError, r"`t_span` must be increasing"),
    ({"x0": np.zeros(5)}, ValueError, r"`x0` must have shape"),
    ({"x0": np.full(6, np.nan)}, ValueError, r"`x0` must be finite"),
    ({"method": "midpoint", "h": None}, ValueError, r"`h` .* required"),
    ({"method": "AB4", "h": -0.1}, ValueError, r"`h` must be a positive"),
    ({"rtol": 0.0}, ValueError, r"`rtol` must be positive"),
    ({"atol": -1.0}, ValueError, r"`atol` must be positive"),
    ({"t_eval": [0.5, 0.2]}, ValueError, r"`t_eval` must be sorted"),
    ({"t_eval": [0.5, 3.0]}, ValueError, r"`t_eval` must lie within `t_span`"),
    ({"method": "generalized-alpha", "rho_inf": 1.5}, ValueError, r"`rho_inf` must lie in \[0, 1\]"),
    ({"integrand": 3.0}, TypeError, r"`integrand` must be callable"),
    ({"divergence_limit": -1.0}, ValueError, r"`divergence_limit` must be positive"),
]


@pytest.mark.parametrize("kwargs, error, match", BAD_INPUTS)
def test_bad_input_raises(kwargs, error, match):
    form = Lagrange()
    args = {"t_span": (0.0, 1.0), "x0": form.state0(Q0, V0), "method": "midpoint", "h": 0.1, **kwargs}
    with pytest.raises(error, match=match):
        simulate(form, **args)


def test_second_order_method_refuses_momentum_states():
    form = Hamilton()
    with pytest.raises(ValueError, match=r"second-order form.*delta_dot.*'midpoint'"):
        simulate(form, (0.0, 1.0), form.state0(Q0, V0), method="generalized-alpha", h=0.1)


def test_unknown_and_unused_options_warn():
    form = Lagrange()
    x0 = form.state0(Q0, V0)
    with pytest.warns(UserWarning, match="bogus") as record:
        sol = simulate(form, (0.0, 0.1), x0, method="midpoint", h=0.05, bogus=1)
    assert sol.success and record[0].filename == __file__          # stacklevel: the caller's line
    with pytest.warns(UserWarning, match="`rtol` and `atol` are not used"):
        simulate(form, (0.0, 0.1), x0, method="midpoint", h=0.05, rtol=1e-3)
    with pytest.warns(UserWarning, match="rho_inf"):
        simulate(form, (0.0, 0.1), x0, method="RK45", rho_inf=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        simulate(form, (0.0, 0.1), x0, method="generalized-alpha", h=0.05, rho_inf=0.5)
        ImplicitMidpoint(form, 0.0, x0, 0.1, h=0.05, newton_tol=1e-12)


def test_solution_type():
    form = Lagrange()
    sol = simulate(form, (0.0, 0.5), form.state0(Q0, V0))
    assert isinstance(sol, Solution) and sol.method == "DOP853" and sol.order == 8
    assert sol.integrals is None and sol.wall_time > 0


@pytest.mark.parametrize("method", ["RK45", "DOP853"])
def test_a_stage_that_fails_rejects_the_trial_step_not_the_run(method):
    """x' = -x, whose right-hand side raises an ArithmeticError (as a singular saddle-point matrix does)
    at any stage more than 0.05 s beyond the last accepted step: the explicit pairs retry at a quarter of
    the step until the stages stay within reach, count those trials as rejected, and reach exp(-t)."""
    from flexmbs.formulations.stabilization import RedundantConstraintError
    accepted = [0.0]

    def rhs(t, x):
        if t - accepted[-1] > 0.05:
            raise RedundantConstraintError("a stage too far ahead")
        return -x

    term = ODETerm(name="toy", n_state=1, rhs=rhs)
    sol = simulate(term, (0.0, 1.0), [1.0], method=method, h=0.5, rtol=1e-10, atol=1e-12,
                   progress=lambda t: accepted.append(t))
    assert sol.status == "finished"
    assert abs(sol.x[-1, 0] - np.exp(-1.0)) < 1e-9
    assert sol.n_rejected >= 1
    assert np.diff(sol.t).max() <= 0.05 + 1e-12
