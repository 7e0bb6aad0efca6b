"""Work-precision of the index-3 and index-1 routes on IFToMM A02 and A03 (issue 25, item 5).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_work_precision.py [--cases A03,A02,triple,coupled,spinup]
        [--quick] [--methods radau-dae,...,exudyn] [--exudyn | --no-exudyn]

Each row is one `flexmbs.run` of the case's System: the error against the case's reference and
the CPU time (process time) of the run, in this process: building the System, the run and the
error.  The Exudyn rows (A03, A02, triple, coupled; ``--no-exudyn`` leaves them out, and they are
skipped with a note where Exudyn is not installed) are timed the same way, in this process: building
Exudyn's model, its ``SolveDynamic`` with generalized-alpha at a fixed step and the error.  The
models are bench_whole_process.py's (`exudyn_andrews`, `exudyn_four_bar`, `exudyn_triple`) and
bench_vs_exudyn.py's ANCF slider-crank, with their solver settings: dense LU, modified Newton,
rho_inf 0.8 on A03 and A02, 1 on the triple pendulum and the slider-crank.  Methods: index3-alpha at fixed steps (compiled kernel),
hht at fixed steps (same loop, HHT coefficients), index3-alpha-adaptive at several rtol (A03, A02:
on the compiled kernel and on the numpy path, the same steps; triple: compiled), rattle where it
applies (constant M, no redundant constraints), radau-dae (Radau IIA of order 5
on the GGL form; its step loop compiled where the System qualifies, "numpy path" rows with
``kernel="numpy"``) at several rtol, DOP853 on the index-1 augmented formulation
("lagrange") at several rtol.

- A03, Andrews' squeezer (cases/andrews_squeezer.py): max over the seven angles of
  |q(0.03 s) - Hairer and Wanner's reference| [rad].
- A02, the double four-bar with N = 2 (cases/double_four_bar.py): max over t = 1, 5, 10 s of
  |B0 - exact| [m] (the position of the exact one-degree-of-freedom solution).
- triple: the triple pendulum in natural coordinates (cases/triple_pendulum.py), released from
  rest: max |D(2 s) - reference| [m] of the tip D, the reference DOP853 at rtol = 1e-12 on the
  index-1 form with coordinate partitioning (chaotic: no closed form).
- spinup: the spin-up beam (cases/spinup_beam.py, a Model of 10 beam elements on the prescribed
  spin-up, stiff: its axial modes) over 3 s: max over the outputs (every 0.05 s) of the tip deflection's
  error against scipy's Radau at rtol = 1e-9; generalized-alpha (the case's default method) against
  radau-dae and scipy's Radau on the first-order form.
- coupled: the coupled slider-crank with the flexible rod (cases/slider_crank.py, 8 elements, stiff:
  the rod's axial mode at 1.8e4 rad/s) over a quarter revolution from the dead centre: the largest
  error of the mid-span deflection over the outputs (every 0.5 deg) relative to the peak, against
  index3-alpha at h = dt_out / 64 (compiled; ``kernel="numpy"`` rows: the same steps on the numpy path).
  Exudyn's rod is ANCF, not a floating frame: its rows are measured against Exudyn's own run at
  h = dt_out / 64, and the table's note gives the difference of the two references (the models').

Prints a markdown table (docs/benchmarks.md, sec. 19).
"""
from __future__ import annotations

import argparse
import functools
import math
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import andrews_squeezer  # noqa: E402
import bench_whole_process as whole  # noqa: E402  (the Exudyn models)
import double_four_bar  # noqa: E402
import slider_crank  # noqa: E402
import spinup_beam  # noqa: E402
import triple_pendulum  # noqa: E402

import flexmbs as fm  # noqa: E402


def adaptive_runs(rtols):
    """(label, options) of index3-alpha-adaptive at each rtol, on the compiled kernel and on the numpy path (the
    same steps: tests/test_compiled_adaptive.py)."""
    for rtol in rtols:
        for kernel in ("compiled", "numpy"):
            yield (f"index3-alpha-adaptive rtol = {rtol:g} ({kernel})",
                   dict(formulation="index3", method="index3-alpha-adaptive", rtol=rtol, kernel=kernel))


