"""The elastic part of index3-alpha's kept tangent K_t, refreshed from the bodies' analytic stiffness
(flexmbs/integrators/index3_alpha.py, module docstring; System.elastic_stiffness).

K_t = d(M q'' - Q + C_q^T lam)/dq; the elastic and stiffening forces of a FlexibleBody enter Q with a
minus sign, so their part of K_t is +FlexibleBody.elastic_stiffness.  A kept K_t refreshed as
K_t,kept - K_el(kept) + K_el(now) must equal the finite-difference tangent at the new state:

- at rest (v = q'' = lam = 0, no gravity), where K_t is the elastic stiffness alone, everywhere;
- in motion (the slider-crank's initial v, q'', lam) with only the elastic coordinates changed, in
  the elastic block: the other terms of that block (M q'', Q_v, C_q^T lam) are affine in delta
  (the markers and the invariants of the floating frame are linear in delta), so their delta-delta
  derivatives do not change with delta.

On the coupled slider-crank (4 elements) with axial-strain stiffening, at a deformation whose
axial strain changes the stiffness by much more than the finite-difference error.
"""
import sys
from pathlib import Path

import numpy as np

from flexmbs.bodies import RigidBodyEP
from flexmbs.integrators import ConstrainedProblem
from flexmbs.integrators.index3_alpha import Index3GeneralizedAlpha
from flexmbs.system import System

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))

import slider_crank  # noqa: E402


def _integrator(system):
    problem = ConstrainedProblem(system)
    x0 = problem.state0(system.initial_coordinates(), system.initial_velocities())
    return Index3GeneralizedAlpha(problem, 0.0, x0, 1e-3, h=1e-5, rho_inf=0.9)


def _deformed(system, rod, q, scale):
    """q with the rod's elastic coordinates set to a fixed pseudo-random deformation of size ``scale``."""
    sl = system.slice(rod)
    q = q.copy()
    q[sl.start + 7:sl.stop] = scale * np.random.default_rng(7).uniform(-1.0, 1.0, rod.n_e)
    return q


def test_system_elastic_stiffness_is_the_bodies_block_and_none_without_flexible_bodies():
    system, rod, _ = slider_crank.build_coupled(elements=4)
    q, v = system.initial_coordinates(), system.initial_velocities()
    q = _deformed(system, rod, q, 1e-4)
    K = system.elastic_stiffness(0.0, q, v)
    sl = system.slice(rod)
    e = slice(sl.start + 7, sl.stop)
    np.testing.assert_array_equal(K[e, e], rod.elastic_stiffness(0.0, q[sl], v[sl], None))
    K[e, e] = 0.0
    assert not np.any(K)
    rigid = System([RigidBodyEP("b", 1.0, np.eye(3))])
    assert rigid.elastic_stiffness(0.0, rigid.initial_coordinates(), np.zeros(7)) is None


def test_refreshed_tangent_at_rest_equals_finite_differences():
    system, rod, _ = slider_crank.build_coupled(elements=4)
    assert rod.stiffening == "axial-strain" and system.gravity is None
    integ = _integrator(system)
    n, m = system.n_q, system.n_c
    q0 = system.initial_coordinates()
    zero, lam = np.zeros(n), np.zeros(m)
    integ._current_tangents(0.0, q0, zero, zero, lam, True)            # kept at the undeformed state
    q1 = _deformed(system, rod, q0, 1e-4)
    q1[:3] += [0.01, -0.02, 0.0]                                       # the frame moved too: no effect
    K_ref, _ = integ._tangents(0.0, q1, zero, zero, lam)               # finite differences at q1
    K_kept = integ._KC[0]
    K_new, _ = integ._current_tangents(0.0, q1, zero, zero, lam, False)
    scale = np.abs(K_ref).max()
    err_new = np.abs(K_new - K_ref).max() / scale
    err_kept = np.abs(K_kept - K_ref).max() / scale
    print(f"relative error of K_t at rest: refreshed {err_new:.1e}, kept {err_kept:.1e}")
    assert err_new < 1e-6                                              # forward differences, step 1.5e-8
    assert err_kept > 1e-4 and err_kept > 1e3 * err_new                # the stiffening changed


def test_refreshed_tangent_in_motion_equals_finite_differences_in_the_elastic_block():
    system, rod, _ = slider_crank.build_coupled(elements=4)
    integ = _integrator(system)
    q0, v0 = system.initial_coordinates(), system.initial_velocities()
    qdd, lam = integ.qdd, integ.lam
    assert np.abs(qdd).max() > 1e3 and np.abs(lam).max() > 10.0        # a state in motion, loaded joints
    integ._current_tangents(0.0, q0, v0, qdd, lam, True)
    q1 = _deformed(system, rod, q0, 1e-4)
    K_ref, _ = integ._tangents(0.0, q1, v0, qdd, lam)
    K_kept = integ._KC[0]
    K_new, _ = integ._current_tangents(0.0, q1, v0, qdd, lam, False)
    sl = system.slice(rod)
    e = slice(sl.start + 7, sl.stop)
    scale = np.abs(K_ref[e, e]).max()
    err_new = np.abs(K_new[e, e] - K_ref[e, e]).max() / scale
    err_kept = np.abs(K_kept[e, e] - K_ref[e, e]).max() / scale
    print(f"relative error of the elastic block of K_t in motion: refreshed {err_new:.1e}, kept {err_kept:.1e}")
    assert err_new < 1e-6
    assert err_kept > 1e-4 and err_kept > 1e3 * err_new
