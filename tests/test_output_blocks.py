"""Outputs handed on in blocks (issue 22, the process outside the solve): `simulate`'s ``on_outputs(T, X[, W])``
gets the many outputs of one call of the compiled kernel (or of the exact method's blocks) at once, and
`flexmbs.analysis.OutputBlocks.on_outputs` records them without a Python call per output.  The same
outputs as the per-output hook ``on_output``, in the same order, and the same Solution."""
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.integrators import ConstrainedProblem, simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import pendulum_a01  # noqa: E402
import triple_pendulum  # noqa: E402


def pendulum():
    """pendulum_a01's ConstrainedProblem, the span (0, 0.1) and its initial state."""
    system, _ = pendulum_a01.build()
    problem = ConstrainedProblem(system)
    return problem, (0.0, 0.1), problem.state0(system.initial_coordinates(), np.zeros(system.n_q))


def powers(t, x, lam):
    """A step integrand of two columns (the integral w of the outputs): t and the first coordinate."""
    return np.column_stack([t, x[:, 0]])


@pytest.mark.parametrize("integral", [False, True])
def test_blocks_are_the_outputs_one_by_one(integral):
    """index3-alpha (compiled where the kernel is built): the rows of the blocks are the outputs
    ``on_output`` sees, and the two Solutions are the same arrays."""
    extra = {"step_integrand": powers} if integral else {}
    t_eval = np.linspace(0.0, 0.1, 41)
    one, blocks = [], []
    a = simulate(*pendulum(), method="index3-alpha", h=1e-3, t_eval=t_eval,
                 on_output=lambda t, x, *w: one.append((t, x.copy(), *w)), **extra)
    b = simulate(*pendulum(), method="index3-alpha", h=1e-3, t_eval=t_eval,
                 on_outputs=lambda T, X, *W: blocks.append((T, X, *W)), **extra)
    T = np.concatenate([blk[0] for blk in blocks])
    np.testing.assert_array_equal(T, [o[0] for o in one])
    np.testing.assert_array_equal(np.concatenate([blk[1] for blk in blocks]), [o[1] for o in one])
    if integral:
        np.testing.assert_array_equal(np.concatenate([blk[2] for blk in blocks]), [o[2] for o in one])
        np.testing.assert_array_equal(a.integrals, b.integrals)
    np.testing.assert_array_equal(T, t_eval)
    for key in ("t", "x", "lam"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key))
    if a.kernel == "compiled":
        assert len(blocks) < len(T) / 4             # the kernel's outputs come in a few blocks


def test_a_run_with_a_users_on_output_records_the_same():
    """`flexmbs.run` records blocks (`OutputBlocks.on_outputs`); with a user's ``on_output`` each output is
    handed to it one by one: the same Results either way, and the user sees every output in order."""
    seen = []
    system = triple_pendulum.build("euler-parameters")
    kw = dict(method="index3-alpha", h=1e-3, t_end=0.2, t_eval=np.linspace(0.0, 0.2, 21), store=False)
    plain = fm.run(system, **kw)
    watched = fm.run(system, on_output=lambda t, x: seen.append((t, x.copy())), **kw)
    np.testing.assert_array_equal([s[0] for s in seen], plain.t)
    np.testing.assert_array_equal([s[1][:system.n_q] for s in seen], plain.q)
    for key in ("t", "q", "q_dot", "multipliers"):
        np.testing.assert_array_equal(getattr(plain, key), getattr(watched, key))
    for key in plain.energies:
        np.testing.assert_array_equal(plain.energies[key], watched.energies[key])


FAILURES = [
    ("both hooks", dict(on_output=lambda t, x: None, on_outputs=lambda T, X: None), ValueError,
     "`on_output` and `on_outputs`: give one of them (one output a call, or blocks of outputs), got both"),
    ("on_outputs not callable", dict(on_outputs=3), TypeError, "`on_outputs` must be callable or None, got int."),
]


@pytest.mark.parametrize("kw, error, message", [r[1:] for r in FAILURES], ids=[r[0] for r in FAILURES])
def test_failures(kw, error, message):
    with pytest.raises(error) as info:
        simulate(*pendulum(), method="index3-alpha", h=1e-3, **kw)
    assert str(info.value) == message
