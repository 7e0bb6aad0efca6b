"""Force elements and point masses on the compiled step against the numpy path (issue 22, item 4;
issue 26, item 5; docs/benchmarks.md sec. 22.1).

    python benchmarks/bench_force_elements_kernel.py [--repeat 3]

Two runs, each with ``kernel="numpy"`` (before: every System with force elements or point masses ran
there) and ``kernel="compiled"``, same options: the quarter car of cases/quarter_car.py (two point
masses, two springs; index3-alpha, h = 1 ms, 2 s, 2000 steps) and the tumbling pair of
tests/test_forces.py (two rigid bodies, a SpringDamper, a RotationalSpringDamper and a Bushing with
dampers; h = 1 ms, 0.5 s), and the pendulum of tests/test_joints_limits.py swinging into its stop
(a JointLimit, k = 3e6, n = 1.5; h = 5e-5 s, 0.045 s).  Per step: the solve's CPU time (process time around the steps, the run's
``solve_s`` is wall time) is taken as the whole run's process time minus its output processing, both
reported; the best of ``--repeat`` runs; and the largest difference of q between the two paths.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "cases"))
import quarter_car  # noqa: E402
from test_forces import rigid_pair  # noqa: E402
from test_joints_limits import pendulum  # noqa: E402

from flexmbs.constraints import JointLimit  # noqa: E402

import flexmbs as fm  # noqa: E402


def timed(build, kernel: str, repeat: int, **options):
    """(best CPU seconds of the whole run, best wall solve_s, steps, results) over ``repeat`` runs."""
    best_cpu = best_solve = np.inf
    for _ in range(repeat):
        system = build()
        t0 = time.process_time()
        res = fm.run(system, method="index3-alpha", kernel=kernel, store=False, **options)
        best_cpu = min(best_cpu, time.process_time() - t0)
        best_solve = min(best_solve, res.stats["solve_s"])
        assert res.status == "finished" and res.metadata["kernel"] == kernel, (res.status, res.message)
    return best_cpu, best_solve, res.stats["n_steps"], res


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    p = dict(quarter_car.DEFAULTS)
    def stop():
        return pendulum(lambda pin: [JointLimit(pin, lower=-0.05, stiffness=3e6, restitution=0.3, exponent=1.5)],
                        omega0=-3.0)

    cases = (("quarter car (2 point masses, 2 springs)", lambda: quarter_car.build(p),
              dict(h=1e-3, t_end=2.0, dt_out=0.01)),
             ("tumbling pair (spring, rotational, bushing)", lambda: rigid_pair(c=2.0, law=False),
              dict(h=1e-3, t_end=0.5, dt_out=0.01)),
             ("pendulum into its stop (JointLimit)", stop, dict(h=5e-5, t_end=0.045, dt_out=1e-3)))
    for name, build, options in cases:
        rows = {}
        for kernel in ("numpy", "compiled"):
            rows[kernel] = timed(build, kernel, args.repeat, refactor="step", **options)
        dq = float(np.abs(rows["numpy"][3].q - rows["compiled"][3].q).max())
        for kernel, (cpu, solve, steps, _) in rows.items():
            print(f"{name}, {kernel}: {steps} steps, whole run {cpu:.3f} s CPU, solve {solve:.4f} s wall, "
                  f"{1e6 * solve / steps:.1f} us per step (wall)")
        print(f"  max |q_numpy - q_compiled| = {dq:.2e}; speed-up of the solve "
              f"{rows['numpy'][1] / rows['compiled'][1]:.0f}x")


if __name__ == "__main__":
    main()