def a03_runs(quick: bool):
    """(label, flexmbs.run options) of A03."""
    for h in ((1e-5, 5e-6) if quick else (2e-5, 1e-5, 5e-6, 2.5e-6, 1.25e-6)):
        yield f"index3-alpha h = {h:g}", dict(formulation="index3", method="index3-alpha", h=h)
    for h in ((1e-5,) if quick else (1e-5, 5e-6, 2.5e-6)):
        yield f"hht h = {h:g}", dict(formulation="index3", method="hht", h=h)
    yield from adaptive_runs((1e-4,) if quick else (1e-4, 1e-5, 1e-6))
    for h in ((1e-5,) if quick else (1e-5, 5e-6, 2.5e-6)):
        yield f"rattle h = {h:g}", dict(formulation="index3", method="rattle", h=h)
    for rtol in ((1e-6,) if quick else (1e-4, 1e-5, 1e-6, 1e-7, 1e-8)):
        yield f"radau-dae rtol = {rtol:g}", dict(formulation="index3", method="radau-dae", rtol=rtol, atol=rtol * 1e-3)
    for rtol in (() if quick else (1e-4, 1e-6, 1e-8)):             # the same on the numpy path (sec. 19.3)
        yield f"radau-dae rtol = {rtol:g}, numpy path", dict(formulation="index3", method="radau-dae", rtol=rtol,
                                                            atol=rtol * 1e-3, kernel="numpy")
    for rtol in ((1e-6,) if quick else (1e-5, 1e-6, 1e-8, 1e-10)):
        yield f"DOP853 index-1 rtol = {rtol:g}", dict(formulation="lagrange", method="DOP853", rtol=rtol,
                                                      atol=rtol * 1e-3)


def a03_error(options) -> tuple[str, float, int]:
    system, _ = andrews_squeezer.build()
    res = fm.run(system, t_end=0.03, t_eval=[0.0, 0.03], v0=np.zeros(system.n_q), **options)
    err = float(np.abs(andrews_squeezer.angles_of(system, res.q)[-1] - andrews_squeezer.Q_REF).max())
    return res.status, err, int(res.stats["n_steps"])


def a02_runs(quick: bool):
    for h in ((1e-3, 2e-4) if quick else (2e-3, 1e-3, 5e-4, 2e-4, 1e-4)):
        yield f"index3-alpha h = {h:g}", dict(formulation="index3", method="index3-alpha", h=h)
    for h in ((1e-3,) if quick else (1e-3, 2e-4)):
        yield f"hht h = {h:g}", dict(formulation="index3", method="hht", h=h)
    yield from adaptive_runs((1e-4,) if quick else (1e-4, 1e-5, 1e-6))
    yield "rattle h = 1e-3", dict(formulation="index3", method="rattle", h=1e-3)
    # at rtol 1e-8 radau-dae stops at the first singular configuration (a crawl: radau_dae's module docstring,
    # "Singular configurations"); a relaxation of 1e-11 s carries it through
    for rtol in ((1e-6,) if quick else (1e-4, 1e-6, 1e-7, 1e-8)):
        yield f"radau-dae rtol = {rtol:g}", dict(formulation="index3", method="radau-dae", rtol=rtol, atol=rtol * 1e-3)
    if not quick:
        yield "radau-dae rtol = 1e-08, relaxation = 1e-11 s", dict(formulation="index3", method="radau-dae", rtol=1e-8,
                                                                   atol=1e-11, relaxation=1e-11)
    # the augmented ("lagrange") index-1 form stops at the first singular configuration (its saddle-point
    # matrix is singular there, t = 1.23 s); Udwadia-Kalaba's pseudo-inverse passes through it
    for rtol in ((1e-6,) if quick else (1e-6, 1e-8)):
        yield f"DOP853 index-1 (Udwadia-Kalaba) rtol = {rtol:g}", dict(formulation="udwadia-kalaba", method="DOP853",
                                                                       rtol=rtol, atol=rtol * 1e-3)


