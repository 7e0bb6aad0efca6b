"""Method "exact" (matrix exponentials of steady linear models) and the batched energies.

References: the exact solution by the eigenvectors of A (`modal_response`, an independent
route); a tight DOP853 run; the one-state energy functions of flexmbs.formulations.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.analysis import _Physics
from flexmbs.formulations import FORMULATIONS, Lagrange, energies
from flexmbs.formulations.steady_energies import SteadyEnergies
from flexmbs.integrators import simulate
from flexmbs.integrators.exact import gauss_points, modal_response, reference_error
from flexmbs.signals import Harmonic


def bar(damping=None, load_f=Harmonic(200.0), omega=15.0, elements=6):
    """The rotating bar of Vlase et al. (2020, sec. 4a): 1 m, 1 kg, A = 0.2 cm^2, E = 210 GPa."""
    mesh = fm.generate.line(elements, 1.0)
    element = fm.Bar2(fm.Material(E=210e9, rho=50_000.0), area=0.2e-4)
    return fm.Model(mesh, element, motion=fm.motion.ConstantRotation(omega), fixed=[("start", "all")],
                    loads=[fm.NodalLoad("end", "u", 1.0, load_f)], damping=damping)


def beam(gravity=None, motion=None):
    """A planar cantilever beam: bending couples the inertia invariants d, S and G."""
    mesh = fm.generate.line(4, 0.5)
    element = fm.BeamEB2D(fm.Material(E=70e9, rho=2700.0), area=1e-4, I=1e-10)
    return fm.Model(mesh, element, motion=motion or fm.motion.ConstantRotation(4.0), fixed=[("start", "all")],
                    loads=[fm.NodalLoad("end", "v", 0.5, Harmonic(30.0, phase=0.3)),
                           fm.NodalLoad("end", "u", 2.0)], damping=(0.5, 1e-5), gravity=gravity)


def powers_integrand(model, form):
    """(integrand, physics): the model's powers of the loads, damping, frame and stiffening at the states of
    ``form`` (N at once, ``vectorized``), as `flexmbs.run` integrates them, and its `_Physics`."""
    physics = _Physics(model)

    def integrand(t, x):
        return physics.powers_many(t, *form.physical(t, x))
    integrand.vectorized = True
    return integrand, physics


@pytest.mark.parametrize("formulation", ["lagrange", "gibbs-appell", "hamilton"])
@pytest.mark.parametrize("damping", [None, (3.0, 1e-6)])
def test_exact_matches_the_modal_solution(formulation, damping):
    model = bar(damping)
    res = fm.run(model, formulation=formulation, method="exact", t_end=0.02, dt_out=1e-4, store=False,
                 compute_energies=False)
    assert res.success and len(res.t) == 201
    assert reference_error(model, res) < 1e-10


def test_exact_matches_a_tight_dop853_run_and_balances_energy():
    model = beam()
    kw = dict(formulation="lagrange", t_end=0.05, dt_out=5e-4, store=False)
    ex = fm.run(model, method="exact", **kw)
    ref = fm.run(model, method="DOP853", rtol=1e-11, atol=1e-16, **kw)
    peak = np.abs(ref.delta).max()
    assert np.abs(ex.delta - ref.delta).max() < 1e-8 * peak
    for key in ("W_loads", "W_damping", "W_frame", "W_stiffening"):
        assert np.abs(ex.energies[key] - ref.energies[key]).max() < 1e-8 * np.abs(ref.energies[key]).max()
    # energy balance (Results.energy_balance_error); with a constant K_geo (steady frame,
    # constant loads) the stiffening force has the potential V_geo: W_stiffening = -(V_geo - V_geo(0))
    e = ex.energies
    assert np.abs(ex.energy_balance_error()).max() < 1e-9 * np.abs(e["T"] - e["T"][0]).max()
    assert np.abs(e["W_stiffening"] + e["V_geo"] - e["V_geo"][0]).max() < 1e-9 * np.abs(e["V_geo"]).max()


def test_exact_dense_output_and_steps():
    """Stepping with h and the dense output between step points agree with the modal solution."""
    model = bar()
    form = Lagrange(model)
    x0 = np.zeros(form.n_state)
    sol = simulate(form, (0.0, 0.01), x0, method="exact", h=1e-3)
    assert sol.success and sol.n_steps == 10 and np.allclose(sol.t, np.linspace(0, 0.01, 11))
    ref = modal_response(form, x0, sol.t)
    assert np.abs(sol.x - ref).max() < 1e-10 * np.abs(ref).max()
    integrator = fm.INTEGRATORS["exact"](form, 0.0, x0, 0.01, h=2e-3)
    integrator.step()
    x_mid = integrator.dense(1.3e-3)
    assert np.abs(x_mid - modal_response(form, x0, [1.3e-3])[0]).max() < 1e-10 * np.abs(ref).max()


def test_exact_refuses_what_it_cannot_integrate():
    with pytest.raises(ValueError, match="Harmonic"):
        fm.run(bar(load_f=lambda t: np.sin(200.0 * t)), method="exact", t_end=0.01, store=False)
    spinup = bar()
    spinup = fm.Model(spinup.mesh, spinup.element, motion=fm.motion.SpinUp(6.0, 15.0),
                      fixed=[("start", "all")])
    with pytest.raises(ValueError, match="constant coefficients"):
        fm.run(spinup, method="exact", t_end=0.01, store=False)
    with pytest.raises(ValueError, match="too large"):
        fm.run(bar(elements=2001), method="exact", t_end=0.01, store=False)


def test_exact_reports_divergence_above_the_critical_speed():
    """A bar spinning far above its first axial frequency (~3.2e3 rad/s) softens to instability."""
    res = fm.run(bar(omega=2e4, load_f=None), method="exact", t_end=0.05, dt_out=1e-4, store=False,
                 compute_energies=False)
    assert res.status == "diverged" and "grows without bound" in res.message
    assert 0 < len(res.t) < 501


@pytest.mark.parametrize("model", [beam(), beam(gravity=[0.0, -9.81, 0.0], motion=fm.motion.Fixed()), bar((2.0, 1e-6))],
                         ids=["rotating beam", "fixed beam with gravity", "damped bar"])
def test_batched_energies_equal_the_one_state_functions(model):
    rng = np.random.default_rng(1)
    n = model.n_dofs
    D, V, A = (1e-4 * rng.standard_normal((5, n)) for _ in range(3))
    t = rng.uniform(0, 0.1, 5)
    F = _Physics(model).load_factors_many(t)
    batch = SteadyEnergies(model).evaluate(D, V, A, F)
    for i in range(5):
        one = energies(model, t[i], D[i], V[i], A[i])
        for key, values in batch.items():
            ref = getattr(one, key)
            scale = max(abs(getattr(one, k)) for k in batch) or 1.0
            assert abs(values[i] - ref) <= 1e-11 * scale, key


def test_gauss_points_bound():
    """The point count grows with theta and meets the error bound (2) of the module."""
    assert gauss_points(1.0) < gauss_points(8.0) < gauss_points(30.0) <= 40
    xi, w = np.polynomial.legendre.leggauss(gauss_points(20.0))
    # int_0^1 cos(20 s) ds on [0, 1]: exact value sin(20)/20
    approx = 0.5 * w @ np.cos(20.0 * 0.5 * (xi + 1.0))
    assert abs(approx - np.sin(20.0) / 20.0) < 1e-12


def test_formulations_agree_on_the_compiled_system():
    """Every formulation's linear_system gives the same physical motion (through modal_response)."""
    model = beam()
    t = np.linspace(0.0, 0.02, 5)
    out = []
    for name in ("lagrange", "hamilton"):
        form = FORMULATIONS[name](model)
        x = modal_response(form, form.state0(np.zeros(form.n), np.zeros(form.n)), t)
        out.append(form.physical(t, x)[0])
    assert np.abs(out[0] - out[1]).max() < 1e-10 * np.abs(out[0]).max()


