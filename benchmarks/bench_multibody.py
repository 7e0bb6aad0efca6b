"""Cost per step of the triple pendulum (cases/triple_pendulum.py) for each coordinate system and solver.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_multibody.py [--t-end 1.0] [--repeats 5]
    python benchmarks/bench_multibody.py --quick        # a smoke test of the script, not a measurement

For each combination of rigid-body coordinates (NACF: natural absolute coordinates; RPCF-EP:
reference point and Euler parameters) and acceleration solver (AF: augmented formulation;
UKE: Udwadia-Kalaba equations):

- ``assembly``: one evaluation of M(q), Q(t, q, q'), C_q(q), gamma(q, q') by flexmbs.System
  at a state of the motion (the same for both solvers), and the number of Python and C
  function calls it makes (``sys.setprofile``: numpy's own calls count as one each), which
  sets its cost at these sizes far more than the arithmetic does;
- ``solve``: the solver's linear algebra alone on those arrays (saddle-point LU; Cholesky of
  M + C_q^T C_q and the pseudo-inverse of the kinetic matrix);
- ``partitioning``: one coordinate-partitioning correction (positions and velocities) at that
  state, partition already chosen;
- ``step``: a whole AB4 step (h = 1e-3 s, one acceleration evaluation) with coordinate
  partitioning after it, as in the paper's runs, from the CPU time of integrating ``--t-end``
  seconds.

Times are CPU times of this process (``time.process_time``).  The machine this project is
measured on is shared, so the two coordinate systems are timed in turns: ``--repeats`` rounds,
each timing every quantity of NACF and then of RPCF-EP, and each quantity keeps the least of
its rounds (the least disturbed by other work); the micro-timings are means over at least
0.3 s of calls.  The ratios RPCF-EP / NACF, printed last, are the measurement; the paper's
Table 3 gives 2.3 (AF) and 2.2 (UKE).  The first line printed is the date, the command and
the machine, to be quoted with the numbers (docs/benchmarks.md, section 6).
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import triple_pendulum as tp  # noqa: E402

from flexmbs.formulations.augmented import solve_saddle_point  # noqa: E402
from flexmbs.formulations.index1 import Index1  # noqa: E402
from flexmbs.formulations.stabilization import CoordinatePartitioning  # noqa: E402
from flexmbs.formulations.udwadia_kalaba import solve_udwadia_kalaba  # noqa: E402
from flexmbs.integrators import simulate  # noqa: E402

COORDINATES = ("natural", "euler-parameters")
SOLVERS = ("augmented", "udwadia-kalaba")
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


def calls_made(f) -> int:
    """Python and C function calls made by one call of f, f's own included (``sys.setprofile``: a
    numpy function implemented in C counts once, whatever the size of its arrays)."""
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        count += event in ("call", "c_call")

    sys.setprofile(profile)
    try:
        f()
    finally:
        sys.setprofile(None)
    return count - 1                        # the setprofile(None) call itself


def state_of_the_motion(system, t=0.5):
    """(q, v) of the pendulum at time t (DOP853), a state with nonzero velocities."""
    form = Index1(system, solver="augmented")
    sol = simulate(form, (0.0, t), form.state0(), method="DOP853", rtol=1e-9, atol=1e-11)
    return form.physical(t, sol.x[-1])


class Timed:
    """The timed quantities of one coordinate system (module docstring), at a state of the motion."""

    def __init__(self, coordinates: str, t: float = 0.5):
        self.system = system = tp.build(coordinates)
        self.t = t
        self.q, self.v = state_of_the_motion(system, t)
        self.M, self.Q, self.Cq, self.g = self.assembly()
        self.partitioning = CoordinatePartitioning()
        self.partitioning.correct(system, t, self.q, self.v)          # chooses the partition

    def parts(self) -> dict:
        """The four evaluations of the assembly, by name."""
        s, t, q, v = self.system, self.t, self.q, self.v
        return {"M": lambda: s.mass_matrix(q), "Q": lambda: s.forces(t, q, v), "C_q": lambda: s.jacobian(t, q),
                "gamma": lambda: s.gamma(t, q, v)}

    def assembly(self):
        return tuple(f() for f in self.parts().values())

    def micro(self, min_time: float) -> dict:
        """CPU seconds per call of the assembly, the two solves and the partitioning."""
        M, Q, Cq, g = self.M, self.Q, self.Cq, self.g
        return {"assembly": per_call(self.assembly, min_time),
                "solve augmented": per_call(lambda: solve_saddle_point(M, Q, Cq, g), min_time),
                "solve udwadia-kalaba": per_call(lambda: solve_udwadia_kalaba(M, Q, Cq, g), min_time),
                "partitioning": per_call(lambda: self.partitioning.correct(self.system, self.t, self.q, self.v),
                                         min_time)}

    def step(self, solver: str, t_end: float) -> float:
        """CPU seconds per AB4 step with coordinate partitioning over ``t_end`` seconds."""
        form = Index1(self.system, solver=solver, stabilization="coordinate-partitioning")
        x0 = form.state0()
        tic = time.process_time()
        sol = simulate(form, (0.0, t_end), x0, method="AB4", h=1e-3, t_eval=[0.0, t_end])
        return (time.process_time() - tic) / sol.n_steps


def measure(t_end: float, repeats: int, min_time: float = 0.3) -> dict:
    """coordinates -> {quantity: least CPU seconds over the rounds}, the rounds timing NACF and
    RPCF-EP in turns (module docstring), plus n_q, n_c and the calls of one assembly."""
    timed = {c: Timed(c) for c in COORDINATES}
    best = {c: {} for c in COORDINATES}
    for _ in range(repeats):
        for c, x in timed.items():
            values = x.micro(min_time)
            values.update({f"step {solver}": x.step(solver, t_end) for solver in SOLVERS})
            for key, value in values.items():
                best[c][key] = min(best[c].get(key, np.inf), value)
    for c, x in timed.items():
        best[c].update(n_q=x.system.n_q, n_c=x.system.n_c,
                       calls={name: calls_made(f) for name, f in x.parts().items()})
    return best


def command(argv) -> str:
    """The command line of this run (``argv``: its arguments), for the "Measured:" line."""
    return " ".join(["python", "benchmarks/bench_multibody.py", *argv])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=1.0, help="simulated time per run [s] (h = 1e-3 s)")
    ap.add_argument("--repeats", type=int, default=5, help="rounds, NACF and RPCF-EP timed in turns")
    ap.add_argument("--quick", action="store_true", help="one round of 0.02 s runs: a smoke test, not a measurement")
    a = ap.parse_args(argv)
    t_end, repeats, min_time = (0.02, 1, 0.01) if a.quick else (a.t_end, a.repeats, 0.3)
    args = sys.argv[1:] if argv is None else argv
    print(f"Measured: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, `{command(args)}`, "
          f"{platform.machine()}, python {platform.python_version()}, numpy {np.__version__}, "
          f"load average {os.getloadavg()[0]:.1f}; CPU time of the process, least of {repeats} round(s)")
    res = measure(t_end, repeats, min_time)
    print("\n| coordinates | n_q | n_c | calls: M + Q + C_q + gamma | assembly [ms] | AF solve [ms] | UKE solve [ms] | "
          "partitioning [ms] | AF step [ms] | UKE step [ms] |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    keys = ("assembly", "solve augmented", "solve udwadia-kalaba", "partitioning", "step augmented",
            "step udwadia-kalaba")
    for c, r in res.items():
        calls = " + ".join(str(n) for n in r["calls"].values())
        print(f"| {LABEL[c]} | {r['n_q']} | {r['n_c']} | {calls} = {sum(r['calls'].values())} | "
              + " | ".join(f"{1e3 * r[k]:.3f}" for k in keys) + " |")
    nacf, ep = res["natural"], res["euler-parameters"]
    print("\n| RPCF-EP / NACF | measured | paper (Table 3) |")
    print("|---|---:|---:|")
    print(f"| assembly | {ep['assembly'] / nacf['assembly']:.2f} | |")
    for solver, paper in (("augmented", 2.3), ("udwadia-kalaba", 2.2)):
        print(f"| {LABEL[solver]} step | {ep['step ' + solver] / nacf['step ' + solver]:.2f} | {paper} |")
    if a.quick:
        print("quick mode: a smoke test of the script, not a measurement (run without --quick)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
