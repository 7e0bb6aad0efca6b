"""A pendulum driven by a digital PD controller tracking a smooth reference angle (issue 22, item 3).

A uniform rod (mass m = 1 kg, length l = 1 m, centroid at l_c = l/2 from the pivot) hangs from a
`Revolute` joint to the ground about the global y axis, gravity g = 9.81 m/s^2 along -z, at
rest.  Its joint torque is a PD law sampled at ``period`` (1 ms: 1 kHz) and held in between
(zero-order hold, `flexmbs.control`):

.. code:: text

    tau_k = K_p (theta_ref(t_k) - theta_k) - K_d theta'_k        held on (t_k, t_k + T]
    theta_ref(t) = theta_1 (1 - cos(pi t / t_ramp)) / 2  for t < t_ramp,  theta_1 after

with theta the `joint_angle` (zero hanging, positive about +y) and theta' the `joint_rate`.
The equation of motion about the pivot is J_O theta'' = -m g l_c sin(theta) + tau,
J_O = m l^2 / 3.

Check (derived, independent of the integrator): once the reference holds still the motion
decays (closed-loop damping K_d / (2 J_O) = 30 1/s at the defaults) to the static balance

.. code:: text

    m g l_c sin(theta_s) = K_p (theta_1 - theta_s)

solved by brentq; ``static_error`` is |theta(t_end) - theta_s| (ZOH leaves a static balance
unchanged: the held torque is then constant).

``control`` chooses how the torque is applied: "sampled" (default: the `Controller`, the whole
run on the compiled kernel), "continuous" (the same PD law as a load of the state,
``load(body, t, q, v)``: the numpy path, the old way) or "feedforward" (a torque of time only of
the same size, m g l_c sin(theta_ref(t)) + J_O theta_ref''(t): the compiled path's speed
without a controller; its tracking error is that of an open loop).  docs/benchmarks.md compares
their times.

Writes DIR/results.h5 (the run "controlled_pendulum"), DIR/results.npz (t, angle, reference,
torque: the torque applied at each output time, rate) and DIR/summary.json (max_error and
rms_error of |angle - reference| [rad], static_angle, static_error, samples, kernel) and
tracking.png.
"""
from __future__ import annotations

import math
import sys

import numpy as np

import flexmbs as fm
from flexmbs import control
from flexmbs.analysis import output_times
from flexmbs.bodies import RigidBodyEP
from flexmbs.bodies.loads import torque_load
from flexmbs.case import check_parameters, recording_into, resolve, run_command, write_run_histories
from flexmbs.constraints import Revolute
from flexmbs.pipes import call_quietly
from flexmbs.system import System

DEFAULTS = dict(mass=1.0, length=1.0, g=9.81, kp=400.0, kd=20.0, period=1e-3, theta_1=math.radians(60.0),
                t_ramp=1.0, t_end=3.0, h=2.5e-4, dt_out=0.01, rho_inf=0.8, control="sampled", plots=True)
RUN_TIME = "about 3 s"     # at the defaults on a 2-core machine (--help says it; measured 3.1 s with the plot)
HELP = dict(mass="rod mass m [kg]", length="rod length l [m]", g="gravity [m/s^2]", kp="proportional gain [N m/rad]",
            kd="derivative gain [N m s/rad]", period="sample period of the controller [s]",
            theta_1="final reference angle [rad]", t_ramp="duration of the reference's ramp [s]",
            t_end="duration [s]", h="step of index3-alpha [s] (shrunk to divide the period)",
            dt_out="output interval [s]", rho_inf="spectral radius at infinite frequency of index3-alpha",
            control="sampled (Controller, compiled), continuous (a state load: numpy path) or feedforward "
                    "(a torque of time only)", plots="write the plot")
SUMMARY = {"max_error": "max |angle - reference| [rad]", "rms_error": "RMS |angle - reference| [rad]",
           "static_error": "|angle(t_end) - static balance| [rad]"}
CHOICES = dict(control=["sampled", "continuous", "feedforward"])
# `flexmbs fmu controlled_pendulum` (flexmbs.fmi, docs/fmi.md): the rod on its pin, the joint torque the FMU's input
FMU = dict(system="fmu_system", inputs={"torque": "N.m"}, outputs=["pin.angle", "pin.rate", "rod.position"], step=1e-3)


