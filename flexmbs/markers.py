"""Measured marker kinematics -> the prescribed motion of a body frame, by smoothing splines.

A CSV of marker records (columns ``t, x1, y1, x2, y2, ...``, at least two markers fixed
on one body) becomes a `flexmbs.motion.PlanarMotion`:

1. **Pose at each record** (least squares, 2D Procrustes).  With the markers' body-frame
   coordinates b_i and their records x_i(t), the pose (r_O, theta) minimises
   sum_i |r_O + R(theta) b_i - x_i|^2:

   .. code:: text

       theta = atan2(sum_i (b_i - b_mean) x (x_i - x_mean), sum_i (b_i - b_mean) . (x_i - x_mean))
       r_O = x_mean - R(theta) b_mean

   (unwrapped in time).  By default marker 1 is the origin and the x axis points to
   marker 2; further markers get their mean body coordinates in that frame.
2. **Smoothing** of each pose channel x_O(t), y_O(t), theta(t) by a cubic smoothing spline,

   .. code:: text

       minimise  sum_i (y_i - g(t_i))^2 + lam int g''(t)^2 dt

   with ``lam`` chosen by **generalized cross-validation** [1]_ [2]_:
   GCV(lam) = n RSS(lam) / tr(I - A(lam))^2, A the hat matrix, minimised over log(lam).
   The spline is computed by Reinsch's algorithm and diag(I - A) exactly from the band of
   (R + lam Q^T Q)^-1 [3]_.  Two rules, applied in turn:

   a. **Interior GCV** (the position-optimal bandwidth b0): GCV summed over the records more
      than 6 bandwidths from the ends, where the natural end conditions cannot bias it.
   b. **Acceleration bandwidth** (``target="acceleration"``, the default for motions).  The
      spline acts like a kernel smoother with transfer function 1 / (1 + (b w)^4) and
      bandwidth b = (lam dt)^(1/4) [4]_, so for white noise of variance sigma^2 the mean square
      errors of g and g'' are (G_k = mean of the squared k-th derivative of the signal)

      .. code:: text

          MSE_0(b) = b^8 G_4 + 3 sqrt(2) sigma^2 dt / (16 b)
          MSE_2(b) = b^8 G_6 + sqrt(2) sigma^2 dt / (16 b^5)

      GCV estimates the minimiser b0 of MSE_0; with omega_s^4 = G_6 / G_4 (the signal's
      effective frequency) the minimiser of MSE_2 is b2 = ((5/3) b0^9 / omega_s^4)^(1/13).
      omega_s^2 is estimated as mean(g''^2) / var(g') of a pilot fit with bandwidth 2 b0.
      GCV alone undersmooths accelerations: on the sample records it leaves about three
      times their error (tests/test_markers.py).

   The report gives per channel the rule, lam, the equivalent degrees of freedom tr A, the
   noise estimate sigma = sqrt(RSS / tr(I - A)) and the bandwidth b.
3. **Derivatives**: v_O, a_O, omega = theta', eps = theta'' are the splines' derivatives.

The solution of the smoothing problem is a *natural* spline (g'' = 0 at both ends), so the
accelerations are biased near the ends of the record: the motion is meant to be used in
``valid_window``, the record without ``margin`` bandwidths at each end (default 8;
tests/test_markers.py measures the bias).

NOTE: ``scipy.interpolate.make_smoothing_spline(lam=None)`` minimises GCV over lam in
[0, n] on a linear scale, which misses the optimum for records in seconds sampled at
hundreds of Hz (lam ~ 1e-9 s^3) and smooths far too much; hence the search here over log(lam).

References
----------
.. [1] P. Craven, G. Wahba, Smoothing noisy data with spline functions, Numer. Math. 31
       (1979) 377-403, doi:10.1007/BF01404567.
.. [2] P. J. Green, B. W. Silverman, Nonparametric Regression and Generalized Linear Models,
       Chapman & Hall (1994), secs. 2.3 (Reinsch algorithm) and 3.3 (GCV),
       doi:10.1201/b15710.
.. [3] M. F. Hutchinson, F. R. de Hoog, Smoothing noisy data with spline functions, Numer.
       Math. 47 (1985) 99-106, doi:10.1007/BF01389878.
.. [4] B. W. Silverman, Spline smoothing: the equivalent variable kernel method, Ann. Statist.
       12 (1984) 898-916, doi:10.1214/aos/1176346710.
"""
from __future__ import annotations

