"""Quasi-velocity formulations (issue 13): Lagrange, Maggi, Kane, Volterra, reduced Volterra.

Checks: the TreeBody kinematics against finite differences and Lagrange's Q_v against the
Newton-Euler inertia forces of the parts; all formulations move the same way from the same
initial state (seed 001's three examples, cases/); the reduced Volterra form keeps the
ignorable momenta to round-off; a spherical pendulum in steady conical motion stays conical;
a knife edge (Chaplygin sleigh with its centre of mass on the blade) moves on a circle; the
velocity constraint is held to round-off by the quasi-velocity forms; bad input is refused.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs.bodies.tree import COMPLEX_STEP, TreeBody, TreeJoint, TreePart
from flexmbs.constraints.nonholonomic import KnifeEdge, nonholonomic_constraints
from flexmbs.formulations.index1 import Index1
from flexmbs.formulations.quasi_velocities import (QuasiVelocities, QuasiVelocityError, ignorable_coordinates,
                                                   system_kinematics)
from flexmbs.formulations.registry import system_formulation, system_formulations
from flexmbs.formulations.volterra import ReducedVolterra
from flexmbs.integrators import simulate
from flexmbs.system import InconsistentStateError, System

CASES_DIR = Path(__file__).resolve().parents[1] / "cases"
sys.path.insert(0, str(CASES_DIR))
import cart_pendulum  # noqa: E402
import satellite_boom  # noqa: E402
import three_bodies  # noqa: E402
from _comparison import FORMULATIONS, run_formulation  # noqa: E402

CASES = {"cart_pendulum": cart_pendulum, "three_bodies": three_bodies, "satellite_boom": satellite_boom}


# -- kinematics and Lagrange's Q_v ---------------------------------------------------------------
@pytest.mark.parametrize("case", list(CASES))
def test_part_jacobians_match_finite_differences(case):
    body = CASES[case].build().system.bodies[0]
    q = body.q0 + 0.1
    kin = body.kinematics(q)
    h = 1e-6
    for k in range(body.n_q):
        e = np.zeros(body.n_q)
        e[k] = h
        dr = (body.kinematics(q + e).r[0] - body.kinematics(q - e).r[0]) / (2 * h)
        assert np.allclose(dr, kin.B[0][..., k], atol=1e-8)
        dA = (body.kinematics(q + e).A[0] - body.kinematics(q - e).A[0]) / (2 * h)
        omega_tilde = dA @ np.swapaxes(kin.A[0], -1, -2)          # (dA/dq_k) A^T = [D_k]x
        assert np.allclose(omega_tilde[:, [2, 0, 1], [1, 2, 0]], kin.D[0][..., k], atol=1e-8)


@pytest.mark.parametrize("case", list(CASES))
def test_lagrange_quadratic_velocity_forces_equal_newton_euler_inertia_forces(case):
    """Q_v = -M' q' + dT/dq (complex-step derivatives of T) against -sum B^T m B'q' + D^T (I D'q' + w x I w)."""
    body = CASES[case].build().system.bodies[0]
    rng = np.random.default_rng(3)
    q, v = body.q0 + 0.2 * rng.standard_normal(body.n_q), rng.standard_normal(body.n_q)
    Qv = body.quadratic_velocity_forces(q, v)
    kin = body.kinematics(np.asarray(q, complex) + 1j * COMPLEX_STEP * v)
    B, D, I = kin.B[0].real, kin.D[0].real, kin.I[0].real
    Bd, Dd = kin.B[0].imag / COMPLEX_STEP, kin.D[0].imag / COMPLEX_STEP
    w = D @ v
    Iw = np.einsum("pxy,py->px", I, w)
    ne = -(np.einsum("p,pxm,px->m", kin.mass, B, Bd @ v)
           + np.einsum("pxm,px->m", D, np.einsum("pxy,py->px", I, Dd @ v) + np.cross(w, Iw)))
    assert np.allclose(Qv, ne, rtol=1e-11, atol=1e-11 * np.abs(ne).max())


# -- the formulations agree -------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_all_formulations_give_the_same_motion(case):
    t_end = 1.0 if case == "cart_pendulum" else 3.0              # the cart swings fast: fewer seconds
    runs = {f: run_formulation(CASES[case].build(), f, rtol=1e-10, t_end=t_end, dt_out=0.5)
            for f in FORMULATIONS}
    ref = runs["volterra-reduced"][0]
    for f, (res, summ) in runs.items():
        assert summ["status"] == "finished"
        assert np.abs(res["q"] - ref["q"]).max() < 1e-7, f
        assert np.abs(res["qdot"] - ref["qdot"]).max() < 1e-7, f
        assert summ["max_energy_error"] < 1e-7 * (1 + abs(summ["initial_energy"])), f
        # linear momentum: all of it for the free bodies, P_x for the cart on its rails
        P0 = np.abs(summ["initial_momentum"]).max()
        dP = summ["max_momentum_error_x"] if case == "cart_pendulum" else summ["max_momentum_error"]
        assert dP < 1e-8 * P0, f
    counts = {f: (s["n_state_variables"], s["n_equations"]) for f, (_, s) in runs.items()}
    m = ref["q"].shape[1]
    r = 1 if case == "cart_pendulum" else 0
    s = 1 if case == "cart_pendulum" else 3
    assert counts == {"lagrange": (2 * m, m + r), "maggi": (2 * m, m), "kane": (2 * m - r, m - r),
                      "volterra": (2 * m - r, m - r), "volterra-reduced": (2 * m - r - s, m - r - s)}


def test_reduced_volterra_keeps_the_ignorable_momenta_to_round_off():
    res, summ = run_formulation(three_bodies.build(), "volterra-reduced", rtol=1e-6, t_end=10.0, dt_out=1.0)
    P0 = np.abs(res["momentum"][0]).max()
    assert summ["max_momentum_error"] < 50 * np.finfo(float).eps * P0 * 10
    res_k, summ_k = run_formulation(three_bodies.build(), "kane", rtol=1e-6, t_end=10.0, dt_out=1.0)
    assert summ_k["max_momentum_error"] < 1e-4 * P0                 # to the integrator's tolerance only
    assert summ_k["max_momentum_error"] > 100 * summ["max_momentum_error"]


@pytest.mark.slow
def test_quasi_velocity_forms_hold_the_wheel_constraint_to_round_off():
    for f in ("kane", "volterra", "volterra-reduced"):
        res, summ = run_formulation(cart_pendulum.build(), f, rtol=1e-6, t_end=2.0, dt_out=0.5)
        assert summ["max_constraint_error"] < 1e-14, f
        # eq. (69) is integrable: tan((theta_1 - theta_2) / 2) - theta_1 stays constant (to the tolerance)
        assert summ["max_constraint_integral_error"] < 1e-5, f
    res, summ = run_formulation(cart_pendulum.build(), "lagrange", rtol=1e-6, t_end=2.0, dt_out=0.5)
    assert 1e-14 < summ["max_constraint_error"] < 1e-4               # drifts with the integration error


def test_maggi_in_quasi_velocities_agrees_with_kane_and_holds_the_constraint():
    from flexmbs.formulations.maggi import MaggiQuasiVelocities
    model = cart_pendulum.build()
    out = {}
    for name in ("maggi-quasi", "kane"):
        qv = QuasiVelocities(model.system, Y=model.Y)
        form = (MaggiQuasiVelocities(model.system, qv) if name == "maggi-quasi"
                else system_formulation("kane", model.system, Y=model.Y))
        sol = simulate(form, (0.0, 0.5), form.state0(), method="DOP853", rtol=1e-10, atol=1e-12, t_eval=[0.0, 0.5])
        q, qd = form.physical(sol.t, sol.x)
        out[name] = q[-1]
        a, b = model.system.jacobian(0.5, q[-1]), model.system.time_derivative(0.5, q[-1])
        assert abs(a @ qd[-1] + b).max() < 1e-14
    assert np.abs(out["maggi-quasi"] - out["kane"]).max() < 1e-9


def test_ignorable_coordinates_are_detected():
    for case, expected in (("cart_pendulum", [2]), ("three_bodies", [5, 6, 7]), ("satellite_boom", [4, 5, 6])):
        assert ignorable_coordinates(CASES[case].build().system) == expected, case


# -- spherical pendulum in steady conical motion (psi ignorable) ----------------------------------------
def spherical_pendulum(theta0=0.6, length=1.5, g=9.81):
    Omega = np.sqrt(g / (length * np.cos(theta0)))
    joints = [TreeJoint("psi", "revolute", (0, 0, 1), "psi"),
              TreeJoint("theta", "revolute", (0, 1, 0), "theta", parent="psi")]
    body = TreeBody("pendulum", ("psi", "theta"), joints, [TreePart("bob", "theta", 2.0, centroid=(0, 0, -length))],
                    q0=(0.0, theta0), v0=(Omega, 0.0))
    return System([body], gravity=(0.0, 0.0, -g)), Omega


@pytest.mark.parametrize("name", FORMULATIONS)
def test_spherical_pendulum_in_steady_conical_motion_stays_conical(name):
    system, Omega = spherical_pendulum()
    assert ignorable_coordinates(system) == [0]
    form = system_formulation(name, system)
    sol = simulate(form, (0.0, 5.0), form.state0(), method="DOP853", rtol=1e-11, atol=1e-13,
                   t_eval=np.linspace(0, 5, 11))
    q, qd = form.physical(sol.t, sol.x)
    assert np.abs(q[:, 1] - 0.6).max() < 1e-9
    assert np.abs(qd[:, 0] - Omega).max() < 1e-9
    assert np.allclose(q[:, 0], Omega * sol.t, atol=1e-8)


def test_spherical_pendulum_reduced_volterra_has_one_equation_and_keeps_the_momentum():
    system, Omega = spherical_pendulum(theta0=0.3)
    form = ReducedVolterra(system)                   # psi detected as ignorable
    assert form.qv.ignorable == [0] and form.n_equations == 1
    x0 = form.state0()
    x0[-1] += 0.2                                    # theta' = 0.2 rad/s: a nutating motion
    sol = simulate(form, (0.0, 2.0), x0, method="DOP853", rtol=1e-8, atol=1e-10, t_eval=np.linspace(0, 2, 5))
    q, qd = form.physical(sol.t, sol.x)
    G = np.array([form.momenta(a, b)[0] for a, b in zip(q, qd)])
    assert np.abs(G - form.qv.G[0]).max() < 1e-13 * abs(G[0])
    assert np.ptp(q[:, 1]) > 0.02                    # it does nutate


def test_holonomic_joint_of_the_core_in_the_quasi_velocity_formulations():
    """A particle on a massless rod (flexmbs.constraints.Distance, not complex-step safe: its rates come
    from central differences) moves the same under the four formulations."""
    from flexmbs.constraints import Distance
    joints = [TreeJoint("X", "prismatic", (1, 0, 0), "X"), TreeJoint("Y", "prismatic", (0, 1, 0), "Y", parent="X"),
              TreeJoint("Z", "prismatic", (0, 0, 1), "Z", parent="Y")]
    body = TreeBody("particle", ("X", "Y", "Z"), joints, [TreePart("m", "Z", 1.0)], q0=(0.6, 0.0, -0.8),
                    v0=(0.8, 0.3, 0.6))
    system = System([body], [Distance(None, body, at_i=(0, 0, 0), s_j=(0, 0, 0), length=1.0, name="rod")],
                    gravity=(0.0, 0.0, -9.81))
    out = {}
    for name in ("lagrange", "maggi", "kane", "volterra"):
        form = system_formulation(name, system)
        sol = simulate(form, (0.0, 1.0), form.state0(), method="DOP853", rtol=1e-10, atol=1e-12, t_eval=[0.0, 1.0])
        out[name] = form.physical(sol.t, sol.x)[0][-1]
        assert abs(np.linalg.norm(out[name]) - 1.0) < 1e-9, name
    for name in out:
        assert np.abs(out[name] - out["lagrange"]).max() < 1e-8, name


# -- knife edge -------------------------------------------------------------------------------------
def sleigh(v=1.2, omega=0.8):
    """Chaplygin sleigh with its centre of mass on the blade: (X, Y, theta), knife edge along body x."""
    joints = [TreeJoint("X", "prismatic", (1, 0, 0), "X"), TreeJoint("Y", "prismatic", (0, 1, 0), "Y", parent="X"),
              TreeJoint("theta", "revolute", (0, 0, 1), "theta", parent="Y")]
    body = TreeBody("sleigh", ("X", "Y", "theta"), joints, [TreePart("sleigh", "theta", 3.0, (0.1, 0.2, 0.25))],
                    q0=(0.0, 0.0, 0.3), v0=(v * np.cos(0.3), v * np.sin(0.3), omega))
    return System([body], [KnifeEdge(body, (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), name="blade")])


def test_knife_edge_gamma_is_the_time_derivative_of_its_velocity_row():
    system = sleigh()
    c = system.constraint("blade")
    rng = np.random.default_rng(0)
    q, v = rng.standard_normal(3), rng.standard_normal(3)
    h = 1e-6
    # d/dt (a(q) v) at fixed v = -gamma when q'' = 0
    d = (c.jacobian(0, [q + h * v])[0] @ v - c.jacobian(0, [q - h * v])[0] @ v) / (2 * h)
    assert np.allclose(-c.gamma(0, [q], [v]), d, atol=1e-8)


@pytest.mark.parametrize("name", FORMULATIONS)
def test_sleigh_on_a_knife_edge_moves_on_a_circle(name):
    v, omega = 1.2, 0.8
    system = sleigh(v, omega)
    form = system_formulation(name, system)
    sol = simulate(form, (0.0, 3.0), form.state0(), method="DOP853", rtol=1e-9, atol=1e-11,
                   t_eval=np.linspace(0, 3, 4))
    q, qd = form.physical(sol.t, sol.x)
    centre = np.array([-v / omega * np.sin(0.3), v / omega * np.cos(0.3)])
    assert np.allclose(np.hypot(q[:, 0] - centre[0], q[:, 1] - centre[1]), v / omega, atol=1e-7)
    assert np.allclose(qd[:, 2], omega, atol=1e-8)


def test_lagrange_with_baumgarte_and_udwadia_kalaba_on_a_velocity_constraint():
    """The index-1 solvers take a nonholonomic row like a holonomic one; Baumgarte damps a q' + b.

    At a state with a violated velocity (e = a q' + b = 1e-3) the rate of e along the equations
    (central differences along x'): plain index-1 keeps the violation (e' = 0), Baumgarte's
    gamma - 2 alpha e makes it decay, e' = -2 alpha e.  No run starts from such a state: simulate
    refuses it, naming the constraint.
    """
    system = cart_pendulum.build().system
    q0, v0 = system.initial_coordinates(), system.initial_velocities() + np.array([0.0, 1e-3, 0.0])
    x0 = np.concatenate([q0, v0])

    def e(x):
        return system.jacobian(0.0, x[:3]) @ x[3:] + system.time_derivative(0.0, x[:3])

    xdot, rate = {}, {}
    for solver, stab in (("augmented", "none"), ("udwadia-kalaba", "none"), ("augmented", "baumgarte")):
        form = Index1(system, solver=solver, stabilization=stab)
        xdot[(solver, stab)] = f = form.rhs(0.0, x0)
        rate[(solver, stab)] = (e(x0 + 1e-6 * f) - e(x0 - 1e-6 * f)) / 2e-6
    assert abs(e(x0)[0] - 1e-3) < 1e-12
    assert abs(rate[("augmented", "none")][0]) < 1e-9
    alpha = form.stabilization.alpha
    assert rate[("augmented", "baumgarte")][0] == pytest.approx(-2 * alpha * e(x0)[0], rel=1e-6)
    assert np.abs(xdot[("augmented", "none")] - xdot[("udwadia-kalaba", "none")]).max() < 1e-10
    with pytest.raises(InconsistentStateError, match="'wheel' violated at the velocity level by .* = 0.001"):
        simulate(form, (0.0, 1.0), x0, method="RK45")


def test_nonholonomic_constraints_in_the_system_and_refused_by_coordinate_partitioning():
    system = sleigh()
    assert [c.name for c in nonholonomic_constraints(system)] == ["blade"]
    q, v = system.assemble(0.0, np.array([0.4, -0.2, 1.0]), np.array([1.0, 0.0, 0.5]))
    assert np.allclose(q, [0.4, -0.2, 1.0])                          # positions are not restricted
    a = system.jacobian(0.0, q)
    assert abs(a @ v) < 1e-12                                        # velocities are
    with pytest.raises(ValueError, match="nonholonomic.*blade"):
        Index1(system, stabilization="coordinate-partitioning")


# -- bad input --------------------------------------------------------------------------------------
def test_declared_ignorable_coordinate_that_is_not_ignorable_is_refused():
    with pytest.raises(QuasiVelocityError, match="'rho'.*mass matrix depends"):
        QuasiVelocities(satellite_boom.build().system, ignorable=("X", "rho"))
    system, _ = spherical_pendulum()
    with pytest.raises(QuasiVelocityError, match="'theta'.*generalized force"):
        QuasiVelocities(system, ignorable=("theta",))
    with pytest.raises(QuasiVelocityError, match="unknown coordinate 'chi'"):
        QuasiVelocities(system, ignorable=("chi",))


def test_user_W_that_does_not_span_the_admissible_velocities_is_refused():
    system = cart_pendulum.build().system
    with pytest.raises(QuasiVelocityError, match="does not span"):
        QuasiVelocities(system, W=lambda t, q: np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    # a correct W (the null space of eq. 69) is accepted and reproduces the Y-based maps
    W_ok = lambda t, q: np.array([[1.0, 0.0], [-np.cos(q[0] - q[1]), 0.0], [0.0, 1.0]])  # noqa: E731
    qv = QuasiVelocities(system, W=W_ok)
    assert np.allclose(qv.quasi_velocities(0, system.initial_coordinates(), system.initial_velocities()), [0.5, 0.2])


def test_Y_dependent_on_the_constraint_rows_is_refused():
    system = cart_pendulum.build().system
    with pytest.raises(QuasiVelocityError, match="dependent"):
        QuasiVelocities(system, Y=np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]))
    with pytest.raises(QuasiVelocityError, match=r"\(2, 3\) matrix"):
        QuasiVelocities(system, Y=np.eye(3))


def test_bodies_without_parts_are_refused_by_kane_and_volterra():
    """A 3D corotational beam gives no `kinematics` (tests/test_failures_kane.py has the message); Maggi's form,
    which uses M and Q only, runs it."""
    from flexmbs.bodies import CorotationalBeam3D
    from flexmbs.formulations.body_terms import BodyKindError
    import flexmbs as fm
    beam = CorotationalBeam3D.line("b", (0, 0, 0), (1, 0, 0), 2, fm.Material(E=2e11, rho=7870.0), 1e-4, 1e-9, 1e-9,
                                   2e-9)
    system = System([beam])
    with pytest.raises(BodyKindError, match="lagrange"):
        system_formulation("kane", system)
    assert system_formulation("maggi", system).n_equations == system.n_q


def test_system_kinematics_momentum_of_the_satellite():
    model = satellite_boom.build()
    body = model.system.bodies[0]
    mass, B, D, I = system_kinematics(model.system, body.q0)
    P = np.einsum("p,kpxm,m->x", mass, B, body.v0)
    # P = (m_g + m) R' + m d/dt(A d): check the x component by hand at t = 0
    assert np.allclose(P, body.linear_momentum(body.q0, body.v0))
    assert abs(P[0] - (2001.0 * 2.0 + B[0, 1, 0, :4] @ body.v0[:4])) < 1e-10


# -- the case command lines ------------------------------------------------------------------------
def test_satellite_case_writes_the_arrays_and_keys_of_issue_13(tmp_path):
    assert satellite_boom.main(["--formulation", "kane", "--t-end", "1", "--dt-out", "0.5", "--rtol", "1e-8",
                                "--out", str(tmp_path), "--no-plots"]) == 0
    data = np.load(tmp_path / "results.npz")
    assert data["q"].shape == (3, 7) and data["momentum"].shape == (3, 3) and data["energy_error"].shape == (3,)
    assert np.allclose(data["q"][0], satellite_boom.Q0)
    s = json.loads((tmp_path / "summary.json").read_text())
    for key in ("n_state_variables", "n_equations", "solve_s", "max_energy_error", "max_momentum_error"):
        assert key in s


def test_cart_case_table_mode(tmp_path):
    summaries = cart_pendulum.run(out=tmp_path, table=True, t_end=0.5, dt_out=0.25, rtol=1e-8, plots=False)
    assert set(summaries) == set(FORMULATIONS)
    text = (tmp_path / "table2.md").read_text()
    assert "Reduced Volterra" in text and "max_constraint_error" in text
    assert (tmp_path / "volterra-reduced" / "results.npz").is_file()
    assert "constraint_error" in np.load(tmp_path / "lagrange" / "results.npz")


def test_the_compared_formulations_are_the_registrys():
    assert set(FORMULATIONS) <= set(system_formulations())


@pytest.mark.parametrize("formulation", ["lagrange", "volterra-reduced"])
def test_energy_check_takes_the_work_of_the_motor_torque(formulation):
    """With a motor torque the energy changes by the torque's work (integrated by a second run of
    the same formulation with simulate's integrand: flexmbs.run does not return the integrals);
    the energy error E - W - E(0) stays at the integration tolerance, far below E - E(0)."""
    model = cart_pendulum.build(torque=2.0)
    res, summ = run_formulation(model, formulation, rtol=1e-9, t_end=0.5, dt_out=0.25)
    energy = np.array([sum(model.system.energy(q, v)) for q, v in zip(res["q"], res["qdot"])])
    assert np.abs(energy - energy[0]).max() > 0.1                      # the torque's work [J]
    assert summ["max_energy_error"] < 1e-7


def test_cart_case_streams_each_formulation_into_results_h5(tmp_path):
    """`flexmbs run cart_pendulum --set table=true`: one run per formulation in DIR/results.h5, named
    after it, with the System's body, the same t and q as its results.npz and (no motor torque, no
    work) an energy error that is the drift of the recorded total energy."""
    from flexmbs import cli, load_results
    from flexmbs.io import list_runs
    out = tmp_path / "cart"
    assert cli.main(["run", "cart_pendulum", "--cases", str(CASES_DIR), "--out", str(out), "--no-plots",
                     "--no-paraview", "--set", "table=true", "--set", "t_end=0.2", "--set", "dt_out=0.1",
                     "--set", "rtol=1e-8"]) == 0
    assert list_runs(out / "results.h5") == {f: "finished" for f in FORMULATIONS}
    for f in FORMULATIONS:
        res = load_results(out / "results.h5", f)
        npz = np.load(out / f / "results.npz")
        assert np.array_equal(res.t, npz["t"]) and np.array_equal(res.q, npz["q"]), f
        assert res.metadata["formulation"] == f and res.metadata["coordinates"] == list(cart_pendulum.COORDINATES)
        assert res.metadata["system"]["velocities"] == ("q_dot" if f in ("lagrange", "maggi") else "u"), f
        assert res.v.shape[1] == {"lagrange": 3, "maggi": 3, "kane": 2, "volterra": 2, "volterra-reduced": 1}[f]
        body = res.bodies["cart pendulum"]
        assert body.kind == "rigid" and body.position.shape == (3, 3) and body.rotation.shape == (3, 3, 3)
        E = res.energies["total"]
        assert np.array_equal(E - E[0], npz["energy_error"]), f


def test_case_refuses_generalized_alpha_for_the_quasi_velocity_forms(tmp_path, capsys):
    with pytest.raises(SystemExit):
        three_bodies.main(["--formulation", "volterra", "--integrator", "generalized-alpha", "--out", str(tmp_path)])
    assert "--integrator" in capsys.readouterr().err


@pytest.mark.parametrize("case", list(CASES))
def test_outputs_end_exactly_at_t_end(case, tmp_path):
    """0.3 / 0.1 is not exact in binary: the last output is t_end itself, never a time past it."""
    CASES[case].run(out=tmp_path, t_end=0.3, dt_out=0.1, plots=False)
    t = np.load(tmp_path / "results.npz")["t"]
    assert t[-1] == 0.3 and len(t) == 4


@pytest.mark.parametrize("integrator, formulation, message", [
    ("exact", "kane", "invalid choice: 'exact'"),
    ("index3-alpha", "kane", "index3-alpha integrates the System's own index-3 equations"),
])
def test_comparison_cases_refuse_integrators_that_would_not_run_the_formulation(integrator, formulation, message,
                                                                                tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        satellite_boom.main(["--integrator", integrator, "--formulation", formulation, "--out", str(tmp_path / "o")])
    assert exit_.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
