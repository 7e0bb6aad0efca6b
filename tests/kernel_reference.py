"""What the compiled kernel's tests compare against: the numpy System's terms and the numpy path's runs.

Not a test file (no ``test_`` prefix): the tests/test_compiled*.py files import it (pytest's default
"prepend" import mode puts tests/ on sys.path)."""
from __future__ import annotations

import numpy as np


def numpy_system_terms(system, t, q, v) -> dict:
    """The numpy System's M, Q, C, C_q, dQ_v/dv (D) and K_el (K) at (t, q, v), keyed as
    ``CompiledSystem.evaluate`` returns them; K is zeros where the System has no elastic stiffness
    (no force elements), as the kernel gives it."""
    K = system.elastic_stiffness(t, q, v)
    M = system.mass_matrix(q)
    return {"M": M, "Q": system.forces(t, q, v), "C": system.residual(t, q), "Cq": system.jacobian(t, q),
            "D": system.quadratic_velocity_jacobian(q, v), "K": np.zeros_like(M) if K is None else K}


def close(got, want, rel=1e-12) -> bool:
    """max|got - want| <= rel * max(max|want|, 1): equal to ``rel`` of the reference's size (of 1 if smaller)."""
    return np.abs(got - want).max() <= rel * max(np.abs(want).max(), 1.0)


def assert_terms_close(got: dict, ref: dict, rel) -> None:
    """Every term of ``ref`` (numpy_system_terms) equal in ``got`` (CompiledSystem.evaluate) to ``rel`` of its size."""
    for key, value in ref.items():
        assert close(got[key], value, rel), (key, np.abs(got[key] - value).max())


def assert_same_steps(a, b, n_steps: int) -> None:
    """The numpy run ``a`` and the compiled run ``b`` took the same ``n_steps`` steps: q to 1e-12 m, v and the
    multipliers to 1e-9 of their size, and the system moved (q changed by more than 1e-3)."""
    assert a.success and b.success, (a.message, b.message)
    assert a.metadata["kernel"] == "numpy" and b.metadata["kernel"] == "compiled"
    assert a.stats["n_steps"] == b.stats["n_steps"] == n_steps
    assert np.abs(a.q - b.q).max() <= 1e-12
    assert np.abs(a.v - b.v).max() <= 1e-9 * np.abs(a.v).max()
    assert np.abs(a.multipliers - b.multipliers).max() <= 1e-9 * np.abs(a.multipliers).max()
    assert np.abs(a.q[-1] - a.q[0]).max() > 1e-3                      # it moved
