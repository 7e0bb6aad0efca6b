"""The index-1 formulations' per-step arithmetic after its speed-up (issue 22, items 1 and 5), and their
multipliers at the outputs in one pass (item 1):

- the solves (`augmented.solve_saddle_point`, `udwadia_kalaba.solve_udwadia_kalaba`) are the equations
  they stand for, checked against numpy's dense solve and pseudo-inverse of the same equations;
- a run is the run of the code before the change (tests/data/index1_before_69b0fdc.json, recorded at
  69b0fdc with the same command);
- `Index1.multiplier_history` (one stacked solve over the outputs) gives the lam of `Index1.multipliers`
  state by state, and a run's ``multipliers`` are those.
Skipped without the compiled kernel (the recorded run took its evaluations from it)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.compiled import kernel_status
from flexmbs.formulations import augmented, udwadia_kalaba
from flexmbs.formulations.gibbs_appell_system import GibbsAppellSystem
from flexmbs.formulations.index1 import Index1

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))

import slider_crank  # noqa: E402
import triple_pendulum  # noqa: E402

pytestmark = pytest.mark.skipif(not kernel_status().installed, reason=f"compiled kernel {kernel_status()}")

SYSTEMS = {
    "triple pendulum, Euler parameters": lambda: triple_pendulum.build("euler-parameters"),
    "coupled slider-crank (driven crank)": lambda: slider_crank.build_coupled(elements=4)[0],
}


def relative(a, b) -> float:
    return float(np.abs(np.asarray(a) - b).max() / np.abs(b).max())


def states(system, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n times in [0, 0.05] and states (n, 2 n_q) near the initial one (q off the constraints by 1e-3)."""
    rng = np.random.default_rng(seed)
    q0, v0 = system.initial_state(0.0)
    x0 = np.concatenate([q0, v0])
    return np.linspace(0.0, 0.05, n), x0 + 1e-3 * rng.standard_normal((n, len(x0)))


def udwadia_kalaba_reference(M, Q, Cq, gamma):
    """q'', lam of the Udwadia-Kalaba equations (module docstring of `udwadia_kalaba`) by numpy's solve and
    pseudo-inverse: M_s = M + C_q^T C_q, a = M_s^-1 (Q + C_q^T gamma), lam = -K^+ (gamma - C_q a)."""
    Ms = M + Cq.T @ Cq
    a = np.linalg.solve(Ms, Q + Cq.T @ gamma)
    Y = np.linalg.solve(Ms, Cq.T)
    lam = -np.linalg.pinv(Cq @ Y, rcond=1e-10, hermitian=True) @ (gamma - Cq @ a)
    return a - Y @ lam, lam


@pytest.mark.parametrize("name", SYSTEMS)
def test_the_solves_are_their_equations(name):
    """At three states of each system (the kernel's M, Q, C_q, gamma; independent constraints): the augmented
    solve and the Udwadia-Kalaba one are numpy's dense solve of [[M, C_q^T], [C_q, 0]] [q''; lam] = [Q; gamma],
    to 1e-12 of the largest entry (measured up to 8e-15)."""
    system = SYSTEMS[name]()
    form = Index1(system, "augmented")
    t, x = states(system, 3)
    for tk, xk in zip(t, x):
        M, Q, Cq, gamma = form.acceleration_terms(tk, xk[:system.n_q], xk[system.n_q:])
        n, m = M.shape[0], Cq.shape[0]
        A = np.block([[M, Cq.T], [Cq, np.zeros((m, m))]])
        reference = np.linalg.solve(A, np.concatenate([Q, gamma]))
        qdd, lam = augmented.solve_saddle_point(M, Q, Cq, gamma)
        assert relative(qdd, reference[:n]) < 1e-12 and relative(lam, reference[n:]) < 1e-12
        qdd, lam = udwadia_kalaba.solve_udwadia_kalaba(M, Q, Cq, gamma)
        assert relative(qdd, reference[:n]) < 1e-12 and relative(lam, reference[n:]) < 1e-12


def test_udwadia_kalaba_gives_the_least_norm_multipliers_of_redundant_constraints():
    """C_q with a repeated row (a redundant constraint): K is singular, lam is the least-norm one, K^+ e of the
    eigenvalues kept, equal to numpy's pinv to 1e-12; the repeated rows share their force equally."""
    rng = np.random.default_rng(3)
    B = rng.standard_normal((6, 6))
    M = B @ B.T + 6 * np.eye(6)
    Cq = rng.standard_normal((3, 6))
    Cq = np.vstack([Cq, Cq[1]])
    gamma = np.concatenate([rng.standard_normal(3), [0.0]])
    gamma[3] = gamma[1]                                       # consistent
    Q = rng.standard_normal(6)
    qdd_ref, lam_ref = udwadia_kalaba_reference(M, Q, Cq, gamma)
    qdd, lam = udwadia_kalaba.solve_udwadia_kalaba(M, Q, Cq, gamma)
    assert relative(qdd, qdd_ref) < 1e-12 and relative(lam, lam_ref) < 1e-12
    assert abs(lam[1] - lam[3]) < 1e-12 * np.abs(lam).max()
    assert relative(Cq @ qdd, gamma) < 1e-12


