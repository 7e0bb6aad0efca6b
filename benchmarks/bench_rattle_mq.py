"""RATTLE with a mass matrix M(q) against index3-alpha over long runs: energy and angular momentum.

    python benchmarks/bench_rattle_mq.py [--case triple|satellite|both] [--t-end 1000]
        [--h-triple 1e-2] [--h-satellite 1e-2] [--t-end-satellite T] [--modes 2] [--newton-tol 1e-10]
        [--methods rattle index3-alpha] [--block 100] [--plain] [--out DIR]
    python benchmarks/bench_rattle_mq.py --window T0 T1 [--hs 1e-2 5e-3 2.5e-3] [--newton-tol 1e-13] [--out DIR]

Two systems with M(q), each integrated by `flexmbs.run` with methods "rattle" (the generalized
RATTLE, flexmbs/integrators/rattle_mq.py) and "index3-alpha" (rho_inf 1, its default) at the same
fixed step, outputs every second:

* the triple pendulum of cases/triple_pendulum.py with its Euler-parameter bodies (``build(
  "euler-parameters")``, released from its documented start): E = T + V_g and the angular momentum
  about the vertical through the fixed pivot A (gravity along -Z, A at the origin: L_z is conserved);
* the flexible satellite of cases/flexible_satellite.py in free flight (``torque`` false: E and the
  angular momentum vector L about the centre of mass are conserved), spinning at 0.1 rad/s about
  its principal axis, its plate panels reduced to ``--modes`` cantilever modes WITHOUT the static
  modes (those are stiff, up to 4.8 kHz with the case's defaults, and RATTLE evaluates the forces
  explicitly: h < 2 / omega_max; with 2 modes omega_max = 70 rad/s).

Prints for each method the CPU time (process time of the run), the steps, max |C| over the outputs,
and for |E(t) - E(0)| [J] and |L(t) - L(0)| [N m s] (absolute: the pendulum starts at rest, L(0) = 0;
the satellite's |L(0)| is printed with E(0)) the maximum over the run, over its first
tenth and over its last tenth, as rows of the table of docs/benchmarks.md sec. 29.

``--block B`` prints the largest errors of every B seconds to stderr as a run goes; ``--plain`` runs
rattle with ``compensated=False`` (the plain sums of the updates).

``--window T0 T1``: the satellite's flip about its intermediate axis (docs/benchmarks.md sec. 29).
index3-alpha at h = 1e-2 s carries the satellite to T0; from that state both methods integrate to T1
at each step of ``--hs``, outputs every 0.1 s.  Prints per method and h the largest |E(t) - E(T0)|
over the window, |E(T1) - E(T0)|, when the largest comes, |L - L(T0)|, and the hub's angular velocity
in its body frame and the panels' modal coordinates at their largest; ``--out``: window.npz.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import flexible_satellite  # noqa: E402
import triple_pendulum  # noqa: E402

import flexmbs as fm  # noqa: E402
from flexmbs.reduction import reduce  # noqa: E402

METHODS = ("rattle", "index3-alpha")


def triple() -> tuple:
    """(System, q0, v0, L(q, v)) of the triple pendulum in Euler parameters: L = L_z about A."""
    system = triple_pendulum.build("euler-parameters")
    return system, None, None, lambda q, v: system.momentum(q, v).angular[2:]


def satellite(modes: int) -> tuple:
    """(System, q0, v0, L(q, v)) of the free satellite spinning about its principal axis closest to z."""
    p = dict(flexible_satellite.DEFAULTS, torque=False)
    panel = reduce(flexible_satellite.panel_model(p), modes, static_modes=False)
    axis, _ = flexible_satellite.principal_spin_axis(flexible_satellite.build(panel, p))
    system = flexible_satellite.build(panel, p, axis)
    q0 = system.initial_coordinates()
    return (system, q0, system.rigid_motion_velocities(q0, p["spin_rate"] * axis),
            lambda q, v: system.momentum(q, v).angular)


class BlockReport:
    """``on_output(t, x)``: prints, as soon as each block of ``block`` seconds ends, the largest |E - E0|
    and |L - L0| over its outputs (E = sum of `flexmbs.System.energy`), so that a long run shows its
    table while it goes."""

    def __init__(self, system, momentum, block: float, label: str):
        self.system, self.momentum, self.block, self.label = system, momentum, block, label
        self.start = None
        self.worst = [0.0, 0.0]
        self.end = block

    def __call__(self, t: float, x: np.ndarray) -> None:
        n = self.system.n_q
        q, v = x[:n], x[n:2 * n]
        E, L = sum(self.system.energy(q, v)), self.momentum(q, v)
        if self.start is None:
            self.start = (E, L)
        dE, dL = abs(E - self.start[0]), float(np.linalg.norm(L - self.start[1]))
        self.worst = [max(self.worst[0], dE), max(self.worst[1], dL)]
        if t >= self.end - 1e-9:
            print(f"{self.label}: {self.end - self.block:g}-{self.end:g} s: max abs(E - E0) {self.worst[0]:.2e} J, "
                  f"max abs(L - L0) {self.worst[1]:.2e} N m s (CPU {time.process_time():.0f} s)", file=sys.stderr,
                  flush=True)
            self.worst = [dE, dL]
            self.end += self.block


def long_run(make, method: str, h: float, t_end: float, newton_tol: float, block: float | None = None,
             compensated: bool = True) -> dict:
    """One run: CPU seconds, steps, max |C|, and the errors of E and L at the outputs (with ``block``,
    printed per block as the run goes: `BlockReport`)."""
    system, q0, v0, momentum = make()
    options = {"newton_tol": newton_tol, "compensated": compensated} if method == "rattle" else {}
    if block is not None:
        options["on_output"] = BlockReport(system, momentum, block, method)
    cpu = time.process_time()
    res = fm.run(system, q0=q0, v0=v0, method=method, h=h, t_end=t_end, dt_out=1.0, store=False, **options)
    cpu = time.process_time() - cpu
    E = res.energies["total"]
    L = np.array([momentum(q, v) for q, v in zip(res.q, res.v)])
    dL = np.linalg.norm(L - L[0], axis=1)
    C = max(float(np.abs(system.residual(t, q)).max()) for t, q in zip(res.t, res.q))
    return dict(t=res.t, dE=np.abs(E - E[0]), dL=dL, E0=float(E[0]), L0=float(np.linalg.norm(L[0])), cpu_s=cpu, n_steps=res.stats["n_steps"],
                max_C=C, status=res.status, message=res.message)


def body_rates(system, q, v) -> np.ndarray:
    """The hub's angular velocity in its body frame, (n_t, 3): A^T omega."""
    hub = system.body("hub")
    s = system.slice(hub)
    return np.array([hub.rotation(qk[s]).T @ hub.angular_velocity(qk[s], vk[s]) for qk, vk in zip(q, v)])


