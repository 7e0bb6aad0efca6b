"""Flexible coupler of a Grashof crank-rocker four-bar, on the prescribed frame of the rigid coupler.

Data (chosen here, no published reference): ground O2-O4 = 0.30 m, crank O2-A = 0.08 m,
coupler A-B = 0.30 m, rocker O4-B = 0.25 m (Grashof: 0.08 + 0.30 < 0.30 + 0.25 with the
crank shortest, a crank-rocker), open branch, crank turning at 4 pi rad/s (2 rev/s) from
phi = 0; the rigid crank and rocker drive the coupler.  The coupler is a steel strip,
E = 2e11 Pa, rho = 7870 kg/m^3, 3 mm deep in the plane of motion and 20 mm wide
(A = 6e-5 m^2, I = 4.5e-11 m^4, first pinned-pinned bending frequency about 76 Hz), no
gravity, no damping.  It starts from its quasi-static deflection at t = 0 (static_solution,
at rest relative to the frame), so that the free vibration of the start stays small (with
--undeformed-start: undeformed and moving with the rigid coupler).  The same four-bar generates the
marker records of cases/marker_mechanism.py (cases/data/make_markers.py).

The coupler is meshed with planar Euler-Bernoulli beams on its chord frame (origin at the
crank pin A, x axis toward B), pinned-pinned (u = v = 0 at A and B: both joints lie on rigid
links); the frame's inertia loads and the geometric stiffening act on it.  Its mid-span
transverse displacement is the deflection relative to the chord.  Integrator: implicit
midpoint, h = 5e-5 s by default (docs/mechanisms.md).

Writes DIR/results.npz (t, displacement (n_t, n_nodes, 2) in the coupler's chord frame, nodes
from A to B, nodes, crank_angle (n_t,) [rad], midspan_deflection (n_t,) [m]),
DIR/summary.json and the plots deflection.png, deformed_shapes.png, animation.gif.

--coupled: the coupled model (docs/coupled.md): crank and rocker rigid bodies (strips of the
coupler's section), the coupler a FlexibleBody with a revolute joint at node 0 and a spherical joint
at its last node, the rocker on a cylindrical joint at O4, the crank driven by an AngleDriver;
undeformed start; `flexmbs.run` with index3-alpha, the fixed step h_coupled and rho_inf (`flexmbs run`
streams it into DIR/results.h5 as run "coupled"); results.npz adds drive_torque.

References: R. L. Norton, Design of Machinery, 5th ed., McGraw-Hill (2012), sec. 2.12
(Grashof condition); A. G. Erdman, G. N. Sandor, R. G. Oakberg, J. Eng. Ind. 94 (1972)
1193-1205, doi:10.1115/1.3428338 (kineto-elastodynamics of the four-bar).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import slider_crank  # noqa: E402  (shared output writer)

from flexmbs import BeamEB2D, Material, run as run_model  # noqa: E402
from flexmbs.case import CaseError, check_parameters, resolve, run_command  # noqa: E402
from flexmbs.formulations import FORMULATIONS  # noqa: E402
from flexmbs.integrators import INTEGRATORS  # noqa: E402
from flexmbs.modal import static_solution  # noqa: E402
from flexmbs.mechanisms import FourBar, chord_deflection, constant_speed, flexible_link  # noqa: E402
from flexmbs.mechanisms.four_bar import GrashofType, grashof  # noqa: E402
from flexmbs.pipes import call_quietly

DEFAULTS = dict(elements=10, ground=0.30, crank=0.08, coupler=0.30, rocker=0.25, depth=0.003, width=0.020,
                youngs=2e11, density=7870.0, crank_speed=4.0 * np.pi, revolutions=2.0, damping=0.0,
                static_start=True, stiffening=True, formulation="lagrange", integrator="midpoint", h=5e-5,
                rtol=1e-8, degrees_out=1.0, gif_frames=60, plots=True, coupled=False, h_coupled=2.5e-4,
                rho_inf=0.9, coupled_stiffening="axial-strain")
RUN_TIME = "about 10 s"     # at the defaults on a 2-core machine (--help says it; measured, issue 20)
HELP = dict(elements="beam elements on the coupler", ground="ground length O2-O4 [m]", crank="crank length [m]",
            coupler="coupler length [m]", rocker="rocker length [m]", depth="section depth in the plane [m]",
            width="section width [m]", youngs="Young's modulus [Pa]", density="density [kg/m^3]",
            crank_speed="crank speed [rad/s]", revolutions="crank revolutions",
            damping="Rayleigh damping ratio at the first two bending modes (0: none)",
            static_start="start from the quasi-static deflection (--undeformed-start: undeformed)",
            stiffening="geometric stiffening by the axial force", formulation="equations of motion",
            integrator="time integrator", h="step of fixed-step integrators [s]",
            rtol="tolerance of adaptive integrators", degrees_out="output every this many degrees of crank rotation",
            gif_frames="animation frames (0: none)", plots="write the plots and the animation",
            coupled="coupled model: crank and rocker rigid bodies (the rocker a strip of the coupler's section), "
                    "the coupler a FlexibleBody on joints at its end nodes (index3-alpha, step h_coupled)",
            h_coupled="fixed step of index3-alpha in the coupled model [s]",
            rho_inf="spectral radius at infinity of index3-alpha (coupled model)",
            coupled_stiffening="geometric stiffening of the coupled coupler (with --stiffening): 'axial-strain', "
                               "by each element's own axial strain (frame acceleration, joint loads), or 'omega', "
                               "the Model's stiffening with the coupler's angular velocity only")
SUMMARY = {"peak_midspan_deflection_m": "peak mid-span deflection of the coupler [m]",   # flexmbs.sweep
           "peak_crank_angle_deg": "crank angle of that peak [deg]"}
CHOICES = dict(formulation=sorted(FORMULATIONS), integrator=sorted(INTEGRATORS),
               coupled_stiffening=["axial-strain", "omega"])


def beam_element(depth=0.003, width=0.020, youngs=2e11, density=7870.0) -> BeamEB2D:
    """The coupler's beam element: rectangular section, ``depth`` in the plane of motion."""
    return BeamEB2D(Material(E=youngs, rho=density), area=depth * width, I=width * depth**3 / 12.0)


