"""Cost of the force elements between bodies (issue 26, item 1; docs/benchmarks.md sec. 22).

    python benchmarks/bench_force_elements.py

Two free rigid bodies held by a SpringDamper, a RotationalSpringDamper and a Bushing with dampers
(``rigid_pair(c=2.0, law=False)`` of tests/test_forces.py): CPU time (process time) of the System's
force and tangent evaluations, mean of 300 calls, and of an index3-alpha run (h = 1 ms, 500 steps).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_forces import rigid_pair  # noqa: E402

import flexmbs as fm  # noqa: E402


def main() -> None:
    s = rigid_pair(c=2.0, law=False)
    q, v = s.initial_coordinates(), s.initial_velocities()
    calls = (("System.forces", lambda: s.forces(0.1, q, v)),
             ("System.element_forces", lambda: s.element_forces(0.1, q, v)),
             ("System.element_tangent(geometric=False)", lambda: s.element_tangent(0.1, q, v, geometric=False)),
             ("System.element_tangent()", lambda: s.element_tangent(0.1, q, v)))
    for name, call in calls:
        n, t0 = 300, time.process_time()
        for _ in range(n):
            call()
        print(f"{name}: {1e3 * (time.process_time() - t0) / n:.3f} ms")
    t0 = time.process_time()
    res = fm.run(rigid_pair(c=2.0, law=False), method="index3-alpha", h=1e-3, t_end=0.5, dt_out=0.01, store=False)
    cpu = time.process_time() - t0
    print(f"index3-alpha, h = 1 ms, {res.stats['n_steps']} steps: {1e3 * cpu / res.stats['n_steps']:.2f} ms per step "
          "(CPU, output processing included)")


if __name__ == "__main__":
    main()
