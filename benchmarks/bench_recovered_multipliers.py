"""The multipliers that maggi, kane, volterra and hamilton recover at the outputs of a run: state by state
(``multipliers``, the loop `system_run.multipliers_at` ran before issue 22's item 1) against all at once
(``multiplier_history``) on the same outputs, in one process (docs/benchmarks.md, sec. 20.5).

    python benchmarks/bench_recovered_multipliers.py [--repeats 5] [--formulation maggi ...]
    python benchmarks/bench_recovered_multipliers.py --quick       # a smoke test of the script, not a measurement

The outputs: ``build_coupled()`` of the coupled slider-crank (8 elements, n_q = 45, n_c = 21) run by
``fm.run(..., formulation="lagrange", method="RK45", rtol=1e-6, t_end=2 ms, t_eval=1441 points)``, whose
(t, q, q') are turned into each formulation's states once (not timed): (q, q') for maggi, (q, p = M q') for
hamilton (sigma = 0 on consistent velocities), (q, u) with u the quasi-velocities of q' for kane and volterra.
Then, alternating, ``repeats`` times: the process time of ``[form.multipliers(t_k, x_k) for each output]``
("per state") and of ``form.multiplier_history(t, x)`` ("stacked"); printed: least and median of each, and
the largest difference of lam between them relative to the largest |lam|.  For the formulations whose state
is not (q, q') a second line times q' at the outputs the same way: ``physical(t, x)`` (stacked since issue
22's item 1) against the loop it ran before (hamilton: ``velocities`` state by state; kane, volterra:
``qv.maps`` and W u + X state by state).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORMULATIONS = ("maggi", "kane", "volterra", "hamilton")


def outputs(t_end: float, n_out: int):
    """(system, t (N,), q, q' (N, n_q)) of the Lagrange run of the module docstring."""
    import numpy as np
    import flexmbs as fm
    import slider_crank
    system = slider_crank.build_coupled()[0]
    res = fm.run(system, formulation="lagrange", method="RK45", rtol=1e-6, t_end=t_end,
                 t_eval=np.linspace(0.0, t_end, n_out), store=False)
    if res.status != "finished":
        raise SystemExit(f"the Lagrange run did not finish: {res.message}")
    return system, res.t, res.q, res.v


def states(name: str, form, system, t, q, qd):
    """The formulation's states (N, n_state) at the outputs (module docstring)."""
    import numpy as np
    if name == "maggi":
        return np.concatenate([q, qd], axis=1)
    if name == "hamilton":
        return np.concatenate([q, np.einsum("kij,kj->ki", np.array([system.mass_matrix(qk) for qk in q]), qd)], axis=1)
    return np.concatenate([q, np.array([form.qv.quasi_velocities(tk, qk, vk) for tk, qk, vk in zip(t, q, qd)])],
                          axis=1)


def measure(names, repeats: int, t_end: float, n_out: int) -> None:
    """Per state against stacked for each formulation, one line each (module docstring)."""
    sys.path[:0] = [str(ROOT), str(ROOT / "cases")]
    import numpy as np
    from flexmbs.formulations.registry import system_formulation
    system, t, q, qd = outputs(t_end, n_out)
    for name in names:
        form = system_formulation(name, system)
        x = states(name, form, system, t, q, qd)
        form.multiplier_history(t[:2], x[:2])            # the kernel chosen (and compiled) before the clock
        times, lam = {"per state": [], "stacked": []}, {}
        for _ in range(repeats):
            tic = time.process_time()
            lam["per state"] = np.array([form.multipliers(tk, xk) for tk, xk in zip(t, x)])
            times["per state"].append(time.process_time() - tic)
            tic = time.process_time()
            lam["stacked"] = form.multiplier_history(t, x)
            times["stacked"].append(time.process_time() - tic)
        report(name, len(t), times, lam, "lam")
        if name != "maggi":
            velocities(name, form, system, t, x, repeats)


def velocities(name: str, form, system, t, x, repeats: int) -> None:
    """q' at the outputs: the per-state loop ``physical`` ran before against ``physical`` (module docstring)."""
    import numpy as np
    n = system.n_q

    def per_state(tk, xk):
        if name == "hamilton":
            return form.velocities(tk, xk[:n], xk[n:])[0]
        W, X = form.qv.maps(tk, xk[:n])
        return W @ xk[n:] + X
    times, qd = {"per state": [], "stacked": []}, {}
    for _ in range(repeats):
        tic = time.process_time()
        qd["per state"] = np.array([per_state(tk, xk) for tk, xk in zip(t, x)])
        times["per state"].append(time.process_time() - tic)
        tic = time.process_time()
        qd["stacked"] = form.physical(t, x)[1]
        times["stacked"].append(time.process_time() - tic)
    report(name, len(t), times, qd, "q'")


def report(name: str, n_out: int, times: dict, values: dict, what: str) -> None:
    """One line: least and median process time of each way, and the largest difference of ``what`` between the
    two ways of ``values`` relative to the largest |``what``| of the first (the reference: the loop it replaced)."""
    import numpy as np
    reference, other = values.values()
    diff = np.abs(other - reference).max() / np.abs(reference).max()
    print(f"{name:14s} {what:3s} outputs={n_out} " + " ".join(
        f"{k}: least {min(v):.3f} s, median {np.median(v):.3f} s;" for k, v in times.items())
        + f" largest relative difference of {what} {diff:.1e}", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--formulation", action="append", choices=FORMULATIONS,
                        help="one of the formulations (repeatable; default all four)")
    parser.add_argument("--quick", action="store_true", help="0.1 ms, 11 outputs, one repeat: a smoke test")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    t_end, n_out = (1e-4, 11) if args.quick else (2e-3, 1441)
    measure(args.formulation or FORMULATIONS, 1 if args.quick else args.repeats, t_end, n_out)


if __name__ == "__main__":
    main()
