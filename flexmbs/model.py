"""The `Model`: one elastic body on a prescribed moving frame, ready for the formulations.

Everything constant is assembled once here: the stiffness ``K``, the mass ``M``, the
inertia invariants (``S[a, b]``, ``d[a, b]``, ``m_O``, ``G_i``, ``g_i``), Rayleigh
damping, the load vectors and the reduction to the free DOFs.  The formulations
combine them at each time with the frame's omega(t), eps(t) and origin motion;
there is no quadrature and no assembly inside the time loop.
"""
from __future__ import annotations

import logging
from typing import Callable

import numpy as np

from .assembly import Assembler, assemble_invariants, element_dofs
from .assembly.assembler import dense_array, restrict, triplet_matrix
from .elements.base import Element
from .elements.plate import PlateMITC4
from .frozen import FrozenFields
from .mesh import Mesh
from .mesh.faces import FACES, match_faces
from .mesh.topology import coincident_nodes, describe_part, parts, unused_cells
from .motion import FrameMotion, Fixed
from .rotations import skew
from .user_functions import evaluate, non_finite
from .lazy import LazyModule

sparse = LazyModule("scipy.sparse")

__all__ = ["Model", "NodalLoad", "DistributedLoad", "SurfaceLoad", "rayleigh_coefficients"]

log = logging.getLogger(__name__)
STRESS_BATCH = 200_000      # elements per call of an element's stress in `Model.stress_fields`


class NodalLoad(FrozenFields):
    """A load ``value * f(t)`` on DOF ``dof`` of each node in ``nodes`` (body-frame components).
    Frozen (`flexmbs.frozen`).

    ``nodes`` is a set name, indices or a mask; ``dof`` a DOF name of the element
    (e.g. "u", "v", "theta") or a local index; ``f`` a callable of t (default 1).
    """

    def __init__(self, nodes: object, dof: object, value: float, f: Callable[[float], float] | None = None):
        self._set_fields(locals())


class DistributedLoad(FrozenFields):
    """A distributed load ``value * f(t)`` in body-frame components (3-vector).  Frozen (`flexmbs.frozen`).

    ``per`` says what ``value`` is per: "mass" [N/kg], "volume" [N/m^3] or "length" [N/m,
    line elements: beams and bars].  ``elements`` restricts it to an element set (name) or
    to element indices; default: the whole body.  Its consistent load vector is
    int N^T value dV (per volume) built from the element integrals int rho N dV.
    """

    def __init__(self, value: tuple, per: str = "length", elements: object = None,
                 f: Callable[[float], float] | None = None):
        self._set_fields(locals())


class SurfaceLoad(FrozenFields):
    """A traction or a pressure [Pa] on a named face set, times ``f(t)`` (default 1).  Frozen
    (`flexmbs.frozen`).

    ``faces`` is an element set of face cells (a Gmsh physical surface of triangles, quads
    or 6-node triangles on a solid; a physical curve of lines on a plane body), or a dict
    {face cell type: connectivity}.  Each face is matched to the body's cell it bounds and
    loaded through that cell's own face (its mid-edge nodes included), outward normal n:
    ``traction`` (3-vector, body-frame components, force per unit area) or ``pressure``
    (positive into the body: the load -p n per unit area).  Its consistent nodal loads are
    int N_a t dA (`flexmbs.surface`); on plane bodies dA = thickness ds.  On a plate
    (`flexmbs.elements.PlateMITC4`) the faces are its edges (line cells): a traction per unit area
    of the edge face (thickness times length; its z component a transverse shear force) or an
    in-plane pressure on the edge.  A pressure on the plate's own surface is a
    ``DistributedLoad((0, 0, -p / t), per="volume")``.
    """

    def __init__(self, faces: object, traction: tuple | None = None, pressure: float | None = None,
                 f: Callable[[float], float] | None = None):
        self._set_fields(locals())


