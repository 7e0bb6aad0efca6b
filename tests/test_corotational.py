"""Planar corotational beam: consistent tangent, patch tests, linear limit, elastica, body protocol."""
import numpy as np
import pytest

from flexmbs import Material
from flexmbs.bodies.corotational import CorotationalBeam2D, Node
from flexmbs.elastica import cantilever_tip
from flexmbs.elements.beam2d import BeamEB2D
from flexmbs.elements.corotational import corotational_2d, wrap_angle

MAT = Material(E=1.0, rho=1.0)


def _pack(x, th):
    return np.concatenate([x[:, 0], th[:, :1], x[:, 1], th[:, 1:]], axis=1)


def _unpack(p):
    return np.stack([p[:, 0:2], p[:, 3:5]], axis=1), p[:, [2, 5]]


def test_wrap_angle():
    a = np.array([-7.0, -np.pi, 0.3, np.pi, 4.0, 13.0])
    w = wrap_angle(a)
    assert np.all(w > -np.pi) and np.all(w <= np.pi)
    assert np.allclose(np.sin(w), np.sin(a)) and np.allclose(np.cos(w), np.cos(a))


def test_element_force_and_tangent_are_derivatives():
    """f = dU/dp and K = df/dp against central differences, at large displacements and rotations."""
    rng = np.random.default_rng(1)
    X0 = np.array([[[0.0, 0.0], [1.0, 0.3]], [[1.0, 0.3], [2.0, -0.5]], [[0.0, 0.0], [-0.4, 0.8]]])
    x = X0 + 0.3 * rng.standard_normal(X0.shape)
    th = 2.0 * rng.standard_normal((3, 2))
    EA, EI = 50.0, np.array([0.7, 1.3, 2.0])
    p = _pack(x, th)
    out = corotational_2d(X0, x, th, EA, EI)
    h = 1e-6
    K_fd, f_fd = np.zeros((3, 6, 6)), np.zeros((3, 6))
    for j in range(6):
        pp, pm = p.copy(), p.copy()
        pp[:, j] += h
        pm[:, j] -= h
        op, om = corotational_2d(X0, *_unpack(pp), EA, EI), corotational_2d(X0, *_unpack(pm), EA, EI)
        K_fd[:, :, j] = (op.force - om.force) / (2 * h)
        f_fd[:, j] = (op.energy - om.energy) / (2 * h)
    assert np.max(np.abs(f_fd - out.force)) <= 1e-7 * np.max(np.abs(out.force))
    assert np.max(np.abs(K_fd - out.stiffness)) <= 1e-7 * np.max(np.abs(out.stiffness))
    assert np.allclose(out.stiffness, np.swapaxes(out.stiffness, 1, 2))


def test_body_stiffness_matches_differences_of_internal_force():
    beam = CorotationalBeam2D.line("b", (0.0, 0.0), (2.0, 0.0), 6, MAT, 100.0, 1.0)
    rng = np.random.default_rng(2)
    q = beam.initial_coordinates()
    s = np.linspace(0, 1, beam.n_nodes)
    q[0::3] = 2.0 * np.sin(1.5 * s) / 1.5 + 0.01 * rng.standard_normal(beam.n_nodes)      # a bent arc
    q[1::3] = 2.0 * (1 - np.cos(1.5 * s)) / 1.5
    q[2::3] = 3.0 * s + 0.05 * rng.standard_normal(beam.n_nodes)
    K = beam.stiffness(q)
    h = 1e-6
    K_fd = np.column_stack([(beam.internal_force(q + h * e) - beam.internal_force(q - h * e)) / (2 * h)
                            for e in np.eye(beam.n_q)])
    assert np.max(np.abs(K_fd - K)) <= 1e-7 * np.max(np.abs(K))


@pytest.mark.parametrize("angle", [0.7, 2.5, -3.0, 4.0, 7.5])
def test_rigid_motion_gives_no_internal_force(angle):
    """Patch test: a rigid translation plus a large rigid rotation of the whole beam is stress free."""
    beam = CorotationalBeam2D.line("b", (0.3, -0.2), (1.8, 0.9), 5, MAT, 1e4, 2.0)
    R = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    x = (beam.nodes - beam.nodes[0]) @ R.T + beam.nodes[0] + np.array([5.0, -3.0])
    q = np.column_stack([x, np.full(beam.n_nodes, angle)]).ravel()
    assert np.max(np.abs(beam.internal_force(q))) <= 1e-9
    assert abs(beam.strain_energy(q)) <= 1e-20
    # and the tangent of the rotated beam is the rotated reference tangent (geometric terms vanish)
    T = np.kron(np.eye(beam.n_nodes), np.block([[R, np.zeros((2, 1))], [np.zeros((1, 2)), np.ones((1, 1))]]))
    K0 = beam.stiffness(beam.initial_coordinates())
    assert np.allclose(beam.stiffness(q), T @ K0 @ T.T, rtol=0, atol=1e-9 * np.abs(K0).max())


