"""Geometric stiffening of beam bodies from their own axial strain (flexmbs/bodies/axial_strain.py).

- the force is the gradient of the strain energy U_nl and the tangent its Hessian (finite
  differences), planar and spatial beams; FlexibleBody's elastic force and stiffness include them;
- a pinned-pinned beam under an axial end load P, solved statically for the axial strain and then
  linearised: its first bending frequency follows f(P)^2 = f0^2 (1 + P L^2 / (pi^2 EI)) (closed form
  of the Euler-Bernoulli beam with an axial force), in tension and compression;
- a free flexible pendulum with axial-strain stiffening conserves T + V_g + U, and so do a torque-free
  hub with the beam clamped to it (slow), which also keeps its angular momentum;
- the coupled spin-up beam (Kane, Ryan and Banerjee 1987, ../shared/BENCHMARKS.md sec. 3) with
  axial-strain stiffening follows the prescribed Model with its full stiffening;
- bad input: solids and bars, an unknown mode, "omega" without the Model's stiffness; the cases'
  --coupled-stiffening.
"""
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import linalg

import flexmbs as fm
from flexmbs import BeamEB2D, BeamEB3D, Material, Model, generate
from flexmbs.bodies import FlexibleBody, Node
from flexmbs.bodies.axial_strain import AxialStrain
from flexmbs.constraints import Revolute
from flexmbs.formulations.index1 import Index1
from flexmbs.integrators import simulate
from flexmbs.system import System
from flexmbs.assembly.assembler import dense_array

CASES = Path(__file__).resolve().parents[1] / "cases"
RNG = np.random.default_rng(5)


def planar_model(n=4, **kw):
    beam = BeamEB2D(Material(E=2e11, rho=7850.0), 1e-4, 1e-8)
    return Model(generate.line(n, 1.0), beam, fixed=[("start", "u"), ("start", "v"), ("end", "v")], **kw)


def spatial_model(n=3):
    x = np.linspace(0.0, 1.0, n + 1)
    pts = np.column_stack([x, 0.3 * x, 0.2 * x])                     # an oblique axis: element frames matter
    mesh = fm.Mesh(pts, {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])},
                   node_sets={"start": np.array([0]), "end": np.array([n])})
    beam = BeamEB3D(Material(E=2e11, rho=7850.0), 1e-4, 1e-8, 2e-8, 3e-8)
    return Model(mesh, beam, fixed=[("start", "all")])


@pytest.mark.parametrize("make", [planar_model, spatial_model], ids=["planar", "spatial"])
def test_force_and_tangent_are_the_derivatives_of_the_energy(make):
    model = make()
    ax = AxialStrain(model)
    n = model.n_dofs
    delta = 1e-3 * RNG.standard_normal(n)
    f, K = ax.force(delta), ax.stiffness(delta)
    h = 1e-7
    f_fd = np.array([(ax.energy(delta + h * e) - ax.energy(delta - h * e)) / (2 * h) for e in np.eye(n)])
    K_fd = np.array([(ax.force(delta + h * e) - ax.force(delta - h * e)) / (2 * h) for e in np.eye(n)]).T
    np.testing.assert_allclose(f, f_fd, rtol=0, atol=1e-7 * np.abs(f).max())
    np.testing.assert_allclose(K, K_fd, rtol=0, atol=1e-7 * np.abs(K).max())
    np.testing.assert_allclose(K, K.T, rtol=0, atol=1e-12 * np.abs(K).max())
    # the body: -(elastic force) = [k] delta + dU_nl/d delta, its Jacobian elastic_stiffness
    body = FlexibleBody(model, "beam", stiffening="axial-strain")
    q = np.concatenate([np.zeros(3), [1.0, 0, 0, 0], delta])
    v = np.zeros(body.n_q)
    Qe = -body.forces(0.0, q, v, None)[7:]
    np.testing.assert_allclose(Qe, model.K @ delta + f, rtol=1e-13, atol=1e-13 * np.abs(Qe).max())
    np.testing.assert_allclose(body.elastic_stiffness(0.0, q, v, None), dense_array(model.K) + K, rtol=1e-13,
                               atol=1e-13 * np.abs(K).max())
    U = body.strain_energy(q)
    assert U == pytest.approx(0.5 * delta @ (model.K @ delta) + ax.energy(delta), rel=1e-13)


