"""Spinning satellite with two flexible solar panels and a slew manoeuvre (seed 001's hub, issue 24).

Hub: seed 001's satellite (Tables 4-5, as cases/satellite_boom.py): a rigid 2.5 m cube of 2000 kg
with the inertia of eq. (75) about its centre of mass (I_xx, I_yy, I_zz = 1400, 900, 1100 kg m^2,
products 5, 8, 3 kg m^2), a `RigidBodyEP` centred at the origin.

Panels (not in seed 001: chosen here): two solar panels, each 5 m long (along the global +y and -y),
2 m wide (along z) and 20 mm thick (along x), rooted at the centres of the hub's +-y faces, a
homogeneous equivalent plate of a sandwich panel: E = 70 GPa, rho = 270 kg/m^3, nu = 0.3 (5.4 kg/m^2,
54 kg a panel).  ``panel``:

- ``plate`` (default): `PlateMITC4` flat shells (membrane and Reissner-Mindlin bending with MITC4
  shear, 5 DOFs a node), ``elements`` x ``width_elements`` = 10 x 2 on the rectangle [0, L] x [-b/2, b/2]
  of the panel's body x-y plane, the root edge clamped (150 DOFs a panel).  A cantilever plate free on
  its long sides bends between a beam of stiffness E b h^3 / 12 and cylindrical bending,
  D b = E b h^3 / (12 (1 - nu^2)): first frequency 2.1341 Hz (40 x 8 elements: 2.1275 Hz), between the
  two beam values 2.0808 and 2.1813 Hz; first torsion 11.17 Hz, second bending 13.63 Hz.
- ``beam``: a `BeamEB3D` strip of the panel's section (A = b h, I = b h^3 / 12 about its thin axis,
  h b^3 / 12 in its plane, J = b h^3 / 3; 60 DOFs): the beam bound above, first frequency 2.0808 Hz.

The bending that the hub's spin and slew about z excite is the out-of-plane one (through the thickness,
along x).

Each panel is a `FlexibleBody` clamped at its root (its frame: the root's tangent frame, origin at the
root's centre) and fixed to the hub by a `Fixed` joint there, reduced (`flexmbs.reduction.reduce`) to
``modes`` cantilever modes plus the static modes of the frame's unit inertia loads.  Clamped at the root,
the cantilever modes are Craig-Bampton's fixed-interface modes with the root as interface, and the
root's constraint (attachment) modes are the panel's rigid motions, which its floating frame
carries; the static modes make the quasi-static response to the hub's acceleration exact in the
basis.  ``cutoff_hz`` chooses the number of modes by a frequency cut-off instead
(`flexmbs.reduction.modes_below`).  No geometric stiffening: the spin's centrifugal stiffening
changes the panel's frequencies by (Omega / omega_1)^2 ~ 6e-5 at 0.1 rad/s.

Motion: the whole satellite spins as a rigid body at ``spin_rate`` about the principal axis e of its
undeformed inertia closest to z (J_e about the centre of mass, the origin; e is 1.4 deg off z because
of the hub's products of inertia; J_e = 2843.6 kg m^2), so that the rigid satellite would spin steadily.  With ``torque``,
a slew torque on the hub about e, one sine period T(t) = T0 sin(2 pi t / t_s) for t < t_s, then 0
(``slew_torque`` T0, ``slew_time`` t_s: a smooth bang-bang, continuous so that the integrator keeps
its order), turns it by phi(t) = T0 / J_e (tau t - tau^2 sin(t / tau)), tau = t_s / (2 pi),
T0 t_s^2 / (2 pi J_e) in all (5.1 deg at the defaults, 100 N m over 4 s), and back to the same spin.  The rigid satellite's attitude
is R_ref(t) = Rot(e, spin_rate t + phi(t)); ``hub_attitude_error`` is the angle of R_ref^T R_hub: the
attitude error the panels' flexibility makes.

Integrator: `flexmbs.run` with index3-alpha (step ``h``, ``rho_inf``).  Its angular momentum balance
L(t) = L(0) + e int_0^t T dt holds to the step's accuracy, second order in h (plate panels): with the
torque off |L(t) - L(0)| / |L(0)| stays at 1.5e-9 over 20 s at h = 5 ms (the check of issue 24: 1e-8),
6.9e-9 at 10 ms; with the slew 9.8e-6, 2.5e-6, 6.1e-7 at h = 10, 5, 2.5 ms.  The reduced plate panels'
error against the full mesh over 5 s of the slew: 2.8e-6 of the peak tip deflection with 4 modes
(docs/flexible_bodies.md lists 1, 2 and 5 modes).

Writes DIR/results.npz: ``t``, ``angular_momentum`` (n_t, 3) of the whole system about the centre of
mass in global components [N m s] (`flexmbs.System.momentum`), ``panel_tip_deflection`` (n_t, 2) [m]
(each panel's tip displacement through its thickness, relative to its root tangent frame: for plates
the mean over the tip edge),
``hub_attitude_error`` (n_t,) [rad]; DIR/summary.json with the modes, the DOFs, the kernel, the build
and solve times, the momentum balance error and, with ``compare``, the error of the reduced model
against the full mesh (both panels' 150 or 60 DOFs) over the first ``compare_time`` seconds; the plots
tip_deflection.png and attitude_error.png.
"""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

