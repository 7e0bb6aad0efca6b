"""A planar corotational beam as a body of a `flexmbs.System`: large rotations, small strains.

Coordinates: per node k, q[3k:3k+3] = (x_k, y_k, theta_k), the global position of the node and
the rotation of its cross-section from the reference configuration (theta_k = 0 there), so
q' = v (the velocities are the time derivatives of the coordinates, as for every body).
Internal forces and tangent stiffness come from `flexmbs.elements.corotational` (vectorised over
the elements).

Mass.  Positions and section rotations are interpolated linearly along each element
(x(s) = (1 - s) x_1 + s x_2, theta(s) likewise, s in [0, 1]), so the kinetic energy

.. code:: text

    T = 1/2 int_0^L0 (rho A |x'|^2 + rho I theta'^2) dX
      = 1/2 v^T M v,   M_e = (L_0 / 6) [[2, 1], [1, 2]] (x) diag(rho A, rho A, rho I)

("consistent" mass) is a constant matrix: Q_v = -M' q' + dT/dq = 0.  For a straight element
moving rigidly the linear interpolation of positions is exact, so the rigid-body kinetic energy
(mass, first and second moments about the chord) is exact; the transverse bending inertia is
approximated and converges with the mesh.  "lumped": M_e = (L_0 / 2) diag(rho A, rho A, rho I)
per node.  ``rotary_inertia=False`` drops rho I (then M is singular in the theta's: use an
implicit integrator whose iteration matrix carries the stiffness).

Gravity: Q_e = int rho A N^T g dX = (rho A L_0 / 2) g at each end node of each element (exact
for the linear interpolation); its potential is V = -g . int rho A x dX.

Markers.  A node marker ``Node(k)`` (`flexmbs.Node`, or any object with an integer ``index``) is
the node itself.
A body point given as a vector s (2,) is the node whose reference position is X_0 + s
(X_0: node 0), so joints built with ``at`` find the node there; other points are refused.  The
body's frame is the cross-section frame of node 0: rotation(q) = R(theta_0), vector(q, u) =
R(theta_0) u, torque() acts on node 0.
"""
from __future__ import annotations

import numpy as np

from ..elements.base import Material
from ..elements.corotational import corotational_2d
from ..elements.corotational3d import (corotational_3d, reference_frames, rotary_inertia, rotary_inertia_tangent,
                                        rotation_and_tangent, rotation_tangent_and_rate, rotation_vector_matrix,
                                        tangent_operator)
from ..newton import newton
from ..rotations import skew
from .base import Body, LinearInertia, _check_loads, rigid_motion_of_points
from .flexible import Node            # the mesh-node marker, shared with FlexibleBody
from ..lazy import LazyModule

scipy = LazyModule("scipy")                 # scipy.linalg loads at its first use (flexmbs.lazy)

__all__ = ["CorotationalBeam2D", "CorotationalBeam3D", "Node"]


def _rot2(a) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s], [s, c]])


class _Statics:
    """Load-stepped Newton statics for the beams (needs n_q, internal_force, stiffness, EA, length0, nodes)."""

    def static_equilibrium(self, load, fixed, *, steps: int = 10, tol: float = 1e-9, max_iter: int = 30, q0=None):
        """Equilibrium f_int(q) = lambda F under the dead load F, lambda = 1/steps, ..., 1.

        Newton (`flexmbs.newton`) at each load step on the free coordinates, starting from the
        previous step's solution; ``fixed`` are coordinate indices held at their values in
        ``q0`` (default the reference configuration).  ``tol`` is relative to max |F|; when the
        steps stall at round-off, residuals up to the round-off of the axial forces,
        1e3 eps (EA / L_0) (1 + max |X|), are accepted as well.
        Returns (q, iterations per step).
        """
        F = np.asarray(load, dtype=float)
        if F.shape != (self.n_q,):
            raise ValueError(f"body {self.name!r}: `load` must have shape ({self.n_q},), got {F.shape}")
        if not (isinstance(steps, (int, np.integer)) and steps >= 1):
            raise ValueError(f"body {self.name!r}: `steps` must be an integer >= 1, got {steps!r}")
        q = self.initial_coordinates() if q0 is None else np.array(q0, dtype=float)
        free = np.setdiff1d(np.arange(self.n_q), np.asarray(fixed, dtype=int))
        scale = max(np.max(np.abs(F)), 1e-300)
        roundoff = 1e3 * np.finfo(float).eps * np.max(self.EA / self.length0) * (1.0 + np.abs(self.nodes).max())
        iterations = []
        for k in range(1, steps + 1):
            lam = k / steps

            def residual(x):
                q[free] = x
                return (self.internal_force(q) - lam * F)[free]

            def solve(x, r):
                q[free] = x
                K = self.stiffness(q)[np.ix_(free, free)]
                return scipy.linalg.solve(K, r, assume_a="sym")

            x, it = newton(residual, solve, q[free], tol=tol * scale, max_iter=max_iter,
                           accept=max(tol * scale, roundoff),
                           name=f"static equilibrium of {self.name!r} at load factor {lam:g}",
                           hint="take more load `steps`")
            q[free] = x
            iterations.append(it)
        return q, iterations