def test_uniform_axial_strain_and_foreshortening():
    """u = eps0 x gives N_e = EA eps0 in every element and no force on the transverse DOFs; a bending
    shape with the axial end free: the axial equilibrium holds eps_e, not u', at P / EA."""
    model = planar_model(4)
    ax = AxialStrain(model)
    eps0 = 1e-4
    x = model.mesh.points[:, 0]
    full = np.zeros(model.n_full)
    full[0::3] = eps0 * x
    delta = full[model.free]
    EA = 2e11 * 1e-4
    np.testing.assert_allclose(ax.axial_force(delta), EA * eps0, rtol=1e-13)
    np.testing.assert_allclose(ax.force(delta), 0.0, atol=1e-12 * EA * eps0)


def pinned_beam_frequency_squared(P, n=8, L=1.0, E=2e11, rho=7850.0, A=1e-4, I=1e-8):
    """omega_1^2 of a pinned-pinned beam whose axial end load P (tension positive) is carried by the
    axial strain: the static equilibrium [k] delta + f_nl(delta) = P e_end is solved by Newton, then
    the tangent K_t = [k] + K_nl(delta) and the mass give the eigenvalue."""
    beam = BeamEB2D(Material(E=E, rho=rho), A, I)
    model = Model(generate.line(n, L), beam, fixed=[("start", "u"), ("start", "v"), ("end", "v")],
                  loads=[fm.NodalLoad("end", "u", P)])
    body = FlexibleBody(model, "beam", stiffening="axial-strain")
    q = np.concatenate([np.zeros(3), [1.0, 0, 0, 0], np.zeros(model.n_dofs)])
    v = np.zeros(body.n_q)
    for _ in range(5):
        r = body.forces(0.0, q, v, None)[7:]                # load - [k] delta - f_nl
        q[7:] += np.linalg.solve(body.elastic_stiffness(0.0, q, v, None), r)
    assert np.abs(body.forces(0.0, q, v, None)[7:]).max() < 1e-9 * max(abs(P), 1.0)
    np.testing.assert_allclose(body._axial.axial_force(q[7:]), P, rtol=1e-10, atol=1e-6)
    Kt = body.elastic_stiffness(0.0, q, v, None)
    lam = linalg.eigh(Kt, dense_array(model.M), eigvals_only=True)
    return lam[0]


def test_pinned_beam_frequency_under_axial_load_follows_the_closed_form():
    """omega(P)^2 = omega(0)^2 (1 + P L^2 / (pi^2 EI)) for the pinned-pinned Euler-Bernoulli beam (its
    mode sin(pi x / L) for every P): the axial force enters only through the axial strain."""
    E, I, L = 2e11, 1e-8, 1.0
    P_cr = np.pi**2 * E * I / L**2                            # Euler load, 19.7 kN
    w0 = pinned_beam_frequency_squared(0.0)
    for P in (0.5 * P_cr, -0.5 * P_cr, 2.0 * P_cr):
        ratio = pinned_beam_frequency_squared(P) / w0
        print(f"P = {P / P_cr:+.1f} P_cr: omega^2 ratio {ratio:.6f}, closed form {1 + P / P_cr:.6f}")
        assert ratio == pytest.approx(1.0 + P / P_cr, rel=1e-4)   # 8 Hermite elements: measured 3e-5


def test_flexible_pendulum_with_axial_strain_conserves_energy():
    """The free pendulum of test_flexible_body (a soft 2-element beam pinned at node 0, released
    horizontally under gravity) with axial-strain stiffening: T + V_g + 1/2 delta^T k delta + U_nl is
    constant (the stiffening is the gradient of U_nl), and U_nl is not negligible in the balance."""
    beam = BeamEB2D(Material(E=1e6, rho=1000.0), area=1e-3, I=1e-6)
    model = Model(generate.line(2, 1.0), beam, fixed=[("start", "all")])
    body = FlexibleBody(model, "pendulum", stiffening="axial-strain")
    g = np.array([0.0, -9.81, 0.0])
    system = System([body], [Revolute(body, None, s_i=Node(0), axis=(0.0, 0.0, 1.0))], gravity=g)
    form = Index1(system, solver="augmented")
    t = np.linspace(0.0, 0.15, 4)
    sol = simulate(form, (0.0, t[-1]), form.state0(), method="DOP853", rtol=1e-10, atol=1e-12, t_eval=t)
    n = body.n_q
    energy, nonlinear = [], []
    for x in sol.x:
        T, Vg = body.energy(x[:n], x[n:], g)
        energy.append(T + Vg + body.strain_energy(x[:n]))
        nonlinear.append(body._axial.energy(x[7:n]))
    energy = np.array(energy)
    swing = body.energy(sol.x[-1, :n], sol.x[-1, n:], g)[0]
    drift = np.abs(energy - energy[0]).max()
    print(f"kinetic energy gained {swing:.4f} J, U_nl up to {np.abs(nonlinear).max():.3e} J, drift {drift:.2e} J")
    assert swing > 0.1
    assert np.abs(nonlinear).max() > 1e3 * drift              # the term is tested, not lost in the noise
    assert drift < 1e-7 * swing


