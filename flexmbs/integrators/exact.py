"""Exact integration of steady linear models by matrix exponentials (method "exact").

A steady model (constant spin or fixed frame) has constant-coefficient equations
(`Formulation.linear_system`):

.. code:: text

    x' = A x + c + B f(t),        f_j(t) = 1 (constant load)  or  a_j sin(Omega_j t + phi_j)

With s_j = sin(Omega_j t + phi_j), r_j = cos(Omega_j t + phi_j) (s_j' = Omega_j r_j,
r_j' = -Omega_j s_j) and a constant component 1, the augmented state z = (x, s, r, 1)
solves one autonomous linear system z' = Ahat z, so that over any step h

.. code:: text

    z(t + h) = expm(Ahat h) z(t)                                                 (1)

exactly: no truncation error, only the round-off of ``scipy.linalg.expm`` (scaling and
squaring with a Pade approximant, accurate to a few units of the round-off of ||Ahat h||) and
of the products.  Each distinct step size costs one ``expm``; equally spaced outputs cost
one ``expm`` and one matrix-vector product per output.  The dense output at t_old + tau is
expm(Ahat tau) z(t_old), exact too.

Integrals of an ``integrand(t, x)`` (the works of loads, damping and frame) are computed by
Gauss-Legendre quadrature on the exact solution.  The integrand is a quadratic form of z, so
its highest frequency is at most 2 rho, rho the spectral radius of Ahat; each output interval
is cut into k parts with theta = 2 rho h / k <= 30 and m Gauss points per part are taken,
m the smallest with the quadrature error bound [1]_

.. code:: text

    theta^(2m) (m!)^4 / ((2m + 1) ((2m)!)^3) <= 1e-13                             (2)

(the error term of the m-point rule for an integrand whose 2m-th derivative is bounded by
rho^(2m) times its size).  All states at the quadrature points are computed at once from
the outputs, and a vectorised integrand (attribute ``vectorized = True``, called with t
(N,) and x (N, n_state)) is called once for all of them.

`modal_response` gives the same solution by another route, the eigenvectors of A and the
closed-form particular solutions of the constant and harmonic loads; it is the reference
of the tests and of the cases' error estimates.

Only formulations with ``linear_system()`` (every `flexmbs.formulations.Formulation`) of
steady, linear models whose loads are constant or `flexmbs.signals.Harmonic` are accepted;
anything else raises a ValueError that names another method.

References
----------
.. [1] P. J. Davis, P. Rabinowitz, Methods of Numerical Integration, 2nd ed., Academic
       Press (1984), sec. 2.7 (error of the Gauss-Legendre rule).
.. [2] C. Moler, C. Van Loan, Nineteen dubious ways to compute the exponential of a matrix,
       twenty-five years later, SIAM Review 45 (2003) 3-49, doi:10.1137/S00361445024180
       (augmenting a linear system by the ODE of its forcing).
"""
from __future__ import annotations

import math

import numpy as np

from ..signals import Harmonic
from .base import Integrator

__all__ = ["ExactLinear", "exact_system", "modal_response"]

OTHER_METHODS = "'DOP853', 'midpoint' or 'generalized-alpha'"
MAX_STATES = 4000                # dense matrix exponentials of (n_state + 2 k + 1)^2: small models only
QUADRATURE_TOL = 1e-13
THETA_MAX = 30.0
MAX_GAUSS = 40


