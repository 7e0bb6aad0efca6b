"""Two-node bar: axial displacement only, linear shape functions."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from . import _line
from .base import Element, MassPoints, Material


class Bar2(Element):
    """Two-node bar with one DOF per node, the displacement ``u`` along the bar's axis.

    ``N = e1 [1 - s, s]`` (3 x 2), ``k = EA/L [[1, -1], [-1, 1]]``.  All bars of one
    body must lie on one straight line (their axial DOFs are then shared consistently).

    Parameters
    ----------
    material : Material
    area : float
        Cross-section area A [m^2].
    """

    cell_type: ClassVar[str] = "line"
    n_nodes: ClassVar[int] = 2
    dofs_per_node: ClassVar[int] = 1
    dof_names: ClassVar[tuple[str, ...]] = ("u",)
    axial_dofs_along_axis: ClassVar[bool] = True

    def __init__(self, material: Material, area: float):
        if not (np.isfinite(area) and area > 0):
            raise ValueError(f"`area` must be a positive finite number, got {area!r}")
        self.material, self.area = material, float(area)

    def N(self, X, xi):
        e1, _ = _line.axis(self.check_X(X))
        phi, _ = _line.linear(xi)
        return e1[:, None, :, None] * phi[None, :, None, :]

    def dN_dxi(self, X, xi):
        e1, _ = _line.axis(self.check_X(X))
        _, dphi = _line.linear(xi)
        return (e1[:, None, :, None] * dphi[None, :, None, :])[..., None]

    def mass_points(self, X):
        X = self.check_X(X)
        xi, w = _line.gauss_points(2)
        _, L = _line.axis(X)
        phi, _ = _line.linear(xi)
        x = np.einsum("pi,eid->epd", phi, _line.pad3(X))
        weights = self.material.rho * self.area * L[:, None] * w[None, :]
        return MassPoints(self.N(X, xi), x, weights)

    def k(self, X):
        X = self.check_X(X)
        _, L = _line.axis(X)
        xi, w = _line.gauss_points(0)
        _, dphi = _line.linear(xi)
        B = 2.0 * dphi[None, :, :] / L[:, None, None]          # du/dx per unit DOF, (n_el, n_q, 2)
        return self.material.E * self.area * np.einsum("q,e,eqi,eqj->eij", w, L, B, B)

    def prestress(self, X, u_e, body_force=None):
        """Axial force [N] per element from DOFs u_e (for ``k_geo``, which is zero here)."""
        _, L = _line.axis(self.check_X(X))
        return self.material.E * self.area * (u_e[:, 1] - u_e[:, 0]) / L

    def k_geo(self, X, axial_force):
        """Geometric stiffness of a bar in its own axis: zero (no transverse DOF)."""
        X = self.check_X(X)
        return np.zeros((len(X), 2, 2))

    def rigid_modes(self, X):
        X = self.check_X(X)
        return np.ones((len(X), 2, 1))