def build(elements=10, ground=0.30, crank=0.08, coupler=0.30, rocker=0.25, depth=0.003, width=0.020,
          youngs=2e11, density=7870.0, crank_speed=4.0 * np.pi, damping=0.0, stiffening=True, t_end=None):
    """The flexible coupler as a Model (damping: Rayleigh ratio at the first two bending modes)."""
    from flexmbs import natural_frequencies, rayleigh_coefficients
    linkage = FourBar(ground, crank, coupler, rocker, branch="open")
    element = beam_element(depth, width, youngs, density)
    kw = dict(ends="pinned-pinned", stiffening=stiffening, t_span=None if t_end is None else (0.0, t_end))
    model = flexible_link(linkage, "coupler", constant_speed(crank_speed), element, elements, **kw)
    if damping > 0:
        w, _ = natural_frequencies(model, 0.0, n_modes=2, gyroscopic=False)
        model = flexible_link(linkage, "coupler", constant_speed(crank_speed), element, elements,
                              damping=rayleigh_coefficients(damping, w[0], w[1]), **kw)
    return model


def check(p: dict) -> None:
    """Refuse values the case cannot run with, naming the parameter (`flexmbs.case.check_parameters`)."""
    check_parameters(p, DEFAULTS, choices=CHOICES, positive=("ground", "crank", "coupler", "rocker", "depth",
                                                               "width", "youngs", "density", "revolutions",
                                                               "degrees_out"))
    if p["crank_speed"] == 0:
        raise CaseError("crank_speed", "must not be zero (the run lasts `revolutions` turns of the crank)")
    kind = grashof(p["ground"], p["crank"], p["coupler"], p["rocker"])
    if kind not in (GrashofType.CRANK_ROCKER, GrashofType.DOUBLE_CRANK):
        raise CaseError("crank", f"with ground {p['ground']:g}, crank {p['crank']:g}, coupler {p['coupler']:g} and "
                                 f"rocker {p['rocker']:g} m the four-bar is a {kind.value}: the crank cannot turn "
                                 "fully (Grashof: the shortest link, crank or ground, plus the longest must not "
                                 "exceed the other two)")


