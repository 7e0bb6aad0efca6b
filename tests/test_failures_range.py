"""Runs that leave the range of the linear-strain floating-frame model are flagged (issue 20, item 6).

A 1 m beam with Young's modulus typed in MPa (210e3 instead of 210e9 Pa) swings through metres and
radians and used to end "finished" without a word.  Now `flexmbs.validity.RangeCheck` follows the
outputs of every Model run (`flexmbs.run`) and every System run (`flexmbs.integrators.simulate` of a
System's formulation, through `FlexibleBody.range_check`) and warns once (`RangeWarning`, logged
too, and appended to the run's message) when a node rotation passes 0.2 rad or a displacement 10 %
of the body size; the documented cases' defaults stay silent.
"""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import FlexibleBody, Node
from flexmbs.constraints import Revolute
from flexmbs.integrators import ConstrainedProblem, simulate
from flexmbs.system import System
from flexmbs.validity import DEFLECTION_LIMIT, ROTATION_LIMIT, RangeCheck, RangeWarning, body_size

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))

import rotating_bar  # noqa: E402
import spinup_beam  # noqa: E402

pytestmark = pytest.mark.usefixtures("restore_logging")    # tests/conftest.py

ADVICE = ("it holds for rotations below 0.2 rad and displacements below 10 % of the size. Use the corotational "
          "beam (CorotationalBeam2D/3D) for large rotations, finer elements, or check the units: E in Pa "
          "(E = 2.1e+05 Pa here).")


def steel_beam(E: float, fixed=(("start", "all"),), gravity=None) -> fm.Model:
    """1 m steel cantilever, 4 BeamEB2D elements (A = 1 cm^2, I = 1e-9 m^4); E = 210e3 is MPa typed as Pa."""
    el = fm.BeamEB2D(fm.Material(E=E, rho=7850.0), area=1e-4, I=1e-9, rotary_inertia=True)
    return fm.Model(fm.generate.line(4, 1.0), el, fixed=list(fixed), gravity=gravity)


def model_run(E):
    """The cantilever under gravity, flexmbs.run, generalized-alpha h = 1e-3 s, 0.3 s."""
    return fm.run(steel_beam(E, gravity=(0.0, -9.81, 0.0)), method="generalized-alpha", h=1e-3, t_end=0.3,
                  dt_out=0.01).message


def system_run(E):
    """The same beam as a FlexibleBody (tangent frame at node 0) pinned at node 0 under gravity,
    released horizontally; index3-alpha, h = 1e-3 s, 0.3 s."""
    body = FlexibleBody(steel_beam(E), "beam")
    system = System([body], [Revolute(body, None, s_i=Node(0), axis=(0.0, 0.0, 1.0), name="pin")],
                    gravity=(0.0, -9.81, 0.0))
    problem = ConstrainedProblem(system)
    x0 = problem.state0(system.initial_coordinates(), system.initial_velocities())
    return simulate(problem, (0.0, 0.3), x0, method="index3-alpha", h=1e-3, t_eval=np.linspace(0.0, 0.3, 31)).message


def bar_case_run(E):
    """The rotating bar case (Bar2, 15 rad/s) with `youngs` E, 0.3 s: its message and summary.json's."""
    return rotating_bar.run(youngs=E, t_end=0.3, dt_out=0.01)["undamped"].message


# (the run, the message it now ends with); E = 210e3 Pa is steel's 210 GPa typed in MPa
RANGE_TABLE = [
    ("flexmbs.run: cantilever under gravity, E = 210e3", model_run,
     "Reached t_end = 0.3. Warning: run 'run' leaves the range of the linear-strain floating-frame model: node "
     "rotations up to 2 rad (at t = 0.3 s; beyond 0.2 rad from t = 0.08 s) and displacements up to 0.512 m = 51.2 % "
     "of the body size 1 m (at t = 0.3 s; beyond 10 % from t = 0.14 s); " + ADVICE),
    ("System: pinned FlexibleBody under gravity, E = 210e3", system_run,
     "Reached t_end = 0.3. Warning: body 'beam' leaves the range of the linear-strain floating-frame model: node "
     "rotations up to 2.17 rad (at t = 0.3 s; beyond 0.2 rad from t = 0.05 s) and displacements up to 0.492 m = "
     "49.2 % of the body size 1 m (at t = 0.3 s; beyond 10 % from t = 0.03 s); " + ADVICE),
    ("rotating bar case, youngs = 210e3", bar_case_run,
     "Reached t_end = 0.3. Warning: run 'undamped' leaves the range of the linear-strain floating-frame model: "
     "displacements up to 36.2 m = 3.62e+03 % of the body size 1 m (at t = 0.3 s; beyond 10 % from t = 0.03 s); "
     + ADVICE),
]


