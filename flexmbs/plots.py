"""Plots of results; the only module of flexmbs that imports matplotlib.

Figures are built with ``matplotlib.figure.Figure`` (no pyplot state, no display
needed) and returned; ``save`` writes them.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

__all__ = ["node_histories", "all_nodes", "energy_balance", "mode_shapes", "timing_chart", "save"]

_COMPONENT = {"x": 0, "y": 1, "z": 2}


def _new(figsize=(7.0, 4.2)):
    fig = Figure(figsize=figsize, layout="constrained")
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
    fig = Figure(figsize=(7.0, 6.0), layout="constrained")
    ax, ax2 = fig.subplots(2, 1, sharex=True)
    for key, label in (("T", "T - T(0), kinetic"), ("V", "V - V(0), strain")):
        ax.plot(results.t, e[key] - e[key][0], label=label, lw=1.0)
    for key, label in (("W_loads", "work of loads"), ("W_damping", "dissipated"),
                       ("W_frame", "work through the frame"), ("W_stiffening", "work of stiffening force")):
        ax.plot(results.t, e[key], label=label, lw=1.0)
    _finish(ax, "", "energy [J]", title)
    ax2.plot(results.t, results.energy_balance_error(), lw=1.0)
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


def timing_chart(rows, title=None):
    """Solve time against elements, one line per formulation; rows: dicts with formulation,
    elements, solve_s."""
    fig, ax = _new()
    for name in sorted({r["formulation"] for r in rows}):
        sel = sorted((r for r in rows if r["formulation"] == name), key=lambda r: r["elements"])
        ax.loglog([r["elements"] for r in sel], [r["solve_s"] for r in sel], marker="o", label=name)
    _finish(ax, "elements", "solve time [s]", title)
    return fig


def save(fig, path, dpi=130) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return path
