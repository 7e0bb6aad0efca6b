"""The contact forces of a System run at its outputs, for `Results.contacts`, results.h5 and ParaView.

For each `Contact` of the System (name NAME) and each output, `Contact.record` keeps the ``slots``
active contacts with the largest normal force (NaN, bodies -2, where fewer are active):

.. code:: text

    contacts/NAME/point           (n_t, slots, 3)   midway between the two contact points [m]
    contacts/NAME/normal_force    (n_t, slots, 3)   f_n n on body b [N]
    contacts/NAME/friction_force  (n_t, slots, 3)   F_t on body b [N]
    contacts/NAME/depth           (n_t, slots)      the penetration delta [m]
    contacts/NAME/bodies          (n_t, slots, 2)   the indices in Contact.bodies of sides a and b (-1 the ground)
    contacts/NAME/count           (n_t,)            the number of active contacts (may exceed slots)

All the outputs of a block at once (`Contact.record_history`: one `Contact.row_state` for the rows, the
contacts ordered per row by a stable sort), as the force elements' energies are evaluated.
"""
from __future__ import annotations

import numpy as np

from ..results import contacts_by_name  # noqa: F401  (its home: a run's results, no contact module)

__all__ = ["contact_fields", "contacts_by_name", "KEYS"]

KEYS = ("point", "normal_force", "friction_force", "depth", "bodies", "count")


def contact_fields(system, q, q_dot) -> dict:
    """{"contacts/NAME/KEY": array (n_t, ...)} of every `Contact` among ``system.force_elements`` at the
    rows of q, q' (n_t, n_q) (module docstring); {} without contact."""
    from .element import Contact
    out = {}
    for f in system.force_elements:
        if not isinstance(f, Contact):
            continue
        Q = np.concatenate([q[:, system.slice(b)] for b in f.bodies], axis=1)
        V = np.concatenate([q_dot[:, system.slice(b)] for b in f.bodies], axis=1)
        rows = f.record_history(Q, V)
        for key in KEYS:
            out[f"contacts/{f.name}/{key}"] = rows[key]
    return out