@pytest.mark.parametrize("what, call, message", RANGE_TABLE, ids=[row[0] for row in RANGE_TABLE])
def test_run_out_of_range_warns_once_and_says_so_in_its_message(what, call, message):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = call(210e3)
    assert got == message
    ranges = [w for w in caught if issubclass(w.category, RangeWarning)]
    assert len(ranges) == 1 and str(ranges[0].message) == message.split(" Warning: ")[1]
    assert Path(ranges[0].filename).parent.name != "flexmbs"      # points at the caller of run / simulate


@pytest.mark.parametrize("call", [model_run, system_run], ids=["model", "system"])
def test_same_runs_in_pascal_are_silent(call):
    """E = 210e9: the tip of the cantilever moves 9 mm (0.9 % of 1 m), no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RangeWarning)
        assert "Warning" not in call(210e9)


def test_summary_json_and_the_results_file_record_it(tmp_path):
    """A case's summary.json (its run's message) and the results file's status message carry the warning;
    the streamed outputs are checked block by block like the in-memory ones."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RangeWarning)
        run = rotating_bar.run(out=tmp_path, youngs=210e3, t_end=0.3, dt_out=0.01, plots=False)["undamped"]
    expected = RANGE_TABLE[2][2]
    assert run.message == expected and run.metadata["range_warning"] == expected.split(" Warning: ")[1]
    assert json.loads((tmp_path / "summary.json").read_text())["message"] == expected
    assert fm.load_results(tmp_path / "results.h5").message == expected


def test_range_check_values_and_times():
    """The largest rotation and displacement / size over a block of outputs, with their times, and the
    first output beyond each limit: hand-made DOFs of a 2-element BeamEB2D on 0 .. 2 m (size 2 m)."""
    md = fm.Model(fm.generate.line(2, 2.0), fm.BeamEB2D(fm.Material(E=1.0, rho=1.0), area=1.0, I=1.0),
                  fixed=[("start", "all")])
    assert body_size(md.mesh.points) == 2.0
    t = np.array([0.0, 0.5, 1.0])
    delta = np.zeros((3, md.n_dofs))
    delta[1, md.dof(2, "theta")] = -0.3                      # beyond 0.2 rad at t = 0.5
    delta[2, md.dof(1, "theta")] = 0.25
    delta[2, md.dof(2, "v")] = 0.1                           # 5 % of 2 m: in range
    check = RangeCheck(md, "body 'b'")
    check.update(t[:2], delta[:2])
    check.update(t[2:], delta[2:])                           # a second block
    assert (check.rotation.value, check.rotation.t_value, check.rotation.t_first) == (0.3, 0.5, 0.5)
    assert check.deflection.value == pytest.approx(0.05, rel=1e-15) and check.deflection.t_first is None
    assert check.message().startswith("body 'b' leaves the range of the linear-strain floating-frame model: node "
                                      "rotations up to 0.3 rad (at t = 0.5 s; beyond 0.2 rad from t = 0.5 s); ")
    assert (ROTATION_LIMIT, DEFLECTION_LIMIT) == (0.2, 0.1)


def test_rotating_bar_defaults_are_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RangeWarning)
        runs = rotating_bar.run()
    assert runs["undamped"].message == "Reached t_end = 0.1."


@pytest.mark.slow
def test_spinup_beam_defaults_are_silent():
    """The stiffened spin-up beam (tip down to 0.57 m of 10 m, 5.7 %) is in range; the unstiffened
    one diverges, and its message names that cause instead."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RangeWarning)
        runs = spinup_beam.run()
    assert runs["stiffened"].message == "Reached t_end = 20."
    assert runs["unstiffened"].status == "diverged" and "Warning" not in runs["unstiffened"].message