from flexmbs import Material, Mesh, Model, generate, run as run_model
from flexmbs.assembly.assembler import dense_array
from flexmbs.bodies import FlexibleBody, Node, RigidBodyEP
from flexmbs.bodies.loads import torque_load
from flexmbs.case import CaseError, check_parameters, resolve, run_command, write_summary
from flexmbs.constraints import Fixed
from flexmbs.elements import BeamEB3D, PlateMITC4
from flexmbs.pipes import call_quietly
from flexmbs.reduction import modes_below, reduce
from flexmbs.rotations import axis_angle_to_matrix, matrix_to_axis_angle, rotation_x, rotation_z
from flexmbs.system import System
from satellite_boom import INERTIA, M_SAT, SIDE            # seed 001, Table 4 and eq. (75)

DEFAULTS = dict(panel="plate", modes=4, cutoff_hz=None, elements=10, width_elements=2, panel_length=5.0,
                panel_width=2.0, panel_thickness=0.02,
                youngs=70e9, density=270.0, spin_rate=0.1, torque=True, slew_torque=100.0, slew_time=4.0,
                t_end=20.0, h=0.005, dt_out=0.05, rho_inf=0.8, compare=True, compare_time=5.0, plots=True)
RUN_TIME = "about 15 s"    # at the defaults on a 2-core machine (--help says it; measured: 15 s wall, 6.6 s CPU,
                           # plots included, most of it the 5 s comparison run of the full plate panels)
HELP = dict(panel="each panel as PlateMITC4 plates (plate) or as a BeamEB3D strip (beam)",
            modes="cantilever modes of each panel (plus the static modes of the frame's inertia loads)",
            cutoff_hz="instead of modes: keep the panel's modes up to this frequency [Hz] (modes_below)",
            elements="elements along each panel's length", width_elements="plate elements across its width",
            panel_length="panel length [m]",
            panel_width="panel width [m]", panel_thickness="panel thickness [m]",
            youngs="panel's Young's modulus [Pa]", density="panel's equivalent density [kg/m^3]",
            spin_rate="initial spin about the principal axis closest to z [rad/s]",
            torque="slew the hub by the sine torque (false: free spin, angular momentum conserved)",
            slew_torque="slew torque T0 [N m]", slew_time="slew duration t_s [s] (one sine period of the torque)",
            t_end="end time [s]", h="step of index3-alpha [s]", dt_out="output interval [s]",
            rho_inf="spectral radius at infinite frequency of index3-alpha",
            compare="also run the full (unreduced) panels over compare_time and report the reduction's error",
            compare_time="length of the comparison run [s]", plots="write the plots")
