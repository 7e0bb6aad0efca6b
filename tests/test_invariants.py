"""Assembled inertia invariants: brute-force definitions, rigid-body identities, signs.

The moving-frame matrices of Vlase, Nicolescu and Marin, Mathematics 8 (2020) 1401,
eqs. (A2)-(A8) (with the errata of docs/notation.md) are checked against direct Gauss
quadrature of their definitions, element by element, at random omega and eps.
"""
import numpy as np
import pytest
from scipy import sparse

from flexmbs import elements as el
from flexmbs.assembly import Assembler, assemble_invariants, tilde
from flexmbs.mesh import generate
from flexmbs.assembly.assembler import dense_array

STEEL = el.Material(E=2.1e11, rho=7800.0, nu=0.3)


def _bodies():
    """(id, element, mesh) for every element type, in general position."""
    out = []
    line2 = generate.line(5, 2.0, dim=2, direction=(0.6, 0.8), origin=(0.3, -0.2))
    out.append(("bar2", el.Bar2(STEEL, 1e-4), line2))
    out.append(("beam2d", el.BeamEB2D(STEEL, 1e-4, 1e-9), line2))
    out.append(("beam2d-rotary", el.BeamEB2D(STEEL, 1e-4, 1e-9, rotary_inertia=True), line2))
    line3 = generate.line(4, 1.5, dim=3, direction=(1.0, 0.5, -0.3), origin=(0.1, 0.2, 0.3))
    # rotary inertia on: without it the sections carry mass (torsion) but do not tilt in bending,
    # so a rigid rotation about a transverse axis cannot reproduce the section's share of I_O
    out.append(("beam3d", el.BeamEB3D(STEEL, 1e-4, 2e-9, 1e-9, 2.5e-9, rotary_inertia=True), line3))
    rect = generate.rectangle(3, 2, 1.0, 0.4, cell="quad")
    rect.points += [0.2, 0.1]
    out.append(("quad4", el.Quad4(STEEL, 0.01), rect))
    out.append(("tri3", el.Tri3(STEEL, 0.01), generate.rectangle(3, 2, 1.0, 0.4, cell="triangle")))
    box = generate.box(2, 1, 1, 1.0, 0.2, 0.3, cell="tetra")
    box.points += [0.5, -0.1, 0.2]
    out.append(("tet4", el.Tet4(STEEL), box))
    out.append(("tet10", el.Tet10(STEEL), generate.box(1, 1, 1, 1.0, 0.2, 0.3, cell="tetra10")))
    out.append(("hex8", el.Hex8(STEEL), generate.box(2, 1, 1, 1.0, 0.2, 0.3, cell="hexahedron")))
    return out


BODIES = _bodies()


@pytest.fixture(params=BODIES, ids=[b[0] for b in BODIES])
def body(request):
    _, element, mesh = request.param
    cells = mesh.cells[element.cell_type]
    X = mesh.points[cells]
    inv = assemble_invariants(element, X, cells, mesh.n_nodes, chunk=3)   # several chunks
    asm = Assembler(cells, mesh.n_nodes, element.dofs_per_node)
    return element, mesh, X, inv, asm


def _brute(element, X, asm, A, vector=False):
    """Assembled int rho N^T A N dV (or int rho N^T A x dV) by direct quadrature."""
    mp = element.mass_points(X)
    if vector:
        local = np.einsum("eq,eqan,ab,eqb->en", mp.w, mp.N, A, mp.x)
        return asm.vector(local)
    local = np.einsum("eq,eqan,ab,eqbm->enm", mp.w, mp.N, A, mp.N)
    return asm.matrix(local).toarray()


def test_moving_frame_terms_match_their_definitions(body):
    element, mesh, X, inv, asm = body
    rng = np.random.default_rng(7)
    for _ in range(3):
        omega, eps = rng.normal(size=3), rng.normal(size=3)
        W, E = tilde(omega), tilde(eps)
        scale = np.abs(inv.M).max()
        np.testing.assert_allclose(inv.c(omega).toarray(), 2 * _brute(element, X, asm, W), atol=1e-12 * scale)
        np.testing.assert_allclose(inv.k_omega(omega).toarray(), _brute(element, X, asm, W @ W),
                                   atol=1e-12 * scale * omega @ omega)
        np.testing.assert_allclose(inv.k_eps(eps).toarray(), _brute(element, X, asm, E), atol=1e-12 * scale)
        vscale = np.abs(inv.d).max()
        np.testing.assert_allclose(inv.q_omega(omega), _brute(element, X, asm, W @ W, vector=True),
                                   atol=1e-12 * vscale * omega @ omega)
        np.testing.assert_allclose(inv.q_eps(eps), _brute(element, X, asm, E, vector=True),
                                   atol=1e-12 * vscale)
    np.testing.assert_allclose(dense_array(inv.M), _brute(element, X, asm, np.eye(3)), atol=1e-12 * scale)


