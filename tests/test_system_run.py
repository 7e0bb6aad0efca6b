"""flexmbs.run(system): one run for a System, its Results with bodies and energies, and its results file."""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import RigidBodyEP
from flexmbs.constraints import Spherical
from flexmbs.system import System

L, M = 1.0, 2.0
G = 9.81


def spherical_pendulum(spin=3.0, tilt=np.radians(30)):
    """A uniform rod (mass 2 kg, length 1 m) on a spherical joint at its end, tilted 30 degrees and
    turning at ``spin`` rad/s about the vertical through the pivot."""
    J = np.diag([M * L**2 / 12, M * L**2 / 12, 1e-3])
    c = np.array([np.sin(tilt), 0.0, -np.cos(tilt)]) * L / 2
    w = np.array([0.0, 0.0, spin])
    rod = RigidBodyEP("rod", M, J, position=c, orientation=fm.rotations.axis_angle_to_matrix((0, 1, 0), -tilt),
                      velocity=np.cross(w, c), angular_velocity=w)
    return System([rod], [Spherical(rod, None, at=(0.0, 0.0, 0.0), name="pivot")], gravity=(0.0, 0.0, -G))


@pytest.fixture(scope="module")
def pendulum_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("sph")
    res = fm.run(spherical_pendulum(), method="index3-alpha", t_end=2.0, h=1e-3, dt_out=0.01,
                 store=out / "results.h5")
    return res, out


def test_spherical_pendulum_conserves_energy(pendulum_run):
    """Issue 21's check: index3-alpha on RigidBodyEP + Spherical, energies["total"] conserved.
    Reference: E(0) = T + V_g of the initial state, by hand: the rod turns about the vertical at
    3 rad/s, tilted 30 deg; T = 1/2 w^T J_O w about the pivot, V_g = -M g L/2 cos 30."""
    res, _ = pendulum_run
    assert res.status == "finished"
    tilt = np.radians(30)
    J_perp = M * L**2 / 3                                      # about a transverse axis through the pivot
    w = 3.0                                                    # along z: cos(tilt) on the axis, sin(tilt) across
    T0 = 0.5 * (J_perp * np.sin(tilt)**2 + 1e-3 * np.cos(tilt)**2) * w**2
    V0 = -M * G * L / 2 * np.cos(tilt)
    e = res.energies
    assert e["total"][0] == pytest.approx(T0 + V0, rel=1e-12)
    np.testing.assert_allclose(e["total"], e["kinetic"] + e["potential"] + e["strain"])
    # index3-alpha's default rho_inf = 0.8 damps a little: with h = 1e-3 the total drifts by 2.8e-6 J in 2 s
    assert np.ptp(e["total"]) < 1e-5 * abs(e["total"][0])
    assert np.all(e["strain"] == 0.0)


def test_results_hold_bodies_and_multipliers(pendulum_run):
    res, _ = pendulum_run
    n_t = len(res.t)
    assert res.q.shape == (n_t, 7) and res.v.shape == (n_t, 7) and res.q_dot is None
    assert res.multipliers.shape == (n_t, 4)
    assert res.constraint_names == ("rod.euler_parameter_norm", "pivot", "pivot", "pivot")
    rod = res.bodies["rod"]
    assert rod.kind == "rigid"
    # the pivot end of the rod (body z axis, A (0, 0, L/2) from the centre) stays at the origin
    tip = rod.position + np.einsum("tij,j->ti", rod.rotation, [0.0, 0.0, L / 2])
    np.testing.assert_allclose(tip, 0.0, atol=1e-8)
    np.testing.assert_allclose(np.linalg.norm(rod.euler_parameters, axis=1), 1.0, atol=1e-10)
    # velocity of the pivot end, v + w x (A s), is zero too
    v_tip = rod.velocity + np.cross(rod.angular_velocity, tip - rod.position)
    np.testing.assert_allclose(v_tip, 0.0, atol=1e-5)      # index 3: the velocity constraint holds to O(h^2)
    # the vertical angular momentum about the pivot is conserved (gravity and the pivot exert no torque about z)
    sysm = spherical_pendulum()
    Hz = [sysm.momentum(q, v).angular[2] for q, v in zip(res.q[::20], res.v[::20])]
    assert np.ptp(Hz) < 1e-6 * abs(Hz[0])
    # the one-body fields of a System without a flexible body are empty
    assert res.displacement.shape == (n_t, 0, 3) and res.delta.shape == (n_t, 0)