def exact_system(formulation) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """(A, c, B, load functions) of a formulation that method "exact" can integrate.

    Raises
    ------
    ValueError
        If the formulation has no constant-coefficient form, is not linear, or a load's time
        function is neither constant nor `Harmonic`.
    """
    name = getattr(formulation, "name", type(formulation).__name__)
    if not hasattr(formulation, "linear_system") or not hasattr(formulation, "model"):
        raise ValueError(f"method 'exact' needs a flexmbs formulation of a model (with linear_system()); "
                         f"{name!r} has none. Use {OTHER_METHODS}.")
    if formulation.n_state > MAX_STATES:
        raise ValueError(f"method 'exact' works with dense {formulation.n_state} x {formulation.n_state} matrix "
                         f"exponentials, which is too large (at most {MAX_STATES} states); use 'midpoint' or "
                         "'generalized-alpha' (sparse LU) for this model.")
    if not getattr(formulation, "linear", False):
        raise ValueError(f"method 'exact' integrates linear equations only; formulation {name!r} is "
                         f"nonlinear. Use {OTHER_METHODS}.")
    try:
        A, c, B = formulation.linear_system()
    except ValueError as err:
        raise ValueError(f"method 'exact' needs constant coefficients: {err}. Use {OTHER_METHODS}.") from None
    loads = list(formulation.model._load_f)
    for j, f in enumerate(loads):
        if f is not None and not isinstance(f, Harmonic):
            raise ValueError(
                f"method 'exact' integrates constant loads and harmonic ones (flexmbs.signals.Harmonic: "
                f"amplitude sin(omega t + phase)) exactly; load {j} has the time function {f!r}. Give it "
                f"as Harmonic(omega, amplitude, phase), or use {OTHER_METHODS}.")
    return np.asarray(A, dtype=float), np.asarray(c, dtype=float), np.asarray(B, dtype=float), loads


class _Augmented:
    """z = (x, s_1, r_1, ..., s_k, r_k, 1) and Ahat of eq. (1), with expm(Ahat tau) cached per tau."""

    def __init__(self, A, c, B, loads):
        n = A.shape[0]
        harmonics = [(j, f) for j, f in enumerate(loads) if f is not None]
        k = len(harmonics)
        self.n, self.dim = n, n + 2 * k + 1
        Ah = np.zeros((self.dim, self.dim))
        Ah[:n, :n] = A
        Ah[:n, -1] = c + sum((B[:, j] for j, f in enumerate(loads) if f is None), np.zeros(n))
        self.omega = np.array([f.omega for _, f in harmonics])
        self.phase = np.array([f.phase for _, f in harmonics])
        for i, (j, f) in enumerate(harmonics):
            s, r = n + 2 * i, n + 2 * i + 1
            Ah[:n, s] = f.amplitude * B[:, j]
            Ah[s, r], Ah[r, s] = f.omega, -f.omega
        self.Ahat = Ah
        self.i_sin = n + 2 * np.arange(k)
        self._cache: dict[float, np.ndarray] = {}
        eig = np.linalg.eigvals(Ah) if self.dim <= 2000 else [np.abs(Ah).sum(axis=0).max()]
        self.rho = float(np.max(np.abs(eig))) if len(eig) else 0.0

    def state(self, t: float, x: np.ndarray) -> np.ndarray:
        z = np.empty(self.dim)
        z[:self.n] = x
        self.set_forcing(z, t)
        return z

    def set_forcing(self, z: np.ndarray, t) -> None:
        """The exact sin, cos and 1 components at t (z (dim,) or (N, dim) with t (N,))."""
        arg = np.multiply.outer(np.asarray(t, dtype=float), self.omega) + self.phase
        z[..., self.i_sin] = np.sin(arg)
        z[..., self.i_sin + 1] = np.cos(arg)
        z[..., -1] = 1.0

    def phi(self, tau: float) -> np.ndarray:
        """expm(Ahat tau), cached per tau (a few distinct values in a run)."""
        from scipy.linalg import expm
        key = float(tau)
        P = self._cache.get(key)
        if P is None:
            if len(self._cache) > 256:
                self._cache.clear()
            P = self._cache[key] = expm(self.Ahat * key)
        return P


def gauss_points(theta: float) -> int:
    """Smallest m with the bound (2) below QUADRATURE_TOL for theta = (highest frequency) x h."""
    for m in range(1, MAX_GAUSS + 1):
        log_err = (2 * m * math.log(max(theta, 1e-300)) + 4 * math.lgamma(m + 1)
                   - math.log(2 * m + 1) - 3 * math.lgamma(2 * m + 1))
        if log_err <= math.log(QUADRATURE_TOL):
            return m
    return MAX_GAUSS


