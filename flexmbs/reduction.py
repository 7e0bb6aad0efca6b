"""Modal reduction of a flexible body: free-interface modes and Craig-Bampton.

The free DOFs of a `Model` are approximated by ``delta = Phi q`` with a basis Phi (n, r),
r << n.  Because every inertia term of the moving-frame equations is a constant integral
linear (or bilinear) in delta, the reduced body's invariants are the projections of the full
mesh's, computed exactly in one pass over the assembled matrices (no new quadrature):

.. code:: text

    M_r = Phi^T M Phi,   K_r = Phi^T K Phi,   S_r[a, b] = Phi^T S[a, b] Phi,   K_geo,r = Phi^T K_geo Phi
    m_O,r = m_O Phi,     d_r[a, b] = d[a, b] Phi,     Q_r = Phi^T Q,    mass, s, J unchanged

and the reduced equations are the Galerkin projection of the full ones: the same formulations,
integrators and energy balances apply (`ReducedModel` keeps the `Model` contract).

Bases (all ending M-orthonormalised as Ritz vectors of (K, M): M_r = I, K_r = diag(omega^2)):

- ``free_interface_modes``: the lowest ``n_modes`` eigenmodes of the supported body
  K phi = omega^2 M phi (its supports `fixed` held, every other DOF free);
- ``craig_bampton``: fixed-interface modes (the interface DOFs held as well) plus the static
  constraint modes Psi = -K_ii^-1 K_ib (a unit displacement of each interface DOF, the other
  interface DOFs held) [1];
- both optionally with ``static_modes``: K^-1 of the frame's unit inertia loads (-d[a, b],
  -m_O[c]) and of the load columns Q, so that the quasi-static response to the frame's motion
  (the centrifugal stretch of a spinning blade) and to the loads is exact in the basis
  (modal truncation augmentation [2]);
- with ``rigid_interfaces``: each node set tied rigidly to its centroid (RBE2-like), delta = T z
  with the set's DOFs R_c c, every basis computed on T^T K T, T^T M T (``rigid_interface_map``).

Stresses are linear in delta: ``ReducedModel.modal_fields`` holds the element stresses (plates:
both surfaces and the shear resultants) of each basis vector, and sigma(q) = sum_i q_i sigma_i
(``stress_fields``, ``stress``).

References
----------
.. [1] R. R. Craig, M. C. C. Bampton, Coupling of substructures for dynamic analyses,
       AIAA Journal 6 (1968) 1313, doi:10.2514/3.4741.
.. [2] J. M. Dickens, J. M. Nakagawa, M. J. Wittbrodt, A critique of mode acceleration and
       modal truncation augmentation methods for modal response analysis, Computers &
       Structures 62 (1997) 985, doi:10.1016/S0045-7949(96)00315-7.
"""
from __future__ import annotations

import logging
import warnings

import numpy as np
from scipy import sparse
from scipy.linalg import eigh
from scipy.sparse.linalg import LinearOperator, eigsh

from .arrays import lanczos_start
from .assembly import BodyInvariants
from .model import Model
from .sparse_solve import (IterativeSolveError, solve_backend, spd_factor, spd_preconditioner,
                           spd_solve)

__all__ = ["ReducedModel", "free_interface_modes", "craig_bampton", "reduce", "lobpcg_modes", "modes_below",
           "rigid_interface_map"]

LOBPCG_RTOL = 1e-8             # relative eigen-residual of each mode from LOBPCG

log = logging.getLogger(__name__)


