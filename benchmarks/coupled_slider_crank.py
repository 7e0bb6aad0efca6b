"""The coupled slider-crank (cases/slider_crank.py --coupled) against Exudyn's ANCF model, at matched accuracy.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/coupled_slider_crank.py
        [--elements 8] [--revolutions 2] [--flexmbs-k 1 2 3 4 6 8 16] [--exudyn-k 1 2 3 4 6 8 16 32] [--no-exudyn]
        [--kernel auto|compiled|numpy] [--numpy-k 2] [--profile-revolutions 0.25]

Both codes run the mechanism of the case (8 beam elements, two revolutions from the dead centre)
at steps h = dt_out / k, dt_out = 0.5 deg / 150 rad/s = 5.82e-5 s the output interval (k = 2 is
flexmbs's default, h = 2.91e-5 s):

- **flexmbs**: `slider_crank.build_coupled` (crank and slider rigid bodies, the rod a FlexibleBody
  of Euler-Bernoulli beams on its chord frame, stiffened by each element's own axial strain,
  ``stiffening="axial-strain"``, the case's default) integrated by ``index3-alpha``
  (rho_inf = 0.9), `flexmbs.simulate` of its `ConstrainedProblem` (the integration `flexmbs.run` does
  for it, without the outputs' post-processing), on the path ``--kernel`` chooses
  (default "auto": the compiled kernel, flexmbs/compiled.py, when it is installed); the table
  gives the evaluations of M, Q, C and C_q per step (``Solution.n_rhs / n_steps``, the
  finite-difference tangents included) and the LU factorizations;
- **Exudyn** (if installed): ``exudyn_slider_crank`` of benchmarks/bench_vs_exudyn.py, 8
  ``ANCFCable2D`` elements (nonlinear, with the axial-force stiffening), generalized-alpha with
  spectral radius 1 and a modified Newton.  Both models carry the full axial-force stiffening and
  their converged peaks agree to about 1e-5 (docs/benchmarks.md sec. 11), but they are different
  discretizations, so each code is measured against its own converged answer.

**Accuracy measure** (both codes): the time-step error of the peak mid-span deflection, i.e. the
largest |w| over the two revolutions of the mid-span deflection relative to the chord, refined
by a parabola through the largest output and its neighbours (`slider_crank.peak`; outputs every
0.5 deg for every step), relative to the peak of the same code at a much smaller step:

.. code:: text

    e(h) = |w_peak(h) - w_ref| / |w_ref|,    w_ref = w_peak(h_ref),  h_ref = dt_out / k_ref

(``--flexmbs-ref-k``, ``--exudyn-ref-k``; the table also gives the change from the second finest
run, a bound on the reference's own error).  Not Richardson: the peak does not converge like h^2.
It carries the rod's axial vibration (1.8e4 rad/s, excited at the start, 250 periods over two
revolutions), whose phase at the peak converges only once the step resolves it well (the
phase error of a second-order method grows like (omega h)^2 t), so e(h) is not monotone in h.
A second measure is the error of the whole history, max_t |w(t; h) - w(t; h_ref)| / max_t |w_ref|
over the outputs: the worst phase and amplitude error of the deflection, not one value.
**Time**: CPU time (``time.process_time``: the machine is shared) of the integration only
(flexmbs: `index3_alpha`; Exudyn: ``SolveDynamic``), model building excluded, the least of
``--repeats`` runs.  **Time at matched error**: for a target error, the CPU time of each code's
cheapest run whose error is at most the target (an error is not monotone in h, so no
interpolation; both codes run the same grid of k, so that neither gets steps the other does
not).  The table takes as targets the errors of each of Exudyn's runs, by both measures, and
marks the one nearest 0.4 s (issue 14: "Exudyn solves it in about 0.4 s").

Then the numpy path against the compiled one at ``--numpy-k`` (the cost per step before and after
the kernel, the same run otherwise), and a profile of a shorter run of the numpy path at the
default step (cProfile, cumulative times within the steps; cProfile cannot see into the
kernel).  Without Exudyn the script says so and measures flexmbs only.
"""
from __future__ import annotations

import argparse
import cProfile
import math
import os
import platform
import pstats
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import slider_crank  # noqa: E402