def test_signs_and_symmetries(body):
    element, mesh, X, inv, asm = body
    K = asm.matrix(element.k(X)).toarray()
    M = dense_array(inv.M)
    np.testing.assert_allclose(M, M.T, atol=1e-14 * np.abs(M).max())
    np.testing.assert_allclose(K, K.T, atol=1e-12 * np.abs(K).max())
    omega = np.array([0.3, -1.2, 2.0])
    C = inv.c(omega).toarray()
    np.testing.assert_allclose(C, -C.T, atol=1e-14 * np.abs(M).max())     # gyroscopic: skew
    Ke = inv.k_eps(omega).toarray()
    np.testing.assert_allclose(Ke, -Ke.T, atol=1e-14 * np.abs(M).max())
    Kw = inv.k_omega(omega).toarray()
    np.testing.assert_allclose(Kw, Kw.T, atol=1e-14 * np.abs(M).max())
    assert np.linalg.eigvalsh(Kw).max() <= 1e-12 * np.abs(Kw).max()     # centrifugal softening: NSD


def test_rigid_motions_give_body_mass_static_moment_and_inertia_tensor(body):
    """Rigid translations/rotations in DOF space reproduce m, s = int rho x and I_O."""
    element, mesh, X, inv, asm = body
    modes = element.rigid_modes(X)                             # (n_el, n_e, n_modes)
    n_modes = modes.shape[2]
    Phi = np.zeros((asm.n_dofs, n_modes))
    for k in range(n_modes):
        Phi[asm.element_dofs.ravel(), k] = modes[:, :, k].ravel()
    M = dense_array(inv.M)
    mass, s, J = inv.mass, inv.s, inv.J
    # element masses add up to the body's mass (reference: exact volume x rho)
    dim_modes = {1: 1, 3: 2, 6: 3}[n_modes] if n_modes in (1, 3, 6) else None
    if n_modes == 1:                             # axial bar: translation along its axis only
        e1 = X[0, 1] - X[0, 0]
        e1 = np.pad(e1 / np.linalg.norm(e1), (0, 3 - len(e1)))
        assert Phi[:, 0] @ M @ Phi[:, 0] == pytest.approx(mass, rel=1e-12)
        np.testing.assert_allclose(inv.m_O @ Phi[:, 0], mass * e1, atol=1e-12 * mass)
        return
    n_tr = dim_modes
    T, R = Phi[:, :n_tr], Phi[:, n_tr:]
    np.testing.assert_allclose(T.T @ M @ T, mass * np.eye(n_tr), rtol=1e-12, atol=1e-12 * mass)
    np.testing.assert_allclose(inv.m_O @ T, mass * np.eye(3)[:, :n_tr], atol=1e-12 * mass)
    # first moments: Phi_t^T d[a, b] = delta_ac s_b
    for a in range(n_tr):
        np.testing.assert_allclose(np.einsum("bn,n->b", inv.d[a], T[:, a]), s, atol=1e-12 * abs(s).max())
    # rotations about the axes through the origin: R^T M R = inertia tensor about O
    I_O = np.trace(J) * np.eye(3) - J
    axes = [2] if n_tr == 2 else [0, 1, 2]
    np.testing.assert_allclose(R.T @ M @ R, I_O[np.ix_(axes, axes)], rtol=1e-10, atol=1e-12 * abs(I_O).max())
    # the static moment from the rotations: int rho (theta x x) dV = theta x s
    for k, ax in enumerate(axes):
        np.testing.assert_allclose(inv.m_O @ R[:, k], np.cross(np.eye(3)[ax], s), atol=1e-12 * abs(s).max())


def test_mass_and_inertia_of_a_box_against_closed_form():
    """A homogeneous box [0,a]x[0,b]x[0,c]: m = rho abc, s = m (a,b,c)/2, J_aa = m a^2/3, J_ab = m ab/4."""
    a, b, c = 1.0, 0.2, 0.3
    for cell, element in (("hexahedron", el.Hex8(STEEL)), ("tetra", el.Tet4(STEEL)),
                          ("tetra10", el.Tet10(STEEL))):
        mesh = generate.box(3, 2, 2, a, b, c, cell=cell)
        cells = mesh.cells[cell]
        inv = assemble_invariants(element, mesh.points[cells], cells, mesh.n_nodes)
        m = STEEL.rho * a * b * c
        L = np.array([a, b, c])
        assert inv.mass == pytest.approx(m, rel=1e-12)
        np.testing.assert_allclose(inv.s, m * L / 2, rtol=1e-12)
        np.testing.assert_allclose(inv.J, m * (np.outer(L, L) / 4 + np.diag(L**2) / 12), rtol=1e-12)


def test_rigid_modes_are_in_the_null_space_of_the_stiffness(body):
    element, mesh, X, inv, asm = body
    K = asm.matrix(element.k(X))
    modes = element.rigid_modes(X)
    Phi = np.zeros((asm.n_dofs, modes.shape[2]))
    for k in range(modes.shape[2]):
        Phi[asm.element_dofs.ravel(), k] = modes[:, :, k].ravel()
    assert np.abs(K @ Phi).max() <= 1e-9 * abs(K).max() * np.abs(Phi).max()


def test_reduce_keeps_the_free_block():
    mesh = generate.line(4, 1.0)
    element = el.BeamEB2D(STEEL, 1e-4, 1e-9)
    cells = mesh.cells["line"]
    inv = assemble_invariants(element, mesh.points[cells], cells, mesh.n_nodes)
    free = np.arange(3, inv.n)
    red = inv.reduce(free)
    omega = np.array([0.0, 0.0, 3.0])
    np.testing.assert_allclose(red.k_omega(omega).toarray(), inv.k_omega(omega).toarray()[np.ix_(free, free)])
    np.testing.assert_allclose(red.q_omega(omega), inv.q_omega(omega)[free])
    assert sparse.issparse(red.M)
