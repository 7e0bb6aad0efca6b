"""Bad input to the helpers the multibody cases run on (issue 21: the cases on `flexmbs.run`):
`System.residual_norms` (||C|| at every output), `flexmbs.case.system_run_options` (the arguments
of `flexmbs.run` for a case's integrator) and `registry.system_methods` (a case's choices).
Each row: (what is called, the message it now gives)."""
import numpy as np
import pytest

from flexmbs.bodies.planar import RigidBody2D
from flexmbs.case import system_run_options
from flexmbs.constraints.planar import PlanarRevolute
from flexmbs.formulations.registry import system_methods
from flexmbs.system import System


def pendulum() -> System:
    """IFToMM A01's pendulum: 1 kg at (1, 0) m pinned at the origin (3 coordinates, 2 constraints)."""
    body = RigidBody2D("pendulum", 1.0, 0.0, position=(1.0, 0.0))
    return System([body], [PlanarRevolute(None, body, at=(0.0, 0.0), name="pivot")], gravity=(0.0, -9.81))


BAD = [
    ("residual_norms of one state (q (n_q,), not (n_t, n_q))",
     lambda s: s.residual_norms(0.0, s.initial_coordinates()),
     r"`q` must have shape \(n_t, n_q\) = \(n_t, 3\): one row of coordinates per output, got \(3,\)"),
    ("residual_norms with q of the wrong width", lambda s: s.residual_norms([0.0, 1.0], np.zeros((2, 4))),
     r"`q` must have shape \(n_t, n_q\) = \(n_t, 3\): one row of coordinates per output, got \(2, 4\)"),
    ("residual_norms with one time for two outputs", lambda s: s.residual_norms(0.0, np.zeros((2, 3))),
     r"`t` must have shape \(n_t,\) = \(2,\): one time per row of `q`, got \(\)"),
    ("system_run_options of 'exact' (a Model's method)", lambda s: system_run_options("exact", h=1e-3, rtol=1e-6),
     r"`method` must be one of \['AB4', 'BDF', 'DOP853', 'RK45', 'Radau', 'generalized-alpha', 'hht', 'index3-alpha', "
     r"'index3-alpha-adaptive', 'midpoint', 'newmark', 'radau-dae', 'rattle'\] \(the integrators that run a System\), got 'exact'"),
    ("system_methods of an unknown formulation", lambda s: system_methods("newton-euler"),
     r"`formulation` must be one of \[.*\] \(a System's\), got 'newton-euler'"),
]


@pytest.mark.parametrize("call, message", [row[1:] for row in BAD], ids=[row[0] for row in BAD])
def test_bad_input_is_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call(pendulum())


def test_residual_norms_is_the_norm_of_C_at_each_output():
    """C = r + A(theta) (-1, 0) (the body's pin point; by hand): 0 at the start and hanging down at
    theta = -pi/2, (1, 0) with the mass 2 m out along x."""
    s = pendulum()
    q = np.array([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, -1.0, -np.pi / 2]])
    np.testing.assert_allclose(s.residual_norms([0.0, 0.1, 0.2], q), [0.0, 1.0, 0.0], atol=1e-15)


def test_system_run_options_map_a_case_integrator_to_its_formulation():
    """index3-alpha: formulation "index3" with h and rho_inf; rattle: "index3" with h; a fixed-step
    index-1 method: h, no tolerances; an adaptive one: rtol, atol = rtol / 100 and no h (its own first
    step)."""
    assert system_run_options("index3-alpha", h=1e-3, rtol=1e-8, rho_inf=0.9) == dict(
        formulation="index3", method="index3-alpha", h=1e-3, rho_inf=0.9)
    assert system_run_options("AB4", h=1e-3, rtol=1e-8, index1="udwadia-kalaba",
                              formulation_options={"stabilization": "baumgarte"}) == dict(
        formulation="udwadia-kalaba", method="AB4", formulation_options={"stabilization": "baumgarte"}, h=1e-3)
    assert system_run_options("DOP853", h=1e-3, rtol=1e-8) == dict(
        formulation="lagrange", method="DOP853", formulation_options=None, h=None, rtol=1e-8, atol=1e-10)
    assert system_run_options("rattle", h=1e-3, rtol=1e-8, rho_inf=0.9) == dict(
        formulation="index3", method="rattle", h=1e-3)                  # RATTLE has no rho_inf
    assert system_run_options("hht", h=1e-3, rtol=1e-8, rho_inf=0.9) == dict(
        formulation="index3", method="hht", h=1e-3, rho_inf=0.9)
    assert system_run_options("index3-alpha-adaptive", h=1e-3, rtol=1e-8, rho_inf=0.9) == dict(
        formulation="index3", method="index3-alpha-adaptive", h=None, rtol=1e-8, atol=1e-10, rho_inf=0.9)
    assert system_run_options("radau-dae", h=1e-3, rtol=1e-8, rho_inf=0.9) == dict(
        formulation="index3", method="radau-dae", h=None, rtol=1e-8, atol=1e-10)    # no rho_inf
    assert system_methods("index3") == ["hht", "index3-alpha", "index3-alpha-adaptive", "newmark", "radau-dae", "rattle"]
    assert "exact" not in system_methods() and "index3-alpha" not in system_methods("lagrange")
    assert "rattle" not in system_methods("lagrange")
