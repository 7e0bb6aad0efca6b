"""Quasi-velocities u with q' = W(t, q) u + X(t, q), ignorable coordinates and dynamical constraints.

Seed 001 (Nooshabadi and Pishkenari), eqs. (1)-(5) and (10)-(26), derived again here
(docs/quasi_velocities.md).  The velocity-level constraints of a system (the nonholonomic
ones and the holonomic ones differentiated once) are a(t, q) q' + b(t, q) = 0, r rows.  p = m - r
quasi-velocities are defined by u = Y(t, q) q' + Z(t, q); stacked with the constraints,

.. code:: text

    [Y]        [u - Z]                     [Y]^-1 [I]          [Y]^-1 [Z]
    [a] q'  =  [ -b  ]    =>   W   =       [a]    [0],   X = - [a]    [b]

Without a user choice, Y = N0^T, N0 an orthonormal basis of the null space of a(t0, q0)
(the SVD), kept constant, so W(t, q) is analytic in q and spans the admissible velocities
wherever [N0^T; a(q)] stays regular.  A user may give W (and X) directly; they are checked
to span the admissible velocities (a W = 0, a X + b = 0, rank W = p).

Ignorable coordinates (seed 001, Definition 1): q_k does not appear in the Lagrangian (M, the
gravity potential), has no generalized applied force and no column in a.  Then
dT/dq'_I = M_I(q) q' = G_I is constant (the conserved momenta; for a scleronomic model
T = 1/2 q'^T M q', so the paper's N is zero).  Stacked as "dynamical constraints" with the
kinematic ones, they leave p - s quasi-velocities u_NI = Y_NI q' + Z_NI:

.. code:: text

    [Y_NI]       [u_NI - Z_NI]
    [M_I ] q' =  [   G_I     ]     =>  q' = W_NI u_NI + X_NI
    [a   ]       [   -b      ]

Every map is written with complex-safe operations, so the time derivatives W' and X' come
from one complex step (t, q) -> (t + i h, q + i h q').
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg

from ..bodies.tree import COMPLEX_STEP
from .base import forward_difference_jacobian
from .body_terms import KANE_VOLTERRA, BodyTerms

__all__ = ["QuasiVelocities", "constraint_rows", "constraint_rows_history", "system_kinematics",
           "ignorable_coordinates", "check_ignorable", "least_squares_history", "parts_mass_matrix",
           "IGNORABLE_TOL", "QuasiVelocityError"]

IGNORABLE_TOL = 1e-9         # |dM/dq_k|, |Q_k|, |a_k| relative to the largest |M|, |Q|, |a|
SINGULAR_HINT = ("the quasi-velocities' Y no longer completes the constraint rows there (give another `Y`) or the "
                 "constraints lost rank; formulation 'lagrange' takes the same System")   # `multiplier_history`'s
SPAN_TOL = 1e-8              # |a W| relative to |a| |W| accepted as "W spans the admissible velocities"


class QuasiVelocityError(ValueError):
    """Quasi-velocities that do not describe the admissible velocities, or a bad ignorable coordinate."""


def _rows_of(c, t, qs):
    """(blocks of a, b) of constraint c."""
    return c.jacobian(t, qs), c.time_derivative(t, qs)


def _rows_complex(c, t, qs):
    """(blocks, b) of constraint c at complex (t, qs) = real + i h (1, d).

    Tried by complex arithmetic first (exact); a constraint whose code drops imaginary parts
    (a ComplexWarning) or refuses complex input is evaluated at the real point, and its rate along
    (1, d) by central differences (relative error ~1e-10), so every joint works in the
    quasi-velocity formulations.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        try:
            return _rows_of(c, t, qs)
        except (TypeError, ValueError, np.exceptions.ComplexWarning):
            pass
    h = COMPLEX_STEP
    tr, dt = float(np.real(t)), float(np.imag(t)) / h
    qr = [np.real(x) for x in qs]
    d = [np.imag(x) / h for x in qs]
    scale = max([1.0] + [float(np.abs(x).max(initial=0.0)) for x in qr])
    dnorm = max([abs(dt)] + [float(np.abs(x).max(initial=0.0)) for x in d])
    eps = 1e-6 * scale / max(dnorm, 1e-300)
    J0, b0 = _rows_of(c, tr, qr)
    Jp, bp = _rows_of(c, tr + eps * dt, [x + eps * y for x, y in zip(qr, d)])
    Jm, bm = _rows_of(c, tr - eps * dt, [x - eps * y for x, y in zip(qr, d)])
    blocks = [np.asarray(j0) + 1j * h * (np.asarray(jp) - np.asarray(jm)) / (2 * eps) for j0, jp, jm in zip(J0, Jp, Jm)]
    return blocks, np.asarray(b0) + 1j * h * (np.asarray(bp) - np.asarray(bm)) / (2 * eps)


