"""Rotating beams in bending: Southwell frequencies, Campbell diagrams, the spin-up benchmark.

References
----------
- Flapwise frequencies of a rotating cantilever: the problem of J. R. Wright, J. E. Smith,
  R. W. Thresher, J. L. C. Wang, Vibration modes of centrifugally stiffened beams, J. Appl.
  Mech. 49(1) (1982) 197-202.  The numbers below are NOT the published table: they are the
  independently computed [DER] tables of BENCHMARKS.md sec. 2.3 (Hermite FE with 40/80
  elements, Richardson extrapolation, < 1e-6 from 80/160 elements).
- Non-rotating cantilever: (beta_n L)^2 = 3.516015, 22.034492, 61.697214.
- Spin-up: T. R. Kane, R. R. Ryan, A. K. Banerjee, Dynamics of a cantilever beam attached to
  a moving base, J. Guidance Control Dyn. 10(2) (1987) 139-151; parameters and spin law of
  BENCHMARKS.md sec. 3 (the published curve is not available, so the checks are physical:
  boundedness, divergence without stiffening, convergence, agreement, energy).
"""
import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.campbell import (DIRECTIONS, campbell_diagram, classify_modes, direction_shares, from_dimensionless,
                              time_scale, to_dimensionless)
from flexmbs.modal import natural_frequencies
from flexmbs.motion import ConstantRotation, SpinUp

CASES = Path(__file__).resolve().parents[1] / "cases"
sys.path.insert(0, str(CASES))

import rotating_beam_3d  # noqa: E402
import rotating_beam_modes  # noqa: E402
import spinup_beam  # noqa: E402
from flexmbs.assembly.assembler import dense_array

# BENCHMARKS.md sec. 2.3 [DER], flapwise lambda_1..3; hub ratio 0 and 1
FLAP_DELTA0 = {0: (3.5160, 22.0345, 61.6972), 1: (3.6816, 22.1810, 61.8418), 2: (4.1373, 22.6149, 62.2732),
               3: (4.7973, 23.3203, 62.9850), 4: (5.5850, 24.2733, 63.9668), 5: (6.4495, 25.4461, 65.2050),
               6: (7.3604, 26.8091, 66.6839), 7: (8.2996, 28.3341, 68.3860), 8: (9.2568, 29.9954, 70.2930),
               9: (10.2257, 31.7705, 72.3867), 10: (11.2023, 33.6404, 74.6493), 11: (12.1843, 35.5890, 77.0638),
               12: (13.1702, 37.6031, 79.6145)}
FLAP_DELTA1 = {2: (4.8337, 23.3660, 63.0675), 6: (10.4439, 32.0272, 72.9863), 12: (19.7215, 51.0701, 98.5268)}
BETA_L_SQUARED = np.array([3.516015, 22.034492, 61.697214])

# the Kane beam: L = 10 m, EI = 1.4e4 N m^2, EA = 2.8e7 N, rho A = 1.2 kg/m
L, E, RHO, A, I = 10.0, 7e10, 3000.0, 4e-4, 2e-7


def beam_3d(Iy=I / 4, Iz=I, J=None, area=A):
    """3D section: flapwise Iy (w), chordwise Iz (v); distinct so that the families never coincide."""
    return fm.BeamEB3D(fm.Material(E, RHO, 0.3), area, Iy=Iy, Iz=Iz, J=Iy + Iz if J is None else J)


def model_factory(n_el=10, hub_ratio=0.0, element=None):
    element = beam_3d() if element is None else element
    mesh = fm.generate.line(n_el, L, dim=3, origin=(hub_ratio * L, 0.0, 0.0))
    return lambda Omega: fm.Model(mesh, element, motion=ConstantRotation(Omega), fixed=[("start", "all")])


def family_lambdas(gammas, direction, n_el=10, hub_ratio=0.0, gyroscopic=False, element=None, n=3):
    """lambda (n_gamma, n) of one direction, each gamma at its own Omega = gamma / c."""
    element = beam_3d() if element is None else element
    EI = E * (element.Iy if direction == "flap" else element.Iz)
    c = time_scale(element.material.rho * element.area, EI, L)
    d = campbell_diagram(model_factory(n_el, hub_ratio, element), np.asarray(gammas, float) / c, n_modes=4 * n + 2,
                         gyroscopic=gyroscopic)
    return d.family(direction, n) * c


