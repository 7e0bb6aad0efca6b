"""Vector-Lagrange solid elements: Tri3, Quad4 (plane stress), Tet4, Tet10, Hex8.

Element properties, exact integrals on boxes, the fast inertia path against the
generic definition, patch tests, geometric stiffness and the axial frequency of a
clamped-free bar, (pi / 2) sqrt(E / rho) / L.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse.linalg

from flexmbs.assembly import Assembler, assemble_invariants
from flexmbs.elements.base import Material, inertia_from_points
from flexmbs.elements.hex8 import Hex8
from flexmbs.elements.quad4 import Quad4
from flexmbs.elements.tet4 import Tet4
from flexmbs.elements.tet10 import EDGES, Tet10
from flexmbs.elements.tri3 import Tri3
from flexmbs.mesh import generate
from flexmbs.quadrature import quadrature

MAT = Material(E=2.0e11, rho=7800.0, nu=0.3)
THICKNESS = 0.05
CLASSES = {"tri3": Tri3, "quad4": Quad4, "tet4": Tet4, "tet10": Tet10, "hex8": Hex8}
NAMES = list(CLASSES)


def make_element(name, material=MAT):
    cls = CLASSES[name]
    return cls(material, THICKNESS) if cls.dofs_per_node == 2 else cls(material)


def volume_factor(element):
    return element.thickness if element.dofs_per_node == 2 else 1.0


# -- meshes --------------------------------------------------------------------------------------
def distort(points, size, h, amount, seed=0):
    """Move the nodes strictly inside the box [0, size] by up to ``amount`` times the cell size h."""
    rng = np.random.default_rng(seed)
    size = np.asarray(size, dtype=float)
    inside = np.all((points > 1e-9 * size) & (points < size * (1 - 1e-9)), axis=1)
    out = points.copy()
    out[inside] += amount * h * rng.uniform(-1.0, 1.0, (inside.sum(), points.shape[1]))
    return out


def make_mesh(name, n=None, size=None, amount=0.0, origin=None, seed=0, curved=0.0):
    """(points, cells) of one element type on a box, interior nodes optionally distorted.

    Tetra10 edges stay straight (mid-edge nodes put back at the edge midpoints) unless
    ``curved``: interior mid-edge nodes then move by up to ``curved`` times the cell size.
    """
    cls = CLASSES[name]
    dim = cls.dofs_per_node
    n = n or (3,) * dim
    size = size or (1.0, 0.8, 0.6)[:dim]
    mesh = generate.rectangle(*n, *size, cell=cls.cell_type) if dim == 2 else \
        generate.box(*n, *size, cell=cls.cell_type)
    h = np.asarray(size) / np.asarray(n)
    points, cells = distort(mesh.points, size, h, amount, seed), mesh.cells[cls.cell_type]
    if name == "tet10":
        for k, (i, j) in enumerate(EDGES):
            points[cells[:, 4 + k]] = 0.5 * (points[cells[:, i]] + points[cells[:, j]])
        mid = np.unique(cells[:, 4:])
        points[mid] = distort(points[mid], size, h, curved, seed + 1)
    if origin is not None:
        points = points + np.asarray(origin, dtype=float)
    return points, cells


def boundary_nodes(points, lo, hi):
    return np.any(np.isclose(points, lo) | np.isclose(points, hi), axis=1)


def random_ref_points(cls, n=7, seed=1):
    rng = np.random.default_rng(seed)
    d = len(cls.centroid)
    if cls.ref_cell in ("quad", "hexahedron"):
        return rng.uniform(-0.9, 0.9, (n, d))
    p = rng.dirichlet(np.ones(d + 1), n)
    return p[:, 1:]


# -- shape functions -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_partition_of_unity_and_nodality(name):
    cls = CLASSES[name]
    phi = cls.shape(random_ref_points(cls))
    np.testing.assert_allclose(phi.sum(axis=1), 1.0, atol=1e-14)
    np.testing.assert_allclose(cls.shape(cls.ref_nodes), np.eye(cls.n_nodes), atol=1e-14)
    np.testing.assert_allclose(cls.dshape(random_ref_points(cls)).sum(axis=1), 0.0, atol=1e-13)


@pytest.mark.parametrize("name", NAMES)
def test_dshape_matches_finite_differences(name):
    cls = CLASSES[name]
    xi = random_ref_points(cls)
    h = 1e-6
    fd = np.stack([(cls.shape(xi + h * e) - cls.shape(xi - h * e)) / (2 * h)
                   for e in np.eye(xi.shape[1])], axis=-1)
    np.testing.assert_allclose(cls.dshape(xi), fd, atol=1e-8)


@pytest.mark.parametrize("name", NAMES)
def test_N_is_phi_times_identity(name):
    element = make_element(name)
    points, cells = make_mesh(name, amount=0.25)
    X = points[cells[:2]]
    xi = random_ref_points(type(element), 3)
    N, dN = element.N(X, xi), element.dN_dxi(X, xi)
    dpn, n_e = element.dofs_per_node, element.n_e
    assert N.shape == (2, 3, 3, n_e) and dN.shape == (2, 3, 3, n_e, xi.shape[1])
    phi, dphi = element.shape(xi), element.dshape(xi)
    for a in range(3):
        for b in range(dpn):
            expected = phi if a == b else np.zeros_like(phi)
            np.testing.assert_array_equal(N[:, :, a, b::dpn], np.broadcast_to(expected, (2,) + phi.shape))
            expected = dphi if a == b else np.zeros_like(dphi)
            np.testing.assert_array_equal(dN[:, :, a, b::dpn], np.broadcast_to(expected, (2,) + dphi.shape))
    if dpn == 2:
        assert not np.any(N[:, :, 2]) and not np.any(dN[:, :, 2])


# -- element matrices ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_m_and_k_symmetric_definite_with_rigid_null_space(name):
    element = make_element(name)
    points, cells = make_mesh(name, amount=0.3)
    X = points[cells]
    m, k, r = element.m(X), element.k(X), element.rigid_modes(X)
    n_modes = 3 if element.dofs_per_node == 2 else 6
    assert m.shape == k.shape == (len(X), element.n_e, element.n_e) and r.shape[2] == n_modes
    np.testing.assert_allclose(m, np.swapaxes(m, 1, 2), rtol=0, atol=1e-14 * np.abs(m).max())
    np.testing.assert_allclose(k, np.swapaxes(k, 1, 2), rtol=0, atol=1e-14 * np.abs(k).max())
    assert np.linalg.eigvalsh(m).min() > 0
    k_norm = np.linalg.norm(k, axis=(1, 2))
    kr = np.linalg.norm(k @ r, axis=1) / np.linalg.norm(r, axis=1)
    assert np.all(kr <= 1e-10 * k_norm[:, None])
    eig = np.linalg.eigvalsh(k) / k_norm[:, None]
    assert np.all(eig > -1e-12)
    # full integration: no spurious zero-energy modes
    assert np.all(np.sum(eig > 1e-8, axis=1) == element.n_e - n_modes)


def voigt_H(element):
    """H from the brief: plane stress E/(1-nu^2) [[1, nu, 0], ...] or isotropic 6x6."""
    E, nu = element.material.E, element.material.nu
    if element.dofs_per_node == 2:
        return E / (1 - nu**2) * np.array([[1, nu, 0], [nu, 1, 0], [0, 0, (1 - nu) / 2]])
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
    return np.block([[lam * np.ones((3, 3)) + 2 * mu * np.eye(3), np.zeros((3, 3))],
                     [np.zeros((3, 3)), mu * np.eye(3)]])


VOIGT_PAIRS = {2: [(0, 0), (1, 1), (0, 1)], 3: [(0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1)]}


def reference_k(element, X):
    """int B^T H B dV with an explicit Voigt B and numpy's inverse Jacobian, point by point."""
    xi, w = quadrature(element.ref_cell, element.stiffness_degree)
    d, n = element.dofs_per_node, element.n_nodes
    H, pairs = voigt_H(element), VOIGT_PAIRS[d]
    K = np.zeros((len(X), element.n_e, element.n_e))
    for q in range(len(xi)):
        dphi = element.dshape(xi[q:q + 1])[0]
        Jm = np.einsum("eni,nk->eik", X[:, :, :d], dphi)
        G = dphi[None] @ np.linalg.inv(Jm)
        B = np.zeros((len(X), len(pairs), n, d))
        for I, (i, j) in enumerate(pairs):
            B[:, I, :, i] += G[:, :, j]
            if i != j:
                B[:, I, :, j] += G[:, :, i]
        B = B.reshape(len(X), len(pairs), -1)
        K += w[q] * volume_factor(element) * np.linalg.det(Jm)[:, None, None] * (np.swapaxes(B, 1, 2) @ H @ B)
    return K


