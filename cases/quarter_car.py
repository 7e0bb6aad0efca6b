"""Quarter-car: a sprung and an unsprung mass on a suspension spring-damper and a tyre spring,
driven over a road step (issue 26, item 4), against the closed form of the linear two-mass system.

The car body (sprung mass m_s) and the wheel (unsprung mass m_u) are point masses on one vertical
line in the plane; gravity g = 9.81 m/s^2 along -y.  Two force elements between bodies
(`flexmbs.forces.SpringDamper`) hold them:

- the suspension between the wheel and the body: k_s, c_s, rest length l_s;
- the tyre between the road (the ground, under the wheel) and the wheel: k_t, rest length l_t.

The car starts at rest in its static equilibrium on a flat road (tyre compressed by
(m_s + m_u) g / k_t, suspension by m_s g / k_s).  At t = 0 the wheel meets a step of height
``step``: the road under it is ``step`` higher, which for the tyre spring, along the vertical, is
its rest length raised by ``step`` (l = y_u - road).  The springs lie on one vertical line, so
the lengths are differences of heights and the system is exactly linear: with
x = (y_s, y_u) - (their equilibrium heights),

.. code:: text

    M x'' + C x' + K x = f,    M = diag(m_s, m_u),   C = c_s [[1, -1], [-1, 1]],
    K = [[k_s, -k_s], [-k_s, k_s + k_t]],           f = (0, k_t step)
    z = (x, x'):  z(t) = z_inf + exp(A t) (z(0) - z_inf),   A = [[0, I], [-M^-1 K, -M^-1 C]],
    z_inf = (K^-1 f, 0) = (step, step)             (the car ends ``step`` higher)
    exp(A t) = V diag(exp(lambda_k t)) V^-1           (A = V diag(lambda) V^-1: two damped modes)

(the closed form of the linear ODE by its eigenvalues, not another integration).  Data (chosen, a passenger car's corner): m_s = 250 kg, m_u = 35 kg, k_s = 16 kN/m,
c_s = 1 kN s/m, k_t = 160 kN/m, step 0.05 m: undamped frequencies 1.213 Hz (body bounce) and
11.29 Hz (wheel hop).

Energy: T + V_g + U, U the springs' stored energy (in ``energies["strain"]``), falls by the work
the damper dissipates (``W_damping``); ``energy_balance_error`` in the summary is the largest
|E(t) - E(0) + W_damping| (`Results.energy_balance_error`), the works integrated on DOP853's dense
output at every step, whatever the outputs: 3.1e-6 J at dt_out = 1 ms, 2.3e-6 J at 5 ms, of 200 J
dissipated (the trapezoidal rule over the outputs it replaced left 0.037 J and 0.89 J).

With ``--method index3-alpha`` the run takes the compiled step (point masses and springs between
bodies are packed for the kernel; docs/benchmarks.md, sec. 22.1).

Writes DIR/results.npz (t [s], y_s, y_u (n_t,) [m]: the body's and the wheel's rise above their
equilibrium on the flat road, y_s_ref, y_u_ref: the closed form, energy (n_t,) [J], W_damping
(n_t,) [J]) and DIR/summary.json (the errors against the closed form, the energy balance, the
frequencies, the body's peak rise and the time per step), and response.png.
"""
from __future__ import annotations

import sys

import numpy as np
import scipy.linalg

import flexmbs as fm
from flexmbs.analysis import output_times
from flexmbs.bodies import PointMass
from flexmbs.case import (check_parameters, recording_into, resolve, run_command, system_run_options,
                          write_run_histories)
from flexmbs.forces import SpringDamper
from flexmbs.pipes import call_quietly
from flexmbs.system import System

DEFAULTS = dict(m_s=250.0, m_u=35.0, k_s=16e3, c_s=1e3, k_t=160e3, step=0.05, t_end=2.0, dt_out=0.001,
                method="DOP853", h=1e-3, rtol=1e-10, plots=True)
