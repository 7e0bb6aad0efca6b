"""Kane and Volterra on a System of any body kind (issue 23, item 1): the bodies' parts (rigid parts and mass
points, `kinematics`) against Lagrange's terms, and the motion of the triple pendulum, Chaplygin's sleigh and
the coupled slider-crank against Lagrange's.

Reference values are Lagrange's own (M, Q_v of each body; `flexmbs.formulations.index1`): Kane's and
Volterra's equations are built from the parts' velocities, accelerations and momenta
(docs/formulations_system.md, "Kane and Volterra on a System") and must agree with them.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg

import flexmbs as fm
from flexmbs.bodies.tree import COMPLEX_STEP
from flexmbs.formulations.registry import system_formulation

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import slider_crank  # noqa: E402
import triple_pendulum  # noqa: E402
from test_formulations_system import BODIES, internal_gradients, lagrange_inertia, random_state  # noqa: E402


def reduced_rod():
    """The beam of `test_formulations_system.flexible_rod` reduced to 3 modes (`flexmbs.reduction.reduce`)."""
    from flexmbs.bodies import FlexibleBody
    from flexmbs.reduction import reduce
    element = fm.BeamEB2D(fm.Material(E=2e11, rho=7870.0), area=6.4e-5, I=3.4e-10)
    model = fm.Model(fm.generate.line(4, 0.3), element, fixed=[("start", "all")])
    return FlexibleBody(reduce(model, 3), "rod", position=(0.1, 0.2, 0.0))


KINDS = {**BODIES, "FlexibleBody (reduced)": reduced_rod}


def parts_inertia_forces(body, q, v, a) -> np.ndarray:
    """Kane's generalized inertia forces of one body from its parts (Newton-Euler, then the partial velocities):
    sum_i B_i^T m_i (B_i q'' + B_i' q') + D_i^T (I_i (D_i q'' + D_i' q') + omega_i x I_i omega_i), the rates
    B_i', D_i' along q' by one complex step."""
    h = COMPLEX_STEP
    kin = body.kinematics((q + 1j * h * v)[None])
    B, D, I = kin.B[0].real, kin.D[0].real, kin.I[0].real
    acc = B @ a + kin.B[0].imag @ v / h
    alpha = D @ a + kin.D[0].imag @ v / h
    omega = D @ v
    torque = np.einsum("pxy,py->px", I, alpha) + np.cross(omega, np.einsum("pxy,py->px", I, omega))
    return np.einsum("p,pxa,px->a", kin.mass, B, acc) + np.einsum("pxa,px->a", D, torque)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_parts_give_the_bodys_mass_matrix(kind):
    """sum_i m_i B_i^T B_i + D_i^T I_i D_i of the parts is the body's M to round-off at random states (unit
    Euler parameters) on the velocities its internal constraints admit (p.p' = 0: off them the parts'
    V_c = d(A c)/dp and Lagrange's -2 A c~ G differ by a multiple of p, which q' never has)."""
    rng = np.random.default_rng(5)
    body = KINDS[kind]()
    for _ in range(3):
        q = random_state(body, rng)[0]
        kin = body.kinematics(q[None])
        M = (np.einsum("p,pxa,pxb->ab", kin.mass, kin.B[0], kin.B[0])
             + np.einsum("pxa,pxy,pyb->ab", kin.D[0], kin.I[0], kin.D[0]))
        M_L = body.mass_matrix(q)
        C = internal_gradients(body, q)
        if len(C):
            N = scipy.linalg.null_space(C)
            M, M_L = N.T @ M @ N, N.T @ M_L @ N
        assert np.abs(M - M_L).max() <= 1e-12 * np.abs(M_L).max(), kind


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_kane_inertia_forces_are_lagranges(kind):
    """The parts' generalized inertia forces equal Lagrange's M q'' - Q_v to round-off at random states, up to
    the internal constraints' gradients (the Euler-parameter norm's multiplier takes up the difference)."""
    rng = np.random.default_rng(29)
    body = KINDS[kind]()
    for _ in range(3):
        q, v, a = random_state(body, rng)
        ref = lagrange_inertia(body, q, v, a)
        diff = parts_inertia_forces(body, q, v, a) - ref
        C = internal_gradients(body, q)
        if len(C):
            diff -= C.T @ np.linalg.lstsq(C.T, diff, rcond=None)[0]
        assert np.abs(diff).max() <= 1e-11 * np.abs(ref).max(), (kind, np.abs(diff).max() / np.abs(ref).max())


