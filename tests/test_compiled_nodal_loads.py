"""The Models' nodal loads of FlexibleBody bodies on the compiled step (issue 22, item 4): csrc
``flex_nodal_loads`` and ``flex_load_factors`` against the numpy path (`FlexibleBody.applied_forces`, the
reference).

- M, Q, C, C_q, dQ_v/dv and K_el from the kernel (and M, Q, C, C_q from `CompiledSystem.terms`, the entry of
  radau-dae's and the index-1 formulations' evaluations) equal the numpy System's to round-off, in both formulations
  (Lagrange's and Gibbs-Appell's terms), for a beam clamped to a hub on a revolute joint and for a free-free
  (mean-axis) beam, with nodal forces and moments, constant (f None), a user's Python function of t and one
  that declares ``affine``, for stiffening "none", "axial-strain" and "omega" (whose unit geometric stiffness
  of an axial load takes that load's factor f_i(t) from the time row);
- index3-alpha on the compiled step follows the numpy steps (q to 1e-11), Lagrange and Gibbs-Appell;
  index3-alpha-adaptive takes the same trial steps, and asks Python once per trial step only for the loads
  whose function is a user's callable (none when each declares ``affine`` or is constant);
- a load factor that gives NaN mid-run stops the compiled run as the numpy path's, naming the load, with the
  outputs before it kept.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs import BeamEB2D, BeamEB3D, Material, Model, NodalLoad, generate
from flexmbs.bodies import FlexibleBody, Node, RigidBodyEP
from flexmbs.compiled import CompiledSystem, kernel_status
from flexmbs.constraints import Fixed, Revolute
from flexmbs.formulations.gibbs_appell_system import GibbsAppellSystem
from flexmbs.integrators import ConstrainedProblem, simulate
from flexmbs.integrators.index3_alpha import Index3AdaptiveAlpha
from flexmbs.system import System
from kernel_reference import assert_terms_close, numpy_system_terms

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason=f"the kernel is {kernel_status()}")

ALU = Material(E=7e10, rho=2700.0)
Z = np.array([0.0, 0.0, 1.0])


def ramp(t):
    """A load factor 1 + 2 t that declares it (`flexmbs.compiled.time_law`: the kernel evaluates it itself)."""
    return 1.0 + 2.0 * t


ramp.affine = (1.0, 2.0)


def tip_loads(python: bool = True) -> list:
    """An axial tip force with a factor of t (it pre-stresses the beam: the "omega" stiffening's ("load", i)
    key), a transverse tip force, a tip moment and a constant force at a middle node; the factors of t are a
    user's Python callables (``python``) or declare ``affine``."""
    f = (lambda t: 1.0 + np.sin(7.0 * t)) if python else ramp
    g = (lambda t: np.cos(3.0 * t) + t) if python else ramp
    return [NodalLoad("end", "u", -40.0, f), NodalLoad("end", "v", 0.7, g), NodalLoad("end", "theta", 0.3, g),
            NodalLoad([2], "v", -0.4)]


def hub_beam(stiffening: str = "none", python: bool = True) -> System:
    """A beam (4 BeamEB2D elements, 0.5 m) clamped to a hub on a revolute joint about z, turning at 2 rad/s,
    under gravity, with `tip_loads`."""
    hub = RigidBodyEP("hub", 2.0, [0.1, 0.2, 0.3], angular_velocity=2.0 * Z)
    model = Model(generate.line(4, 0.5), BeamEB2D(ALU, area=1e-4, I=1e-9), fixed=[("start", "all")],
                  loads=tip_loads(python), stiffening=stiffening == "omega", damping=(0.5, 1e-4))
    beam = FlexibleBody(model, "beam", stiffening=stiffening, angular_velocity=2.0 * Z)
    return System([hub, beam], [Revolute(None, hub, at=np.zeros(3), axis=Z, name="pivot"),
                                Fixed(hub, beam, s_j=Node(0), name="clamp")], gravity=[0.0, -9.81, 0.0])


def free_beam() -> System:
    """A free-free 3D beam (mean-axis reference conditions) with a tip force along y and z and a tip moment
    about x, y and z: all three components of each in the rigid part."""
    model = Model(generate.line(3, 0.4, dim=3), BeamEB3D(ALU, 1e-4, 1e-9, 2e-9, 3e-9),
                  loads=[NodalLoad("end", "v", 0.5, np.cos), NodalLoad("end", "w", -0.2),
                         NodalLoad("end", "theta_x", 0.1, ramp), NodalLoad("end", "theta_y", 0.2),
                         NodalLoad("start", "theta_z", -0.3, np.sin)])
    return System([FlexibleBody(model, "free", reference="mean-axis", angular_velocity=[0.3, -0.2, 1.0])])


