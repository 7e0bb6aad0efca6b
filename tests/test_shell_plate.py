"""PlateMITC4 (flexmbs/elements/plate.py) against closed forms: element properties, exact inertia,
the patch tests, a thin cantilever strip without shear locking, Leissa's cantilever plate
frequencies and the membrane geometric stiffness."""
import numpy as np
import pytest
from scipy import sparse
from scipy.linalg import eigh
from scipy.sparse.linalg import eigsh

import flexmbs as fm
from flexmbs.elements import PlateMITC4
from flexmbs.mesh import generate
from flexmbs.rotations import skew
from flexmbs.assembly.assembler import dense_array

STEEL = fm.Material(E=200e9, rho=7800.0, nu=0.3)
# one distorted element in the plane z = 0.3 (counter-clockwise seen from +z)
DISTORTED = np.array([[[0.0, 0.0, 0.3], [2.0, 0.1, 0.3], [2.2, 1.5, 0.3], [-0.1, 1.0, 0.3]]])
# MacNeal & Harder's patch (Finite Elem. Anal. Des. 1 (1985) 3, doi:10.1016/0168-874X(85)90003-4):
# the rectangle 0.24 x 0.12 with four interior nodes, five distorted quadrilaterals
PATCH_POINTS = np.array([[0.0, 0.0], [0.24, 0.0], [0.24, 0.12], [0.0, 0.12],
                         [0.04, 0.02], [0.18, 0.03], [0.16, 0.08], [0.08, 0.08]])
PATCH_CELLS = np.array([[0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7], [4, 5, 6, 7]])
D_STEEL = STEEL.E / (12.0 * (1.0 - STEEL.nu**2))      # D / t^3


def polygon_area_centroid(P):
    """Area and centroid of a simple polygon (shoelace formula)."""
    x, y = P[:, 0], P[:, 1]
    cross = x * np.roll(y, -1) - np.roll(x, -1) * y
    A = cross.sum() / 2.0
    return A, np.array([((x + np.roll(x, -1)) * cross).sum(), ((y + np.roll(y, -1)) * cross).sum()]) / (6.0 * A)


def test_k_symmetric_rank_14_with_the_rigid_modes_as_null_space():
    el = PlateMITC4(STEEL, 0.01)
    k, R = el.k(DISTORTED), el.rigid_modes(DISTORTED)
    scale = np.abs(k).max()
    assert np.abs(k - np.swapaxes(k, 1, 2)).max() < 1e-14 * scale
    assert np.abs(k @ R).max() < 1e-12 * scale
    assert np.linalg.matrix_rank(k[0], tol=1e-10 * scale) == 20 - 6     # no spurious zero-energy mode


def test_mass_and_first_moment_of_a_distorted_element_are_the_plates():
    t, rho = 0.02, STEEL.rho
    ii = PlateMITC4(STEEL, t).inertia_integrals(DISTORTED)
    A, c = polygon_area_centroid(DISTORTED[0, :, :2])
    assert ii.mass[0] == pytest.approx(rho * t * A, rel=1e-13)
    assert ii.s[0] == pytest.approx(rho * t * A * np.array([c[0], c[1], 0.3]), rel=1e-13)
    m = ii.m[0]
    assert np.abs(m - m.T).max() < 1e-14 * np.abs(m).max()
    assert np.linalg.eigvalsh(m).min() > 0                                # rotary inertia: m is definite


def test_rigid_motions_carry_the_exact_inertia_of_a_rectangular_plate():
    """R^T M R of the assembled mesh equals the rigid-body mass matrix of the plate [0, a] x [0, b] at
    z = z0, thickness t: int rho x x^T dV in closed form (rotary inertia of the thickness included)."""
    a, b, t, z0, rho = 2.0, 1.0, 0.05, 0.4, STEEL.rho
    mesh = generate.rectangle(3, 2, a, b, z=z0)
    md = fm.Model(mesh, PlateMITC4(STEEL, t))
    R = md.rigid_modes(full=True)
    MR = R.T @ (md.M @ R)
    m = rho * a * b * t
    s = m * np.array([a / 2, b / 2, z0])
    J = m * np.array([[a**2 / 3, a * b / 4, a * z0 / 2],
                      [a * b / 4, b**2 / 3, b * z0 / 2],
                      [a * z0 / 2, b * z0 / 2, z0**2 + t**2 / 12]])
    exact = np.block([[m * np.eye(3), -skew(s)], [skew(s), np.trace(J) * np.eye(3) - J]])
    assert np.abs(MR - exact).max() < 1e-12 * np.abs(exact).max()


