"""The implicit step's tangent from the bodies' own derivatives (`Body.tangent`, issue 22 item 4).

For each body that gives the hook, its (K_b, C_b) equal the System's forward differences of the
same body (`System.tangent_matrices` with the hook switched off) and central differences of M q'' - Q
and Q on a bent, moving configuration; an index3-alpha run with the hook matches one with the
difference tangent to the Newton tolerance.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies.base import Body
from flexmbs.bodies.corotational import CorotationalBeam2D, CorotationalBeam3D, Node
from flexmbs.constraints.joints import Spherical
from flexmbs.elements.corotational3d import rotary_inertia_tangent

SIDE = 0.02


def beam_3d(E=5e7, n_el=4):
    return CorotationalBeam3D.line("beam", (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), n_el,
                                   fm.Material(E=E, rho=1000.0, nu=0.3), SIDE ** 2, SIDE ** 4 / 12,
                                   SIDE ** 4 / 12, 0.141 * SIDE ** 4)


def beam_2d(E=5e7, n_el=4):
    return CorotationalBeam2D.line("beam", (0.0, 0.0), (1.0, 0.0), n_el, fm.Material(E=E, rho=1000.0),
                                   SIDE ** 2, SIDE ** 4 / 12)


def bent_moving_state(body, seed=1):
    """q: the reference nodes displaced and the sections turned by O(0.3) (rad), v and q'' random O(1)."""
    rng = np.random.default_rng(seed)
    q = body.initial_coordinates() + 0.3 * rng.standard_normal(body.n_q)
    return q, rng.standard_normal(body.n_q), rng.standard_normal(body.n_q)


def difference_tangent(system, monkeypatch, args):
    """`System.tangent_matrices` with every body's hook off: the forward differences it takes otherwise."""
    with monkeypatch.context() as m:
        for body in system.bodies:
            m.setattr(type(body), "tangent", Body.tangent)
        return system.tangent_matrices(*args)


def central_tangent(body, t, q, v, a, g, h=1e-4):
    """(d(M a - Q)/dq, -dQ/dv) of ``body`` by fourth-order central differences,
    f' = (f(-2h) - 8 f(-h) + 8 f(h) - f(2h)) / (12 h) + O(h^4): at h = 1e-4 both the truncation and the
    round-off eps |f| / h stay below 1e-8 of K (second-order ones at any h left 1e-8 of the soft beam's K)."""
    n = body.n_q
    K, C = np.zeros((n, n)), np.zeros((n, n))
    r0, Q0 = body.mass_matrix(q) @ a - body.forces(t, q, v, g), body.forces(t, q, v, g)
    for j in range(n):
        e = np.zeros(n)
        e[j] = h
        for s, w in ((-2, 1.0), (-1, -8.0), (1, 8.0), (2, -1.0)):      # differences from f(0): constants cancel
            K[:, j] += w * (body.mass_matrix(q + s * e) @ a - body.forces(t, q + s * e, v, g) - r0)
            C[:, j] -= w * (body.forces(t, q, v + s * e, g) - Q0)
    return K / (12 * h), C / (12 * h)


def relative(A, B):
    return np.abs(A - B).max() / np.abs(B).max()


@pytest.mark.parametrize("make, gravity", [(beam_3d, (0.0, -9.81, 0.0)), (beam_2d, (0.0, -9.81))],
                         ids=["CorotationalBeam3D", "CorotationalBeam2D"])
@pytest.mark.parametrize("E", [5e7, 1.0], ids=["stiff", "soft"])
def test_hook_equals_the_systems_differences(make, gravity, E, monkeypatch):
    """E = 50 MPa (the pendulum's): K is mostly the internal forces' stiffness.  E = 1 Pa: the rotary
    terms dominate K, and Q's only large v-dependent part is Q_v, so C is checked there: at 50 MPa the
    internal forces (|Q| ~ 1e3 times |C|) put the round-off eps |Q| / h of forward differences above
    1e-6 of C.  Forward differences (the System's, step ~1.5e-8) carry round-off eps |M a - Q| / h, a few
    1e-6 of K's largest entry in the soft case: 1e-5 for them, 1e-8 for central ones (`central_tangent`)."""
    body = make(E=E)
    system = fm.System([body], gravity=gravity)
    q, v, a = bent_moving_state(body)
    args = (0.1, q, v, a, np.zeros(system.n_c))
    K, C = system.tangent_matrices(*args)
    Kd, Cd = difference_tangent(system, monkeypatch, args)
    Kc, Cc = central_tangent(body, 0.1, q, v, a, system.gravity)
    assert relative(K, Kd) < 1e-5
    assert relative(K, Kc) < 1e-8
    if isinstance(body, CorotationalBeam2D):              # constant M, no Q_v: C_b = 0 exactly
        assert not C.any() and not Cd.any()
    elif E == 1.0:
        assert relative(C, Cd) < 1e-5
        assert relative(C, Cc) < 1e-8