SYSTEMS = {"hub-none": lambda: hub_beam("none"), "hub-axial-strain": lambda: hub_beam("axial-strain"),
           "hub-omega": lambda: hub_beam("omega"), "hub-omega-affine": lambda: hub_beam("omega", python=False),
           "free-mean-axis": free_beam}


def random_states(system, count=2, seed=5):
    """``count`` states near the start (|p| != 1 and p.p' != 0: no manifold to hide an error in)."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield (system.initial_coordinates() + 1e-2 * rng.standard_normal(system.n_q),
               system.initial_velocities() + 0.5 * rng.standard_normal(system.n_q))


def loads_part(system, t, q) -> np.ndarray:
    """The nodal loads' generalized forces of every flexible body (applied_forces without gravity): what the
    comparisons must see far above their tolerance, so that leaving a term out fails them."""
    out = np.zeros(system.n_q)
    for b in system.bodies:
        if isinstance(b, FlexibleBody):
            sl = system.slice(b)
            out[sl] = b.applied_forces(t, q[sl], None)
    return out


@needs_kernel
@pytest.mark.parametrize("name", list(SYSTEMS))
def test_lagrange_terms_equal_the_numpy_system(name):
    """The kernel's M, Q, C, C_q, dQ_v/dv and K_el (Lagrange) at random states and three times equal the
    numpy System's to 1e-13 of their size; the nodal loads' part of Q is a thousand times above that, in the
    rigid (R, p) and the elastic coordinates (leaving a term out fails the check), and with "omega" the axial
    load's unit geometric stiffness is among the terms of K_el."""
    system = SYSTEMS[name]()
    compiled = CompiledSystem(system)
    for t in (0.0, 0.137, 0.5):
        for q, v in random_states(system):
            got = compiled.evaluate(t, q, v)
            ref = numpy_system_terms(system, t, q, v)
            assert_terms_close(got, ref, 1e-13)
            # the entry of radau-dae's and the index-1 formulations' evaluations: the same M, Q, C, C_q
            for key, value in zip(("M", "Q", "C", "Cq"), compiled.terms(t, q, v)):
                assert np.abs(value - got[key]).max() <= 1e-14 * max(np.abs(got[key]).max(), 1.0), key
            nodal = loads_part(system, t, q)
            scale = np.abs(ref["Q"]).max()
            b = system.bodies[-1]
            sl = system.slice(b)
            for part in (slice(sl.start, sl.start + 3), slice(sl.start + 3, sl.start + 7), slice(sl.start + 7, sl.stop)):
                assert np.abs(nodal[part]).max() > 1e3 * 1e-13 * scale
    if name.startswith("hub-omega"):
        beam = system.bodies[1]
        assert ("load", 0) in beam.model._Kg_keys        # the axial load pre-stresses the beam


@needs_kernel
@pytest.mark.parametrize("name", ["hub-none", "hub-omega", "free-mean-axis"])
def test_gibbs_appell_terms_equal_the_numpy_system(name):
    """With formulation="gibbs-appell" the kernel's M and Q are the numpy M_GA and Q_a - g (the nodal loads
    in Q_a) to 1e-13 of their size."""
    system = SYSTEMS[name]()
    ga = GibbsAppellSystem(system)
    compiled = CompiledSystem(system, formulation="gibbs-appell")
    for t in (0.0, 0.29):
        for q, v in random_states(system, seed=9):
            got = compiled.evaluate(t, q, v)
            M, g = ga.body_terms.inertia_terms(q, v)
            F = ga.body_terms.active_forces(t, q, v) - g
            assert np.abs(got["M"] - M).max() <= 1e-13 * np.abs(M).max()
            assert np.abs(got["Q"] - F).max() <= 1e-13 * np.abs(F).max()


@needs_kernel
def test_the_time_rows_hold_the_load_factors():
    """Each load with a function of t has its group of the time row (a scalar in 3 numbers), a constant one
    none; a Python callable is a "python" TIME_LAW group (asked of Python by index3-alpha-adaptive), a
    function that declares ``affine`` is evaluated by the kernel."""
    python = CompiledSystem(hub_beam("none"))
    assert python.n_vectors == 3
    np.testing.assert_array_equal(python.laws([0.5])[0].reshape(3, 3)[:, 1:], 0.0)
    np.testing.assert_allclose(python.laws([0.5])[0][::3], [1.0 + np.sin(3.5), np.cos(1.5) + 0.5, np.cos(1.5) + 0.5],
                               rtol=1e-15)
    assert python.python_laws == [f"body 'beam': its Model's `loads[{i}].f`" for i in range(3)]
    assert CompiledSystem(hub_beam("none", python=False)).python_laws == []