@pytest.mark.parametrize("name", NAMES)
def test_k_equals_explicit_B_H_B(name):
    element = make_element(name)
    points, cells = make_mesh(name, amount=0.3, seed=7)
    X = points[cells]
    k = element.k(X)
    np.testing.assert_allclose(k, reference_k(element, X), rtol=0, atol=1e-13 * np.abs(k).max())


@pytest.mark.parametrize("name", NAMES)
def test_rigid_modes_are_translations_then_rotations_about_the_origin(name):
    element = make_element(name)
    points, cells = make_mesh(name, amount=0.25, origin=(0.3, -0.2, 0.5)[:CLASSES[name].dofs_per_node])
    X = points[cells]
    d = element.dofs_per_node
    r = element.rigid_modes(X).reshape(len(X), element.n_nodes, d, -1)
    for i in range(d):
        np.testing.assert_array_equal(r[..., i], np.broadcast_to(np.eye(d)[i], X.shape))
    if d == 2:
        np.testing.assert_array_equal(r[..., 2], np.stack([-X[..., 1], X[..., 0]], axis=-1))
    else:
        for i in range(3):
            np.testing.assert_allclose(r[..., 3 + i], np.cross(np.eye(3)[i], X), atol=0)


@pytest.mark.parametrize("name", NAMES)
def test_mass_first_and_second_moments_of_a_box(name):
    element = make_element(name)
    dim = element.dofs_per_node
    size, origin = np.array([1.2, 0.7, 0.5])[:dim], np.array([0.3, -0.4, 0.2])[:dim]
    points, cells = make_mesh(name, n=(2, 3, 2)[:dim], size=tuple(size), origin=origin)
    ii = element.inertia_integrals(points[cells])
    t = volume_factor(element)
    lo, hi = np.zeros(3), np.zeros(3)
    lo[:dim], hi[:dim] = origin, origin + size
    V = np.prod(size) * t
    mass = MAT.rho * V
    np.testing.assert_allclose(ii.mass.sum(), mass, rtol=1e-13)
    centroid = (lo + hi) / 2
    np.testing.assert_allclose(ii.s.sum(axis=0), mass * centroid, rtol=1e-13, atol=1e-12 * mass)
    # int x_a x_b over the box: products of 1-D moments (z = 0 for plane elements)
    ext = np.where(hi > lo, hi - lo, 1.0)
    m1 = np.where(hi > lo, (hi**2 - lo**2) / 2 / ext, 0.0)
    m2 = np.where(hi > lo, (hi**3 - lo**3) / 3 / ext, 0.0)
    J_exact = mass * (np.outer(m1, m1) + np.diag(m2 - m1**2))
    np.testing.assert_allclose(ii.J.sum(axis=0), J_exact, rtol=1e-13, atol=1e-12 * mass)