def solve_patch(values, thickness):
    """Interior DOFs of the MacNeal-Harder patch from the boundary DOFs ``values`` (8, 5) of an exact
    field, no load; returns the interior solution and the exact interior values."""
    el = PlateMITC4(STEEL, thickness)
    X = np.pad(PATCH_POINTS, ((0, 0), (0, 1)))[PATCH_CELLS]
    dofs = (PATCH_CELLS[:, :, None] * 5 + np.arange(5)).reshape(len(PATCH_CELLS), -1)
    K = np.zeros((40, 40))
    np.add.at(K, (dofs[:, :, None], dofs[:, None, :]), el.k(X))
    inner, outer = np.arange(20, 40), np.arange(20)
    u = values.ravel()
    return np.linalg.solve(K[np.ix_(inner, inner)], -K[np.ix_(inner, outer)] @ u[outer]), u[inner]


@pytest.mark.parametrize("thickness", [0.001, 0.05])
def test_patch_constant_membrane_strain(thickness):
    """u = 1e-3 (1 + 2 x + 3 y), v = 1e-3 (-1 + 4 x - 5 y): a constant strain, reproduced exactly."""
    x, y = PATCH_POINTS.T
    values = np.zeros((8, 5))
    values[:, 0] = 1e-3 * (1 + 2 * x + 3 * y)
    values[:, 1] = 1e-3 * (-1 + 4 * x - 5 * y)
    got, exact = solve_patch(values, thickness)
    assert np.abs(got - exact).max() < 1e-12


@pytest.mark.parametrize("thickness", [0.0001, 0.001, 0.05])
def test_patch_constant_curvature(thickness):
    """Kirchhoff field w = 1e-3 (x^2 + 2 y^2 + x y) / 2 with theta_y = -w_,x and theta_x = w_,y:
    constant curvature, zero shear; the interior nodes take it exactly (MITC4 passes the bending
    patch test, where a displacement element with full shear integration fails when thin)."""
    x, y = PATCH_POINTS.T
    values = np.zeros((8, 5))
    values[:, 2] = 1e-3 * (x**2 + 2 * y**2 + x * y) / 2
    values[:, 3] = 1e-3 * (2 * y + x / 2)                     # theta_x = w_,y
    values[:, 4] = -1e-3 * (x + y / 2)                        # theta_y = -w_,x
    got, exact = solve_patch(values, thickness)
    # round-off grows with the shear-to-bending stiffness ratio (patch size / t)^2 ~ 1e7 at t = 1e-4
    assert np.abs(got - exact).max() < 1e-8 * np.abs(exact).max()


def strip_tip_deflection(n, L, b, t):
    """Tip deflection of a cantilever strip (n x 1 elements) under a tip force P = 1 N in cylindrical
    bending (theta_x = 0 everywhere: no anticlastic curvature)."""
    mesh = generate.rectangle(n, 1, L, b, z=0.0)
    md = fm.Model(mesh, PlateMITC4(STEEL, t), fixed=[("left", "all"), (np.arange(mesh.n_nodes), ["theta_x"])])
    f = np.zeros(md.n_dofs)
    tip = mesh.node_sets["right"]
    f[[md.dof(i, "w") for i in tip]] = 0.5
    u = sparse.linalg.spsolve(sparse.csc_matrix(md.K), f)
    return u[md.dof(tip[0], "w")]


@pytest.mark.parametrize("slenderness", [1e3, 1e4])
def test_thin_cantilever_strip_does_not_lock(slenderness):
    """w = P L^3 / (3 D b) + P L / (k_s G t b), D = E t^3 / (12 (1 - nu^2)) (cylindrical bending, Timoshenko &
    Woinowsky-Krieger, Theory of Plates and Shells, 1959, sec. 1): the error falls as 1/n^2 whatever L/t
    (observed -1/(4 n^2)); a locking element would be stiffer by a factor growing with (L/t)^2."""
    L, b = 1.0, 0.1
    t = L / slenderness
    exact = L**3 / (3 * D_STEEL * t**3 * b) + L / (5 / 6 * STEEL.G * t * b)
    errors = np.array([strip_tip_deflection(n, L, b, t) / exact - 1 for n in (4, 8, 16)])
    assert np.all(np.abs(errors) < 0.3 / np.array([4, 8, 16]) ** 2), errors
    rates = np.log2(errors[:-1] / errors[1:])
    assert np.all(np.abs(rates - 2.0) < 0.05), rates


