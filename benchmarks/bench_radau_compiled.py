"""radau-dae with its evaluations in the compiled kernel against the numpy path (docs/benchmarks.md sec. 19.3).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_radau_compiled.py [--cases A03,spinup]

Each row is one `flexmbs.run` at the same rtol on both paths (option ``kernel``): the steps, the
solve's wall time (``Results.stats["solve_s"]``: perf_counter, so it includes the waits of a loaded
machine), the CPU of the whole run (process time of `flexmbs.run`: build, solve, outputs), and the
largest difference of the final coordinates between the paths.  Then the CPU of the whole command
``python cases/andrews_squeezer.py --integrator radau-dae --rtol R --no-plots`` (a new process: imports,
the case's outputs and summary; the compiled path, which the case takes by default).  Cases:

- A03: Andrews' squeezer (cases/andrews_squeezer.py, 7 rigid bodies in the plane), 0.03 s from rest.
- spinup: the coupled spin-up beam (cases/spinup_beam.py ``build_coupled``: a rigid hub on a revolute
  joint driven by an AngleDriver, 10 floating-frame beam elements; stiff through the beam's axial
  modes), the first 3 s.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))

import andrews_squeezer  # noqa: E402
import spinup_beam  # noqa: E402


def a03():
    system, _ = andrews_squeezer.build()
    return system, dict(t_end=0.03, v0=np.zeros(system.n_q)), (1e-4, 1e-6, 1e-8)


def spinup():
    system = spinup_beam.build_coupled(10)[0]
    return system, dict(t_end=3.0), (1e-4, 1e-6)


CASES = {"A03": a03, "spinup": spinup}


def run(system, kernel: str, rtol: float, options: dict):
    tic = time.process_time()
    res = fm.run(system, method="radau-dae", kernel=kernel, rtol=rtol, atol=rtol * 1e-3, store=False,
                 t_eval=[0.0, options["t_end"]], **options)
    return res, time.process_time() - tic


def command_cpu(rtol: float, root: Path = ROOT) -> float:
    """CPU [s] (user + system) of the whole command running A03 with radau-dae at ``rtol``, the case
    and the flexmbs of the checkout ``root`` (this script's by default)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, str(root / "cases" / "andrews_squeezer.py"), "--integrator", "radau-dae",
                        "--rtol", f"{rtol:g}", "--no-plots", "--out", out], check=True, capture_output=True,
                       env=dict(os.environ, PYTHONPATH=str(root)))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="A03,spinup", help="comma-separated: A03, spinup")
    a = parser.parse_args(argv)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, python "
          f"{platform.python_version()}, numpy {np.__version__}")
    for name in [c.strip() for c in a.cases.split(",") if c.strip()]:
        system, options, rtols = CASES[name]()
        run(system, "compiled", rtols[0], dict(options, t_end=options["t_end"] / 100))      # warm-up
        print(f"\n{name}\n\n| rtol | path | status | steps | solve wall [s] | run CPU [s] | max |q_numpy - q_compiled| |"
              "\n|---|---|---|---:|---:|---:|---:|")
        for rtol in rtols:
            out = {kernel: run(system, kernel, rtol, options) for kernel in ("compiled", "numpy")}
            dq = float(np.abs(out["numpy"][0].q[-1] - out["compiled"][0].q[-1]).max())
            for kernel, (res, cpu) in out.items():
                print(f"| {rtol:g} | {res.metadata.get('kernel')} | {res.status} | {res.stats['n_steps']} | "
                      f"{res.stats['solve_s']:.2f} | {cpu:.2f} | {dq:.1e} |", flush=True)
    if "A03" in a.cases:
        print("\nA03, the whole command (compiled path)\n\n| rtol | CPU [s] |\n|---|---:|")
        for rtol in (1e-6, 1e-8):
            print(f"| {rtol:g} | {command_cpu(rtol):.2f} |", flush=True)


if __name__ == "__main__":
    main()