class ExactLinear(Integrator):
    """Matrix-exponential propagation of a steady linear model, eq. (1): exact at any step.

    ``h`` is optional (default: one step to t_end); through `simulate` the steps are the
    output intervals.  ``order`` is 0: there is no truncation error to have an order.
    """

    name = "exact"
    order = 0
    adaptive = False
    h_optional = True
    needs = "first_order"

    def _setup(self) -> None:
        A, c, B, loads = exact_system(self.formulation)
        self._aug = _Augmented(A, c, B, loads)
        if self.h is None:
            self.h = self.t_end - self.t0
        self._z = self._aug.state(self.t, self.x)
        self._z_old = None

    def _step_impl(self) -> tuple[bool, str | None]:
        step = self._next_step()
        if step is None:
            return False, self._underflow_message()
        t_next, h = step
        self._z_old = self._z
        z = self._aug.phi(h) @ self._z
        self._aug.set_forcing(z, t_next)
        self._z = z
        self.t, self.x = t_next, z[:self._aug.n].copy()
        return True, None

    def _dense_impl(self, t: float) -> np.ndarray:
        return (self._aug.phi(t - self.t_old) @ self._z_old)[:self._aug.n]

    # -- all outputs at once (used by `simulate`) ---------------------------------------------------
    def outputs(self, t_eval: np.ndarray, integrand=None) -> tuple[np.ndarray, np.ndarray | None]:
        """States at every time of ``t_eval`` (sorted, within [t0, t_end]) and the integrals
        of ``integrand`` from t0 to each, (n_out, n_state) and (n_out, k) or None."""
        aug = self._aug
        grid = np.concatenate([[self.t0], np.asarray(t_eval, dtype=float)])
        steps = np.diff(grid)
        Z = np.empty((len(grid), aug.dim))
        Z[0] = self._z
        keys = _step_keys(steps)
        with np.errstate(all="ignore"):         # an unstable model: reported below
            for i, key in enumerate(keys):
                Z[i + 1] = Z[i] if steps[i] == 0.0 else aug.phi(key) @ Z[i]
            size = np.max(np.abs(Z[:, :aug.n]), axis=1, initial=0.0)
        aug.set_forcing(Z, grid)
        bad = np.flatnonzero(~np.isfinite(size) | (size > self.divergence_limit))
        end = len(grid) if not len(bad) else int(bad[0])          # grid points kept
        if len(bad):
            if np.isfinite(size[end]):
                self.status = "diverged"
                self.message = (f"The response grows without bound: |x|_inf = {size[end]:.3g} exceeds "
                                f"`divergence_limit` = {self.divergence_limit:.3g} at t = {grid[end]:.6g}; "
                                "the steady model is unstable (an eigenvalue of A with positive real part, "
                                "e.g. a spin above the critical speed).")
            else:
                self.status = "failed"
                self.message = (f"The state became non-finite at t = {grid[end]:.6g}: the matrix "
                                "exponential overflowed (the model is unstable).")
            grid, steps, keys, Z = grid[:end], steps[:end - 1], keys[:end - 1], Z[:end]
        else:
            self.status, self.message = "finished", f"Reached t_end = {self.t_end:.6g}."
        self.n_steps = int(np.count_nonzero(steps))
        self.t, self.x, self._z = float(grid[-1]), Z[-1, :aug.n].copy(), Z[-1].copy()
        X = Z[1:, :aug.n]
        if integrand is None:
            return X, None
        W = self._integrals(grid, steps, keys, Z, integrand)
        return X, np.cumsum(W, axis=0)

    def _integrals(self, grid, steps, keys, Z, integrand) -> np.ndarray:
        """Integral over each interval [grid[i], grid[i + 1]] by Gauss-Legendre on the exact
        solution, (n_intervals, k)."""
        aug = self._aug
        out = None
        for key in np.unique(keys[steps > 0]):
            idx = np.flatnonzero((keys == key) & (steps > 0))
            theta = 2.0 * aug.rho * key
            k = max(1, math.ceil(theta / THETA_MAX))
            m = gauss_points(theta / k)
            xi, w = np.polynomial.legendre.leggauss(m)
            tau = ((np.arange(k)[:, None] + 0.5 * (xi + 1.0)[None, :]) * key / k).ravel()   # (k m,)
            weights = np.tile(0.5 * w * key / k, k)
            P = np.concatenate([aug.phi(tj)[:aug.n] for tj in tau])                      # (k m n, dim)
            X = (Z[idx] @ P.T).reshape(-1, aug.n)                                         # (i, p, a) rows
            T = (grid[idx][:, None] + tau[None, :]).ravel()
            values = _evaluate(integrand, T, X).reshape(len(idx), len(tau), -1)
            if out is None:
                out = np.zeros((len(steps), values.shape[-1]))
            out[idx] = np.einsum("ipk,p->ik", values, weights)
        return np.zeros((len(steps), 0)) if out is None else out