# -- geometric stiffening: the closed-form centrifugal tension -------------------------------------
@pytest.mark.parametrize("element, dim", [(fm.BeamEB2D(fm.Material(E, RHO), A, I), 2), (beam_3d(), 3)],
                         ids=["planar", "3d"])
@pytest.mark.parametrize("hub", [0.0, 4.0])
def test_stiffness_of_the_centrifugal_tension_is_the_closed_form_one(element, dim, hub):
    """K_geo(Omega) = int P v'^2 dx (+ w'^2 in 3D) with P(r) = rho A Omega^2 ((R + L)^2 - r^2) / 2,
    r = R + x the distance from the axis; the unit-case static solution reproduces it exactly."""
    from flexmbs.assembly import Assembler
    Omega, n_el = 3.0, 5
    mesh = fm.generate.line(n_el, L, dim=dim, origin=(hub,) + (0.0,) * (dim - 1))
    model = fm.Model(mesh, element, motion=ConstantRotation(Omega), fixed=[("start", "all")])
    assert model.stiffening
    X = mesh.points[mesh.cells["line"]]

    def P(x):
        return RHO * A * Omega**2 * ((hub + L) ** 2 - x[..., 0] ** 2) / 2

    asm = Assembler(mesh.cells["line"], mesh.n_nodes, element.dofs_per_node)
    Kg = asm.matrix(element.k_geo(X, P)).toarray()[np.ix_(model.free, model.free)]
    np.testing.assert_allclose(dense_array(model.geometric_stiffness(0.0)), Kg, rtol=0, atol=1e-10 * np.abs(Kg).max())
    # it scales with Omega^2 and follows the spin-up law in time
    spin = fm.Model(mesh, element, motion=SpinUp(Omega, 15.0), fixed=[("start", "all")])
    Om_t = SpinUp(Omega, 15.0).state(6.0).omega[2]
    np.testing.assert_allclose(dense_array(spin.geometric_stiffness(6.0)), (Om_t / Omega) ** 2 * Kg,
                               rtol=0, atol=1e-10 * np.abs(Kg).max())


# -- Southwell: flapwise frequencies against the table --------------------------------------------
def test_flapwise_frequencies_match_the_table_modes_1_to_3_up_to_gamma_12():
    gammas = sorted(FLAP_DELTA0)
    lam = family_lambdas(gammas, "flap", n_el=10)
    ref = np.array([FLAP_DELTA0[g] for g in gammas])
    err = np.abs(lam / ref - 1)
    print(f"flapwise, hub ratio 0, 10 elements: largest relative error {err.max():.2e}")
    assert err.max() <= 1e-3


def test_flapwise_frequencies_with_a_hub_of_one_beam_length():
    gammas = sorted(FLAP_DELTA1)
    lam = family_lambdas(gammas, "flap", n_el=10, hub_ratio=1.0)
    err = np.abs(lam / np.array([FLAP_DELTA1[g] for g in gammas]) - 1)
    assert err.max() <= 1e-3, err


def test_non_rotating_frequencies_are_the_cantilever_ones():
    """Omega = 0 on a spinning-frame model: (beta_n L)^2, and exactly the fixed-frame model's values."""
    element = beam_3d()
    spinning = model_factory(40, element=element)(0.0)
    fixed = fm.Model(spinning.mesh, element, fixed=[("start", "all")])
    assert spinning.stiffening and not fixed.stiffening
    c = time_scale(RHO * A, E * element.Iy, L)
    lam = family_lambdas([0.0], "flap", n_el=40)[0]
    np.testing.assert_allclose(lam, BETA_L_SQUARED, rtol=2e-6)
    w_spin = natural_frequencies(spinning, n_modes=8, gyroscopic=True)[0]
    w_fixed = natural_frequencies(fixed, n_modes=8)[0]
    np.testing.assert_allclose(w_spin, w_fixed, rtol=1e-10)
    np.testing.assert_allclose(np.sort(w_fixed)[[0, 2, 4]] * c, BETA_L_SQUARED, rtol=2e-6)     # flap modes


