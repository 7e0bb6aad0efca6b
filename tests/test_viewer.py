"""The viewer (issue 27, item 1): `flexmbs view DIR`, `flexmbs.viewer.Viewer`, `Results.show`.

Rendered off-screen (VTK's EGL or OSMesa window: no display needed).  The pictures are checked
against the bodies' positions: the coupled slider-crank with its crank at 90 degrees, drawn by
`flexmbs view DIR --screenshot FILE --time T --view xy`, whose camera (`flexmbs.viewer.camera`) maps
a point (x, y) to the pixel (column, row from the top)

    i = W/2 + (x - c_x) / d - 1/2,   j = H/2 - (y - c_y) / d - 1/2,   d = 2 parallel_scale / H,

with c the centre of the run's bounds and parallel_scale = 1.05 max(h_y, h_x W/H) from their
half-sizes h; the test computes the bounds itself from the bodies' global positions.
"""
from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs import cli, load_results

needs_pyvista = pytest.mark.skipif(importlib.util.find_spec("pyvista") is None,
                                   reason='needs pyvista (pip install "flexmbs[view]", part of the test extra)')

ROOT = Path(__file__).resolve().parents[1]
CRANK_SPEED = 150.0                       # cases/slider_crank.py DEFAULTS["crank_speed"] [rad/s]
T90 = math.pi / 2 / CRANK_SPEED           # the crank at 90 degrees (output 180: every 0.5 degree)
W, H = 400, 300


@pytest.fixture(scope="module")
def crank_run(tmp_path_factory):
    """The coupled slider-crank over 0.3 revolutions (217 outputs, about 1 s), no ParaView files."""
    out = tmp_path_factory.mktemp("slider_crank")
    assert cli.main(["-q", "run", "slider_crank", "--set", "coupled=true", "--set", "revolutions=0.3", "--no-plots",
                     "--no-paraview", "--out", str(out), "--cases", str(ROOT / "cases")]) == 0
    return out


