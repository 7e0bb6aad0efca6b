"""Shared base of the vector-Lagrange solid elements (Tri3, Quad4, Tet4, Tet10, Hex8).

Every displacement component interpolates the same scalar Lagrange functions
``phi`` (n_nodes,) of the reference coordinates ``xi``, on the isoparametric map
``x(xi) = sum_n phi_n(xi) X_n``.  With d = dofs_per_node (2 plane stress, 3 solid)
and node-major DOFs:

.. code:: text

    u_a(xi) = sum_n phi_n(xi) delta[n d + a]          N = phi^T (x) I_d   (padded to 3 rows)
    J = dx/dxi,  G = dphi/dx = dphi/dxi J^-1           dV = detJ w (* thickness t in 2D)

    k[n a, m b]     = int G_nc C[a, c, b, e] G_me dV   = int B^T H B dV    (C: H as a tensor)
    k_geo[n a, m b] = delta_ab int G_n . sigma . G_m dV                    (sigma: Cauchy pre-stress)

Because N = phi^T (x) I_d, all the inertia integrals of ``base`` follow from the
scalar arrays (the fast path of ``inertia_integrals``):

.. code:: text

    m_phi  = int rho phi phi^T dV        (n_el, n_nodes, n_nodes)
    S[a, b] = m_phi on rows n d + a, cols n d + b        (a, b < d; one shared array)
    m_O[a, n d + a] = int rho phi_n dV
    d[a, b, n d + a] = int rho phi_n x_b dV = (m_phi X)[n, b]          (x = phi^T X)
    mass = sum m_phi,  s = (int rho phi)^T X,  J = X^T m_phi X

H is the isotropic Voigt matrix (order xx, yy, zz, yz, xz, xy with engineering shear
strains; plane stress xx, yy, xy).

References
----------
.. [1] O. C. Zienkiewicz, R. L. Taylor, J. Z. Zhu, *The Finite Element Method: Its Basis
       and Fundamentals*, 7th ed., Butterworth-Heinemann, 2013, chs. 6 and 9,
       ISBN 978-1-85617-633-0.
"""
from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

import numpy as np

from ..quadrature import quadrature
from ._line import pad3
from .base import Element, InertiaIntegrals, MassPoints, Material, SBlock

__all__ = ["LagrangeElement", "PlaneStressLagrange", "SolidLagrange", "isotropic_H", "plane_stress_H"]

# Voigt index of the symmetric tensor component (a, c)
_VOIGT = {2: np.array([[0, 2], [2, 1]]), 3: np.array([[0, 5, 4], [5, 1, 3], [4, 3, 2]])}


def plane_stress_H(E: float, nu: float) -> np.ndarray:
    """Plane-stress Voigt matrix E/(1-nu^2) [[1, nu, 0], [nu, 1, 0], [0, 0, (1-nu)/2]]."""
    return E / (1.0 - nu**2) * np.array([[1.0, nu, 0.0], [nu, 1.0, 0.0], [0.0, 0.0, (1.0 - nu) / 2.0]])


def isotropic_H(E: float, nu: float) -> np.ndarray:
    """Isotropic 6x6 Voigt matrix (xx, yy, zz, yz, xz, xy; engineering shear strains)."""
    lam = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))
    mu = E / (2.0 * (1.0 + nu))
    H = np.zeros((6, 6))
    H[:3, :3] = lam
    H[:3, :3] += 2.0 * mu * np.eye(3)
    H[3:, 3:] = mu * np.eye(3)
    return H


def _voigt_to_tensor(H: np.ndarray) -> np.ndarray:
    """Elasticity tensor C[a, c, b, e] = H[V(a, c), V(b, e)], shape (d, d, d, d)."""
    V = _VOIGT[2 if H.shape[0] == 3 else 3]
    return H[V[:, :, None, None], V[None, None, :, :]]


