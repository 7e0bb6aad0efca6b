"""index3-alpha-adaptive on the compiled kernel for spatial systems (docs/benchmarks.md sec. 19.4).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_adaptive_spatial.py [--cases triple,coupled]
        [--numpy]

Each row is one `flexmbs.run` with method index3-alpha-adaptive at the given rtol (atol = rtol / 100) on
the compiled kernel (``--numpy``: and on the numpy path): the accepted steps, the rejections, the solve's
wall time (``Results.stats["solve_s"]``), the CPU of the whole run (process time of `flexmbs.run`) and the
kernel's calls of Python per trial step (`Index3AdaptiveAlpha._terms`, counted).  Then the CPU of the whole
command ``python cases/triple_pendulum.py --coordinates euler-parameters --integrator index3-alpha-adaptive
--stabilization none --rtol R --t-end 2 --no-plots`` (a new process: imports, the case's outputs).  Cases:

- triple: the triple pendulum of cases/triple_pendulum.py in Euler parameters (3 RigidBodyEP, 3 spherical
  joints, the norms), 2 s from rest.
- coupled: the coupled slider-crank of cases/slider_crank.py ``build_coupled`` (8 beam elements, a rigid
  crank driven by an AngleDriver of constant_speed at 150 rad/s, the slider), one revolution (0.0419 s).
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import flexmbs as fm
from flexmbs.integrators.index3_alpha import Index3AdaptiveAlpha

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))

import slider_crank  # noqa: E402
import triple_pendulum  # noqa: E402


def triple():
    return triple_pendulum.build("euler-parameters"), 2.0, (1e-4, 1e-6, 1e-8)


def coupled():
    return slider_crank.build_coupled(elements=8)[0], 2.0 * np.pi / 150.0, (1e-3, 1e-4, 1e-5)


CASES = {"triple": triple, "coupled": coupled}
CALLS = []


def counted(terms):
    """``_terms`` counting its calls in CALLS."""
    def wrapper(self, kind, t):
        CALLS.append(t)
        return terms(self, kind, t)
    return wrapper


def run(system, t_end: float, kernel: str, rtol: float):
    CALLS.clear()
    tic = time.process_time()
    res = fm.run(system, formulation="index3", method="index3-alpha-adaptive", kernel=kernel, rtol=rtol,
                 atol=rtol * 1e-2, store=False, t_end=t_end, t_eval=[0.0, t_end])
    return res, time.process_time() - tic, len(CALLS)


def command_cpu(rtol: float) -> float:
    """CPU [s] (user + system) of the whole triple-pendulum command at ``rtol``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, str(ROOT / "cases" / "triple_pendulum.py"), "--coordinates",
                        "euler-parameters", "--integrator", "index3-alpha-adaptive", "--stabilization", "none",
                        "--rtol", f"{rtol:g}", "--t-end", "2", "--no-plots", "--out", out], check=True,
                       capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="triple,coupled", help="comma-separated: triple, coupled")
    parser.add_argument("--numpy", action="store_true", help="also run the numpy path (slow)")
    a = parser.parse_args(argv)
    Index3AdaptiveAlpha._terms = counted(Index3AdaptiveAlpha._terms)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, python "
          f"{platform.python_version()}, numpy {np.__version__}, flexmbs from {Path(fm.__file__).parent}")
    names = [c.strip() for c in a.cases.split(",") if c.strip()]
    for name in names:
        system, t_end, rtols = CASES[name]()
        run(system, t_end / 100, "compiled", rtols[0])                 # warm-up
        print(f"\n{name}\n\n| rtol | path | status | steps | rejected | Python calls | solve wall [s] | run CPU [s] |"
              "\n|---|---|---|---:|---:|---:|---:|---:|")
        for rtol in rtols:
            for kernel in ("compiled", "numpy") if a.numpy else ("compiled",):
                res, cpu, calls = run(system, t_end, kernel, rtol)
                print(f"| {rtol:g} | {res.metadata.get('kernel', 'compiled')} | {res.status} | {res.stats['n_steps']} | "
                      f"{res.stats.get('n_rejected', '')} | {calls} | {res.stats['solve_s']:.3f} | {cpu:.2f} |",
                      flush=True)
    if "triple" in names:
        print("\ntriple pendulum, the whole command (compiled path)\n\n| rtol | CPU [s] |\n|---|---:|")
        for rtol in (1e-6, 1e-8):
            print(f"| {rtol:g} | {command_cpu(rtol):.2f} |", flush=True)


if __name__ == "__main__":
    main()