class CorotationalBeam2D(LinearInertia, _Statics, Body):
    """Planar beam of corotational Euler-Bernoulli elements (large rotations, small strains).

    Parameters
    ----------
    name : str
    nodes : array (n_nodes, 2)
        Reference (stress-free) nodal positions [m].
    material : Material
        E [Pa] and rho [kg/m^3].
    area, I : float
        Cross-section area A [m^2] and second moment of area I [m^4].
    elements : int array (n_el, 2), optional
        Node pairs; default the chain (0, 1), (1, 2), ...
    mass : {"consistent", "lumped"}
        See the module docstring.
    rotary_inertia : bool
        Include rho I (default True).
    velocity : array (n_nodes, 3) or (3 n_nodes,), optional
        Initial (x', y', theta') of each node.
    loads : sequence of callables
        ``load(body, t, q, v)`` -> generalized force (n_q,), added to gravity.
    """

    dim = 2
    constant_mass = True

    def __init__(self, name: str, nodes, material: Material, area: float, I: float, *, elements=None,
                 mass: str = "consistent", rotary_inertia: bool = True, velocity=None, loads=()):
        if not isinstance(name, str) or not name:
            raise ValueError(f"a body needs a nonempty string `name`, got {name!r}")
        self.name = name
        self.loads = _check_loads(loads, name)
        X = np.asarray(nodes, dtype=float)
        if X.ndim != 2 or X.shape[1] != 2 or len(X) < 2 or not np.all(np.isfinite(X)):
            raise ValueError(f"body {name!r}: `nodes` must be a finite (n_nodes >= 2, 2) array, got shape "
                             f"{np.shape(nodes)}")
        self.nodes = X
        n = len(X)
        if elements is None:
            conn = np.stack([np.arange(n - 1), np.arange(1, n)], axis=1)
        else:
            conn = np.asarray(elements)
            if conn.ndim != 2 or conn.shape[1] != 2 or not np.issubdtype(conn.dtype, np.integer) \
                    or conn.min() < 0 or conn.max() >= n:
                raise ValueError(f"body {name!r}: `elements` must be integer node pairs (n_el, 2) in [0, {n}), "
                                 f"got {elements!r}")
        self.elements = conn
        L0 = np.linalg.norm(X[conn[:, 1]] - X[conn[:, 0]], axis=1)
        if np.any(L0 <= 1e-12 * (1.0 + np.abs(X).max())):
            raise ValueError(f"body {name!r}: elements {np.flatnonzero(L0 <= 1e-12 * (1.0 + np.abs(X).max())).tolist()} have zero length")
        self.length0 = L0
        if not isinstance(material, Material):
            raise ValueError(f"body {name!r}: `material` must be a flexmbs Material, got {material!r}")
        for what, value in (("area", area), ("I", I)):
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"body {name!r}: `{what}` must be positive and finite, got {value!r}")
        self.material, self.area, self.I = material, float(area), float(I)
        self.EA, self.EI = material.E * self.area, material.E * self.I
        if mass not in ("consistent", "lumped"):
            raise ValueError(f"body {name!r}: `mass` must be 'consistent' or 'lumped', got {mass!r}")
        self.mass_kind, self.rotary_inertia = mass, bool(rotary_inertia)
        self.n_nodes = n
        self.n_q = 3 * n
        self._edofs = (3 * conn[:, :, None] + np.arange(3)).reshape(-1, 6)      # (n_el, 6)
        self._X0e = X[conn]                                                     # (n_el, 2, 2)
        self._M = self._mass_matrix()
        self._M.flags.writeable = False
        rhoA = material.rho * self.area
        self.mass = float(rhoA * L0.sum())
        self._gravity_weights = np.bincount(conn.ravel(), weights=np.repeat(0.5 * rhoA * L0, 2), minlength=n)
        if velocity is None:
            self.velocity = np.zeros(self.n_q)
        else:
            v = np.asarray(velocity, dtype=float).reshape(-1)
            if v.shape != (self.n_q,) or not np.all(np.isfinite(v)):
                raise ValueError(f"body {name!r}: `velocity` must be finite with {self.n_q} entries "
                                 f"((n_nodes, 3) or flat), got shape {np.shape(velocity)}")
            self.velocity = v
        self._points = {}

    @classmethod
    def line(cls, name: str, start, end, n_elements: int, material: Material, area: float, I: float, **kwargs):
        """A straight beam from ``start`` to ``end`` divided into ``n_elements`` equal elements."""
        if not (isinstance(n_elements, (int, np.integer)) and n_elements >= 1):
            raise ValueError(f"body {name!r}: `n_elements` must be an integer >= 1, got {n_elements!r}")
        a, b = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
        s = np.linspace(0.0, 1.0, n_elements + 1)[:, None]
        return cls(name, (1.0 - s) * a + s * b, material, area, I, **kwargs)

    # -- inertia --------------------------------------------------------------------------------
    def _mass_matrix(self) -> np.ndarray:
        rho = self.material.rho
        diag = np.array([rho * self.area, rho * self.area, rho * self.I if self.rotary_inertia else 0.0])
        L0 = self.length0
        if self.mass_kind == "consistent":
            pattern = np.array([[2.0, 1.0], [1.0, 2.0]]) / 6.0
        else:
            pattern = np.eye(2) / 2.0
        block = np.einsum("ab,i,ij->aibj", pattern, diag, np.eye(3)).reshape(6, 6)     # (node, dof) x (node, dof)
        Me = L0[:, None, None] * block
        return self._assemble_matrix(Me)

    def _assemble_matrix(self, Ke) -> np.ndarray:
        n = self.n_q
        idx = self._edofs[:, :, None] * n + self._edofs[:, None, :]
        return np.bincount(idx.ravel(), weights=np.asarray(Ke).ravel(), minlength=n * n).reshape(n, n)

    def _assemble_vector(self, fe) -> np.ndarray:
        return np.bincount(self._edofs.ravel(), weights=np.asarray(fe).ravel(), minlength=self.n_q)

    # -- coordinates ----------------------------------------------------------------------------
    def initial_coordinates(self) -> np.ndarray:
        return np.column_stack([self.nodes, np.zeros(self.n_nodes)]).ravel()

    def initial_velocities(self) -> np.ndarray:
        return self.velocity.copy()

    def positions(self, q) -> np.ndarray:
        """Nodal positions (n_nodes, 2)."""
        return np.asarray(q).reshape(-1, 3)[:, :2]

    def rotations(self, q) -> np.ndarray:
        """Nodal section rotations (n_nodes,)."""
        return np.asarray(q).reshape(-1, 3)[:, 2]

    # -- elasticity -----------------------------------------------------------------------------
    def _elements(self, q, tangent):
        Q = np.asarray(q, dtype=float).reshape(-1, 3)
        e = self.elements
        return corotational_2d(self._X0e, Q[:, :2][e], Q[:, 2][e], self.EA, self.EI, tangent=tangent)

    def internal_force(self, q) -> np.ndarray:
        """f = dU/dq, (n_q,)."""
        return self._assemble_vector(self._elements(q, False).force)

    def stiffness(self, q) -> np.ndarray:
        """Tangent stiffness K = d^2U/dq^2, dense (n_q, n_q)."""
        return self._assemble_matrix(self._elements(q, True).stiffness)

    def strain_energy(self, q) -> float:
        """U = sum of the elements' strain energies [J]."""
        return float(self._elements(q, False).energy.sum())

    def section_forces(self, q) -> np.ndarray:
        """(N, M_1, M_2) per element (n_el, 3): axial force [N] and end moments [N m]."""
        return self._elements(q, False).stress

    # -- dynamics -------------------------------------------------------------------------------
    def mass_matrix(self, q) -> np.ndarray:
        return self._M

    def gravity_force(self, gravity) -> np.ndarray:
        """Q_g: (rho A L_0 / 2) g on each end node of each element, (n_q,)."""
        out = np.zeros((self.n_nodes, 3))
        if gravity is not None:
            out[:, :2] = self._gravity_weights[:, None] * np.asarray(gravity, dtype=float)
        return out.ravel()

    def forces(self, t, q, v, gravity) -> np.ndarray:
        """Q = Q_g + loads - f_int (Q_v = 0: constant mass)."""
        Q = self.gravity_force(gravity) - self.internal_force(q)
        return Q + self.applied(t, q, v) if self.loads else Q

    def tangent(self, t, q, v, qdd, gravity) -> tuple[np.ndarray, np.ndarray] | None:
        """(K_b, C_b) = (K(q), 0): M and Q_g are constant and Q_v = 0, so d(M q'' - Q)/dq = df_int/dq, the
        exact `stiffness`, and -dQ/dv = 0.  None with ``loads`` (their derivatives are not known: the
        System differences the body)."""
        if self.loads:
            return None
        return self.stiffness(q), np.zeros((self.n_q, self.n_q))

    def energy(self, q, v, gravity) -> tuple[float, float]:
        """(1/2 v^T M v, potential of gravity -g . int rho A x dX); the strain energy is `strain_energy`."""
        T = 0.5 * float(v @ (self._M @ v))
        if gravity is None:
            return T, 0.0
        return T, -float(self.gravity_force(gravity) @ np.asarray(q, dtype=float))

    # -- markers --------------------------------------------------------------------------------
    def node_index(self, s) -> int:
        """Index of the node marker ``s`` (an object with ``index``) or of the vector point ``s``."""
        if hasattr(s, "index") and not isinstance(s, np.ndarray):
            i = s.index
            if not (isinstance(i, (int, np.integer)) and 0 <= i < self.n_nodes):
                raise ValueError(f"body {self.name!r}: no node {i!r}; the beam has nodes 0..{self.n_nodes - 1}")
            return int(i)
        a = np.asarray(s, dtype=float)
        key = a.tobytes()
        if key in self._points:
            return self._points[key]
        if a.shape != (self.dim,) or not np.all(np.isfinite(a)):
            raise ValueError(f"body {self.name!r}: a marker is a Node(i) or a {self.dim}-vector (reference position "
                             f"relative to node 0), got {s!r}")
        P = self.nodes[0] + a
        dist = np.linalg.norm(self.nodes - P, axis=1)
        i = int(np.argmin(dist))
        if dist[i] > 1e-9 * (1.0 + np.abs(self.nodes).max()):
            raise ValueError(f"body {self.name!r}: the point {P.tolist()} (node 0 + {a.tolist()}) is not a node of "
                             f"the beam (nearest node {i} at {self.nodes[i].tolist()}); use a Node(i) marker")
        self._points[key] = i
        return i

    def point(self, q, s) -> np.ndarray:
        i = self.node_index(s)
        return np.array(q[3 * i:3 * i + 2], dtype=float)

    def point_jacobian(self, q, s) -> np.ndarray:
        i = self.node_index(s)
        J = np.zeros((2, self.n_q))
        J[0, 3 * i] = J[1, 3 * i + 1] = 1.0
        return J

    def point_bias(self, q, v, s) -> np.ndarray:
        self.node_index(s)
        return np.zeros(2)

    def vector(self, q, u) -> np.ndarray:
        return _rot2(q[2]) @ np.asarray(u, dtype=float)

    def vector_jacobian(self, q, u) -> np.ndarray:
        J = np.zeros((2, self.n_q))
        a = _rot2(q[2]) @ np.asarray(u, dtype=float)
        J[:, 2] = (-a[1], a[0])
        return J

    def vector_bias(self, q, v, u) -> np.ndarray:
        return -v[2] ** 2 * self.vector(q, u)

    def rotation(self, q) -> np.ndarray:
        return _rot2(q[2])

    def angular_velocity(self, q, v):
        return float(v[2])

    def rigid_motion_generators(self, q, point) -> np.ndarray:
        """(n_q, 3): nodal (x, y) move like points (e_x, e_y, e_z x (r - O)), every theta_k' = 1 under
        the rotation (the sections turn with the body)."""
        X = np.zeros((self.n_nodes, 3, 3))
        X[:, :2] = rigid_motion_of_points(self.positions(q), point)
        X[:, 2, 2] = 1.0
        return X.reshape(self.n_q, 3)

    def torque(self, q, T) -> np.ndarray:
        out = np.zeros(self.n_q)
        out[2] = float(T)
        return out

    def node_load(self, i: int, force=(0.0, 0.0), moment: float = 0.0) -> np.ndarray:
        """Generalized force (n_q,) of a global force and a moment on node i."""
        i = self.node_index(Node(i))
        out = np.zeros(self.n_q)
        out[3 * i:3 * i + 2] = np.asarray(force, dtype=float)
        out[3 * i + 2] = float(moment)
        return out


