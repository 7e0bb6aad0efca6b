"""The whole process, flexmbs against Exudyn: each job as a new process, CPU time and peak memory.

    python benchmarks/bench_whole_process.py [--repeats 3] [--rows a,b,...] [--checkout before=DIR]
        [--no-exudyn] [--no-bytecode-cache] [--dry-run]
    python benchmarks/bench_whole_process.py exudyn ROW --out DIR [--h H] [--plots]   # one Exudyn job

Rows (issue 22's table, then its item 5): the coupled slider-crank without and with plots, the
torque-driven coupled spin-up, the triple pendulum (AB4 and index3-alpha), IFToMM A02 (the double
four-bar) and A03 (Andrews' squeezer), the controlled pendulum and the same pendulum under a
torque of time only.  The flexmbs side of a row is a ``python -m flexmbs run CASE ...`` command
in the checkout (``PYTHONPATH=DIR``, cwd DIR, so DIR/cases and DIR/flexmbs are used);
``--checkout LABEL=DIR`` adds an older checkout as a column, e.g. the code before issue 22:
``git -C /work/main archive e868012 | tar -x -C /tmp/before``.  The compiled kernel is the
checkout's own ``_flexmbs_kernel*.so`` if DIR has one, else the venv's: an older checkout needs
its own (``cd DIR && python setup.py build_ext --inplace``; with the venv's kernel of a newer
csrc/ its compiled runs fail, "argument 8 must be sequence of length 5, not 4" for e868012), and
after a change of csrc/ the checkout measured needs its kernel rebuilt the same way.  The
Exudyn side is this file run as ``exudyn ROW``: a process that imports only numpy and exudyn
(and matplotlib with plots), builds the same model, integrates it over the same interval and
saves the same output quantities at the same output times to DIR/exudyn.npz.

Timing: user + system CPU time and peak resident memory of each process from ``os.wait4`` (the
child's own rusage), the least of ``--repeats`` rounds; within a round the rows, the checkouts
and Exudyn run in turns, so the load of a shared machine falls on all alike.  A first untimed
run of each command warms the file cache and writes the outputs that the accuracy is measured
on, and the bytecode of every module it imports: each process reads its modules' .pyc from a
temporary PYTHONPYCACHEPREFIX, as a user's installed package is (where PYTHONDONTWRITEBYTECODE=1
is set, as on the shared development machine, each process would otherwise compile flexmbs's
sources again, about 1 s of CPU for the coupled slider-crank; ``--no-bytecode-cache`` measures that).

Accuracy (``ACCURACY`` below, printed for both codes): each row names one output quantity and
its reference.  A02 and A03 have published or closed-form references (the exact parallelogram
solution; the Bari test set's q(0.03)); the other rows are measured against the same code's
run at a step ``REF_DIVISOR`` times smaller (its own converged solution), because the two
codes' flexible models differ (ANCF against floating frame) and agree only to that modelling
difference.  A row is "matched" when Exudyn's error is at most flexmbs's.
"""
from __future__ import annotations

import argparse
import ast
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve()
REF_DIVISOR = 8
DT_SC = math.radians(0.5) / 150.0           # the slider-crank's output interval: 0.5 degrees at 150 rad/s


@dataclass(frozen=True)
class Row:
    """One line of the table: the flexmbs command, the Exudyn job and its step, the accuracy measure."""
    label: str
    case: str                                  # cases/CASE.py must exist in a checkout
    sets: tuple[str, ...]                      # --set KEY=VALUE of the flexmbs command
    plots: bool
    exudyn_h: float                            # Exudyn's step [s]
    ref_sets: tuple[str, ...] = ()             # --set of the flexmbs reference run (a finer step)
    note: str = ""                             # printed under the table

    def flexmbs_args(self, out: Path, reference: bool = False) -> list[str]:
        sets = self.sets + (self.ref_sets if reference else ())
        args = ["-m", "flexmbs", "run", self.case, "-q", *[a for s in sets for a in ("--set", s)], "--out", str(out)]
        return args + ([] if self.plots and not reference else ["--no-plots"])


ROWS = {
    "slider-crank": Row("coupled slider-crank, whole process, no plots", "slider_crank", ("coupled=true",), False,
                        DT_SC / 4, ref_sets=(f"h_coupled={DT_SC / 2 / REF_DIVISOR!r}",),
                        note="Exudyn: bench_vs_exudyn.py's ANCF model (rho_inf 1, modified Newton); at flexmbs's step "
                             "dt_out/2 its error was 2.6e-3 against flexmbs's 2.5e-3 (2026-11-27), so dt_out/4"),
    "slider-crank-plots": Row("coupled slider-crank, with plots", "slider_crank", ("coupled=true",), True, DT_SC / 4,
                              ref_sets=(f"h_coupled={DT_SC / 2 / REF_DIVISOR!r}",),
                              note="flexmbs draws deflection.png; Exudyn one PNG of the same deflection (matplotlib)"),
    "spinup-torque": Row("torque-driven coupled spin-up (+ the prescribed run)", "spinup_beam",
                         ("coupled=true", "torque=true"), False, 0.0025, ref_sets=(f"h={0.01 / REF_DIVISOR!r}",),
                         note="both codes run the torque-driven hub and the prescribed spin-up, as the case does; "
                              "Exudyn: a RigidBody2D hub and 10 ANCFCable2D clamped by a user-function constraint; "
                              "its errors at h = 0.01 and 0.005 s were 3.8e-4 and 9.4e-5 against flexmbs's 6.7e-5 "
                              "(2026-11-27), so 0.0025 s"),
    "triple-ab4": Row("triple pendulum, AB4 (index-1, kernel evaluations), t_end 2 s", "triple_pendulum",
                      ("t_end=2", "coordinates=euler-parameters"), False, 1e-4,
                      ref_sets=(f"h={1e-3 / REF_DIVISOR!r}",),
                      note="t_end 2 s and Euler parameters reproduce the issue's 820 us a step on the numpy path "
                           "(now M, Q, C, C_q from the kernel: docs/benchmarks.md 20.3; the case's default natural "
                           "coordinates, numpy, take 13-17 ms a step); Exudyn's generalized-alpha needs h = 1e-4 s "
                           "for AB4's error"),
    "triple-index3": Row("triple pendulum, index3-alpha (compiled), t_end 2 s", "triple_pendulum",
                         ("t_end=2", "coordinates=euler-parameters", "integrator=index3-alpha",
                          "stabilization=none"), False, 1e-3, ref_sets=(f"h={1e-3 / REF_DIVISOR!r}",),
                         note="Exudyn: three RigidBody (Euler parameters), SphericalJoints, rho_inf 1"),
    "a02": Row("IFToMM A02, double four-bar, 10 s", "double_four_bar", (), False, 2e-4,
               note="the case's default step 2e-4 s (issue 25) gives 8.0e-6; Exudyn at the same step 7.7e-6, at "
                    "1e-3 s 2.0e-4 (2026-11-27)"),
    "a03": Row("IFToMM A03, Andrews' squeezer, 0.03 s", "andrews_squeezer", ("integrator=index3-alpha", "h=1e-5"),
               False, 1e-5,
               note="flexmbs at Exudyn's accuracy: the case's default (DOP853, rtol 1e-8, issue 25) reaches 3.2e-9, "
                    "which Exudyn's generalized-alpha at 1e-5 s (1.1e-4) is 3e4 times from; index3-alpha at "
                    "h = 1e-5 s gives 1.1e-4 (2026-11-27)"),
    "controlled": Row("controlled pendulum (PD at 1 kHz), 3 s", "controlled_pendulum", (), False, 1.25e-4,
                      ref_sets=(f"h={2.5e-4 / REF_DIVISOR!r}",),
                      note="Exudyn: the PD law sampled in a pre-step user function and held by a load user function; "
                           "at flexmbs's step its error was 1.3 times flexmbs's, so half of it"),
    "feedforward": Row("the same pendulum, torque of time only", "controlled_pendulum", ("control=feedforward",),
                       False, 1.25e-4, ref_sets=(f"h={2.5e-4 / REF_DIVISOR!r}",)),
}