import bisect
import csv
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.linalg import cholesky_banded, cho_solve_banded
from scipy.optimize import minimize_scalar

from .motion import PlanarMotion
from .rotations import rotation_2d

__all__ = ["MarkerRecords", "read_markers", "write_markers", "rigid_pose", "SmoothingSpline",
           "smoothing_spline", "MarkerMotion", "marker_motion"]

log = logging.getLogger(__name__)


# -- records ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MarkerRecords:
    """Marker positions over time: t (n_t,) [s], xy (n_t, n_markers, 2) [m] (global)."""

    t: np.ndarray
    xy: np.ndarray

    def __post_init__(self):
        t, xy = np.asarray(self.t, dtype=float), np.asarray(self.xy, dtype=float)
        if t.ndim != 1 or len(t) < 8:
            raise ValueError(f"`t` must be 1D with at least 8 records, got shape {t.shape}")
        if np.any(np.diff(t) <= 0) or not np.all(np.isfinite(t)):
            raise ValueError("`t` must be finite and strictly increasing")
        if xy.ndim != 3 or xy.shape[0] != len(t) or xy.shape[2] != 2 or xy.shape[1] < 2:
            raise ValueError(f"`xy` must have shape ({len(t)}, n_markers >= 2, 2), got {xy.shape}")
        if not np.all(np.isfinite(xy)):
            raise ValueError("`xy` has missing or non-finite records; fill or drop them first")
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "xy", xy)

    @property
    def n_markers(self) -> int:
        return self.xy.shape[1]


def read_markers(path) -> MarkerRecords:
    """Records from a CSV with a header ``t, x1, y1, x2, y2, ...`` (lines starting with # are
    comments); units m and s."""
    path = Path(path)
    rows, header = [], None
    with open(path, newline="") as f:
        for row in csv.reader(line for line in f if not line.lstrip().startswith("#")):
            if not row:
                continue
            if header is None:
                header = [c.strip() for c in row]
                continue
            rows.append([float(c) for c in row])
    if header is None or len(header) < 5 or (len(header) - 1) % 2 or header[0] != "t":
        raise ValueError(f"{path}: the header must be t, x1, y1, x2, y2, ... (two or more markers), "
                         f"got {header}")
    data = np.array(rows, dtype=float)
    if data.ndim != 2 or data.shape[1] != len(header):
        raise ValueError(f"{path}: every row must have {len(header)} values")
    return MarkerRecords(data[:, 0], data[:, 1:].reshape(len(data), -1, 2))


def write_markers(path, records: MarkerRecords, comment: str = "") -> Path:
    """Write records as CSV (header t, x1, y1, ...; ``comment`` lines prefixed by #)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    m = records.n_markers
    with open(path, "w", newline="") as f:
        for line in comment.splitlines():
            f.write(f"# {line}\n")
        w = csv.writer(f)
        w.writerow(["t"] + [f"{c}{k + 1}" for k in range(m) for c in "xy"])
        for t, xy in zip(records.t, records.xy):
            w.writerow([f"{t:.6f}"] + [f"{v:.7e}" for v in xy.ravel()])
    return path


def rigid_pose(xy: np.ndarray, body: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares pose of a rigid marker set: r_O (n_t, 2) and unwrapped theta (n_t,).

    ``xy``: (n_t, m, 2) records; ``body``: (m, 2) the markers' body-frame coordinates.
    """
    xy, body = np.asarray(xy, dtype=float), np.asarray(body, dtype=float)
    b = body - body.mean(axis=0)
    x = xy - xy.mean(axis=1, keepdims=True)
    s = np.sum(b[None, :, 0] * x[..., 1] - b[None, :, 1] * x[..., 0], axis=1)
    c = np.sum(b[None, :, 0] * x[..., 0] + b[None, :, 1] * x[..., 1], axis=1)
    theta = np.unwrap(np.arctan2(s, c))
    R = rotation_2d(theta)
    r_O = xy.mean(axis=1) - R @ body.mean(axis=0)
    return r_O, theta


