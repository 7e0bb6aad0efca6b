"""Stresses of PlateMITC4 (flexmbs/elements/plate.py) against closed forms: a strip in pure and in
cylindrical bending (sigma_x = 6 M / t^2 at the surfaces), constant membrane stress from an edge
traction, the shear resultant of a tip force, and the same outputs from a reduced plate's modes."""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.analysis import element_data
from flexmbs.elements import PlateMITC4
from flexmbs.mesh import generate
from flexmbs.model import SurfaceLoad
from flexmbs.reduction import reduce
from flexmbs.assembly.assembler import dense_array

STEEL = fm.Material(E=200e9, rho=7800.0, nu=0.3)
L, B, T = 1.0, 0.2, 0.01              # strip length, width, thickness [m]
NX, NY = 8, 2


def strip(loads=(), fixed_extra=()):
    """A cantilever strip [0, L] x [0, B] at z = 0, clamped along x = 0."""
    mesh = generate.rectangle(NX, NY, L, B, z=0.0)
    return fm.Model(mesh, PlateMITC4(STEEL, T), fixed=[("left", "all"), *fixed_extra], loads=list(loads))


def edge_weights(n: int) -> np.ndarray:
    """Consistent nodal weights of a load uniform along an edge of n equal segments (sum = 1)."""
    w = np.full(n + 1, 1.0 / n)
    w[[0, -1]] /= 2.0
    return w


def static(md):
    """delta = K^-1 (sum of the load columns): the static response to all loads at once."""
    return np.linalg.solve(dense_array(md.K), md.Q.sum(axis=1))


def tip_edge_load(md_mesh, dof: str, total: float):
    """NodalLoads: ``total`` spread consistently over the right edge's nodes on DOF ``dof``."""
    nodes = md_mesh.node_sets["right"]
    return [fm.NodalLoad([int(n)], dof, total * w) for n, w in zip(nodes, edge_weights(len(nodes) - 1))]


@pytest.mark.parametrize("theta_x_held, sigma_yy_over_sigma_xx", [
    (False, 0.0),           # free long edges: pure bending of a strip, sigma_y = 0 (anticlastic curvature)
    (True, STEEL.nu),       # theta_x held everywhere: cylindrical bending, kappa_y = 0, sigma_y = nu sigma_x
])
def test_strip_in_bending_has_sigma_x_6M_over_t2_at_the_surfaces(theta_x_held, sigma_yy_over_sigma_xx):
    """A moment M per unit width about +y at the tip: M_x = M in every element, so sigma_xx = +-6 M / t^2
    at z = +-t/2 (Timoshenko & Woinowsky-Krieger, Theory of plates and shells, 1959, sec. 2-3), exact
    for MITC4 (it passes the constant-curvature patch test)."""
    M = 150.0                                                    # [N m / m]
    mesh = generate.rectangle(NX, NY, L, B, z=0.0)
    left = mesh.node_sets["left"]
    # x = 0 a plane of symmetry (u = theta_y = 0) and w = 0 at its two corners, v = 0 at one: no clamp,
    # so the strip can curve anticlastically
    fixed = [("left", ["u", "theta_y"]), ([int(left[0])], ["v", "w"]), ([int(left[-1])], ["w"])]
    fixed += [(np.arange(mesh.n_nodes), ["theta_x"])] if theta_x_held else []
    md = fm.Model(mesh, PlateMITC4(STEEL, T), fixed=fixed, loads=tip_edge_load(mesh, "theta_y", M * B))
    out = element_data(md, static(md))
    top, bottom = out["stress"], out["stress_bottom"]
    sigma = 6.0 * M / T**2
    np.testing.assert_allclose(top[:, 0], sigma, rtol=1e-9)
    np.testing.assert_allclose(bottom[:, 0], -sigma, rtol=1e-9)
    np.testing.assert_allclose(top[:, 1], sigma_yy_over_sigma_xx * sigma, atol=1e-9 * sigma)
    assert np.abs(top[:, 2:]).max() < 1e-9 * sigma              # zz, yz, xz (no shear at a surface), xy
    np.testing.assert_allclose(out["shear_force"], 0.0, atol=1e-9 * M)
    vm = np.sqrt(1.0 - sigma_yy_over_sigma_xx + sigma_yy_over_sigma_xx**2) * sigma   # plane stress
    np.testing.assert_allclose(out["von_mises"], vm, rtol=1e-9)


def test_tip_force_gives_the_shear_resultant_and_the_linear_moment():
    """A transverse tip force F: Q_x = F / B in every element and M_x(x) = -F (L - x) / B (statics of
    a cantilever), so sigma_xx(top) = 6 M_x / t^2 at each element's centroid x_c.  (Q_y is not zero
    near the clamp, which holds the anticlastic curvature.)"""
    F = 40.0
    mesh = generate.rectangle(NX, NY, L, B, z=0.0)
    md = strip(tip_edge_load(mesh, "w", F))
    out = element_data(md, static(md))
    np.testing.assert_allclose(out["shear_force"][:, 0], F / B, rtol=1e-9)
    x_c = md.X[:, :, 0].mean(axis=1)
    np.testing.assert_allclose(out["stress"][:, 0], 6.0 * (-F * (L - x_c) / B) / T**2, rtol=1e-9)


