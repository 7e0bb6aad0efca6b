"""Line elements: Bar2, BeamEB2D and BeamEB3D against closed forms, exact FE values and rates.

Closed forms and FE reference values: ../shared/BENCHMARKS.md sec. 8 (element matrices
8.2, cantilever and bar FE frequencies 8.3, static patch 8.4).
"""
import numpy as np
import pytest
import scipy.linalg as sla
from scipy.optimize import brentq

from flexmbs.assembly import Assembler
from flexmbs.elements import _line
from flexmbs.elements.bar2 import Bar2
from flexmbs.elements.base import MassPoints, Material, inertia_from_points
from flexmbs.elements.beam2d import BeamEB2D
from flexmbs.elements.beam3d import BeamEB3D

MAT = Material(E=2.0e11, rho=7800.0, nu=0.3)
A, IY, IZ, JT = 4.0e-4, 1.2e-8, 2.5e-8, 3.0e-8        # Iy != Iz; J != Ip = Iy + Iz
EYE = np.eye(3)


# -- closed forms (BENCHMARKS 8.2), DOFs (w1, theta1, w2, theta2) / (u1, u2) -------------------
def k_bend(EI, h):
    return EI / h**3 * np.array([[12, 6 * h, -12, 6 * h], [6 * h, 4 * h**2, -6 * h, 2 * h**2],
                                 [-12, -6 * h, 12, -6 * h], [6 * h, 2 * h**2, -6 * h, 4 * h**2]])


def m_bend(rhoA, h):
    return rhoA * h / 420 * np.array([[156, 22 * h, 54, -13 * h], [22 * h, 4 * h**2, 13 * h, -3 * h**2],
                                      [54, 13 * h, 156, -22 * h], [-13 * h, -3 * h**2, -22 * h, 4 * h**2]])


def kg_bend(P, h):
    return P / (30 * h) * np.array([[36, 3 * h, -36, 3 * h], [3 * h, 4 * h**2, -3 * h, -h**2],
                                    [-36, -3 * h, 36, -3 * h], [3 * h, -h**2, -3 * h, 4 * h**2]])


def k_bar(EA, h):
    return EA / h * np.array([[1.0, -1.0], [-1.0, 1.0]])


def m_bar(rhoA, h):
    return rhoA * h / 6 * np.array([[2.0, 1.0], [1.0, 2.0]])


FLIP = np.diag([1.0, -1.0, 1.0, -1.0])      # theta_y = -w': the x-z plane flips the slope DOFs


def expected_local(name, matrix, h, rotary=False, P=1.0):
    """The element matrix of an element along +x (element axes = body axes)."""
    rho, E, G = MAT.rho, MAT.E, MAT.G
    if name == "beam2d":
        out = np.zeros((6, 6))
        ax, bend = np.ix_([0, 3], [0, 3]), np.ix_([1, 2, 4, 5], [1, 2, 4, 5])
        if matrix == "k":
            out[ax], out[bend] = k_bar(E * A, h), k_bend(E * IZ, h)
        elif matrix == "m":
            out[ax] = m_bar(rho * A, h)
            out[bend] = m_bend(rho * A, h) + (kg_bend(rho * IZ, h) if rotary else 0.0)
        else:
            out[bend] = kg_bend(P, h)
        return out
    out = np.zeros((12, 12))
    ax, tor = np.ix_([0, 6], [0, 6]), np.ix_([3, 9], [3, 9])
    v, w = np.ix_([1, 5, 7, 11], [1, 5, 7, 11]), np.ix_([2, 4, 8, 10], [2, 4, 8, 10])
    if matrix == "k":
        out[ax], out[tor] = k_bar(E * A, h), k_bar(G * JT, h)
        out[v], out[w] = k_bend(E * IZ, h), FLIP @ k_bend(E * IY, h) @ FLIP
    elif matrix == "m":
        out[ax], out[tor] = m_bar(rho * A, h), m_bar(rho * (IY + IZ), h)
        out[v] = m_bend(rho * A, h) + (kg_bend(rho * IZ, h) if rotary else 0.0)
        out[w] = FLIP @ (m_bend(rho * A, h) + (kg_bend(rho * IY, h) if rotary else 0.0)) @ FLIP
    else:
        out[v], out[w] = kg_bend(P, h), FLIP @ kg_bend(P, h) @ FLIP
    return out


def make(name, rotary=False, orientation=None):
    if name == "beam2d":
        return BeamEB2D(MAT, A, IZ, rotary_inertia=rotary)
    return BeamEB3D(MAT, A, IY, IZ, JT, orientation=orientation, rotary_inertia=rotary)


def random_elements(name, rng, n_el=5):
    """Elements in general orientation: random in-plane angles (2D) or random 3D directions."""
    dim = 2 if name == "beam2d" else 3
    X0 = rng.normal(size=(n_el, dim))
    d = rng.normal(size=(n_el, dim))
    d *= rng.uniform(0.3, 2.0, size=(n_el, 1)) / np.linalg.norm(d, axis=1, keepdims=True)
    return np.stack([X0, X0 + d], axis=1)