TYPES = dict(cutoff_hz=float)
CHOICES = dict(panel=("plate", "beam"))
SUMMARY = {"max_tip_deflection_m": "largest panel tip deflection [m]",          # flexmbs.sweep
           "max_attitude_error_rad": "largest hub attitude error [rad]",
           "momentum_balance_error": "max |L - L(0) - e int T dt| / |L(0)|"}
PANELS = ("panel_1", "panel_2")
POISSON = 0.3


def check(p: dict) -> None:
    """Refuse values the case cannot run with, naming the parameter (`flexmbs.case.check_parameters`)."""
    check_parameters(p, DEFAULTS, choices=CHOICES,
                     positive=("modes", "panel_length", "panel_width", "panel_thickness", "youngs",
                                            "density", "slew_time", "compare_time"),
                     nonnegative=("spin_rate", "slew_torque"), at_least={"elements": 2, "width_elements": 1})
    if p["cutoff_hz"] is not None and not (isinstance(p["cutoff_hz"], (int, float)) and p["cutoff_hz"] > 0):
        raise CaseError("cutoff_hz", f"a cut-off frequency, must be a positive number of Hz, got {p['cutoff_hz']!r}")
    if not isinstance(p["modes"], int) or isinstance(p["modes"], bool):
        raise CaseError("modes", f"must be a whole number, got {p['modes']!r}")
    if p["panel_thickness"] >= p["panel_width"]:
        raise CaseError("panel_thickness", f"a thin panel, must be below panel_width = {p['panel_width']:g} m, "
                                           f"got {p['panel_thickness']:g} m")


def panel_model(p: dict) -> Model:
    """One panel as a cantilever along its body x axis, clamped at its root x = 0.

    ``plate``: `PlateMITC4` elements on the rectangle [0, L] x [-b/2, b/2] of the body x-y plane
    (``elements`` x ``width_elements``), the root edge clamped; body z is its thickness direction.
    ``beam``: `BeamEB3D` elements along body x (root node 0 clamped); body y is its thickness direction
    (bending stiffness E b h^3 / 12), body z its width."""
    b, h = p["panel_width"], p["panel_thickness"]
    material = Material(E=p["youngs"], rho=p["density"], nu=POISSON)
    if p["panel"] == "plate":
        return Model(panel_mesh(p["elements"], p["width_elements"], p["panel_length"], b), PlateMITC4(material, h),
                     fixed=[("left", "all")])
    if p["width_elements"] != DEFAULTS["width_elements"]:
        warnings.warn(f"flexible_satellite: `width_elements` = {p['width_elements']} is ignored with panel='beam' "
                      "(one BeamEB3D strip across the width)", stacklevel=2)
    element = BeamEB3D(material, area=b * h, Iy=h * b**3 / 12.0, Iz=b * h**3 / 12.0, J=b * h**3 / 3.0)
    return Model(generate.line(p["elements"], p["panel_length"], dim=3), element, fixed=[("start", "all")])


def panel_mesh(n_length: int, n_width: int, length: float, width: float) -> Mesh:
    """Quadrilaterals on [0, length] x [-width / 2, width / 2] of the body x-y plane, z = 0 (`generate.rectangle`
    moved by -width / 2 along y), node sets ``left`` (the root) and ``right`` (the tip) among its own."""
    grid = generate.rectangle(n_length, n_width, length, width, z=0.0)
    return Mesh(grid.points - [0.0, width / 2.0, 0.0], grid.cells, node_sets=grid.node_sets,
                element_sets=grid.element_sets, source=f"panel_mesh({n_length}, {n_width}, {length}, {width})")