def test_reference_tangent_equals_linear_euler_bernoulli_element():
    """In the reference configuration K is the linear BeamEB2D stiffness (inclined elements too)."""
    X0 = np.array([[[0.0, 0.0], [1.0, 0.0]], [[0.2, 0.1], [1.1, 0.7]], [[0.0, 0.0], [-0.3, -2.0]]])
    A, I = 0.01, 2e-5
    mat = Material(E=210e9, rho=7800.0)
    K_cr = corotational_2d(X0, X0, np.zeros((3, 2)), mat.E * A, mat.E * I).stiffness
    K_lin = BeamEB2D(mat, A, I).k(X0)
    assert np.allclose(K_cr, K_lin, rtol=1e-12, atol=1e-9 * np.abs(K_lin).max())


def test_small_load_cantilever_gives_linear_tip_deflection():
    """Tip deflection P L^3 / (3 EI) and tip rotation P L^2 / (2 EI) (Hermite elements are nodally exact)."""
    L, EI, P = 2.0, 3.0, 1e-6
    beam = CorotationalBeam2D.line("b", (0.0, 0.0), (L, 0.0), 3, MAT, 1e6, EI)
    q, _ = beam.static_equilibrium(beam.node_load(3, (0.0, -P)), [0, 1, 2], steps=1, tol=1e-12)
    assert q[-2] == pytest.approx(-P * L ** 3 / (3 * EI), rel=1e-5)
    assert q[-1] == pytest.approx(-P * L ** 2 / (2 * EI), rel=1e-5)


def test_elastica_reference_values():
    """The closed form against the values tabulated from it: PL^2/EI = 1 and 10 (Mattiasson 1981,
    Int. J. Numer. Meth. Eng. 17, 145, Table 1: (L - x)/L = 0.05643, 0.55500; v/L = 0.30172, 0.81061)
    and the small-load limit v = PL^3/3EI."""
    x, v, _ = cantilever_tip(1.0)
    assert (1 - x, v) == pytest.approx((0.05643, 0.30172), abs=6e-6)
    x, v, _ = cantilever_tip(10.0)
    assert (1 - x, v) == pytest.approx((0.55500, 0.81061), abs=6e-6)
    x, v, th = cantilever_tip(1e-4)
    assert v == pytest.approx(1e-4 / 3, rel=1e-4) and th == pytest.approx(0.5e-4, rel=1e-4)
    with pytest.raises(ValueError, match="alpha"):
        cantilever_tip(-1.0)


ELASTICA_16 = {1.0: 6e-5, 2.0: 1.6e-4, 5.0: 3.5e-4, 10.0: 5e-4}    # measured 4.8e-5, 1.4e-4, 3.2e-4, 4.5e-4


@pytest.mark.parametrize("alpha", [1.0, 2.0, 5.0, 10.0])
def test_large_deflection_cantilever_converges_to_the_elastica(alpha):
    """Tip load P = alpha EI / L^2 (dead, vertical); tip position against the elastica
    (Bisshopp and Drucker 1945), second-order convergence with the number of elements.
    EA / EI = 1e8 (L = 1): the extension is negligible."""
    x, v, _ = cantilever_tip(alpha)
    err = []
    for n in (8, 16):
        beam = CorotationalBeam2D.line("b", (0.0, 0.0), (1.0, 0.0), n, MAT, 1e8, 1.0)
        q, its = beam.static_equilibrium(beam.node_load(n, (0.0, -alpha)), [0, 1, 2], steps=10)
        assert max(its) <= 10
        err.append(np.hypot(q[-3] - x, q[-2] + v))
    assert err[1] <= ELASTICA_16[alpha]
    assert np.log2(err[0] / err[1]) > 1.9