def random_rotation(rng):
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))
    return Q if np.linalg.det(Q) > 0 else -Q


def default_axes(e1):
    """Element axes (n_el, 3, 3), rows e1, e2, e3, by BeamEB3D's default rule (beam not along z)."""
    e2 = np.cross([0.0, 0.0, 1.0], e1)
    e2 /= np.linalg.norm(e2, axis=-1, keepdims=True)
    return np.stack([e1, e2, np.cross(e1, e2)], axis=-2)


def close(a, b, rtol=1e-12):
    """Entrywise |a - b| <= rtol (|b| + 0.01 max|b|): small blocks are checked too."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return bool(np.all(np.abs(a - b) <= rtol * (np.abs(b) + 1e-2 * np.abs(b).max())))


def close_vec(a, b, rtol=1e-12):
    """|a - b| <= rtol |b| in the Euclidean norm (a vector's components share one scale)."""
    return bool(np.linalg.norm(np.subtract(a, b)) <= rtol * np.linalg.norm(b))


BEAMS = ["beam2d", "beam3d"]


# -- element matrices against BENCHMARKS 8.2 ------------------------------------------------------
@pytest.mark.parametrize("name", BEAMS)
@pytest.mark.parametrize("matrix, rotary", [("k", False), ("m", False), ("m", True), ("k_geo", False)])
def test_element_matrices_closed_form(name, matrix, rotary):
    h, P = 0.37, -1.3e4
    el = make(name, rotary)
    X = np.array([[[0.2, 0.0, 0.0], [0.2 + h, 0.0, 0.0]]])[:, :, :2 if name == "beam2d" else 3]
    got = {"k": lambda: el.k(X), "m": lambda: el.m(X), "k_geo": lambda: el.k_geo(X, P)}[matrix]()[0]
    assert close(got, expected_local(name, matrix, h, rotary, P))


def test_bar2_closed_form():
    h, el = 0.37, Bar2(MAT, A)
    X = np.array([[[0.5, -0.1], [0.5 + 0.6 * h, -0.1 + 0.8 * h]]])
    assert close(el.k(X)[0], k_bar(MAT.E * A, h))
    assert close(el.m(X)[0], m_bar(MAT.rho * A, h))
    assert np.allclose(el.k(X) @ el.rigid_modes(X), 0.0, atol=1e-12 * MAT.E * A / h)


def test_single_element_torsional_mass():
    """One free element, unit twist of node 0: r^T m r = rho Ip L / 3 (consistent linear)."""
    rng = np.random.default_rng(1)
    X = random_elements("beam3d", rng, 1)
    h = np.linalg.norm(X[0, 1] - X[0, 0])
    e1 = (X[0, 1] - X[0, 0]) / h
    r = np.zeros(12)
    r[3:6] = e1
    for rotary in (False, True):
        assert np.isclose(r @ make("beam3d", rotary).m(X)[0] @ r, MAT.rho * (IY + IZ) * h / 3, rtol=1e-12)


@pytest.mark.parametrize("name", BEAMS)
def test_k_geo_forms_of_constant_axial_force(name):
    """A constant P given as scalar, (n_el,) or (n_el, 4) gives P k_geo(1)."""
    el, X = make(name), random_elements(name, np.random.default_rng(2), 3)
    ref = 2.5e3 * el.k_geo(X, 1.0)
    for P in (2.5e3, np.full(3, 2.5e3), np.full((3, 4), 2.5e3), lambda x: np.full(x.shape[:2], 2.5e3)):
        assert close(el.k_geo(X, P), ref)


@pytest.mark.parametrize("name", BEAMS)
def test_k_geo_linear_axial_force(name):
    """P(x) linear: k_geo = int P |du/dx - (e1 . du/dx) e1|^2 dx exactly (callable and Gauss values)."""
    el, X = make(name), random_elements(name, np.random.default_rng(3), 3)
    field = lambda x: 1e3 * (1.0 + x[..., 0] - 0.5 * x[..., 1])   # noqa: E731
    X3 = _line.pad3(X)
    L = np.linalg.norm(X3[:, 1] - X3[:, 0], axis=1)
    e1 = (X3[:, 1] - X3[:, 0]) / L[:, None]
    xi, w = np.polynomial.legendre.leggauss(8)
    x = X3[:, None, 0] + ((1 + xi) / 2)[None, :, None] * (X3[:, 1] - X3[:, 0])[:, None]
    du = el.dN_dxi(X, xi)[..., 0] * (2 / L)[:, None, None, None]                 # (n_el, n_p, 3, n_e)
    du_t = du - e1[:, None, :, None] * np.einsum("ea,epan->epn", e1, du)[:, :, None]
    ref = np.einsum("ep,epan,epam->enm", field(x) * w * L[:, None] / 2, du_t, du_t)
    assert close(el.k_geo(X, field), ref)
    xg, _ = _line.gauss_points(6)
    phi, _ = _line.linear(xg)
    assert close(el.k_geo(X, field(np.einsum("pi,eid->epd", phi, X3))), ref)


# -- element properties in general orientation ----------------------------------------------------
@pytest.mark.parametrize("name, orientation", [("beam2d", None), ("beam3d", None),
                                               ("beam3d", [0.3, -1.0, 0.4])])
@pytest.mark.parametrize("rotary", [False, True])
def test_symmetry_definiteness_rigid_modes(name, orientation, rotary):
    el = make(name, rotary, orientation)
    X = random_elements(name, np.random.default_rng(3))
    k, m, kg, modes = el.k(X), el.m(X), el.k_geo(X, 1e4), el.rigid_modes(X)
    for mat in (k, m, kg):
        assert close(mat, np.swapaxes(mat, 1, 2), 1e-13)
    assert np.all(np.linalg.eigvalsh(m)[:, 0] > 1e-10 * np.linalg.eigvalsh(m)[:, -1])
    assert np.linalg.matrix_rank(modes[0]) == modes.shape[2]
    scale = np.abs(k).max(axis=(1, 2)) * np.abs(modes).max(axis=(1, 2))
    assert np.all(np.abs(k @ modes).max(axis=(1, 2)) < 1e-12 * scale)
    # k has exactly the rigid modes as null space
    n_zero = np.sum(np.linalg.eigvalsh(k) < 1e-10 * np.abs(k).max(axis=(1, 2))[:, None], axis=1)
    assert np.all(n_zero == modes.shape[2])


def node_rotation(name, Q):
    """T_Q = blockdiag over nodes of the rotation acting on the DOFs of one node."""
    if name == "beam2d":
        block = np.eye(3)
        block[:2, :2] = Q[:2, :2]
        return sla.block_diag(block, block)
    return sla.block_diag(Q, Q, Q, Q)


@pytest.mark.parametrize("name", BEAMS)
@pytest.mark.parametrize("rotary", [False, True])
def test_rotated_element_matrices(name, rotary):
    """k, m, k_geo and the inertia integrals of a rotated element are the rotated ones."""
    rng = np.random.default_rng(4)
    X = random_elements(name, rng)
    if name == "beam2d":
        c, s = np.cos(0.83), np.sin(0.83)
        Q = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        el, el_Q, XQ = make(name, rotary), make(name, rotary), X @ Q[:2, :2].T
    else:
        Q, v = random_rotation(rng), np.array([0.2, 0.9, -0.4])
        el, el_Q, XQ = make(name, rotary, v), make(name, rotary, Q @ v), X @ Q.T
    TQ = node_rotation(name, Q)
    for f in (lambda e, x: e.k(x), lambda e, x: e.m(x), lambda e, x: e.k_geo(x, -3e3)):
        assert close(f(el_Q, XQ), TQ @ f(el, X) @ TQ.T)
    ii, ii_Q = el.inertia_integrals(X), el_Q.inertia_integrals(XQ)
    assert close(ii_Q.s, ii.s @ Q.T) and close(ii_Q.J, Q @ ii.J @ Q.T)
    assert close(ii_Q.m_O, Q @ ii.m_O @ TQ.T)


def test_default_orientation_rotates_with_z_rotations():
    """The default rule (reference z) is invariant under rotations about z."""
    rng = np.random.default_rng(5)
    X = random_elements("beam3d", rng)
    c, s = np.cos(-1.1), np.sin(-1.1)
    Q = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    TQ, el = node_rotation("beam3d", Q), make("beam3d")
    assert close(el.k(X @ Q.T), TQ @ el.k(X) @ TQ.T)


@pytest.mark.parametrize("name", BEAMS)
def test_interpolation_nodal_values_and_slopes(name):
    """N is the identity on the nodal translations; dN_dxi matches finite differences;
    the nodal slopes are the nodal rotations: e1 x du/dx = theta - (e1 . theta) e1."""
    rng = np.random.default_rng(6)
    el, X = make(name), random_elements(name, rng, 3)
    dpn = el.dofs_per_node
    d = 2 if name == "beam2d" else 3
    N = el.N(X, [-1.0, 1.0])
    for i in range(2):
        assert np.allclose(N[:, i, :d, i * dpn:i * dpn + d], np.eye(d), atol=1e-14)
        other = np.delete(np.arange(el.n_e), np.arange(i * dpn, i * dpn + d))
        assert np.allclose(N[:, i][:, :, other], 0.0, atol=1e-14)
    xi, eps = np.array([-0.6, 0.1, 0.9]), 1e-6
    fd = (el.N(X, xi + eps) - el.N(X, xi - eps)) / (2 * eps)
    assert np.allclose(el.dN_dxi(X, xi)[..., 0], fd, atol=1e-8)
    X3 = _line.pad3(X)
    L = np.linalg.norm(X3[:, 1] - X3[:, 0], axis=1)
    e1 = (X3[:, 1] - X3[:, 0]) / L[:, None]
    delta = rng.normal(size=(len(X), el.n_e))
    du_dx = np.einsum("epan,en->epa", el.dN_dxi(X, [-1.0, 1.0])[..., 0], delta) * 2 / L[:, None, None]
    slope = np.cross(e1[:, None], du_dx)
    for i in range(2):
        if name == "beam2d":
            assert np.allclose(slope[:, i, 2], delta[:, 3 * i + 2], atol=1e-12)
        else:
            theta = delta[:, 6 * i + 3:6 * i + 6]
            bend = theta - np.sum(theta * e1, axis=1, keepdims=True) * e1
            assert np.allclose(slope[:, i], bend, atol=1e-12)


# -- inertia integrals ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", BEAMS)
@pytest.mark.parametrize("rotary", [False, True])
def test_inertia_of_straight_beam(name, rotary):
    """mass = rho A L, s = mass (X0 + X1) / 2 and J = int rho x x^T dV in closed form."""
    rng = np.random.default_rng(7)
    el, X = make(name, rotary), random_elements(name, rng)
    ii = el.inertia_integrals(X)
    X3 = _line.pad3(X)
    X0, dX = X3[:, 0], X3[:, 1] - X3[:, 0]
    L = np.linalg.norm(dX, axis=1)
    rhoA = MAT.rho * A
    assert close(ii.mass, rhoA * L)
    assert close(ii.s, rhoA * L[:, None] * (X0 + dX / 2))
    outer = lambda a, b: a[:, :, None] * b[:, None, :]   # noqa: E731
    J = rhoA * L[:, None, None] * (outer(X0, X0) + (outer(X0, dX) + outer(dX, X0)) / 2 + outer(dX, dX) / 3)
    e1 = dX / L[:, None]
    if name == "beam2d":
        e2 = np.stack([-e1[:, 1], e1[:, 0], 0 * L], axis=1)
        if rotary:                                    # NOTE: the planar beam's J has the section only then
            J = J + MAT.rho * IZ * L[:, None, None] * outer(e2, e2)
    else:
        _, e2, e3 = np.moveaxis(default_axes(e1), 1, 0)
        J = J + MAT.rho * L[:, None, None] * (IZ * outer(e2, e2) + IY * outer(e3, e3))
    assert close(ii.J, J)


def tilde(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


@pytest.mark.parametrize("name", BEAMS)
@pytest.mark.parametrize("rotary", [False, True])
def test_rigid_body_mass(name, rotary):
    """r^T m r over the rigid modes is the rigid-body mass matrix [[mass I, -tilde(s)], [., I_O]].

    Exact where the mass points move rigidly: planar beam always, spatial beam with rotary
    inertia; without it the spatial beam's sections only twist, and lack the rotary terms.
    """
    rng = np.random.default_rng(8)
    el, X = make(name, rotary), random_elements(name, rng)
    ii, modes = el.inertia_integrals(X), el.rigid_modes(X)
    Mr = np.swapaxes(modes, 1, 2) @ ii.m @ modes
    for e in range(len(X)):
        s, I_O = ii.s[e], np.trace(ii.J[e]) * EYE - ii.J[e]
        full = np.block([[ii.mass[e] * EYE, -tilde(s)], [tilde(s), I_O]])
        keep = [0, 1, 5] if name == "beam2d" else list(range(6))
        ref = full[np.ix_(keep, keep)]
        n_t = 2 if name == "beam2d" else 3
        if name == "beam3d" and not rotary:
            # the sections turn with the torsion only: minus rho L (Iz e3 e3^T + Iy e2 e2^T)
            L = np.linalg.norm(X[e, 1] - X[e, 0])
            _, e2, e3 = default_axes((X[e, 1] - X[e, 0]) / L)
            ref[3:, 3:] -= MAT.rho * L * (IZ * np.outer(e3, e3) + IY * np.outer(e2, e2))
        assert close(Mr[e], ref)
        assert close(ii.m_O[e] @ modes[e, :, :n_t], ii.mass[e] * EYE[:, :n_t])
    r = modes[:, :, 0]
    assert close(np.einsum("ei,eij,ej->e", r, ii.m, r), ii.mass)


def rule(b, n=6):
    """Gauss rule over [-b/2, b/2] (n points), or one point of weight b at 0 (n = 1)."""
    if n == 1:
        return np.zeros(1), np.array([b])
    t, wt = np.polynomial.legendre.leggauss(n)
    return t * b / 2, wt * b / 2


def brute_force_points(el, X, rule_y, rule_z, n_ax=10):
    """Mass points of the same kinematics, by a high-order rule over a rectangular section.

    u(s, r) = u_c(s) + theta(s) x r,  r = y e2 + z e3,  with
    theta = theta_x e1 (torsion, 3D only) + e1 x du_c/dx (only with rotary inertia).
    """
    X3 = _line.pad3(X)
    n_el = len(X)
    L = np.linalg.norm(X3[:, 1] - X3[:, 0], axis=1)
    e1 = (X3[:, 1] - X3[:, 0]) / L[:, None]
    if isinstance(el, BeamEB2D):
        e2 = np.stack([-e1[:, 1], e1[:, 0], 0 * L], axis=1)
    else:
        v = el.orientation
        e2 = v - (e1 @ v)[:, None] * e1
        e2 /= np.linalg.norm(e2, axis=1, keepdims=True)
    e3 = np.cross(e1, e2)
    xi, w_xi = np.polynomial.legendre.leggauss(n_ax)
    s, w_s = (1 + xi) / 2, w_xi / 2
    Nc = el.N(X, xi)                                                  # (n_el, n_ax, 3, n_e)
    dNc = el.dN_dxi(X, xi)[..., 0] * (2 / L)[:, None, None, None]
    theta = np.zeros_like(Nc)
    if isinstance(el, BeamEB3D):
        e1e1 = e1[:, None, :, None] * e1[:, None, None, :]
        for i, f in ((0, 1 - s), (1, s)):
            theta[:, :, :, 6 * i + 3:6 * i + 6] += f[None, :, None, None] * e1e1
    if el.rotary_inertia:
        theta += np.cross(e1[:, None, :, None], dNc, axisa=2, axisb=2, axisc=2)
    Ns, xs, ws = [], [], []
    for y, wy in zip(*rule_y):
        for z, wz in zip(*rule_z):
            r = y * e2 + z * e3
            Ns.append(Nc + np.cross(theta, r[:, None, :, None], axisa=2, axisb=2, axisc=2))
            xs.append(X3[:, None, 0] + s[None, :, None] * (L[:, None, None] * e1[:, None]) + r[:, None])
            ws.append(np.broadcast_to(MAT.rho * L[:, None] * w_s * wy * wz, (n_el, n_ax)))
    return MassPoints(np.concatenate(Ns, 1), np.concatenate(xs, 1), np.concatenate(ws, 1))


@pytest.mark.parametrize("name", BEAMS)
@pytest.mark.parametrize("rotary", [False, True])
def test_inertia_integrals_exact(name, rotary):
    """inertia_integrals equals a brute-force quadrature of the same definitions
    (10 Gauss points along the axis, 6 x 6 over a b_y x b_z rectangle)."""
    rng = np.random.default_rng(9)
    by, bz = 0.02, 0.05
    area, Iz, Iy = by * bz, bz * by**3 / 12, by * bz**3 / 12
    X = random_elements(name, rng, 3)
    if name == "beam2d":
        el = BeamEB2D(MAT, area, Iz, rotary_inertia=rotary)
        # NOTE: the planar beam puts its mass on the centreline unless rotary inertia is on
        rule_y, rule_z = (rule(by), rule(bz, 1)) if rotary else (rule(by, 1), rule(bz, 1))
    else:
        el = BeamEB3D(MAT, area, Iy, Iz, 1e-7, orientation=[0.4, -0.7, 0.2], rotary_inertia=rotary)
        rule_y, rule_z = rule(by), rule(bz)
    ref, got = inertia_from_points(brute_force_points(el, X, rule_y, rule_z)), el.inertia_integrals(X)
    for field in ("mass", "s", "J", "m_O", "d"):
        assert close(getattr(got, field), getattr(ref, field)), field
    for a in range(3):
        for b in range(3):
            assert close(got.S_dense(a, b), ref.S_dense(a, b), 1e-11), (a, b)


# -- cantilevers: exact FE values, convergence rates, static tip loads -----------------------------
def line_mesh(n, length, direction, dim):
    d = np.asarray(direction, dtype=float)[:dim]
    points = np.linspace(0.0, length, n + 1)[:, None] * d / np.linalg.norm(d)
    cells = np.stack([np.arange(n), np.arange(1, n + 1)], axis=1)
    return points, cells


def cantilever(el, n, length, direction):
    """Free-DOF stiffness and mass of a straight cantilever (node 0 clamped, all DOFs)."""
    dim = 3 if isinstance(el, BeamEB3D) else 2
    points, cells = line_mesh(n, length, direction, dim)
    X = points[cells]
    asm = Assembler(cells, n + 1, el.dofs_per_node)
    free = np.arange(el.dofs_per_node, asm.n_dofs)
    K = asm.matrix(el.k(X)).toarray()[np.ix_(free, free)]
    M = asm.matrix(el.m(X)).toarray()[np.ix_(free, free)]
    return K, M


def eigh_refined(K, M):
    """Generalised eigenpairs; each eigenvalue recomputed as the Rayleigh quotient of its vector.

    NOTE: eigh's eigenvalues carry absolute errors ~ eps lambda_max, i.e. a relative error
    ~ 1e-9 on the first mode of a 32-element beam, near its discretisation error (~8e-9);
    the Rayleigh quotient is accurate to the square of the eigenvector's error.
    """
    lam, V = sla.eigh(K, M)
    return np.einsum("im,ij,jm->m", V, K, V) / np.einsum("im,ij,jm->m", V, M, V), V


def beta_clamped_free(n_modes):
    """Roots of 1 + cos b cosh b = 0 to machine precision (BENCHMARKS 8.1 to 10 digits)."""
    f = lambda b: np.cos(b) + 1.0 / np.cosh(b)   # noqa: E731
    return np.array([brentq(f, (j + 0.5) * np.pi - 0.5, (j + 0.5) * np.pi + 0.5, xtol=1e-15)
                     for j in range(n_modes)])


def test_beta_roots_match_benchmarks():
    assert np.allclose(beta_clamped_free(3), [1.875104069, 4.694091133, 7.854757438], atol=1e-9)


SKEW = np.array([0.6, -0.48, 0.64])
FAMILIES_3D = {"axial": [0], "bend_v": [1, 5], "bend_w": [2, 4], "torsion": [3]}   # local DOFs of a node


def families_3d(el, n, length, direction=SKEW):
    """Cantilever frequencies of a straight BeamEB3D, split by the family that carries each mode."""
    K, M = cantilever(el, n, length, direction)
    lam, V = eigh_refined(K, M)
    e1 = direction / np.linalg.norm(direction)
    V_local = np.einsum("ab,ncbm->ncam", default_axes(e1), V.reshape(n, 2, 3, -1)).reshape(n, 6, -1)
    energy = {f: np.sum(V_local[:, idx] ** 2, axis=(0, 1)) for f, idx in FAMILIES_3D.items()}
    total = sum(energy.values())
    out = {}
    for f in FAMILIES_3D:
        pure = energy[f] > (1 - 1e-8) * total
        out[f] = np.sqrt(lam[pure])
    assert sum(len(v) for v in out.values()) == len(lam), "a mode mixes two families"
    return out


def bending_dimensionless(name, n):
    """omega sqrt(rho A L^4 / EI) of the bending modes of a cantilever, per bending plane."""
    L = 1.7
    scale = lambda I: np.sqrt(MAT.rho * A * L**4 / (MAT.E * I))   # noqa: E731
    if name == "beam2d":
        K, M = cantilever(make("beam2d"), n, L, [1.0, 0.0])
        bend = np.flatnonzero(np.arange(3 * n) % 3 != 0)                     # v, theta
        lam = sla.eigh(K[np.ix_(bend, bend)], M[np.ix_(bend, bend)], eigvals_only=True)
        return {"bend": np.sqrt(lam) * scale(IZ)}
    fam = families_3d(make("beam3d"), n, L)
    return {"bend_v": fam["bend_v"] * scale(IZ), "bend_w": fam["bend_w"] * scale(IY)}


FE_CANTILEVER = {1: "3.5327 34.8069", 2: "3.5177 22.2215 75.1571 218.138",
                 4: "3.5161 22.0602 62.1749 122.6576", 8: "3.5160 22.0363 61.7347 121.1728"}


@pytest.mark.parametrize("name", BEAMS)
@pytest.mark.parametrize("n", sorted(FE_CANTILEVER))
def test_cantilever_fe_values(name, n):
    """BENCHMARKS 8.3: consistent-mass Hermite cantilever frequencies, to the printed digits."""
    for omega in bending_dimensionless(name, n).values():
        for value, ref in zip(omega, FE_CANTILEVER[n].split()):
            tol = 0.5 * 10.0 ** -len(ref.split(".")[1]) * (1 + 1e-9)
            assert abs(value - float(ref)) <= tol, (value, ref)


@pytest.mark.parametrize("n, refs", [(1, [1.73205]), (2, [1.61142, 5.6293]),
                                     (10, [1.57241, 4.7561, 8.05708])])
def test_bar_fe_values(n, refs):
    L = 2.3
    K, M = cantilever(Bar2(MAT, A), n, L, [0.6, 0.8])
    omega = np.sqrt(sla.eigh(K, M, eigvals_only=True)) * L / np.sqrt(MAT.E / MAT.rho)
    for value, ref in zip(omega, refs):
        assert abs(value - ref) <= 0.5 * 10.0 ** -(len(repr(ref).split(".")[1])) * (1 + 1e-9)


def test_3d_spectrum_is_union_of_planar_spectra():
    """A straight BeamEB3D cantilever (skew axis) has exactly the frequencies of a BeamEB2D
    with I = Iz (bending + axial), the bending ones of a BeamEB2D with I = Iy, and those of
    a torsion bar (Bar2 with E -> G J / Ip)."""
    n, L = 4, 1.3
    K, M = cantilever(make("beam3d"), n, L, SKEW)
    omega = np.sqrt(sla.eigh(K, M, eigvals_only=True))
    parts = []
    for I, keep in ((IZ, lambda i: True), (IY, lambda i: i % 3 != 0)):
        K2, M2 = cantilever(BeamEB2D(MAT, A, I), n, L, [1.0, 0.0])
        idx = [i for i in range(3 * n) if keep(i)]
        parts.append(sla.eigh(K2[np.ix_(idx, idx)], M2[np.ix_(idx, idx)], eigvals_only=True))
    torsion_bar = Bar2(Material(E=MAT.G * JT / (IY + IZ), rho=MAT.rho), A)
    parts.append(sla.eigh(*cantilever(torsion_bar, n, L, [1.0, 0.0]), eigvals_only=True))
    ref = np.sqrt(np.sort(np.concatenate(parts)))
    assert len(omega) == len(ref) and np.allclose(omega, ref, rtol=1e-8, atol=0.0)


NS = np.array([2, 4, 8, 16, 32])


def observed_rates(ns, omega_of_n, exact, label):
    """Slope of log(relative error) against log(h), per mode.

    Meshes with fewer than 2 elements per mode number are pre-asymptotic and left out.
    """
    errs = np.full((len(ns), len(exact)), np.nan)
    for i, n in enumerate(ns):
        omega = omega_of_n(n)
        k = min(len(omega), len(exact))
        errs[i, :k] = omega[:k] / exact[:k] - 1.0
    assert np.all(errs[np.isfinite(errs)] > 0), f"{label}: consistent mass bounds from above"
    rates = []
    for j in range(len(exact)):
        use = ns >= 2 * (j + 1)
        rates.append(np.polyfit(np.log(1.0 / ns[use]), np.log(errs[use, j]), 1)[0])
    return np.array(rates)


def bending_exact(I, L):
    return beta_clamped_free(3) ** 2 * np.sqrt(MAT.E * I / (MAT.rho * A * L**4))


def rod_exact(c, L):
    return (2 * np.arange(1, 4) - 1) * np.pi / 2 * c / L


def case_beam2d(L):
    def omega(n):
        K, M = cantilever(make("beam2d"), n, L, [0.8, 0.6])
        lam, _ = eigh_refined(K, M)
        # the axial modes of this slender beam are far above the first bending modes
        return np.sqrt(lam[:3])
    return omega, bending_exact(IZ, L)


def case_bar2(L):
    def omega(n):
        return np.sqrt(eigh_refined(*cantilever(Bar2(MAT, A), n, L, [0.8, 0.6]))[0])
    return omega, rod_exact(np.sqrt(MAT.E / MAT.rho), L)


def case_beam3d(family):
    def case(L):
        def omega(n):
            return families_3d(make("beam3d"), n, L)[family]
        exact = {"bend_v": bending_exact(IZ, L), "bend_w": bending_exact(IY, L),
                 "axial": rod_exact(np.sqrt(MAT.E / MAT.rho), L),
                 "torsion": rod_exact(np.sqrt(MAT.G * JT / (MAT.rho * (IY + IZ))), L)}[family]
        return omega, exact
    return case


@pytest.mark.parametrize("label, case, rate", [
    ("BeamEB2D bending", case_beam2d, 4.0),
    ("Bar2 axial", case_bar2, 2.0),
    ("BeamEB3D bending x-y (Iz)", case_beam3d("bend_v"), 4.0),
    ("BeamEB3D bending x-z (Iy)", case_beam3d("bend_w"), 4.0),
    ("BeamEB3D axial", case_beam3d("axial"), 2.0),
    ("BeamEB3D torsion", case_beam3d("torsion"), 2.0),
])
def test_frequency_convergence_rate(label, case, rate):
    """Relative frequency error ~ h^4 (Hermite cubics), h^2 (linear), consistent mass."""
    omega_of_n, exact = case(2.1)
    rates = observed_rates(NS, omega_of_n, exact, label)
    assert np.all(np.abs(rates - rate) < 0.3), f"{label}: observed rates {rates}, declared {rate}"


# NOTE: the static solutions are exact up to round-off ~ cond(K) eps, and cond(K) grows
# with A L^2 / I: a stocky section (L / h ~ 5) keeps skew beams at 1e-12.
A_S, IY_S, IZ_S, J_S = 4.0e-2, 1.0e-4, 1.6e-4, 2.0e-4


def make_static(name, orientation=None):
    if name == "beam2d":
        return BeamEB2D(MAT, A_S, IZ_S)
    return BeamEB3D(MAT, A_S, IY_S, IZ_S, J_S, orientation=orientation)


STATIC_CASES = [  # name, axis, orientation, load direction, I that bends
    ("beam2d", [1.0, 0.0, 0.0], None, [0.0, 1.0, 0.0], IZ_S),
    ("beam2d", [0.28, -0.96, 0.0], None, [0.96, 0.28, 0.0], IZ_S),
    ("beam3d", [1.0, 0.0, 0.0], None, [0.0, 1.0, 0.0], IZ_S),
    ("beam3d", [1.0, 0.0, 0.0], None, [0.0, 0.0, 1.0], IY_S),
    ("beam3d", [0.0, 0.0, 1.0], None, [1.0, 0.0, 0.0], IY_S),       # along z: e3 = x
    ("beam3d", [0.0, 0.0, 1.0], None, [0.0, 1.0, 0.0], IZ_S),
    ("beam3d", SKEW, None, np.cross([0.0, 0.0, 1.0], SKEW), IZ_S),   # default: e2 = z x e1
    ("beam3d", SKEW, None, np.cross(SKEW, np.cross([0, 0, 1.0], SKEW)), IY_S),
    ("beam3d", SKEW, [0.0, 0.8, 0.6], np.cross(SKEW, [0.0, 0.8, 0.6]), IY_S),
    ("beam3d", SKEW, [0.0, 0.8, 0.6], np.cross(np.cross(SKEW, [0.0, 0.8, 0.6]), SKEW), IZ_S),
]


@pytest.mark.parametrize("name, axis, orientation, load, I", STATIC_CASES)
def test_cantilever_tip_load(name, axis, orientation, load, I):
    """Tip load P: deflection P L^3 / (3 EI) along the load, tip rotation e1 x load P L^2 / (2 EI)."""
    n, L, P = 2, 1.9, 350.0
    el = make_static(name, orientation)
    axis, load = np.asarray(axis, dtype=float), np.asarray(load, dtype=float)
    e1, load = axis / np.linalg.norm(axis), load / np.linalg.norm(load)
    K, _ = cantilever(el, n, L, axis)
    dpn, d = el.dofs_per_node, (2 if name == "beam2d" else 3)
    f = np.zeros(len(K))
    f[-dpn:][:d] = P * load[:d]
    q = np.linalg.solve(K, f)
    u_tip, theta_tip = q[-dpn:][:d], q[-dpn:][d:]
    assert close_vec(u_tip, P * L**3 / (3 * MAT.E * I) * load[:d])
    rot = P * L**2 / (2 * MAT.E * I) * np.cross(e1, load)
    assert close_vec(theta_tip, rot[2:] if name == "beam2d" else rot)


def test_cantilever_tip_axial_force_and_torque():
    n, L, P, T = 2, 1.9, 350.0, 40.0
    K, _ = cantilever(make_static("beam3d"), n, L, SKEW)
    e1 = SKEW / np.linalg.norm(SKEW)
    f = np.zeros(len(K))
    f[-6:-3], f[-3:] = P * e1, T * e1
    q = np.linalg.solve(K, f)
    assert close_vec(q[-6:-3], P * L / (MAT.E * A_S) * e1) and close_vec(q[-3:], T * L / (MAT.G * J_S) * e1)


@pytest.mark.parametrize("name, I", [("beam2d", IZ), ("beam3d", IZ), ("beam3d", IY)])
def test_cantilever_buckling(name, I):
    """k + k_geo(P) of a compressed cantilever is singular at P = -pi^2 EI / (4 L^2)."""
    n, L = 8, 1.5
    el = make(name)
    points, cells = line_mesh(n, L, [1.0, 0.0, 0.0], 2 if name == "beam2d" else 3)
    X = points[cells]
    asm = Assembler(cells, n + 1, el.dofs_per_node)
    free = np.arange(el.dofs_per_node, asm.n_dofs)
    K = asm.matrix(el.k(X)).toarray()[np.ix_(free, free)]
    Kg = asm.matrix(el.k_geo(X, 1.0)).toarray()[np.ix_(free, free)]
    plane = {IZ: [1, 5], IY: [2, 4]}[I] if name == "beam3d" else [1, 2]
    idx = np.flatnonzero(np.isin(free % el.dofs_per_node, plane))
    P_cr = sla.eigh(K[np.ix_(idx, idx)], Kg[np.ix_(idx, idx)], eigvals_only=True)[0]
    # 8 Hermite elements: relative error 2.06e-6 (O(h^4), from above)
    assert 0.0 < P_cr / (np.pi**2 * MAT.E * I / (4 * L**2)) - 1.0 < 3e-6


# -- bad input ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, match", [
    ({"area": 0.0}, "`area`"), ({"Iy": -1.0}, "`Iy`"), ({"Iz": np.nan}, "`Iz`"), ({"J": np.inf}, "`J`"),
    ({"orientation": [0.0, 0.0, 0.0]}, "`orientation`"), ({"orientation": [1.0, 2.0]}, "`orientation`"),
])
def test_beam3d_bad_parameters(kwargs, match):
    args = {"material": MAT, "area": A, "Iy": IY, "Iz": IZ, "J": JT} | kwargs
    with pytest.raises(ValueError, match=match):
        BeamEB3D(**args)


def test_beam3d_bad_geometry():
    el = BeamEB3D(MAT, A, IY, IZ, JT, orientation=[1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="parallel"):
        el.k(np.array([[[0.0, 0.0, 0.0], [2.0, 2.0, 0.0]]]))
    with pytest.raises(ValueError, match="`X`"):
        el.k(np.zeros((1, 2, 2)))
    with pytest.raises(ValueError, match="zero length"):
        el.k(np.zeros((1, 2, 3)))