def test_results_file_reads_back(pendulum_run):
    res, out = pendulum_run
    back = fm.load_results(out)
    assert back.status == "finished"
    for key in ("t", "q", "v", "multipliers"):
        np.testing.assert_array_equal(getattr(back, key), getattr(res, key))
    np.testing.assert_array_equal(back.energies["total"], res.energies["total"])
    for field in ("position", "rotation", "velocity", "angular_velocity", "euler_parameters"):
        np.testing.assert_array_equal(getattr(back.bodies["rod"], field), getattr(res.bodies["rod"], field))
    assert back.metadata["system"]["bodies"] == {"rod": "rigid"}


def test_index1_formulations_agree_with_index3(pendulum_run):
    """lagrange (index-1, DOP853) and index3-alpha give the same motion within index3-alpha's error."""
    res, _ = pendulum_run
    r = fm.run(spherical_pendulum(), method="DOP853", t_end=2.0, dt_out=0.01, rtol=1e-10)
    assert r.metadata["formulation"] == "lagrange"
    assert np.ptp(r.energies["total"]) < 1e-7
    np.testing.assert_allclose(r.bodies["rod"].position, res.bodies["rod"].position, atol=2e-3)
    # the multipliers of the index-1 accelerations and of index3-alpha: the pivot force
    np.testing.assert_allclose(r.multipliers[:, 1:], res.multipliers[:, 1:], atol=0.05 * np.abs(r.multipliers).max())


