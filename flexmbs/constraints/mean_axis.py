"""Mean-axis reference conditions of a flexible body: Buckens' linearised conditions as internal constraints.

A `FlexibleBody` (q = (R, p, delta), y = x + N delta, docs/flexible_bodies.md) on a free-free
mesh has as many rigid-body modes in delta as its frame has: the elastic coordinates would
repeat the frame's motion.  The mean axes remove them by asking that the elastic motion carry,
relative to the frame, no linear momentum and no angular momentum:

.. code:: text

    int rho N delta' dV = m_O delta' = 0,          int rho tilde(y) N delta' dV = 0

(J. R. Canavin, P. W. Likins, J. Spacecraft Rockets 14 (1977) 724; O. P. Agrawal,
A. A. Shabana, Comput. Struct. 21 (1985) 1303; A. A. Shabana, Dynamics of Multibody Systems,
3rd ed. 2005, ch. 5, reference conditions).  The second is not integrable as it stands (y
depends on delta); Buckens' linearisation y ~ x makes both integrable.  With delta = 0 in
the undeformed state they become the holonomic, linear conditions

.. code:: text

    C(q) = B delta = 0,     B = [m_O; g],     g_i = int rho N^T tilde(e_i) x dV = sum_ab tilde(e_i)[a, b] d[a, b]

because e_i . int rho x x (N delta) dV = int rho (N delta) . (e_i x x) dV = g_i delta.  Both
rows are inertia invariants that the Model has already assembled (``Model.m_O``,
``Model.g``): no new integral.  For beam elements N holds the displacement of the section's
mass points from the translations and the rotations of the nodes, so the rotational DOFs
enter B through the same invariants (the rotary inertia, where modelled, sits in g).

**The origin does not matter.**  About another point c of the frame the angular condition
reads int rho tilde(x - c) N delta dV = g delta - tilde(c) m_O delta, which vanishes with
the first condition: the set {m_O delta = 0, g delta = 0} is the same for every origin.  The
first condition says that the centre of mass stays at the frame point s / mass
(s = int rho x dV): the mean-axis frame carries its body's centre of mass as a fixed point,
and it is the frame's origin when the mesh is centred on it (s = 0).

**Rigid-body modes.**  A rigid translation Phi_a (N Phi_a = e_a) and an infinitesimal rigid
rotation Phi_i (N Phi_i = e_i x x) of the nodal DOFs give Phi_a^T [m] delta = (m_O delta)_a and
Phi_i^T [m] delta = g_i delta.  The conditions are therefore the [m]-orthogonality of delta to
the mesh's rigid-body modes: delta holds no rigid motion in the mass metric.

Planar meshes and bars have fewer rigid modes than 6 (and some rows of B vanish): the
constraint keeps the independent rows (pivoted QR of the unit-normalised rows), as many as
the mesh's rigid-body modes.  C_q = (0, 0, B) is constant, C_t = 0 and gamma = 0.
"""
from __future__ import annotations

import numpy as np

from .base import Constraint
from ..lazy import LazyModule

scipy = LazyModule("scipy")                 # scipy.linalg loads at its first use (flexmbs.lazy)

__all__ = ["MeanAxisConditions", "mean_axis_rows"]

ROW_NAMES = ("m_O,x", "m_O,y", "m_O,z", "g_x", "g_y", "g_z")


def mean_axis_rows(m_O: np.ndarray, g: np.ndarray, n_rigid: int, rtol: float = 1e-10):
    """The independent rows of B = [m_O; g] (6, n): (B_kept (n_rigid, n), names of the rows kept).

    Rows are compared after normalising each to unit length (m_O rows are kg, g rows kg m);
    a pivoted QR picks them.  ValueError if the rank is not ``n_rigid`` (the mesh's number of
    rigid-body modes).
    """
    B = np.vstack([np.asarray(m_O, dtype=float), np.asarray(g, dtype=float)])
    norms = np.linalg.norm(B, axis=1)
    scale = norms.max() if norms.size and norms.max() > 0 else 1.0
    live = np.flatnonzero(norms > rtol * scale)
    if live.size == 0:
        raise ValueError("mean-axis conditions: the body's m_O and g rows all vanish (a body without mass?)")
    U = B[live] / norms[live, None]
    _, R, piv = scipy.linalg.qr(U.T, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    rank = int(np.sum(diag > rtol * diag[0]))
    if rank != n_rigid:
        raise ValueError(f"mean-axis conditions: the rows [m_O; g] have rank {rank}, but the mesh has {n_rigid} "
                         "rigid-body modes; the inertia invariants do not see every rigid motion (a massless "
                         "rotation DOF?)")
    keep = np.sort(live[piv[:rank]])
    return B[keep], [ROW_NAMES[k] for k in keep]


class MeanAxisConditions(Constraint):
    """Internal constraint of a mean-axis `FlexibleBody`: C = B delta with B the independent rows of [m_O; g].

    Parameters
    ----------
    body : FlexibleBody
        A body whose coordinates are (R, p, delta) with delta = q[7:] and whose ``model`` has the
        invariants ``m_O`` and ``g`` on the elastic coordinates.
    n_rigid : int
        Number of rigid-body modes of the mesh: the number of rows kept.

    Attributes
    ----------
    B : array (n_c, n_e)
        The rows kept; ``row_names`` names them ("m_O,x" ... "g_z").
    """

    def __init__(self, body, n_rigid: int):
        self.bodies = (body,)
        self.name = f"{body.name}.mean_axis"
        self.B, self.row_names = mean_axis_rows(body.model.m_O, body.model.g, n_rigid)
        self.n_c = len(self.B)
        self._J = np.zeros((self.n_c, body.n_q))
        self._J[:, 7:] = self.B

    def residual(self, t, qs) -> np.ndarray:
        return self.B @ qs[0][7:]

    def jacobian(self, t, qs) -> list:
        return [self._J]

    def gamma(self, t, qs, vs) -> np.ndarray:
        return np.zeros(self.n_c)

    @classmethod
    def batch(cls, constraints) -> "_MeanAxisBatch":
        """The conditions of several bodies (same n_q and n_c) on stacked coordinates Q (k, n_q)."""
        return _MeanAxisBatch(np.array([c.B for c in constraints]), np.array([c._J for c in constraints]))


class _MeanAxisBatch:
    def __init__(self, B, J):
        self.B, self.J = B, J

    def residual(self, t, Q):
        return np.einsum("kcn,kn->kc", self.B, Q[:, 7:])

    def jacobian(self, t, Q):
        return self.J

    def gamma(self, t, Q, V):
        return np.zeros(self.B.shape[:2])