# ---------------------------------------------------------------------------------------------------
# running and timing processes
@dataclass
class Outcome:
    cpu: float = math.inf            # least user + system [s]
    rss_kb: int = 0                  # peak resident set of that process [kB]
    error: str = ""                  # why the command failed (empty: it ran)


def run_process(args: list[str], cwd: Path, env: dict) -> tuple[float, int, str]:
    """(user + system CPU [s], peak RSS [kB], error text or "") of one child ``python ARGS``."""
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err,
                                text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read()
    failed = "" if proc.returncode == 0 else (text.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
    failed = failed.removeprefix("flexmbs run: error: ")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss, failed


def bytecode_env(env: dict, pycache: Path | None) -> dict:
    """``env`` with every module's bytecode cached under ``pycache`` (PYTHONPYCACHEPREFIX), as an
    installed package's is (pip compiles a wheel at install, an editable install writes __pycache__
    at the first run), even where PYTHONDONTWRITEBYTECODE is set; ``None`` keeps the environment's
    setting (with PYTHONDONTWRITEBYTECODE=1 each process compiles flexmbs's ~200 modules again)."""
    if pycache is None:
        return env
    env = {**env, "PYTHONPYCACHEPREFIX": str(pycache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def flexmbs_env(checkout: Path, pycache: Path | None = None) -> dict:
    """The child's environment: the checkout's flexmbs first on the path, one BLAS thread."""
    return bytecode_env({**os.environ, "PYTHONPATH": str(checkout), "OPENBLAS_NUM_THREADS": "1"}, pycache)


def exudyn_env(pycache: Path | None = None) -> dict:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    env.pop("PYTHONPATH", None)
    return bytecode_env(env, pycache)


def exudyn_args(key: str, out: Path, h: float, plots: bool) -> list[str]:
    return [str(THIS), "exudyn", key, "--out", str(out), "--h", repr(h)] + (["--plots"] if plots else [])


def checkout_arg(text: str) -> tuple[str, Path]:
    label, sep, directory = text.partition("=")
    if not sep or not label or not (Path(directory) / "flexmbs" / "__init__.py").is_file():
        raise argparse.ArgumentTypeError(f"--checkout expects LABEL=DIR with DIR/flexmbs/__init__.py, got {text!r}")
    return label, Path(directory).resolve()


def rows_arg(text: str) -> list[str]:
    keys = [k.strip() for k in text.split(",") if k.strip()]
    unknown = [k for k in keys if k not in ROWS]
    if unknown or not keys:
        raise argparse.ArgumentTypeError(f"--rows expects a comma-separated list of {', '.join(ROWS)}; got {text!r}")
    return keys


def load_average() -> str:
    try:
        return ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


# ---------------------------------------------------------------------------------------------------
# accuracy: each row's quantity from the files of a run, and its error
def quantity(key: str, out: Path, side: str):
    """(t, y): the row's compared output quantity from DIR/results.npz (flexmbs) or DIR/exudyn.npz."""
    import numpy as np
    d = np.load(out / ("results.npz" if side == "flexmbs" else "exudyn.npz"))
    if side == "exudyn":
        return d["t"], d["y"]
    if key.startswith("slider-crank"):
        return d["t"], d["midspan_deflection"]
    if key == "spinup-torque":
        return d["t"], d["displacement"][:, -1, 1]
    if key.startswith("triple"):
        return d["t"], d["tip"]
    if key == "a02":
        return d["t"], d["B0"]
    if key == "a03":
        return d["t"], d["q"]
    return d["t"], d["angle"]


def a02_exact(t):
    """B0 of the exact parallelogram motion: [(N+1)/3 + N] phi'' = [(N+1)/2 + N] (g/L) sin phi, N = 2,
    phi(0) = 0, phi'(0) = 1 rad/s, B0 = L (sin phi, cos phi) (cases/double_four_bar.py; DOP853, rtol 1e-12)."""
    import numpy as np
    from scipy.integrate import solve_ivp
    n, g, L = 2, 9.81, 1.0
    k = ((n + 1) / 2 + n) / ((n + 1) / 3 + n) * g / L
    sol = solve_ivp(lambda _, y: [y[1], k * math.sin(y[0])], (0.0, t[-1]), [0.0, 1.0], method="DOP853",
                    rtol=1e-12, atol=1e-14, t_eval=t)
    return L * np.stack([np.sin(sol.y[0]), np.cos(sol.y[0])], axis=1)


# q(0.03) of Andrews' squeezer, Bari test set (andrews), ../shared/BENCHMARKS.md sec. 6d
A03_Q_REF = (15.81077119629904, -15.75637105984298, 0.04082224013073101, -0.5347301163226948, 0.5244099658805304,
             0.5347301163226948, 1.048080741042263)


def relative_error(t_ref, y_ref, t, y) -> float:
    """max over the reference's outputs of |y - y_ref| / max |y_ref| (y interpolated to t_ref)."""
    import numpy as np
    y, y_ref = np.asarray(y).reshape(len(t), -1), np.asarray(y_ref).reshape(len(t_ref), -1)
    yi = np.stack([np.interp(t_ref, t, c) for c in y.T], axis=1)
    return float(np.abs(yi - y_ref).max() / np.abs(y_ref).max())


MEASURES = {
    "a02": "max_t |B0 - B0_exact| / max |B0_exact| (closed-form parallelogram solution)",
    "a03": "max_k |q_k(0.03) - q_k,ref| [rad] (Bari test set)",
    "slider-crank": "max_t |w - w_ref| / max |w_ref|, w the mid-span deflection from the chord",
    "spinup-torque": "max_t |v - v_ref| / max |v_ref|, v the tip deflection in the hub frame",
    "triple": "max_t |r_D - r_D,ref| / max |r_D,ref|, D the tip of body 3",
    "controlled": "max_t |theta - theta_ref| / max |theta_ref|, theta the joint angle",
}


def measure_name(key: str) -> str:
    for prefix in ("a02", "a03", "slider-crank", "spinup-torque", "triple"):
        if key.startswith(prefix):
            return MEASURES[prefix]
    return MEASURES["controlled"]


def accuracy(key: str, out: Path, ref: Path | None, side: str) -> float:
    """The row's error of the run written in ``out`` (``ref``: the same code's finer run)."""
    import numpy as np
    t, y = quantity(key, out, side)
    if key == "a02":
        return relative_error(t, a02_exact(t), t, y)
    if key == "a03":
        return float(np.abs(np.asarray(y)[-1] - np.array(A03_Q_REF)).max()) if abs(t[-1] - 0.03) < 1e-9 else math.nan
    t_ref, y_ref = quantity(key, ref, side)
    return relative_error(t_ref, y_ref, t, y)


# ---------------------------------------------------------------------------------------------------
# the driver
def main(argv=None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["exudyn"]:
        return exudyn_main(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="rounds; the least CPU time of each is kept (default 3)")
    ap.add_argument("--rows", type=rows_arg, default=list(ROWS), help=f"comma-separated, of: {', '.join(ROWS)}")
    ap.add_argument("--checkout", action="append", type=checkout_arg, default=[], metavar="LABEL=DIR",
                    help="another source tree whose flexmbs commands are timed too (repeatable)")
    ap.add_argument("--no-exudyn", dest="exudyn", action="store_false", help="time the flexmbs side only")
    ap.add_argument("--no-accuracy", dest="accuracy", action="store_false",
                    help="skip the reference runs and the errors")
    ap.add_argument("--dry-run", action="store_true", help="print the commands and exit")
    ap.add_argument("--no-bytecode-cache", dest="bytecode_cache", action="store_false",
                    help="keep the environment's PYTHONDONTWRITEBYTECODE (default: cache every module's bytecode "
                         "in a temporary folder, as an installed package has it)")
    ap.add_argument("--profile", action="store_true",
                    help="only profile the coupled slider-crank's command (cProfile) and print where its time goes")
    a = ap.parse_args(argv)
    if a.repeats < 1:
        ap.error(f"--repeats must be at least 1, got {a.repeats}")
    checkouts = dict(a.checkout) | {"this": ROOT}
    have_exudyn = a.exudyn and exudyn_version() is not None
    if a.dry_run:
        out = Path("OUT")
        for key in a.rows:
            row = ROWS[key]
            for label, path in checkouts.items():
                print(f"{key} [{label}]: cd {path} && PYTHONPATH={path} python {' '.join(row.flexmbs_args(out))}")
            print(f"{key} [exudyn]: python {' '.join(exudyn_args(key, out, row.exudyn_h, row.plots))}")
        return 0
    if a.profile:
        return profile_slider_crank(ROOT, a.bytecode_cache)
    start = datetime.now(timezone.utc)
    print(f"{start:%Y-%m-%d %H:%M} UTC, {platform.machine()}, {os.cpu_count()} cores, python "
          f"{platform.python_version()}, Exudyn {exudyn_version() if have_exudyn else 'not used'}; "
          f"load average at the start {load_average()}; least of {a.repeats} rounds; bytecode "
          f"{'cached (.pyc)' if a.bytecode_cache else 'as the environment has it'}", flush=True)
    if a.exudyn and not have_exudyn:
        print("Exudyn is not installed (pip install exudyn, the 'bench' extra): its side is skipped.")
    with tempfile.TemporaryDirectory(prefix="bench_whole_") as tmp:
        tmp = Path(tmp)
        pycache = tmp / "pycache" if a.bytecode_cache else None
        jobs = {}                                # (row, side) -> (args, cwd, env)
        for key in a.rows:
            row = ROWS[key]
            for label, path in checkouts.items():
                if (path / "cases" / f"{row.case}.py").is_file():
                    jobs[key, label] = (row.flexmbs_args(tmp / "run"), path, flexmbs_env(path, pycache))
            if have_exudyn:
                jobs[key, "exudyn"] = (exudyn_args(key, tmp / "run", row.exudyn_h, row.plots), tmp, exudyn_env(pycache))
        best = {k: Outcome() for k in jobs}
        errors = {}
        for (key, side), (args, cwd, env) in jobs.items():       # warm-up, and the outputs for the accuracy
            kept = tmp / "kept" / key / side
            args = [str(kept) if x == str(tmp / "run") else x for x in args]
            _, _, failed = run_process(args, cwd, env)
            best[key, side].error = failed
        for _ in range(a.repeats):
            for (key, side), (args, cwd, env) in jobs.items():
                if best[key, side].error:
                    continue
                shutil.rmtree(tmp / "run", ignore_errors=True)
                cpu, rss, failed = run_process(args, cwd, env)
                if failed:
                    best[key, side].error = failed
                elif cpu < best[key, side].cpu:
                    best[key, side].cpu, best[key, side].rss_kb = cpu, rss
        # the errors after the timed rounds: reading the outputs grows this process, and a child's peak
        # resident set (wait4's ru_maxrss) starts at its parent's resident set at the fork
        for (key, side), (args, cwd, env) in jobs.items():
            if a.accuracy and not best[key, side].error and side in ("this", "exudyn"):
                errors[key, side] = side_accuracy(key, side, tmp / "kept" / key / side, tmp, cwd, env)
        print_table(a.rows, checkouts, have_exudyn, best, errors)
    print(f"\nload average at the end {load_average()} ({datetime.now(timezone.utc):%H:%M} UTC)")
    return 0


def side_accuracy(key: str, side: str, kept: Path, tmp: Path, cwd: Path, env: dict) -> float:
    """The error of the warm-up run of ``side`` in ``kept``, after the reference run where one is needed."""
    row = ROWS[key]
    ref = None
    if key not in ("a02", "a03"):
        ref = tmp / "ref" / key / side
        if not ref.exists():
            if side == "exudyn":
                args = exudyn_args(key, ref, row.exudyn_h / REF_DIVISOR, False)
            else:
                args = row.flexmbs_args(ref, reference=True)
            _, _, failed = run_process(args, cwd, env)
            if failed:
                return math.nan
    try:
        return accuracy(key, kept, ref, "exudyn" if side == "exudyn" else "flexmbs")
    except (OSError, KeyError, ValueError) as err:
        print(f"accuracy of {key} [{side}] not measured: {err}")
        return math.nan


def print_table(keys, checkouts, have_exudyn, best, errors) -> None:
    labels = list(checkouts)
    head = [f"{c} CPU [s]" for c in labels] + [f"{c} RSS [MB]" for c in labels]
    if have_exudyn:
        head += ["Exudyn CPU [s]", "Exudyn RSS [MB]", "this / Exudyn", "error flexmbs (this)", "error Exudyn",
                 "Exudyn h [s]"]
    elif errors:
        head += ["error flexmbs (this)"]
    print("\n| work | " + " | ".join(head) + " |")
    print("|---|" + "---:|" * len(head))

    def cpu(k, s):
        o = best.get((k, s))
        if o is None:
            return "did not exist" if s != "exudyn" else "-"
        return f"failed: {o.error[:80]}" if o.error else f"{o.cpu:.2f}"

    def rss(k, s):
        o = best.get((k, s))
        return "-" if o is None or o.error else f"{o.rss_kb / 1024:.0f}"

    for k in keys:
        cells = [cpu(k, c) for c in labels] + [rss(k, c) for c in labels]
        if have_exudyn:
            mine, ex = best.get((k, "this")), best.get((k, "exudyn"))
            ratio = (f"{mine.cpu / ex.cpu:.2f}" if mine and ex and not mine.error and not ex.error else "-")
            e_fm, e_ex = errors.get((k, "this"), math.nan), errors.get((k, "exudyn"), math.nan)
            mark = "" if math.isnan(e_fm) or math.isnan(e_ex) else (" (matched)" if e_ex <= e_fm else " (NOT matched)")
            cells += [cpu(k, "exudyn"), rss(k, "exudyn"), ratio, f"{e_fm:.1e}", f"{e_ex:.1e}{mark}",
                      f"{ROWS[k].exudyn_h:.3g}"]
        elif errors:
            cells += [f"{errors.get((k, 'this'), math.nan):.1e}"]
        print(f"| {ROWS[k].label} | " + " | ".join(cells) + " |")
    print("\naccuracy measures and notes:")
    for k in keys:
        print(f"- {k}: {measure_name(k)}" + ("" if k in ("a02", "a03") else
                                              f"; reference: the same code at its step / {REF_DIVISOR}")
              + (f". {ROWS[k].note}" if ROWS[k].note else ""))


# where the coupled slider-crank's process spends its time: (label, [(file suffix, function)]), cumulative
PROFILE_PARTS = (
    ("imports (all modules, wherever imported)", [("_bootstrap>", "_find_and_load")]),
    ("  of which compiling .py sources (none from the bytecode cache)", [("~", "<built-in method builtins.compile>")]),
    ("  of which numpy", [("numpy/__init__.py", "<module>")]),
    ("  of which scipy.sparse over numpy (scipy's array-API layer)", [("scipy/sparse/__init__.py", "<module>")]),
    ("  of which h5py", [("h5py/__init__.py", "<module>")]),
    ("  of which meshio (the ParaView writer)", [("meshio/__init__.py", "<module>")]),
    ("finding the case (`flexmbs run` reads CASE.py)", [("flexmbs/cli.py", "find_case")]),
    ("building the System (the rod's model, `build_coupled`)", [("cases/slider_crank.py", "build_coupled")]),
    ("`flexmbs.run` of the System", [("flexmbs/system_run.py", "run_system")]),
    ("  of which the integration (`simulate`, compiled kernel)", [("integrators/simulate.py", "simulate")]),
    ("  of which the works (`System.power_history`)", [("flexmbs/system.py", "power_history")]),
    ("joint reactions and drive torque (`System.reaction_history`)", [("flexmbs/system.py", "reaction_history")]),
    ("results.npz and summary.json (`write_coupled`)", [("cases/slider_crank.py", "write_coupled")]),
    ("ParaView files (`export_paraview`)", [("flexmbs/io/paraview.py", "export_paraview")]),
)


# `python -m cProfile` times with the wall clock, which a loaded machine inflates; this profiles
# `python -m flexmbs ARGS` with the process's CPU clock: python -c PROFILER PROF_FILE ARGS...
PROFILER = """import cProfile, runpy, sys, time
prof, sys.argv = sys.argv[1], ["flexmbs", *sys.argv[2:]]
profile = cProfile.Profile(time.process_time)
try:
    profile.runcall(runpy.run_module, "flexmbs", run_name="__main__", alter_sys=True)
except SystemExit as stop:
    if stop.code not in (0, None):
        raise
finally:
    profile.dump_stats(prof)
"""


def profile_parts(stats) -> list[tuple[str, float]]:
    """(label, cumulative profile seconds) of PROFILE_PARTS in a ``pstats.Stats``; NaN for a part not found."""
    found = []
    for label, keys in PROFILE_PARTS:
        times = [v[3] for (file, _, name), v in stats.stats.items()
                 for suffix, func in keys if name == func and file.endswith(suffix)]
        found.append((label, max(times) if times else math.nan))
    return found


def profile_slider_crank(checkout: Path, bytecode_cache: bool = True) -> int:
    """cProfile the coupled slider-crank's command (no plots) in a new process; print its parts.
    With ``bytecode_cache`` a first run, not profiled, writes the bytecode that the profiled one reads."""
    import pstats
    with tempfile.TemporaryDirectory(prefix="bench_whole_prof_") as tmp:
        prof = Path(tmp) / "sc.prof"
        command = ROWS["slider-crank"].flexmbs_args(Path(tmp) / "out")
        env = flexmbs_env(checkout, Path(tmp) / "pycache" if bytecode_cache else None)
        if bytecode_cache:
            run_process(command, checkout, env)
        cpu, rss, failed = run_process(["-c", PROFILER, str(prof), *command[2:]], checkout, env)
        if failed:
            print(f"the profiled command failed: {failed}")
            return 1
        stats = pstats.Stats(str(prof))
    total = stats.total_tt
    print(f"python {' '.join(command)} under cProfile (CPU-time clock): {cpu:.2f} s CPU, {rss / 1024:.0f} MB peak; "
          f"profile total {total:.2f} s (profiling inflates it; the shares count); load average {load_average()}")
    print("\n| part | profile [s] | share |\n|---|---:|---:|")
    for label, seconds in profile_parts(stats):
        print(f"| {label} | {seconds:.2f} | {100 * seconds / total:.0f} % |")
    return 0


def exudyn_version() -> str | None:
    try:
        from importlib.metadata import PackageNotFoundError, version
        return version("exudyn")
    except PackageNotFoundError:
        return None


# ---------------------------------------------------------------------------------------------------
# the Exudyn side: run as `bench_whole_process.py exudyn ROW --out DIR [--h H] [--plots]`
def exudyn_main(argv) -> int:
    ap = argparse.ArgumentParser(prog="bench_whole_process.py exudyn", description="one Exudyn job of the table")
    ap.add_argument("row", choices=list(ROWS))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--h", type=float, default=None, help="Exudyn's step [s] (default: the row's)")
    ap.add_argument("--plots", action="store_true")
    a = ap.parse_args(argv)
    import warnings
    warnings.filterwarnings("ignore", message=r"Object\w+: the parameter \w+ is deprecated", category=DeprecationWarning)
    import numpy as np
    h = a.h or ROWS[a.row].exudyn_h
    result = EXUDYN_JOBS[a.row.removesuffix("-plots")](h)
    a.out.mkdir(parents=True, exist_ok=True)
    np.savez(a.out / "exudyn.npz", **result)
    if a.plots:
        plot_exudyn(result, a.out)
    return 0


def plot_exudyn(result: dict, out: Path) -> None:
    """One PNG of the compared quantity against time, as the flexmbs case draws its plot."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(result["t"], result["y"])
    ax.set_xlabel("t [s]")
    ax.grid(True)
    fig.savefig(out / "exudyn.png", dpi=120)
    plt.close(fig)


def reused_exudyn_function(name: str, namespace: dict):
    """``name`` from benchmarks/bench_vs_exudyn.py (and its helper ``_exudyn_settings``), compiled from
    that file's source without importing the module: importing it would load flexmbs and a case into
    the Exudyn process and bill Exudyn for flexmbs's imports."""
    source = (Path(__file__).parent / "bench_vs_exudyn.py").read_text()
    tree = ast.parse(source)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in (name, "_exudyn_settings")]
    exec(compile(ast.Module(body=defs, type_ignores=[]), "bench_vs_exudyn.py", "exec"), namespace)
    return namespace[name]


def settings(exu, t_end: float, h: float, rho_inf: float, dt_out: float, modified_newton: bool = True):
    """Generalized-alpha at a fixed step, dense LU, no solution file, sensors every ``dt_out``."""
    s = exu.SimulationSettings()
    s.timeIntegration.endTime = t_end
    s.timeIntegration.numberOfSteps = int(round(t_end / h))
    s.timeIntegration.generalizedAlpha.spectralRadius = rho_inf
    s.timeIntegration.newton.useModifiedNewton = modified_newton
    s.timeIntegration.verboseMode = 0
    s.solution.file.write = False
    s.solution.sensors.writePeriod = dt_out
    s.show.statistics = False
    s.show.computationTime = False
    s.linearSolver.solverType = exu.LinearSolverType.EXUdense
    return s


def solve(mbs, s):
    import exudyn as exu
    mbs.Assemble()
    mbs.SolveDynamic(s, solverType=exu.DynamicSolverType.GeneralizedAlpha)


def stored(mbs, sensor):
    import numpy as np
    return np.asarray(mbs.GetSensorStoredData(sensor))


def exudyn_slider_crank(h: float) -> dict:
    """The ANCF slider-crank of bench_vs_exudyn.py (rigid crank, 8 ANCFCable2D, slider mass), two revolutions,
    the mid-span deflection from the chord every 0.5 degrees."""
    import numpy as np
    import exudyn  # noqa: F401
    run = reused_exudyn_function("exudyn_slider_crank", {"np": np, "math": math, "time": time})
    _, _, _, angle, w = run(h)
    return {"t": np.radians(angle) / 150.0, "y": w}


def spinup_law(t: float, omega_s: float = 6.0, t_s: float = 15.0) -> tuple[float, float, float]:
    """(theta, theta', theta'') of the spin-up law (../shared/BENCHMARKS.md sec. 3.2), c = T_s / (2 pi)."""
    if t >= t_s:
        return omega_s * (t - t_s / 2.0), omega_s, 0.0
    c = t_s / (2.0 * math.pi)
    return (omega_s / t_s * (t * t / 2.0 + c * c * (math.cos(t / c) - 1.0)),
            omega_s / t_s * (t - c * math.sin(t / c)), omega_s / t_s * (1.0 - math.cos(t / c)))


def spinup_hub_run(h: float, torque: bool, elements: int = 10, t_end: float = 20.0, dt_out: float = 0.01):
    """(t, hub angle, tip deflection v in the hub frame) of a hub on a revolute joint with an ANCF cantilever
    clamped to it: the hub driven by T = (J_hub + rho A L^3 / 3) theta''(t) (``torque``) or its angle
    prescribed to theta(t).  Data of cases/spinup_beam.py: L = 10 m, E = 7e10 Pa, rho = 3000 kg/m^3,
    A = 4e-4 m^2, I = 2e-7 m^4, J_hub = 40 kg m^2; generalized-alpha rho_inf = 0.9, full Newton."""
    import numpy as np
    import exudyn as exu
    from exudyn.itemInterface import (CoordinateConstraint, LoadTorqueVector, MarkerBodyPosition, MarkerBodyRigid,
                                      MarkerNodeCoordinate, MarkerNodeCoordinates, MarkerNodePosition,
                                      NodePoint2DSlope1, NodePointGround, NodeRigidBody2D, ObjectANCFCable2D,
                                      ObjectConnectorCoordinateVector, ObjectGround, RevoluteJoint2D, RigidBody2D,
                                      SensorNode)
    length, E, rho, area, inertia, j_hub = 10.0, 7.0e10, 3000.0, 4.0e-4, 2.0e-7, 40.0
    j_total = j_hub + rho * area * length**3 / 3.0
    le = length / elements
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    nodes = [mbs.AddNode(NodePoint2DSlope1(referenceCoordinates=[i * le, 0.0, 1.0, 0.0])) for i in range(elements + 1)]
    for i in range(elements):
        mbs.AddObject(ObjectANCFCable2D(nodeNumbers=[nodes[i], nodes[i + 1]], length=le, massPerLength=rho * area,
                                        bendingStiffness=E * inertia, axialStiffness=E * area))
    n_hub = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[0.0, 0.0, 0.0]))
    hub = mbs.AddObject(RigidBody2D(mass=10.0, inertia=j_hub, nodeNumber=n_hub))
    ground = mbs.AddObject(ObjectGround())
    mbs.AddObject(RevoluteJoint2D(markerNumbers=[mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground)),
                                                 mbs.AddMarker(MarkerBodyPosition(bodyNumber=hub))]))
    mbs.AddObject(RevoluteJoint2D(markerNumbers=[mbs.AddMarker(MarkerBodyPosition(bodyNumber=hub)),
                                                 mbs.AddMarker(MarkerNodePosition(nodeNumber=nodes[0]))]))

    def clamp(mbs, t, item, q, q_t, velocity_level):     # root slope along the hub's x axis: n_hub . r' = 0
        return [math.cos(q[6]) * q[3] - math.sin(q[6]) * q[2]]

    def clamp_jacobian(mbs, t, item, q, q_t, velocity_level):
        c, s = math.cos(q[6]), math.sin(q[6])
        return np.array([[0.0, 0.0, -s, c, 0.0, 0.0, -s * q[3] - c * q[2]]])

    mbs.AddObject(ObjectConnectorCoordinateVector(
        markerNumbers=[mbs.AddMarker(MarkerNodeCoordinates(nodeNumber=nodes[0])),
                       mbs.AddMarker(MarkerNodeCoordinates(nodeNumber=n_hub))],
        scalingMarker0=np.zeros((1, 4)), scalingMarker1=np.zeros((1, 3)),
        constraintUserFunction=clamp, jacobianUserFunction=clamp_jacobian))
    if torque:
        mbs.AddLoad(LoadTorqueVector(markerNumber=mbs.AddMarker(MarkerBodyRigid(bodyNumber=hub)),
                                     loadVectorUserFunction=lambda mbs, t, load: [0.0, 0.0, j_total * spinup_law(t)[2]]))
    else:
        mG = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=mbs.AddNode(NodePointGround()), coordinate=0))
        mbs.AddObject(CoordinateConstraint(markerNumbers=[mG, mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n_hub,
                                                                                                 coordinate=2))],
                                           offsetUserFunction=lambda mbs, t, item, offset: spinup_law(t)[0]))
    tip = mbs.AddSensor(SensorNode(nodeNumber=nodes[-1], storeInternal=True,
                                   outputVariableType=exu.OutputVariableType.Position))
    angle = mbs.AddSensor(SensorNode(nodeNumber=n_hub, storeInternal=True,
                                     outputVariableType=exu.OutputVariableType.Coordinates))
    s = settings(exu, t_end, h, 0.9, dt_out, modified_newton=False)
    s.timeIntegration.newton.absoluteTolerance = 1e-6          # N, as bench_vs_exudyn.py's spin-up (its docstring)
    solve(mbs, s)
    xy, th = stored(mbs, tip), stored(mbs, angle)[:, 3]
    v = np.cos(th) * xy[:, 2] - np.sin(th) * xy[:, 1]
    return xy[:, 0], th, v


