"""Cost of one right-hand-side evaluation of each formulation (what an explicit integrator pays per stage).

    python benchmarks/bench_evaluation.py [--elements 10 100 1000 10000] [--calls 2000] [--rounds 5]

Bodies: the rotating bar of Vlase, Nicolescu and Marin (2020) (Bar2, 2 mass points per
element) and a planar beam (BeamEB2D, 6 mass points per element) on a planar frame motion with
gravity, so that every term of the equations is evaluated.  For each size the formulations
are timed in turns (``rounds`` rounds of ``calls`` calls each, the median round kept), so a
busy machine slows them alike.  Lagrange and Hamilton are evaluated term by term
(``evaluation="terms"``); Gibbs-Appell always evaluates its mass points.
"""
from __future__ import annotations

import argparse
import platform
import time

import numpy as np

import flexmbs as fm
from flexmbs.formulations import GibbsAppell, Hamilton, Lagrange
from flexmbs.motion import ConstantRotation, PlanarMotion


def bar(n):
    A = 0.2e-4
    return fm.Model(fm.generate.line(n, 1.0), fm.Bar2(fm.Material(210e9, 1.0 / A), A),
                    motion=ConstantRotation(15.0), fixed=[("start", "all")],
                    loads=[fm.NodalLoad("end", "u", 1.0, lambda t: np.sin(200.0 * t))])


def beam(n):
    motion = PlanarMotion(lambda t: (0.1 * np.sin(3 * t), 0.3 * np.cos(3 * t), -0.9 * np.sin(3 * t)),
                          lambda t: (0.05 * t**2, 0.1 * t, 0.1),
                          lambda t: (0.5 * t**2, t, 1.0))
    return fm.Model(fm.generate.line(n, 1.0), fm.BeamEB2D(fm.Material(2e11, 7800.0), 1e-4, 1e-9),
                    motion=motion, fixed=[("start", "all")], gravity=(0.0, -9.81, 0.0), stiffening=False)


def per_call(form, calls, rounds):
    x = np.random.default_rng(0).standard_normal(form.n_state) * 1e-6
    times = {}
    for r in range(rounds):
        t = 0.01 * r
        tic = time.perf_counter()
        for _ in range(calls):
            form.rhs(t, x)
        times.setdefault("t", []).append((time.perf_counter() - tic) / calls)
    return times["t"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, nargs="+", default=[10, 100, 1000, 10000])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    print(f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"numpy {np.__version__}")
    print(f"{'body':6s} {'elements':>8s} {'mass points':>11s} {'lagrange [us]':>13s} {'gibbs-appell [us]':>17s} "
          f"{'hamilton [us]':>13s} {'GA / L':>7s}")
    for name, make in (("bar", bar), ("beam", beam)):
        for n in a.elements:
            md = make(n)
            forms = {"lagrange": Lagrange(md, evaluation="terms"), "gibbs-appell": GibbsAppell(md),
                     "hamilton": Hamilton(md, evaluation="terms")}
            calls = max(20, a.calls * 10 // max(n, 10))
            samples = {k: [] for k in forms}
            for _ in range(a.rounds):                       # in turns
                for k, f in forms.items():
                    samples[k] += per_call(f, calls, 1)
            med = {k: 1e6 * float(np.median(v)) for k, v in samples.items()}
            n_p = forms["gibbs-appell"].points.n_points
            print(f"{name:6s} {n:8d} {n_p:11d} {med['lagrange']:13.1f} {med['gibbs-appell']:17.1f} "
                  f"{med['hamilton']:13.1f} {med['gibbs-appell'] / med['lagrange']:7.2f}")


if __name__ == "__main__":
    main()
