"""Run a `flexmbs.System`: formulation -> integrator -> `Results` with every body, streamed to a
results file as it runs.  `flexmbs.run` calls `run_system` for a System.

At each output the run records (`Results`, and the results file's datasets of the same names):

.. code:: text

    t, q, v                    v = q' (index-1, index-3, gibbs-appell), the quasi-velocities u (kane,
                               volterra) or the momenta p (hamilton); then q_dot = q' too
    energies                   kinetic T = 1/2 q'^T M q', potential V_g (gravity), strain U (flexible
                               bodies), total T + V_g + U  (`System.energy`)
    works                      W_loads, W_drivers, W_damping, W_stiffening from t0 [J], accumulated at
                               every step of the integrator (`step_powers`, `gauss_powers`); zero
                               without a quadrature for a System with no power source (`System.works_vanish`)
    bodies/NAME/...            each body's frame and fields (`flexmbs.body_motion`)
    contacts/NAME/...          the contact forces of each `flexmbs.contact.Contact` (`flexmbs.contact.record`)
    multipliers                (at the end) lam of index3-alpha's own solution, or the formulation's
                               lam at the outputs, computed for all outputs at once (`multipliers_at`:
                               the index-1 accelerations' of lagrange, udwadia-kalaba, gibbs-appell;
                               recovered by least squares of maggi, kane, volterra; sigma' of
                               Hamilton's momenta)

Outputs are written in blocks (`flexmbs.analysis.OutputBlocks`): the first at once, then at least
every ``FLUSH_EVERY_S`` of wall time and at the end, also when the run is stopped by an exception or Ctrl-C (the file then
says "interrupted" or "error"); a killed run leaves the blocks written before (status
"incomplete" when read).
"""
from __future__ import annotations

import logging
import time
from contextlib import ExitStack

import numpy as np

from . import progress as _progress
from .analysis import OutputBlocks, output_times, results_file_of
from .body_motion import body_histories, body_kind, body_series, body_static, one_body_fields
from .formulations.registry import choose
from .integrators import INTEGRATORS, simulate
from .integrators.simulate import step_used
from .lazy import isinstance_of
from .results import Results, contacts_by_name
from .rotations import ep_G

__all__ = ["run_system", "system_energies", "step_powers", "gauss_powers", "multipliers_at",
           "WORK_KEYS"]

log = logging.getLogger(__name__)
ENERGY_KEYS = ("kinetic", "potential", "strain", "total")


def system_energies(system, q, q_dot) -> dict[str, np.ndarray]:
    """``kinetic``, ``potential`` (gravity), ``strain`` and ``total`` [J] at each row of q, q'
    (n_t, n_q) (`System.energy_history`: the outputs of a block at once)."""
    T, V, U = system.energy_history(q, q_dot)
    return {"kinetic": T, "potential": V, "strain": U, "total": T + V + U}


WORK_KEYS = ("W_loads", "W_drivers", "W_damping", "W_stiffening")


def _physical_rows(system, form, t, x) -> tuple[np.ndarray, np.ndarray]:
    """(q, q') (N, n_q) each of the formulation's states x (N, n_state) at the times t (N,)."""
    q, q_dot = form.physical(t, x)
    return (np.asarray(q, dtype=float).reshape(len(t), system.n_q),
            np.asarray(q_dot, dtype=float).reshape(len(t), system.n_q))


def step_powers(system, form):
    """The powers of the works as `flexmbs.simulate`'s ``step_integrand``: ``powers(t (N,), x (N,
    n_state), lam (N, n_c) or None) -> (N, 4)``, the columns in the order of `WORK_KEYS`
    (`System.power_history`):

    .. code:: text

        P_loads      = q' . Q_loads                 applied loads, actuators, force laws
        P_drivers    = lam . C_t                    = -lam . C_q q', the rheonomic constraints' forces
        P_damping    = delta'^T C delta' + g'^T diag(c) g' + ...     dissipated (>= 0)
        P_stiffening = -delta' . K_geo delta        the "omega" stiffening (no potential)

    so that d(T + V_g + U)/dt = P_loads + P_drivers + P_stiffening - P_damping.  index3-alpha
    integrates them by the trapezoidal rule at every step with the multipliers of its own
    solution, on the compiled and the numpy path (`flexmbs.integrators.simulate.trapezoid_over_steps`)."""
    def powers(t, x, lam):
        t = np.asarray(t, dtype=float)
        q, q_dot = _physical_rows(system, form, t, np.asarray(x, dtype=float))
        P = system.power_history(t, q, q_dot, lam)
        return np.column_stack([P[key[2:]] for key in WORK_KEYS])
    return powers


