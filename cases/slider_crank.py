"""Flexible slider-crank: Simeon's connecting rod on the prescribed frame of the rigid rod.

A rigid crank of 0.15 m turns at 150 rad/s and drives an elastic steel connecting rod of
0.30 m (square 8 mm x 8 mm, E = 2e11 Pa, rho = 7870 kg/m^3, mass 0.151104 kg) whose other
end carries the slider (0.075552 kg, half the rod) on the line y = 0 through the crank
pivot; no gravity, no damping.  It starts at the dead centre (crank angle 0) with the rod
undeformed and moving with the rigid-body velocities (elastic delta = 0, delta' = 0).

The rod is meshed with planar Euler-Bernoulli beams on its chord frame (origin at the crank
pin A, x axis toward the slider pin B), which follows the rigid slider-crank
(kineto-elastodynamics): u = v = 0 at A, v = 0 at B, the axial DOF at B free and carrying
the slider mass; the frame's inertia loads and the geometric stiffening by the axial force
act on it.  The slide is fixed in the ground, so its reaction is normal to the slide, not to
the rod: the axial part of it is added as a load at B (guide correction, quasi-static,
flexmbs.mechanisms.guide_load; it lowers the peak deflection by 1.1 %; --no-guide-correction
leaves the plain chord-frame support).  In this frame the mid-span transverse displacement
v(L/2) is the deflection relative to the chord of the rod's ends (positive to the left of
A -> B).

Integrator: implicit midpoint rule with a fixed step, default h = 1e-5 s (the mid-span
deflection within 3e-4 of its peak of a DOP853 run at rtol 1e-8, 8 elements; second order
measured; docs/mechanisms.md has the convergence study).  A fixed-step run is repeated at
2 h and the case prints the Richardson estimate of its error, max |w_h - w_2h| / 3 relative
to the peak (2.5e-4 with the defaults).

Writes DIR/results.npz (t, displacement (n_t, n_nodes, 2) in the rod's chord frame, nodes
from A to B, nodes (n_nodes, 2), crank_angle (n_t,) [rad], midspan_deflection (n_t,) [m]),
DIR/summary.json, and the plots deflection.png (mid-span deflection vs crank angle),
deformed_shapes.png (exaggerated shapes at six positions) and animation.gif.

--coupled: the coupled model (docs/coupled.md): the crank a rigid body driven at crank_speed by an
AngleDriver, the rod a FlexibleBody with a revolute joint at node 0 and a spherical joint at its last
node, the slider a rigid body on the guide; `flexmbs.run` with index3-alpha, the fixed step h_coupled
(aligned with the output interval) and rho_inf.  `flexmbs run` streams the run into DIR/results.h5 as
run "coupled" (every body's motion, the rod's displacements, the multipliers; flexmbs.load_results)
and writes DIR/paraview.xdmf (+ .h5) of it, crank, rod and slider in the global frame (not with
--no-paraview, --set paraview=false).  Its results.npz has the arrays above plus drive_torque (n_t,)
[N m] and the global joint forces reaction_crank_pivot, reaction_pin_A, reaction_pin_B,
reaction_slide (n_t, 3) [N].  Its geometric stiffening (with --stiffening) is --coupled-stiffening:
"axial-strain" (default), the axial force of each element from its own axial strain, which carries the
slider's inertia and the frame's acceleration as the kinematically driven model's stiffening does, or
"omega", the Model's stiffening evaluated with the rod's angular velocity only (docs/coupled.md).
--formulation with --coupled (docs/formulations_system.md): "lagrange" (default) is the path above,
Lagrange's equations with multipliers as an index-3 DAE (the System formulation "index3"); "gibbs-appell"
runs the Gibbs-Appell equations (the bodies' acceleration energy) by index3-alpha with the same step
and rho_inf; "hamilton" (canonical momenta, constraints at the velocity level), "maggi" (state
(q, q'), the equations projected on the admissible velocities), "kane" and "volterra" (state (q, u) in
independent quasi-velocities, from the bodies' mass points and rigid parts) run the case's --integrator (a
first-order method, default the implicit midpoint rule) with the step h_coupled (or --rtol for an
adaptive method), their joint reactions from the multipliers recovered at the outputs.  Each writes
the same files.  --table with --coupled runs all six and a tight reference (lagrange, index 3, at
h_coupled / 64) and writes DIR/formulations.csv and .md (and summary.json with the rows): per
formulation the peak mid-span deflection, its error, the energy balance error, the constraint
violation, the size of the linear system per evaluation, the evaluations per step and the CPU time.

--coupled --rod solid: the rod as the reduced Tet10 solid of meshes/slider_crank_rod.msh (`solid_rod`);
summary.json's ``solid_rod`` has its mesh, sizes, lowest frequencies and build times and, with
``compare_degrees`` > 0 (45 by default), ``reduction_error``: the reduced rod against the full mesh, both
kinematically driven over the first compare_degrees (`solid_reduction_error`, docs/flexible_bodies.md
"How many modes"), also printed.

References: B. Simeon, Modelling a flexible slider crank mechanism by a mixed system of DAEs
and PDEs, Math. Modelling of Systems 2 (1996) 1-18, doi:10.1080/13873959608837026 (data of
the flexible slider-crank; also problem "crank" of the IVP test set of Bari);
A. G. Erdman, G. N. Sandor, R. G. Oakberg, J. Eng. Ind. 94 (1972) 1193-1205,
doi:10.1115/1.3428338 (kineto-elastodynamics).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from flexmbs import BeamEB2D, Material, Model, generate, run as run_model
from flexmbs.bodies import FlexibleBody, Node, RigidBodyEP
from flexmbs.analysis import output_times
from flexmbs.case import CaseError, check_parameters, resolve, run_command, write_summary
from flexmbs.constraints import AngleDriver, Joint, Revolute, Spherical
from flexmbs.formulations import FORMULATIONS
from flexmbs.integrators import INTEGRATORS
from flexmbs.system import System
from flexmbs.mechanisms import SliderCrank, chord_deflection, constant_speed, flexible_link, global_shape
from flexmbs.pipes import call_quietly

DEFAULTS = dict(elements=8, crank=0.15, rod_length=0.30, offset=0.0, width=0.008, youngs=2e11, density=7870.0,
                crank_speed=150.0, slider_mass=0.075552, revolutions=2.0, stiffening=True, guide_correction=True,
                formulation="lagrange", integrator="midpoint", h=1e-5, rtol=1e-8, degrees_out=0.5,
                gif_frames=60, plots=True, coupled=False, h_coupled=5e-5, rho_inf=0.9,
                coupled_stiffening="axial-strain", paraview=True, rod="beam", modes=8, poisson=0.3,
                compare_degrees=45.0, table=False, interface="averaging")
RUN_TIME = "about 8 s"     # at the defaults on a 2-core machine (--help says it; measured, issue 20)
HELP = dict(elements="beam elements on the rod", crank="crank length [m]", rod_length="connecting rod length [m]",
            offset="slide line offset [m]", width="side of the square section [m]", youngs="Young's modulus [Pa]",
            density="density [kg/m^3]", crank_speed="crank speed [rad/s]", slider_mass="slider mass [kg]",
            revolutions="crank revolutions", stiffening="geometric stiffening by the axial force",
            guide_correction="add the axial part of the slide's reaction (--no-guide-correction: support "
                             "normal to the rod)",
            formulation="equations of motion (with --coupled: lagrange, gibbs-appell, hamilton, maggi, kane or "
                        "volterra; docs/formulations_system.md)",
            integrator="time integrator", h="step of fixed-step integrators [s]",
            rtol="tolerance of adaptive integrators", degrees_out="output every this many degrees of crank rotation",
            gif_frames="animation frames (0: none)", plots="write the plots and the animation",
            coupled="coupled model: crank and slider rigid bodies, the rod a FlexibleBody with a revolute joint at "
                    "node 0 and a spherical one at its last node, the crank driven by an AngleDriver (index3-alpha, "
                    "step h_coupled)",
            h_coupled="fixed step of the coupled model [s] (index3-alpha; with formulation hamilton, maggi, kane "
                      "or volterra the step of a fixed-step --integrator)",
            rho_inf="spectral radius at infinity of index3-alpha (coupled model)",
            coupled_stiffening="geometric stiffening of the coupled rod (with --stiffening): 'axial-strain', by "
                               "each element's own axial strain (slider inertia, frame acceleration, joints), or "
                               "'omega', the Model's stiffening with the rod's angular velocity only",
            paraview="`flexmbs run`: write DIR/paraview.xdmf (+ .h5) of the run, every body in the global frame "
                     "(`flexmbs run --no-paraview`: false)",
            rod="the rod's model in the coupled model: 'beam' (elements BeamEB2D) or 'solid' (the Tet10 mesh "
                "meshes/slider_crank_rod.msh, 0.3 m x 8 mm x 8 mm, reduced to `modes` modes; needs --coupled)",
            modes="free-interface modes of the solid rod, besides its static and attachment modes (rod=solid; "
                  "outputs then every degree unless degrees_out is given; 8: the peak deflection within 1e-5 of "
                  "16 modes', docs/coupled.md)",
            poisson="Poisson's ratio of the solid rod (rod=solid)",
            interface="bearing B of the solid rod (rod=solid): 'averaging' (RBE3-like: the joint at the mean of the "
                      "face's 25 nodes, the face free to deform) or 'rigid' (RBE2-like: the face moves as one rigid "
                      "body, built into the reduced basis; no reduction_error comparison then)",
            compare_degrees="rod=solid: the reduced rod against the full 9000-DOF mesh, both on the rigid "
                            "mechanism's chord frame, over the first this many degrees (0: no comparison; "
                            "solid_reduction_error)",
            table="with --coupled: run every formulation (lagrange, gibbs-appell, hamilton, maggi, kane, volterra) "
                  "and a tight reference, and write DIR/formulations.csv and .md (peak mid-span deflection, its "
                  "error, energy balance error, constraint violation, equations per solve, CPU time)")
SUMMARY = {"peak_midspan_deflection_m": "peak mid-span deflection of the rod [m]",   # flexmbs.sweep
           "peak_crank_angle_deg": "crank angle of that peak [deg]"}
COUPLED_ONLY = ("maggi", "kane", "volterra")   # formulations of the coupled System only (not a Model's)
CHOICES = dict(formulation=sorted([*FORMULATIONS, *COUPLED_ONLY]), integrator=sorted(INTEGRATORS),
               coupled_stiffening=["axial-strain", "omega"], rod=["beam", "solid"], interface=["averaging", "rigid"])
SOLID_MESH = "slider_crank_rod"       # meshes/slider_crank_rod.msh (Gmsh, from slider_crank_rod.geo)
SOLID_DEGREES_OUT = 1.0               # rod=solid: outputs every degree unless degrees_out is given (each output
                                      # holds the 3025 nodes' displacements and velocities: 150 kB in results.h5)


def build(elements=8, crank=0.15, rod=0.30, offset=0.0, width=0.008, youngs=2e11, density=7870.0,
          crank_speed=150.0, slider_mass=0.075552, stiffening=True, guide_correction=True, t_end=None):
    """The flexible connecting rod as a Model (its motion checked over [0, t_end] if given)."""
    linkage = SliderCrank(crank, rod, offset)
    element = BeamEB2D(Material(E=youngs, rho=density), area=width**2, I=width**4 / 12.0)
    return flexible_link(linkage, "rod", constant_speed(crank_speed), element, elements, ends="pinned-sliding",
                         end_mass=slider_mass, stiffening=stiffening, guide_angle=0.0 if guide_correction else None,
                         t_span=None if t_end is None else (0.0, t_end))


def solver_options(p: dict, t_end: float) -> dict:
    """Integrator, step or tolerance and output times of a run of a crank-driven case."""
    dt_out = np.radians(p["degrees_out"]) / abs(p["crank_speed"])
    # NOTE: clamped, output_times can overshoot t_end by round-off (e.g. t_end = 4 pi / 150)
    t_eval = np.minimum(output_times(t_end, dt_out), t_end)
    opts = dict(formulation=p["formulation"], method=p["integrator"], t_end=t_end, t_eval=t_eval)
    if INTEGRATORS[p["integrator"]].uses_tolerances:
        opts.update(rtol=p["rtol"], atol=p["rtol"] * 1e-6)
    else:
        opts.update(h=p["h"])
    return opts


def check(p: dict) -> None:
    """Refuse values the case cannot run with, naming the parameter (`flexmbs.case.check_parameters`)."""
    if not isinstance(p["rod"], str):
        raise CaseError("rod", f"is the rod's model, 'beam' or 'solid', got {p['rod']!r}; its length is `rod_length`")
    check_parameters(p, DEFAULTS, choices=CHOICES, positive=("crank", "rod_length", "width", "youngs", "density",
                                                               "revolutions", "degrees_out", "modes"),
                     nonnegative=("slider_mass",))
    if p["interface"] != "averaging" and p["rod"] != "solid":
        raise CaseError("interface", f"is bearing B of the solid rod: add --set rod=solid (got rod={p['rod']!r})")
    if p["rod"] == "solid":
        if not p["coupled"]:
            raise CaseError("rod", "'solid' is a rod of the coupled model: add --set coupled=true")
        if (p["rod_length"], p["width"], p["offset"]) != (0.30, 0.008, 0.0):
            raise CaseError("rod", f"'solid' is the mesh {SOLID_MESH}.msh of the 0.3 m x 8 mm x 8 mm rod on the "
                                   f"centred slide; got rod_length {p['rod_length']}, width {p['width']}, offset "
                                   f"{p['offset']}")
        if not (isinstance(p["modes"], int) and 1 <= p["modes"] <= 200):
            raise CaseError("modes", f"must be an integer in 1..200, got {p['modes']!r}")
        if not 0.0 <= p["poisson"] < 0.5:
            raise CaseError("poisson", f"must lie in [0, 0.5), got {p['poisson']!r}")
        if not 0.0 <= p["compare_degrees"] <= 360.0:
            raise CaseError("compare_degrees", f"must lie in [0, 360] (0: no comparison), got {p['compare_degrees']!r}")
    if p["formulation"] in COUPLED_ONLY and not p["coupled"]:
        raise CaseError("formulation", f"{p['formulation']!r} runs the coupled model only (--coupled); the "
                                       f"kinematically driven rod runs with {sorted(FORMULATIONS)}")
    if p["table"] and not p["coupled"]:
        raise CaseError("table", "compares the formulations of the coupled model: add --set coupled=true")
    if p["table"] and p["rod"] != "beam":
        raise CaseError("table", f"compares the formulations on the beam rod (rod='beam'), got rod={p['rod']!r}")
    if p["coupled"] and not p["h_coupled"] > 0:
        raise CaseError("h_coupled", f"must be positive, got {p['h_coupled']!r}")
    if not 0.0 <= p["rho_inf"] < 1.0:
        raise CaseError("rho_inf", f"must lie in [0, 1), got {p['rho_inf']!r}")
    if p["crank_speed"] == 0:
        raise CaseError("crank_speed", "must not be zero (the run lasts `revolutions` turns of the crank)")
    if p["crank"] + abs(p["offset"]) >= p["rod_length"]:
        raise CaseError("crank", f"crank + |offset| = {p['crank'] + abs(p['offset']):g} m must be shorter than "
                                 f"the rod ({p['rod_length']:g} m) for the crank to turn fully")


def run(out=None, **params):
    """Run the case; returns (Results, model, extras) with extras crank_angle, midspan_deflection."""
    if params.get("rod") == "solid" and "degrees_out" not in params:
        params = {**params, "degrees_out": SOLID_DEGREES_OUT}
    p = resolve("slider_crank", DEFAULTS, params, check)
    t_end = 2.0 * np.pi * p["revolutions"] / abs(p["crank_speed"])
    if p["coupled"] and p["table"]:
        return formulation_table(out, p, t_end)
    if p["coupled"]:
        return run_coupled(out, p, t_end)
    phys = {k: p[k] for k in ("elements", "crank", "offset", "width", "youngs", "density", "crank_speed",
                              "slider_mass", "stiffening", "guide_correction")}
    model = build(**phys, rod=p["rod_length"], t_end=t_end)
    res = run_model(model, compute_energies=False, metadata={"case": "slider_crank", "parameters": p},
                    **solver_options(p, t_end))
    extras = {"crank_angle": np.array([model.crank(t)[0] for t in res.t]),
              "midspan_deflection": chord_deflection(model, res.delta, [p["rod_length"] / 2])[:, 0]}
    if not INTEGRATORS[p["integrator"]].adaptive and res.success:
        # error estimate: the same run at twice the step, Richardson for order 2:
        # e(h) ~ max |w_h - w_H| / ((H/h)^2 - 1), relative to the peak |w_h|
        coarse = run_model(model, compute_energies=False, store=False,
                           **{**solver_options(p, t_end), "h": 2.0 * p["h"]})
        w_H = chord_deflection(model, coarse.delta, [p["rod_length"] / 2])[:, 0]
        w = extras["midspan_deflection"]
        ratio = res.stats["n_steps"] / coarse.stats["n_steps"]
        extras["error_estimate"] = float(np.max(np.abs(w - w_H)) / (ratio**2 - 1.0) / np.max(np.abs(w)))
    if out is not None:
        write(res, model, extras, Path(out), p, title="Slider-crank: flexible connecting rod")
    return res, model, extras


def peak(extras) -> tuple[float, float]:
    """(deflection [m], crank angle [deg]) of the largest |mid-span deflection|, refined
    between output times by the parabola through the largest sample and its neighbours."""
    w, phi = extras["midspan_deflection"], np.degrees(extras["crank_angle"])
    i = int(np.argmax(np.abs(w)))
    if 0 < i < len(w) - 1:
        y0, y1, y2 = w[i - 1], w[i], w[i + 1]
        den = y0 - 2.0 * y1 + y2
        if den != 0.0:
            s = 0.5 * (y0 - y2) / den                     # vertex offset in output steps, |s| <= 1/2
            return float(y1 - 0.25 * (y0 - y2) * s), float(phi[i] + s * (phi[i + 1] - phi[i - 1]) / 2.0)
    return float(w[i]), float(phi[i])


def snapshots(res, model, indices, scale, n_points=41, label="crank"):
    """Mechanism drawings (rigid outline + exaggerated flexible link) at output indices."""
    linkage = getattr(model, "linkage", None)
    L = model.mesh.points[:, 0].max()
    x = np.linspace(0.0, L, n_points)
    curves = global_shape(model, res.t[indices], res.delta[indices], x, scale)
    out = []
    for k, i in enumerate(indices):
        if linkage is None:                               # a beam on a measured frame: draw its chord
            fs = model.frame(res.t[i])
            chord = np.array([fs.r_O[:2], fs.r_O[:2] + L * fs.R[:2, 0]])
            out.append(dict(outline=chord, link=curves[k], chord=chord, label=f"t = {res.t[i]:.3f} s"))
            continue
        phi, phid, phidd = model.crank(res.t[i])
        state = linkage.state(phi, phid, phidd)
        outline = np.array([state.point(name)[0] for name in linkage.outline])
        p1, p2 = linkage.links[model.link]
        snap = dict(outline=outline, link=curves[k], chord=np.array([state.point(p1)[0], state.point(p2)[0]]),
                    label=f"{label} {np.degrees(phi) % 360:.0f} deg, t = {1e3 * res.t[i]:.2f} ms")
        if isinstance(linkage, SliderCrank):
            snap["slider"] = state.point("B")[0]
        out.append(snap)
    return out


def write(res, model, extras, out: Path, p: dict, title: str, x_label="crank angle [deg]"):
    """results.npz (+ extras), summary.json and the plots of a mechanism case."""
    out.mkdir(parents=True, exist_ok=True)
    path = res.save_npz(out / "results.npz")
    data = dict(np.load(path))
    data.update({k: np.asarray(v) for k, v in extras.items()})
    np.savez_compressed(path, **data)
    w = extras["midspan_deflection"]
    summary = {"parameters": p, "status": res.status, "message": res.message,
               "stats": {k: v for k, v in res.stats.items()}}
    if "crank_angle" in extras:
        value, angle = peak(extras)
        summary.update(peak_midspan_deflection_m=value, peak_crank_angle_deg=angle)
    write_summary(out, summary)
    if not p.get("plots", True) or len(res.t) < 2:
        return
    from flexmbs import plots
    if "crank_angle" in extras:
        angle = np.degrees(extras["crank_angle"])
        plots.save(plots.deflection_vs_angle({"mid-span": (angle, w)}, title=f"{title}: mid-span deflection "
                                             "relative to the chord", xlabel=x_label), out / "deflection.png")
    else:
        plots.save(plots.deflection_vs_angle({"mid-span": (res.t, w)}, title=f"{title}: mid-span deflection "
                                             "relative to the chord", xlabel="t [s]"), out / "deflection.png")
    L = model.mesh.points[:, 0].max()
    w_max = max(np.abs(w).max(), 1e-30)
    scale = float(10 ** np.floor(np.log10(0.08 * L / w_max)))     # largest deflection ~ 8 % of L
    n_t = len(res.t)
    last = slice(n_t // 2, n_t) if p.get("revolutions", 1) >= 2 else slice(0, n_t)
    idx = np.arange(n_t)[last]
    shown = idx[np.linspace(0, len(idx) - 1, 7).astype(int)[:-1]]
    i_peak = int(np.argmax(np.abs(w)))
    if np.min(np.abs(shown - i_peak)) > len(idx) // 20:           # the peak, unless one is close
        shown = np.unique(np.append(shown, i_peak))
    plots.save(plots.deformed_shapes(snapshots(res, model, shown, scale),
                                     title=f"{title}: deformed shapes, displacements x {scale:g}"),
               out / "deformed_shapes.png")
    if p.get("gif_frames", 0) > 0:
        frames = idx[np.linspace(0, len(idx) - 1, int(p["gif_frames"])).astype(int)]
        plots.animation_gif(out / "animation.gif", snapshots(res, model, frames, scale),
                            title=f"{title} (displacements x {scale:g})")


# -- coupled model ----------------------------------------------------------------------------------
CRANK_MASS, CRANK_INERTIA = 0.36, 0.002727     # Simeon's crank: M1 [kg], J1 [kg m^2] (BENCHMARKS.md sec. 4)


class PlanarSlide(Joint):
    """The slider's guide: the slider keeps the guide's orientation and its y = const line, free along
    the axis and (not redundant with the pin at B, which fixes it) along the out-of-plane z (4 equations:
    the rows of `Prismatic` without the z-position row)."""

    _rows = (("dot1", 2, 0), ("dot1", 2, 1), ("dot2", 0), ("dot1", 0, 1))
    _needs_axis = True


def build_coupled(elements=8, crank=0.15, rod=0.30, offset=0.0, width=0.008, youngs=2e11, density=7870.0,
                  crank_speed=150.0, slider_mass=0.075552, stiffening=True, coupled_stiffening="axial-strain",
                  rod_modes=None, rod_model=None, rod_ends=None):
    """(System, rod body, rod Model) of the coupled slider-crank at the dead centre (crank angle 0).

    crank: RigidBodyEP on a revolute joint about z at the origin, driven by an AngleDriver at
    ``crank_speed``; rod: FlexibleBody on its chord frame (u = v = 0 at node 0, v = 0 at the last
    node), joined to the crank by a revolute joint at Node(0) and to the slider by a spherical
    joint at the last node; slider: RigidBodyEP on `PlanarSlide` along x.  The rod starts
    undeformed with the rigid-body velocities.  A planar mechanism modelled in 3D with revolute
    joints everywhere has 3 redundant equations; the spherical pin at B and the 4-row slide
    remove them (System.mobility: rank = rows).  With ``stiffening``, the rod is stiffened by
    ``coupled_stiffening`` (`FlexibleBody`'s ``stiffening``): "axial-strain" (default: the axial
    force of each element from its own axial strain, so the slider's inertia and the frame's
    acceleration stiffen it as in the kinematically driven model) or "omega".  ``rod_modes`` N:
    the rod reduced by Craig-Bampton to N fixed-interface modes plus the constraint modes of its
    two bearing nodes (`flexmbs.reduction.reduce`; its stiffening then "omega" or "none").
    ``rod_model``: another Model of the rod (e.g. a reduced solid), along x from its bearing A at the
    origin to B at x = ``rod``, with its bearings the markers ``rod_ends`` (A, B) (default the nodes
    0 and ``elements``); ``coupled_stiffening`` "modal-stress" stiffens a reduced rod by its own
    stress."""
    if offset != 0.0:
        raise CaseError("offset", "the coupled model is built for the centred slide (offset 0)")
    element = BeamEB2D(Material(E=youngs, rho=density), area=width**2, I=width**4 / 12.0)
    if coupled_stiffening not in CHOICES["coupled_stiffening"] + ["modal-stress"]:
        raise CaseError("coupled_stiffening", f"must be one of {CHOICES['coupled_stiffening']}, "
                                              f"got {coupled_stiffening!r}")
    mode = coupled_stiffening if stiffening else "none"
    if rod_model is None:
        model = Model(generate.line(elements, rod), element, fixed=[("start", "u"), ("start", "v"), ("end", "v")],
                      stiffening=mode == "omega")
    else:
        model = rod_model
    end_A, end_B = (Node(0), Node(elements)) if rod_ends is None else rod_ends
    z = np.array([0.0, 0.0, 1.0])
    W = float(crank_speed)
    # transverse inertia of the crank: J1; about its own axis (x) a small value: it is held by the pivot
    crank_body = RigidBodyEP("crank", CRANK_MASS, np.diag([1e-3 * CRANK_INERTIA, CRANK_INERTIA, CRANK_INERTIA]),
                             centroid=[crank / 2.0, 0.0, 0.0], angular_velocity=W * z)
    if rod_modes is not None:
        from flexmbs.reduction import reduce
        model = reduce(model, int(rod_modes), method="craig-bampton", interface=[0, elements], static_modes=False)
    rod_body = FlexibleBody(model, "rod", position=[crank, 0.0, 0.0], velocity=[0.0, W * crank, 0.0],
                            angular_velocity=-W * crank / rod * z, stiffening=mode)
    m3 = max(slider_mass, 1e-12)
    slider = RigidBodyEP("slider", m3, np.diag([m3 * 1e-4] * 3), position=[crank + rod, 0.0, 0.0])
    constraints = [Revolute(None, crank_body, at=np.zeros(3), axis=z, name="crank pivot"),
                   AngleDriver(None, crank_body, z, constant_speed(W), name="drive"),
                   Revolute(crank_body, rod_body, s_j=end_A, axis=z, name="pin A"),
                   Spherical(rod_body, slider, s_i=end_B, name="pin B"),
                   PlanarSlide(None, slider, at=[crank + rod, 0.0, 0.0], axis=[1.0, 0.0, 0.0], name="slide")]
    return System([crank_body, rod_body, slider], constraints), rod_body, model


COUPLED_PHYSICS = ("elements", "crank", "offset", "width", "youngs", "density", "crank_speed", "slider_mass",
                   "stiffening", "coupled_stiffening")     # the parameters of `build_coupled` (with rod_length)
JOINT_BODIES = (("crank pivot", "crank"), ("pin A", "rod"), ("pin B", "rod"), ("slide", "slider"))


def reactions(system, t, x, lam) -> dict:
    """Global forces [N] of the joints: on the crank at its pivot, on the rod at A and at B, on the slider."""
    return joint_forces(system.reaction_history(t, x, lam, [c for c, _ in JOINT_BODIES]))


def joint_forces(history) -> dict:
    """``reaction_<joint>`` (n_t, 3): the global force R F of each joint of `JOINT_BODIES` on its body,
    from `System.reaction_history`."""
    return {f"reaction_{c.replace(' ', '_')}": np.einsum("tij,tj->ti", history[c]["rotation"],
                                                         history[c]["bodies"][b]["force"])
            for c, b in JOINT_BODIES}


def coupled_solver(p: dict) -> dict:
    """formulation, method and step (or tolerances) of the coupled run for the case's ``formulation``:
    lagrange (the index-3 DAE "index3") and gibbs-appell by index3-alpha with h_coupled and rho_inf,
    hamilton, maggi, kane and volterra by the case's ``integrator`` with h_coupled (fixed step) or rtol
    (adaptive)."""
    name = p["formulation"]
    if name in ("lagrange", "gibbs-appell"):
        return dict(formulation="index3" if name == "lagrange" else name, method="index3-alpha", h=p["h_coupled"],
                    rho_inf=p["rho_inf"])
    method = p["integrator"]
    step = (dict(rtol=p["rtol"], atol=p["rtol"] * 1e-6) if INTEGRATORS[method].uses_tolerances
            else dict(h=p["h_coupled"]))
    return dict(formulation=name, method=method, **step)


def run_coupled(out, p: dict, t_end: float, name: str = "coupled"):
    """The coupled model by `flexmbs.run` (the formulation and integrator of `coupled_solver`: by default
    index3-alpha with the step h_coupled): (its `Results`, the rod's Model, extras) with the arrays of
    results.npz in extras.  The run is streamed into the active
    results file (`flexmbs.io.recording`; ``flexmbs run``: DIR/results.h5) under ``name`` ("coupled")."""
    from flexmbs.mechanisms.coupled import torque_about
    phys = {k: p[k] for k in COUPLED_PHYSICS}
    solid = None
    if p["rod"] == "solid":
        from flexmbs.bodies import Interface
        rigid = p["interface"] == "rigid"
        solid = solid_rod(p["modes"], p["youngs"], p["density"], p["poisson"], rigid_bearing=rigid)
        phys.update(rod_model=solid["model"], rod_ends=(Interface("bearing_A"), Interface("bearing_B", rigid=rigid)),
                    coupled_stiffening="modal-stress")
    system, rod_body, model = build_coupled(**phys, rod=p["rod_length"])
    res = run_model(system, t_end=t_end, t_eval=solver_options(p, t_end)["t_eval"],
                    metadata={"case": "slider_crank", "parameters": p}, name=name, **coupled_solver(p))
    # the multipliers at the outputs (index3-alpha's own, or recovered by the formulation); all joints in one pass
    history = system.reaction_history(res.t, res.q, res.multipliers, ["drive"] + [c for c, _ in JOINT_BODIES])
    delta = res.bodies[rod_body.name].delta
    extras = {"crank_angle": p["crank_speed"] * res.t,
              "midspan_deflection": (chord_deflection(model, delta, [p["rod_length"] / 2])[:, 0] if solid is None
                                     else solid_midspan(model, delta)),
              "drive_torque": torque_about(history["drive"], system.body("crank")), **joint_forces(history)}
    if solid is not None:
        extras["solid"] = solid["summary"]
        if p["compare_degrees"] > 0 and p["interface"] == "rigid":
            extras["solid"]["reduction_error"] = None
            extras["solid"]["reduction_error_note"] = ("not computed with interface=rigid: the full mesh runs as a "
                                                       "Model, which has no rigid interface")
        elif p["compare_degrees"] > 0:
            extras["solid"]["reduction_error"] = solid_reduction_error(p)
    if out is not None:
        write_coupled(res, rod_body.name, extras, Path(out), p)
    return res, model, extras


TABLE_FORMULATIONS = ("lagrange", "gibbs-appell", "hamilton", "maggi", "kane", "volterra")
TABLE_REFINEMENT = 64     # the reference: lagrange (index 3) by index3-alpha at h_coupled / 64
TABLE_HEADER = ["formulation", "solver", "step", "peak_mm", "peak_error", "max_deflection_error",
                "energy_balance_J", "constraint_violation", "equations", "evaluations_per_step", "lu", "cpu_s"]


def table_row(name: str, p: dict, t_end: float, reference=None) -> tuple[dict, np.ndarray]:
    """One row of the formulation table: the coupled model by ``name`` (`coupled_solver`), with the peak
    mid-span deflection [mm], its error relative to the ``reference`` run's peak and the largest deflection
    error over the outputs (both relative to the reference's peak; None for the reference itself), the largest
    |`Results.energy_balance_error`| [J], the largest ||C|| (`System.residual_norms`) [m], the size of the
    linear system of one evaluation (`_comparison.equations_per_evaluation`), evaluations per step, LU
    factorizations and the CPU time of the run [s]; and the run's deflection history."""
    from _comparison import equations_per_evaluation
    from flexmbs.formulations.registry import system_formulation
    q = {**p, "formulation": name}
    solver = coupled_solver(q)
    tic = time.process_time()
    run_name = "table-reference" if reference is None else f"table-{name}"
    res, _, extras = run_coupled(None, q, t_end, name=run_name)
    cpu = time.process_time() - tic
    w = extras["midspan_deflection"]
    value = peak(extras)[0]
    system = build_coupled(**{k: p[k] for k in COUPLED_PHYSICS}, rod=p["rod_length"])[0]
    form = system_formulation(solver["formulation"], system)
    errors = (None, None) if reference is None else (abs(value - reference["peak"]) / abs(reference["peak"]),
                                                     float(np.abs(w - reference["w"]).max() / abs(reference["peak"])))
    step = (f"h = {t_end / max(res.stats['n_steps'], 1):.3g} s" if "h" in solver      # the step after alignment
            else f"rtol = {solver['rtol']:g}")
    row = dict(formulation=name if reference is not None else f"reference: {name}", solver=solver["method"],
               step=step, peak_mm=1e3 * value, peak_error=errors[0], max_deflection_error=errors[1],
               energy_balance_J=float(np.abs(res.energy_balance_error()).max()),
               constraint_violation=float(system.residual_norms(res.t, res.q).max()),
               equations=equations_per_evaluation(solver["formulation"], form, system),
               evaluations_per_step=res.stats["n_rhs"] / max(res.stats["n_steps"], 1), lu=res.stats["n_lu"],
               cpu_s=cpu, status=res.status)
    return row, w


def formulation_table(out, p: dict, t_end: float):
    """--table: the reference (lagrange, index 3, index3-alpha at h_coupled / `TABLE_REFINEMENT`) and every
    formulation of `TABLE_FORMULATIONS` at the case's solver (`coupled_solver`); writes DIR/formulations.csv
    and .md (`_comparison.write_rows`).  Returns (the last run's Results, None, {"table": rows})."""
    from _comparison import write_rows
    ref_row, w_ref = table_row("lagrange", {**p, "h_coupled": p["h_coupled"] / TABLE_REFINEMENT}, t_end)
    reference = {"peak": ref_row["peak_mm"] * 1e-3, "w": w_ref}
    rows = [ref_row] + [table_row(name, p, t_end, reference)[0] for name in TABLE_FORMULATIONS]
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        fmt = dict(peak_mm="{:.6f}", evaluations_per_step="{:.2f}", cpu_s="{:.2f}", equations="{:d}", lu="{:d}")
        text = [[r[c] if isinstance(r[c], str) else "" if r[c] is None else fmt.get(c, "{:.2e}").format(r[c])
                 for c in TABLE_HEADER] for r in rows]
        write_rows(out, "formulations", TABLE_HEADER, text,
                   f"Coupled slider-crank ({p['elements']} elements, {p['revolutions']:g} revolutions): each "
                   f"formulation against the reference (lagrange, index 3, h = h_coupled / {TABLE_REFINEMENT}); "
                   "errors relative to the reference's peak mid-span deflection")
        write_summary(out, {"parameters": p, "model": "coupled", "table": rows})
    return None, None, {"table": rows}


def solid_rod(modes: int, youngs: float, density: float, poisson: float, rigid_bearing: bool = False) -> dict:
    """The rod as the Tet10 solid of meshes/slider_crank_rod.msh (Gmsh; 1440 cells, 3025 nodes, 9000 free
    DOFs), clamped at bearing A (its frame: the tangent frame of the bearing face), reduced to ``modes``
    free-interface modes plus the static modes of the frame's unit inertia loads and the attachment modes
    of bearing B (`flexmbs.reduction.reduce`): {"model": the ReducedModel, "summary": its sizes and
    build times}.  Bearing B is an averaging `flexmbs.bodies.Interface` of its face's 25 nodes, or with
    ``rigid_bearing`` a rigid one (``reduce(..., rigid_interfaces=["bearing_B"])``: the face moves as one
    rigid body in every basis vector)."""
    from flexmbs import mesh as meshes
    from flexmbs.elements import Tet10
    from flexmbs.reduction import reduce
    tic = time.process_time()
    mesh = meshes.sample(SOLID_MESH)
    full = Model(mesh, Tet10(Material(E=youngs, rho=density, nu=poisson)), fixed=[("bearing_A", "all")])
    built = time.process_time()
    reduced = reduce(full, modes, attachments=["bearing_B"], rigid_interfaces=["bearing_B"] if rigid_bearing else ())
    reduced.modal_geometric_stiffness()                  # the "modal-stress" stiffening's G, once
    done = time.process_time()
    return {"model": reduced, "summary": {
        "mesh": f"{SOLID_MESH}.msh", "cells": int(len(full.cells)), "full_dofs": int(full.n_dofs),
        "modes": int(modes), "reduced_dofs": int(reduced.n_dofs),
        "lowest_frequencies_hz": [float(f) for f in np.sqrt(np.maximum(reduced.omega2[:4], 0.0)) / (2 * np.pi)],
        "build_s": built - tic, "reduce_s": done - built, "stiffening": "modal-stress",
        "bearing_B": "rigid" if rigid_bearing else "averaging"}}


def solid_on_chord_frame(p: dict, mesh=None) -> Model:
    """The full solid rod (9000 DOFs less bearing B's y DOFs) kinematically driven, as the beam's `build`: on
    the chord frame of the rigid slider-crank (`flexmbs.mechanisms.frames.link_motion`), bearing A clamped
    (as in the coupled model), bearing B's 25 nodes held on the chord (v = 0) and carrying the slider's mass
    in equal parts, stiffened by the frame's inertia loads (the Model's pre-stress).  ``mesh``: another Tet10
    mesh of the rod from x = 0 to the rod's length with the node sets bearing_A and bearing_B (default
    meshes/slider_crank_rod.msh)."""
    from flexmbs import mesh as meshes
    from flexmbs.elements import Tet10
    from flexmbs.mechanisms.frames import link_motion
    mesh = meshes.sample(SOLID_MESH) if mesh is None else mesh
    n_B = len(mesh.nodes("bearing_B"))
    motion = link_motion(SliderCrank(p["crank"], p["rod_length"], p["offset"]), "rod", constant_speed(p["crank_speed"]))
    return Model(mesh, Tet10(Material(E=p["youngs"], rho=p["density"], nu=p["poisson"])), motion=motion,
                 fixed=[("bearing_A", "all"), ("bearing_B", "v")],
                 point_masses=[("bearing_B", p["slider_mass"] / n_B)], stiffening=True)


def solid_reduction_error(p: dict, mesh=None) -> dict:
    """The reduced solid rod against the full mesh on a short run (issue 24, item 4).

    The full rod cannot run as a dense FlexibleBody, so both run kinematically driven
    (`solid_on_chord_frame`, `flexmbs.run` of the Model: implicit midpoint with the case's step ``h``,
    1e-5 s by default, outputs every degree) over the first ``compare_degrees`` of the crank: the full mesh, and its reduction by the
    coupled rod's recipe (``modes`` free-interface modes, the static modes of the frame's inertia loads,
    the attachment modes of bearing B; ``mesh`` as `solid_on_chord_frame`).  Returns the largest difference of the mid-span deflection
    (`solid_midspan`) relative to the full run's peak, the peaks, sizes and CPU times."""
    from flexmbs.reduction import reduce
    full = solid_on_chord_frame(p, mesh)
    reduced = reduce(full, p["modes"], attachments=["bearing_B"])
    t_end = np.radians(p["compare_degrees"]) / abs(p["crank_speed"])
    t_eval = np.linspace(0.0, t_end, int(np.ceil(p["compare_degrees"])) + 1)
    runs, cpu = {}, {}
    for name, model in (("full", full), ("reduced", reduced)):
        tic = time.process_time()
        res = run_model(model, method="midpoint", h=p["h"], t_end=t_end, t_eval=t_eval, compute_energies=False,
                        store=False)
        cpu[name] = time.process_time() - tic
        if not res.success:
            raise RuntimeError(f"the {name} solid rod's comparison run failed at t = {res.t[-1]:.4g} s: {res.message}")
        runs[name] = solid_midspan(model, res.delta)
    peak_full = float(np.abs(runs["full"]).max())
    return {"degrees": float(p["compare_degrees"]), "model": "kinematically driven on the chord frame, bearing A "
            "clamped, bearing B on the chord", "full_dofs": int(full.n_dofs), "reduced_dofs": int(reduced.n_dofs),
            "peak_full_m": peak_full, "peak_reduced_m": float(np.abs(runs["reduced"]).max()),
            "midspan_error": float(np.abs(runs["reduced"] - runs["full"]).max() / peak_full),
            "full_cpu_s": cpu["full"], "reduced_cpu_s": cpu["reduced"]}


def solid_midspan(model, delta) -> np.ndarray:
    """Mid-span deflection of the solid rod relative to the line through its bearing centres (n_t,) [m]:
    w = u_y(C) - 1/2 u_y(B), with C the centroid of the 25 nodes of the mid-span section (x = 0.15 m) and
    B that of bearing B (`Model.interface_translation`); bearing A is clamped to the frame (u = 0)."""
    x = model.mesh.points[:, 0]
    mid = np.flatnonzero(np.isclose(x, 0.5 * (x.min() + x.max())))
    w_mid = model.interface_translation(mid)[1][1]
    w_B = model.interface_translation("bearing_B")[1][1]
    return np.asarray(delta) @ (w_mid - 0.5 * w_B)


STIFFENING_NOTES = {
    "axial-strain": "each element of the flexible link is stiffened by its own axial force EA eps_e from its "
                    "elastic axial strain: the inertia of the bodies it drives, the frame's acceleration and the "
                    "joint loads stiffen it as in the kinematically driven model (docs/coupled.md)",
    "omega": "the FlexibleBody's geometric stiffening uses only its angular velocity (no axial force from the "
             "frame's acceleration or the joints; docs/coupled.md)",
    "none": "no geometric stiffening",
    "modal-stress": "the reduced solid rod is stiffened by its own linear stress, K_geo(sigma(delta)) delta "
                    "(docs/flexible_bodies.md): the slider's inertia and the frame's acceleration stiffen it"}


def _stiffening_label(p: dict) -> str:
    if not p["stiffening"]:
        return "none"
    return "modal-stress" if p.get("rod") == "solid" else p["coupled_stiffening"]


def write_coupled(res, body: str, extras, out: Path, p: dict, title="Coupled slider-crank"):
    """results.npz (t, displacement and nodes of the flexible ``body`` of the `Results` ``res``,
    crank_angle, midspan_deflection, drive_torque, reaction_*), summary.json and deflection.png of
    a coupled model."""
    out.mkdir(parents=True, exist_ok=True)
    flexible = res.bodies[body]
    solid = extras.get("solid")
    arrays = {k: np.asarray(v) for k, v in extras.items() if k != "solid"}
    if solid is None:                  # the beam's nodal displacements; a solid's are in results.h5
        arrays.update(displacement=flexible.displacement, nodes=flexible.nodes)
    np.savez(out / "results.npz", t=res.t, **arrays)      # not compressed (`flexmbs.case.write_results`)
    value, angle = peak(extras)
    summary = {"parameters": p, "model": "coupled", "formulation": res.metadata.get("formulation"),
               "method": res.metadata.get("method"), "status": res.status, "message": res.message,
               "n_steps": res.stats["n_steps"], "solve_s": res.stats["solve_s"], "kernel": res.metadata.get("kernel"),
               "peak_midspan_deflection_m": value,
               "peak_crank_angle_deg": angle, "drive_torque_peak_Nm": float(np.abs(extras["drive_torque"]).max()),
               "stiffening": _stiffening_label(p), "stiffening_note": STIFFENING_NOTES[_stiffening_label(p)],
               "rod": p.get("rod", "beam"), **({"solid_rod": solid} if solid is not None else {})}
    write_summary(out, summary)
    if p.get("plots", True) and len(res.t) > 1:
        from flexmbs import plots
        plots.save(plots.deflection_vs_angle({"mid-span": (np.degrees(extras["crank_angle"]),
                                                           extras["midspan_deflection"])},
                                             title=f"{title}: mid-span deflection relative to the chord",
                                             xlabel="crank angle [deg]"), out / "deflection.png")


def main(argv=None):
    # run gets the parameters given only: with rod=solid and no --degrees-out, outputs every SOLID_DEGREES_OUT
    (res, model, extras), args, out, _, seconds = run_command(
        "slider_crank", __doc__, run, argv, DEFAULTS, run_time=RUN_TIME, help=HELP, choices=CHOICES, check=check)
    if args.get("coupled") and args.get("table"):
        for r in extras["table"]:
            error = "" if r["peak_error"] is None else f", peak error {r['peak_error']:.1e}"
            print(f"{r['formulation']:>20} ({r['solver']}, {r['step']}): {r['status']}, peak {r['peak_mm']:+.6f} mm"
                  f"{error}, energy balance {r['energy_balance_J']:.1e} J, |C| {r['constraint_violation']:.1e}, "
                  f"{r['equations']} equations, CPU {r['cpu_s']:.1f} s")
        print(f"  wrote {out}/formulations.csv and .md in {seconds:.1f} s")
        return 0 if all(r["status"] == "finished" for r in extras["table"]) else 1
    if args.get("coupled"):
        value, angle = peak(extras)
        solid = extras.get("solid")
        rod = (f"{args['elements']} elements" if solid is None else
               f"solid rod ({solid['cells']} Tet10, {solid['full_dofs']} DOFs reduced to {solid['reduced_dofs']}: "
               f"{solid['modes']} modes + static and attachment modes; build {solid['build_s']:.1f} s, reduction "
               f"{solid['reduce_s']:.1f} s)")
        solver = coupled_solver({**DEFAULTS, **args})
        step = f"h = {args['h_coupled']:g} s" if "h" in solver else f"rtol = {args['rtol']:g}"
        damping = f", rho_inf = {args['rho_inf']:g}" if "rho_inf" in solver else ""
        print(f"slider-crank, coupled: {rod}, crank {args['crank_speed']} rad/s, "
              f"{args['formulation']} ({solver['formulation']}) + {solver['method']} ({step}{damping}), stiffening "
              f"{_stiffening_label({**DEFAULTS, **args})}: {res.status}")
        print(f"  peak mid-span deflection {1e3 * value:+.5f} mm at crank angle {angle:.2f} deg "
              f"({res.stats['n_steps']} steps, solve {res.stats['solve_s']:.2f} s); peak drive torque "
              f"{np.abs(extras['drive_torque']).max():.4g} N m")
        if solid is not None and "reduction_error" in solid:
            e = solid["reduction_error"]
            print(f"  reduced rod against the full mesh ({e['full_dofs']} -> {e['reduced_dofs']} DOFs, kinematically "
                  f"driven, first {e['degrees']:g} deg): mid-span deflection {e['midspan_error']:.2e} of the full "
                  f"run's peak {1e3 * e['peak_full_m']:.4f} mm (full {e['full_cpu_s']:.1f} s CPU, reduced "
                  f"{e['reduced_cpu_s']:.1f} s)")
        print(f"  wrote {out}/results.npz and plots in {seconds:.1f} s")
        return 0 if res.success else 1
    value, angle = peak(extras)
    print(f"slider-crank: {args['elements']} elements, crank {args['crank_speed']} rad/s, "
          f"{args['formulation']} + {args['integrator']}: {res.status}")
    print(f"  peak mid-span deflection {1e3 * value:+.5f} mm at crank angle {angle:.2f} deg "
          f"({res.stats['n_steps']} steps, solve {res.stats['solve_s']:.2f} s)")
    if "error_estimate" in extras:
        print(f"  error estimate of the mid-span deflection (Richardson, h against 2 h): "
              f"{extras['error_estimate']:.1e} of the peak")
    print(f"  wrote {out}/results.npz and plots in {seconds:.1f} s")
    return 0 if res.success else 1


if __name__ == "__main__":
    sys.exit(call_quietly(main))