def panel_modes(full: Model, p: dict) -> int:
    """The number of cantilever modes: ``modes``, or those up to ``cutoff_hz`` (at least one)."""
    if p["cutoff_hz"] is None:
        return int(p["modes"])
    return max(1, modes_below(full, p["cutoff_hz"]))


def slew_angle(t, torque: float, t_s: float, inertia: float):
    """phi(t) [rad] of the rigid satellite under the sine slew torque (module docstring), phi'' = T(t) / J_e:
    phi = T0 / J_e (tau t - tau^2 sin(t / tau)) for t <= t_s, tau = t_s / (2 pi), then T0 t_s^2 / (2 pi J_e)."""
    t = np.minimum(np.asarray(t, dtype=float), t_s)
    tau = t_s / (2.0 * np.pi)
    return torque / inertia * (tau * t - tau**2 * np.sin(t / tau))


def slew_impulse(t, torque: float, t_s: float):
    """int_0^t T dt [N m s] along e of the sine slew torque: T0 tau (1 - cos(t / tau)), tau = t_s / (2 pi),
    zero again from t_s on."""
    t = np.minimum(np.asarray(t, dtype=float), t_s)
    tau = t_s / (2.0 * np.pi)
    return torque * tau * (1.0 - np.cos(t / tau))


def slew_torque_law(axis, torque: float, t_s: float):
    """T(t) (3,) [N m]: T0 sin(2 pi t / t_s) e for t < t_s, then 0 (one period: accelerate, then brake)."""
    axis = np.asarray(axis, dtype=float)
    return lambda t: axis * (torque * np.sin(2.0 * np.pi * t / t_s) if t < t_s else 0.0)


def panel_orientation(side: float, kind: str) -> np.ndarray:
    """Body -> global rotation of the panel on the hub's ``side`` (+1: +y, -1: -y) face: its length (body x)
    along side * y, its width along global z and its thickness along global x.  ``beam``: Rot(z, side pi/2)
    (body y, the thickness, to -side x); ``plate``: Rot(z, side pi/2) Rot(x, pi/2) (body y, the width, to z;
    body z, the plate's normal, to side x)."""
    turn = rotation_z(side * np.pi / 2.0)
    return turn @ rotation_x(np.pi / 2.0) if kind == "plate" else turn


def build(panel: Model, p: dict, axis=None) -> System:
    """Hub and the two panels at rest (velocities come from `spin_state`), the slew torque about
    ``axis`` on the hub when ``p["torque"]`` and an axis is given.  Each panel's root is fixed to the
    centre of a hub face: the beam's root node, the plate's frame origin (the middle of its clamped
    root edge)."""
    loads = ([torque_load(slew_torque_law(axis, p["slew_torque"], p["slew_time"]))]
             if p["torque"] and axis is not None else ())
    hub = RigidBodyEP("hub", M_SAT, INERTIA, loads=loads)
    bodies, joints = [hub], []
    root = np.zeros(3) if p["panel"] == "plate" else Node(0)
    for name, side in zip(PANELS, (1.0, -1.0)):
        body = FlexibleBody(panel, name, position=[0.0, side * SIDE / 2.0, 0.0],
                            orientation=panel_orientation(side, p["panel"]), stiffening="none")
        bodies.append(body)
        joints.append(Fixed(hub, body, s_j=root, name=f"root {name[-1]}"))
    return System(bodies, joints)


def principal_spin_axis(system: System) -> tuple[np.ndarray, float]:
    """(e, J_e): the principal axis of the undeformed system's inertia about the origin (its centre
    of mass) closest to z, and its moment of inertia: J = X_r^T M X_r with X_r the generators of a
    rigid rotation (`System.rigid_motion_generators`), the kinetic energy 1/2 w^T J w of a rigid spin w."""
    q0 = system.initial_coordinates()
    X = system.rigid_motion_generators(q0)[:, 3:]
    J = X.T @ (system.mass_matrix(q0) @ X)
    w, V = np.linalg.eigh(0.5 * (J + J.T))
    k = int(np.argmax(np.abs(V[2])))
    e = V[:, k] * np.sign(V[2, k])
    return e, float(w[k])


