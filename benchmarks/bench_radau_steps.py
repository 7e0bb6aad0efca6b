"""radau-dae's steps in the compiled kernel (csrc ``radau_steps``) against its numpy path (docs/benchmarks.md
sec. 19.3, issue 25 item 2).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_radau_steps.py [--cases A03,A02,coupled]

Run it with PYTHONPATH pointing at a checkout before the change (its "compiled" rows are then the compiled
evaluations with the numpy step loop) and after it, in the same session, for the before/after table.
Each row is one `flexmbs.run` with option ``kernel`` "compiled" or "numpy": the steps, the solve's wall
time (``Results.stats["solve_s"]``, perf_counter: the waits of a loaded machine included) and the CPU of
the whole run (process time of `flexmbs.run`: build, solve, outputs).  Then the CPU of the whole command
``python cases/andrews_squeezer.py --integrator radau-dae --rtol 1e-6 --no-plots`` (a new process: imports,
the case's outputs and summary).  Cases:

- A03: Andrews' squeezer (cases/andrews_squeezer.py), 0.03 s from rest, rtol 1e-6, atol 1e-9.
- A02: the double four-bar (cases/double_four_bar.py, N = 2), 10 s (ten singular instants), rtol 1e-6.
- coupled: the coupled slider-crank (cases/slider_crank.py ``build_coupled``, 8 beam elements, the crank an
  AngleDriver at 150 rad/s), a quarter revolution, rtol 1e-2 and 1e-3 (atol rtol / 1000).
"""
from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np

import flexmbs as fm

ROOT = Path(fm.__file__).resolve().parents[1]          # the checkout measured (PYTHONPATH), its cases too
sys.path.insert(0, str(ROOT / "cases"))

import andrews_squeezer  # noqa: E402
import double_four_bar  # noqa: E402
import slider_crank  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_radau_compiled import command_cpu  # noqa: E402  (the whole command, at a given checkout)


def a03():
    system, _ = andrews_squeezer.build()
    return system, [dict(t_end=0.03, t_eval=[0.0, 0.03], v0=np.zeros(system.n_q), rtol=1e-6, atol=1e-9)]


def a02():
    system, q0, v0, _ = double_four_bar.build(2)
    return system, [dict(t_end=10.0, t_eval=[0.0, 1.0, 5.0, 10.0], q0=q0, v0=v0, rtol=1e-6, atol=1e-9)]


def coupled():
    system = slider_crank.build_coupled(elements=8)[0]
    p = slider_crank.DEFAULTS
    t_end = 0.5 * math.pi / p["crank_speed"]
    t_eval = slider_crank.solver_options(p, t_end)["t_eval"]
    return system, [dict(t_end=t_end, t_eval=t_eval, rtol=r, atol=r * 1e-3) for r in (1e-2, 1e-3)]


CASES = {"A03": a03, "A02": a02, "coupled": coupled}


def run(system, kernel: str, options: dict):
    tic = time.process_time()
    res = fm.run(system, method="radau-dae", kernel=kernel, store=False, **options)
    return res, time.process_time() - tic


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="A03,A02,coupled", help="comma-separated: A03, A02, coupled")
    a = parser.parse_args(argv)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, python "
          f"{platform.python_version()}, numpy {np.__version__}, flexmbs {Path(fm.__file__).parent}")
    print("\n| case | rtol | path | status | steps | rejected | solve wall [s] | run CPU [s] |\n|---|---:|---|---|---:|"
          "---:|---:|---:|")
    for name in [c.strip() for c in a.cases.split(",") if c.strip()]:
        system, runs = CASES[name]()
        for options in runs:
            for kernel in ("compiled", "numpy"):
                res, cpu = run(system, kernel, options)
                print(f"| {name} | {options['rtol']:g} | {res.metadata.get('kernel', kernel)} | {res.status} | "
                      f"{res.stats['n_steps']} | {res.stats['n_rejected']} | {res.stats['solve_s']:.3f} | {cpu:.3f} |",
                      flush=True)
    print(f"\nwhole command (A03, radau-dae, rtol 1e-6, compiled path): {command_cpu(1e-6, ROOT):.2f} s CPU")


if __name__ == "__main__":
    main()