@pytest.mark.parametrize("coordinates", ["euler-parameters", "natural"])
def test_triple_pendulum_kane_and_volterra_follow_lagrange(coordinates):
    """Pappalardo and Guida's triple pendulum (cases/triple_pendulum.py: rigid bodies in Euler parameters or in
    natural coordinates), 0.1 s by DOP853 at rtol 1e-10: Kane's and Volterra's motions are Lagrange's to 1e-9 m
    (measured 5e-13 and 1e-12) and conserve T + V_g to 1e-9 of the kinetic energy."""
    system = triple_pendulum.build(coordinates)
    t = np.linspace(0.0, 0.1, 3)
    runs = {name: fm.run(system, formulation=name, method="DOP853", rtol=1e-10, atol=1e-12, t_end=0.1, t_eval=t,
                         store=False) for name in ("lagrange", "kane", "volterra")}
    for name in ("kane", "volterra"):
        assert runs[name].success, runs[name].message
        assert np.abs(runs[name].q - runs["lagrange"].q).max() < 1e-9, name
        assert np.abs(runs[name].q_dot - runs["lagrange"].v).max() < 1e-7, name
        assert np.ptp(runs[name].energies["total"]) < 1e-9 * np.abs(runs[name].energies["kinetic"]).max(), name


def test_sleigh_kane_and_volterra_follow_lagrange():
    """Chaplygin's sleigh (a TreeBody on a knife edge, tests/test_registry.py), 0.3 s by DOP853 at rtol 1e-10:
    Kane's and Volterra's motions are Lagrange's to 1e-7."""
    from test_registry import sleigh
    t = np.linspace(0.0, 0.3, 3)
    runs = {name: fm.run(sleigh(), formulation=name, method="DOP853", rtol=1e-10, atol=1e-12, t_end=0.3, t_eval=t,
                         store=False) for name in ("lagrange", "kane", "volterra")}
    for name in ("kane", "volterra"):
        assert runs[name].success, runs[name].message
        assert np.abs(runs[name].q - runs["lagrange"].q).max() < 1e-7, name


def test_coupled_slider_crank_accelerations_and_reactions_are_lagranges():
    """At the start of the coupled slider-crank (8 elements: two rigid bodies in Euler parameters, a
    floating-frame rod): q'' = W u' + W' u + X' of Kane and of Volterra is Lagrange's to 1e-10 of its size
    (measured 3.4e-12), and the joints' multipliers recovered from the parts' inertia forces are Lagrange's to
    1e-10 of the largest (the Euler-parameter norms' are not physical and differ, test above)."""
    system = slider_crank.build_coupled(elements=8)[0]
    lagrange = system_formulation("lagrange", system)
    x0, n = lagrange.state0(), system.n_q
    a_L, lam_L = lagrange.rhs(0.0, x0)[n:], lagrange.multipliers(0.0, x0)
    joints = np.concatenate([np.arange(system.n_c)[system.rows(c)] for c in system.constraints
                             if type(c).__name__ != "EulerParameterNorm"])
    for name in ("kane", "volterra"):
        form = system_formulation(name, system)
        x = form.state0()
        q, u = x[:n], x[n:]
        qd, u_dot = form.derivatives(0.0, q, u)
        W, _, Wd, Xd = form.qv.maps_and_rates(0.0, q, qd)
        a = W @ u_dot + Wd @ u + Xd
        assert np.abs(a - a_L).max() <= 1e-10 * np.abs(a_L).max(), name
        lam = form.multipliers(0.0, x)
        assert np.abs(lam[joints] - lam_L[joints]).max() <= 1e-10 * np.abs(lam_L).max(), name


