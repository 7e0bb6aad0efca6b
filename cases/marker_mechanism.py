"""A beam of a mechanism driven by measured marker kinematics (Vlase, Nicolescu, Marin 2020, sec. 4b).

As in the paper's Figs. 6-8, the motion of the beam is known only from the records of
markers fixed on it: the records (cases/data/four_bar_markers.csv: t, x1, y1, x2, y2 at
1000 Hz with 20 um noise) are turned into the frame's position, angle, omega, eps and
origin acceleration by smoothing splines (flexmbs.markers: pose by least squares, interior
GCV, then the bandwidth that minimises the error of the second derivative; reported in
summary.json), and these drive the elastic beam's equations (kineto-elastodynamics).

The sample records come from the coupler of the four-bar of cases/four_bar.py (a 1-DOF
crank-rocker at 2 rev/s; the paper's mechanism had two DOF and its data are not given).
Markers 1 and 2 sit on the coupler's joints, so the beam is the segment between them:
0.30 m steel strip 3 mm x 20 mm, pinned-pinned in the markers' frame, 10 elements by
default.  It starts at the beginning of the valid window of the splines (0.097 s, the
record without its end margins) from its quasi-static deflection and runs to the window's
end (about one crank revolution).  With ``compare`` (default) the same beam is also run on
the exact kinematics of the four-bar that made the records, and the difference is reported:
the error that the measurement noise leaves after smoothing.

Writes DIR/results.npz (t, displacement (n_t, n_nodes, 2) in the beam's frame, nodes from
marker 1 to marker 2, nodes, midspan_deflection (n_t,), and the recovered frame kinematics
theta, omega, eps (n_t,), a_O (n_t, 2)), DIR/summary.json (smoothing report, marker velocity
and acceleration ranges as the paper's Table 2, errors against the exact kinematics) and the
plots marker_records.png (Fig. 7), marker_accelerations.png (Fig. 8), frame_kinematics.png,
deflection.png, deformed_shapes.png and animation.gif.

Reference: S. Vlase, A. E. Nicolescu, M. Marin, New analytical model used in finite element
analysis of solids mechanics, Mathematics 8 (2020) 1401, sec. 4b, doi:10.3390/math8091401.
"""
from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import numpy as np

CASES = Path(__file__).resolve().parent
sys.path.insert(0, str(CASES))
sys.path.insert(0, str(CASES / "data"))
import four_bar  # noqa: E402
import make_markers  # noqa: E402
import slider_crank  # noqa: E402

from flexmbs import run as run_model  # noqa: E402
from flexmbs.analysis import output_times  # noqa: E402
from flexmbs.case import CaseError, check_parameters, resolve, run_command, write_summary  # noqa: E402
from flexmbs.formulations import FORMULATIONS  # noqa: E402
from flexmbs.integrators import INTEGRATORS  # noqa: E402
from flexmbs.markers import marker_motion, read_markers  # noqa: E402
from flexmbs.mechanisms import beam_on_frame, chord_deflection, link_motion  # noqa: E402
from flexmbs.modal import static_solution  # noqa: E402
from flexmbs.pipes import call_quietly

DEFAULTS = dict(markers=str(make_markers.PATH), length=0.30, elements=10, depth=0.003, width=0.020,
                youngs=2e11, density=7870.0, t_start=None, duration=None, static_start=True, stiffening=True,
                formulation="lagrange", integrator="midpoint", h=5e-5, rtol=1e-8, dt_out=1e-3, compare=True,
                gif_frames=50, plots=True)
RUN_TIME = "about 10 s"     # at the defaults on a 2-core machine (--help says it; measured, issue 20)
HELP = dict(markers="marker CSV (t, x1, y1, x2, y2, ...)", length="beam length = marker distance [m]",
            elements="beam elements", depth="section depth in the plane [m]", width="section width [m]",
            youngs="Young's modulus [Pa]", density="density [kg/m^3]",
            t_start="start time [s] (default: valid window start)",
            duration="simulated time [s] (default: valid window)",
            static_start="start from the quasi-static deflection (--undeformed-start: undeformed)",
            stiffening="geometric stiffening by the axial force", formulation="equations of motion",
            integrator="time integrator", h="step of fixed-step integrators [s]",
            rtol="tolerance of adaptive integrators", dt_out="output interval [s]",
            compare="also run on the exact four-bar kinematics (--no-compare: skip it)",
            gif_frames="animation frames (0: none)", plots="write the plots and the animation")
SUMMARY = {"errors_vs_exact_kinematics/midspan_deflection_rel_peak":                 # flexmbs.sweep
           "max |w - w_exact| / peak |w_exact| of the mid-span deflection (with compare)"}
CHOICES = dict(formulation=sorted(FORMULATIONS), integrator=sorted(INTEGRATORS))
TYPES = dict(t_start=float, duration=float)


def build(motion, elements=10, length=0.30, depth=0.003, width=0.020, youngs=2e11, density=7870.0,
          stiffening=True):
    """The beam between the markers, pinned-pinned on ``motion``."""
    element = four_bar.beam_element(depth, width, youngs, density)
    return beam_on_frame(motion, element, elements, length, ends="pinned-pinned", stiffening=stiffening)