def _run(system, kernel, method, t_end, **options):
    problem = ConstrainedProblem(system)
    x0 = problem.state0(system.initial_coordinates(), system.initial_velocities())
    return simulate(problem, (0.0, t_end), x0, method=method, kernel=kernel, refactor="step", **options)


@needs_kernel
@pytest.mark.parametrize("stiffening", ["none", "axial-strain", "omega"])
def test_index3_alpha_steps_follow_the_numpy_steps(stiffening):
    """index3-alpha (rho_inf 0.9), 200 steps of 0.1 ms: the same steps, evaluations and LUs, q to 1e-13 and
    v to 1e-10 of its size (measured 3e-15 and 2e-11).  At h = 1 ms the two paths' q differ by 3e-11 (the
    stiff axial mode under the 40 N tip force: a Newton stop within round-off of its threshold), and the
    axial-strain beam's first step does not converge on either path at h >= 0.25 ms."""
    system = hub_beam(stiffening)
    t_eval = np.linspace(0.0, 0.02, 9)
    a, b = (_run(system, k, "index3-alpha", 0.02, h=1e-4, t_eval=t_eval, rho_inf=0.9) for k in ("numpy", "compiled"))
    assert a.status == b.status == "finished" and (a.kernel, b.kernel) == ("numpy", "compiled")
    assert a.n_steps == b.n_steps and abs(a.n_lu - b.n_lu) <= 2 and abs(a.n_rhs - b.n_rhs) <= 2
    n = system.n_q
    assert np.abs(a.x[:, :n] - b.x[:, :n]).max() <= 1e-13
    assert np.abs(a.x[:, n:] - b.x[:, n:]).max() <= 1e-10 * np.abs(a.x[:, n:]).max()
    assert np.abs(a.x[-1, 14:n]).max() > 1e-4                  # the beam deforms: the loads act


@needs_kernel
@pytest.mark.parametrize("python", [True, False], ids=["python-laws", "affine-laws"])
def test_index3_alpha_adaptive_takes_the_numpy_trial_steps(python, monkeypatch):
    """index3-alpha-adaptive at rtol 1e-3 over 10 ms (101 steps, 21 rejections): the same trial steps,
    rejections, evaluations and LUs on both paths, t within 1e-10 of t_end and q within 1e-11 (measured
    1.0e-11 and 1.0e-13: the error estimate divides the round-off of q by h^3, as on the coupled slider-crank,
    tests/test_compiled_adaptive.py); Python is asked for the time row once per trial step when the loads'
    functions are a user's callables, never when they declare ``affine``."""
    calls, terms = [], Index3AdaptiveAlpha._terms

    def counted(self, kind, t):
        calls.append(t)
        return terms(self, kind, t)
    monkeypatch.setattr(Index3AdaptiveAlpha, "_terms", counted)
    system = hub_beam("omega", python=python)
    a, b = (_run(system, k, "index3-alpha-adaptive", 0.01, rtol=1e-3, atol=1e-5) for k in ("numpy", "compiled"))
    assert a.status == b.status == "finished", (a.message, b.message)
    assert (a.kernel, b.kernel) == ("numpy", "compiled") and a.n_steps >= 8 and a.n_rejected > 0
    assert (a.n_steps, a.n_rejected, a.n_lu, a.n_jac, a.n_rhs) == (b.n_steps, b.n_rejected, b.n_lu, b.n_jac, b.n_rhs)
    assert np.abs(a.t - b.t).max() <= 1e-10 * a.t[-1]
    assert np.abs(a.x[:, :system.n_q] - b.x[:, :system.n_q]).max() <= 1e-11
    assert len(calls) == (b.n_steps + b.n_rejected if python else 0)


@needs_kernel
def test_gibbs_appell_run_follows_the_numpy_run():
    """flexmbs.run(system, formulation="gibbs-appell", method="index3-alpha"), 100 steps of 0.1 ms (h as in
    `test_index3_alpha_steps_follow_the_numpy_steps`): the same steps on both paths, q to 1e-13, v to 1e-10 of
    its size."""
    system = hub_beam("omega")
    a, b = (fm.run(system, formulation="gibbs-appell", method="index3-alpha", h=1e-4, t_end=0.01,
                   t_eval=np.linspace(0.0, 0.01, 6), store=False, kernel=k, refactor="step")
            for k in ("numpy", "compiled"))
    assert a.success and b.success, (a.message, b.message)
    assert (a.metadata["kernel"], b.metadata["kernel"]) == ("numpy", "compiled")
    assert a.stats["n_steps"] == b.stats["n_steps"]
    assert np.abs(a.q - b.q).max() <= 1e-13
    assert np.abs(a.v - b.v).max() <= 1e-10 * np.abs(a.v).max()
