"""Flexible body in the floating frame of reference (FFRF), built from a `flexmbs.Model`.

Coordinates q = (R, p, delta): the frame's origin R (3, global), its Euler parameters p (4;
A = A(p) = ``rotations.ep_to_matrix``, body -> global) and the elastic DOFs delta (the Model's
free DOFs, body-frame components).  v = q'.  A material point x is at

.. code:: text

    r = R + A(p) y,       y = x + N delta             (docs/flexible_bodies.md)

A(p) is the homogeneous quadratic Q(p, p) of ``rotations``; Q is bilinear and symmetric.
Differentiating the exact polynomial,

.. code:: text

    r'  = R' + V(p, y) p' + A N delta'  = L q',       V(p, y) = d(A y)/dp = ep_vector_jacobian(p, y)
    r'' = L q'' + b,      b = 2 A(p') y + 2 A' N delta',        A' = 2 Q(p, p')

(A(p') is ep_to_matrix evaluated at p').  L = dr/dq exactly, so with T = 1/2 int rho r'.r' dV
Lagrange's equations are int rho L^T r'' dV = Q (Appell's identity) and

.. code:: text

    M   = int rho L^T L dV,          Q_v = -int rho L^T b dV

Every block is a combination of the inertia invariants of ``assembly/invariants.py`` with
y = x + N delta, Y = int rho y y^T dV (``Model.moments``), s_y = s + m_O delta and the 3 x 3
matrices V_k = d(A y)/dp_k / y (column k of V, linear in y):

.. code:: text

    M_RR = mass I        M_Rp = V(p, s_y)              M_Rd = A m_O
    M_pp[k, l] = tr(V_k^T V_l Y)                        M_pd[k] = dsum(A^T V_k) + Sdot(A^T V_k, delta)
    M_dd = |p|^4 [m]     (A^T A = |p|^4 I; [m] on the manifold)
    Q_v,R = -(2 A(p') s_y + 2 A' m_O delta')
    Q_v,p[k] = -tr(V_k^T (2 A(p') Y + 2 A' Y_u^T)),   Y_u = int rho y (N delta')^T dV
    Q_v,d = -(dsum(C) + Sdot(C, delta) + Sdot(D, delta')),   C = 2 A^T A(p'), D = 2 A^T A'

with dsum(B) = sum_ab B_ab d[a, b] = int rho N^T B x dV and Sdot(B, v) = sum_ab B_ab S[a, b] v.
On the constraint manifold (p.p = 1, p.p' = 0) T is the kinetic energy.  There
V(p, y) = -2 A tilde(y) G + 2 A y p^T, so M_pp = 4 G^T J_y G + 4 (int rho y.y dV) p p^T: positive
definite, unlike the 4 G^T J G of `RigidBodyEP`.  Both give the same constrained motion: they
differ by terms along p, the gradient of the normalisation p.p - 1 = 0, which its multiplier
takes up.

Applied forces: gravity int rho L^T g dV = (mass g, V(p, s_y)^T g, m_O^T A^T g); the
Model's nodal loads (body-frame components: forces at node translations, moments at node
rotations) with their full virtual work on R, p and delta; the elastic force -[k] delta,
Rayleigh damping -C delta' and the geometric stiffening, chosen by ``stiffening``:

- "omega": -K_geo delta with the Model's K_geo (``Model._build_geometric_stiffness``: linear in
  A_f = tilde(eps) + tilde(omega)^2, in alpha = A^T (a_O - g) and in the load factors)
  evaluated with the body's own angular velocity omega = 2 G(p) p', without eps and without
  a_O (they are accelerations, unknown when the forces are evaluated): A_f = tilde(omega)^2,
  alpha = -A^T g.  It lacks the axial force of the frame's acceleration and of the joints.
- "axial-strain" (beam meshes): -dU_nl/d delta, the gradient of the strain energy of the
  element-mean moderate-rotation axial strain beyond 1/2 delta^T [k] delta
  (``bodies/axial_strain.py``): each element is stiffened by its own axial force
  EA eps_e, whatever loads it; conservative (U = 1/2 delta^T [k] delta + U_nl).

Reference conditions (``reference``): the elastic coordinates must not repeat the frame's
motion.  ``"supports"`` (default): the Model's supports (``fixed``) are the reference conditions
of the frame: a clamped node makes it the node's tangent frame, pinned ends a chord frame; they
must remove every rigid-body mode of the mesh (else ValueError).  ``"mean-axis"``: the Model is
free-free (no ``fixed``), delta holds every nodal DOF, and the body adds Buckens' linearised
mean-axis conditions B delta = 0, B = [m_O; g], as an internal constraint
(`flexmbs.constraints.mean_axis.MeanAxisConditions`): delta is [m]-orthogonal to the mesh's
rigid-body modes, and the body's centre of mass stays at the frame point s / mass.

Markers: ``Node(i)`` is mesh node i, r = R + A (X_i + u_i); a plain vector s is a point fixed
in the frame (not following the deformation).  Directions u are frame directions (A u): the
nodes' elastic rotations are small and do not turn a joint's axis.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..assembly.assembler import dense_array, element_dofs, is_sparse
from ..constraints.mean_axis import MeanAxisConditions
from ..model import DistributedLoad, Model, SurfaceLoad
from ..rotations import LastRotation, ep_E, ep_G, ep_to_matrix, ep_vector_jacobian, matrix_to_ep, as_rotation_matrix, skew
from ..validity import RangeCheck
from .axial_strain import AxialStrain
from .base import Body, mass_point_kinematics
from .rigid import EulerParameterNorm, frame_rigid_motion_generators
from ..lazy import LazyModule

sparse = LazyModule("scipy.sparse")

__all__ = ["FlexibleBody", "Node", "Interface", "REFERENCES"]

REFERENCES = ("supports", "mean-axis")          # the reference conditions a FlexibleBody offers


@dataclass(frozen=True)
class Node:
    """Marker at mesh node ``index`` of a `FlexibleBody` (it follows the deformation)."""

    index: int


@dataclass(frozen=True)
class Interface:
    """Marker at the weighted mean of several mesh nodes of a `FlexibleBody`, tied to them by an
    averaging (RBE3-like) interface: the bearing surface of a solid, say, as one joint point.

    .. code:: text

        y = sum_i w_i (X_i + u_i) = X_c + Phi_c delta,   Phi_c = sum_i w_i Phi_i,   sum_i w_i = 1

    A force F at the marker does the virtual work F . A Phi_c d(delta) = sum_i w_i F . A Phi_i
    d(delta): it is spread over the nodes by the weights, as an RBE3 element spreads it (its
    moment is not spread: a joint's directions are frame directions, see `FlexibleBody`).

    ``rigid=True``: a rigid (RBE2-like) interface.  The nodes are tied to their centroid X_c as
    one rigid body, u_i = u_c + theta x (X_i - X_c) (rotation DOFs of the nodes = theta), so the set
    carries moments as well as forces.  This is a property of the body's basis: the Model must be a
    `flexmbs.reduction.ReducedModel` built with the set in ``rigid_interfaces`` (`reduce`), whose
    every basis vector moves the set rigidly; the marker is then the centroid, y = X_c + u_c (the
    nodes' mean, exact for a rigid set).  A full (unreduced) Model is refused: its nodes would need
    the set's 3 (k - 2) linear constraints as internal constraints of the System, which flexmbs
    does not build; reduce it instead (no loss: the basis keeps the static response to the set's
    6 rigid motions exactly).  Joint directions stay frame directions (see `FlexibleBody`): a joint
    at this marker holds the centroid, and its moment acts on the frame, not on the set's elastic
    rotation (docs/flexible_bodies.md, "Limits").

    Parameters
    ----------
    nodes : str or sequence of int
        A node set of the mesh (e.g. a Gmsh physical surface) or node indices.
    weights : sequence of float, optional
        One per node, >= 0, normalised to sum 1; default equal weights (averaging interfaces only).
    rigid : bool
        True: a rigid (RBE2-like) interface, False (default): an averaging (RBE3-like) one.
    """

    nodes: object
    weights: tuple | None = None
    rigid: bool = False

    def __post_init__(self):
        if not isinstance(self.rigid, bool):
            raise TypeError(f"`rigid` must be True or False, got {self.rigid!r}")
        if self.rigid and self.weights is not None:
            raise ValueError("`weights` belong to an averaging interface; a rigid one (rigid=True) moves its "
                             "nodes as one rigid body and takes no weights")
        if not isinstance(self.nodes, str):
            object.__setattr__(self, "nodes", tuple(int(i) for i in np.atleast_1d(np.asarray(self.nodes))))
        if self.weights is not None:
            object.__setattr__(self, "weights", tuple(float(w) for w in np.atleast_1d(self.weights)))


class NodalLoadArrays(NamedTuple):
    """The Model's nodal loads of a `FlexibleBody` as arrays, one entry per (load, node): what
    `FlexibleBody.applied_forces` sums (and `flexmbs.compiled` packs for the kernel).

    ``kind`` (k,): 0 a force, 1 a moment; ``load`` (k,): the index i in ``model.loads`` of each
    entry (its time factor f_i(t), `flexmbs.model.Model.load_factors`; its column of ``model.Q``);
    ``vectors`` (k, 3): the body-frame value of each entry at f = 1; ``functions`` (k,): the
    entry's f (None: 1); ``X`` (k_f, 3) and ``Phi`` (k_f, 3, n_e): the node x_j and its translation
    interpolation Phi_j of each force entry (``kind == 0``, in order), so that y_j = X_j + Phi_j delta.
    """

    kind: np.ndarray
    X: np.ndarray
    Phi: np.ndarray
    vectors: np.ndarray
    functions: list
    load: np.ndarray


def _V_matrices(p) -> np.ndarray:
    """V_k = dA/dp_k (4, 3, 3), so that V_k y = d(A(p) y)/dp_k; linear in p: V = p @ _V_BASIS.

    From A = (e0^2 - e.e) I + 2 e e^T + 2 e0 tilde(e):  V_0 = 2 (e0 I + tilde(e)),
    V_i = 2 (-e_i I + u_i e^T + e u_i^T + e0 tilde(u_i)) with u_i the unit vectors.  Every entry
    is one term +-2 p_j (or zero), so the product with the basis gives the same numbers.
    """
    return (p @ _V_BASIS).reshape(4, 3, 3)


def _V_terms(p) -> np.ndarray:
    """V of the formula above, term by term (builds `_V_BASIS` once)."""
    e0, e = p[0], p[1:]
    V = np.zeros((4, 3, 3))
    V[0] = 2.0 * (e0 * _EYE + skew(e))
    V[1:] = 2.0 * (-e[:, None, None] * _EYE + _EYE[:, :, None] * e[None, None, :]
                   + e[None, :, None] * _EYE[:, None, :] + e0 * _SKEW_UNIT)
    return V


_EYE = np.eye(3)
_SKEW_UNIT = np.array([skew(u) for u in _EYE])
_V_BASIS = np.stack([_V_terms(u).reshape(36) for u in np.eye(4)])     # (4, 36): V(p) = p @ _V_BASIS


def _A_dot(V, pd) -> np.ndarray:
    """A' = sum_k p'_k V_k (V = _V_matrices(p))."""
    return np.tensordot(pd, V, axes=1)


class FlexibleBody(Body):
    """A `Model`'s elastic body on a floating frame: q = (R, p, delta), n_q = 7 + model.n_dofs.

    Parameters
    ----------
    model : flexmbs.Model
        Mesh, element, supports (the reference conditions with ``reference="supports"``), loads,
        damping, point masses and geometric stiffening; its frame motion and gravity are not
        used (gravity is the System's).
    name : str
    position : array (3,)
        Initial global position of the frame's origin [m].
    orientation : array (3, 3) or (4,), optional
        Initial rotation body -> global (matrix or Euler parameters); default identity.
    velocity, angular_velocity : array (3,)
        Initial global velocity of the origin and angular velocity of the frame.
    reference : {"supports", "mean-axis"}
        The reference conditions of the frame.  ``"supports"`` (default): the Model's supports
        (``fixed``), which must hold every rigid-body mode of the mesh: a clamped node gives the
        tangent frame, pinned ends the chord frame.  ``"mean-axis"``: the Model has no supports
        (free-free mesh, delta = all nodal DOFs) and the body adds the linearised mean-axis
        conditions m_O delta = 0, g delta = 0 as an internal constraint (`MeanAxisConditions`).
    stiffening : {None, "omega", "axial-strain", "modal-stress", "none"}
        Geometric stiffening (module docstring): "omega", the Model's geometric stiffness
        evaluated with the body's angular velocity and gravity (needs a Model built with
        stiffening); "axial-strain", the stiffening by each beam element's own axial strain
        (BeamEB2D/BeamEB3D meshes; the Model's K_geo, if any, is not used); "modal-stress", a
        reduced body's stiffening by its own linear stress, K_geo(sigma(delta)) delta (a
        ReducedModel of elements with a pre-stress); "none".  None (default): "omega" if the
        Model has a geometric stiffness, else "none".
    """

    dim = 3
    constant_mass = False

    def __init__(self, model: Model, name: str = "flexible", *, position=(0.0, 0.0, 0.0), orientation=None,
                 velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0), reference: str = "supports",
                 stiffening: str | None = None):
        if not isinstance(model, Model):
            raise TypeError(f"`model` must be a flexmbs.Model, got {type(model).__name__}")
        if not isinstance(name, str) or not name:
            raise ValueError(f"a body needs a nonempty string `name`, got {name!r}")
        self.name, self.model = name, model
        self.n_e = model.n_dofs
        self.n_q = 7 + self.n_e
        if not isinstance(reference, str) or reference not in REFERENCES:
            raise ValueError(f"body {name!r}: `reference` must be one of {', '.join(map(repr, REFERENCES))}, "
                             f"got {reference!r}")
        self.reference = reference
        n_rigid = self._check_reference_conditions()
        for i, load in enumerate(model.loads):
            if isinstance(load, (DistributedLoad, SurfaceLoad)):       # the rigid part of their work: not derived
                raise ValueError(f"body {name!r}: `model.loads[{i}]` is a {type(load).__name__}, which a FlexibleBody "
                                 "does not take yet; apply nodal loads or the System's gravity")
        self.position = self._vec3(position, "position")
        try:
            self.orientation = as_rotation_matrix(orientation)
        except ValueError as err:
            raise ValueError(f"body {name!r}: {err}") from None
        self.velocity = self._vec3(velocity, "velocity")
        self.omega0 = self._vec3(angular_velocity, "angular_velocity")
        self._M_dd = dense_array(model.M)
        self._K = model.K_op
        self._K_dd = dense_array(model.K)                               # [k] dense, for elastic_stiffness
        self._node_phi = model.node_translations()
        self._node_cache: dict = {}                                    # node -> dense Phi_i
        self._node_markers: dict = {}                                  # node -> (X_i, Phi_i)
        self._A = LastRotation()                                      # A(p) of the last p (markers)
        self._loads = self._nodal_loads()
        self.stiffening, self._axial = self._stiffening(stiffening)
        self._modal_G = model.modal_geometric_stiffness() if self.stiffening == "modal-stress" else None
        self._kin = None
        self._internal = [EulerParameterNorm(self)]
        if reference == "mean-axis":
            if model.basis is None:
                self._internal.append(MeanAxisConditions(self, n_rigid))
            else:
                self._check_modal_mean_axes()

    def _check_modal_mean_axes(self) -> None:
        """A reduced free-free body on mean axes: its basis must be M-orthogonal to the rigid-body
        modes (free-free elastic modes are: `flexmbs.reduction.reduce` removes the rigid ones), so
        that B Phi = [m_O; g] Phi = 0 and the mean-axis conditions hold for every modal q: the body
        needs no constraint for them.  ValueError if a column of Phi moves the centre of mass or
        turns the body (|B Phi| above 1e-8 of |B| |Phi|)."""
        md = self.model
        B = np.vstack([md.full.m_O, md.full.g])
        BPhi = np.vstack([md.m_O, md.g])
        scale = np.linalg.norm(B, axis=1)[:, None] * np.linalg.norm(md.basis, axis=0)[None, :]
        bad = np.abs(BPhi) > 1e-8 * np.maximum(scale, 1e-300)
        if np.any(bad):
            cols = np.flatnonzero(bad.any(axis=0)).tolist()
            raise ValueError(f"body {self.name!r}: reference='mean-axis' with a ReducedModel needs a basis free of "
                             f"rigid-body motion (B Phi = 0), but basis column(s) {cols} move the centre of mass or "
                             "turn the body; reduce the free-free Model with flexmbs.reduction.reduce (which "
                             "removes the rigid-body modes), or give reference='supports' with a supported Model")

    @classmethod
    def from_model(cls, model: Model, name: str = "flexible", **kwargs) -> "FlexibleBody":
        """The body of ``model`` placed at the model's frame state at t = 0 (velocities included)."""
        fs = model.frame(0.0)
        kw = dict(position=fs.r_O, orientation=fs.R, velocity=fs.v_O, angular_velocity=fs.R @ fs.omega)
        kw.update(kwargs)
        return cls(model, name, **kw)

    # -- set-up -------------------------------------------------------------------------------------
    def _vec3(self, x, what):
        a = np.asarray(x, dtype=float)
        if a.shape != (3,) or not np.all(np.isfinite(a)):
            raise ValueError(f"body {self.name!r}: `{what}` must be a finite 3-vector, got {x!r}")
        return a

    def rigid_modes(self) -> np.ndarray:
        """The mesh's rigid-body modes on the elastic coordinates, (n_e, n_modes): translations along
        the frame axes, then infinitesimal rotations about axes through the frame's origin
        (`Model.rigid_modes` on the free DOFs).  Not defined for a reduced body (modal
        coordinates): ValueError."""
        if self.model.basis is not None:
            raise ValueError(f"body {self.name!r}: its coordinates are modal (a ReducedModel); the rigid-body "
                             "modes are those of the full model: `body.model.full.rigid_modes()`")
        return self.model.rigid_modes()

    def _check_reference_conditions(self) -> int:
        """``supports``: the supports hold every rigid-body mode (tangent or chord frame);
        ``mean-axis``: the mesh has no supports.  Returns the number of rigid-body modes the supports
        leave free (`Model.free_rigid_modes`): all of the mesh's on mean axes, none with supports."""
        md = self.model
        floating = md.free_rigid_modes().shape[1]
        if self.reference == "mean-axis":
            el = md.element
            used = np.unique(element_dofs(md.cells, el.dofs_per_node))
            supported = np.intersect1d(used, md.fixed_dofs)
            if supported.size:
                nodes = np.unique(supported // el.dofs_per_node)
                raise ValueError(f"body {self.name!r}: reference='mean-axis' takes a free-free Model (no `fixed`), "
                                 f"but its supports hold {supported.size} DOFs at node(s) {nodes.tolist()}; build "
                                 "the Model without `fixed`, or use reference='supports'")
            return floating
        if floating:
            raise ValueError(f"body {self.name!r}: the model's supports (`fixed`) leave {floating} of the mesh's "
                             "rigid-body modes free; a flexible body needs reference "
                             "conditions that remove all of them (e.g. fixed=[('start', 'all')] for a tangent "
                             "frame, or pinned ends for a chord frame), or reference='mean-axis' with a "
                             "Model without supports")
        return 0

    def _stiffening(self, stiffening):
        """(mode, AxialStrain or None) from the ``stiffening`` argument."""
        has_kg = bool(self.model.geometric_stiffness_keys)
        if stiffening is None:
            return ("omega" if has_kg else "none"), None
        if stiffening == "axial-strain":
            if self.model.basis is not None:
                raise ValueError(f"body {self.name!r}: stiffening='axial-strain' evaluates each element's axial "
                                 "strain from its nodal DOFs, which a ReducedModel (modal coordinates) does not "
                                 "have; use stiffening='omega' (the projected geometric stiffness of a Model "
                                 "built with stiffening=True) or 'none'")
            return stiffening, AxialStrain(self.model, f"body {self.name!r}: stiffening='axial-strain'")
        if stiffening == "omega":
            if not has_kg:
                raise ValueError(f"body {self.name!r}: stiffening='omega' evaluates the Model's geometric "
                                 "stiffness, and this Model has none: build it with stiffening=True, or pass "
                                 "stiffening='axial-strain' (beams) or 'none'")
            return stiffening, None
        if stiffening == "modal-stress":
            if self.model.basis is None or not hasattr(self.model.element, "prestress"):
                raise ValueError(f"body {self.name!r}: stiffening='modal-stress' takes a ReducedModel "
                                 "(flexmbs.reduction.reduce) of elements with a pre-stress; a full beam Model takes "
                                 "'axial-strain', a full Model built with stiffening=True takes 'omega'")
            return stiffening, None
        if stiffening == "none":
            return stiffening, None
        raise ValueError(f"body {self.name!r}: `stiffening` must be None, 'omega', 'axial-strain', 'modal-stress' or "
                         f"'none', got {stiffening!r}")

    @property
    def nodal_loads(self) -> NodalLoadArrays | None:
        """The Model's nodal loads as `NodalLoadArrays` (one entry per load and node), None without loads."""
        return self._loads

    def _nodal_loads(self) -> NodalLoadArrays | None:
        """`nodal_loads`, built once: kind (0 force, 1 moment), X and Phi rows of the forces' nodes,
        body-frame vectors, time factors (None: 1), the index of each entry's load."""
        md = self.model
        names = md.element.dof_names
        kinds, nodes, vecs, fs, index = [], [], [], [], []
        for i, load in enumerate(md.loads):
            (j,) = md.dof_indices([load.dof])
            name = names[j]
            if name.startswith("theta"):
                kind, axis = 1, {"theta": 2, "theta_x": 0, "theta_y": 1, "theta_z": 2}[name]
            else:
                kind, axis = 0, "uvw".index(name) if name in ("u", "v", "w") else j
            if getattr(md.element, "axial_dofs_along_axis", False):    # Bar2: u along the bar's axis
                e = md.X[0, 1] - md.X[0, 0]
                vec = np.pad(e / np.linalg.norm(e), (0, 3 - len(e))) * load.value
            else:
                vec = np.eye(3)[axis] * load.value
            for node in md.mesh.nodes(load.nodes):
                kinds.append(kind)
                nodes.append(int(node))
                vecs.append(vec)
                fs.append(load.f)
                index.append(i)
        if not kinds:
            return None
        kinds, nodes = np.array(kinds), np.array(nodes)
        force_nodes = nodes[kinds == 0]
        X = np.pad(md.mesh.points[force_nodes], ((0, 0), (0, 3 - md.mesh.dim)))
        Phi = np.array([self.node_interpolation(i) for i in force_nodes]).reshape(len(force_nodes), 3, self.n_e)
        return NodalLoadArrays(kinds, X, Phi, np.array(vecs), fs, np.array(index))

    def node_interpolation(self, i: int) -> np.ndarray:
        """Phi_i (3, n): translation u_i = Phi_i delta of node i."""
        out = self._node_cache.get(i)
        if out is None:
            n_nodes = self.model.mesh.n_nodes
            if not (isinstance(i, (int, np.integer)) and 0 <= i < n_nodes):
                raise ValueError(f"body {self.name!r}: no node {i!r}; the mesh has nodes 0..{n_nodes - 1}")
            out = self._node_cache[int(i)] = dense_array(self._node_phi[3 * i:3 * i + 3])
        return out

    def _marker(self, s):
        """(y0, Phi) of a marker: node -> (X_i, Phi_i); frame point s -> (s, None)."""
        if isinstance(s, Node):
            cache = self._node_markers                                 # the mesh does not change
            out = cache.get(s.index)
            if out is None:
                X = self.model.mesh.points[self.node_index(s)]
                out = cache[int(s.index)] = (np.pad(X, (0, 3 - len(X))), self.node_interpolation(s.index))
            return out
        if isinstance(s, Interface):
            out = self._node_markers.get(s)
            if out is None:
                out = self._node_markers[s] = self._interface_marker(s)
            return out
        s = np.asarray(s, dtype=float)
        if s.shape != (3,):
            raise ValueError(f"body {self.name!r}: a marker is a Node(i), an Interface(nodes) or a 3-vector in the "
                             f"frame, got {s!r}")
        return s, None

    def _interface_marker(self, s: Interface):
        """(X_c, Phi_c) of an `Interface` (`Model.interface_translation`), errors naming the body; a rigid
        one only on a reduced Model whose basis ties that node set rigidly."""
        if s.rigid:
            md = self.model
            nodes = md.mesh.nodes(s.nodes if isinstance(s.nodes, str) else np.asarray(s.nodes, dtype=np.int64))
            if md.basis is None:
                raise ValueError(f"body {self.name!r}: Interface {s.nodes!r} is rigid, but the Model is a full one: "
                                 "flexmbs builds a rigid interface into a reduced basis only; use "
                                 f"reduce(model, n_modes, rigid_interfaces=[{s.nodes!r}]) (or an averaging Interface)")
            if frozenset(nodes.tolist()) not in getattr(md, "rigid_interfaces", ()):
                raise ValueError(f"body {self.name!r}: Interface {s.nodes!r} is rigid, but the reduced Model's basis "
                                 "does not tie that node set rigidly; reduce with rigid_interfaces="
                                 f"[{s.nodes!r}] (or use an averaging Interface)")
        try:
            return self.model.interface_translation(s.nodes, s.weights)
        except ValueError as err:
            raise ValueError(f"body {self.name!r}: Interface {s.nodes!r}: {err}") from None

    def node_index(self, s: Node) -> int:
        n_nodes = self.model.mesh.n_nodes
        if not (isinstance(s.index, (int, np.integer)) and 0 <= s.index < n_nodes):
            raise ValueError(f"body {self.name!r}: no node {s.index!r}; the mesh has nodes 0..{n_nodes - 1}")
        return int(s.index)

    # -- coordinates --------------------------------------------------------------------------------
    def split(self, q):
        return q[:3], q[3:7], q[7:]

    def initial_coordinates(self) -> np.ndarray:
        return np.concatenate([self.position, matrix_to_ep(self.orientation), np.zeros(self.n_e)])

    def initial_velocities(self) -> np.ndarray:
        p = matrix_to_ep(self.orientation)
        return np.concatenate([self.velocity, 0.5 * ep_E(p).T @ self.omega0, np.zeros(self.n_e)])

    def internal_constraints(self) -> list:
        return self._internal

    # -- inertia ------------------------------------------------------------------------------------
    @property
    def m_ff(self) -> np.ndarray:
        """The elastic block m_ff of the mass matrix in the body frame (the Model's M), dense,
        shape (n_e, n_e)."""
        return self._M_dd

    @property
    def k_ff(self) -> np.ndarray:
        """The linear elastic stiffness k_ff (the Model's K), dense, shape (n_e, n_e)."""
        return self._K_dd

    @property
    def axial_strain(self):
        """The `flexmbs.bodies.axial_strain.AxialStrain` of ``stiffening="axial-strain"`` (the
        nonlinear axial strain energy U_nl and its force and stiffness), else None."""
        return self._axial

    def inertia_tensors(self):
        """Constant tensors of the invariants, built once: (d, S_stack, J, s, m_O) with d (9, n),
        S_stack (9 n, n) with rows (a, b) = S[a, b] (dense or CSR, as the Model), so that
        S_stack @ delta gives all S[a, b] delta, J (3, 3), s (3,) and m_O (3, n) of the Model's
        invariants (n = n_e)."""
        out = self.__dict__.get("_tensors")
        if out is None:
            md = self.model
            n = self.n_e
            blocks = [md.S_op.get((a, b)) for a in range(3) for b in range(3)]
            if md.dense:
                S = np.zeros((9, n, n))
                for i, B in enumerate(blocks):
                    if B is not None:
                        S[i] = dense_array(B)
                S = S.reshape(9 * n, n)
            else:
                S = sparse.vstack([sparse.csr_array((n, n)) if B is None else sparse.csr_array(B) for B in blocks],
                                  format="csr")
            out = self._tensors = (np.ascontiguousarray(md.d.reshape(9, n)), S, md.inv.J, md.inv.s, md.m_O)
        return out

    def _kinematics(self, q):
        """Terms of M, Q_v and gravity at q, kept for the last q (mass matrix and forces ask for
        the same q): A, V (4, 3, 3), s_y, Y (3, 3) and dd (9, n), row (a, b) = d[a, b] + S[a, b] delta,
        so that dd[(b, a)] . beta = int rho y_a (N beta)_b dV and M_pd, Q_v,d are contractions with it."""
        key = q.tobytes()
        if self._kin is not None and self._kin[0] == key:
            return self._kin[1]
        d, S, J, s, m_O = self.inertia_tensors()
        p, delta = q[3:7], q[7:]
        SD = S @ delta                                              # (9 n,): S[a, b] delta
        dd = d + SD.reshape(9, -1)
        Dd = (d @ delta).reshape(3, 3)                              # d[a, b] . delta
        Y = J + Dd + Dd.T + (SD.reshape(9, -1) @ delta).reshape(3, 3)   # int rho y y^T (Model.moments)
        out = (ep_to_matrix(p), _V_matrices(p), s + m_O @ delta, Y, dd)
        self._kin = (key, out)
        return out

    def mass_matrix(self, q) -> np.ndarray:
        md = self.model
        p = q[3:7]
        A, V, s_y, Y, dd = self._kinematics(q)
        V9 = V.reshape(4, 9)
        n = self.n_q
        M = np.empty((n, n))
        M[:3, :3] = md.mass * _EYE
        M[:3, 3:7] = (V @ s_y).T                                      # V(p, s_y)
        M[:3, 7:] = A @ md.m_O
        M[3:7, 3:7] = V9 @ (V @ Y).reshape(4, 9).T                    # tr(V_k^T V_l Y), Y symmetric
        M[3:7, 7:] = (A.T @ V).reshape(4, 9) @ dd                     # dsum(A^T V_k) + Sdot(A^T V_k, delta)
        M[7:, 7:] = (p @ p) ** 2 * self._M_dd                       # A^T A = |p|^4 I
        M[3:, :3] = M[:3, 3:].T
        M[7:, 3:7] = M[3:7, 7:].T
        return M

    def quadratic_velocity(self, q, v) -> np.ndarray:
        """Q_v = -int rho L^T b dV (module docstring); v (n_q,) or k velocities (k, n_q) at one q."""
        v = np.asarray(v, dtype=float)
        V2 = v.reshape(-1, self.n_q)
        k = len(V2)
        pd, delta_d = V2[:, 3:7], V2[:, 7:]
        A, V, s_y, Y, dd = self._kinematics(q)
        d, S, _, _, m_O = self.inertia_tensors()
        V9 = V.reshape(4, 9)
        Ap, Ad = ep_to_matrix(pd), (pd @ V9).reshape(k, 3, 3)        # A(p'), A' = sum_k p'_k V_k
        Yu_T = (delta_d @ dd.T).reshape(k, 3, 3)                      # Y_u^T, Y_u = int rho y (N delta')^T
        out = np.empty((k, self.n_q))
        out[:, :3] = -2.0 * (Ap @ s_y + (Ad @ (delta_d @ m_O.T)[:, :, None])[:, :, 0])
        out[:, 3:7] = -2.0 * ((Ap @ Y + Ad @ Yu_T).reshape(k, 9) @ V9.T)     # tr(V_k^T inner)
        C, D = 2.0 * A.T @ Ap, 2.0 * A.T @ Ad
        SV = np.asarray(S @ delta_d.T).reshape(9, -1, k)             # S[a, b] delta'
        out[:, 7:] = -(C.reshape(k, 9) @ dd + np.einsum("kx,xnk->kn", D.reshape(k, 9), SV))
        return out.reshape(v.shape)

    def quadratic_velocity_jacobian(self, q, v) -> np.ndarray:
        """dQ_v/dv (n_q, n_q), differentiating the terms of `quadratic_velocity` (R' does not enter):

        .. code:: text

            d/dp'_k:  -2 (Vd_k s_y + V_k m_O delta'),  -2 V : (Vd_k Y + V_k Y_u^T),
                      -(2 A^T Vd_k : dd + 2 A^T V_k : S delta')          Vd_k = dA(p')/dp'_k
            d/ddelta': -2 A' m_O,  -2 (A'^T V_k) : dd,  -sum_ab D_ab S[a, b]    D = 2 A^T A'
        """
        pd, delta_d = v[3:7], v[7:]
        A, V, s_y, Y, dd = self._kinematics(q)
        d, S, _, _, m_O = self.inertia_tensors()
        n, ne = self.n_q, self.n_e
        V9 = V.reshape(4, 9)
        Vd = _V_matrices(pd)
        Ad = (pd @ V9).reshape(3, 3)
        Yu_T = (dd @ delta_d).reshape(3, 3)
        SV = (S @ delta_d).reshape(9, ne)
        out = np.zeros((n, n))
        out[:3, 3:7] = -2.0 * (Vd @ s_y + V @ (m_O @ delta_d)).T
        out[:3, 7:] = -2.0 * Ad @ m_O
        out[3:7, 3:7] = -2.0 * (V9 @ (Vd @ Y + V @ Yu_T).reshape(4, 9).T)
        out[3:7, 7:] = -2.0 * ((Ad.T @ V).reshape(4, 9) @ dd)
        out[7:, 3:7] = -2.0 * ((A.T @ Vd).reshape(4, 9) @ dd + (A.T @ V).reshape(4, 9) @ SV).T
        D = (2.0 * A.T @ Ad).reshape(1, 9)
        if is_sparse(S):                                           # sum_ab D_ab S[a, b], S stacked (9 n, n)
            out[7:, 7:] = -(sparse.kron(sparse.csr_array(D), sparse.eye_array(ne)) @ S).toarray()
        else:
            out[7:, 7:] = -(D @ S.reshape(9, ne * ne)).reshape(ne, ne)
        return out

    # -- forces -------------------------------------------------------------------------------------
    def body_angular_velocity(self, q, v) -> np.ndarray:
        """omega in body components, 2 G(p) p'."""
        return 2.0 * ep_G(q[3:7]) @ v[3:7]

    def geometric_stiffness_force(self, t, q, v, gravity) -> np.ndarray:
        """The stiffening force (enters as -force on delta): "omega": K_geo delta with
        A_f = tilde(omega)^2 (omega = 2 G p'), alpha = -A^T g and the load factors;
        "axial-strain": dU_nl/d delta (``AxialStrain.force``); "none": zero."""
        md = self.model
        if self._axial is not None:
            return self._axial.force(q[7:])
        if self._modal_G is not None:                 # K_geo(sigma(delta)) delta = (sum_i q_i G_i) q
            delta = q[7:]
            return np.tensordot(delta, self._modal_G, axes=1) @ delta
        out = np.zeros(self.n_e)
        if self.stiffening == "none":
            return out
        delta = q[7:]
        for c, Kg in zip(self._omega_coefficients(t, q, v, gravity), md.geometric_stiffness_operators):
            if c != 0.0:
                out += c * (Kg @ delta)
        return out

    def _omega_coefficients(self, t, q, v, gravity) -> np.ndarray:
        """Coefficients of the Model's unit geometric stiffnesses: A_f = tilde(omega)^2, alpha = -A^T g,
        the load factors (the step's own form at one state; `_omega_coefficient_history` gives the same at
        all rows of a block, tests/test_power_rows.py)."""
        md = self.model
        W = skew(self.body_angular_velocity(q, v))
        Af = W @ W
        g = np.zeros(3) if gravity is None else np.asarray(gravity, dtype=float)
        alpha = -ep_to_matrix(q[3:7]).T @ g
        f = md.load_factors(t) if md.loads else np.zeros(0)
        return np.concatenate([Af.ravel(), alpha, f])[self._omega_columns()]

    def _omega_columns(self) -> np.ndarray:
        """The column of each of the Model's unit geometric stiffnesses (its key ("A", a, b), ("alpha", c),
        ("load", j)) in the table [A_f (9, row-major), alpha (3), f (n_loads)] of `_omega_coefficients`."""
        return np.array([3 * key[1] + key[2] if key[0] == "A" else 9 + key[1] if key[0] == "alpha" else 12 + key[1]
                         for key in self.model.geometric_stiffness_keys], dtype=int)

    def _omega_coefficient_history(self, t, Q, V, gravity) -> np.ndarray:
        """The coefficients of `_omega_coefficients` (n_t, n_Kg) at the times t (n_t,) and rows of Q, V, all rows
        at once: A_f = tilde(omega)^2 = omega omega^T - |omega|^2 I with omega = 2 G(p) p' (body components),
        alpha = -A(p)^T g, and the loads' factors f(t) (`load_factor_history`)."""
        n_t = len(Q)
        omega = 2.0 * np.einsum("tij,tj->ti", ep_G(Q[:, 3:7]), V[:, 3:7])
        Af = np.einsum("ta,tb->tab", omega, omega) - np.einsum("t,ab->tab", np.einsum("ti,ti->t", omega, omega),
                                                                np.eye(3))
        g = np.zeros(3) if gravity is None else np.asarray(gravity, dtype=float)
        alpha = -np.einsum("tji,j->ti", ep_to_matrix(Q[:, 3:7]).reshape(n_t, 3, 3), g)
        f = self.load_factor_history(t) if self.model.loads else np.zeros((n_t, 0))
        return np.concatenate([Af.reshape(n_t, 9), alpha, f], axis=1)[:, self._omega_columns()]

    def load_factor_history(self, t) -> np.ndarray:
        """f (n_t, n_loads): the time factors of the Model's loads (1 for a load without ``f``) at the times t,
        each factor once per time unless it declares ``vectorized`` (`flexmbs.bodies.loads.values_of_time`; its
        errors name ``loads[i].f`` and t, as `Model.load_factors`)."""
        from .loads import values_of_time
        t = np.asarray(t, dtype=float).reshape(-1)
        return np.stack([np.ones(len(t)) if load.f is None else values_of_time(load.f, t, f"`loads[{i}].f`", ())
                         for i, load in enumerate(self.model.loads)], axis=1).reshape(len(t), len(self.model.loads))

    def stiffening_power(self, t, Q, V, gravity) -> np.ndarray:
        """P_stiffening = -delta' . f_s (n_t,) [W] at the times t (n_t,) and rows of Q, V (n_t, n_q), all rows
        at once, of the stiffening force f_s that enters the elastic equations as -f_s and has no potential:

        .. code:: text

            "omega":         f_s = K_geo delta = sum_i c_i K_geo,i delta,   c_i = A_f[a, b], alpha[c] or f_j(t)
                             (`_omega_coefficient_history`):  P = -sum_i c_i (delta' . K_geo,i delta)
            "modal-stress":  f_s = K_geo(sigma(delta)) delta = (sum_i delta_i G_i) delta:
                             P = -sum_imk delta'_m delta_i G_i[m, k] delta_k

        zero for "axial-strain" (conservative: its energy is in the strain energy) and "none".  The sum over
        i is over the Model's few unit geometric stiffnesses (those whose coefficient is nonzero at some row),
        each applied to all rows at once."""
        Q, V = np.asarray(Q, dtype=float), np.asarray(V, dtype=float)
        delta, delta_dot = Q[:, 7:], V[:, 7:]
        if self._modal_G is not None:
            force = np.einsum("ti,imk,tk->tm", delta, self._modal_G, delta)
            return -np.einsum("tm,tm->t", delta_dot, force)
        P = np.zeros(len(Q))
        if self.stiffening != "omega":
            return P
        C = self._omega_coefficient_history(t, Q, V, gravity)
        for i, Kg in enumerate(self.model.geometric_stiffness_operators):
            if np.any(C[:, i]):
                P -= C[:, i] * np.einsum("tn,tn->t", delta_dot, np.asarray(Kg @ delta.T).T)
        return P

    def applied_forces(self, t, q, gravity) -> np.ndarray:
        """Gravity and the Model's nodal loads (generalized, all coordinates)."""
        md = self.model
        delta = q[7:]
        out = np.zeros(self.n_q)
        if gravity is None and not self._loads:
            return out
        A, V, s_y = self._kinematics(q)[:3]
        if gravity is not None and np.any(gravity):
            g = np.asarray(gravity, dtype=float)
            out[:3] = md.mass * g
            out[3:7] = (V @ s_y) @ g
            out[7:] = md.m_O.T @ (A.T @ g)
        if self._loads:
            kind, nodes_X, nodes_Phi, vecs = self._loads[:4]
            f = md.load_factors(t)                                     # f_i(t), checked: an error names loads[i].f
            values = vecs * f[self._loads.load][:, None]               # each entry's, body components
            out[7:] += md.Q @ f                                        # elastic part: Q f(t) (Model.q_ext)
            F = values[kind == 0] @ A.T                                # nodal forces, global
            if len(F):                                                 # their rigid part
                y = nodes_X + nodes_Phi @ delta                        # (k, 3)
                out[:3] += F.sum(axis=0)
                out[3:7] += np.einsum("kab,jb,ja->k", V, y, F)
            T = values[kind == 1]
            if len(T):                                                 # nodal moments on the frame
                out[3:7] += 2.0 * ep_G(q[3:7]).T @ T.sum(axis=0)
        return out

    def forces(self, t, q, v, gravity) -> np.ndarray:
        md = self.model
        out = self.quadratic_velocity(q, v) + self.applied_forces(t, q, gravity)
        delta, delta_d = q[7:], v[7:]
        out[7:] -= self._K @ delta + md.damping_force(delta_d) + self.geometric_stiffness_force(t, q, v, gravity)
        return out

    # -- Gibbs-Appell and Hamilton terms (flexmbs.formulations.body_terms) ----------------------
    def _mass_points(self):
        """The body's mass points (`flexmbs.assembly.mass_points`), their sum of m_p Phi_p (3, n_e) and
        m_pts = sum_p m_p Phi_p^T Phi_p (n_e, n_e, dense), built at the first call."""
        pts = self.__dict__.get("_points")
        if pts is None:
            from ..assembly.mass_points import body_mass_points
            pts = body_mass_points(self.model, dense=False)
            m3 = np.repeat(pts.m, 3)
            Phi = sparse.csr_array(pts.Phi)
            picks = sparse.csr_array((m3, (np.arange(m3.size), np.tile([0, 1, 2], pts.n_points))), shape=(m3.size, 3))
            sum_m_Phi = np.asarray((Phi.T @ picks).toarray()).T                       # (3, n_e)
            m_pts = np.asarray((Phi.T @ (sparse.diags(m3) @ Phi)).toarray())
            pts = self._points = (pts, Phi, sum_m_Phi, m_pts)
        return pts

    def _point_motion(self, Q, V):
        """At the k states Q, V (k, n_q): the mass points' y_p = x_p + Phi_p delta and u_p' = Phi_p delta'
        (k, n_p, 3), A(p) and A' = sum_j p'_j V_j (k, 3, 3) and L_p's rotation block V(p, y_p) (k, n_p, 3, 4)."""
        pts, Phi, _, _ = self._mass_points()
        k, n_p = len(Q), pts.n_points
        P, Pd = Q[:, 3:7], V[:, 3:7]
        Y = pts.x + (Phi @ Q[:, 7:].T).T.reshape(k, n_p, 3)
        Ud = (Phi @ V[:, 7:].T).T.reshape(k, n_p, 3)
        A = ep_to_matrix(P).reshape(k, 3, 3)
        A_dot = np.einsum("kj,kjab->kab", Pd, (P @ _V_BASIS).reshape(k, 4, 3, 3))
        Vy = ep_vector_jacobian(P[:, None, :], Y)
        return Y, Ud, A, A_dot, Vy

    def _generalized(self, F):
        """sum_p Phi_p^T F_p of point vectors F (k, n_p, 3) -> (k, n_e)."""
        Phi = self._mass_points()[1]
        return np.asarray(Phi.T @ F.reshape(len(F), -1).T).T

    def gibbs_appell(self, Q, V) -> tuple[np.ndarray, np.ndarray]:
        """(M, g) of dS/dq'' = M q'' + g at the k states Q, V (k, n_q), from the mass points.

        Mass point p (mass m_p) is at r_p = R + A(p) y_p, y_p = x_p + Phi_p delta (module docstring);
        differentiating twice (A quadratic in p, V(p, y) = d(A y)/dp bilinear):

        .. code:: text

            r_p'' = L_p q'' + b_p,   L_p = [I, V(p, y_p), A Phi_p],   b_p = 2 A(p') y_p + 2 A' Phi_p delta'

        S = 1/2 sum_p m_p |r_p''|^2, so dS/dq'' = sum_p m_p L_p^T (L_p q'' + b_p):

        .. code:: text

            M = sum_p m_p L_p^T L_p     (M_dd = |p|^4 sum_p m_p Phi_p^T Phi_p, A^T A = |p|^4 I)
            g = sum_p m_p L_p^T b_p

        one sum over the points per block, the delta blocks by sparse products with Phi^T.
        """
        Q, V = np.atleast_2d(np.asarray(Q, dtype=float)), np.atleast_2d(np.asarray(V, dtype=float))
        pts, Phi, sum_m_Phi, m_pts = self._mass_points()
        m = pts.m
        k, n = len(Q), self.n_q
        Y, Ud, A, A_dot, Vy = self._point_motion(Q, V)
        b = 2.0 * (np.einsum("kab,kpb->kpa", ep_to_matrix(V[:, 3:7]).reshape(k, 3, 3), Y)
                   + np.einsum("kab,kpb->kpa", A_dot, Ud))
        AtVy = np.einsum("kba,kpbj->kpaj", A, Vy) * m[None, :, None, None]          # m_p A^T V(p, y_p)
        M = np.empty((k, n, n))
        M[:, :3, :3] = m.sum() * _EYE
        M[:, :3, 3:7] = np.einsum("p,kpaj->kaj", m, Vy)
        M[:, :3, 7:] = A @ sum_m_Phi
        M[:, 3:7, 3:7] = np.einsum("p,kpaj,kpal->kjl", m, Vy, Vy)
        M[:, 3:7, 7:] = self._generalized(AtVy.transpose(0, 3, 1, 2).reshape(4 * k, -1, 3)).reshape(k, 4, -1)
        M[:, 7:, 7:] = np.einsum("k,ij->kij", np.einsum("kj,kj->k", Q[:, 3:7], Q[:, 3:7]) ** 2, m_pts)
        M[:, 3:, :3] = M[:, :3, 3:].swapaxes(1, 2)
        M[:, 7:, 3:7] = M[:, 3:7, 7:].swapaxes(1, 2)
        g = np.empty((k, n))
        g[:, :3] = np.einsum("p,kpa->ka", m, b)
        g[:, 3:7] = np.einsum("p,kpaj,kpa->kj", m, Vy, b)
        g[:, 7:] = self._generalized(np.einsum("kba,kpb->kpa", A, b) * m[None, :, None])
        return M, g

    def active_forces(self, t, q, v, gravity) -> np.ndarray:
        """The generalized forces that are not inertia: `forces` without Q_v (gravity, nodal loads,
        -[k] delta, damping, stiffening)."""
        out = self.applied_forces(t, q, gravity)
        out[7:] -= self._K @ q[7:] + self.model.damping_force(v[7:]) + self.geometric_stiffness_force(t, q, v, gravity)
        return out

    def kinematics(self, Q):
        """The body's mass points (`flexmbs.assembly.mass_points`) at the k configurations Q (k, n_q), real
        or complex (Kane, Volterra): point p at r_p = R + A(p) y_p, y_p = x_p + Phi_p delta, moves with
        r_p' = L_p q', L_p = [I, V(p, y_p), A(p) Phi_p] (as in `gibbs_appell`)."""
        Q = np.atleast_2d(Q)
        pts, Phi = self._mass_points()[:2]
        k, n_p = len(Q), pts.n_points
        P = Q[:, 3:7]
        Y = pts.x + (Phi @ Q[:, 7:].T).T.reshape(k, n_p, 3)
        Phi_p = self.__dict__.get("_Phi_points")
        if Phi_p is None:
            Phi_p = self._Phi_points = Phi.toarray().reshape(n_p, 3, -1)
        B = np.empty((k, n_p, 3, self.n_q), dtype=Q.dtype)
        B[..., :3] = np.eye(3)
        B[..., 3:7] = ep_vector_jacobian(P[:, None, :], Y)
        B[..., 7:] = np.einsum("kab,pbe->kpae", ep_to_matrix(P).reshape(k, 3, 3), Phi_p)
        return mass_point_kinematics(pts.m, B)

    def kinetic_energy_gradient(self, Q, V) -> np.ndarray:
        """dT/dq at fixed q' (k, n_q) of T = 1/2 sum_p m_p |r_p'|^2, r_p' = L_p q', from the mass points:
        d(r_p')/dq = L_p' (r_p depends on q only), so dT/dq = sum_p m_p L_p'^T r_p' with
        L_p' = [0, V(p', y_p) + V(p, u_p'), A' Phi_p]."""
        Q, V = np.atleast_2d(np.asarray(Q, dtype=float)), np.atleast_2d(np.asarray(V, dtype=float))
        m = self._mass_points()[0].m
        Y, Ud, A, A_dot, Vy = self._point_motion(Q, V)
        P, Pd = Q[:, 3:7], V[:, 3:7]
        r_dot = V[:, None, :3] + np.einsum("kpaj,kj->kpa", Vy, Pd) + np.einsum("kab,kpb->kpa", A, Ud)
        Vy_dot = ep_vector_jacobian(Pd[:, None, :], Y) + ep_vector_jacobian(P[:, None, :], Ud)
        out = np.zeros((len(Q), self.n_q))
        out[:, 3:7] = np.einsum("p,kpaj,kpa->kj", m, Vy_dot, r_dot)
        out[:, 7:] = self._generalized(np.einsum("kba,kpb->kpa", A_dot, r_dot) * m[None, :, None])
        return out

    def energy(self, q, v, gravity) -> tuple[float, float]:
        """(T, -g . (mass R + A s_y)): `energies` at one state."""
        T, V = self.energies(np.asarray(q, dtype=float)[None], np.asarray(v, dtype=float)[None], gravity)
        return float(T[0]), float(V[0])

    def energies(self, Q, V, gravity) -> tuple[np.ndarray, np.ndarray]:
        """(T, V_g) at all rows of Q, V (n_t, n_q) at once.  On the constraint manifold (|p| = 1,
        p . p' = 0), with omega = 2 G(p) p' the frame's angular velocity in body components and
        r' = R' + A (omega x y + N delta'):

        .. code:: text

            T = 1/2 mass |R'|^2 + R' . A (omega x s_y + m_O delta') + 1/2 omega^T (tr(Y) I - Y) omega
                + omega . int rho y x (N delta') dV + 1/2 delta'^T [m] delta'

        (int rho |omega x y|^2 dV = omega^T (tr(Y) I - Y) omega; int rho y x (N delta') dV = eps_ijk Z_jk
        with Z_ab = int rho y_a (N delta')_b dV): v^T M v / 2 where |p| = 1 and p . p' = 0, and off the
        manifold (an index-3 solution's p . p' = O(h^2)) the energy of the motion r' with p' projected on
        it (v^T M v / 2 would add 2 (int rho y.y dV) (p . p')^2 through the p p^T part of M_pp)."""
        Q, V = np.atleast_2d(np.asarray(Q, dtype=float)), np.atleast_2d(np.asarray(V, dtype=float))
        d, S, J, s, m_O = self.inertia_tensors()
        n_t, n = len(Q), self.n_e
        p, delta, R_dot, delta_dot = Q[:, 3:7], Q[:, 7:], V[:, :3], V[:, 7:]
        A = ep_to_matrix(p).reshape(n_t, 3, 3)
        omega = 2.0 * np.einsum("tij,tj->ti", ep_G(p), V[:, 3:7])
        SD = np.asarray(S @ delta.T).T.reshape(n_t, 9, n)                     # S[a, b] delta per output
        Dd = (delta @ d.T).reshape(n_t, 3, 3)                                 # d[a, b] . delta
        Y = J + Dd + Dd.swapaxes(1, 2) + np.einsum("tkn,tn->tk", SD, delta).reshape(n_t, 3, 3)
        Z = (delta_dot @ d.T + np.einsum("tkn,tn->tk", SD, delta_dot)).reshape(n_t, 3, 3).swapaxes(1, 2)
        w = np.stack([Z[:, 1, 2] - Z[:, 2, 1], Z[:, 2, 0] - Z[:, 0, 2], Z[:, 0, 1] - Z[:, 1, 0]], axis=1)
        s_y = s + delta @ m_O.T
        trY = np.trace(Y, axis1=1, axis2=2)
        T = (0.5 * self.model.mass * np.einsum("ti,ti->t", R_dot, R_dot)
             + np.einsum("ti,tij,tj->t", R_dot, A, np.cross(omega, s_y) + delta_dot @ m_O.T)
             + 0.5 * (trY * np.einsum("ti,ti->t", omega, omega) - np.einsum("ti,tij,tj->t", omega, Y, omega))
             + np.einsum("ti,ti->t", omega, w)
             + 0.5 * np.einsum("ti,ij,tj->t", delta_dot, self._M_dd, delta_dot))
        if gravity is None:
            return T, np.zeros(n_t)
        r_C = self.model.mass * Q[:, :3] + np.einsum("tij,tj->ti", A, s_y)
        return T, -(r_C @ np.asarray(gravity, dtype=float))

    def powers(self, t, Q, V, gravity) -> dict[str, np.ndarray]:
        """`Body.powers` (the loads of ``loads``) plus the Model's nodal loads in ``loads``
        (Q_nodal . q', all coordinates, all rows at once: `nodal_load_powers`), ``damping``: the power dissipated by the Rayleigh damping,
        delta'^T C delta' >= 0 (all rows at once), and ``stiffening``: the power of the "omega"
        geometric stiffening force, -delta' . K_geo(omega, g, f) delta, which has no potential
        (the "axial-strain" stiffening is conservative: its energy is in the strain energy), and that of
        "modal-stress", -delta' . (sum_i delta_i G_i) delta: `stiffening_power`, all rows at once."""
        out = super().powers(t, Q, V, gravity)
        md = self.model
        if self._loads:                      # the nodal loads: applied_forces without gravity, all rows at once
            out["loads"] = out["loads"] + self.nodal_load_powers(t, Q, V)
        D = np.asarray(V, dtype=float)[:, 7:]
        out["damping"] = (np.einsum("tn,tn->t", D, np.asarray(md.C_damp @ D.T).T) if md.C_op is not None
                          else np.zeros(len(Q)))
        if self.stiffening in ("omega", "modal-stress"):
            out["stiffening"] = self.stiffening_power(t, Q, V, gravity)
        return out

    def nodal_load_powers(self, t, Q, V) -> np.ndarray:
        """P = q' . Q_nodal (n_t,) of the Model's nodal loads (`applied_forces` without gravity) at the
        times t and the rows of Q, V, all rows at once:

        .. code:: text

            P = sum_j f_j(t) (A v_j) . (R' + V(p, y_j) p')      forces at the nodes y_j = X_j + Phi_j delta
              + sum_j f_j(t) v_j . omega_b,  omega_b = 2 G(p) p'  moments (body components)
              + delta' . (Q f(t))                                 their elastic part

        with v_j the body-frame value of entry j (`nodal_loads`) and f(t) the loads' time factors
        (`flexmbs.bodies.loads.values_of_time`: each factor once per time unless it declares
        ``vectorized``; its errors name ``loads[i].f`` and t, as `Model.load_factors`)."""
        t = np.asarray(t, dtype=float).reshape(-1)
        Q, V = np.asarray(Q, dtype=float), np.asarray(V, dtype=float)
        kind, X, Phi, vecs = self._loads[:4]
        f = self.load_factor_history(t)                                                # (n_t, n_loads)
        values = vecs[None] * f[:, self._loads.load, None]                             # (n_t, k, 3), body
        P, pd, delta = Q[:, 3:7], V[:, 3:7], Q[:, 7:]
        out = np.einsum("tn,tn->t", V[:, 7:], np.asarray(self.model.Q @ f.T).T)       # delta' . Q f
        if len(X):
            y = X[None] + np.einsum("kan,tn->tka", Phi, delta)                          # (n_t, k_f, 3)
            F = np.einsum("tab,tkb->tka", ep_to_matrix(P), values[:, kind == 0])        # global
            rate = np.einsum("tkab,tb->tka", ep_vector_jacobian(P[:, None, :], y), pd)  # V(p, y_j) p'
            out += np.einsum("tka,ta->t", F, V[:, :3]) + np.einsum("tka,tka->t", F, rate)
        if np.any(kind == 1):
            omega_b = 2.0 * np.einsum("tij,tj->ti", ep_G(P), pd)
            out += np.einsum("tka,ta->t", values[:, kind == 1], omega_b)
        return out

    def strain_energies(self, Q) -> np.ndarray:
        """`strain_energy` at all rows of Q at once."""
        delta = np.atleast_2d(np.asarray(Q, dtype=float))[:, 7:]
        out = 0.5 * np.einsum("tn,tn->t", delta, np.asarray(self._K @ delta.T).T)
        return out if self._axial is None else out + self._axial.energy(delta)

    def range_check(self, t, q) -> RangeCheck:
        """The `flexmbs.validity.RangeCheck` of the outputs t (n_t,), q (n_t, n_q) of this body: its
        largest node rotation and displacement / size against the linear-strain model's range."""
        check = RangeCheck(self.model, f"body {self.name!r}")
        check.update(t, np.asarray(q)[:, 7:])
        return check

    def strain_energy(self, q) -> float:
        """1/2 delta^T [k] delta, plus U_nl with stiffening="axial-strain" (the "omega" stiffening
        has no potential): `strain_energies` at one state."""
        return float(self.strain_energies(np.asarray(q, dtype=float)[None])[0])

    def elastic_stiffness(self, t, q, v, gravity) -> np.ndarray:
        """d([k] delta + stiffening force)/d delta (n, n), dense: [k] + K_geo(omega, g) ("omega"),
        [k] + dU_nl^2/d delta^2 ("axial-strain"), [k] ("none")."""
        md = self.model
        K = self._K_dd
        if self._axial is not None:
            Kn = self._axial.stiffness(q[7:])
            return K + (Kn if isinstance(Kn, np.ndarray) else Kn.toarray())
        if self._modal_G is not None:                 # d/dq of (sum_i q_i G_i) q: sum_i q_i G_i + [G_n q]_m
            delta = q[7:]
            return K + np.tensordot(delta, self._modal_G, axes=1) + np.einsum("nmk,k->mn", self._modal_G, delta)
        K = K.copy()
        if self.stiffening == "omega":
            for c, Kg in zip(self._omega_coefficients(t, q, v, gravity), md.geometric_stiffness_matrices):
                if c != 0.0:
                    K += c * dense_array(Kg)
        return K

    # -- markers ------------------------------------------------------------------------------------
    def frame_marker(self, s):
        """(y0, columns, Phi) with point(q, s) = R + A(p) (y0 + Phi q[columns]) (columns: those
        of delta that move the marker; a frame point has none).  See `RigidBodyEP.frame_marker`."""
        y0, Phi = self._marker(s)
        if Phi is None:
            return y0, np.zeros(0, dtype=int), np.zeros((3, 0))
        nz = np.flatnonzero(np.any(Phi != 0.0, axis=0))
        return y0, 7 + nz, Phi[:, nz]

    def point(self, q, s) -> np.ndarray:
        y0, Phi = self._marker(s)
        y = y0 if Phi is None else y0 + Phi @ q[7:]
        return q[:3] + self._A(q[3:7]) @ y

    def point_jacobian(self, q, s) -> np.ndarray:
        y0, Phi = self._marker(s)
        y = y0 if Phi is None else y0 + Phi @ q[7:]
        J = np.zeros((3, self.n_q))
        J[:, :3] = np.eye(3)
        J[:, 3:7] = ep_vector_jacobian(q[3:7], y)
        if Phi is not None:
            J[:, 7:] = self._A(q[3:7]) @ Phi
        return J

    def point_bias(self, q, v, s) -> np.ndarray:
        """2 A(p') y + 2 A' Phi delta'."""
        y0, Phi = self._marker(s)
        p, pd = q[3:7], v[3:7]
        y = y0 if Phi is None else y0 + Phi @ q[7:]
        out = 2.0 * ep_to_matrix(pd) @ y
        if Phi is not None:
            out += 2.0 * _A_dot(_V_matrices(p), pd) @ (Phi @ v[7:])
        return out

    def vector(self, q, u) -> np.ndarray:
        return self._A(q[3:7]) @ np.asarray(u, dtype=float)

    def vector_jacobian(self, q, u) -> np.ndarray:
        J = np.zeros((3, self.n_q))
        J[:, 3:7] = ep_vector_jacobian(q[3:7], np.asarray(u, dtype=float))
        return J

    def vector_bias(self, q, v, u) -> np.ndarray:
        return 2.0 * ep_to_matrix(v[3:7]) @ np.asarray(u, dtype=float)

    def rotation(self, q) -> np.ndarray:
        return ep_to_matrix(q[3:7])

    def angular_velocity(self, q, v) -> np.ndarray:
        """omega = 2 E(p) p' (global)."""
        return 2.0 * ep_E(q[3:7]) @ v[3:7]

    def rigid_motion_generators(self, q, point) -> np.ndarray:
        """(n_q, 6): the frame (R, p) like a rigid body's, delta unchanged (it is measured in the frame;
        the mean-axis conditions too) (`frame_rigid_motion_generators`)."""
        return frame_rigid_motion_generators(q, point, self.n_q)

    def torque(self, q, T) -> np.ndarray:
        """A global torque on the frame: Q = (0, 2 E^T T, 0)."""
        out = np.zeros(self.n_q)
        out[3:7] = 2.0 * ep_E(q[3:7]).T @ np.asarray(T, dtype=float)
        return out