@pytest.mark.parametrize("formulation, method, message", [
    ("index3", "DOP853", "formulation 'index3' does not run with method 'DOP853'; the combinations for a System are: "
                         "lagrange: "),
    ("hamilton", None, "formulation 'hamilton' does not run with method 'index3-alpha'"),
    ("lagrange", "exact", "formulation 'lagrange' does not run with method 'exact'"),
    ("newton", None, "`formulation` 'newton' is not a formulation; a System runs with: lagrange: "),
])
def test_combinations_that_do_not_fit_are_named(formulation, method, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        fm.run(spherical_pendulum(), formulation=formulation, method=method, t_end=0.1, h=1e-3)


def test_model_arguments_refused_for_a_system():
    with pytest.raises(TypeError, match="`delta0`: arguments of a Model's run"):
        fm.run(spherical_pendulum(), t_end=0.1, h=1e-3, delta0=np.zeros(3))


# -- a Model on its prescribed frame, as a System ------------------------------------------------------
def spinning_strip():
    """An aluminium strip (1 m, 6 Euler-Bernoulli elements, first bending mode 9.0 Hz at rest) clamped to
    a frame turning at 2 rad/s, pushed sideways by 0.05 N at its tip."""
    from flexmbs.motion import ConstantRotation
    element = fm.BeamEB2D(fm.Material(E=7e10, rho=2700.0), area=1e-4, I=1e-9)
    return fm.Model(fm.generate.line(6, 1.0), element, motion=ConstantRotation(2.0), fixed=[("start", "all")],
                    loads=[fm.NodalLoad("end", "v", 0.05)])


def test_prescribed_system_runs_by_elimination_bit_for_bit():
    """System.prescribed(model) is run by the Model's own path: the same arrays, bit for bit."""
    from flexmbs.system_run import prescribed_model
    model = spinning_strip()
    system = fm.System.prescribed(model, "strip")
    assert prescribed_model(system) is model
    a = fm.run(model, method="exact", t_end=0.2, dt_out=0.01)
    b = fm.run(system, method="exact", t_end=0.2, dt_out=0.01)
    for key in ("t", "delta", "delta_dot", "displacement", "velocity"):
        np.testing.assert_array_equal(getattr(b, key), getattr(a, key))
    strip = b.bodies["strip"]
    np.testing.assert_array_equal(strip.displacement, a.displacement)
    np.testing.assert_allclose(strip.angular_velocity, np.tile([0.0, 0.0, 2.0], (len(b.t), 1)), atol=1e-12)
    np.testing.assert_allclose(b.energies["total"], a.energies["T"] + a.energies["V"] + a.energies["V_g"])
    assert b.q.shape == (len(b.t), 7 + model.n_dofs)


def test_prescribed_system_as_index3_dae_converges_to_the_elimination():
    """Agreement between coordinate systems: the floating frame driven by a PrescribedFrame (index-3
    DAE, index3-alpha, second order) converges to the eliminated frame (method exact) as h^2."""
    model = spinning_strip()
    system = fm.System.prescribed(model, "strip")
    ref = fm.run(model, method="exact", t_end=0.5, dt_out=0.01).displacement[:, -1, 1]
    errors = []
    for h in (1e-3, 5e-4):
        res = fm.run(system, formulation="index3", method="index3-alpha", h=h, t_end=0.5, dt_out=0.01)
        errors.append(np.abs(res.displacement[:, -1, 1] - ref).max() / np.abs(ref).max())
    assert errors[1] < 0.01                         # 2.1e-2 at h = 1e-3, 5.3e-3 at 5e-4 measured
    assert 3.0 < errors[0] / errors[1] < 5.0        # second order


# -- every kind of body ----------------------------------------------------------------------------
def _natural():
    from flexmbs.bodies import RigidBodyNatural
    b = RigidBodyNatural("n", 2.0, [0.1, 0.2, 0.3], position=[0.5, 0.0, 0.0])
    return System([b], [Spherical(b, None, at=(0, 0, 0))], gravity=(0, 0, -G)), "rigid"


def _planar():
    from flexmbs.bodies import RigidBody2D
    from flexmbs.constraints import PlanarRevolute
    b = RigidBody2D("n", 1.0, 0.1, position=(0.5, 0.0))
    return System([b], [PlanarRevolute(b, None, at=(0.0, 0.0))], gravity=(0, -G)), "rigid"


def _point():
    from flexmbs.bodies import PointMass
    from flexmbs.constraints import Distance
    b = PointMass("n", 1.0, (1.0, 0.0, 0.0), velocity=(0.0, 1.0, 0.0))
    return System([b], [Distance(b, None, at_i=(1, 0, 0), at_j=(0, 0, 0))], gravity=(0, 0, -G)), "point"


def _corotational():
    from flexmbs.bodies.corotational import CorotationalBeam2D
    from flexmbs.constraints import PlanarRevolute
    b = CorotationalBeam2D.line("n", (0.0, 0.0), (1.0, 0.0), 4, fm.Material(E=5e7, rho=1000.0), 4e-4, 0.02**4 / 12)
    return System([b], [PlanarRevolute(b, None, at=(0.0, 0.0))], gravity=(0, -G)), "corotational"


@pytest.mark.parametrize("build", [_natural, _planar, _point, _corotational])
def test_every_kind_of_body_runs(build):
    """A pendulum of each kind of body, released at rest from the horizontal: index3-alpha keeps
    T + V_g + U (1e-4 J measured at most), and the body's reference point (its centroid at 0.5 m
    from the pivot, the point mass at 1 m; the beam's nodes) stays on its circle."""
    system, kind = build()
    res = fm.run(system, method="index3-alpha", h=1e-3, t_end=0.3, dt_out=0.05)
    assert res.status == "finished"
    assert np.ptp(res.energies["total"]) < 2e-4
    body = res.bodies["n"]
    assert body.kind == kind
    if kind == "corotational":
        r = np.linalg.norm(body.global_positions(), axis=2)
        np.testing.assert_allclose(r[:, -1], 1.0, rtol=0.02)        # nearly inextensible at E = 50 MPa
        assert np.isnan(body.position).all()
    else:
        radius = 1.0 if kind == "point" else 0.5
        np.testing.assert_allclose(np.linalg.norm(body.position, axis=1), radius, rtol=1e-6)
        # v = w x r about the pivot for a rigid body (the point mass has no frame: w = 0)
        if kind == "rigid":
            np.testing.assert_allclose(body.velocity, np.cross(body.angular_velocity, body.position), atol=1e-4)
