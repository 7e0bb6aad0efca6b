"""Each body's motion and fields at many outputs at once: the `BodyResults` of a System run.

From the coordinates q (n_t, n_q) and their rates q' (n_t, n_q) of a `flexmbs.System`, per body
(planar quantities padded to 3D: z = 0, rotations about z):

.. code:: text

    Euler parameters (RigidBodyEP, FlexibleBody: q = (R, p, ...)):
        position R,  A = A(p),  velocity R',  omega = 2 E(p) p' = 2 (e0 e' - e0' e + e x e')
    planar rigid body (q = (x, y, theta)):
        position (x, y, 0),  A = rotation about z by theta,  velocity (x', y', 0),  omega = (0, 0, theta')
    point mass (q = r):   position r, A = I, velocity r', omega = 0
    other rigid bodies (RigidBodyNatural, TreeBody): their public point(q, 0), rotation(q),
        point_velocity(q, q', 0), angular_velocity(q, q'), one output at a time
    flexible body: its frame as above, plus delta = q[7:], u = N delta (body frame), u' = N delta',
        and the element data of `flexmbs.analysis.element_data`
    corotational beam: its node positions x (the first dim coordinates of each node's block of q),
        displacement x - X, no frame
    display shape (`BodyResults.nodes`, ``cells``): a flexible body's mesh; a rigid body's box of its
        mass and principal inertias (`flexmbs.io.paraview.display_shape`), a point mass a vertex, in
        body coordinates (global position R + A X)
    joints (`joint_histories`): each `Joint` / `PlanarJoint` (not the `AngleDriver`s) at its marker
        on its first body, r = R + A (y0 + Phi q) (`flexmbs.io.paraview.marker_paths`)

(E(p) = [-e, e0 I + tilde(e)] with A = E G^T: Shabana, Dynamics of Multibody Systems, 3rd ed.,
sec. 2.7; omega = 2 E p' holds on |p| = 1, which the constraints keep.)
"""
from __future__ import annotations

import numpy as np

from .lazy import isinstance_of
from .results import BodyResults
from .rotations import ep_E, ep_to_matrix, pad3

__all__ = ["body_histories", "body_kind", "body_frame", "body_outputs", "body_series", "body_static", "bodies_from_series",
           "drawn_joints", "joint_histories", "one_body_fields"]

#: the per-output arrays of a `BodyResults` (besides its element data), as stored in a results file
SERIES_FIELDS = ("position", "rotation", "velocity", "angular_velocity", "euler_parameters", "delta", "delta_dot",
                 "displacement", "elastic_velocity")


def body_kind(body) -> str:
    """"flexible", "corotational", "point" or "rigid" (see `BodyResults.kind`).  The classes are
    checked without importing their modules (`flexmbs.lazy.isinstance_of`): a System of rigid
    bodies does not load the flexible bodies and beams to learn that it has none."""
    if isinstance_of(body, "flexmbs.bodies.flexible:FlexibleBody"):
        return "flexible"
    if isinstance_of(body, "flexmbs.bodies.corotational:CorotationalBeam2D",
                     "flexmbs.bodies.corotational:CorotationalBeam3D"):
        return "corotational"
    if isinstance_of(body, "flexmbs.bodies.point:PointMass"):
        return "point"
    return "rigid"


def _ep_motion(Q, V) -> dict:
    """Frame of bodies whose q starts with (R, p): all outputs at once."""
    p, pd = Q[:, 3:7], V[:, 3:7]
    omega = 2.0 * np.einsum("tij,tj->ti", ep_E(p), pd)                     # rotations.ep_E: omega = 2 E p'
    return dict(position=Q[:, :3].copy(), rotation=ep_to_matrix(p).reshape(len(Q), 3, 3), velocity=V[:, :3].copy(),
                angular_velocity=omega, euler_parameters=p.copy())


def _planar_motion(Q, V) -> dict:
    n_t = len(Q)
    c, s = np.cos(Q[:, 2]), np.sin(Q[:, 2])
    A = np.zeros((n_t, 3, 3))
    A[:, 0, 0], A[:, 0, 1], A[:, 1, 0], A[:, 1, 1], A[:, 2, 2] = c, -s, s, c, 1.0
    zero = np.zeros(n_t)
    return dict(position=np.column_stack([Q[:, 0], Q[:, 1], zero]), rotation=A,
                velocity=np.column_stack([V[:, 0], V[:, 1], zero]),
                angular_velocity=np.column_stack([zero, zero, V[:, 2]]))


def _point_motion(Q, V) -> dict:
    n_t = len(Q)
    return dict(position=pad3(Q), rotation=np.broadcast_to(np.eye(3), (n_t, 3, 3)).copy(), velocity=pad3(V),
                angular_velocity=np.zeros((n_t, 3)))