@pytest.mark.parametrize("name", NAMES)
def test_fast_inertia_path_equals_generic_definition(name):
    element = make_element(name)
    points, cells = make_mesh(name, amount=0.3)
    X = points[cells]
    fast, ref = element.inertia_integrals(X), inertia_from_points(element.mass_points(X))
    scale = ref.mass.max()
    for field in ("mass", "s", "J", "m_O", "d"):
        np.testing.assert_allclose(getattr(fast, field), getattr(ref, field), rtol=0,
                                   atol=1e-13 * scale, err_msg=field)
    for a in range(3):
        for b in range(3):
            np.testing.assert_allclose(fast.S_dense(a, b), ref.S_dense(a, b), rtol=0, atol=1e-14 * scale)
    np.testing.assert_allclose(element.m(X), ref.m, rtol=0, atol=1e-14 * scale)
    dpn = element.dofs_per_node
    assert len(fast.S) == dpn**2
    assert all(block.local is fast.S[0].local for block in fast.S)   # one shared array


@pytest.mark.parametrize("name", NAMES)
def test_rigid_translation_carries_the_total_mass(name):
    element = make_element(name)
    points, cells = make_mesh(name, amount=0.25)
    X = points[cells]
    m = element.m(X)
    r = element.rigid_modes(X)
    mass = element.inertia_integrals(X).mass
    for a in range(element.dofs_per_node):
        np.testing.assert_allclose(np.einsum("ei,eij,ej->e", r[:, :, a], m, r[:, :, a]), mass, rtol=1e-13)