def _lowest_modes(K, M, n_modes: int, factor=None, backend: str = "auto", near_null=None, start=None,
                  preconditioner=None):
    """(omega^2, Phi) of the n_modes lowest modes of K phi = omega^2 M phi (K SPD).

    Dense eigh up to 600 DOFs; above, shift-invert Lanczos about 0 with one SPD factorization of
    K (``factor``, or CHOLMOD / SuperLU), or, when ``backend`` (`flexmbs.sparse_solve.solve_backend`)
    is an iterative one, LOBPCG with the same preconditioner as the pre-stress solves
    (``lobpcg_modes``, from ``start``): no factor of K.
    """
    n = K.shape[0]
    if not (0 < n_modes < n):
        raise ValueError(f"`n_modes` must be in 1..{n - 1} for {n} DOFs, got {n_modes}")
    if n <= 600:
        lam, V = eigh(K.toarray() if sparse.issparse(K) else K, M.toarray() if sparse.issparse(M) else M)
        return lam[:n_modes], V[:, :n_modes]
    name = "direct" if factor is not None else solve_backend(n, backend, K)
    if name.endswith("-cg"):
        return lobpcg_modes(K, M, n_modes, name, near_null, start, preconditioner)
    lu = spd_factor(K) if factor is None else factor
    op = LinearOperator((n, n), matvec=lu.solve, dtype=float)
    lam, V = eigsh(K, k=n_modes, M=M, sigma=0.0, OPinv=op, which="LM", v0=lanczos_start(n))
    order = np.argsort(lam)
    return lam[order], V[:, order]


def lobpcg_modes(K, M, n_modes: int, backend: str = "amg-cg", near_null=None, start=None, preconditioner=None,
                 rtol: float = LOBPCG_RTOL, maxiter: int = 200, extra: int = 2, seed: int = 0):
    """(omega^2, Phi): the n_modes lowest modes by LOBPCG [3] preconditioned like the pre-stress
    solves (AMG V-cycle or Jacobi, `flexmbs.sparse_solve.spd_preconditioner`, or the given
    ``preconditioner``).

    The block holds n_modes + ``extra`` vectors, started from the lowest Ritz vectors of
    ``start`` (n, k) (e.g. the static modes, which span the low modes well) or of the rigid
    modes ``near_null``, filled up with random vectors.  Each wanted mode is converged to the
    relative residual

    .. code:: text

        |K phi - omega^2 M phi| <= rtol omega^2 |M phi|

    (its eigenvalue is then exact to about rtol^2).  scipy's tolerance is absolute, so it is
    set from an estimate of omega_1^2 (the lowest Ritz value of the start), and the run is
    repeated from its result with the new estimate, at most 3 times.  Raises
    `IterativeSolveError` when the modes have not converged then.

    References
    ----------
    .. [3] A. V. Knyazev, Toward the optimal preconditioned eigensolver: locally optimal block
           preconditioned conjugate gradient method, SIAM J. Sci. Comput. 23 (2001) 517,
           doi:10.1137/S1064827500366124.
    """
    from scipy.sparse.linalg import lobpcg
    n = K.shape[0]
    K, M = sparse.csr_array(K), sparse.csr_array(M)
    P = spd_preconditioner(K, backend, near_null) if preconditioner is None else preconditioner
    block = n_modes + extra
    X = np.random.default_rng(seed).standard_normal((n, block))
    begin = start if start is not None else near_null
    if begin is not None and begin.shape[1]:
        lam0, V = _ritz(K, M, begin)
        k = min(block, V.shape[1])
        X[:, :k] = V[:, :k] * np.sqrt(n)              # the random columns' scale
    else:
        lam0, _ = _ritz(K, M, X)
    lam_low = float(np.min(np.abs(lam0)))            # omega_1^2 estimate: an upper bound
    m_scale = float(np.sqrt(np.mean(M.diagonal())))
    for _ in range(3):
        with warnings.catch_warnings():              # scipy warns of unmet tolerances: checked below
            warnings.simplefilter("ignore", UserWarning)
            lam, X = lobpcg(K, X, B=M, M=P, largest=False, tol=rtol * lam_low * m_scale, maxiter=maxiter)[:2]
        order = np.argsort(lam)
        lam, X = lam[order], X[:, order]
        MX = M @ X[:, :n_modes]
        res = np.linalg.norm(K @ X[:, :n_modes] - MX * lam[:n_modes], axis=0) / (
            np.abs(lam[:n_modes]) * np.linalg.norm(MX, axis=0))
        if np.all(res <= 10 * rtol):
            break
        lam_low = float(np.min(np.abs(lam)))
    else:
        raise IterativeSolveError(f"LOBPCG ({backend}) did not converge in 3 runs of {maxiter} iterations: mode "
                                  f"{int(np.argmax(res)) + 1} has the relative residual {res.max():.3g} (tolerance "
                                  f"{rtol:g}); install scikit-sparse (CHOLMOD) or use the direct solver")
    log.info("LOBPCG (%s): %d modes, largest relative residual %.2g", backend, n_modes, res.max())
    return lam[:n_modes], X[:, :n_modes]