def a02_error(options) -> tuple[str, float, int]:
    system, q0, v0, crank = double_four_bar.build(2)
    res = fm.run(system, t_end=10.0, t_eval=[0.0, 1.0, 5.0, 10.0], q0=q0, v0=v0, **options)
    if res.status != "finished":                  # e.g. radau-dae at the singular configuration
        return f"{res.status} ({res.message.split(':')[0]})", np.nan, int(res.stats["n_steps"])
    B0, _ = double_four_bar.tip_motion(res.bodies[crank.name])
    B0e, _ = double_four_bar.exact(res.t, 2)
    return res.status, float(np.abs(B0 - B0e)[1:].max()) if len(res.t) == 4 else np.nan, int(res.stats["n_steps"])


TP_T_END = 2.0


@functools.cache
def tp_reference(t_end: float) -> np.ndarray:
    """Tip D at ``t_end`` (TP_T_END = 2 s) of DOP853 at rtol = 1e-12 on the index-1 form with coordinate
    partitioning (natural coordinates): the motion is chaotic, there is no closed form.  Run once per t_end."""
    system = triple_pendulum.build("natural")
    res = fm.run(system, formulation="lagrange", method="DOP853", rtol=1e-12, atol=1e-15, t_end=t_end,
                 t_eval=[0.0, t_end], v0=np.zeros(system.n_q),
                 formulation_options={"stabilization": "coordinate-partitioning"})
    return triple_pendulum.tip(system, res.q, res.v)[0][-1]


def tp_runs(quick: bool):
    for h in ((1e-3,) if quick else (2e-3, 1e-3, 5e-4, 2.5e-4)):
        yield f"index3-alpha h = {h:g}", dict(formulation="index3", method="index3-alpha", h=h)
    for rtol in ((1e-5,) if quick else (1e-4, 1e-5, 1e-6)):
        yield f"index3-alpha-adaptive rtol = {rtol:g}", dict(formulation="index3", method="index3-alpha-adaptive",
                                                               rtol=rtol)
    for h in ((1e-3,) if quick else (2e-3, 1e-3, 5e-4)):
        yield f"rattle h = {h:g}", dict(formulation="index3", method="rattle", h=h)
    for rtol in ((1e-6,) if quick else (1e-5, 1e-6, 1e-7, 1e-8)):
        yield f"radau-dae rtol = {rtol:g}", dict(formulation="index3", method="radau-dae", rtol=rtol, atol=rtol * 1e-3)
    for rtol in ((1e-6,) if quick else (1e-6, 1e-8, 1e-10)):
        yield f"DOP853 index-1 rtol = {rtol:g}", dict(formulation="lagrange", method="DOP853", rtol=rtol,
                                                      atol=rtol * 1e-3,
                                                      formulation_options={"stabilization": "coordinate-partitioning"})


def tp_error(options) -> tuple[str, float, int]:
    system = triple_pendulum.build("natural")
    ref = tp_reference(TP_T_END)
    res = fm.run(system, t_end=TP_T_END, t_eval=[0.0, TP_T_END], v0=np.zeros(system.n_q), **options)
    D = triple_pendulum.tip(system, res.q, res.v)[0][-1]
    return res.status, float(np.abs(D - ref).max()), int(res.stats["n_steps"])


CSC_P = dict(slider_crank.DEFAULTS)
CSC_T_END = 0.5 * math.pi / CSC_P["crank_speed"]                          # a quarter revolution
CSC_DT_OUT = math.radians(CSC_P["degrees_out"]) / CSC_P["crank_speed"]


