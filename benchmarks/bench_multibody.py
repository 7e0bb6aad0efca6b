"""Cost per step of the triple pendulum (cases/triple_pendulum.py) for each coordinate system and solver.

    OMP_NUM_THREADS=1 python benchmarks/bench_multibody.py [--t-end 1.0] [--repeats 3]

For each combination of rigid-body coordinates (NACF: natural absolute coordinates; RPCF-EP:
reference point and Euler parameters) and acceleration solver (AF: augmented formulation;
UKE: Udwadia-Kalaba equations):

- ``assembly``: one evaluation of M(q), Q(t, q, q'), C_q(q), gamma(q, q') by flexmbs.System
  at a state of the motion (the same for both solvers);
- ``solve``: the solver's linear algebra alone on those arrays (saddle-point LU; Cholesky of
  M + C_q^T C_q and the pseudo-inverse of the kinetic matrix);
- ``partitioning``: one coordinate-partitioning correction (positions and velocities) at that
  state, partition already chosen;
- ``step``: a whole AB4 step (h = 1e-3 s, one acceleration evaluation) with coordinate
  partitioning after it, as in the paper's runs, from the CPU time of integrating ``--t-end``
  seconds.

Times are CPU times of this process (``time.process_time``: robust to other work on the
machine), the smallest of ``--repeats`` runs (the least disturbed by other work); the
micro-timings are means over at least 0.3 s of calls, the smallest of ``--repeats``.  The
last table gives the ratio NACF / RPCF-EP of the step time for each solver: the paper's
Table 3 gives 1 / 2.3 (AF) and 1 / 2.2 (UKE).
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import triple_pendulum as tp  # noqa: E402

from flexmbs.formulations.augmented import solve_saddle_point  # noqa: E402
from flexmbs.formulations.index1 import Index1  # noqa: E402
from flexmbs.formulations.stabilization import CoordinatePartitioning  # noqa: E402
from flexmbs.formulations.udwadia_kalaba import solve_udwadia_kalaba  # noqa: E402
from flexmbs.integrators import simulate  # noqa: E402

LABEL = {"natural": "NACF", "euler-parameters": "RPCF-EP", "augmented": "AF", "udwadia-kalaba": "UKE"}


def per_call(f, min_time=0.3) -> float:
    """Mean CPU seconds per call of f over at least ``min_time`` seconds."""
    f()
    n, tic = 0, time.process_time()
    while True:
        f()
        n += 1
        elapsed = time.process_time() - tic
        if elapsed >= min_time:
            return elapsed / n


def state_of_the_motion(system, t=0.5):
    """(q, v) of the pendulum at time t (DOP853), a state with nonzero velocities."""
    form = Index1(system, solver="augmented")
    sol = simulate(form, (0.0, t), form.state0(), method="DOP853", rtol=1e-9, atol=1e-11)
    return form.physical(t, sol.x[-1])


def measure(coordinates: str, t_end: float, repeats: int) -> dict:
    system = tp.build(coordinates)
    q, v = state_of_the_motion(system)
    t = 0.5

    def assembly():
        return system.mass_matrix(q), system.forces(t, q, v), system.jacobian(t, q), system.gamma(t, q, v)

    M, Q, Cq, g = assembly()
    def best(f):
        return min(per_call(f) for _ in range(repeats))

    out = {"n_q": system.n_q, "n_c": system.n_c, "assembly": best(assembly),
           "solve": {"augmented": best(lambda: solve_saddle_point(M, Q, Cq, g)),
                     "udwadia-kalaba": best(lambda: solve_udwadia_kalaba(M, Q, Cq, g))},
           "step": {}}
    stab = CoordinatePartitioning()
    stab.correct(system, t, q, v)
    out["partitioning"] = best(lambda: stab.correct(system, t, q, v))
    for solver in ("augmented", "udwadia-kalaba"):
        times = []
        for _ in range(repeats):
            form = Index1(system, solver=solver, stabilization="coordinate-partitioning")
            x0 = form.state0()
            tic = time.process_time()
            sol = simulate(form, (0.0, t_end), x0, method="AB4", h=1e-3, t_eval=[0.0, t_end])
            times.append((time.process_time() - tic) / sol.n_steps)
        out["step"][solver] = float(np.min(times))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=1.0, help="simulated time per run [s] (h = 1e-3 s)")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    print(f"machine: {platform.processor() or platform.machine()}, {platform.system()}, python "
          f"{platform.python_version()}, numpy {np.__version__}; CPU times of this process")
    res = {c: measure(c, a.t_end, a.repeats) for c in ("natural", "euler-parameters")}
    print("\n| coordinates | n_q | n_c | assembly [ms] | AF solve [ms] | UKE solve [ms] | partitioning [ms] | "
          "AF step [ms] | UKE step [ms] |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c, r in res.items():
        print(f"| {LABEL[c]} | {r['n_q']} | {r['n_c']} | {1e3 * r['assembly']:.3f} | "
              f"{1e3 * r['solve']['augmented']:.3f} | {1e3 * r['solve']['udwadia-kalaba']:.3f} | "
              f"{1e3 * r['partitioning']:.3f} | {1e3 * r['step']['augmented']:.3f} | {1e3 * r['step']['udwadia-kalaba']:.3f} |")
    print("\n| solver | step NACF / RPCF-EP | paper (Table 3) |")
    print("|---|---:|---:|")
    for solver, paper in (("augmented", 1 / 2.3), ("udwadia-kalaba", 1 / 2.2)):
        ratio = res["natural"]["step"][solver] / res["euler-parameters"]["step"][solver]
        print(f"| {LABEL[solver]} | {ratio:.2f} | {paper:.2f} |")


if __name__ == "__main__":
    main()
