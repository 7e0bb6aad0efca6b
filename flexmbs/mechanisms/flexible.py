"""A flexible link on the prescribed chord frame of its rigid link (kineto-elastodynamics).

The link is meshed with beam elements along the x axis of its chord frame, from the first
joint (x = 0) to the second (x = L).  The frame follows the rigid linkage (`link_motion`),
so the elastic DOFs measure the deformation relative to the rigid link, and the frame's
motion brings the inertia loads (transport, centrifugal, Euler, Coriolis) of the model.
Supports in the frame (DOFs u axial, v transverse, theta rotation):

.. code:: text

    "pinned-pinned"   u = v = 0 at x = 0;  u = v = 0 at x = L     both joints on rigid links
    "pinned-sliding"  u = v = 0 at x = 0;  v = 0 at x = L, u free   e.g. the rod end at a slider,
                                                                     carrying the slider mass

With v = 0 at both joints the frame's x axis is the chord of the deformed link's ends, so
the transverse displacement v(x) is the deflection relative to the chord.  Geometric
stiffening by the axial force of the inertia loads is on by default (the Model's default for
moving frames).

**Guide correction** (pinned-sliding, ``guide_angle``).  A slider runs on a guide fixed in
the ground (direction g at ``guide_angle``), not normal to the chord.  The support v = 0 at
the slider end pushes along the frame's n = e_z x e; the guide pushes along its normal m.
For the same transverse force R (set by the moments about the first joint) the guide's
force N m = R n + R tan(theta - guide_angle) e also has an axial part, which the frame's
support leaves to the pin at the first joint.  That part changes the axial force, hence the
geometric stiffening, along the whole link.  `guide_load` adds it as an axial nodal load at
the slider end, with R from the rigid-body motion (quasi-static):

.. code:: text

    R = rho A (a_O . n L/2 + eps L^2/3) + m_s (a_O . n + eps L),     load = R tan(theta - guide_angle)

It neglects the elastic inertia in R (the exact reaction needs a guide constraint in the
core, a time-dependent support direction).  On Simeon's slider-crank it moves the peak
mid-span deflection by 1.1 % (docs/mechanisms.md).

References
----------
.. [1] A. G. Erdman, G. N. Sandor, R. G. Oakberg, A general method for kineto-elastodynamic
       analysis and synthesis of mechanisms, J. Eng. Ind. 94 (1972) 1193-1205,
       doi:10.1115/1.3428338.
.. [2] S. Vlase, A. E. Nicolescu, M. Marin, Mathematics 8 (2020) 1401, sec. 4b,
       doi:10.3390/math8091401.
"""
from __future__ import annotations

import math
from typing import Callable, Literal

import numpy as np

from ..elements.base import Element
from ..mesh import generate
from ..model import Model, NodalLoad
from .frames import link_motion
from .linkage import Linkage

__all__ = ["flexible_link", "beam_on_frame", "guide_load", "chord_deflection", "displacement_along",
           "global_shape", "ENDS"]

ENDS = {"pinned-pinned": [("start", ["u", "v"]), ("end", ["u", "v"])],
        "pinned-sliding": [("start", ["u", "v"]), ("end", ["v"])]}


def beam_on_frame(motion, element: Element, elements: int, length: float, *,
                  ends: Literal["pinned-pinned", "pinned-sliding"] = "pinned-pinned", end_mass: float = 0.0,
                  **model_options) -> Model:
    """A straight beam of ``elements`` elements from x = 0 to x = ``length`` on ``motion``.

    ``ends`` picks the supports (module docstring); ``end_mass`` [kg] is a point mass at
    x = L (the slider).  Other keywords go to `Model` (stiffening, damping, gravity, ...).
    """
    if ends not in ENDS:
        raise ValueError(f"`ends` must be one of {sorted(ENDS)}, got {ends!r}")
    if not (isinstance(elements, (int, np.integer)) and elements >= 2):
        raise ValueError(f"`elements` must be an integer >= 2, got {elements!r}")
    if not (np.isfinite(end_mass) and end_mass >= 0):
        raise ValueError(f"`end_mass` must be >= 0 [kg], got {end_mass!r}")
    masses = [("end", float(end_mass))] if end_mass > 0 else []
    return Model(generate.line(int(elements), float(length)), element, motion=motion, fixed=ENDS[ends],
                 point_masses=masses, **model_options)


def guide_load(motion, mass_per_length: float, length: float, end_mass: float = 0.0,
               guide_angle: float = 0.0) -> NodalLoad:
    """Axial load at the sliding end that makes the support act along the guide's normal
    (module docstring, quasi-static reaction).  ``motion``: a `link_motion` of the link."""
    frame = motion.link_frame
    L, mu, m_s = float(length), float(mass_per_length), float(end_mass)

    def factor(t):
        if np.ndim(t):                                                  # many times at once
            _, _, a, theta, _, eps = frame.many(t)
            a_n = -a[:, 0] * np.sin(theta) + a[:, 1] * np.cos(theta)
            R = mu * (a_n * L / 2.0 + eps * L * L / 3.0) + m_s * (a_n + eps * L)
            return R * np.tan(theta - guide_angle)
        _, _, a, theta, _, eps = frame(t)
        a_n = -a[0] * math.sin(theta) + a[1] * math.cos(theta)          # a_O . n
        R = mu * (a_n * L / 2.0 + eps * L * L / 3.0) + m_s * (a_n + eps * L)
        return R * math.tan(theta - guide_angle)

    return NodalLoad("end", "u", 1.0, factor)