def _rotation3(A) -> np.ndarray:
    out = np.eye(3)
    A = np.asarray(A, dtype=float)
    out[:A.shape[0], :A.shape[1]] = A
    return out


def _generic_motion(body, Q, V) -> dict:
    """Through the body's public markers, one output at a time (bodies without a batched form)."""
    zero = np.zeros(body.dim)
    n_t = len(Q)
    position = np.array([pad3(body.point(q, zero)) for q in Q]).reshape(n_t, 3)
    rotation = np.array([_rotation3(body.rotation(q)) for q in Q]).reshape(n_t, 3, 3)
    velocity = np.array([pad3(body.point_velocity(q, v, zero)) for q, v in zip(Q, V)]).reshape(n_t, 3)
    omega = np.array([body.angular_velocity(q, v) for q, v in zip(Q, V)], dtype=float)
    if omega.ndim == 1:                                # planar: a float per output
        omega = np.column_stack([np.zeros(n_t), np.zeros(n_t), omega])
    return dict(position=position, rotation=rotation, velocity=velocity, angular_velocity=omega.reshape(n_t, 3))


def _frame_motion(body, Q, V) -> dict:
    from .bodies.planar import RigidBody2D
    if hasattr(body, "frame_marker"):                  # q = (R, p, ...): RigidBodyEP, FlexibleBody
        return _ep_motion(Q, V)
    if isinstance(body, RigidBody2D):
        return _planar_motion(Q, V)
    return _generic_motion(body, Q, V)


def body_frame(body, Q) -> tuple[np.ndarray, np.ndarray]:
    """Reference point (n_t, 3) and rotation body -> global (n_t, 3, 3) of a rigid, point or
    flexible ``body`` at its coordinates ``Q`` (n_t, body.n_q) (the module's table)."""
    Q = np.atleast_2d(np.asarray(Q, dtype=float))
    motion = _point_motion if body_kind(body) == "point" else lambda Q, V: _frame_motion(body, Q, V)
    m = motion(Q, np.zeros_like(Q))
    return m["position"], m["rotation"]


def _shape(body) -> dict:
    """``nodes`` (n, 3) and ``cells`` of a rigid body or point mass: its display shape in body
    coordinates (`flexmbs.io.paraview.display_shape`)."""
    from .io.paraview import display_shape
    points, cells = display_shape(body)
    return dict(nodes=points, cells={t: np.asarray(c, dtype=np.int64) for t, c in cells})


def _flexible(body, Q, V) -> BodyResults:
    from .analysis import element_data
    model = body.model
    delta, delta_dot = Q[:, 7:], V[:, 7:]
    u, w = model.displacement_field(np.stack([delta, delta_dot]))
    return BodyResults(name=body.name, kind="flexible", **_ep_motion(Q, V), nodes=model.mesh.points.copy(),
                       cells={model.element.cell_type: np.asarray(model.cells).copy()}, delta=delta.copy(),
                       delta_dot=delta_dot.copy(), displacement=u, elastic_velocity=w,
                       element_data=element_data(model, delta, u))


def _corotational(body, Q) -> BodyResults:
    n_t, dim = len(Q), body.dim
    X = np.asarray(body.nodes, dtype=float)
    x = Q.reshape(n_t, len(X), -1)[..., :dim]
    nan = np.full((n_t, 3), np.nan)
    return BodyResults(name=body.name, kind="corotational", position=nan, rotation=np.full((n_t, 3, 3), np.nan),
                       velocity=nan.copy(), angular_velocity=nan.copy(), nodes=X.copy(),
                       cells={"line": np.asarray(body.elements, dtype=np.int64)}, displacement=x - X)


def body_histories(system, q, q_dot) -> dict[str, BodyResults]:
    """`BodyResults` of every body of ``system`` at the coordinates ``q`` and rates ``q_dot``
    (n_t, n_q), by body name (see the module's table)."""
    q, q_dot = np.atleast_2d(np.asarray(q, dtype=float)), np.atleast_2d(np.asarray(q_dot, dtype=float))
    out = {}
    for body in system.bodies:
        sl = system.slice(body)
        Q, V = q[:, sl], q_dot[:, sl]
        kind = body_kind(body)
        if kind == "flexible":
            out[body.name] = _flexible(body, Q, V)
        elif kind == "corotational":
            out[body.name] = _corotational(body, Q)
        elif kind == "point":
            out[body.name] = BodyResults(name=body.name, kind=kind, **_point_motion(Q, V), **_shape(body))
        else:
            out[body.name] = BodyResults(name=body.name, kind=kind, **_frame_motion(body, Q, V), **_shape(body))
    return out


