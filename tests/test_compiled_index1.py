"""The index-1 formulations of a System ("lagrange": augmented, "udwadia-kalaba") with M, Q, C and C_q from
the compiled kernel (`flexmbs.formulations.evaluations`, `flexmbs.compiled.CompiledSystem.terms`): the same
accelerations, multipliers and projections as the numpy path (the reference), and the same runs.
Skipped when the kernel is not installed."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import PointMass
from flexmbs.compiled import kernel_status
from flexmbs.formulations.index1 import Index1

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))

import andrews_squeezer  # noqa: E402
import slider_crank  # noqa: E402
import triple_pendulum  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from test_compiled_natural import user_loaded  # noqa: E402

pytestmark = pytest.mark.skipif(not kernel_status().installed, reason=f"compiled kernel {kernel_status()}")

SYSTEMS = {   # name: builder; the kernel takes each (spatial rigid, planar, flexible with a driver)
    "triple pendulum, Euler parameters": lambda: triple_pendulum.build("euler-parameters"),
    "Andrews' squeezer (planar)": lambda: andrews_squeezer.build()[0],
    "coupled slider-crank (flexible rod, driven crank)": lambda: slider_crank.build_coupled(elements=4)[0],
}
SOLVERS = ("augmented", "udwadia-kalaba")
STABILIZATIONS = ("none", "baumgarte", "coordinate-partitioning")


def random_state(system, seed: int):
    """A state near the initial one: q off the constraints by 1e-2, v of size 1 (random, seeded)."""
    rng = np.random.default_rng(seed)
    q = system.initial_coordinates() + 1e-2 * rng.standard_normal(system.n_q)
    return q, rng.standard_normal(system.n_q)


def pair(system, solver, stabilization="none"):
    """(compiled, numpy) Index1 forms of one system."""
    compiled = Index1(system, solver=solver, stabilization=stabilization, kernel="compiled")
    numpy = Index1(system, solver=solver, stabilization=stabilization, kernel="numpy")
    assert (compiled.kernel, numpy.kernel) == ("compiled", "numpy")
    return compiled, numpy


def assert_relative(a, b, rtol):
    assert np.abs(a - b).max() <= rtol * np.abs(b).max(), np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.parametrize("stabilization", ["none", "baumgarte"])
@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("name", SYSTEMS)
def test_the_accelerations_are_those_of_the_numpy_path(name, solver, stabilization):
    """q'' and lam at three random states agree to 1e-12 of their largest entry (measured 2e-16 to 3.4e-15 on the
    triple pendulum: the kernel sums the Euler-parameter terms in another order); with Baumgarte's terms the
    kernel's C enters gamma_s."""
    system = SYSTEMS[name]()
    compiled, numpy = pair(system, solver, stabilization)
    for seed in range(3):
        q, v = random_state(system, seed)
        (a1, l1), (a0, l0) = compiled.accelerations(0.013, q, v), numpy.accelerations(0.013, q, v)
        assert_relative(a1, a0, 1e-12)
        assert_relative(l1, l0, 1e-12)


@pytest.mark.parametrize("name", SYSTEMS)
def test_the_projection_is_that_of_the_numpy_path(name):
    """A coordinate-partitioning correction (C and C_q from the kernel, C_t from the System when a driver
    makes the rows rheonomic) moves a perturbed state to the same corrected state, to 1e-12."""
    system = SYSTEMS[name]()
    compiled, numpy = pair(system, "udwadia-kalaba", "coordinate-partitioning")
    q0, v0 = system.initial_state(0.0)
    rng = np.random.default_rng(4)
    x = np.concatenate([q0 + 1e-6 * rng.standard_normal(system.n_q), v0 + 1e-3 * rng.standard_normal(system.n_q)])
    x1, x0 = compiled.correct_state(0.02, x), numpy.correct_state(0.02, x)
    assert not np.array_equal(x0, x)                      # it corrected something
    assert_relative(x1, x0, 1e-12)


RUNS = {  # (system, formulation, method, options): fixed-step AB4 with the projection, adaptive RK45
    "triple pendulum, UK + AB4 + partitioning": ("triple pendulum, Euler parameters", "udwadia-kalaba", "AB4",
                                                 dict(h=1e-3, t_end=0.2), "coordinate-partitioning"),
    "triple pendulum, augmented + RK45": ("triple pendulum, Euler parameters", "lagrange", "RK45",
                                          dict(rtol=1e-8, t_end=0.2), "none"),
    "Andrews' squeezer, augmented + RK45": ("Andrews' squeezer (planar)", "lagrange", "RK45",
                                            dict(rtol=1e-6, t_end=1e-3), "baumgarte"),
}