def multipliers_at(form, t, x) -> np.ndarray:
    """lam (N, n_c) of the formulation ``form`` at the states x (N, n_state) and times t (N,) (the outputs
    of a run, the Gauss points of a step) in one pass: its ``multiplier_history``, the terms of all the
    states (one kernel call per chunk of states when the System is compiled), then stacked solves, never one
    solve per state: lagrange, udwadia-kalaba, gibbs-appell the index-1 accelerations' saddle point or
    pseudo-inverse (`flexmbs.formulations.index1`); maggi, kane, volterra the least squares of a^T lam = the
    residual of Lagrange's equations (maggi: Q - M q'') or of d'Alembert's on the bodies' parts (kane,
    volterra) with their own q'' (`flexmbs.formulations.maggi`, `.quasi_velocities`); hamilton sigma' of its
    momenta (`flexmbs.formulations.hamilton_system`).  A formulation without
    ``multiplier_history`` raises a TypeError naming it."""
    t, x = np.asarray(t, dtype=float).reshape(-1), np.asarray(x, dtype=float)
    history = getattr(form, "multiplier_history", None)
    if history is None:
        raise TypeError(f"multipliers_at: formulation {getattr(form, 'name', type(form).__name__)!r} "
                        f"({type(form).__name__}) has no multiplier_history(t, x), the multipliers of all the "
                        "outputs at once; the System's formulations that give them: lagrange, udwadia-kalaba, "
                        "gibbs-appell, hamilton, maggi, kane, volterra")
    return history(t, x)


def gauss_powers(system, form):
    """The powers of `step_powers` as `flexmbs.simulate`'s ``integrand`` of the methods without
    multipliers of their own (RK45, DOP853, Radau, BDF, midpoint, ...): integrated by Gauss-Legendre on
    the dense output of every step with the fewest points whose error stays below the method's
    (`flexmbs.integrators.simulate.step_rule`: 2 for the fixed-step second-order methods, 3 for AB4,
    5 for the adaptive ones, and 5 whatever the method with a force element that is not ``smooth``, a
    contact or a joint stop, whose power has a kink within a step), the multipliers of the drivers' power recovered
    at the points of a step at once (`multipliers_at`, only with a rheonomic constraint; without it P_drivers is NaN)."""
    powers = step_powers(system, form)
    recover = hasattr(form, "multipliers") and any(c.rheonomic for c in system.constraints)
    smooth = all(getattr(f, "smooth", True) for f in system.force_elements)

    def integrand(t, x):
        one = np.ndim(t) == 0
        t, x = np.atleast_1d(np.asarray(t, dtype=float)), np.atleast_2d(np.asarray(x, dtype=float))
        P = powers(t, x, multipliers_at(form, t, x) if recover else None)
        return P[0] if one else P
    integrand.vectorized = True
    integrand.smooth = smooth                 # contacts and stops: the most Gauss points (`step_rule`)
    return integrand


def _fields(system, form, T, X, controls=None, W=None) -> dict:
    """Everything recorded at the outputs T (N,) of the states X (N, n_state), in one batch: t, q, v
    (q_dot), the energies, the works W (N, 4) integrated to them (`WORK_KEYS`), each body's series
    ``bodies/NAME/...``, each joint's position ``joints/NAME``
    (`flexmbs.body_motion.joint_histories`) and, with controllers, the value each output holds
    ``controls/NAME`` (`flexmbs.control.ControlLoop.held`)."""
    from .body_motion import joint_histories
    q, q_dot = _physical_rows(system, form, T, X)
    fields = {"t": T, "q": q, "v": X[:, system.n_q:]}
    # every block of a state that is not (q, q') has q_dot, also one where v = q' by chance (a start at rest)
    if (getattr(form, "second_state", "delta_dot") != "delta_dot" or fields["v"].shape != q_dot.shape
            or not np.array_equal(fields["v"], q_dot)):
        fields["q_dot"] = q_dot
    fields["energies"] = system_energies(system, q, q_dot)
    if W is not None:
        fields["works"] = {key: W[:, i] for i, key in enumerate(WORK_KEYS)}
    bodies = body_histories(system, q, q_dot)
    fields.update(body_series(bodies))
    fields.update({f"joints/{name}": r for name, r in joint_histories(system, q).items()})
    if any(isinstance_of(f, "flexmbs.contact.element:Contact") for f in system.force_elements):
        from .contact.record import contact_fields          # contact forces, loaded for a System with contacts
        fields.update(contact_fields(system, q, q_dot))
    if controls is not None:
        fields.update(controls.held(T))
    return fields, bodies