def _step_keys(steps: np.ndarray) -> np.ndarray:
    """Step sizes with round-off differences removed (equal to 12 digits: one expm for all)."""
    keys = steps.copy()
    pos = steps > 0
    if np.any(pos):
        ref = steps[pos][0]
        same = pos & (np.abs(steps - ref) <= 1e-12 * ref)
        keys[same] = ref
    return keys


def _evaluate(integrand, t: np.ndarray, x: np.ndarray, chunk: int = 50_000) -> np.ndarray:
    """integrand at many (t, x): one call per chunk if it is vectorised, else one per point."""
    if getattr(integrand, "vectorized", False):
        parts = [np.asarray(integrand(t[i:i + chunk], x[i:i + chunk]), dtype=float).reshape(len(t[i:i + chunk]), -1)
                 for i in range(0, len(t), chunk)]
        return np.concatenate(parts)
    return np.array([np.atleast_1d(np.asarray(integrand(ti, xi), dtype=float)) for ti, xi in zip(t, x)])


def modal_response(formulation, x0, t, t0: float = 0.0) -> np.ndarray:
    """x(t) (n_t, n_state) of x' = A x + c + B f(t) by the eigenvectors of A (an independent
    route to the solution of method "exact").

    .. code:: text

        x(t) = x_s + sum_j Im[(i Omega_j I - A)^-1 a_j b_j e^{i (Omega_j t + phi_j)}]
               + V exp(Lambda (t - t0)) V^-1 (x0 - x_part(t0)),      x_s = -A^-1 (c + sum_const b_j)

    A must be diagonalisable with well-conditioned eigenvectors (distinct eigenvalues, as the
    modes of a finite element model) and no i Omega_j may be an eigenvalue (resonance).
    """
    A, c, B, loads = exact_system(formulation)
    n = A.shape[0]
    t = np.atleast_1d(np.asarray(t, dtype=float))
    c_tot = c + sum((B[:, j] for j, f in enumerate(loads) if f is None), np.zeros(n))
    x_s = -np.linalg.solve(A, c_tot)

    def particular(tt):
        x = np.broadcast_to(x_s, (len(tt), n)).astype(complex)
        for j, f in enumerate(loads):
            if f is not None:
                amp = np.linalg.solve(1j * f.omega * np.eye(n) - A, f.amplitude * B[:, j])
                x = x + np.exp(1j * (f.omega * tt + f.phase))[:, None] * amp
        return x

    def part_real(tt):
        x = particular(tt)
        # the constant part is real; the harmonic parts are the imaginary parts of their phasors
        return x_s + (x - x_s).imag

    lam, V = np.linalg.eig(A)
    coef = np.linalg.solve(V, np.asarray(x0, dtype=float) - part_real(np.array([t0]))[0])
    hom = (np.exp(np.multiply.outer(t - t0, lam)) * coef) @ V.T
    return part_real(t) + hom.real


def reference_error(model, results, node: int = -1, component: int = 0) -> float:
    """Error of one displacement component at one node against `modal_response`:

    .. code:: text

        e = max_k |u(t_k) - u_ref(t_k)| / max_k |u_ref(t_k)|          over the output times t_k

    ``model`` is the steady model that ``results`` (a `flexmbs.Results` from the rest state
    or any initial state, read from ``results.delta[0]``, ``results.delta_dot[0]``) was run on.
    """
    from ..formulations import Lagrange
    form = Lagrange(model, evaluation="terms")
    x0 = np.concatenate([results.delta[0], results.delta_dot[0]])
    x = modal_response(form, x0, results.t, t0=float(results.t[0]))
    u_ref = model.displacement_field(x[:, :form.n])[:, node, component]
    u = results.displacement[:, node, component]
    return float(np.max(np.abs(u - u_ref)) / np.max(np.abs(u_ref)))
