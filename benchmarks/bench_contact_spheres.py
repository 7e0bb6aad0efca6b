"""Contact benchmark (issue 26, item 5): N spheres falling into a box, time per step against the
number of active contacts, in the same run.

N point masses (`PointMass`, each a `Sphere` of radius 1 cm, 4.19 g) start on a lattice of pitch
2.5 cm in a box of side 10 x 2.5 cm (walls and floor: five ground `Plane`s), falling at 1 m/s under
gravity; Hertz contact k = 1e5 N/m^1.5, restitution 0.5, friction 0.3 (`ContactLaw`).  The layers
land one after the other, so the number of active contacts grows during the run.

Each step is one evaluation of the contact (`Contact.stacked_forces`: placing, broad phase, narrow
phase, law, generalized forces, the work of `System.element_forces`) and a semi-implicit Euler
update v += h M^-1 (Q + m g), q += h v with h = 1e-4 s (M diagonal: the point masses), so the time
per step is the contact's.  Printed and written as JSON: for each N, the steps' wall and CPU times grouped
by the number of active contacts, and one `System.forces` and one index-1 right-hand side for
comparison (the index-1 formulation solves with the dense M of all bodies).

``--broad``: the broad phase alone on N boxes of unit size spread uniformly in a cube of side
2 N^(1/3) (N = 10^3, 10^4, 10^5): `flexmbs.contact.overlapping_pairs` against a sort on one axis
(`one_axis_pairs`, the classical sweep and prune, kept here as the reference it replaced).

Run: python benchmarks/bench_contact_spheres.py [--steps 300] [--broad] [--out bench_contact_spheres.json]
"""
from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np

from flexmbs.bodies.point import PointMass
from flexmbs.contact import Contact, ContactLaw, Plane, Sphere
from flexmbs.system import System

RADIUS, DENSITY, PITCH, WIDTH = 0.01, 1000.0, 0.025, 0.25
GRAVITY = np.array([0.0, 0.0, -9.81])


