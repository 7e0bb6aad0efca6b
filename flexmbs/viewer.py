"""The 3D viewer of a run: ``flexmbs view DIR`` and `Results.show` (pyvista, the optional extra
``pip install "flexmbs[view]"``).

What it draws is what the ParaView export writes (`flexmbs.io.paraview.global_scene`): every
body in the global frame, a flexible body as its deformed mesh ``R + A (X + s u)`` (``s`` the
``scale`` of the elastic displacement, 1 by default) coloured by a chosen field, a corotational
beam as its nodes joined by its elements, a rigid body as the shape its results hold (the box of
its mass and principal inertias, `flexmbs.io.paraview.display_shape`), a point mass and the
joints as points.  A Model's run (one body on its prescribed frame) is drawn as its
System's run (one flexible body).

The scene is arrays: the node positions of a block of outputs come from `global_scene` at once
(`Scene`), and a frame shown is one slice of them written into the pyvista grids (`Viewer`):
no Python loop over bodies, elements or outputs per frame.

pyvista (and VTK) are imported only here, inside `require_pyvista`, when a viewer is made:
``import flexmbs`` and the other commands never load them (tests/test_viewer.py).  Without a
display, a `Viewer` with ``off_screen=True`` renders through VTK's EGL or OSMesa window
(docs/design.md, "The viewer").
"""
from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import numpy as np

from .io.paraview import PARTS, UNITS, global_scene
from .results import Results

__all__ = ["Scene", "Viewer", "show", "require_pyvista", "require_video", "check_video", "check_video_file",
           "check_fps", "check_field", "check_picture", "system_results", "camera", "nearest_output", "INSTALL", "VIEWS",
           "PALETTE", "IMAGE_SUFFIXES", "VIDEO_SUFFIXES"]

log = logging.getLogger(__name__)

