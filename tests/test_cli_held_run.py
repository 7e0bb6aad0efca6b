"""`flexmbs run` summarises a case's one run from the Results the run returned
(`ResultsFile.keep_last` / `take_last`) instead of reading results.h5 back: the same lines and the same
ParaView files as from the file; a run opened after it, or several runs, are read back one at a time."""
import sys
from pathlib import Path

import h5py
import numpy as np

import flexmbs as fm
from flexmbs import cli, io

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import pendulum_a01  # noqa: E402


def datasets(path) -> dict:
    """{name: array} of the datasets of an HDF5 file."""
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out


def test_one_run_summarised_from_the_returned_results(tmp_path, capsys, monkeypatch):
    """The command reads no run back (load_results is not called) and writes the ParaView files that
    export_paraview writes from the file's run, dataset by dataset."""
    out = tmp_path / "tp"
    read = []
    load = io.load_results
    monkeypatch.setattr(io, "load_results", lambda *a, **k: read.append(a) or load(*a, **k))
    assert cli.main(["run", "triple_pendulum", "--set", "t_end=0.05", "--set", "dt_out=0.01", "--set",
                     "coordinates=euler-parameters", "--set", "integrator=index3-alpha", "--set",
                     "stabilization=none", "--no-plots", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert read == []
    assert "run triple_pendulum: finished, 6 outputs to t = 0.05 s" in printed
    res = load(out / "results.h5", "triple_pendulum")
    again = tmp_path / "again"
    again.mkdir()
    io.export_paraview(res, again, stem="paraview")
    assert "\n".join(f"    {line}" for line in cli.system_summary(res)) in printed
    assert (out / "paraview.xdmf").read_text() == (again / "paraview.xdmf").read_text()
    mine, theirs = datasets(out / "paraview.h5"), datasets(again / "paraview.h5")
    assert sorted(mine) == sorted(theirs)
    for name in mine:
        np.testing.assert_array_equal(mine[name], theirs[name])


def test_the_last_run_is_held_until_another_opens(tmp_path):
    """keep_last holds one run's Results; open_run drops it (no Results held while another runs), and
    take_last hands it over once."""
    system = pendulum_a01.build()[0]
    with io.recording(tmp_path / "r.h5") as f:
        first = fm.run(system, method="index3-alpha", h=1e-3, t_end=0.01, t_eval=[0.0, 0.01], name="a")
        last = f.take_last()
        assert last[0] == "a" and last[1] is first
        assert f.take_last() is None
        fm.run(system, method="index3-alpha", h=1e-3, t_end=0.01, t_eval=[0.0, 0.01], name="b")
        with f.open_run("c", nodes=np.zeros((0, 3)), cells={}):
            pass
        assert f.take_last() is None