# -- chordwise models ------------------------------------------------------------------------------
@pytest.mark.parametrize("hub_ratio", [0.0, 1.0])
def test_chordwise_without_coriolis_is_flapwise_shifted_by_gamma_squared(hub_ratio):
    """lambda_c^2 = lambda_f^2 - gamma^2 holds exactly in the discrete model (same matrices - gamma^2 [m])."""
    gammas = np.array([0.0, 1.5, 4.0, 8.0, 12.0])
    flap = family_lambdas(gammas, "flap", hub_ratio=hub_ratio)
    chord = family_lambdas(gammas, "chord", hub_ratio=hub_ratio)
    np.testing.assert_allclose(chord**2, flap**2 - gammas[:, None] ** 2, rtol=1e-8)


def test_chordwise_with_coriolis_tends_to_the_stretch_model_for_a_rigid_axis():
    """The Coriolis coupling to the axial motion lowers lambda_c; as EA grows it vanishes like 1/EA."""
    gammas = np.array([0.0, 6.0, 12.0])
    stretch = family_lambdas(gammas, "chord")
    gaps = []
    for area_factor in (1.0, 100.0):      # EA x 100 at equal EI and rho A: area x 100, density / 100
        el = fm.BeamEB3D(fm.Material(E, RHO / area_factor, 0.3), A * area_factor, Iy=I / 4, Iz=I, J=1.25 * I)
        coriolis = family_lambdas(gammas, "chord", gyroscopic=True, element=el)
        np.testing.assert_allclose(coriolis[0], stretch[0], rtol=1e-6)           # no spin, no coupling
        assert np.all(coriolis[1:] < stretch[1:])
        gaps.append(np.abs(stretch[1:] - coriolis[1:]).max())
    assert 0 < gaps[1] < gaps[0] / 50
    # the flapwise family is not coupled by Coriolis forces (omega x w' = 0)
    np.testing.assert_allclose(family_lambdas(gammas, "flap", gyroscopic=True), family_lambdas(gammas, "flap"),
                               rtol=1e-9)


def test_mode_directions_from_dof_energies():
    """A soft torsion makes the first torsion mode appear among the lowest: each mode is recognised."""
    element = beam_3d(J=I / 2000)
    model = model_factory(8, element=element)(2.0)
    w, phi = natural_frequencies(model, n_modes=12, gyroscopic=False)
    shares = direction_shares(model, phi)
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)
    dirs = classify_modes(model, phi)
    assert {"flap", "chord", "torsion"} <= set(dirs)
    assert np.all(shares.max(axis=1) > 0.999)            # straight beam: the groups are uncoupled
    # a planar beam: chord (bending in the plane of rotation) and axial
    beam2d = fm.Model(fm.generate.line(6, L), fm.BeamEB2D(fm.Material(E, RHO), A, I),
                      motion=ConstantRotation(3.0), fixed=[("start", "all")])
    w2, phi2 = natural_frequencies(beam2d, n_modes=beam2d.n_dofs, gyroscopic=False)
    dirs2 = classify_modes(beam2d, phi2)
    assert set(dirs2) == {"chord", "axial"} and dirs2[0] == "chord"
    assert dirs2.count("axial") == 6
    assert list(DIRECTIONS) == ["axial", "chord", "flap", "torsion"]


def test_dimensionless_helpers_and_bad_input():
    c = time_scale(1.2, 1.4e4, 10.0)
    assert to_dimensionless(6.0, 1.2, 1.4e4, 10.0) == pytest.approx(5.5549, abs=1e-4)      # BENCHMARKS 2.4
    assert from_dimensionless(5.5549, 1.2, 1.4e4, 10.0) == pytest.approx(5.5549 / c)
    with pytest.raises(ValueError, match="`EI`"):
        time_scale(1.2, -1.0, 10.0)
    with pytest.raises(ValueError, match="`direction`"):
        campbell_diagram(model_factory(3), [0.0], n_modes=2).family("lead-lag", 1)
    with pytest.raises(ValueError, match="parallel"):
        direction_shares(model_factory(3)(1.0), np.zeros((18, 1)), spin_axis=(1.0, 0.0, 0.0))


# -- the spin-up benchmark -------------------------------------------------------------------------
def spinup(n_el=10, h=0.01, t_end=20.0, stiffening=True, formulation="lagrange", method="generalized-alpha",
           omega_s=6.0, dt_out=0.04, **kw):
    model = spinup_beam.build(n_el, omega_s, 15.0, stiffening=stiffening)
    return fm.run(model, formulation=formulation, method=method, h=h, t_end=t_end, dt_out=dt_out,
                  divergence_limit=spinup_beam.DIVERGENCE_LIMIT, **{"compute_energies": False, **kw})


