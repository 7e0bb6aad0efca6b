"""Run a model: formulation -> integrator -> results in physical quantities."""
from __future__ import annotations

import logging
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import progress as _progress
from .formulations import FORMULATIONS, energies
from .integrators import INTEGRATORS, simulate
from .integrators.budget import release_freed_memory
from .integrators.simulate import step_used
from .lazy import isinstance_of
from .motion import FRAME_KEYS, frame_history
from .stiffness import check_explicit
from .results import Results
from .validity import RangeCheck

if TYPE_CHECKING:
    from .io.store import ResultsFile
    from .model import Model            # not imported to run a System: a Model exists only once its module is loaded

__all__ = ["run", "output_times", "element_data", "mesh_sha256", "bytes_per_output", "results_file_of",
           "OutputBlocks"]

log = logging.getLogger(__name__)

ENERGY_KEYS = ("T", "T2", "T1", "T0", "V", "V_geo", "V_g", "jacobi")
WORK_KEYS = ("W_loads", "W_damping", "W_frame", "W_stiffening")
FLUSH_EVERY_S = 0.5            # pending outputs are written to the results file at least this often
VOIGT = ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))      # xx, yy, zz, yz, xz, xy


def output_times(t_end: float, dt_out: float, t0: float = 0.0) -> np.ndarray:
    """Output times t0, t0 + dt_out, t0 + 2 dt_out, ... and always t_end.

    When ``dt_out`` does not divide ``t_end - t0`` the last interval is shorter: the state at
    ``t_end`` is always an output.  ``dt_out`` larger than ``t_end - t0`` is refused (a run
    would have no output but its start).
    """
    try:
        dt_out, t_end, t0 = float(dt_out), float(t_end), float(t0)
    except (TypeError, ValueError):
        raise ValueError(f"`t_end`, `dt_out` and `t0` must be numbers, got {t_end!r}, {dt_out!r}, {t0!r}") from None
    if not (np.isfinite(dt_out) and dt_out > 0):
        raise ValueError(f"`dt_out` must be a positive number, got {dt_out!r}")
    if not (np.isfinite(t_end) and t_end > t0):
        raise ValueError(f"`t_end` must be a finite time greater than t0 = {t0}, got {t_end!r}")
    span = t_end - t0
    if dt_out > span * (1 + 1e-9):
        raise ValueError(f"`dt_out` = {dt_out:g} s exceeds the simulated time t_end - t0 = {span:g} s: "
                         "the run would have no output after its start; give dt_out <= t_end - t0")
    n = int(np.floor(span / dt_out + 1e-9))
    t = np.minimum(t0 + dt_out * np.arange(n + 1), t_end)       # no last time past t_end by round-off
    return t if t[-1] == t_end else np.append(t, t_end)