def flexible_link(linkage: Linkage, link: str, crank: Callable, element: Element, elements: int, *,
                  ends: Literal["pinned-pinned", "pinned-sliding"] = "pinned-pinned", end_mass: float = 0.0,
                  guide_angle: float | None = None, t_span=None, **model_options) -> Model:
    """The flexible ``link`` of ``linkage`` as a `Model` on its chord frame.

    Parameters
    ----------
    linkage : Linkage
        The rigid mechanism (`SliderCrank`, `FourBar`, ...).
    link : str
        Name of the flexible link; its length is the distance of its joints.
    crank : callable t -> (phi, phi', phi'')
        Crank-angle law, e.g. ``constant_speed(150.0)``.
    element : Element
        Beam element with material and section (e.g. `BeamEB2D`).
    elements : int
        Number of elements along the link.
    ends : {"pinned-pinned", "pinned-sliding"}
    end_mass : float
        Point mass at the second joint [kg] (a slider).
    guide_angle : float, optional
        Pinned-sliding only: angle of the slider's guide in the ground [rad]; adds the
        `guide_load` (module docstring).  None: the support acts normal to the chord only.
    t_span : (t0, t1), optional
        Check the rigid path for singular positions over this interval first.
    **model_options
        Passed to `Model` (stiffening, damping, gravity, loads, dense_below).
    """
    motion = link_motion(linkage, link, crank, t_span=t_span)
    lengths = [_chord_length(linkage, link, crank, t) for t in ((0.0,) if t_span is None else t_span)]
    if max(lengths) - min(lengths) > 1e-9 * max(lengths):
        raise ValueError(f"link {link!r} changes length along the motion ({min(lengths):.6g} to "
                         f"{max(lengths):.6g} m): only a rigid link can carry a flexible beam")
    if guide_angle is not None:
        if ends != "pinned-sliding":
            raise ValueError("`guide_angle` needs ends='pinned-sliding'")
        rho_area = element.material.rho * element.area
        model_options["loads"] = list(model_options.get("loads", ())) + [
            guide_load(motion, rho_area, lengths[0], end_mass, guide_angle)]
    model = beam_on_frame(motion, element, elements, lengths[0], ends=ends, end_mass=end_mass, **model_options)
    model.linkage, model.link, model.crank = linkage, link, crank
    return model


def _chord_length(linkage, link, crank, t) -> float:
    phi, phi_dot, phi_ddot = crank(t)
    return float(linkage.state(phi, phi_dot, phi_ddot).link(link).length)


def displacement_along(model: Model, delta: np.ndarray, x) -> np.ndarray:
    """Displacement (u, v) at body coordinates ``x`` on the beam's axis, (..., len(x), 2).

    ``delta``: free DOFs (n,) or (n_t, n); evaluated with the element's own shape functions
    (linear u, Hermite v for `BeamEB2D`).
    """
    x = np.atleast_1d(np.asarray(x, dtype=float))
    full = model.expand(np.asarray(delta, dtype=float))
    X = model.X                                    # (n_el, 2, dim)
    x0, x1 = X[:, 0, 0], X[:, 1, 0]
    if np.any(x < x0.min() - 1e-12) or np.any(x > x1.max() + 1e-12):
        raise ValueError(f"`x` must lie on the beam [{x0.min()}, {x1.max()}], got {x}")
    el = model.element
    dpn = el.dofs_per_node
    edofs = (model.cells[:, :, None] * dpn + np.arange(dpn)).reshape(len(model.cells), -1)
    out = []
    for xk in x:
        e = int(np.clip(np.searchsorted(x1, xk, side="left"), 0, len(x1) - 1))
        xi = np.array([2.0 * (xk - x0[e]) / (x1[e] - x0[e]) - 1.0])
        N = el.N(X[e:e + 1], xi)[0, 0]             # (3, n_e)
        out.append(full[..., edofs[e]] @ N[:2].T)  # (..., 2)
    return np.stack(out, axis=-2)


def chord_deflection(model: Model, delta: np.ndarray, x) -> np.ndarray:
    """Transverse deflection at body coordinates ``x`` relative to the chord of the beam's ends,
    (..., len(x)): w(x) - [(1 - s) v(0) + s v(L)], s = x / L (= v(x) when v = 0 at both ends)."""
    x = np.atleast_1d(np.asarray(x, dtype=float))
    X = model.X
    L0, L1 = X[:, 0, 0].min(), X[:, 1, 0].max()
    w = displacement_along(model, delta, np.concatenate([[L0], x, [L1]]))[..., 1]
    s = (x - L0) / (L1 - L0)
    return w[..., 1:-1] - ((1.0 - s) * w[..., :1] + s * w[..., -1:])


def global_shape(model: Model, t, delta: np.ndarray, x, scale: float = 1.0) -> np.ndarray:
    """Global positions (n_t, len(x), 2) of the beam's axis points ``x`` displaced by
    ``scale`` times their elastic displacement: r_O(t) + R(t) (x + scale u(x, t))."""
    t = np.atleast_1d(np.asarray(t, dtype=float))
    x = np.atleast_1d(np.asarray(x, dtype=float))
    u = displacement_along(model, np.atleast_2d(delta), x)          # (n_t, n_x, 2)
    body = np.stack([x, np.zeros_like(x)], axis=-1)[None] + scale * u
    out = np.empty_like(body)
    for k, tk in enumerate(t):
        fs = model.frame(tk)
        out[k] = fs.r_O[:2] + body[k] @ fs.R[:2, :2].T
    return out