def constraint_rows(system, t, q):
    """(a (r, m), b (r,)): C_q and C_t of every constraint at (t, q); q and t may be complex.

    A holonomic constraint contributes its Jacobian and C_t (C' = C_q q' + C_t), a nonholonomic
    one a and b.  At a complex (t, q) (a complex step) a constraint that cannot take complex
    input gets its rate by central differences instead (`_rows_complex`).
    """
    q = np.asarray(q)
    dtype = np.result_type(q.dtype, np.asarray(t).dtype, float)
    a = np.zeros((system.n_c, system.n_q), dtype=dtype)
    b = np.zeros(system.n_c, dtype=dtype)
    evaluate = _rows_complex if np.iscomplexobj(a) else _rows_of
    for c in system.constraints:
        rows = system.rows(c)
        qs = [np.zeros(0) if body is None else q[system.slice(body)] for body in c.bodies]
        blocks, bc = evaluate(c, t, qs)
        for body, blk in zip(c.bodies, blocks):
            if body is not None:
                a[rows, system.slice(body)] += blk
        b[rows] = bc
    return a, b


def constraint_rows_history(system, t, q) -> tuple[np.ndarray, np.ndarray]:
    """(a (N, r, m), b (N, r)): `constraint_rows` at the N times t (N,) and rows of q (N, m), real or complex
    (a complex step), one state after the other: the constraints evaluate one configuration at a time."""
    rows = [constraint_rows(system, tk, qk) for tk, qk in zip(t, q)]
    dtype = np.result_type(np.asarray(q).dtype, np.asarray(t).dtype, float)
    a = np.array([r[0] for r in rows], dtype=dtype).reshape(len(q), system.n_c, system.n_q)
    return a, np.array([r[1] for r in rows], dtype=dtype).reshape(len(q), system.n_c)