def test_cantilever_square_plate_frequencies_leissa():
    """lambda = omega a^2 sqrt(rho t / D) of the square plate clamped on one edge, nu = 0.3: 3.4917, 8.5246,
    21.429 (A. W. Leissa, Vibration of Plates, NASA SP-160, 1969, table 4.53, from Barton's Ritz
    solution, an upper bound).  A 14 x 14 mesh (a / t = 100) gives 3.474, 8.516, 21.51: the first two converge
    from above to values 0.5 % and 0.2 % below the Ritz bound (Richardson from 8 and 16 elements: 3.4708,
    8.5069), the third from above to it."""
    a, t, n = 1.0, 0.01, 14
    md = fm.Model(generate.rectangle(n, n, a, a, z=0.0), PlateMITC4(STEEL, t), fixed=[("left", "all")])
    w2 = np.sort(eigsh(sparse.csc_matrix(md.K), k=3, M=sparse.csc_matrix(md.M), sigma=0.0)[0])
    lam = np.sqrt(w2) * a**2 * np.sqrt(STEEL.rho * t / (D_STEEL * t**3))
    assert lam == pytest.approx([3.4917, 8.5246, 21.429], rel=7e-3)


def test_membrane_geometric_stiffness_energy_of_a_uniform_stress():
    """1/2 d^T k_geo d = 1/2 t int grad(u_c) . sigma . grad(u_c) dA for each translation u_c; with the bilinear
    field w = x, u = y and a uniform sigma it is t A (sigma_xx + sigma_yy); rigid translations carry none."""
    t = 0.01
    el = PlateMITC4(STEEL, t)
    sigma = np.array([[[3e6, 1e6], [1e6, 2e6]]])
    kg = el.k_geo(DISTORTED, sigma)[0]
    A, _ = polygon_area_centroid(DISTORTED[0, :, :2])
    d = np.zeros((4, 5))
    d[:, 2] = DISTORTED[0, :, 0]              # w = x
    d[:, 0] = DISTORTED[0, :, 1]              # u = y
    assert d.ravel() @ kg @ d.ravel() == pytest.approx(t * A * (3e6 + 2e6), rel=1e-13)
    assert np.abs(kg @ el.rigid_modes(DISTORTED)[0][:, :3]).max() < 1e-9 * np.abs(kg).max()


def test_prestress_is_the_membrane_stress_of_a_constant_strain():
    el = PlateMITC4(STEEL, 0.01)
    x, y = DISTORTED[0, :, 0], DISTORTED[0, :, 1]
    d = np.zeros((4, 5))
    d[:, 0], d[:, 1] = 1e-4 * x + 2e-4 * y, 3e-4 * x    # eps_xx = 1e-4, eps_yy = 0, gamma_xy = 5e-4
    sigma = el.prestress(DISTORTED, d.reshape(1, 20))
    E, nu = STEEL.E, STEEL.nu
    exact = np.array([[E / (1 - nu**2) * 1e-4, STEEL.G * 5e-4], [STEEL.G * 5e-4, E * nu / (1 - nu**2) * 1e-4]])
    assert np.abs(sigma - exact).max() < 1e-9 * np.abs(exact).max()


def test_model_of_plates_reduces_and_keeps_the_lowest_frequency():
    """A Model of plates reduces (positive definite M: no massless DOF) and the reduced body keeps the full
    mesh's first frequency."""
    md = fm.Model(generate.rectangle(6, 2, 1.0, 0.4, z=0.0), PlateMITC4(STEEL, 0.005), fixed=[("left", "all")])
    from flexmbs.reduction import reduce
    red = reduce(md, 3)
    w2 = eigh(dense_array(md.K), dense_array(md.M), eigvals_only=True, subset_by_index=(0, 0))
    # both by dense eigh: round-off of order eps * omega_max^2 / omega_1^2 (membrane over bending, ~1e9)
    assert red.omega2[0] == pytest.approx(w2[0], rel=1e-5)


def test_spinning_plate_strip_stiffens_as_the_beam():
    """A Model of plates with stiffening=True takes its pre-stress from the membrane stress of the static
    centrifugal displacement (``prestress``) and its k_geo: a strip (nu = 0, one element wide) spinning
    about the axis normal to its plane at 50 rad/s has the flapwise frequencies of the BeamEB3D strip of the
    same section on the same frame (25.85 -> 59.61 rad/s, the beam 25.84 -> 59.63)."""
    from flexmbs.modal import natural_frequencies
    from flexmbs.motion import ConstantRotation
    mat = fm.Material(E=70e9, rho=2700.0, nu=0.0)
    L, b, t = 1.0, 0.05, 0.005
    spin = ConstantRotation(50.0, axis=(0, 0, 1))
    plate = fm.Model(generate.rectangle(20, 1, L, b, z=0.0), PlateMITC4(mat, t), fixed=[("left", "all")], motion=spin,
                     stiffening=True)
    beam = fm.Model(generate.line(20, L, dim=3), fm.BeamEB3D(mat, b * t, Iy=b * t**3 / 12, Iz=t * b**3 / 12,
                                                             J=b * t**3 / 3), fixed=[("start", "all")],
                    motion=spin, stiffening=True)
    w_plate = natural_frequencies(plate, n_modes=2, gyroscopic=False)[0]
    w_beam = natural_frequencies(beam, n_modes=2, gyroscopic=False)[0]
    assert w_plate[0] == pytest.approx(w_beam[0], rel=1e-3)
    assert w_plate[0] > 2 * natural_frequencies(fm.Model(plate.mesh, plate.element, fixed=[("left", "all")]),
                                                n_modes=1, gyroscopic=False)[0][0]