def csc_deflection(options) -> tuple[object, np.ndarray]:
    """(Results, mid-span deflection at the outputs [m]) of the coupled slider-crank run with ``options``."""
    from flexmbs.mechanisms import chord_deflection
    system, rod, model = slider_crank.build_coupled(elements=8)
    t_eval = slider_crank.solver_options(CSC_P, CSC_T_END)["t_eval"]
    res = fm.run(system, t_end=CSC_T_END, t_eval=t_eval, store=False, **options)
    return res, chord_deflection(model, res.bodies[rod.name].delta, [CSC_P["rod_length"] / 2])[:, 0]


@functools.cache
def csc_reference() -> np.ndarray:
    """The mid-span deflection by index3-alpha at h = dt_out / 64 (rho_inf = 0.9, the case's); run once."""
    return csc_deflection(dict(formulation="index3", method="index3-alpha", h=CSC_DT_OUT / 64 * (1 + 1e-9),
                               rho_inf=0.9))[1]


def csc_runs(quick: bool):
    for k in ((2,) if quick else (2, 4, 8, 16)):
        yield f"index3-alpha h = dt_out/{k}", dict(formulation="index3", method="index3-alpha",
                                                   h=CSC_DT_OUT / k * (1 + 1e-9), rho_inf=0.9)
    for k in (() if quick else (8, 16)):
        yield f"index3-alpha h = dt_out/{k}, numpy path", dict(formulation="index3", method="index3-alpha",
                                                               h=CSC_DT_OUT / k * (1 + 1e-9), rho_inf=0.9,
                                                               kernel="numpy")
    for rtol in ((1e-2,) if quick else (1e-2, 1e-3)):
        yield f"radau-dae rtol = {rtol:g}", dict(formulation="index3", method="radau-dae", rtol=rtol, atol=rtol * 1e-6)
    for rtol in (() if quick else (1e-2, 1e-3)):                   # the same on the numpy path (sec. 19.3)
        yield f"radau-dae rtol = {rtol:g}, numpy path", dict(formulation="index3", method="radau-dae", rtol=rtol,
                                                            atol=rtol * 1e-6, kernel="numpy")


def csc_error(options) -> tuple[str, float, int]:
    ref = csc_reference()
    res, w = csc_deflection(options)
    err = float(np.abs(w - ref).max() / np.abs(ref).max()) if len(w) == len(ref) else np.nan
    return res.status, err, int(res.stats["n_steps"])


SPIN_T_END = 3.0


def spin_tip(options) -> tuple[object, np.ndarray]:
    """(Results, tip deflection v(L, t) at the outputs every 0.05 s [m]) of the spin-up beam (10 elements,
    a Model on its prescribed frame) over [0, SPIN_T_END] by ``options``."""
    res = fm.run(spinup_beam.build(10), t_end=SPIN_T_END, dt_out=0.05, store=False,
                 divergence_limit=spinup_beam.DIVERGENCE_LIMIT, **options)
    return res, res.displacement[:, -1, 1]


@functools.cache
def spin_reference() -> np.ndarray:
    """The tip deflection by scipy's Radau on the first-order form at rtol = 1e-9 (689 steps; radau-dae at
    rtol = 1e-11 agrees with it to 2.3e-12 m, checked when the rows of docs/benchmarks.md sec. 19.2 were
    measured); run once."""
    return spin_tip(dict(method="Radau", rtol=1e-9, atol=1e-12))[1]


def spin_runs(quick: bool):
    for h in ((2e-3,) if quick else (4e-3, 2e-3, 1e-3)):
        yield f"generalized-alpha h = {h:g}", dict(method="generalized-alpha", h=h, linear=True)
    for rtol in ((1e-6,) if quick else (1e-4, 1e-6)):
        yield f"radau-dae rtol = {rtol:g}", dict(method="radau-dae", rtol=rtol, atol=rtol * 1e-3)
    for rtol in ((1e-6,) if quick else (1e-4, 1e-6)):
        yield f"Radau (scipy, first-order form) rtol = {rtol:g}", dict(method="Radau", rtol=rtol, atol=rtol * 1e-3)