def exact_motion():
    """The coupler's chord frame of the four-bar that generated the sample records."""
    return link_motion(make_markers.linkage(), "coupler", lambda t: (make_markers.CRANK_SPEED * t,
                                                                      make_markers.CRANK_SPEED, 0.0))


def window(motion, p):
    t0 = motion.valid_window[0] if p["t_start"] is None else float(p["t_start"])
    t1 = motion.valid_window[1] if p["duration"] is None else t0 + float(p["duration"])
    if t0 < motion.t_range[0] or t1 > motion.t_range[1] or t1 <= t0:
        key = "t_start" if (p["t_start"] is not None and not motion.t_range[0] <= t0 < motion.t_range[1]) \
            else "duration"
        raise CaseError(key, f"the simulated interval [{t0:.6g}, {t1:.6g}] s must lie in the record "
                             f"[{motion.t_range[0]:.6g}, {motion.t_range[1]:.6g}] s")
    if t0 < motion.valid_window[0] - 1e-12 or t1 > motion.valid_window[1] + 1e-12:
        logging.getLogger(__name__).warning(
            "the interval [%.4g, %.4g] s reaches into the end margins of the splines %s, where the "
            "accelerations are biased", t0, t1, motion.valid_window)
    return t0, t1


def simulate(model, p, t0, t1, metadata=None):
    """Run a beam model over [t0, t1] from its quasi-static state (or undeformed)."""
    t_eval = np.minimum(output_times(t1, p["dt_out"], t0), t1)
    opts = dict(formulation=p["formulation"], method=p["integrator"], t_end=t1, t0=t0, t_eval=t_eval)
    if INTEGRATORS[p["integrator"]].uses_tolerances:
        opts.update(rtol=p["rtol"], atol=p["rtol"] * 1e-6)
    else:
        opts.update(h=p["h"])
    delta0 = static_solution(model, t0) if p["static_start"] else None
    return run_model(model, compute_energies=False, delta0=delta0, metadata=metadata, **opts)


def check(p: dict) -> None:
    """Refuse values the case cannot run with, naming the parameter (`flexmbs.case.check_parameters`)."""
    check_parameters(p, DEFAULTS, choices=CHOICES, positive=("length", "depth", "width", "youngs", "density",
                                                               "duration"))
    if not Path(p["markers"]).is_file():
        raise CaseError("markers", f"marker file {p['markers']} not found")
    if p["dt_out"] is not None and p["duration"] is not None and p["dt_out"] > p["duration"]:
        raise CaseError("dt_out", f"the output interval must not exceed duration = {p['duration']:g} s, "
                                  f"got {p['dt_out']:g} s")


def run(out=None, **params):
    """Run the case; returns (Results, model, extras); extras has midspan_deflection, the recovered
    frame kinematics and, with ``compare``, the exact-kinematics run's deflection."""
    p = resolve("marker_mechanism", DEFAULTS, params, check)
    records = read_markers(p["markers"])
    body = np.array([[0.0, 0.0], [p["length"], 0.0]])
    motion = marker_motion(records, body=body if records.n_markers == 2 else None)
    t0, t1 = window(motion, p)
    phys = {k: p[k] for k in ("elements", "length", "depth", "width", "youngs", "density", "stiffening")}
    model = build(motion, **phys)
    res = simulate(model, p, t0, t1, metadata={"case": "marker_mechanism", "parameters": p, "run": "marker_driven"})
    pose = motion.pose(res.t)
    extras = {"midspan_deflection": chord_deflection(model, res.delta, [p["length"] / 2])[:, 0],
              "theta": pose["theta"], "omega": pose["omega"], "eps": pose["eps"], "a_O": pose["a_O"]}
    report = {"smoothing": motion.report(), "interval_s": [t0, t1]}
    if p["compare"]:
        exact = build(exact_motion(), **phys)
        ref = simulate(exact, p, t0, t1, metadata={"case": "marker_mechanism", "parameters": p,
                                                   "run": "exact_kinematics"})
        w_ref = chord_deflection(exact, ref.delta, [p["length"] / 2])[:, 0]
        extras["midspan_deflection_exact_kinematics"] = w_ref
        c = exact.motion.link_frame
        ex = np.array([c(t)[3:] for t in res.t])
        a_ex = np.array([c(t)[2] for t in res.t])
        w = extras["midspan_deflection"]
        report["errors_vs_exact_kinematics"] = {
            "midspan_deflection_rel_peak": float(np.abs(w - w_ref).max() / np.abs(w_ref).max()),
            "omega_rel_peak": float(np.abs(pose["omega"] - ex[:, 1]).max() / np.abs(ex[:, 1]).max()),
            "eps_rel_peak": float(np.abs(pose["eps"] - ex[:, 2]).max() / np.abs(ex[:, 2]).max()),
            "a_O_rel_peak": float(np.abs(pose["a_O"] - a_ex).max() / np.abs(a_ex).max())}
        extras["_exact"] = dict(omega=ex[:, 1], eps=ex[:, 2], a_O=a_ex)
    P, V, A = motion.markers(res.t)
    report["markers_table2"] = [{"marker": k + 1,
                                 "v_min_mm_s": float(1e3 * np.linalg.norm(V[:, k], axis=1).min()),
                                 "v_max_mm_s": float(1e3 * np.linalg.norm(V[:, k], axis=1).max()),
                                 "a_min_mm_s2": float(1e3 * np.linalg.norm(A[:, k], axis=1).min()),
                                 "a_max_mm_s2": float(1e3 * np.linalg.norm(A[:, k], axis=1).max())}
                                for k in range(records.n_markers)]
    extras["_report"] = report
    extras["_motion"] = motion
    if out is not None:
        write(res, model, extras, Path(out), p)
    return res, model, extras