INSTALL = 'pip install "flexmbs[view]"'
#: camera directions: looking down -z ("xy"), along +y ("xz"), along -x ("yz"), or isometric
VIEWS = ("xy", "xz", "yz", "iso")
#: body colours, by body index (matplotlib's "tab10"), RGB 0..255
PALETTE = np.array([(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
                    (140, 86, 75), (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207)], dtype=np.uint8)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")
#: video suffix -> the packages it needs (imageio writes GIF with pillow, MP4 with imageio-ffmpeg's ffmpeg)
VIDEO_SUFFIXES = {".gif": ("imageio",), ".mp4": ("imageio", "imageio_ffmpeg")}
FLAT = 0.1              # default view "xy" when the run's bounds are this thin along z (of their x, y extent)
BAR = 0.2               # the colour bar's band, this fraction of the picture's width on the right
MARGIN = 0.05           # the camera of a planar view shows the run's bounds and 5 % more on each side
BLOCK = 256             # outputs placed at a time by `Scene` (its memory: BLOCK x nodes x 48 bytes)
DEFORMABLE = ("flexible", "corotational")


def require_pyvista():
    """pyvista, or a `flexmbs.sweep.MissingExtra` (an ImportError) that says what to install."""
    from .sweep import MissingExtra
    try:
        import pyvista
    except ImportError as err:
        raise MissingExtra(f"the viewer needs pyvista, which is not installed ({err}); install the view extra: "
                           f"{INSTALL}") from None
    return pyvista


def system_results(results: Results) -> Results:
    """``results`` with its bodies: a System run's as they are, a Model run's as its System's (one
    flexible body "model" on the prescribed frame, `flexmbs.system_run.prescribed_as_system_results`)."""
    if not isinstance(results, Results):
        raise TypeError(f"`results` must be a flexmbs.Results, got {type(results).__name__}")
    if results.bodies:
        return results
    if not results.frame:
        raise ValueError("`results` hold no bodies and no frame motion (a results file written before flexmbs "
                         "stored them): there is nothing to place in 3D; run the case again")
    from .system_run import prescribed_as_system_results
    return prescribed_as_system_results(results, "model")


def nearest_output(t, time: float) -> int:
    """Index of the output time in ``t`` nearest to ``time`` [s], which must lie in [t[0], t[-1]]."""
    t = np.asarray(t, dtype=float)
    if not (isinstance(time, (int, float, np.floating, np.integer)) and not isinstance(time, bool)
            and np.isfinite(time)):
        raise ValueError(f"`time` must be a finite number [s], got {time!r}")
    span = 1e-9 * max(abs(t[0]), abs(t[-1]), t[-1] - t[0])
    if not t[0] - span <= time <= t[-1] + span:
        raise ValueError(f"`time` must lie in the run's output times [{t[0]:.6g}, {t[-1]:.6g}] s, got {time!r}")
    return int(np.argmin(np.abs(t - time)))


class Scene:
    """The bodies of a run as arrays, placed a block of `BLOCK` outputs at a time.

    Attributes
    ----------
    results : Results
        The run (a Model's as its System's: `system_results`).
    t : ndarray (n_t,)
    cells : list of (meshio cell type, ndarray)
        The cell blocks of `global_scene` (bodies, their frame axes, joints).
    body, part : ndarray (n_cells,)
        Each cell's body index in ``results.bodies`` (-1: a joint) and part (`PARTS`).
    deformable : ndarray (n_cells,) of bool
        Cells of flexible and corotational bodies (the ones a field colours).
    fields : dict[str, str]
        Field name -> "point" or "cell": ``displacement`` (|A u| [m]) where the run has a deformable
        body, and its bodies' scalar element data (``axial_force`` [N], ``von_mises`` [Pa]).
    """

    def __init__(self, results: Results):
        self.results = system_results(results)
        self.t = np.asarray(self.results.t, dtype=float)
        if not len(self.t):
            raise ValueError(f"`results` have no output to view (status {self.results.status!r}: "
                             f"{self.results.message})")
        _, self.cells, _, cell_data, constant = global_scene(self.results, [0])
        self.body, self.part = constant["body"], constant["part"]
        kinds = np.array([b.kind for b in self.results.bodies.values()] + ["joint"])
        self.deformable = np.isin(kinds[self.body], DEFORMABLE) & (self.part == PARTS["body"])
        self.fields = {"displacement": "point"} if self.deformable.any() else {}
        self.fields.update({k: "cell" for k, a in cell_data.items() if a.ndim == 2})
        self._block = (-1, None)

    @property
    def n_t(self) -> int:
        return len(self.t)

    def drawn_points(self) -> np.ndarray:
        """Indices of the points of the drawn cells (bodies and joints, not the frame axes)."""
        drawn = np.isin(self.part, (PARTS["body"], PARTS["joint"]))
        rows = np.cumsum([0] + [len(c) for _, c in self.cells])
        used = [c[drawn[a:b]].ravel() for (_, c), a, b in zip(self.cells, rows[:-1], rows[1:])]
        return np.unique(np.concatenate(used)) if used else np.zeros(0, dtype=np.int64)

    def frame(self, k: int) -> dict:
        """Output ``k``: ``points`` (N, 3) [m], ``displacement`` (N, 3) [m] and the cell fields
        (n_cells,) of `global_scene` (computed with the other outputs of its block, kept for the next)."""
        if not -self.n_t <= k < self.n_t:
            raise IndexError(f"output index must be in [{-self.n_t}, {self.n_t - 1}], got {k}")
        k %= self.n_t
        first = k - k % BLOCK
        if self._block[0] != first:
            points, _, point_data, cell_data, _ = global_scene(self.results, np.arange(first, min(first + BLOCK,
                                                                                                 self.n_t)))
            self._block = (first, {"points": points, **point_data, **cell_data})
        return {name: a[k - first] for name, a in self._block[1].items()}

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lowest, highest) global coordinates (3,) [m] of the drawn points over all outputs."""
        drawn = self.drawn_points()
        lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
        for first in range(0, self.n_t, BLOCK):                       # a block of outputs at a time
            points = global_scene(self.results, np.arange(first, min(first + BLOCK, self.n_t)))[0][:, drawn]
            points = points[np.isfinite(points).all(axis=-1)]        # NaN: the outputs a damaged file lost
            if len(points):
                lo, hi = np.minimum(lo, points.min(axis=0)), np.maximum(hi, points.max(axis=0))
        if not np.all(np.isfinite(lo)):
            raise ValueError(f"`results` have no finite position of a body at any output (status "
                             f"{self.results.status!r}: {self.results.message}): there is nothing to draw")
        return lo, hi


def check_field(scene: Scene, field: str | None) -> str | None:
    """The field that colours the deformable bodies of ``scene`` for the choice ``field``: a name of
    ``scene.fields``; None or "none" (a colour per body); "auto" (``von_mises``, else ``displacement``,
    else none)."""
    choices = [*scene.fields, "none", "auto"]
    _check_option("field", field, field is None or field in choices,
                  f"one of {choices} (the fields of this run; 'none': a colour per body)")
    if field == "auto":
        field = next((f for f in ("von_mises", "displacement") if f in scene.fields), None)
    return None if field == "none" else field


def check_picture(path: Path) -> None:
    """Check that ``path`` names a picture file pyvista writes (`IMAGE_SUFFIXES`)."""
    _check_option("screenshot", str(path), Path(path).suffix.lower() in IMAGE_SUFFIXES,
                  f"a picture file ending in one of {IMAGE_SUFFIXES}")


def camera(view: str, lo, hi, aspect: float, bar: float = 0.0) -> dict:
    """Camera of a planar ``view`` ("xy", "xz", "yz") that shows the box [lo, hi] with `MARGIN`
    around it in the image but for a band of the fraction ``bar`` of its width on the right (where
    the colour bar is), parallel projection: ``position`` a box size away along the view's normal,
    ``up`` the vertical axis, ``parallel_scale`` half the height shown [m] and ``focal_point`` the
    image's centre,

        parallel_scale = (1 + MARGIN) max(h_v, h_h / ((1 - bar) aspect)),
        focal_point = c + bar parallel_scale aspect e_h,

    with c the box's centre, h_h, h_v its half-sizes along the image's horizontal and vertical axes
    e_h, e_v and aspect = width / height of the image.  A pixel (column i, row j from the top) of an
    image W x H pixels then shows the point

        focal_point + (i + 1/2 - W/2) d e_h + (H/2 - j - 1/2) d e_v,   d = 2 parallel_scale / H."""
    axes = {"xy": (0, 1, 2, 1.0), "xz": (0, 2, 1, -1.0), "yz": (1, 2, 0, 1.0)}     # horizontal, vertical, normal, sign
    if view not in axes:
        raise ValueError(f"`view` must be one of {VIEWS[:3]} for a planar camera, got {view!r}")
    h, v, n, sign = axes[view]
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    centre, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    scale = (1.0 + MARGIN) * max(half[v], half[h] / ((1.0 - bar) * aspect))
    scale = scale if scale > 0 else 1.0
    focal = centre.copy()
    focal[h] += bar * scale * aspect
    position = focal.copy()
    position[n] += sign * max(4.0 * float(half.max()), 1.0)
    up = np.zeros(3)
    up[v] = 1.0
    return {"position": position, "focal_point": focal, "up": up, "parallel_scale": scale}


def _check_option(name: str, value, ok: bool, expected: str) -> None:
    if not ok:
        raise ValueError(f"`{name}` must be {expected}, got {value!r}")


class Viewer:
    """A run's bodies in a pyvista plotter: a frame at a time (`show_output`, `show_time`), saved as a
    picture (`screenshot`) or a video (`save_video`), or played in a window with a time slider and a
    play/pause button (`interact`).

    Parameters
    ----------
    results : Results or Scene
        A System's run (or a Model's, drawn as its System's; `system_results`).
    field : str or None, default "auto"
        What colours the deformable bodies: a name of ``Scene.fields`` (``displacement``: |A u| [m];
        ``axial_force`` [N]; ``von_mises`` [Pa]), None or "none" for a colour per body (`PALETTE`);
        "auto": ``von_mises``, else ``displacement`` where the run has them.
    scale : float, default 1
        Factor on the elastic displacement drawn (deformed points R + A (X + scale u)).
    clim : (float, float), optional
        Fixed colour range of the field; default the field's range over the drawn cells at the
        output shown.
    view : {"xy", "xz", "yz", "iso"}, optional
        The camera (`camera`); default "xy" for a run whose bounds over all outputs are thin along z
        (at most `FLAT` times their extent along x or y: a planar mechanism), else "iso".
    off_screen : bool
        Render without a window (a screenshot or a video on a machine without a display).
    window_size : (int, int)
        Width and height of the picture [pixels].
    notebook : bool, optional
        Render into a Jupyter notebook (pyvista's notebook backend); default: pyvista decides.
    """

    def __init__(self, results, *, field: str | None = "auto", scale: float = 1.0, clim=None, view: str | None = None,
                 off_screen: bool = False, window_size=(1024, 768), notebook: bool | None = None):
        self.scene = results if isinstance(results, Scene) else Scene(results)
        self.field = check_field(self.scene, field)
        _check_option("scale", scale, isinstance(scale, (int, float)) and not isinstance(scale, bool)
                      and np.isfinite(scale), "a finite number (the factor on the elastic displacement drawn)")
        self.scale = float(scale)
        if clim is not None:
            ok = np.shape(clim) == (2,) and np.all(np.isfinite(np.asarray(clim, dtype=float))) and clim[0] < clim[1]
            _check_option("clim", clim, ok, "two finite numbers MIN < MAX")
            clim = (float(clim[0]), float(clim[1]))
        self.fixed_clim = clim
        _check_option("window_size", window_size, np.shape(window_size) == (2,)
                      and all(isinstance(n, (int, np.integer)) and 16 <= n <= 8192 for n in window_size),
                      "two integers WIDTH, HEIGHT in 16..8192 pixels")
        _check_option("view", view, view is None or view in VIEWS, f"one of {VIEWS}")
        self.bounds = self.scene.bounds()                    # (lo, hi) of all outputs: the camera's
        pv = require_pyvista()                               # after the options: bad input is said first
        self.k = 0
        self.playing = False
        self.off_screen = bool(off_screen)
        if not self.off_screen:
            check_display(pv, notebook)
        with _quiet_vtk(self.off_screen):
            self.plotter = pv.Plotter(off_screen=off_screen, window_size=list(window_size), notebook=notebook)
        self._grids = self._add_bodies(pv)
        height = self.plotter.window_size[1]
        self._time_text = self.plotter.add_text("t", name="time", position=(10, height - 30), font_size=12)
        self._set_camera(view)
        self.show_output(self.scene.n_t - 1)

    # -- building the scene
    def _add_bodies(self, pv) -> dict:
        """The grids drawn: "field" (deformable bodies coloured by the field), "solid" (the other
        bodies, a colour each) and "joints" (points), each a subset of the scene's cells whose points
        are indices into the scene's points (``vtkOriginalPointIds``)."""
        import meshio
        scene = self.scene
        first = scene.frame(0)
        whole = pv.from_meshio(meshio.Mesh(first["points"], scene.cells))
        whole.cell_data["rgb"] = PALETTE[scene.body % len(PALETTE)]
        is_body = scene.part == PARTS["body"]
        coloured = scene.deformable if self.field else np.zeros_like(is_body)
        groups = {"field": coloured, "solid": is_body & ~coloured, "joints": scene.part == PARTS["joint"]}
        grids = {}
        for name, mask in groups.items():        # three subsets, made once
            if not mask.any():
                continue
            grid = whole.extract_cells(np.flatnonzero(mask))
            ids = (np.asarray(grid.point_data["vtkOriginalPointIds"]), np.asarray(grid.cell_data["vtkOriginalCellIds"]))
            style = dict(line_width=5, point_size=12, render_points_as_spheres=True, specular=0.0)
            if name == "field":
                grid[self.field] = np.zeros(grid.n_points if scene.fields[self.field] == "point" else grid.n_cells)
                unit = UNITS.get(self.field, "")
                bar = {"title": f"{self.field} [{unit}]", "vertical": True, "position_x": 1.0 - 0.8 * BAR,
                       "position_y": 0.1, "width": 0.25 * BAR, "height": 0.75, "title_font_size": 14,
                       "label_font_size": 12, "n_labels": 5, "fmt": "%.3g"}
                actor = self.plotter.add_mesh(grid, scalars=self.field, cmap="viridis", nan_color="lightgrey",
                                              scalar_bar_args=bar, **style)
            elif name == "solid":
                actor = self.plotter.add_mesh(grid, scalars="rgb", rgb=True, **style)
            else:
                actor = self.plotter.add_mesh(grid, color="black", **{**style, "point_size": 10})
            grids[name] = (grid, ids, actor)
        return grids

    def _set_camera(self, view) -> None:
        lo, hi = self.bounds
        extent = hi - lo
        flat = extent[2] <= FLAT * max(extent[0], extent[1])       # a planar mechanism's boxes have some depth
        self.view = view or ("xy" if flat else "iso")
        cam = self.plotter.camera
        if self.view == "iso":
            self.plotter.view_isometric(bounds=(lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]))
            return
        width, height = self.plotter.window_size
        c = camera(self.view, lo, hi, width / height, BAR if "field" in self._grids else 0.0)
        cam.parallel_projection = True
        cam.position, cam.focal_point, cam.up = c["position"], c["focal_point"], c["up"]
        cam.parallel_scale = c["parallel_scale"]
        cam.clipping_range = (1e-3 * np.linalg.norm(c["position"] - c["focal_point"]),
                              1e3 * np.linalg.norm(c["position"] - c["focal_point"]) + float(np.max(hi - lo)))

    # -- one frame
    def field_values(self, k: int) -> np.ndarray | None:
        """The field at output ``k`` on the points or cells of the "field" grid (None without one)."""
        if "field" not in self._grids:
            return None
        frame = self.scene.frame(k)
        _, (point_ids, cell_ids), _ = self._grids["field"]
        if self.scene.fields[self.field] == "point":
            return np.linalg.norm(frame[self.field][point_ids], axis=-1)
        return frame[self.field][cell_ids]

    def field_points(self) -> np.ndarray:
        """The points of the "field" grid as drawn (n, 3) [m] (the deformable bodies' nodes)."""
        return np.array(self._grids["field"][0].points)

    @property
    def clim(self) -> tuple[float, float] | None:
        """The colour range of the field at the output shown (None without a field)."""
        if "field" not in self._grids:
            return None
        return tuple(self._grids["field"][2].mapper.scalar_range)

    def show_output(self, k: int) -> float:
        """Draw output ``k`` (an index of ``scene.t``); returns its time [s]."""
        frame = self.scene.frame(k)
        self.k = k % self.scene.n_t
        points = frame["points"] + (self.scale - 1.0) * frame["displacement"] if self.scale != 1.0 else frame["points"]
        for grid, (point_ids, _), _ in self._grids.values():
            grid.points = points[point_ids]
        values = self.field_values(self.k)
        if values is not None:
            grid, _, actor = self._grids["field"]
            grid[self.field] = values
            actor.mapper.scalar_range = self.fixed_clim or _range(values)
        t = float(self.scene.t[self.k])
        self._time_text.SetInput(f"t = {t:.6g} s")          # drawn at the next render (screenshot, play)
        return t

    def show_time(self, time: float) -> float:
        """Draw the output nearest to ``time`` [s] (`nearest_output`); returns its time."""
        return self.show_output(nearest_output(self.scene.t, time))

    def screenshot(self, path) -> Path:
        """Save the frame shown as a picture (``.png``, ``.jpg``, ``.bmp``, ``.tif``)."""
        path = Path(path)
        check_picture(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with _quiet_vtk(self.off_screen):
            self.plotter.render()           # NOTE: pyvista's screenshot renders the first time only
            self.plotter.screenshot(str(path))
        return path

    def save_video(self, path, every: int = 1, fps: float = 20.0) -> Path:
        """Save every ``every``-th output (and the last) as a video, ``.gif`` (needs imageio) or ``.mp4``
        (needs imageio and imageio-ffmpeg), at ``fps`` frames per second."""
        path = Path(path)
        check_video(path, every, fps)
        path.parent.mkdir(parents=True, exist_ok=True)
        steps = self.video_outputs(every)
        with _quiet_vtk(self.off_screen):
            if path.suffix.lower() == ".gif":
                self.plotter.open_gif(str(path), fps=fps)
            else:
                self.plotter.open_movie(str(path), framerate=int(round(fps)))
            for k in steps:
                self.show_output(k)
                self.plotter.render()
                self.plotter.write_frame()
            self.plotter.mwriter.close()
        return path

    def video_outputs(self, every: int = 1) -> list[int]:
        """The outputs a video of every ``every``-th output shows: those and the last (as the ParaView
        series, `flexmbs.io.paraview.output_steps`)."""
        from .io.paraview import output_steps
        return output_steps(self.scene.n_t, every)

    # -- playing
    def toggle_play(self, playing: bool | None = None) -> bool:
        """Play (True) or pause (False); None toggles.  Returns whether it plays now."""
        self.playing = (not self.playing) if playing is None else bool(playing)
        if self.playing and self.k == self.scene.n_t - 1:
            self.show_output(0)                           # played to the end: from the start again
        return self.playing

    def advance(self, steps: int = 1) -> int:
        """While playing, go ``steps`` outputs on (stopping at the last); returns the output shown."""
        if self.playing:
            k = min(self.k + steps, self.scene.n_t - 1)
            self.show_output(k)
            self._slider_to(self.scene.t[k])
            self.playing = k < self.scene.n_t - 1
            self.plotter.render()
        return self.k

    def _slider_to(self, t: float) -> None:
        slider = getattr(self, "slider", None)
        if slider is not None:
            slider.GetRepresentation().SetValue(t)

    def add_controls(self, fps: float = 20.0, save_to=None) -> None:
        """The time slider, the play/pause button (and the space key), the key "i" that saves the frame
        shown as ``save_to``/``frame_<k>.png``, and the timer that plays at ``fps`` outputs per second."""
        check_fps(fps)
        t = self.scene.t
        pl = self.plotter
        if t[-1] > t[0]:
            self.slider = pl.add_slider_widget(self._slid, rng=(t[0], t[-1]),
                                               value=float(t[self.k]), title="t [s]", pointa=(0.3, 0.08),
                                               pointb=(0.95, 0.08), fmt="%.4g", style="modern")
        self.button = pl.add_checkbox_button_widget(lambda on: self.toggle_play(on), value=False, position=(10, 10),
                                                    size=36)
        pl.add_text("play / pause (space)", position=(55, 18), font_size=9, name="play")
        pl.add_key_event("space", self._space)
        folder = Path(save_to or ".")
        pl.add_key_event("i", lambda: log.warning("saved %s", self.screenshot(folder / f"frame_{self.k}.png")))
        if pl.iren is not None and not self.off_screen:
            pl.add_timer_event(max_steps=2 ** 30, duration=max(1, int(1000 / fps)), callback=lambda _: self.advance())

    def _slid(self, value: float) -> None:
        self.show_time(float(value))
        self.plotter.render()

    def _space(self) -> None:
        playing = self.toggle_play()
        self.button.GetRepresentation().SetState(int(playing))

    def interact(self, fps: float = 20.0, save_to=None):
        """Play the run in a window (or a Jupyter notebook): `add_controls`, then pyvista's ``show``."""
        if self.off_screen:
            raise RuntimeError("this Viewer renders off-screen (off_screen=True): it has no window to play in; "
                               "use `screenshot` or `save_video`")
        self.add_controls(fps=fps, save_to=save_to)
        return self.plotter.show()


def check_display(pv, notebook: bool | None) -> None:
    """Raise a RuntimeError that says how to render off-screen if a window is wanted (not a notebook,
    pyvista's choice when ``notebook`` is None) on Linux without $DISPLAY or $WAYLAND_DISPLAY."""
    if notebook is None:
        import scooby                                        # pyvista's own test (a dependency of pyvista)
        notebook = pv.global_theme.notebook if pv.global_theme.notebook is not None else scooby.in_ipykernel()
    if notebook or not sys.platform.startswith("linux") or os.environ.get("DISPLAY") \
            or os.environ.get("WAYLAND_DISPLAY"):
        return
    raise RuntimeError("no display to open a window on ($DISPLAY is not set): render off-screen instead, "
                       "`flexmbs view DIR --screenshot FILE [--time T]` or `--video FILE.mp4|.gif` (in Python: "
                       "Viewer(results, off_screen=True).screenshot(FILE))")


def check_video(path: Path, every: int = 1, fps: float = 20.0) -> None:
    """Check the options of a video, ``path`` (.gif or .mp4), ``every`` (a positive integer) and ``fps``,
    then that its writer is installed (`require_video`): bad options are said first."""
    check_video_file(Path(path))
    _check_option("every", every, isinstance(every, (int, np.integer)) and not isinstance(every, bool)
                  and every >= 1, "a positive integer")
    check_fps(fps)
    require_video(Path(path))


def check_fps(fps: float) -> None:
    """Check ``fps``, the outputs played (or the video's frames) per second: in (0, 240]."""
    _check_option("fps", fps, isinstance(fps, (int, float)) and not isinstance(fps, bool) and 0 < fps <= 240,
                  "a number of frames per second in (0, 240]")


def check_video_file(path: Path) -> None:
    """Check that ``path`` names a video file the viewer writes (`VIDEO_SUFFIXES`)."""
    _check_option("video", str(path), Path(path).suffix.lower() in VIDEO_SUFFIXES,
                  f"a video file ending in one of {tuple(VIDEO_SUFFIXES)}")


def require_video(path: Path) -> None:
    """Check that ``path`` is a video file whose writer is installed, or say what to install."""
    import importlib.util
    from .sweep import MissingExtra
    check_video_file(path)
    suffix = path.suffix.lower()
    missing = [m for m in VIDEO_SUFFIXES[suffix] if importlib.util.find_spec(m) is None]
    if missing:
        names = " ".join(m.replace("_", "-") for m in VIDEO_SUFFIXES[suffix])
        raise MissingExtra(f"a {suffix} video needs {', '.join(m.replace('_', '-') for m in missing)}, which "
                           f"{'is' if len(missing) == 1 else 'are'} not installed; install with: pip install {names}")


def _range(values: np.ndarray) -> tuple[float, float]:
    """(min, max) of the finite ``values``, widened to a non-empty interval when they are all equal."""
    finite = values[np.isfinite(values)]
    if not len(finite):
        return 0.0, 1.0
    lo, hi = float(finite.min()), float(finite.max())
    if hi > lo:
        return lo, hi
    pad = 1e-12 * max(abs(lo), 1.0)
    return lo - pad, hi + pad


class _quiet_vtk:
    """Off screen, VTK's render window warns on stderr that it found no X server before it falls back to
    EGL or OSMesa ("bad X server connection"): keep its log to errors while the window is made and used."""

    def __init__(self, off_screen: bool):
        self.off_screen = off_screen

    def __enter__(self):
        if self.off_screen:
            from vtkmodules.vtkCommonCore import vtkLogger
            self.before = vtkLogger.GetCurrentVerbosityCutoff()
            vtkLogger.SetStderrVerbosity(vtkLogger.VERBOSITY_ERROR)
        return self

    def __exit__(self, *exc):
        if self.off_screen:
            from vtkmodules.vtkCommonCore import vtkLogger
            vtkLogger.SetStderrVerbosity(vtkLogger.ConvertToVerbosity(int(self.before)))
        return False


def show(results: Results, *, time: float | None = None, fps: float = 20.0, **options):
    """`Results.show`: the run in a window, or in a Jupyter notebook with pyvista's notebook backend
    (trame's, when it is installed: ``pip install "pyvista[jupyter]"``); ``options`` as `Viewer`'s.
    Returns what pyvista's ``Plotter.show`` returns (a notebook widget, or None)."""
    v = Viewer(results, **options)
    if time is not None:
        v.show_time(time)
    return v.interact(fps=fps)
