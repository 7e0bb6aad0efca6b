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