@pytest.mark.parametrize("model, dt_out", [(bar(elements=40), 1e-4), (beam(), 5e-4)],
                         ids=["bar, 2 quadrature parts per output", "damped beam, two loads"])
def test_blocks_of_outputs_agree_with_one_block(model, dt_out):
    """Streaming in blocks (7 outputs each) gives the states and the works of one block, to
    round-off: the blocks continue the same propagation and the same sums."""
    form = Lagrange(model)
    integrand, _ = powers_integrand(model, form)
    t_eval = np.append(np.arange(0.0, 0.0095, dt_out), 0.0095)          # a shorter last interval
    runs = []
    for block in (7, len(t_eval)):
        integrator = fm.INTEGRATORS["exact"](form, 0.0, np.zeros(form.n_state), 0.0095)
        parts = list(integrator.output_blocks(t_eval, integrand, block=block))
        assert len(parts) == 1 + -(-(len(t_eval) - 1) // block) and integrator.status == "finished"  # t0 first
        runs.append([np.concatenate(p) for p in zip(*parts)])
    (t1, x1, w1), (t2, x2, w2) = runs
    assert np.array_equal(t1, t_eval) and np.array_equal(t2, t_eval)
    assert np.abs(x1 - x2).max() <= 1e-12 * np.abs(x2).max()
    assert np.all(np.abs(w1 - w2).max(axis=0) <= 1e-12 * np.abs(w2).max(axis=0) + 1e-300)
    assert np.abs(w2).max() > 0


def test_exact_streams_its_outputs_block_by_block(monkeypatch):
    """The first outputs reach `on_output` before the works of the later ones are computed, and
    the integrand never sees more quadrature points at once than a block holds."""
    import flexmbs.integrators.exact as exact
    monkeypatch.setattr(exact, "BLOCK_BYTES", 200_000)
    model = bar(elements=20)
    form = Lagrange(model)
    physics = _Physics(model)
    events = []

    def integrand(t, x):
        events.append(("integrand", float(np.max(t)), len(t)))
        return physics.powers_many(t, *form.physical(t, x))
    integrand.vectorized = True
    sol = simulate(form, (0.0, 0.02), np.zeros(form.n_state), method="exact",
                   t_eval=np.linspace(0.0, 0.02, 201), integrand=integrand,
                   on_output=lambda t, x, w: events.append(("output", t, 1)))
    assert sol.success and len(sol.t) == 201
    first_output = next(i for i, e in enumerate(events) if e[0] == "output" and e[1] > 0)
    assert max(e[1] for e in events[:first_output] if e[0] == "integrand") < 0.01
    calls = [e[2] for e in events if e[0] == "integrand"]
    assert len(calls) > 2 and max(calls) * form.n_state * 8 <= 200_000


def test_a_diverging_run_in_blocks_keeps_the_outputs_before():
    """Divergence found in a later block: the outputs of the earlier blocks and of this one up to
    the bound are returned, as with one block."""
    form = Lagrange(bar(omega=2e4, load_f=None))
    t_eval = np.linspace(0.0, 0.05, 501)
    ends = []
    for block in (3, 501):
        integrator = fm.INTEGRATORS["exact"](form, 0.0, np.zeros(form.n_state), 0.05)
        t = np.concatenate([p[0] for p in integrator.output_blocks(t_eval, block=block)])
        assert integrator.status == "diverged"
        ends.append(len(t))
    assert ends[0] == ends[1] and 3 < ends[0] < 501


def beam_3d():
    """A 3D cantilever spun about a skew axis: every moment term (d, S, G) of P_frame is active."""
    mesh = fm.generate.line(3, 0.5, dim=3)
    element = fm.BeamEB3D(fm.Material(E=70e9, rho=2700.0), area=1e-4, Iy=1e-10, Iz=2e-10, J=3e-10)
    axis = np.array([0.3, 0.4, 1.0]) / np.linalg.norm([0.3, 0.4, 1.0])
    return fm.Model(mesh, element, motion=fm.motion.ConstantRotation(5.0, axis=axis), fixed=[("start", "all")],
                    loads=[fm.NodalLoad("end", "w", 0.5, Harmonic(30.0, phase=0.3)),
                           fm.NodalLoad("end", "u", 2.0)], damping=(0.5, 1e-5))


@pytest.mark.parametrize("formulation", ["lagrange", "hamilton"])
@pytest.mark.parametrize("model", [beam(), beam(gravity=[0.0, -9.81, 0.0], motion=fm.motion.Fixed()),
                                   bar((2.0, 1e-6)), beam_3d()],
                         ids=["rotating beam", "fixed beam with gravity", "damped bar", "3D beam, skew spin"])
def test_declared_forms_equal_the_integrand(model, formulation):
    """The quadratic forms `flexmbs.run`'s integrand declares (`forms`, from the model's
    matrices) give its values (`powers_at_loads`) at random augmented states, to 1e-12 of the
    sum of the forms' terms' sizes (the round-off of either side)."""
    from flexmbs.integrators.exact import _Augmented, declared_forms
    form = FORMULATIONS[formulation](model)
    integrand, physics = powers_integrand(model, form)
    integrand.forms = lambda X, F, one: physics.power_forms(form, X, F, one)
    aug = _Augmented(*fm.integrators.exact.exact_system(form))
    Q = declared_forms(aug, integrand.forms, 4)
    rng = np.random.default_rng(2)
    Z = rng.standard_normal((6, aug.dim)) * np.r_[np.full(aug.n, 1e-4), np.ones(aug.dim - aug.n)]
    Z[:, -1] = 1.0
    direct = physics.powers_at_loads(aug.load_factors(Z), *form.physical(np.zeros(6), Z[:, :aug.n]))
    via = np.einsum("cia,ia->ic", Z @ Q, Z)
    terms = np.einsum("cia,ia->ic", np.abs(Z) @ np.abs(Q), np.abs(Z))      # sum of |terms|: the round-off scale
    assert np.all(np.abs(direct).max(axis=0) >= 1e-6 * terms.max(axis=0))    # no component lost in cancellation
    # Hamilton: both sides solve M for delta' (momenta -> velocities), whose round-off is cond(M) eps
    assert np.all(np.abs(via - direct) <= (1e-12 if formulation == "lagrange" else 1e-11) * terms)
    assert np.array_equal(Q, Q.transpose(0, 2, 1))


def test_spectral_radius_bound_is_above_and_close_to_the_eigenvalues():
    """`spectral_radius_bound` (the quadrature's frequency bound, eq. (2)) is never below the
    largest |eigenvalue| (numpy.linalg.eigvals) and, for the augmented matrices of the test
    models, within 2 % of it; a nilpotent matrix has 0."""
    from flexmbs.integrators.exact import _Augmented, exact_system, spectral_radius_bound
    for model in (bar(), bar((2.0, 1e-6)), beam(), beam_3d()):
        Ah = _Augmented(*exact_system(Lagrange(model))).Ahat
        rho = np.max(np.abs(np.linalg.eigvals(Ah)))
        assert rho <= spectral_radius_bound(Ah) <= 1.02 * rho
    assert spectral_radius_bound(np.triu(np.ones((4, 4)), 1)) == 0.0


def test_exact_hands_its_works_on_with_the_outputs(tmp_path):
    """`simulate`'s ``on_output(t, x, w)`` / ``on_outputs(T, X, W)`` get the integrals with method
    "exact" as with every other method (they were handed on without w), equal to
    ``Solution.integrals``; a Model run's works in Results and in results.h5 are the same numbers."""
    model = beam()
    form = Lagrange(model)
    integrand, _ = powers_integrand(model, form)
    t_eval = np.linspace(0.0, 0.01, 21)
    rows, blocks = [], []
    sol = simulate(form, (0.0, 0.01), np.zeros(form.n_state), method="exact", t_eval=t_eval, integrand=integrand,
                   on_output=lambda t, x, w: rows.append(w))
    assert sol.success and np.abs(sol.integrals).max() > 0
    assert np.array_equal(np.stack(rows), sol.integrals)
    simulate(form, (0.0, 0.01), np.zeros(form.n_state), method="exact", t_eval=t_eval, integrand=integrand,
             on_outputs=lambda T, X, W: blocks.append(W))
    assert np.array_equal(np.concatenate(blocks), sol.integrals)
    res = fm.run(model, method="exact", t_end=0.01, dt_out=5e-4, store=tmp_path / "r.h5")
    back = fm.load_results(tmp_path / "r.h5")
    for key in ("W_loads", "W_damping", "W_frame"):
        assert np.abs(res.energies[key]).max() > 0
        assert np.array_equal(back.energies[key], res.energies[key])