def test_plate_mesh_in_3d_keeps_the_deflection_in_the_displacement_field():
    """generate.rectangle(..., z=z0) gives the 3D points PlateMITC4 takes; Model.displacement_field then holds
    w (a 2D mesh would keep only u, v: refused, tests/test_failures_shell.py)."""
    mesh = generate.rectangle(4, 1, 1.0, 0.1, z=0.25)
    assert mesh.points.shape == (10, 3) and np.all(mesh.points[:, 2] == 0.25)
    md = fm.Model(mesh, PlateMITC4(STEEL, 0.001), fixed=[("left", "all")])
    delta = np.zeros(md.n_dofs)
    tip = mesh.node_sets["right"]
    delta[[md.dof(i, "w") for i in tip]] = 0.01
    u = md.displacement_field(delta)
    assert u.shape == (10, 3) and np.all(u[tip, 2] == 0.01) and np.count_nonzero(u) == len(tip)


def test_rigid_inertia_of_a_distorted_element_against_a_high_order_rule():
    """int rho x x^T dV of the distorted element by 6 x 6 in-plane and 4 through-thickness Gauss points on the
    isoparametric map (independent of the element's code) equals the element's J, and R^T m R its rigid-body
    mass matrix: the 2 x 2 x 2 mass points are exact on a non-parallelogram, rotary inertia included."""
    from flexmbs.elements import Quad4
    from flexmbs.quadrature import gauss_legendre, quadrature
    t, rho = 0.3, STEEL.rho
    el = PlateMITC4(STEEL, t)
    xi, w = quadrature("quad", 11)
    zeta, wz = gauss_legendre(7)
    X = DISTORTED[0]
    Jm = np.einsum("nc,pnk->pck", X[:, :2], Quad4.dshape(xi))
    dA = w * (Jm[:, 0, 0] * Jm[:, 1, 1] - Jm[:, 0, 1] * Jm[:, 1, 0])
    x_mid = Quad4.shape(xi) @ X
    x = np.concatenate([x_mid + [0.0, 0.0, z] for z in t / 2 * zeta])
    weight = rho * t / 2 * np.concatenate([dA * wzk for wzk in wz])
    mass, s, J = weight.sum(), weight @ x, np.einsum("p,pa,pb->ab", weight, x, x)
    ii = el.inertia_integrals(DISTORTED)
    assert np.abs(ii.J[0] - J).max() < 1e-13 * np.abs(J).max()
    R = el.rigid_modes(DISTORTED)[0]
    exact = np.block([[mass * np.eye(3), -skew(s)], [skew(s), np.trace(J) * np.eye(3) - J]])
    assert np.abs(R.T @ ii.m[0] @ R - exact).max() < 1e-12 * np.abs(exact).max()


def test_pressure_as_a_volume_load_bends_the_strip_as_the_closed_form():
    """A pressure q on the plate is the DistributedLoad q / t per volume along z (int N^T dV from the mass
    points); the cantilever strip in cylindrical bending deflects by w = q L^4 / (8 D) at the tip (Timoshenko &
    Woinowsky-Krieger, sec. 1, a uniformly loaded cantilever of unit width), plus the shear term
    q L^2 / (2 k_s G t): the tip deflection comes out exact (1e-9 with 8 or 16 elements), as for the linear
    Timoshenko beam element with a consistent uniform load."""
    L, b, t, q = 1.0, 0.1, 0.002, 100.0
    mesh = generate.rectangle(16, 1, L, b, z=0.0)
    md = fm.Model(mesh, PlateMITC4(STEEL, t), fixed=[("left", "all"), (np.arange(mesh.n_nodes), ["theta_x"])],
                  loads=[fm.DistributedLoad((0.0, 0.0, q / t), per="volume")])
    u = sparse.linalg.spsolve(sparse.csc_matrix(md.K), md.Q[:, 0])
    exact = q * L**4 / (8 * D_STEEL * t**3) + q * L**2 / (2 * 5 / 6 * STEEL.G * t)
    assert u[md.dof(mesh.node_sets["right"][0], "w")] == pytest.approx(exact, rel=1e-6)
