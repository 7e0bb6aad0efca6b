"""Run a model: formulation -> integrator -> results in physical quantities."""
from __future__ import annotations

import logging
import time

import numpy as np

from .formulations import FORMULATIONS, Lagrange, energies
from .integrators import INTEGRATORS, simulate
from .model import Model
from .results import Results

__all__ = ["run", "output_times"]

log = logging.getLogger(__name__)


def output_times(t_end: float, dt_out: float, t0: float = 0.0) -> np.ndarray:
    """Equally spaced output times t0, t0 + dt_out, ..., t_end (t_end included when it falls on the grid)."""
    if not (np.isfinite(dt_out) and dt_out > 0):
        raise ValueError(f"`dt_out` must be a positive number, got {dt_out!r}")
    if not t_end > t0:
        raise ValueError(f"`t_end` must be greater than t0 = {t0}, got {t_end!r}")
    n = int(np.floor((t_end - t0) / dt_out + 1e-9))
    return t0 + dt_out * np.arange(n + 1)


class _Physics:
    """Accelerations, energies and powers from physical (delta, delta'), whatever the formulation."""

    def __init__(self, model: Model):
        self.model = model
        self._lagrange = Lagrange(model)

    def acceleration(self, t, delta, delta_dot):
        return self._lagrange._M_solver.solve(self._lagrange.generalized_force(t, delta, delta_dot))

    def energies(self, t, delta, delta_dot):
        return energies(self.model, t, delta, delta_dot, self.acceleration(t, delta, delta_dot))

    def powers(self, t, delta, delta_dot):
        md = self.model
        Kg_delta = md.K_dot(t, delta) - md.K_op @ delta
        return np.array([md.q_ext(t) @ delta_dot, delta_dot @ md.damping_force(delta_dot),
                         md.rigid_velocity_power(t, delta, delta_dot, self.acceleration(t, delta, delta_dot)),
                         -delta_dot @ Kg_delta])


def run(model: Model, *, formulation: str = "lagrange", method: str = "DOP853", t_end: float,
        dt_out: float | None = None, t_eval=None, t0: float = 0.0, delta0=None, delta_dot0=None,
        rtol: float = 1e-6, atol: float | None = None, h: float | None = None,
        compute_energies: bool = True, evaluation: str = "auto", metadata: dict | None = None,
        **options) -> Results:
    """Integrate the model's equations of motion and return `Results`.

    Parameters
    ----------
    model : Model
    formulation : str
        One of ``FORMULATIONS``: "lagrange", "gibbs-appell", "hamilton".
    method : str
        An integrator of ``flexmbs.integrators.INTEGRATORS``.
    t_end, dt_out / t_eval
        End time and output interval (or explicit output times) [s].
    delta0, delta_dot0 : ndarray (n,), optional
        Initial elastic DOFs and rates (default: undeformed, at rest in the frame).
    rtol, atol, h
        Tolerances (adaptive methods) or step (fixed-step methods).  ``atol`` defaults to
        ``rtol`` times 1e-3 of the static deflection scale, estimated as 1e-9 m.
    evaluation : str
        "terms": evaluate the formulation's equations term by term at every call; "compiled":
        its constant-coefficient form x' = A x + c + B f(t) (steady frames only); "auto":
        compiled for steady frames of small (dense) models.
    compute_energies : bool
        Also integrate the works of the loads, of damping and of the frame (costs three
        extra evaluations per step) and evaluate the energies at the outputs.
    """
    if formulation not in FORMULATIONS:
        raise ValueError(f"`formulation` must be one of {sorted(FORMULATIONS)}, got {formulation!r}")
    timings = {}
    tic = time.perf_counter()
    form = FORMULATIONS[formulation](model, evaluation=evaluation)
    n = model.n_dofs
    delta0 = np.zeros(n) if delta0 is None else np.asarray(delta0, dtype=float)
    delta_dot0 = np.zeros(n) if delta_dot0 is None else np.asarray(delta_dot0, dtype=float)
    for name, v in (("delta0", delta0), ("delta_dot0", delta_dot0)):
        if v.shape != (n,):
            raise ValueError(f"`{name}` must have shape ({n},) (the free DOFs), got {v.shape}")
    if t_eval is None:
        t_eval = output_times(t_end, dt_out if dt_out is not None else (t_end - t0) / 100, t0)
    x0 = form.state0(delta0, delta_dot0, t0)
    physics = _Physics(model)
    integrand = None
    if compute_energies:
        def integrand(t, x):
            return physics.powers(t, *form.physical(t, x))
    timings["build_s"] = time.perf_counter() - tic
    atol = 1e-9 * rtol / 1e-6 if atol is None else atol
    if method not in INTEGRATORS:
        raise ValueError(f"`method` must be one of {sorted(INTEGRATORS)}, got {method!r}")
    if INTEGRATORS[method].uses_tolerances:
        options.update(rtol=rtol, atol=atol)
    sol = simulate(form, (t0, float(t_end)), x0, method=method, t_eval=t_eval, h=h,
                   integrand=integrand, **options)
    timings["solve_s"] = sol.wall_time
    tic = time.perf_counter()
    delta, delta_dot = form.physical(sol.t, sol.x) if len(sol.t) else (np.zeros((0, n)),) * 2
    energy = {}
    if compute_energies and len(sol.t):
        rows = [physics.energies(t, d, v) for t, d, v in zip(sol.t, delta, delta_dot)]
        for key in ("T", "T2", "T1", "T0", "V", "V_geo", "V_g", "jacobi"):
            energy[key] = np.array([getattr(r, key) for r in rows])
        W = sol.integrals if sol.integrals is not None else np.zeros((len(sol.t), 4))
        energy.update(W_loads=W[:, 0], W_damping=W[:, 1], W_frame=W[:, 2], W_stiffening=W[:, 3])
    results = Results(
        t=sol.t, delta=delta, delta_dot=delta_dot,
        displacement=model.displacement_field(delta), velocity=model.displacement_field(delta_dot),
        nodes=model.mesh.points.copy(), energies=energy, status=sol.status, message=sol.message,
        stats=dict(n_rhs=sol.n_rhs, n_jac=sol.n_jac, n_lu=sol.n_lu, n_steps=sol.n_steps,
                   n_rejected=sol.n_rejected, **timings, post_s=time.perf_counter() - tic),
        metadata=dict(formulation=formulation, evaluation="compiled" if form._compiled else "terms",
                      method=method, order=sol.order, rtol=rtol, atol=atol, h=h,
                      units="SI (m, kg, s, N, rad)", **(metadata or {})))
    if not results.success:
        log.warning("run ended early (%s): %s", sol.status, sol.message)
    return results