@pytest.mark.slow
def test_coupled_slider_crank_kane_and_volterra_follow_lagrange():
    """The first 0.1 ms of the coupled slider-crank (2 elements) by the implicit midpoint rule (h = 1e-5 s):
    Kane's and Volterra's mid-span deflections are Lagrange's to 1e-3 of its size (different states, so
    different O(h^2) errors), and each other's to 1e-9 (the same state (q, u) and the same equations
    computed two ways)."""
    from test_formulations_system import _coupled_run
    _, w_L = _coupled_run("lagrange", "midpoint", 1e-4, h=1e-5)
    _, w_K = _coupled_run("kane", "midpoint", 1e-4, h=1e-5)
    _, w_V = _coupled_run("volterra", "midpoint", 1e-4, h=1e-5)
    assert np.abs(w_K - w_L).max() <= 1e-3 * np.abs(w_L).max()
    assert np.abs(w_V - w_K).max() <= 1e-9 * np.abs(w_L).max()


@pytest.mark.parametrize("formulation", ["kane", "volterra"])
def test_slider_crank_case_takes_kane_and_volterra(formulation, tmp_path):
    """`--set coupled=true --set formulation=kane` (and volterra) runs the coupled model with those equations
    (2 elements, 0.005 revolutions) by the midpoint rule, writes the case's files and its joint reactions; the
    deflection and the reactions are Maggi's midpoint run's to 1e-3 and 1e-4 of their size (the same integrator
    and step, states (q, u) and (q, q'): different O(h^2) errors)."""
    params = dict(coupled=True, elements=2, revolutions=0.005, plots=False, paraview=False)
    ref = slider_crank.run(formulation="maggi", **params)[2]
    res, _, extras = slider_crank.run(out=tmp_path, formulation=formulation, **params)
    assert (res.metadata["formulation"], res.metadata["method"]) == (formulation, "midpoint")
    w, w_ref = extras["midspan_deflection"], ref["midspan_deflection"]
    assert np.abs(w - w_ref).max() <= 1e-3 * np.abs(w_ref).max()
    # the joint reactions from the parts' inertia forces (measured 1.9e-6 of the largest: the runs' difference)
    assert np.abs(extras["reaction_pin_A"] - ref["reaction_pin_A"]).max() <= 1e-4 * np.abs(ref["reaction_pin_A"]).max()
    assert (tmp_path / "results.npz").exists() and (tmp_path / "summary.json").exists()


@pytest.mark.slow
def test_slider_crank_table_writes_every_formulation(tmp_path):
    """--table (2 elements, 0.01 revolutions; about 5 s CPU): DIR/formulations.csv and .md hold the reference
    and the six formulations; every run finished, every peak is the reference's to 1e-2 (the steps are the
    case's h_coupled, the reference's h_coupled / 64), the index-3 runs hold C = 0 to round-off."""
    import csv
    slider_crank.run(out=tmp_path, coupled=True, table=True, elements=2, revolutions=0.01, plots=False)
    rows = list(csv.DictReader((tmp_path / "formulations.csv").open()))
    assert [r["formulation"] for r in rows] == ["reference: lagrange", *slider_crank.TABLE_FORMULATIONS]
    for r in rows[1:]:
        assert float(r["peak_error"]) < 1e-2, r
    assert float(rows[1]["constraint_violation"]) < 1e-12
    assert {r["equations"] for r in rows} >= {"48", "27", "6"}      # m + r, m, p of the 2-element model
    assert (tmp_path / "formulations.md").read_text().startswith("Coupled slider-crank")