def exudyn_spinup(h: float) -> dict:
    """The torque-driven coupled run and, as the case also does, the prescribed run at the same step."""
    t, th, v = spinup_hub_run(h, torque=True)
    _, _, v_prescribed = spinup_hub_run(h, torque=False)
    return {"t": t, "y": v, "hub_angle": th, "v_prescribed": v_prescribed}


def exudyn_triple(h: float, t_end: float = 2.0, dt_out: float = 0.01) -> dict:
    """Three bars (Pappalardo and Guida 2018, cases/triple_pendulum.py) as RigidBody on NodeRigidBodyEP, three
    SphericalJoints, gravity -z; tip D of body 3 every dt_out.  Generalized-alpha rho_inf = 1 (no damping)."""
    import numpy as np
    import exudyn as exu
    from exudyn.itemInterface import (LoadForceVector, MarkerBodyPosition, NodeRigidBodyEP, ObjectGround,
                                      ObjectJointSpherical, ObjectRigidBody, SensorBody)
    masses = (2.0, 3.0, 4.0)
    inertias = ((0.053, 2.693, 2.693), (0.080, 4.040, 4.040), (0.107, 5.387, 5.387))
    centroids = ((2.0, 0.0, 0.0), (4.0, 2.0, 0.0), (6.0, 4.0, 0.0))
    half = math.sqrt(0.5)
    eulers = ((1.0, 0.0, 0.0, 0.0), (half, 0.0, 0.0, half), (1.0, 0.0, 0.0, 0.0))   # body 2: x axis along +Y
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    bodies = []
    for m, j, c, ep in zip(masses, inertias, centroids, eulers):
        node = mbs.AddNode(NodeRigidBodyEP(referenceCoordinates=[*c, *ep]))
        body = mbs.AddObject(ObjectRigidBody(mass=m, inertia=[*j, 0.0, 0.0, 0.0], nodeNumber=node))
        mbs.AddLoad(LoadForceVector(markerNumber=mbs.AddMarker(MarkerBodyPosition(bodyNumber=body)),
                                    loadVector=[0.0, 0.0, -9.81 * m]))
        bodies.append(body)
    pins = [(ground, [0.0, 0.0, 0.0], bodies[0], [-2.0, 0.0, 0.0]), (bodies[0], [2.0, 0.0, 0.0], bodies[1], [-2.0, 0, 0]),
            (bodies[1], [2.0, 0.0, 0.0], bodies[2], [-2.0, 0.0, 0.0])]
    for b0, p0, b1, p1 in pins:
        mbs.AddObject(ObjectJointSpherical(markerNumbers=[mbs.AddMarker(MarkerBodyPosition(bodyNumber=b0, localPosition=p0)),
                                                          mbs.AddMarker(MarkerBodyPosition(bodyNumber=b1, localPosition=p1))]))
    tip = mbs.AddSensor(SensorBody(bodyNumber=bodies[2], localPosition=[2.0, 0.0, 0.0], storeInternal=True,
                                   outputVariableType=exu.OutputVariableType.Position))
    solve(mbs, settings(exu, t_end, h, 1.0, dt_out))
    d = stored(mbs, tip)
    return {"t": d[:, 0], "y": d[:, 1:4]}


