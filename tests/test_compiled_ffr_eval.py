"""The floating-frame body's evaluation in the kernel (csrc/index3_kernel.c flex_eval, flex_kin, flex_active,
flex_precompute; docs/design.md "The floating-frame body's evaluation in the kernel").

- M, Q, C, C_q, dQ_v/dv and K_el of the kernel equal the numpy System's to 1e-12 of their size on the coupled
  slider-crank (a planar rod: five of the nine rows of (d, S) are zero and skipped), the spin-up hub and beam
  ("omega" stiffening), a spatial beam whose nine rows are all used, damped (the [c]^T sweep), at states with
  |p| != 1 as Newton's iterates have them (M_dd = |p|^4 [m]);
- the coupled slider-crank's trajectory over 120 steps equals the one recorded with the kernel before the rewrite
  (tests/data/ffr_slider_crank_before_304c901.json): q to 1e-12 of its size, v to 1e-9 (equal to the last bit
  until the Newton corrections with a kept matrix summed C_q^T mu without C_q, in another order: round-off that
  the index-3 steps carry on, tests/test_compiled_step.py RELATIVE; measured 1.1e-11 of |v| = 75).
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs import BeamEB3D, Material, Model, generate
from flexmbs.bodies import FlexibleBody, Node, RigidBodyEP
from flexmbs.compiled import CompiledSystem, kernel_status
from flexmbs.constraints import AngleDriver, Fixed, Revolute
from flexmbs.integrators import ConstrainedProblem, simulate
from flexmbs.system import System

CASES = Path(__file__).resolve().parents[1] / "cases"
sys.path.insert(0, str(CASES))

import slider_crank  # noqa: E402
import spinup_beam  # noqa: E402
from kernel_reference import assert_terms_close, numpy_system_terms  # noqa: E402

RECORDED = Path(__file__).parent / "data" / "ffr_slider_crank_before_304c901.json"

needs_kernel = pytest.mark.skipif(not kernel_status().installed, reason=f"the kernel is {kernel_status()}")


def spatial_damped():
    """A driven hub with a clamped, Rayleigh-damped 3D beam along (1, 2, 3) with axial-strain stiffening: every
    one of the nine rows (a, b) of its d_ab, S_ab is nonzero, and [c] is not zero."""
    z = np.array([0.0, 0.0, 1.0])
    hub = RigidBodyEP("hub", 2.0, [0.1, 0.2, 0.3], angular_velocity=2.0 * z)
    axis = np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0)
    model = Model(generate.line(3, 0.6, dim=3, direction=axis),
                  BeamEB3D(Material(E=7e10, rho=2700.0), 1e-4, 1e-9, 2e-9, 3e-9, rotary_inertia=True),
                  fixed=[("start", "all")], damping=(0.5, 1e-4))
    beam = FlexibleBody(model, "beam", stiffening="axial-strain", angular_velocity=2.0 * z)
    constraints = [Revolute(None, hub, at=np.zeros(3), axis=z, name="pivot"),
                   AngleDriver(None, hub, z, lambda t: (2.0 * t + 5.0 * t * t, 2.0 + 10.0 * t, 10.0), name="drive"),
                   Fixed(hub, beam, s_j=Node(0), name="clamp")]
    return System([hub, beam], constraints, gravity=[0.0, -9.81, -1.0])


BUILDS = {"slider-crank": lambda: slider_crank.build_coupled(elements=8)[0],
          "spin-up": lambda: spinup_beam.build_coupled(3, omega_s=6.0, t_s=1.0)[0],
          "spatial-damped": spatial_damped}


def off_unit_state(system, rng):
    """(q, v) near the start with random elastic coordinates and each body's Euler parameters scaled by 1.02,
    off the norm constraint as Newton's iterates are, so that |p|^4 = 1.0824 in M_dd and A^T A."""
    q = system.initial_coordinates() + 1e-3 * rng.standard_normal(system.n_q)
    v = system.initial_velocities() + 0.5 * rng.standard_normal(system.n_q)
    for b in system.bodies:
        if isinstance(b, (FlexibleBody, RigidBodyEP)):
            sl = system.slice(b)
            q[sl][3:7] *= 1.02
    return q, v


@needs_kernel
@pytest.mark.parametrize("name", list(BUILDS))
def test_flexible_terms_equal_the_numpy_system(name):
    system = BUILDS[name]()
    compiled = CompiledSystem(system)
    rng = np.random.default_rng(7)
    for t in (0.0, 0.021):
        q, v = off_unit_state(system, rng)
        got = compiled.evaluate(t, q, v)
        ref = numpy_system_terms(system, t, q, v)
        assert_terms_close(got, ref, 1e-12)
        for b in system.bodies:                       # M_dd = |p|^4 [m]: [m] from the body at unit p
            if isinstance(b, FlexibleBody):
                sl = system.slice(b)
                q_b = q[sl].copy()
                pp = q_b[3:7] @ q_b[3:7]
                q_b[3:7] /= np.sqrt(pp)
                m = b.mass_matrix(q_b)[7:, 7:]
                assert np.abs(got["M"][sl, sl][7:, 7:] - pp ** 2 * m).max() <= 1e-12 * np.abs(m).max()
                assert abs(pp ** 2 - 1.0) > 0.05


@needs_kernel
def test_slider_crank_trajectory_equals_the_recorded_one():
    rec = json.loads(RECORDED.read_text())
    system = slider_crank.build_coupled(elements=8)[0]
    problem = ConstrainedProblem(system)
    x0 = problem.state0(system.initial_coordinates(), system.initial_velocities())
    h, steps = rec["h"], rec["steps"]
    sol = simulate(problem, (0.0, h * steps), x0, method="index3-alpha", h=h, t_eval=np.asarray(rec["t"]),
                   rho_inf=0.9, kernel="compiled")
    assert sol.status == "finished"
    x, x_rec, n = np.asarray(sol.x), np.asarray(rec["x"]), system.n_q
    assert np.abs(x[:, :n] - x_rec[:, :n]).max() <= 1e-12 * np.abs(x_rec[:, :n]).max()
    assert np.abs(x[:, n:] - x_rec[:, n:]).max() <= 1e-9 * np.abs(x_rec[:, n:]).max()
