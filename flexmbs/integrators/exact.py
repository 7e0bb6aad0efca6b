"""Exact integration of steady linear models by matrix exponentials (method "exact").

A steady model (constant spin or fixed frame) has constant-coefficient equations
(`Formulation.linear_system`, the ``linear_system`` of its term):

.. code:: text

    x' = A x + c + B f(t),        f_j(t) = 1 (constant load)  or  a_j sin(Omega_j t + phi_j)

With s_j = sin(Omega_j t + phi_j), r_j = cos(Omega_j t + phi_j) (s_j' = Omega_j r_j,
r_j' = -Omega_j s_j) and a constant component 1, the augmented state z = (x, s, r, 1)
solves one autonomous linear system z' = Ahat z, so that over any step h

.. code:: text

    z(t + h) = expm(Ahat h) z(t)                                                 (1)

exactly: no truncation error, only the round-off of `expm` (numpy: balancing, then scaling and
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
rho^(2m) times its size).  The state at Gauss point i of part j of the interval from t_a is
expm(Ahat tau_i) expm(Ahat j h / k) z(t_a): m + 1 matrix exponentials per step size, not
k m.  A vectorised integrand (attribute ``vectorized = True``, called with t (N,) and x
(N, n_state)) is called once for all the points of a block.

An integrand that is a quadratic form z^T Q_c z and declares its forms (attribute ``forms``:
`declared_forms`; `flexmbs.run`'s does, from the model's matrices) has the rule (2) applied
to its forms once per step size, G_c = sum_p w_p expm(Ahat tau_p)^T Q_c expm(Ahat tau_p), and
each output's integral is z^T G_c z (the forms are checked against the integrand at the
first outputs; a mismatch warns and the Gauss points are used).

The outputs are computed in blocks (`ExactLinear.output_blocks`): FIRST_BLOCK (64) outputs
first, then twice as many each block up to as many as fit in ``BLOCK_BYTES`` (64 MB) of
states at the quadrature points, at most ``BLOCK_OUTPUTS``: the
memory of a run is bounded by the block, not by the number of outputs, and each block is
handed on (written, reported) before the next is computed.  A block's integrals continue
the previous block's sums, so the blocks change the results by round-off only.

`modal_response` gives the same solution by another route, the eigenvectors of A and the
closed-form particular solutions of the constant and harmonic loads; it is the reference
of the tests and of the cases' error estimates.

Only terms with ``linear_system`` (those of every `flexmbs.formulations.Formulation`) of
steady, linear models whose loads (the term's ``load_functions``) are constant or
`flexmbs.signals.Harmonic` are accepted (`ExactLinear.requires` and ``_refusal``); anything
else raises a ValueError that says why and lists the methods that fit the term.

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

from ..arrays import sorted_unique
from ..formulations.terms import as_term
from ..quadrature import gauss_legendre_points
from ..signals import Harmonic
from .base import Integrator, check_fits

__all__ = ["ExactLinear", "exact_system", "modal_response", "modal_chunks"]

MAX_STATES = 4000                # dense matrix exponentials of (n_state + 2 k + 1)^2: small models only
QUADRATURE_TOL = 1e-13
THETA_MAX = 30.0
THETA_FORMS = 4.0                # parts of the quadrature of quadratic forms (a power of two of them)
MAX_GAUSS = 40
BLOCK_BYTES = 64 * 2**20         # states at the quadrature points of one block of outputs
BLOCK_OUTPUTS = 4096             # outputs per block at most (progress and writing between blocks)
FIRST_BLOCK = 64                 # outputs of the first block; each next one twice as many, up to the bound
CACHE_BYTES = 64 * 2**20         # matrix exponentials kept per step size
MAX_FORM_SIZE = 1000             # quadratic forms by polarization up to this many active components
FORM_CHECK_RTOL = 1e-8           # the declared or polarized forms must reproduce the integrand to this (else Gauss points)


def exact_system(formulation) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """(A, c, B, load functions) of a formulation (or term) that method "exact" can integrate.

    Raises
    ------
    ValueError
        If it does not fit method "exact" (`ExactLinear.refusal`: no constant-coefficient form, too
        many states, not linear, or a load's time function neither constant nor `Harmonic`).
    """
    term = as_term(formulation)
    check_fits(ExactLinear, term)
    return _exact_arrays(term)


def _exact_arrays(term) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """(A, c, B, load functions) of a term that fits method "exact"."""
    A, c, B = term.linear_system()
    return np.asarray(A, dtype=float), np.asarray(c, dtype=float), np.asarray(B, dtype=float), \
        list(term.load_functions)


class _Augmented:
    """z = (x, s_1, r_1, ..., s_k, r_k, 1) and Ahat of eq. (1), with expm(Ahat tau) cached per tau.
    Ahat is balanced once (`balance`: the scaling D of Ahat tau is the same for every tau), so
    that each expm(Ahat tau) = D expm(B tau) D^-1 is one `expm_balanced`."""

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
        # load j's factor f_j(t) in z: amplitude_j s_i for the i-th harmonic load, 1 for a constant one
        self.load_index = np.full(len(loads), self.dim - 1)
        self.load_scale = np.ones(len(loads))
        for i, (j, f) in enumerate(harmonics):
            self.load_index[j], self.load_scale[j] = self.i_sin[i], f.amplitude
        self._cache: dict[float, np.ndarray] = {}
        self._balanced = balance(Ah)
        self.rho = spectral_radius_bound(Ah, balanced=self._balanced[0])

    def expm(self, tau: float) -> np.ndarray:
        """expm(Ahat tau) from the balancing of Ahat (not cached: `phi` caches)."""
        B, d = self._balanced
        return expm_balanced(B * tau, d)

    def state(self, t: float, x: np.ndarray) -> np.ndarray:
        z = np.empty(self.dim)
        z[:self.n] = x
        self.set_forcing(z, t)
        return z

    def load_factors(self, Z: np.ndarray) -> np.ndarray:
        """f (N, n_loads), the loads' time functions, from augmented states Z (N, dim)."""
        return Z[:, self.load_index] * self.load_scale

    def set_forcing(self, z: np.ndarray, t) -> None:
        """The exact sin, cos and 1 components at t (z (dim,) or (N, dim) with t (N,))."""
        arg = np.multiply.outer(np.asarray(t, dtype=float), self.omega) + self.phase
        z[..., self.i_sin] = np.sin(arg)
        z[..., self.i_sin + 1] = np.cos(arg)
        z[..., -1] = 1.0

    def phi(self, tau: float) -> np.ndarray:
        """expm(Ahat tau), cached per tau (a few distinct values in a run; the cache holds at
        most CACHE_BYTES, and at least two matrices)."""
        key = float(tau)
        P = self._cache.get(key)
        if P is None:
            if len(self._cache) >= max(2, CACHE_BYTES // (8 * self.dim ** 2)):
                self._cache.clear()
            P = self._cache[key] = self.expm(key)
        return P

    def quadrature(self, h: float, theta_max: float = THETA_MAX, doubling: bool = False) -> "_Quadrature":
        """The Gauss rule of eq. (2) on a step h and the matrices that give its points' states:
        k parts with theta / k <= ``theta_max``, k a power of two if ``doubling`` (for
        `_Quadrature.integrated_forms`, which then sums the parts in log2 k steps)."""
        theta = 2.0 * self.rho * h
        k = max(1, math.ceil(theta / theta_max))
        if doubling:
            k = 2 ** math.ceil(math.log2(k))
        m = gauss_points(theta / k)
        xi, w = gauss_legendre_points(m)
        offsets = 0.5 * (xi + 1.0) * h / k                                    # (m,) within a part
        tau = (np.arange(k)[:, None] * (h / k) + offsets[None, :]).ravel()     # (k m,)
        weights = np.tile(0.5 * w * h / k, k)
        at_offsets = np.stack([self.expm(o) for o in offsets])                  # (m, dim, dim)
        return _Quadrature(k, m, tau, weights, at_offsets, self.phi(h / k), self.n)


class _Quadrature:
    """Gauss rule on one step h: k parts of m points, ``tau`` (k m,) from the step's start,
    ``weights`` (k m,), ``at_offsets`` = expm(Ahat tau_i) (m, dim, dim) for the m points of
    a part and ``part`` = expm(Ahat h / k)."""

    def __init__(self, k, m, tau, weights, at_offsets, part, n):
        self.k, self.m, self.tau, self.weights, self.n = k, m, tau, weights, n
        self.at_offsets, self.part = at_offsets, part

    def states(self, Z: np.ndarray) -> np.ndarray:
        """x at the k m points of the steps that start at the states Z (N, dim): (N, k m, n),
        x(t_a + j h/k + tau_i) = expm(Ahat tau_i) expm(Ahat j h/k) z(t_a)."""
        N, n = len(Z), self.n
        rows = self.at_offsets[:, :n].reshape(self.m * n, -1)
        X = np.empty((N, self.k, self.m, n))
        Zj = Z
        for j in range(self.k):
            X[:, j] = (Zj @ rows.T).reshape(N, self.m, n)
            if j + 1 < self.k:
                Zj = Zj @ self.part.T
        return X.reshape(N, self.k * self.m, n)

    def integrated_forms(self, Q: np.ndarray) -> np.ndarray:
        """G_c = sum_p w_p expm(Ahat tau_p)^T Q_c expm(Ahat tau_p) (c, dim, dim): the rule applied
        to the quadratic forms z^T Q_c z, so that the integral over the step from z(t_a) is
        z(t_a)^T G_c z(t_a).  With P = expm(Ahat h / k) and H the sum over one part's points,
        G = sum_j (P^j)^T H P^j: for k a power of two by doubling, G <- G + (P^l)^T G P^l,
        P^2l = P^l P^l (log2 k steps), else G <- H + P^T G P (k - 1 times)."""
        w = self.weights[:self.m]
        m, dim = self.at_offsets.shape[:2]
        left = self.at_offsets.transpose(2, 0, 1).reshape(dim, m * dim)          # [P_1^T ... P_m^T]
        G = np.empty((len(Q), dim, dim))
        for c, Qc in enumerate(Q):                      # one GEMM per form: sum_p P_p^T (w_p Q_c P_p)
            G[c] = left @ (w[:, None, None] * (Qc @ self.at_offsets)).reshape(m * dim, dim)
        if self.k & (self.k - 1) == 0:                   # k = 2^j: parts summed by doubling
            P = self.part
            for _ in range(self.k.bit_length() - 1):
                G = G + P.T @ G @ P
                P = P @ P
            return G
        H = G.copy()
        for _ in range(self.k - 1):
            G = H + self.part.T @ G @ self.part
        return G

    def bytes_per_step(self) -> int:
        """Memory of the states at the points of one step (and their integrand values)."""
        return 8 * self.k * self.m * (self.n + 8)


def spectral_radius_bound(A: np.ndarray, squarings: int = 6, balanced: np.ndarray | None = None) -> float:
    """An upper bound of the spectral radius of A, ||D^-1 A^p D||_1^(1/p) with p = 2^squarings
    and D the balancing of A (`balance`): rho(A) <= ||B^p||^(1/p) for any
    induced norm and any p, and the bound tends to rho as p grows (Gelfand's formula).  The
    powers are normalised at each squaring (no overflow).  For the rotating bar (10 and 200
    elements) it exceeds the eigenvalues' largest modulus by 0.5 % and 0.09 %, at the cost of
    six matrix products instead of a nonsymmetric eigenvalue problem (2 s at 403 states on a
    loaded machine).  ``balanced``: B if the caller has balanced A already."""
    if not A.size:
        return 0.0
    B = balance(A)[0] if balanced is None else balanced
    log_norm = 0.0                                       # log ||B^(2^j)|| after j squarings
    for j in range(squarings + 1):
        size = float(np.abs(B).sum(axis=0).max())
        if size == 0.0 or not np.isfinite(size):
            return 0.0 if size == 0.0 else float(np.abs(A).sum(axis=0).max())
        log_norm += math.log(size) / 2 ** j              # the norm of the normalised power, to the 1/p
        if j < squarings:
            B = (B / size) @ (B / size)
    return math.exp(log_norm)


def balance(A: np.ndarray, sweeps: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """(B, d): B = D^-1 A D with D = diag(d), d powers of two (exact scalings), that makes each
    row's and column's off-diagonal 2-norms r_i and c_i nearly equal: Parlett and Reinsch's
    balancing as LAPACK's gebal does it without permutations, one index after the other in each
    sweep, d_i <- d_i f_i with f_i = 2^round(log2(r_i / c_i) / 2) where that lowers c_i f_i + r_i / f_i
    below 0.95 (c_i + r_i), until a sweep changes nothing.  Any D is a similarity, so B has A's
    eigenvalues and expm(A) = D expm(B) D^-1 for every outcome; balancing makes ||B|| close to the
    spectral radius (fewer squarings in `expm`, a tighter `spectral_radius_bound`).  A loop over
    the n indices per sweep, O(n^2) flops each, once per matrix."""
    B = np.array(A, dtype=float)
    n = len(B)
    d = np.ones(n)
    for _ in range(sweeps):
        changed = False
        for i in range(n):
            c = math.sqrt(max(float(B[:, i] @ B[:, i]) - B[i, i] ** 2, 0.0))
            r = math.sqrt(max(float(B[i] @ B[i]) - B[i, i] ** 2, 0.0))
            if c == 0.0 or r == 0.0:
                continue
            f = 2.0 ** round(0.5 * math.log2(r / c))
            if f == 1.0 or c * f + r / f >= 0.95 * (c + r):
                continue
            B[:, i] *= f
            B[i, :] /= f
            d[i] *= f
            changed = True
        if not changed:
            break
    return B, d


# Pade approximants of degree m of exp, their coefficients b_m and the largest 1-norm theta_m of A
# for which the m-th one is accurate to double precision: N. J. Higham, SIAM J. Matrix Anal. Appl.
# 26 (2005) 1179-1193, Table 2.3 (theta) and eq. (2.4) (b_j = (2m - j)! m! / ((2m)! j! (m - j)!), scaled)
PADE = {3: (1.495585217958292e-2, (120.0, 60.0, 12.0, 1.0)),
        5: (2.539398330063230e-1, (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0)),
        7: (9.504178996162932e-1, (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0)),
        9: (2.097847961257068, (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0,
                                2162160.0, 110880.0, 3960.0, 90.0, 1.0)),
        13: (5.371920351148152, (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
                                 1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
                                 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0))}


def expm(A: np.ndarray) -> np.ndarray:
    """exp(A) of a square real matrix with numpy alone: the balancing B = D^-1 A D (`balance`),
    then exp(A) = D exp(B) D^-1 (`expm_balanced`)."""
    A = np.asarray(A, dtype=float)
    if A.size == 0:
        return np.zeros(A.shape)
    return expm_balanced(*balance(A))


def expm_balanced(B: np.ndarray, d: np.ndarray) -> np.ndarray:
    """D exp(B) D^-1 with D = diag(d) (B = D^-1 A D balanced, `balance`: exp(A)), exp(B) by
    Higham's scaling and squaring (2005, ``PADE``): the Pade approximant r_m(X) = (V - U)^-1 (V + U)
    of the smallest m in 3, 5, 7, 9 with ||B||_1 <= theta_m, else m = 13 on X = B / 2^s,
    s = ceil(log2(||B||_1 / theta_13)), and exp(B) = r_13(X)^(2^s).  U holds the odd powers, V the
    even ones: r_m(X) = sum_j b_j X^j / sum_j b_j (-X)^j."""
    n = len(B)
    norm = float(np.abs(B).sum(axis=0).max())
    I = np.eye(n)
    X2 = B @ B
    for m in (3, 5, 7, 9):
        theta, b = PADE[m]
        if norm <= theta:
            powers = [I, X2]
            while len(powers) <= m // 2:
                powers.append(powers[-1] @ X2)
            U = B @ sum(b[2 * j + 1] * P for j, P in enumerate(powers))
            V = sum(b[2 * j] * P for j, P in enumerate(powers))
            R = np.linalg.solve(V - U, V + U)
            return R * d[:, None] / d[None, :]
    theta, b = PADE[13]
    s = max(0, math.ceil(math.log2(norm / theta)))
    X = B / 2.0 ** s
    X2 = X2 / 4.0 ** s
    X4 = X2 @ X2
    X6 = X4 @ X2
    U = X @ (X6 @ (b[13] * X6 + b[11] * X4 + b[9] * X2) + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * I)
    V = X6 @ (b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * I
    R = np.linalg.solve(V - U, V + U)
    for _ in range(s):
        R = R @ R
    return R * d[:, None] / d[None, :]


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
    requires = ("linear_system",)
    outputs_in_blocks = True

    @classmethod
    def _refusal(cls, term) -> str | None:
        """A term with ``linear_system`` that method "exact" still cannot integrate: too many
        states for dense matrix exponentials, nonlinear, without constant coefficients (a frame
        that is not steady), or a load neither constant nor `Harmonic`."""
        if term.n_state > MAX_STATES:
            return (f"method 'exact' works with dense {term.n_state} x {term.n_state} matrix exponentials, "
                    f"which is too large (at most {MAX_STATES} states); use 'midpoint' or 'generalized-alpha' "
                    "(sparse LU) for this model")
        if not term.linear:
            return f"method 'exact' integrates linear equations only; {term.name!r} is nonlinear"
        try:
            term.linear_system()
        except ValueError as err:
            return f"method 'exact' needs a linear term with constant coefficients (a steady prescribed frame): {err}"
        for j, f in enumerate(term.load_functions):
            if f is not None and not isinstance(f, Harmonic):
                return ("method 'exact' integrates constant loads and harmonic ones (flexmbs.signals.Harmonic: "
                        f"amplitude sin(omega t + phase)) exactly; load {j} has the time function {f!r}. Give it "
                        "as Harmonic(omega, amplitude, phase), or use another method")
        return None

    def _setup(self) -> None:
        A, c, B, loads = _exact_arrays(self.term)
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

    # -- outputs in blocks (used by `simulate`) ----------------------------------------------------
    def outputs(self, t_eval: np.ndarray, integrand=None) -> tuple[np.ndarray, np.ndarray | None]:
        """States at every time of ``t_eval`` (sorted, within [t0, t_end]) and the integrals
        of ``integrand`` from t0 to each, (n_out, n_state) and (n_out, k) or None: the blocks
        of `output_blocks` joined."""
        xs, ws = [], []
        for _, x, w in self.output_blocks(t_eval, integrand):
            xs.append(x)
            ws.append(w)
        X = np.concatenate(xs) if xs else np.zeros((0, self._aug.n))
        if integrand is None:
            return X, None
        return X, (np.concatenate(ws) if ws else np.zeros((0, 0)))

    def output_blocks(self, t_eval: np.ndarray, integrand=None, block: int | None = None):
        """Yield (t, x, integrals) block by block: the states (N, n_state) at the next N times
        of ``t_eval`` and the integrals of ``integrand`` from t0 to each (N, k), or None.

        ``block`` (outputs per block) defaults to FIRST_BLOCK outputs first, each next block
        twice as many up to what fits in BLOCK_BYTES of quadrature states, at most
        BLOCK_OUTPUTS (the first outputs reach the file within a second of the start).  Outputs at the start time come first, in a block of
        their own, before the quadratic forms and the quadrature rules are set up.  A block
        that reaches an unbounded or non-finite state ends with the last bounded output and
        sets ``status`` "diverged" or "failed"; else the last sets "finished".  The memory is
        that of one block, whatever the number of outputs.
        """
        aug = self._aug
        t_eval = np.asarray(t_eval, dtype=float)
        keys = _step_keys(np.diff(np.concatenate([[self.t0], t_eval])),
                          max(abs(self.t0), abs(float(t_eval[-1])) if len(t_eval) else 0.0))
        rules: dict[float, _Quadrature] = {}
        total, forms = None, None
        if integrand is not None:                               # the integrand's number of values
            width = _evaluate(integrand, np.array([self.t]), self.x[None, :]).shape[1]
            total = np.zeros(width)
        self.n_steps = 0
        lead = int(np.searchsorted(t_eval, self.t, side="right"))
        if lead:                            # outputs at the start: handed on before the set-up below
            yield t_eval[:lead], np.repeat(self.x[None, :], lead, axis=0), None if total is None else \
                np.zeros((lead, total.size))
        if integrand is not None:
            forms = self._forms(integrand, total.size)
        bound = self._block_size(keys, integrand if forms is None else None, rules) if block is None else block
        for start, stop in _block_bounds(lead, len(t_eval), bound, bound if block is not None else FIRST_BLOCK):
            t_prev = self.t
            grid = np.concatenate([[t_prev], t_eval[start:stop]])
            steps, bkeys = np.diff(grid), keys[start:stop]
            Z = self._propagate(bkeys, steps)
            aug.set_forcing(Z, grid)
            end = self._bounded(Z, grid)
            grid, steps, bkeys, Z = grid[:end], steps[:end - 1], bkeys[:end - 1], Z[:end]
            self.n_steps += int(np.count_nonzero(steps))
            self.t, self.x, self._z = float(grid[-1]), Z[-1, :aug.n].copy(), Z[-1].copy()
            W = None
            if forms is not None and start == lead:
                forms = self._checked(forms, integrand, grid, Z)
            if integrand is not None:
                W = total + np.cumsum(self._integrals(grid, steps, bkeys, Z, integrand, rules, total.size, forms),
                                      axis=0)
                total = W[-1] if len(W) else total
            if len(grid) > 1:
                yield grid[1:], Z[1:, :aug.n], W
            if self.status != "running":
                return
        self.status, self.message = "finished", f"Reached t_end = {self.t_end:.6g}."

    def _block_size(self, keys, integrand, rules) -> int:
        """Outputs per block: BLOCK_BYTES over the memory of one output (its state and, with an
        integrand, the states at its quadrature points), at most BLOCK_OUTPUTS."""
        per_output = 8 * self._aug.dim
        positive = keys[keys > 0]
        if integrand is not None and len(positive):
            h = float(np.max(positive))
            rules[h] = self._aug.quadrature(h)
            per_output += rules[h].bytes_per_step()
        return int(max(1, min(BLOCK_OUTPUTS, BLOCK_BYTES // per_output)))

    def _propagate(self, keys, steps) -> np.ndarray:
        """Augmented states z at the block's grid (its first row the current state), eq. (1)."""
        aug = self._aug
        Z = np.empty((len(steps) + 1, aug.dim))
        Z[0] = self._z
        with np.errstate(all="ignore"):         # an unstable model: reported by _bounded
            for i, key in enumerate(keys):
                Z[i + 1] = Z[i] if steps[i] == 0.0 else aug.phi(key) @ Z[i]
        return Z

    def _bounded(self, Z, grid) -> int:
        """Rows of Z to keep: all, or those before the first unbounded (> divergence_limit) or
        non-finite state, which sets ``status`` and ``message``."""
        size = np.max(np.abs(Z[:, :self._aug.n]), axis=1, initial=0.0)
        bad = np.flatnonzero(~np.isfinite(size) | (size > self.divergence_limit))
        if not len(bad):
            return len(grid)
        end = int(bad[0])
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
        return end

    def _forms(self, integrand, width: int) -> np.ndarray | None:
        """Q (width, dim, dim) with integrand = z^T Q_c z: the forms it declares (a
        ``forms(X, F, one)`` attribute, `declared_forms`), else, if it declares itself a
        quadratic polynomial of the state and the load factors (an ``of_loads(x, f)``
        attribute) with at most MAX_FORM_SIZE active components, by polarization
        (`quadratic_forms`); else None."""
        if callable(getattr(integrand, "forms", None)):
            return declared_forms(self._aug, integrand.forms, width)
        of_loads = getattr(integrand, "of_loads", None)
        if not callable(of_loads) or self._aug.n + len(self._aug.i_sin) > MAX_FORM_SIZE:
            return None
        return quadratic_forms(self._aug, of_loads, width)

    def _checked(self, forms, integrand, grid, Z) -> np.ndarray | None:
        """``forms`` if z^T Q_c z equals the integrand at the first block's outputs (to
        FORM_CHECK_RTOL of its size), else None (with a warning naming where the forms came
        from: the Gauss points are used)."""
        direct = _evaluate(integrand, grid, Z[:, :self._aug.n])
        via = np.einsum("cia,ia->ic", Z @ forms, Z)
        scale = np.abs(direct).max(axis=0) + np.abs(via).max(axis=0) + 1e-300
        if np.all(np.abs(direct - via).max(axis=0) <= FORM_CHECK_RTOL * scale):
            return forms
        import warnings
        source = ("declared by its `forms`" if callable(getattr(integrand, "forms", None))
                  else "polarized from its `of_loads`")
        warnings.warn(f"method 'exact': the integrand's quadratic forms ({source}) differ from the integrand by "
                      f"{np.max(np.abs(direct - via) / scale):.3g} of its size at the first outputs (more than "
                      f"{FORM_CHECK_RTOL:g}); integrating it at Gauss points instead.", stacklevel=4)
        return None

    def _rule(self, rules, key: float) -> "_Quadrature":
        """The quadrature of step size ``key`` from ``rules`` (a few kept), built if missing."""
        rule = rules.get(key)
        if rule is None:
            if len(rules) >= 4:
                rules.clear()
            rule = rules[key] = self._aug.quadrature(key)
        return rule

    def _integrated_forms(self, rules, key: float, forms) -> np.ndarray:
        """G_c of `_Quadrature.integrated_forms` for the step size ``key``, kept in ``rules``
        (under ("forms", key)) with a Gauss rule of THETA_FORMS per part, parts summed by doubling."""
        G = rules.get(("forms", key))
        if G is None:
            if len(rules) >= 4:
                rules.clear()
            G = rules[("forms", key)] = self._aug.quadrature(key, THETA_FORMS, doubling=True).integrated_forms(forms)
        return G

    def _integrals(self, grid, steps, keys, Z, integrand, rules, width: int, forms=None) -> np.ndarray:
        """Integral over each interval [grid[i], grid[i + 1]] by Gauss-Legendre on the exact
        solution, (n_intervals, width); ``rules`` caches the quadrature of each step size.
        With ``forms`` Q, each is z(t_a)^T G_c z(t_a) (`_Quadrature.integrated_forms`)."""
        out = np.zeros((len(steps), width))
        for key in sorted_unique(keys[steps > 0]):
            idx = np.flatnonzero((keys == key) & (steps > 0))
            if forms is not None:
                out[idx] = np.einsum("cia,ia->ic", Z[idx] @ self._integrated_forms(rules, float(key), forms), Z[idx])
                continue
            rule = self._rule(rules, float(key))
            X = rule.states(Z[idx]).reshape(-1, self._aug.n)                             # (i, p, a) rows
            T = (grid[idx][:, None] + rule.tau[None, :]).ravel()
            values = _evaluate(integrand, T, X).reshape(len(idx), len(rule.tau), width)
            out[idx] = np.einsum("ipk,p->ik", values, rule.weights)
        return out


def _block_bounds(start: int, end: int, bound: int, first: int):
    """(start, stop) of the blocks from ``start`` to ``end``: ``first`` outputs, then twice as
    many each time up to ``bound``."""
    size = max(1, min(first, bound))
    while start < end:
        yield start, min(end, start + size)
        start += size
        size = min(bound, 2 * size)


def declared_forms(aug: _Augmented, forms, width: int) -> np.ndarray:
    """Q (width, dim, dim) of an integrand that declares its quadratic forms: ``forms(X, F,
    one)`` gives Q_c with integrand = y^T Q_c y for the state x = X y, the load factors
    f = F y and one . y = 1; here y = z, the augmented state (x = z[:n], f_j = a_j s_i or 1,
    `_Augmented.load_factors`, and 1 = z[-1])."""
    X = np.eye(aug.n, aug.dim)
    F = np.zeros((len(aug.load_index), aug.dim))
    F[np.arange(len(aug.load_index)), aug.load_index] = aug.load_scale
    one = np.zeros(aug.dim)
    one[-1] = 1.0
    Q = np.asarray(forms(X, F, one), dtype=float)
    if Q.shape != (width, aug.dim, aug.dim):
        raise ValueError(f"the integrand's `forms` must give {width} matrices of {aug.dim} x {aug.dim} (one per "
                         f"value of the integrand), got shape {Q.shape}")
    return Q


def quadratic_forms(aug: _Augmented, of_loads, width: int, chunk: int = 2048) -> np.ndarray:
    """Q (width, dim, dim), symmetric, with of_loads(x, f) = z^T Q_c z for augmented states
    z = (x, s, r, 1) (f from z: `_Augmented.load_factors`), by polarization of the quadratic
    polynomial g(y) = y^T Q_yy y + 2 q^T y + c of the active components y = (x, s):

    .. code:: text

        c = g(0),   Q_aa = (g(e_a) + g(-e_a)) / 2 - c,   q_a = (g(e_a) - g(-e_a)) / 4,
        Q_ab = (g(e_a + e_b) - g(e_a) - g(e_b) + c) / 2                     (a != b)

    (exact for a quadratic, up to round-off; 1 + p (p + 3) / 2 evaluations for p active
    components, in chunks of ``chunk``).
    """
    active = np.concatenate([np.arange(aug.n), aug.i_sin])
    p = len(active)

    def g(Y):
        Z = np.zeros((len(Y), aug.dim))
        Z[:, active] = Y
        Z[:, -1] = 1.0
        return np.asarray(of_loads(Z[:, :aug.n], aug.load_factors(Z)), dtype=float).reshape(len(Y), width)

    c = g(np.zeros((1, p)))[0]
    plus, minus = g(np.eye(p)), g(-np.eye(p))                                    # (p, width)
    Qyy = np.zeros((width, p, p))
    ia, ib = np.triu_indices(p, 1)
    for s in range(0, len(ia), chunk):
        a, b = ia[s:s + chunk], ib[s:s + chunk]
        Y = np.zeros((len(a), p))
        Y[np.arange(len(a)), a] = 1.0
        Y[np.arange(len(a)), b] = 1.0
        off = 0.5 * (g(Y) - plus[a] - plus[b] + c)
        Qyy[:, a, b] = Qyy[:, b, a] = off.T
    Qyy[:, np.arange(p), np.arange(p)] = (0.5 * (plus + minus) - c).T
    Q = np.zeros((width, aug.dim, aug.dim))
    Q[:, active[:, None], active[None, :]] = Qyy
    Q[:, active, -1] = Q[:, -1, active] = (0.25 * (plus - minus)).T
    Q[:, -1, -1] = c
    return Q


def _step_keys(steps: np.ndarray, t_max: float = 0.0) -> np.ndarray:
    """Step sizes with round-off differences removed (one expm for all): a step equal to the
    first to 12 digits, or to the round-off of a difference of two times up to ``t_max``
    (16 eps t_max: at t = 5 s and steps of 1e-4 s that is 1.8e-11 of the step, which would
    otherwise make each step a new step size, with its own expm and quadrature)."""
    keys = steps.copy()
    pos = steps > 0
    if np.any(pos):
        ref = steps[pos][0]
        same = pos & (np.abs(steps - ref) <= max(1e-12 * ref, 16 * np.finfo(float).eps * abs(t_max)))
        keys[same] = ref
    return keys


def _evaluate(integrand, t: np.ndarray, x: np.ndarray, chunk: int = 50_000) -> np.ndarray:
    """integrand at many (t, x): one call per chunk if it is vectorised, else one per point."""
    if getattr(integrand, "vectorized", False):
        parts = [np.asarray(integrand(t[i:i + chunk], x[i:i + chunk]), dtype=float).reshape(len(t[i:i + chunk]), -1)
                 for i in range(0, len(t), chunk)]
        return np.concatenate(parts)
    return np.array([np.atleast_1d(np.asarray(integrand(ti, xi), dtype=float)) for ti, xi in zip(t, x)])


def modal_response(formulation, x0, t, t0: float = 0.0, chunk: int = 4096) -> np.ndarray:
    """x(t) (n_t, n_state) of x' = A x + c + B f(t) by the eigenvectors of A (an independent
    route to the solution of method "exact").

    .. code:: text

        x(t) = x_s + sum_j Im[(i Omega_j I - A)^-1 a_j b_j e^{i (Omega_j t + phi_j)}]
               + V exp(Lambda (t - t0)) V^-1 (x0 - x_part(t0)),      x_s = -A^-1 (c + sum_const b_j)

    A must be diagonalisable with well-conditioned eigenvectors (distinct eigenvalues, as the
    modes of a finite element model) and no i Omega_j may be an eigenvalue (resonance).
    The times are taken ``chunk`` at a time (`modal_chunks`; memory bounded by the chunk).
    """
    t = np.atleast_1d(np.asarray(t, dtype=float))
    out = np.empty((len(t), np.asarray(x0).shape[-1]))
    for i, x in zip(range(0, len(t), chunk), modal_chunks(formulation, x0, t, t0, chunk)):
        out[i:i + len(x)] = x
    return out


def modal_chunks(formulation, x0, t, t0: float = 0.0, chunk: int = 4096):
    """Yield x(t) of `modal_response` for ``chunk`` times at a time (one eigendecomposition
    for all): what a caller that reduces each chunk keeps in memory is one chunk."""
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
    for i in range(0, len(t), chunk):                 # complex temporaries of one chunk of times
        tc = t[i:i + chunk]
        yield part_real(tc) + ((np.exp(np.multiply.outer(tc - t0, lam)) * coef) @ V.T).real


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
    # the solution and its displacement field a chunk of outputs at a time: only the node's kept
    u_ref = np.concatenate([model.displacement_field(x[:, :form.n])[:, node, component]
                            for x in modal_chunks(form, x0, results.t, t0=float(results.t[0]))])
    u = results.displacement[:, node, component]
    return float(np.max(np.abs(u - u_ref)) / np.max(np.abs(u_ref)))
