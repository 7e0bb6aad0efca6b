"""Timing of the formulations on the rotating bar (Vlase, Nicolescu, Marin 2020, Table 3 and Fig. 5).

Two parts, each at a stated accuracy, integration timed separately from model building,
median of ``--repeats`` runs:

1. The paper's sizes (5, 10, 15, 20, 25 elements), 0.1 s, adaptive DOP853.  For each
   formulation the tolerance is tightened (rtol = 1e-5, 3e-6, 1e-6, ...) until the maximum
   tip-displacement error over all outputs, relative to the peak tip displacement, is at
   most ``--target`` (default 1e-6) against a DOP853 reference at rtol 1e-12 (Lagrange).
   Each size is timed with the formulation's equations evaluated term by term and in the
   compiled constant-coefficient form (``--evaluation``).
2. Growth to large models (``--large``, default 100, 1000, 10000 elements): the explicit
   methods' step is bounded by the highest axial frequency, which grows like 1/h, so these
   use the implicit midpoint rule with a fixed step ``--h`` over ``--t-large`` seconds; the
   stated error is the tip error against a run with half the step (Richardson: 4/3 of the
   difference).

Writes DIR/timing.csv (formulation, elements, build_s, solve_s, rhs_evaluations, error, plus
part, method, evaluation, rtol_or_h) and DIR/timing.png.

``--quick`` is a smoke test of the whole chain in a few seconds, not a benchmark: the paper's
part on 5 and 10 elements over 0.01 s at the accuracy target 1e-4, compiled evaluation only,
the large part on 100 and 1000 elements over 0.2 ms, one repeat; with ``--case mechanism``,
5 elements over 5 ms at the target 1e-2 (options given explicitly still win).

``--case mechanism`` times instead the marker-driven beam of cases/marker_mechanism.py (the
paper's Table 3 problem: a beam of a mechanism driven by measured kinematics) for
``--elements`` over ``--t-span`` seconds (default 0.1 s from the start of the splines' valid
window): for each formulation the step of the implicit midpoint rule is halved (h = 2e-4,
1e-4, 5e-5, ...) until the maximum error of the mid-span deflection over the outputs (every
0.5 ms), relative to its peak, is at most ``--target`` (default 1e-3) against a reference
(Lagrange): the midpoint rule at h = 1.5625e-6 s Richardson-extrapolated with 2h (default,
``--reference midpoint``), or DOP853 at rtol 1e-10 (``--reference DOP853``: the two agree to
2e-8 of the peak on 5 elements, but DOP853 is stability-limited and takes about 25 min for
25 elements).  ``--methods midpoint DOP853`` also times DOP853 at the loosest of
MECHANISM_RTOLS that meets the target.  Once each formulation's step is found, the runs of one
size are timed in turns (``--repeats`` rounds of one run of each formulation) and each keeps
the least of its rounds: on a shared machine the formulations then see the same load, and their
ratios are the measurement.  Rows have part "mechanism" and the columns ``cpu_s``, the CPU time
of the whole run, and ``calls_per_step``, the Python and C function calls of a run per step
(counted in a run of its own); default output directory out/timing_mechanism.
"""
from __future__ import annotations

import argparse
import csv
import logging
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rotating_bar  # noqa: E402

from flexmbs import run as run_model  # noqa: E402
from flexmbs.formulations import FORMULATIONS  # noqa: E402
from flexmbs.pipes import call_quietly

SELECTED = list(FORMULATIONS)      # the formulations timed (--formulations)

COLUMNS = ["formulation", "elements", "build_s", "solve_s", "rhs_evaluations", "error", "part", "method",
           "evaluation", "rtol_or_h", "cpu_s", "calls_per_step"]   # the last two: the mechanism's rows
RTOLS = [1e-5, 3e-6, 1e-6, 3e-7, 1e-7, 3e-8, 1e-8, 3e-9, 1e-9, 3e-10, 1e-10]


def _tip_error(res, ref):
    tip, tip_ref = res.displacement[:, -1, 0], ref.displacement[:, -1, 0]
    m = min(len(tip), len(tip_ref))
    return float(np.abs(tip[:m] - tip_ref[:m]).max() / np.abs(tip_ref).max())


def _timed(model_factory, repeats, **kw):
    """Median build and solve times of ``repeats`` runs; returns (last results, build_s, solve_s)."""
    builds, solves, res = [], [], None
    for _ in range(repeats):
        tic = time.perf_counter()
        model = model_factory()
        build = time.perf_counter() - tic
        res = run_model(model, compute_energies=False, **kw)
        builds.append(build + res.stats["build_s"])
        solves.append(res.stats["solve_s"])
    return res, float(np.median(builds)), float(np.median(solves))