def tip(res):
    return res.displacement[:, -1, 1]


def test_spinup_with_stiffening_is_bounded_and_converges_with_elements():
    coarse, fine = spinup(6), spinup(12)
    assert coarse.success and fine.success
    peak = np.abs(tip(fine)).max()
    assert 0.5 < peak < 0.65                               # the lag of the spin-up, about -0.574 m
    assert np.abs(tip(fine)[fine.t >= 15.0]).max() < 0.02 * peak    # settles once the spin is steady
    assert np.abs(tip(coarse) - tip(fine)).max() <= 1e-4 * peak
    v_min, t_min = spinup_beam.tip_minimum(fine)
    assert v_min == pytest.approx(-0.5744, abs=2e-4) and 6.5 < t_min < 7.0


def test_spinup_converges_at_second_order_in_the_step():
    runs = [spinup(6, h=h) for h in (0.04, 0.02, 0.01)]
    d1, d2 = (np.abs(tip(a) - tip(b)).max() for a, b in zip(runs, runs[1:]))
    order = np.log2(d1 / d2)
    print(f"spin-up: observed order {order:.2f}, h = 0.01 s error about {d2 / 3:.1e} m")
    assert abs(order - 2.0) < 0.3
    assert d2 / 3 < 1e-4 * np.abs(tip(runs[-1])).max()     # Richardson: error of h = 0.01 s


def test_spinup_without_stiffening_diverges_above_the_first_bending_frequency():
    omega_1 = spinup_beam.first_bending_frequency(10)
    assert omega_1 == pytest.approx(3.5160 / L**2 * np.sqrt(E * I / (RHO * A)), rel=1e-4)
    res = spinup(10, stiffening=False, dt_out=0.01)
    assert res.status == "diverged" and "grows without bound" in res.message
    assert 10.0 < res.t[-1] < 11.0 < 20.0
    # the frozen-frame model without stiffening loses positive definiteness exactly at omega_1
    model = spinup_beam.build(10, stiffening=False)
    below = fm.Model(model.mesh, model.element, motion=ConstantRotation(0.99 * omega_1), fixed=[("start", "all")],
                     stiffening=False)
    above = fm.Model(model.mesh, model.element, motion=ConstantRotation(1.01 * omega_1), fixed=[("start", "all")],
                     stiffening=False)
    assert natural_frequencies(below, n_modes=1, gyroscopic=False)[0][0] > 0
    assert natural_frequencies(above, n_modes=1, gyroscopic=False)[0][0] < 0


@pytest.mark.parametrize("formulation, method", [("lagrange", "midpoint"), ("gibbs-appell", "generalized-alpha"),
                                                 ("gibbs-appell", "midpoint"), ("hamilton", "midpoint")])
def test_formulations_agree_on_the_spinup(formulation, method):
    ref = spinup(10, t_end=8.0, dt_out=0.05)
    res = spinup(10, t_end=8.0, dt_out=0.05, formulation=formulation, method=method)
    assert res.success
    assert np.abs(res.delta - ref.delta).max() <= 1e-5 * np.abs(ref.delta).max()


def test_spinup_energy_balance_closes():
    """T + V - T(0) - V(0) = work through the frame + work of the stiffening force, to integrator accuracy."""
    res = spinup(8, t_end=8.0, dt_out=0.1, compute_energies=True)
    e, err = res.energies, np.abs(res.energy_balance_error())
    T, W = np.abs(e["T"]).max(), np.abs(e["W_frame"]).max()
    assert T > 1e3 and W > 1e3                     # the rigid-body spin's energy flows in through the frame
    assert err.max() <= 1e-5 * T
    assert err.max() <= 1e-2 * np.abs(e["V"]).max()


def test_linear_option_skips_the_residual_check_with_the_same_result():
    """linear=True: one f per step instead of two, same states to round-off."""
    for method in ("generalized-alpha", "midpoint"):
        checked = spinup(6, t_end=4.0, method=method, linear=False)
        fast = spinup(6, t_end=4.0, method=method, linear=True)
        assert fast.stats["n_rhs"] < 0.6 * checked.stats["n_rhs"]
        np.testing.assert_allclose(fast.delta, checked.delta, rtol=0, atol=1e-10 * np.abs(checked.delta).max())
    with pytest.raises(ValueError, match="`linear`"):
        spinup(3, t_end=0.1, method="midpoint", linear="yes")


