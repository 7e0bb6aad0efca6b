"""The index-1 multipliers at the outputs of the coupled slider-crank: post_s of the run, and
`Index1.multiplier_history` alone (docs/benchmarks.md, sec. 20.3).

    python benchmarks/bench_multiplier_history.py [--rounds 3] [--checkout before=DIR ...]
    python benchmarks/bench_multiplier_history.py --history [--repeats 7]
    python benchmarks/bench_multiplier_history.py --quick          # a smoke test of the script, not a measurement

Runs (default): ``build_coupled()`` (8 elements, n_q = 45, n_c = 21) by ``fm.run(..., formulation=F,
method="RK45", rtol=1e-6, t_end=2 ms, t_eval=1441 points, store=False)`` for F = lagrange and
udwadia-kalaba, in a new interpreter per run whose sys.path starts at the checkout (default: the one
holding this script; ``--checkout LABEL=DIR`` adds another, e.g. an older commit unpacked with
``git archive COMMIT | tar -x -C DIR``; copy the kernel .so there); prints the run's ``stats`` (solve_s,
output_s, post_s).  Within a round the runs alternate between the checkouts.

History (``--history``, this checkout only): on that run's 1441 outputs, the process time of
``Index1(system, solver).multiplier_history(t, x)`` with the kernel's ``terms_history`` ("after") and with
it refused as a kernel built before it is (`flexmbs.compiled.Unsupported`: the terms state by state,
"before"), alternating, least and median of ``--repeats``, and the largest relative difference of lam.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORMULATIONS = ("lagrange", "udwadia-kalaba")

RUN = r'''
import sys
root, formulation, t_end, n_out = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
sys.path[:0] = [root, root + "/cases"]
import numpy as np
import flexmbs as fm, slider_crank
assert fm.__file__.startswith(root), fm.__file__
res = fm.run(slider_crank.build_coupled()[0], formulation=formulation, method="RK45", rtol=1e-6, t_end=t_end,
             t_eval=np.linspace(0.0, t_end, n_out), store=False)
s = res.stats
print(f"outputs={len(res.t)} steps={s['n_steps']} solve_s={s['solve_s']:.3f} output_s={s['output_s']:.3f} "
      f"post_s={s['post_s']:.3f} status={res.status}")
'''


def checkouts(pairs: list[str]) -> dict[str, Path]:
    """{label: directory}: "after" is this checkout, then each ``LABEL=DIR`` of --checkout."""
    out = {}
    for pair in pairs:
        label, sep, where = pair.partition("=")
        if not sep or not label or not Path(where).is_dir():
            raise SystemExit(f"--checkout must be LABEL=DIR with an existing directory, got {pair!r}")
        out[label] = Path(where).resolve()
    return {**out, "after": ROOT}


def runs(dirs: dict[str, Path], rounds: int, t_end: float, n_out: int) -> None:
    """Each checkout's run for each formulation, ``rounds`` times, alternating; one line each."""
    for r in range(rounds):
        for label, where in dirs.items():
            for formulation in FORMULATIONS:
                proc = subprocess.run([sys.executable, "-c", RUN, str(where), formulation, repr(t_end), str(n_out)],
                                      capture_output=True, text=True, cwd=where)
                line = proc.stdout.strip() if proc.returncode == 0 else "FAILED " + proc.stderr.strip()[-300:]
                print(f"round {r + 1} {label:8s} {formulation:15s} {line}", flush=True)


def history(repeats: int, t_end: float, n_out: int) -> None:
    """multiplier_history on one run's outputs, with and without the kernel's terms_history (module docstring)."""
    sys.path[:0] = [str(ROOT), str(ROOT / "cases"), str(ROOT / "benchmarks")]
    import numpy as np
    from bench_recovered_multipliers import outputs, report
    from flexmbs import compiled
    from flexmbs.formulations.index1 import Index1

    system, t, q, v = outputs(t_end, n_out)
    x = np.concatenate([q, v], axis=1)
    stacked = compiled.CompiledSystem.terms_history

    def refused(self, T, Q, V):
        raise compiled.Unsupported("refused by bench_multiplier_history.py (the terms state by state)")

    for solver in ("augmented", "udwadia-kalaba"):
        times, lam = {"before": [], "after": []}, {}
        for _ in range(repeats):
            for label in times:
                compiled.CompiledSystem.terms_history = refused if label == "before" else stacked
                form = Index1(system, solver)
                tic = time.process_time()
                lam[label] = form.multiplier_history(t, x)
                times[label].append(time.process_time() - tic)
        compiled.CompiledSystem.terms_history = stacked
        report(solver, len(t), times, lam, "lam")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--checkout", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--history", action="store_true", help="time multiplier_history alone (this checkout)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="0.1 ms, 11 outputs, one round: a smoke test")
    args = parser.parse_args(argv)
    for name in ("rounds", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    t_end, n_out = (1e-4, 11) if args.quick else (2e-3, 1441)
    if args.history:
        history(1 if args.quick else args.repeats, t_end, n_out)
    else:
        runs(checkouts(args.checkout), 1 if args.quick else args.rounds, t_end, n_out)


if __name__ == "__main__":
    main()