def _static_modes(model: Model, factor=None, backend: str = "auto", preconditioner=None):
    """K^-1 of the frame's unit inertia loads and of the load columns (n, k): the model's own
    ``static_displacements`` when its pre-stress solved them already (the same load cases in the
    same order), else with ``factor`` or by `flexmbs.sparse_solve.spd_solve` with ``preconditioner``."""
    F = _static_loads(model)
    if not F.shape[1]:
        return np.zeros((model.n_dofs, 0))
    U = model.static_displacements
    if U is not None and U.shape == F.shape:
        return U
    return _static_responses(model, F, factor, backend, preconditioner)


def _static_loads(model: Model) -> np.ndarray:
    """F (n, k): the frame's unit inertia loads (-d[a, b], -m_O[c]) and the load columns Q, in the order
    of the pre-stress's unit cases (`Model.static_displacements`)."""
    cols = [-model.inv.d[a, b] for a in range(3) for b in range(3) if np.any(model.inv.d[a, b])]
    cols += [-model.inv.m_O[c] for c in range(3) if np.any(model.inv.m_O[c])]
    cols += [model.Q[:, i] for i in range(model.Q.shape[1])]
    return np.column_stack(cols) if cols else np.zeros((model.n_dofs, 0))


def _static_responses(model: Model, F, factor=None, backend: str = "auto", preconditioner=None) -> np.ndarray:
    """K^-1 F: with ``factor`` (an SPD factor of K), else by `flexmbs.sparse_solve.spd_solve` with
    ``preconditioner`` (the solver ``reduce`` chose for the static and the attachment modes)."""
    if factor is not None:
        return factor.solve(F)
    return spd_solve(model.K, F, backend=backend, preconditioner=preconditioner)[0]


def _interface(model: Model, interface) -> np.ndarray:
    """Indices among the free DOFs of every free DOF of the interface nodes."""
    nodes = model.mesh.nodes(interface)
    dpn = model.element.dofs_per_node
    full = (nodes[:, None] * dpn + np.arange(dpn)).ravel()
    pos = np.searchsorted(model.free, full)
    ok = (pos < len(model.free)) & (model.free[np.minimum(pos, len(model.free) - 1)] == full)
    if not np.any(ok):
        raise ValueError("`interface`: its nodes have no free DOF (all are fixed)")
    return pos[ok]


def modes_below(model: Model, frequency: float) -> int:
    """How many modes of the supported body (its ``fixed`` held: for a body clamped at its joint,
    the fixed-interface modes of Craig-Bampton) lie at or below ``frequency`` [Hz]: the number of
    modes to keep for a frequency cut-off (docs/flexible_bodies.md, "How many modes").

    The modes come in blocks of growing size (8, 16, ... by `_lowest_modes`) until one lies above the
    cut-off.  Raises ValueError for a frequency that is not a positive number, or above every mode of
    the mesh (the cut-off asks for the full model then)."""
    f = float(frequency) if isinstance(frequency, (int, float)) and not isinstance(frequency, bool) else np.nan
    if not (np.isfinite(f) and f > 0):
        raise ValueError(f"`frequency` (the cut-off) must be a positive number of Hz, got {frequency!r}")
    n, k = model.n_dofs, 8
    while True:
        k = min(k, n - 1)
        lam, _ = _lowest_modes(model.K, model.M, k)
        freqs = np.sqrt(np.maximum(lam, 0.0)) / (2 * np.pi)
        if freqs[-1] > f:
            return int(np.count_nonzero(freqs <= f))
        if k == n - 1:
            raise ValueError(f"`frequency` {f:g} Hz: all {k} modes computed lie at or below it (the highest "
                             f"{freqs[-1]:.4g} Hz): the cut-off keeps the whole mesh; use the full model or a "
                             "lower cut-off")
        k *= 2


def free_interface_modes(model: Model, n_modes: int, factor=None):
    """(omega^2, Phi): the n_modes lowest eigenmodes of the supported body."""
    return _lowest_modes(model.K, model.M, n_modes, factor)