# -- 3D: flapwise and chordwise together -----------------------------------------------------------
def test_3d_beam_chordwise_response_equals_the_planar_spinup_and_flap_follows_the_quasi_static_one():
    res3 = rotating_beam_3d.run(elements=6, t_end=8.0, dt_out=0.05, tip_load=10.0)
    res2 = spinup(6, t_end=8.0, dt_out=0.05)
    assert res3.success and res3.displacement.shape[1:] == (7, 3)
    peak = np.abs(tip(res2)).max()
    assert np.abs(res3.displacement[:, -1, 1] - tip(res2)).max() <= 1e-6 * peak
    # steady spin, damped: the flap deflection settles on the stiffened static one, smaller than at rest
    steady = rotating_beam_3d.run(elements=6, t_s=0.0, t_end=12.0, dt_out=0.1, damping=0.2, tip_load=10.0)
    model = rotating_beam_3d.build(elements=6, t_s=0.0, tip_load=10.0)
    v_static, w_static = rotating_beam_3d.quasi_static_tip(model, [12.0])[0]
    w_rest = 10.0 * L**3 / (3 * E * I)
    assert abs(v_static) < 1e-9 and 0.2 * w_rest < w_static < 0.5 * w_rest
    assert steady.displacement[-1, -1, 2] == pytest.approx(w_static, rel=1e-2)


# -- the case scripts ------------------------------------------------------------------------------
def test_spinup_case_writes_its_files_and_reports_the_divergence(tmp_path, capsys):
    code = spinup_beam.main(["--elements", "4", "--t-end", "12", "--h", "0.02", "--dt-out", "0.04",
                             "--out", str(tmp_path)])
    assert code == 0
    text = capsys.readouterr().out
    assert "diverged at t = 10" in text and "as expected" in text and "Traceback" not in text
    for name in ("results.npz", "tip_deflection.png", "summary.json"):
        assert (tmp_path / name).stat().st_size > 0, name
    data = np.load(tmp_path / "results.npz")
    assert data["t"].shape == (301,) and data["displacement"].shape == (301, 5, 2) and data["nodes"].shape == (5, 2)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["stiffened"]["status"] == "finished" and summary["unstiffened"]["status"] == "diverged"
    assert summary["stiffened"]["tip_min"] == pytest.approx(-0.5744, abs=1e-3)
    # the unstiffened model's results on request: still exit code 0, the divergence is the expected physics
    code = spinup_beam.main(["--elements", "4", "--t-end", "12", "--h", "0.02", "--no-stiffening",
                             "--formulation", "hamilton", "--out", str(tmp_path / "free")])
    assert code == 0
    assert str(np.load(tmp_path / "free" / "results.npz")["status"]) == "diverged"
    with pytest.raises(ValueError, match="valid"):
        spinup_beam.run(omega=6.0)


def test_modes_case_writes_the_campbell_table(tmp_path):
    assert rotating_beam_modes.main(["--elements", "6", "--gamma-max", "2", "--gamma-step", "1",
                                     "--out", str(tmp_path)]) == 0
    with open(tmp_path / "campbell.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0])[:4] == ["gamma", "mode", "direction", "lambda"]
    assert len(rows) == 3 * 2 * 3 and {r["direction"] for r in rows} == {"flap", "chord"}
    for r in rows:
        if r["table"]:
            assert float(r["lambda"]) == pytest.approx(float(r["table"]), rel=2e-3)
    for name in ("campbell.png", "flap_modes.png", "chord_modes.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    with pytest.raises(ValueError, match="valid"):
        rotating_beam_modes.run(gamma=3.0)


def test_3d_case_writes_its_files(tmp_path):
    assert rotating_beam_3d.main(["--elements", "4", "--t-end", "1", "--dt-out", "0.05", "--out",
                                  str(tmp_path)]) == 0
    data = np.load(tmp_path / "results.npz")
    assert data["displacement"].shape == (21, 5, 3)
    assert (tmp_path / "tip.png").stat().st_size > 0
    assert json.loads((tmp_path / "summary.json").read_text())["status"] == "finished"