def spin_error(options) -> tuple[str, float, int]:
    ref = spin_reference()
    res, v = spin_tip(options)
    return res.status, float(np.abs(v - ref).max()) if len(v) == len(ref) else np.nan, int(res.stats["n_steps"])


# ---------------------------------------------------------------------------------------------------
# Exudyn's generalized-alpha on the same systems: each function returns (status, error, steps) as the
# flexmbs ones do, with the same error measure against the same reference
def exudyn_status(t, t_end: float) -> str:
    """"finished" when Exudyn's sensors reached ``t_end``, else where they stopped."""
    return "finished" if abs(t[-1] - t_end) <= 1e-9 * t_end else f"stopped at t = {t[-1]:.4g}"


def exudyn_steps(t_end: float, h: float) -> int:
    """Exudyn's fixed step count, ``numberOfSteps`` of bench_whole_process.settings."""
    return int(round(t_end / h))


def exudyn_a03_error(h: float) -> tuple[str, float, int]:
    """max |q(0.03) - Hairer and Wanner's reference| of Exudyn's squeezer (seven angles, as flexmbs's)."""
    d = whole.exudyn_andrews(h, t_end=0.03, dt_out=0.03)
    return (exudyn_status(d["t"], 0.03), float(np.abs(d["y"][-1] - andrews_squeezer.Q_REF).max()),
            exudyn_steps(0.03, h))


A02_TIMES = (1.0, 5.0, 10.0)


def exudyn_a02_error(h: float, t_end: float = 10.0) -> tuple[str, float, int]:
    """max |B0 - exact| at the A02_TIMES up to ``t_end`` of Exudyn's double four-bar (N = 2), sensors every 1 s."""
    d = whole.exudyn_four_bar(h, n=2, t_end=t_end, dt_out=1.0)
    at = [t for t in A02_TIMES if t <= t_end + 1e-12]
    rows = [int(np.argmin(np.abs(d["t"] - t))) for t in at]
    if np.abs(d["t"][rows] - at).max() > 1e-9:
        return exudyn_status(d["t"], t_end), np.nan, exudyn_steps(t_end, h)
    B0e, _ = double_four_bar.exact(np.array([0.0, *at]), 2)
    return (exudyn_status(d["t"], t_end), float(np.abs(d["y"][rows] - B0e[1:]).max()), exudyn_steps(t_end, h))


def exudyn_tp_error(h: float, t_end: float = TP_T_END) -> tuple[str, float, int]:
    """max |D(t_end) - reference| of Exudyn's triple pendulum (Euler parameters, the same bodies, inertias,
    initial state and gravity as cases/triple_pendulum.py) against flexmbs's DOP853 at rtol 1e-12."""
    d = whole.exudyn_triple(h, t_end=t_end, dt_out=t_end)
    return exudyn_status(d["t"], t_end), float(np.abs(d["y"][-1] - tp_reference(t_end)).max()), exudyn_steps(t_end, h)


@functools.cache
def exudyn_slider_crank():
    """bench_vs_exudyn.py's ``exudyn_slider_crank`` (`bench_whole_process.reused_exudyn_function`), made once."""
    return whole.reused_exudyn_function("exudyn_slider_crank", {"np": np, "math": math, "time": time})


def exudyn_csc_deflection(h: float) -> tuple[np.ndarray, np.ndarray]:
    """(t, mid-span deflection [m] every 0.5 deg) of Exudyn's ANCF slider-crank (bench_vs_exudyn.py, 8
    elements, rho_inf 1) over the quarter revolution from the dead centre at step ``h``."""
    *_, angle, w = exudyn_slider_crank()(h, elements=8, revolutions=0.25, degrees_out=CSC_P["degrees_out"])
    return np.radians(angle) / CSC_P["crank_speed"], w


