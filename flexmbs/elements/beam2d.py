"""Planar Euler-Bernoulli beam: 2 nodes, DOFs (u, v, theta) per node in the body's x-y plane.

In the element's axes (e1 along the beam, e2 = z x e1) the axial displacement is
linear and the transverse deflection a Hermite cubic (see ``_line``):

.. code:: text

    u_l(s) = (1 - s) u_l1 + s u_l2
    v_l(s) = H1 v_l1 + H2 L theta_1 + H3 v_l2 + H4 L theta_2          theta = dv_l/dx
    u(s, y) = (u_l - y dv_l/dx) e1 + v_l e2     (the -y term only with rotary inertia)

    k = int_0^L (EA u_l'^T u_l' + EI v_l''^T v_l'') dx
    k_geo(P) = int_0^L P v_l'^T v_l' dx        (P: axial force, tension positive)

Body-frame DOFs are rotated to element axes by T = diag(R, R) with
R = [[c, s, 0], [-s, c, 0], [0, 0, 1]].
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from . import _line
from .base import Element, MassPoints, Material


class BeamEB2D(Element):
    """Planar Euler-Bernoulli beam element.

    Parameters
    ----------
    material : Material
    area : float
        Cross-section area A [m^2].
    I : float
        Second moment of area about the axis normal to the plane, I = int y^2 dA [m^4].
    rotary_inertia : bool
        Include the rotary inertia rho I of the sections (Rayleigh beam).  The classical
        Euler-Bernoulli consistent mass (default) omits it.
    """

    cell_type: ClassVar[str] = "line"
    n_nodes: ClassVar[int] = 2
    dofs_per_node: ClassVar[int] = 3
    dof_names: ClassVar[tuple[str, ...]] = ("u", "v", "theta")

    def __init__(self, material: Material, area: float, I: float, rotary_inertia: bool = False):
        for name, value in (("area", area), ("I", I)):
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"`{name}` must be a positive finite number, got {value!r}")
        self.material, self.area, self.I = material, float(area), float(I)
        self.rotary_inertia = bool(rotary_inertia)

    # -- geometry ------------------------------------------------------------------------------
    def _frame(self, X):
        X = self.check_X(X)
        if X.shape[2] == 3 and np.any(np.abs(X[:, :, 2] - X[0, 0, 2]) > 1e-12 * (1 + np.abs(X).max())):
            raise ValueError("`X`: a planar beam must lie in a plane z = const of the body frame")
        e1, L = _line.axis(X)
        e2 = np.stack([-e1[:, 1], e1[:, 0], np.zeros(len(e1))], axis=1)
        T = np.zeros((len(X), 6, 6))
        for i in (0, 3):
            T[:, i, i:i + 2] = e1[:, :2]
            T[:, i + 1, i:i + 2] = e2[:, :2]
            T[:, i + 2, i + 2] = 1.0
        return X, e1, e2, L, T

    def _local_rows(self, xi, L):
        """Axial and transverse interpolation on element-axis DOFs and their x-derivatives."""
        phi, dphi = _line.linear(xi)
        H, dH, d2H = _line.hermite(xi)
        n_p, n_el = len(phi), len(L)
        Nu = np.zeros((n_el, n_p, 6))
        Nv = np.zeros((n_el, n_p, 6))
        dNu, dNv, d2Nv = np.zeros_like(Nu), np.zeros_like(Nv), np.zeros_like(Nv)
        Ls = L[:, None]
        Nu[:, :, [0, 3]] = phi
        dNu[:, :, [0, 3]] = 2.0 * dphi / Ls[..., None]
        scale = np.stack([np.ones_like(L), L, np.ones_like(L), L], axis=1)[:, None, :]   # H2, H4 carry L
        Nv[:, :, [1, 2, 4, 5]] = H[None] * scale
        dNv[:, :, [1, 2, 4, 5]] = dH[None] * scale / Ls[..., None]
        d2Nv[:, :, [1, 2, 4, 5]] = d2H[None] * scale / Ls[..., None] ** 2
        return Nu, Nv, dNu, dNv, d2Nv

    # -- interface -----------------------------------------------------------------------------
    def N(self, X, xi):
        X, e1, e2, L, T = self._frame(X)
        Nu, Nv, *_ = self._local_rows(xi, L)
        N_local = e1[:, None, :, None] * Nu[:, :, None, :] + e2[:, None, :, None] * Nv[:, :, None, :]
        return N_local @ T[:, None]

    def dN_dxi(self, X, xi):
        X, e1, e2, L, T = self._frame(X)
        _, _, dNu, dNv, _ = self._local_rows(xi, L)
        dx_dxi = (L / 2.0)[:, None, None, None]
        dN = (e1[:, None, :, None] * dNu[:, :, None, :] + e2[:, None, :, None] * dNv[:, :, None, :])
        return (dx_dxi * dN @ T[:, None])[..., None]

    def mass_points(self, X):
        X, e1, e2, L, T = self._frame(X)
        xi, w = _line.gauss_points(6)
        Nu, Nv, _, dNv, _ = self._local_rows(xi, L)
        phi, _ = _line.linear(xi)
        x_axis = np.einsum("pi,eid->epd", phi, _line.pad3(X))
        w_axis = self.material.rho * self.area * L[:, None] * w[None, :]
        if not self.rotary_inertia:
            offsets, section_w = np.array([0.0]), np.array([1.0])
        else:
            r = np.sqrt(self.I / self.area)
            offsets, section_w = np.array([-r, r]), np.array([0.5, 0.5])
        Ns, xs, ws = [], [], []
        for y, ws_y in zip(offsets, section_w):
            Nu_y = Nu - y * dNv
            N_local = e1[:, None, :, None] * Nu_y[:, :, None, :] + e2[:, None, :, None] * Nv[:, :, None, :]
            Ns.append(N_local @ T[:, None])
            xs.append(x_axis + y * e2[:, None, :])
            ws.append(ws_y * w_axis)
        return MassPoints(np.concatenate(Ns, 1), np.concatenate(xs, 1), np.concatenate(ws, 1))

    def k(self, X):
        X, e1, e2, L, T = self._frame(X)
        xi, w = _line.gauss_points(2)
        _, _, dNu, _, d2Nv = self._local_rows(xi, L)
        wL = w[None, :] * L[:, None]
        k_local = (self.material.E * self.area * np.einsum("eq,eqi,eqj->eij", wL, dNu, dNu)
                   + self.material.E * self.I * np.einsum("eq,eqi,eqj->eij", wL, d2Nv, d2Nv))
        return np.swapaxes(T, 1, 2) @ k_local @ T

    def k_geo(self, X, axial_force):
        """Geometric stiffness int P v_l'^T v_l' dx.

        ``axial_force`` P [N], tension positive: a scalar, one value per element (n_el,),
        values at this method's 4 Gauss points (n_el, 4), or a callable of the body-frame
        points x (n_el, 4, 3) returning (n_el, 4).
        """
        X, e1, e2, L, T = self._frame(X)
        xi, w = _line.gauss_points(6)
        _, _, _, dNv, _ = self._local_rows(xi, L)
        if callable(axial_force):
            phi, _ = _line.linear(xi)
            P = np.asarray(axial_force(np.einsum("pi,eid->epd", phi, _line.pad3(X))), dtype=float)
        else:
            P = np.asarray(axial_force, dtype=float)
            P = P[:, None] if P.ndim == 1 else P
        P = np.broadcast_to(P, (len(X), len(xi)))
        k_local = np.einsum("eq,eqi,eqj->eij", P * w[None, :] * L[:, None], dNv, dNv)
        return np.swapaxes(T, 1, 2) @ k_local @ T

    def axial_force(self, X, u_e, body_force=None):
        """Axial force P [N] at the 4 Gauss points of ``k_geo`` for element DOFs ``u_e`` (n_el, 6).

        ``body_force``: callable of body-frame positions (..., 3) -> body force per unit mass
        (..., 3), linear along each element (inertia loads of the frame's motion); its axial
        component is integrated in the element (see ``_line.axial_force``).
        """
        X, e1, e2, L, T = self._frame(X)
        xi, _ = _line.gauss_points(6)
        _, _, dNu, _, _ = self._local_rows(xi[:1], L)
        strain = np.einsum("ei,ei->e", dNu[:, 0], (T @ np.asarray(u_e)[:, :, None])[:, :, 0])
        return _line.axial_force(self.material.E * self.area * strain, X, e1, L,
                                 self.material.rho * self.area, body_force, xi)

    prestress = axial_force     # what k_geo takes, from a static displacement (Model's stiffening)

    def rigid_modes(self, X):
        X, *_ = self._frame(X)
        modes = np.zeros((len(X), 6, 3))
        for i in range(2):
            modes[:, 3 * i, 0] = 1.0                      # translation x
            modes[:, 3 * i + 1, 1] = 1.0                  # translation y
            modes[:, 3 * i, 2] = -X[:, i, 1]              # rotation about z: u = -theta y
            modes[:, 3 * i + 1, 2] = X[:, i, 0]           #                   v = +theta x
            modes[:, 3 * i + 2, 2] = 1.0
        return modes
