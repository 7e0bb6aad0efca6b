"""Results of a simulation in physical quantities, whatever the formulation's state."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .rotations import pad3

__all__ = ["Results"]


def _pad3(a) -> np.ndarray:
    return pad3(np.asarray(a, dtype=float))


@dataclass(frozen=True)
class Results:
    """Time histories of one run.

    Attributes
    ----------
    t : ndarray (n_t,)
        Output times [s].
    delta, delta_dot : ndarray (n_t, n)
        Free elastic DOFs [m, rad] and their rates.
    displacement, velocity : ndarray (n_t, n_nodes, dim)
        Nodal displacements [m] and velocities [m/s] in body-frame components, relative to the frame.
    nodes : ndarray (n_nodes, dim)
        Undeformed node coordinates in the body frame [m].
    energies : dict[str, ndarray (n_t,)]
        T, T2, T1, T0, V, V_geo, V_g, jacobi [J] and the works W_loads, W_damping, W_frame,
        W_stiffening [J] done from t[0] to t (see formulations._common.Energies).
    status, message : str
        'finished', 'failed' or 'diverged', and what happened; on failure the arrays hold
        the outputs computed before it.  Results loaded from a file of a run that did not
        end normally have 'interrupted' (Ctrl-C), 'error' (an exception) or 'incomplete'
        (killed, or still running).
    stats : dict
        Counters (n_rhs, n_jac, n_lu, n_steps, n_rejected; n_lin_iter: Krylov iterations of
        the implicit methods' linear solves) and wall times [s] per phase:
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

    t: np.ndarray
    delta: np.ndarray
    delta_dot: np.ndarray
    displacement: np.ndarray
    velocity: np.ndarray
    nodes: np.ndarray
    energies: dict
    status: str
    message: str
    stats: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)
    cells: dict = field(default_factory=dict)
    element_data: dict = field(default_factory=dict)
    frame: dict = field(default_factory=dict)

    @property
    def success(self) -> bool:
        return self.status == "finished"

    def energy_balance_error(self) -> np.ndarray:
        """(T + V + V_g)(t) - (T + V + V_g)(0) - (W_loads - W_damping + W_frame + W_stiffening) [J]."""
        e = self.energies
        E = e["T"] + e["V"] + e["V_g"]
        return E - E[0] - (e["W_loads"] - e["W_damping"] + e["W_frame"] + e["W_stiffening"])

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
