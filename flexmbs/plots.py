"""Plots of results; the only module of flexmbs that imports matplotlib.

Figures are built with ``matplotlib.figure.Figure`` (no pyplot state, no display
needed) and returned; ``save`` writes them.  matplotlib is imported by the first figure
(`_figure`), not by ``import flexmbs.plots``, so that a run without plots (``--no-plots``)
never loads it.  Animated GIFs are drawn by blitting: the figure, its axes and the static
artists are drawn once, and each frame redraws only the moving artists over a copy of that
background (`_write_gif`), which is 10 to 20 times faster than drawing every frame from
scratch.  GIF writing reports its frames to the
innermost `flexmbs.progress.display` (a bar on a terminal, lines in a log).
"""
from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

__all__ = ["node_histories", "all_nodes", "energy_balance", "mode_shapes", "timing_chart", "save",
           "deflection_vs_angle", "deformed_shapes", "animation_gif", "marker_records", "time_series"]

_COMPONENT = {"x": 0, "y": 1, "z": 2}


MARGINS_IN = dict(left=0.8, right=0.2, bottom=0.55, top=0.4)      # inches around the axes


def _figure(**kwargs):
    """``matplotlib.figure.Figure(**kwargs)``; matplotlib is imported here, by the first figure drawn."""
    from matplotlib.figure import Figure
    return Figure(**kwargs)


def _fixed_margins(fig, hspace=0.12, **margins_in):
    """Axes placed with margins fixed in inches (``MARGINS_IN``): no layout engine, so saving
    draws the figure once (a constrained layout draws it twice to measure the labels)."""
    m = {**MARGINS_IN, **margins_in}
    w, h = fig.get_size_inches()
    fig.subplots_adjust(left=m["left"] / w, right=1.0 - m["right"] / w, bottom=m["bottom"] / h,
                        top=1.0 - m["top"] / h, hspace=hspace)


def _new(figsize=(7.0, 4.2)):
    fig = _figure(figsize=figsize)
    _fixed_margins(fig)
    return fig, fig.add_subplot()


def _finish(ax, xlabel, ylabel, title=None, legend=True):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, which="both")
    if legend:
        ax.legend(fontsize=8)
    if title:
        ax.set_title(title)


def node_histories(results, nodes, component="x", title=None, scale=1e6, unit="µm", labels=None):
    """Displacement component of the given nodes (0-based indices) against time."""
    fig, ax = _new()
    c = _COMPONENT[component]
    for i, node in enumerate(nodes):
        label = labels[i] if labels else f"node {node + 1}"
        ax.plot(results.t, scale * results.displacement[:, node, c], label=label, lw=1.0)
    _finish(ax, "t [s]", f"displacement {component} [{unit}]", title)
    return fig


