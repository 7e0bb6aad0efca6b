"""The per-state reference of the force elements' powers and potentials, shared by
tests/test_power_history.py and tests/test_power_rows.py: each element's one-state ``powers`` and
``potential`` called one row at a time, what a System summed before the histories."""
from __future__ import annotations

import numpy as np


def per_state_values(system, t, q, v) -> dict:
    """{element name: {"damping", "loads", "potential": (n,)}} from each element's one-state ``powers`` and
    ``potential``, one row at a time (what the System summed before the batching)."""
    out = {}
    for f in system.force_elements:
        sls = [None if b is None else system.slice(b) for b in f.bodies]
        vals = {"damping": [], "loads": [], "potential": []}
        for tk, qk, vk in zip(t, q, v):
            qs = [np.zeros(0) if sl is None else qk[sl] for sl in sls]
            vs = [np.zeros(0) if sl is None else vk[sl] for sl in sls]
            P = f.powers(float(tk), qs, vs)
            vals["damping"].append(float(P["damping"]))
            vals["loads"].append(float(P["loads"]))
            vals["potential"].append(float(f.potential(qs)))
        out[f.name] = vals
    return out


def close(new, old, what, rtol=1e-12):
    """new == old to ``rtol`` of the largest value (round-off of a different order of operations)."""
    old = np.asarray(old, dtype=float)
    scale = max(1.0, float(np.max(np.abs(old)))) if old.size else 1.0
    np.testing.assert_allclose(new, old, rtol=rtol, atol=rtol * scale, err_msg=what)


def element_sides(system, f, q, v) -> tuple[list, list]:
    """([Q_b], [V_b]) of force element ``f``'s bodies at the rows of q, v (a ground side: no columns)."""
    sls = [None if b is None else system.slice(b) for b in f.bodies]
    return ([np.zeros((len(q), 0)) if sl is None else q[:, sl] for sl in sls],
            [np.zeros((len(v), 0)) if sl is None else v[:, sl] for sl in sls])


def assert_element_as_recorded(system, f, t, q, v, old, label) -> None:
    """Force element ``f``'s power and potential histories over all rows at once, and its one-state
    values row by row, equal the recorded per-state values ``old`` ({"damping", "loads", "potential"})."""
    from flexmbs.forces import element_potential_history, element_power_history
    Qs, Vs = element_sides(system, f, q, v)
    P, U = element_power_history(f, t, Qs, Vs), element_potential_history(f, Qs)
    for key in ("damping", "loads"):
        close(P[key], old[key], f"{label} {key}")
    close(U, old["potential"], f"{label} potential")
    now = per_state_values(system, t, q, v)[f.name]
    for key in ("damping", "loads", "potential"):
        close(now[key], old[key], f"{label} {key}, one row at a time")