def craig_bampton(model: Model, interface, n_modes: int):
    """Craig-Bampton basis (n, n_modes + n_b): fixed-interface modes and static constraint modes.

    ``interface``: node set name / indices / mask; all their free DOFs are interface DOFs.
    """
    return _craig_bampton_basis(model.K, model.M, _interface(model, interface), n_modes)


def _craig_bampton_basis(K, M, b: np.ndarray, n_modes: int) -> np.ndarray:
    """[[Phi_i, Psi], [0, I]] (n, n_modes + n_b) on the rows (inner, b) of K and M [1]: Phi_i the
    n_modes lowest modes of K_ii phi = omega^2 M_ii phi (interface DOFs b held), Psi = -K_ii^-1 K_ib
    the static response of the inner DOFs to a unit displacement of each interface DOF."""
    n = K.shape[0]
    inner = np.setdiff1d(np.arange(n), b)
    K = sparse.csr_array(K)
    Kii = sparse.csr_array(K[inner][:, inner])
    Mii = sparse.csr_array(sparse.csr_array(M)[inner][:, inner])
    Kib = K[inner][:, b].toarray()
    lu = spd_factor(Kii)
    _, Phi_i = _lowest_modes(Kii, Mii, n_modes, lu)
    out = np.zeros((n, n_modes + len(b)))
    out[inner, :n_modes] = Phi_i
    out[inner, n_modes:] = -lu.solve(Kib)
    out[b, n_modes:] = np.eye(len(b))
    return out


def reduce(model: Model, n_modes: int, method: str = "free", interface=None,
           static_modes: bool = True, attachments=(), rigid_interfaces=()) -> "ReducedModel":
    """A `ReducedModel` of ``model`` with ``n_modes`` vibration modes.

    ``method``: "free" (free-interface modes of the supported body) or "craig-bampton"
    (with ``interface`` nodes); ``static_modes`` adds the static responses to the frame's unit
    inertia loads and to the loads (see the module docstring); ``attachments`` (node sets or
    index arrays) adds, for each, the static responses to unit forces along x, y (and z) at the
    point of an averaging interface of those nodes (`Model.interface_translation`, the load of
    a joint at a `flexmbs.bodies.Interface` marker): the attachment modes of a joint on a
    surface, which make the basis exact for its static load.

    ``rigid_interfaces`` (node sets or index arrays) ties each set rigidly to its centroid (an
    RBE2-like interface, `flexmbs.bodies.Interface` with ``rigid=True``): every DOF of its nodes
    follows one rigid motion c (6 DOFs in 3D), u_set = R_c c (`Model.interface_rigid_modes`).  The
    body is reduced with these multipoint constraints: delta = T z, z = (the other free DOFs, c of
    each set), every basis computed from T^T K T and T^T M T and mapped back by T.  With
    "craig-bampton" the c's are interface DOFs: the constraint modes are the static responses to
    the 6 rigid motions of each set, instead of one per DOF of its nodes (``_reduce_rigid``).
    """
    if not isinstance(model, Model) or isinstance(model, ReducedModel):
        raise TypeError(f"`model` must be a full flexmbs.Model, got {type(model).__name__}")
    if method not in ("free", "craig-bampton"):
        raise ValueError(f"`method` must be 'free' or 'craig-bampton', got {method!r}")
    if method == "craig-bampton" and interface is None and not len(rigid_interfaces):
        raise ValueError("`interface` (node set, indices or mask) or `rigid_interfaces` is needed for "
                         "'craig-bampton'")
    rigid = model.free_rigid_modes()
    if rigid.shape[1] and len(rigid_interfaces):
        raise ValueError(f"`rigid_interfaces` needs a supported body; the model has {rigid.shape[1]} rigid-body "
                         "motion(s) that its supports leave free: support it with `fixed`")
    if rigid.shape[1]:
        return _reduce_floating(model, n_modes, method, rigid, static_modes, attachments)
    if len(rigid_interfaces):
        return _reduce_rigid(model, n_modes, method, interface, static_modes, attachments, rigid_interfaces)
    backend = solve_backend(model.n_dofs, "auto", model.K)
    # one factorization for the modes, the static and the attachment modes (the static ones the
    # pre-stress may have solved already: `Model.static_displacements`); for large models without
    # CHOLMOD none, but one preconditioner for the static modes' CG and LOBPCG (started from the
    # rigid modes: from the static modes it took 8.2 s instead of 1.4 s at 9 720 DOFs)
    factor = P = near_null = None
    if backend.endswith("-cg"):
        near_null = model.rigid_modes()
        P = spd_preconditioner(model.K, backend, near_null)
    elif ((method == "free" and model.n_dofs > 600) or (static_modes and model.static_displacements is None)
          or len(attachments)):
        factor = spd_factor(model.K)
    static = _static_modes(model, factor, backend, P) if static_modes else np.zeros((model.n_dofs, 0))
    if method == "free":
        _, basis = _lowest_modes(model.K, model.M, n_modes, factor, backend, near_null, None, P)
    else:
        basis = craig_bampton(model, interface, n_modes)
    parts = [basis, static]
    if len(attachments):
        parts.append(_attachment_modes(model, attachments, factor, backend, P))
    return ReducedModel(model, np.hstack(parts), method=method)