def paper_sizes(elements, target, repeats, evaluations, t_end=0.1, dt_out=1e-4):
    rows = []
    for n in elements:
        factory = lambda n=n: rotating_bar.build(elements=n)  # noqa: E731
        ref = run_model(factory(), formulation="lagrange", method="DOP853", rtol=1e-12, atol=1e-18,
                        t_end=t_end, dt_out=dt_out, compute_energies=False)
        for evaluation in evaluations:
            for name in SELECTED:
                for rtol in RTOLS:
                    kw = dict(formulation=name, method="DOP853", rtol=rtol, t_end=t_end, dt_out=dt_out,
                              evaluation=evaluation)
                    res = run_model(factory(), compute_energies=False, **kw)
                    if _tip_error(res, ref) <= target:
                        break
                res, build_s, solve_s = _timed(factory, repeats, **kw)
                rows.append(dict(formulation=name, elements=n, build_s=build_s, solve_s=solve_s,
                                 rhs_evaluations=res.stats["n_rhs"], error=_tip_error(res, ref),
                                 part="paper", method="DOP853", evaluation=evaluation, rtol_or_h=rtol))
                logging.info("%-13s %5d el  %-8s rtol %.0e  solve %.3f s  error %.2e", name, n, evaluation,
                             rtol, solve_s, rows[-1]["error"])
    return rows


def large_sizes(elements, h, t_end, repeats):
    rows = []
    for n in elements:
        factory = lambda n=n: rotating_bar.build(elements=n)  # noqa: E731
        for name in SELECTED:
            kw = dict(formulation=name, method="midpoint", t_end=t_end, dt_out=t_end / 10, evaluation="terms")
            half = run_model(factory(), h=h / 2, compute_energies=False, **kw)
            res, build_s, solve_s = _timed(factory, repeats, h=h, **kw)
            err = 4.0 / 3.0 * _tip_error(res, half)
            rows.append(dict(formulation=name, elements=n, build_s=build_s, solve_s=solve_s,
                             rhs_evaluations=res.stats["n_rhs"], error=err, part="large", method="midpoint",
                             evaluation="terms", rtol_or_h=h))
            logging.info("%-13s %5d el  midpoint h %.0e  build %.3f s  solve %.3f s  error %.2e", name, n, h,
                         build_s, solve_s, err)
    return rows


def run(out=None, elements=(5, 10, 15, 20, 25), large=(100, 1000, 10000), target=1e-6, repeats=3,
        evaluations=("compiled", "terms"), h=1e-6, t_large=0.005, t_end=0.1):
    rows = (paper_sizes(elements, target, repeats, evaluations, t_end=t_end)
            + large_sizes(large, h, t_large, repeats))
    if out is not None:
        shown = [r for r in rows if r["part"] == "large" or r["evaluation"] == evaluations[0]]
        _write(out, rows, shown, f"Rotating bar: solve time per formulation\npaper sizes: {t_end:g} s, tip error "
                                 f"<= {target:g}; large sizes: {t_large:g} s, midpoint h = {h:g} s")
    return rows


def _write(out, rows, shown, title):
    """DIR/timing.csv (all rows) and DIR/timing.png (the rows ``shown``)."""
    from flexmbs import plots
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "timing.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    plots.save(plots.timing_chart(shown, title=title), out / "timing.png")


MECHANISM_STEPS = [2e-4, 1e-4, 5e-5, 2.5e-5, 1.25e-5, 6.25e-6]
MECHANISM_RTOLS = [1e-3, 3e-4, 1e-4] + RTOLS


def _midspan_error(model, res, ref_w):
    from flexmbs.mechanisms import chord_deflection
    L = model.mesh.points[:, 0].max()
    w = chord_deflection(model, res.delta, [L / 2])[:, 0]
    m = min(len(w), len(ref_w))
    return float(np.abs(w[:m] - ref_w[:m]).max() / np.abs(ref_w).max())


def _mechanism_reference(model, common, reference, length):
    """Mid-span deflection of the reference run (module docstring)."""
    from flexmbs.mechanisms import chord_deflection
    if reference == "DOP853":
        ref = run_model(model, formulation="lagrange", method="DOP853", rtol=1e-10, atol=1e-16,
                        compute_energies=False, **common)
        return chord_deflection(model, ref.delta, [length / 2])[:, 0]
    h = MECHANISM_STEPS[-1] / 4
    w1, w2 = (chord_deflection(model, run_model(model, formulation="lagrange", method="midpoint", h=hh,
                                                compute_energies=False, **common).delta, [length / 2])[:, 0]
              for hh in (h, 2 * h))
    return w1 + (w1 - w2) / 3.0                            # Richardson, second order