class CorotationalBeam3D(_Statics, Body):
    """Spatial beam of corotational Euler-Bernoulli elements, a body of a `System`.

    Coordinates per node k: q[6k:6k+6] = (x, y, z, psi_x, psi_y, psi_z), the global position and
    the rotation vector of the nodal cross-section from the reference configuration
    (`flexmbs.elements.corotational3d`), v = q'.

    Mass: translations as in `CorotationalBeam2D` (linear interpolation, constant
    (L_0/6)[[2, 1], [1, 2]] rho A per element and direction); rotary inertia lumped at the nodes,
    J0_k = sum over the node's elements of (rho L_0 / 2) E_0 diag(Iy + Iz, Iy, Iz) E_0^T in the
    reference axes, kinetic energy 1/2 Omega_k^T J0_k Omega_k with Omega_k = T(psi_k)^T psi_k': M depends
    on the psi's, M_psi = T J0 T^T, and Q_v = -T (J0 (d/dt T^T) psi' + Omega x J0 Omega), closed forms
    for all nodes at once (`flexmbs.elements.corotational3d.rotary_inertia`).  Markers: Node(k) (or the
    reference offset from node 0) for points; the body frame is node 0's section, A = R(psi_0).

    Parameters
    ----------
    name : str
    nodes : array (n_nodes, 3)
    material : Material
        E and G = E / (2 (1 + nu)).
    area, Iy, Iz, J : float
        Section area and its second moments int z^2 dA, int y^2 dA and torsion constant, in the
        element axes of `BeamEB3D` (``orientation`` as there).
    elements : int array (n_el, 2), optional
        Default the chain.
    """

    dim = 3
    constant_mass = False

    def __init__(self, name: str, nodes, material: Material, area: float, Iy: float, Iz: float, J: float, *,
                 elements=None, orientation=None, loads=()):
        if not isinstance(name, str) or not name:
            raise ValueError(f"a beam needs a nonempty string `name`, got {name!r}")
        self.name = name
        X = np.asarray(nodes, dtype=float)
        if X.ndim != 2 or X.shape[1] != 3 or len(X) < 2 or not np.all(np.isfinite(X)):
            raise ValueError(f"beam {name!r}: `nodes` must be a finite (n_nodes >= 2, 3) array, got shape "
                             f"{np.shape(nodes)}")
        n = len(X)
        conn = np.stack([np.arange(n - 1), np.arange(1, n)], axis=1) if elements is None else np.asarray(elements)
        if conn.ndim != 2 or conn.shape[1] != 2 or conn.min() < 0 or conn.max() >= n:
            raise ValueError(f"beam {name!r}: `elements` must be node pairs (n_el, 2) in [0, {n}), got {elements!r}")
        for what, value in (("area", area), ("Iy", Iy), ("Iz", Iz), ("J", J)):
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"beam {name!r}: `{what}` must be positive and finite, got {value!r}")
        self.nodes, self.elements, self.n_nodes, self.n_q = X, conn, n, 6 * n
        self._X0e = X[conn]
        self.length0 = np.linalg.norm(self._X0e[:, 1] - self._X0e[:, 0], axis=1)
        self._E0 = reference_frames(self._X0e, orientation)
        self.material = material
        self.EA, self.GJ = material.E * area, material.G * J
        self.EIy, self.EIz = material.E * Iy, material.E * Iz
        self._edofs = (6 * conn[:, :, None] + np.arange(6)).reshape(-1, 12)
        self._last = None
        self.loads = _check_loads(loads, name)
        rho, L0 = material.rho, self.length0
        self.mass = float(rho * area * L0.sum())
        self._gravity_weights = np.bincount(conn.ravel(), weights=np.repeat(0.5 * rho * area * L0, 2), minlength=n)
        # translational mass (constant) and lumped rotary inertia in reference axes
        # (L_0 / 6) [[2, 1], [1, 2]] rho A on each direction d of the element's nodes a, b: all elements at once
        Mt = np.zeros((self.n_q, self.n_q))
        pattern = np.array([[2.0, 1.0], [1.0, 2.0]]) / 6.0
        rows = 6 * conn[:, :, None] + np.arange(3)                       # (n_el, node a, d)
        w = (rho * area * L0)[:, None, None, None] * pattern[None, :, :, None]
        np.add.at(Mt, (rows[:, :, None, :], rows[:, None, :, :]), np.broadcast_to(w, (len(conn), 2, 2, 3)))
        self._M_trans = Mt
        Je = np.einsum("eij,j,ekj->eik", self._E0, np.array([Iy + Iz, Iy, Iz]), self._E0) * (0.5 * rho * L0)[:, None, None]
        J0 = np.zeros((n, 3, 3))
        np.add.at(J0, conn[:, 0], Je)
        np.add.at(J0, conn[:, 1], Je)
        self._J0 = J0
        self._rot = 6 * np.arange(n)[:, None] + np.arange(3, 6)      # (n, 3) indices of the psi's
        self._points = {}
        self._kin = None

    @classmethod
    def line(cls, name: str, start, end, n_elements: int, material: Material, area, Iy, Iz, J, **kwargs):
        """A straight beam from ``start`` to ``end`` in ``n_elements`` equal elements."""
        s = np.linspace(0.0, 1.0, int(n_elements) + 1)[:, None]
        return cls(name, (1.0 - s) * np.asarray(start, float) + s * np.asarray(end, float), material, area,
                   Iy, Iz, J, **kwargs)

    def initial_coordinates(self) -> np.ndarray:
        return np.column_stack([self.nodes, np.zeros((self.n_nodes, 3))]).ravel()

    # -- the constant data of its terms (what the compiled kernel is packed from: flexmbs.compiled) -----------
    @property
    def translational_mass(self) -> np.ndarray:
        """The constant part of M, (n_q, n_q): (L_0 / 6) [[2, 1], [1, 2]] rho A per element and direction on the
        nodes' positions, zero on the psi's (read-only)."""
        M = self._M_trans.view()
        M.flags.writeable = False
        return M

    @property
    def section_inertia(self) -> np.ndarray:
        """J0_k (n_nodes, 3, 3): each node's lumped rotary inertia in the reference axes, M_psi,k =
        T(psi_k) J0_k T(psi_k)^T (read-only)."""
        J0 = self._J0.view()
        J0.flags.writeable = False
        return J0

    @property
    def element_frames(self) -> np.ndarray:
        """E_0 (n_el, 3, 3): each element's reference frame, columns e1_0, e2_0, e3_0 (`reference_frames`;
        read-only)."""
        E0 = self._E0.view()
        E0.flags.writeable = False
        return E0

    def _elements(self, q, tangent: bool = True):
        """Element energies, forces (and tangents) at q, from one evaluation; the last one is kept,
        since Newton asks for the force and then the tangent at the same q."""
        Q = np.asarray(q, dtype=float).reshape(-1, 6)
        key = Q.tobytes()
        if self._last is not None and self._last[0] == key and (self._last[1].stiffness is not None or not tangent):
            return self._last[1]
        e = self.elements
        out = corotational_3d(self._X0e, self._E0, Q[:, :3][e], Q[:, 3:][e], self.EA, self.GJ, self.EIy, self.EIz,
                              tangent=tangent)
        self._last = (key, out)
        return out

    def internal_force(self, q) -> np.ndarray:
        """f = dU/dq, (n_q,)."""
        return np.bincount(self._edofs.ravel(), weights=self._elements(q, False).force.ravel(), minlength=self.n_q)

    def stiffness(self, q) -> np.ndarray:
        """K = d^2U/dq^2, dense (n_q, n_q)."""
        n = self.n_q
        idx = self._edofs[:, :, None] * n + self._edofs[:, None, :]
        return np.bincount(idx.ravel(), weights=self._elements(q).stiffness.ravel(), minlength=n * n).reshape(n, n)

    def strain_energy(self, q) -> float:
        return float(self._elements(q, False).energy.sum())

    def strain_energies(self, Q) -> np.ndarray:
        """U (n_t,) at the rows of Q (n_t, n_q): every output's elements as one batch of `corotational_3d`
        (tangent=False, the elements' axis n_t n_el), instead of one call per output."""
        Q = np.asarray(Q, dtype=float).reshape(-1, self.n_nodes, 6)
        n_t, e = len(Q), self.elements
        stacked = [np.broadcast_to(a, (n_t,) + a.shape).reshape((-1,) + a.shape[1:]) for a in (self._X0e, self._E0)]
        x, psi = (Q[:, :, k:k + 3][:, e].reshape(-1, 2, 3) for k in (0, 3))
        out = corotational_3d(*stacked, x, psi, self.EA, self.GJ, self.EIy, self.EIz, tangent=False)
        return out.energy.reshape(n_t, len(e)).sum(axis=1)

    # -- dynamics -------------------------------------------------------------------------------
    def initial_velocities(self) -> np.ndarray:
        return np.zeros(self.n_q)

    def _rotary(self, q, v):
        """`rotary_inertia` of the nodes at (q, v), closed form, all nodes at once (kept for the last (q, v))."""
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        key = q.tobytes() + v.tobytes()
        if self._kin is None or self._kin[0] != key:
            self._kin = (key, rotary_inertia(q[self._rot], v[self._rot], self._J0))
        return self._kin[1]

    def mass_matrix(self, q) -> np.ndarray:
        """M = the constant translational mass plus M_psi,k = T(psi_k) J0_k T(psi_k)^T on each node's psi's."""
        psi = np.asarray(q, dtype=float)[self._rot]
        T = tangent_operator(psi)
        M = self._M_trans.copy()
        idx = self._rot
        M[idx[:, :, None], idx[:, None, :]] += T @ self._J0 @ np.swapaxes(T, 1, 2)
        return M

    def quadratic_velocity(self, q, v) -> np.ndarray:
        """Q_v = -M'(q) q' + dT/dq: on each node's psi's -T (J0 (d/dt T^T) psi' + Omega x J0 Omega)
        (`rotary_inertia`); zero on the positions (constant translational mass)."""
        out = np.zeros(self.n_q)
        out[self._rot] = self._rotary(q, v).quadratic
        return out

    def gravity_force(self, gravity) -> np.ndarray:
        out = np.zeros((self.n_nodes, 6))
        if gravity is not None:
            out[:, :3] = self._gravity_weights[:, None] * np.asarray(gravity, dtype=float)
        return out.ravel()

    def forces(self, t, q, v, gravity) -> np.ndarray:
        """Q = Q_g + Q_v + loads - f_int."""
        Q = self.gravity_force(gravity) + self.quadratic_velocity(q, v) - self.internal_force(q)
        return Q + self.applied(t, q, v) if self.loads else Q

    def tangent(self, t, q, v, qdd, gravity) -> tuple[np.ndarray, np.ndarray] | None:
        """(K_b, C_b) from the beam's own exact derivatives.  Q = Q_g + Q_v - f_int with Q_g and the
        translational mass constant, so

        .. code:: text

            K_b = K(q) + [d(M_psi psi'' - Q_v)/dpsi on each node's psi's]     K = df_int/dq (`stiffness`)
            C_b = [-dQ_v/dpsi' on each node's psi's]

        the node blocks from `rotary_inertia_tangent` (the closed forms of `rotary_inertia` by the complex
        step, all nodes at once).  None with ``loads`` (their derivatives are not known: the System
        differences the body)."""
        if self.loads:
            return None
        q, v, qdd = (np.asarray(x, dtype=float) for x in (q, v, qdd))
        idx = self._rot
        Kr, Cr = rotary_inertia_tangent(q[idx], v[idx], qdd[idx], self._J0)
        K, C = self.stiffness(q), np.zeros((self.n_q, self.n_q))
        K[idx[:, :, None], idx[:, None, :]] += Kr
        C[idx[:, :, None], idx[:, None, :]] = Cr
        return K, C

    def energy(self, q, v, gravity) -> tuple[float, float]:
        """(kinetic, potential of gravity); the strain energy is `strain_energy`."""
        v = np.asarray(v, dtype=float)
        T = 0.5 * float(v @ (self._M_trans @ v)) + float(self._rotary(q, v).energy.sum())
        if gravity is None:
            return T, 0.0
        return T, -float(self.gravity_force(gravity) @ np.asarray(q, dtype=float))

    def energies(self, Q, V, gravity) -> tuple[np.ndarray, np.ndarray]:
        """(kinetic, potential of gravity), each (n_t,), at the rows of Q, V (n_t, n_q), all outputs at once:
        1/2 v^T M_trans v plus the nodes' 1/2 Omega . J0 Omega (`rotary_inertia` over n_t n_nodes sections),
        and -Q_g . q (as `energy` row by row)."""
        Q, V = (np.asarray(a, dtype=float).reshape(-1, self.n_q) for a in (Q, V))
        n_t, idx = len(Q), self._rot
        J0 = np.broadcast_to(self._J0, (n_t,) + self._J0.shape).reshape(-1, 3, 3)
        rotary = rotary_inertia(Q[:, idx].reshape(-1, 3), V[:, idx].reshape(-1, 3), J0).energy
        T = 0.5 * np.einsum("ti,ti->t", V, V @ self._M_trans) + rotary.reshape(n_t, self.n_nodes).sum(axis=1)
        if gravity is None:
            return T, np.zeros(n_t)
        return T, -(Q @ self.gravity_force(gravity))

    # -- markers --------------------------------------------------------------------------------
    node_index = CorotationalBeam2D.node_index

    def point(self, q, s) -> np.ndarray:
        i = self.node_index(s)
        return np.array(q[6 * i:6 * i + 3], dtype=float)

    def point_jacobian(self, q, s) -> np.ndarray:
        i = self.node_index(s)
        J = np.zeros((3, self.n_q))
        J[:, 6 * i:6 * i + 3] = np.eye(3)
        return J

    def point_bias(self, q, v, s) -> np.ndarray:
        self.node_index(s)
        return np.zeros(3)

    def vector(self, q, u) -> np.ndarray:
        return rotation_vector_matrix(np.asarray(q, dtype=float)[3:6]) @ np.asarray(u, dtype=float)

    def vector_jacobian(self, q, u) -> np.ndarray:
        """d(R(psi_0) u)/dq: delta(R u) = delta phi x R u with delta phi = T(psi_0) delta psi_0, so
        -(R u)~ T(psi_0) on psi_0."""
        psi = np.asarray(q, dtype=float)[3:6]
        J = np.zeros((3, self.n_q))
        R, T = rotation_and_tangent(psi)
        J[:, 3:6] = -skew(R @ np.asarray(u, dtype=float)) @ T
        return J

    def vector_bias(self, q, v, u) -> np.ndarray:
        """(R u)'' at psi_0'' = 0: omega' x a + omega x (omega x a), a = R u, omega = T psi_0',
        omega' = (d/dt T) psi_0' (`tangent_operator_rate`)."""
        psi, pd = np.asarray(q, dtype=float)[3:6], np.asarray(v, dtype=float)[3:6]
        R, T, rate = rotation_tangent_and_rate(psi, pd)
        a = R @ np.asarray(u, dtype=float)
        w = T @ pd
        return np.cross(rate, a) + np.cross(w, np.cross(w, a))

    def rotation(self, q) -> np.ndarray:
        return rotation_vector_matrix(np.asarray(q, dtype=float)[3:6])

    def angular_velocity(self, q, v) -> np.ndarray:
        """Global angular velocity of node 0's section, omega = T(psi_0) psi_0'."""
        return tangent_operator(np.asarray(q, dtype=float)[3:6]) @ np.asarray(v, dtype=float)[3:6]

    def rigid_motion_generators(self, q, point) -> np.ndarray:
        """(n_q, 6): nodal positions move like points (e_k; e_k x (x - O)); a global rotation R(eps e)
        turns each section R(psi) into R(eps e) R(psi), whose angular velocity is e = T(psi) psi', so
        psi' = T(psi)^{-1} e (exact while |psi| < 2 pi; det T = 2 (1 - cos|psi|) / |psi|^2 vanishes at
        2 pi, so a node within 1e-3 of it is refused with a ValueError naming it)."""
        Q = np.asarray(q, dtype=float).reshape(-1, 6)
        size = np.linalg.norm(Q[:, 3:], axis=1)
        if np.any(size > 2.0 * np.pi * (1.0 - 1e-3)):
            k = int(np.argmax(size))
            raise ValueError(f"CorotationalBeam3D {self.name!r}: the rotation vector of node {k} has |psi| = "
                             f"{size[k]:.6g} rad, at the 2 pi where its tangent operator T(psi) is singular, so "
                             "the rate of psi under a global rotation is not defined there")
        X = np.zeros((self.n_nodes, 6, 6))
        X[:, :3] = rigid_motion_of_points(Q[:, :3], point)
        X[:, 3:, 3:] = np.linalg.inv(tangent_operator(Q[:, 3:]))
        return X.reshape(self.n_q, 6)

    def torque(self, q, T) -> np.ndarray:
        """A global torque on node 0's section: Q_psi0 = T(psi_0)^T T (its power T . omega)."""
        out = np.zeros(self.n_q)
        out[3:6] = tangent_operator(np.asarray(q, dtype=float)[3:6]).T @ np.asarray(T, dtype=float)
        return out