def _attachment_loads(model: Model, attachments) -> np.ndarray:
    """Phi_c^T e_a (n, k): unit forces along each axis a of the mesh at the point of an averaging
    interface of each node group (`Model.interface_translation`)."""
    cols = []
    for nodes in attachments:
        Phi_c = model.interface_translation(nodes)[1]
        cols += [Phi_c[a] for a in range(model.mesh.dim) if np.any(Phi_c[a])]
    return np.column_stack(cols)


def _attachment_modes(model: Model, attachments, factor, backend: str = "auto", preconditioner=None) -> np.ndarray:
    """K^-1 Phi_c^T e_a (n, k): the static response to a unit force along each axis a of the mesh at
    the point of an averaging interface of each node group (`_attachment_loads`), with ``factor`` or
    by `flexmbs.sparse_solve.spd_solve` with ``preconditioner``."""
    return _static_responses(model, _attachment_loads(model, attachments), factor, backend, preconditioner)


def rigid_interface_map(model: Model, rigid_interfaces) -> tuple[sparse.csr_array, np.ndarray, list[np.ndarray]]:
    """(T (n, n_z), others, sets): delta = T z with z = (the free DOFs outside the sets, then the rigid motion c
    of each set), T = identity on the others and the set's rigid modes R_c on its DOFs
    (`Model.interface_rigid_modes`: u_set = R_c c, the RBE2 relation of Nastran's Quick Reference
    Guide, the set's nodes the dependent ones and its centroid the independent one); ``others`` the
    free DOFs outside the sets (z[:len(others)]), ``sets`` the z-indices of each set's c.  Raises
    ValueError for sets that share a node."""
    n = model.n_dofs
    taken = np.zeros(n, bool)
    blocks = []
    for k, nodes in enumerate(rigid_interfaces):
        try:
            _, dofs, R = model.interface_rigid_modes(nodes)
        except ValueError as err:
            raise ValueError(f"`rigid_interfaces[{k}]`: {err}") from None
        if np.any(taken[dofs]):
            raise ValueError(f"`rigid_interfaces[{k}]` shares nodes with an earlier set; give disjoint node sets")
        taken[dofs] = True
        blocks.append((dofs, R))
    others = np.flatnonzero(~taken)
    rows, cols, vals = [others], [np.arange(len(others))], [np.ones(len(others))]
    sets, col = [], len(others)
    for dofs, R in blocks:
        m = R.shape[1]
        rows.append(np.repeat(dofs, m))
        cols.append(np.tile(np.arange(col, col + m), len(dofs)))
        vals.append(R.ravel())
        sets.append(np.arange(col, col + m))
        col += m
    T = sparse.csr_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, col))
    return T, others, sets