def test_assembled_invariants_match_assembled_mass():
    element = make_element("tet10")
    points, cells = make_mesh("tet10", n=(2, 2, 2), amount=0.25)
    X = points[cells]
    inv = assemble_invariants(element, X, cells, len(points), chunk=17)
    M = Assembler(cells, len(points), 3).matrix(element.m(X))
    assert abs(inv.M - M).max() <= 1e-14 * abs(M).max()
    np.testing.assert_allclose(inv.mass, MAT.rho * 1.0 * 0.8 * 0.6, rtol=1e-13)


# -- patch tests ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name, curved", [(name, 0.0) for name in NAMES] + [("tet10", 0.1)])
def test_patch_linear_field_constant_strain_and_interior_equilibrium(name, curved):
    """Isoparametric: also on curved tetra10 (its stiffness rule is exact for this test)."""
    element = make_element(name)
    dim = element.dofs_per_node
    size = (1.0, 0.8, 0.6)[:dim]
    points, cells = make_mesh(name, size=size, amount=0.3, seed=3, curved=curved)
    X = points[cells]
    rng = np.random.default_rng(5)
    A, b = rng.normal(size=(dim, dim)), rng.normal(size=dim)
    u = (points @ A.T + b).ravel()
    asm = Assembler(cells, len(points), dim)
    K = asm.matrix(element.k(X))
    f = (K @ u).reshape(-1, dim)
    interior = ~boundary_nodes(points, 0.0, np.array(size))
    assert interior.sum() >= 1
    assert np.abs(f[interior]).max() <= 1e-10 * abs(K).max() * np.abs(u).max()
    eps = 0.5 * (A + A.T)
    xi, _ = element.stiffness_rule()
    u_e = asm.gather(u)
    np.testing.assert_allclose(element.strain(X, u_e, xi), np.broadcast_to(eps, (len(X), len(xi), dim, dim)),
                               atol=1e-12 * np.abs(A).max())
    pairs = VOIGT_PAIRS[dim]
    eps_voigt = np.array([eps[i, j] * (1 if i == j else 2) for i, j in pairs])
    sigma_voigt = voigt_H(element) @ eps_voigt
    sigma = np.zeros((dim, dim))
    for I, (i, j) in enumerate(pairs):
        sigma[i, j] = sigma[j, i] = sigma_voigt[I]
    np.testing.assert_allclose(element.stress(X, u_e), np.broadcast_to(sigma, (len(X), dim, dim)),
                               atol=1e-12 * MAT.E * np.abs(A).max())