def multilinear(xi: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tensor-product linear functions prod_k (1 + xi_k xi_nk) / 2 on [-1, 1]^d.

    ``xi`` (n_p, d), ``nodes`` (n_nodes, d) with entries +-1.  Returns phi (n_p, n_nodes)
    and dphi/dxi (n_p, n_nodes, d).
    """
    f = (1.0 + xi[:, None, :] * nodes[None, :, :]) / 2.0          # (n_p, n_nodes, d)
    df = np.broadcast_to(nodes[None, :, :] / 2.0, f.shape)
    d = xi.shape[1]
    phi = np.prod(f, axis=2)
    dphi = np.empty(f.shape)
    for k in range(d):
        others = [j for j in range(d) if j != k]
        dphi[:, :, k] = df[:, :, k] * np.prod(f[:, :, others], axis=2)
    return phi, dphi


def barycentric(xi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Barycentric coordinates L (n_p, d + 1), L_0 = 1 - sum xi, and dL/dxi (d + 1, d)."""
    d = xi.shape[1]
    L = np.concatenate([1.0 - xi.sum(axis=1, keepdims=True), xi], axis=1)
    dL = np.concatenate([-np.ones((1, d)), np.eye(d)], axis=0)
    return L, dL


def _det_adj(Jm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Determinant (...) and adjugate (..., d, d) of 2x2 or 3x3 matrices: inv = adj / det."""
    if Jm.shape[-1] == 2:
        a, b, c, e = Jm[..., 0, 0], Jm[..., 0, 1], Jm[..., 1, 0], Jm[..., 1, 1]
        adj = np.stack([np.stack([e, -b], -1), np.stack([-c, a], -1)], -2)
        return a * e - b * c, adj
    r0, r1, r2 = Jm[..., 0, :], Jm[..., 1, :], Jm[..., 2, :]
    c0 = np.cross(r1, r2)
    adj = np.stack([c0, np.cross(r2, r0), np.cross(r0, r1)], axis=-1)   # columns: M @ adj = det I
    return np.einsum("...i,...i->...", r0, c0), adj


class LagrangeElement(Element):
    """Isoparametric element whose displacement components share scalar Lagrange functions.

    Subclasses set the class attributes and the static methods ``shape`` and ``dshape``.
    """

    ref_cell: ClassVar[str]               # quadrature cell of ``flexmbs.quadrature``
    ref_nodes: ClassVar[np.ndarray]       # (n_nodes, d) reference coordinates of the nodes
    centroid: ClassVar[tuple[float, ...]]  # reference coordinates of the centroid
    degree: ClassVar[int]                 # polynomial degree p of phi
    mass_degree: ClassVar[int]            # exact rho phi phi^T on affine cells (2 p)
    stiffness_degree: ClassVar[int]       # exact B^T H B on affine cells
    affine: ClassVar[bool] = False        # constant Jacobian (linear simplices)
    thickness: float = 1.0                # dV = thickness dA for plane elements

    def __init__(self, material: Material):
        if not isinstance(material, Material):
            raise TypeError(f"`material` must be a Material, got {type(material).__name__}")
        self.material = material
        self._C4 = None

    # -- scalar shape functions -----------------------------------------------------------------
    @staticmethod
    @abstractmethod
    def shape(xi) -> np.ndarray:
        """Scalar shape functions phi at reference points ``xi`` (n_p, d): (n_p, n_nodes)."""

    @staticmethod
    @abstractmethod
    def dshape(xi) -> np.ndarray:
        """Derivatives dphi/dxi at reference points ``xi`` (n_p, d): (n_p, n_nodes, d)."""

    @classmethod
    def _xi(cls, xi) -> np.ndarray:
        d = len(cls.centroid)
        xi = np.asarray(xi, dtype=float)
        if xi.ndim > 2 or xi.shape[-1] != d:
            raise ValueError(f"`xi` must have shape (n_p, {d}) or ({d},), got {xi.shape}")
        return xi.reshape(-1, d)

    @classmethod
    def mass_rule(cls) -> tuple[np.ndarray, np.ndarray]:
        """Reference points and weights of the mass (inertia) quadrature."""
        return quadrature(cls.ref_cell, cls.mass_degree)

    @classmethod
    def stiffness_rule(cls) -> tuple[np.ndarray, np.ndarray]:
        """Reference points and weights of ``k`` and ``k_geo`` (where a pointwise stress is given)."""
        return quadrature(cls.ref_cell, cls.stiffness_degree)

    # -- geometry -------------------------------------------------------------------------------
    def _coords(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Coordinates in the element's space (n_el, n_nodes, d) and padded to 3 components."""
        X = self.check_X(X)
        d = self.dofs_per_node
        if X.shape[2] > d and X.size:
            z = X[:, :, 2]
            if np.any(np.abs(z - z.flat[0]) > 1e-12 * (1.0 + np.abs(X).max())):
                raise ValueError(f"`X`: a plane {type(self).__name__} must lie in a plane "
                                 "z = const of the body frame")
        return X[:, :, :d], pad3(X)

    def _jacobian(self, Xd: np.ndarray, xi: np.ndarray, inverse: bool = True):
        """det J (n_el, n_p) and, if ``inverse``, G = dphi/dx (n_el, n_p, n_nodes, d).

        Raises ValueError for the first element with det J <= 1e-12 h^d at a point
        (h: the element's largest node distance from its first node).
        """
        xi_J = xi[:1] if self.affine else xi
        dphi = self.dshape(xi_J)                                        # (n_p, n, d)
        Jm = np.swapaxes(Xd, 1, 2)[:, None] @ dphi[None]                # (n_el, n_p, d, d)
        detJ, adj = _det_adj(Jm)
        h = np.linalg.norm(Xd - Xd[:, :1], axis=2).max(axis=1)
        bad = ~(detJ > 1e-12 * h[:, None] ** Xd.shape[2])
        if np.any(bad):
            e = int(np.flatnonzero(bad.any(axis=1))[0])
            raise ValueError(f"element {e} ({self.cell_type}) is degenerate or inverted: det J = "
                             f"{detJ[e].min():.3g} at a quadrature point; check the node order "
                             f"(meshio/VTK) and coordinates {Xd[e].tolist()}")
        shape = (len(Xd), len(xi))
        if not inverse:
            return np.broadcast_to(detJ, shape), None
        G = dphi[None] @ (adj / detJ[:, :, None, None])                 # dphi/dx_i = dphi/dxi_k Jinv_ki
        return np.broadcast_to(detJ, shape), np.broadcast_to(G, shape + G.shape[2:])

    # -- interpolation --------------------------------------------------------------------------
    def N(self, X, xi):
        """Displacement interpolation phi^T (x) I_d padded to 3 rows: (n_el, n_p, 3, n_e)."""
        X = self.check_X(X)
        phi = self.shape(self._xi(xi))
        n_p, dpn = len(phi), self.dofs_per_node
        out = np.zeros((n_p, 3, self.n_nodes, dpn))
        for a in range(dpn):
            out[:, a, :, a] = phi
        return np.broadcast_to(out.reshape(n_p, 3, self.n_e), (len(X), n_p, 3, self.n_e)).copy()

    def dN_dxi(self, X, xi):
        """Reference derivatives of ``N``: (n_el, n_p, 3, n_e, d)."""
        X = self.check_X(X)
        dphi = self.dshape(self._xi(xi))
        n_p, dpn, d = len(dphi), self.dofs_per_node, dphi.shape[2]
        out = np.zeros((n_p, 3, self.n_nodes, dpn, d))
        for a in range(dpn):
            out[:, a, :, a, :] = dphi
        return np.broadcast_to(out.reshape(n_p, 3, self.n_e, d), (len(X), n_p, 3, self.n_e, d)).copy()

    # -- inertia --------------------------------------------------------------------------------
    def mass_points(self, X):
        Xd, X3 = self._coords(X)
        xi, w = self.mass_rule()
        detJ, _ = self._jacobian(Xd, xi, inverse=False)
        return MassPoints(self.N(X, xi), self.positions(X3, xi),
                          self.material.rho * self.thickness * w[None, :] * detJ)

    def _m_phi(self, Xd):
        """Scalar mass int rho phi phi^T dV (n_el, n, n) and int rho phi dV (n_el, n)."""
        xi, w = self.mass_rule()
        detJ, _ = self._jacobian(Xd, xi, inverse=False)
        phi = self.shape(xi)
        rw = self.material.rho * self.thickness * w[None, :] * detJ              # (n_el, n_q)
        n = self.n_nodes
        m_phi = (rw @ (phi[:, :, None] * phi[:, None, :]).reshape(len(xi), n * n)).reshape(-1, n, n)
        return m_phi, rw @ phi, rw.sum(axis=1)

    def inertia_integrals(self, X) -> InertiaIntegrals:
        """Inertia integrals from the scalar mass m_phi (fast path; see the module docstring)."""
        Xd, X3 = self._coords(X)
        m_phi, int_phi, mass = self._m_phi(Xd)
        n_el, dpn = len(Xd), self.dofs_per_node
        phi_x = m_phi @ X3                                  # int rho phi_n x_b dV  (n_el, n, 3)
        m_O = np.zeros((n_el, 3, self.n_e))
        d = np.zeros((n_el, 3, 3, self.n_e))
        rows = [np.arange(self.n_nodes) * dpn + a for a in range(dpn)]
        for a in range(dpn):
            m_O[:, a][:, rows[a]] = int_phi
            d[:, a][:, :, rows[a]] = np.swapaxes(phi_x, 1, 2)
        S = [SBlock(a, b, m_phi, rows[a], rows[b]) for a in range(dpn) for b in range(dpn)]
        return InertiaIntegrals(mass=mass, s=np.einsum("en,enb->eb", int_phi, X3),
                                J=np.swapaxes(X3, 1, 2) @ phi_x, m_O=m_O, d=d, S=S)

    def m(self, X) -> np.ndarray:
        """Consistent mass m_phi (x) I_d, shape (n_el, n_e, n_e)."""
        Xd, _ = self._coords(X)
        m_phi, _, _ = self._m_phi(Xd)
        return self._expand(m_phi)

    def _expand(self, scalar: np.ndarray) -> np.ndarray:
        """(n_el, n, n) -> scalar (x) I_d, (n_el, n_e, n_e)."""
        dpn = self.dofs_per_node
        out = np.zeros((len(scalar), self.n_nodes, dpn, self.n_nodes, dpn))
        for a in range(dpn):
            out[:, :, a, :, a] = scalar
        return out.reshape(len(scalar), self.n_e, self.n_e)

    # -- stiffness ------------------------------------------------------------------------------
    @property
    @abstractmethod
    def H(self) -> np.ndarray:
        """Voigt material matrix (3x3 plane stress or 6x6)."""

    @property
    @abstractmethod
    def lame(self) -> tuple[float, float]:
        """(lam, mu) with sigma = lam tr(eps) I + 2 mu eps, the same law as ``H``."""

    def _C(self) -> np.ndarray:
        if self._C4 is None:
            self._C4 = _voigt_to_tensor(self.H)
        return self._C4

    def k(self, X):
        """Stiffness int B^T H B dV, shape (n_el, n_e, n_e).

        Evaluated in the isotropic (Lame) form, equal to B^T H B for the ``H`` of the class:

        .. code:: text

            A[n c, m e] = int G_nc G_me dV
            k[n a, m b] = lam A[n a, m b] + mu A[n b, m a] + mu delta_ab sum_c A[n c, m c]
        """
        Xd, _ = self._coords(X)
        xi, w = self.stiffness_rule()
        detJ, G = self._jacobian(Xd, xi)
        n_el, n_q, n, d = G.shape
        lam, mu = self.lame
        wG = (self.thickness * w[None, :] * detJ)[:, :, None, None] * G
        A = np.einsum("xqnc,xqmf->xncmf", wG, G)             # x: element axis
        trace = mu * np.einsum("xncmc->xnm", A)
        K = np.multiply(A.transpose(0, 1, 4, 3, 2), mu, out=np.empty_like(A, order="C"))
        A *= lam                                             # in place: at most two (n_el, n_e, n_e)
        K += A
        for a in range(d):
            K[:, :, a, :, a] += trace
        return K.reshape(n_el, n * d, n * d)

    def k_geo(self, X, stress):
        """Geometric (stress) stiffness delta_ab int G_n . sigma . G_m dV, shape (n_el, n_e, n_e).

        ``stress``: Cauchy pre-stress, symmetric, either constant per element (n_el, d, d) or
        at the points of ``stiffness_rule()`` (n_el, n_q, d, d), with d = dofs_per_node.
        """
        return self._expand(self.k_geo_scalar(X, stress))

    def k_geo_scalar(self, X, stress):
        """The scalar part int G_n . sigma . G_m dV (n_el, n_nodes, n_nodes) of ``k_geo``
        (k_geo = this (x) I_d); assembled on the node pattern it needs 1/d^2 of the memory."""
        Xd, _ = self._coords(X)
        xi, w = self.stiffness_rule()
        detJ, G = self._jacobian(Xd, xi)
        n_el, n_q, n, d = G.shape
        sigma = np.asarray(stress, dtype=float)
        if sigma.shape == (n_el, d, d):
            sigma = sigma[:, None]
        elif sigma.shape != (n_el, n_q, d, d):
            raise ValueError(f"`stress` must have shape {(n_el, d, d)} or {(n_el, n_q, d, d)} "
                             f"(n_q: points of stiffness_rule()), got {sigma.shape}")
        if np.any(np.abs(sigma - np.swapaxes(sigma, -1, -2)) > 1e-12 * (np.abs(sigma).max() + 1e-300)):
            raise ValueError("`stress` must be symmetric (a Cauchy stress)")
        wdV = self.thickness * w[None, :] * detJ
        SG = (wdV[:, :, None, None] * G) @ sigma                         # (n_el, n_q, n, d)
        a = SG.transpose(0, 2, 1, 3).reshape(n_el, n, n_q * d)
        b = G.transpose(0, 2, 1, 3).reshape(n_el, n, n_q * d)
        return a @ np.swapaxes(b, 1, 2)

    # -- post-processing ------------------------------------------------------------------------
    def positions(self, X, xi) -> np.ndarray:
        """Body-frame positions x(xi) = phi(xi)^T X of reference points, (n_el, n_p, 3)."""
        _, X3 = self._coords(X)
        return np.einsum("pn,enc->epc", self.shape(self._xi(xi)), X3)

    def strain(self, X, u_e, xi=None) -> np.ndarray:
        """Small strain sym(grad u) at reference points ``xi`` (default: centroid), (n_el, n_p, d, d)."""
        Xd, _ = self._coords(X)
        u_e = np.asarray(u_e, dtype=float)
        if u_e.shape != (len(Xd), self.n_e):
            raise ValueError(f"`u_e` must have shape {(len(Xd), self.n_e)}, got {u_e.shape}")
        xi = self._xi(self.centroid if xi is None else xi)
        _, G = self._jacobian(Xd, xi)
        U = u_e.reshape(len(Xd), self.n_nodes, self.dofs_per_node)
        grad = np.einsum("ena,epnc->epac", U, G)
        return 0.5 * (grad + np.swapaxes(grad, -1, -2))

    def stress(self, X, u_e, xi=None) -> np.ndarray:
        """Cauchy stress C : eps (plane stress: the in-plane part): at the element centroid,
        (n_el, d, d), or at reference points ``xi``, (n_el, n_p, d, d)."""
        eps = self.strain(X, u_e, xi)
        sigma = np.einsum("acbe,npbe->npac", self._C(), eps)
        return sigma[:, 0] if xi is None else sigma

    def prestress(self, X, u_e, body_force=None):
        """Stress at the points of ``stiffness_rule()`` for ``k_geo``, from element DOFs u_e.

        (The body force is carried by the static displacement itself; the argument keeps the
        signature of the beams' ``axial_force``.)
        """
        xi, _ = self.stiffness_rule()
        return self.stress(X, u_e, xi)

    def rigid_modes(self, X):
        """Translations along the body axes, then rotations about the axes through the origin."""
        Xd, X3 = self._coords(X)
        n_el, n, dpn = len(Xd), self.n_nodes, self.dofs_per_node
        if dpn == 2:
            modes = np.zeros((n_el, n, 2, 3))
            modes[:, :, 0, 0] = modes[:, :, 1, 1] = 1.0
            modes[:, :, 0, 2], modes[:, :, 1, 2] = -Xd[:, :, 1], Xd[:, :, 0]   # u = -y, v = x
            return modes.reshape(n_el, n * 2, 3)
        modes = np.zeros((n_el, n, 3, 6))
        for i, e in enumerate(np.eye(3)):
            modes[:, :, i, i] = 1.0
            modes[:, :, :, 3 + i] = np.cross(e, Xd)                          # u = e_i x X
        return modes.reshape(n_el, n * 3, 6)


class LinearSimplex:
    """Mixin: the barycentric shape functions of the 3-node triangle and the 4-node tetrahedron."""

    @classmethod
    def shape(cls, xi):
        L, _ = barycentric(cls._xi(xi))
        return L

    @classmethod
    def dshape(cls, xi):
        xi = cls._xi(xi)
        _, dL = barycentric(xi)
        return np.broadcast_to(dL, (len(xi),) + dL.shape).copy()


class PlaneStressLagrange(LagrangeElement):
    """Plane-stress element in the body's x-y plane, DOFs (u, v) per node.

    Parameters
    ----------
    material : Material
    thickness : float
        Thickness t [m]: dV = t dA.
    """

    dofs_per_node: ClassVar[int] = 2
    dof_names: ClassVar[tuple[str, ...]] = ("u", "v")
    dim: ClassVar[tuple[int, ...]] = (2, 3)

    def __init__(self, material: Material, thickness: float = 1.0):
        super().__init__(material)
        if not (np.isfinite(thickness) and thickness > 0):
            raise ValueError(f"`thickness` must be a positive finite number, got {thickness!r}")
        self.thickness = float(thickness)

    @property
    def H(self) -> np.ndarray:
        return plane_stress_H(self.material.E, self.material.nu)

    @property
    def lame(self) -> tuple[float, float]:
        E, nu = self.material.E, self.material.nu
        return E * nu / (1.0 - nu**2), self.material.G      # lam* = 2 lam mu / (lam + 2 mu)


class SolidLagrange(LagrangeElement):
    """Three-dimensional solid element, DOFs (u, v, w) per node.

    Parameters
    ----------
    material : Material
    """

    dofs_per_node: ClassVar[int] = 3
    dof_names: ClassVar[tuple[str, ...]] = ("u", "v", "w")
    dim: ClassVar[tuple[int, ...]] = (3,)

    @property
    def H(self) -> np.ndarray:
        return isotropic_H(self.material.E, self.material.nu)

    @property
    def lame(self) -> tuple[float, float]:
        E, nu = self.material.E, self.material.nu
        return E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)), self.material.G
