"""Coupled rigid-flexible mechanisms (docs/coupled.md).

- bridge: the spin-up beam with a rigid hub driven by an AngleDriver and the beam a FlexibleBody
  clamped to it (index3-alpha) reproduces the prescribed fast path (Kane, Ryan and Banerjee 1987,
  ../shared/BENCHMARKS.md sec. 3), and the drive torque is (J_hub + rho A L^3 / 3) Omega' to within
  the beam's deformation;
- a conservative coupled system (torque-free hub with an initial spin, no stiffening) keeps
  T + V_strain and the angular momentum about the axis;
- the coupled slider-crank (Simeon 1996, ../shared/BENCHMARKS.md sec. 4): the peak deflection
  converges with elements, and the joint reactions of a very stiff rod are those of a rigid rod;
- bad input: a joint on a node that does not exist, a flexible body without reference conditions.
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs import BeamEB2D, Material, Model, generate
from flexmbs.bodies import FlexibleBody, Node, RigidBodyEP
from flexmbs.constraints import Fixed, Revolute
from flexmbs.formulations.index1 import Index1
from flexmbs.integrators import simulate
from flexmbs.mechanisms.coupled import angular_momentum, axial_torque
from flexmbs.system import System

CASES = Path(__file__).resolve().parents[1] / "cases"
sys.path.insert(0, str(CASES))

import slider_crank  # noqa: E402
import spinup_beam  # noqa: E402


def test_spinup_coupled_equals_prescribed():
    """Driven hub + clamped FlexibleBody (index3-alpha, h = 0.01 s) vs fm.run on the Model (DOP853)."""
    t_end, ws, ts, J_hub = 1.0, 6.0, 15.0, 40.0
    system, hub, beam, model = spinup_beam.build_coupled(2, ws, ts, hub_inertia=J_hub)
    t = np.linspace(0.0, t_end, 11)
    res = fm.run(system, method="index3-alpha", h=0.01, t_end=t_end, t_eval=t, rho_inf=0.9, store=False)
    assert res.success
    fast = fm.run(model, method="DOP853", rtol=1e-10, atol=1e-12, t_end=t_end, dt_out=0.1)
    peak = np.abs(fast.delta).max()
    err = np.abs(res.bodies[beam.name].delta - fast.delta).max() / peak
    print(f"coupled vs prescribed: {err:.2e} of the peak")
    assert err < 5e-4                      # O(h^2) of index3-alpha; measured 1.3e-4 (1 s), 2.4e-5 (3 s, 4 el.)
    drive = axial_torque(system, system.constraint("drive"), hub, res.t, res.q, res.multipliers)
    # the drive is the only moment about z on hub + beam: drive = dH_z/dt (H_z with the elastic motion)
    dH = np.gradient(angular_momentum(system, np.hstack([res.q, res.v])), res.t)
    rigid = (J_hub + spinup_beam.rigid_beam_inertia()) * np.array([spinup_beam.SpinUp(ws, ts)._law(ti)[2]
                                                                    for ti in res.t])
    print(f"drive torque at t_end {drive[-1]:.4f} N m, dH/dt {dH[-1]:.4f}, rigid beam {rigid[-1]:.4f}")
    assert np.abs(drive - dH)[1:-1].max() < 0.01 * np.abs(drive).max()


@pytest.mark.parametrize("stiffening", [None, pytest.param("axial-strain", marks=pytest.mark.slow)])
def test_torque_free_hub_conserves_energy_and_momentum(stiffening):
    """Hub with an initial spin of 2 rad/s, no drive: T + 1/2 delta^T k delta (+ U_nl of the
    axial-strain stiffening) and H_z stay constant.  Without stiffening, and with
    ``stiffening="axial-strain"``, whose forces are the gradient of U_nl (with "omega" the energy
    is not conserved: -K_geo(omega) delta has no potential).

    The beam is the spin-up beam made 100 times softer (E = 7e8 Pa), so that the explicit
    integrator takes few steps."""
    element = BeamEB2D(Material(E=7e8, rho=spinup_beam.DENSITY), spinup_beam.AREA, spinup_beam.INERTIA)
    model = Model(generate.line(2, spinup_beam.LENGTH), element, fixed=[("start", "all")], stiffening=False)
    z = np.array([0.0, 0.0, 1.0])
    hub = RigidBodyEP("hub", 10.0, np.diag([20.0, 20.0, 40.0]), angular_velocity=2.0 * z)
    beam = FlexibleBody(model, "beam", angular_velocity=2.0 * z, stiffening=stiffening)
    system = System([hub, beam], [Revolute(None, hub, at=np.zeros(3), axis=z, name="bearing"),
                                  Fixed(hub, beam, s_j=Node(0), name="clamp")])
    form = Index1(system, solver="augmented")
    t = np.linspace(0.0, 0.3, 7)
    x0 = form.state0(system.initial_coordinates(), system.initial_velocities())
    sol = simulate(form, (0.0, t[-1]), x0, method="DOP853", rtol=1e-10, atol=1e-12, t_eval=t)
    n, sl = system.n_q, system.slice(beam)
    parts = np.array([system.energy(x[:n], x[n:]) for x in sol.x])               # (T, V_g, U) per output
    E = parts.sum(axis=1)                                                          # T + V_g + U
    H = angular_momentum(system, sol.x)
    strain = max(beam.strain_energy(x[:n][sl]) for x in sol.x)
    assert np.array_equal(parts[:, 2], [beam.strain_energy(x[:n][sl]) for x in sol.x])   # U: the beam's
    print(f"energy {E[0]:.6f} J, drift {np.ptp(E):.2e} (T + V_g alone: {np.ptp(parts[:, :2].sum(axis=1)):.2e}); "
          f"strain up to {strain:.3g} J; H {H[0]:.6f}, drift {np.ptp(H):.2e}")
    assert strain > 1e-6 * E[0]            # the beam does deform
    # T + V_g alone is not conserved: it trades with U (without stiffening measured: ptp(T + V_g) 2.06 J,
    # ptp(T + V_g + U) 7.1e-11 J of E = 880 J)
    assert np.ptp(parts[:, :2].sum(axis=1)) > 1e6 * np.ptp(E)
    if stiffening == "axial-strain":       # the nonlinear energy is far above the drift
        assert max(abs(beam._axial.energy(x[:n][sl][7:])) for x in sol.x) > 1e3 * np.ptp(E)
    assert np.ptp(E) < 1e-8 * E[0]
    assert np.ptp(H) < 1e-8 * abs(H[0])
    assert H[0] == pytest.approx((40.0 + spinup_beam.rigid_beam_inertia()) * 2.0, rel=1e-12)


def test_joint_on_missing_node_is_refused():
    model = spinup_beam.build(2)
    beam = FlexibleBody(model, "beam")
    hub = RigidBodyEP("hub", 1.0, np.eye(3))
    with pytest.raises(ValueError, match=r"'beam'.*no node 7.*0\.\.2"):
        Fixed(hub, beam, s_j=Node(7))


def test_flexible_body_without_reference_conditions_is_refused():
    model = Model(generate.line(2, 1.0), BeamEB2D(Material(E=2e11, rho=7850.0), 1e-4, 1e-8))
    with pytest.raises(ValueError, match=r"body 'free'.*leave 3 of the mesh's rigid-body modes free"):
        FlexibleBody(model, "free")


# -- coupled slider-crank ---------------------------------------------------------------------------
def _first_peak(elements, **kw):
    res, _, extras = slider_crank.run(coupled=True, elements=elements, revolutions=0.15, plots=False, **kw)
    assert res.status == "finished"
    return slider_crank.peak(extras)


@pytest.mark.slow
def test_coupled_slider_crank_converges_with_elements():
    """Peak mid-span deflection over the first 54 deg (its first maximum, near 34 deg): Hermite beams
    converge fast, so the change from 4 to 8 elements is much smaller than from 2 to 4."""
    p2, p4, p8 = (_first_peak(n)[0] for n in (2, 4, 8))
    print(f"first peak: {1e3 * p2:.5f}, {1e3 * p4:.5f}, {1e3 * p8:.5f} mm")
    assert 1.5e-3 < p8 < 2.2e-3
    assert abs(p8 - p4) < 0.2 * abs(p4 - p2)


def _rigid_rod_system(crank=0.15, rod=0.30, width=0.008, density=7870.0, W=150.0, m3=0.075552):
    """The slider-crank with a rigid rod of the same mass and the same mass distribution (line mass)."""
    from flexmbs.constraints import AngleDriver, Spherical
    from flexmbs.mechanisms import constant_speed
    z = np.array([0.0, 0.0, 1.0])
    m = density * width**2 * rod
    J1 = slider_crank.CRANK_INERTIA
    c = RigidBodyEP("crank", slider_crank.CRANK_MASS, np.diag([1e-3 * J1, J1, J1]), centroid=[crank / 2, 0, 0],
                    angular_velocity=W * z)
    r = RigidBodyEP("rod", m, np.diag([1e-6 * m * rod**2, m * rod**2 / 12, m * rod**2 / 12]), centroid=[rod / 2, 0, 0],
                    position=[crank, 0, 0], velocity=[0, W * crank, 0], angular_velocity=-W * crank / rod * z)
    s = RigidBodyEP("slider", m3, np.diag([m3 * 1e-4] * 3), position=[crank + rod, 0, 0])
    cons = [Revolute(None, c, at=np.zeros(3), axis=z, name="crank pivot"),
            AngleDriver(None, c, z, constant_speed(W), name="drive"),
            Revolute(c, r, s_j=np.zeros(3), axis=z, name="pin A"),
            Spherical(r, s, s_i=np.array([rod, 0, 0]), name="pin B"),
            slider_crank.PlanarSlide(None, s, at=[crank + rod, 0, 0], axis=[1, 0, 0], name="slide")]
    return System([c, r, s], cons)


@pytest.mark.slow
def test_stiff_rod_reactions_are_the_rigid_ones():
    """E = 2e15 Pa (1e4 x steel): the coupled model's drive torque and joint reactions equal those of the
    rigid slider-crank (index-1 "lagrange", DOP853, the multipliers of its accelerations at the outputs) to
    1 % of their peaks after the start-up (crank angle > 45 deg)."""
    res, _, ex = slider_crank.run(coupled=True, elements=2, revolutions=0.25, youngs=2e15, plots=False)
    system = _rigid_rod_system()
    ref = fm.run(system, formulation="lagrange", method="DOP853", rtol=1e-10, atol=1e-12, t_end=res.t[-1],
                 t_eval=res.t, store=False)
    lam = ref.multipliers
    rigid = {"drive_torque": axial_torque(system, system.constraint("drive"), system.body("crank"), ref.t, ref.q,
                                          lam), **slider_crank.reactions(system, ref.t, ref.q, lam)}
    late = ex["crank_angle"] > np.radians(45.0)        # the start-up transient decays like rho_inf^steps
    for key, ref in rigid.items():
        err = np.abs(ex[key] - ref)[late].max() / np.abs(ref).max()
        print(f"{key}: peak {np.abs(ref).max():.4g}, difference {err:.2e} of it")
        assert err < 0.01, key


# -- coupled four-bar -------------------------------------------------------------------------------
@pytest.mark.slow
def test_coupled_four_bar_stiff_coupler_follows_the_rigid_linkage():
    """E = 2e15 Pa: the rocker angle of the coupled four-bar is the rigid linkage's theta_4(phi)
    (flexmbs.mechanisms.FourBar, vector loop) to 1e-6 rad; no redundant equations."""
    import four_bar
    p = {**four_bar.DEFAULTS, "elements": 2, "youngs": 2e15, "revolutions": 0.1, "plots": False}
    system, _, _ = four_bar.build_coupled(**{k: p[k] for k in ("elements", "ground", "crank", "coupler", "rocker",
                                                               "depth", "width", "youngs", "density",
                                                               "crank_speed", "stiffening")})
    mob = system.mobility(0.0, system.initial_coordinates())
    assert mob["rank"] == mob["n_c"] and not mob["redundant"]
    t_end = 2 * np.pi * p["revolutions"] / p["crank_speed"]
    t = np.linspace(0.0, t_end, 6)
    res = fm.run(system, method="index3-alpha", h=p["h_coupled"], t_end=t_end, t_eval=t, rho_inf=0.9,
                 store=False)
    linkage = fm.mechanisms.FourBar(p["ground"], p["crank"], p["coupler"], p["rocker"], branch="open")
    for ti, R in zip(res.t, res.bodies["rocker"].rotation):
        theta = np.arctan2(R[1, 0], R[0, 0])
        ref = linkage.state(p["crank_speed"] * ti).link("rocker").theta
        assert abs(np.angle(np.exp(1j * (theta - ref)))) < 1e-6


def test_coupled_cases_write_their_arrays(tmp_path):
    """The command lines of the coupled cases run and write the promised arrays (tiny runs)."""
    assert slider_crank.main(["--coupled", "--elements", "2", "--revolutions", "0.02", "--out",
                              str(tmp_path / "sc"), "--no-plots"]) == 0
    d = np.load(tmp_path / "sc" / "results.npz")
    for key in ("t", "displacement", "nodes", "crank_angle", "midspan_deflection", "drive_torque",
                "reaction_crank_pivot", "reaction_pin_A", "reaction_pin_B", "reaction_slide"):
        assert key in d and np.all(np.isfinite(d[key])), key
    assert d["displacement"].shape == (len(d["t"]), 3, 2)
    assert spinup_beam.main(["--coupled", "--torque", "--elements", "2", "--t-end", "0.2", "--out",
                             str(tmp_path / "sb"), "--no-plots"]) == 0
    d = np.load(tmp_path / "sb" / "results.npz")
    for key in ("t", "displacement", "nodes", "hub_angle", "hub_speed", "drive_torque"):
        assert key in d and np.all(np.isfinite(d[key])), key
    assert d["hub_speed"][-1] > 0.0
    import four_bar
    for mode in ("axial-strain", "omega"):
        out = tmp_path / f"fb-{mode}"
        assert four_bar.main(["--coupled", "--elements", "2", "--revolutions", "0.01", "--coupled-stiffening", mode,
                              "--out", str(out), "--no-plots"]) == 0
        d = np.load(out / "results.npz")
        for key in ("t", "displacement", "nodes", "crank_angle", "midspan_deflection", "drive_torque"):
            assert key in d and np.all(np.isfinite(d[key])), key
        assert json.loads((out / "summary.json").read_text())["stiffening"] == mode


def test_torque_driven_hub_angular_momentum_is_the_torque_impulse():
    """--torque: the only moment about z is T(t) = J Omega'(t), so H_z(t) = J Omega(t) (J = J_hub + rho A L^3/3)
    whatever the beam does; the hub speed differs from Omega(t) by the beam's relative motion."""
    ws, ts, J_hub = 6.0, 15.0, 40.0
    system, hub, _, _ = spinup_beam.build_coupled(2, ws, ts, torque=True, hub_inertia=J_hub)
    t = np.linspace(0.0, 2.0, 5)
    res = fm.run(system, method="index3-alpha", h=0.01, t_end=t[-1], t_eval=t, rho_inf=0.9, store=False)
    H = angular_momentum(system, np.hstack([res.q, res.v]))
    law = np.array([spinup_beam.SpinUp(ws, ts)._law(ti)[1] for ti in res.t])
    J = J_hub + spinup_beam.rigid_beam_inertia()
    print(f"H_z {H[-1]:.6f}, J Omega {J * law[-1]:.6f}")
    assert np.abs(H - J * law).max() < 1e-4 * J * law[-1]          # measured 1.2e-5 (h = 0.01 s)


