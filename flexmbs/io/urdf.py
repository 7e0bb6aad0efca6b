"""URDF import: a robot description as a `flexmbs.System` of `RigidBodyEP` links and joints.

Read with the standard library's XML parser.  Each link with an ``<inertial>`` is a rigid body
whose reference point is the link frame's origin at the zero joint positions; its centroid is
the inertial origin and its inertia tensor the URDF's, turned into the link frame:

.. code:: text

    T_child = T_parent T_origin(joint)            link frames, world <- link (joint values 0)
    R_origin = Rz(yaw) Ry(pitch) Rx(roll)          URDF's fixed-axis roll, pitch, yaw
    J_link = R_inertial J_urdf R_inertial^T         ixy, ixz, iyz are the tensor's entries

A root link without ``<inertial>`` (e.g. "world" or a fixed base) is the ground.  Joints:
revolute and continuous -> `Revolute`, prismatic -> `Prismatic`, fixed -> `Fixed`, through the
joint frame's origin along its ``<axis>`` (default x) in world components.  Joint limits
(``<limit lower upper>`` of revolute and prismatic joints, about the zero joint value) become
`flexmbs.constraints.JointLimit` stops when ``read_urdf(..., limits={...})`` gives the stops'
stiffness (URDF has none); otherwise they are read and not enforced.  ``effort`` and ``velocity``
limits are read and not enforced.

References
----------
.. [1] URDF XML specification, ROS wiki, http://wiki.ros.org/urdf/XML (link, joint, inertial).
"""
from __future__ import annotations

import logging
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["read_urdf", "read_urdf_joints", "read_urdf_shapes", "rpy_matrix", "UrdfJoint"]

log = logging.getLogger(__name__)
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed")


