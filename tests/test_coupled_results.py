"""The coupled mechanism cases on `flexmbs.run` (issue 21, items 4 and 6): `flexmbs run slider_crank
--set coupled=true` streams the System run into DIR/results.h5 (run "coupled"), which
`flexmbs.load_results` reads with every body, the multipliers and the case's own numbers; a run
killed with SIGKILL keeps the outputs flushed before (status "incomplete")."""
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs import cli
from flexmbs.mechanisms.coupled import torque_about

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))

import slider_crank  # noqa: E402


def test_cli_writes_the_coupled_run_with_every_body(tmp_path):
    """results.h5 holds run "coupled", finished, with the crank, rod and slider; the rod's displacements
    are the case's results.npz's and not zero; the multipliers read back give the case's drive torque."""
    out = tmp_path / "sc"
    assert cli.main(["run", "slider_crank", "--set", "coupled=true", "--set", "elements=2", "--set",
                     "revolutions=0.05", "--no-plots", "--no-paraview", "--out", str(out)]) == 0
    assert fm.io.list_runs(out / "results.h5") == {"coupled": "finished"}
    res = fm.load_results(out)
    assert res.status == "finished" and res.metadata["run"] == "coupled" and res.metadata["method"] == "index3-alpha"
    assert {name: b.kind for name, b in res.bodies.items()} == {"crank": "rigid", "rod": "flexible",
                                                               "slider": "rigid"}
    rod = res.bodies["rod"]
    with np.load(out / "results.npz") as npz:
        np.testing.assert_array_equal(npz["t"], res.t)
        np.testing.assert_array_equal(npz["displacement"], rod.displacement)
        drive_torque = npz["drive_torque"]
    assert rod.displacement.shape == (len(res.t), 3, 2) and np.abs(rod.displacement).max() > 1e-5   # 0.07 mm
    system = slider_crank.build_coupled(elements=2)[0]
    assert res.multipliers.shape == (len(res.t), system.n_c) and res.constraint_names == tuple(system.row_names())
    history = system.reaction_history(res.t, res.q, res.multipliers, ["drive"])
    np.testing.assert_array_equal(torque_about(history["drive"], system.body("crank")), drive_torque)


def test_a_killed_coupled_run_keeps_its_first_outputs(tmp_path):
    """SIGKILL of `flexmbs run slider_crank --set coupled=true --set revolutions=40` (1.7 s of motion,
    28 801 outputs) once outputs beyond t0 are on disk: results.h5 loads, status "incomplete", with
    every body at those outputs (no multipliers: they are written at the end)."""
    out = tmp_path / "sc"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "flexmbs", "run", "slider_crank", "--set", "coupled=true",
                             "--set", "revolutions=40", "--no-plots", "--no-paraview", "--out", str(out)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            try:
                if len(fm.load_results(out).t) > 1:                       # beyond t0: a block on disk
                    break
            except (OSError, ValueError):                               # not created yet
                continue
    finally:
        proc.kill()
        proc.wait()
    back = fm.load_results(out)
    assert back.status == "incomplete" and "killed" in back.message
    n_t = len(back.t)
    assert 1 < n_t < 28_801 and back.t[0] == 0.0
    np.testing.assert_allclose(np.diff(back.t), np.radians(0.5) / 150.0, rtol=1e-9)      # every 0.5 deg
    assert sorted(back.bodies) == ["crank", "rod", "slider"] and back.multipliers is None
    for body in back.bodies.values():
        assert body.position.shape == (n_t, 3) and np.all(np.isfinite(body.position))
    assert np.abs(back.bodies["rod"].displacement[-1]).max() > 0.0
    assert back.q.shape == (n_t, 45) and np.all(np.isfinite(back.q))
