"""index3-alpha's compiled step under its Newton options: counts and time per step.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_index3_newton.py [--repeats 5] [--rows slider-crank,a02,triple]
        [--configs "kept_stop=rate" "kept_stop=correction" "refactor=step"]

Rows: the coupled slider-crank of cases/slider_crank.py at its defaults (8 elements, two
revolutions, h = 2.91e-5 s, 2880 steps), IFToMM A02 (cases/double_four_bar.py, 10 s at 2e-4 s)
and the triple pendulum in Euler parameters (cases/triple_pendulum.py, 2 s at 1e-3 s), each
`flexmbs.simulate`d by index3-alpha on the compiled kernel with every configuration (index3-alpha
options, ``key=value`` separated by commas; "" for the defaults).  Per step: evaluations of M, Q,
C, C_q (``n_rhs``, the finite-difference tangents' included), Newton iterations, rebuilds and LUs
of the iteration matrix, tangents; the time per step inside the kernel's ``steps`` calls (CPU
time of the calling thread) and of the whole integration (``simulate``, with its Python around
the kernel), each the least of ``--repeats`` rounds, the configurations in turns within a round so
that the load of a shared machine falls on all alike; and the largest difference of the output
states from the first configuration's (q, v), as a check that they compute the same motion.
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))

from flexmbs.compiled import CompiledSystem                 # noqa: E402
from flexmbs.integrators import ConstrainedProblem, simulate  # noqa: E402


def slider_crank_row():
    """(system, q0, v0, t_end, h, rho_inf, outputs) of the coupled slider-crank at the case's defaults."""
    import slider_crank as sc
    p = sc.DEFAULTS
    system = sc.build_coupled(**{k: p[k] for k in sc.COUPLED_PHYSICS}, rod=p["rod_length"])[0]
    t_end = 2.0 * np.pi * p["revolutions"] / abs(p["crank_speed"])
    t_eval = sc.solver_options({**p, "coupled": True}, t_end)["t_eval"]
    dt = t_eval[1] - t_eval[0]
    return system, None, None, t_end, dt / np.ceil(dt / p["h_coupled"]), p["rho_inf"], t_eval


def a02_row():
    """IFToMM A02 (the double four-bar) over 10 s at 2e-4 s, rho_inf 0.8 (the case's defaults)."""
    import double_four_bar
    system, q0, v0, _ = double_four_bar.build()
    return system, q0, v0, 10.0, 2e-4, 0.8, np.linspace(0.0, 10.0, 1001)


def triple_row():
    """The triple pendulum in Euler parameters over 2 s at 1e-3 s, rho_inf 0.8."""
    import triple_pendulum
    return triple_pendulum.build("euler-parameters"), None, None, 2.0, 1e-3, 0.8, np.linspace(0.0, 2.0, 201)


ROWS = {"slider-crank": slider_crank_row, "a02": a02_row, "triple": triple_row}


def parse_config(text: str) -> dict:
    """``"kept_stop=rate,keep_rate=2e-3"`` -> {"kept_stop": "rate", "keep_rate": 0.002}: a value that reads as a
    Python number (``ast.literal_eval``: also a negative one) is that number, any other value its text."""
    from ast import literal_eval
    out = {}
    for item in filter(None, text.split(",")):
        key, _, value = item.partition("=")
        try:
            number = literal_eval(value)
        except (ValueError, SyntaxError):
            number = None
        out[key] = number if isinstance(number, (int, float)) and not isinstance(number, bool) else value
    return out


class KernelClock:
    """CPU time of the calling thread inside `CompiledSystem.steps` (the kernel's step loop)."""

    def __init__(self):
        self.seconds = 0.0
        self._steps = CompiledSystem.steps

    def __enter__(self):
        clock, steps = self, self._steps

        def timed(system, *args, **kwargs):
            tic = time.thread_time()
            try:
                return steps(system, *args, **kwargs)
            finally:
                clock.seconds += time.thread_time() - tic
        CompiledSystem.steps = timed
        return self

    def __exit__(self, *exc):
        CompiledSystem.steps = self._steps


def run(row, options: dict):
    """One simulate of ``row`` with index3-alpha ``options``: (Solution, kernel CPU [s], solve CPU [s])."""
    system, q0, v0, t_end, h, rho, t_eval = row
    problem = ConstrainedProblem(system)
    q0 = system.initial_coordinates() if q0 is None else q0
    v0 = system.initial_velocities() if v0 is None else v0
    x0 = problem.state0(q0, v0)
    with KernelClock() as clock:
        tic = time.thread_time()
        sol = simulate(problem, (0.0, t_end), x0, method="index3-alpha", h=h, rho_inf=rho, t_eval=t_eval,
                       kernel="compiled", **options)
        solve = time.thread_time() - tic
    if sol.status != "finished":
        raise RuntimeError(f"index3-alpha with {options} did not finish: {sol.message}")
    return sol, clock.seconds, solve


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rows", default="slider-crank,a02,triple", help=f"comma-separated, of: {', '.join(ROWS)}")
    ap.add_argument("--configs", nargs="+", default=["kept_stop=rate", "kept_stop=correction", "refactor=step"])
    a = ap.parse_args(argv)
    rows = [r for r in a.rows.split(",") if r]
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        ap.error(f"--rows: unknown {unknown}; choose from {list(ROWS)}")
    configs = [parse_config(c) for c in a.configs]
    load = ", ".join(f"{x:.1f}" for x in __import__("os").getloadavg())
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()}, python {platform.python_version()}, "
          f"numpy {np.__version__}; load average {load}; least of {a.repeats} rounds")
    print("| row | options | evals/step | Newton it./step | LUs/step | tangents | kernel [us/step] "
          "| solve [us/step] | max |q - q_1| | max |v - v_1| |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in rows:
        row = ROWS[name]()
        best = [[np.inf, np.inf] for _ in configs]
        sols = [None] * len(configs)
        for _ in range(a.repeats):
            for i, options in enumerate(configs):
                sol, kernel, solve = run(row, options)
                best[i] = [min(best[i][0], kernel), min(best[i][1], solve)]
                sols[i] = sol
        n = row[0].n_q
        first = sols[0]
        for options, sol, (kernel, solve) in zip(configs, sols, best):
            k = sol.n_steps
            dq = np.abs(sol.x[:, :n] - first.x[:, :n]).max()
            dv = np.abs(sol.x[:, n:] - first.x[:, n:]).max()
            label = ", ".join(f"{key}={value}" for key, value in options.items()) or "defaults"
            print(f"| {name} ({k} steps) | {label} | {sol.n_rhs / k:.3f} | {sol.n_newton / k:.3f} | "
                  f"{sol.n_lu / k:.3f} | {sol.n_jac} | {1e6 * kernel / k:.1f} | {1e6 * solve / k:.1f} | "
                  f"{dq:.1e} | {dv:.1e} |")


if __name__ == "__main__":
    main()
