"""The `Model`: one elastic body on a prescribed moving frame, ready for the formulations.

Everything constant is assembled once here: the stiffness ``K``, the mass ``M``, the
inertia invariants (``S[a, b]``, ``d[a, b]``, ``m_O``, ``G_i``, ``g_i``), Rayleigh
damping, the load vectors and the reduction to the free DOFs.  The formulations
combine them at each time with the frame's omega(t), eps(t) and origin motion;
there is no quadrature and no assembly inside the time loop.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import sparse

from .assembly import Assembler, assemble_invariants
from .elements.base import Element
from .mesh import Mesh
from .motion import FrameMotion, Fixed

__all__ = ["Model", "NodalLoad", "rayleigh_coefficients"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NodalLoad:
    """A load ``value * f(t)`` on DOF ``dof`` of each node in ``nodes`` (body-frame components).

    ``nodes`` is a set name, indices or a mask; ``dof`` a DOF name of the element
    (e.g. "u", "v", "theta") or a local index; ``f`` a callable of t (default 1).
    """

    nodes: object
    dof: object
    value: float
    f: Callable[[float], float] | None = None


def rayleigh_coefficients(zeta: float, omega_1: float, omega_2: float) -> tuple[float, float]:
    """(alpha, beta) of C = alpha M + beta K giving damping ratio ``zeta`` at omega_1 and omega_2.

    zeta(omega) = alpha / (2 omega) + beta omega / 2 (Rayleigh damping).
    """
    if not (zeta >= 0 and omega_2 > omega_1 > 0):
        raise ValueError(f"need zeta >= 0 and omega_2 > omega_1 > 0, got zeta={zeta}, "
                         f"omega_1={omega_1}, omega_2={omega_2}")
    alpha = 2.0 * zeta * omega_1 * omega_2 / (omega_1 + omega_2)
    beta = 2.0 * zeta / (omega_1 + omega_2)
    return alpha, beta


def _operator(A, dense: bool):
    return A.toarray() if dense else sparse.csr_array(A)


class Model:
    """An elastic body discretised by one element type, on a prescribed frame motion.

    Parameters
    ----------
    mesh : Mesh
        Nodes in body-frame coordinates.
    element : Element
        Element type (with its material and section) for the cells ``element.cell_type``.
    motion : FrameMotion, optional
        The frame's prescribed motion; default `Fixed`.
    fixed : list of (nodes, dofs)
        Supports: nodes as set name / indices / mask, dofs a list of DOF names or "all".
    loads : list of NodalLoad
    gravity : array_like, shape (3,), optional
        Gravitational acceleration in global components [m/s^2].
    damping : (alpha, beta), optional
        Rayleigh damping C = alpha M + beta K acting on the elastic velocities.
    dense_below : int
        Models with fewer free DOFs keep their matrices dense (faster for small bodies).
    """

    def __init__(self, mesh: Mesh, element: Element, *, motion: FrameMotion | None = None,
                 fixed=(), loads=(), gravity=None, damping=None, dense_below: int = 400):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"`mesh` must be a flexmbs.Mesh, got {type(mesh).__name__}")
        if not isinstance(element, Element):
            raise TypeError(f"`element` must be a flexmbs element, got {type(element).__name__}")
        if element.cell_type not in mesh.cells:
            raise ValueError(f"`mesh` has no {element.cell_type!r} cells for {type(element).__name__}; "
                             f"it has {sorted(mesh.cells)}")
        self.mesh, self.element = mesh, element
        self.motion = Fixed() if motion is None else motion
        if not isinstance(self.motion, FrameMotion):
            raise TypeError(f"`motion` must be a flexmbs.motion.FrameMotion, got {type(motion).__name__}")
        self.cells = mesh.cells[element.cell_type]
        self.X = mesh.points[self.cells]
        dpn = element.dofs_per_node
        self.n_full = mesh.n_nodes * dpn
        if getattr(element, "axial_dofs_along_axis", False):
            e = self.X[:, 1] - self.X[:, 0]
            e = e / np.linalg.norm(e, axis=1, keepdims=True)
            if np.any(np.abs(e @ e[0]) < 1 - 1e-9):
                raise ValueError(f"{type(element).__name__} has one axial DOF per node: all its "
                                 "elements must lie on one straight line")

        # -- constant arrays, assembled once ------------------------------------------------------
        asm = Assembler(self.cells, mesh.n_nodes, dpn)
        K_full = asm.matrix(element.k(self.X))
        inv_full = assemble_invariants(element, self.X, self.cells, mesh.n_nodes)
        used = np.zeros(self.n_full, bool)
        used[asm.element_dofs.ravel()] = True
        fixed_mask = ~used                                   # DOFs of nodes without cells
        for nodes, dofs in fixed:
            idx = mesh.nodes(nodes)
            for j in self._dof_indices(dofs):
                fixed_mask[idx * dpn + j] = True
        self.fixed_dofs = np.flatnonzero(fixed_mask)
        self.free = np.flatnonzero(~fixed_mask)
        self.n_dofs = len(self.free)
        if self.n_dofs == 0:
            raise ValueError("`fixed` removes every DOF: nothing is left to move")
        free = self.free
        self.K = sparse.csr_array(K_full[free][:, free])
        self.inv = inv_full.reduce(free)
        self.M = self.inv.M
        self.mass = inv_full.mass

        # -- damping, loads, gravity ------------------------------------------------------------
        self.damping = None if damping is None else tuple(float(c) for c in damping)
        if self.damping is not None and (len(self.damping) != 2 or min(self.damping) < 0):
            raise ValueError(f"`damping` must be (alpha, beta) >= 0, got {damping!r}")
        self.loads = list(loads)
        Q = np.zeros((self.n_full, len(self.loads)))
        for i, load in enumerate(self.loads):
            if not isinstance(load, NodalLoad):
                raise TypeError(f"`loads[{i}]` must be a NodalLoad, got {type(load).__name__}")
            idx = mesh.nodes(load.nodes)
            (j,) = self._dof_indices([load.dof])
            Q[idx * dpn + j, i] += load.value
            if np.any(fixed_mask[idx * dpn + j]):
                log.warning("load %d acts on a fixed DOF; that part is carried by the support", i)
        self.Q = Q[free]
        self._load_f = [ld.f for ld in self.loads]
        self.gravity = np.zeros(3) if gravity is None else np.asarray(gravity, dtype=float)
        if self.gravity.shape != (3,):
            raise ValueError(f"`gravity` must be a 3-vector (global components), got {gravity!r}")

        # -- operators for the time loop (dense for small bodies) --------------------------------
        dense = self.n_dofs < dense_below
        self.dense = dense
        self.M_op = _operator(self.M, dense)
        self.K_op = _operator(self.K, dense)
        self.C_op = None
        if self.damping is not None and any(self.damping):
            alpha, beta = self.damping
            self.C_damp = sparse.csr_array(alpha * self.M + beta * self.K)
            self.C_op = _operator(self.C_damp, dense)
        else:
            self.C_damp = sparse.csr_array((self.n_dofs, self.n_dofs))
        self.S_op = {k: _operator(v, dense) for k, v in self.inv.S.items()}
        self.G_op = [None if Gi is None else _operator(Gi, dense) for Gi in self.inv.G]
        self.m_O = self.inv.m_O                  # (3, n)
        self.d = self.inv.d                      # (3, 3, n)
        self.g = self.inv.g                      # (3, n)
        self._cache: dict = {}
        log.info("model: %d elements, %d free DOFs, mass %.6g kg, %s operators",
                 len(self.cells), self.n_dofs, self.mass, "dense" if dense else "sparse")

    # -- helpers -------------------------------------------------------------------------------------
    def _dof_indices(self, dofs) -> list[int]:
        names = self.element.dof_names
        if isinstance(dofs, str) and dofs == "all":
            return list(range(len(names)))
        out = []
        for dof in ([dofs] if isinstance(dofs, (str, int, np.integer)) else dofs):
            if isinstance(dof, str):
                if dof not in names:
                    raise ValueError(f"unknown DOF {dof!r} for {type(self.element).__name__}; "
                                     f"valid: {list(names)} or 'all'")
                out.append(names.index(dof))
            elif 0 <= int(dof) < len(names):
                out.append(int(dof))
            else:
                raise ValueError(f"DOF index {dof!r} out of range 0..{len(names) - 1}")
        return out

    def dof(self, node: int, name: str) -> int:
        """Index among the free DOFs of DOF ``name`` of ``node`` (ValueError if fixed)."""
        (j,) = self._dof_indices([name])
        full = node * self.element.dofs_per_node + j
        pos = np.searchsorted(self.free, full)
        if pos >= len(self.free) or self.free[pos] != full:
            raise ValueError(f"DOF {name!r} of node {node} is fixed")
        return int(pos)

    def expand(self, delta: np.ndarray) -> np.ndarray:
        """Full DOF vectors (..., n_full) from free ones (..., n_dofs), zeros at the supports."""
        delta = np.asarray(delta)
        out = np.zeros(delta.shape[:-1] + (self.n_full,))
        out[..., self.free] = delta
        return out

    def displacement_field(self, delta: np.ndarray) -> np.ndarray:
        """Nodal displacements (..., n_nodes, dim) in body-frame components from free DOFs (..., n)."""
        full = self.expand(delta)
        el = self.element
        if el.cell_type == "line":
            xi_nodes = np.array([-1.0, 1.0])
        else:
            xi_nodes = None
        dim = self.mesh.dim
        lead = full.shape[:-1]
        out = np.zeros(lead + (self.mesh.n_nodes, dim))
        if xi_nodes is None:                    # Lagrange solids: translations are the DOFs
            out[...] = full.reshape(lead + (self.mesh.n_nodes, el.dofs_per_node))[..., :dim]
            return out
        N_nodes = el.N(self.X, xi_nodes)        # (n_el, 2, 3, n_e)
        edofs = (self.cells[:, :, None] * el.dofs_per_node + np.arange(el.dofs_per_node)).reshape(
            len(self.cells), -1)
        u = np.einsum("epan,...en->...epa", N_nodes, full[..., edofs])[..., :dim]
        out[..., self.cells, :] = u
        return out

    # -- time-dependent data for the formulations -------------------------------------------------
    def frame(self, t: float):
        """FrameState of the motion at t."""
        return self.motion.state(t)

    def matrix_key(self, t: float):
        return self.motion.matrix_key(t)

    def load_factors(self, t: float) -> np.ndarray:
        """Time factors f(t) of the loads: q_ext(t) = Q f(t)."""
        return np.array([1.0 if fi is None else fi(t) for fi in self._load_f])

    def q_ext(self, t: float) -> np.ndarray:
        """Nodal loads at t on the free DOFs."""
        if not self._load_f:
            return np.zeros(self.n_dofs)
        return self.Q @ self.load_factors(t)

    @property
    def steady(self) -> bool:
        """True when every matrix and frame load is constant in time (constant spin or fixed
        frame, origin at rest, no gravity in a rotating frame)."""
        from .motion import ConstantRotation, Fixed
        if isinstance(self.motion, Fixed):
            return True
        return isinstance(self.motion, ConstantRotation) and not np.any(self.gravity)

    def _combo(self, tag: str, coeffs: np.ndarray, build):
        """Combined operator for ``coeffs``, cached while they recur (constant spin: built once).

        Dense models build it at once (cheap); sparse models use matvecs with the separate
        matrices until the same coefficients come back, then build and keep it.
        A few entries per tag are kept (omega and eps alternate within one evaluation).
        """
        key = (tag, coeffs.tobytes())
        entry = self._cache.get(key)
        if entry is None:
            if len(self._cache) > 16:
                self._cache.pop(next(iter(self._cache)))
            entry = self._cache[key] = [build() if self.dense else None]
        elif entry[0] is None:
            entry[0] = build()
        return entry[0]

    def G_dot(self, w: np.ndarray, v: np.ndarray) -> np.ndarray:
        """int rho N^T tilde(w) N dV v = sum_i w_i G_i v."""
        w = np.asarray(w, dtype=float)
        op = self._combo("G", w, lambda: _sum_ops(
            [(wi, Gi) for wi, Gi in zip(w, self.G_op) if Gi is not None and wi != 0.0], self.n_dofs, self.dense))
        if op is not None:
            return op @ v
        out = np.zeros(self.n_dofs)
        for wi, Gi in zip(w, self.G_op):
            if Gi is not None and wi != 0.0:
                out += wi * (Gi @ v)
        return out

    def S_dot(self, A: np.ndarray, v: np.ndarray) -> np.ndarray:
        """int rho N^T A N dV v = sum_ab A[a, b] S[a, b] v."""
        op = self._combo("S", A, lambda: _sum_ops(
            [(A[a, b], Sab) for (a, b), Sab in self.S_op.items() if A[a, b] != 0.0], self.n_dofs, self.dense))
        if op is not None:
            return op @ v
        out = np.zeros(self.n_dofs)
        for (a, b), Sab in self.S_op.items():
            if A[a, b] != 0.0:
                out += A[a, b] * (Sab @ v)
        return out

    def d_sum(self, A: np.ndarray) -> np.ndarray:
        """int rho N^T A x dV = sum_ab A[a, b] d[a, b]."""
        return self._combo("d", A, lambda: np.einsum("ab,abn->n", A, self.d)) if self.dense else \
            np.einsum("ab,abn->n", A, self.d)

    def damping_force(self, v: np.ndarray) -> np.ndarray:
        return np.zeros(self.n_dofs) if self.C_op is None else self.C_op @ v

    def rigid_velocity_power(self, t, delta, delta_dot, delta_ddot) -> float:
        """Power int rho (a - g) . v_rig dV that flows in through the frame's motion.

        v_rig = v_O + omega x (x + u) is the velocity the point would have if it were
        rigidly attached to the frame; a the point's acceleration, g gravity.  With it
        d(T + V + V_g)/dt = q.delta' - delta'^T C delta' + P_frame exactly (docs/theory.md).
        """
        fs = self.frame(t)
        w, e = fs.omega, fs.eps
        vO, alpha = fs.v_O_local, fs.R.T @ (fs.a_O - self.gravity)
        W, E = _tilde(w), _tilde(e)
        A = E + W @ W
        mO = self.m_O
        sy = self.inv.s + mO @ delta                               # int rho y dV
        p1 = vO @ (self.mass * alpha + A @ sy + 2.0 * W @ (mO @ delta_dot) + mO @ delta_ddot)
        Yyy = self.moments(delta, delta)
        Yyv = self.moments(delta, delta_dot, with_x_second=False)
        Yya = self.moments(delta, delta_ddot, with_x_second=False)
        torque = (np.cross(sy, alpha) + _cross_moment(A, Yyy) + 2.0 * _cross_moment(W, Yyv)
                  + _cross_moment(np.eye(3), Yya))
        return float(p1 + w @ torque)

    def moments(self, delta, beta, with_x_second: bool = True) -> np.ndarray:
        """Y[a, b] = int rho y_a z_b dV with y = x + N delta and z = x + N beta (or N beta).

        Built from the invariants: int rho x_a (N beta)_b = d[b, a] . beta, int rho (N delta)_a
        (N beta)_b = delta^T S[a, b] beta, int rho x_a x_b = J[a, b].
        """
        Y = np.einsum("ban,n->ab", self.d, beta)
        for (a, b), Sab in self.S_op.items():
            Y[a, b] += delta @ (Sab @ beta)
        if with_x_second:
            Y += self.inv.J + np.einsum("ban,n->ab", self.d, delta).T
        return Y


def _sum_ops(terms, n: int, dense: bool):
    """sum c_k A_k of (coefficient, operator) pairs, as a dense array or CSR."""
    if not terms:
        return np.zeros((n, n)) if dense else sparse.csr_array((n, n))
    out = terms[0][0] * terms[0][1]
    for c, A in terms[1:]:
        out = out + c * A
    return out if dense else sparse.csr_array(out)


def _tilde(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _cross_moment(B: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """int rho y x (B z) dV from Y[j, l] = int rho y_j z_l dV: c_i = eps_ijk B_kl Y_jl."""
    T = B @ Y.T                     # T[k, j] = B_kl Y_jl
    return np.array([T[2, 1] - T[1, 2], T[0, 2] - T[2, 0], T[1, 0] - T[0, 1]])
