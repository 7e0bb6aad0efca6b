"""What naming every axis of results.h5 costs (flexmbs.io.dimensions, issue 27, item 2).

    python benchmarks/bench_dimensions.py [--repeat 5]

For two stored runs, the spinning bar Model of tests/test_results_io.py (21 outputs) and the
coupled slider-crank System (cases/slider_crank.py, coupled, 0.1 revolution, 6 degree outputs),
prints the datasets of the run group, the time `label_dimensions` takes when the run's time
series begin and when it ends [ms], and the whole run with its store [s], as medians of
``--repeat`` runs (docs/benchmarks.md, section 23).
"""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))

import flexmbs as fm  # noqa: E402
import flexmbs.io.store as store  # noqa: E402
from flexmbs.io import dimensions, recording  # noqa: E402


def bar_run(path):
    bar = fm.Bar2(fm.Material(E=210e9, rho=50_000.0), area=0.2e-4)
    load = fm.NodalLoad("end", "u", 1.0, lambda t: np.sin(200.0 * t))
    model = fm.Model(fm.generate.line(4, 1.0), bar, motion=fm.motion.ConstantRotation(15.0),
                     fixed=[("start", "all")], loads=[load])
    fm.run(model, store=path, formulation="hamilton", method="DOP853", rtol=1e-6, t_end=2e-3, dt_out=1e-4)


def slider_crank_run(path):
    import slider_crank
    with recording(path):
        slider_crank.run(out=path.parent / "sc", coupled=True, plots=False, revolutions=0.1, degrees_out=6.0)


def measure(run, repeat: int) -> dict:
    spent, totals, n_datasets = [], [], 0
    original = dimensions.label_dimensions

    def timed(g, static, only=None, datasets=None):
        t0 = time.perf_counter()
        original(g, static, only, datasets)
        spent[-1].append(time.perf_counter() - t0)
    store.label_dimensions = timed
    try:
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "results.h5"
                spent.append([])
                t0 = time.perf_counter()
                run(path)
                totals.append(time.perf_counter() - t0)
                with h5py.File(path, "r") as f:
                    g = f[f.attrs["main"]]
                    keys = []
                    g.visititems(lambda k, o: keys.append(k) if isinstance(o, h5py.Dataset) else None)
                    n_datasets = sum(not dimensions.is_dimension(k) for k in keys)
    finally:
        store.label_dimensions = original
    return {"datasets": n_datasets, "begin_ms": 1e3 * statistics.median(s[0] for s in spent),
            "end_ms": 1e3 * statistics.median(s[1] for s in spent), "run_s": statistics.median(totals)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"# {platform.node()}, {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"h5py {h5py.__version__}, HDF5 {h5py.version.hdf5_version}")
    print("| run | datasets | labelling at the start [ms] | at the end [ms] | whole run with its store [s] |")
    print("|---|---:|---:|---:|---:|")
    for name, run in (("bar Model (21 outputs)", bar_run), ("coupled slider-crank System", slider_crank_run)):
        m = measure(run, args.repeat)
        print(f"| {name} | {m['datasets']} | {m['begin_ms']:.1f} | {m['end_ms']:.1f} | {m['run_s']:.2f} |")


if __name__ == "__main__":
    main()