BEFORE = json.loads((ROOT / "tests" / "data" / "index1_before_69b0fdc.json").read_text())


@pytest.mark.parametrize("formulation", ["lagrange", "udwadia-kalaba"])
def test_a_run_is_the_run_before_the_speed_up(formulation):
    """The triple pendulum (Euler parameters, AB4 h = 1e-3, coordinate partitioning, kernel evaluations) over
    0.3 s: q and v at 0.3 s and lam at the four outputs equal those of the code before this change (69b0fdc, the
    same command) to 1e-12 of their largest entry (measured: identical for lagrange, 6e-16 for udwadia-kalaba,
    whose pseudo-inverse is now applied without being formed).  Over 0.3 s no new partition is chosen: at a
    near-tie of two pivots (t = 0.938 s here) round-off may choose another one, and the runs then differ by the
    projection's O(1e-10) (docs/design.md, "The index-1 evaluations")."""
    before = BEFORE[formulation]
    res = fm.run(triple_pendulum.build("euler-parameters"), formulation=formulation, method="AB4", h=1e-3, t_end=0.3,
                 dt_out=0.1, store=False, formulation_options=dict(stabilization="coordinate-partitioning",
                                                                   kernel="compiled"))
    assert res.status == "finished" and np.allclose(res.t, before["t"], rtol=0, atol=1e-15)
    assert relative(res.q[-1], before["q"]) < 1e-12
    assert relative(res.v[-1], before["v"]) < 1e-12
    assert relative(res.multipliers, before["multipliers"]) < 1e-12


FORMS = {
    "lagrange": lambda s: Index1(s, "augmented"),
    "udwadia-kalaba": lambda s: Index1(s, "udwadia-kalaba"),
    "lagrange, numpy path": lambda s: Index1(s, "augmented", kernel="numpy"),
    "gibbs-appell": GibbsAppellSystem,
}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", SYSTEMS)
def test_the_multipliers_of_all_outputs_at_once_are_those_state_by_state(name, form):
    """`multiplier_history` at 150 states (stacked solves of `index1.HISTORY_CHUNK` = 64 states) against
    `multipliers` at each: to 1e-10 of the largest (measured 3e-16 for the saddle point, up to 1.2e-14 for
    Udwadia-Kalaba)."""
    system = SYSTEMS[name]()
    f = FORMS[form](system)
    t, x = states(system, 150, seed=1)
    lam = f.multiplier_history(t, x)
    assert lam.shape == (150, system.n_c)
    assert relative(lam, np.array([f.multipliers(tk, xk) for tk, xk in zip(t, x)])) < 1e-10


def driven_crank_and_rod():
    """A crank (rigid, Euler parameters) on a revolute joint, driven at 10 rad/s (`AngleDriver`), and a rod hanging
    from its tip on a spherical joint, under gravity: 14 coordinates, 11 constraint rows, one of them rheonomic."""
    from flexmbs.bodies import RigidBodyEP
    from flexmbs.constraints import AngleDriver, Revolute, Spherical
    from flexmbs.mechanisms.linkage import constant_speed
    z, L, w, J = np.array([0.0, 0.0, 1.0]), 0.2, 10.0, np.diag([1e-4, 1e-3, 1e-3])
    crank = RigidBodyEP("crank", 1.0, J, centroid=[L / 2, 0, 0], position=[0, 0, 0], angular_velocity=w * z)
    rod = RigidBodyEP("rod", 0.5, J, centroid=[0, -L / 2, 0], position=[L, 0, 0], velocity=[0, w * L, 0])
    return fm.System([crank, rod], [Revolute(None, crank, at=[0, 0, 0], axis=z, name="pivot"),
                                    AngleDriver(None, crank, z, constant_speed(w), name="drive"),
                                    Spherical(crank, rod, at=[L, 0, 0], name="pin")], gravity=[0, -9.81, 0])


@pytest.mark.parametrize("formulation, method, options", [("lagrange", "RK45", dict(rtol=1e-6)),
                                                          ("udwadia-kalaba", "AB4", dict(h=1e-3))])
def test_a_runs_multipliers_are_those_of_its_outputs(formulation, method, options):
    """A driven crank and rod over 0.2 s (the driver makes the works' integrand recover lam at the Gauss points
    too): the run's ``multipliers`` are lam of each output's state by `Index1.multipliers`, to 1e-10, and the
    drivers' work is finite (the stacked multipliers reach the integrand)."""
    system = driven_crank_and_rod()
    res = fm.run(system, formulation=formulation, method=method, t_end=0.2, dt_out=0.05, store=False, **options)
    assert res.status == "finished", res.message
    form = Index1(system, "augmented" if formulation == "lagrange" else formulation)
    x = np.concatenate([res.q, res.v], axis=1)
    assert relative(res.multipliers, np.array([form.multipliers(tk, xk) for tk, xk in zip(res.t, x)])) < 1e-10
    assert np.all(np.isfinite(res.energies["W_drivers"])) and res.energies["W_drivers"][-1] != 0.0


