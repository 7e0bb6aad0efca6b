"""Contact benchmark (issue 26, item 5): N spheres falling into a box as a real `flexmbs.run`, time per
step against the number of active contacts in the same run, and Exudyn's GeneralContact on the same
spheres at the same step.

N point masses (`PointMass`, each a `Sphere` of radius 1 cm, 4.19 g) start on a lattice of pitch
2.5 cm (10 x 10 per layer) in a box of side 0.25 m (floor and walls: five ground `Plane`s), falling
at V0 = 1 m/s under gravity; Hertz contact k = 1e5 N/m^1.5, restitution 0.5, friction 0.3
(`ContactLaw`).  The layers land one after the other, so the number of active contacts grows.

flexmbs: ``flexmbs.run(system, formulation="lagrange", method="RK45")``, rtol 1e-4, ``max_step``
2e-4 s.  Why: an impact is smooth but short; an adaptive explicit Runge-Kutta method shortens its
step where the contact force changes fast and needs no Jacobian (n_q = 3000: a Jacobian by
differences would cost 6000 evaluations).  The Hertz contact of a sphere on the floor at V0 lasts
t_c = 2.94 delta_max / V0 with delta_max = (5 m V0^2 / (4 k))^(2/5) = 1.23 mm, t_c = 3.6 ms;
``max_step`` = t_c / 18 keeps a step from jumping deep into a contact (docs/design.md, "Contact").
The regularised friction is stiff: dF_t/dv_t = mu f_n / v_eps, and an explicit step is stable
only for h < 3.3 v_eps m* / (mu f_n) (RK45's stability interval on the real axis, about 3.3).  An
oblique sphere-sphere impact (f_n up to 4 N, m* = m / 2) at the default v_eps = 1e-4 m/s gives
h < 6e-7 s: measured, RK45 then took 5874 steps (median 6.3e-7 s) and 140 s CPU for 0.01 s of
1000 spheres.  The benchmark therefore takes v_eps = 0.05 m/s (5 % of V0; Exudyn's parameter
``frictionProportionalZone``, the same value), for which the bound is 2.7e-4 s, above ``max_step``.

Per step, the CPU time comes from the run's ``progress`` callback (called after every step), and
the number of active contacts from the run's own `Results.contacts` count (the output nearest
before the step; outputs every 0.5 ms).  Each size also gives one index-1 right-hand side and one
`System.forces` at the initial state.

Exudyn (``pip install exudyn``, the ``bench`` extra): the same spheres as `NodePoint`s with
`MassPoint`s and gravity loads, `GeneralContact.AddSphereWithMarker`, the box as ground triangles
(`AddTrianglesRigidBodyBased`), the search tree over the box (`SetSearchTreeBox`, cells of 4 radii),
friction 0.3 with ``frictionProportionalZone`` 0.05 m/s, one thread, its sparse solver and the mass
matrix inverted per body (``computeMassMatrixInversePerBody``: without it, 45 ms per step at
N = 1000); its explicit RK44 at the fixed
step of flexmbs's median step (``SolveDynamic``'s CPU time / steps).  NOTE: its contact law is a
linear spring-dashpot, not Hertz: k and d are matched to the Hertz law's largest penetration at
V0 and its restitution (`exudyn_law`), so the contacts last about as long and the step is matched;
RK44 takes 4 evaluations per step, RK45 6 (FSAL).

``--crossover``: dense against block mass solves (`augmented.uses_block_mass`).  ``--broad``: the
broad phase alone on N boxes of unit size spread uniformly in a cube of side 2 N^(1/3) (N = 10^3,
10^4, 10^5): `flexmbs.contact.overlapping_pairs` against a sort on one axis (`one_axis_pairs`, the
classical sweep and prune, kept here as the reference it replaced).

Run: python benchmarks/bench_contact_spheres.py [--t-end 0.02] [--sizes 100 1000] [--crossover] [--broad]
[--no-exudyn] [--out bench_contact_spheres.json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np

from flexmbs.bodies.point import PointMass
from flexmbs.contact import Contact, ContactLaw, Plane, Sphere
from flexmbs.system import System

RADIUS, DENSITY, PITCH, WIDTH = 0.01, 1000.0, 0.025, 0.25
GRAVITY = np.array([0.0, 0.0, -9.81])
HEIGHT = 0.3                       # the walls' height [m] (Exudyn's triangles)
HERTZ_STIFFNESS, RESTITUTION, FRICTION = 1e5, 0.5, 0.3
SLIP_VELOCITY = 0.05               # [m/s], the regularised friction's (module docstring: why this value)
V0 = 1.0                           # the spheres' initial speed, downwards [m/s]
MAX_STEP = 2e-4                    # [s], RK45's largest step: the Hertz contact time / 18 (module docstring)
DT_OUT = 5e-4                      # [s], the outputs (the run's count of active contacts)


def scene(n: int, seed: int = 0, slip_velocity: float = SLIP_VELOCITY):
    """(bodies, contact, q0, v0): n spheres on a lattice (10 x 10 per layer for n >= 100) in the box."""
    rng = np.random.default_rng(seed)
    per_row = 10
    k = np.arange(n)
    pos = np.column_stack([(k % per_row + 0.5) * PITCH, (k // per_row % per_row + 0.5) * PITCH,
                           RADIUS * 1.2 + (k // per_row ** 2) * PITCH]) + rng.uniform(-2e-3, 2e-3, (n, 3))
    mass = DENSITY * 4.0 / 3.0 * np.pi * RADIUS ** 3
    bodies = [PointMass(f"s{i}", mass, position=p, velocity=(0.0, 0.0, -V0)) for i, p in enumerate(pos)]
    walls = [Plane(None, (0, 0, 1)), Plane(None, (1, 0, 0)), Plane(None, (-1, 0, 0), point=(WIDTH, 0, 0)),
             Plane(None, (0, 1, 0)), Plane(None, (0, -1, 0), point=(0, WIDTH, 0))]
    law = ContactLaw(stiffness=HERTZ_STIFFNESS, restitution=RESTITUTION, friction=FRICTION, slip_velocity=slip_velocity)
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


BINS = ((0, 1), (1, 50), (50, 200), (200, 500), (500, 1000), (1000, 5000))


def by_active(cpu, active) -> dict:
    """Median CPU time per step [ms] of the steps in each range of active contacts."""
    out = {}
    for lo, hi in BINS:
        sel = (active >= lo) & (active < hi)
        if sel.any():
            out[f"{lo}-{hi - 1}"] = dict(steps=int(sel.sum()), median_cpu_ms=1e3 * float(np.median(cpu[sel])))
    return out


def run(n: int, t_end: float, max_step: float = MAX_STEP, rtol: float = 1e-4) -> dict:
    """`flexmbs.run` of the scene by RK45 (module docstring): CPU time of every step (from the run's
    ``progress`` callback, called after each step) against the active contacts at the step (the run's
    own `Results.contacts` count at the output nearest before it)."""
    import flexmbs as fm
    bodies, contact, q, v, mass = scene(n)
    system = System(bodies, gravity=GRAVITY, forces=[contact])
    stamps = [(0.0, time.process_time())]
    tic, cpu0 = time.perf_counter(), time.process_time()
    res = fm.run(system, formulation="lagrange", method="RK45", t_end=t_end, rtol=rtol, atol=1e-3 * rtol * RADIUS,
                 max_step=max_step, dt_out=DT_OUT, store=False,
                 progress=lambda t: stamps.append((t, time.process_time())))
    wall, cpu_total = time.perf_counter() - tic, time.process_time() - cpu0
    t_step, c_step = np.array(stamps).T
    cpu = np.diff(c_step)
    count = res.contacts[contact.name]["count"]
    active = count[np.clip(np.searchsorted(res.t, t_step[1:], side="right") - 1, 0, len(count) - 1)]
    x = np.concatenate([q, v])
    from flexmbs.formulations.index1 import Index1
    form = Index1(system, solver="augmented")
    form.rhs(0.0, x)
    rhs_cpu = least_cpu(lambda: form.rhs(0.0, x))
    forces_cpu = least_cpu(lambda: system.forces(0.0, q, v))
    return dict(n=n, status=res.status, t_end=t_end, steps=int(res.stats["n_steps"]), n_rhs=int(res.stats["n_rhs"]),
                rejected=int(res.stats["n_rejected"]), median_h=float(np.median(np.diff(t_step))),
                median_cpu_ms=1e3 * float(np.median(cpu)), cpu_s=cpu_total, wall_s=wall,
                solve_s=float(res.stats["solve_s"]), output_s=float(res.stats["output_s"]),
                post_s=float(res.stats["post_s"]), max_active=int(count.max()), by_active=by_active(cpu, active),
                index1_rhs_ms=1e3 * rhs_cpu, system_forces_ms=1e3 * forces_cpu,
                mean_z=float(res.q[-1, 2::3].mean()), lowest_z=float(res.q[:, 2::3].min()))


def least_cpu(call, repeats: int = 5) -> float:
    """The smallest process CPU time [s] of ``repeats`` calls of ``call()``."""
    best = np.inf
    for _ in range(repeats):
        c = time.process_time()
        call()
        best = min(best, time.process_time() - c)
    return best


def exudyn_run(n: int, t_end: float, h: float) -> dict | None:
    """The same spheres in Exudyn's GeneralContact (module docstring), RK44 at the fixed step h: CPU time
    per step of ``SolveDynamic`` (None without Exudyn)."""
    try:
        import exudyn as exu
        from exudyn.itemInterface import (Force, MarkerNodePosition, MarkerNodeRigid, MassPoint, NodePoint,
                                          NodePointGround)
    except ImportError:
        return None
    bodies, _, q, v, mass = scene(n)
    k, d = exudyn_law(mass)
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    gc = mbs.AddGeneralContact()
    gc.frictionProportionalZone = SLIP_VELOCITY
    gc.SetFrictionPairings(FRICTION * np.eye(1))
    ground = mbs.AddMarker(MarkerNodeRigid(nodeNumber=mbs.AddNode(NodePointGround(referenceCoordinates=[0, 0, 0]))))
    nodes = []
    for p, u in zip(q.reshape(n, 3), v.reshape(n, 3)):
        node = mbs.AddNode(NodePoint(referenceCoordinates=p.tolist(), initialVelocities=u.tolist()))
        mbs.AddObject(MassPoint(mass=mass, nodeNumber=node))
        marker = mbs.AddMarker(MarkerNodePosition(nodeNumber=node))
        mbs.AddLoad(Force(markerNumber=marker, loadVector=(mass * GRAVITY).tolist()))
        gc.AddSphereWithMarker(marker, radius=RADIUS, contactStiffness=k, contactDamping=d, frictionMaterialIndex=0)
        nodes.append(node)
    points, triangles = box_triangles(WIDTH, HEIGHT)
    gc.AddTrianglesRigidBodyBased(rigidBodyMarkerIndex=ground, contactStiffness=k, contactDamping=d,
                                  frictionMaterialIndex=0, pointList=points, triangleList=triangles)
    cells = int(np.ceil(WIDTH / (4 * RADIUS)))
    gc.SetSearchTreeCellSize(numberOfCells=[cells, cells, int(np.ceil(HEIGHT / (4 * RADIUS)))])
    gc.SetSearchTreeBox(pMin=[-RADIUS, -RADIUS, -RADIUS], pMax=[WIDTH + RADIUS, WIDTH + RADIUS, HEIGHT])
    mbs.Assemble()
    s = exu.SimulationSettings()
    steps = int(round(t_end / h))
    s.timeIntegration.endTime, s.timeIntegration.numberOfSteps = steps * h, steps
    s.timeIntegration.verboseMode = 0
    s.timeIntegration.automaticStepSize = False
    s.parallel.numberOfThreads = 1
    s.linearSolver.solverType = exu.LinearSolverType.EigenSparse       # its advice above 1000 coordinates
    s.timeIntegration.explicit.computeMassMatrixInversePerBody = True
    s.timeIntegration.explicit.computeEndOfStepAccelerations = False
    s.solution.file.write = False
    cpu0, tic = time.process_time(), time.perf_counter()
    mbs.SolveDynamic(s, solverType=exu.DynamicSolverType.RK44)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - tic
    z = np.array([mbs.GetNodeOutput(node, exu.OutputVariableType.Position)[2] for node in nodes])
    return dict(n=n, steps=steps, h=h, cpu_s=cpu, wall_s=wall, cpu_per_step_ms=1e3 * cpu / steps,
                mean_z=float(z.mean()), stiffness=k, damping=d)


def exudyn_law(mass: float) -> tuple[float, float]:
    """(k [N/m], d [N s/m]) of Exudyn's linear spring-dashpot with the Hertz law's maximum penetration
    at the impact speed V0 on the floor and its restitution: m V0^2 / 2 = k delta^2 / 2 with
    delta = (5 m V0^2 / (4 k_H))^(2/5) (the Hertz energy k_H delta^(5/2) / (5/2)), and
    d = 2 zeta sqrt(k m) with zeta = -ln e / sqrt(pi^2 + ln^2 e) (a linear oscillator's restitution)."""
    delta = (5.0 * mass * V0 ** 2 / (4.0 * HERTZ_STIFFNESS)) ** 0.4
    k = mass * V0 ** 2 / delta ** 2
    zeta = -np.log(RESTITUTION) / np.sqrt(np.pi ** 2 + np.log(RESTITUTION) ** 2)
    return k, 2.0 * zeta * np.sqrt(k * mass)


def box_triangles(width: float, height: float) -> tuple[list, list]:
    """The floor and four walls of the box as triangles, each normal pointing into the box."""
    W, H = width, height
    rects = [((0, 0, 0), (W, 0, 0), (W, W, 0), (0, W, 0)), ((0, 0, 0), (0, W, 0), (0, W, H), (0, 0, H)),
             ((W, 0, 0), (W, 0, H), (W, W, H), (W, W, 0)), ((0, 0, 0), (0, 0, H), (W, 0, H), (W, 0, 0)),
             ((0, W, 0), (W, W, 0), (W, W, H), (0, W, H))]
    points, triangles = [], []
    for r in rects:
        s = len(points)
        points += [[float(c) for c in p] for p in r]
        triangles += [[s, s + 1, s + 2], [s, s + 2, s + 3]]
    return points, triangles


def crossover() -> list[dict]:
    """CPU time [ms] of one accelerations solve, dense saddle point against the blocks, on chains of rigid
    bodies (constrained) and free point masses: the measurements behind `augmented.uses_block_mass`."""
    from flexmbs.bodies import RigidBodyEP
    from flexmbs.constraints import Spherical
    from flexmbs.formulations import augmented
    from flexmbs.formulations.stabilization import stabilized_gamma

    def chain(n):
        b = [RigidBodyEP(f"b{i}", 1.0, np.diag([0.1, 1, 1]), position=(2 * i + 1, 0, 0)) for i in range(n)]
        j = [Spherical(None, b[0], at=(0, 0, 0), name="j0")] + [
            Spherical(b[i - 1], b[i], at=(2 * i, 0, 0), name=f"j{i}") for i in range(1, n)]
        return System(b, j, gravity=GRAVITY)

    def points(n):
        return System([PointMass(f"p{i}", 1.0, (i, 0, 0)) for i in range(n)], gravity=GRAVITY)

    out = []
    for build, sizes in ((chain, (2, 5, 10, 20, 40, 80)), (points, (10, 30, 70, 150, 300))):
        for n in sizes:
            s = build(n)
            q, v = s.initial_state()
            Q, Cq = s.forces(0.0, q, v), s.jacobian(0.0, q)
            g = stabilized_gamma(s, 0.0, q, v, Cq, 0.0, 0.0)
            out.append(dict(system=build.__name__, n_q=s.n_q, n_c=s.n_c,
                            dense_ms=1e3 * least_cpu(lambda: augmented.solve_saddle_point(s.mass_matrix(q), Q, Cq, g)),
                            blocks_ms=1e3 * least_cpu(lambda: augmented.solve_block_saddle_point(s.mass_blocks(q), Q,
                                                                                                   Cq, g))))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=0.02, help="simulated time of each run [s]")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--no-exudyn", action="store_true", help="skip Exudyn's run")
    parser.add_argument("--broad", action="store_true", help="also time the broad phase alone")
    parser.add_argument("--crossover", action="store_true", help="also time dense against block mass solves")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    out = dict(machine=platform.processor() or platform.machine(), python=platform.python_version(),
               numpy=np.__version__, load=os.getloadavg()[0], runs=[], exudyn=[])
    for n in args.sizes:
        r = run(n, args.t_end)
        out["runs"].append(r)
        print(f"flexmbs N = {n}: RK45, {r['steps']} steps ({r['rejected']} rejected, {r['n_rhs']} evaluations), "
              f"median h "
              f"{r['median_h']:.3g} s, median CPU {r['median_cpu_ms']:.2f} ms/step; run {r['cpu_s']:.2f} s CPU "
              f"({r['wall_s']:.2f} s wall: solve {r['solve_s']:.2f}, outputs {r['output_s']:.2f}, after "
              f"{r['post_s']:.2f}); "
              f"active contacts up to {r['max_active']}; one index-1 rhs {r['index1_rhs_ms']:.2f} ms, System.forces "
              f"{r['system_forces_ms']:.2f} ms (CPU); mean z at the end {r['mean_z']:.4f} m")
        for key, b in r["by_active"].items():
            print(f"    {key:>10} active: {b['steps']:4d} steps, median CPU {b['median_cpu_ms']:.2f} ms/step")
        e = None if args.no_exudyn else exudyn_run(n, args.t_end, r["median_h"])
        if e is not None:
            out["exudyn"].append(e)
            print(f"Exudyn  N = {n}: RK44, {e['steps']} steps of {e['h']:.3g} s, CPU {e['cpu_per_step_ms']:.2f} "
                  "ms/step "
                  f"({e['cpu_s']:.2f} s CPU, {e['wall_s']:.2f} s wall; k = {e['stiffness']:.4g} N/m, d = "
                  f"{e['damping']:.3g} N s/m); mean z at the end {e['mean_z']:.4f} m")
    if args.crossover:
        out["crossover"] = crossover()
        for r in out["crossover"]:
            print(f"{r['system']:6s} n_q = {r['n_q']:4d}, n_c = {r['n_c']:4d}: dense {r['dense_ms']:.3f} ms, blocks "
                  f"{r['blocks_ms']:.3f} ms (CPU)")
    if args.broad:
        out["broad"] = broad()
        for r in out["broad"]:
            print(f"broad phase, {r['n']} boxes ({r['pairs']} pairs): grid {r['grid_s']:.3f} s, one axis "
                  f"{r['one_axis_s']:.3f} s (CPU)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
