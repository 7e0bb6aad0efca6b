"""The documentation states what the code measures now (issue 20, item 14).

- The cart pendulum's period (docs/quasi_velocities.md): the closed form of small oscillations,
  the energy integral at the case's amplitude, and the period the run measures agree.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


# -- the cart pendulum's period ------------------------------------------------------------------------
sys.path.insert(0, str(ROOT / "cases"))
import cart_pendulum  # noqa: E402
from flexmbs.formulation_comparison import run_formulation  # noqa: E402


def test_small_oscillation_period_closed_form():
    # J0 = 2 m l^2/3 - m^2 l^2/M = 2/3 - 1/4.2 = 3/7 kg m^2, K0 = g l (2 m + 2 m_w) = 2.4 g N m
    # with m_c = 2, m = 1, m_w = 0.2 kg, l = 1 m (docs/quasi_velocities.md, the derivation)
    assert cart_pendulum.small_oscillation_period() == pytest.approx(2 * np.pi * np.sqrt(3 / 7 / (2.4 * 9.81)),
                                                                      rel=1e-14)
    assert cart_pendulum.small_oscillation_period() == pytest.approx(0.84772, abs=1e-5)


def test_energy_integral_tends_to_the_closed_form_for_small_swings():
    T0 = cart_pendulum.small_oscillation_period()
    small = cart_pendulum.energy_integral_period((0.01, -0.01, 0.0), (0.0, 0.0, 0.0))
    assert small == pytest.approx(T0, rel=5e-4)              # the lengthening grows like the amplitude^2
    assert small > T0


def test_the_run_measures_the_energy_integral_period():
    res, summary = run_formulation(cart_pendulum.build(), "volterra", rtol=1e-9, t_end=2.0,
                                   dt_out=0.01)
    # measured in the run of docs/quasi_velocities.md: 1.0007 s over 50 s
    assert summary["period_measured_s"] == pytest.approx(summary["period_energy_integral_s"], rel=1e-4)
    assert summary["period_energy_integral_s"] == pytest.approx(1.00074, abs=1e-5)
    assert summary["period_small_oscillation_s"] == pytest.approx(0.84772, abs=1e-5)


def test_measured_period_needs_two_swings():
    t = np.linspace(0.0, 0.5, 51)
    q = np.stack([np.sin(2 * np.pi * t), 0 * t, 0 * t], axis=1)
    assert np.isnan(cart_pendulum.measured_period(t, q, None))
    t = np.linspace(0.0, 3.0, 301)
    q = np.stack([np.sin(2 * np.pi * t / 0.9 + 0.3), 0 * t, 0 * t], axis=1)
    assert cart_pendulum.measured_period(t, q, None) == pytest.approx(0.9, rel=1e-3)
