"""The implicit midpoint rule on sparse Hamilton models: the n x n step of
`flexmbs.integrators.midpoint` (no 2n x 2n matrix) against the 2n x 2n system, against
Lagrange's run of the same model, and its energy conservation."""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.formulations import FORMULATIONS
from flexmbs.integrators.midpoint import ImplicitMidpoint


def _box_model(motion, n=3, **kw):
    mesh = fm.generate.box(n, 1, 1, 1.0, 0.2, 0.2, cell="tetra")
    el = fm.Tet4(fm.Material(2.1e11, 7800.0, 0.3))
    return fm.Model(mesh, el, fixed=[("xmin", "all")], motion=motion, dense_below=0, **kw)


AXIS = np.array([0.3, 0.5, 1.0]) / np.linalg.norm([0.3, 0.5, 1.0])
FRAMES = {"spin-up": lambda: fm.motion.SpinUp(20.0, 0.001, axis=AXIS),
          "steady": lambda: fm.motion.ConstantRotation(30.0)}


@pytest.mark.parametrize("frame", list(FRAMES))
@pytest.mark.parametrize("solver,n_lu", [("direct", None), ("reuse", 1), ("iterative", 0)])
def test_sparse_hamilton_step_equals_the_full_system(frame, solver, n_lu):
    """The n x n step S_H dq = F1 + h F2 / 2 (every solver) equals the 2n x 2n midpoint system
    solved by LU (``reduced=False``) to the Krylov tolerance, on a frame with omega and eps
    about a skew axis (step matrix new at every step) and on a steady one (formed once), with
    damping and geometric stiffening."""
    md = _box_model(FRAMES[frame](), damping=(2.0, 1e-6))
    assert md.stiffening
    kw = dict(formulation="hamilton", method="midpoint", h=1e-5, t_end=2e-4, dt_out=5e-5,
              compute_energies=False)
    ref = fm.run(md, linear_solver="direct", reduced=False, **kw)
    res = fm.run(md, linear_solver=solver, **kw)
    n_matrix = 20 if frame == "spin-up" else 1
    if n_lu is None:
        n_lu = n_matrix
    assert (res.stats["n_lu"], res.stats["n_jac"], res.stats["n_rhs"]) == (n_lu, n_matrix, 20)
    for name in ("displacement", "velocity"):
        a, r = getattr(res, name), getattr(ref, name)
        assert np.abs(r).max() > 0
        assert np.abs(a - r).max() <= 1e-9 * np.abs(r).max()


def test_hamilton_and_lagrange_midpoint_runs_agree():
    """p = [m] delta' + b(t) + G(omega(t)) delta is linear in the state with constant
    coefficients on a steady frame: the midpoint rule commutes with it, so the Hamilton and
    Lagrange runs are the same to round-off.  On a spin-up b and G change in time, the midpoint
    momentum (p0 + p1)/2 differs from p(t_mid, (x0 + x1)/2) by O(h^2) per step (b'' and
    (G delta)'' / 8 h^2), so the runs differ by O(h^2): the difference falls 4x when h halves."""
    kw = dict(method="midpoint", t_end=4e-4, dt_out=1e-4, compute_energies=False, linear_solver="direct")
    md = _box_model(FRAMES["steady"](), damping=(2.0, 1e-6))
    a = fm.run(md, formulation="hamilton", h=1e-5, **kw)
    b = fm.run(md, formulation="lagrange", h=1e-5, **kw)
    for name in ("displacement", "velocity"):
        x, r = getattr(a, name), getattr(b, name)
        assert np.abs(r).max() > 0
        assert np.abs(x - r).max() <= 1e-11 * np.abs(r).max()
    md = _box_model(FRAMES["spin-up"](), damping=(2.0, 1e-6))
    diff = []
    for h in (2e-5, 1e-5):
        a = fm.run(md, formulation="hamilton", h=h, **kw)
        b = fm.run(md, formulation="lagrange", h=h, **kw)
        diff.append(np.abs(a.displacement - b.displacement).max() / np.abs(b.displacement).max())
    assert 1e-6 < diff[1] < 1e-2                           # a real O(h^2) difference, not round-off
    assert 3.6 < diff[0] / diff[1] < 4.4


def test_sparse_hamilton_steps_conserve_the_energy():
    """On a steady frame without damping the Hamiltonian H = 1/2 v^T M v + 1/2 delta^T K delta
    - f0 . delta (K = [k] + K_geo + [k(omega)], f0 the centrifugal load, v = delta'(delta, p))
    is quadratic plus linear in (delta, p), so the midpoint rule conserves it exactly; with
    Jacobi-BiCGSTAB to 1e-13 it holds to 1e-9 of the energy that changes form, over 200 steps
    of a box released from a bending shape."""
    md = _box_model(fm.motion.ConstantRotation(30.0), n=4)
    form = FORMULATIONS["hamilton"](md)
    n = md.n_dofs
    q0 = md.expand(np.zeros(n)).reshape(-1, 3)
    q0[:, 2] = 1e-4 * md.mesh.points[:, 0] ** 2
    q0 = q0.ravel()[md.free]
    integ = ImplicitMidpoint(form, 0.0, form.state0(q0, np.zeros(n)), 2e-3, h=1e-5,
                             linear_solver="iterative")
    assert integ._second is not None                       # the n x n step, no 2n x 2n matrix
    K = md.frame_stiffness(0.0, eps=False)
    f0 = form.forcing_full(0.0, np.zeros(2 * n))[n:]

    def parts(x):
        v = form.velocity(0.0, x[:n], x[n:])
        return 0.5 * v @ (md.M @ v), 0.5 * x[:n] @ (K @ x[:n]) - f0 @ x[:n]

    E0 = sum(parts(integ.x))
    kinetic = 0.0
    while integ.status == "running":
        integ.step()
        kinetic = max(kinetic, parts(integ.x)[0])
    assert integ.n_lu == 0 and integ.n_lin_iter > 0
    assert kinetic > 0
    assert abs(sum(parts(integ.x)) - E0) <= 1e-9 * kinetic