def mechanism_sizes(elements=(5, 10, 15, 20, 25), target=1e-3, repeats=3, t_span=0.1, methods=("midpoint",),
                    dt_out=5e-4, reference="midpoint"):
    """Table 3 on the marker-driven beam: solve time per formulation and size at one accuracy."""
    import marker_mechanism
    from flexmbs.analysis import output_times
    from flexmbs.markers import marker_motion, read_markers
    from flexmbs.modal import static_solution
    p = marker_mechanism.DEFAULTS
    records = read_markers(p["markers"])
    motion = marker_motion(records, body=np.array([[0.0, 0.0], [p["length"], 0.0]]))
    t0 = motion.valid_window[0]
    t1 = min(t0 + t_span, motion.t_range[1])
    t_eval = np.minimum(output_times(t1, dt_out, t0), t1)
    rows = []
    for n in elements:
        factory = lambda n=n: marker_mechanism.build(motion, elements=n)  # noqa: E731
        model = factory()
        common = dict(t0=t0, t_end=t1, t_eval=t_eval, delta0=static_solution(model, t0))
        ref_w = _mechanism_reference(model, common, reference, p["length"])
        chosen = {}                                         # (method, formulation) -> (run options, step)
        for method in methods:
            for name in SELECTED:
                for value in (MECHANISM_STEPS if method == "midpoint" else MECHANISM_RTOLS):
                    kw = dict(formulation=name, method=method, evaluation="terms", **common)
                    kw.update(h=value) if method == "midpoint" else kw.update(rtol=value, atol=value * 1e-6)
                    res = run_model(factory(), compute_energies=False, **kw)
                    err = _midspan_error(model, res, ref_w)
                    if res.success and err <= target:
                        break
                chosen[method, name] = kw, value
        timed = _timed_in_turns(factory, {key: kw for key, (kw, _) in chosen.items()}, repeats)
        for (method, name), (kw, value) in chosen.items():
            res, build_s, solve_s, cpu_s = timed[method, name]
            rows.append(dict(formulation=name, elements=n, build_s=build_s, solve_s=solve_s, cpu_s=cpu_s,
                             rhs_evaluations=res.stats["n_rhs"], error=_midspan_error(model, res, ref_w),
                             part="mechanism", method=method, evaluation="terms", rtol_or_h=value,
                             calls_per_step=_calls_per_step(factory, kw)))
            logging.info("%-13s %3d el  %-8s %s %.3g  solve %.3f s  CPU %.3f s  %.0f calls/step  error %.2e", name,
                         n, method, "h" if method == "midpoint" else "rtol", value, solve_s, cpu_s,
                         rows[-1]["calls_per_step"], rows[-1]["error"])
    return rows


def _calls_per_step(model_factory, kw) -> float:
    """Python and C function calls of one run with the options ``kw`` (set-up included), per step
    (``sys.setprofile``; a numpy function counts once, whatever its size): at these sizes a step
    costs about its calls, not its arithmetic.  Counted in a run of its own, not a timed one."""
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        count += event in ("call", "c_call")

    model = model_factory()
    sys.setprofile(profile)
    try:
        res = run_model(model, compute_energies=False, **kw)
    finally:
        sys.setprofile(None)
    return count / max(res.stats["n_steps"], 1)


def _timed_in_turns(model_factory, options: dict, repeats: int) -> dict:
    """The runs of ``options`` (key -> run options) timed in turns, ``repeats`` rounds of one run
    each: key -> (last results, least build_s, least solve_s, least CPU seconds of the run).

    On a machine shared with other work a run's time is its own plus what the others take from
    it; taking turns exposes the runs compared to the same load, and the least of the rounds is
    the least disturbed (the ratios between the keys are the measurement, not the absolute times).
    """
    best = {key: [None, np.inf, np.inf, np.inf] for key in options}
    for _ in range(repeats):
        for key, kw in options.items():
            tic = time.perf_counter()
            model = model_factory()
            build = time.perf_counter() - tic
            cpu = time.process_time()
            res = run_model(model, compute_energies=False, **kw)
            cpu = time.process_time() - cpu
            b = best[key]
            b[:] = res, min(b[1], build + res.stats["build_s"]), min(b[2], res.stats["solve_s"]), min(b[3], cpu)
    return {key: tuple(float(x) if i else x for i, x in enumerate(b)) for key, b in best.items()}


