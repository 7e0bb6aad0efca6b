"""Spatial Euler-Bernoulli beam: 2 nodes, DOFs (u, v, w, theta_x, theta_y, theta_z) per node.

Element axes: e1 along the beam, e2 and e3 the principal axes of the section (see
``BeamEB3D``).  In these axes, with s = x / L in [0, 1] and the Hermite cubics of
``_line``, small rotations and no shear deformation:

.. code:: text

    u_l(s)       = (1 - s) u_l1 + s u_l2                                   axial
    v_l(s)       = H1 v_l1 + H2 L theta_z1 + H3 v_l2 + H4 L theta_z2        theta_z =  dv_l/dx
    w_l(s)       = H1 w_l1 - H2 L theta_y1 + H3 w_l2 - H4 L theta_y2        theta_y = -dw_l/dx
    theta_x(s)   = (1 - s) theta_x1 + s theta_x2                           torsion

    point (y, z) of the section, x = X0 + s L e1 + y e2 + z e3:
    u(s, y, z) = (u_l - y v_l' - z w_l') e1 + (v_l - z theta_x) e2 + (w_l + y theta_x) e3
                 (the -y v_l' - z w_l' terms only with rotary inertia; torsion always)

    k = int_0^L (EA u_l'^2 + EIz v_l''^2 + EIy w_l''^2 + GJ theta_x'^2) dx
    k_geo(P) = int_0^L P (v_l'^T v_l' + w_l'^T w_l') dx      (P: axial force, tension positive)

    Iy = int z^2 dA,  Iz = int y^2 dA,  J: torsion constant,  G = material.G

The section integrals of the inertia terms are at most quadratic in (y, z), so the
4-point section rule (+-a, +-b), a = sqrt(Iz / A), b = sqrt(Iy / A), weights A / 4,
is exact; it gives, e.g., the torsional mass rho (Iy + Iz) per unit length.  Body-frame
DOFs are rotated to element axes by T = blockdiag(R, R, R, R), R with rows e1, e2, e3.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from . import _line
from .base import Element, MassPoints, Material

_PARALLEL_TOL = 1e-6   # |e1 x ref| below this: the reference vector is parallel to the axis


class BeamEB3D(Element):
    """Spatial Euler-Bernoulli beam element (bending in two planes, axial, uniform torsion).

    Parameters
    ----------
    material : Material
    area : float
        Cross-section area A [m^2].
    Iy : float
        Second moment of area int z^2 dA [m^4]: bending in the e1-e3 plane (EIy w_l''^2).
    Iz : float
        Second moment of area int y^2 dA [m^4]: bending in the e1-e2 plane (EIz v_l''^2).
    J : float
        Torsion constant [m^4] (GJ theta_x'^2); the torsional inertia uses Iy + Iz.
    orientation : array_like, shape (3,), optional
        A body-frame vector in the element's e1-e2 plane, not parallel to the beam:
        e2 = its part normal to e1, normalised, and e3 = e1 x e2.  By default the body z
        axis is the reference and lies in the e1-e3 plane: e2 = z x e1 / |z x e1|,
        e3 = e1 x e2 (a beam along x then has e2 = y, e3 = z, as ``BeamEB2D``).  For a
        beam parallel to z (|z x e1| < 1e-6) the body x axis takes the place of z:
        e2 = x x e1 / |x x e1|, e3 = e1 x e2 (a beam along +z has e2 = -y, e3 = x).
    rotary_inertia : bool
        Include the rotary inertia of the sections in bending (Rayleigh beam).  The
        torsional inertia is always included.  NOTE: the mass points sit on the section
        in both cases, so J = int rho x x^T always holds rho L (Iz e2 e2^T + Iy e3 e3^T);
        without rotary inertia a rigid rotation theta of the nodal DOFs then has
        theta^T m theta = theta^T I_O theta - rho L (Iy (theta.e2)^2 + Iz (theta.e3)^2).
    """

    cell_type: ClassVar[str] = "line"
    n_nodes: ClassVar[int] = 2
    dofs_per_node: ClassVar[int] = 6
    dof_names: ClassVar[tuple[str, ...]] = ("u", "v", "w", "theta_x", "theta_y", "theta_z")
    dim: ClassVar[tuple[int, ...]] = (3,)

    def __init__(self, material: Material, area: float, Iy: float, Iz: float, J: float,
                 orientation=None, rotary_inertia: bool = False):
        for name, value in (("area", area), ("Iy", Iy), ("Iz", Iz), ("J", J)):
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"`{name}` must be a positive finite number, got {value!r}")
        if orientation is not None:
            v = np.asarray(orientation, dtype=float)
            if v.shape != (3,) or not np.all(np.isfinite(v)) or not np.linalg.norm(v) > 0:
                raise ValueError(f"`orientation` must be a nonzero finite vector of length 3, "
                                 f"got {orientation!r}")
            orientation = v / np.linalg.norm(v)
        self.material, self.area = material, float(area)
        self.Iy, self.Iz, self.J = float(Iy), float(Iz), float(J)
        self.orientation = orientation
        self.rotary_inertia = bool(rotary_inertia)

    # -- geometry ------------------------------------------------------------------------------
    def _frame(self, X):
        """X, R (n_el, 3, 3) with rows e1, e2, e3, and L (n_el,)."""
        X = self.check_X(X)
        e1, L = _line.axis(X)
        if self.orientation is None:
            ref = np.broadcast_to(np.array([0.0, 0.0, 1.0]), e1.shape).copy()
            parallel = np.linalg.norm(np.cross(ref, e1), axis=1) < _PARALLEL_TOL
            ref[parallel] = [1.0, 0.0, 0.0]
            e2 = np.cross(ref, e1)
        else:
            e2 = self.orientation - (e1 @ self.orientation)[:, None] * e1
            bad = np.linalg.norm(e2, axis=1) < _PARALLEL_TOL
            if np.any(bad):
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"`orientation` {self.orientation.tolist()} is parallel to the axis "
                                 f"{e1[i].tolist()} of element {i}: give a vector in the e1-e2 plane")
        e2 /= np.linalg.norm(e2, axis=1)[:, None]
        e3 = np.cross(e1, e2)
        return X, np.stack([e1, e2, e3], axis=1), L

    def _local_rows(self, xi, L):
        """Interpolation of (u_l, v_l, w_l, theta_x) on element-axis DOFs and its x-derivatives.

        Returns N, dN, d2N, each (n_el, n_p, 4, 12); d2N only for the rows v_l and w_l.
        With d/dx = (1/L) d/ds and the slope DOFs scaled by L, each is a sum of two
        element-independent parts: N = N0 + L N1, dN = dN0 / L + dN1, d2N = d2N0 / L^2 + d2N1 / L.
        """
        phi, dphi = _line.linear(xi)
        H, dH, d2H = _line.hermite(xi)
        n_p = len(phi)
        parts = np.zeros((2, 3, n_p, 4, 12))                 # [L^0, L^1 part][N, dN, d2N]
        for row, cols in ((0, (0, 6)), (3, (3, 9))):          # u_l and theta_x: linear
            for j, col in enumerate(cols):
                parts[0, 0, :, row, col] = phi[:, j]
                parts[0, 1, :, row, col] = 2.0 * dphi[:, j]
        for row, cols, sign in ((1, (1, 5, 7, 11), 1.0), (2, (2, 4, 8, 10), -1.0)):
            for k, Hk in enumerate((H, dH, d2H)):
                for j, col in enumerate(cols):                # H2, H4 (slope columns) carry L
                    slope = j % 2
                    parts[slope, k, :, row, col] = (sign if slope else 1.0) * Hk[:, j]
        Lb = L[:, None, None, None]
        return (parts[0, 0] + Lb * parts[1, 0], parts[0, 1] / Lb + parts[1, 1],
                parts[0, 2] / Lb**2 + parts[1, 2] / Lb)

    @staticmethod
    def _times_T(A, R):
        """A @ T for A (n_el, ..., 12): R acts on each 3-column node block."""
        return (A.reshape(len(A), -1, 3) @ R).reshape(A.shape)

    def _to_body(self, R, rows):
        """Body-frame interpolation R^T rows T of rows (n_el, n_p, 3, 12) in element axes."""
        n_el, n_p = rows.shape[:2]
        rows_T = self._times_T(rows, R).transpose(0, 2, 1, 3).reshape(n_el, 3, -1)
        return (np.swapaxes(R, 1, 2) @ rows_T).reshape(n_el, 3, n_p, 12).transpose(0, 2, 1, 3)

    def _rotate(self, k_local, R):
        """T^T k_local T, shape (n_el, 12, 12)."""
        return np.swapaxes(self._times_T(np.swapaxes(self._times_T(k_local, R), 1, 2), R), 1, 2)

    # -- interface -----------------------------------------------------------------------------
    def N(self, X, xi):
        X, R, L = self._frame(X)
        N, *_ = self._local_rows(xi, L)
        return self._to_body(R, N[:, :, :3])

    def dN_dxi(self, X, xi):
        X, R, L = self._frame(X)
        _, dN, _ = self._local_rows(xi, L)
        dx_dxi = (L / 2.0)[:, None, None, None]
        return (dx_dxi * self._to_body(R, dN[:, :, :3]))[..., None]

    def mass_points(self, X):
        X, R, L = self._frame(X)
        xi, w = _line.gauss_points(6)
        N, dN, _ = self._local_rows(xi, L)
        phi, _ = _line.linear(xi)
        n_el, n_p = len(X), len(xi)
        # u(y, z) = N_c + y N_y + z N_z in element axes (rows u_l, v_l, w_l), mapped to the body
        rows = np.zeros((n_el, 3, n_p, 3, 12))
        rows[:, 0] = N[:, :, :3]
        rows[:, 1, :, 2] = N[:, :, 3]                      # torsion: w = w_l + y theta_x
        rows[:, 2, :, 1] = -N[:, :, 3]                     #          v = v_l - z theta_x
        if self.rotary_inertia:
            rows[:, 1, :, 0] = -dN[:, :, 1]                # u = u_l - y v_l' - z w_l'
            rows[:, 2, :, 0] = -dN[:, :, 2]
        N_c, N_y, N_z = np.moveaxis(self._to_body(R, rows.reshape(n_el, 3 * n_p, 3, 12))
                                    .reshape(n_el, 3, n_p, 3, 12), 1, 0)
        a, b = np.sqrt(self.Iz / self.area), np.sqrt(self.Iy / self.area)
        section = ((-a, -b), (a, -b), (-a, b), (a, b))         # points (y, z), weights A / 4
        x_axis = np.einsum("pi,eid->epd", phi, X)
        N_points, x = np.empty((n_el, 4, n_p, 3, 12)), np.empty((n_el, 4, n_p, 3))
        for i, (y, z) in enumerate(section):
            N_points[:, i] = N_c
            N_points[:, i] += y * N_y
            N_points[:, i] += z * N_z
            x[:, i] = x_axis + y * R[:, None, 1] + z * R[:, None, 2]
        w_axis = self.material.rho * self.area / 4.0 * L[:, None] * w[None, :]
        return MassPoints(N_points.reshape(n_el, 4 * n_p, 3, 12), x.reshape(n_el, 4 * n_p, 3),
                          np.tile(w_axis, (1, 4)))

    def k(self, X):
        X, R, L = self._frame(X)
        xi, w = _line.gauss_points(2)
        _, dN, d2N = self._local_rows(xi, L)
        mat = self.material
        # strains (u_l', v_l'', w_l'', theta_x') at the Gauss points and their weights
        B = np.concatenate([dN[:, :, 0], d2N[:, :, 1], d2N[:, :, 2], dN[:, :, 3]], axis=1)
        rigidity = np.repeat([mat.E * self.area, mat.E * self.Iz, mat.E * self.Iy, mat.G * self.J], len(xi))
        c = rigidity[None, :] * np.tile(w, 4)[None, :] * L[:, None]
        k_local = np.swapaxes(B, 1, 2) @ (c[:, :, None] * B)
        return self._rotate(k_local, R)

    def k_geo(self, X, axial_force):
        """Geometric stiffness int P (v_l'^T v_l' + w_l'^T w_l') dx.

        ``axial_force`` P [N], tension positive: a scalar, one value per element (n_el,),
        values at this method's 4 Gauss points (n_el, 4), or a callable of the body-frame
        points x (n_el, 4, 3) returning (n_el, 4).
        """
        X, R, L = self._frame(X)
        xi, w = _line.gauss_points(6)
        _, dN, _ = self._local_rows(xi, L)
        if callable(axial_force):
            phi, _ = _line.linear(xi)
            P = np.asarray(axial_force(np.einsum("pi,eid->epd", phi, X)), dtype=float)
        else:
            P = np.asarray(axial_force, dtype=float)
            P = P[:, None] if P.ndim == 1 else P
        P = np.broadcast_to(P, (len(X), len(xi)))
        B = np.concatenate([dN[:, :, 1], dN[:, :, 2]], axis=1)        # v_l', w_l' at the Gauss points
        c = np.tile(P * w[None, :] * L[:, None], (1, 2))
        k_local = np.swapaxes(B, 1, 2) @ (c[:, :, None] * B)
        return self._rotate(k_local, R)

    def axial_force(self, X, u_e, body_force=None):
        """Axial force P [N] at the 4 Gauss points of ``k_geo`` for element DOFs ``u_e`` (n_el, 12).

        ``body_force``: callable of body-frame positions (..., 3) -> body force per unit mass
        (..., 3), linear along each element; see ``_line.axial_force``.
        """
        X, R, L = self._frame(X)
        xi, _ = _line.gauss_points(6)
        _, dN, _ = self._local_rows(xi[:1], L)
        du_dx = self._times_T(dN[:, 0, 0][:, None, :], R)[:, 0]         # u_l' row on body DOFs
        strain = np.einsum("ei,ei->e", du_dx, np.asarray(u_e))
        return _line.axial_force(self.material.E * self.area * strain, X, R[:, 0], L,
                                 self.material.rho * self.area, body_force, xi)

    prestress = axial_force     # what k_geo takes, from a static displacement (Model's stiffening)

    def rigid_modes(self, X):
        X, *_ = self._frame(X)
        modes = np.zeros((len(X), 12, 6))
        eye = np.eye(3)
        for i in range(2):
            for a in range(3):
                modes[:, 6 * i:6 * i + 3, a] = eye[a]                          # translation a
                modes[:, 6 * i:6 * i + 3, 3 + a] = np.cross(eye[a], X[:, i])   # u = e_a x X
                modes[:, 6 * i + 3 + a, 3 + a] = 1.0                           # theta = e_a
        return modes