def _physical_state(form):
    """(t, x) -> (q, q') of one state x of the formulation ``form`` (what the controllers sense)."""
    def state(t, x):
        q, q_dot = form.physical(t, np.asarray(x, dtype=float)[None])
        return np.asarray(q, dtype=float).reshape(-1), np.asarray(q_dot, dtype=float).reshape(-1)
    return state


def prescribed_model(system):
    """The Model of a System that is a Model on its prescribed frame, else None: one `FlexibleBody`
    (reference conditions "supports") and one `PrescribedFrame` driving it along its own Model's
    motion (the same object), the System's gravity the Model's, and the body's stiffening the
    Model's ("omega" when the Model has a geometric stiffness, else "none").  Such a System runs by
    elimination of the frame (`flexmbs.run` of the Model: its formulations, method "exact" and the
    affine and sparse steps), which keeps the angular and origin accelerations of the frame in the
    geometric stiffness that the floating frame's "omega" stiffening leaves out."""
    if len(system.bodies) != 1 or not isinstance_of(system.bodies[0], "flexmbs.bodies.flexible:FlexibleBody"):
        return None                                 # (no import of the flexible bodies for a System without one)
    from .constraints.prescribed import PrescribedFrame
    body = system.bodies[0]
    given = system.constraints[system.n_internal:]
    if len(given) != 1 or not isinstance(given[0], PrescribedFrame) or body.reference != "supports":
        return None
    model = body.model
    gravity = np.zeros(3) if system.gravity is None else np.asarray(system.gravity, dtype=float)
    if given[0].motion is not model.motion or not np.array_equal(gravity, model.gravity):
        return None
    if body.stiffening != ("omega" if model.stiffening else "none"):
        return None
    return model


def prescribed_as_system_results(res: Results, body_name: str) -> Results:
    """A Model run's `Results` as those of its System: q = (R, p, delta), v = (R', p', delta')
    (p' = 1/2 G(p)^T omega_body), the body's `BodyResults`, and the energies kinetic T, potential V_g,
    strain V and total T + V + V_g added to the Model's."""
    from .results import BodyResults
    f = res.frame
    p = f["euler_parameters"]
    omega = f["omega"]                                       # body components
    p_dot = 0.5 * np.einsum("tij,ti->tj", ep_G(p), omega)
    q = np.concatenate([f["origin"], p, res.delta], axis=1)
    v = np.concatenate([f["origin_velocity"], p_dot, res.delta_dot], axis=1)
    body = BodyResults(name=body_name, kind="flexible", position=f["origin"], rotation=f["rotation"],
                       velocity=f["origin_velocity"], angular_velocity=np.einsum("tij,tj->ti", f["rotation"], omega),
                       euler_parameters=p, nodes=res.nodes, cells=res.cells, delta=res.delta,
                       delta_dot=res.delta_dot, displacement=res.displacement, elastic_velocity=res.velocity,
                       element_data=res.element_data)
    energies = dict(res.energies)
    if "T" in energies:
        energies.update(kinetic=energies["T"], potential=energies["V_g"], strain=energies["V"],
                        total=energies["T"] + energies["V"] + energies["V_g"])
    return res.replace(q=q, v=v, bodies={body_name: body}, energies=energies)


def _check_names(system) -> None:
    for b in system.bodies:
        if "/" in b.name or b.name in ("", ".", ".."):
            raise ValueError(f"body name {b.name!r}: a System run stores each body under its name in the results "
                             "file; give the body a name without '/'")