def drawn_joints(system) -> list:
    """The constraints drawn as joints: the `Joint`s and `PlanarJoint`s, not the `AngleDriver`s (a
    driver is a Joint subclass that sits on a joint drawn already)."""
    from .constraints.driving import AngleDriver
    from .constraints.joints import Joint
    from .constraints.planar import PlanarJoint
    return [c for c in system.constraints if isinstance(c, (Joint, PlanarJoint)) and not isinstance(c, AngleDriver)]


def joint_histories(system, q) -> dict[str, np.ndarray]:
    """Global position (n_t, 3) of each joint of `drawn_joints` at the coordinates ``q`` (n_t, n_q), by
    constraint name: its marker on its first body (`flexmbs.io.paraview.marker_paths`, all outputs
    at once for the bodies with ``frame_marker``)."""
    from .io.paraview import marker_paths
    q = np.atleast_2d(np.asarray(q, dtype=float))
    out = {}
    for c in drawn_joints(system):
        k, body = next((k, b) for k, b in enumerate(c.bodies) if b is not None)
        out[c.name] = marker_paths(body, q[:, system.slice(body)], c.reaction_points()[k])
    return out


def body_outputs(body: BodyResults, index) -> BodyResults:
    """``body`` at the outputs ``index`` (an index array or slice of its outputs)."""
    series = {k: getattr(body, k)[index] for k in SERIES_FIELDS if getattr(body, k) is not None}
    return body.replace(**series, element_data={k: v[index] for k, v in body.element_data.items()})


def body_series(bodies: dict) -> dict[str, np.ndarray]:
    """The per-output arrays of ``bodies`` ({name: BodyResults}) as results-file paths
    ``bodies/NAME/FIELD`` and ``bodies/NAME/element_data/KEY`` (the fields a body has)."""
    out = {}
    for name, b in bodies.items():
        for key in SERIES_FIELDS:
            value = getattr(b, key)
            if value is not None:
                out[f"bodies/{name}/{key}"] = value
        out.update({f"bodies/{name}/element_data/{k}": v for k, v in b.element_data.items()})
    return out


def body_static(bodies: dict) -> dict[str, np.ndarray]:
    """What a body has once for the whole run: ``bodies/NAME/nodes`` and ``bodies/NAME/cells/TYPE``."""
    out = {}
    for name, b in bodies.items():
        if b.nodes is not None:
            out[f"bodies/{name}/nodes"] = b.nodes
        out.update({f"bodies/{name}/cells/{k}": np.asarray(v, dtype=np.int64) for k, v in b.cells.items()})
    return out


def bodies_from_series(kinds: dict, series: dict, static: dict, n_t: int) -> dict[str, BodyResults]:
    """{name: BodyResults} back from `body_series` and `body_static` (``kinds``: {name: kind},
    in the System's order); a field a truncated file lost is NaN."""
    bodies = {}
    cells, element_data = _per_body(static, "cells"), _per_body(series, "element_data")
    for name, kind in kinds.items():
        pre = f"bodies/{name}/"
        fields = {k: series.get(pre + k) for k in SERIES_FIELDS}
        for k in ("position", "velocity", "angular_velocity"):
            if fields[k] is None:
                fields[k] = np.full((n_t, 3), np.nan)
        if fields["rotation"] is None:
            fields["rotation"] = np.full((n_t, 3, 3), np.nan)
        bodies[name] = BodyResults(
            name=name, kind=kind, nodes=static.get(pre + "nodes"),
            cells=cells.get(name, {}), element_data=element_data.get(name, {}), **fields)
    return bodies


def _per_body(items: dict, part: str) -> dict[str, dict]:
    """{name: {KEY: value}} of the entries ``bodies/NAME/<part>/KEY`` of ``items``, in one pass over
    them (a body's name has no '/'), not one pass per body: 1000 bodies' runs had 6e6 key tests."""
    out: dict = {}
    for k, v in items.items():
        parts = k.split("/", 3)
        if len(parts) == 4 and parts[0] == "bodies" and parts[2] == part:
            out.setdefault(parts[1], {})[parts[3]] = v
    return out


def one_body_fields(bodies: dict) -> dict:
    """`Results`' one-body fields (delta, delta_dot, displacement, velocity, nodes, cells, element
    data) from the one flexible body of a System, if it has exactly one; else {} (empty fields)."""
    flexible = [b for b in bodies.values() if b.kind == "flexible"]
    if len(flexible) != 1:
        return {}
    b = flexible[0]
    return dict(delta=b.delta, delta_dot=b.delta_dot, displacement=b.displacement, velocity=b.elastic_velocity,
                nodes=b.nodes, cells=dict(b.cells), element_data=dict(b.element_data))