def tip_deflection(model: Model, delta, kind: str) -> np.ndarray:
    """Tip displacement through the panel's thickness relative to the root frame (n_t,) [m], from the
    panel's elastic coordinates (full or modal: `Model.node_translations`): the plate's mean body-z
    displacement over its tip edge (``right``), the beam's body-y displacement of its last node."""
    if kind == "plate":
        tip = model.mesh.nodes("right")
        rows = dense_array(model.node_translations()[3 * tip + 2]).mean(axis=0)
    else:
        rows = dense_array(model.node_translations()[[3 * (model.mesh.n_nodes - 1) + 1]])[0]
    return np.asarray(delta) @ rows


def attitude_error(R_hub, t, axis, spin: float, phi) -> np.ndarray:
    """Angle [rad] of R_ref^T R_hub with R_ref = Rot(axis, spin t + phi(t)) (n_t,)."""
    return np.array([matrix_to_axis_angle(axis_angle_to_matrix(axis, spin * ti + fi).T @ R)[1]
                     for ti, fi, R in zip(t, phi, R_hub)])


def simulate(panel: Model, p: dict, t_end: float, name: str) -> dict:
    """One run of the satellite with the panels ``panel`` (full or reduced): the arrays of results.npz,
    the momentum balance error and the run's `Results`."""
    e, J_e = principal_spin_axis(build(panel, {**p, "torque": False}))
    system = build(panel, p, e)
    q0 = system.initial_coordinates()
    v0 = system.rigid_motion_velocities(q0, p["spin_rate"] * e)
    n_out = int(round(t_end / p["dt_out"]))
    res = run_model(system, q0=q0, v0=v0, method="index3-alpha", h=p["h"], rho_inf=p["rho_inf"], t_end=t_end,
                    t_eval=np.linspace(0.0, t_end, n_out + 1), name=name,
                    metadata={"case": "flexible_satellite", "parameters": p})
    L = np.array([system.momentum(q, v).angular for q, v in zip(res.q, res.v)])
    T0 = p["slew_torque"] if p["torque"] else 0.0
    impulse = np.outer(slew_impulse(res.t, T0, p["slew_time"]), e)
    phi = slew_angle(res.t, T0, p["slew_time"], J_e)
    arrays = {"t": res.t, "angular_momentum": L,
              "panel_tip_deflection": np.column_stack([tip_deflection(panel, res.bodies[b].delta, p["panel"])
                                                        for b in PANELS]),
              "hub_attitude_error": attitude_error(res.bodies["hub"].rotation, res.t, e, p["spin_rate"], phi)}
    balance = float(np.abs(L - L[0] - impulse).max() / np.linalg.norm(L[0])) if np.any(L[0]) else None
    return {"arrays": arrays, "results": res, "axis": e, "inertia": J_e, "momentum_balance_error": balance}


def reduction_error(reduced: dict, full: dict) -> dict:
    """Error of the reduced run against the full one at the common outputs, relative to the full
    run's largest value: tip deflections and hub attitude error."""
    n = min(len(reduced["t"]), len(full["t"]))
    out = {}
    for key in ("panel_tip_deflection", "hub_attitude_error"):
        a, b = reduced[key][:n], full[key][:n]
        scale = float(np.abs(b).max())
        out[key] = float(np.abs(a - b).max() / scale) if scale > 0 else None
    out["time_s"] = float(full["t"][n - 1])
    return out


