"""The powers and energies of a block of outputs for the bodies and forces batched in the thirteenth round
(issue 22, item 1; docs/benchmarks.md 20.9): a flexible body's stiffening power, contacts.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=DIR python benchmarks/bench_output_powers.py [--rows 1001] [--repeats 5]

Times (process CPU, the least of ``--repeats``) of ``System.power_history`` and ``System.energy_history`` on
``--rows`` states about each System's start (positions 1 mm to 3 cm off, so that contacts are on at some
rows and off at others; speeds 0.5 m/s and 1e-4 m/s off, friction sliding and sticking), as a run's outputs
would give them:

* the coupled spin-up beam on its hub with "omega" stiffening (cases/spinup_beam.py ``build_coupled``, 10
  elements): the stiffening power, before one ``geometric_stiffness_force`` per row;
* the incline block sliding (cases/incline_block.py: a Box on a Plane, 2D), the bouncing ball 5 mm above
  its plane (cases/bouncing_ball.py), and two spheres and a box on a plane (3D): before one
  ``Contact.state`` per row for the powers and one more for the energies.

With ``--process CASE,...``, instead: the whole command ``python -m flexmbs run CASE -q --no-plots --out DIR``
of each case as a new process (user + system CPU from ``os.wait4``, the least of ``--repeats`` after one
untimed run that writes the modules' bytecode into a temporary PYTHONPYCACHEPREFIX, as an installed package
has it), the checkout PYTHONPATH's.

The flexmbs imported is PYTHONPATH's (DIR = a checkout), and the cases' ``build`` are DIR/cases', so one
script times an older checkout too (``git archive COMMIT | tar -x -C DIR``).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import flexmbs

sys.path.insert(0, str(Path(flexmbs.__file__).resolve().parents[1] / "cases"))

import bouncing_ball  # noqa: E402
import incline_block  # noqa: E402
import spinup_beam  # noqa: E402


def spheres_box_plane():
    """Two free spheres (one carrying a box) on the plane z = 0, friction 0.3."""
    from flexmbs.bodies import RigidBodyEP
    from flexmbs.contact import Box, Contact, ContactLaw, Plane, Sphere
    from flexmbs.system import System
    a = RigidBodyEP("a", 1.0, 0.01 * np.eye(3), position=(0.0, 0.0, 0.098))
    b = RigidBodyEP("b", 2.0, 0.02 * np.eye(3), position=(0.17, 0.03, 0.11))
    shapes = [Sphere(a, 0.1), Sphere(b, 0.08), Plane(None, (0, 0, 1)), Box(b, (0.05, 0.04, 0.06), at=(-0.08, 0, -0.06))]
    return System([a, b], forces=[Contact(shapes, ContactLaw(stiffness=1e6, restitution=0.5, friction=0.3))])


def systems() -> dict:
    return {"spin-up beam, omega stiffening": spinup_beam.build_coupled(elements=10, coupled_stiffening="omega")[0],
            "incline block sliding (2D contact)": incline_block.build(dict(incline_block.DEFAULTS, angle=30.0, mu=0.2)),
            "bouncing ball (3D contact)": bouncing_ball.build(dict(bouncing_ball.DEFAULTS, drop_height=0.005)),
            "two spheres and a box on a plane": spheres_box_plane()}


def rows(system, n: int, seed: int = 5):
    """(t, q, v) (n, ...) about the start (module docstring)."""
    rng = np.random.default_rng(seed)
    q0, v0 = system.initial_coordinates(), system.initial_velocities()
    q = q0 + np.where(np.arange(n) % 3 == 0, 1e-3, 0.03)[:, None] * rng.standard_normal((n, len(q0)))
    v = v0 + np.where(np.arange(n) % 2 == 0, 0.5, 1e-4)[:, None] * rng.standard_normal((n, len(q0)))
    return np.linspace(0.0, 1.0, n), q, v


def least(f, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        f()
        times.append(time.process_time() - t0)
    return min(times)


def process_cpu(case: str, repeats: int) -> float:
    """The least user + system CPU [s] of ``python -m flexmbs run CASE -q --no-plots`` (module docstring)."""
    root = Path(flexmbs.__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=str(root), PYTHONPYCACHEPREFIX=str(Path(tmp) / "pyc"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cmd = [sys.executable, "-m", "flexmbs", "run", case, "-q", "--no-plots", "--out", str(Path(tmp) / "out")]
        best = float("inf")
        for k in range(repeats + 1):
            child = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL)
            _, status, usage = os.wait4(child.pid, 0)
            if status:
                raise SystemExit(f"{' '.join(cmd)} failed ({status})")
            if k:                                            # the first run writes the bytecode
                best = min(best, usage.ru_utime + usage.ru_stime)
    return best


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1001)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--process", default="", help="comma-separated cases: time their whole `flexmbs run` instead")
    args = ap.parse_args(argv)
    if args.process:
        for case in args.process.split(","):
            print(f"{Path(flexmbs.__file__).parent}: flexmbs run {case}: CPU {process_cpu(case, args.repeats):.2f} s "
                  f"(least of {args.repeats})")
        return
    print(f"flexmbs from {Path(flexmbs.__file__).parent}; {args.rows} rows; CPU [ms], least of {args.repeats}")
    for name, system in systems().items():
        t, q, v = rows(system, args.rows)
        P = least(lambda: system.power_history(t, q, v), args.repeats)
        E = least(lambda: system.energy_history(q, v), args.repeats)
        print(f"{name:40s} power_history {1e3 * P:9.2f}   energy_history {1e3 * E:9.2f}")


if __name__ == "__main__":
    main()