from flexmbs.integrators import ConstrainedProblem, simulate  # noqa: E402
from flexmbs.mechanisms import chord_deflection  # noqa: E402

OMEGA = slider_crank.DEFAULTS["crank_speed"]
DT_OUT = math.radians(slider_crank.DEFAULTS["degrees_out"]) / OMEGA
PARTS = {"index3_alpha.py:_step_impl": "step (all)", "system.py:mass_matrix": "mass matrix M",
         "system.py:forces": "forces Q (Q_v, elastic, stiffening)",
         "system.py:_constraint_terms": "constraints C and C_q (joint batch, Euler-parameter norms)",
         "system.py:quadratic_velocity_jacobian": "dQ_v/dv for the iteration matrix",
         "system.py:elastic_stiffness": "elastic stiffness for the iteration matrix",
         "index3_alpha.py:_factor": "iteration matrix: build + LU (incl. dQ_v/dv)",
         "index3_alpha.py:_tangents": "finite-difference K_t, C_t (first step only)",
         "base.py:solve": "LU solves"}


def index3_alpha(system, t_end: float, h: float, **options):
    """The `flexmbs.integrators.Solution` of ``system`` from its bodies' start over [0, t_end] by index3-alpha
    (rho_inf = 0.9 unless given): the integration alone, as `flexmbs.run` does it for a System."""
    problem = ConstrainedProblem(system)
    x0 = problem.state0(system.initial_coordinates(), system.initial_velocities())
    return simulate(problem, (0.0, t_end), x0, method="index3-alpha", h=h, **{"rho_inf": 0.9, **options})


def flexmbs_run(k: int, elements: int, revolutions: float, kernel: str = "auto", info: dict | None = None,
                repeats: int = 1):
    """(CPU [s], steps, peak [m], its crank angle [deg], evaluations of M, Q, C, C_q per step, mid-span
    deflection at the outputs [m]) of the coupled case at h = dt_out / k, the CPU time the least of
    ``repeats`` runs; ``info`` gets the LUs, tangents and the path that ran."""
    system, rod, model = slider_crank.build_coupled(elements=elements)
    t_end = 2.0 * math.pi * revolutions / OMEGA
    p = dict(slider_crank.DEFAULTS)
    t_eval = slider_crank.solver_options(p, t_end)["t_eval"]
    h = DT_OUT / k * (1.0 + 1e-9)              # simulate aligns h to dt_out / ceil(dt_out / h) = dt_out / k
    cpu = math.inf
    for _ in range(repeats):
        c0 = time.process_time()
        sol = index3_alpha(system, t_end, h, t_eval=t_eval, rho_inf=p["rho_inf"], kernel=kernel)
        cpu = min(cpu, time.process_time() - c0)
    if info is not None:
        info.update(lu=sol.n_lu, tangents=sol.n_jac)
    if not sol.success:
        raise RuntimeError(f"flexmbs at k = {k}: {sol.message}")
    w = chord_deflection(model, sol.x[:, system.slice(rod)][:, 7:], [p["rod"] / 2])[:, 0]
    peak, angle = slider_crank.peak({"midspan_deflection": w, "crank_angle": OMEGA * sol.t})
    return cpu, sol.n_steps, peak, angle, sol.n_rhs / sol.n_steps, w


def exudyn_run(k: int, elements: int, revolutions: float, repeats: int = 1):
    from bench_vs_exudyn import exudyn_slider_crank
    cpu = math.inf
    for _ in range(repeats):
        _, c, n, angle, w = exudyn_slider_crank(DT_OUT / k, elements=elements, revolutions=revolutions)
        cpu = min(cpu, c)
    peak, ang = slider_crank.peak({"midspan_deflection": w, "crank_angle": np.radians(angle)})
    return cpu, int(n), peak, ang, None, np.asarray(w)


def time_at(errors: dict, target: float, which: int = 0) -> tuple[float, str]:
    """(CPU [s], "k = ..") of the cheapest run whose error ``which`` (0: peak, 1: history) is <= target
    (inf if none)."""
    ok = [(e[2], k) for k, e in errors.items() if e[which] <= target * (1.0 + 1e-12)]
    if not ok:
        return math.inf, "none"
    cpu, k = min(ok)
    return cpu, f"k = {k}"