def all_nodes(results, component="x", title=None, scale=1e6, unit="µm"):
    """Displacement component of every node against time, coloured along the body."""
    fig, ax = _new()
    c = _COMPONENT[component]
    n_nodes = results.displacement.shape[1]
    colors = [(0.1 + 0.8 * i / max(n_nodes - 1, 1), 0.3, 0.9 - 0.8 * i / max(n_nodes - 1, 1))
              for i in range(n_nodes)]
    for node in range(n_nodes):
        ax.plot(results.t, scale * results.displacement[:, node, c], color=colors[node], lw=0.8,
                label=f"node {node + 1}" if node in (0, n_nodes // 2, n_nodes - 1) else None)
    _finish(ax, "t [s]", f"displacement {component} [{unit}]", title)
    return fig


def energy_balance(results, title=None):
    """Changes of kinetic and strain energy since t[0], the works of loads, damping and frame,
    and the balance error of ``Results.energy_balance_error``."""
    e = results.energies
    fig = _figure(figsize=(7.0, 6.0))
    _fixed_margins(fig, left=0.9)
    ax, ax2 = fig.subplots(2, 1, sharex=True)
    for key, label in (("T", "T - T(0), kinetic"), ("V", "V - V(0), strain")):
        ax.plot(results.t, e[key] - e[key][0], label=label, lw=1.0)
    works = (("W_loads", "work of loads"), ("W_damping", "dissipated"),
             ("W_frame", "work through the frame"), ("W_stiffening", "work of stiffening force"))
    for key, label in works:
        if key in e:
            ax.plot(results.t, e[key], label=label, lw=1.0)
    _finish(ax, "", "energy [J]", title)
    if all(key in e for key, _ in works):
        ax2.plot(results.t, results.energy_balance_error(), lw=1.0)
    else:       # NOTE: a run stopped early (Ctrl-C, killed) has no works in its results file
        ax2.text(0.5, 0.5, "works not recorded (the run did not finish)", ha="center", va="center",
                 transform=ax2.transAxes)
    _finish(ax2, "t [s]", "balance error [J]", legend=False)
    return fig


def mode_shapes(x, shapes, frequencies, title=None, xlabel="x [m]"):
    """Mode shapes (n_points, n_modes) along a coordinate x, each normalised to max |.| = 1."""
    fig, ax = _new()
    for k in range(shapes.shape[1]):
        s = shapes[:, k] / np.abs(shapes[:, k]).max()
        ax.plot(x, s, marker="o", ms=3, label=f"mode {k + 1}: {frequencies[k]:.4g} rad/s")
    _finish(ax, xlabel, "normalised amplitude [-]", title)
    return fig


_TIMING_KEYS = ("formulation", "method", "evaluation", "part")


def timing_chart(rows, title=None):
    """Solve time against elements; rows: dicts with formulation, elements, solve_s (and
    optionally method, evaluation, part), or the path of a timing.csv (cases/timing.py,
    `flexmbs bench`).

    One line per formulation *and* integrator, evaluation and part: runs made with different
    integrators (or settings) are never joined into one line.  The legend names what
    differs between the lines; one colour per formulation, one line style per integrator
    and setting."""
    if isinstance(rows, (str, Path)):
        import csv
        with open(rows, newline="") as f:
            rows = [dict(r, elements=int(r["elements"]), solve_s=float(r["solve_s"])) for r in csv.DictReader(f)]
    fig, ax = _new()
    key = lambda r: tuple(str(r.get(k, "")) for k in _TIMING_KEYS)  # noqa: E731
    groups = sorted({key(r) for r in rows})
    varying = [j for j in range(1, len(_TIMING_KEYS)) if len({g[j] for g in groups}) > 1]
    formulations = sorted({g[0] for g in groups})
    settings = sorted({tuple(g[j] for j in varying) for g in groups})
    colors = {f: f"C{i}" for i, f in enumerate(formulations)}
    styles = {s: ("-", "--", ":", "-.")[i % 4] for i, s in enumerate(settings)}
    markers = {s: "os^Dv"[i % 5] for i, s in enumerate(settings)}
    for g in groups:
        sel = sorted((r for r in rows if key(r) == g), key=lambda r: r["elements"])
        setting = tuple(g[j] for j in varying)
        label = g[0] + (f" ({', '.join(v for v in setting if v)})" if any(setting) else "")
        ax.loglog([r["elements"] for r in sel], [r["solve_s"] for r in sel], color=colors[g[0]],
                  ls=styles[setting], marker=markers[setting], label=label)
    _finish(ax, "number of elements", "solve time [s]", title or "Solve time against model size")
    return fig


# -- plots of loaded results (flexmbs.load_results) -------------------------------------------------
__all__ += ["displacement_histories", "dof_histories", "deformed_shape", "animate"]

_EDGES = {"line": [(0, 1)], "triangle": [(0, 1), (1, 2), (2, 0)], "quad": [(0, 1), (1, 2), (2, 3), (3, 0)],
          "tetra": [(0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3)],
          "tetra10": [(0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3)],
          "hexahedron": [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4),
                         (0, 4), (1, 5), (2, 6), (3, 7)]}
_UNIT = {"displacement": "m", "velocity": "m/s"}


def _scaled(values, unit):
    """(factor, unit with SI prefix) so that max |factor * values| lies in [1, 1000)."""
    peak = float(np.nanmax(np.abs(values))) if np.size(values) else 0.0
    for factor, prefix in ((1.0, ""), (1e3, "m"), (1e6, "µ"), (1e9, "n")):
        if peak * factor >= 1.0:
            return factor, prefix + unit
    return (1.0, unit) if peak == 0.0 else (1e9, "n" + unit)


def displacement_histories(results, nodes, components=("x",), quantity="displacement", title=None):
    """Chosen components of the displacement (or velocity) of chosen nodes against time.

    Parameters
    ----------
    results : Results
        E.g. from `flexmbs.load_results`.
    nodes : sequence of int
        0-based node indices.
    components : sequence of {"x", "y", "z"}
        Body-frame components.
    quantity : {"displacement", "velocity"}
    """
    if quantity not in _UNIT:
        raise ValueError(f"`quantity` must be one of {list(_UNIT)}, got {quantity!r}")
    data = getattr(results, quantity)
    dim = data.shape[-1]
    bad = [c for c in components if c not in _COMPONENT or _COMPONENT[c] >= dim]
    if bad:
        raise ValueError(f"`components` must be from {list(_COMPONENT)[:dim]} for {dim}D results, got {bad}")
    nodes = [int(n) for n in nodes]
    idx = [_COMPONENT[c] for c in components]
    factor, unit = _scaled(data[:, nodes][:, :, idx], _UNIT[quantity])
    fig, ax = _new()
    for node in nodes:
        for c in components:
            ax.plot(results.t, factor * data[:, node, _COMPONENT[c]], lw=1.0, label=f"node {node}, {c}")
    _finish(ax, "t [s]", f"{quantity} [{unit}]", title)
    return fig


def dof_histories(results, dofs, labels=None, title=None):
    """Free DOFs ``results.delta[:, i]`` [m or rad] against time, for the indices ``dofs``."""
    fig, ax = _new()
    for k, i in enumerate(dofs):
        ax.plot(results.t, results.delta[:, i], lw=1.0, label=labels[k] if labels else f"DOF {i}")
    _finish(ax, "t [s]", "DOF value [m, rad]", title)
    return fig


def _segments(results, index, scale, axes):
    """Edges of the cells at output ``index`` (index None: undeformed), (n_edges, 2, 2)."""
    x = results.nodes if index is None else results.nodes + scale * results.displacement[index]
    x = x[:, axes]
    edges = []
    for cell_type, conn in results.cells.items():
        for a, b in _EDGES.get(cell_type, []):
            edges.append(np.sort(np.asarray(conn)[:, [a, b]], axis=1))
    if not edges:
        return x[:, None, :].repeat(2, axis=1)             # no cells: the nodes as points
    pairs = np.unique(np.concatenate(edges), axis=0)
    return x[pairs]


def _plane(results, plane):
    dim = results.nodes.shape[1]
    if len(plane) != 2 or any(c not in _COMPONENT or _COMPONENT[c] >= dim for c in plane):
        raise ValueError(f"`plane` must be two of {list(_COMPONENT)[:dim]}, e.g. 'xy', got {plane!r}")
    return [_COMPONENT[c] for c in plane]


def _exaggeration(results, indices):
    size = np.ptp(results.nodes, axis=0).max()
    peak = np.abs(results.displacement[indices]).max() if len(indices) else 0.0
    return 1.0 if peak == 0.0 or size == 0.0 else float(0.1 * size / peak)


def deformed_shape(results, times, scale=None, plane="xy", title=None):
    """The undeformed body (grey) and its deformed shape at the outputs nearest to ``times`` [s].

    Drawn in the body frame from a `Results`; `deformed_shapes` draws a mechanism's global
    snapshots instead.

    Parameters
    ----------
    times : sequence of float
    scale : float, optional
        Exaggeration factor of the displacements; default: the largest displacement shown
        is drawn as 10 % of the body's size.
    plane : str
        The two body-frame axes drawn, e.g. "xy" or "xz".
    """
    from matplotlib.collections import LineCollection
    axes = _plane(results, plane)
    indices = sorted({int(np.abs(results.t - t).argmin()) for t in np.atleast_1d(times)})
    scale = _exaggeration(results, indices) if scale is None else float(scale)
    fig, ax = _new()
    ax.add_collection(LineCollection(_segments(results, None, scale, axes), colors="0.7", linestyles="--",
                                     linewidths=0.8, label="undeformed"))
    colors = [(0.1 + 0.8 * k / max(len(indices) - 1, 1), 0.3, 0.9 - 0.8 * k / max(len(indices) - 1, 1))
              for k in range(len(indices))]
    for k, i in enumerate(indices):
        seg = _segments(results, i, scale, axes)
        ax.add_collection(LineCollection(seg, colors=[colors[k]], linewidths=1.2, label=f"t = {results.t[i]:.4g} s"))
        ax.plot(seg[:, :, 0].ravel(), seg[:, :, 1].ravel(), ".", ms=2, color=colors[k])
    ax.autoscale_view()
    ax.set_aspect("equal", adjustable="datalim")
    _finish(ax, f"{plane[0]} [m]", f"{plane[1]} [m]",
            title or f"Deformed shape, displacements x {scale:.3g}")
    return fig


def animate(results, path, scale=None, plane="xy", fps=20, max_frames=200, dpi=100, title=None) -> Path:
    """Write the deformed body over time as an animated GIF (matplotlib's PillowWriter).

    Drawn in the body frame from a `Results`; `animation_gif` animates a mechanism's global
    snapshots instead.

    At most ``max_frames`` equally spaced outputs are drawn; ``scale`` and ``plane`` as in
    `deformed_shape` (one exaggeration factor for the whole animation).  Drawn by blitting
    (module docstring); the frames are reported to `flexmbs.progress`.
    """
    from matplotlib.collections import LineCollection
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    axes = _plane(results, plane)
    max_frames = _check_frames(max_frames)
    n_t = len(results.t)
    if n_t == 0:
        raise ValueError("`results` has no output to animate")
    frames = np.unique(np.linspace(0, n_t - 1, min(n_t, max_frames)).round().astype(int))
    scale = _exaggeration(results, frames) if scale is None else float(scale)
    fig, ax = _new()
    ax.add_collection(LineCollection(_segments(results, None, scale, axes), colors="0.7", linestyles="--",
                                     linewidths=0.8))
    moving = LineCollection(_segments(results, frames[0], scale, axes), colors="C0", linewidths=1.4)
    ax.add_collection(moving)
    allx = np.concatenate([_segments(results, i, scale, axes).reshape(-1, 2) for i in frames]
                          + [results.nodes[:, axes]])
    lo, hi = allx.min(axis=0), allx.max(axis=0)
    pad = 0.05 * max(np.ptp(allx, axis=0).max(), 1e-12)
    ax.set_xlim(lo[0] - pad, hi[0] + pad)
    ax.set_ylim(lo[1] - pad, hi[1] + pad)
    ax.set_aspect("equal", adjustable="box")
    label = ax.set_title(" ")
    _finish(ax, f"{plane[0]} [m]", f"{plane[1]} [m]", legend=False)

    def update(k):
        i = frames[k]
        moving.set_segments(_segments(results, i, scale, axes))
        label.set_text(f"{title + ': ' if title else ''}t = {results.t[i]:.4g} s, displacements x {scale:.3g}")
        return [moving, label]

    return _write_gif(fig, path, len(frames), update, fps, dpi)


def save(fig, path, dpi=130) -> Path:
    """Write ``fig`` to ``path`` (format by extension: PNG, PDF, SVG); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tic = time.perf_counter()
    fig.savefig(path, dpi=dpi, pil_kwargs={"compress_level": 3})     # zlib level 3: faster than 6, ~same size
    log.info("wrote %s (%.2f s)", path, time.perf_counter() - tic)
    return path


def _check_frames(value, name="max_frames") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"`{name}` must be a positive integer, got {value!r}")
    return int(value)


def _write_gif(fig, path: Path, n_frames: int, update, fps: float, dpi: float) -> Path:
    """Write an animated GIF by blitting.

    ``update(k)`` sets the artists of frame k and returns those that move (they are marked
    animated: drawn over the saved background of the static figure, never in it).  The
    layout is computed once, for frame 0.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    from . import progress
    tic = time.perf_counter()
    fig.set_dpi(dpi)
    canvas = FigureCanvasAgg(fig)
    moving = update(0)
    for artist in moving:
        artist.set_animated(True)
    canvas.draw()                                    # layout and the static background
    fig.set_layout_engine("none")                    # frozen: the moving artists do not change it
    background = canvas.copy_from_bbox(fig.bbox)
    size = canvas.get_width_height()
    images = []
    display = progress.current()
    with (display.counter(f"GIF {path.name}", n_frames, "frames") if display else _no_progress()) as report:
        for k in range(n_frames):
            moving = update(k)
            canvas.restore_region(background)
            for artist in moving:
                fig.draw_artist(artist)
            rgba = Image.frombuffer("RGBA", size, canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
            images.append(rgba.convert("RGB"))
            if report:
                report(k + 1)
    # one palette for all frames, from a strip of up to 4 of them: 40 times faster than one
    # adaptive palette per frame, and no colour flicker between frames
    picks = [images[j] for j in sorted({0, n_frames // 3, 2 * n_frames // 3, n_frames - 1})]
    strip = Image.new("RGB", (size[0], size[1] * len(picks)))
    for j, im in enumerate(picks):
        strip.paste(im, (0, j * size[1]))
    palette = strip.quantize(255, method=Image.Quantize.MEDIANCUT)
    frames = [im.quantize(palette=palette, dither=Image.Dither.NONE) for im in images]
    # NOTE: GIF frame durations are in units of 10 ms
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=max(int(round(1000 / fps)), 10),
                   loop=0)
    log.info("wrote %s (%d frames, %.2f s)", path, n_frames, time.perf_counter() - tic)
    return path


class _no_progress:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


# -- rotating beams: Campbell diagram and the spin-up comparison --------------------------------------
__all__ += ["campbell", "clipped_histories"]


def campbell(families, reference=None, per_rev=(1,), title=None,
             xlabel="spin rate gamma = Omega sqrt(rho A L^4 / EI) [-]",
             ylabel="natural frequency lambda = omega sqrt(rho A L^4 / EI) [-]"):
    """Campbell diagram: frequency families against the spin rate, with reference markers.

    ``families``: dict label -> (x (n_x,), y (n_x, n_modes)) or (x, y, linestyle), one colour
    per family, modes as separate lines (NaN gaps allowed).
    ``reference``: dict label -> (x (n,), y (n, n_modes)) drawn as markers.
    ``per_rev``: the lines y = k x (excitation k times per revolution).
    """
    fig, ax = _new((7.0, 5.0))
    x_max = 0.0
    for i, (label, (x, y, *style)) in enumerate(families.items()):
        y = np.asarray(y).reshape(len(x), -1)
        style = style[0] if style else "-"
        for k in range(y.shape[1]):
            ax.plot(x, y[:, k], style, color=f"C{i}", lw=1.2, label=label if k == 0 else None)
        x_max = max(x_max, float(np.max(x)))
    markers = "osD^v"
    for i, (label, (x, y)) in enumerate((reference or {}).items()):
        y = np.asarray(y).reshape(len(x), -1)
        for k in range(y.shape[1]):
            ax.plot(x, y[:, k], markers[i % len(markers)], mfc="none", color="k", ms=5,
                    label=label if k == 0 else None)
    xs = np.array([0.0, x_max])
    for k in per_rev:
        ax.plot(xs, k * xs, ":", color="0.4", lw=1.0, label=f"lambda = {k if k != 1 else ''}gamma")
    _finish(ax, xlabel, ylabel, title)
    return fig


def clipped_histories(curves, title=None, xlabel="t [s]", ylabel="tip deflection [m]", clip=3.0):
    """Histories on one set of axes, the unbounded ones clipped to the bounded ones' range.

    ``curves``: list of dicts with ``t``, ``y``, ``label`` and optionally ``status`` and
    ``message``.  The y range is ``clip`` times the largest |y| of the curves whose status is
    "finished" (all curves if none is); a curve that leaves it is drawn up to there, and a
    curve whose status is "diverged" or "failed" is marked with an x and a vertical line at
    its last output time.
    """
    fig, ax = _new()
    bounded = [c for c in curves if c.get("status", "finished") == "finished"] or list(curves)
    limit = clip * max(float(np.nanmax(np.abs(c["y"]))) if len(c["y"]) else 0.0 for c in bounded)
    limit = limit if limit > 0 else 1.0
    for i, c in enumerate(curves):
        t, y = np.asarray(c["t"]), np.asarray(c["y"], dtype=float)
        status = c.get("status", "finished")
        inside = np.abs(y) <= limit
        end = len(y) if inside.all() else int(np.argmin(inside))
        ax.plot(t[:end], y[:end], color=f"C{i}", lw=1.2, label=f"{c['label']} ({status})")
        if status != "finished" and len(t):
            t_stop = t[-1]
            ax.axvline(t_stop, color=f"C{i}", ls=":", lw=1.0)
            y_mark = y[end - 1] if end else 0.0
            ax.plot([t[end - 1] if end else t_stop], [y_mark], "x", color=f"C{i}", ms=9, mew=2)
            ax.annotate(f"{status} at t = {t_stop:.3g} s", (t_stop, 0.85 * np.sign(y_mark or -1) * limit),
                        color=f"C{i}", fontsize=8, ha="right")
    ax.set_ylim(-limit, limit)
    _finish(ax, xlabel, ylabel, title)
    return fig


def curves(curves, xlabel, ylabel, scale=1.0, title=None):
    """Several labelled curves on one axes; ``curves``: list of (label, x, y)."""
    fig, ax = _new()
    for label, x, y in curves:
        ax.plot(x, scale * np.asarray(y), label=label, lw=1.0)
    _finish(ax, xlabel, ylabel, title)
    return fig


__all__ += ["history_panels"]


def history_panels(panels, title=None, xlabel="t [s]"):
    """Stacked time histories sharing the time axis.

    ``panels``: list of (ylabel, curves), curves a list of dicts with ``t``, ``y``, ``label``
    and optionally ``style`` (a matplotlib format string, e.g. "--").
    """
    fig = _figure(figsize=(7.0, 2.6 * len(panels) + 0.8), layout="constrained")
    axes = np.atleast_1d(fig.subplots(len(panels), 1, sharex=True))
    for ax, (ylabel, curves) in zip(axes, panels):
        for i, c in enumerate(curves):
            ax.plot(c["t"], c["y"], c.get("style", "-"), color=f"C{i}", lw=1.1, label=c["label"])
        _finish(ax, "", ylabel)
    axes[-1].set_xlabel(xlabel)
    if title:
        axes[0].set_title(title)
    return fig


# -- mechanisms: flexible links on moving frames ----------------------------------------------------
def deflection_vs_angle(curves, title=None, scale=1e3, unit="mm", xlabel="crank angle [deg]",
                        ylabel="mid-span deflection"):
    """Deflection curves against crank angle; ``curves``: dict label -> (angle_deg (n,), w (n,)) [m]."""
    fig, ax = _new()
    for label, (angle, w) in curves.items():
        ax.plot(angle, scale * np.asarray(w), label=label, lw=1.0)
    _finish(ax, xlabel, f"{ylabel} [{unit}]", title, legend=len(curves) > 1)
    if len(curves) and max(np.ptp(a) for a, _ in curves.values()) > 300:
        ax.set_xticks(np.arange(0, max(np.max(a) for a, _ in curves.values()) + 1, 90))
    return fig


def _draw_snapshot(ax, snap, limits):
    ax.plot(*np.asarray(snap["outline"]).T, color="0.55", lw=2.0, marker="o", ms=4, zorder=1)
    if "chord" in snap:
        ax.plot(*np.asarray(snap["chord"]).T, color="0.3", lw=0.8, ls="--", zorder=2)
    ax.plot(*np.asarray(snap["link"]).T, color="tab:red", lw=1.8, zorder=3)
    if "slider" in snap:
        x, y = snap["slider"]
        w = 0.06 * (limits[1] - limits[0])
        ax.add_patch(_rectangle((x - w / 2, y - w / 4), w, w / 2))
    ax.set_xlim(*limits[:2])
    ax.set_ylim(*limits[2:])
    ax.set_aspect("equal")
    ax.set_title(snap.get("label", ""), fontsize=8)
    ax.tick_params(labelsize=7)


def _rectangle(xy, w, h):
    from matplotlib.patches import Rectangle
    return Rectangle(xy, w, h, facecolor="0.85", edgecolor="0.3", zorder=0)


def _limits(snapshots, pad=0.08):
    pts = np.concatenate([np.concatenate([np.asarray(s["outline"]), np.asarray(s["link"])]) for s in snapshots])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    span = max(hi - lo) * (1 + 2 * pad)
    mid = (lo + hi) / 2
    h = max(hi[1] - lo[1], 0.3 * span) * (1 + 2 * pad)
    return (mid[0] - span / 2, mid[0] + span / 2, mid[1] - h / 2, mid[1] + h / 2)


def deformed_shapes(snapshots, title=None, ncols=3):
    """Small multiples of a mechanism at several positions with its flexible link exaggerated.

    ``snapshots``: list of dicts with "outline" (k, 2) the rigid joints' polyline, "link"
    (m, 2) the deformed link (global, displacements already scaled), optionally "chord"
    (2, 2), "slider" (x, y) and "label".
    """
    n = len(snapshots)
    ncols = min(ncols, n)
    nrows = int(np.ceil(n / ncols))
    limits = _limits(snapshots)
    aspect = (limits[3] - limits[2]) / (limits[1] - limits[0])
    fig = _figure(figsize=(3.2 * ncols, 3.2 * nrows * max(aspect, 0.35) + 0.6), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax, snap in zip(axes, snapshots):
        _draw_snapshot(ax, snap, limits)
    for ax in axes[n:]:
        ax.set_visible(False)
    fig.supxlabel("x [m]", fontsize=9)
    fig.supylabel("y [m]", fontsize=9)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def animation_gif(path, snapshots, title=None, fps=15, dpi=80) -> Path:
    """Animated GIF of mechanism snapshots (format of `deformed_shapes`), drawn by blitting
    (module docstring: one figure, only the mechanism and its label redrawn per frame)."""
    from matplotlib.patches import Rectangle
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not snapshots:
        raise ValueError("`snapshots` is empty: nothing to animate")
    limits = _limits(snapshots)
    aspect = (limits[3] - limits[2]) / (limits[1] - limits[0])
    fig = _figure(figsize=(6.0, 6.0 * max(aspect, 0.35) + 0.5), layout="constrained")
    ax = fig.add_subplot()
    ax.set_xlim(*limits[:2])
    ax.set_ylim(*limits[2:])
    ax.set_aspect("equal")
    ax.tick_params(labelsize=7)
    ax.set_xlabel("x [m]", fontsize=8)
    ax.set_ylabel("y [m]", fontsize=8)
    (outline,) = ax.plot([], [], color="0.55", lw=2.0, marker="o", ms=4, zorder=1)
    (chord,) = ax.plot([], [], color="0.3", lw=0.8, ls="--", zorder=2)
    (link,) = ax.plot([], [], color="tab:red", lw=1.8, zorder=3)
    w = 0.06 * (limits[1] - limits[0])
    slider = ax.add_patch(Rectangle((0.0, 0.0), w, w / 2, facecolor="0.85", edgecolor="0.3", zorder=0,
                                    visible=False))
    label = ax.set_title(f"{title}\n " if title else " ", fontsize=9)

    def update(k):
        snap = snapshots[k]
        outline.set_data(*np.asarray(snap["outline"]).T)
        chord.set_data(*(np.asarray(snap["chord"]).T if "chord" in snap else ([], [])))
        link.set_data(*np.asarray(snap["link"]).T)
        if "slider" in snap:
            x, y = snap["slider"]
            slider.set_xy((x - w / 2, y - w / 4))
        slider.set_visible("slider" in snap)
        label.set_text(f"{title}\n{snap.get('label', '')}" if title else snap.get("label", ""))
        return [slider, outline, chord, link, label]

    return _write_gif(fig, path, len(snapshots), update, fps, dpi)


def marker_records(t, xy, smoothed=None, title=None, unit_scale=1e3, unit="mm"):
    """Recorded marker paths in the plane (left) and their coordinates against time (right).

    ``xy``: (n_t, n_markers, 2) [m]; ``smoothed``: same shape, drawn as lines over the records.
    """
    fig = _figure(figsize=(11.0, 4.4), layout="constrained")
    ax, ax2 = fig.subplots(1, 2)
    xy = unit_scale * np.asarray(xy)
    for k in range(xy.shape[1]):
        ax.plot(xy[:, k, 0], xy[:, k, 1], ".", ms=1.5, label=f"marker {k + 1}")
        ax2.plot(t, xy[:, k, 0], ".", ms=1.0, label=f"x{k + 1}")
        ax2.plot(t, xy[:, k, 1], ".", ms=1.0, label=f"y{k + 1}")
    if smoothed is not None:
        sm = unit_scale * np.asarray(smoothed)
        for k in range(sm.shape[1]):
            ax.plot(sm[:, k, 0], sm[:, k, 1], "k-", lw=0.6)
            ax2.plot(t, sm[:, k, 0], "k-", lw=0.6)
            ax2.plot(t, sm[:, k, 1], "k-", lw=0.6)
    ax.set_aspect("equal")
    _finish(ax, f"x [{unit}]", f"y [{unit}]", title)
    _finish(ax2, "t [s]", f"coordinate [{unit}]", "records (dots) and smoothing splines (lines)")
    return fig


def time_series(t, curves, ylabel, title=None, references=None, xlabel="t [s]"):
    """Curves against time; ``curves`` and ``references`` (dashed): dict label -> (n_t,) values."""
    fig, ax = _new()
    colors = {}
    for label, y in curves.items():
        (line,) = ax.plot(t, y, lw=1.0, label=label)
        colors[label] = line.get_color()
    for label, y in (references or {}).items():
        ax.plot(t, y, lw=1.0, ls="--", color=colors.get(label.split(" (")[0], "k"), label=label)
    _finish(ax, xlabel, ylabel, title)
    return fig


# -- multibody: trajectories of points ---------------------------------------------------------------
__all__ += ["trajectory_3d"]


def trajectory_3d(curves, title=None, unit="m"):
    """3D paths of points: ``curves`` dict label -> (n_t, 3) positions; start (o) and end (x) marked."""
    fig = _figure(figsize=(6.4, 5.6), layout="constrained")
    ax = fig.add_subplot(projection="3d")
    for i, (label, xyz) in enumerate(curves.items()):
        xyz = np.asarray(xyz)
        ax.plot(xyz[:, 0], xyz[:, 1], xyz[:, 2], lw=0.8, color=f"C{i}", label=label)
        ax.scatter(*xyz[0], color=f"C{i}", marker="o", s=18)
        ax.scatter(*xyz[-1], color=f"C{i}", marker="x", s=24)
    ax.set_xlabel(f"X [{unit}]")
    ax.set_ylabel(f"Y [{unit}]")
    ax.set_zlabel(f"Z [{unit}]")
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return fig
