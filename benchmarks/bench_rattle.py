"""RATTLE against index3-alpha over a long run of the triple pendulum: the energy error against time.

    python benchmarks/bench_rattle.py [--h 1e-2] [--t-end 1000] [--window 100] [--out DIR]

The triple pendulum of cases/triple_pendulum.py in natural coordinates (constant mass matrix:
what method "rattle" runs), released from its documented start, integrated by `flexmbs.run` with
both methods at the same fixed step.  Prints, for each method, the CPU time (process time of the
run), the steps, max |C| at every 100th output, and per window of ``--window`` s the largest
|E(t) - E(0)| and the mean of E(t) - E(0) [J] (E = T + V_g, outputs every 0.1 s); with ``--out``
also writes energy_error.png (E(t) - E(0) of both methods, `flexmbs.plots`) and energy.npz.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import triple_pendulum  # noqa: E402

import flexmbs as fm  # noqa: E402

METHODS = ("rattle", "index3-alpha")


def energy_run(method: str, h: float, t_end: float) -> dict:
    """One run: t, E - E0, CPU seconds, steps, max |C| (at every 100th output)."""
    system = triple_pendulum.build("natural")
    cpu = time.process_time()
    res = fm.run(system, method=method, h=h, t_end=t_end, dt_out=0.1, store=False)
    cpu = time.process_time() - cpu
    E = res.energies["total"]
    C = max(float(np.abs(system.residual(t, q)).max()) for t, q in zip(res.t[::100], res.q[::100]))
    return dict(t=res.t, dE=E - E[0], cpu_s=cpu, n_steps=res.stats["n_steps"], max_C=C, status=res.status)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--h", type=float, default=1e-2)
    ap.add_argument("--t-end", type=float, default=1000.0)
    ap.add_argument("--window", type=float, default=100.0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    runs = {m: energy_run(m, args.h, args.t_end) for m in METHODS}
    starts = np.arange(0.0, args.t_end, args.window)
    print(f"triple pendulum (natural coordinates), h = {args.h:g} s, {args.t_end:g} s")
    for m, r in runs.items():
        print(f"{m}: {r['status']}, {r['n_steps']} steps, CPU {r['cpu_s']:.1f} s "
              f"({1e3 * r['cpu_s'] / r['n_steps']:.3f} ms/step), max |C| {r['max_C']:.1e}")
    print("| window [s] | " + " | ".join(f"{m}: max abs(E - E0) [J] | {m}: mean (E - E0) [J]" for m in METHODS) + " |")
    print("|---" * (1 + 2 * len(METHODS)) + "|")
    for a in starts:
        cells = []
        for r in runs.values():
            w = r["dE"][(r["t"] >= a) & (r["t"] <= a + args.window)]
            cells += [f"{np.abs(w).max():.2f}", f"{w.mean():+.3f}"]
        print(f"| {a:g}-{a + args.window:g} | " + " | ".join(cells) + " |")
    if args.out is not None:
        from flexmbs import plots
        args.out.mkdir(parents=True, exist_ok=True)
        np.savez(args.out / "energy.npz", **{f"{m}_{k}": r[k] for m, r in runs.items() for k in ("t", "dE")})
        panels = [("E(t) - E(0) [J]", [dict(t=r["t"], y=r["dE"], label=m) for m, r in runs.items()])]
        plots.save(plots.history_panels(panels, title=f"Triple pendulum, h = {args.h:g} s: energy error"),
                   args.out / "energy_error.png")


if __name__ == "__main__":
    main()