def history_error(w, w_ref) -> float:
    """max |w - w_ref| over the outputs, relative to max |w_ref|: the error of the whole deflection history."""
    n = min(len(w), len(w_ref))
    return float(np.max(np.abs(w[:n] - w_ref[:n])) / np.max(np.abs(w_ref[:n])))


def table(name, runs, ks, k_ref):
    ref, w_ref = runs[k_ref][2], runs[k_ref][5]
    below = max(k for k in runs if k < k_ref)
    print(f"\n{name}: reference peak {1e3 * ref:+.6f} mm at k = {k_ref} (change from k = {below}: "
          f"{abs(runs[below][2] - ref) / abs(ref):.1e}; history change {history_error(runs[below][5], w_ref):.1e})")
    evals = runs[k_ref][4] is not None
    print("| k | h [s] | steps | " + ("evaluations per step | " if evals else "")
          + "CPU [s] | CPU per step [ms] | peak [mm] | at [deg] | peak error | history error |")
    print("|---:|---:|---:|" + ("---:|" if evals else "") + "---:|---:|---:|---:|---:|---:|")
    out = {}
    for k in sorted(runs):
        cpu, n, w, ang, ev, hist = runs[k]
        e = abs(w - ref) / abs(ref)
        eh = history_error(hist, w_ref)
        mark = "" if k in ks else " (ref)"
        print(f"| {k}{mark} | {DT_OUT / k:.3g} | {n} | " + (f"{ev:.2f} | " if evals else "")
              + f"{cpu:.3f} | {1e3 * cpu / n:.3f} | {1e3 * w:+.5f} | {ang:.2f} | {e:.2e} | {eh:.2e} |")
        if k in ks:
            out[k] = (e, eh, cpu)
    return out, ref


