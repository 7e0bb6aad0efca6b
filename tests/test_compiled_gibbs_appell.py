"""Gibbs-Appell on the compiled step (issue 23, item 5): csrc ``rigid_ga`` and ``flex_ga`` against the
numpy path (`flexmbs.formulations.gibbs_appell_system`, the reference).

- the kernel's M_GA and Q_a - g equal the numpy `gibbs_appell` and `active_forces` to round-off at random
  states, for each body kind the compiled path takes: RigidBodyEP (offset centroid, gravity), FlexibleBody
  full and reduced (its mass points packed as the ``point_*`` arrays), RigidBody2D and PointMass (their
  points linear in q: M_GA = M, g = 0);
- ``flexmbs.run(system, formulation="gibbs-appell", method="index3-alpha")`` on the compiled step follows
  the numpy steps (the triple pendulum, the coupled slider-crank) and the run's metadata says which path ran.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import PointMass, RigidBody2D, RigidBodyEP
from flexmbs.compiled import CompiledSystem, kernel_status
from flexmbs.constraints import Revolute
from flexmbs.constraints.planar import PlanarRevolute
from flexmbs.formulations.gibbs_appell_system import GibbsAppellSystem
from flexmbs.forces import Bushing, SpringDamper
from flexmbs.system import System

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import slider_crank  # noqa: E402
import triple_pendulum  # noqa: E402

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason=f"the kernel is {kernel_status()}")


def offset_rigid():
    """A RigidBodyEP with a full inertia and an offset centroid on a revolute joint, under gravity along all
    three axes (every term of rigid_ga and the weight nonzero)."""
    J = np.array([[0.3, 0.02, -0.01], [0.02, 0.4, 0.03], [-0.01, 0.03, 0.5]])
    body = RigidBodyEP("b", 2.0, J, centroid=(0.1, -0.2, 0.3), position=(0.2, 0.0, 0.1))
    return System([body], [Revolute(None, body, at=(0.2, 0.0, 0.1), axis=(0.0, 0.0, 1.0), name="pin")],
                  gravity=(0.5, -9.81, -1.0))


def planar_and_point():
    """Two planar bodies and a point mass on springs and bushings, one pinned to the ground, under gravity."""
    p = RigidBody2D("p", 1.0, 0.1, position=(0.3, 0.1), angle=0.4, angular_velocity=0.5)
    r = RigidBody2D("r", 2.0, 0.2, angle=-0.2, position=(1, 1), velocity=(0.1, -0.2))
    m = PointMass("m", 3.0, position=(0.5, -1.0))
    forces = [SpringDamper(p, (0.1, 0.2), r, (0.3, -0.1), 40.0, 0.7, damping=1.5),
              SpringDamper(None, (0, 0), m, (0.1, 0), 30.0, damping=0.5), Bushing(m, None, [5, 6, 7], 0.1)]
    return System([p, r, m], [PlanarRevolute(None, p, at=(0.0, 0.0))], gravity=(0, -9.81), forces=forces)


SYSTEMS = {
    "RigidBodyEP": offset_rigid,
    "FlexibleBody": lambda: slider_crank.build_coupled(elements=4)[0],
    "FlexibleBody-reduced": lambda: slider_crank.build_coupled(elements=6, rod_modes=3, coupled_stiffening="modal-stress")[0],
    "RigidBody2D-PointMass": planar_and_point,
}


@needs_kernel
@pytest.mark.parametrize("name", list(SYSTEMS))
def test_kernel_terms_equal_the_numpy_gibbs_appell(name):
    """At three random states (|p| != 1, p.p' != 0: no manifold to hide an error in), the kernel's M and Q
    with formulation="gibbs-appell" are the numpy M_GA and Q_a - g to 1e-13 of their size, and its dQ_v/dv
    is zero (the term gives none: C_t by finite differences, as on the numpy path)."""
    system = SYSTEMS[name]()
    ga = GibbsAppellSystem(system)
    compiled = CompiledSystem(system, formulation="gibbs-appell")
    rng = np.random.default_rng(7)
    for t in (0.0, 0.013, 0.2):
        q = system.initial_coordinates() + 0.05 * rng.standard_normal(system.n_q)
        v = system.initial_velocities() + 2.0 * rng.standard_normal(system.n_q)
        got = compiled.evaluate(t, q, v)
        M, g = ga.body_terms.inertia_terms(q, v)
        F = ga.body_terms.active_forces(t, q, v) - g
        assert np.abs(got["M"] - M).max() <= 1e-13 * np.abs(M).max()
        assert np.abs(got["Q"] - F).max() <= 1e-13 * np.abs(F).max()
        assert not got["D"].any()
        # g is far above that tolerance wherever a body has velocity-product terms: leaving it out fails
        if name != "RigidBody2D-PointMass":
            assert np.abs(g).max() > 1e6 * 1e-13 * np.abs(F).max()


@needs_kernel
def test_the_kernels_two_formulations_are_two_computations():
    """Off the Euler parameters' manifold Gibbs-Appell's M_GA (rigid body's inertia about its centroid, a
    flexible body's mass points) and Lagrange's M (invariants) differ: the kernel evaluates each, not one
    renamed.  (On it they are equal for the flexible body; test_formulations_system checks that.)"""
    system = slider_crank.build_coupled(elements=4)[0]
    q = system.initial_coordinates()
    q[3:7] *= 1.3                                        # the crank's |p| = 1.3
    v = system.initial_velocities()
    ga = CompiledSystem(system, formulation="gibbs-appell").evaluate(0.0, q, v)
    lagrange = CompiledSystem(system).evaluate(0.0, q, v)
    assert np.abs(ga["M"] - lagrange["M"]).max() > 1e-3 * np.abs(lagrange["M"]).max()


def _runs(system, t_end, h, n_out, **options):
    """The Gibbs-Appell index3-alpha runs of ``system`` on the numpy and the compiled path (same refactor)."""
    t = np.linspace(0.0, t_end, n_out)
    return [fm.run(system, formulation="gibbs-appell", method="index3-alpha", h=h, t_end=t_end, t_eval=t,
                   store=False, kernel=kernel, refactor="step", **options) for kernel in ("numpy", "compiled")]


def _same_steps(a, b, n):
    """Both finished on the path asked for, with the same steps, q equal to 1e-11 and v to 1e-8 of its size
    (the Newton tolerance, as tests/test_compiled.py's ``same_steps``), the multipliers to 1e-5 of theirs.
    The multipliers tell the formulations apart where q cannot: a rigid body's M_GA q'' + g differs from
    Lagrange's M q'' - Q_v by a multiple of its norm's gradient (0, 2 p), which its multiplier takes up
    (docs/formulations_system.md); Lagrange's compiled terms give the triple pendulum's multipliers 4 % off
    (measured 0.24 of 5.9), Gibbs-Appell's 1.3e-7."""
    assert a.success and b.success, (a.message, b.message)
    assert a.metadata["kernel"] == "numpy" and b.metadata["kernel"] == "compiled"
    assert a.stats["n_steps"] == b.stats["n_steps"]
    assert np.abs(a.q - b.q).max() <= 1e-11
    assert np.abs(a.v - b.v).max() <= 1e-8 * np.abs(a.v).max()
    assert np.abs(a.multipliers - b.multipliers).max() <= 1e-5 * np.abs(a.multipliers).max()


@needs_kernel
def test_triple_pendulum_steps_follow_the_numpy_steps():
    """Pappalardo and Guida's triple pendulum (Euler parameters), 0.1 s at h = 1e-3 s."""
    system = triple_pendulum.build("euler-parameters")
    a, b = _runs(system, 0.1, 1e-3, 11)
    _same_steps(a, b, system.n_q)


@needs_kernel
def test_coupled_slider_crank_steps_follow_the_numpy_steps():
    """The coupled slider-crank (4 elements) for 1/40 revolution at 360 steps per revolution."""
    system = slider_crank.build_coupled(elements=4)[0]
    W = 150.0
    a, b = _runs(system, 2.0 * np.pi / W / 40, 2.0 * np.pi / W / 360, 5)
    _same_steps(a, b, system.n_q)


@needs_kernel
def test_auto_takes_the_kernel_for_gibbs_appell():
    """kernel="auto" (the default) runs Gibbs-Appell compiled and says so in the metadata (summary.json)."""
    res = fm.run(offset_rigid(), formulation="gibbs-appell", method="index3-alpha", h=1e-3, t_end=5e-3, dt_out=1e-3,
                 store=False)
    assert res.success and res.metadata["kernel"] == "compiled"