def test_mass_matrix_rigid_body_kinetic_energy_and_gravity():
    """Linear interpolation is exact for rigid motion: T = 1/2 (rho A L^3 / 3 + rho I L) omega^2
    for a rotation about node 0; gravity totals m g, its potential is m g y_C."""
    L, A, I = 1.5, 0.02, 3e-5
    mat = Material(E=1e7, rho=2.0)
    for kind in ("consistent",):
        beam = CorotationalBeam2D.line("b", (0.0, 0.0), (L, 0.0), 4, mat, A, I, mass=kind)
        w = 3.0
        v = np.column_stack([np.zeros(beam.n_nodes), w * beam.nodes[:, 0], np.full(beam.n_nodes, w)]).ravel()
        T, V = beam.energy(beam.initial_coordinates(), v, (0.0, -9.81))
        assert T == pytest.approx(0.5 * (mat.rho * A * L ** 3 / 3 + mat.rho * I * L) * w ** 2, rel=1e-12)
        m = mat.rho * A * L
        assert V == pytest.approx(0.0, abs=1e-15)
        q = beam.initial_coordinates()
        q[1::3] += 2.0
        assert beam.energy(q, v, (0.0, -9.81))[1] == pytest.approx(m * 9.81 * 2.0, rel=1e-12)
        Qg = beam.gravity_force((0.0, -9.81))
        assert Qg[1::3].sum() == pytest.approx(-m * 9.81, rel=1e-12)
    lumped = CorotationalBeam2D.line("b", (0.0, 0.0), (L, 0.0), 4, mat, A, I, mass="lumped")
    assert np.trace(lumped.mass_matrix(None)) == pytest.approx(2 * m + mat.rho * I * L, rel=1e-12)


def test_markers_and_bad_input():
    beam = CorotationalBeam2D.line("beam", (1.0, 0.0), (3.0, 0.0), 4, MAT, 1.0, 1.0)
    q = beam.initial_coordinates()
    q[9:11] = (2.5, 0.7)
    assert np.allclose(beam.point(q, Node(3)), (2.5, 0.7))
    assert np.allclose(beam.point(q, np.array([1.5, 0.0])), (2.5, 0.7))     # node 0 + s is node 3
    J = beam.point_jacobian(q, Node(3))
    assert np.allclose(J @ q, (2.5, 0.7))
    with pytest.raises(ValueError, match="no node 7"):
        beam.point(q, Node(7))
    with pytest.raises(ValueError, match="not a node"):
        beam.point(q, np.array([0.2, 0.1]))
    with pytest.raises(ValueError, match="nodes"):
        CorotationalBeam2D("b", [[0.0, 0.0]], MAT, 1.0, 1.0)
    with pytest.raises(ValueError, match="mass"):
        CorotationalBeam2D.line("b", (0, 0), (1, 0), 2, MAT, 1.0, 1.0, mass="diagonal")
    with pytest.raises(ValueError, match="area"):
        CorotationalBeam2D.line("b", (0, 0), (1, 0), 2, MAT, -1.0, 1.0)


# -- dynamics ---------------------------------------------------------------------------------------
def _pendulum(E, n=4, L=1.0, b=0.02, rho=1000.0, g=9.81):
    from flexmbs.formulations.supported_body import SupportedBody
    beam = CorotationalBeam2D.line("pendulum", (0.0, 0.0), (L, 0.0), n, Material(E=E, rho=rho), b * b, b ** 4 / 12)
    return beam, SupportedBody(beam, fixed=[0, 1], gravity=(0.0, -g))


def test_beam_is_a_system_body_pinned_by_a_joint():
    """The beam in a System, pinned to the ground at Node(0) by a (2D) Spherical joint: 2 constraints,
    n_q - 2 degrees of freedom, the system's forces are the body's (gravity minus internal forces)."""
    from flexmbs import System
    from flexmbs.constraints.joints import Spherical
    beam, form = _pendulum(5e7)
    pin = Spherical(None, beam, s_j=Node(0), name="pin")
    system = System([beam], [pin], gravity=(0.0, -9.81))
    q = system.initial_coordinates()
    assert system.mobility(0.0, q)["dof"] == beam.n_q - 2
    q[3:] += 0.05 * np.sin(np.arange(beam.n_q - 3))
    q, v = system.assemble(0.0, q)
    assert np.allclose(q[:2], 0.0, atol=1e-12)
    Q = system.forces(0.0, q, v)
    assert np.allclose(Q, beam.gravity_force((0.0, -9.81)) - beam.internal_force(q))
    assert np.allclose(Q[form.free], form.second_order.f(0.0, q[form.free], v[form.free]))


