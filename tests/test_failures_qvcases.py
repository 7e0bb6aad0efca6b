"""Bad input to the formulation-comparison cases on `flexmbs.run` (issue 21, items 4 and 6): the
registry's `system_formulation`, the cases' `registry_formulation` (cases/_comparison.py), and a
sweep of a case that imports its sibling helper module."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flexmbs.formulations.registry import system_formulation

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))
import three_bodies  # noqa: E402
from _comparison import registry_formulation  # noqa: E402

SYSTEMS = "lagrange, gibbs-appell, hamilton, udwadia-kalaba, index3, maggi, kane, volterra, volterra-reduced"

BAD_CALLS = [
    # (what is called, the message it now gives)
    ("system_formulation of a misspelt name",
     lambda: system_formulation("volterra_reduced", three_bodies.build().system),
     f"`name` 'volterra_reduced' is not a formulation; a System's formulations are {SYSTEMS}"),
    ("registry_formulation of a System formulation the comparison does not hold",
     lambda: registry_formulation(three_bodies.build(), "udwadia-kalaba", "DOP853"),
     "`formulation` must be one of lagrange, maggi, kane, volterra, volterra-reduced, got 'udwadia-kalaba'"),
]


@pytest.mark.parametrize(("call", "message"), [b[1:] for b in BAD_CALLS], ids=[b[0] for b in BAD_CALLS])
def test_bad_call_names_the_argument(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert str(err.value) == message


def test_registry_formulation_maps_lagrange_with_index3_alpha_to_index3():
    model = three_bodies.build()
    assert registry_formulation(model, "lagrange", "index3-alpha") == ("index3", {})
    assert registry_formulation(model, "lagrange", "DOP853") == ("lagrange", {"stabilization": "none"})
    name, options = registry_formulation(model, "volterra-reduced", "RK45")
    assert name == "volterra-reduced" and options["ignorable"] == ("X", "Y", "Z")


def test_a_sweep_of_a_comparison_case_finds_its_sibling_module(tmp_path):
    """`flexmbs.sweep` imports the case by path in a fresh process: `from _comparison import` must
    work without the tests' sys.path (the case's directory goes on it, as in `flexmbs run`)."""
    code = ("from flexmbs.sweep import sweep; rows = sweep('cases/three_bodies.py', "
            "fixed=dict(t_end=0.2, dt_out=0.1, plots=False), out=%r, workers=1); "
            "print([r['status'] for r in rows])" % str(tmp_path / "sweep"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "['finished']"