def run(out=None, **params) -> dict:
    """The satellite with reduced panels (and the full-mesh comparison with ``compare``); writes
    results.npz, summary.json and the plots to ``out``; returns the summary."""
    p = resolve("flexible_satellite", DEFAULTS, params, check)
    tic = time.process_time()
    full = panel_model(p)
    n_modes = panel_modes(full, p)
    panel = reduce(full, n_modes)
    build_s = time.process_time() - tic
    main = simulate(panel, p, p["t_end"], "reduced")
    res, arrays = main["results"], main["arrays"]
    summary = {"parameters": p, "status": res.status, "message": res.message, "kernel": res.metadata.get("kernel"),
               "modes": n_modes, "panel_full_dofs": int(full.n_dofs), "panel_reduced_dofs": int(panel.n_dofs),
               "system_coordinates": int(res.q.shape[1]),
               "panel_frequencies_hz": [float(f) for f in np.sqrt(np.maximum(panel.omega2[:n_modes], 0.0)) / (2 * np.pi)],
               "spin_axis": main["axis"].tolist(), "spin_axis_inertia_kgm2": main["inertia"],
               "build_s": build_s, "solve_s": res.stats["solve_s"], "n_steps": res.stats["n_steps"],
               "momentum_balance_error": main["momentum_balance_error"],
               "max_tip_deflection_m": float(np.abs(arrays["panel_tip_deflection"]).max()),
               "max_attitude_error_rad": float(np.abs(arrays["hub_attitude_error"]).max())}
    if p["compare"]:
        t_cmp = min(p["compare_time"], p["t_end"])
        ref = simulate(full, p, t_cmp, "full")
        summary["reduction_error"] = {**reduction_error(arrays, ref["arrays"]),
                                      "full_solve_s": ref["results"].stats["solve_s"],
                                      "full_kernel": ref["results"].metadata.get("kernel")}
    if out is not None:
        write(Path(out), arrays, summary, p)
    return summary


def write(out: Path, arrays: dict, summary: dict, p: dict) -> None:
    """results.npz, summary.json and (with ``plots``) tip_deflection.png and attitude_error.png."""
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out / "results.npz", **arrays)
    write_summary(out, summary)
    if p["plots"] and len(arrays["t"]) > 1:
        from flexmbs import plots
        t = arrays["t"]
        tips = {name: (t, arrays["panel_tip_deflection"][:, k]) for k, name in enumerate(PANELS)}
        plots.save(plots.deflection_vs_angle(tips, title="Solar panel tip deflection", xlabel="t [s]"),
                   out / "tip_deflection.png")
        plots.save(plots.deflection_vs_angle({"hub": (t, arrays["hub_attitude_error"])},
                                             title="Hub attitude error against the rigid satellite",
                                             xlabel="t [s]"), out / "attitude_error.png")


def main(argv=None):
    s, args, out, _, seconds = run_command("flexible_satellite", __doc__, run, argv, DEFAULTS, run_time=RUN_TIME,
                                           help=HELP, types=TYPES, choices=CHOICES, check=check)
    print(f"flexible satellite: hub + 2 {args['panel']} panels of {s['modes']} modes ({s['panel_full_dofs']} -> "
          f"{s['panel_reduced_dofs']} DOFs each), spin {args['spin_rate']:g} rad/s, "
          f"{'slew torque ' + format(args['slew_torque'], 'g') + ' N m' if args['torque'] else 'no torque'}: "
          f"{s['status']} ({s['n_steps']} steps, solve {s['solve_s']:.2f} s, kernel {s['kernel']})")
    print(f"  max tip deflection {1e3 * s['max_tip_deflection_m']:.4f} mm, max attitude error "
          f"{s['max_attitude_error_rad']:.3e} rad, angular momentum balance error {s['momentum_balance_error']:.2e}")
    if "reduction_error" in s:
        r = s["reduction_error"]
        print(f"  reduced against full panels over {r['time_s']:g} s: tip deflection {r['panel_tip_deflection']:.2e}, "
              f"attitude error {r['hub_attitude_error']:.2e} of the full run's largest value")
    print(f"  wrote {out}/results.npz and plots in {seconds:.1f} s")
    return 0 if s["status"] == "finished" else 1


if __name__ == "__main__":
    sys.exit(call_quietly(main))
