"""The slider-crank's solid rod with bearing B averaging (RBE3-like) or rigid (RBE2-like).

    python benchmarks/bench_rigid_bearing.py [--modes 8] [--revolutions 2]

For each bearing: `cases/slider_crank.py`'s `solid_rod(N, rigid_bearing=...)` (meshes/slider_crank_rod.msh,
clamped at bearing A, N free-interface modes plus the static and the attachment modes of bearing B; rigid:
``reduce(..., rigid_interfaces=["bearing_B"])``) in `build_coupled` (stiffening "modal-stress", the marker
``Interface("bearing_B", rigid=...)``), run by index3-alpha at h = 50 us with outputs every 0.5 degree;
prints the peak of `solid_midspan` (parabola through the largest sample), its crank angle, the lowest
frequency of the reduced rod, the coordinates and the CPU times of the build and reduction and of the
solve.  docs/coupled.md, "Bearing B rigid".
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", type=int, default=8, help="number of modes")
    ap.add_argument("--revolutions", type=float, default=2.0, help="crank revolutions")
    a = ap.parse_args(argv)
    if a.modes < 1 or not a.revolutions > 0:
        ap.error(f"--modes must be >= 1 and --revolutions > 0, got {a.modes} and {a.revolutions}")
    import flexmbs as fm
    import slider_crank as sc
    from flexmbs.bodies import Interface
    t_end = 2 * np.pi * a.revolutions / 150.0
    t_eval = np.minimum(fm.analysis.output_times(t_end, np.radians(0.5) / 150.0), t_end)
    print("| bearing B | coordinates | peak [mm] | crank angle [deg] | lowest frequency [Hz] | path | "
          "build + reduce [s] | solve [s] |")
    print("|---|---:|---:|---:|---:|---|---:|---:|")
    for rigid in (False, True):
        tic = time.process_time()
        solid = sc.solid_rod(a.modes, 2e11, 7870.0, 0.3, rigid_bearing=rigid)
        system, _, model = sc.build_coupled(rod_model=solid["model"], coupled_stiffening="modal-stress",
                                            rod_ends=(Interface("bearing_A"), Interface("bearing_B", rigid=rigid)))
        built = time.process_time() - tic
        res = fm.run(system, method="index3-alpha", h=5e-5, t_end=t_end, t_eval=t_eval, rho_inf=0.9, store=False)
        w = sc.solid_midspan(model, res.bodies["rod"].delta)
        value, angle = sc.peak({"midspan_deflection": w, "crank_angle": 150.0 * res.t})
        print(f"| {'rigid' if rigid else 'averaging'} | {solid['summary']['reduced_dofs']} | {1e3 * value:+.6f} | "
              f"{angle:.3f} | {solid['summary']['lowest_frequencies_hz'][0]:.7f} | {res.metadata.get('kernel')} | "
              f"{built:.1f} | {res.stats['solve_s']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