def test_stress_through_the_thickness_is_linear_in_plane_and_parabolic_in_shear():
    el = PlateMITC4(STEEL, T)
    X = generate.rectangle(1, 1, 0.3, 0.2, z=0.0).points[generate.rectangle(1, 1).cells["quad"]]
    u_e = np.random.default_rng(1).standard_normal((1, 20)) * 1e-4
    top, mid, bottom = (el.stress(X, u_e, z=z) for z in (T / 2, 0.0, -T / 2))
    np.testing.assert_allclose(mid[:, :2, :2], (top[:, :2, :2] + bottom[:, :2, :2]) / 2, rtol=1e-12)
    np.testing.assert_allclose(mid[0, :2, 2], 1.5 * el.shear_force(X, u_e)[0] / T, rtol=1e-12)
    assert np.all(top[:, :, 2] == 0) and np.all(bottom[:, 2, :] == 0)
    gauss = el.stress(X, u_e, xi=np.array([[-0.5, 0.5], [0.5, -0.5]]))
    assert gauss.shape == (1, 2, 3, 3)


def test_edge_traction_is_a_surface_load_giving_constant_membrane_stress():
    """A SurfaceLoad traction p along x on the tip edge (line cells): sigma_xx = p in every element, at
    both surfaces (the edge face is t high, so the force is p t B)."""
    p = 3.0e6
    mesh = generate.rectangle(NX, NY, L, B, z=0.0)
    right = mesh.node_sets["right"]
    edges = np.column_stack([right[:-1], right[1:]])[:, ::-1]     # outward: the plate is on the left
    # x = 0 a plane of symmetry (u = 0), v = 0 at one node, no bending: free to contract laterally
    fixed = [("left", ["u"]), ([int(mesh.node_sets["left"][0])], ["v"]), ("all", ["w", "theta_x", "theta_y"])]
    mesh.node_sets["all"] = np.arange(mesh.n_nodes)
    md = fm.Model(mesh, PlateMITC4(STEEL, T), fixed=fixed, loads=[SurfaceLoad({"line": edges}, traction=(p, 0.0, 0.0))])
    assert md.Q.sum() == pytest.approx(p * T * B, rel=1e-12)
    out = element_data(md, static(md))
    for key in ("stress", "stress_bottom"):
        np.testing.assert_allclose(out[key][:, 0], p, rtol=1e-9)
        assert np.abs(out[key][:, 1:]).max() < 1e-9 * p
    pressure = fm.Model(mesh, PlateMITC4(STEEL, T), fixed=fixed,
                        loads=[SurfaceLoad({"line": edges}, pressure=-p)])   # a pull: minus a pressure
    np.testing.assert_allclose(pressure.Q, md.Q, atol=1e-9 * p * T * B)


def test_reduced_plate_recovers_every_stress_output_from_its_modes():
    mesh = generate.rectangle(NX, NY, L, B, z=0.0)
    md = strip(tip_edge_load(mesh, "w", 1.0))
    red = reduce(md, 4)
    q = np.random.default_rng(0).standard_normal((3, red.n_dofs)) * 1e-3
    full, modal = element_data(md, red.physical(q)), element_data(red, q)
    assert sorted(full) == sorted(modal) == ["shear_force", "stress", "stress_bottom", "von_mises"]
    for key in full:
        scale = np.abs(full[key]).max()
        np.testing.assert_allclose(modal[key], full[key], atol=1e-10 * scale)
    assert full["stress"].shape == (3, NX * NY, 6) and full["shear_force"].shape == (3, NX * NY, 2)


def test_stress_fields_in_batches_equal_one_state_at_a_time(monkeypatch):
    md = strip()
    states = np.random.default_rng(2).standard_normal((2, 3, md.n_dofs)) * 1e-5
    whole = md.stress_fields(states)
    monkeypatch.setattr(fm.model, "STRESS_BATCH", 2 * len(md.cells))              # two states per call
    batched = md.stress_fields(states)
    one = [md.stress_fields(s) for s in states.reshape(-1, md.n_dofs)]
    for key in whole:
        assert batched[key].shape == whole[key].shape == (2, 3) + one[0][key].shape
        np.testing.assert_array_equal(batched[key], whole[key])
        np.testing.assert_allclose(whole[key].reshape((6,) + one[0][key].shape), np.stack([o[key] for o in one]),
                                   rtol=1e-12, atol=1e-12 * np.abs(whole[key]).max())
    assert md.stress_fields(np.zeros((0, md.n_dofs)))["stress"].shape == (0, len(md.cells), 3, 3)


def test_plate_stress_in_the_paraview_files(tmp_path):
    """A short run of a plate: the stress of both surfaces and the shear resultants in the XDMF file."""
    meshio = pytest.importorskip("meshio")
    mesh = generate.rectangle(4, 1, L, B, z=0.0)
    md = fm.Model(mesh, PlateMITC4(STEEL, T), fixed=[("left", "all")],
                  loads=[fm.NodalLoad("right", "w", 10.0)])
    res = fm.run(md, t_end=2e-4, dt_out=1e-4)
    xdmf = fm.io.write_xdmf(res, tmp_path / "plate.xdmf")
    with meshio.xdmf.TimeSeriesReader(xdmf) as reader:
        reader.read_points_cells()
        _, _, cell_data = reader.read_data(2)
    for key in ("stress", "stress_bottom"):
        np.testing.assert_array_equal(cell_data[key][0], res.element_data[key][-1][:, [0, 1, 2, 5, 3, 4]])
    np.testing.assert_array_equal(cell_data["shear_force"][0], res.element_data["shear_force"][-1])
    assert np.abs(res.element_data["stress"][-1]).max() > 0
