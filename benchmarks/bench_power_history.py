"""The force elements' and the body loads' powers and energies over the rows of a block (issue 22, item 1;
docs/benchmarks.md 20.6).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=DIR python benchmarks/bench_power_history.py [--rows 3001] [--repeats 5]
        [--no-run]

IFToMM A03 (Andrews' squeezer, the case's `build`) with its spring to the ground as a `SpringDamper`
instead of the case's body load (``spring_to_ground``): once as the case has it (no damper: its power
is zero, its work is in U) and once with a damper (c = 50 N s/m) and an actuator of time, a rotational
spring-damper about the joint P, a stop on B and friction on A5, every element kind whose powers are
in `flexmbs.forces`.  Times (process CPU, the least of ``--repeats``):

1. ``System.power_history`` and ``System.energy_history`` on ``--rows`` rows (the trapezoid's step
   points of A03's 3000 index3-alpha steps), the motor torque (a body load, not a force element)
   left out so that only the force elements count; then A03 as the case builds it, whose powers are
   all its body loads' (the motor torque ``torque_load`` and the spring ``spring_to_ground``);
2. unless ``--no-run``: the variant with its spring as a SpringDamper and A03 as the case builds it,
   each run as the case runs it (index3-alpha, h = 1e-5, 0.03 s, outputs every 1e-4 s, the compiled
   step), the whole `flexmbs.run` and the time inside `System.power_history` (the works' integrand at
   every step point).

The flexmbs imported is PYTHONPATH's (DIR = a checkout), and the case's `build` is DIR/cases', so
one script times an older checkout too.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import flexmbs as fm
from flexmbs.bodies.planar import RigidBody2D
from flexmbs.constraints import JointFriction, JointLimit
from flexmbs.constraints.planar import PlanarRevolute
from flexmbs.forces import RotationalSpringDamper, SpringDamper
from flexmbs.system import System

sys.path.insert(0, str(Path(fm.__file__).resolve().parents[1] / "cases"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import andrews_squeezer  # noqa: E402
from bench_contact_spheres import least_cpu  # noqa: E402


def _is_spring(load) -> bool:
    return getattr(load, "spec", ("",))[0] == "spring"


def squeezer(elements: bool, torque: bool = True) -> System:
    """A03 with its spring as a `SpringDamper` (the same k, l0 and points); ``elements``: also a damper
    and an actuator on it and the other kinds (module docstring); ``torque``: keep the motor torque."""
    _, K = andrews_squeezer.build()
    _, s, anchor, k, l0, _ = next(load.spec for load in K[2].loads if _is_spring(load))
    bodies = {}
    for b in K:
        q = b.initial_coordinates()
        loads = [load for load in b.loads if not _is_spring(load) and torque]
        bodies[b.name] = RigidBody2D(b.name, b.mass, b.inertia, position=q[:2], angle=q[2], loads=loads)
    old = andrews_squeezer.build()[0].constraints
    joints = {c.name: PlanarRevolute(*(None if x is None else bodies[x.name] for x in c.bodies), s_i=c.s[0],
                                     s_j=c.s[1], name=c.name) for c in old}
    B = list(bodies.values())
    if not elements:
        return System(B, list(joints.values()), forces=[SpringDamper(None, anchor, B[2], s, k, l0, name="spring")])
    forces = [SpringDamper(None, anchor, B[2], s, k, l0, damping=50.0, actuator=lambda t: 40.0 * np.sin(50.0 * t),
                           name="spring"),
              RotationalSpringDamper.about(joints["P"], 2.0, 0.05, damping=0.01, actuator=0.3),
              JointLimit(joints["B"], lower=-0.01, upper=0.01, stiffness=1e4, restitution=0.4, exponent=1.5),
              JointFriction(joints["A5"], 0.2, creep_speed=1e-2)]
    return System(B, list(joints.values()), forces=forces)


def histories(n_rows: int, repeats: int) -> None:
    rng = np.random.default_rng(0)
    for label, build in (("spring only (as the case)", lambda: squeezer(False, torque=False)),
                         ("all element kinds", lambda: squeezer(True, torque=False)),
                         ("as the case builds it (body loads only)", lambda: andrews_squeezer.build()[0])):
        s = build()
        q0 = s.initial_coordinates()
        q = q0 + 0.03 * rng.standard_normal((n_rows, len(q0)))
        v = 0.5 * rng.standard_normal((n_rows, len(q0)))
        t = np.linspace(0.0, 0.03, n_rows)
        P = least_cpu(lambda: s.power_history(t, q, v), repeats)
        E = least_cpu(lambda: s.energy_history(q, v), repeats)
        print(f"A03, {label}, {len(s.force_elements)} element(s), {sum(len(b.loads) for b in s.bodies)} body "
              f"load(s), {n_rows} rows: power_history {1e3 * P:.2f} ms "
              f"({1e6 * P / n_rows:.2f} us a row), energy_history {1e3 * E:.2f} ms ({1e6 * E / n_rows:.2f} us a row)")


def run(repeats: int, label: str, build) -> None:
    spent = [0.0]
    original = System.power_history

    def timed(self, *args, **kwargs):
        t0 = time.process_time()
        try:
            return original(self, *args, **kwargs)
        finally:
            spent[0] += time.process_time() - t0
    System.power_history = timed
    best = None
    for _ in range(repeats):
        s = build()
        spent[0] = 0.0
        t0 = time.process_time()
        res = fm.run(s, t_end=0.03, dt_out=1e-4, v0=np.zeros(s.n_q), method="index3-alpha", h=1e-5, store=False)
        total = time.process_time() - t0
        if best is None or total < best[0]:
            best = (total, spent[0], res.stats.get("n_steps"), res.stats.get("path", res.stats.get("kernel")))
    System.power_history = original
    total, works, steps, path = best
    print(f"A03 {label}, index3-alpha h = 1e-5 ({steps} steps, {path}): flexmbs.run "
          f"{total:.3f} s CPU, of which System.power_history {works:.3f} s")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=3001, help="rows of the histories (default 3001)")
    ap.add_argument("--repeats", type=int, default=5, help="the least CPU time of this many (default 5)")
    ap.add_argument("--no-run", action="store_true", help="time the histories only")
    args = ap.parse_args(argv)
    print(f"flexmbs from {Path(fm.__file__).resolve().parent}")
    histories(args.rows, args.repeats)
    if not args.no_run:
        run(max(1, args.repeats // 2), "with its spring as a SpringDamper", lambda: squeezer(False))
        run(max(1, args.repeats // 2), "as the case builds it", lambda: andrews_squeezer.build()[0])


if __name__ == "__main__":
    main()