def scene(n: int, seed: int = 0):
    """(bodies, contact, q0, v0): n spheres on a lattice (10 x 10 per layer for n >= 100) in the box."""
    rng = np.random.default_rng(seed)
    per_row = 10
    k = np.arange(n)
    pos = np.column_stack([(k % per_row + 0.5) * PITCH, (k // per_row % per_row + 0.5) * PITCH,
                           RADIUS * 1.2 + (k // per_row ** 2) * PITCH]) + rng.uniform(-2e-3, 2e-3, (n, 3))
    mass = DENSITY * 4.0 / 3.0 * np.pi * RADIUS ** 3
    bodies = [PointMass(f"s{i}", mass, position=p, velocity=(0.0, 0.0, -1.0)) for i, p in enumerate(pos)]
    walls = [Plane(None, (0, 0, 1)), Plane(None, (1, 0, 0)), Plane(None, (-1, 0, 0), point=(WIDTH, 0, 0)),
             Plane(None, (0, 1, 0)), Plane(None, (0, -1, 0), point=(0, WIDTH, 0))]
    law = ContactLaw(stiffness=1e5, restitution=0.5, friction=0.3)
    contact = Contact([Sphere(b, RADIUS) for b in bodies] + walls, law, name="spheres")
    q0 = np.concatenate([b.initial_coordinates() for b in bodies])
    v0 = np.concatenate([b.initial_velocities() for b in bodies])
    return bodies, contact, q0, v0, mass


def one_axis_pairs(lo, hi):
    """The overlapping pairs by a sort on the x axis only: every pair overlapping in x is listed, then
    tested on the other axes (what `overlapping_pairs` avoids)."""
    order = np.argsort(lo[:, 0], kind="stable")
    end = np.searchsorted(lo[order, 0], hi[order, 0], side="right")
    counts = np.maximum(end - np.arange(1, len(order) + 1), 0)
    a = np.repeat(np.arange(len(order)), counts)
    b = a + 1 + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts))
    i, j = order[a], order[b]
    keep = np.all((lo[i] <= hi[j]) & (lo[j] <= hi[i]), axis=1)
    return i[keep], j[keep]


def broad(sizes=(1000, 10_000, 100_000), seed: int = 0) -> list[dict]:
    """CPU seconds of the two broad phases on uniform scenes of N unit boxes (module docstring)."""
    from flexmbs.contact import overlapping_pairs
    rng = np.random.default_rng(seed)
    out = []
    for n in sizes:
        c = rng.uniform(0.0, 2.0 * n ** (1 / 3), (n, 3))
        lo, hi = c - 0.5, c + 0.5
        row = dict(n=n)
        for name, f in (("grid", overlapping_pairs), ("one_axis", one_axis_pairs)):
            tic = time.process_time()
            pairs = f(lo, hi)
            row[f"{name}_s"], row["pairs"] = time.process_time() - tic, len(pairs[0])
        out.append(row)
    return out


def run(n: int, steps: int, h: float = 1e-4) -> dict:
    bodies, contact, q, v, mass = scene(n)
    g = np.tile(GRAVITY, n)
    times, cpu, active = np.empty(steps), np.empty(steps), np.empty(steps, dtype=int)
    for k in range(steps):
        tic, cpu0 = time.perf_counter(), time.process_time()
        st = contact.state(q, v)
        Q = np.zeros(contact.carriers.n_q)
        np.add.at(Q, st.cols, np.einsum("kdm,kd->km", st.J, st.force))
        v = v + h * (Q / mass + g)
        q = q + h * v
        times[k], cpu[k] = time.perf_counter() - tic, time.process_time() - cpu0
        active[k] = len(st.delta)
    bins = {}
    for lo, hi in ((0, 1), (1, 50), (50, 200), (200, 500), (500, 1000), (1000, 5000)):
        sel = (active >= lo) & (active < hi)
        if sel.any():
            bins[f"{lo}-{hi - 1}"] = dict(steps=int(sel.sum()), median_ms=1e3 * float(np.median(times[sel])),
                                          median_cpu_ms=1e3 * float(np.median(cpu[sel])))
    system = System(bodies, gravity=GRAVITY, forces=[contact])
    tic = time.perf_counter()
    system.forces(0.0, q, v)
    forces_s = time.perf_counter() - tic
    from flexmbs.formulations.index1 import Index1
    form = Index1(system, solver="augmented")
    x = np.concatenate([q, v])
    tic = time.perf_counter()
    form.rhs(0.0, x)
    rhs_s = time.perf_counter() - tic
    return dict(n=n, steps=steps, h=h, median_ms=1e3 * float(np.median(times)),
                median_cpu_ms=1e3 * float(np.median(cpu)), max_active=int(active.max()),
                final_active=int(active[-1]), by_active=bins, system_forces_ms=1e3 * forces_s,
                index1_rhs_ms=1e3 * rhs_s, lowest_z=float(q[2::3].min()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--broad", action="store_true", help="also time the broad phase alone")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    out = dict(machine=platform.processor() or platform.machine(), python=platform.python_version(),
               numpy=np.__version__, runs=[run(n, args.steps) for n in args.sizes])
    if args.broad:
        out["broad"] = broad()
        for r in out["broad"]:
            print(f"broad phase, {r['n']} boxes ({r['pairs']} pairs): grid {r['grid_s']:.3f} s, one axis "
                  f"{r['one_axis_s']:.3f} s (CPU)")
    for r in out["runs"]:
        print(f"N = {r['n']}: {r['steps']} steps, median {r['median_ms']:.2f} ms/step (CPU {r['median_cpu_ms']:.2f} ms), "
              f"active contacts up to "
              f"{r['max_active']} (end {r['final_active']}); System.forces {r['system_forces_ms']:.1f} ms, index-1 rhs "
              f"{r['index1_rhs_ms']:.1f} ms; lowest centre {r['lowest_z']:.4f} m")
        for k, b in r["by_active"].items():
            print(f"    {k:>10} active: {b['steps']:4d} steps, median {b['median_ms']:.2f} ms/step (CPU "
                  f"{b['median_cpu_ms']:.2f} ms)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