def _reduce_rigid(model: Model, n_modes: int, method: str, interface, static_modes: bool, attachments,
                  rigid_interfaces) -> "ReducedModel":
    """The basis of ``reduce`` under the rigid interfaces' constraints delta = T z (`rigid_interface_map`):
    on K_z = T^T K T and M_z = T^T M T, "free" takes their lowest modes, "craig-bampton" the interface
    DOFs c of each set (and the DOFs of the ``interface`` nodes) as boundary: its constraint modes
    are Psi = -K_ii^-1 K_ib R on the inner DOFs for the set's rigid motions (Craig & Bampton [1] with
    the boundary DOFs bound by the multipoint constraint); static and attachment modes K_z^-1 T^T F.
    All with one sparse factorization of K_z: the iterative (conjugate-gradient, LOBPCG) path of large
    meshes without CHOLMOD is not offered with rigid interfaces."""
    T, others, sets = rigid_interface_map(model, rigid_interfaces)
    Tt = sparse.csr_array(T.T)
    K = sparse.csr_array(Tt @ model.K @ T)
    M = sparse.csr_array(Tt @ model.M @ T)
    factor = spd_factor(K)
    if method == "free":
        parts = [_lowest_modes(K, M, n_modes, factor if K.shape[0] > 600 else None)[1]]
    else:
        b = list(sets)
        if interface is not None:
            z_of = np.full(model.n_dofs, -1)
            z_of[others] = np.arange(len(others))
            extra = z_of[_interface(model, interface)]               # its DOFs outside the rigid sets
            b.append(extra[extra >= 0])
        parts = [_craig_bampton_basis(K, M, np.unique(np.concatenate(b)), n_modes)]
    loads = []
    if static_modes:
        loads.append(_static_loads(model))
    if len(attachments):
        loads.append(_attachment_loads(model, attachments))
    F = np.hstack(loads) if loads else np.zeros((model.n_dofs, 0))
    if F.shape[1]:
        parts.append(factor.solve(Tt @ F))
    tied = tuple(frozenset(model.mesh.nodes(nodes if isinstance(nodes, str) else np.asarray(nodes, dtype=np.int64))
                           .tolist()) for nodes in rigid_interfaces)
    return ReducedModel(model, T @ np.hstack(parts), method=method, rigid_interfaces=tied)


def _reduce_floating(model: Model, n_modes: int, method: str, rigid: np.ndarray, static_modes: bool, attachments):
    """Free-interface elastic modes of a body whose supports leave m rigid-body motions free (a
    free-free body, for a `FlexibleBody` on mean axes): the n_modes lowest modes of
    (K + s M) phi = (omega^2 + s) M phi (shifted by s > 0, so SPD; s = the mean of diag(K) / diag(M)
    times 1e-6) after its m lowest (the rigid-body modes, omega = 0), with the round-off of their
    rigid-body part removed, phi <- phi - R (R^T M R)^-1 R^T M phi: the basis is M-orthogonal to the
    rigid-body modes R, so [m_O; g] Phi = 0 (the mean-axis conditions hold in it)."""
    m = rigid.shape[1]
    if method != "free":
        raise ValueError(f"`method` {method!r}: the model has {m} rigid-body motion(s) that its supports leave "
                         "free (a free-free body); reduce it with method='free' (its elastic modes), or support "
                         "it with `fixed`")
    if static_modes or len(attachments):
        raise ValueError(f"`static_modes=True` (and `attachments`) solves K x = f, but the model has {m} rigid-body "
                         "motion(s) that its supports leave free (K is singular); pass static_modes=False for a "
                         "free-free body")
    M, K = model.M, model.K
    s = 1e-6 * float(np.mean(K.diagonal()) / np.mean(M.diagonal()))
    _, basis = _lowest_modes(sparse.csr_array(K + s * M), M, n_modes + m)
    basis = basis[:, m:]                         # the m lowest are the rigid-body modes (omega = 0)
    MR = M @ rigid
    basis = basis - rigid @ np.linalg.solve(rigid.T @ MR, MR.T @ basis)     # their round-off removed
    return ReducedModel(model, basis, method=method)


