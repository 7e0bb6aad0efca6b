"""Geometric stiffening of beam bodies from their own axial strain (moderate rotations).

For each element of a beam `Model` (linear axial, cubic Hermite transverse interpolation, in
the element's axes), the axial strain is the element mean of the moderate-rotation (von
Karman) strain eps(x) = u' + 1/2 (v'^2 + w'^2):

.. code:: text

    eps_e = u'_e + c_e / (2 L_e),      u'_e = a_e . u_e,      c_e = u_e^T G_e u_e = int (v'^2 + w'^2) dx
    U_e   = 1/2 EA L_e eps_e^2
          = 1/2 EA L_e u'_e^2 + 1/2 EA u'_e c_e + 1/8 EA c_e^2 / L_e

with u_e the element's DOFs in body components, a_e the row with a_e . u_e = (u_l2 - u_l1) / L_e
(the linear axial interpolation's constant strain) and G_e = int N_t'^T N_t' dx the element's
geometric stiffness for a unit axial force (``Element.k_geo(X, 1)``; both bending planes for
`BeamEB3D`, one for `BeamEB2D`).  The first term is the axial part of the linear stiffness
[k], which the body already has; this module supplies the rest, its gradient and its Hessian:

.. code:: text

    U_nl  = U_e - 1/2 EA L_e u'_e^2
    f_e   = dU_nl/du_e = 1/2 EA c_e a_e + N_e G_e u_e,            N_e = EA eps_e   (tension positive)
    K_e   = d f_e/du_e = EA (a_e g_e^T + g_e a_e^T + g_e g_e^T / L_e) + N_e G_e,   g_e = G_e u_e

The transverse force N_e G_e u_e is the geometric stiffening by the element's own axial force,
whatever loads it (inertia of the frame's motion, joint reactions, centrifugal forces, gravity);
the axial force 1/2 EA c_e a_e is the foreshortening: bending pulls the element's ends together.

Why the element mean of eps (the quartic term 1/8 EA c_e^2 / L_e) and not:

- no quartic term (U_e = 1/2 EA L u'^2 + 1/2 EA u' c_e): where the axial DOFs are free to
  move (a free end, a slider), their equilibrium EA (u'_e + c_e / (2 L_e)) = P makes the
  stiffening force EA u'_e = P - EA c_e / (2 L_e), wrong by the foreshortening (for the
  slider-crank rod at 2 mm deflection about -1.4 kN against P ~ 0.4 kN); the energy is also
  unbounded below;
- the pointwise quartic 1/8 EA int (v'^2 + w'^2)^2 dx: with u' constant in the element, the
  part of 1/2 v'^2 that varies along the element cannot be taken up by u and is resisted by
  EA: membrane locking (Stolarski and Belytschko 1982), a spurious stiffening that vanishes
  only with mesh refinement.

With the element mean, U = 1/2 EA L eps_e^2 >= 0, the axial force is the element's mean axial
force of the load, and a uniform axial strain is represented exactly.

References: J. Mayo, J. Dominguez, A. A. Shabana, Geometrically nonlinear formulations of beams
in flexible multibody dynamics, J. Vib. Acoust. 117 (1995) 501-509, doi:10.1115/1.2874490
(nonlinear strain in the floating frame: the stiffening follows without a prestress); I. Sharf,
Geometric stiffening in multibody dynamics formulations, J. Guid. Control Dyn. 18 (1995)
882-890, doi:10.2514/3.21474; H. Stolarski, T. Belytschko, Membrane locking and reduced
integration for curved elements, J. Appl. Mech. 49 (1982) 172-176, doi:10.1115/1.3161961.
"""
from __future__ import annotations

import numpy as np

from ..assembly.assembler import element_dofs
from ..elements.beam2d import BeamEB2D
from ..elements.beam3d import BeamEB3D
from ..lazy import LazyModule

sparse = LazyModule("scipy.sparse")

__all__ = ["AxialStrain", "BEAM_ELEMENTS"]

BEAM_ELEMENTS = (BeamEB2D, BeamEB3D)


