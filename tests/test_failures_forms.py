"""Issue 20, item 1: the works' quadratic forms of method "exact" (declared by the integrand,
`flexmbs.integrators.exact.declared_forms`) are checked; a wrong declaration is named.

Rows are (description, integrand's `forms` given the true ones, message it now gives).  A form of
the wrong shape is refused (ValueError); forms that do not reproduce the integrand at the first
outputs warn and the works are integrated at Gauss points instead, so the works stay right
(compared with the run whose forms are right: 1e-9 of the largest work).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.analysis import _Physics
from flexmbs.formulations import Lagrange
from flexmbs.signals import Harmonic


def bar(elements=4):
    """The rotating bar of Vlase et al. (2020, sec. 4a), as in tests/test_exact.py."""
    mesh = fm.generate.line(elements, 1.0)
    element = fm.Bar2(fm.Material(E=210e9, rho=50_000.0), area=0.2e-4)
    return fm.Model(mesh, element, motion=fm.motion.ConstantRotation(15.0), fixed=[("start", "all")],
                    loads=[fm.NodalLoad("end", "u", 1.0, Harmonic(200.0))])


def works(declare=None):
    """The works from t0 at 101 outputs over 0.01 s by method "exact", with the integrand's
    `forms` replaced by ``declare(true_forms)`` (None: the true ones)."""
    model = bar()
    form = Lagrange(model)
    physics = _Physics(model)

    def integrand(t, x):
        return physics.powers_many(t, *form.physical(t, x))
    integrand.vectorized = True

    def forms(X, F, one):
        Q = physics.power_forms(form, X, F, one)
        return Q if declare is None else declare(Q)
    integrand.forms = forms
    integrator = fm.INTEGRATORS["exact"](form, 0.0, np.zeros(form.n_state), 0.01)
    return integrator.outputs(np.linspace(0.0, 0.01, 101), integrand)[1]


REFUSED = [
    ("three forms for four values", lambda Q: Q[:3],
     "the integrand's `forms` must give 4 matrices of 11 x 11 (one per value of the integrand), "
     "got shape (3, 11, 11)"),
    ("forms of the state only (no load or constant components)", lambda Q: Q[:, :8, :8],
     "the integrand's `forms` must give 4 matrices of 11 x 11 (one per value of the integrand), "
     "got shape (4, 8, 8)"),
]


@pytest.mark.parametrize("declare, message", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_forms_of_the_wrong_shape_are_refused(declare, message):
    with pytest.raises(ValueError) as err:
        works(declare)
    assert message in str(err.value)


WRONG = [
    ("the loads' power doubled", lambda Q: Q * np.array([2.0, 1.0, 1.0, 1.0])[:, None, None],
     "method 'exact': the integrand's quadratic forms (declared by its `forms`) differ from the integrand by"),
    ("the frame power's sign flipped", lambda Q: Q * np.array([1.0, 1.0, -1.0, 1.0])[:, None, None],
     "of its size at the first outputs (more than 1e-08); integrating it at Gauss points instead."),
]


@pytest.mark.parametrize("declare, message", [r[1:] for r in WRONG], ids=[r[0] for r in WRONG])
def test_wrong_forms_warn_and_the_works_stay_right(declare, message):
    right = works()
    with pytest.warns(UserWarning) as record:
        wrong = works(declare)
    assert message in str(record[0].message)
    assert np.abs(wrong - right).max() <= 1e-9 * np.abs(right).max()
