"""Bad inputs of the per-step works (`flexmbs.simulate`'s ``step_integrand``): each row is a call and
the message it now prints."""
import numpy as np
import pytest

from flexmbs.formulations.registry import choose
from flexmbs.integrators import INTEGRATORS, simulate
from test_works_per_step import driven_pendulum


def pendulum_problem():
    system = driven_pendulum()
    entry, _ = choose("index3", "index3-alpha", INTEGRATORS)
    form = entry.system(system)
    return form, form.state0(None, None, 0.0)


def powers_of_width(k):
    return lambda t, x, lam: np.zeros((len(t), k))


CASES = [
    ("both integrands", dict(integrand=lambda t, x: np.zeros(1), step_integrand=powers_of_width(1)),
     "`integrand` and `step_integrand`: give one of them (the integral is returned in Solution.integrals), "
     "got both"),
    ("not callable", dict(step_integrand=3.0), "`step_integrand` must be callable or None, got float."),
    ("one value per call", dict(step_integrand=lambda t, x, lam: np.zeros(len(t))),
     "`step_integrand` must return an array (N, k) for N = 1 states, got shape (1,)."),
    ("wrong number of rows", dict(step_integrand=lambda t, x, lam: np.zeros((2, 1))),
     "`step_integrand` must return an array (N, k) for N = 1 states, got shape (2, 1)."),
]


@pytest.mark.parametrize("kwargs, message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_step_integrand_is_refused(kwargs, message):
    form, x0 = pendulum_problem()
    with pytest.raises((ValueError, TypeError)) as err:
        simulate(form, (0.0, 0.01), x0, method="index3-alpha", h=1e-3, **kwargs)
    assert str(err.value) == message