# -- smoothing spline with GCV ----------------------------------------------------------------------
@dataclass(frozen=True)
class SmoothingSpline:
    """A cubic smoothing spline and how its smoothing was chosen.

    spline: scipy CubicSpline (natural); lam [unit^2 s^3]; dof = tr A (equivalent number of
    parameters); bandwidth = (lam dt)^(1/4) [s]; rule: "gcv", "gcv+acceleration" or "given";
    sigma: noise estimate sqrt(RSS / tr(I - A)) over the interior records at the GCV choice
    (at the given lam for rule "given"); bandwidth_gcv: the GCV bandwidth b0.
    """

    spline: CubicSpline
    lam: float
    dof: float
    sigma: float
    bandwidth: float
    rule: str
    bandwidth_gcv: float = float("nan")

    def __call__(self, t, nu: int = 0):
        return self.spline(t, nu)


def _reinsch(t, y):
    """Banded Q^T Q, R and Q^T y of Reinsch's algorithm [2]_ (upper banded storage, 3 rows)."""
    h = np.diff(t)
    m = len(t) - 2
    a, b, c = 1.0 / h[:-1], -1.0 / h[:-1] - 1.0 / h[1:], 1.0 / h[1:]      # column j of Q: rows j, j+1, j+2
    QtQ = np.zeros((3, m))
    QtQ[2] = a * a + b * b + c * c
    # rows of Q shared by columns j and j+1: row j+1 (b_j, a_{j+1}) and row j+2 (c_j, b_{j+1});
    # by columns j and j+2: row j+2 (c_j, a_{j+2})
    QtQ[1, 1:] = b[:-1] * a[1:] + c[:-1] * b[1:]
    QtQ[0, 2:] = c[:-2] * a[2:]
    R = np.zeros((3, m))
    R[2] = (h[:-1] + h[1:]) / 3.0
    R[1, 1:] = h[1:-1] / 6.0
    Qty = a * y[:-2] + b * y[1:-1] + c * y[2:]
    return QtQ, R, Qty, (a, b, c)


def _band_inverse(U):
    """Band (Sigma_ii, Sigma_i,i+1, Sigma_i,i+2) of B^-1 for B = U^T U (U upper banded, 2
    superdiagonals, from cholesky_banded), by the recursion of Hutchinson and de Hoog [3]_."""
    m = U.shape[1]
    d, e1, e2 = U[2].tolist(), U[1].tolist() + [0.0], U[0].tolist() + [0.0, 0.0]   # u_ii, u_i,i+1, u_i,i+2
    s0 = [0.0] * (m + 2)
    s1 = [0.0] * (m + 2)
    s2 = [0.0] * (m + 2)          # Sigma_ii, Sigma_i,i+1, Sigma_i,i+2
    for i in range(m - 1, -1, -1):
        u0 = d[i]
        u1 = e1[i + 1] if i + 1 < m else 0.0
        u2 = e2[i + 2] if i + 2 < m else 0.0
        # storage: U[1, j] = u_{j-1, j}, U[0, j] = u_{j-2, j}
        s2[i] = -(u1 * s1[i + 1] + u2 * s0[i + 2]) / u0
        s1[i] = -(u1 * s0[i + 1] + u2 * s1[i + 1]) / u0
        s0[i] = (1.0 / u0 - u1 * s1[i] - u2 * s2[i]) / u0
    return np.array(s0[:m]), np.array(s1[:m]), np.array(s2[:m])


def _hat_complement_diagonal(lam, band, q):
    """diag(I - A) = lam diag(Q B^-1 Q^T), from the band of B^-1 and the columns (a, b, c) of Q."""
    s0, s1, s2 = band
    a, b, c = q
    m = len(a)
    n = m + 2
    # row r of Q: c_{r-2} (column r-2), b_{r-1} (column r-1), a_r (column r)
    qa, qb, qc = np.zeros(n), np.zeros(n), np.zeros(n)
    qa[:m], qb[1:m + 1], qc[2:] = a, b, c
    S0 = np.zeros(n + 2)
    S1 = np.zeros(n + 2)
    S2 = np.zeros(n + 2)
    S0[2:m + 2], S1[2:m + 2], S2[2:m + 2] = s0, s1, s2       # shifted: index j + 2 holds column j
    r = np.arange(n)
    jc, jb, ja = r, r + 1, r + 2                           # shifted column indices r-2, r-1, r
    d = (qc**2 * S0[jc] + qb**2 * S0[jb] + qa**2 * S0[ja]
         + 2.0 * qc * qb * S1[jc] + 2.0 * qb * qa * S1[jb] + 2.0 * qc * qa * S2[jc])
    return lam * d