def run_mechanism(out=None, elements=(5, 10, 15, 20, 25), target=1e-3, repeats=3, t_span=0.1,
                  methods=("midpoint",), reference="midpoint"):
    """The mechanism timing (module docstring); writes DIR/timing.csv and DIR/timing.png."""
    rows = mechanism_sizes(elements, target, repeats, t_span, methods, reference=reference)
    if out is not None:
        shown = [dict(r, formulation=f"{r['formulation']} ({r['method']})") if len(methods) > 1 else r
                 for r in rows]
        _write(out, rows, shown, f"Marker-driven beam, {t_span:g} s\nsolve time at mid-span error <= {target:g}")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=["rotating-bar", "mechanism"], default="rotating-bar",
                    help="the timed problem (mechanism: the marker-driven beam)")
    ap.add_argument("--out", type=Path, default=None, help="output directory (default out/timing, "
                    "out/timing_mechanism)")
    ap.add_argument("--elements", type=int, nargs="+", default=[5, 10, 15, 20, 25])
    ap.add_argument("--large", type=int, nargs="*", default=[100, 1000, 10000])
    ap.add_argument("--target", type=float, default=None, help="relative tip accuracy of part 1 (default "
                    "1e-6); mechanism: relative mid-span accuracy (default 1e-3)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--evaluation", nargs="+", choices=["compiled", "terms"], default=["compiled", "terms"])
    ap.add_argument("--h", type=float, default=1e-6, help="midpoint step of part 2 [s]")
    ap.add_argument("--t-large", type=float, default=0.005, help="simulated time of part 2 [s]")
    ap.add_argument("--t-span", type=float, default=0.1, help="mechanism: simulated time [s]")
    ap.add_argument("--methods", nargs="+", choices=["midpoint", "DOP853"], default=["midpoint"],
                    help="mechanism: integrators to time")
    ap.add_argument("--reference", choices=["midpoint", "DOP853"], default="midpoint",
                    help="mechanism: reference run (Richardson midpoint, or DOP853 at rtol 1e-10)")
    ap.add_argument("--t-end", type=float, default=0.1, help="simulated time of part 1 [s]")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke test in a few seconds, not a benchmark (see the module docstring)")
    ap.add_argument("--formulations", nargs="+", choices=list(FORMULATIONS), default=list(FORMULATIONS))
    a = ap.parse_args(argv)
    SELECTED[:] = a.formulations
    if a.quick:                    # quick values for the options left at their defaults
        quick = {"rotating-bar": dict(elements=[5, 10], large=[100, 1000], target=1e-4, repeats=1,
                                      evaluation=["compiled"], t_large=2e-4, t_end=0.01),
                 "mechanism": dict(elements=[5], target=1e-2, repeats=1, t_span=0.005)}[a.case]
        for key, value in quick.items():
            if getattr(a, key) == ap.get_default(key):
                setattr(a, key, value)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    flexmbs_log = logging.getLogger("flexmbs")
    level = flexmbs_log.level
    flexmbs_log.setLevel(logging.WARNING)
    try:
        return _main(a, sys.argv[1:] if argv is None else argv)
    finally:
        flexmbs_log.setLevel(level)              # main() may run inside another program (tests)


def _main(a, argv) -> int:
    print(f"Measured: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, `python cases/timing.py {' '.join(argv)}`, "
          f"load average {os.getloadavg()[0]:.1f}")
    if a.case == "mechanism":
        a.out = Path("out/timing_mechanism") if a.out is None else a.out
        rows = run_mechanism(a.out, a.elements, 1e-3 if a.target is None else a.target, a.repeats, a.t_span,
                             tuple(a.methods), a.reference)
    else:
        a.out = Path("out/timing") if a.out is None else a.out
        rows = run(a.out, a.elements, a.large, 1e-6 if a.target is None else a.target, a.repeats,
                   tuple(a.evaluation), a.h, a.t_large, a.t_end)
    if a.case == "mechanism":
        print(f"{'formulation':13s} {'elements':>8s} {'method':>9s} {'h_or_rtol':>9s} {'build_s':>8s} "
              f"{'solve_s':>8s} {'cpu_s':>8s} {'rhs':>8s} {'calls/step':>10s} {'error':>9s}")
        for r in rows:
            print(f"{r['formulation']:13s} {r['elements']:8d} {r['method']:>9s} {r['rtol_or_h']:9.3g} "
                  f"{r['build_s']:8.3f} {r['solve_s']:8.3f} {r['cpu_s']:8.3f} {r['rhs_evaluations']:8d} "
                  f"{r['calls_per_step']:10.0f} {r['error']:9.2e}")
    else:
        print(f"{'formulation':13s} {'elements':>8s} {'evaluation':>10s} {'build_s':>8s} {'solve_s':>8s} "
              f"{'rhs':>8s} {'error':>9s}")
        for r in rows:
            print(f"{r['formulation']:13s} {r['elements']:8d} {r['evaluation']:>10s} {r['build_s']:8.3f} "
                  f"{r['solve_s']:8.3f} {r['rhs_evaluations']:8d} {r['error']:9.2e}")
    if a.quick:
        print("quick mode: a smoke test of the timing chain, not the benchmark (run without --quick)")
    print(f"wrote {a.out}/timing.csv and {a.out}/timing.png")
    return 0


if __name__ == "__main__":
    sys.exit(call_quietly(main))