@pytest.mark.parametrize("run", RUNS)
def test_a_run_is_that_of_the_numpy_path(run):
    """The same run on both paths: the same steps and evaluations, states equal to 1e-10 of max |q| and
    max |v| (round-off of the evaluations carried through the steps); metadata say which path ran."""
    name, formulation, method, options, stabilization = RUNS[run]
    system = SYSTEMS[name]()
    out = {}
    for kernel in ("compiled", "numpy"):
        out[kernel] = fm.run(system, formulation=formulation, method=method, dt_out=options["t_end"] / 4, store=False,
                             formulation_options=dict(stabilization=stabilization, kernel=kernel), **options)
        assert out[kernel].status == "finished", out[kernel].message
    c, n = out["compiled"], out["numpy"]
    assert (c.metadata["kernel"], n.metadata["kernel"], n.metadata["kernel_reason"]) == \
        ("compiled", "numpy", "kernel='numpy'")
    assert "kernel_reason" not in c.metadata
    assert (c.stats["n_steps"], c.stats["n_rhs"]) == (n.stats["n_steps"], n.stats["n_rhs"])
    assert_relative(c.q, n.q, 1e-10)
    assert_relative(c.v, n.v, 1e-10)
    assert_relative(c.multipliers, n.multipliers, 1e-9)


def test_a_refused_system_runs_on_the_numpy_path_and_says_why():
    """A pendulum whose load is a user's own callable: "auto" keeps the numpy path and names the refused
    load (the kernel cannot call it); the run's metadata say so.  (Natural coordinates themselves run compiled:
    tests/test_compiled_natural.py.)"""
    system = user_loaded()
    form = Index1(system, solver="udwadia-kalaba")
    assert form.kernel == "numpy" and "user callable" in form.kernel_reason
    res = fm.run(system, formulation="udwadia-kalaba", method="AB4", h=1e-3, t_end=2e-3, dt_out=1e-3, store=False)
    assert res.metadata["kernel"] == "numpy" and "user callable" in res.metadata["kernel_reason"]


def test_auto_takes_the_kernel_and_the_augmented_block_solve_keeps_numpy():
    """"auto" (the default) takes the kernel for a covered System; the augmented formulation of a System
    without constraints solves with the bodies' mass blocks (`augmented.uses_block_mass`), which the kernel
    does not give: it keeps the numpy path and says why, where Udwadia-Kalaba takes the kernel."""
    assert Index1(SYSTEMS["triple pendulum, Euler parameters"]()).kernel == "compiled"
    free = fm.System([PointMass("p", 2.0, position=(0.0, 0.0, 1.0))], [], gravity=(0.0, 0.0, -9.81))
    augmented = Index1(free, solver="augmented")
    assert augmented.kernel == "numpy" and "mass blocks" in augmented.kernel_reason
    uk = Index1(free, solver="udwadia-kalaba")
    assert uk.kernel == "compiled"
    q, v = free.initial_coordinates(), np.zeros(3)
    np.testing.assert_allclose(uk.accelerations(0.0, q, v)[0], [0.0, 0.0, -9.81], rtol=1e-14, atol=1e-14)   # free fall


def test_an_explicit_index1_run_does_not_import_scipy_sparse():
    """`Index1` builds its sparse M_full only when an implicit method asks (AB4 never does) and gives
    generalized-alpha a dense M (its K and C are dense differences): the triple pendulum's AB4 run loads
    no scipy.sparse (0.18 to 0.21 s of CPU, docs/benchmarks.md sec. 20.3).  In a new process."""
    import subprocess
    code = ("import sys; sys.path.insert(0, 'cases'); import flexmbs as fm, triple_pendulum as tp; "
            "fm.run(tp.build('euler-parameters'), formulation='udwadia-kalaba', method='AB4', h=1e-3, t_end=3e-3, "
            "dt_out=1e-3, store=False, formulation_options=dict(stabilization='coordinate-partitioning')); "
            "print('scipy.sparse' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False"