def test_stiff_pendulum_swings_like_the_rigid_compound_pendulum():
    """E = 10 GPa: released horizontally, the beam hangs vertically after a quarter period
    T/4 = sqrt(I_O / (m g L/2)) K(1/2) (I_O = m L^2/3 + rho I L; K: complete elliptic integral)."""
    import scipy.special
    from flexmbs import simulate
    beam, form = _pendulum(1e10)
    L, g, m = 1.0, 9.81, beam.mass
    I_O = m * L ** 2 / 3 + beam.material.rho * beam.I * L
    t_quarter = np.sqrt(I_O / (m * g * L / 2)) * scipy.special.ellipk(0.5)
    sol = simulate(form, (0.0, t_quarter), form.state0(), method="midpoint", h=t_quarter / 240, newton_max_iter=20)
    assert sol.success, sol.message
    q, _ = form.physical(sol.t[-1], sol.x[-1])
    assert np.hypot(q[-3], q[-2] + L) <= 5e-4 * L                        # measured 6.2e-5


@pytest.mark.parametrize("method", ["midpoint", "generalized-alpha"])
def test_flexible_pendulum_conserves_energy(method):
    """E = 50 MPa (strong bending): total energy T + V_g + U kept to 3e-5 of m g L/2 over the
    swing to the vertical with h = 2 ms (measured 2.6e-5; 6.1e-6 with h = 1 ms: O(h^2))."""
    from flexmbs import simulate
    beam, form = _pendulum(5e7)
    opts = dict(rho_inf=1.0) if method == "generalized-alpha" else {}
    sol = simulate(form, (0.0, 0.48), form.state0(), method=method, h=2e-3, newton_max_iter=20, **opts)
    assert sol.success, sol.message
    E = form.energy(sol.x)
    scale = beam.mass * 9.81 * 0.5
    assert np.max(np.abs(E - E[0])) <= 3e-5 * scale
    q, _ = form.physical(sol.t, sol.x)
    assert q[-1, -2] < -0.95                                              # it has swung down
    assert np.max([beam.strain_energy(qk) for qk in q]) > 1e-3 * scale   # and bent on the way


def test_flexible_pendulum_case_writes_its_outputs(tmp_path):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
    import flexible_pendulum
    assert flexible_pendulum.main(["--elements", "3", "--t-end", "0.1", "--h", "0.002", "--dt-out", "0.01",
                                   "--no-plots", "--out", str(tmp_path)]) == 0
    data = np.load(tmp_path / "results.npz")
    assert data["t"].shape == (11,) and data["tip"].shape == (11, 2) and data["energy"].shape == (11,)
    assert data["tip"][0] == pytest.approx((1.0, 0.0))
    assert flexible_pendulum.main(["--elements", "3", "--t-end", "0.1", "--h", "0.002", "--dt-out", "0.01",
                                   "--pin", "joint", "--no-plots", "--out", str(tmp_path / "joint")]) == 0
    assert np.allclose(np.load(tmp_path / "joint" / "results.npz")["tip"], data["tip"], rtol=0, atol=1e-9)
    with pytest.raises(SystemExit):
        flexible_pendulum.main(["--models", "rigid", "--out", str(tmp_path / "x")])


def test_flexible_pendulum_case_streams_its_system_models_into_results_h5(tmp_path):
    """`flexmbs run flexible_pendulum`: each model that is a System (the pinned corotational beam,
    the mean-axis body) is a run of results.h5 named after it, whose body gives the case's nodal
    positions; the eliminated pin (not a System) writes none."""
    from pathlib import Path
    from flexmbs import cli, load_results
    from flexmbs.io import list_runs
    cases = Path(__file__).resolve().parents[1] / "cases"
    small = ["--set", "elements=3", "--set", "t_end=0.02", "--set", "h=0.002", "--set", "dt_out=0.01"]
    out = tmp_path / "joint"
    assert cli.main(["run", "flexible_pendulum", "--cases", str(cases), "--out", str(out), "--no-plots",
                     "--no-paraview", "--set", "models=corotational,mean-axis", *small]) == 0
    assert list_runs(out / "results.h5") == {"corotational": "finished", "mean-axis": "finished"}
    res = load_results(out / "results.h5", "corotational")
    beam = res.bodies["pendulum"]
    assert beam.kind == "corotational" and res.metadata["formulation"] == "lagrange"
    positions = np.load(out / "results.npz")["positions"]
    np.testing.assert_allclose(beam.nodes + beam.displacement, positions, rtol=0, atol=1e-12)
    assert load_results(out / "results.h5", "mean-axis").bodies["pendulum"].kind == "flexible"
    out = tmp_path / "eliminated"
    assert cli.main(["run", "flexible_pendulum", "--cases", str(cases), "--out", str(out), "--no-plots",
                     "--no-paraview", "--set", "pin=eliminated", *small]) == 0
    assert (out / "results.npz").is_file() and not (out / "results.h5").exists()


