"""Four-node flat shell (plate) element MITC4: membrane plus Reissner-Mindlin bending.

The element lies in a plane z = z_0 of the body frame (its normal is the body z axis) and
has 5 DOFs a node in body components: the mid-surface translations (u, v, w) and the
rotations (theta_x, theta_y) about the body x and y axes; no drilling rotation theta_z
(see ``PlateMITC4`` for why).  Geometry and the mid-surface fields use the bilinear
functions phi_n of ``Quad4`` on [-1, 1]^2 (meshio/VTK node order, counter-clockwise seen
from +z), x(xi) = sum_n phi_n(xi) X_n.  Meshes: 3D points in the plane, e.g.
``generate.rectangle(nx, ny, lx, ly, z=z_0)`` or ``flexmbs.mesh.read(path, dim=3)``.

Kinematics (a straight fibre along the normal n = e_z turns with the rotation vector theta;
zeta in [-1, 1] through the thickness t, z = zeta t / 2 from the mid-surface):

.. code:: text

    u(x, y, z) = u_0 + z (theta x n) = (u_0 + z theta_y,  v_0 - z theta_x,  w_0)

    membrane   eps_m   = (du_0/dx, dv_0/dy, du_0/dy + dv_0/dx)
    curvature  kappa   = (dtheta_y/dx, -dtheta_x/dy, dtheta_y/dy - dtheta_x/dx)   (eps = eps_m + z kappa)
    shear      gamma   = (dw_0/dx + theta_y, dw_0/dy - theta_x)

    k = int [ t eps_m^T H eps_m + t^3/12 kappa^T H kappa + k_s G t gamma^T gamma ] dA,
        H = E / (1 - nu^2) [[1, nu, 0], [nu, 1, 0], [0, 0, (1 - nu) / 2]],  k_s = 5/6

Transverse shear: MITC4 [1] (also [2] sec. 5.4.2).  The covariant shear strains
gamma_xi = x_,xi . gamma and gamma_eta = x_,eta . gamma are evaluated from the displacement
field at the edge midpoints A = (0, -1), C = (0, 1) (gamma_xi) and D = (-1, 0), B = (1, 0)
(gamma_eta) and interpolated between them,

.. code:: text

    gamma_xi~  = (1 - eta) / 2 gamma_xi(A) + (1 + eta) / 2 gamma_xi(C)
    gamma_eta~ = (1 - xi) / 2 gamma_eta(D) + (1 + xi) / 2 gamma_eta(B)
    (gamma_xz, gamma_yz) = J^-T (gamma_xi~, gamma_eta~),     J[i, k] = dx_i / dxi_k

so that a thin plate does not lock: along a straight edge the secant slope of the bilinear
w and the mean of the linear rotation are those of any quadratic w at the edge's midpoint,
and the Kirchhoff condition gamma = 0 is met where a displacement element would stiffen.
All parts of k use 2 x 2 Gauss points (full integration): an element's k has rank
20 - 6 = 14, no zero-energy mode besides the six rigid motions.

Inertia: the mass points are the 2 x 2 in-plane Gauss points (exact for phi_n phi_m det J,
cubic in each coordinate on any flat quadrilateral) times 2 Gauss points through the
thickness (exact for the quadratic terms in z), so that m, m_O, S, d and the rigid-body
mass, s and J are the exact integrals of the kinematics above, rotary inertia
rho t^3 / 12 of the rotations included:

.. code:: text

    N(xi, zeta) = [phi_n I_3 | z phi_n [[0, 1], [-1, 0], [0, 0]]]      x = x(xi) + (z_0 + z) e_z

Geometric stiffness of an in-plane (membrane) pre-stress sigma (2 x 2, force per area):
the nonlinear part of the Green strain's membrane term, 1/2 (u_,a . u_,b) for the three
mid-surface translations, gives

.. code:: text

    k_geo[n c, m c] = int t G_n . sigma . G_m dA        c in (u, v, w),   G_n = dphi_n / dx

(the rotations' share, of order t^2 / 12 of it, is left out: thin plates).

Stresses (``stress``, ``shear_force``), linear in the DOFs, at any in-plane point xi (default
the centroid) and height z in [-t/2, t/2] (default the top surface z = +t/2):

.. code:: text

    [sigma_xx, sigma_yy, sigma_xy] = H (eps_m + z kappa)                   (plane stress, sigma_zz = 0)
    (Q_x, Q_y) = k_s G t (gamma_xz, gamma_yz)                              shear resultants [N/m], MITC4 gamma
    (sigma_xz, sigma_yz) = 3 / (2 t) (1 - (2 z / t)^2) (Q_x, Q_y)          parabolic through the thickness

so sigma_xx = N_x / t + 6 M_x / t^2 at z = +t/2 (N, M the membrane force and bending moment per
unit width) and the transverse shear stresses vanish at both surfaces.

References
----------
.. [1] E. N. Dvorkin, K.-J. Bathe, A continuum mechanics based four-node shell element for
       general non-linear analysis, Engineering Computations 1 (1984) 77,
       doi:10.1108/eb023562; K.-J. Bathe, E. N. Dvorkin, A four-node plate bending element
       based on Mindlin/Reissner plate theory and a mixed interpolation, Int. J. Numer.
       Methods Eng. 21 (1985) 367, doi:10.1002/nme.1620210213.
.. [2] K.-J. Bathe, *Finite Element Procedures*, 2nd ed., 2014, ISBN 978-0-9790049-5-7.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..quadrature import gauss_legendre, quadrature
from .base import Element, MassPoints, Material
from .lagrange import plane_stress_H
from .quad4 import Quad4

__all__ = ["PlateMITC4"]

SHEAR_CORRECTION = 5.0 / 6.0
# MITC4 tying points: (xi, eta) of A, C (for gamma_xi) and D, B (for gamma_eta)
_TYING_XI = np.array([[0.0, -1.0], [0.0, 1.0]])
_TYING_ETA = np.array([[-1.0, 0.0], [1.0, 0.0]])
_U, _V, _W, _TX, _TY = range(5)          # DOF offsets within a node


class PlateMITC4(Element):
    """Flat four-node MITC4 shell in a body plane z = const: membrane and Reissner-Mindlin bending.

    DOFs (u, v, w, theta_x, theta_y) a node in body-frame components.  A drilling rotation
    theta_z is not a DOF: the kinematics give it no inertia, and a massless DOF with a
    fictitious stiffness would make the mass matrix singular (the dense and shift-invert
    eigen-solvers of `flexmbs.reduction` need it positive definite).  Hence the element
    takes flat plates in one body plane only; folded shells are not modelled.

    Parameters
    ----------
    material : Material
    thickness : float
        Plate thickness t [m].
    shear_correction : float
        k_s of the transverse shear stiffness k_s G t (default 5/6).
    """

    cell_type: ClassVar[str] = "quad"
    n_nodes: ClassVar[int] = 4
    dofs_per_node: ClassVar[int] = 5
    dof_names: ClassVar[tuple[str, ...]] = ("u", "v", "w", "theta_x", "theta_y")
    dim: ClassVar[tuple[int, ...]] = (3,)

    def __init__(self, material: Material, thickness: float, shear_correction: float = SHEAR_CORRECTION):
        if not isinstance(material, Material):
            raise TypeError(f"`material` must be a Material, got {type(material).__name__}")
        for name, value in (("thickness", thickness), ("shear_correction", shear_correction)):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
                    or not (np.isfinite(value) and value > 0):
                raise ValueError(f"`{name}` must be a positive finite number, got {value!r}")
        self.material, self.thickness = material, float(thickness)
        self.shear_correction = float(shear_correction)

    # -- geometry ------------------------------------------------------------------------------
    def check_X(self, X) -> np.ndarray:
        """Validate node coordinates X, shape (n_el, 4, 3): 3D points, so that the displacement fields
        of a `Model` (``displacement_field``: the first ``mesh.dim`` components) hold w."""
        X = np.asarray(X, dtype=float)
        if X.ndim == 3 and X.shape[1:] == (4, 2):
            raise ValueError("`X` for PlateMITC4 must have 3D points (n_el, 4, 3) in a plane z = const, got "
                             f"{X.shape}: a 2D mesh would drop the deflection w from the displacement fields; "
                             "mesh it with generate.rectangle(..., z=0.0)")
        return super().check_X(X)

    def _coords(self, X) -> tuple[np.ndarray, np.ndarray]:
        """In-plane coordinates (n_el, 4, 2) and the 3-component ones; checks the plane z = const."""
        X3 = self.check_X(X)
        z = X3[:, :, 2]
        if z.size and np.any(np.abs(z - z.flat[0]) > 1e-12 * (1.0 + np.abs(X3).max())):
            raise ValueError("`X`: a PlateMITC4 mesh must lie in one plane z = const of the body frame "
                             f"(its normal is the body z axis), got z from {z.min():.6g} to {z.max():.6g}")
        return X3[:, :, :2], X3

    @staticmethod
    def _jacobian(Xd, xi) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """J = dx/dxi (n_el, n_p, 2, 2), det J (n_el, n_p) and G = dphi/dx (n_el, n_p, 4, 2).

        Raises ValueError for the first element with det J <= 1e-12 h^2 at a point (degenerate,
        or clockwise seen from +z).
        """
        dphi = Quad4.dshape(xi)                                          # (n_p, 4, 2)
        Jm = np.swapaxes(Xd, 1, 2)[:, None] @ dphi[None]                 # (n_el, n_p, 2, 2)
        detJ = Jm[..., 0, 0] * Jm[..., 1, 1] - Jm[..., 0, 1] * Jm[..., 1, 0]
        h = np.linalg.norm(Xd - Xd[:, :1], axis=2).max(axis=1)
        bad = ~(detJ > 1e-12 * h[:, None] ** 2)
        if np.any(bad):
            e = int(np.flatnonzero(bad.any(axis=1))[0])
            raise ValueError(f"element {e} (quad) is degenerate or clockwise seen from +z: det J = "
                             f"{detJ[e].min():.3g} at a quadrature point; number its nodes counter-clockwise "
                             f"(meshio/VTK order), coordinates {Xd[e].tolist()}")
        Jinv = np.linalg.inv(Jm)
        return Jm, detJ, dphi[None] @ Jinv                               # dphi/dx_i = dphi/dxi_k Jinv_ki

    # -- interpolation --------------------------------------------------------------------------
    @staticmethod
    def _xi(xi) -> np.ndarray:
        xi = np.asarray(xi, dtype=float)
        if xi.ndim > 2 or xi.shape[-1] != 2:
            raise ValueError(f"`xi` must have shape (n_p, 2) or (2,), got {xi.shape}")
        return xi.reshape(-1, 2)

    def _through(self, phi, z) -> np.ndarray:
        """N (n_p, 3, 20) at in-plane values phi (n_p, 4) and heights z (n_p,) from the mid-surface."""
        out = np.zeros((len(phi), 3, 4, 5))
        for a in range(3):
            out[:, a, :, a] = phi
        out[:, 0, :, _TY] = z[:, None] * phi                             # u = u_0 + z theta_y
        out[:, 1, :, _TX] = -z[:, None] * phi                            # v = v_0 - z theta_x
        return out.reshape(len(phi), 3, 20)

    def N(self, X, xi):
        """Mid-surface displacement interpolation (n_el, n_p, 3, 20)."""
        X = self.check_X(X)
        phi = Quad4.shape(self._xi(xi))
        return np.broadcast_to(self._through(phi, np.zeros(len(phi))), (len(X), len(phi), 3, 20)).copy()

    def dN_dxi(self, X, xi):
        """Reference derivatives of the mid-surface ``N``: (n_el, n_p, 3, 20, 2)."""
        X = self.check_X(X)
        dphi = Quad4.dshape(self._xi(xi))
        out = np.stack([self._through(dphi[:, :, k], np.zeros(len(dphi))) for k in range(2)], axis=-1)
        return np.broadcast_to(out, (len(X),) + out.shape).copy()

    # -- inertia --------------------------------------------------------------------------------
    def mass_points(self, X):
        """2 x 2 in-plane by 2 through-thickness Gauss points (exact; module docstring)."""
        Xd, X3 = self._coords(X)
        xi, w = quadrature("quad", 2)
        zeta, wz = gauss_legendre(2)
        _, detJ, _ = self._jacobian(Xd, xi)
        phi = Quad4.shape(xi)
        half = self.thickness / 2.0
        z = np.repeat(half * zeta, len(xi))                               # zeta slowest
        N = self._through(np.tile(phi, (2, 1)), z)                        # (8, 3, 20)
        x = np.tile(np.einsum("pn,enc->epc", phi, X3), (1, 2, 1))
        x[:, :, 2] += z[None, :]
        weight = self.material.rho * half * np.tile(w[None, :] * detJ, (1, 2)) * np.repeat(wz, len(xi))[None, :]
        return MassPoints(np.broadcast_to(N, (len(X3),) + N.shape).copy(), x, weight)

    # -- stiffness ------------------------------------------------------------------------------
    @staticmethod
    def _membrane_B(G) -> np.ndarray:
        """(n_el, n_p, 3, 20): (eps_xx, eps_yy, gamma_xy) from the DOFs."""
        B = np.zeros(G.shape[:2] + (3, 4, 5))
        B[..., 0, :, _U] = G[..., 0]
        B[..., 1, :, _V] = G[..., 1]
        B[..., 2, :, _U] = G[..., 1]
        B[..., 2, :, _V] = G[..., 0]
        return B.reshape(G.shape[:2] + (3, 20))

    @staticmethod
    def _bending_B(G) -> np.ndarray:
        """(n_el, n_p, 3, 20): curvatures (kappa_xx, kappa_yy, 2 kappa_xy) from the DOFs."""
        B = np.zeros(G.shape[:2] + (3, 4, 5))
        B[..., 0, :, _TY] = G[..., 0]
        B[..., 1, :, _TX] = -G[..., 1]
        B[..., 2, :, _TY] = G[..., 1]
        B[..., 2, :, _TX] = -G[..., 0]
        return B.reshape(G.shape[:2] + (3, 20))

    @staticmethod
    def _covariant_shear(Xd, xi, k: int) -> np.ndarray:
        """gamma_k = x_,k . gamma = dw/dxi_k + x_,k theta_y - y_,k theta_x at points ``xi``,
        (n_el, n_p, 20), k = 0 (xi) or 1 (eta)."""
        phi, dphi = Quad4.shape(xi), Quad4.dshape(xi)[:, :, k]             # (n_p, 4)
        dx = np.einsum("pn,enc->epc", dphi, Xd)                            # x_,k (n_el, n_p, 2)
        B = np.zeros(dx.shape[:2] + (4, 5))
        B[..., _W] = dphi[None]
        B[..., _TY] = dx[..., 0, None] * phi[None]
        B[..., _TX] = -dx[..., 1, None] * phi[None]
        return B.reshape(dx.shape[:2] + (20,))

    def _shear_B(self, Xd, xi, Jm) -> np.ndarray:
        """MITC4 assumed Cartesian shear strains (gamma_xz, gamma_yz) at ``xi``: (n_el, n_p, 2, 20)."""
        g_xi = self._covariant_shear(Xd, _TYING_XI, 0)                     # at A, C
        g_eta = self._covariant_shear(Xd, _TYING_ETA, 1)                   # at D, B
        eta, xi_ = xi[:, 1], xi[:, 0]
        a_xi = np.stack([(1.0 - eta) / 2.0, (1.0 + eta) / 2.0], axis=1)    # (n_p, 2)
        a_eta = np.stack([(1.0 - xi_) / 2.0, (1.0 + xi_) / 2.0], axis=1)
        cov = np.stack([np.einsum("pt,etn->epn", a_xi, g_xi), np.einsum("pt,etn->epn", a_eta, g_eta)], axis=2)
        return np.linalg.solve(np.swapaxes(Jm, -1, -2), cov)               # J^T gamma = gamma_cov

    def k(self, X):
        """Stiffness: membrane + bending + MITC4 shear, 2 x 2 Gauss points, (n_el, 20, 20)."""
        Xd, _ = self._coords(X)
        xi, w = quadrature("quad", 2)
        Jm, detJ, G = self._jacobian(Xd, xi)
        mat, t = self.material, self.thickness
        H = plane_stress_H(mat.E, mat.nu)
        Bm, Bb, Bs = self._membrane_B(G), self._bending_B(G), self._shear_B(Xd, xi, Jm)
        dA = (w[None, :] * detJ)[:, :, None, None]
        k = np.einsum("eqia,ij,eqjb->eab", dA * Bm, t * H, Bm)
        k += np.einsum("eqia,ij,eqjb->eab", dA * Bb, t**3 / 12.0 * H, Bb)
        k += self.shear_correction * mat.G * t * np.einsum("eqia,eqib->eab", dA * Bs, Bs)
        return k

    def k_geo(self, X, stress):
        """Geometric stiffness of a membrane pre-stress, (n_el, 20, 20) (module docstring).

        ``stress``: in-plane Cauchy stress sigma (symmetric 2 x 2, [Pa]), constant per element
        (n_el, 2, 2) or at the 2 x 2 Gauss points (n_el, 4, 2, 2) (``prestress``).
        """
        Xd, _ = self._coords(X)
        xi, w = quadrature("quad", 2)
        _, detJ, G = self._jacobian(Xd, xi)
        n_el, n_q = G.shape[:2]
        sigma = np.asarray(stress, dtype=float)
        if sigma.shape == (n_el, 2, 2):
            sigma = sigma[:, None]
        elif sigma.shape != (n_el, n_q, 2, 2):
            raise ValueError(f"`stress` must have shape {(n_el, 2, 2)} or {(n_el, n_q, 2, 2)} "
                             f"(at the 2 x 2 Gauss points), got {sigma.shape}")
        if np.any(np.abs(sigma - np.swapaxes(sigma, -1, -2)) > 1e-12 * (np.abs(sigma).max() + 1e-300)):
            raise ValueError("`stress` must be symmetric (a Cauchy stress)")
        scalar = np.einsum("eq,eqnc,eqcd,eqmd->enm", self.thickness * w[None, :] * detJ, G,
                           np.broadcast_to(sigma, (n_el, n_q, 2, 2)), G)
        out = np.zeros((n_el, 4, 5, 4, 5))
        for c in (_U, _V, _W):
            out[:, :, c, :, c] = scalar
        return out.reshape(n_el, 20, 20)

    def prestress(self, X, u_e, body_force=None):
        """Membrane stress H eps_m (n_el, 4, 2, 2) at the Gauss points of ``k_geo`` from element DOFs
        ``u_e`` (n_el, 20) (the body force is carried by the displacement; the argument keeps the
        signature of the beams' ``axial_force``)."""
        Xd, _ = self._coords(X)
        u_e = np.asarray(u_e, dtype=float)
        if u_e.shape != (len(Xd), 20):
            raise ValueError(f"`u_e` must have shape {(len(Xd), 20)}, got {u_e.shape}")
        xi, _ = quadrature("quad", 2)
        _, _, G = self._jacobian(Xd, xi)
        eps = np.einsum("eqia,ea->eqi", self._membrane_B(G), u_e)
        s = eps @ plane_stress_H(self.material.E, self.material.nu)        # H symmetric
        return np.stack([np.stack([s[..., 0], s[..., 2]], -1), np.stack([s[..., 2], s[..., 1]], -1)], -2)

    # -- post-processing ------------------------------------------------------------------------
    def surfaces(self) -> tuple[float, float]:
        """Heights z of the top and the bottom surface from the mid-surface: (+t/2, -t/2)."""
        return self.thickness / 2.0, -self.thickness / 2.0

    def _dofs_at(self, X, u_e, xi):
        """(Xd, xi (n_p, 2), Jacobian J, G, u_e) for the stress recovery, ``u_e`` checked."""
        Xd, _ = self._coords(X)
        u_e = np.asarray(u_e, dtype=float)
        if u_e.shape != (len(Xd), 20):
            raise ValueError(f"`u_e` must have shape {(len(Xd), 20)}, got {u_e.shape}")
        xi = self._xi(np.zeros(2) if xi is None else xi)
        Jm, _, G = self._jacobian(Xd, xi)
        return Xd, xi, Jm, G, u_e

    def shear_force(self, X, u_e, xi=None) -> np.ndarray:
        """Transverse shear resultants (Q_x, Q_y) = k_s G t gamma [N/m] (MITC4 assumed shear strain,
        module docstring) at the centroid, (n_el, 2), or at reference points ``xi``, (n_el, n_p, 2)."""
        Xd, xi_p, Jm, _, u_e = self._dofs_at(X, u_e, xi)
        gamma = np.einsum("epia,ea->epi", self._shear_B(Xd, xi_p, Jm), u_e)
        Q = self.shear_correction * self.material.G * self.thickness * gamma
        return Q[:, 0] if xi is None else Q

    def stress(self, X, u_e, xi=None, z=None) -> np.ndarray:
        """Cauchy stress (3 x 3, body axes) at height ``z`` from the mid-surface (default the top
        surface +t/2; ``surfaces``): in-plane H (eps_m + z kappa), transverse shear 3 Q / (2 t)
        (1 - (2 z / t)^2), sigma_zz = 0 (module docstring).  At the centroid, (n_el, 3, 3), or at
        reference points ``xi``, (n_el, n_p, 3, 3)."""
        half = self.thickness / 2.0
        z = half if z is None else z
        if isinstance(z, bool) or not isinstance(z, (int, float, np.number)) or not abs(z) <= half:
            raise ValueError(f"`z` must be a height in [-t/2, t/2] = [{-half:g}, {half:g}] m from the "
                             f"mid-surface, got {z!r}")
        Xd, xi_p, Jm, G, u_e = self._dofs_at(X, u_e, xi)
        eps = np.einsum("epia,ea->epi", self._membrane_B(G) + z * self._bending_B(G), u_e)
        s = eps @ plane_stress_H(self.material.E, self.material.nu)        # (xx, yy, xy)
        tau = 1.5 / self.thickness * (1.0 - (z / half) ** 2) * self.shear_force(X, u_e, xi_p)
        sigma = np.zeros(s.shape[:2] + (3, 3))
        sigma[..., 0, 0], sigma[..., 1, 1] = s[..., 0], s[..., 1]
        sigma[..., 0, 1] = sigma[..., 1, 0] = s[..., 2]
        sigma[..., 0, 2] = sigma[..., 2, 0] = tau[..., 0]
        sigma[..., 1, 2] = sigma[..., 2, 1] = tau[..., 1]
        return sigma[:, 0] if xi is None else sigma

    def stress_fields(self, X, u_e) -> dict[str, np.ndarray]:
        """The element outputs linear in the DOFs, at the centroid: ``stress`` (n_el, 3, 3) at the top
        surface z = +t/2, ``stress_bottom`` at z = -t/2 and ``shear_force`` (n_el, 2) [N/m]
        (`flexmbs.analysis.element_data`, `flexmbs.reduction.ReducedModel.modal_fields`)."""
        top, bottom = self.surfaces()
        return {"stress": self.stress(X, u_e, z=top), "stress_bottom": self.stress(X, u_e, z=bottom),
                "shear_force": self.shear_force(X, u_e)}

    def rigid_modes(self, X):
        """Translations along the body axes, then rotations about the axes through the origin:
        u = e_a x X at the nodes, (theta_x, theta_y) = the rotation's in-plane components."""
        _, X3 = self._coords(X)
        modes = np.zeros((len(X3), 4, 5, 6))
        for a, e in enumerate(np.eye(3)):
            modes[:, :, a, a] = 1.0
            modes[:, :, :3, 3 + a] = np.cross(e, X3)
            if a < 2:
                modes[:, :, _TX + a, 3 + a] = 1.0
        return modes.reshape(len(X3), 20, 6)