def modal_coordinates(system, q) -> np.ndarray:
    """The panels' modal coordinates (n_t, 2 * modes): each FlexibleBody's coordinates after its frame's 7."""
    return np.concatenate([q[:, system.slice(b)][:, 7:] for b in system.bodies[1:]], axis=1)


def event_window(t0: float, t1: float, hs, newton_tol: float, modes: int, methods=METHODS) -> dict:
    """The state at t0 from index3-alpha (h = 1e-2 s), then each method at each h from it to t1."""
    system, q0, v0, momentum = satellite(modes)
    start = fm.run(system, q0=q0, v0=v0, method="index3-alpha", h=1e-2, t_end=t0, dt_out=t0, store=False)
    qs, vs = start.q[-1], start.v[-1]
    print("| method | h [s] | steps | CPU [s] | max abs(E - E(T0)) [J] | at t [s] | abs(E(T1) - E(T0)) [J] | "
          "max abs(L - L(T0)) [N m s] | max abs(omega) x, y, z [rad/s] | max abs(modal) |")
    print("|---" * 10 + "|")
    saved = {}
    for m in methods:
        for h in hs:
            options = {"newton_tol": newton_tol} if m == "rattle" else {}
            cpu = time.process_time()
            res = fm.run(system, q0=qs, v0=vs, t0=t0, method=m, h=h, t_end=t1, dt_out=0.1, store=False, **options)
            cpu = time.process_time() - cpu
            dE = res.energies["total"] - res.energies["total"][0]
            L = np.array([momentum(q, v) for q, v in zip(res.q, res.v)])
            w, eta = body_rates(system, res.q, res.v), modal_coordinates(system, res.q)
            k = int(np.argmax(np.abs(dE)))
            print(f"| {m} | {h:g} | {res.stats['n_steps']} | {cpu:.1f} | {abs(dE[k]):.2e} | {res.t[k]:.1f} | "
                  f"{abs(dE[-1]):.2e} | {np.linalg.norm(L - L[0], axis=1).max():.2e} | "
                  + ", ".join(f"{x:.3f}" for x in np.abs(w).max(axis=0)) + f" | {np.abs(eta).max():.2e} |", flush=True)
            saved.update({f"{m}_{h:g}_{key}": val for key, val in (("t", res.t), ("dE", dE), ("omega", w),
                                                                   ("modal", eta))})
    return saved