# -- spatial element (statics) --------------------------------------------------------------------
def _fd_3d(X0, E0, x, psi, k=(40.0, 0.8, 1.2, 0.7), h=1e-6):
    from flexmbs.elements.corotational3d import corotational_3d
    p = np.concatenate([x[:, 0], psi[:, 0], x[:, 1], psi[:, 1]], axis=1)

    def ev(p):
        return corotational_3d(X0, E0, np.stack([p[:, 0:3], p[:, 6:9]], 1), np.stack([p[:, 3:6], p[:, 9:12]], 1), *k)
    out = ev(p)
    K_fd, f_fd = np.zeros(out.stiffness.shape), np.zeros(out.force.shape)
    for j in range(12):
        pp, pm = p.copy(), p.copy()
        pp[:, j] += h
        pm[:, j] -= h
        op, om = ev(pp), ev(pm)
        K_fd[:, :, j] = (op.force - om.force) / (2 * h)
        f_fd[:, j] = (op.energy - om.energy) / (2 * h)
    return out, f_fd, K_fd


@pytest.mark.parametrize("psi_size", [0.0, np.sqrt(0.9e-3), np.sqrt(1.1e-3), 0.8, 3.0])
def test_spatial_element_force_and_tangent_are_derivatives(psi_size):
    """f = dU/dp, K = df/dp (central differences), also at psi = 0 and on both sides of the
    switch to the series of the Rodrigues coefficients (|psi|^2 = 1e-3)."""
    from flexmbs.elements.corotational3d import reference_frames
    rng = np.random.default_rng(3)
    X0 = np.array([[[0, 0, 0], [1.0, 0.2, 0.1]], [[1, 0.2, 0.1], [1.5, 1.0, -0.3]], [[0, 0, 0], [0, 0, 1.0]]])
    E0 = reference_frames(X0)
    x = X0 + 0.2 * rng.standard_normal(X0.shape)
    u = rng.standard_normal(X0.shape)
    psi = psi_size * u / np.linalg.norm(u, axis=2, keepdims=True)
    out, f_fd, K_fd = _fd_3d(X0, E0, x, psi)
    assert np.max(np.abs(f_fd - out.force)) <= 1e-7 * np.max(np.abs(out.force))
    assert np.max(np.abs(K_fd - out.stiffness)) <= 1e-7 * np.max(np.abs(out.stiffness))
    assert np.allclose(out.stiffness, np.swapaxes(out.stiffness, 1, 2), rtol=0, atol=1e-12 * np.abs(out.stiffness).max())


@pytest.mark.parametrize("w", [(0.4, -1.7, 2.2), (0.0, 0.0, 3.1), (1e-3, 0.0, 0.0)])
def test_spatial_rigid_motion_gives_no_internal_force(w):
    from flexmbs.elements.corotational3d import corotational_3d, reference_frames, rotation_vector_matrix
    from scipy.spatial.transform import Rotation
    w = np.array(w)
    R = rotation_vector_matrix(w)
    assert np.allclose(R, Rotation.from_rotvec(w).as_matrix(), atol=1e-14)
    X0 = np.array([[[0, 0, 0], [1.0, 0.2, 0.1]], [[1, 0.2, 0.1], [1.5, 1.0, -0.3]]])
    out = corotational_3d(X0, reference_frames(X0), X0 @ R.T + (1.0, -2.0, 3.0), np.broadcast_to(w, X0.shape),
                          40.0, 0.8, 1.2, 0.7)
    assert np.max(np.abs(out.force)) <= 1e-12 and np.max(np.abs(out.energy)) <= 1e-24


def test_spatial_reference_tangent_equals_linear_element():
    from flexmbs.elements.beam3d import BeamEB3D
    from flexmbs.elements.corotational3d import corotational_3d, reference_frames
    mat = Material(E=210e9, rho=7800.0, nu=0.3)
    A, Iy, Iz, J = 1e-2, 2e-5, 3e-5, 4e-5
    X0 = np.array([[[0, 0, 0], [1.0, 0.2, 0.1]], [[1, 0.2, 0.1], [1.5, 1.0, -0.3]], [[0, 0, 0], [0, 0, 1.0]]])
    for orientation in (None, (0.3, 1.0, 0.2)):
        K = corotational_3d(X0, reference_frames(X0, orientation), X0, np.zeros_like(X0),
                            mat.E * A, mat.G * J, mat.E * Iy, mat.E * Iz).stiffness
        K_lin = BeamEB3D(mat, A, Iy, Iz, J, orientation=orientation).k(X0)
        assert np.allclose(K, K_lin, rtol=0, atol=1e-12 * np.abs(K_lin).max())


