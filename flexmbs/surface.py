"""Consistent nodal loads of surface tractions and pressures on element faces.

A traction ``t`` [Pa] (force per unit area, body-frame components) or a pressure ``p`` [Pa]
(positive pushing into the body) on a face Gamma of an element gives the nodal forces

.. code:: text

    f_a = int_Gamma N_a t dA                     traction
    f_a = - int_Gamma N_a p n dA                 pressure, n the outward unit normal

with N_a the face's own interpolation (the trace of the element's: linear on the faces of
Tet4 and the edges of Tri3/Quad4, bilinear on the faces of Hex8, quadratic on the faces of
Tet10).  On the reference face (coordinates xi, eta) with x(xi) = sum_a N_a X_a,

.. code:: text

    n dA = a_xi x a_eta dxi deta,      a_xi = dx/dxi,  a_eta = dx/deta      (faces of solids)
    n dA = (a_y, -a_x) t_z ds,         a = dx/ds                             (edges of plane cells,
                                                                              thickness t_z)

so the pressure integrand is a polynomial (exact with Gauss degree 2 p + 2 for face order p,
also on curved quadratic faces) and the traction integrand is exact on flat faces.  The loads
of one face sum to the force on it: sum_a f_a = t A (traction) and -p int n dA (pressure),
because sum_a N_a = 1.  Zienkiewicz, Taylor and Zhu, *The Finite Element Method: Its Basis and
Fundamentals*, 7th ed. (2013), sec. 6.3 (consistent load vectors).
"""
from __future__ import annotations

import numpy as np

from .quadrature import quadrature

__all__ = ["face_shape", "face_loads", "FACE_ORDER"]

#: polynomial order of each face type's interpolation
FACE_ORDER = {"line": 1, "triangle": 1, "quad": 1, "triangle6": 2}
_REFERENCE = {"line": "line", "triangle": "triangle", "triangle6": "triangle", "quad": "quad"}
_QUAD = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])


def face_shape(face_type: str, xi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shape functions N (n_qp, n_k) and their derivatives dN/dxi (n_qp, n_k, d) of a face type
    at reference points ``xi`` (n_qp, d): line on [-1, 1], triangles on the unit triangle,
    quad on [-1, 1]^2; node orders as meshio/VTK (triangle6: corners, then mid-edge nodes of
    (0 1), (1 2), (2 0))."""
    xi = np.atleast_2d(np.asarray(xi, dtype=float))
    if face_type == "line":
        s = xi[:, 0]
        N = np.stack([(1 - s) / 2, (1 + s) / 2], axis=1)
        dN = np.broadcast_to(np.array([-0.5, 0.5])[None, :, None], (len(s), 2, 1))
        return N, dN.copy()
    if face_type in ("triangle", "triangle6"):
        L = np.stack([1.0 - xi[:, 0] - xi[:, 1], xi[:, 0], xi[:, 1]], axis=1)      # (n_qp, 3)
        dL = np.array([[-1.0, -1.0], [1.0, 0.0], [0.0, 1.0]])                   # (3, 2)
        if face_type == "triangle":
            return L, np.broadcast_to(dL, (len(L), 3, 2)).copy()
        i, j = np.array([0, 1, 2]), np.array([1, 2, 0])
        N = np.concatenate([L * (2 * L - 1), 4 * L[:, i] * L[:, j]], axis=1)
        dN = np.concatenate([(4 * L - 1)[:, :, None] * dL[None],
                             4 * (L[:, i, None] * dL[None, j] + L[:, j, None] * dL[None, i])], axis=1)
        return N, dN
    if face_type == "quad":
        f = 1.0 + _QUAD[None] * xi[:, None]                                     # (n_qp, 4, 2)
        N = f.prod(axis=2) / 4
        dN = np.stack([_QUAD[None, :, 0] * f[:, :, 1], _QUAD[None, :, 1] * f[:, :, 0]], axis=2) / 4
        return N, dN
    raise ValueError(f"`face_type` must be one of {sorted(FACE_ORDER)}, got {face_type!r}")


def face_loads(points: np.ndarray, face_type: str, faces: np.ndarray, *, traction=None, pressure=None,
               thickness: float = 1.0) -> np.ndarray:
    """Consistent nodal forces (n_faces, n_k, 3) of a traction or a pressure on outward faces.

    Parameters
    ----------
    points : ndarray (n_nodes, 2 or 3)
    face_type : {"line", "triangle", "triangle6", "quad"}
        "line": edges of plane cells in the x-y plane (a load per unit area of the edge face
        of thickness ``thickness``).
    faces : ndarray (n_faces, n_k)
        Outward faces (`flexmbs.mesh.faces`): the right-hand normal points out of the body.
    traction : array_like (3,), optional
        Force per unit area [Pa], body-frame components.
    pressure : float, optional
        Pressure [Pa], positive into the body.
    thickness : float
        Plane cells only: the thickness [m].
    """
    if (traction is None) == (pressure is None):
        raise ValueError("give either `traction` or `pressure`")
    X = np.asarray(points, dtype=float)
    if X.shape[1] == 2:
        X = np.column_stack([X, np.zeros(len(X))])
    Xf = X[np.asarray(faces)]                                                    # (n_f, n_k, 3)
    xi, w = quadrature(_REFERENCE[face_type], 2 * FACE_ORDER[face_type] + 2)
    N, dN = face_shape(face_type, xi)
    a = np.einsum("qkd,fki->fqdi", dN, Xf)                                       # (n_f, n_qp, d, 3)
    if face_type == "line":
        t = a[:, :, 0]
        if np.any(np.abs(t[..., 2]) > 1e-12 * np.abs(t).max()):
            raise ValueError("edge loads need edges in the x-y plane (plane cells)")
        area_vec = thickness * np.stack([t[..., 1], -t[..., 0], np.zeros_like(t[..., 0])], axis=-1)
    else:
        area_vec = np.cross(a[:, :, 0], a[:, :, 1])                             # n dA / (dxi deta)
    if pressure is not None:
        density = -float(pressure) * area_vec                                   # (n_f, n_qp, 3)
    else:
        tr = np.asarray(traction, dtype=float)
        density = np.linalg.norm(area_vec, axis=-1)[..., None] * tr
    return np.einsum("q,qk,fqi->fki", w, N, density)