class _Physics:
    """Accelerations, energies and powers from physical (delta, delta'), whatever the formulation.

    The ``*_many`` methods take N states at once (t (N,), delta and delta' (N, n)); for steady
    models they are batched matrix products (`SteadyEnergies`), otherwise a loop over states.
    """

    def __init__(self, model: Model):
        from .formulations.lagrange import Lagrange

        self.model = model
        self._lagrange = Lagrange(model)
        self._steady = None
        if model.steady:
            from .formulations.steady_energies import SteadyEnergies
            self._steady = SteadyEnergies(model)

    def acceleration(self, t, delta, delta_dot):
        return self._lagrange.solve_mass(self._lagrange.generalized_force(t, delta, delta_dot))

    def energies(self, t, delta, delta_dot):
        return energies(self.model, t, delta, delta_dot, self.acceleration(t, delta, delta_dot))

    def powers(self, t, delta, delta_dot):
        md = self.model
        Kg_delta = md.K_dot(t, delta) - md.K_op @ delta
        return np.array([md.q_ext(t) @ delta_dot, delta_dot @ md.damping_force(delta_dot),
                         md.rigid_velocity_power(t, delta, delta_dot, self.acceleration(t, delta, delta_dot)),
                         -delta_dot @ Kg_delta])

    def load_factors_many(self, t: np.ndarray) -> np.ndarray:
        """f(t) (N, k) of the model's loads (`Model.load_factor_history`)."""
        return self.model.load_factor_history(t)

    def all_many(self, t, delta, delta_dot) -> dict[str, np.ndarray]:
        """Energies and powers (each (N,)) at N states."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        if self._steady is not None:
            return self.all_at_loads(self.load_factors_many(t), delta, delta_dot)
        rows = [self.energies(ti, d, v) for ti, d, v in zip(t, delta, delta_dot)]
        return {k: np.array([getattr(r, k) for r in rows]) for k in
                (*ENERGY_KEYS, "P_loads", "P_damping", "P_frame", "P_stiffening")}

    def all_at_loads(self, F, delta, delta_dot) -> dict[str, np.ndarray]:
        """Energies and powers (each (N,)) of a steady model at N states with the load factors
        F (N, k) (the values of the loads' time functions): delta'' = A[n:] x + c[n:] + B[n:] f."""
        A, c, B = self._lagrange.linear_system()
        n = self.model.n_dofs
        acc = (np.concatenate([delta, delta_dot], axis=1) @ A[n:].T + c[n:]
               + (F @ B[n:].T if B.shape[1] else 0.0))
        return self._steady.evaluate(delta, delta_dot, acc, F)

    def powers_many(self, t, delta, delta_dot) -> np.ndarray:
        """(N, 4) powers of the loads, damping, frame and stiffening (the integrands of WORK_KEYS)."""
        if self._steady is None:
            return np.array([self.powers(ti, d, v) for ti, d, v in zip(np.atleast_1d(t), delta, delta_dot)])
        return self.powers_at_loads(self.load_factors_many(np.atleast_1d(t)), delta, delta_dot)

    def power_forms(self, form, X, F, one) -> np.ndarray:
        """Q (4, m, m) with the powers of a steady model (`powers_at_loads`) = y^T Q_c y, where
        the formulation's state is x = X y ((n_state, m)), the load factors f = F y ((k, m))
        and one . y = 1: (delta, delta') = physical(x) is affine in x (its value at 0 and at
        the unit states), delta'' = A[n:] (delta, delta') + c[n:] + B[n:] f as in
        `all_at_loads`; the forms come from the model's matrices (`SteadyEnergies.power_forms`)."""
        A, c, B = self._lagrange.linear_system()
        n, n_state = self.model.n_dofs, X.shape[0]
        d0, v0 = (a[0] for a in form.physical(np.zeros(1), np.zeros((1, n_state))))
        dI, vI = form.physical(np.zeros(n_state), np.eye(n_state))           # rows: images of e_i
        D = (dI - d0).T @ X + np.outer(d0, one)
        V = (vI - v0).T @ X + np.outer(v0, one)
        Acc = A[n:, :n] @ D + A[n:, n:] @ V + np.outer(c[n:], one) + (B[n:] @ F if B.shape[1] else 0.0)
        return self._steady.power_forms(D, V, Acc, F, one)

    def powers_at_loads(self, F, delta, delta_dot) -> np.ndarray:
        """(N, 4) powers of a steady model at N states with the load factors F (N, k): a
        quadratic polynomial of (delta, delta', F), as `all_at_loads`."""
        e = self.all_at_loads(F, delta, delta_dot)
        return np.stack([e["P_loads"], e["P_damping"], e["P_frame"], e["P_stiffening"]], axis=-1)


class _Kept:
    """The fields of a streamed run's outputs, filled block by block into one array per field
    allocated for all ``capacity`` outputs at its first block (``np.empty``: the operating
    system gives the memory as it is written), so the blocks are never concatenated (which
    held a field twice).  A nested dict (the energies) is kept under "key/name"."""

    def __init__(self, capacity: int):
        self.capacity, self.n, self._arrays = capacity, 0, {}

    def append(self, fields: dict) -> None:
        flat = {}
        for key, value in fields.items():
            flat.update({f"{key}/{k}": v for k, v in value.items()} if isinstance(value, dict) else {key: value})
        count = 0
        for key, value in flat.items():
            value = np.asarray(value)
            count = len(value)
            if self.n + count > self.capacity:          # more outputs than announced: grow (a copy)
                self._grow(2 * (self.n + count))
            if key not in self._arrays:
                self._arrays[key] = np.empty((self.capacity, *value.shape[1:]), dtype=value.dtype)
            self._arrays[key][self.n:self.n + count] = value
        self.n += count

    def _grow(self, capacity: int) -> None:
        self.capacity = capacity
        for key, a in self._arrays.items():
            grown = np.empty((capacity, *a.shape[1:]), dtype=a.dtype)
            grown[:self.n] = a[:self.n]
            self._arrays[key] = grown

    def keys(self) -> list[str]:
        return list(self._arrays)

    def take(self, key: str, shape: tuple = ()) -> np.ndarray:
        """The filled rows of one field, handed over (no copy; the store forgets it)."""
        if key not in self._arrays:
            return np.zeros((0, *shape))
        return self._arrays.pop(key)[:self.n]


class OutputBlocks:
    """A run's outputs handed on in blocks: ``on_output(t, x)`` and ``on_outputs(T, X)`` (simulate's
    hooks: one output, a block of outputs) collect them and ``flush()`` passes the pending ones to
    ``record(T (N,), X (N, n_state))`` in one call (with the integrals w of simulate's
    ``on_output(t, x, w)`` / W of ``on_outputs(T, X, W)`` when made with ``integrals=True``:
    ``record(T, X, W (N, k))``).  A block is recorded at the first output, then at least every
    ``FLUSH_EVERY_S`` of wall time, and before a user's ``on_output`` sees an output; the caller
    flushes at the end (also on an exception).
    ``seconds``: wall time spent in ``record``; ``n``: outputs recorded."""

    def __init__(self, record, user_on_output=None, integrals: bool = False):
        self._record, self._user, self._integrals = record, user_on_output, integrals
        self._pending: list = []
        self._last = time.perf_counter()
        self.seconds = 0.0
        self.n = 0

    def flush(self) -> None:
        """Record the pending blocks (T, X, W) (a single output is a block of one), stacked in order."""
        if not self._pending:
            return
        tic = time.perf_counter()

        def stacked(i):
            return np.concatenate([block[i] for block in self._pending]).astype(float, copy=False)
        T, X = stacked(0), stacked(1)
        W = stacked(2) if self._integrals else None
        self._pending.clear()
        self._record(T, X) if W is None else self._record(T, X, W)
        self.n += len(T)
        self._last = time.perf_counter()
        self.seconds += self._last - tic

    def on_output(self, t, x, w=None) -> None:
        self._pending.append(([t], [x], [w]))          # a block of one output
        if self._user is not None or not self.n or time.perf_counter() - self._last > FLUSH_EVERY_S:
            self.flush()
        if self._user is not None:
            self._user(t, x)

    def on_outputs(self, T, X, W=None) -> None:
        """A block of outputs (simulate's ``on_outputs``): T (N,), X (N, n_state), W (N, k) or None; a
        user's ``on_output`` sees them one by one, each after the block is recorded."""
        if self._user is not None:
            for k in range(len(T)):
                self.on_output(float(T[k]), X[k], None if W is None else W[k])
            return
        self._pending.append((T, X, W))
        if not self.n or time.perf_counter() - self._last > FLUSH_EVERY_S:
            self.flush()


def bytes_per_output(model: Model) -> int:
    """Bytes of one output of `run` (kept in `Results` and written to the results file): t,
    delta and delta' (n each), displacement and velocity (n_nodes x dim each), the energies
    and works, the element data and the frame, in float64."""
    n, (n_nodes, dim) = model.n_dofs, model.mesh.points.shape
    elements = element_data(model, np.zeros((1, n)))
    frame = frame_history(model.motion, np.zeros(1))
    floats = (1 + 2 * n + 2 * n_nodes * dim + len(ENERGY_KEYS) + len(WORK_KEYS)
              + sum(a[0].size for a in elements.values()) + sum(np.asarray(a)[0].size for a in frame.values()))
    return 8 * int(floats)


def mesh_sha256(model: Model) -> str:
    """SHA-256 of the model's nodes and cells (float64 and int64, little-endian, C order)."""
    import hashlib          # here: OpenSSL's module (8 ms), for a Model run's metadata only

    h = hashlib.sha256(np.ascontiguousarray(model.mesh.points, dtype="<f8").tobytes())
    h.update(model.element.cell_type.encode())
    h.update(np.ascontiguousarray(model.cells, dtype="<i8").tobytes())
    return h.hexdigest()


def von_mises(sigma: np.ndarray) -> np.ndarray:
    """Von Mises stress sqrt(3/2 s : s) of Cauchy stresses ``sigma`` (..., 3, 3), s = sigma - tr(sigma) I / 3."""
    dev = sigma - np.trace(sigma, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) / 3.0
    return np.sqrt(1.5 * np.einsum("...ab,...ab->...", dev, dev))


def element_data(model: Model, delta: np.ndarray, displacement: np.ndarray | None = None
                 ) -> dict[str, np.ndarray]:
    """Element quantities at the states ``delta`` (..., n) of the free DOFs.

    ``displacement`` (..., n_nodes, dim), if given, is ``model.displacement_field(delta)``.

    Returns
    -------
    dict
        Bars and beams (line cells with ``material`` and ``area``): ``axial_force``
        (..., n_el) [N], ``E A (u_b - u_a) . e_1 / L`` from the nodal displacements, tension
        positive.  Solids (elements with ``stress``): ``stress`` (..., n_el, 6) [Pa] at the
        centroid in Voigt order (xx, yy, zz, yz, xz, xy; plane stress: zz = yz = xz = 0) and
        ``von_mises`` (..., n_el) [Pa].  Plates (`flexmbs.elements.PlateMITC4`): ``stress`` at the
        top surface z = +t/2 and ``stress_bottom`` at z = -t/2 (Voigt, zz = yz = xz = 0 there),
        ``von_mises`` the larger of the two surfaces', and ``shear_force`` (..., n_el, 2) [N/m], the
        transverse shear resultants (Q_x, Q_y).  Reduced bodies: the same from their modes
        (`flexmbs.reduction.ReducedModel.stress_fields`).  Other elements: nothing.
    """
    el, cells, X = model.element, model.cells, model.X
    delta = np.asarray(delta, dtype=float)
    if el.cell_type == "line" and hasattr(el, "area") and hasattr(el, "material"):
        u = model.displacement_field(delta) if displacement is None else displacement
        e = X[:, 1] - X[:, 0]
        L = np.linalg.norm(e, axis=1)
        du = u[..., cells[:, 1], :] - u[..., cells[:, 0], :]      # (..., n_el, dim)
        return {"axial_force": el.material.E * el.area * np.einsum("...ed,ed->...e", du, e / L[:, None]) / L}
    fields = model.stress_fields(delta)                           # reduced bodies: sum q_i field_i
    if fields:
        out = {}
        tensors = [k for k in fields if k.startswith("stress")]
        for k in tensors:
            out[k] = np.stack([fields[k][..., a, b] for a, b in VOIGT], axis=-1)
        out["von_mises"] = np.max([von_mises(fields[k]) for k in tensors], axis=0)
        out.update({k: v for k, v in fields.items() if k not in tensors})
        return out
    return {}


def results_file_of(store) -> ResultsFile | None:
    """The results file a run streams into: ``store`` itself, a new file at a path, or the
    active `flexmbs.io.recording`.

    `flexmbs.io.store` (and with it h5py) is imported only for a file: a
    `recording` block can be open only once that module has been imported, so a run without
    a file never loads it."""
    if store is False:
        return None
    if store is None:
        io_store = sys.modules.get("flexmbs.io.store")
        return None if io_store is None else io_store.active_recording()
    from .io.store import ResultsFile
    if isinstance(store, ResultsFile):
        return store
    if isinstance(store, (str, Path)):
        return ResultsFile(store)
    raise TypeError(f"`store` must be a path, a flexmbs.io.ResultsFile, None or False, "
                    f"got {type(store).__name__}")


def run(model: Model, *, formulation: str | None = None, method: str | None = None, t_end: float,
        dt_out: float | None = None, t_eval=None, t0: float = 0.0, delta0=None, delta_dot0=None,
        rtol: float = 1e-6, atol: float | None = None, h: float | None = None,
        compute_energies: bool = True, evaluation: str = "auto", metadata: dict | None = None,
        store=None, name: str | None = None, **options) -> Results:
    """Integrate the equations of motion of a Model or a System and return `Results`.

    A `flexmbs.System` goes to `flexmbs.system_run.run_system` (its own arguments: ``q0``,
    ``v0``, ``assemble``, ``formulation_options``; formulation default "auto": "index3" with the
    default method "index3-alpha", its variants "index3-alpha-adaptive" (``rtol``, ``atol``, no ``h``), "hht"
    and "newmark", and with "rattle" and "radau-dae" (``rtol``, ``atol``), "lagrange" (index-1) with another method;
    `Results` with ``q``, ``v``, ``multipliers``, ``bodies`` and ``energies["total"]``).  The rest
    of this text is about a `Model` on its prescribed frame.

    Parameters
    ----------
    model : Model or System
    formulation : str, optional
        One of ``FORMULATIONS``: "lagrange", "gibbs-appell", "hamilton"; default None:
        "lagrange" for a Model, "auto" for a System.
    method : str, optional
        Default None: "DOP853" for a Model, "index3-alpha" for a System.  An integrator of ``flexmbs.integrators.INTEGRATORS``: "RK45", "DOP853", "Radau",
        "BDF" (adaptive), "AB4", "midpoint", "generalized-alpha" (fixed step: give ``h``).
    t_end : float
        End time [s] (required).
    dt_out : float, optional
        Output interval [s]; default None: 100 intervals, ``(t_end - t0) / 100``.  The last
        output is at ``t_end``.
    t_eval : array_like, optional
        Explicit output times [s] instead of ``dt_out``; default None.
    t0 : float, default 0.0
        Start time [s].
    delta0, delta_dot0 : ndarray (n,), optional
        Initial elastic DOFs and rates; default None: undeformed, at rest in the frame.
    rtol : float, default 1e-6
        Relative tolerance of the adaptive methods.
    atol : float, optional
        Absolute tolerance of the adaptive methods, in the units of the formulation's state;
        default None: ``1e-3 * rtol`` (1e-9 at the default ``rtol``).
    h : float, optional
        Step [s] of the fixed-step methods (required by them); for the adaptive ones the
        first trial step.  Default None.  At most ``t_end - t0``; shrunk to divide the output
        interval (an ``h`` above ``dt_out`` warns), and the step taken is recorded as
        ``metadata["h"]`` (the requested one as ``h_requested``).  Runs that cannot fit in
        memory or on disk are refused before they start, beyond 1e7 steps or 1 GB they warn
        (`flexmbs.integrators.budget`).
    evaluation : str, default "auto"
        "terms": evaluate the formulation's equations term by term at every call; "compiled":
        its constant-coefficient form x' = A x + c + B f(t) (steady frames only); "auto":
        compiled for steady frames of small (dense) models.
    compute_energies : bool, default True
        Also integrate the works of the loads, of damping and of the frame (costs three
        extra evaluations per step) and evaluate the energies at the outputs.
    metadata : dict, optional
        Default None.  Added to ``Results.metadata`` (cases add ``case`` and their resolved ``parameters``;
        ``run`` names the run in a results file).
    store : str, Path, flexmbs.io.ResultsFile, None or False, default None
        Stream the outputs into a results file as they are computed, each flushed to disk
        before the integration goes on: a path (a new HDF5 file), an open ``ResultsFile``
        (one more run in it), None (the file of the active `flexmbs.io.recording`, if any)
        or False (none).  Outputs are written in blocks, the first at once, then at least every
        ``FLUSH_EVERY_S`` (0.5 s) of wall time, before each call of a user's ``on_output``, at the end and
        before an exception ends the run.  The works of the loads, damping and frame are written at the end;
        a run stopped by Ctrl-C or an exception is marked "interrupted" or "error" in the
        file and the exception propagates.  A full disk raises `flexmbs.io.DiskFullError`
        (an OSError, errno ENOSPC: "no space left on device: N outputs kept in FILE") and
        the file keeps those N outputs with status "disk full".  Read the file with
        `flexmbs.load_results`.
    name : str, optional
        Name of the run in the results file; default ``metadata["run"]``, else
        ``metadata["case"]`` (of the run, else of the results file), else "run".
    **options
        Passed to `flexmbs.integrators.simulate` (method options, ``on_output``,
        ``progress``).  ``progress=True`` shows a progress bar on a terminal (as inside
        `flexmbs.progress.display`).

    Returns
    -------
    Results
        The outputs in physical quantities; on failure, those computed before it.  When a
        node rotation passes 0.2 rad or a displacement 10 % of the body size (the range of the
        linear-strain model, `flexmbs.validity`), a `RangeWarning` is given once and its text
        is appended to ``message`` and kept in ``metadata["range_warning"]``.

    Examples
    --------
    >>> res = run(model, formulation="hamilton", t_end=0.1, dt_out=1e-3,
    ...           store="out/results.h5")                          # doctest: +SKIP
    """
    if not isinstance_of(model, "flexmbs.model:Model"):
        from .system import System
        if isinstance(model, System):
            from .system_run import run_system
            given = [k for k, v in (("delta0", delta0), ("delta_dot0", delta_dot0)) if v is not None]
            given += [k for k, v, d in (("evaluation", evaluation, "auto"), ("compute_energies", compute_energies, True))
                      if v != d]
            if given:
                raise TypeError(f"{', '.join(f'`{k}`' for k in given)}: arguments of a Model's run; a System's run "
                                "takes q0, v0 (its coordinates and velocities), assemble and formulation_options")
            return run_system(model, formulation="auto" if formulation is None else formulation, method=method,
                              t_end=t_end, dt_out=dt_out, t_eval=t_eval, t0=t0, rtol=rtol, atol=atol, h=h,
                              metadata=metadata, store=store, name=name, **options)
        raise TypeError(f"`model` must be a flexmbs.Model or a flexmbs.System, got {type(model).__name__}")
    formulation = "lagrange" if formulation is None else formulation
    method = "DOP853" if method is None else method
    if formulation not in FORMULATIONS:
        raise ValueError(f"`formulation` must be one of {sorted(FORMULATIONS)}, got {formulation!r}")
    timings = {}
    tic = time.perf_counter()
    form = FORMULATIONS[formulation](model, evaluation=evaluation)
    n = model.n_dofs
    delta0 = np.zeros(n) if delta0 is None else np.asarray(delta0, dtype=float)
    delta_dot0 = np.zeros(n) if delta_dot0 is None else np.asarray(delta_dot0, dtype=float)
    for arg, v in (("delta0", delta0), ("delta_dot0", delta_dot0)):
        if v.shape != (n,):
            raise ValueError(f"`{arg}` must have shape ({n},) (the free DOFs), got {v.shape}")
    if t_eval is None:
        t_eval = output_times(t_end, dt_out if dt_out is not None else (t_end - t0) / 100, t0)
    x0 = form.state0(delta0, delta_dot0, t0)
    physics = _Physics(model)
    integrand = None
    if compute_energies:
        def integrand(t, x):
            if np.ndim(t) == 0:
                return physics.powers(t, *form.physical(t, x))
            return physics.powers_many(t, *form.physical(t, x))
        integrand.vectorized = True          # takes t (N,), x (N, n_state) too
        if model.steady:                     # quadratic in (x, f): method "exact" sums it in closed form,
            # from the forms declared by `forms` (checked against `of_loads` at the first outputs)
            def of_loads(x, F):
                return physics.powers_at_loads(F, *form.physical(np.zeros(len(x)), x))
            integrand.of_loads = of_loads
            integrand.forms = lambda X, F, one: physics.power_forms(form, X, F, one)
    timings["build_s"] = time.perf_counter() - tic
    atol = 1e-9 * rtol / 1e-6 if atol is None else atol
    if method not in INTEGRATORS:
        raise ValueError(f"`method` must be one of {sorted(INTEGRATORS)}, got {method!r}")
    if INTEGRATORS[method].uses_tolerances:
        options.update(rtol=rtol, atol=atol)
    check_explicit(model, method, (t0, float(t_end)))         # "this model is stiff" before hours
    from . import __version__
    h_used = step_used(method, h, t0, t_eval, warn=False)    # the step taken (simulate warns)
    meta = dict(flexmbs_version=__version__, formulation=formulation,
                evaluation="compiled" if form.evaluates_compiled else "terms", method=method,
                order=INTEGRATORS[method].order, rtol=rtol, atol=atol, h=h_used,
                **({"h_requested": h} if h_used != h else {}),
                units="SI (m, kg, s, N, rad)", mesh_source=model.mesh.source, mesh_sha256=mesh_sha256(model),
                element=type(model.element).__name__, n_elements=len(model.cells), n_dofs=n,
                **(metadata or {}))
    results_file = results_file_of(store)
    inherited = results_file.metadata if results_file is not None else {}
    meta = {**inherited, **meta}                   # as in the file: the run's own keys win
    name = name or meta.get("run") or meta.get("case") or inherited.get("run") or inherited.get("case") or "run"
    log.info("run %s: %s + %s, %d DOFs, t = %g .. %g s, %d outputs%s", name, formulation, method, n, t0,
             float(t_end), len(t_eval), f", streamed to {results_file.path}" if results_file is not None else "")
    per_output = bytes_per_output(model)                 # checked against memory and disk by simulate
    options.update(keep_bytes=per_output,
                   write_to=None if results_file is None else (results_file.path, per_output))
    reporter = _progress.current()
    if options.get("progress") is True:
        reporter = _progress.Display()
        del options["progress"]

    in_range = RangeCheck(model, f"run {name!r}")      # the linear-strain model's range, over every output
    with ExitStack() as stack:
        if reporter is not None and "progress" not in options:
            options["progress"] = stack.enter_context(reporter.task(name, t0, float(t_end)))
        if results_file is None:
            sol = simulate(form, (t0, float(t_end)), x0, method=method, t_eval=t_eval, h=h,
                           integrand=integrand, **options)
            timings["solve_s"] = sol.wall_time
            tic = time.perf_counter()
            delta, delta_dot = form.physical(sol.t, sol.x) if len(sol.t) else (np.zeros((0, n)),) * 2
            outputs = dict(delta=delta, delta_dot=delta_dot, displacement=model.displacement_field(delta),
                           velocity=model.displacement_field(delta_dot))
            energy = {}
            if compute_energies and len(sol.t):
                e = physics.all_many(sol.t, delta, delta_dot)
                energy = {key: e[key] for key in ENERGY_KEYS}
            in_range.update(sol.t, delta, outputs["displacement"])
            elements = element_data(model, delta, outputs["displacement"])
            frame = frame_history(model.motion, sol.t)
        else:
            writer = stack.enter_context(results_file.open_run(
                name, nodes=model.mesh.points, cells={model.element.cell_type: model.cells}, metadata=meta))
            kept = _Kept(len(t_eval))

            def record(T, X):
                """Physical fields, energies and element data of a block of outputs, appended to the
                results file."""
                d, v = form.physical(T, X)
                u, w = model.displacement_field(np.stack([d, v]))        # one call for both
                fields = {"t": T, "delta": d, "delta_dot": v, "displacement": u, "velocity": w}
                in_range.update(T, d, u)
                if compute_energies:
                    e = physics.all_many(T, d, v)
                    fields["energies"] = {k: e[k] for k in ENERGY_KEYS}
                fields.update({f"element_data/{k}": a for k, a in element_data(model, d, u).items()})
                fields.update({f"frame/{k}": a for k, a in frame_history(model.motion, T).items()})
                writer.append_many(fields)
                # kept for the Results but delta, delta' (from sol.x at the end: not held twice)
                kept.append({k: a for k, a in fields.items() if k not in ("t", "delta", "delta_dot")})

            blocks = OutputBlocks(record, options.pop("on_output", None))
            try:
                sol = simulate(form, (t0, float(t_end)), x0, method=method, t_eval=t_eval, h=h,
                               integrand=integrand, on_outputs=blocks.on_outputs, **options)
                inside = blocks.seconds     # output work done within sol.wall_time
            finally:
                blocks.flush()              # the outputs so far are kept, even on an exception
            timings["solve_s"] = sol.wall_time - inside
            timings["output_s"] = blocks.seconds
            tic = time.perf_counter()
            n_nodes, dim = model.mesh.points.shape
            delta, delta_dot = form.physical(sol.t, sol.x) if len(sol.t) else (np.zeros((0, n)),) * 2
            outputs = dict(delta=delta, delta_dot=delta_dot, displacement=kept.take("displacement", (n_nodes, dim)),
                           velocity=kept.take("velocity", (n_nodes, dim)))
            energy = ({k: kept.take(f"energies/{k}") for k in ENERGY_KEYS} if compute_energies and kept.n else {})
            elements = {k[len("element_data/"):]: kept.take(k) for k in kept.keys() if k.startswith("element_data/")}
            frame = ({k: kept.take(f"frame/{k}") for k in FRAME_KEYS} if kept.n
                     else frame_history(model.motion, sol.t))
            release_freed_memory()          # the blocks' working arrays, freed: their heap back to the system
        if energy:
            W = sol.integrals if sol.integrals is not None else np.zeros((len(sol.t), 4))
            energy.update(dict(zip(WORK_KEYS, W.T)))
        message = sol.message
        range_warning = in_range.warn() if sol.status != "diverged" else None    # diverged: said so
        if range_warning is not None:
            meta["range_warning"] = range_warning
            message = f"{message} Warning: {range_warning}"
        stats = dict(n_rhs=sol.n_rhs, n_jac=sol.n_jac, n_lu=sol.n_lu, n_steps=sol.n_steps,
                     n_rejected=sol.n_rejected, n_lin_iter=sol.n_lin_iter, n_newton=sol.n_newton, **timings,
                     post_s=time.perf_counter() - tic)
        results = Results(
            t=sol.t, **outputs, nodes=model.mesh.points.copy(), energies=energy, status=sol.status,
            message=message, stats=stats, metadata=dict(meta, order=sol.order),
            cells={model.element.cell_type: model.cells.copy()}, element_data=elements, frame=frame)
        if results_file is not None:
            writer.finish(sol.status, message, stats,
                          series={"works": {k: energy[k] for k in WORK_KEYS}} if energy else None)
            results.metadata.update(run=writer.name, file=str(results_file.path))
            results_file.keep_last(writer.name, results)
    if not results.success:
        log.warning("run ended early (%s): %s", sol.status, sol.message)
    else:
        log.info("run %s: finished in %.3g s (%d steps, %d right-hand sides)", name, sol.wall_time, sol.n_steps,
                 sol.n_rhs)
    return results