def tenths(t: np.ndarray, err: np.ndarray) -> tuple[float, float, float]:
    """(max over the run, over its first tenth, over its last tenth)."""
    t_end = t[-1]
    return float(err.max()), float(err[t <= 0.1 * t_end].max()), float(err[t >= 0.9 * t_end].max())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=("triple", "satellite", "both"), default="both")
    ap.add_argument("--t-end", type=float, default=1000.0)
    ap.add_argument("--t-end-satellite", type=float, default=None, help="default: --t-end")
    ap.add_argument("--h-triple", type=float, default=1e-2)
    ap.add_argument("--h-satellite", type=float, default=1e-2)
    ap.add_argument("--modes", type=int, default=2)
    ap.add_argument("--newton-tol", type=float, default=1e-10, help="rattle's newton_tol")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--window", type=float, nargs=2, default=None, metavar=("T0", "T1"),
                    help="the satellite from T0 to T1 at the steps --hs, from index3-alpha's state at T0")
    ap.add_argument("--hs", type=float, nargs="+", default=(1e-2, 5e-3, 2.5e-3))
    ap.add_argument("--methods", nargs="+", choices=METHODS, default=METHODS)
    ap.add_argument("--block", type=float, default=None,
                    help="print the largest errors of every BLOCK seconds as the run goes (stderr)")
    ap.add_argument("--plain", action="store_true", help="rattle with compensated=False (plain sums)")
    args = ap.parse_args(argv)
    if args.window is not None:
        saved = event_window(*args.window, args.hs, args.newton_tol, args.modes, args.methods)
        if args.out is not None:
            args.out.mkdir(parents=True, exist_ok=True)
            np.savez(args.out / "window.npz", **saved)
        return
    cases = []
    if args.case in ("triple", "both"):
        cases.append(("triple pendulum (Euler parameters), L_z about A", triple, args.h_triple, args.t_end))
    if args.case in ("satellite", "both"):
        cases.append((f"free satellite ({args.modes} modes per panel, no static modes), |L|",
                      lambda: satellite(args.modes), args.h_satellite, args.t_end_satellite or args.t_end))
    print("| system | method | h [s] | t_end [s] | steps | CPU [s] | max abs(C) | max abs(dE) [J] | first tenth | "
          "last tenth | max abs(dL) [N m s] | first tenth | last tenth |")
    print("|---" * 13 + "|")
    saved = {}
    for label, make, h, t_end in cases:
        for m in args.methods:
            r = long_run(make, m, h, t_end, args.newton_tol, args.block, not args.plain)
            print(f"{label}, {m}: E(0) = {r['E0']:.6g} J, |L(0)| = {r['L0']:.6g} N m s", file=sys.stderr)
            if r["status"] != "finished":
                print(f"{label}, {m}: {r['message']}", file=sys.stderr)
            e, l_ = tenths(r["t"], r["dE"]), tenths(r["t"], r["dL"])
            print(f"| {label} | {m} | {h:g} | {r['t'][-1]:g} | {r['n_steps']} | {r['cpu_s']:.1f} | {r['max_C']:.1e} | "
                  + " | ".join(f"{x:.2e}" for x in e + l_) + " |", flush=True)
            saved.update({f"{label.split(' (')[0]}_{m}_{k}": r[k] for k in ("t", "dE", "dL")})
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        np.savez(args.out / "rattle_mq.npz", **saved)


if __name__ == "__main__":
    main()
