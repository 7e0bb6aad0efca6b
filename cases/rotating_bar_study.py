"""Parameter study of the rotating bar (Vlase, Nicolescu, Marin 2020, sec. 4c, Figs. 9-14).

The rotating bar of ``rotating_bar.py`` is run for
- section areas A = 1e-5, 2e-5, 4e-5, 6e-5 m^2 (Figs. 9-12), each at the spin rates
  Omega = 10, 15, 20 rad/s (the paper varies "the rotations" without giving them: these
  values are our choice);
- excitation frequencies 50/pi, 100/pi, 150/pi Hz, i.e. force periods pi/50, pi/100,
  pi/150 s (Fig. 13); with the paper's 1 N the force moves the tip by about 0.24 µm
  against a centrifugal response of 0 to 36 µm, so Fig. 13 also shows the part due to the
  force, u - u(F = 0) (exact by linearity, from one more run without force);
- bar masses 1, 0.5, 0.25 kg (Fig. 14);
every other parameter at the base case (L = 1 m, A = 0.2 cm^2, E = 210 GPa, Omega =
15 rad/s, 1 N tip force of period pi/100 s, no damping, 10 elements, 0.1 s).
Each combination is an independent case of ``flexmbs.sweep`` (local worker processes,
or a Dask cluster with --scheduler), written under DIR/cases/<id>/, summarised in
DIR/summary.csv; the figures show the tip's axial displacement.

Reference: S. Vlase, A. E. Nicolescu, M. Marin, Mathematics 8 (2020) 1401, doi:10.3390/math8091401.
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np

from flexmbs.case import check_parameters, resolve, run_command
from flexmbs.pipes import call_quietly
from flexmbs.sweep import case_id, sweep

HERE = Path(__file__).resolve().parent
AREAS = (1e-5, 2e-5, 4e-5, 6e-5)
OMEGAS = (10.0, 15.0, 20.0)
PERIODS = (np.pi / 50, np.pi / 100, np.pi / 150)
MASSES = (1.0, 0.5, 0.25)

DEFAULTS = dict(elements=10, t_end=0.1, dt_out=1e-4, rtol=1e-6, workers=2, scheduler="", plots=True)
RESUMES = True       # a second run into DIR skips the finished cases: the output directory is not cleared
RUN_TIME = "about 15 s"     # at the defaults on a 2-core machine (--help says it; measured, issue 20)
HELP = dict(elements="bar elements", t_end="end time [s]", dt_out="output interval [s]", rtol="relative tolerance",
            workers="local worker processes",
            scheduler="Dask scheduler address tcp://host:port (default: $DASK_SCHEDULER_ADDRESS or local)",
            plots="write the figures")


def parameter_sets(elements=10, t_end=0.1, dt_out=1e-4, rtol=1e-6):
    """(figure, label, parameters) of every run of the study."""
    common = dict(elements=elements, t_end=t_end, dt_out=dt_out, rtol=rtol)
    runs = []
    for i, area in enumerate(AREAS):
        for omega in OMEGAS:
            runs.append((f"fig{9 + i}_area_{area:g}", f"Omega = {omega:g} rad/s",
                         dict(common, area=area, omega=omega)))
    for period in PERIODS:
        runs.append(("fig13_frequency", f"f = {1 / period * np.pi:.0f}/pi Hz", dict(common, period=period)))
    runs.append(("fig13_no_force", "F = 0", dict(common, force=0.0)))
    for mass in MASSES:
        runs.append(("fig14_mass", f"m = {mass:g} kg", dict(common, mass=mass)))
    return runs


def check(p: dict) -> None:
    """Refuse values the case cannot run with, naming the parameter (`flexmbs.case.check_parameters`)."""
    check_parameters(p, DEFAULTS)


def run(out=None, **params):
    """Run the study; returns the sweep's rows (one per case)."""
    p = resolve("rotating_bar_study", DEFAULTS, params, check)
    out = Path(out if out is not None else "out/rotating_bar_study")
    runs = parameter_sets(p["elements"], p["t_end"], p["dt_out"], p["rtol"])
    rows = sweep(HERE / "rotating_bar.py", listed=[r[2] for r in runs], out=out,
                 workers=p["workers"], scheduler=p["scheduler"] or None)
    if p["plots"]:
        _plot(runs, out)
    return rows


def _title(fig: str) -> str:
    """A readable title for a figure key of `parameter_sets` (e.g. fig9_area_1e-05)."""
    number, what, *value = fig.split("_")
    head = f"Fig. {number[3:]}: tip axial displacement"
    if what == "area":
        return f"{head}, section area A = {value[0]} m², for three spin rates"
    return {"frequency": f"{head} for several excitation frequencies",
            "mass": f"{head} for several tip masses"}.get(what, f"{head} ({what})")


def _plot(runs, out: Path):
    from flexmbs import plots
    figures: dict[str, list] = {}
    for fig, label, params in runs:
        path = out / "cases" / case_id(params) / "results.npz"
        if path.is_file():
            data = np.load(path)
            figures.setdefault(fig, []).append((label, data["t"], data["displacement"][:, -1, 0]))
    reference = figures.pop("fig13_no_force", None)
    for fig, curves in figures.items():
        plots.save(plots.curves(curves, xlabel="t [s]", ylabel="tip axial displacement [µm]", scale=1e6,
                                title=_title(fig)), out / f"{fig}.png")
    if reference and "fig13_frequency" in figures:
        u0 = reference[0][2]
        forced = [(label, t, u - u0) for label, t, u in figures["fig13_frequency"]]
        plots.save(plots.curves(forced, xlabel="t [s]", ylabel="tip displacement due to the force [µm]",
                                scale=1e6, title="Fig. 13: response to the force at each excitation "
                                                 "frequency, u - u(F = 0)"),
                   out / "fig13_frequency_forced_part.png")


def main(argv=None):
    rows, _, out, _, seconds = run_command("rotating_bar_study", __doc__, run, argv, DEFAULTS, clear=not RESUMES,
                                           quiet=logging.WARNING, run_time=RUN_TIME, help=HELP, check=check)
    failed = [r for r in rows if r["status"] != "finished"]
    print(f"rotating bar study: {len(rows)} cases, {len(failed)} not finished, "
          f"{seconds:.1f} s; wrote {out}/summary.csv and fig9..fig14 PNGs")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(call_quietly(main))