def _hue(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(hue [deg], saturation) of RGB pixels (..., 3) in 0..1 (HSV: shading by a light scales V, not H)."""
    hi, lo = rgb.max(axis=-1), rgb.min(axis=-1)
    chroma = hi - lo
    r, g, b = np.moveaxis(rgb, -1, 0)
    safe = np.where(chroma > 0, chroma, 1.0)
    hue = np.select([hi == r, hi == g], [((g - b) / safe) % 6, (b - r) / safe + 2], (r - g) / safe + 4) * 60.0
    return hue, np.where(hi > 0, chroma / np.where(hi > 0, hi, 1.0), 0.0)


def _pixels_of(image: np.ndarray, colour) -> np.ndarray:
    """(rows, columns) of the pixels of ``colour`` (RGB 0..255) whatever their shading: hue within
    10 degrees, saturation above 0.4."""
    hue, sat = _hue(image[..., :3].astype(float) / 255.0)
    target, _ = _hue(np.asarray(colour, dtype=float) / 255.0)
    near = np.abs((hue - target + 180.0) % 360.0 - 180.0) < 10.0
    return np.array(np.nonzero(near & (sat > 0.4)))


def _to_pixels(xy, lo, hi) -> np.ndarray:
    """Global (x, y) (n, 2) -> (column, row) of the xy camera of the bounds [lo, hi] (module docstring)."""
    centre, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    d = 2.0 * 1.05 * max(half[1], half[0] * H / W) / H
    xy = np.atleast_2d(xy)
    return np.column_stack([W / 2 + (xy[:, 0] - centre[0]) / d - 0.5, H / 2 - (xy[:, 1] - centre[1]) / d - 0.5])


@needs_pyvista
def test_screenshot_shows_the_crank_where_the_run_has_it(crank_run, tmp_path):
    png = tmp_path / "crank90.png"
    assert cli.main(["view", str(crank_run), "--screenshot", str(png), "--time", repr(T90), "--field", "none",
                     "--view", "xy", "--size", f"{W}x{H}"]) == 0
    import matplotlib.image
    image = (matplotlib.image.imread(png) * 255).round().astype(np.uint8)
    assert image.shape[:2] == (H, W)
    res = load_results(crank_run)
    k = int(np.argmin(np.abs(res.t - T90)))
    crank = res.bodies["crank"]
    assert np.degrees(np.arctan2(crank.rotation[k, 1, 0], crank.rotation[k, 0, 0])) == pytest.approx(90.0, abs=1e-6)
    # the run's bounds over all outputs: every body's drawn nodes and the joints
    points = np.concatenate([b.global_positions().reshape(-1, 3) for b in res.bodies.values()]
                            + [np.asarray(p) for p in res.joints.values()])
    lo, hi = points.min(axis=0), points.max(axis=0)
    # the crank's box (BodyResults.nodes: its inertia box in body coordinates) at 90 degrees, projected
    box = crank.global_positions()[k]
    expected = _to_pixels(box[:, :2], lo, hi)
    rows, cols = _pixels_of(image, (31, 119, 180))          # the crank: body 0, flexmbs.viewer.PALETTE[0]
    assert len(rows) > 200
    # its extent within 1.5 pixels (anti-aliased edges), its centre within 1 pixel
    assert cols.min() == pytest.approx(expected[:, 0].min(), abs=1.5)
    assert cols.max() == pytest.approx(expected[:, 0].max(), abs=1.5)
    assert rows.min() == pytest.approx(expected[:, 1].min(), abs=1.5)
    assert rows.max() == pytest.approx(expected[:, 1].max(), abs=1.5)
    centre = _to_pixels(crank.position[k, :2] + crank.rotation[k, :2, :2] @ crank.nodes.mean(axis=0)[:2], lo, hi)[0]
    assert np.median(cols) == pytest.approx(centre[0], abs=1.0)
    # the crank tip (pin A: crank length 0.15 m along the crank's x axis) is where the rod starts
    tip = crank.position[k] + crank.rotation[k] @ [0.15, 0.0, 0.0]
    assert tip[:2] == pytest.approx([0.0, 0.15], abs=1e-9)
    # the slider (body 2, PALETTE[2]): its box centred on its position
    slider_rows, slider_cols = _pixels_of(image, (44, 160, 44))
    slider_px = _to_pixels(res.bodies["slider"].position[k, :2], lo, hi)[0]
    assert [slider_cols.mean(), slider_rows.mean()] == pytest.approx(slider_px, abs=1.5)
    # the rod (body 1, PALETTE[1]) runs from there to pin B on the slider: its pixels lie on that
    # segment (within its 5 px line width), from the edge of pin A's dot (10 px across) to the slider's box
    rod_rows, rod_cols = _pixels_of(image, (255, 127, 14))
    a, b = _to_pixels(np.array([tip[:2], res.joints["pin B"][k, :2]]), lo, hi)
    rod = np.column_stack([rod_cols, rod_rows])
    axis = (b - a) / np.linalg.norm(b - a)
    assert np.abs((rod - a) @ [-axis[1], axis[0]]).max() < 3.5
    assert ((rod - a) @ axis).min() == pytest.approx(5.0, abs=2.0)
    far = rod[np.argmax((rod - a) @ axis)]
    assert np.hypot(slider_cols - far[0], slider_rows - far[1]).min() < 2.0


@needs_pyvista
def test_flexible_body_coloured_by_its_field(crank_run):
    from flexmbs.viewer import Viewer
    res = load_results(crank_run)
    rod = res.bodies["rod"]
    k = int(np.argmin(np.abs(res.t - T90)))
    v = Viewer(res, field="displacement", off_screen=True, window_size=(W, H))
    assert v.show_time(T90) == pytest.approx(res.t[k])
    magnitude = np.linalg.norm(rod.global_displacement()[k], axis=1)
    assert magnitude.max() > 1e-4                      # a deflected rod (0.47 mm at 90 degrees)
    assert v.clim == pytest.approx((magnitude.min(), magnitude.max()), rel=1e-12, abs=1e-15)
    assert np.sort(v.field_values(k)) == pytest.approx(np.sort(magnitude), rel=1e-12)
    v = Viewer(res, field="axial_force", off_screen=True, window_size=(W, H))
    v.show_time(T90)
    force = rod.element_data["axial_force"][k]
    assert v.clim == pytest.approx((force.min(), force.max()), rel=1e-12)
    assert v.clim[0] < -100.0                            # the rod pushes the slider: compression [N]


@needs_pyvista
def test_scaled_displacements_are_drawn(crank_run):
    """--scale s: the rod's nodes drawn at R + A (X + s u)."""
    from flexmbs.viewer import Viewer
    res = load_results(crank_run)
    rod = res.bodies["rod"]
    k = int(np.argmin(np.abs(res.t - T90)))
    v = Viewer(res, field="displacement", scale=50.0, off_screen=True, window_size=(W, H))
    v.show_output(k)
    drawn = v.field_points()
    expected = rod.global_positions()[k] + 49.0 * rod.global_displacement()[k]
    assert np.sort(drawn, axis=0) == pytest.approx(np.sort(expected, axis=0), abs=1e-12)


@needs_pyvista
def test_model_run_is_drawn_as_one_flexible_body(tmp_path):
    """A Model's run (rotating_bar: no bodies, its frame motion) is viewed as its System's."""
    out = tmp_path / "bar"
    assert cli.main(["-q", "run", "rotating_bar", "--set", "t_end=0.01", "--no-plots", "--no-paraview", "--out",
                     str(out), "--cases", str(ROOT / "cases")]) == 0
    from flexmbs.viewer import Viewer
    res = load_results(out)
    v = Viewer(res, off_screen=True, window_size=(W, H))
    assert v.field == "displacement" and v.view == "xy"
    x = res.global_positions()[-1]
    assert np.sort(v.field_points(), axis=0) == pytest.approx(np.sort(x, axis=0), abs=1e-12)
    png = v.screenshot(tmp_path / "bar.png")
    assert png.stat().st_size > 1000


@needs_pyvista
def test_playing_moves_the_frame_and_the_slider(crank_run):
    from flexmbs.viewer import Viewer
    v = Viewer(load_results(crank_run), off_screen=True, window_size=(W, H))
    v.add_controls()
    assert v.k == v.scene.n_t - 1
    assert v.toggle_play() is True and v.k == 0             # from the end: starts again
    assert v.advance(3) == 3
    assert v.slider.GetRepresentation().GetValue() == pytest.approx(v.scene.t[3])
    v.toggle_play(False)
    assert v.advance() == 3                                  # paused
    v.show_time(T90)
    assert v.scene.t[v.k] == pytest.approx(T90)


@needs_pyvista
def test_each_screenshot_shows_its_own_frame(crank_run, tmp_path):
    """The crank along x at t = 0, along y at 90 degrees: a second picture of the same viewer is redrawn."""
    import matplotlib.image
    from flexmbs.viewer import Viewer
    v = Viewer(load_results(crank_run), field=None, view="xy", off_screen=True, window_size=(W, H))
    extents = []
    for t in (0.0, T90):
        v.show_time(t)
        rows, cols = _pixels_of((matplotlib.image.imread(v.screenshot(tmp_path / f"{t}.png")) * 255).astype(np.uint8),
                                (31, 119, 180))
        extents.append((np.ptp(cols), np.ptp(rows)))
    assert extents[0][0] > 10 * extents[0][1] and extents[1][1] > 10 * extents[1][0]


@needs_pyvista
def test_video_gif_has_a_frame_per_output_shown(crank_run, tmp_path):
    imageio = pytest.importorskip("imageio")
    gif = tmp_path / "run.gif"
    assert cli.main(["view", str(crank_run), "--video", str(gif), "--every", "50", "--size", "160x120"]) == 0
    frames = imageio.mimread(gif)
    assert len(frames) == len(range(0, 217, 50)) + 1           # outputs 0, 50, ..., 200 and the last (216)
    assert all(np.any(a != b) for a, b in zip(frames[:-1], frames[1:]))     # the crank turns


def test_pyvista_is_not_imported_by_flexmbs_or_the_other_commands(crank_run):
    code = ("import sys; from flexmbs import cli; import flexmbs; "
            f"cli.main(['-q', 'results', {str(crank_run)!r}]); cli.main(['-q', 'cases']); "
            f"flexmbs.load_results({str(crank_run)!r}); import flexmbs.viewer; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyvista', 'vtk', 'vtkmodules')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_camera_of_the_xy_view():
    """The bounds [0, 2] x [0, 1] in a picture twice as wide as high: half the height shown is
    1.05 x 0.5 (the half-height 0.5 = the half-width 1 / 2, with the 5 % margin)."""
    from flexmbs.viewer import camera
    c = camera("xy", [0.0, 0.0, 0.0], [2.0, 1.0, 0.0], 2.0)
    assert c["parallel_scale"] == pytest.approx(0.525)
    assert camera("xy", [0.0, 0.0, 0.0], [1.0, 2.0, 0.0], 2.0)["parallel_scale"] == pytest.approx(1.05)
    assert c["focal_point"] == pytest.approx([1.0, 0.5, 0.0])
    assert c["position"][:2] == pytest.approx([1.0, 0.5]) and c["position"][2] > 0
    assert c["up"] == pytest.approx([0.0, 1.0, 0.0])
    # with a colour bar in the right 20 %: the box fits 80 % of the width, 1.05 x 1 / (0.8 x 2) high,
    # and the image's centre moves right by 0.2 x its half-width 2 x 0.65625
    c = camera("xy", [0.0, 0.0, 0.0], [2.0, 1.0, 0.0], 2.0, bar=0.2)
    assert c["parallel_scale"] == pytest.approx(0.65625)
    assert c["focal_point"] == pytest.approx([1.2625, 0.5, 0.0])


def test_cli_views_are_the_viewers():
    from flexmbs.viewer import VIEWS
    assert cli.VIEWS == VIEWS
