"""The spatial corotational beam's closed forms (issue 22, item 4) against the values of the
implementation they replaced.

tests/data/corot3d_before_61e9540.json holds M, Q, Q_v, f_int, K, U and T of a bent, spinning
3-element `CorotationalBeam3D` recorded at commit 61e9540, where every one of them came from
forward-mode jets (`flexmbs.elements._jet`): the rotary terms as the Hessian of
T = 1/2 Omega^T J0 Omega in (psi, psi'), the internal force as the gradient of U.  Node 1's
rotation vector has |psi|^2 < 1e-3, so the series branch of the coefficients is covered too.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from flexmbs import Material
from flexmbs.bodies.corotational import CorotationalBeam3D
from flexmbs.elements.corotational3d import (corotational_3d, reference_frames, rotary_inertia, rotation_and_tangent,
                                             rotation_vector_matrix, tangent_operator_rate)

RECORDED = Path(__file__).parent / "data" / "corot3d_before_61e9540.json"


def _recorded_beam():
    """The beam of the recording: 3 elements off the axes, a given section orientation, Iy != Iz."""
    nodes = np.array([[0.0, 0.0, 0.0], [0.4, 0.1, -0.05], [0.8, 0.15, 0.0], [1.2, 0.1, 0.1]])
    return CorotationalBeam3D("ref", nodes, Material(E=2e9, rho=1200.0, nu=0.3), 4e-4, 1.5e-8, 2.5e-8, 3e-8,
                              orientation=(0.2, 0.3, 1.0))


@pytest.fixture(scope="module")
def recorded():
    data = json.loads(RECORDED.read_text())
    return {k: np.array(v) for k, v in data.items() if k not in ("about", "commit")}


def _close(a, b, rel=1e-12):
    return np.max(np.abs(np.asarray(a) - b)) <= rel * max(np.max(np.abs(b)), 1e-300)


def test_the_recorded_state_is_bent_spinning_and_covers_the_series_branch(recorded):
    psi = recorded["q"].reshape(-1, 6)[:, 3:]
    s = np.sum(psi * psi, axis=1)
    assert s[1] < 1e-3 < s.min(initial=np.inf, where=np.arange(4) != 1)
    assert np.all(np.abs(recorded["v"]) > 0) and recorded["U"] > 0


@pytest.mark.parametrize("what", ["M", "Qv", "Q", "f", "K", "U", "T", "V"])
def test_closed_forms_equal_the_jets_recorded(recorded, what):
    """Each quantity equals the recorded one to 1e-12 of its largest entry (measured: M 5e-20,
    Q_v 5e-16, f 1.2e-16 relative; K, U, T from unchanged code: equal)."""
    beam = _recorded_beam()
    q, v, g = recorded["q"], recorded["v"], recorded["gravity"]
    now = {"M": lambda: beam.mass_matrix(q), "Qv": lambda: beam.quadratic_velocity(q, v),
           "Q": lambda: beam.forces(0.0, q, v, g), "f": lambda: beam.internal_force(q),
           "K": lambda: beam.stiffness(q), "U": lambda: beam.strain_energy(q),
           "T": lambda: beam.energy(q, v, g)[0], "V": lambda: beam.energy(q, v, g)[1]}[what]()
    assert _close(now, recorded[what])


def test_closed_form_force_equals_the_gradient_of_the_jets():
    """`corotational_3d` without the tangent (closed form) and with it (jets): the same U, f and
    local quantities, on the recorded beam at 20 random large-rotation states."""
    beam = _recorded_beam()
    rng = np.random.default_rng(7)
    e = beam.elements
    X0 = beam.nodes[e]
    E0 = reference_frames(X0, (0.2, 0.3, 1.0))
    for _ in range(20):
        Q = beam.initial_coordinates().reshape(-1, 6) + 0.1 * rng.standard_normal((beam.n_nodes, 6))
        Q[:, 3:] = 1.2 * rng.standard_normal((beam.n_nodes, 3))
        args = (X0, E0, Q[:, :3][e], Q[:, 3:][e], beam.EA, beam.GJ, beam.EIy, beam.EIz)
        a, b = corotational_3d(*args, tangent=False), corotational_3d(*args, tangent=True)
        assert a.stiffness is None
        assert _close(a.energy, b.energy) and _close(a.force, b.force, 1e-11) and _close(a.local, b.local, 1e-11)


def test_rotary_terms_satisfy_lagrange_by_differences():
    """M_psi = d^2T/dpsi'^2 and Q_v = -M_psi' psi' + dT/dpsi by central differences of the closed-form
    T (one node, 4 random states)."""
    rng = np.random.default_rng(3)
    J0 = rng.standard_normal((3, 3))
    J0 = (J0 @ J0.T + np.eye(3))[None]
    h = 1e-6
    for _ in range(4):
        psi, pd = 1.5 * rng.standard_normal((1, 3)), rng.standard_normal((1, 3))
        r = rotary_inertia(psi, pd, J0)
        assert r.energy[0] == pytest.approx(0.5 * pd[0] @ r.mass[0] @ pd[0], rel=1e-13)
        E = np.eye(3)
        dT = np.array([(rotary_inertia(psi + h * E[k], pd, J0).energy - rotary_inertia(psi - h * E[k], pd, J0).energy)[0]
                       / (2 * h) for k in range(3)])
        Mdot = (rotary_inertia(psi + h * pd, pd, J0).mass[0] - rotary_inertia(psi - h * pd, pd, J0).mass[0]) / (2 * h)
        assert np.allclose(r.quadratic[0], -Mdot @ pd[0] + dT, rtol=0, atol=1e-7 * np.abs(Mdot @ pd[0]).max())


def test_rotation_tangent_and_its_rate_by_differences():
    """R' R^T = (T psi')~, (d/dt T^(T)) psi' by central differences along psi' (both signs)."""
    rng = np.random.default_rng(5)
    h = 1e-6
    for psi in (1.4 * rng.standard_normal(3), np.array([1e-3, -2e-3, 5e-4])):
        pd = rng.standard_normal(3)
        R, T = rotation_and_tangent(psi)
        assert np.allclose(R, rotation_vector_matrix(psi), rtol=0, atol=1e-15)
        W = (rotation_vector_matrix(psi + h * pd) - rotation_vector_matrix(psi - h * pd)) / (2 * h) @ R.T
        assert np.allclose((W[2, 1], W[0, 2], W[1, 0]), T @ pd, atol=1e-8)
        for sign, op in ((1.0, lambda M: M), (-1.0, lambda M: M.T)):
            Td = (op(rotation_and_tangent(psi + h * pd)[1]) - op(rotation_and_tangent(psi - h * pd)[1])) / (2 * h)
            assert np.allclose(tangent_operator_rate(psi, pd, sign), Td @ pd, atol=1e-8)