def rpy_matrix(rpy) -> np.ndarray:
    """R = Rz(yaw) Ry(pitch) Rx(roll) of URDF's ``rpy="roll pitch yaw"`` (rotations about the fixed
    x, y, z axes in that order)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


@dataclass
class _Link:
    name: str
    mass: float | None = None
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray | None = None          # in the link frame
    visuals: list = field(default_factory=list)   # (geometry element, R, xyz) in the link frame


@dataclass(frozen=True)
class UrdfJoint:
    """A URDF joint as read: its type, parent and child links, origin and axis (parent frame), limits."""

    name: str
    type: str
    parent: str
    child: str
    xyz: np.ndarray
    R: np.ndarray
    axis: np.ndarray
    limits: dict


def _floats(el, attr: str, n: int, default, where: str) -> np.ndarray:
    text = default if el is None else el.get(attr, default)
    try:
        values = np.array([float(v) for v in str(text).split()])
    except ValueError:
        values = np.array([])
    if values.shape != (n,) or not np.all(np.isfinite(values)):
        expected = "a finite number" if n == 1 else f"{n} finite numbers"
        raise ValueError(f"URDF {where}: `{attr}` must be {expected}, got {text!r}")
    return values


def _origin(el, where: str) -> tuple[np.ndarray, np.ndarray]:
    origin = None if el is None else el.find("origin")
    return (_floats(origin, "xyz", 3, "0 0 0", where), rpy_matrix(_floats(origin, "rpy", 3, "0 0 0", where)))


def _read_link(el) -> _Link:
    name = el.get("name")
    link = _Link(name)
    inertial = el.find("inertial")
    if inertial is not None:
        xyz, R = _origin(inertial, f"link {name!r} <inertial>")
        mass_el = inertial.find("mass")
        link.mass = float(_floats(mass_el, "value", 1, "nan", f"link {name!r} <mass>")[0])
        i = inertial.find("inertia")
        if i is None:
            raise ValueError(f"URDF link {name!r}: <inertial> needs <inertia ixx= ... izz=>, got none")
        v = {k: float(_floats(i, k, 1, "0", f"link {name!r} <inertia>")[0])
             for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        J = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]], [v["ixz"], v["iyz"], v["izz"]]])
        link.com, link.inertia = xyz, R @ J @ R.T
    for visual in el.findall("visual"):
        xyz, R = _origin(visual, f"link {name!r} <visual>")
        geometry = visual.find("geometry")
        if geometry is not None and len(geometry):
            link.visuals.append((geometry[0], R, xyz))
    return link


def _read_joint(el) -> UrdfJoint:
    name, kind = el.get("name"), el.get("type")
    if kind not in JOINT_TYPES:
        raise ValueError(f"URDF joint {name!r}: `type` must be one of {list(JOINT_TYPES)}, got {kind!r}")
    parent, child = el.find("parent"), el.find("child")
    if parent is None or child is None:
        raise ValueError(f"URDF joint {name!r}: needs <parent link=...> and <child link=...>")
    xyz, R = _origin(el, f"joint {name!r}")
    axis = _floats(el.find("axis"), "xyz", 3, "1 0 0", f"joint {name!r} <axis>")
    if kind != "fixed" and not np.linalg.norm(axis) > 0:
        raise ValueError(f"URDF joint {name!r}: <axis xyz> must be nonzero, got {axis.tolist()}")
    limit = el.find("limit")
    limits = {} if limit is None else {k: float(v) for k, v in limit.attrib.items()}
    return UrdfJoint(name, kind, parent.get("link"), child.get("link"), xyz, R, axis, limits)


def _parse(path) -> tuple[dict, list, str, Path]:
    """(links by name, joints, root link name, the file's folder) of the URDF file ``path``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"URDF file {path} not found (working directory {Path.cwd()})")
    try:
        robot = ET.parse(path).getroot()
    except ET.ParseError as err:
        raise ValueError(f"URDF file {path} is not valid XML: {err}") from None
    if robot.tag != "robot":
        raise ValueError(f"URDF file {path}: the root element must be <robot>, got <{robot.tag}>")
    links = {el.get("name"): _read_link(el) for el in robot.findall("link")}
    joints = [_read_joint(el) for el in robot.findall("joint")]
    for j in joints:
        for role, link in (("parent", j.parent), ("child", j.child)):
            if link not in links:
                raise ValueError(f"URDF joint {j.name!r}: {role} link {link!r} is not a <link> of {path}")
    children = [j.child for j in joints]
    roots = [n for n in links if n not in children]
    if len(roots) != 1 or len(set(children)) != len(children):
        raise ValueError(f"URDF file {path}: the links must form one tree (one root, one parent each); roots "
                         f"{roots}, links with several parents {sorted({c for c in children if children.count(c) > 1})}")
    return links, joints, roots[0], path.parent


def _link_frames(joints, root: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """World (position, rotation) of every link frame at zero joint values: T_child = T_parent T_origin."""
    frames = {root: (np.zeros(3), np.eye(3))}
    pending = list(joints)
    while pending:                                   # a tree: every pass places at least one child
        placed = [j for j in pending if j.parent in frames]
        for j in placed:
            p, R = frames[j.parent]
            frames[j.child] = (p + R @ j.xyz, R @ j.R)
        pending = [j for j in pending if j.child not in frames]
    return frames


def read_urdf(path, gravity=(0.0, 0.0, -9.81), limits: dict | None = None):
    """A `flexmbs.System` of the robot in the URDF file ``path``, at its zero joint values.

    Parameters
    ----------
    path : str or Path
    gravity : array (3,), optional
        [m/s^2]; URDF's z is up, so the default is (0, 0, -9.81).
    limits : dict, optional
        Enforce the ``<limit lower upper>`` of every revolute and prismatic joint by a
        `JointLimit` stop with these keyword arguments (``stiffness`` required; ``restitution``,
        ``exponent``, ``transition_speed`` as `JointLimit` takes them), e.g.
        ``limits=dict(stiffness=1e4, restitution=0.5)``.  None (default): read, not enforced.
        A joint's lower/upper missing from its ``<limit>`` has no stop on that side.

    Returns
    -------
    System
        One `RigidBodyEP` per link with ``<inertial>`` (named as the link), one joint per URDF
        joint (named as it; `read_urdf_joints` gives them as read, with their limits).  A
        massless root link is the ground.

    Raises
    ------
    ValueError
        Naming the link or joint: a joint type other than revolute, continuous, prismatic or
        fixed, a missing or bad number, a link graph that is not a tree, a massless link that is
        not the root.
    """
    from ..bodies import RigidBodyEP
    from ..constraints import Fixed, JointLimit, Prismatic, Revolute
    from ..system import System
    if limits is not None and not isinstance(limits, dict):
        raise TypeError(f"`limits` must be None or a dict of JointLimit's keyword arguments (stiffness, "
                        f"restitution, exponent, transition_speed), got {type(limits).__name__} {limits!r}")
    extra = sorted(set(limits or ()) & {"lower", "upper", "joint", "name"})
    if extra:
        raise ValueError(f"`limits` gives {extra}: the stops' positions come from each joint's <limit> and the "
                         "joint and name from the URDF; give only stiffness, restitution, exponent, transition_speed")
    links, joints, root, _ = _parse(path)
    frames = _link_frames(joints, root)
    bodies = {}
    for name, link in links.items():
        if link.mass is None:
            if name != root:
                raise ValueError(f"URDF link {name!r} has no <inertial>: only the root link may be massless "
                                 "(it is the ground); give it a mass and inertia")
            continue
        p, R = frames[name]
        bodies[name] = RigidBodyEP(name, link.mass, link.inertia, centroid=link.com, position=p, orientation=R)
    kinds = {"revolute": Revolute, "continuous": Revolute, "prismatic": Prismatic, "fixed": Fixed}
    constraints, stops = [], []
    for j in joints:
        p, R = frames[j.child]                        # the joint frame is the child's link frame
        axis = R @ (j.axis / np.linalg.norm(j.axis)) if j.type != "fixed" else None
        options = {} if axis is None else {"axis": axis}
        joint = kinds[j.type](bodies.get(j.parent), bodies[j.child], at=p, name=j.name, **options)
        constraints.append(joint)
        bounds = {k: j.limits[k] for k in ("lower", "upper") if k in j.limits}
        if limits is not None and j.type in ("revolute", "prismatic") and bounds:
            stops.append(JointLimit(joint, **bounds, **limits, name=f"limit({j.name})"))
    return System(list(bodies.values()), constraints, gravity=gravity, forces=stops)


def read_urdf_joints(path) -> list[UrdfJoint]:
    """The joints of the URDF file ``path`` as read (type, links, origin, axis, limits)."""
    return _parse(path)[1]


def read_urdf_shapes(path) -> dict:
    """{link name: (points (n, 3), cells)} of the links' visual geometry in body coordinates
    (relative to the link frame's origin, the body's reference point), for
    `flexmbs.io.write_system_xdmf(..., shapes=...)`: ``<mesh filename scale>`` read with meshio
    (a ``package://NAME/`` prefix is taken relative to the URDF's folder) and ``<box size>``.
    Other geometry (cylinder, sphere) is drawn as the link's inertia box, with a warning."""
    import meshio
    links, _, _, folder = _parse(path)
    shapes = {}
    for name, link in links.items():
        points, cells = [], []
        for geometry, R, xyz in link.visuals:
            if geometry.tag == "mesh":
                filename = geometry.get("filename", "")
                file = folder / filename.split("://", 1)[-1].split("/", 1)[-1] if "://" in filename else folder / filename
                if not file.is_file():
                    raise FileNotFoundError(f"URDF link {name!r}: visual mesh {filename!r} not found (looked for "
                                            f"{file})")
                mesh = meshio.read(file)
                scale = _floats(geometry, "scale", 3, "1 1 1", f"link {name!r} <mesh>")
                local = [(c.type, c.data) for c in mesh.cells]
                pts = mesh.points[:, :3] * scale
            elif geometry.tag == "box":
                half = _floats(geometry, "size", 3, "nan nan nan", f"link {name!r} <box>") / 2
                pts = half * np.array([[x, y, z] for z in (-1, 1) for y in (-1, 1) for x in (-1, 1)], dtype=float)
                local = [("hexahedron", np.array([[0, 1, 3, 2, 4, 5, 7, 6]]))]
            else:
                warnings.warn(f"URDF link {name!r}: <{geometry.tag}> visuals are not read; the link is drawn as "
                              "its inertia box", stacklevel=2)
                continue
            offset = sum(len(p) for p in points)
            points.append(pts @ R.T + xyz)
            cells.extend((t, np.asarray(c) + offset) for t, c in local)
        if points:
            shapes[name] = (np.vstack(points), cells)
    return shapes