def reference(t, theta_1: float, t_ramp: float):
    """(theta_ref, theta_ref', theta_ref'') at t (arrays): the smooth ramp of the module docstring."""
    t = np.asarray(t, dtype=float)
    w = np.pi / t_ramp
    on = t < t_ramp
    return (np.where(on, 0.5 * theta_1 * (1 - np.cos(w * t)), theta_1), np.where(on, 0.5 * theta_1 * w * np.sin(w * t), 0.0),
            np.where(on, 0.5 * theta_1 * w * w * np.cos(w * t), 0.0))


def static_angle(p: dict) -> float:
    """theta_s of m g l_c sin(theta_s) = K_p (theta_1 - theta_s), by brentq on [0, theta_1] (the
    left side grows, the right falls, for theta_1 <= pi/2)."""
    from scipy.optimize import brentq
    w = p["mass"] * p["g"] * p["length"] / 2
    return brentq(lambda th: w * math.sin(th) - p["kp"] * (p["theta_1"] - th), 0.0, p["theta_1"], xtol=1e-15)


def build(p: dict, torque=None):
    """(System, joint, torque Output or None): the rod hanging from the pivot at the origin, its torque
    as ``p["control"]`` says (module docstring); ``torque``: the `control.Output` of "sampled" (default
    a new one)."""
    m, l = p["mass"], p["length"]
    J_O = m * l * l / 3
    axis = np.array([0.0, 1.0, 0.0])
    tau = None
    if p["control"] == "sampled":
        tau = control.Output("torque") if torque is None else torque
        load = tau.torque(axis)
    elif p["control"] == "feedforward":
        theta_1, w = p["theta_1"], math.pi / p["t_ramp"]

        def feedforward(t):
            """m g l_c sin(theta_ref) + J_O theta_ref'' (scalar: as fast as a user would write it)."""
            if t >= p["t_ramp"]:
                return m * p["g"] * l / 2 * math.sin(theta_1) * axis
            th, thdd = 0.5 * theta_1 * (1 - math.cos(w * t)), 0.5 * theta_1 * w * w * math.cos(w * t)
            return (m * p["g"] * l / 2 * math.sin(th) + J_O * thdd) * axis
        load = torque_load(feedforward)
    else:
        def load(body, t, q, v):
            """The PD law on the state, continuous: theta from A = R_y(theta) (A[0, 2] = sin, A[2, 2] = cos)."""
            A = body.rotation(q)
            theta = math.atan2(A[0, 2], A[2, 2])
            rate = float(body.angular_velocity(q, v)[1])
            th_ref = float(reference(t, p["theta_1"], p["t_ramp"])[0])
            return body.torque(q, (p["kp"] * (th_ref - theta) - p["kd"] * rate) * axis)
    rod = RigidBodyEP("rod", m, np.diag([m * l * l / 12, m * l * l / 12, 1e-4 * m * l * l]),
                      position=(0.0, 0.0, -l / 2), loads=[load])
    pin = Revolute(None, rod, at=(0.0, 0.0, 0.0), axis=axis, name="pin")
    return System([rod], [pin], gravity=(0.0, 0.0, -p["g"])), pin, tau


def fmu_system(torque, mass=1.0, length=1.0, g=9.81) -> System:
    """The System of the FMU (``FMU``): the rod on its pin driven by the held joint torque ``torque``
    (a `control.Output` that the FMU's master sets), without the PD controller."""
    return build({**DEFAULTS, "mass": mass, "length": length, "g": g, "control": "sampled"}, torque)[0]


def pd_controller(p: dict, pin, tau) -> control.Controller:
    """The sampled PD law of the module docstring."""
    kp, kd, theta_1, t_ramp = p["kp"], p["kd"], p["theta_1"], p["t_ramp"]

    def law(t, sensed):
        theta_ref = 0.5 * theta_1 * (1 - math.cos(math.pi * t / t_ramp)) if t < t_ramp else theta_1
        return kp * (theta_ref - sensed["angle"]) - kd * sensed["rate"]
    return control.Controller(p["period"], {"angle": control.joint_angle(pin), "rate": control.joint_rate(pin)},
                              tau, law, name="pd")


