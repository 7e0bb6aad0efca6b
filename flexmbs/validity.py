"""Is a run inside the range of the linear-strain floating-frame model?

A `Model` (run by `flexmbs.run`) and a `flexmbs.FlexibleBody` describe the elastic motion
relative to their frame by linear strains, u = N delta: a node's rotation theta and its
displacement enter the strain to first order only.  The terms they drop are of second order:
the axial Green strain of a beam is u' + 1/2 (v'^2 + w'^2), and a fibre turned by theta is
shortened by 1 - cos(theta) ~ theta^2 / 2 of its length, which the linear model does not see
(it lets a cantilever's tip move on a straight line instead of a circle).  At theta = 0.2 rad
that is 2 % of the length (1 - cos 0.2 = 0.0199), and a tip deflection of 10 % of the length
turns the tip section of a cantilever by 0.15 rad (theta_tip = 3/2 w_tip / L under a tip
load).  Beyond these the results are those of a model that no longer describes the body:
(Shabana, Dynamics of Multibody Systems, 4th ed., Cambridge UP (2013), sec. 5.1 and 7.1: the
floating frame with linear elastic coordinates assumes small deformation relative to the
frame; Crisfield, Non-linear Finite Element Analysis of Solids and Structures, vol. 1, Wiley
(1991), sec. 7.1: the Green strain of the beam).

`RangeCheck` follows the outputs of one run, block by block (vectorised over the outputs and
the nodes), and gives one warning at the end of the run when

.. code:: text

    max |theta| over the rotational DOFs of beam nodes   > ROTATION_LIMIT   (0.2 rad)
    max |u| / size, size = the largest side of the undeformed mesh's bounding box
                                                         > DEFLECTION_LIMIT (0.1)

naming the body, the quantity, its value and time, and what to use instead: the corotational
beam (`flexmbs.bodies.corotational.CorotationalBeam2D`/`CorotationalBeam3D`), finer elements,
or the units (E in Pa).  Solids are judged by their displacements (no rotational DOFs); their
displacement-gradient strains would cost an element loop per output.
"""
from __future__ import annotations

import logging
import warnings

import numpy as np

__all__ = ["ROTATION_LIMIT", "DEFLECTION_LIMIT", "RangeWarning", "RangeCheck", "body_size", "system_range_warning",
           "warn_range"]

log = logging.getLogger(__name__)

ROTATION_LIMIT = 0.2          # [rad]: 1 - cos(0.2) = 2 % foreshortening (module docstring)
DEFLECTION_LIMIT = 0.1        # of the body size: a cantilever's tip turned by 0.15 rad


class RangeWarning(UserWarning):
    """The elastic deformation of a run left the range of the linear-strain model."""


def body_size(points: np.ndarray) -> float:
    """The largest side [m] of the bounding box of the nodes ``points`` (n_nodes, dim)."""
    points = np.asarray(points, dtype=float)
    return float((points.max(axis=0) - points.min(axis=0)).max())


class _Peak:
    """The largest value of one quantity over the outputs seen, its time, and the first time it
    exceeded its limit."""

    def __init__(self, limit: float):
        self.limit, self.value, self.t_value, self.t_first = limit, 0.0, None, None

    def update(self, t: np.ndarray, values: np.ndarray) -> None:
        if not len(t):
            return
        k = int(np.argmax(values))
        if values[k] > self.value:
            self.value, self.t_value = float(values[k]), float(t[k])
        beyond = np.flatnonzero(values > self.limit)
        if self.t_first is None and len(beyond):
            self.t_first = float(t[beyond[0]])


class RangeCheck:
    """Largest node rotation and displacement / size of a `Model` over the outputs of a run.

    ``update(t, delta, displacement)`` takes a block of outputs (t (n_t,), the free DOFs delta
    (n_t, n) and the nodal displacements (n_t, n_nodes, dim)); ``warn()`` at the end logs and
    warns (`RangeWarning`) once if a limit was exceeded and returns the message (else None).
    ``label`` names the body in the message ("run 'spin'", "body 'beam'").
    """

    def __init__(self, model, label: str = "the model"):
        self.model, self.label = model, label
        names = model.element.dof_names
        self._rotations = [j for j, dof in enumerate(names) if dof.startswith("theta")]
        self._per_node = len(names)
        self.size = body_size(model.mesh.points)
        self.rotation = _Peak(ROTATION_LIMIT)
        self.deflection = _Peak(DEFLECTION_LIMIT)

    def update(self, t, delta, displacement=None) -> None:
        t = np.atleast_1d(np.asarray(t, dtype=float))
        delta = np.asarray(delta, dtype=float).reshape(len(t), -1)
        if displacement is None:
            displacement = self.model.displacement_field(delta)
        u = np.linalg.norm(np.asarray(displacement).reshape(len(t), self.model.mesh.n_nodes, -1), axis=-1)
        self.deflection.update(t, u.max(axis=1) / self.size)
        if self._rotations:
            full = self.model.expand(delta).reshape(len(t), -1, self._per_node)
            self.rotation.update(t, np.abs(full[..., self._rotations]).max(axis=(1, 2)))

    def message(self) -> str | None:
        """What left the range, when, and what to use instead; None if nothing did."""
        parts = []
        r, d = self.rotation, self.deflection
        if r.t_first is not None:
            parts.append(f"node rotations up to {r.value:.3g} rad (at t = {r.t_value:.6g} s; beyond "
                         f"{r.limit:g} rad from t = {r.t_first:.6g} s)")
        if d.t_first is not None:
            parts.append(f"displacements up to {d.value * self.size:.3g} m = {100 * d.value:.3g} % of the body size "
                         f"{self.size:.3g} m (at t = {d.t_value:.6g} s; beyond {100 * d.limit:g} % from "
                         f"t = {d.t_first:.6g} s)")
        if not parts:
            return None
        material = getattr(self.model.element, "material", None)
        E = f" (E = {material.E:.3g} Pa here)" if material is not None else ""
        return (f"{self.label} leaves the range of the linear-strain floating-frame model: "
                f"{' and '.join(parts)}; it holds for rotations below {ROTATION_LIMIT:g} rad and "
                f"displacements below {100 * DEFLECTION_LIMIT:g} % of the size. Use the corotational beam "
                f"(CorotationalBeam2D/3D) for large rotations, finer elements, or check the units: E in Pa{E}.")

    def warn(self) -> str | None:
        """`warn_range` of the `message`; returns it (None: in range)."""
        return warn_range(self.message(), stacklevel=4)


def warn_range(text: str | None, stacklevel: int = 2) -> str | None:
    """Log ``text`` and warn it once (`RangeWarning`), unless it is None; return it.
    ``stacklevel`` as in `warnings.warn` (2: the caller of this function)."""
    if text is not None:
        log.warning(text)
        warnings.warn(text, RangeWarning, stacklevel=stacklevel)
    return text


def system_range_warning(system, t, q, stacklevel: int = 2) -> str | None:
    """`warn_range` of the flexible bodies of a `flexmbs.System` (those with a ``range_check``:
    `flexmbs.FlexibleBody`; corotational bodies take large rotations) over the outputs t (n_t,),
    q (n_t, n_q); one message for all of them, or None.  ``stacklevel`` as in `warnings.warn`,
    counted from the caller of this function."""
    q = np.asarray(q)
    found = [body.range_check(t, q[:, system.slice(body)]).message() for body in system.bodies
             if hasattr(body, "range_check")]
    found = [text for text in found if text is not None]
    return warn_range(" ".join(found) if found else None, stacklevel=stacklevel + 1)