def test_explicit_method_on_a_stiff_flexible_system_warns(monkeypatch):
    """An explicit method on a System with a flexible body: the rod's highest frequency (its Model's
    largest_frequency) sets the number of stable steps, and past WARN_STEPS the run is refused
    in words before it starts ("this system is stiff ...: use index3-alpha"); implicit methods
    and rigid-only systems are not checked."""
    from flexmbs import stiffness
    system, _, model = slider_crank.build_coupled(elements=2)
    w = stiffness.largest_frequency(model)
    beta = stiffness.imaginary_stability_limit("DOP853")
    with pytest.warns(stiffness.StiffnessWarning,
                      match=r"this system is stiff \(its flexible body 'rod'\): use index3-alpha\. .* DOP853"):
        steps = stiffness.check_explicit(system, "DOP853", (0.0, 100.0), warn_steps=10)
    assert steps == pytest.approx(w * 100.0 / beta)
    assert stiffness.check_explicit(system, "index3-alpha", (0.0, 100.0), warn_steps=10) is None
    crank = RigidBodyEP("crank", 1.0, np.eye(3))
    assert stiffness.check_explicit(System([crank], [Fixed(None, crank)]), "DOP853", (0.0, 100.0),
                                    warn_steps=10) is None
    monkeypatch.setattr(stiffness, "WARN_STEPS", 0.5 * w * 1e-6 / stiffness.imaginary_stability_limit("RK45"))
    q0, v0 = system.initial_coordinates(), system.initial_velocities()
    with pytest.warns(stiffness.StiffnessWarning, match="use index3-alpha"):
        fm.run(system, method="RK45", rtol=1e-6, atol=1e-8, q0=q0, v0=v0, t_end=1e-6, t_eval=[0.0, 1e-6], store=False)
