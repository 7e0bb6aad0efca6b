"""The System's energies and forces over a run's outputs: all rows at once against one call per row.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=DIR python benchmarks/bench_output_rows.py [--rows 1001] [--repeats 5]

From a checkout DIR (its cases/ and flexmbs/), prints the least of ``--repeats`` wall times of

- `System.energy_history` on ``--rows`` states about the start of the natural-coordinate triple pendulum
  (cases/triple_pendulum.py) and of the cart pendulum's tree body (cases/cart_pendulum.py);
- the forces of ``--rows`` states of the bouncing ball 5 mm above its plane (cases/bouncing_ball.py): one
  `System.force_history` where the checkout has it, and `System.forces` row by row (the path before it);
- `System.forces` at one state, with and without a contact (a step's cost; per call).

Run it once per checkout in turns (the machine's speed varies by 10-50 %), e.g. the code before issue 22
item 1's fourteenth round from ``git archive 774fc5f | tar -x -C /tmp/before`` (docs/benchmarks.md 20.9).
"""
from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path.cwd() / "cases"))


def least(f, repeats: int, number: int = 1) -> float:
    """The least wall time of one call of f [s] over ``repeats`` rounds of ``number`` calls."""
    return min(timeit.repeat(f, number=number, repeat=repeats)) / number


def states(system, n: int, seed: int = 1):
    """(t (n,), q, v (n, n_q)): states 1 cm and 0.1 m/s about the system's start."""
    rng = np.random.default_rng(seed)
    return (np.linspace(0.0, 1.0, n), system.initial_coordinates() + 0.01 * rng.standard_normal((n, system.n_q)),
            system.initial_velocities() + 0.1 * rng.standard_normal((n, system.n_q)))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1001)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args(argv)
    import bouncing_ball
    import cart_pendulum
    import triple_pendulum
    for name, system in (("natural triple pendulum", triple_pendulum.build("natural")),
                         ("tree cart pendulum", cart_pendulum.build().system)):
        _, q, v = states(system, a.rows)
        print(f"{name}: energy_history, {a.rows} rows: {least(lambda: system.energy_history(q, v), a.repeats) * 1e3:.2f} ms")
    ball = bouncing_ball.build(dict(bouncing_ball.DEFAULTS, drop_height=0.005))
    t, q, v = states(ball, a.rows)
    if hasattr(ball, "force_history"):
        print(f"bouncing ball: force_history, {a.rows} rows: {least(lambda: ball.force_history(t, q, v), a.repeats) * 1e3:.2f} ms")
    rowwise = least(lambda: [ball.forces(tk, qk, vk) for tk, qk, vk in zip(t, q, v)], a.repeats)
    print(f"bouncing ball: forces row by row, {a.rows} rows: {rowwise * 1e3:.2f} ms")
    q0, v0 = ball.initial_coordinates(), ball.initial_velocities()
    q1 = q0.copy()
    q1[2] -= 0.01                                      # 5 mm into the plane
    for label, qk in (("no contact", q0), ("contact", q1)):
        print(f"bouncing ball: forces at one state, {label}: "
              f"{least(lambda: ball.forces(0.0, qk, v0), a.repeats, 1000) * 1e6:.1f} us")


if __name__ == "__main__":
    main()
