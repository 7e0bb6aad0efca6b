"""What the viewer costs per frame, off-screen (flexmbs.viewer, issue 27, item 1).

    python benchmarks/bench_viewer.py [--frames 50] [--solid]

Runs the coupled slider-crank (cases/slider_crank.py, coupled, one revolution: 721 outputs; with
``--solid`` also the reduced Tet10 rod over 0.1 revolution) into a temporary folder, then times,
off-screen at 800 x 600 pixels: importing pyvista, placing every output's points once for the
camera's bounds (`Scene.bounds`), making the `Viewer` (grids, actors, camera), one frame played
(medians over the first ``--frames`` outputs: placing it, `Viewer.show_output`, and rendering it)
and a PNG (`Viewer.screenshot`) (docs/benchmarks.md, section 25).
"""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))

import numpy as np  # noqa: E402

from flexmbs import cli, load_results  # noqa: E402


def timed(f, *args):
    t0 = time.perf_counter()
    out = f(*args)
    return out, time.perf_counter() - t0


def measure(directory: Path, frames: int, png: Path) -> dict:
    from flexmbs.viewer import Scene, Viewer
    res = load_results(directory)
    scene = Scene(res)
    _, bounds_s = timed(scene.bounds)
    v, make_s = timed(lambda: Viewer(scene, off_screen=True, window_size=(800, 600)))
    v.screenshot(png)                                   # the first render makes the window
    place, draw = [], []
    for k in range(min(frames, scene.n_t)):                  # played in order: one block of outputs placed
        t0 = time.perf_counter()
        v.show_output(k)
        t1 = time.perf_counter()
        v.plotter.render()
        place.append(t1 - t0)
        draw.append(time.perf_counter() - t1)
    _, shot_s = timed(v.screenshot, png)
    n_points = len(v.field_points()) if v.field else 0
    return {"outputs": scene.n_t, "points": len(scene.frame(0)["points"]), "field points": n_points,
            "bounds_ms": 1e3 * bounds_s, "viewer_s": make_s, "place_ms": 1e3 * statistics.median(place),
            "render_ms": 1e3 * statistics.median(draw), "png_ms": 1e3 * shot_s}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=50)
    ap.add_argument("--solid", action="store_true", help="also the reduced Tet10 rod (about 15 s more)")
    args = ap.parse_args(argv)
    _, import_s = timed(lambda: __import__("pyvista"))
    import pyvista
    print(f"python {platform.python_version()}, pyvista {pyvista.__version__}, vtk {pyvista.vtk_version_info}")
    print(f"import pyvista: {import_s:.2f} s")
    runs = {"beam rod, 1 revolution": ["--set", "revolutions=1"]}
    if args.solid:
        runs["solid rod, 0.1 revolution"] = ["--set", "rod=solid", "--set", "compare_degrees=0",
                                             "--set", "revolutions=0.1"]
    with tempfile.TemporaryDirectory() as tmp:
        for name, sets in runs.items():
            out = Path(tmp) / name.split(",")[0].replace(" ", "_")
            assert cli.main(["-q", "run", "slider_crank", "--set", "coupled=true", *sets, "--no-plots",
                             "--no-paraview", "--out", str(out), "--cases", str(ROOT / "cases")]) == 0
            row = measure(out, args.frames, Path(tmp) / "frame.png")
            print(f"{name}: " + ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}"
                                          for k, v in row.items()))


if __name__ == "__main__":
    main()