def run_system(system, *, formulation: str = "auto", method: str | None = None, t_end: float,
               dt_out: float | None = None, t_eval=None, t0: float = 0.0, q0=None, v0=None, assemble: bool = False,
               rtol: float = 1e-6, atol: float | None = None, h: float | None = None,
               formulation_options: dict | None = None, metadata: dict | None = None, store=None,
               name: str | None = None, controllers=None, **options) -> Results:
    """Integrate a `flexmbs.System` and return its `Results` (see `flexmbs.run`).

    Parameters
    ----------
    system : flexmbs.System
    formulation : str, default "auto"
        A System's formulation of `flexmbs.formulations.registry` ("index3", "lagrange",
        "udwadia-kalaba", "maggi", "kane", "volterra", "volterra-reduced"); "auto": "index3" for
        methods "index3-alpha" (and its variants "index3-alpha-adaptive", "hht", "newmark"), "rattle" and
        "radau-dae" (`registry.INDEX3_METHODS`), else "lagrange".
    method : str, optional
        An integrator (`flexmbs.integrators.INTEGRATORS`); default "index3-alpha" (give ``h``).
    t_end, dt_out, t_eval, t0, rtol, atol, h
        As `flexmbs.run`: the outputs, the tolerances of the adaptive methods (``atol`` default
        ``1e-3 * rtol``), the step of the fixed-step ones.
    q0, v0 : array (n_q,), optional
        Initial coordinates and velocities; default the bodies' own.  They must satisfy the
        constraints (else `flexmbs.system.InconsistentStateError`) unless ``assemble=True``, which
        projects them onto the constraints with a warning (`System.initial_state`).
    formulation_options : dict, optional
        Options of the formulation (e.g. ``stabilization="baumgarte"`` of lagrange, ``Y``, ``Z``
        of the quasi-velocity forms).
    metadata, store, name
        As `flexmbs.run`: added metadata, the results file (path, `flexmbs.io.ResultsFile`, None:
        the active `flexmbs.io.recording`, False: none) and the run's name in it.
    controllers : list of flexmbs.control.Controller, optional
        Digital controllers sampled at their periods, their outputs held in between (method
        "index3-alpha", formulation "index3"; `flexmbs.control`).  ``h`` is shrunk to divide the
        periods.  Each controller keeps its samples (``Controller.record``); the results file gets
        the held value of each output at every output time (``controls/NAME``), the metadata
        ``controllers`` (name, period, sensors, outputs).
    **options
        Passed to `flexmbs.simulate` (``rho_inf``, ``progress``, ``on_output``, ...).
    """
    from .system import System
    if not isinstance(system, System):
        raise TypeError(f"`system` must be a flexmbs.System, got {type(system).__name__}")
    _check_names(system)
    model = prescribed_model(system)
    if (model is not None and controllers is None and formulation != "index3"
            and not (formulation == "auto" and method == "index3-alpha")):
        return _run_prescribed(system, model, formulation, method, t_end=t_end, dt_out=dt_out, t_eval=t_eval, t0=t0,
                               q0=q0, v0=v0, assemble=assemble, rtol=rtol, atol=atol, h=h,
                               formulation_options=formulation_options, metadata=metadata, store=store, name=name,
                               **options)
    entry, method = choose(formulation, method, INTEGRATORS)
    for f in system.force_elements:                  # contact refuses the methods that cannot take it
        why = f.refusal(method) if hasattr(f, "refusal") else None
        if why:
            raise ValueError(f"`method` {method!r} cannot run force element {f.name!r} ({type(f).__name__}): {why}; "
                             "use an adaptive method (RK45, DOP853, Radau, BDF, index3-alpha-adaptive)")
    timings = {}
    tic = time.perf_counter()
    form = entry.system(system, **(formulation_options or {}))
    controls = None
    if controllers is not None:
        from .control import ControlLoop
        if method != "index3-alpha":
            raise ValueError(f"`controllers`: digital controllers run with method 'index3-alpha', got method "
                             f"{method!r}")
        controls = ControlLoop(system, controllers, _physical_state(form))
    x0 = form.state0(q0, v0, t0, assemble=assemble)
    if t_eval is None:
        t_eval = output_times(t_end, dt_out if dt_out is not None else (t_end - t0) / 100, t0)
    timings["build_s"] = time.perf_counter() - tic
    atol = 1e-3 * rtol if atol is None else atol
    if INTEGRATORS[method].uses_tolerances:
        options.update(rtol=rtol, atol=atol)
    if method != "index3-alpha":
        from .stiffness import check_explicit
        check_explicit(system, method, (t0, float(t_end)))       # a stiff flexible body: say so before hours
    from . import __version__
    h_used = step_used(method, h, t0, t_eval, warn=False, periods=None if controls is None else controls.periods)
    names = system.row_names()
    meta = dict(flexmbs_version=__version__, formulation=entry.name, method=method, order=INTEGRATORS[method].order,
                **({"rtol": rtol, "atol": atol} if INTEGRATORS[method].uses_tolerances else {}), h=h_used,
                **({"h_requested": h} if h_used != h else {}), units="SI (m, kg, s, N, rad)",
                system={"n_q": system.n_q, "n_c": system.n_c, "bodies": {b.name: body_kind(b) for b in system.bodies},
                        "constraint_names": names, "velocities": entry.state_velocity},
                **({"controllers": [c.describe() for c in controls.controllers]} if controls is not None else {}),
                **(metadata or {}))
    results_file = results_file_of(store)
    inherited = results_file.metadata if results_file is not None else {}
    meta = {**inherited, **meta}
    name = name or meta.get("run") or meta.get("case") or inherited.get("run") or inherited.get("case") or "run"
    log.info("run %s: %s + %s, %d coordinates, %d constraints, t = %g .. %g s, %d outputs%s", name, entry.name, method,
             system.n_q, system.n_c, t0, float(t_end), len(t_eval),
             f", streamed to {results_file.path}" if results_file is not None else "")
    reporter = _progress.current()
    if options.get("progress") is True:
        reporter = _progress.Display()
        del options["progress"]

    kept: list[dict] = []
    last_bodies = [None]
    writer = None
    # the works: the method's own multipliers at its steps, else Gauss on its dense output, or zero (no quadrature)
    vanish = not INTEGRATORS[method].has_multipliers and system.works_vanish()

    def record(T, X, W=None):
        """Fields of a block of outputs (and their works W): kept, and appended to the results file."""
        if vanish:
            W = np.zeros((len(T), len(WORK_KEYS)))
        fields, last_bodies[0] = _fields(system, form, T, X, controls, W)
        if writer is not None:
            writer.append_many(fields)
        kept.append(fields)

    blocks = OutputBlocks(record, options.pop("on_output", None), integrals=not vanish)   # the works with the outputs

    with ExitStack() as stack:
        if controls is not None:         # stopped when the run's outputs, works included, are done
            stack.callback(controls.stop)
        if reporter is not None and "progress" not in options:
            options["progress"] = stack.enter_context(reporter.task(name, t0, float(t_end)))
        one, first = _fields(system, form, np.array([float(t0)]), x0[None])
        per_output = _bytes(one) + 8 * (system.n_c + len(WORK_KEYS))  # kept and written per output
        # the works, accumulated at every step and streamed with the outputs: the trapezoid over the steps with
        # the method's own multipliers (index3-alpha, rattle), else Gauss on the dense output of every step
        if INTEGRATORS[method].has_multipliers:
            options["step_integrand"] = step_powers(system, form)
        elif not vanish:
            options["integrand"] = gauss_powers(system, form)
        if results_file is not None:
            writer = stack.enter_context(results_file.open_run(
                name, nodes=np.zeros((0, 3)), cells={}, metadata=meta, static=body_static(first)))
        try:
            # the outputs' size checked against memory and disk before the run (`integrators.budget`)
            sol = simulate(form, (t0, float(t_end)), x0, method=method, t_eval=t_eval, h=h,
                           on_outputs=blocks.on_outputs,
                           keep_bytes=per_output, controls=controls,
                           write_to=None if results_file is None else (results_file.path, per_output), **options)
            inside = blocks.seconds      # output work done within sol.wall_time
        finally:
            blocks.flush()               # the outputs so far are kept, even on an exception
        timings["solve_s"] = sol.wall_time - inside
        timings["output_s"] = blocks.seconds
        tic = time.perf_counter()
        lam = sol.lam
        recovers = ("lagrange", "udwadia-kalaba", "gibbs-appell", "hamilton", "maggi", "kane", "volterra")
        if lam is None and entry.name in recovers and len(sol.t):
            lam = multipliers_at(form, sol.t, sol.x)
        kept = _joined(kept)
        bodies = _joined_bodies(system, kept, last_bodies[0])
        stats = dict(n_rhs=sol.n_rhs, n_jac=sol.n_jac, n_lu=sol.n_lu, n_steps=sol.n_steps,
                     n_rejected=sol.n_rejected, n_lin_iter=sol.n_lin_iter, n_newton=sol.n_newton, **timings,
                     post_s=time.perf_counter() - tic)
        meta.update(order=sol.order, **({"kernel": sol.kernel} if sol.kernel else {}))
        if sol.kernel_reason:            # e.g. a load of the state: say why the run took the numpy path
            meta["kernel_reason"] = sol.kernel_reason
            log.info("run %s: %s ran on the numpy path: %s", name, method, sol.kernel_reason)
        n_q = system.n_q
        results = Results(
            t=sol.t, q=kept.get("q", np.zeros((0, n_q))), v=kept.get("v", np.zeros((0, n_q))),
            q_dot=kept.get("q_dot"), multipliers=lam, constraint_names=tuple(names), bodies=bodies,
            joints={k[len("joints/"):]: v for k, v in kept.items() if k.startswith("joints/")},
            controls={k[len("controls/"):]: v for k, v in kept.items() if k.startswith("controls/")},
            contacts=contacts_by_name(kept),
            energies={k: kept["energies"][k] for k in ENERGY_KEYS} if "energies" in kept else {},
            status=sol.status, message=sol.message, stats=stats, metadata=meta, **one_body_fields(bodies))
        if "works" in kept:
            results.energies.update(kept["works"])
            if np.isnan(kept["works"]["W_drivers"][-1]):
                meta["works"] = (f"W_drivers is NaN: formulation {entry.name!r} gives no multipliers, so the "
                                 "work of the drivers (lam . C_t) is not known")
        stats["post_s"] = time.perf_counter() - tic
        if writer is not None:
            writer.finish(sol.status, sol.message, stats, series=None if lam is None else {"multipliers": lam})
            results.metadata.update(run=writer.name, file=str(results_file.path))
            results_file.keep_last(writer.name, results)
    if not results.success:
        log.warning("run ended early (%s): %s", sol.status, sol.message)
    return results