RUN_TIME = "about 5 s"     # at the defaults on a 2-core machine (measured 3.9 s CPU, 11 s wall on a shared one)
HELP = dict(m_s="sprung mass (the car body's corner) [kg]", m_u="unsprung mass (the wheel) [kg]",
            k_s="suspension stiffness [N/m]", c_s="suspension damping [N s/m]", k_t="tyre stiffness [N/m]",
            step="height of the road step [m]", t_end="duration [s]", dt_out="output interval [s]",
            method="integrator: DOP853 (index 1) or index3-alpha", h="step of index3-alpha [s]",
            rtol="tolerance of DOP853", plots="write the plot")
SUMMARY = {"max_error_y_s": "max |y_s - closed form| [m]", "energy_balance_error": "max |E - E0 + W_damping| [J]"}
CHOICES = dict(method=["DOP853", "index3-alpha"])
GRAVITY = 9.81
L_SUSPENSION, L_TYRE = 0.4, 0.3                       # rest lengths [m] (chosen; they set the heights only)


def equilibrium(p: dict) -> tuple[float, float]:
    """(y_u, y_s) [m]: the heights of the wheel and the body at rest on the flat road (road at y = 0)."""
    y_u = L_TYRE - (p["m_s"] + p["m_u"]) * GRAVITY / p["k_t"]
    return y_u, y_u + L_SUSPENSION - p["m_s"] * GRAVITY / p["k_s"]


def build(p: dict) -> System:
    """The two point masses at their equilibrium, the suspension and the tyre (its rest length raised
    by the step: the road under the wheel is ``step`` higher from t = 0)."""
    y_u, y_s = equilibrium(p)
    wheel = PointMass("wheel", p["m_u"], position=(0.0, y_u))
    body = PointMass("body", p["m_s"], position=(0.0, y_s))
    forces = [SpringDamper(wheel, (0.0, 0.0), body, (0.0, 0.0), p["k_s"], L_SUSPENSION, damping=p["c_s"],
                           name="suspension"),
              SpringDamper(None, (0.0, 0.0), wheel, (0.0, 0.0), p["k_t"], L_TYRE + p["step"], name="tyre")]
    return System([wheel, body], forces=forces, gravity=(0.0, -GRAVITY))


def closed_form(t, p: dict) -> np.ndarray:
    """x(t) = (y_s, y_u) rise above equilibrium, (n_t, 2), of the linear system (module docstring)."""
    M = np.diag([p["m_s"], p["m_u"]])
    K = np.array([[p["k_s"], -p["k_s"]], [-p["k_s"], p["k_s"] + p["k_t"]]])
    C = p["c_s"] * np.array([[1.0, -1.0], [-1.0, 1.0]])
    A = np.block([[np.zeros((2, 2)), np.eye(2)], [-np.linalg.solve(M, K), -np.linalg.solve(M, C)]])
    z_inf = np.concatenate([np.linalg.solve(K, [0.0, p["k_t"] * p["step"]]), np.zeros(2)])
    lam, V = np.linalg.eig(A)                        # exp(A t) = V diag(exp(lam t)) V^-1 (distinct lam)
    coef = np.linalg.solve(V, -z_inf)                # z(0) = 0: at rest at the old equilibrium
    z = z_inf[:, None] + V @ (coef[:, None] * np.exp(np.outer(lam, np.asarray(t, dtype=float))))
    return z[:2].real.T


def frequencies_hz(p: dict) -> list[float]:
    """The undamped natural frequencies [Hz]: sqrt of the eigenvalues of M^-1 K over 2 pi."""
    M = np.diag([p["m_s"], p["m_u"]])
    K = np.array([[p["k_s"], -p["k_s"]], [-p["k_s"], p["k_s"] + p["k_t"]]])
    return sorted(float(np.sqrt(w2) / (2 * np.pi)) for w2 in scipy.linalg.eigvalsh(K, M))


def check(p: dict) -> None:
    check_parameters(p, DEFAULTS, choices=CHOICES, positive=("m_s", "m_u", "k_s", "k_t", "t_end", "dt_out", "h",
                                                               "rtol"))
    if not p["c_s"] >= 0:
        raise ValueError(f"`c_s` must be >= 0, got {p['c_s']!r}")
    if not abs(p["step"]) < L_TYRE:
        raise ValueError(f"`step` must be smaller than the tyre's rest length {L_TYRE} m in size, got {p['step']!r}")