class AxialStrain:
    """Per-element data of a beam `Model` and the nonlinear part of its axial strain energy.

    Parameters
    ----------
    model : flexmbs.Model
        A mesh of `BeamEB2D` or `BeamEB3D` elements (else ValueError naming ``what``).
    what : str
        How the caller names the option, for the error message.
    """

    def __init__(self, model, what: str = "stiffening='axial-strain'"):
        el = model.element
        if not isinstance(el, BEAM_ELEMENTS):
            raise ValueError(f"`{what}` needs a mesh of beam elements (BeamEB2D or BeamEB3D), whose axial "
                             f"strain and transverse slopes it takes; the model has {type(el).__name__} elements")
        X = model.X
        self.EA = el.material.E * el.area
        X3 = np.pad(X, ((0, 0), (0, 0), (0, 3 - X.shape[2])))
        dX = X3[:, 1] - X3[:, 0]
        self.L = np.linalg.norm(dX, axis=1)
        e1 = dX / self.L[:, None]
        N_ends = el.N(X, np.array([-1.0, 1.0]))                           # (n_el, 2, 3, n_e), axis points
        self.a = np.einsum("ed,edi->ei", e1, N_ends[:, 1] - N_ends[:, 0]) / self.L[:, None]
        self.G = np.ascontiguousarray(el.k_geo(X, 1.0))                    # (n_el, n_e, n_e), unit axial force
        edofs = element_dofs(model.cells, el.dofs_per_node)
        n = model.n_dofs
        to_free = np.full(model.n_full, n, dtype=np.int64)                # fixed DOFs -> the zero slot n
        to_free[model.free] = np.arange(n)
        self.n = n
        self.idx = to_free[edofs]                                         # (n_el, n_e)
        self.dense = model.dense
        self._pairs = (self.idx[:, :, None] * (n + 1) + self.idx[:, None, :]).ravel() if self.dense else None

    # -- element quantities -----------------------------------------------------------------------
    def _gather(self, delta) -> np.ndarray:
        """Element DOFs (..., n_el, n_e) of delta (..., n)."""
        d = np.zeros(np.shape(delta)[:-1] + (self.n + 1,))
        d[..., :self.n] = delta
        return d[..., self.idx]

    def _scatter(self, f_e) -> np.ndarray:
        return np.bincount(self.idx.ravel(), weights=f_e.ravel(), minlength=self.n + 1)[:self.n]

    def strains(self, delta):
        """(u'_e, c_e, eps_e, g_e = G_e u_e) of every element at ``delta`` (n,), or at each row of
        ``delta`` (n_t, n) (then with a leading axis n_t)."""
        u = self._gather(np.asarray(delta, dtype=float))
        g = np.einsum("eij,...ej->...ei", self.G, u)
        up = np.einsum("ei,...ei->...e", self.a, u)
        c = np.einsum("...ei,...ei->...e", u, g)
        return up, c, up + c / (2.0 * self.L), g

    def axial_force(self, delta) -> np.ndarray:
        """N_e = EA eps_e [N] of every element (tension positive)."""
        return self.EA * self.strains(delta)[2]

    # -- energy, force, tangent -------------------------------------------------------------------
    def energy(self, delta):
        """U_nl = sum_e 1/2 EA L_e (eps_e^2 - u'_e^2): the strain energy beyond 1/2 delta^T [k] delta; a
        float at delta (n,), an array (n_t,) at the rows of delta (n_t, n)."""
        up, c, eps, _ = self.strains(delta)
        U = 0.5 * self.EA * np.sum(self.L * (eps - up) * (eps + up), axis=-1)
        return float(U) if np.ndim(delta) == 1 else U

    def force(self, delta) -> np.ndarray:
        """dU_nl/d delta (n,): the elastic force beyond [k] delta (enters the equations as -force)."""
        _, c, eps, g = self.strains(delta)
        f_e = (0.5 * self.EA) * c[:, None] * self.a + (self.EA * eps)[:, None] * g
        return self._scatter(f_e)

    def stiffness(self, delta):
        """d force / d delta (n, n), symmetric: dense for dense models, else CSR."""
        _, _, eps, g = self.strains(delta)
        EA = self.EA
        ag = self.a[:, :, None] * g[:, None, :]
        K_e = EA * (ag + ag.swapaxes(1, 2) + g[:, :, None] * g[:, None, :] / self.L[:, None, None])
        K_e += (EA * eps)[:, None, None] * self.G
        n, n1 = self.n, self.n + 1
        if self.dense:
            return np.bincount(self._pairs, weights=K_e.ravel(), minlength=n1 * n1).reshape(n1, n1)[:n, :n]
        rows = np.broadcast_to(self.idx[:, :, None], K_e.shape).ravel()
        cols = np.broadcast_to(self.idx[:, None, :], K_e.shape).ravel()
        keep = (rows < n) & (cols < n)
        return sparse.coo_array((K_e.ravel()[keep], (rows[keep], cols[keep])), shape=(n, n)).tocsr()