def test_tet10_represents_quadratic_fields_exactly():
    element = make_element("tet10")
    points, cells = make_mesh("tet10", n=(2, 2, 2), amount=0.25)
    X = points[cells]
    rng = np.random.default_rng(2)
    Q = rng.normal(size=(3, 3, 3))
    Q = Q + np.swapaxes(Q, 1, 2)                                  # u_a = x^T Q_a x / 2 + A x

    def field(x):
        return 0.5 * np.einsum("...i,aij,...j->...a", x, Q, x) + x @ np.arange(9.0).reshape(3, 3).T

    def grad(x):
        return np.einsum("aij,...j->...ai", Q, x) + np.arange(9.0).reshape(3, 3)

    u_e = field(points)[cells].reshape(len(cells), -1)
    xi = random_ref_points(Tet10, 5)
    x = np.einsum("pn,enc->epc", Tet10.shape(xi), X)
    u_h = np.einsum("epan,en->epa", element.N(X, xi), u_e)
    np.testing.assert_allclose(u_h, field(x), atol=1e-12 * np.abs(field(x)).max())
    g = grad(x)
    np.testing.assert_allclose(element.strain(X, u_e, xi), 0.5 * (g + np.swapaxes(g, -1, -2)),
                               atol=1e-11 * np.abs(g).max())


# -- geometric stiffness -------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_geometric_stiffness_of_uniaxial_stress(name):
    element = make_element(name)
    dim = element.dofs_per_node
    size = (1.0, 0.8, 0.6)[:dim]
    points, cells = make_mesh(name, size=size, amount=0.25)
    X = points[cells]
    s = 3.0e6
    sigma = np.zeros((len(X), dim, dim))
    sigma[:, 0, 0] = s
    A = np.random.default_rng(4).normal(size=(dim, dim))
    u = (points @ A.T).ravel()
    asm = Assembler(cells, len(points), dim)
    Kg = asm.matrix(element.k_geo(X, sigma))
    V = np.prod(size) * volume_factor(element)
    np.testing.assert_allclose(u @ Kg @ u, s * V * np.sum(A[:, 0] ** 2), rtol=1e-12)
    n_q = len(element.stiffness_rule()[0])
    pointwise = element.k_geo(X, np.broadcast_to(sigma[:, None], (len(X), n_q, dim, dim)))
    np.testing.assert_allclose(pointwise, element.k_geo(X, sigma), rtol=0, atol=1e-14 * s)
    kg = element.k_geo(X, sigma)
    np.testing.assert_allclose(kg, np.swapaxes(kg, 1, 2), atol=1e-14 * np.abs(kg).max())


def test_tet10_geometric_stiffness_of_a_quadratic_field():
    """v = x^2 on the unit tetrahedron: int (dv/dx)^2 dV = 4 int x^2 dV = 4 / 60."""
    element = make_element("tet10")
    X = Tet10.ref_nodes[None]
    u_e = np.zeros((1, 10, 3))
    u_e[0, :, 1] = X[0, :, 0] ** 2
    u_e = u_e.reshape(1, 30)
    s = 2.5
    sigma = np.diag([s, 0.0, 0.0])[None]
    np.testing.assert_allclose(u_e[0] @ element.k_geo(X, sigma)[0] @ u_e[0], s / 15.0, rtol=1e-13)


# -- input checks --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_inverted_element_raises_naming_it(name):
    element = make_element(name)
    points, cells = make_mesh(name)
    cells = cells.copy()
    mirror = {"tri3": [0, 2, 1], "quad4": [0, 3, 2, 1], "tet4": [0, 2, 1, 3],
              "tet10": [0, 2, 1, 3, 6, 5, 4, 7, 9, 8], "hex8": [4, 5, 6, 7, 0, 1, 2, 3]}
    cells[2] = cells[2][mirror[name]]
    with pytest.raises(ValueError, match="element 2 "):
        element.k(points[cells])
    with pytest.raises(ValueError, match="element 2 "):
        element.inertia_integrals(points[cells])
    X = points[cells[:1]].copy()
    X[0, :] = X[0, :1]                                           # all nodes in one point
    with pytest.raises(ValueError, match="element 0 "):
        element.m(X)