def write(res, model, extras, out: Path, p: dict):
    arrays = {k: v for k, v in extras.items() if not k.startswith("_")}
    slider_crank.write(res, model, arrays, out, {**p, "revolutions": 1}, title="Marker-driven beam")
    summary = json.loads((out / "summary.json").read_text())
    summary.update(extras["_report"])
    write_summary(out, summary)
    if not p["plots"]:
        return
    from flexmbs import plots
    motion = extras["_motion"]
    rec = motion.records
    P, V, A = motion.markers(rec.t)
    plots.save(plots.marker_records(rec.t, rec.xy, smoothed=P, title="Marker records (Fig. 7)"),
               out / "marker_records.png")
    t = res.t
    _, _, A_t = motion.markers(t)
    curves = {f"marker {k + 1}": np.linalg.norm(A_t[:, k], axis=1) for k in range(A_t.shape[1])}
    refs = {}
    if "_exact" in extras:
        exact = make_markers.linkage().solve(make_markers.CRANK_SPEED * t, make_markers.CRANK_SPEED, 0.0)
        refs = {f"marker {k + 1} (exact)": np.linalg.norm(exact.point(name)[2], axis=1)
                for k, name in enumerate(("A", "B")) if k < A_t.shape[1]}
    plots.save(plots.time_series(t, curves, "|acceleration| [m/s²]",
                                 "Marker accelerations from the smoothing splines (Fig. 8)", refs),
               out / "marker_accelerations.png")
    e = extras.get("_exact")
    panels = []                                   # one panel per quantity, each with its unit
    for ylabel, key, cols in (("angular velocity omega [rad/s]", "omega", [None]),
                              ("angular acceleration eps [rad/s²]", "eps", [None]),
                              ("origin acceleration a_O [m/s²]", "a_O", [0, 1])):
        curves_k = []
        for j, c in enumerate(cols):
            name = key if c is None else f"{key},{'xy'[c]}"
            pick = (lambda a, c=c: a if c is None else a[:, c])
            curves_k.append(dict(t=t, y=pick(extras[key]), label=f"{name} recovered", style="-"))
            if e is not None:
                curves_k.append(dict(t=t, y=pick(e[key]), label=f"{name} exact", style="--"))
        panels.append((ylabel, curves_k))
    plots.save(plots.history_panels(panels, title="Frame kinematics recovered from the markers"
                                    + (" (dashed: exact)" if e is not None else "")),
               out / "frame_kinematics.png")
    if "midspan_deflection_exact_kinematics" in extras:
        curves = {"marker-driven": (t, extras["midspan_deflection"]),
                  "exact kinematics": (t, extras["midspan_deflection_exact_kinematics"])}
        plots.save(plots.deflection_vs_angle(curves, title="Marker-driven beam: mid-span deflection relative "
                                             "to the chord", xlabel="t [s]", scale=1e6, unit="µm"),
                   out / "deflection.png")


def main(argv=None):
    # a CaseError of run (the interval, known once the records are read) ends it as a bad option
    (res, model, extras), args, out, _, seconds = run_command(
        "marker_mechanism", __doc__, run, argv, DEFAULTS, help=HELP, choices=CHOICES, types=TYPES, check=check,
        flags={"--undeformed-start": ("static_start", False)}, run_time=RUN_TIME)
    rep = extras["_report"]
    w = extras["midspan_deflection"]
    print(f"marker-driven beam: {args['elements']} elements, {args['formulation']} + {args['integrator']}, "
          f"t = {rep['interval_s'][0]:.4f} .. {rep['interval_s'][1]:.4f} s: {res.status}")
    for name, c in rep["smoothing"]["channels"].items():
        print(f"  {name:5s}: {c['rule']}, bandwidth {1e3 * c['bandwidth_s']:.2f} ms (GCV "
              f"{1e3 * c['bandwidth_gcv_s']:.2f} ms), noise sigma {c['sigma']:.3g}")
    print(f"  peak |mid-span deflection| {1e6 * np.abs(w).max():.3f} um")
    if "errors_vs_exact_kinematics" in rep:
        e = rep["errors_vs_exact_kinematics"]
        print("  against the exact kinematics (relative to peaks): "
              + ", ".join(f"{k} {v:.2%}" for k, v in e.items()))
    print(f"  wrote {out}/results.npz and plots in {seconds:.1f} s")
    return 0 if res.success else 1


if __name__ == "__main__":
    sys.exit(call_quietly(main))