@functools.cache
def exudyn_csc_reference() -> np.ndarray:
    """Exudyn's own deflection at h = dt_out / 64, the counterpart of ``csc_reference``: the two rods are
    different models (ANCF, floating frame), ``exudyn_csc_model_difference`` says by how much; run once."""
    return exudyn_csc_deflection(CSC_DT_OUT / 64)[1]


def exudyn_csc_error(h: float) -> tuple[str, float, int]:
    ref = exudyn_csc_reference()
    t, w = exudyn_csc_deflection(h)
    err = float(np.abs(w - ref).max() / np.abs(ref).max()) if len(w) == len(ref) else np.nan
    return exudyn_status(t, CSC_T_END), err, exudyn_steps(CSC_T_END, h)


def exudyn_csc_model_difference() -> float:
    """max |w_Exudyn - w_flexmbs| / max |w_flexmbs| of the two references (both at h = dt_out / 64)."""
    ref, mine = exudyn_csc_reference(), csc_reference()
    return float(np.abs(ref - mine).max() / np.abs(mine).max()) if len(ref) == len(mine) else np.nan


def exudyn_tp_model_difference(h: float = 1e-5) -> float:
    """|D(2 s)| of Exudyn at the tiny step ``h`` against flexmbs's reference: the models' difference plus
    Exudyn's error at ``h`` (second order: (h / 1e-4)^2 times its error at 1e-4)."""
    return exudyn_tp_error(h)[1]


def exudyn_runs(case: str, quick: bool):
    """(label, Exudyn step h) of ``case``: the steps of index3-alpha's rows (A02, A03, triple: one finer)."""
    steps = {"A03": ((1e-5,), (2e-5, 1e-5, 5e-6, 2.5e-6, 1.25e-6)),
             "A02": ((1e-3,), (2e-3, 1e-3, 5e-4, 2e-4, 1e-4)),
             "triple": ((1e-3,), (2e-3, 1e-3, 5e-4, 2.5e-4, 1e-4)),
             "coupled": ((2,), (2, 4, 8, 16))}
    if case not in steps:
        return
    for h in steps[case][0 if quick else 1]:
        if case == "coupled":
            yield f"Exudyn generalized-alpha h = dt_out/{h}", CSC_DT_OUT / h
        else:
            yield f"Exudyn generalized-alpha h = {h:g}", h


EXUDYN = {"A03": (exudyn_a03_error, "rho_inf 0.8, modified Newton, dense LU"),
          "A02": (exudyn_a02_error, "rho_inf 0.8, modified Newton, dense LU, ignoreSingularJacobian"),
          "triple": (exudyn_tp_error, "rho_inf 1, modified Newton, dense LU; Euler parameters"),
          "coupled": (exudyn_csc_error, "rho_inf 1, modified Newton, dense LU; ANCF rod, error against its own "
                                        "run at dt_out/64")}


def exudyn_note(case: str) -> str:
    """The line under a case's table: Exudyn's settings and, for the triple pendulum and the slider-crank,
    how far Exudyn's model is from flexmbs's reference."""
    note = f"Exudyn {whole.exudyn_version()} generalized-alpha: {EXUDYN[case][1]}."
    if case == "triple":
        note += f" Exudyn at h = 1e-5 against the reference: {exudyn_tp_model_difference():.2e} m."
    if case == "coupled":
        note += (f" Exudyn's reference (ANCF) against flexmbs's (floating frame), relative: "
                 f"{exudyn_csc_model_difference():.2e}.")
    return note


CASES = {"A03": (a03_runs, a03_error, "Andrews' squeezer, max |q(0.03) - ref| [rad]"),
         "A02": (a02_runs, a02_error, "double four-bar N = 2, max |B0 - exact| at 1, 5, 10 s [m]"),
         "triple": (tp_runs, tp_error, "triple pendulum (natural coordinates), max |D(2 s) - DOP853 rtol 1e-12| [m]"),
         "spinup": (spin_runs, spin_error, "spin-up beam (Model, 10 elements) over 3 s, max |v_tip - ref| [m] "
                                           "against scipy Radau at rtol 1e-9"),
         "coupled": (csc_runs, csc_error, "coupled slider-crank, quarter revolution, max |w - w_ref| / max |w_ref| "
                                          "of the mid-span deflection")}