def exudyn_four_bar(h: float, n: int = 2, t_end: float = 10.0, dt_out: float = 0.01) -> dict:
    """IFToMM A02 (cases/double_four_bar.py): N + 1 cranks pinned at x = 0..N, N couplers at y = 1 m, links of
    1 m and 1 kg (I = m L^2 / 12), gravity -y, cranks turning clockwise at 1 rad/s; B0 (tip of crank 0) every
    dt_out.  Generalized-alpha rho_inf = 0.8 (the case's)."""
    import exudyn as exu
    from exudyn.itemInterface import (LoadForceVector, MarkerBodyPosition, NodeRigidBody2D, ObjectGround,
                                      RevoluteJoint2D, RigidBody2D, SensorBody)
    L, m, g = 1.0, 1.0, 9.81
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(ObjectGround())

    def link(x, y, angle, vx, omega):
        node = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[x, y, angle], initialVelocities=[vx, 0.0, omega]))
        body = mbs.AddObject(RigidBody2D(mass=m, inertia=m * L * L / 12.0, nodeNumber=node))
        mbs.AddLoad(LoadForceVector(markerNumber=mbs.AddMarker(MarkerBodyPosition(bodyNumber=body)),
                                    loadVector=[0.0, -m * g, 0.0]))
        return body

    def pin(b0, p0, b1, p1):
        mbs.AddObject(RevoluteJoint2D(markerNumbers=[mbs.AddMarker(MarkerBodyPosition(bodyNumber=b0, localPosition=p0)),
                                                     mbs.AddMarker(MarkerBodyPosition(bodyNumber=b1, localPosition=p1))]))

    cranks = [link(float(i), 0.5 * L, 0.5 * math.pi, 0.5, -1.0) for i in range(n + 1)]   # x axis along the crank
    couplers = [link(j + 0.5, L, 0.0, 1.0, 0.0) for j in range(n)]
    for i, c in enumerate(cranks):
        pin(ground, [float(i), 0.0, 0.0], c, [-0.5 * L, 0.0, 0.0])
    for j, c in enumerate(couplers):
        pin(cranks[j], [0.5 * L, 0.0, 0.0], c, [-0.5 * L, 0.0, 0.0])
        pin(cranks[j + 1], [0.5 * L, 0.0, 0.0], c, [0.5 * L, 0.0, 0.0])
    b0 = mbs.AddSensor(SensorBody(bodyNumber=cranks[0], localPosition=[0.5 * L, 0.0, 0.0], storeInternal=True,
                                  outputVariableType=exu.OutputVariableType.Position))
    s = settings(exu, t_end, h, 0.8, dt_out)
    s.linearSolver.ignoreSingularJacobian = True     # the singular positions (redundant joints)
    solve(mbs, s)
    d = stored(mbs, b0)
    return {"t": d[:, 0], "y": d[:, 1:3]}