def test_spatial_cantilever_small_and_large_loads():
    """Small loads: P L^3 / 3EI in both planes and T L / GJ.  Large diagonal load (equal EI, so
    the beam bends in the load's plane) against the elastica, PL^2/EI = 2: second order in the
    elements (measured errors 7.4e-3, 1.8e-3 L for 4, 8 elements)."""
    from flexmbs.bodies.corotational import CorotationalBeam3D
    mat = Material(E=1.0, rho=1.0, nu=0.25)
    beam = CorotationalBeam3D.line("b", (0, 0, 0), (2.0, 0, 0), 3, mat, 1e6, 2.0, 3.0, 1.5)
    F = np.zeros(beam.n_q)
    F[-6:] = (0.0, 1e-6, -2e-6, 3e-6, 0.0, 0.0)
    q, _ = beam.static_equilibrium(F, range(6), steps=1, tol=1e-12)
    assert q[-5] == pytest.approx(1e-6 * 8 / (3 * 3.0), rel=1e-5)         # v: EI_z = 3
    assert q[-4] == pytest.approx(-2e-6 * 8 / (3 * 2.0), rel=1e-5)        # w: EI_y = 2
    assert q[-3] == pytest.approx(3e-6 * 2.0 / (mat.G * 1.5), rel=1e-5)   # torsion
    x, v, _ = cantilever_tip(2.0)
    err = []
    for n in (4, 8):
        beam = CorotationalBeam3D.line("b", (0, 0, 0), (1.0, 0, 0), n, mat, 1e8, 1.0, 1.0, 2.0)
        F = np.zeros(beam.n_q)
        F[-6:-3] = 2.0 * np.array([0.0, -1.0, -1.0]) / np.sqrt(2)
        q, _ = beam.static_equilibrium(F, range(6), steps=8)
        tip = q[-6:-3]
        assert abs(tip[1] - tip[2]) <= 1e-6      # measured 1.2e-7 (4 elements), 2e-9 (8): the frame favours e2
        err.append(np.hypot(tip[0] - x, np.linalg.norm(tip[1:]) - v))
    assert err[1] <= 2.5e-3 and np.log2(err[0] / err[1]) > 1.8


def test_pinned_by_a_joint_equals_pinned_by_elimination():
    """The same pendulum two ways: a Spherical joint on Node(0) in a System (index-1 augmented
    formulation, coordinate partitioning) and the pin's coordinates eliminated (SupportedBody),
    both by the implicit midpoint rule: the same trajectory, the pin held."""
    from flexmbs import System, simulate
    from flexmbs.constraints.joints import Spherical
    from flexmbs.formulations.index1 import Index1
    beam, form = _pendulum(5e7)
    system = System([beam], [Spherical(None, beam, s_j=Node(0), name="pin")], gravity=(0.0, -9.81))
    joint = Index1(system, "augmented", "coordinate-partitioning")
    t_eval = np.linspace(0.0, 0.2, 11)
    a = simulate(joint, (0.0, 0.2), joint.state0(), method="midpoint", h=2e-3, t_eval=t_eval, newton_max_iter=20)
    b = simulate(form, (0.0, 0.2), form.state0(), method="midpoint", h=2e-3, t_eval=t_eval, newton_max_iter=20)
    assert a.success and b.success
    qa, _ = joint.physical(a.t, a.x)
    qb, _ = form.physical(b.t, b.x)
    assert np.max(np.abs(qa[:, :2])) <= 1e-10
    assert np.max(np.abs(qa - qb)) <= 1e-8                               # measured: round-off of the Newton loops