def run(out=None, **params):
    """Run the case; returns a dict with t, y_s, y_u, their closed forms, energy, W_damping and the
    summary.  With ``out``, the run streams into DIR/results.h5 as "quarter_car"."""
    p = resolve("quarter_car", DEFAULTS, params, check)
    system = build(p)
    y_u0, y_s0 = equilibrium(p)
    with recording_into(out):
        res = fm.run(system, t_end=p["t_end"], t_eval=output_times(p["t_end"], p["dt_out"]), name="quarter_car",
                     metadata={"case": "quarter_car", "parameters": p},
                     **system_run_options(p["method"], h=p["h"], rtol=p["rtol"]))
    y_u = res.q[:, system.slice(system.body("wheel"))][:, 1] - y_u0
    y_s = res.q[:, system.slice(system.body("body"))][:, 1] - y_s0
    ref = closed_form(res.t, p)
    energy, balance = res.energies["total"], res.energy_balance_error()
    solve_s, n_steps = res.stats["solve_s"], res.stats["n_steps"]
    summary = dict(parameters=p, status=res.status, message=res.message, n_steps=n_steps, solve_s=solve_s,
                   time_per_step_s=solve_s / max(n_steps, 1), frequencies_hz=frequencies_hz(p),
                   max_error_y_s=float(np.abs(y_s - ref[:, 0]).max()),
                   max_error_y_u=float(np.abs(y_u - ref[:, 1]).max()),
                   peak_rise_y_s=float(y_s.max()), peak_rise_y_s_ref=float(ref[:, 0].max()),
                   dissipated_J=float(res.energies["W_damping"][-1]),
                   energy_balance_error=float(np.abs(balance).max()))
    result = dict(t=res.t, y_s=y_s, y_u=y_u, y_s_ref=ref[:, 0], y_u_ref=ref[:, 1], energy=energy,
                  W_damping=res.energies["W_damping"], summary=summary)
    if out is not None:
        write_run_histories(out, result, p, history_figures)
    return result


def history_figures(result, p: dict) -> dict:
    """response.png, drawn by `write_run_histories` when plots are wanted."""
    t = result["t"]
    panels = [("rise above equilibrium [m]",
               [dict(t=t, y=result["y_s"], label="body y_s"), dict(t=t, y=result["y_u"], label="wheel y_u"),
                dict(t=t, y=result["y_s_ref"], label="body, closed form"),
                dict(t=t, y=result["y_u_ref"], label="wheel, closed form")]),
              ("error [m]", [dict(t=t, y=result["y_s"] - result["y_s_ref"], label="body"),
                             dict(t=t, y=result["y_u"] - result["y_u_ref"], label="wheel")])]
    return {"response.png": dict(panels=panels, title=f"quarter-car over a {p['step']} m step, {p['method']}")}


def main(argv=None):
    result, params, out, _, _ = run_command("quarter_car", __doc__, run, argv, DEFAULTS, run_time=RUN_TIME,
                                            help=HELP, choices=CHOICES, check=check)
    s = result["summary"]
    f = s["frequencies_hz"]
    print(f"quarter-car over a {s['parameters']['step']} m step ({s['parameters']['method']}): {s['status']}; "
          f"frequencies {f[0]:.3f} and {f[1]:.2f} Hz")
    print(f"  body peak rise {s['peak_rise_y_s']:.6f} m (closed form {s['peak_rise_y_s_ref']:.6f} m); largest errors "
          f"{s['max_error_y_s']:.2e} m (body), {s['max_error_y_u']:.2e} m (wheel)")
    print(f"  dissipated {s['dissipated_J']:.4g} J; energy balance error {s['energy_balance_error']:.2e} J; "
          f"{s['n_steps']} steps, {1e6 * s['time_per_step_s']:.0f} us per step; wrote {out}/results.npz")
    return 0 if s["status"] == "finished" else 1


if __name__ == "__main__":
    sys.exit(call_quietly(main))