@pytest.mark.parametrize("kwargs, error", [
    ({"stress": np.zeros((4, 3, 3))}, "`stress` must have shape"),
    ({"stress": np.zeros((4, 2, 2, 2))}, "`stress` must have shape"),
    ({"stress": np.array([[[0.0, 1.0], [0.0, 0.0]]] * 4)}, "symmetric"),
])
def test_k_geo_bad_stress(kwargs, error):
    points, cells = make_mesh("quad4", n=(2, 2))
    with pytest.raises(ValueError, match=error):
        make_element("quad4").k_geo(points[cells], **kwargs)


@pytest.mark.parametrize("name", ["tri3", "quad4"])
def test_plane_elements_accept_z_const_coordinates(name):
    element = make_element(name)
    points, cells = make_mesh(name, amount=0.25)
    X2 = points[cells]
    X3 = np.concatenate([X2, np.full(X2.shape[:2] + (1,), 0.7)], axis=2)
    for matrix in (element.k, element.m):
        np.testing.assert_allclose(matrix(X3), matrix(X2), rtol=1e-14, atol=1e-14 * np.abs(matrix(X2)).max())
    assert np.allclose(element.inertia_integrals(X3).s[:, 2], 0.7 * element.inertia_integrals(X2).mass)
    X3[0, 0, 2] += 1e-3
    with pytest.raises(ValueError, match="plane"):
        element.k(X3)


def test_constructor_checks():
    with pytest.raises(ValueError, match="`thickness`"):
        Quad4(MAT, thickness=-1.0)
    with pytest.raises(TypeError, match="`material`"):
        Hex8(1.0)
    with pytest.raises(ValueError, match="`X`"):
        Hex8(MAT).k(np.zeros((2, 8, 2)))


# -- convergence: axial frequency of a clamped-free bar -------------------------------------------
def axial_frequency(name, n_x, L=1.0, width=0.1):
    """First axial angular frequency of a bar clamped at x = 0 (nu = 0), one element across."""
    material = Material(E=1.0, rho=1.0, nu=0.0)
    element = make_element(name, material)
    dim = element.dofs_per_node
    size = (L, width, width)[:dim]
    points, cells = make_mesh(name, n=(n_x, 1, 1)[:dim], size=size)
    X = points[cells]
    asm = Assembler(cells, len(points), dim)
    free = np.ones((len(points), dim), dtype=bool)
    free[np.isclose(points[:, 0], 0.0)] = False
    free = np.flatnonzero(free.ravel())
    K = asm.matrix(element.k(X))[free][:, free].tocsc()
    M = asm.matrix(element.m(X))[free][:, free].tocsc()
    # the few modes nearest the exact axial one; bending and torsion have no axial momentum
    lam, phi = scipy.sparse.linalg.eigsh(K, k=4, M=M, sigma=(np.pi / 2.0 / L) ** 2)
    ex = np.zeros((len(points), dim))
    ex[:, 0] = 1.0
    participation = (phi.T @ (M @ ex.ravel()[free])) ** 2                  # phi M-normalised
    return np.sqrt(lam[np.argmax(participation)])


@pytest.mark.parametrize("name", NAMES)
def test_axial_frequency_converges_at_the_declared_rate(name):
    """Frequency error of the consistent-mass elements: O(h^(2p)), from above."""
    p = CLASSES[name].degree
    n_x = (4, 8, 16, 32) if p == 1 else (4, 8, 16)
    exact = np.pi / 2.0
    err = np.array([axial_frequency(name, n) - exact for n in n_x]) / exact
    assert np.all(err > 0), err
    observed = np.polyfit(np.log(1.0 / np.array(n_x)), np.log(err), 1)[0]
    assert abs(observed - 2 * p) < 0.3, f"{name}: observed rate {observed:.3f}, errors {err}"
    assert err[-1] < (1e-3 if p == 1 else 1e-6), err
