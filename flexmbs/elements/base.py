"""Element interface and the inertia integrals of an element on a moving frame.

A point of an element has, in the body (floating) frame, the undeformed position
``x`` and the displacement ``u = N(x) delta`` where ``delta`` are the element's
DOFs in body-frame components and ``N`` has 3 rows (planar elements have a zero
third row).  When the frame rotates with angular velocity ``omega`` and angular
acceleration ``eps`` (body components), every inertia term of the equations of
motion is a linear combination of a few constant integrals
(ref. [1] eqs. (A2)-(A9) with the errata of ``docs/notation.md``):

.. code:: text

    m          = int rho N^T N dV                 consistent mass              (n_e, n_e)
    m_O        = int rho N dV                     (the papers' [m_O^i])        (3, n_e)
    S[a, b]    = int rho N_a^T N_b dV             shape integrals, N_a row a   (n_e, n_e)
    d[a, b]    = int rho N_a^T x_b dV             first moments                (n_e,)
    mass, s, J = int rho dV, int rho x dV, int rho x x^T dV  (rigid-body data)

so that, for any 3x3 matrix A (skew(omega), skew(omega)^2, skew(eps) ...),

.. code:: text

    int rho N^T A N dV = sum_ab A[a, b] S[a, b]        int rho N^T A x dV = sum_ab A[a, b] d[a, b]

Every array is batched over elements with the element axis first.

References
----------
.. [1] S. Vlase, A. E. Nicolescu, M. Marin, New analytical model used in finite
       element analysis of solids mechanics, Mathematics 8 (2020) 1401,
       doi:10.3390/math8091401.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from ..frozen import Fields, FrozenFields

__all__ = ["Material", "Element", "MassPoints", "SBlock", "InertiaIntegrals", "inertia_from_points"]


class Material(FrozenFields):
    """Linear elastic isotropic material (SI units).  Frozen (`flexmbs.frozen`).

    Parameters
    ----------
    E : float
        Young's modulus [Pa].
    rho : float
        Density [kg/m^3].
    nu : float
        Poisson's ratio [-], 0 <= nu < 0.5.
    """

    def __init__(self, E: float, rho: float, nu: float = 0.0):
        self._set_fields(locals())
        for name in ("E", "rho"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"`{name}` must be a positive finite number, got {value!r}")
        if not (0.0 <= self.nu < 0.5):
            raise ValueError(f"`nu` must satisfy 0 <= nu < 0.5, got {self.nu!r}")

    @property
    def G(self) -> float:
        """Shear modulus E / (2 (1 + nu)) [Pa]."""
        return self.E / (2.0 * (1.0 + self.nu))


class MassPoints(Fields):
    """Points that carry the mass of the elements (`flexmbs.frozen.Fields`: a mutable record).

    ``N`` (n_el, n_q, 3, n_e): displacement interpolation at the points;
    ``x`` (n_el, n_q, 3): their undeformed positions in the body frame;
    ``w`` (n_el, n_q): their mass weights rho dV (quadrature weight x det J x rho,
    for beams also the cross-section weight).
    """

    def __init__(self, N: np.ndarray, x: np.ndarray, w: np.ndarray):
        self._set_fields(locals())


class SBlock(Fields):
    """One nonzero shape integral S[a, b] of a batch of elements (a mutable `flexmbs.frozen.Fields`).

    ``local`` (n_el, r, c) holds int rho N_a^T N_b dV restricted to the element DOFs
    ``rows`` (r,) and ``cols`` (c,); the other entries are zero.  Vector-Lagrange
    elements share one scalar mass array between all their blocks.
    """

    def __init__(self, a: int, b: int, local: np.ndarray, rows: np.ndarray, cols: np.ndarray):
        self._set_fields(locals())

    def dense(self, n_e: int) -> np.ndarray:
        out = np.zeros((self.local.shape[0], n_e, n_e))
        out[:, self.rows[:, None], self.cols[None, :]] = self.local
        return out


class InertiaIntegrals(Fields):
    """Constant inertia integrals of a batch of elements (see the module docstring); a mutable
    `flexmbs.frozen.Fields`.

    ``mass`` (n_el,); ``s`` (n_el, 3) int rho x dV; ``J`` (n_el, 3, 3) int rho x x^T dV;
    ``m_O`` (n_el, 3, n_e); ``d`` (n_el, 3, 3, n_e), d[:, a, b] = int rho N_a^T x_b dV;
    ``S``: the nonzero blocks S[a, b] (list of `SBlock`).
    """

    def __init__(self, mass: np.ndarray, s: np.ndarray, J: np.ndarray, m_O: np.ndarray, d: np.ndarray,
                 S: list[SBlock]):
        self._set_fields(locals())

    def S_dense(self, a: int, b: int) -> np.ndarray:
        n_el, n_e = self.m_O.shape[0], self.m_O.shape[2]
        for block in self.S:
            if block.a == a and block.b == b:
                return block.dense(n_e)
        return np.zeros((n_el, n_e, n_e))

    @property
    def m(self) -> np.ndarray:
        """Consistent mass int rho N^T N dV = sum_a S[a, a], shape (n_el, n_e, n_e)."""
        return sum(self.S_dense(a, a) for a in range(3))


def inertia_from_points(points: MassPoints) -> InertiaIntegrals:
    """Inertia integrals by quadrature over the mass points (the definitions, no shortcut)."""
    N, x, w = points.N, points.x, points.w
    n_e = N.shape[-1]
    active = [a for a in range(3) if np.any(N[:, :, a, :])]
    blocks = []
    idx = np.arange(n_e)
    for a in active:
        wNa_T = np.swapaxes(w[:, :, None] * N[:, :, a, :], 1, 2)          # (n_el, n_e, n_q)
        for b in active:
            blocks.append(SBlock(a, b, wNa_T @ N[:, :, b, :], idx, idx))  # batched matmul, BLAS
    return InertiaIntegrals(
        mass=w.sum(axis=1),
        s=np.einsum("eq,eqa->ea", w, x),
        J=np.einsum("eq,eqa,eqb->eab", w, x, x),
        m_O=np.einsum("eq,eqan->ean", w, N),
        d=np.einsum("eq,eqan,eqb->eabn", w, N, x),
        S=blocks,
    )


class Element(ABC):
    """A finite element type with its material and section data.

    Subclasses define the class attributes and ``N``, ``dN_dxi``, ``mass_points``
    and ``k``; everything inertial follows from ``mass_points`` here.
    DOFs are node-major: element DOF ``i * dofs_per_node + j`` is DOF ``j`` of node ``i``,
    in body-frame components.
    """

    cell_type: ClassVar[str]
    n_nodes: ClassVar[int]
    dofs_per_node: ClassVar[int]
    dof_names: ClassVar[tuple[str, ...]]
    dim: ClassVar[tuple[int, ...]] = (2, 3)   # node coordinate dimensions it accepts

    @property
    def n_e(self) -> int:
        """Number of DOFs of one element."""
        return self.n_nodes * self.dofs_per_node

    def check_X(self, X) -> np.ndarray:
        """Validate element node coordinates X, shape (n_el, n_nodes, dim)."""
        X = np.asarray(X, dtype=float)
        if X.ndim != 3 or X.shape[1] != self.n_nodes or X.shape[2] not in self.dim:
            raise ValueError(f"`X` for {type(self).__name__} must have shape (n_el, {self.n_nodes}, "
                             f"dim) with dim in {self.dim}, got {X.shape}")
        return X

    @abstractmethod
    def N(self, X, xi) -> np.ndarray:
        """Displacement interpolation at reference points ``xi``: (n_el, n_p, 3, n_e)."""

    @abstractmethod
    def dN_dxi(self, X, xi) -> np.ndarray:
        """Derivatives of ``N`` with respect to the reference coordinates: (n_el, n_p, 3, n_e, d)."""

    @abstractmethod
    def mass_points(self, X) -> MassPoints:
        """Points, shape functions and weights rho dV that integrate the inertia exactly."""

    @abstractmethod
    def k(self, X) -> np.ndarray:
        """Stiffness int B^T H B dV, shape (n_el, n_e, n_e)."""

    @abstractmethod
    def rigid_modes(self, X) -> np.ndarray:
        """Element DOF vectors of the rigid motions, shape (n_el, n_e, n_modes).

        Columns: translations along the body axes the element can represent, then
        infinitesimal rotations about the axes through the frame's origin.
        """

    def inertia_integrals(self, X) -> InertiaIntegrals:
        """All constant inertia integrals (see the module docstring)."""
        return inertia_from_points(self.mass_points(self.check_X(X)))

    def m(self, X) -> np.ndarray:
        """Consistent mass int rho N^T N dV, shape (n_el, n_e, n_e)."""
        return self.inertia_integrals(X).m

    def k_geo(self, X, stress) -> np.ndarray:
        """Geometric (stress) stiffness for a given pre-stress; see the subclass."""
        raise NotImplementedError(f"{type(self).__name__} has no geometric stiffness")
