"""The whole process outside the solve (issue 22, start-up): what a run computes and writes after
its integration, vectorised over the outputs, must equal what the per-output code gave.

Each test compares the batched result with the per-output one it replaced, on a short run.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.analysis import output_times
from flexmbs.compiled import Unsupported, kernel_status
from flexmbs.formulations.stabilization import violations

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))

import triple_pendulum  # noqa: E402

KERNEL = kernel_status().installed


def triple_run(coordinates: str, method: str):
    """The triple pendulum over 0.05 s, 11 outputs (index3-alpha, or AB4 on the index-1 equations)."""
    system = triple_pendulum.build(coordinates)
    options = dict(method=method, h=1e-3) if method == "index3-alpha" else dict(method=method, h=1e-3,
                                                                                 formulation="lagrange")
    res = fm.run(system, t_end=0.05, t_eval=output_times(0.05, 0.005), **options)
    assert res.status == "finished", res.message
    return system, res


@pytest.mark.skipif(not KERNEL, reason="the compiled kernel is not installed")
@pytest.mark.parametrize("coordinates, method", [("euler-parameters", "index3-alpha"), ("natural", "AB4")])
def test_triple_pendulum_violations_from_one_kernel_call_equal_the_per_output_ones(coordinates, method):
    """||C|| and ||C_q q' + C_t|| of all outputs from `CompiledSystem.terms_history` equal
    `stabilization.violations` output by output (the kernel and the numpy joints agree to round-off)."""
    system, res = triple_run(coordinates, method)
    batched = triple_pendulum.constraint_violations(system, res.t, res.q, res.v)
    looped = np.array([violations(system, t, q, v) for t, q, v in zip(res.t, res.q, res.v)])
    assert batched.shape == (len(res.t), 2)
    np.testing.assert_allclose(batched, looped, rtol=1e-6, atol=1e-13)


def test_triple_pendulum_violations_fall_back_to_one_evaluation_per_output(monkeypatch):
    """A System the kernel does not evaluate (here: `System.compiled` refusing) still gets its
    violations, from the numpy joints output by output."""
    system, res = triple_run("euler-parameters", "index3-alpha")

    def refuse(self):
        raise Unsupported("not packable (test)")
    monkeypatch.setattr(type(system), "compiled", refuse)
    batched = triple_pendulum.constraint_violations(system, res.t, res.q, res.v)
    looped = np.array([violations(system, t, q, v) for t, q, v in zip(res.t, res.q, res.v)])
    np.testing.assert_array_equal(batched, looped)
