"""Results of a simulation in physical quantities, whatever the formulation's state."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .frozen import FrozenFields
from .rotations import pad3

__all__ = ["Results", "BodyResults", "contacts_by_name"]


def _pad3(a) -> np.ndarray:
    return pad3(np.asarray(a, dtype=float))


class BodyResults(FrozenFields):
    """Time histories of one body of a `flexmbs.System` run (`Results.bodies`).

    Every body has its reference frame in the global frame (planar bodies padded with z = 0, a
    rotation about z):

    Attributes
    ----------
    name : str
    kind : str
        "rigid" (`RigidBodyEP`, `RigidBodyNatural`, `RigidBody2D`, `TreeBody`), "point"
        (`PointMass`), "flexible" (`FlexibleBody`: floating frame + FE mesh) or "corotational"
        (a corotational beam: nodes, no frame).
    position : ndarray (n_t, 3)
        Reference point [m]: the origin of the body frame (a rigid body's reference point, a
        flexible body's frame origin R, a point mass's position).  NaN for "corotational".
    rotation : ndarray (n_t, 3, 3)
        Body -> global rotation matrix A.  Identity for a point mass, NaN for "corotational".
    euler_parameters : ndarray (n_t, 4) or None
        (e0, e1, e2, e3) of A, for the bodies whose coordinates hold them (`RigidBodyEP`,
        `FlexibleBody`); None otherwise.
    velocity : ndarray (n_t, 3)
        Velocity of the reference point [m/s], global components.
    angular_velocity : ndarray (n_t, 3)
        Angular velocity of the body frame [rad/s], global components (omega = 2 E(p) p' for
        Euler parameters, from A' A^T otherwise).
    nodes : ndarray (n_nodes, dim) or None
        "flexible": the undeformed node coordinates in the body frame; "corotational": the
        reference node positions in the global frame; "rigid" and "point": the body's display
        shape (n, 3) in body coordinates, relative to its reference point: the box of its mass
        and principal inertias (`flexmbs.io.paraview.display_shape`), a vertex for a point mass.
    cells : dict[str, ndarray]
        The cells of ``nodes`` by meshio cell type ("flexible": the mesh's; "corotational": its line
        elements; "rigid": one hexahedron, "point": one vertex).
    delta, delta_dot : ndarray (n_t, n) or None
        "flexible": the elastic coordinates and their rates.
    displacement : ndarray (n_t, n_nodes, dim) or None
        "flexible": nodal displacements relative to the frame, body-frame components [m];
        "corotational": node positions minus the reference ones, global components.
    elastic_velocity : ndarray (n_t, n_nodes, dim) or None
        "flexible": the nodal velocities relative to the frame, body-frame components [m/s].
    element_data : dict[str, ndarray (n_t, n_el, ...)]
        "flexible": as `Results.element_data` (axial force, or stress and von Mises, in the
        body frame).
    """

    # the dict fields (dict | None) default to a new {} each (flexmbs.frozen.new_dict_fields)
    def __init__(self, name: str, kind: str, position: np.ndarray, rotation: np.ndarray, velocity: np.ndarray,
                 angular_velocity: np.ndarray, euler_parameters: np.ndarray | None = None,
                 nodes: np.ndarray | None = None, cells: dict | None = None, delta: np.ndarray | None = None,
                 delta_dot: np.ndarray | None = None, displacement: np.ndarray | None = None,
                 elastic_velocity: np.ndarray | None = None, element_data: dict | None = None):
        self._set_fields(locals())

    def global_displacement(self) -> np.ndarray:
        """Nodal displacements in global components, A u (n_t, n_nodes, 3) [m] ("flexible"), or
        the corotational nodes' displacements."""
        if self.displacement is None:
            raise ValueError(f"body {self.name!r} ({self.kind}) has no nodal displacements")
        if self.kind == "corotational":
            return _pad3(self.displacement)
        return np.einsum("tij,tnj->tni", self.rotation, _pad3(self.displacement))

    def global_positions(self) -> np.ndarray:
        """Node positions in the global frame (n_t, n_nodes, 3) [m]: R + A (X + u) for a flexible
        body, R + A X of a rigid body's or point mass's shape, the node positions of a
        corotational beam."""
        if self.nodes is None:
            raise ValueError(f"body {self.name!r} ({self.kind}) has no nodes: use `position`")
        if self.kind == "corotational":
            return _pad3(self.nodes)[None] + _pad3(self.displacement)
        X = _pad3(self.nodes)[None]
        if self.displacement is not None:
            X = X + _pad3(self.displacement)
        return self.position[:, None, :] + np.einsum("tij,tnj->tni", self.rotation, np.broadcast_to(
            X, (len(self.position),) + X.shape[1:]))


class Results(FrozenFields):
    """Time histories of one run: of a `Model` on its prescribed frame, or of a `flexmbs.System`.

    Attributes
    ----------
    t : ndarray (n_t,)
        Output times [s].
    delta, delta_dot : ndarray (n_t, n)
        Free elastic DOFs [m, rad] and their rates: of the Model, or of the one flexible body of a
        System run that has exactly one (else shape (n_t, 0)).
    displacement, velocity : ndarray (n_t, n_nodes, dim)
        Nodal displacements [m] and velocities [m/s] in body-frame components, relative to the
        frame (same rule as ``delta``; else shape (n_t, 0, 3)).
    nodes : ndarray (n_nodes, dim)
        Undeformed node coordinates in the body frame [m] (same rule; else shape (0, 3)).
    energies : dict[str, ndarray (n_t,)]
        A Model's run: T, T2, T1, T0, V, V_geo, V_g, jacobi [J] and the works W_loads, W_damping,
        W_frame, W_stiffening [J] done from t[0] to t (see formulations._common.Energies).  A
        System's run: ``kinetic`` T, ``potential`` (gravity) V_g, ``strain`` U of the flexible
        bodies and ``total`` T + V_g + U [J] (`flexmbs.System.energy`), and (written when the run ends)
        the works W_loads, W_drivers, W_damping (dissipated) and W_stiffening [J] done from t[0] to t
        (`flexmbs.system_run.step_powers`, accumulated at every step): total - total[0] = W_loads + W_drivers + W_stiffening -
        W_damping (`energy_balance_error`).
    q, v : ndarray (n_t, n_q) or None
        A System's run: its coordinates and the velocities of the formulation's state: q' (index-1
        and index-3 formulations, gibbs-appell), the quasi-velocities u (kane, volterra) or the momenta
        p = M q' + C_q^T sigma (hamilton); ``q_dot`` then holds q'.  None for a Model's run.
    q_dot : ndarray (n_t, n_q) or None
        q' of a quasi-velocity formulation's run (else None: ``v`` is q').
    multipliers : ndarray (n_t, n_c) or None
        A System's run by index3-alpha: the Lagrange multipliers of its constraints (rows named by
        ``constraint_names``; `flexmbs.System.reactions` turns them into joint forces).  None for
        the other methods and for a run stopped before its end (they are written at the end).
    constraint_names : tuple[str, ...]
        The name of each multiplier's constraint, one per row of ``multipliers``.
    bodies : dict[str, BodyResults]
        A System's run: each body's motion and fields, by body name (`BodyResults`).
    joints : dict[str, ndarray (n_t, 3)]
        A System's run: the global position [m] of each joint (`Joint`, `PlanarJoint`; not the
        `AngleDriver`s), at its marker on its first body, by constraint name, in the System's
        order (`flexmbs.body_motion.joint_histories`); results-file datasets ``joints/NAME``.
    controls : dict[str, ndarray (n_t, ...)]
        A System's run with controllers (`flexmbs.control`): the value each held output acts with
        at every output time, by output name; results-file datasets ``controls/NAME``.
    contacts : dict[str, dict[str, ndarray (n_t, ...)]]
        A System's run with contact (`flexmbs.contact.Contact`): by contact name, its ``point``,
        ``normal_force``, ``friction_force`` (n_t, slots, 3), ``depth`` (n_t, slots), ``bodies``
        (n_t, slots, 2) and ``count`` (n_t,) (`flexmbs.contact.record`); results-file datasets
        ``contacts/NAME/KEY``.
    status, message : str
        'finished', 'failed' or 'diverged', and what happened; on failure the arrays hold
        the outputs computed before it.  Results loaded from a file of a run that did not
        end normally have 'interrupted' (Ctrl-C), 'error' (an exception) or 'incomplete'
        (killed, or still running).
    stats : dict
        Counters (n_rhs, n_jac, n_lu, n_steps, n_rejected; n_lin_iter: Krylov iterations of
        the implicit methods' linear solves; n_newton: Newton iterations of a System's run by the
        methods that count them, `flexmbs.integrators.Solution`) and wall times [s] per phase:
        build_s (formulation), solve_s (integration), output_s (writing the outputs to the
        results file while the integration runs), post_s (post-processing).
    metadata : dict
        flexmbs version, formulation, evaluation, integrator (``method``, ``order``), its
        tolerances (``rtol``, ``atol``, ``h``), units, the mesh (``mesh_source``,
        ``mesh_sha256``), the element and the model size, and what the caller adds (a case
        adds ``case`` and its resolved ``parameters``).
    cells : dict[str, ndarray (n_el, nodes per cell)]
        The cells of the model's element, by meshio cell type.
    element_data : dict[str, ndarray (n_t, n_el, ...)]
        Element quantities: ``axial_force`` [N] (tension positive) of bars and beams;
        ``stress`` [Pa] (Voigt order xx, yy, zz, yz, xz, xy, at the centroid) and
        ``von_mises`` [Pa] of solids.
    frame : dict[str, ndarray]
        The frame's prescribed motion at each output (`flexmbs.motion.frame_history`):
        ``origin`` (n_t, 3) [m] and ``origin_velocity`` (n_t, 3) [m/s] in global components,
        ``rotation`` (n_t, 3, 3) body -> global, ``euler_parameters`` (n_t, 4) (e0 first),
        ``omega`` (n_t, 3) [rad/s] in body components.  Empty for results read from a file
        written before flexmbs stored it.  A node's global position is
        ``origin + rotation @ (nodes + displacement)`` (see `global_positions`).

    See Also
    --------
    flexmbs.load_results : a `Results` from a results file (HDF5 or NPZ).
    """

    # the dict fields (dict | None) default to a new {} each (flexmbs.frozen.new_dict_fields)
    def __init__(self, t: np.ndarray, delta: np.ndarray | None = None, delta_dot: np.ndarray | None = None,
                 displacement: np.ndarray | None = None, velocity: np.ndarray | None = None,
                 nodes: np.ndarray | None = None, energies: dict | None = None, status: str = "finished",
                 message: str = "", stats: dict | None = None, metadata: dict | None = None,
                 cells: dict | None = None, element_data: dict | None = None, frame: dict | None = None,
                 q: np.ndarray | None = None, v: np.ndarray | None = None, q_dot: np.ndarray | None = None,
                 multipliers: np.ndarray | None = None, constraint_names: tuple = (), bodies: dict | None = None,
                 joints: dict | None = None, controls: dict | None = None, contacts: dict | None = None):
        self._set_fields(locals())
        # the one-body fields a System run without exactly one flexible body has not: empty
        n_t = len(self.t)
        empty = {"delta": (n_t, 0), "delta_dot": (n_t, 0), "displacement": (n_t, 0, 3), "velocity": (n_t, 0, 3),
                 "nodes": (0, 3)}
        for key, shape in empty.items():
            if self.__dict__[key] is None:
                self.__dict__[key] = np.zeros(shape)

    @property
    def success(self) -> bool:
        return self.status == "finished"

    def energy_balance_error(self) -> np.ndarray:
        """E(t) - E(t0) - (sum of the works W_* but W_damping, minus W_damping) [J], with E the total
        energy: a System run's ``total`` = T + V_g + U and its works W_loads, W_drivers, W_stiffening,
        W_damping (`flexmbs.system_run.step_powers`, accumulated at every step); a Model run's T + V + V_g and its works
        W_loads, W_frame, W_stiffening, W_damping.  Zero up to the integrator's error (and, for a
        System run, the trapezoidal rule of the works over the outputs)."""
        e = self.energies
        if not any(k.startswith("W_") for k in e):
            raise ValueError("these results hold no works (W_*): a run stopped before its end (the works are "
                             "written when it ends) or a results file written before flexmbs recorded them")
        E = e["total"] if "total" in e else e["T"] + e["V"] + e["V_g"]
        W = sum(w for k, w in e.items() if k.startswith("W_") and k != "W_damping") - e.get("W_damping", 0.0)
        return E - E[0] - W

    def global_positions(self) -> np.ndarray:
        """Node positions in the global frame, ``r = r_O + R (X + u)`` [m], shape (n_t, n_nodes, 3)
        (planar models padded with z = 0)."""
        if not self.frame:
            raise ValueError("these results hold no frame motion (a file written before flexmbs stored "
                             "it); run the case again to get global positions")
        X = _pad3(self.nodes)[None] + _pad3(self.displacement)
        return self.frame["origin"][:, None, :] + np.einsum("tij,tnj->tni", self.frame["rotation"], X)

    @classmethod
    def load(cls, path, run: str | None = None) -> Results:
        """Same as `flexmbs.load_results`."""
        from .io import load_results
        return load_results(path, run)

    def to_xarray(self):
        """The histories as an ``xarray.Dataset`` with coordinate ``t`` [s] and ``units`` on every
        variable: energies and works, multipliers (t, constraint), q and v, the bodies' motion
        (t, body, axis), a Model run's DOFs, nodal fields and frame motion
        (`flexmbs.io.tables.results_to_xarray`).  Needs the extra ``pip install "flexmbs[data]"``.

        Examples
        --------
        >>> ds = res.to_xarray()                                     # doctest: +SKIP
        >>> ds["position"].sel(body="crank", axis="x").plot()        # doctest: +SKIP
        """
        from .io.tables import results_to_xarray
        return results_to_xarray(self)

    def to_dataframe(self, what: str = "energies"):
        """One table of scalar histories as a ``pandas.DataFrame`` indexed by ``t`` [s]: "energies"
        (energies and works [J]), "multipliers" (a column per constraint name) or a body's name
        (its position, velocity, angular velocity and Euler parameters;
        `flexmbs.io.tables.results_to_dataframe`).  Needs ``pip install "flexmbs[data]"``."""
        from .io.tables import results_to_dataframe
        return results_to_dataframe(self, what)

    def show(self, **options):
        """Play the run's bodies in 3D: in a Jupyter notebook with pyvista's notebook backend (trame's
        when installed), else in a window, with a time slider and play/pause (`flexmbs.viewer.show`;
        ``options``: ``field``, ``time``, ``scale``, ``clim``, ``view``, ``window_size`` as in
        `flexmbs.viewer.Viewer`).  The same as ``flexmbs view DIR``; needs ``pip install "flexmbs[view]"``.

        Examples
        --------
        >>> res.show(field="von_mises", scale=20)                    # doctest: +SKIP
        """
        from .viewer import show
        return show(self, **options)

    def save_npz(self, path) -> Path:
        """Write t, displacement, nodes (the cases' contract) plus velocity, DOFs, energies
        (``energy_<key>``), the frame motion (``frame_<key>``), the cells (``cells_<type>``)
        and the element data (``element_<name>``); `flexmbs.load_results` reads it back."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {"t": self.t, "displacement": self.displacement, "nodes": self.nodes,
                  "velocity": self.velocity, "delta": self.delta, "delta_dot": self.delta_dot,
                  "status": np.array(self.status), "message": np.array(self.message)}
        arrays.update({f"energy_{k}": v for k, v in self.energies.items()})
        arrays.update({f"frame_{k}": v for k, v in self.frame.items()})
        arrays.update({f"cells_{k}": v for k, v in self.cells.items()})
        arrays.update({f"element_{k}": v for k, v in self.element_data.items()})
        np.savez_compressed(path, **arrays)
        return path


def contacts_by_name(fields: dict) -> dict:
    """{NAME: {KEY: array}} of the entries ``contacts/NAME/KEY`` of ``fields`` (the others ignored):
    `Results.contacts` of a run's fields or of a results file's datasets."""
    out: dict = {}
    for key, value in fields.items():
        if key.startswith("contacts/") and key.count("/") >= 2:
            _, name, what = key.split("/", 2)
            out.setdefault(name, {})[what] = value
    return out