def _finite(value, name: str) -> float:
    """``value`` as a finite float, else ValueError naming ``name``."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be a number [N or N m], got {value!r}") from None
    if not np.isfinite(out):
        raise ValueError(f"`{name}` must be a finite number, got {value!r}")
    return out


def gravity_vector(gravity) -> np.ndarray:
    """``gravity`` as a finite 3-vector [m/s^2] (global components; None: zero), else ValueError."""
    if gravity is None:
        return np.zeros(3)
    try:
        g = np.asarray(gravity, dtype=float)
    except (TypeError, ValueError):
        g = None
    if g is None or g.shape != (3,) or not np.all(np.isfinite(g)):
        raise ValueError(f"`gravity` must be a 3-vector (global components), got {gravity!r}")
    return g


def rayleigh_coefficients(zeta: float, omega_1: float, omega_2: float) -> tuple[float, float]:
    """(alpha, beta) of C = alpha M + beta K giving damping ratio ``zeta`` at omega_1 and omega_2.

    zeta(omega) = alpha / (2 omega) + beta omega / 2 (Rayleigh damping).
    """
    if not (np.isfinite(zeta) and zeta >= 0):
        raise ValueError(f"`zeta` is a damping ratio and must be >= 0, got {zeta!r}")
    if not (omega_2 > omega_1 > 0):
        raise ValueError(f"need zeta >= 0 and omega_2 > omega_1 > 0, got zeta={zeta}, "
                         f"omega_1={omega_1}, omega_2={omega_2}")
    alpha = 2.0 * zeta * omega_1 * omega_2 / (omega_1 + omega_2)
    beta = 2.0 * zeta / (omega_1 + omega_2)
    return alpha, beta


def as_operator(A, dense: bool):
    """A matrix (dense or sparse) as the operator a Model multiplies with: a dense array for small
    models (``dense``), else CSR (`ImportedModel` takes the same choice)."""
    return dense_array(A) if dense else sparse.csr_array(A)


class Model:
    """An elastic body discretised by one element type, on a prescribed frame motion.

    Parameters
    ----------
    mesh : Mesh
        Nodes in body-frame coordinates.
    element : Element
        Element type (with its material and section) for the cells ``element.cell_type``.
    motion : FrameMotion, optional
        The frame's prescribed motion; default `Fixed`.
    fixed : list of (nodes, dofs)
        Supports: nodes as set name / indices / mask, dofs a list of DOF names or "all".
    loads : list of NodalLoad
    gravity : array_like, shape (3,), optional
        Gravitational acceleration in global components [m/s^2].
    damping : (alpha, beta), optional
        Rayleigh damping C = alpha M + beta K acting on the elastic velocities.
    point_masses : list of (nodes, mass)
        Concentrated masses [kg] at nodes (set name / indices / mask), e.g. a slider or a tip
        mass; they move with the nodes' translations and enter every inertia term.
    stiffening : bool, optional
        Geometric (stress) stiffening K_geo(t) from the quasi-static axial forces of the frame's
        inertia loads (rotation, angular and origin acceleration, gravity) and of the nodal loads
        (see ``geometric_stiffness``).  Default: on for moving frames, off for a fixed frame.
    dense_below : int
        Models with fewer free DOFs are assembled into dense ndarrays and keep their matrices
        (``K``, ``M``, ``C_damp``, ``inv``, the geometric stiffnesses, `node_translations`) dense:
        faster for small bodies, and no scipy is imported for them (docs/design.md, "Dense
        small models").  Larger models are assembled as CSR arrays.
    prestress_solver : str
        How the stiffening's static problems K u = f are solved: "auto" (a factorization below
        `flexmbs.sparse_solve.DIRECT_BELOW` free DOFs or with CHOLMOD; above, conjugate gradients
        preconditioned by algebraic multigrid with pyamg, else by Jacobi), "direct", "amg-cg" or
        "jacobi-cg" (`flexmbs.sparse_solve.spd_solve`); a dense model (``dense_below``) solves "auto" and
        "direct" by numpy's Cholesky (`dense_spd_solve`).  ``prestress_info`` says what ran;
        ``static_displacements`` (n_dofs, k) keeps the solutions u, K^-1 of the frame's unit
        inertia loads (-d[a, b], -m_O[c]) and of the load columns, in that order (None without
        stiffening): the static modes of `flexmbs.reduction.reduce`.
    """

    basis = None        # a ReducedModel's Phi (its coordinates are modal: delta_full_free = Phi q)

    def __init__(self, mesh: Mesh, element: Element, *, motion: FrameMotion | None = None,
                 fixed=(), loads=(), gravity=None, damping=None, point_masses=(),
                 stiffening: bool | None = None,
                 dense_below: int = 400, prestress_solver: str = "auto"):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"`mesh` must be a flexmbs.Mesh, got {type(mesh).__name__}")
        if not isinstance(element, Element):
            raise TypeError(f"`element` must be a flexmbs element, got {type(element).__name__}")
        if element.cell_type not in mesh.cells:
            raise ValueError(f"`mesh` has no {element.cell_type!r} cells for {type(element).__name__}; "
                             f"it has {sorted(mesh.cells)}")
        left_out = unused_cells(mesh, element.cell_type)
        if left_out:
            others = ", ".join(f"{n} {t}" for t, n in left_out.items())
            raise ValueError(f"`mesh` has {others} cells besides its {len(mesh.cells[element.cell_type])} "
                             f"{element.cell_type} cells, and {type(element).__name__} takes {element.cell_type} "
                             f"cells only: the others would be left out of the body. Mesh it with "
                             f"{element.cell_type} cells only (Gmsh: one element type per physical volume or "
                             f"surface), or model each cell type as its own body")
        self.mesh, self.element = mesh, element
        self.motion = Fixed() if motion is None else motion
        if not isinstance(self.motion, FrameMotion):
            raise TypeError(f"`motion` must be a flexmbs.motion.FrameMotion, got {type(motion).__name__}")
        self.cells = mesh.cells[element.cell_type]
        self.X = mesh.points[self.cells]
        dpn = element.dofs_per_node
        self.n_full = mesh.n_nodes * dpn
        if getattr(element, "axial_dofs_along_axis", False):
            e = self.X[:, 1] - self.X[:, 0]
            e = e / np.linalg.norm(e, axis=1, keepdims=True)
            if np.any(np.abs(e @ e[0]) < 1 - 1e-9):
                raise ValueError(f"{type(element).__name__} has one axial DOF per node: all its "
                                 "elements must lie on one straight line")

        # -- the free DOFs, then the format of the matrices: dense below `dense_below` ------------
        used = np.zeros(self.n_full, bool)
        used[element_dofs(self.cells, dpn).ravel()] = True
        fixed_mask = ~used                                   # DOFs of nodes without cells
        for nodes, dofs in fixed:
            idx = mesh.nodes(nodes)
            for j in self.dof_indices(dofs):
                fixed_mask[idx * dpn + j] = True
        self._check_parts(fixed_mask, dpn)
        self.fixed_dofs = np.flatnonzero(fixed_mask)
        self.free = np.flatnonzero(~fixed_mask)
        self.n_dofs = len(self.free)
        if self.n_dofs == 0:
            raise ValueError("`fixed` removes every DOF: nothing is left to move")
        free = self.free
        self._fixed_mask = fixed_mask
        dense = self.n_dofs < dense_below                      # the one place the format is chosen
        self.dense = dense

        # -- constant arrays, assembled once ------------------------------------------------------
        asm = Assembler(self.cells, mesh.n_nodes, dpn, dense=dense)     # the DOF map and pattern, once
        K_full = asm.matrix_from(element.k, self.X)
        inv_full = assemble_invariants(element, self.X, self.cells, mesh.n_nodes, assembler=asm)
        # point masses as mass points (dofs, N, x, m), full DOFs; None without them
        self.point_mass_data = self._point_mass_data(point_masses) if point_masses else None
        if point_masses:
            inv_full = inv_full.add_point_masses(*self.point_mass_data)
        self.K = restrict(K_full, free)
        del K_full
        self.inv = inv_full.reduce(free)
        self.M = self.inv.M
        self.mass = inv_full.mass

        # -- damping, loads, gravity ------------------------------------------------------------
        self.damping = None if damping is None else tuple(float(c) for c in damping)
        if self.damping is not None and (len(self.damping) != 2 or min(self.damping) < 0):
            raise ValueError(f"`damping` must be (alpha, beta) >= 0, got {damping!r}")
        self.loads = list(loads)
        Q = np.zeros((self.n_full, len(self.loads)))
        self._load_body_force = [None] * len(self.loads)
        for i, load in enumerate(self.loads):
            if isinstance(load, DistributedLoad):
                Q[:, i], self._load_body_force[i] = self._distributed(load, i, asm)
                continue
            if isinstance(load, SurfaceLoad):
                Q[:, i] = self._surface(load, i)
                continue
            if not isinstance(load, NodalLoad):
                raise TypeError(f"`loads[{i}]` must be a NodalLoad, DistributedLoad or SurfaceLoad, got "
                                f"{type(load).__name__}")
            Q[:, i] = self._nodal(load, i)
        self.Q = Q[free]
        self._load_f = [ld.f for ld in self.loads]
        self.gravity = gravity_vector(gravity)

        # -- operators for the time loop (dense for small bodies) --------------------------------
        self.stiffening = (not isinstance(self.motion, Fixed)) if stiffening is None else bool(stiffening)
        self._Kg_keys, self._Kg, self._Kg_op = [], [], []
        self.prestress_info = None
        self.static_displacements = None          # K^-1 of the unit pre-stress cases, if solved
        if self.stiffening:
            self._build_geometric_stiffness(asm, explicit=stiffening is not None, solver=prestress_solver)
        self.M_op = as_operator(self.M, dense)
        self.K_op = as_operator(self.K, dense)
        self.C_op = None
        if self.damping is not None and any(self.damping):
            alpha, beta = self.damping
            self.C_damp = as_operator(alpha * self.M + beta * self.K, dense)
            self.C_op = self.C_damp
        else:
            self.C_damp = np.zeros((self.n_dofs, self.n_dofs)) if dense else sparse.csr_array((self.n_dofs,
                                                                                                self.n_dofs))
        self.S_op = {k: as_operator(v, dense) for k, v in self.inv.S.items()}
        self.G_op = [None if Gi is None else as_operator(Gi, dense) for Gi in self.inv.G]
        self.m_O = self.inv.m_O                  # (3, n)
        self.d = self.inv.d                      # (3, 3, n)
        self.g = self.inv.g                      # (3, n)
        self._cache: dict = {}
        self._frame_terms = None
        log.info("model: %d elements, %d free DOFs, mass %.6g kg, %s operators",
                 len(self.cells), self.n_dofs, self.mass, "dense" if dense else "sparse")

    def _nodal(self, load: NodalLoad, i: int) -> np.ndarray:
        """Load vector (n_full,) of a NodalLoad: ``value`` on DOF ``dof`` of each of its nodes."""
        dpn = self.element.dofs_per_node
        idx = self.mesh.nodes(load.nodes)
        (j,) = self.dof_indices([load.dof])
        q = np.zeros(self.n_full)
        q[idx * dpn + j] += _finite(load.value, f"loads[{i}].value")
        if np.any(self._fixed_mask[idx * dpn + j]):
            log.warning("load %d acts on a fixed DOF; that part is carried by the support", i)
        return q

    def _distributed(self, load: DistributedLoad, i: int, asm):
        """Consistent load vector of a distributed load and its body force per unit mass."""
        try:
            value = np.asarray(load.value, dtype=float)
        except (TypeError, ValueError):
            value = None
        if value is None or value.shape != (3,) or not np.all(np.isfinite(value)):
            raise ValueError(f"`loads[{i}].value` must be a finite 3-vector (body frame), got {load.value!r}")
        per = {"mass": 1.0, "volume": 1.0 / self.element.material.rho}
        if self.element.cell_type == "line":
            rho_A = self.element.material.rho * self.element.area
            per["length"] = 1.0 / rho_A
        if load.per not in per:
            raise ValueError(f"`loads[{i}].per` must be one of {sorted(per)} for {type(self.element).__name__}, "
                             f"got {load.per!r}")
        b = per[load.per] * value                                   # force per unit mass
        if load.elements is None:
            sel = np.arange(len(self.cells))
        elif isinstance(load.elements, str):
            sets = self.mesh.element_sets
            if load.elements not in sets or self.element.cell_type not in sets[load.elements]:
                raise ValueError(f"`loads[{i}].elements`: no {self.element.cell_type} element set "
                                 f"{load.elements!r}; the mesh has {sorted(sets)}")
            sel = sets[load.elements][self.element.cell_type]
        else:
            sel = np.asarray(load.elements, dtype=np.int64)
        m_O = self.element.inertia_integrals(self.X[sel]).m_O           # (n_sel, 3, n_e): int rho N dV
        local = np.einsum("a,ean->en", b, m_O)
        q = np.bincount(asm.element_dofs[sel].ravel(), weights=local.ravel(), minlength=self.n_full)
        return q, (lambda x, b=b: np.broadcast_to(b, x.shape)) if load.elements is None else None

    def _surface(self, load: SurfaceLoad, i: int) -> np.ndarray:
        """Consistent load vector (n_full,) of a traction or pressure on a face set."""
        from .surface import face_loads
        el, mesh = self.element, self.mesh
        name = f"loads[{i}]"
        if el.cell_type not in FACES or not hasattr(el, "stress"):
            raise ValueError(f"`{name}`: a SurfaceLoad needs solid, plane-stress or plate elements, not "
                             f"{type(el).__name__}; load beams and bars with NodalLoad or DistributedLoad")
        if isinstance(load.faces, str):
            sets = mesh.element_sets
            if load.faces not in sets:
                raise ValueError(f"`{name}.faces`: no element set {load.faces!r}; the mesh has "
                                 f"{sorted(sets) or 'no element sets'}")
            faces = {t: mesh.cells[t][idx] for t, idx in sets[load.faces].items() if len(idx)}
            label = f"`{name}.faces` (set {load.faces!r})"
        elif isinstance(load.faces, dict):
            faces, label = dict(load.faces), f"`{name}.faces`"
        else:
            raise TypeError(f"`{name}.faces` must be an element set name or {{cell type: connectivity}}, "
                            f"got {type(load.faces).__name__}")
        if el.cell_type in faces and isinstance(el, PlateMITC4):
            raise ValueError(f"{label} holds {el.cell_type} cells, the plate itself: a SurfaceLoad on a "
                             f"{type(el).__name__} acts on its edges (line cells); load its surface with "
                             "DistributedLoad((0, 0, -p / thickness), per='volume') for a pressure p")
        if el.cell_type in faces:
            raise ValueError(f"{label} holds {el.cell_type} cells, the body itself; give the set of its "
                             f"boundary faces ({FACES[el.cell_type][0]} cells)")
        if (load.traction is None) == (load.pressure is None):
            raise ValueError(f"`{name}`: give either `traction` (3-vector) or `pressure`, got traction="
                             f"{load.traction!r}, pressure={load.pressure!r}")
        traction = pressure = None
        if load.pressure is not None:
            pressure = _finite(load.pressure, f"{name}.pressure")
        else:
            try:
                traction = np.asarray(load.traction, dtype=float)
            except (TypeError, ValueError):
                traction = None
            if traction is None or traction.shape != (3,) or not np.all(np.isfinite(traction)):
                raise ValueError(f"`{name}.traction` must be a finite 3-vector [Pa] (body frame), "
                                 f"got {load.traction!r}")
        dpn = el.dofs_per_node
        if traction is not None and dpn == 2 and traction[2] != 0.0:
            raise ValueError(f"`{name}.traction` has a z component on a plane-stress body (x-y plane)")
        from .mesh import MeshError
        try:
            _, nodes = match_faces(mesh, el.cell_type, faces, name=label)
        except MeshError as err:
            raise ValueError(str(err)) from None
        forces = face_loads(mesh.points, FACES[el.cell_type][0], nodes, traction=traction, pressure=pressure,
                            thickness=getattr(el, "thickness", 1.0))              # (n_f, n_k, 3)
        n_tr = min(dpn, 3)                   # the translations: first DOFs of solids, plane bodies, plates
        dofs = nodes[:, :, None] * dpn + np.arange(n_tr)
        return np.bincount(dofs.ravel(), weights=forces[:, :, :n_tr].ravel(), minlength=self.n_full)

    def _check_parts(self, fixed_mask: np.ndarray, dpn: int) -> None:
        """Refuse a body that falls apart: duplicate nodes no cell joins, or a part without support."""
        n_parts, labels = parts(self.mesh.n_nodes, self.cells)
        if n_parts < 2:
            return
        pts = self.mesh.points
        pairs = coincident_nodes(pts, labels)
        if len(pairs):
            a, b = pairs[0]
            where = ", ".join(f"{c:.6g}" for c in pts[a])
            raise ValueError(
                f"the body falls apart into {n_parts} parts because of duplicate nodes: nodes {a} and {b} "
                f"are at the same position ({where}) but no cell joins them ({len(pairs)} such pair(s), "
                f"e.g. {pairs[:5].tolist()}). Merge coincident nodes in the mesher (Gmsh: "
                "Geometry.Tolerance and `Coherence;`, or Mesh.SaveAll=0 with one physical group per body) "
                "before reading the mesh")
        supported = np.zeros(n_parts, bool)
        fixed_nodes = np.flatnonzero(fixed_mask.reshape(-1, dpn).any(axis=1) & (labels >= 0))
        supported[labels[fixed_nodes]] = True
        if not supported.all():
            loose = np.flatnonzero(~supported)
            raise ValueError(
                f"the body has {n_parts} disconnected parts and {len(loose)} of them have no support: "
                + "; ".join(f"part {k + 1}: {describe_part(pts, labels, k)}" for k in loose[:3])
                + ". Every part needs its own supports; if the parts should be one body, the mesh is not "
                "connected (check the mesher's coherence of shared faces)")
        log.info("the body has %d disconnected parts, each supported", n_parts)

    def _point_mass_data(self, point_masses):
        """DOFs, displacement maps, positions and masses of the point masses."""
        el, dpn = self.element, self.element.dofs_per_node
        dofs, Ns, xs, ms = [], [], [], []
        for i, item in enumerate(point_masses):
            try:
                nodes, mass = item
            except (TypeError, ValueError):
                raise TypeError(f"`point_masses[{i}]` must be (nodes, mass), got {item!r}") from None
            if not (np.isfinite(mass) and mass > 0):
                raise ValueError(f"`point_masses[{i}]`: the mass must be positive, got {mass!r}")
            for node in self.mesh.nodes(nodes):
                where = np.argwhere(self.cells == node)
                if len(where) == 0:
                    raise ValueError(f"`point_masses[{i}]`: node {node} belongs to no {el.cell_type} cell")
                e, local = where[0]
                if el.cell_type == "line":                    # N at the node's end of the element
                    N_node = el.N(self.X[e:e + 1], np.array([-1.0, 1.0])[local:local + 1])[0, 0]
                    N_node = N_node[:, local * dpn:(local + 1) * dpn]
                else:                                         # Lagrange solids: translations are DOFs
                    N_node = np.eye(3, dpn)
                dofs.append(node * dpn + np.arange(dpn))
                Ns.append(N_node)
                xs.append(np.pad(self.mesh.points[node], (0, 3 - self.mesh.dim)))
                ms.append(float(mass))
        return np.array(dofs), np.array(Ns), np.array(xs), np.array(ms)

    # -- geometric stiffening ------------------------------------------------------------------------
    def _build_geometric_stiffness(self, asm, explicit: bool, solver: str = "auto"):
        """Unit load cases -> static axial forces -> geometric stiffness matrices, once.

        The quasi-static pre-stress is linear in the frame's acceleration operator
        A = tilde(eps) + tilde(omega)^2 (9 entries), in alpha = R^T (a_O - g) (3 entries) and in
        the load factors f_i(t); so is K_geo.  For each unit case the inertia load (-d[a, b],
        -m_O[c]) or the load column Q[:, i] is applied to the supported body, the static
        displacement K u = f gives the pre-stress (``element.prestress``: the axial force of
        beams, the stress at the stiffness points of solids), and its geometric stiffness is kept.
        K u = f is solved by `flexmbs.sparse_solve.spd_solve` (``solver``): large bodies without
        CHOLMOD by conjugate gradients, so that no factor of K is ever held.
        """
        numpy_solve = self.dense and solver in ("auto", "direct")      # a dense model's K: numpy's Cholesky
        if not numpy_solve:
            from .sparse_solve import SOLVE_BACKENDS
            if solver not in SOLVE_BACKENDS:
                raise ValueError(f"`prestress_solver` must be one of {list(SOLVE_BACKENDS)}, got {solver!r}")
        el = self.element
        if not hasattr(el, "prestress"):
            if explicit:
                raise ValueError(f"{type(el).__name__} has no geometric stiffening (no prestress); "
                                 "pass stiffening=False")
            if self.motion.is_rotating:
                log.warning("%s has no geometric stiffening: the model neglects it", type(el).__name__)
            self.stiffening = False
            return
        floating = self.free_rigid_modes().shape[1]
        if floating:
            raise ValueError(f"geometric stiffening needs a supported body: {floating} rigid-body "
                             "motion(s) of the body are not held by `fixed`; fix them or pass "
                             "stiffening=False")
        cases = []
        for a in range(3):
            for b in range(3):
                if np.any(self.inv.d[a, b]):
                    E = np.zeros((3, 3))
                    E[a, b] = 1.0
                    cases.append((("A", a, b), -self.inv.d[a, b], lambda x, E=E: -(x @ E.T)))
        for c in range(3):
            if np.any(self.inv.m_O[c]):
                e = np.eye(3)[c]
                cases.append((("alpha", c), -self.inv.m_O[c], lambda x, e=e: -np.broadcast_to(e, x.shape)))
        for i in range(self.Q.shape[1]):
            cases.append((("load", i), self.Q[:, i], self._load_body_force[i]))
        if not cases:
            self.stiffening = False
            return
        F = np.column_stack([f for _, f, _ in cases])
        U, self.prestress_info = (dense_spd_solve(self.K, F) if numpy_solve else
                                  self._sparse_prestress_solve(F, solver))
        log.info("pre-stress: %d unit cases solved by %s", len(cases), self.prestress_info)
        self.static_displacements = U                     # kept (n x 12 or so): reduce's static modes
        # backward error of the solve: small for any conditioning of a supported body (the plain
        # residual |K u - f| / |f| grows with the condition number, ~n^2 for a bar of n elements)
        K_norm = abs(self.K).sum(axis=1).max()
        residual = self.K @ U - F
        scale = K_norm * np.abs(U).max(axis=0) + np.abs(F).max(axis=0) + 1e-300
        if not np.all(np.isfinite(U)) or np.any(np.abs(residual).max(axis=0) > 1e-8 * scale):
            raise ValueError("geometric stiffening needs a supported body (the static problem for the "
                             "axial forces has no unique solution); fix its rigid-body motions with "
                             "`fixed` or pass stiffening=False")
        kept = []
        for j, (key, _, body_force) in enumerate(cases):
            Kg = self.stress_stiffness(U[:, j], body_force, asm)
            kept.append((key, Kg, abs(Kg).max() if Kg.size else 0.0))      # sparse: size = nnz
        # unit cases whose pre-stress is round-off of the others' are dropped (relative to the
        # largest case: an absolute test against K fails for fine meshes, whose K grows ~ 1/h^3)
        largest = max(size for _, _, size in kept)
        for key, Kg, size in kept:
            if size > 1e-12 * largest:
                self._Kg_keys.append(key)
                self._Kg.append(Kg)
        self._Kg_op = [as_operator(Kg, self.dense) for Kg in self._Kg]
        if not self._Kg:
            self.stiffening = False

    def _sparse_prestress_solve(self, F: np.ndarray, solver: str) -> tuple[np.ndarray, str]:
        """(U, info): K U = F by `flexmbs.sparse_solve.spd_solve` (backend ``solver``), its failures
        as ValueErrors that say what to change."""
        from .sparse_solve import IterativeSolveError, SPDFactorizationError, spd_solve
        try:                                              # all unit cases with one solver set-up
            return spd_solve(self.K, F, backend=solver, near_null=self.rigid_modes())
        except SPDFactorizationError as exc:
            raise ValueError("geometric stiffening needs a supported body (the stiffness is singular: "
                             f"{exc}); fix its rigid-body motions with `fixed` or pass stiffening=False")
        except IterativeSolveError as exc:
            raise ValueError(f"geometric stiffening: the static problem K u = f for the pre-stress was not "
                             f"solved: {exc}") from None

    def stress_stiffness(self, delta, body_force=None, asm=None):
        """K_geo(sigma(delta)) (n_dofs, n_dofs) on the free DOFs (dense for a dense model, else CSR): the geometric (stress) stiffness of the
        pre-stress of the displacement delta (``element.prestress``: the axial force of beams, the
        linear stress at the stiffness points of solids), assembled (``element.k_geo``; Lagrange
        solids: k_geo_scalar (x) I_d).  ``body_force`` is the beams' distributed axial load of that
        case (`_build_geometric_stiffness`); ``asm`` an `Assembler` of the mesh (default: a new one)."""
        el = self.element
        if not hasattr(el, "prestress"):
            raise ValueError(f"{type(el).__name__} has no geometric stiffness (no prestress)")
        if asm is None:
            asm = Assembler(self.cells, self.mesh.n_nodes, el.dofs_per_node, dense=self.dense)
        u_full = self.expand(np.asarray(delta, dtype=float))
        if hasattr(el, "k_geo_scalar"):                   # Lagrange solids: k_geo = s (x) I_d
            data = np.zeros(asm.nnz_blocks)
            for s0 in range(0, len(self.X), asm.chunk):
                sl = slice(s0, s0 + asm.chunk)
                P = el.prestress(self.X[sl], u_full[asm.element_dofs[sl]], body_force)
                data += asm.scalar(el.k_geo_scalar(self.X[sl], P), s0)
            Kg_full = asm.diagonal_place(data)
        else:
            P = el.prestress(self.X, u_full[asm.element_dofs], body_force)
            Kg_full = asm.matrix(el.k_geo(self.X, P))
        Kg = restrict(Kg_full, self.free)
        if not self.dense:
            Kg.eliminate_zeros()
        return Kg

    def rigid_modes(self, full: bool = False, chunk: int = 50_000) -> np.ndarray:
        """R (n_dofs, k), or (n_full, k) with ``full``: the element's rigid-body modes
        (translations, rotations about the frame's axes) at the DOFs, e.g. the near null space of
        K for algebraic multigrid.  Built ``chunk`` elements at a time."""
        edofs = element_dofs(self.cells, self.element.dofs_per_node)
        R = None
        for s0 in range(0, len(self.X), chunk):
            sl = slice(s0, s0 + chunk)
            modes = self.element.rigid_modes(self.X[sl])          # (n_chunk, n_e, k)
            if R is None:
                R = np.zeros((self.n_full, modes.shape[2]))
            R[edofs[sl]] = modes
        return R if full else R[self.free]

    def free_rigid_modes(self) -> np.ndarray:
        """(n_free, m): the rigid-body motions of the body that its supports leave free, on the free
        DOFs (m = 0 for a supported body, the mesh's number of rigid-body modes for a free-free
        one): R[free] N with N the null space of R[fixed] (the supports' view of the rigid modes,
        `rigid_modes`).  A structural test, independent of the conditioning of K."""
        R = self.rigid_modes(full=True)
        R = R / (np.abs(R).max(axis=0, keepdims=True) + 1e-300)
        fixed = R[np.flatnonzero(self._fixed_mask)]
        if fixed.shape[0] == 0:
            N = np.eye(R.shape[1])
        else:
            _, sv, Vt = np.linalg.svd(fixed, full_matrices=True)
            rank = int(np.sum(sv > 1e-10 * max(sv.max(), 1e-300)))
            N = Vt[rank:].T
        out = R[self.free] @ N
        if out.shape[1]:                                            # independent columns only
            _, sv, Vt = np.linalg.svd(out, full_matrices=False)
            out = out @ Vt[sv > 1e-10 * max(sv.max(), 1e-300)].T
        return out

    def geometric_coefficients(self, t: float) -> np.ndarray:
        """Coefficients of the unit geometric stiffnesses at t: A[a, b], alpha[c], f_i(t)."""
        if not self._Kg:
            return np.zeros(0)
        last = self._cache.get("geo_t")
        if last is not None and last[0] == t:
            return last[1]
        fs = self.frame(t)
        W, E = skew(fs.omega), skew(fs.eps)
        A = E + W @ W
        alpha = fs.R.T @ (fs.a_O - self.gravity)
        f = self.load_factors(t) if self._load_f else np.zeros(0)
        out = np.empty(len(self._Kg_keys))
        for i, key in enumerate(self._Kg_keys):
            out[i] = A[key[1], key[2]] if key[0] == "A" else alpha[key[1]] if key[0] == "alpha" else f[key[1]]
        self._cache["geo_t"] = (t, out)
        return out

    def geometric_stiffness(self, t: float):
        """K_geo(t) = sum_i c_i(t) K_geo,i on the free DOFs (zero without stiffening; dense for a
        dense model, else CSR)."""
        return _sum_ops([(c, Kg) for c, Kg in zip(self.geometric_coefficients(t), self._Kg) if c != 0.0],
                        self.n_dofs, self.dense)

    def K_total(self, t: float):
        """[k] + K_geo(t) (dense for a dense model, else CSR)."""
        return self.K if not self._Kg else as_operator(self.K + self.geometric_stiffness(t), self.dense)

    def K_dot(self, t: float, delta: np.ndarray) -> np.ndarray:
        """([k] + K_geo(t)) delta, from the precomputed matrices."""
        out = self.K_op @ delta
        if self._Kg:
            c = self.geometric_coefficients(t)
            op = self._combo("Kg", c, lambda: _sum_ops([(ci, K) for ci, K in zip(c, self._Kg_op) if ci != 0.0],
                                                       self.n_dofs, self.dense))
            if op is not None:
                out = out + op @ delta
            else:
                for ci, Kg in zip(c, self._Kg_op):
                    if ci != 0.0:
                        out += ci * (Kg @ delta)
        return out

    # -- the time-dependent matrices, for implicit integrators and modal analysis --------------------
    def G_matrix(self, w) -> np.ndarray | sparse.csr_array:
        """int rho N^T tilde(w) N dV: dense for small models, CSR otherwise."""
        w = np.asarray(w, dtype=float)
        if not self.dense:
            return self.inv.G_of(w)
        return self._combo("Gm", w, lambda: _sum_ops([(wi, Gi) for wi, Gi in zip(w, self.G_op)
                                                      if Gi is not None and wi != 0.0], self.n_dofs, True))

    def frame_stiffness(self, t: float, eps: bool = True):
        """[k] + K_geo(t) + [k(omega)] (+ [k(eps)]) at t: dense for small models, CSR otherwise."""
        fs = self.frame(t)
        if not self.dense:
            K = self.K_total(t) + self.inv.k_omega(fs.omega)
            return sparse.csr_array(K + self.inv.k_eps(fs.eps) if eps else K)
        W = skew(fs.omega)
        A = W @ W + (skew(fs.eps) if eps else 0.0)          # sum_ab A_ab S_ab = k(omega) + k(eps)
        c = self.geometric_coefficients(t)
        coeffs = np.concatenate([A.ravel(), c])
        terms = [(1.0, self.K_op)] + [(A[a, b], S) for (a, b), S in self.S_op.items() if A[a, b] != 0.0]
        terms += [(ci, Kg) for ci, Kg in zip(c, self._Kg_op) if ci != 0.0]
        return self._combo("Kf", coeffs, lambda: _sum_ops(terms, self.n_dofs, True))

    def frame_damping(self, t: float):
        """C + [c(omega)] = C + 2 G(omega) at t: dense for small models, CSR otherwise."""
        w = self.frame(t).omega
        if not self.dense:
            return sparse.csr_array(self.C_damp + self.inv.c(w))
        C = 0.0 if self.C_op is None else self.C_op
        return C + 2.0 * self.G_matrix(w)

    def frame_terms(self) -> tuple[list, np.ndarray]:
        """(mats, skew): the constant matrices A_k whose combinations are K_eff(t) and C_eff(t).

        .. code:: text

            K_eff(t) = [k] + K_geo(t) + [k(omega)] + [k(eps)] = sum_k a_k(t) A_k
            C_eff(t) = C + 2 G(omega)                           = sum_k b_k(t) A_k

        with A = (M, [k], C, S[a, b] ..., G_i ..., K_geo,j ...) and the coefficients of
        ``frame_coefficients``: [k(omega)] = sum_ab omega_a omega_b S[a, b] - |omega|^2 M,
        [k(eps)] = sum_i eps_i G_i, G(omega) = sum_i omega_i G_i, K_geo = sum_j c_j(t) K_geo,j
        (docs/theory.md).  ``skew[k]`` is True for the skew-symmetric G_i: the other terms
        combine to a symmetric matrix for any frame motion.  M comes first.
        """
        if getattr(self, "_frame_terms", None) is None:
            mats = [self.M, self.K, self.C_damp]
            skew = [False, False, False]
            self._S_keys = list(self.inv.S)
            mats += [self.inv.S[k] for k in self._S_keys]
            skew += [False] * len(self._S_keys)
            self._G_index = [i for i, Gi in enumerate(self.inv.G) if Gi is not None]
            mats += [self.inv.G[i] for i in self._G_index]
            skew += [True] * len(self._G_index)
            mats += list(self._Kg)
            skew += [False] * len(self._Kg)
            self._frame_terms = (mats, np.array(skew))
        return self._frame_terms

    def frame_coefficients(self, t: float, eps: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(a, b): K_eff(t) = sum_k a_k A_k and C_eff(t) = sum_k b_k A_k over ``frame_terms``.

        ``eps=False``: a without the terms of [k(eps)] (as ``frame_stiffness(t, eps=False)``:
        the stiffness of Hamilton's equations, whose momentum holds G(omega) delta).
        """
        mats, _ = self.frame_terms()
        fs = self.frame(t)
        w, e = np.asarray(fs.omega, float), np.asarray(fs.eps, float)
        a, b = np.zeros(len(mats)), np.zeros(len(mats))
        a[0] = -float(w @ w)
        a[1] = 1.0
        b[2] = 1.0
        k = 3
        for (i, j) in self._S_keys:
            a[k] = w[i] * w[j]
            k += 1
        for i in self._G_index:
            a[k], b[k] = (e[i] if eps else 0.0), 2.0 * w[i]
            k += 1
        if self._Kg:
            a[k:] = self.geometric_coefficients(t)
        return a, b

    # -- helpers -------------------------------------------------------------------------------------
    def dof_indices(self, dofs) -> list[int]:
        """Indices within a node (0 .. dofs_per_node - 1) of ``dofs``: a DOF name of the element
        (e.g. "u", "theta"), an index, a list of them, or "all"."""
        names = self.element.dof_names
        if isinstance(dofs, str) and dofs == "all":
            return list(range(len(names)))
        out = []
        for dof in ([dofs] if isinstance(dofs, (str, int, np.integer)) else dofs):
            if isinstance(dof, str):
                if dof not in names:
                    raise ValueError(f"unknown DOF {dof!r} for {type(self.element).__name__}; "
                                     f"valid: {list(names)} or 'all'")
                out.append(names.index(dof))
            elif 0 <= int(dof) < len(names):
                out.append(int(dof))
            else:
                raise ValueError(f"DOF index {dof!r} out of range 0..{len(names) - 1}")
        return out

    def dof(self, node: int, name: str) -> int:
        """Index among the free DOFs of DOF ``name`` of ``node`` (ValueError if fixed)."""
        (j,) = self.dof_indices([name])
        full = node * self.element.dofs_per_node + j
        pos = np.searchsorted(self.free, full)
        if pos >= len(self.free) or self.free[pos] != full:
            raise ValueError(f"DOF {name!r} of node {node} is fixed")
        return int(pos)

    def expand(self, delta: np.ndarray) -> np.ndarray:
        """Full DOF vectors (..., n_full) from free ones (..., n_dofs), zeros at the supports."""
        delta = np.asarray(delta)
        out = np.zeros(delta.shape[:-1] + (self.n_full,))
        out[..., self.free] = delta
        return out

    def displacement_field(self, delta: np.ndarray) -> np.ndarray:
        """Nodal displacements (..., n_nodes, dim) in body-frame components from free DOFs (..., n)."""
        full = self.expand(delta)
        el = self.element
        if el.cell_type == "line":
            xi_nodes = np.array([-1.0, 1.0])
        else:
            xi_nodes = None
        dim = self.mesh.dim
        lead = full.shape[:-1]
        out = np.zeros(lead + (self.mesh.n_nodes, dim))
        if xi_nodes is None:                    # Lagrange solids: translations are the DOFs
            out[...] = full.reshape(lead + (self.mesh.n_nodes, el.dofs_per_node))[..., :dim]
            return out
        N_nodes = el.N(self.X, xi_nodes)        # (n_el, 2, 3, n_e)
        edofs = element_dofs(self.cells, el.dofs_per_node)
        u = np.einsum("epan,...en->...epa", N_nodes, full[..., edofs])[..., :dim]
        out[..., self.cells, :] = u
        return out

    def stress_fields(self, delta: np.ndarray) -> dict[str, np.ndarray]:
        """Element outputs linear in the free DOFs ``delta`` (..., n), at the element centroids:
        ``stress`` (..., n_el, 3, 3) [Pa] (body axes; plane stress padded with zeros) and, for
        plates (``element.stress_fields``), ``stress_bottom`` (..., n_el, 3, 3) at the bottom surface
        and ``shear_force`` (..., n_el, 2) [N/m].  Empty for elements without ``stress`` (bars, beams).

        The states are batched as extra elements, ``STRESS_BATCH`` elements per call of the element's
        stress (bounded memory for large meshes and many states)."""
        el = self.element
        if not hasattr(el, "stress"):
            return {}
        delta = np.asarray(delta, dtype=float)
        lead, n_el = delta.shape[:-1], len(self.cells)
        states = delta.reshape(-1, delta.shape[-1])
        edofs = element_dofs(self.cells, el.dofs_per_node)
        step = max(1, STRESS_BATCH // max(n_el, 1))                             # states per call
        parts = [self._stress_fields_batch(states[s0:s0 + step], edofs) for s0 in range(0, len(states), step)]
        if not parts:                                                           # no state: empty fields
            parts = [{k: v[:0] for k, v in self._stress_fields_batch(np.zeros((1, self.n_dofs)), edofs).items()}]
        return {k: np.concatenate([p[k] for p in parts]).reshape(lead + parts[0][k].shape[1:]) for k in parts[0]}

    def _stress_fields_batch(self, states: np.ndarray, edofs: np.ndarray) -> dict[str, np.ndarray]:
        """`stress_fields` of the free-DOF states (n_s, n): {name: (n_s, n_el, ...)}, one element call."""
        el, n_el = self.element, len(self.cells)
        u_e = self.expand(states)[:, edofs].reshape(-1, edofs.shape[1])          # (n_s n_el, n_e)
        X = np.broadcast_to(self.X, (len(states),) + self.X.shape).reshape((-1,) + self.X.shape[1:])
        fields = el.stress_fields(X, u_e) if hasattr(el, "stress_fields") else {"stress": el.stress(X, u_e)}
        out = {}
        for k, v in fields.items():
            v = _pad_tensor(v) if k.startswith("stress") else v
            out[k] = v.reshape((len(states), n_el) + v.shape[1:])
        return out

    def node_translations(self):
        """Phi_nodes (3 n_nodes, n_dofs): the translation u_i = Phi_nodes[3 i:3 i + 3] delta of every mesh
        node from the free DOFs (beams: the shape functions at the element ends; solids: the
        translation DOFs), in body-frame components padded to 3.  A dense ndarray for a dense model
        (``dense``), else CSR (`flexmbs.assembly.assembler.dense_array` gives either as an ndarray)."""
        el, n_nodes = self.element, self.mesh.n_nodes
        n = len(self.free)
        to_free = np.full(self.n_full, -1, dtype=np.int64)
        to_free[self.free] = np.arange(n)
        shape = (3 * n_nodes, n)
        if el.cell_type == "line":
            N = el.N(self.X, np.array([-1.0, 1.0]))                       # (n_el, 2, 3, n_e)
            rows = 3 * self.cells[:, :, None, None] + np.arange(3)[None, None, :, None]
            cols = to_free[element_dofs(self.cells, el.dofs_per_node)][:, None, None, :]
            rows, cols = np.broadcast_arrays(rows, cols, N)[:2]
            keep = (cols >= 0) & (N != 0.0)
            # a node shared by elements gets each element's (equal) value: their mean, entry by entry
            entry, at = np.unique(rows[keep] * n + cols[keep], return_inverse=True)
            mean = np.bincount(at, weights=N[keep]) / np.bincount(at)
            return triplet_matrix(mean, entry // n, entry % n, shape, self.dense)
        dpn = el.dofs_per_node                                         # Lagrange solids: translations
        full = np.arange(n_nodes)[:, None] * dpn + np.arange(min(3, dpn))          # (n_nodes, a)
        rows = 3 * np.arange(n_nodes)[:, None] + np.arange(min(3, dpn))
        ok = to_free[full] >= 0
        return triplet_matrix(np.ones(int(ok.sum())), rows[ok], to_free[full][ok], shape, self.dense)

    def interface_translation(self, nodes, weights=None) -> tuple[np.ndarray, np.ndarray]:
        """(X_c (3,), Phi_c (3, n_dofs)): the weighted mean position of the mesh nodes ``nodes`` (a node
        set name or indices) and the weighted mean of their rows of `node_translations`, u_c =
        Phi_c delta: the point of an averaging (RBE3-like) interface (`flexmbs.bodies.Interface`).
        ``weights`` (one per node, >= 0, normalised to sum 1; default equal)."""
        idx = self.mesh.nodes(nodes if isinstance(nodes, str) else np.asarray(nodes, dtype=np.int64))
        if idx.size == 0:
            raise ValueError("the interface has no node")
        w = np.full(idx.size, 1.0 / idx.size) if weights is None else np.asarray(weights, dtype=float)
        if w.shape != idx.shape or not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
            raise ValueError(f"`weights` must be {idx.size} finite numbers >= 0 with a positive sum (one per node), "
                             f"got {weights!r}")
        w = w / w.sum()
        X = np.pad(self.mesh.points[idx], ((0, 0), (0, 3 - self.mesh.dim)))
        rows = (3 * idx[:, None] + np.arange(3)).ravel()
        Phi = dense_array(self.node_translations()[rows]).reshape(idx.size, 3, -1)
        return w @ X, np.einsum("k,kan->an", w, Phi)

    def interface_rigid_modes(self, nodes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(X_c (3,), dofs (k,), R_c (k, m)): the centroid of the mesh nodes ``nodes`` (set name or
        indices), the indices among the free DOFs of every DOF of those nodes, and the element's m
        rigid-body modes at those DOFs about X_c (translations, then rotations theta about axes
        through X_c: u_i = u_c + theta x (X_i - X_c), a node's rotation DOFs = theta): the motions
        of a rigid (RBE2-like) interface, u_set = R_c c (`flexmbs.reduction.reduce`,
        ``rigid_interfaces``).  Raises ValueError when a DOF of the set is supported (``fixed``) or the
        set cannot carry all m rigid motions (e.g. nodes on one line of a solid)."""
        idx = self.mesh.nodes(nodes if isinstance(nodes, str) else np.asarray(nodes, dtype=np.int64))
        if idx.size == 0:
            raise ValueError("the interface has no node")
        dpn = self.element.dofs_per_node
        full = (idx[:, None] * dpn + np.arange(dpn)).ravel()
        if np.any(self._fixed_mask[full]):
            raise ValueError(f"a rigid interface cannot hold supported DOFs: {int(self._fixed_mask[full].sum())} of "
                             "its nodes' DOFs are in `fixed`; support the body elsewhere, or make the supported "
                             "nodes the interface's only constraint")
        X_c = np.pad(self.mesh.points[idx], ((0, 0), (0, 3 - self.mesh.dim))).mean(axis=0)
        R = self.rigid_modes(full=True)[full]                        # about the origin
        if R.shape[1] == 6:                                          # 3D: theta x X = theta x X_c + theta x (X - X_c)
            shift = np.stack([np.cross(e, X_c) for e in np.eye(3)], axis=1)      # (3, 3): column i = e_i x X_c
            R[:, 3:] -= R[:, :3] @ shift
        elif R.shape[1] == 3:                                        # plane: theta e_z x X_c = theta (-y_c, x_c)
            R[:, 2] -= R[:, :2] @ np.array([-X_c[1], X_c[0]])
        sv = np.linalg.svd(R, compute_uv=False)
        rank = int(np.sum(sv > 1e-10 * sv.max()))
        if rank < R.shape[1]:
            raise ValueError(f"the interface's {idx.size} node(s) cannot carry the {R.shape[1]} rigid-body motions "
                             f"of a rigid interface (their rigid modes have rank {rank}); give nodes that span a "
                             "surface")
        return X_c, np.searchsorted(self.free, full), R

    def interface_rigid_motion(self, nodes) -> tuple[np.ndarray, np.ndarray]:
        """(X_c (3,), Phi_r (m, n_dofs)): the rigid motion c = (u_c, theta) of the node set ``nodes`` that
        fits its DOFs best in the least-squares sense, c = pinv(R_c) delta_set = Phi_r delta
        (`interface_rigid_modes`): exact for a rigid interface, the set's mean motion for a deforming
        one.  A moment T at a rigid interface is the generalised force Phi_r[3:].T T."""
        X_c, dofs, R = self.interface_rigid_modes(nodes)
        Phi = self.node_dof_rows(dofs)
        return X_c, np.linalg.pinv(R) @ Phi

    def node_dof_rows(self, dofs: np.ndarray) -> np.ndarray:
        """(k, n_dofs): the rows of the identity at free-DOF indices ``dofs`` (a reduced model: of its basis)."""
        out = np.zeros((len(dofs), self.n_dofs))
        out[np.arange(len(dofs)), dofs] = 1.0
        return out

    # -- time-dependent data for the formulations -------------------------------------------------
    def frame(self, t: float):
        """FrameState of the motion at t."""
        return self.motion.state(t)

    def matrix_key(self, t: float):
        """What the time-dependent matrices depend on (equal keys: equal matrices)."""
        if self._Kg:
            return (self.motion.matrix_key(t), self.geometric_coefficients(t).tobytes())
        return self.motion.matrix_key(t)

    def load_factors(self, t: float) -> np.ndarray:
        """Time factors f(t) of the loads: q_ext(t) = Q f(t).  A factor that raises or is NaN or inf
        raises `flexmbs.user_functions.UserFunctionError` naming ``loads[i].f`` and t."""
        f = np.array([1.0 if fi is None else evaluate(f"`loads[{i}].f`", t, fi, t)
                      for i, fi in enumerate(self._load_f)], dtype=float)
        if not np.isfinite(f).all():
            i = int(np.flatnonzero(~np.isfinite(f))[0])
            raise non_finite(f"`loads[{i}].f`", t, f"f = {float(f[i])!r}")
        return f

    def load_factor_history(self, t: np.ndarray) -> np.ndarray:
        """f(t), shape (N, n_loads), of the loads at N times: column i is ``loads[i].f`` at t (ones for
        a constant load), calling a vectorised time function once and a scalar-only one per time.

        NOTE: unlike `load_factors`, a non-finite factor is not checked here (the callers evaluate
        energies and frame terms of states already integrated)."""
        t = np.asarray(t, dtype=float)
        cols = []
        for f in self._load_f:
            if f is None:
                cols.append(np.ones(len(t)))
                continue
            try:
                v = np.asarray(f(t), dtype=float)
            except Exception:                 # NOTE: a time function written for scalars only
                v = None
            if v is None or v.shape != t.shape:
                v = np.array([f(float(ti)) for ti in t], dtype=float)
            cols.append(v)
        return np.stack(cols, axis=-1) if cols else np.zeros((len(t), 0))

    @property
    def load_functions(self) -> tuple:
        """The time functions f_i of the loads, one per ``loads[i]`` (None: the constant 1), so that
        q_ext(t) = Q f(t)."""
        return tuple(self._load_f)

    @property
    def geometric_stiffness_keys(self) -> tuple:
        """What each unit geometric stiffness K_geo,i is scaled by, one key per i: ("A", a, b) ->
        A[a, b] of A = tilde(eps) + tilde(omega)^2, ("alpha", c) -> alpha[c] of
        alpha = R^T (a_O - g), ("load", j) -> the factor f_j(t) of load j (see
        `geometric_coefficients`).  Empty without stiffening."""
        return tuple(self._Kg_keys)

    @property
    def geometric_stiffness_matrices(self) -> tuple:
        """The unit geometric stiffnesses K_geo,i, each (n_dofs, n_dofs) on the free DOFs (sparse CSR, or
        dense for a dense model), in the order of `geometric_stiffness_keys`:
        K_geo(t) = sum_i c_i(t) K_geo,i."""
        return tuple(self._Kg)

    @property
    def geometric_stiffness_operators(self) -> tuple:
        """The same K_geo,i as `geometric_stiffness_matrices`, as the operators of the time loop
        (`as_operator`: dense ndarray for a dense model, else CSR)."""
        return tuple(self._Kg_op)

    def q_ext(self, t: float) -> np.ndarray:
        """Nodal loads at t on the free DOFs."""
        if not self._load_f:
            return np.zeros(self.n_dofs)
        return self.Q @ self.load_factors(t)

    @property
    def steady(self) -> bool:
        """True when every matrix and frame load is constant in time (constant spin or fixed
        frame, origin at rest, no gravity in a rotating frame)."""
        from .motion import ConstantRotation
        if any(k[0] == "load" and self._load_f[k[1]] is not None for k in self._Kg_keys):
            return False                      # stiffening by time-varying loads
        if isinstance(self.motion, Fixed):
            return True
        return isinstance(self.motion, ConstantRotation) and not np.any(self.gravity)

    def _combo(self, tag: str, coeffs: np.ndarray, build):
        """Combined operator for ``coeffs``, cached while they recur (constant spin: built once).

        Dense models build it at once (cheap); sparse models use matvecs with the separate
        matrices until the same coefficients come back, then build and keep it.
        A few entries per tag are kept (omega and eps alternate within one evaluation).
        """
        key = (tag, coeffs.tobytes())
        entry = self._cache.get(key)
        if entry is None:
            if len(self._cache) > 16:
                self._cache.pop(next(iter(self._cache)))
            entry = self._cache[key] = [build() if self.dense else None]
        elif entry[0] is None:
            entry[0] = build()
        return entry[0]

    def G_dot(self, w: np.ndarray, v: np.ndarray) -> np.ndarray:
        """int rho N^T tilde(w) N dV v = sum_i w_i G_i v."""
        w = np.asarray(w, dtype=float)
        op = self._combo("G", w, lambda: _sum_ops(
            [(wi, Gi) for wi, Gi in zip(w, self.G_op) if Gi is not None and wi != 0.0], self.n_dofs, self.dense))
        if op is not None:
            return op @ v
        out = np.zeros(self.n_dofs)
        for wi, Gi in zip(w, self.G_op):
            if Gi is not None and wi != 0.0:
                out += wi * (Gi @ v)
        return out

    def S_dot(self, A: np.ndarray, v: np.ndarray) -> np.ndarray:
        """int rho N^T A N dV v = sum_ab A[a, b] S[a, b] v."""
        op = self._combo("S", A, lambda: _sum_ops(
            [(A[a, b], Sab) for (a, b), Sab in self.S_op.items() if A[a, b] != 0.0], self.n_dofs, self.dense))
        if op is not None:
            return op @ v
        out = np.zeros(self.n_dofs)
        for (a, b), Sab in self.S_op.items():
            if A[a, b] != 0.0:
                out += A[a, b] * (Sab @ v)
        return out

    def d_sum(self, A: np.ndarray) -> np.ndarray:
        """int rho N^T A x dV = sum_ab A[a, b] d[a, b]."""
        return self._combo("d", A, lambda: np.einsum("ab,abn->n", A, self.d)) if self.dense else \
            np.einsum("ab,abn->n", A, self.d)

    def damping_force(self, v: np.ndarray) -> np.ndarray:
        return np.zeros(self.n_dofs) if self.C_op is None else self.C_op @ v

    def rigid_velocity_power(self, t, delta, delta_dot, delta_ddot) -> float:
        """Power int rho (a - g) . v_rig dV that flows in through the frame's motion.

        v_rig = v_O + omega x (x + u) is the velocity the point would have if it were
        rigidly attached to the frame; a the point's acceleration, g gravity.  With it
        d(T + V + V_g)/dt = q.delta' - delta'^T C delta' + P_frame exactly (docs/theory.md).
        """
        fs = self.frame(t)
        w, e = fs.omega, fs.eps
        vO, alpha = fs.v_O_local, fs.R.T @ (fs.a_O - self.gravity)
        W, E = skew(w), skew(e)
        A = E + W @ W
        mO = self.m_O
        sy = self.inv.s + mO @ delta                               # int rho y dV
        p1 = vO @ (self.mass * alpha + A @ sy + 2.0 * W @ (mO @ delta_dot) + mO @ delta_ddot)
        Yyy = self.moments(delta, delta)
        Yyv = self.moments(delta, delta_dot, with_x_second=False)
        Yya = self.moments(delta, delta_ddot, with_x_second=False)
        torque = (np.cross(sy, alpha) + _cross_moment(A, Yyy) + 2.0 * _cross_moment(W, Yyv)
                  + _cross_moment(np.eye(3), Yya))
        return float(p1 + w @ torque)

    def moments(self, delta, beta, with_x_second: bool = True) -> np.ndarray:
        """Y[a, b] = int rho y_a z_b dV with y = x + N delta and z = x + N beta (or N beta).

        Built from the invariants: int rho x_a (N beta)_b = d[b, a] . beta, int rho (N delta)_a
        (N beta)_b = delta^T S[a, b] beta, int rho x_a x_b = J[a, b].
        """
        Y = np.einsum("ban,n->ab", self.d, beta)
        for (a, b), Sab in self.S_op.items():
            Y[a, b] += delta @ (Sab @ beta)
        if with_x_second:
            Y += self.inv.J + np.einsum("ban,n->ab", self.d, delta).T
        return Y


def dense_spd_solve(K: np.ndarray, F: np.ndarray) -> tuple[np.ndarray, str]:
    """(U, info): K U = F for a dense symmetric positive definite K, by its Cholesky factor
    K = L L^T (``numpy.linalg.cholesky``) and two solves, L Y = F and L^T U = Y.  A K that is not
    positive definite (a body whose supports leave a rigid motion free) is a ValueError saying so."""
    try:
        L = np.linalg.cholesky(K)
    except np.linalg.LinAlgError as exc:
        raise ValueError("geometric stiffening needs a supported body (the stiffness is not positive definite: "
                         f"{exc}); fix its rigid-body motions with `fixed` or pass stiffening=False") from None
    return np.linalg.solve(L.T, np.linalg.solve(L, F)), "dense Cholesky (numpy)"


def _pad_tensor(sigma: np.ndarray) -> np.ndarray:
    """(..., d, d) stresses as (..., 3, 3): plane-stress (2 x 2) ones padded with zeros."""
    out = np.zeros(sigma.shape[:-2] + (3, 3))
    out[..., :sigma.shape[-2], :sigma.shape[-1]] = sigma
    return out


def _sum_ops(terms, n: int, dense: bool):
    """sum c_k A_k of (coefficient, operator) pairs, as a dense array or CSR."""
    if not terms:
        return np.zeros((n, n)) if dense else sparse.csr_array((n, n))
    out = terms[0][0] * terms[0][1]
    for c, A in terms[1:]:
        out = out + c * A
    return out if dense else sparse.csr_array(out)


def _cross_moment(B: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """int rho y x (B z) dV from Y[j, l] = int rho y_j z_l dV: c_i = eps_ijk B_kl Y_jl."""
    T = B @ Y.T                     # T[k, j] = B_kl Y_jl
    return np.array([T[2, 1] - T[1, 2], T[0, 2] - T[2, 0], T[1, 0] - T[0, 1]])
