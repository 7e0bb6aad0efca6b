"""Is a model stiff for an explicit method?  An estimate before the run, not after hours.

An undamped model's eigenvalues are +-i omega_k; an explicit method with step h is stable
only while h omega_max lies in its stability region, on the imaginary axis up to beta:

.. code:: text

    h <= beta / omega_max,     steps >= omega_max (t_end - t0) / beta

omega_max^2 is the largest eigenvalue of M^-1 ([k] + K_geo(t0)), estimated by power iterations
(a lower bound that converges from below: a few tens of iterations give it within a few per
cent, enough for an order of magnitude of the number of steps).  beta is computed from the
method's own coefficients: the stability function R(z) = 1 + z b^T (I - z A)^-1 1 of an
explicit Runge-Kutta tableau (RK45, DOP853: scipy's), and the root condition of
rho(zeta) - z sigma(zeta) for Adams-Bashforth 4; the first y > 0 where |R(i y)| > 1
(resp. a root leaves the unit disk) is beta.

References
----------
.. [1] E. Hairer, G. Wanner, Solving Ordinary Differential Equations II, 2nd ed., Springer
       (1996), secs. IV.2-IV.3 and V.1, doi:10.1007/978-3-642-05221-7.
"""
from __future__ import annotations

import logging
import warnings
from functools import lru_cache

import numpy as np
from .lazy import LazyModule

sparse = LazyModule("scipy.sparse")

__all__ = ["StiffnessWarning", "largest_frequency", "system_largest_frequency", "imaginary_stability_limit",
           "explicit_steps", "check_explicit"]

log = logging.getLogger(__name__)

EXPLICIT = ("RK45", "DOP853", "AB4")
WARN_STEPS = 1_000_000


class StiffnessWarning(UserWarning):
    """The model is stiff for the explicit method chosen."""


def largest_frequency(model, t: float = 0.0, iterations: int = 40, seed: int = 0) -> float:
    """Estimate of omega_max [rad/s]: sqrt of the largest eigenvalue of M^-1 ([k] + K_geo(t)).

    Power iterations on M^-1 K; the mass solves by Jacobi-preconditioned conjugate gradients
    for sparse models (M is well conditioned), by Cholesky for dense ones.
    """
    K = model.K_total(t)
    M = model.M
    n = M.shape[0]
    if n <= 400:
        from scipy.linalg import eigh
        Md = M.toarray() if sparse.issparse(M) else np.asarray(M)
        Kd = K.toarray() if sparse.issparse(K) else np.asarray(K)
        lam = eigh(0.5 * (Kd + Kd.T), Md, eigvals_only=True)
        return float(np.sqrt(max(lam[-1], 0.0)))
    from scipy.sparse.linalg import LinearOperator, cg
    Msp = sparse.csr_array(M)
    dinv = 1.0 / Msp.diagonal()
    P = LinearOperator((n, n), matvec=lambda x: dinv * x, dtype=float)
    v = np.random.default_rng(seed).standard_normal(n)
    lam = 0.0
    for _ in range(iterations):
        y = K @ v
        x, _info = cg(Msp, y, rtol=1e-8, maxiter=200, M=P)
        lam_new = float(v @ (Msp @ x)) / float(v @ (Msp @ v))     # Rayleigh quotient in the M norm
        v = x / np.linalg.norm(x)
        if lam and abs(lam_new - lam) <= 1e-3 * lam:
            lam = lam_new
            break
        lam = lam_new
    return float(np.sqrt(max(lam, 0.0)))


def _rk_stability(A: np.ndarray, b: np.ndarray, z: complex) -> complex:
    s = len(b)
    return 1.0 + z * (b @ np.linalg.solve(np.eye(s) - z * A, np.ones(s)))


@lru_cache(maxsize=None)
def imaginary_stability_limit(method: str) -> float:
    """beta: the explicit method is stable for h omega in (0, beta] on the imaginary axis."""
    ys = np.linspace(1e-3, 8.0, 8001)
    if method in ("RK45", "DOP853"):
        from scipy import integrate
        cls = getattr(integrate, method)
        A = np.asarray(cls.A, dtype=float)
        b = np.asarray(cls.B, dtype=float)
        s = len(b)
        A = np.pad(A, ((0, s - A.shape[0]), (0, s - A.shape[1])))[:s, :s]
        bad = [abs(_rk_stability(A, b, 1j * y)) > 1.0 + 1e-12 for y in ys]
    elif method == "AB4":
        rho = np.array([1.0, -1.0, 0.0, 0.0, 0.0])                   # zeta^4 - zeta^3
        sigma = np.array([0.0, 55.0, -59.0, 37.0, -9.0]) / 24.0       # (55 z^3 - 59 z^2 + 37 z - 9)/24
        bad = [np.abs(np.roots(rho - 1j * y * sigma)).max() > 1.0 + 1e-9 for y in ys]
    else:
        raise ValueError(f"`method` must be one of {list(EXPLICIT)}, got {method!r}")
    first = int(np.argmax(bad)) if any(bad) else len(ys) - 1
    return float(ys[max(first - 1, 0)])


def explicit_steps(model, method: str, t_span: tuple[float, float], omega_max: float | None = None):
    """(omega_max, beta, minimum number of stable steps over t_span)."""
    w = largest_frequency(model, t_span[0]) if omega_max is None else omega_max
    beta = imaginary_stability_limit(method)
    return w, beta, w * abs(t_span[1] - t_span[0]) / beta


def system_largest_frequency(system, t: float = 0.0) -> tuple[float, str] | None:
    """(omega_max, body name) over the flexible bodies of a `System`: the largest of their Models'
    `largest_frequency` (constraints only remove coordinates, so this bounds the constrained
    system's highest frequency to the order of magnitude that matters here).  None without a
    body that has a finite element `Model`."""
    best = None
    for body in system.bodies:
        model = getattr(body, "model", None)
        if model is None or not (hasattr(model, "K_total") and hasattr(model, "M")):
            continue
        w = largest_frequency(model, t)
        if best is None or w > best[0]:
            best = (w, body.name)
    return best


def check_explicit(model, method: str, t_span: tuple[float, float], warn_steps: int | None = None):
    """Warn (StiffnessWarning) when the explicit ``method`` needs more than ``warn_steps`` steps
    (default `WARN_STEPS`) for stability alone; returns the estimated number of steps (None for
    implicit methods and for systems without a flexible body).  ``model`` is a `Model` or a
    `System`, whose flexible bodies' Models give omega_max (`system_largest_frequency`)."""
    if method not in EXPLICIT:
        return None
    warn_steps = WARN_STEPS if warn_steps is None else warn_steps
    if hasattr(model, "K_total") and hasattr(model, "M"):
        what, advice = "this model is stiff", "use midpoint or generalized-alpha"
        w = largest_frequency(model, t_span[0])
    elif hasattr(model, "bodies"):
        found = system_largest_frequency(model, t_span[0])
        if found is None:
            return None
        w, name = found
        what, advice = f"this system is stiff (its flexible body {name!r})", "use index3-alpha"
    else:
        return None
    w, beta, steps = explicit_steps(model, method, t_span, omega_max=w)
    if steps > warn_steps:
        msg = (f"{what}: {advice}. Its highest frequency is "
               f"about {w:.3g} rad/s, so {method} is stable only for steps h <= {beta:.3g}/omega_max "
               f"= {beta / w:.3g} s: at least {steps:.3g} steps for t = {t_span[0]:g} .. {t_span[1]:g} s")
        log.warning(msg)
        warnings.warn(msg, StiffnessWarning, stacklevel=3)
    return steps