def check(p: dict) -> None:
    check_parameters(p, DEFAULTS, choices=CHOICES, positive=("mass", "length", "kp", "period", "t_ramp", "t_end",
                                                             "h", "dt_out"), nonnegative=("g", "kd", "theta_1"))
    if p["theta_1"] > math.pi / 2:
        from flexmbs.case import CaseError
        raise CaseError("theta_1", f"must be at most pi/2 (the static balance is then unique), got {p['theta_1']!r}")


def run(out=None, **params):
    """Run the case; returns a dict with t, angle, reference, torque, rate and the summary."""
    p = resolve("controlled_pendulum", DEFAULTS, params, check)
    system, pin, tau = build(p)
    controllers = None if tau is None else [pd_controller(p, pin, tau)]
    with recording_into(out):
        res = fm.run(system, formulation="index3", method="index3-alpha", h=p["h"], rho_inf=p["rho_inf"],
                     t_end=p["t_end"], t_eval=output_times(p["t_end"], p["dt_out"]), name="controlled_pendulum",
                     metadata={"case": "controlled_pendulum", "parameters": p},
                     **({} if controllers is None else {"controllers": controllers}))
    rod = res.bodies["rod"]
    A = rod.rotation
    angle = np.unwrap(np.arctan2(A[:, 0, 2], A[:, 2, 2]))      # A = R_y(theta), as the joint_angle sensor
    rate = rod.angular_velocity[:, 1]
    ref, _, refdd = reference(res.t, p["theta_1"], p["t_ramp"])
    m, l = p["mass"], p["length"]
    if tau is not None:
        torque = tau.held(res.t)
    elif p["control"] == "feedforward":
        torque = m * p["g"] * l / 2 * np.sin(ref) + m * l * l / 3 * refdd
    else:
        torque = p["kp"] * (ref - angle) - p["kd"] * rate
    err = np.abs(angle - ref)
    theta_s = static_angle(p)
    summary = dict(parameters=p, status=res.status, message=res.message, control=p["control"],
                   h_used=res.metadata["h"], n_steps=res.stats["n_steps"], solve_s=res.stats["solve_s"],
                   max_error=float(err.max()), rms_error=float(np.sqrt(np.mean(err ** 2))),
                   static_angle=theta_s, angle_final=float(angle[-1]), static_error=float(abs(angle[-1] - theta_s)),
                   samples=0 if controllers is None else len(controllers[0].record["t"]),
                   kernel=res.metadata.get("kernel"))
    result = dict(t=res.t, angle=angle, reference=ref, torque=torque, rate=rate, summary=summary)
    if out is not None:
        write_run_histories(out, result, p, history_figures)
    return result


def history_figures(result, p: dict) -> dict:
    """tracking.png, drawn by `write_run_histories` when plots are wanted."""
    t = result["t"]
    panels = [("angle [rad]", [dict(t=t, y=result["angle"], label=p["control"]),
                               dict(t=t, y=result["reference"], label="reference", style="--")]),
              ("|angle - reference| [rad]", [dict(t=t, y=np.abs(result["angle"] - result["reference"]), label="error")]),
              ("torque [N m]", [dict(t=t, y=result["torque"], label="torque")])]
    return {"tracking.png": dict(panels=panels, title="PD-controlled pendulum")}


def main(argv=None):
    result, params, out, _, _ = run_command("controlled_pendulum", __doc__, run, argv, DEFAULTS, run_time=RUN_TIME,
                                            help=HELP, choices=CHOICES, check=check)
    s = result["summary"]
    print(f"controlled pendulum, {s['control']} torque ({s['kernel']} path): {s['status']}")
    print(f"  tracking error max {s['max_error']:.3e} rad, RMS {s['rms_error']:.3e} rad; angle at t_end "
          f"{s['angle_final']:.9f} rad, static balance {s['static_angle']:.9f} rad (error {s['static_error']:.2e}); "
          f"solve {s['solve_s']:.3f} s; wrote {out}/results.npz")
    return 0 if s["status"] == "finished" else 1


if __name__ == "__main__":
    sys.exit(call_quietly(main))