def test_flexible_pendulum_case_runs_both_models_side_by_side(tmp_path):
    """A stiff beam (E = 5 GPa) over the first 0.03 s: the corotational and the floating-frame
    models agree (measured 1.6e-4 m, 2 elements: their mass models differ), both keep their energy."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
    import flexible_pendulum
    runs = flexible_pendulum.run(models=["corotational", "floating-frame"], elements=2, t_end=0.03, dt_out=0.01,
                                 h=0.002, youngs=5e9, plots=False, out=tmp_path)
    assert all(r["success"] for r in runs.values())
    a, b = runs["corotational"]["tip"], runs["floating-frame"]["tip"]
    assert np.max(np.abs(a - b)) <= 5e-4 and a[-1, 1] < -0.004
    assert all(r["energy_error"] <= 1e-6 for r in runs.values())
    data = np.load(tmp_path / "results.npz")
    assert data["tip_floating_frame"].shape == data["tip_corotational"].shape == (4, 2)


def test_index3_alpha_on_the_pinned_beam():
    """The System with the joint by index3-alpha (rho_inf = 0.99, h = 1 ms) to the vertical: the
    tip within 2e-5 m of the midpoint rule on the eliminated pin (measured 5e-6), the pin held,
    the energy lost by the numerical damping below 3e-5 m g L/2 (measured 1.2e-5)."""
    from flexmbs import System, simulate
    from flexmbs.constraints.joints import Spherical
    from flexmbs.integrators.index3_alpha import ConstrainedProblem
    beam, form = _pendulum(5e7)
    system = System([beam], [Spherical(None, beam, s_j=Node(0), name="pin")], gravity=(0.0, -9.81))
    problem = ConstrainedProblem(system)
    a = simulate(problem, (0.0, 0.48), problem.state0(system.initial_coordinates(), np.zeros(system.n_q)),
                 method="index3-alpha", h=1e-3, rho_inf=0.99)
    b = simulate(form, (0.0, 0.48), form.state0(), method="midpoint", h=1e-3, newton_max_iter=20)
    assert a.success and b.success
    qa, va = problem.physical(a.t[-1], a.x[-1])
    qb, _ = form.physical(b.t[-1], b.x[-1])
    assert np.max(np.abs(qa[:2])) <= 1e-12
    assert np.hypot(*(qa[-3:-1] - qb[-3:-1])) <= 2e-5
    E0 = sum(system.energy(system.initial_coordinates(), np.zeros(system.n_q)))
    E1 = sum(system.energy(qa, va))                        # T + V_g + U
    assert abs(E1 - E0) <= 3e-5 * beam.mass * 9.81 / 2


def test_a_joint_on_a_node_that_does_not_exist_is_refused():
    from flexmbs.constraints.joints import Spherical
    beam = CorotationalBeam2D.line("beam", (0.0, 0.0), (1.0, 0.0), 2, MAT, 1.0, 1.0)
    with pytest.raises(ValueError, match=r"body 'beam': no node 5; the beam has nodes 0..2"):
        Spherical(None, beam, s_j=Node(5))
    with pytest.raises(ValueError, match="is not a node of the beam"):
        Spherical(None, beam, at=(0.3, 0.0))


# -- spatial beam as a body -------------------------------------------------------------------------
def _beam3d(n=4):
    from flexmbs.bodies.corotational import CorotationalBeam3D
    b = 0.02
    return CorotationalBeam3D.line("p", (0, 0, 0), (1, 0, 0), n, Material(E=5e7, rho=1e3, nu=0.3), b * b,
                                   b ** 4 / 12, b ** 4 / 12, 0.141 * b ** 4)


def test_the_vector_terms_of_node_0_evaluate_the_coefficients_once(monkeypatch):
    """`vector_jacobian` (R, T) and `vector_bias` (R, T, T' psi') take the coefficients A, B, C, B', C' of
    |psi_0|^2 once per call (`rotation_and_tangent`, `rotation_tangent_and_rate`: they were taken two and three
    times), with the values of the separate functions."""
    from flexmbs import rotations
    from flexmbs.elements import corotational3d as c3
    beam = _beam3d()
    rng = np.random.default_rng(1)
    q = beam.initial_coordinates() + 0.3 * rng.standard_normal(beam.n_q)
    v, u = rng.standard_normal(beam.n_q), np.array([0.3, -0.2, 0.9])
    psi, pd = q[3:6], v[3:6]
    a, w = c3.rotation_vector_matrix(psi) @ u, c3.tangent_operator(psi) @ pd
    bias = np.cross(c3.tangent_operator_rate(psi, pd), a) + np.cross(w, np.cross(w, a))
    calls = []
    coefficients = c3._coefficients_of
    monkeypatch.setattr(c3, "_coefficients_of", lambda p: calls.append(1) or coefficients(p))
    assert np.array_equal(beam.vector_bias(q, v, u), bias) and len(calls) == 1
    assert np.array_equal(beam.vector_jacobian(q, u)[:, 3:6], -rotations.skew(a) @ c3.tangent_operator(psi))
    assert len(calls) == 3                      # vector_jacobian's one and tangent_operator's just above


def test_spatial_body_inertia_and_markers_against_differences():
    """M = d^2T/dv^2 symmetric with T = 1/2 v^T M v; Q_v = -M' v + dT/dq (Lagrange, by central
    differences); omega of node 0 from R' R^T; vector Jacobian and bias; the power of a torque."""
    beam = _beam3d()
    rng = np.random.default_rng(0)
    q = beam.initial_coordinates() + 0.3 * rng.standard_normal(beam.n_q)
    v = rng.standard_normal(beam.n_q)
    M = beam.mass_matrix(q)
    assert np.allclose(M, M.T, rtol=0, atol=1e-15)
    T = beam.energy(q, v, None)[0]
    assert T == pytest.approx(0.5 * v @ M @ v, rel=1e-13)
    h = 1e-6
    v = v * np.tile([0, 0, 0, 1, 1, 1], beam.n_nodes)      # rotations only: T is then the rotary energy alone
    dTdq = np.array([(beam.energy(q + h * e, v, None)[0] - beam.energy(q - h * e, v, None)[0]) / (2 * h)
                     for e in np.eye(beam.n_q)])
    Mdot_v = (beam.mass_matrix(q + h * v) - beam.mass_matrix(q - h * v)) / (2 * h) @ v
    Qv = beam.quadratic_velocity(q, v)
    assert np.max(np.abs(Qv - (-Mdot_v + dTdq))) <= 1e-7 * np.max(np.abs(Mdot_v))
    R = beam.rotation(q)
    W = (beam.rotation(q + h * v) - beam.rotation(q - h * v)) / (2 * h) @ R.T
    assert np.allclose(beam.angular_velocity(q, v), (W[2, 1], W[0, 2], W[1, 0]), atol=1e-8)
    u = np.array([0.3, -0.2, 0.9])
    assert np.allclose(beam.vector_jacobian(q, u) @ v, (beam.vector(q + h * v, u) - beam.vector(q - h * v, u)) / (2 * h),
                       atol=1e-8)
    H = 1e-4
    second = (beam.vector(q + H * v, u) - 2 * beam.vector(q, u) + beam.vector(q - H * v, u)) / H ** 2
    assert np.allclose(beam.vector_bias(q, v, u), second, atol=1e-6)
    torque = np.array([0.2, 0.5, -0.1])
    assert beam.torque(q, torque) @ v == pytest.approx(torque @ beam.angular_velocity(q, v), rel=1e-12)


