"""Bad input to the multipliers of all outputs at once of maggi, kane, volterra and hamilton (`multiplier_history`,
`flexmbs.system_run.multipliers_at`) and to benchmarks/bench_recovered_multipliers.py: each error names the
argument or the output's time, and what to change."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs.bodies.tree import TreeBody, TreeJoint, TreePart
from flexmbs.constraints import Distance
from flexmbs.formulations.registry import system_formulation
from flexmbs.system import System
from flexmbs.system_run import multipliers_at

ROOT = Path(__file__).resolve().parents[1]


def particle_on_rod() -> System:
    """A particle at q0 = (0.6, 0, -0.8) on a massless rod of length 1 to the origin (n_q = 3, n_c = 1)."""
    joints = [TreeJoint("X", "prismatic", (1, 0, 0), "X"), TreeJoint("Y", "prismatic", (0, 1, 0), "Y", parent="X"),
              TreeJoint("Z", "prismatic", (0, 0, 1), "Z", parent="Y")]
    body = TreeBody("particle", ("X", "Y", "Z"), joints, [TreePart("m", "Z", 1.0)], q0=(0.6, 0.0, -0.8),
                    v0=(0.8, 0.3, 0.6))
    return System([body], [Distance(None, body, at_i=(0, 0, 0), s_j=(0, 0, 0), length=1.0, name="rod")],
                  gravity=(0.0, 0.0, -9.81))


def history(name: str, t, x):
    return system_formulation(name, particle_on_rod()).multiplier_history(t, x)


def perpendicular(name: str):
    """maggi's and kane's Y = the rod's null space at q0 (the plane normal to q0): at q = (0.8, 0, 0.6), normal
    to q0, the rod's row a = q lies in that plane and S = [Y; a] is singular (the second output)."""
    q = np.array([[0.6, 0.0, -0.8], [0.8, 0.0, 0.6]])
    history(name, [0.0, 0.5], np.concatenate([q, np.zeros((2, 3 if name == "maggi" else 2))], axis=1))


def bench(argv):
    """benchmarks/bench_recovered_multipliers.py's main with ``argv``."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_recovered_multipliers
    bench_recovered_multipliers.main(argv)


FAILURES = [   # (what, call, error, the message it prints)
    ("multipliers_at with a formulation without multiplier_history",
     lambda: multipliers_at(system_formulation("index3", particle_on_rod()), [0.0], np.zeros((1, 6))),
     TypeError, r"multipliers_at: formulation 'constrained-index3' \(ConstrainedProblem\) has no "
                r"multiplier_history\(t, x\), the multipliers of all the outputs at once"),
    ("multipliers_at called as before issue 22's review, with the System first",
     lambda: multipliers_at(particle_on_rod(), system_formulation("maggi", particle_on_rod()), [0.0], np.zeros((1, 6))),
     TypeError, r"multipliers_at\(\) takes 3 positional arguments but 4 were given"),
    ("maggi: x of another width", lambda: history("maggi", [0.0, 1.0], np.zeros((2, 5))), ValueError,
     r"Maggi\.multiplier_history: `x` must be \(2, 6\), a state of n_state = 6 numbers at each of the 2 times `t`, "
     r"got shape \(2, 5\)"),
    ("kane: t not numbers", lambda: history("kane", "abc", np.zeros((1, 5))), ValueError,
     r"Kane\.multiplier_history: `t` must be the times, a vector of numbers, got 'abc'"),
    ("volterra: x not numbers", lambda: history("volterra", [0.0], [["a"] * 5]), ValueError,
     r"Volterra\.multiplier_history: `x` must be \(1, 5\), .*, got \[\['a', 'a', 'a', 'a', 'a'\]\]"),
    ("hamilton: a NaN in the second state",
     lambda: history("hamilton", [0.0, 0.25], [[0.6, 0, -0.8, 0, 0, 0], [0.6, 0, -0.8, np.nan, 0, 0]]), ValueError,
     r"HamiltonSystem\.multiplier_history: `x` must be finite, got NaN or inf in the state at t = 0\.25 \(row 1\)"),
    ("maggi: S = [Y; a] singular at the second output", lambda: perpendicular("maggi"), np.linalg.LinAlgError,
     r"Maggi\.multiplier_history: a singular matrix at the output t = 0\.5 \(Singular matrix\): the quasi-velocities' "
     r"Y no longer completes the constraint rows there \(give another `Y`\)"),
    ("kane: S = [Y; a] singular at the second output", lambda: perpendicular("kane"), np.linalg.LinAlgError,
     r"Kane\.multiplier_history: a singular matrix at the output t = 0\.5 .*formulation 'lagrange' takes the same"),
]


@pytest.mark.parametrize("call, error, message", [row[1:] for row in FAILURES], ids=[row[0] for row in FAILURES])
def test_bad_input_is_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_bench_refuses_no_repeats_with_its_message(capsys):
    """`--repeats 0`: argparse's error (exit 2) says what was expected and what was given."""
    with pytest.raises(SystemExit):
        bench(["--repeats", "0"])
    assert "--repeats must be at least 1, got 0" in capsys.readouterr().err