# Andrews' squeezer, Hairer and Wanner's data (SI), ../shared/BENCHMARKS.md sec. 6d
A03 = dict(m=(.04325, .00365, .02373, .00706, .07050, .00706, .05498),
           I=(2.194e-6, 4.410e-7, 5.255e-6, 5.667e-7, 1.169e-5, 5.667e-7, 1.912e-5),
           xa=-.06934, ya=-.00227, xb=-.03635, yb=.03273, xc=.014, yc=.072, d=.028, da=.0115, e=.02, ea=.01421,
           rr=.007, ra=.00092, ss=.035, sa=.01874, sb=.01043, sc=.018, sd=.02, ta=.02308, tb=.00916, u=.04,
           ua=.01228, ub=.00449, zf=.02, zt=.04, fa=.01421, c0=4530.0, l0=.07785, mom=.033,
           q0=(-0.0617138900142764496, 0.0, 0.455279819163070380, 0.222668390165885885, 0.487364979543842550,
               -0.222668390165885885, 1.23054744454982119))


def exudyn_andrews(h: float, t_end: float = 0.03, dt_out: float = 1e-4) -> dict:
    """IFToMM A03: seven RigidBody2D at Hairer and Wanner's initial angles, ten RevoluteJoint2D, the spring from
    D on K3 to the fixed point C, the torque on K1; Hairer and Wanner's seven angles every dt_out.  The body
    angles and points follow the loop equations in cases/andrews_squeezer.py's docstring."""
    import numpy as np
    import exudyn as exu
    from exudyn.itemInterface import (LoadTorqueVector, MarkerBodyPosition, MarkerBodyRigid, NodeRigidBody2D,
                                      ObjectConnectorSpringDamper, ObjectGround, RevoluteJoint2D, RigidBody2D,
                                      SensorNode)
    p = A03
    b, T, g_, P_, dl, W, ep = p["q0"]
    th = [b, b + T, g_, P_ + dl, dl, W + ep, ep]
    e = [np.array([math.cos(x), math.sin(x)]) for x in th]
    nn = [np.array([-math.sin(x), math.cos(x)]) for x in th]
    A, B, C = np.array([p["xa"], p["ya"]]), np.array([p["xb"], p["yb"]]), np.array([p["xc"], p["yc"]])
    P = p["rr"] * e[0]
    E = P - p["d"] * e[1]
    F = A + p["zt"] * e[4]
    G = A - p["u"] * nn[6]
    D = B + p["sd"] * e[2] - p["sc"] * nn[2]
    cg = [p["ra"] * e[0], P - p["da"] * e[1], B + p["sa"] * e[2] - p["sb"] * nn[2], F - (p["e"] - p["ea"]) * nn[3],
          A + p["ta"] * e[4] + p["tb"] * nn[4], G + (p["zf"] - p["fa"]) * e[5], A + p["ua"] * e[6] + p["ub"] * nn[6]]
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    nodes, K = [], []
    for k in range(7):
        nodes.append(mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[*cg[k], th[k]])))
        K.append(mbs.AddObject(RigidBody2D(mass=p["m"][k], inertia=p["I"][k], nodeNumber=nodes[-1])))

    def local(k, point):                        # body-frame coordinates of a global point
        c, s = math.cos(th[k]), math.sin(th[k])
        r = point - cg[k]
        return [c * r[0] + s * r[1], -s * r[0] + c * r[1], 0.0]

    def marker(k, point):
        if k is None:
            return mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[*point, 0.0]))
        return mbs.AddMarker(MarkerBodyPosition(bodyNumber=K[k], localPosition=local(k, point)))

    for k0, k1, at in ((None, 0, np.zeros(2)), (0, 1, P), (None, 2, B), (1, 2, E), (None, 4, A), (4, 3, F), (1, 3, E),
                       (None, 6, A), (6, 5, G), (1, 5, E)):
        mbs.AddObject(RevoluteJoint2D(markerNumbers=[marker(k0, at), marker(k1, at)]))
    mbs.AddObject(ObjectConnectorSpringDamper(markerNumbers=[marker(2, D), marker(None, C)], stiffness=p["c0"],
                                              referenceLength=p["l0"]))
    mbs.AddLoad(LoadTorqueVector(markerNumber=mbs.AddMarker(MarkerBodyRigid(bodyNumber=K[0])),
                                 loadVector=[0.0, 0.0, p["mom"]]))
    sensors = [mbs.AddSensor(SensorNode(nodeNumber=nd, storeInternal=True,
                                        outputVariableType=exu.OutputVariableType.Coordinates)) for nd in nodes]
    solve(mbs, settings(exu, t_end, h, 0.8, dt_out))
    data = [stored(mbs, s_) for s_ in sensors]
    t1, t2, t3, t4, t5, t6, t7 = (d[:, 3] + th0 for d, th0 in zip(data, th))   # Coordinates: from the reference
    q = np.stack([t1, t2 - t1, t3, t4 - t5, t5, t6 - t7, t7], axis=1)
    return {"t": data[0][:, 0], "y": q}