def smoothing_spline(t, y, lam: float | None = None, target: Literal["acceleration", "position"] = "acceleration",
                     interior: float = 6.0) -> SmoothingSpline:
    """Cubic smoothing spline of (t, y); ``lam`` by GCV when None (module docstring).

    GCV is evaluated on the interior records, more than ``interior`` kernel bandwidths
    (lam dt)^(1/4) from the ends of the record, with the exact diagonal of the hat matrix:
    there the natural end conditions g'' = 0 do not bias the fit, which would otherwise
    make GCV choose too little smoothing (interior = 0: the classical GCV of all records).

    ``target="position"`` keeps the GCV choice b0 (best for g itself); ``"acceleration"``
    (default) then widens the bandwidth to the one that minimises the asymptotic mean
    square error of g'' (module docstring, rule 2b): b2 = ((5/3) b0^9 / omega_s^4)^(1/13).

    >>> t = np.linspace(0.0, 1.0, 201)
    >>> s = smoothing_spline(t, np.sin(2 * np.pi * t) + 1e-3 * np.cos(97.0 * t**2))
    >>> bool(abs(s(0.5, 2) - 0.0) < 1.0)
    True
    """
    t, y = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    if t.ndim != 1 or y.shape != t.shape or len(t) < 5:
        raise ValueError(f"`t` and `y` must be 1D of the same length >= 5, got {t.shape} and {y.shape}")
    n = len(t)
    QtQ, R, Qty, q = _reinsch(t, y)
    a, b, c = q
    dt = float(np.mean(np.diff(t)))

    def solve(lam_):
        U = cholesky_banded(R + lam_ * QtQ)
        gamma = cho_solve_banded((U, False), Qty)
        Qg = np.zeros(n)                           # Q gamma
        Qg[:-2] += a * gamma
        Qg[1:-1] += b * gamma
        Qg[2:] += c * gamma
        return U, lam_ * Qg                        # residual y - g = lam Q gamma

    def interior_sums(lam_):
        """RSS and tr(I - A) over the interior records, and their number."""
        U, r = solve(lam_)
        d = _hat_complement_diagonal(lam_, _band_inverse(U), q)     # diag(I - A)
        keep = np.abs(t - 0.5 * (t[0] + t[-1])) <= 0.5 * (t[-1] - t[0]) - interior * (lam_ * dt) ** 0.25
        return float(r[keep] @ r[keep]), float(d[keep].sum()), int(keep.sum())

    def gcv(log_lam):
        rss, tr, k = interior_sums(np.exp(log_lam))
        return k * rss / tr**2 if k >= max(10, n // 10) and tr > 0 else np.inf

    rule = "given"
    if lam is None:
        rule = "gcv"
        # bandwidths (lam dt)^(1/4) from 0.3 sample spacings to a tenth of the record
        lo, hi = np.log((0.3 * dt) ** 4 / dt), np.log((0.1 * (t[-1] - t[0])) ** 4 / dt)
        grid = np.linspace(lo, hi, 41)
        values = np.array([gcv(g) for g in grid])
        k = int(np.argmin(values))
        a_, b_ = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
        best = minimize_scalar(gcv, bounds=(a_, b_), method="bounded", options={"xatol": 1e-3})
        lam = float(np.exp(best.x if best.fun <= values[k] else grid[k]))
        if k in (0, len(grid) - 1):
            log.warning("GCV minimum at the end of the searched range (lam = %.3g): the data are "
                        "%s", lam, "nearly noise-free" if k == 0 else "dominated by noise")
        rss, tr, _ = interior_sums(lam)
        sigma = np.sqrt(rss / tr) if tr > 0 else 0.0
        b0 = (lam * dt) ** 0.25
        if target == "acceleration":
            lam, rule = _acceleration_lam(t, y, lam, solve, dt), "gcv+acceleration"
        elif target != "position":
            raise ValueError(f"`target` must be 'acceleration' or 'position', got {target!r}")
    elif not (np.isfinite(lam) and lam >= 0):
        raise ValueError(f"`lam` must be >= 0 or None (GCV), got {lam!r}")
    else:
        rss, tr, _ = interior_sums(lam) if lam > 0 else (0.0, 0.0, 0)
        sigma, b0 = (np.sqrt(rss / tr) if tr > 0 else 0.0), float("nan")
    U, r = solve(lam)
    tr = float(_hat_complement_diagonal(lam, _band_inverse(U), q).sum()) if lam > 0 else 0.0
    g = y - r
    return SmoothingSpline(CubicSpline(t, g, bc_type="natural"), float(lam), float(n - tr), float(sigma),
                           float((lam * dt) ** 0.25), rule, float(b0))


def _acceleration_lam(t, y, lam0, solve, dt) -> float:
    """lam of the MSE-optimal bandwidth for g'' from the GCV bandwidth b0 (rule 2b)."""
    b0 = (lam0 * dt) ** 0.25
    T = t[-1] - t[0]
    pilot_lam = (2.0 * b0) ** 4 / dt                    # a smoother pilot for the signal's frequency
    g = y - solve(pilot_lam)[1]
    spl = CubicSpline(t, g, bc_type="natural")
    inner = np.abs(t - 0.5 * (t[0] + t[-1])) <= 0.5 * T - 12.0 * b0
    if inner.sum() < 10:
        return lam0
    d1, d2 = spl(t[inner], 1), spl(t[inner], 2)
    var1 = float(np.mean((d1 - d1.mean()) ** 2))
    if var1 <= 0 or not np.any(d2):
        return ((0.1 * T) ** 4) / dt                     # no curvature: smooth as much as allowed
    omega_s2 = float(np.mean(d2**2)) / var1
    b2 = ((5.0 / 3.0) * b0**9 / omega_s2**2) ** (1.0 / 13.0)
    b2 = min(max(b2, b0), 0.1 * T)
    log.debug("acceleration bandwidth: b0 = %.4g s, omega_s = %.4g rad/s -> b2 = %.4g s", b0,
              np.sqrt(omega_s2), b2)
    return b2**4 / dt


# -- the motion ----------------------------------------------------------------------------------
class _FastCubic:
    """Value, first and second derivative of a CubicSpline in plain floats (the time loop)."""

    def __init__(self, spline: CubicSpline):
        self.x = spline.x.tolist()
        self.c = spline.c.T.tolist()              # per interval: c0 dt^3 + c1 dt^2 + c2 dt + c3

    def __call__(self, t):
        i = min(max(bisect.bisect_right(self.x, t) - 1, 0), len(self.c) - 1)
        c0, c1, c2, c3 = self.c[i]
        s = t - self.x[i]
        return ((c0 * s + c1) * s + c2) * s + c3, (3.0 * c0 * s + 2.0 * c1) * s + c2, 6.0 * c0 * s + 2.0 * c1


class MarkerMotion(PlanarMotion):
    """Planar frame motion from marker records (module docstring); see `marker_motion`.

    Attributes: records, body (m, 2), fits {"x", "y", "theta": SmoothingSpline},
    t_range (record), valid_window (record without the end margins), margin [s].
    """

    def __init__(self, records: MarkerRecords, body, fits: dict, margin: float):
        self.records, self.body, self.fits, self.margin = records, np.asarray(body, dtype=float), fits, margin
        self.t_range = (float(records.t[0]), float(records.t[-1]))
        self.valid_window = (self.t_range[0] + margin, self.t_range[1] - margin)
        if self.valid_window[0] >= self.valid_window[1]:
            raise ValueError(f"the record ({self.t_range[1] - self.t_range[0]:.4g} s) is too short for its end "
                             f"margins of {margin:.4g} s each; record longer or smooth less")
        fast = {k: _FastCubic(f.spline) for k, f in fits.items()}

        def law(name):
            f = fast[name]

            def g(t):
                if not (self.t_range[0] - 1e-12 <= t <= self.t_range[1] + 1e-12):
                    raise ValueError(f"t = {t} is outside the marker records {self.t_range}")
                return f(t)
            return g

        def many(t):                        # vectorised: FrameMotion.states of many times at once
            t = np.asarray(t, dtype=float)
            if t.size and not (self.t_range[0] - 1e-12 <= t.min() and t.max() <= self.t_range[1] + 1e-12):
                raise ValueError(f"times [{t.min()}, {t.max()}] are outside the marker records {self.t_range}")
            p = self.pose(t)
            return ((p["r_O"][:, 0], p["v_O"][:, 0], p["a_O"][:, 0]), (p["r_O"][:, 1], p["v_O"][:, 1], p["a_O"][:, 1]),
                    (p["theta"], p["omega"], p["eps"]))

        super().__init__(law("x"), law("y"), law("theta"), many=many)

    def pose(self, t) -> dict:
        """Smoothed r_O, v_O, a_O (n, 2) and theta, omega, eps (n,) at times t."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        fx, fy, fth = self.fits["x"], self.fits["y"], self.fits["theta"]
        return dict(r_O=np.stack([fx(t), fy(t)], -1), v_O=np.stack([fx(t, 1), fy(t, 1)], -1),
                    a_O=np.stack([fx(t, 2), fy(t, 2)], -1), theta=fth(t), omega=fth(t, 1), eps=fth(t, 2))

    def markers(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positions, velocities, accelerations (n, m, 2) of the markers from the smoothed pose:
        r_i = r_O + R b_i, v_i = v_O + omega k x rho_i, a_i = a_O + eps k x rho_i - omega^2 rho_i."""
        p = self.pose(t)
        c, s = np.cos(p["theta"]), np.sin(p["theta"])
        rho = np.stack([c[:, None] * self.body[:, 0] - s[:, None] * self.body[:, 1],
                        s[:, None] * self.body[:, 0] + c[:, None] * self.body[:, 1]], -1)      # (n, m, 2)
        k_rho = np.stack([-rho[..., 1], rho[..., 0]], -1)
        w, e = p["omega"][:, None, None], p["eps"][:, None, None]
        return (p["r_O"][:, None] + rho, p["v_O"][:, None] + w * k_rho,
                p["a_O"][:, None] + e * k_rho - w**2 * rho)

    def report(self) -> dict:
        """The smoothing chosen for each channel: rule, lam, dof, sigma, bandwidth; the window."""
        return {"channels": {k: dict(rule=f.rule, lam=f.lam, dof=f.dof, sigma=f.sigma, bandwidth_s=f.bandwidth,
                                     bandwidth_gcv_s=f.bandwidth_gcv)
                             for k, f in self.fits.items()},
                "record_s": list(self.t_range), "valid_window_s": list(self.valid_window),
                "margin_s": self.margin, "body": self.body.tolist()}


def marker_motion(records: MarkerRecords, body=None, lam: dict | float | None = None,
                  margin: float = 8.0) -> MarkerMotion:
    """The frame motion of a marker set.

    Parameters
    ----------
    records : MarkerRecords
        e.g. from `read_markers`.
    body : array_like (n_markers, 2), optional
        Body-frame coordinates of the markers [m].  Default: marker 1 at the origin, the x axis
        toward marker 2, the others at their mean position in that frame.
    lam : None, float or dict
        Smoothing parameter of every channel, or per channel {"x", "y", "theta"}; None: GCV.
    margin : float
        End margins excluded from ``valid_window``, in kernel bandwidths of the channels
        (the largest of the three).
    """
    if not isinstance(records, MarkerRecords):
        raise TypeError(f"`records` must be MarkerRecords, got {type(records).__name__}")
    xy = records.xy
    if body is None:
        d = xy[:, 1] - xy[:, 0]
        th = np.arctan2(d[..., 1], d[..., 0])
        c, s = np.cos(th), np.sin(th)
        rel = xy - xy[:, :1]
        local = np.stack([c[:, None] * rel[..., 0] + s[:, None] * rel[..., 1],
                          -s[:, None] * rel[..., 0] + c[:, None] * rel[..., 1]], -1)
        body = local.mean(axis=0)
        body[0] = 0.0
        body[1, 1] = 0.0
    body = np.asarray(body, dtype=float)
    if body.shape != (records.n_markers, 2):
        raise ValueError(f"`body` must have shape ({records.n_markers}, 2), got {body.shape}")
    if np.linalg.norm(body - body.mean(axis=0)) == 0:
        raise ValueError("`body`: the markers must not coincide")
    r_O, theta = rigid_pose(xy, body)
    lams = lam if isinstance(lam, dict) else {k: lam for k in ("x", "y", "theta")}
    fits = {name: smoothing_spline(records.t, ch, lams.get(name))
            for name, ch in (("x", r_O[:, 0]), ("y", r_O[:, 1]), ("theta", theta))}
    for name, f in fits.items():
        log.info("marker channel %s: %s lam = %.3e, dof = %.1f, noise sigma = %.3e, bandwidth = %.4f s "
                 "(GCV %.4f s)", name, f.rule, f.lam, f.dof, f.sigma, f.bandwidth, f.bandwidth_gcv)
    return MarkerMotion(records, body, fits, margin * max(f.bandwidth for f in fits.values()))
