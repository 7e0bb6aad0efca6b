"""Issue 21, item 2: a method that does not fit the formulation's term is refused in one place
(`flexmbs.integrators.base.check_fits`), with why and the methods that fit it.

Rows are (description, the call, the error, the message it now prints); the whole message is
compared.  Before terms these came from four places (``Integrator._validate_formulation``,
``exact_system``, index3-alpha's ``_validate_formulation``, ``ConstrainedProblem``) and named
fixed lists of methods, not those that fit the term at hand.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.formulations import Hamilton, Lagrange
from flexmbs.formulations.index1 import Index1
from flexmbs.formulations.terms import NotATermError, ODETerm
from flexmbs.integrators import ConstrainedProblem, Index3GeneralizedAlpha, simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))

import pendulum_a01  # noqa: E402
import rotating_bar  # noqa: E402
import spinup_beam  # noqa: E402

ALPHA_METHODS = "'index3-alpha', 'index3-alpha-adaptive', 'hht', 'newmark'"   # index3-alpha and its variants, in the order of INTEGRATORS
ODE_METHODS = "'RK45', 'DOP853', 'AB4', 'midpoint'"
SECOND_ORDER = ("the second-order form M q'' = f(t, q, v) of a state (q, q') (second_state 'delta_dot': Lagrange, "
                "Gibbs-Appell, Index1, SupportedBody; states of momenta or quasi-velocities have none)")
NOT_STEADY = ("the model's equations do not have constant coefficients: its frame is not steady (constant spin or "
              "fixed frame, origin at rest, no gravity in a rotating frame, no stiffening by time-varying loads), so "
              "there is no x' = A x + c + B f(t) form")


def hamilton_bar():
    form = Hamilton(rotating_bar.build(elements=4))
    return form, np.zeros(form.n_state)


def pendulum():
    return pendulum_a01.build()[0]


def sine_loaded_bar():
    bar = rotating_bar.build(elements=4)
    model = fm.Model(bar.mesh, bar.element, motion=fm.motion.ConstantRotation(15.0), fixed=[("start", "all")],
                     loads=[fm.NodalLoad("end", "u", 1.0, np.sin)])
    return Lagrange(model)


class WrongTerm:
    def term(self):
        return 3


ROWS = [
    ("generalized-alpha on Hamilton's (delta, p)",
     lambda: simulate(hamilton_bar()[0], (0, 0.01), hamilton_bar()[1], method="generalized-alpha", h=1e-3),
     ValueError,
     f"method 'generalized-alpha' needs {SECOND_ORDER}; 'hamilton' does not give it; methods that fit this term: "
     f"{ODE_METHODS}, 'Radau', 'BDF', 'exact'."),
    ("index3-alpha on Hamilton's (delta, p)",
     lambda: simulate(hamilton_bar()[0], (0, 0.01), hamilton_bar()[1], method="index3-alpha", h=1e-3),
     ValueError,
     "method 'index3-alpha' needs a constrained second-order system: flexmbs.integrators.ConstrainedProblem(system), "
     "or a formulation with a second-order form M q'' = f(t, q, v); 'hamilton' does not give it; methods that fit "
     f"this term: {ODE_METHODS}, 'Radau', 'BDF', 'exact'."),
    ("exact on the spin-up beam (a frame that is not steady)",
     lambda: simulate(Lagrange(spinup_beam.build(elements=2)), (0, 0.01), np.zeros(12), method="exact"),
     ValueError,
     f"method 'exact' needs a linear term with constant coefficients (a steady prescribed frame): {NOT_STEADY}; "
     f"methods that fit this term: {ODE_METHODS}, 'generalized-alpha', 'Radau', 'BDF', {ALPHA_METHODS}, 'rattle', 'radau-dae'."),
    ("exact with a load f(t) = sin(t) given as np.sin, not Harmonic",
     lambda: simulate(sine_loaded_bar(), (0, 0.01), np.zeros(8), method="exact"),
     ValueError,
     "method 'exact' integrates constant loads and harmonic ones (flexmbs.signals.Harmonic: amplitude sin(omega t + "
     "phase)) exactly; load 0 has the time function <ufunc 'sin'>. Give it as Harmonic(omega, amplitude, phase), or "
     f"use another method; methods that fit this term: {ODE_METHODS}, 'generalized-alpha', 'Radau', 'BDF', "
     f"{ALPHA_METHODS}, 'rattle', 'radau-dae'."),
    ("exact on the index-1 form of a System",
     lambda: simulate(Index1(pendulum()), (0, 0.01), Index1(pendulum()).state0(), method="exact"),
     ValueError,
     "method 'exact' needs a linear term with constant coefficients (a model on a steady prescribed frame: Lagrange, "
     "Gibbs-Appell, Hamilton); 'index-1' does not give it; methods that fit this term: "
     f"{ODE_METHODS}, 'generalized-alpha', 'Radau', 'BDF', {ALPHA_METHODS}, 'radau-dae'."),
    ("DOP853 on a ConstrainedProblem (the index-3 equations)",
     lambda: simulate(ConstrainedProblem(pendulum()), (0, 0.01), ConstrainedProblem(pendulum()).state0()),
     ValueError,
     "method 'DOP853' integrates an ODETerm; 'constrained-index3' gives a DAETerm; methods that fit this term: "
     f"{ALPHA_METHODS}, 'radau-dae'."),
    ("Radau on a hand-made term without a Jacobian",
     lambda: simulate(ODETerm(name="toy", n_state=1, rhs=lambda t, x: -x), (0, 1), [1.0], method="Radau"),
     ValueError,
     "method 'Radau' needs a Jacobian dF/dx with its key (`jacobian`, `jacobian_key`); 'toy' does not give it; "
     "methods that fit this term: 'RK45', 'DOP853', 'AB4'."),
    ("index3-alpha constructed directly on an object without term()",
     lambda: Index3GeneralizedAlpha(object(), 0.0, np.zeros(2), 1.0, h=0.1),
     NotATermError,
     "`formulation` must be a flexmbs formulation (Lagrange, GibbsAppell, Hamilton, Index1, SupportedBody, Maggi, "
     "Kane, Volterra, or flexmbs.integrators.ConstrainedProblem(system) for index3-alpha: anything with a `term()` "
     "method) or an ODETerm or DAETerm of flexmbs.formulations.terms, got object."),
    ("a formulation whose term() is not a term",
     lambda: simulate(WrongTerm(), (0, 1), [1.0]),
     NotATermError,
     "`WrongTerm.term()` must return an ODETerm or a DAETerm, got int."),
]


@pytest.mark.parametrize("description, call, error, message", ROWS, ids=[row[0] for row in ROWS])
def test_a_method_that_does_not_fit_the_term_is_refused_naming_those_that_fit(description, call, error, message):
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        call()


def test_the_refusal_of_a_term_is_both_a_type_and_a_value_error():
    """Callers that caught the ValueError of an unfit formulation before terms still catch it."""
    assert issubclass(NotATermError, TypeError) and issubclass(NotATermError, ValueError)