def _ritz(K, M, B, rtol: float = 1e-13):
    """M-orthonormal Ritz vectors of (K, M) in span(B): drop dependent columns, then solve the
    small eigenproblem.  Returns (omega^2, Phi)."""
    Bo = B / np.sqrt(np.einsum("ij,ij->j", B, M @ B))[None, :]    # unit M-norm columns first
    for tol in (rtol, 1e-6):                 # twice: the second pass restores orthogonality
        G = Bo.T @ (M @ Bo)
        w, V = np.linalg.eigh(0.5 * (G + G.T))
        keep = w > tol * w.max()
        Bo = Bo @ (V[:, keep] / np.sqrt(w[keep]))   # M-orthonormal
    Kr = Bo.T @ (K @ Bo)
    lam, W = np.linalg.eigh(0.5 * (Kr + Kr.T))
    return lam, Bo @ W


class ReducedModel(Model):
    """A `Model` whose DOFs are modal coordinates q, delta = Phi q (see the module docstring).

    Parameters
    ----------
    model : Model
        The full model (its stiffening, loads, damping and frame motion are kept).
    basis : ndarray (n, k)
        Any basis of the free DOFs; it is M-orthonormalised (Ritz vectors), dependent columns
        dropped.
    method : str
        How the basis was built (a label).
    rigid_interfaces : tuple of frozenset
        The node sets that every basis vector moves rigidly (`reduce`'s ``rigid_interfaces``; the
        rigid `flexmbs.bodies.Interface` markers a `FlexibleBody` of it accepts).
    """

    def __init__(self, model: Model, basis: np.ndarray, method: str = "basis", rigid_interfaces: tuple = ()):
        basis = np.asarray(basis, dtype=float)
        if basis.ndim != 2 or basis.shape[0] != model.n_dofs:
            raise ValueError(f"`basis` must have shape ({model.n_dofs}, k), got {basis.shape}")
        self.__dict__.update({k: v for k, v in model.__dict__.items()})
        self.static_displacements = None              # the full model's; q has no unit cases
        self.full = model
        self.method = method
        self.rigid_interfaces = tuple(rigid_interfaces)
        lam, Phi = _ritz(model.K, model.M, basis)
        self.Phi = self.basis = Phi
        self.omega2 = lam
        r = Phi.shape[1]
        self.n_dofs = r
        proj = lambda A: _sym(Phi.T @ (A @ Phi))  # noqa: E731   (K, K_geo symmetric)
        inv = model.inv
        S = {k: sparse.csr_array(Phi.T @ (Sab @ Phi)) for k, Sab in inv.S.items()}
        diag = [S[(a, a)] for a in range(3) if (a, a) in S]
        M_r = sparse.csr_array(sum(diag[1:], diag[0]))
        self.inv = BodyInvariants(M_r, S, inv.m_O @ Phi, inv.d @ Phi, inv.mass, inv.s, inv.J)
        self.M = self.inv.M
        self.K = sparse.csr_array(proj(model.K))
        self.Q = Phi.T @ model.Q
        self._Kg = [sparse.csr_array(proj(Kg)) for Kg in model.geometric_stiffness_matrices]
        self._Kg_keys = list(model.geometric_stiffness_keys)
        self.dense = True
        self.M_op = self.M.toarray()
        self.K_op = self.K.toarray()
        self._Kg_op = [Kg.toarray() for Kg in self._Kg]
        self.C_op = None
        if model.damping is not None and any(model.damping):
            alpha, beta = model.damping
            self.C_damp = sparse.csr_array(alpha * self.M + beta * self.K)
            self.C_op = self.C_damp.toarray()
        else:
            self.C_damp = sparse.csr_array((r, r))
        self.S_op = {k: v.toarray() for k, v in self.inv.S.items()}
        self.G_op = [None if Gi is None else Gi.toarray() for Gi in self.inv.G]
        self.m_O, self.d, self.g = self.inv.m_O, self.inv.d, self.inv.g
        self._cache = {}
        self._modal_fields = None
        self._modal_kgeo = None
        log.info("reduced model: %d -> %d DOFs (%s), lowest frequency %.6g Hz", model.n_dofs, r,
                 method, np.sqrt(max(lam[0], 0.0)) / (2 * np.pi))

    # -- the Model contract on modal coordinates -------------------------------------------------
    def expand(self, q: np.ndarray) -> np.ndarray:
        """Full DOF vectors (..., n_full) from modal coordinates (..., r)."""
        return self.full.expand(np.asarray(q) @ self.Phi.T)

    def modal_geometric_stiffness(self) -> np.ndarray:
        """G (r, r, r): G[i] = Phi^T K_geo(sigma(phi_i)) Phi, the geometric stiffness of the stress of
        basis vector i projected on the basis (`Model.stress_stiffness` of the full model, one
        assembly per vector, computed once), so that K_geo(sigma(Phi q)) = sum_i q_i G[i] on the
        modal coordinates: the stiffening of a reduced body by its own stress
        (`flexmbs.bodies.FlexibleBody`, stiffening "modal-stress")."""
        if self._modal_kgeo is None:
            from .assembly import Assembler
            full = self.full
            asm = Assembler(full.cells, full.mesh.n_nodes, full.element.dofs_per_node)
            Phi = self.Phi
            self._modal_kgeo = np.stack([_sym(Phi.T @ (full.stress_stiffness(Phi[:, i], asm=asm) @ Phi))
                                         for i in range(Phi.shape[1])])
        return self._modal_kgeo

    def node_translations(self) -> sparse.csr_array:
        """Phi_nodes Phi (3 n_nodes, r): the translation of every mesh node from the modal
        coordinates (`Model.node_translations` of the full model times the basis)."""
        return sparse.csr_array(self.full.node_translations() @ self.Phi)

    def interface_rigid_modes(self, nodes):
        """The full model's (`Model.interface_rigid_modes`): the DOFs are its free DOFs."""
        return self.full.interface_rigid_modes(nodes)

    def node_dof_rows(self, dofs: np.ndarray) -> np.ndarray:
        """(k, r): rows ``dofs`` of the basis, delta[dofs] = Phi[dofs] q."""
        return self.Phi[dofs]

    def dof(self, node: int, name: str) -> int:
        raise ValueError("a ReducedModel has modal coordinates, not nodal DOFs: use "
                         "`reduced.full.dof(node, name)` on `reduced.Phi @ q`")

    def free_rigid_modes(self) -> np.ndarray:
        """The full model's (`Model.free_rigid_modes`, on its free DOFs): the supports are its."""
        return self.full.free_rigid_modes()

    def rigid_modes(self, full: bool = False, chunk: int = 50_000) -> np.ndarray:
        raise ValueError("a ReducedModel has modal coordinates, not nodal DOFs: its rigid modes are "
                         "`reduced.full.rigid_modes()` of the full model")

    def physical(self, q: np.ndarray) -> np.ndarray:
        """Free-DOF displacements delta = Phi q of the full model, (..., n)."""
        return np.asarray(q) @ self.Phi.T

    @property
    def modal_fields(self) -> dict[str, np.ndarray]:
        """The full model's `Model.stress_fields` of each basis vector, {name: (r, n_el, ...)}: stress
        (and, for plates, the bottom surface's stress and the shear resultants), computed once
        (empty for elements without ``stress``)."""
        if self._modal_fields is None:
            self._modal_fields = self.full.stress_fields(self.Phi.T)
        return self._modal_fields

    @property
    def modal_stress(self) -> np.ndarray | None:
        """Element stresses (r, n_el, 3, 3) of the basis vectors (``modal_fields["stress"]``; None for
        elements without ``stress``)."""
        return self.modal_fields.get("stress")

    def stress_fields(self, q: np.ndarray) -> dict[str, np.ndarray]:
        """`Model.stress_fields` from the modal coordinates: sum_i q_i field_i, {name: (..., n_el, ...)}."""
        return {k: np.tensordot(np.asarray(q, dtype=float), v, axes=(-1, 0)) for k, v in self.modal_fields.items()}

    def stress(self, q: np.ndarray) -> np.ndarray:
        """Element centroid stresses sum_i q_i sigma_i, (..., n_el, 3, 3).  ValueError for a model without
        stresses (beams and bars: their ``axial_force`` is in the element data; imported bodies)."""
        if "stress" not in self.modal_fields:
            if hasattr(self.full, "stress"):          # an ImportedModel: its refusal says why
                self.full.stress(self.physical(q))
            raise ValueError(f"`stress`: {type(self.element).__name__} has no stress output (bars and beams: the "
                             "element data's axial_force)")
        return self.stress_fields(q)["stress"]


def _sym(A):
    return 0.5 * (A + A.T)
