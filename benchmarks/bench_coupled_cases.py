"""The coupled four-bar and spin-up beam on both paths of index3-alpha: numpy against the compiled kernel.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_coupled_cases.py [--repeats 2]
    python benchmarks/bench_coupled_cases.py --quick     # a smoke test of the script, not a measurement

Each case's coupled system (`build_coupled` of cases/four_bar.py and cases/spinup_beam.py, at the
case's defaults, so what ``--coupled`` runs) is integrated by index3-alpha (`flexmbs.simulate` of its
`ConstrainedProblem`: the integration `flexmbs.run` does for it, without the outputs' post-processing)
with ``kernel="numpy"`` and ``kernel="compiled"``, each path with its default refactorization
("step" on numpy, "contraction" in the kernel).  Printed per case: coordinates / constraint rows,
steps, the CPU time of the integration (``time.process_time``: the machine is shared) on each path, the
least of ``--repeats`` runs, per step, and max |q_numpy - q_compiled| over the outputs, which is
set by the Newton tolerance since the paths refactorize differently (with the same policy they
agree to round-off, tests/test_compiled.py).  docs/benchmarks.md, section 11.1.
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import four_bar  # noqa: E402
import slider_crank  # noqa: E402
import spinup_beam  # noqa: E402

from coupled_slider_crank import index3_alpha  # noqa: E402

CASES = ("four_bar", "spinup_beam", "spinup_beam_torque")
LABEL = {"four_bar": "`four_bar.py --coupled` (10 elements, axial-strain)",
         "spinup_beam": "`spinup_beam.py --coupled` (10 elements, ω stiffening, {t_end:g} s)",
         "spinup_beam_torque": "`spinup_beam.py --coupled --torque` (the hub driven by a torque law, a `torque_load`)"}


def four_bar_run(t_end: float | None = None) -> tuple:
    """(system, t_end, h, options of `index3_alpha`) of `four_bar.py --coupled` at its defaults, as
    `four_bar.run_coupled` integrates it (t_end: the case's two revolutions unless given)."""
    p = four_bar.DEFAULTS
    phys = {k: p[k] for k in ("elements", "ground", "crank", "coupler", "rocker", "depth", "width", "youngs",
                              "density", "crank_speed", "stiffening", "coupled_stiffening")}
    system, _, _ = four_bar.build_coupled(**phys)
    if t_end is None:
        t_end = 2.0 * np.pi * p["revolutions"] / abs(p["crank_speed"])
    t_eval = slider_crank.solver_options(p, t_end)["t_eval"]
    return system, t_end, p["h_coupled"], dict(t_eval=t_eval, rho_inf=p["rho_inf"])


def spinup_beam_run(torque: bool, t_end: float | None = None) -> tuple:
    """(system, t_end, h, options of `index3_alpha`) of `spinup_beam.py --coupled [--torque]` at its
    defaults, as `spinup_beam.run_coupled` integrates it (t_end: the case's 20 s unless given)."""
    p = spinup_beam.DEFAULTS
    system, _, _, _ = spinup_beam.build_coupled(p["elements"], p["omega_s"], p["t_s"], not p["no_stiffening"],
                                                torque, p["hub_inertia"], p["coupled_stiffening"])
    t_end = p["t_end"] if t_end is None else t_end
    t_eval = np.linspace(0.0, t_end, int(round(t_end / p["dt_out"])) + 1)
    return system, t_end, p["h"], dict(t_eval=t_eval, rho_inf=p["rho_inf"],
                                       divergence_limit=spinup_beam.DIVERGENCE_LIMIT)


def case_run(name: str, t_end: float | None = None) -> tuple:
    """(system, t_end, h, options) of the case ``name`` (one of CASES)."""
    if name == "four_bar":
        return four_bar_run(t_end)
    return spinup_beam_run(name == "spinup_beam_torque", t_end)


def timed_runs(system, t_end: float, h: float, options: dict, kernel: str, repeats: int):
    """(least CPU time [s] of ``repeats`` runs of `index3_alpha` on ``kernel``, the last Solution)."""
    cpu, sol = math.inf, None
    for _ in range(repeats):
        c0 = time.process_time()
        sol = index3_alpha(system, t_end, h, kernel=kernel, **options)
        cpu = min(cpu, time.process_time() - c0)
        if not sol.success:
            raise RuntimeError(f"{kernel} path: {sol.message}")
    return cpu, sol


def measure(name: str, repeats: int, t_end: float | None = None) -> dict:
    """One row of the table: both paths on the case ``name``."""
    system, t_end, h, options = case_run(name, t_end)
    row = dict(n_q=system.n_q, n_c=system.n_c, t_end=t_end)
    q = {}
    for kernel in ("numpy", "compiled"):
        cpu, sol = timed_runs(system, t_end, h, options, kernel, repeats)
        row[kernel] = cpu
        row["steps"] = sol.n_steps
        q[kernel] = sol.x[:, :system.n_q]
    row["dq"] = float(np.max(np.abs(q["numpy"] - q["compiled"])))
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=2, help="runs of each case on each path; the least CPU time counts")
    ap.add_argument("--quick", action="store_true",
                    help="one run of 0.02 s of each case: a smoke test, not a measurement")
    a = ap.parse_args(argv)
    if a.repeats < 1:
        ap.error(f"--repeats must be at least 1, got {a.repeats}")
    from flexmbs.compiled import kernel_status
    status = kernel_status()
    if not status.installed:
        ap.error(f"the compiled kernel is {status}: this benchmark compares the two paths "
                 "(build it with `python setup.py build_ext --inplace`)")
    repeats, t_end = (1, 0.02) if a.quick else (a.repeats, None)
    args = sys.argv[1:] if argv is None else argv
    print(f"Measured: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"`{' '.join(['python', 'benchmarks/bench_coupled_cases.py', *args])}`, {platform.machine()}, python "
          f"{platform.python_version()}, numpy {np.__version__}, load average {os.getloadavg()[0]:.1f}; "
          f"CPU time of the integration, least of {repeats} run(s)")
    print("\n| case | coordinates / rows | steps | numpy [s] | numpy µs/step | compiled [s] | compiled µs/step | "
          "max \\|Δq\\| between the paths |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name in CASES:
        r = measure(name, repeats, t_end)
        print(f"| {LABEL[name].format(t_end=r['t_end'])} | {r['n_q']} / {r['n_c']} | {r['steps']} | {r['numpy']:.3g} | "
              f"{1e6 * r['numpy'] / r['steps']:.0f} | {r['compiled']:.3g} | {1e6 * r['compiled'] / r['steps']:.0f} | "
              f"{r['dq']:.1e} |")
    if a.quick:
        print("quick mode: a smoke test of the script, not a measurement (run without --quick)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
