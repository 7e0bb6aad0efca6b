"""Rigid (RBE2-like) interfaces in a reduced basis (flexmbs/reduction.py ``rigid_interfaces``,
flexmbs.bodies.Interface(rigid=True)): cantilevers with a rigid end under a tip moment against beam
theory, the difference to the averaging (RBE3-like) interface, and the marker of a FlexibleBody."""
import numpy as np
import pytest
from scipy.sparse.linalg import spsolve

import flexmbs as fm
from flexmbs.bodies import FlexibleBody, Interface
from flexmbs.elements import PlateMITC4
from flexmbs.mesh import generate
from flexmbs.reduction import reduce, rigid_interface_map
from flexmbs.assembly.assembler import dense_array

# nu = 0: pure bending of a prismatic bar is u = -kappa x z, w = kappa x^2 / 2 with no lateral
# contraction, a field that Tet10 (quadratic) and MITC4 (constant curvature) represent exactly and
# that a clamp at x = 0 and a rigid end face at x = L do not disturb: the closed form holds to round-off
STEEL0 = fm.Material(E=200e9, rho=7800.0, nu=0.0)
L, A = 1.0, 0.1                     # bar length and side of its square section [m]
M = 100.0                           # tip moment about +y [N m]


def bar():
    mesh = generate.box(8, 2, 2, L, A, A, cell="tetra10")
    return fm.Model(mesh, fm.Tet10(STEEL0), fixed=[("xmin", "all")])


def tip_motion(model, delta_of_force):
    """The rigid motion (u_c, theta) of the end face x = L under the moment M about y applied through
    its best-fit rigid motion (the generalised force Phi_r[4] M; `Model.interface_rigid_motion`)."""
    _, Phi_r = model.interface_rigid_motion("xmax")
    return Phi_r @ delta_of_force(Phi_r[4] * M)


def test_solid_cantilever_with_a_rigid_end_face_under_a_tip_moment_is_beam_theory():
    """Rigid end face (Craig-Bampton, its 6 rigid motions the interface DOFs): theta_y = M L / (E I) and
    w = -M L^2 / (2 E I) (Euler-Bernoulli; pure bending, no shear), exact for any number of modes since
    the constraint modes hold the static response to the face's rigid motions [Craig & Bampton 1968]."""
    red = reduce(bar(), 2, method="craig-bampton", rigid_interfaces=["xmax"], static_modes=False)
    assert red.n_dofs == 2 + 6
    c = tip_motion(red, lambda f: np.linalg.solve(dense_array(red.K), f))
    EI = STEEL0.E * A**4 / 12.0
    np.testing.assert_allclose(c[[2, 4]], [-M * L**2 / (2 * EI), M * L / EI], rtol=1e-9)
    assert np.abs(c[[0, 1, 3, 5]]).max() < 1e-9 * M * L / EI


def test_averaging_end_face_under_the_same_moment_turns_more():
    """The averaging interface spreads the moment over the face's nodes as an RBE3 with equal weights
    (the forces pinv(R_c)^T (0, M)); the face warps (Tet10's corner and mid-side nodes take equal shares,
    not the consistent loads of a linear stress), and its best-fit rotation exceeds M L / (E I) by 0.67 %
    on this mesh, its deflection by 0.05 %: the rigid face is stiffer."""
    md = bar()
    c = tip_motion(md, lambda f: spsolve(md.K.tocsc(), f))
    EI = STEEL0.E * A**4 / 12.0
    ratio = c[4] / (M * L / EI)
    assert 1.003 < ratio < 1.01
    assert 1.0 < c[2] / (-M * L**2 / (2 * EI)) < 1.002


def test_plate_strip_with_a_rigid_tip_edge_carries_a_moment():
    """A plate strip's tip edge made rigid: the moment M about y (through the nodes' theta_y and the
    edge's rigid motion) bends it as a beam, theta_y = M L / (E I), I = b t^3 / 12 (nu = 0).  An
    averaging interface of the same edge has no moment arm about y (all its nodes lie on the
    mid-surface, x = L): its translations alone cannot take that moment."""
    b, t = 0.2, 0.01
    md = fm.Model(generate.rectangle(8, 2, L, b, z=0.0), PlateMITC4(STEEL0, t), fixed=[("left", "all")])
    red = reduce(md, 3, method="craig-bampton", rigid_interfaces=["right"], static_modes=False)
    _, Phi_r = red.interface_rigid_motion("right")
    c = Phi_r @ np.linalg.solve(dense_array(red.K), Phi_r[4] * M)
    EI = STEEL0.E * b * t**3 / 12.0
    np.testing.assert_allclose(c[[2, 4]], [-M * L**2 / (2 * EI), M * L / EI], rtol=1e-9)
    X_c, Phi_c = md.interface_translation("right")
    R_translations = np.array([np.cross([0.0, 1.0, 0.0], x - X_c) for x in md.mesh.points[md.mesh.nodes("right")]])
    assert np.abs(R_translations).max() == 0.0          # rotation about y moves no node of the edge


@pytest.mark.parametrize("method", ["free", "craig-bampton"])
def test_every_basis_vector_moves_the_set_rigidly(method):
    md = bar()
    red = reduce(md, 3, method=method, rigid_interfaces=["xmax"], attachments=["xmax"])
    _, dofs, R = md.interface_rigid_modes("xmax")
    on_set = red.Phi[dofs]
    rigid_part = R @ np.linalg.lstsq(R, on_set, rcond=None)[0]
    np.testing.assert_allclose(rigid_part, on_set, atol=1e-10 * np.abs(on_set).max())
    T, others, sets = rigid_interface_map(md, ["xmax"])
    assert T.shape == (md.n_dofs, len(others) + 6) and len(sets) == 1 and len(dofs) == md.n_dofs - len(others)


def test_rigid_interface_marker_of_a_reduced_body_is_the_centroid():
    md = bar()
    red = reduce(md, 2, rigid_interfaces=["xmax"], static_modes=False)
    body = FlexibleBody(red, "bar")
    rigid, averaging = Interface("xmax", rigid=True), Interface("xmax")
    q = body.initial_coordinates()
    q[7:] = np.random.default_rng(0).standard_normal(red.n_dofs) * 1e-3
    np.testing.assert_allclose(body.point(q, rigid), body.point(q, averaging), atol=1e-15)
    np.testing.assert_allclose(body.point(body.initial_coordinates(), rigid), [L, A / 2, A / 2], atol=1e-15)