@pytest.mark.slow
def test_spatial_pendulum_conserves_energy_and_swings_like_the_planar_one():
    """The spatial beam on a spherical joint at Node(0), falling in the x-y plane (DOP853 on the
    index-1 form, 7 s CPU): energy kept to 1e-10 m g L/2 (measured 7e-15), the tip within 1e-5 m
    of the planar beam's (measured 2.5e-6; rotary inertia lumped here, consistent there)."""
    from flexmbs import System, simulate
    from flexmbs.constraints.joints import Spherical
    from flexmbs.formulations.index1 import Index1
    beam = _beam3d(2)
    system = System([beam], [Spherical(None, beam, s_j=Node(0), name="pin")], gravity=(0.0, -9.81, 0.0))
    form = Index1(system, "augmented", "coordinate-partitioning")
    sol = simulate(form, (0.0, 0.1), form.state0(), method="DOP853", rtol=1e-8, atol=1e-10, t_eval=[0.0, 0.05, 0.1])
    assert sol.success, sol.message
    q, v = form.physical(sol.t, sol.x)
    E = np.array([sum(system.energy(a, b)) for a, b in zip(q, v)])        # T + V_g + U
    assert np.max(np.abs(E - E[0])) <= 1e-10 * beam.mass * 9.81 / 2
    planar, pform = _pendulum(5e7, n=2)
    s2 = simulate(pform, (0.0, 0.1), pform.state0(), method="DOP853", rtol=1e-10, atol=1e-12, t_eval=[0.0, 0.05, 0.1])
    q2, _ = pform.physical(s2.t, s2.x)
    assert np.max(np.abs(q[:, -6:-4] - q2[:, -3:-1])) <= 1e-5 and np.max(np.abs(q[:, -4])) <= 1e-12