def _run_prescribed(system, model, formulation, method, *, q0, v0, assemble, formulation_options, **kwargs) -> Results:
    """A Model on its prescribed frame, given as a System, run by elimination of the frame."""
    from .analysis import run
    from .formulations import FORMULATIONS
    formulation = "lagrange" if formulation == "auto" else formulation
    if formulation not in FORMULATIONS:
        raise ValueError(f"`formulation` {formulation!r}: this System is a Model on its prescribed frame "
                         f"(one FlexibleBody, one PrescribedFrame along its Model's motion), which runs by "
                         f"elimination of the frame with {sorted(FORMULATIONS)}, or as an index-3 DAE with "
                         f"formulation 'index3' (method 'index3-alpha')")
    body = system.bodies[0]
    delta0 = delta_dot0 = None
    if q0 is not None or v0 is not None or assemble:
        q0, v0 = system.initial_state(kwargs.get("t0", 0.0), q0, v0, assemble=assemble)
        delta0, delta_dot0 = q0[7:], v0[7:]
    res = run(model, formulation=formulation, method=method, delta0=delta0, delta_dot0=delta_dot0,
              **(formulation_options or {}), **kwargs)
    res.metadata.update(prescribed_frame=body.name)
    return prescribed_as_system_results(res, body.name)


def _bytes(fields: dict) -> int:
    """Bytes of one output's fields (tables column by column)."""
    return sum(_bytes(v) if isinstance(v, dict) else np.asarray(v).nbytes for v in fields.values())


def _joined(blocks: list[dict]) -> dict:
    """The blocks' fields joined along the outputs (tables column by column)."""
    if not blocks:
        return {}
    out = {}
    for key, value in blocks[0].items():
        if isinstance(value, dict):
            out[key] = {c: np.concatenate([b[key][c] for b in blocks]) for c in value}
        else:
            out[key] = np.concatenate([b[key] for b in blocks])
    return out


def _joined_bodies(system, kept: dict, last) -> dict:
    """{name: BodyResults} of all outputs from the joined series (`body_motion.bodies_from_series`)."""
    from .body_motion import bodies_from_series
    kinds = {b.name: body_kind(b) for b in system.bodies}
    n_t = len(kept.get("t", ()))
    static = body_static(last) if last is not None else {}
    return bodies_from_series(kinds, {k: v for k, v in kept.items() if k.startswith("bodies/")}, static, n_t)