def run(out=None, **params):
    """Run the case; returns (Results, model, extras) with extras crank_angle, midspan_deflection."""
    p = resolve("four_bar", DEFAULTS, params, check)
    t_end = 2.0 * np.pi * p["revolutions"] / abs(p["crank_speed"])
    if p["coupled"]:
        return run_coupled(out, p, t_end)
    phys = {k: p[k] for k in ("elements", "ground", "crank", "coupler", "rocker", "depth", "width", "youngs",
                              "density", "crank_speed", "damping", "stiffening")}
    model = build(**phys, t_end=t_end)
    delta0 = static_solution(model, 0.0) if p["static_start"] else None
    res = run_model(model, compute_energies=False, delta0=delta0, metadata={"case": "four_bar", "parameters": p},
                    **slider_crank.solver_options(p, t_end))
    extras = {"crank_angle": np.array([model.crank(t)[0] for t in res.t]),
              "midspan_deflection": chord_deflection(model, res.delta, [p["coupler"] / 2])[:, 0]}
    if out is not None:
        slider_crank.write(res, model, extras, Path(out), p, title="Four-bar: flexible coupler")
    return res, model, extras


def _rz(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def build_coupled(elements=10, ground=0.30, crank=0.08, coupler=0.30, rocker=0.25, depth=0.003, width=0.020,
                  youngs=2e11, density=7870.0, crank_speed=4.0 * np.pi, stiffening=True,
                  coupled_stiffening="axial-strain"):
    """(System, coupler body, coupler Model) of the coupled four-bar at crank angle 0.

    crank: RigidBodyEP on a revolute joint at O2, driven by an AngleDriver; coupler: FlexibleBody on
    its chord frame (u = v = 0 at node 0, v = 0 at the last node), a revolute joint at Node(0) and a
    spherical joint at the last node; rocker: RigidBodyEP (a strip of the coupler's section, the crank
    too), a cylindrical joint about z at O4 (its z position is held by the spherical joint: no
    redundant equations).  The coupler starts undeformed with the rigid-body velocities.  With
    ``stiffening``, the coupler is stiffened by ``coupled_stiffening`` (`FlexibleBody`'s
    ``stiffening``): "axial-strain" (default: each element's axial force from its own axial strain)
    or "omega" (the Model's stiffening with the coupler's angular velocity only)."""
    if coupled_stiffening not in CHOICES["coupled_stiffening"]:
        raise CaseError("coupled_stiffening", f"must be one of {CHOICES['coupled_stiffening']}, "
                                              f"got {coupled_stiffening!r}")
    mode = coupled_stiffening if stiffening else "none"
    from flexmbs import Model, generate
    from flexmbs.bodies import FlexibleBody, Node, RigidBodyEP
    from flexmbs.constraints import AngleDriver, Cylindrical, Revolute, Spherical
    from flexmbs.system import System
    linkage = FourBar(ground, crank, coupler, rocker, branch="open")
    st = linkage.state(0.0, crank_speed, 0.0)
    z = np.array([0.0, 0.0, 1.0])
    P = {k: np.pad(st.point(k)[0], (0, 1)) for k in ("O2", "A", "B", "O4")}
    V = {k: np.pad(st.point(k)[1], (0, 1)) for k in ("A",)}
    element = beam_element(depth, width, youngs, density)
    model = Model(generate.line(elements, coupler), element, fixed=[("start", "u"), ("start", "v"), ("end", "v")],
                  stiffening=mode == "omega")

    def bar(name, length, at, link, **kw):
        m = density * depth * width * length
        k = st.link(link)
        return RigidBodyEP(name, m, np.diag([1e-3 * m * length**2, m * length**2 / 12, m * length**2 / 12]),
                           centroid=[length / 2, 0.0, 0.0], position=at, orientation=_rz(k.theta),
                           angular_velocity=k.omega * z, **kw)
    crank_body = bar("crank", crank, P["O2"], "crank")
    rocker_body = bar("rocker", rocker, P["O4"], "rocker")
    k = st.link("coupler")
    coupler_body = FlexibleBody(model, "coupler", position=P["A"], orientation=_rz(k.theta), velocity=V["A"],
                                angular_velocity=k.omega * z, stiffening=mode)
    constraints = [Revolute(None, crank_body, at=P["O2"], axis=z, name="crank pivot"),
                   AngleDriver(None, crank_body, z, constant_speed(crank_speed), name="drive"),
                   Revolute(crank_body, coupler_body, s_j=Node(0), axis=z, name="pin A"),
                   Spherical(coupler_body, rocker_body, s_i=Node(elements), name="pin B"),
                   Cylindrical(None, rocker_body, at=P["O4"], axis=z, name="rocker pivot")]
    return System([crank_body, coupler_body, rocker_body], constraints), coupler_body, model


def run_coupled(out, p: dict, t_end: float):
    """The coupled four-bar by `flexmbs.run` (index3-alpha, step h_coupled): (its `Results`, the coupler
    Model, extras) as `slider_crank.run_coupled`; the run is named "coupled" in the results file."""
    from flexmbs.mechanisms.coupled import axial_torque
    phys = {k: p[k] for k in ("elements", "ground", "crank", "coupler", "rocker", "depth", "width", "youngs",
                              "density", "crank_speed", "stiffening", "coupled_stiffening")}
    system, body, model = build_coupled(**phys)
    res = run_model(system, method="index3-alpha", h=p["h_coupled"], t_end=t_end,
                    t_eval=slider_crank.solver_options(p, t_end)["t_eval"], rho_inf=p["rho_inf"],
                    metadata={"case": "four_bar", "parameters": p}, name="coupled")
    extras = {"crank_angle": p["crank_speed"] * res.t,
              "midspan_deflection": chord_deflection(model, res.bodies[body.name].delta, [p["coupler"] / 2])[:, 0],
              # the index-3 steps' own multipliers at the outputs
              "drive_torque": axial_torque(system, system.constraint("drive"), system.body("crank"), res.t, res.q,
                                           res.multipliers)}
    if out is not None:
        slider_crank.write_coupled(res, body.name, extras, Path(out), p, title="Coupled four-bar")
    return res, model, extras


def main(argv=None):
    (res, model, extras), args, out, _, seconds = run_command(
        "four_bar", __doc__, run, argv, DEFAULTS, run_time=RUN_TIME, help=HELP, choices=CHOICES, check=check,
        flags={"--undeformed-start": ("static_start", False)})
    if args.get("coupled"):
        value, angle = slider_crank.peak(extras)
        print(f"four-bar, coupled: {args['elements']} elements, crank {args['crank_speed']:.4g} rad/s, index3-alpha "
              f"(h = {args['h_coupled']:g} s, rho_inf = {args['rho_inf']:g}): {res.status}")
        print(f"  peak mid-span deflection {1e6 * value:+.3f} um at crank angle {angle:.2f} deg "
              f"({res.stats['n_steps']} steps, solve {res.stats['solve_s']:.2f} s)")
        print(f"  wrote {out}/results.npz and plots in {seconds:.1f} s")
        return 0 if res.success else 1
    value, angle = slider_crank.peak(extras)
    print(f"four-bar ({model.linkage.type.value}): {args['elements']} elements, crank {args['crank_speed']:.4g} "
          f"rad/s, {args['formulation']} + {args['integrator']}: {res.status}")
    print(f"  peak mid-span deflection {1e6 * value:+.3f} um at crank angle {angle:.2f} deg "
          f"({res.stats['n_steps']} steps, solve {res.stats['solve_s']:.2f} s)")
    print(f"  wrote {out}/results.npz and plots in {seconds:.1f} s")
    return 0 if res.success else 1


if __name__ == "__main__":
    sys.exit(call_quietly(main))