def test_rotary_tangent_near_zero_rotation_uses_the_series():
    """Below s = |psi|^2 = 1e-3 the coefficients are series; the complex step differentiates them too
    (central differences of `rotary_inertia`'s own closed forms as the reference)."""
    from flexmbs.elements.corotational3d import rotary_inertia
    rng = np.random.default_rng(3)
    psi = 1e-3 * rng.standard_normal((3, 3))
    pd, acc = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    A = rng.standard_normal((3, 3, 3))
    J0 = A @ A.transpose(0, 2, 1) + np.eye(3)
    K, C = rotary_inertia_tangent(psi, pd, acc, J0)

    def residual(p, w):
        r = rotary_inertia(p, w, J0)
        return np.einsum("nij,nj->ni", r.mass, acc) - r.quadratic

    h = 1e-6
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        np.testing.assert_allclose(K[:, :, j], (residual(psi + e, pd) - residual(psi - e, pd)) / (2 * h),
                                   atol=1e-8 * np.abs(K).max())
        np.testing.assert_allclose(C[:, :, j], (residual(psi, pd + e) - residual(psi, pd - e)) / (2 * h),
                                   atol=1e-8 * np.abs(C).max())


def test_beam_with_loads_is_differenced_by_the_system():
    """A user load's derivatives are unknown: the hook says None and the System differences the body."""
    body = CorotationalBeam2D.line("beam", (0.0, 0.0), (1.0, 0.0), 2, fm.Material(E=5e7, rho=1000.0), SIDE ** 2,
                                   SIDE ** 4 / 12, loads=[lambda b, t, q, v: -0.5 * v])
    q, v, a = bent_moving_state(body)
    assert body.tangent(0.0, q, v, a, None) is None
    K, C = fm.System([body]).tangent_matrices(0.0, q, v, a, np.zeros(0))
    np.testing.assert_allclose(C, 0.5 * np.eye(body.n_q), atol=1e-6)


def pendulum_3d():
    beam = beam_3d(E=5e7, n_el=4)
    return fm.System([beam], [Spherical(None, beam, s_j=Node(0), name="pin")], gravity=(0.0, -9.81, 0.0))


def test_index3_alpha_with_the_hook_matches_the_difference_tangent(monkeypatch):
    """The flexible 3D pendulum released horizontally, 40 steps of 1 ms on the numpy path: the run with the
    bodies' tangent equals the run with index3-alpha's previous tangent (forward differences of the whole
    system: the System's ``tangent_matrices`` taken away) to the Newton tolerance."""
    opts = dict(formulation="index3", method="index3-alpha", t_end=0.04, h=1e-3, dt_out=0.01, store=False,
                kernel="numpy", rho_inf=0.99)
    with_hook = fm.run(pendulum_3d(), **opts)
    with monkeypatch.context() as m:
        m.setattr(fm.System, "tangent_matrices", None)
        differenced = fm.run(pendulum_3d(), **opts)
    q1, q0 = with_hook.q, differenced.q
    assert q1.shape == q0.shape and np.abs(q1[-1] - q1[0]).max() > 1e-3      # it moved
    assert with_hook.stats["n_jac"] > 0 and with_hook.stats["n_rhs"] < differenced.stats["n_rhs"]
    assert np.abs(q1 - q0).max() < 1e-7


def test_hook_block_lands_on_the_bodys_coordinates_in_a_system():
    """A rigid body (differenced) ahead of the soft 3D beam (its own block, coordinates 7..), joined at the
    beam's node 0 by a spherical joint with nonzero multipliers: K_t, C_t of the whole system equal fourth-order
    central differences of M q'' - Q + C_q^T lam and -Q (forward differences in the rigid body's block: 1e-6)."""
    from flexmbs.bodies import RigidBodyEP
    rng = np.random.default_rng(5)
    beam = beam_3d(E=1.0, n_el=2)
    rigid = RigidBodyEP("hub", 2.0, [0.1, 0.2, 0.25], position=(0.0, 0.0, 0.0))
    system = fm.System([rigid, beam], [Spherical(rigid, beam, s_j=Node(0), at=(0.0, 0.0, 0.0), name="ball")],
                       gravity=(0.0, -9.81, 0.0))
    q = system.initial_coordinates() + 0.2 * rng.standard_normal(system.n_q)
    v, a = rng.standard_normal((2, system.n_q))
    lam = rng.standard_normal(system.n_c)
    assert system.slice(beam).start == 7
    K, C = system.tangent_matrices(0.0, q, v, a, lam)

    def residual(qq):
        return system.mass_matrix(qq) @ a - system.forces(0.0, qq, v) + system.jacobian(0.0, qq).T @ lam

    h, n = 1e-4, system.n_q
    stencil = ((-2, 1.0), (-1, -8.0), (1, 8.0), (2, -1.0))
    r0, Q0 = residual(q), system.forces(0.0, q, v)
    Kc = np.column_stack([sum(w * (residual(q + s * h * e) - r0) for s, w in stencil) / (12 * h) for e in np.eye(n)])
    Cc = np.column_stack([-sum(w * (system.forces(0.0, q, v + s * h * e) - Q0) for s, w in stencil) / (12 * h)
                          for e in np.eye(n)])
    assert relative(K, Kc) < 1e-6 and relative(C, Cc) < 1e-6
    b = system.slice(beam)
    assert relative(K[b, b], Kc[b, b]) < 1e-8 and relative(C[b, b], Cc[b, b]) < 1e-8