def test_the_index1_runs_lapack_is_scipys_without_importing_scipy(tmp_path):
    """The triple pendulum's command (Udwadia-Kalaba, AB4, coordinate partitioning: Cholesky, eigh and LU by
    `flexmbs.lapack`) imports no scipy package: its LAPACK wrappers are loaded alone
    (`flexmbs.lapack.flapack_module`, 0.007 s of CPU against 0.31 s for ``scipy.linalg``), and they are the
    routines ``scipy.linalg.get_lapack_funcs`` gives (the same objects' code: equal factors)."""
    import os
    import subprocess
    code = ("import sys\nfrom flexmbs.cli import main\n"
            f"rc = main({['run', 'triple_pendulum', '-q', '--cases', str(ROOT / 'cases'), '--out', str(tmp_path), '--set', 't_end=0.01', '--set', 'coordinates=euler-parameters', '--no-plots', '--no-paraview']!r})\n"
            "assert rc == 0, rc\nprint('SCIPY', sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))\n"
            "from flexmbs.lapack import flapack_module, lapack\nimport numpy as np\n"
            "A = np.random.default_rng(0).standard_normal((6, 6))\ngetrf, = lapack(('getrf',), A)\n"
            "assert flapack_module() is not None\n"
            "from scipy.linalg import get_lapack_funcs\n"
            "assert np.array_equal(getrf(A)[0], get_lapack_funcs(('getrf',), (A,))[0](A)[0])\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SCIPY []" in proc.stdout, proc.stdout


def pendulum_pair(loads=(), spring=False, damping=0.0):
    """Two rigid bodies (Euler parameters) on spherical joints under gravity, a load on the second or a
    spring (with a damper when ``damping`` > 0) between them when asked."""
    from flexmbs.bodies import RigidBodyEP
    from flexmbs.constraints import Spherical
    from flexmbs.forces import SpringDamper
    J = np.diag([1e-4, 1e-3, 1e-3])
    a = RigidBodyEP("a", 1.0, J, centroid=[0.1, 0, 0])
    b = RigidBodyEP("b", 1.0, J, position=[0.2, 0, 0], centroid=[0.1, 0, 0], loads=loads)
    forces = [SpringDamper(a, [0.2, 0, 0], b, [0.2, 0, 0], 100.0, damping=damping, name="spring")] if spring else []
    return fm.System([a, b], [Spherical(None, a, at=[0, 0, 0], name="O"), Spherical(a, b, at=[0.2, 0, 0], name="P")],
                     gravity=[0, -9.81, 0], forces=forces)


WORKS = {   # system: whether some power of System.power_history may be nonzero
    "two rigid bodies under gravity": (lambda: pendulum_pair(), True),
    "a load on a body": (lambda: pendulum_pair(loads=[lambda body, t, q, v: np.r_[0.0, 1.0, 0.0, np.zeros(4)]]),
                         False),
    "a spring between the bodies (its work is in U)": (lambda: pendulum_pair(spring=True), True),
    "a spring-damper between the bodies": (lambda: pendulum_pair(spring=True, damping=0.5), False),
    "a driver (rheonomic)": (driven_crank_and_rod, False),
    "a flexible body (own powers)": (lambda: slider_crank.build_coupled(elements=4)[0], False),
}


@pytest.mark.parametrize("name", WORKS)
def test_works_vanish_only_without_a_power_source(name):
    """`System.works_vanish` is True for a System whose `power_history` has no source, False as soon as
    one is there (loads, dampers, drivers, a body kind with its own powers); a spring alone is none."""
    build, vanish = WORKS[name]
    assert build().works_vanish() is vanish


def test_a_run_without_power_sources_has_zero_works_without_a_quadrature(monkeypatch):
    """The triple pendulum (gravity only) on AB4: the works are zero at every output, as the quadrature of its
    zero powers gave (exact zeros at 69b0fdc), and no quadrature ran (`gauss_powers` is not asked for)."""
    import flexmbs.system_run as system_run

    def no_quadrature(system, form):
        raise AssertionError("gauss_powers asked for a System without power sources")
    monkeypatch.setattr(system_run, "gauss_powers", no_quadrature)
    res = fm.run(triple_pendulum.build("euler-parameters"), formulation="udwadia-kalaba", method="AB4", h=1e-3,
                 t_end=0.05, dt_out=0.01, store=False, formulation_options=dict(stabilization="coordinate-partitioning"))
    assert res.status == "finished"
    for key in ("W_loads", "W_drivers", "W_damping", "W_stiffening"):
        assert res.energies[key].shape == res.t.shape and not np.any(res.energies[key]), key