def case_rows(name: str, quick: bool, exudyn: bool):
    """(label, method name, a call returning (status, error, steps)) of every row of case ``name``: flexmbs's
    runs, then (``exudyn``) Exudyn's at its steps, method name "exudyn"."""
    runs, error, _ = CASES[name]
    for label, options in runs(quick):
        yield label, options["method"], (lambda options=options: error(options))
    if exudyn and name in EXUDYN:
        for label, h in exudyn_runs(name, quick):
            yield label, "exudyn", (lambda h=h: EXUDYN[name][0](h))


def timed_row(label: str, call) -> str:
    """One markdown row: ``call``'s status, error and steps, and its process time (this process)."""
    tic = time.process_time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            status, err, steps = call()
    except ValueError as exc:                   # a method that does not fit the system
        return f"| {label} | refused: {str(exc).split(';')[0][:90]} | | | |"
    except RuntimeError as exc:                 # Exudyn's SolverError: its Newton failed, no result
        return f"| {label} | failed: {type(exc).__name__} {str(exc)[:60]} | | | {time.process_time() - tic:.2f} |"
    return f"| {label} | {status} | {err:.2e} | {steps} | {time.process_time() - tic:.2f} |"


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="A03,A02,triple", help="comma-separated: A03, A02, triple, coupled, spinup")
    parser.add_argument("--quick", action="store_true", help="one or two runs per method")
    parser.add_argument("--methods", default="", help="comma-separated method names, 'exudyn' for Exudyn's rows "
                                                       "(default: all)")
    parser.add_argument("--exudyn", action=argparse.BooleanOptionalAction, default=True,
                        help="Exudyn's generalized-alpha at several steps on A03, A02, triple and coupled (default: "
                             "on; skipped with a note where Exudyn is not installed)")
    a = parser.parse_args(argv)
    a.cases = [c.strip() for c in a.cases.split(",") if c.strip()]
    unknown = sorted(set(a.cases) - set(CASES))
    if unknown:
        parser.error(f"`--cases`: unknown {unknown}; pick from {sorted(CASES)}")
    a.methods = {m.strip() for m in a.methods.split(",") if m.strip()}
    known = {options["method"] for name in a.cases for _, options in CASES[name][0](False)}
    known |= {"exudyn"} if set(a.cases) & set(EXUDYN) else set()         # Exudyn has no spin-up Model
    if a.methods - known:
        parser.error(f"`--methods`: unknown {sorted(a.methods - known)} for the cases {a.cases}; pick from "
                     f"{sorted(known)}")
    return a


def main(argv=None) -> None:
    a = parse_args(argv)
    exudyn = a.exudyn and whole.exudyn_version() is not None and (not a.methods or "exudyn" in a.methods)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, python "
          f"{platform.python_version()}, numpy {np.__version__}, flexmbs {fm.__version__}, Exudyn "
          f"{whole.exudyn_version() if exudyn else 'not used'}")
    if a.exudyn and whole.exudyn_version() is None:
        print("Exudyn is not installed (pip install exudyn, the 'bench' extra): its rows are skipped.")
    for name in a.cases:
        warm_up = {}                            # the first quick run of each code: imports, the kernel's first load
        for _, method, call in case_rows(name, True, exudyn):
            warm_up.setdefault(method == "exudyn", call)
        for call in warm_up.values():
            timed_row("warm-up", call)
        print(f"\n{name}: {CASES[name][2]}\n\n| method | status | error | steps | CPU [s] |\n|---|---|---:|---:|---:|")
        for label, method, call in case_rows(name, a.quick, exudyn):
            if not a.methods or method in a.methods:
                print(timed_row(label, call), flush=True)
        if exudyn and name in EXUDYN:
            print(f"\n{exudyn_note(name)}")


if __name__ == "__main__":
    main()
