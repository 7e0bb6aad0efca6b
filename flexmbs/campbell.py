"""Campbell diagrams of rotating bodies: natural frequencies against the spin rate, by direction.

Symbols (docs/rotating_beams.md; ref. [1] for the dimensionless form):

.. code:: text

    c      = sqrt(rho A L^4 / EI)          time scale of a beam bending with stiffness EI [s]
    gamma  = Omega c                       dimensionless spin rate
    lambda = omega c                       dimensionless natural frequency

Each mode is given a direction from the kinetic energy of its DOF groups,
``e_i = Re(conj(phi_i) (M phi)_i)`` summed over the DOFs of a group (their sum is
``phi^H M phi``).  With e1 the body's long axis, k the spin axis, f the part of k normal
to e1 (the flapwise direction, out of the plane of rotation) and c = e1 x f (chordwise,
in that plane), a translation DOF along a body axis d counts for

.. code:: text

    axial (d.e1)^2,  chord (d.c)^2,  flap (d.f)^2

and a rotation DOF about d for torsion (d.e1)^2, chord (d.f)^2 (bending in the plane of
rotation turns the section about f) and flap (d.c)^2.  The direction of a mode is the
group with the largest share.  For a straight beam along a body axis the consistent mass
does not couple the groups, so the shares are exact energy fractions.

References
----------
.. [1] J. R. Wright, J. E. Smith, R. W. Thresher, J. L. C. Wang, Vibration modes of
       centrifugally stiffened beams, J. Appl. Mech. 49(1) (1982) 197-202 (the DOI was not
       verified; the reference numbers used in the tests are the independently computed
       [DER] table of BENCHMARKS.md sec. 2.3).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .modal import natural_frequencies
from .model import Model

__all__ = ["DIRECTIONS", "time_scale", "to_dimensionless", "from_dimensionless", "direction_shares",
           "classify_modes", "CampbellDiagram", "campbell_diagram"]

DIRECTIONS = ("axial", "chord", "flap", "torsion")

# DOF name -> (translation or rotation, body axis); 2D beams rotate about z
_DOF_AXES = {"u": ("t", 0), "v": ("t", 1), "w": ("t", 2), "theta_x": ("r", 0), "theta_y": ("r", 1),
             "theta_z": ("r", 2), "theta": ("r", 2)}


def time_scale(rho_A: float, EI: float, L: float) -> float:
    """c = sqrt(rho A L^4 / EI) [s], so that gamma = Omega c and lambda = omega c."""
    for name, value in (("rho_A", rho_A), ("EI", EI), ("L", L)):
        if not (np.isfinite(value) and value > 0):
            raise ValueError(f"`{name}` must be a positive finite number, got {value!r}")
    return float(np.sqrt(rho_A * L**4 / EI))


def to_dimensionless(rate, rho_A: float, EI: float, L: float):
    """gamma = Omega c or lambda = omega c from a rate [rad/s] (scalar or array)."""
    return np.asarray(rate, dtype=float) * time_scale(rho_A, EI, L)


def from_dimensionless(value, rho_A: float, EI: float, L: float):
    """Omega = gamma / c or omega = lambda / c [rad/s] (scalar or array)."""
    return np.asarray(value, dtype=float) / time_scale(rho_A, EI, L)


def _long_axis(points: np.ndarray) -> np.ndarray:
    """Unit vector (3,) along the largest extent of the points (the beam's axis)."""
    P = np.zeros((len(points), 3))
    P[:, :points.shape[1]] = points
    _, _, Vt = np.linalg.svd(P - P.mean(axis=0), full_matrices=False)
    return Vt[0]


def _spin_axis(model: Model, t: float) -> np.ndarray:
    omega = model.frame(t).omega
    if np.linalg.norm(omega) > 0:
        return omega / np.linalg.norm(omega)
    return np.asarray(getattr(model.motion, "axis", (0.0, 0.0, 1.0)), dtype=float)


def _dof_weights(model: Model, spin_axis) -> np.ndarray:
    """(n_dofs, 4) weights of each free DOF for (axial, chord, flap, torsion)."""
    el = model.element
    e1 = _long_axis(model.mesh.points)
    k = np.asarray(spin_axis, dtype=float)
    if k.shape != (3,) or not np.linalg.norm(k) > 0:
        raise ValueError(f"`spin_axis` must be a nonzero 3-vector, got {spin_axis!r}")
    f = k / np.linalg.norm(k) - (k @ e1) / np.linalg.norm(k) * e1
    if np.linalg.norm(f) < 1e-6:
        raise ValueError("the spin axis is parallel to the body's long axis: flapwise and chordwise "
                         "directions are not defined")
    f /= np.linalg.norm(f)
    c = np.cross(e1, f)
    names = el.dof_names
    W = np.zeros((len(names), 4))
    for j, name in enumerate(names):
        if name not in _DOF_AXES:
            raise ValueError(f"cannot classify DOF {name!r} of {type(el).__name__}; known DOFs: "
                             f"{sorted(_DOF_AXES)}")
        kind, a = _DOF_AXES[name]
        d = np.eye(3)[a]
        if kind == "t" and getattr(el, "axial_dofs_along_axis", False):
            d = e1                                           # bars: u is along the bar
        if kind == "t":
            W[j] = [(d @ e1) ** 2, (d @ c) ** 2, (d @ f) ** 2, 0.0]
        else:
            W[j] = [0.0, (d @ f) ** 2, (d @ c) ** 2, (d @ e1) ** 2]
    local = model.free % el.dofs_per_node
    return W[local]


def direction_shares(model: Model, shapes: np.ndarray, t: float = 0.0, spin_axis=None) -> np.ndarray:
    """Kinetic-energy shares (n_modes, 4) of (axial, chord, flap, torsion) of mode shapes.

    Parameters
    ----------
    model : Model
    shapes : ndarray, shape (n_dofs, n_modes), real or complex
        Mode shapes on the free DOFs (e.g. from `flexmbs.modal.natural_frequencies`).
    t : float
        Time whose angular velocity gives the spin axis (when ``spin_axis`` is None and the
        frame spins; else the motion's ``axis``, else the body z axis).
    spin_axis : array_like, shape (3,), optional
        Body-frame spin axis.

    Returns
    -------
    ndarray, shape (n_modes, 4)
        Nonnegative shares summing to 1 for each mode, columns in the order of `DIRECTIONS`.
    """
    shapes = np.asarray(shapes)
    if shapes.ndim == 1:
        shapes = shapes[:, None]
    if shapes.shape[0] != model.n_dofs:
        raise ValueError(f"`shapes` must have {model.n_dofs} rows (the free DOFs), got {shapes.shape}")
    W = _dof_weights(model, _spin_axis(model, t) if spin_axis is None else spin_axis)
    e = np.real(np.conj(shapes) * (model.M @ shapes))          # (n_dofs, n_modes)
    shares = np.clip(W.T @ e, 0.0, None).T                     # (n_modes, 4)
    total = shares.sum(axis=1, keepdims=True)
    return np.divide(shares, total, out=np.zeros_like(shares), where=total > 0)


def classify_modes(model: Model, shapes: np.ndarray, t: float = 0.0, spin_axis=None) -> list[str]:
    """Direction ('axial', 'chord', 'flap' or 'torsion') of each mode: its largest energy share."""
    shares = direction_shares(model, shapes, t, spin_axis)
    return [DIRECTIONS[i] for i in np.argmax(shares, axis=1)]


@dataclass(frozen=True)
class CampbellDiagram:
    """Natural frequencies against the spin rate, with the direction of every mode.

    Attributes
    ----------
    Omega : ndarray, shape (n_Omega,)
        Spin rates [rad/s].
    frequencies : ndarray, shape (n_Omega, n_modes)
        Natural frequencies [rad/s] in the rotating frame, ascending at each Omega
        (negative: a mode unstable in the frozen frame, see `natural_frequencies`).
    directions : ndarray of str, shape (n_Omega, n_modes)
    shares : ndarray, shape (n_Omega, n_modes, 4)
        Energy shares of `DIRECTIONS`.
    shapes : ndarray, shape (n_Omega, n_dofs, n_modes)
        Mode shapes on the free DOFs (complex for the gyroscopic problem).
    gyroscopic : bool
        Whether the Coriolis (gyroscopic) coupling was kept.
    """

    Omega: np.ndarray
    frequencies: np.ndarray
    directions: np.ndarray
    shares: np.ndarray
    shapes: np.ndarray
    gyroscopic: bool

    def family(self, direction: str, n: int) -> np.ndarray:
        """The n lowest frequencies of one direction at each Omega, (n_Omega, n); NaN where fewer."""
        if direction not in DIRECTIONS:
            raise ValueError(f"`direction` must be one of {list(DIRECTIONS)}, got {direction!r}")
        out = np.full((len(self.Omega), n), np.nan)
        for i in range(len(self.Omega)):
            sel = self.frequencies[i][self.directions[i] == direction][:n]
            out[i, :len(sel)] = sel
        return out

    def family_shapes(self, direction: str, n: int, i: int) -> np.ndarray:
        """Shapes (n_dofs, <= n) of the n lowest modes of one direction at Omega[i]."""
        return self.shapes[i][:, np.flatnonzero(self.directions[i] == direction)[:n]]


def campbell_diagram(model_at: Callable[[float], Model], Omega, n_modes: int = 8,
                     gyroscopic: bool = False, spin_axis=None) -> CampbellDiagram:
    """Natural frequencies and mode directions of ``model_at(Omega)`` for each spin rate.

    Parameters
    ----------
    model_at : callable Omega -> Model
        The body spinning steadily at Omega [rad/s] (e.g. with `motion.ConstantRotation`);
        it is analysed at t = 0, with the stiffening, centrifugal softening and, if
        ``gyroscopic``, Coriolis terms the model has there.
    Omega : array_like, shape (n_Omega,)
        Spin rates [rad/s].
    n_modes : int
        Modes computed at each rate (the lowest ones).
    gyroscopic : bool
        Keep the Coriolis coupling [c(omega)] = 2 G(omega) (state-space eigenproblem, complex
        shapes); False drops it (symmetric problem).
    spin_axis : array_like, shape (3,), optional
        Body-frame spin axis for the classification (default: from the frame).

    Returns
    -------
    CampbellDiagram
    """
    Omega = np.atleast_1d(np.asarray(Omega, dtype=float))
    if Omega.ndim != 1 or not np.all(np.isfinite(Omega)):
        raise ValueError(f"`Omega` must be a 1-D array of finite spin rates, got {Omega!r}")
    freqs, dirs, shares, shapes = [], [], [], []
    for Om in Omega:
        model = model_at(float(Om))
        w, phi = natural_frequencies(model, 0.0, n_modes=n_modes, gyroscopic=gyroscopic)
        s = direction_shares(model, phi, 0.0, spin_axis)
        freqs.append(w)
        shares.append(s)
        dirs.append(np.array([DIRECTIONS[i] for i in np.argmax(s, axis=1)]))
        shapes.append(phi)
    return CampbellDiagram(Omega=Omega, frequencies=np.array(freqs), directions=np.array(dirs),
                           shares=np.array(shares), shapes=np.array(shapes), gyroscopic=bool(gyroscopic))