def exudyn_pendulum(h: float, control: str = "sampled", t_end: float = 3.0, dt_out: float = 0.01) -> dict:
    """cases/controlled_pendulum.py: a uniform rod (1 kg, 1 m) on a revolute joint, gravity 9.81, the joint torque a
    PD law (K_p = 400, K_d = 20) on the smooth ramp to 60 degrees over 1 s, sampled every 1 ms and held (a
    pre-step function samples at the step that starts at a sample time), or (``feedforward``) the torque of time
    m g l_c sin(theta_ref) + J_O theta_ref''.  theta = 0 hanging; the joint angle every dt_out.
    Generalized-alpha rho_inf = 0.8 (the case's)."""
    import numpy as np
    import exudyn as exu
    from exudyn.itemInterface import (LoadForceVector, LoadTorqueVector, MarkerBodyPosition, MarkerBodyRigid,
                                      NodeRigidBody2D, ObjectGround, RevoluteJoint2D, RigidBody2D, SensorNode)
    m, length, g, kp, kd, period, theta_1, t_ramp = 1.0, 1.0, 9.81, 400.0, 20.0, 1e-3, math.radians(60.0), 1.0
    j_o, w = m * length**2 / 3.0, math.pi / t_ramp

    def reference(t):
        if t >= t_ramp:
            return theta_1, 0.0
        return 0.5 * theta_1 * (1.0 - math.cos(w * t)), 0.5 * theta_1 * w * w * math.cos(w * t)

    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    node = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[0.0, -0.5 * length, -0.5 * math.pi]))
    rod = mbs.AddObject(RigidBody2D(mass=m, inertia=m * length**2 / 12.0, nodeNumber=node))
    mbs.AddObject(RevoluteJoint2D(markerNumbers=[mbs.AddMarker(MarkerBodyPosition(bodyNumber=mbs.AddObject(ObjectGround()))),
                                                 mbs.AddMarker(MarkerBodyPosition(bodyNumber=rod,
                                                                                  localPosition=[-0.5 * length, 0, 0]))]))
    mbs.AddLoad(LoadForceVector(markerNumber=mbs.AddMarker(MarkerBodyPosition(bodyNumber=rod)), loadVector=[0, -m * g, 0]))
    held = {"tau": 0.0, "next": 0.0}

    def sample(mbs, t):                            # zero-order hold: tau_k = K_p (theta_ref - theta) - K_d theta'
        if t >= held["next"] - 1e-9 * period:
            theta = mbs.GetNodeOutput(node, exu.OutputVariableType.Coordinates)[2]   # from the reference angle
            rate = mbs.GetNodeOutput(node, exu.OutputVariableType.Coordinates_t)[2]
            held["tau"] = kp * (reference(t)[0] - theta) - kd * rate
            held["next"] += period
        return True

    if control == "sampled":
        mbs.SetPreStepUserFunction(sample)
        torque = (lambda mbs, t, load: [0.0, 0.0, held["tau"]])
    else:
        torque = (lambda mbs, t, load: [0.0, 0.0, m * g * 0.5 * length * math.sin(reference(t)[0]) + j_o * reference(t)[1]])
    mbs.AddLoad(LoadTorqueVector(markerNumber=mbs.AddMarker(MarkerBodyRigid(bodyNumber=rod)), loadVectorUserFunction=torque))
    sensor = mbs.AddSensor(SensorNode(nodeNumber=node, storeInternal=True, outputVariableType=exu.OutputVariableType.Coordinates))
    solve(mbs, settings(exu, t_end, h, 0.8, dt_out))
    d = stored(mbs, sensor)
    return {"t": d[:, 0], "y": d[:, 3]}         # Coordinates: the change from the reference angle (hanging)


EXUDYN_JOBS = {"slider-crank": exudyn_slider_crank, "spinup-torque": exudyn_spinup, "triple-ab4": exudyn_triple,
               "triple-index3": exudyn_triple, "a02": exudyn_four_bar, "a03": exudyn_andrews,
               "controlled": exudyn_pendulum, "feedforward": lambda h: exudyn_pendulum(h, "feedforward")}


if __name__ == "__main__":
    sys.exit(main())