def profile(elements: int, revolutions: float, k: int):
    system, _, _ = slider_crank.build_coupled(elements=elements)
    t_end = 2.0 * math.pi * revolutions / OMEGA
    prof = cProfile.Profile()
    prof.enable()
    sol = index3_alpha(system, t_end, DT_OUT / k * (1.0 + 1e-9), kernel="numpy")
    prof.disable()
    stats = pstats.Stats(prof).stats
    rows, total = [], None
    for (path, _, func), (_, ncalls, _, ct, _) in stats.items():
        key = f"{Path(path).name}:{func}"
        if key in PARTS:
            rows.append((PARTS[key], ncalls, ct))
            if key.endswith("_step_impl"):
                total = ct
    print(f"\nprofile of the numpy path, {revolutions:g} revolution(s) at k = {k} ({sol.n_steps} steps; cProfile "
          "adds overhead):")
    print("| part | calls | calls per step | share of the step time |")
    print("|---|---:|---:|---:|")
    for name, ncalls, ct in sorted(rows, key=lambda r: -r[2]):
        print(f"| {name} | {ncalls} | {ncalls / sol.n_steps:.2f} | {100 * ct / total:.0f} % |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=8)
    ap.add_argument("--revolutions", type=float, default=2.0)
    ap.add_argument("--flexmbs-k", type=int, nargs="+", default=[1, 2, 3, 4, 6, 8, 16],
                    help="steps per output interval (the same grid as Exudyn's below k = 32)")
    ap.add_argument("--flexmbs-ref-k", type=int, default=32, help="the reference run (k above all others)")
    ap.add_argument("--exudyn-k", type=int, nargs="+", default=[1, 2, 3, 4, 6, 8, 16, 32])
    ap.add_argument("--exudyn-ref-k", type=int, default=256)
    ap.add_argument("--no-exudyn", dest="exudyn", action="store_false")
    ap.add_argument("--profile-revolutions", type=float, default=0.25,
                    help="length of the profiled run of the numpy path (0: none)")
    ap.add_argument("--kernel", choices=("auto", "compiled", "numpy"), default="auto",
                    help="index3-alpha's path for the tables (default: the compiled kernel when installed)")
    ap.add_argument("--numpy-k", type=int, default=2, help="k of the numpy-against-compiled comparison (0: none)")
    ap.add_argument("--repeats", type=int, default=2, help="runs of each configuration; the least CPU time counts")
    a = ap.parse_args(argv)
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    args = sys.argv[1:] if argv is None else argv
    print(f"Measured: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"`{' '.join(['python', 'benchmarks/coupled_slider_crank.py', *args])}`, {platform.machine()} "
          f"{platform.system()}, {os.cpu_count()} cores, python {platform.python_version()}, numpy "
          f"{np.__version__}, load average {load:.1f}; CPU time, least of {a.repeats} run(s)")
    default_k = math.ceil(DT_OUT / slider_crank.DEFAULTS["h_coupled"])       # simulate's aligned step
    print(f"{a.elements} elements, {a.revolutions:g} revolutions; dt_out = {DT_OUT:.4g} s; h = dt_out / k; "
          f"flexmbs's default --h-coupled gives k = {default_k}")

    from flexmbs.compiled import kernel_status
    status = kernel_status()
    path = "numpy" if a.kernel == "numpy" or not status.installed else "compiled"
    print(f"flexmbs path: {path}" + (f" (the kernel is {status})" if a.kernel != "numpy" and not status.installed else ""))
    infos = {}
    fx = {k: flexmbs_run(k, a.elements, a.revolutions, a.kernel, infos.setdefault(k, {}), a.repeats)
          for k in sorted(set(a.flexmbs_k) | {a.flexmbs_ref_k})}
    f_err, f_ref = table(f"flexmbs (index3-alpha, rho_inf 0.9, {path} path)", fx, a.flexmbs_k, a.flexmbs_ref_k)
    print("LU factorizations / finite-difference tangents: "
          + ", ".join(f"k = {k}: {infos[k]['lu']} / {infos[k]['tangents']}" for k in sorted(infos)))
    ex = None
    if a.exudyn:
        try:
            import exudyn
        except ImportError:
            print("\nExudyn is not installed (pip install exudyn): its side is skipped.")
        else:
            ex = {k: exudyn_run(k, a.elements, a.revolutions, a.repeats if k != a.exudyn_ref_k else 1)
                  for k in sorted(set(a.exudyn_k) | {a.exudyn_ref_k})}
            e_err, e_ref = table(f"Exudyn {exudyn.__version__} (ANCFCable2D, generalized-alpha rho_inf 1, "
                                 "modified Newton)", ex, a.exudyn_k, a.exudyn_ref_k)
    if ex is not None:
        k04 = min(e_err, key=lambda k: abs(e_err[k][2] - 0.4))
        print("\nCPU time at matched error: for each Exudyn run, its error and the CPU time of the cheapest "
              "run of each code whose error is at most that, by the peak and by the whole history:")
        print("| Exudyn run | peak error | flexmbs CPU [s] | Exudyn CPU [s] | flexmbs / Exudyn | history error | "
              "flexmbs CPU [s] | Exudyn CPU [s] | flexmbs / Exudyn |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for k in sorted(e_err):
            row = [f"k = {k}" + (" (nearest 0.4 s)" if k == k04 else "")]
            for which in (0, 1):
                e = e_err[k][which]
                tf, kf = time_at(f_err, e, which)
                te, ke = time_at(e_err, e, which)
                row += [f"{e:.2e}", f"{tf:.3f} ({kf})", f"{te:.3f} ({ke})", f"{tf / te:.2f}"]
            print("| " + " | ".join(row) + " |")
    if a.numpy_k > 0 and path == "compiled":
        print(f"\nthe numpy path against the compiled one at k = {a.numpy_k} (each path's default refactorization):")
        print("| path | CPU [s] | CPU per step [ms] | evaluations per step | LUs | peak [mm] | at [deg] |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for kernel in ("numpy", "compiled"):
            info = {}
            cpu, n, w, ang, ev, _ = flexmbs_run(a.numpy_k, a.elements, a.revolutions, kernel, info, a.repeats)
            print(f"| {kernel} | {cpu:.3f} | {1e3 * cpu / n:.4f} | {ev:.2f} | {info['lu']} | {1e3 * w:+.6f} | {ang:.2f} |")
    if a.profile_revolutions > 0:
        profile(a.elements, a.profile_revolutions, default_k)


if __name__ == "__main__":
    main()