def least_squares_history(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x (N, k) of the N least-squares problems min ||A x - b||_2, A (N, n, k), b (N, n), at once:

    .. code:: text

        x = A^+ b          A^+ the Moore-Penrose pseudo-inverse (stacked SVD, `numpy.linalg.pinv`)

    `numpy.linalg.lstsq`'s solution one problem at a time (the least-norm one where A loses rank), with its
    cut-off: singular values below max(n, k) eps s_max are dropped."""
    return np.einsum("kij,kj->ki", np.linalg.pinv(A), b)


def system_kinematics(system, q):
    """Parts of all bodies at q (m,) or (k, m), real or complex: (mass (n_p,), B, D (k, n_p, 3, m),
    I (k, n_p, 3, 3)), the bodies' `kinematics` (`flexmbs.bodies.base.PartKinematics`: rigid parts and
    mass points) placed in the System's coordinates.  A body kind without it is refused
    (`check_bodies` with `KANE_VOLTERRA`, by the formulations at their construction)."""
    q = np.atleast_2d(q)
    out_m, out_B, out_D, out_I = [], [], [], []
    for body in system.bodies:
        sl = system.slice(body)
        kin = body.kinematics(q[:, sl])
        k, n_p = kin.B.shape[:2]
        dtype = np.result_type(kin.B.dtype, kin.D.dtype, q.dtype)
        B = np.zeros((k, n_p, 3, system.n_q), dtype=dtype)
        D = np.zeros_like(B)
        B[..., sl], D[..., sl] = kin.B, kin.D
        out_m.append(kin.mass)
        out_B.append(B)
        out_D.append(D)
        out_I.append(np.broadcast_to(kin.I, (k,) + kin.I.shape[1:]))
    if len(out_m) == 1:
        return out_m[0], out_B[0], out_D[0], out_I[0]
    return np.concatenate(out_m), np.concatenate(out_B, 1), np.concatenate(out_D, 1), np.concatenate(out_I, 1)


def parts_mass_matrix(mass, B, D, I):
    """sum_i m_i B_i^T B_i + D_i^T I_i D_i (k, a, a) of parts (mass (n_p,), B, D (k, n_p, 3, a), I (k, n_p, 3, 3)):
    the mass matrix M with B, D the parts' velocity maps, M_u = W^T M W with the partial velocities B W, D W.
    Two stacked matrix products over the (n_p, 3) rows."""
    k, n_p, _, a = B.shape
    B2, D2 = B.reshape(k, 3 * n_p, a), D.reshape(k, 3 * n_p, a)
    return (np.swapaxes(np.repeat(mass, 3)[:, None] * B2, 1, 2) @ B2
            + np.swapaxes(D2, 1, 2) @ (I @ D).reshape(k, 3 * n_p, a))


def applied_forces(system, t, q, v):
    """Generalized applied forces Q_e (gravity included, no inertia) of every body, (m,): the bodies'
    `active_forces` (`flexmbs.formulations.body_terms.BodyTerms`)."""
    return BodyTerms(system, KANE_VOLTERRA, "kane").active_forces(t, q, v)


class QuasiVelocities:
    """q' = W(t, q) u + X(t, q) for a `System` (module docstring).

    Parameters
    ----------
    system : flexmbs.System
    Y : callable or array (p, m), optional
        u = Y q' + Z: ``Y(t, q)`` (complex-safe) or a constant matrix.  Default: the transposed
        null-space basis of the constraint rows at (t0, q0).
    Z : callable, optional
        ``Z(t, q) -> (p,)``; default zero.
    W, X : callable, optional
        Instead of Y: ``W(t, q) -> (m, p)`` and ``X(t, q) -> (m,)`` directly (checked to span the
        admissible velocities).
    ignorable : sequence of int or str, optional
        Ignorable coordinates (indices or names of TreeBody coordinates) whose momenta are imposed
        as dynamical constraints: the reduced (p - s) quasi-velocities.  "auto": detected by
        `ignorable_coordinates`.  Then Y (if given) has p - s rows.
    t0, q0, v0 : the reference state (default the system's initial state): the null-space basis,
        the checks and the conserved momenta G_I = M_I(q0) v0 are taken there.
    """

    def __init__(self, system, Y=None, Z=None, *, W=None, X=None, ignorable=None, t0: float = 0.0, q0=None,
                 v0=None):
        self.system = system
        self.m = m = system.n_q
        self.t0 = float(t0)
        q0 = system.initial_coordinates() if q0 is None else np.asarray(q0, dtype=float)
        v0 = system.initial_velocities() if v0 is None else np.asarray(v0, dtype=float)
        if q0.shape != (m,) or v0.shape != (m,):
            raise QuasiVelocityError(f"`q0` and `v0` must have shape ({m},), got {q0.shape} and {v0.shape}")
        self.q0, self.v0 = q0, v0
        a0, b0 = constraint_rows(system, t0, q0)
        self.r = a0.shape[0]
        rank = int(np.linalg.matrix_rank(a0)) if self.r else 0
        if rank < self.r:
            raise QuasiVelocityError(f"the constraint rows are dependent at q0 (rank {rank} < {self.r} rows): "
                                     "remove the redundant constraints")
        self.p_full = m - self.r
        # ignorable coordinates and their momenta
        if ignorable is None:
            self.ignorable = []
        elif isinstance(ignorable, str) and ignorable == "auto":
            self.ignorable = ignorable_coordinates(system, t0, q0, v0)
        else:
            self.ignorable = [_coordinate_index(system, k) for k in ignorable]
            check_ignorable(system, self.ignorable, t0, q0, v0)
        self.s = len(self.ignorable)
        self.p = self.p_full - self.s
        if self.s:
            M0 = system.mass_matrix(q0)
            self.G = M0[self.ignorable] @ v0
        else:
            self.G = np.zeros(0)
        self._Yc = self._Zc = self._Wf = self._Xf = None
        if W is not None or X is not None:
            if Y is not None or Z is not None:
                raise QuasiVelocityError("give either (Y, Z) or (W, X), not both")
            if self.s:
                raise QuasiVelocityError("with ignorable coordinates give Y (the p - s non-ignorable quasi-"
                                         "velocities u_NI = Y q' + Z), not W")
            if W is None or not callable(W) or (X is not None and not callable(X)):
                raise QuasiVelocityError("`W` (and `X`) must be callables of (t, q)")
            self._Wf, self._Xf = W, X
            self._check_W(t0, q0)
        else:
            if Y is None:
                rows = a0 if not self.s else np.vstack([a0, system.mass_matrix(q0)[self.ignorable]])
                N0 = scipy.linalg.null_space(rows) if rows.size else np.eye(m)
                Y = N0.T
            Yt = Y if callable(Y) else np.asarray(Y, dtype=float)
            Y0 = np.asarray(Yt(t0, q0) if callable(Yt) else Yt)
            if Y0.shape != (self.p, m):
                raise QuasiVelocityError(f"`Y` must give a ({self.p}, {m}) matrix (p = m - r - s = {m} - {self.r} "
                                         f"- {self.s} quasi-velocities), got shape {Y0.shape}")
            self._Yc = Yt
            self._Zc = Z
            S = self._stack(t0, q0)[0]
            cond = np.linalg.cond(S)
            if not cond < 1e12:
                raise QuasiVelocityError(
                    f"the rows of Y and the constraint rows{' and momentum rows M_I' if self.s else ''} are "
                    f"dependent at q0 (condition number {cond:.3g}): these quasi-velocities do not determine "
                    "q'; choose Y whose rows complete the constraint rows to a basis")

    # -- the maps ------------------------------------------------------------------------------
    def _stack(self, t, q, kin=None):
        """S = [Y; M_I; a] and the right-hand side (Z; -G; b)."""
        a, b = constraint_rows(self.system, t, q)
        Y = self._Yc(t, q) if callable(self._Yc) else self._Yc
        Z = np.zeros(self.p) if self._Zc is None else self._Zc(t, q)
        blocks, rhs = [np.asarray(Y)], [np.asarray(Z)]
        if self.s:
            MI = self._momentum_rows(q, kin)
            blocks.append(MI)
            rhs.append(-self.G)
        blocks.append(a)
        rhs.append(b)
        return np.vstack(blocks), np.concatenate(rhs)

    def _momentum_rows(self, q, kin=None):
        """M_I(q) = rows of M of the ignorable coordinates (complex-safe for TreeBody systems).

        ``kin``: the parts' kinematics at q (`system_kinematics`), when already computed.
        """
        if kin is not None or np.iscomplexobj(q):
            mass, B, D, I = system_kinematics(self.system, q) if kin is None else kin
            return parts_mass_matrix(mass, B, D, I)[0][self.ignorable]
        return self.system.mass_matrix(q)[self.ignorable]

    def maps(self, t, q, kin=None):
        """(W (m, p), X (m,)) at (t, q), real or complex (``kin``: the parts' kinematics at q, if known)."""
        if self._Wf is not None:
            W = np.asarray(self._Wf(t, q))
            X = np.zeros(self.m, dtype=W.dtype) if self._Xf is None else np.asarray(self._Xf(t, q))
            return W, X
        return self._solve_stack(*self._stack(t, q, kin))

    def _solve_stack(self, S, rhs):
        """(W, X) of ``S [W X] = [[I_p 0]; [0 -rhs_rest]]``, i.e. S W = [I_p; 0], S X = -rhs (module docstring),
        for one S (m, m) or a stack (N, m, m) of them: one solve with p + 1 right-hand sides."""
        R = np.zeros(S.shape[:-1] + (self.p + 1,), dtype=S.dtype)
        R[..., :self.p, :self.p] = np.eye(self.p)
        R[..., self.p] = -rhs
        sol = np.linalg.solve(S, R)
        return sol[..., :self.p], sol[..., self.p]

    def maps_history(self, t, q, a, b, kin=None, M=None):
        """(W (N, m, p), X (N, m)) at the N times t (N,) and rows of q (N, m), real or complex, from the constraint
        rows a (N, r, m), b (N, r) there (`constraint_rows_history`, or the kernel's C_q and C_t): the stacked
        S = [Y; M_I; a] and right-hand sides (Z; -G; b) of `maps`, then one stacked solve.  The momentum rows
        M_I (ignorable coordinates only) are taken from the mass matrices M (N, m, m) when given, else from the
        parts' kinematics ``kin`` at q (`system_kinematics`, computed when not given).  Y, Z given as callables
        and W, X given directly are user functions of one state: called state by state."""
        t = np.asarray(t)
        N = len(q)
        if self._Wf is not None:
            maps = [self.maps(tk, qk) for tk, qk in zip(t, q)]
            return np.array([w for w, _ in maps]).reshape(N, self.m, self.p), np.array([x for _, x in maps])
        dtype = np.result_type(np.asarray(q).dtype, a.dtype, t.dtype)
        S, rhs = np.empty((N, self.m, self.m), dtype=dtype), np.empty((N, self.m), dtype=dtype)
        if callable(self._Yc):
            S[:, :self.p] = [self._Yc(tk, qk) for tk, qk in zip(t, q)]
        else:
            S[:, :self.p] = self._Yc
        rhs[:, :self.p] = 0.0 if self._Zc is None else [self._Zc(tk, qk) for tk, qk in zip(t, q)]
        if self.s:
            if M is None:
                M = parts_mass_matrix(*(system_kinematics(self.system, q) if kin is None else kin))
            S[:, self.p:self.p + self.s] = M[:, self.ignorable]
            rhs[:, self.p:self.p + self.s] = -self.G
        S[:, self.p + self.s:], rhs[:, self.p + self.s:] = a, b
        return self._solve_stack(S, rhs)

    def maps_and_rates(self, t, q, qdot):
        """(W, X, W', X') at (t, q) with W' = dW/dt along q' (one complex step)."""
        h = COMPLEX_STEP
        W, X = self.maps(t + 1j * h, np.asarray(q, dtype=complex) + 1j * h * qdot)
        return W.real, X.real, W.imag / h, X.imag / h

    def quasi_velocities(self, t, q, qdot) -> np.ndarray:
        """u with W u + X = q' (least squares; exact for admissible q')."""
        W, X = self.maps(t, q)
        return np.linalg.lstsq(W, qdot - X, rcond=None)[0]

    def admissible(self, t, q, qdot) -> np.ndarray:
        """q' projected onto the admissible velocities (the momenta G_I held): W u + X, u by least squares."""
        W, X = self.maps(t, q)
        return W @ self.quasi_velocities(t, q, qdot) + X

    def _check_W(self, t, q):
        a, b = constraint_rows(self.system, t, q)
        W, X = self.maps(t, q)
        if W.shape != (self.m, self.p):
            raise QuasiVelocityError(f"`W(t, q)` must return an ({self.m}, {self.p}) matrix (p = m - r), got "
                                     f"{W.shape}")
        scale = max(np.abs(a).max(initial=0.0), 1e-300) * max(np.abs(W).max(), 1e-300)
        bad = np.abs(a @ W).max(initial=0.0) > SPAN_TOL * scale * max(1, self.m)
        rank = np.linalg.matrix_rank(W)
        if bad or rank < self.p:
            raise QuasiVelocityError(
                f"`W` does not span the admissible velocities at q0: max |a W| = {np.abs(a @ W).max(initial=0):.3g}"
                f" (must be ~0: every column admissible), rank W = {rank} (must be p = {self.p})")
        if self.r and np.abs(a @ X + b).max() > SPAN_TOL * (1 + np.abs(b).max() + scale):
            raise QuasiVelocityError(f"`X` is not an admissible velocity at q0: max |a X + b| = "
                                     f"{np.abs(a @ X + b).max():.3g}")


def _coordinate_index(system, k) -> int:
    if isinstance(k, (int, np.integer)):
        if not 0 <= k < system.n_q:
            raise QuasiVelocityError(f"ignorable coordinate index {k} out of range [0, {system.n_q})")
        return int(k)
    for body in system.bodies:
        names = getattr(body, "coordinates", ())
        if k in names:
            return system.slice(body).start + list(names).index(k)
    raise QuasiVelocityError(f"unknown coordinate {k!r} declared ignorable")


def _coordinate_name(system, k) -> str:
    for body in system.bodies:
        sl = system.slice(body)
        if sl.start <= k < sl.stop and hasattr(body, "coordinates"):
            return body.coordinates[k - sl.start]
    return f"q[{k}]"


def _samples(system, t0, q0, v0, n: int = 3, seed: int = 1):
    rng = np.random.default_rng(seed)
    out = [(q0, v0)]
    for _ in range(n - 1):
        out.append((q0 + 0.3 * rng.standard_normal(q0.size), v0 + rng.standard_normal(v0.size)))
    return out


def _ignorable_defects(system, t0, q0, v0):
    """Per coordinate: (dM/dq_k, Q_k (applied + gravity), a_k) relative sizes, max over samples."""
    m, h = system.n_q, COMPLEX_STEP
    dM = np.zeros(m)
    dQ = np.zeros(m)
    da = np.zeros(m)
    for q, v in _samples(system, t0, q0, v0):
        qs = np.asarray(q, dtype=complex) + 1j * h * np.eye(m)
        mass, B, D, I = system_kinematics(system, qs)
        Mk = parts_mass_matrix(mass, B, D, I)
        scale = np.abs(Mk.real).max()
        dM = np.maximum(dM, np.abs(Mk.imag / h).max(axis=(1, 2)) / scale)
        Q = applied_forces(system, t0, q, v)
        dQ = np.maximum(dQ, np.abs(Q) / max(np.abs(Q).max(), scale * (1.0 + np.abs(v).max()) ** 2, 1e-300))
        if system.n_c:
            a, _ = constraint_rows(system, t0, q)
            da = np.maximum(da, np.abs(a).max(axis=0) / max(np.abs(a).max(), 1e-300))
    return dM, dQ, da


def ignorable_coordinates(system, t0=0.0, q0=None, v0=None, tol: float = IGNORABLE_TOL) -> list[int]:
    """Indices of the coordinates that are ignorable (seed 001, Definition 1), checked numerically.

    q_k is ignorable when, at q0 and two seeded random configurations around it (random
    velocities), dM/dq_k = 0 (complex step: exact), the generalized applied force Q_k (gravity
    included: dV/dq_k = -Q_gravity,k) vanishes and the constraint column a_k vanishes, each to
    ``tol`` relative to the largest |M|, |Q| (or m v^2 scale) and |a|.
    """
    q0 = system.initial_coordinates() if q0 is None else np.asarray(q0, dtype=float)
    v0 = system.initial_velocities() if v0 is None else np.asarray(v0, dtype=float)
    dM, dQ, da = _ignorable_defects(system, t0, q0, v0)
    return [k for k in range(system.n_q) if dM[k] <= tol and dQ[k] <= tol and da[k] <= tol]


def check_ignorable(system, coords, t0=0.0, q0=None, v0=None, tol: float = IGNORABLE_TOL) -> None:
    """Raise QuasiVelocityError naming each declared coordinate that is not ignorable, and why."""
    q0 = system.initial_coordinates() if q0 is None else np.asarray(q0, dtype=float)
    v0 = system.initial_velocities() if v0 is None else np.asarray(v0, dtype=float)
    dM, dQ, da = _ignorable_defects(system, t0, q0, v0)
    problems = []
    for k in coords:
        why = []
        if dM[k] > tol:
            why.append(f"the mass matrix depends on it (|dM/dq| / |M| = {dM[k]:.2g})")
        if dQ[k] > tol:
            why.append(f"it has a generalized force (|Q_k| relative {dQ[k]:.2g}; gravity or an applied load)")
        if da[k] > tol:
            why.append(f"a constraint row involves its velocity (|a_k| relative {da[k]:.2g})")
        if why:
            problems.append(f"{_coordinate_name(system, k)!r}: " + "; ".join(why))
    if problems:
        raise QuasiVelocityError("declared ignorable coordinate(s) are not ignorable (tolerance "
                                 f"{tol:g}): " + " | ".join(problems))


class QuasiVelocityForm:
    """First-order form x = (q, u), x' = (W u + X, u'(t, q, u)) for `simulate` (Kane, Volterra).

    Subclasses give ``quasi_accelerations(t, q, u) -> u'``.  ``n_equations`` is the size of the
    linear system solved for u' (p, or p - s for the reduced Volterra form).
    """

    name = "quasi-velocities"
    mass_matrix_constant = True
    linear = False
    second_order = None
    second_state = "quasi_velocities"
    needs_parts = True             # Kane and Volterra work with the bodies' parts, Maggi's form with M, Q

    def __init__(self, system, qv: QuasiVelocities | None = None, jacobian_refresh: float = 1e-2, **qv_options):
        self.system = system
        self.qv = QuasiVelocities(system, **qv_options) if qv is None else qv
        if self.needs_parts:            # refuses a body kind without `kinematics` or `active_forces` now
            self.terms = BodyTerms(system, KANE_VOLTERRA, self.name)
        self.m, self.p = system.n_q, self.qv.p
        self.n_state = self.m + self.p
        self.n_equations = self.p
        self.n_rhs = 0
        self.jacobian_refresh = float(jacobian_refresh)
        from scipy import sparse
        self._I = sparse.identity(self.n_state, format="csr")
        from .index1 import HistoryKernel
        self.history_kernel = HistoryKernel(system)       # the kernel of `multiplier_history`, chosen when first asked

    def state0(self, q0=None, v0=None, t0: float = 0.0, assemble: bool = False) -> np.ndarray:
        """x0 = (q0, u0), u0 from q0' (default the reference state of the quasi-velocities), after
        (q0, q0') is checked against the constraints (refused if inconsistent, or assembled with
        ``assemble=True``: ``System.initial_state``): u0 is a least-squares fit, which would
        otherwise drop an inadmissible part of q0' silently."""
        q0 = self.qv.q0 if q0 is None else q0
        v0 = self.qv.v0 if v0 is None else v0
        q0, v0 = self.system.initial_state(t0, q0, v0, assemble=assemble)
        return np.concatenate([q0, self.qv.quasi_velocities(t0, q0, v0)])

    def physical(self, t, x) -> tuple[np.ndarray, np.ndarray]:
        """(q, q') from states x (n_state,) or (n_t, n_state) at times t: q' = W u + X of all the states at once
        (`velocity_history`)."""
        from .index1 import history_chunks
        x = np.atleast_2d(np.asarray(x, dtype=float))
        t = np.broadcast_to(np.asarray(t, dtype=float), (x.shape[0],))
        q = x[:, :self.m]
        qd = np.concatenate([np.zeros((0, self.m))] + [self.velocity_history(t[c], q[c], x[c, self.m:])[0] for c in
                                                        history_chunks(len(x), self.system.n_q + self.system.n_c)])
        return q, qd

    def velocity_history(self, t, q, u):
        """(q' (N, m), a (N, r, m), b (N, r)) at N states (t (N,), q (N, m), u (N, p)): the constraint rows a, b of
        all of them (the kernel's C_q and C_t when the System is compiled, else `constraint_rows_history`), the
        maps W, X by one stacked solve (`QuasiVelocities.maps_history`) and q' = W u + X."""
        if self.history_kernel() is None:
            a, b = constraint_rows_history(self.system, t, q)
        else:
            from .index1 import system_terms_history
            _, _, a, _, b = system_terms_history(self.system, self.history_kernel, t, q, np.zeros_like(q))
        W, X = self.qv.maps_history(t, q, a, b)
        return np.einsum("kmp,kp->km", W, u) + X, a, b

    def rhs(self, t, x) -> np.ndarray:
        self.n_rhs += 1
        q, u = x[:self.m], x[self.m:]
        return np.concatenate(self.derivatives(t, q, u))

    def derivatives(self, t, q, u):
        """(q', u') at (t, q, u)."""
        raise NotImplementedError

    def multipliers(self, t, x) -> np.ndarray:
        """lam at the state x (the reactions are System.reactions(t, q, lam)).  The quasi-velocities
        eliminate the constraint forces; they are recovered from d'Alembert's principle on all m
        coordinates, a^T lam = Q_e - sum_i [B_i^T m_i a_i + D_i^T (I_i alpha_i + omega_i x I_i omega_i)],
        with the parts' accelerations a_i = B_i q'' + B_i' q', alpha_i = D_i q'' + D_i' q' and
        q'' = W u' + W' u + X' (least squares over the m rows; exact where a has full rank)."""
        h = COMPLEX_STEP
        q, u = x[:self.m], x[self.m:]
        qd, u_dot = self.derivatives(t, q, u)
        _, _, Wd, Xd = self.qv.maps_and_rates(t, q, qd)
        W, _ = self.qv.maps(t, q)
        qdd = W @ u_dot + Wd @ u + Xd
        mass, Bc, Dc, Ic = system_kinematics(self.system, np.asarray(q, dtype=complex) + 1j * h * qd)
        B, D, I = Bc[0].real, Dc[0].real, Ic[0].real
        acc = B @ qdd + Bc[0].imag @ qd / h
        alpha = D @ qdd + Dc[0].imag @ qd / h
        omega = D @ qd
        torque = np.einsum("pxy,py->px", I, alpha) + np.cross(omega, np.einsum("pxy,py->px", I, omega))
        inertia = np.einsum("p,pxa,px->a", mass, B, acc) + np.einsum("pxa,px->a", D, torque)
        residual = self.terms.active_forces(t, q, qd) - inertia
        return np.linalg.lstsq(constraint_rows(self.system, t, q)[0].T, residual, rcond=None)[0]

    def forcing_full(self, t, x):
        return self.rhs(t, x)

    def mass_matrix_full(self, t=None):
        return self._I

    def jacobian(self, t, x) -> np.ndarray:
        """d(x')/dx by forward differences of `rhs`."""
        return forward_difference_jacobian(self.rhs, t, x)

    def jacobian_key(self, t):
        return int(np.floor(t / self.jacobian_refresh))

    def term(self):
        """What the integrators see (`flexmbs.formulations.terms.ODETerm`): x' = (q', u'), M_full = I,
        the difference Jacobian, no second-order form (the state holds quasi-velocities), the
        System's start and range checks."""
        from .terms import ODETerm, system_checks
        return ODETerm(name=self.name, n_state=self.n_state, rhs=self.rhs, jacobian=self.jacobian,
                       jacobian_key=self.jacobian_key, linear=self.linear,
                       **system_checks(self.system, self.physical))

    def multiplier_history(self, t, x) -> np.ndarray:
        """lam (N, n_c) at the states x (N, n_state) and times t (N,), e.g. the outputs of a run: `multipliers`'
        equations on all the states at once, in chunks of `flexmbs.formulations.index1.HISTORY_CHUNK` states:

        .. code:: text

            a^T lam = Q_e - sum_i [B_i^T m_i a_i + D_i^T (I_i alpha_i + omega_i x I_i omega_i)]
            a_i = B_i q'' + B_i' q',  alpha_i = D_i q'' + D_i' q',  q'' = W u' + W' u + X'

        with u' the formulation's own (`quasi_accelerations`, stacked) and lam by the stacked least squares
        (`least_squares_history`: lstsq's solution).  The parts' kinematics, W, X and their rates along q' come
        from one complex step of all the states (`complex_step_history`); the constraint rows and the active
        forces Q_e are the System's, evaluated state by state (numpy: the compiled kernel gives Lagrange's
        Q = Q_e + Q_v, not the active forces, and no complex step)."""
        from .index1 import chunked_multiplier_history
        return chunked_multiplier_history(self, self._stacked_multipliers, t, x, SINGULAR_HINT)

    def _stacked_multipliers(self, t, x) -> np.ndarray:
        """lam (N, n_c) of one chunk of `multiplier_history`."""
        h = COMPLEX_STEP
        q, u = x[:, :self.m], x[:, self.m:]
        qd, kin, Wc, Xc, a = self.complex_step_history(t, q, u)
        Qe = np.array([self.terms.active_forces(tk, qk, vk) for tk, qk, vk in zip(t, q, qd)])
        u_dot = self.quasi_accelerations(u, qd, kin, Wc, Xc, Qe)
        qdd = np.einsum("kmp,kp->km", Wc.real, u_dot) + (np.einsum("kmp,kp->km", Wc.imag, u) + Xc.imag) / h
        mass, Bc, Dc, Ic = kin
        B, D, I = Bc.real, Dc.real, Ic.real
        acc = np.einsum("kpxm,km->kpx", B, qdd) + np.einsum("kpxm,km->kpx", Bc.imag, qd) / h
        alpha = np.einsum("kpxm,km->kpx", D, qdd) + np.einsum("kpxm,km->kpx", Dc.imag, qd) / h
        omega = np.einsum("kpxm,km->kpx", D, qd)
        torque = (np.einsum("kpxy,kpy->kpx", I, alpha)
                  + np.cross(omega, np.einsum("kpxy,kpy->kpx", I, omega)))
        inertia = np.einsum("p,kpxa,kpx->ka", mass, B, acc) + np.einsum("kpxa,kpx->ka", D, torque)
        return least_squares_history(np.swapaxes(a, 1, 2), Qe - inertia)

    def quasi_accelerations(self, u, qd, kin, Wc, Xc, Qe) -> np.ndarray:
        """u' (k, p) of k states from their quasi-velocities u (k, p), q' (k, m), the parts' kinematics ``kin`` and
        the maps Wc, Xc at the complex step (t + i h, q + i h q') and the active forces Qe (k, m): the
        formulation's equations (Kane's, Volterra's), stacked over the states."""
        raise NotImplementedError

    # common pieces of Kane and Volterra: one complex step of the parts and of the maps
    def _complex_step(self, t, q, u):
        """Real parts and rates along q' at one state: q', the kinematics (leading axis of 1) and W, X at the
        complex step."""
        h = COMPLEX_STEP
        W, X = self.qv.maps(t, q)
        qd = W @ u + X
        tc, qc = t + 1j * h, np.asarray(q, dtype=complex) + 1j * h * qd
        kin = system_kinematics(self.system, qc)
        Wc, Xc = self.qv.maps(tc, qc, kin)
        return qd, kin, Wc, Xc

    def complex_step_history(self, t, q, u):
        """`_complex_step` at N states (t (N,), q (N, m), u (N, p)): (q' (N, m), the parts' kinematics at
        q + i h q' (`system_kinematics`, stacked; None for a form without ``needs_parts``), W, X there (N, m, p), (N, m), and the real constraint rows
        a (N, r, m)), the maps by stacked solves (`QuasiVelocities.maps_history`).  The constraint rows at the
        complex step, a + i h a', b + i h b': on the numpy path `constraint_rows` state by state (complex
        arithmetic, or central differences for a joint that refuses it); on the compiled path a, b and their
        rates along (1, q') by central differences of the kernel's C_q and C_t (`constraint_rates_history`)."""
        h = COMPLEX_STEP
        qd, a, b = self.velocity_history(t, q, u)
        tc, qc = t + 1j * h, q.astype(complex) + 1j * h * qd
        kin = system_kinematics(self.system, qc) if self.needs_parts else None
        if self.history_kernel() is None:           # no kernel, or one that refused terms_history just now
            ac, bc = constraint_rows_history(self.system, tc, qc)
        else:
            a_dot, b_dot = constraint_rates_history(self.system, self.history_kernel, t, q, qd)
            ac, bc = a + 1j * h * a_dot, b + 1j * h * b_dot
        Wc, Xc = self.qv.maps_history(tc, qc, ac, bc, kin)
        return qd, kin, Wc, Xc, a


def constraint_rates_history(system, kernel, t, q, qd) -> tuple[np.ndarray, np.ndarray]:
    """(a', b') (N, r, m), (N, r): the rates of the constraint rows a = C_q, b = C_t along (1, q') at N states, by
    central differences of the compiled kernel's C_q and C_t at (t +- eps, q +- eps q') (one `terms_history` of
    the 2 N states, `flexmbs.formulations.index1.system_terms_history`) with `_rows_complex`'s step,
    eps = 1e-6 max(1, |q|) / max(1, |q'|), here over all the coordinates of a state (relative error about 1e-10).
    ``kernel``: the formulation's `flexmbs.formulations.index1.HistoryKernel`."""
    from .index1 import system_terms_history
    eps = 1e-6 * np.maximum(1.0, np.abs(q).max(axis=1)) / np.maximum(1.0, np.abs(qd).max(axis=1))
    step = eps[:, None] * qd
    T, Q = np.concatenate([t + eps, t - eps]), np.concatenate([q + step, q - step])
    _, _, a, _, b = system_terms_history(system, kernel, T, Q, np.zeros_like(Q))
    N = len(t)
    return (a[:N] - a[N:]) / (2.0 * eps[:, None, None]), (b[:N] - b[N:]) / (2.0 * eps[:, None])
