"""Natural frequencies of a rotating cantilever against the spin rate: Campbell diagram, Southwell effect.

A uniform Euler-Bernoulli cantilever (3D beam elements), clamped at radius R = hub_ratio L
on a hub spinning steadily at Omega about z, the beam along x.  In the rotating frame its
small vibrations about the undeformed state obey (`flexmbs.modal`)

.. code:: text

    [m] delta'' + [c(omega)] delta' + ([k] + K_geo(Omega^2) + [k(omega)]) delta = 0

with the stress stiffness K_geo of the centrifugal tension (Southwell effect), the
centrifugal softening [k(omega)] = -Omega^2 (S_xx + S_yy) and the Coriolis matrix
[c(omega)] = 2 G(omega).  In the dimensionless form of Wright et al. (1982),
gamma = Omega sqrt(rho A L^4 / EI), lambda = omega sqrt(rho A L^4 / EI), with the EI of
each bending direction:

- flapwise (w, out of the plane of rotation): w'''' - gamma^2 [s w']' = lambda^2 w,
  s(xi) = delta (1 - xi) + (1 - xi^2) / 2; no Coriolis coupling (omega x w' = 0);
- chordwise (v, in the plane), the column ``lambda``: the "stretch" model without the
  Coriolis coupling to the axial motion (symmetric problem, ``gyroscopic=False``):
  v'''' - gamma^2 [s v']' - gamma^2 v = lambda^2 v, so lambda_chord^2 = lambda_flap^2 - gamma^2
  exactly, in the discrete model too (same matrices, shifted by -gamma^2 [m]);
- chordwise with the Coriolis coupling to the axial motion (state-space eigenproblem,
  ``gyroscopic=True``), the column ``lambda_coriolis``: slightly lower, by an amount that
  grows with gamma and with the axial flexibility (slenderness sqrt(A L^2 / I)).

The section is that of the Kane beam in the chordwise plane (EIz = 1.4e4 N m^2, EA =
2.8e7 N, rho A = 1.2 kg/m, L = 10 m) and four times softer flapwise (EIy = 3.5e3 N m^2),
so flap and chord modes never coincide; each direction is computed at its own
Omega = gamma / sqrt(rho A L^4 / EI).  Modes are assigned a direction by the kinetic energy
of their DOF groups (`flexmbs.campbell`).

Writes DIR/campbell.csv with the columns gamma, mode, direction (flap or chord), lambda,
then lambda_coriolis and table (the BENCHMARKS.md sec. 2.3 value where there is one);
DIR/campbell.png (lambda against gamma, flap and chord with and without Coriolis, the line
lambda = gamma, the table values as markers) and DIR/flap_modes.png, DIR/chord_modes.png
(the first three mode shapes at gamma_max).

Reference: J. R. Wright, J. E. Smith, R. W. Thresher, J. L. C. Wang, Vibration modes of
centrifugally stiffened beams, J. Appl. Mech. 49(1) (1982) 197-202 (the problem); the
reference numbers are the independently computed [DER] tables of BENCHMARKS.md sec. 2.3
(Hermite FE with 40/80 elements and Richardson extrapolation), not the published ones.
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

from flexmbs import BeamEB3D, Material, Model, generate
from flexmbs.campbell import campbell_diagram, time_scale
from flexmbs.case import check_parameters, resolve, run_command
from flexmbs.motion import ConstantRotation
from flexmbs.pipes import call_quietly

LENGTH, YOUNGS, DENSITY, AREA = 10.0, 7.0e10, 3000.0, 4.0e-4
I_CHORD, I_FLAP = 2.0e-7, 0.5e-7          # Iz (bending in the plane of rotation), Iy (out of it)
N_FAMILY = 3                              # modes per direction
COLUMNS = ["gamma", "mode", "direction", "lambda", "lambda_coriolis", "table"]

# BENCHMARKS.md sec. 2.3 [DER]: gamma -> (flap1, flap2, flap3, chord1, chord2, chord3)
TABLE = {
    0.0: {0: (3.5160, 22.0345, 61.6972, 3.5160, 22.0345, 61.6972),
          1: (3.6816, 22.1810, 61.8418, 3.5432, 22.1585, 61.8337),
          2: (4.1373, 22.6149, 62.2732, 3.6218, 22.5263, 62.2411),
          3: (4.7973, 23.3203, 62.9850, 3.7435, 23.1265, 62.9135),
          4: (5.5850, 24.2733, 63.9668, 3.8977, 23.9415, 63.8416),
          5: (6.4495, 25.4461, 65.2050, 4.0739, 24.9500, 65.0131),
          6: (7.3604, 26.8091, 66.6839, 4.2632, 26.1290, 66.4134),
          7: (8.2996, 28.3341, 68.3860, 4.4591, 27.4558, 68.0267),
          8: (9.2568, 29.9954, 70.2930, 4.6571, 28.9089, 69.8362),
          9: (10.2257, 31.7705, 72.3867, 4.8543, 30.4691, 71.8250),
          10: (11.2023, 33.6404, 74.6493, 5.0490, 32.1197, 73.9765),
          11: (12.1843, 35.5890, 77.0638, 5.2400, 33.8463, 76.2747),
          12: (13.1702, 37.6031, 79.6145, 5.4270, 35.6370, 78.7049)},
    1.0: {1: (3.8888, 22.3750, 62.0431, 3.7581, 22.3527, 62.0350),
          2: (4.8337, 23.3660, 63.0675, 4.4005, 23.2803, 63.0358),
          4: (7.4750, 26.9573, 66.9868, 6.3148, 26.6588, 66.8672),
          6: (10.4439, 32.0272, 72.9863, 8.5484, 31.4602, 72.7393),
          8: (13.5074, 37.9538, 80.5295, 10.8835, 37.1011, 80.1312),
          10: (16.6064, 44.3682, 89.1563, 13.2579, 43.2266, 88.5937),
          12: (19.7215, 51.0701, 98.5268, 15.6505, 49.6403, 97.7933)},
}

DEFAULTS = dict(elements=10, gamma_max=12.0, gamma_step=0.5, hub_ratio=0.0, plots=True)
RUN_TIME = "about 7 s"     # at the defaults on a 2-core machine (--help says it; measured, issue 20)
HELP = dict(elements="number of beam elements", gamma_max="largest gamma", gamma_step="gamma increment",
            hub_ratio="hub radius / beam length", plots="write the Campbell diagram and mode shape plots")


def section() -> BeamEB3D:
    """The beam element: Iy = I_FLAP (flapwise, w), Iz = I_CHORD (chordwise, v)."""
    return BeamEB3D(Material(E=YOUNGS, rho=DENSITY, nu=0.3), AREA, Iy=I_FLAP, Iz=I_CHORD, J=I_FLAP + I_CHORD)


def time_scales() -> dict[str, float]:
    """sqrt(rho A L^4 / EI) [s] of each bending direction."""
    rho_A = DENSITY * AREA
    return {"flap": time_scale(rho_A, YOUNGS * I_FLAP, LENGTH), "chord": time_scale(rho_A, YOUNGS * I_CHORD, LENGTH)}


def model_factory(elements=10, hub_ratio=0.0):
    """Omega -> the cantilever clamped at x = hub_ratio L, spinning steadily at Omega about z."""
    mesh = generate.line(elements, LENGTH, dim=3, origin=(hub_ratio * LENGTH, 0.0, 0.0))
    element = section()

    def model_at(Omega: float) -> Model:
        return Model(mesh, element, motion=ConstantRotation(Omega), fixed=[("start", "all")])
    return model_at


def dimensionless_frequencies(gammas, elements=10, hub_ratio=0.0, n=N_FAMILY, keep=False):
    """lambda of the first n flap modes, chord modes without and with Coriolis coupling, each (n_gamma, n).

    With ``keep`` also returns the three `CampbellDiagram` objects (flap, chord, chord_coriolis).
    """
    gammas = np.asarray(gammas, dtype=float)
    model_at, c = model_factory(elements, hub_ratio), time_scales()
    n_modes = 4 * n + 2                # flap modes are the lower ones at the chordwise Omega
    diagrams = {"flap": campbell_diagram(model_at, gammas / c["flap"], n_modes),
                "chord": campbell_diagram(model_at, gammas / c["chord"], n_modes),
                "chord_coriolis": campbell_diagram(model_at, gammas / c["chord"], n_modes, gyroscopic=True)}
    lam = {key: d.family(key.split("_")[0], n) * c[key.split("_")[0]] for key, d in diagrams.items()}
    return (lam, diagrams) if keep else lam


def table_values(hub_ratio: float, direction: str):
    """(gamma (k,), lambda (k, 3)) of the BENCHMARKS table for this hub ratio (empty if none)."""
    rows = TABLE.get(float(hub_ratio), {})
    j = 0 if direction == "flap" else 3
    g = np.array(sorted(rows), dtype=float)
    return g, np.array([rows[k][j:j + 3] for k in sorted(rows)]).reshape(len(g), 3)


def check(p: dict) -> None:
    """Refuse values the case cannot run with, naming the parameter (`flexmbs.case.check_parameters`)."""
    check_parameters(p, DEFAULTS, positive=("gamma_step",), nonnegative=("gamma_max", "hub_ratio"))


def run(out=None, **params):
    """Compute the Campbell diagram; returns a dict of gamma, flap, chord, chord_coriolis (n_gamma, 3)."""
    p = resolve("rotating_beam_modes", DEFAULTS, params, check)
    gammas = np.round(np.arange(0.0, p["gamma_max"] + 1e-9 * p["gamma_step"], p["gamma_step"]), 12)
    lam, diagrams = dimensionless_frequencies(gammas, p["elements"], p["hub_ratio"], keep=True)
    result = {"gamma": gammas, **lam, "parameters": p}
    if out is not None:
        write(result, diagrams, Path(out), p)
    return result


def rows(result, hub_ratio: float):
    """The CSV rows: gamma, mode, direction, lambda, lambda_coriolis, table."""
    table = TABLE.get(float(hub_ratio), {})
    out = []
    for i, g in enumerate(result["gamma"]):
        ref = table.get(int(g)) if float(g).is_integer() else None
        for direction in ("flap", "chord"):
            for k in range(N_FAMILY):
                lam = result[direction][i, k]
                lam_c = result["chord_coriolis"][i, k] if direction == "chord" else lam
                tab = "" if ref is None else ref[k + (0 if direction == "flap" else 3)]
                out.append(dict(gamma=f"{g:g}", mode=k + 1, direction=direction, **{"lambda": f"{lam:.6f}"},
                                lambda_coriolis=f"{lam_c:.6f}", table=tab))
    return out


def write(result, diagrams, out: Path, p: dict):
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "campbell.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows(result, p["hub_ratio"]))
    if not p.get("plots", True):
        return
    from flexmbs import plots
    g = result["gamma"]
    families = {"flap": (g, result["flap"]), "chord, no Coriolis (csv: lambda)": (g, result["chord"]),
                "chord, Coriolis (csv: lambda_coriolis)": (g, result["chord_coriolis"], "--")}
    reference = {}
    for direction in ("flap", "chord"):
        tg, tl = table_values(p["hub_ratio"], direction)
        if len(tg):
            sel = tg <= p["gamma_max"] + 1e-9
            reference[f"{direction}, BENCHMARKS [DER]"] = (tg[sel], tl[sel])
    plots.save(plots.campbell(families, reference, title=(
        f"Rotating cantilever, hub ratio {p['hub_ratio']:g}, {p['elements']} elements")), out / "campbell.png")
    model = model_factory(p["elements"], p["hub_ratio"])(0.0)
    x = model.mesh.points[:, 0]
    c = time_scales()
    for direction, comp in (("flap", 2), ("chord", 1)):
        d = diagrams[direction]
        shapes = d.family_shapes(direction, N_FAMILY, len(g) - 1)
        field = model.displacement_field(np.real(shapes).T)[:, :, comp].T        # (n_nodes, n)
        lam = result[direction][-1]
        fig = plots.mode_shapes(x - x[0], field, lam / c[direction], title=(
            f"{direction.capitalize()}wise modes at gamma = {g[-1]:g} (lambda = "
            + ", ".join(f"{v:.4g}" for v in lam) + ")"), xlabel="distance from the root [m]")
        plots.save(fig, out / f"{direction}_modes.png")


def main(argv=None):
    result, args, out, _, seconds = run_command("rotating_beam_modes", __doc__, run, argv, DEFAULTS,
                                                run_time=RUN_TIME, help=HELP, check=check)
    print(f"rotating beam modes: {args['elements']} elements, hub ratio {args['hub_ratio']:g}, "
          f"gamma 0 to {result['gamma'][-1]:g}; chordwise column `lambda` without Coriolis coupling")
    worst = {}
    for direction in ("flap", "chord"):
        tg, tl = table_values(args["hub_ratio"], direction)
        for gi, ref in zip(tg, tl):
            i = np.flatnonzero(np.isclose(result["gamma"], gi))
            if len(i):
                err = np.abs(result[direction][i[0]] / ref - 1).max()
                worst[direction] = max(worst.get(direction, 0.0), err)
    for direction, err in worst.items():
        print(f"  {direction}: largest relative difference to the BENCHMARKS table (modes 1-3): {err:.2e}")
    gmax = result["gamma"][-1]
    print(f"  at gamma = {gmax:g}: flap {np.round(result['flap'][-1], 4).tolist()}, chord "
          f"{np.round(result['chord'][-1], 4).tolist()}, chord with Coriolis "
          f"{np.round(result['chord_coriolis'][-1], 4).tolist()}")
    print(f"  wrote {out}/campbell.csv and plots in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(call_quietly(main))