def test_coupled_spinup_with_axial_strain_follows_the_prescribed_model():
    """Spin-up beam (Kane, Ryan and Banerjee 1987; ../shared/BENCHMARKS.md sec. 3), driven hub, 2 elements,
    1 s: the axial-strain stiffening of the FlexibleBody gives the prescribed Model's (full K_geo).  The
    transverse displacements are compared: the axial ones of the body also hold the foreshortening
    -1/2 int v'^2 dx, which the linear Model does not have."""
    sys.path.insert(0, str(CASES))
    import spinup_beam
    system, _, beam, model = spinup_beam.build_coupled(2, 6.0, 15.0, coupled_stiffening="axial-strain")
    assert beam.stiffening == "axial-strain"
    t = np.linspace(0.0, 1.0, 11)
    res = fm.run(system, method="index3-alpha", h=0.01, t_end=1.0, t_eval=t, rho_inf=0.9, store=False)
    fast = fm.run(model, method="DOP853", rtol=1e-10, atol=1e-12, t_end=1.0, dt_out=0.1)
    v = res.bodies[beam.name].displacement[:, :, 1]
    v_ref = fast.displacement[:, :, 1]
    err = np.abs(v - v_ref).max() / np.abs(v_ref).max()
    print(f"axial-strain coupled vs prescribed: transverse displacements differ by {err:.2e} of the peak")
    assert err < 5e-4


def test_bad_stiffening_arguments_are_refused():
    solid = Model(generate.box(1, 1, 1), fm.Hex8(Material(E=1e9, rho=1000.0, nu=0.3)), fixed=[("xmin", "all")])
    with pytest.raises(ValueError, match=r"stiffening='axial-strain'.*beam elements.*Hex8"):
        FlexibleBody(solid, "block", stiffening="axial-strain")
    bar = Model(generate.line(2, 1.0), fm.Bar2(Material(E=1e9, rho=1000.0), 1e-4), fixed=[("start", "all")])
    with pytest.raises(ValueError, match=r"'bar'.*stiffening='axial-strain'.*beam elements.*Bar2"):
        FlexibleBody(bar, "bar", stiffening="axial-strain")
    with pytest.raises(ValueError, match=r"`stiffening` must be.*'axial'"):
        FlexibleBody(planar_model(2), "beam", stiffening="axial")
    with pytest.raises(ValueError, match=r"stiffening='omega'.*has none"):
        FlexibleBody(planar_model(2, stiffening=False), "beam", stiffening="omega")


def test_the_cases_choose_the_stiffening():
    sys.path.insert(0, str(CASES))
    import slider_crank
    import spinup_beam
    from flexmbs.case import CaseError
    for mode in ("axial-strain", "omega"):
        assert slider_crank.build_coupled(2, coupled_stiffening=mode)[1].stiffening == mode
        assert spinup_beam.build_coupled(2, coupled_stiffening=mode)[2].stiffening == mode
    assert slider_crank.DEFAULTS["coupled_stiffening"] == "axial-strain"
    assert slider_crank.build_coupled(2, stiffening=False)[1].stiffening == "none"
    with pytest.raises(CaseError, match="coupled_stiffening"):
        slider_crank.build_coupled(2, coupled_stiffening="axial")


def test_elastic_stiffness_of_the_omega_mode_is_the_linear_force_operator():
    """stiffening="omega": the force [k] delta + K_geo(omega, g) delta is linear in delta, and
    elastic_stiffness is its matrix."""
    beam = BeamEB2D(Material(E=2e9, rho=7850.0), 1e-4, 1e-8)
    model = Model(generate.line(3, 1.0), beam, motion=fm.motion.ConstantRotation(5.0), fixed=[("start", "all")])
    body = FlexibleBody.from_model(model, "beam", stiffening="omega")
    q, v = body.initial_coordinates(), body.initial_velocities()
    q[7:] = 1e-3 * RNG.standard_normal(model.n_dofs)
    g = np.array([0.0, -9.81, 0.0])
    force = model.K @ q[7:] + body.geometric_stiffness_force(0.0, q, v, g)
    K = body.elastic_stiffness(0.0, q, v, g)
    assert np.abs(K - dense_array(model.K)).max() > 1e-6 * np.abs(K).max()      # the stiffening is there
    np.testing.assert_allclose(K @ q[7:], force, rtol=0, atol=1e-12 * np.abs(force).max())
