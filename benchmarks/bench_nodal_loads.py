"""A FlexibleBody with its Model's nodal loads on index3-alpha: the numpy path (before issue 22's item 4 every
such System took it) against the compiled step (docs/benchmarks.md, 22.2).

The System of tests/test_compiled_nodal_loads.py ``hub_beam("omega")``: a hub on a revolute joint and a
clamped beam (4 BeamEB2D elements, "omega" stiffening, Rayleigh damping) with an axial and a transverse tip
force, a tip moment (functions of t) and a constant force at a middle node; h = 0.1 ms over 0.1 s (1000
steps), outputs every 1 ms, rho_inf = 0.9.  The load factors are users' Python callables (``python``: the
kernel's time rows are tabulated in Python at the step times) or declare ``affine`` (``affine``).  Prints the
CPU seconds of each ``flexmbs.run(..., store=False)`` (best of ``--repeats``) and per step.

    python benchmarks/bench_nodal_loads.py [--repeats 2]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def main(argv=None):
    import numpy as np
    import flexmbs as fm
    from test_compiled_nodal_loads import hub_beam
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f}")
    for python in (True, False):
        for kernel in ("numpy", "compiled"):
            best = np.inf
            for _ in range(a.repeats):
                system = hub_beam("omega", python=python)
                c0 = time.process_time()
                res = fm.run(system, method="index3-alpha", h=1e-4, t_end=0.1, dt_out=1e-3, rho_inf=0.9, store=False,
                             kernel=kernel)
                best = min(best, time.process_time() - c0)
            steps = res.stats["n_steps"]
            print(f"{'python' if python else 'affine'} laws, {res.metadata['kernel']:8s}: {steps} steps, "
                  f"{best:.3f} s CPU, {1e6 * best / steps:.1f} us/step")


if __name__ == "__main__":
    main()
