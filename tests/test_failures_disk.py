"""A full disk is an error, never a crash (issue 20, item 4).

Each writer stops with "no space left on device: N outputs kept in FILE" (an OSError with errno
ENOSPC, `flexmbs.io.DiskFullError`), the results file keeps the outputs written wholly before
and says "disk full", and `flexmbs run` exits with status 74 without a traceback.

Without root the full disk is faked where HDF5 (or numpy) writes: `h5py.File.flush` of the
run's file (SWMR mode) raises after ``room`` outputs, as HDF5 does on a full disk (h5py raises
its error as a RuntimeError naming "errno = 28", or an OSError with errno 28).  As root, a real
1 MiB tmpfs is filled (`tmpfs` fixture; skipped where mount is not permitted), in a subprocess:
before the fix, HDF5 crashed the process at exit (a segmentation fault, status 139).
"""
import errno
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import h5py
import numpy as np
import pytest

import flexmbs as fm
from flexmbs import cli, io
from flexmbs.case import write_results
from flexmbs.io.recovery import read_superblock

from test_results_io import RUN, bar_model

ROOT = Path(__file__).resolve().parents[1]
HDF5_ENOSPC = ("Unable to synchronously flush file (file write failed: time = Fri Nov 27 07:40:31 2026, "
               "filename = '{file}', file descriptor = 3, errno = 28, error message = 'No space left on device', "
               "buf = 0x55b42f735873, total write size = 6101, bytes this sub-write = 6101, offset = 307200)")
# the text of HDF5 2.0's error from the real tmpfs run (h5py raises it as a RuntimeError)

pytestmark = pytest.mark.usefixtures("restore_logging")    # tests/conftest.py


def fill_after(monkeypatch, room: int, error: str = "hdf5") -> None:
    """The disk is full after ``room`` flushes of a file in SWMR mode (with ``on_output``, one
    flush per output); the other writes (the run's start and end) still fit."""
    real, count = h5py.File.flush, [0]

    def flush(self):
        if self.swmr_mode:
            count[0] += 1
            if count[0] > room:
                if error == "hdf5":
                    raise RuntimeError(HDF5_ENOSPC.format(file=self.filename))
                raise OSError(errno.ENOSPC, "No space left on device", self.filename)
        real(self)
    monkeypatch.setattr(h5py.File, "flush", flush)


def no_room_for(monkeypatch, name: str) -> None:
    """Writing a file whose name contains ``name`` fails as on a full disk, after a part of it."""
    real_text = Path.write_text

    def failing(real_savez):                  # np.savez (flexmbs.case) and np.savez_compressed (some cases)
        def savez(path, **arrays):
            if name in str(path):
                Path(path).write_bytes(b"PK\x03\x04 cut short")
                raise OSError(errno.ENOSPC, "No space left on device")
            real_savez(path, **arrays)
        return savez

    def write_text(self, text, *args, **kwargs):
        if name in self.name:
            real_text(self, text[:10], *args, **kwargs)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_text(self, text, *args, **kwargs)
    monkeypatch.setattr(np, "savez", failing(np.savez))
    monkeypatch.setattr(np, "savez_compressed", failing(np.savez_compressed))
    monkeypatch.setattr(Path, "write_text", write_text)


def no_room_for_paraview(monkeypatch) -> None:
    """The ParaView data file (written after the run) does not fit."""
    real = h5py.File.flush

    def flush(self):
        if self.filename.endswith("paraview.h5"):
            raise RuntimeError(HDF5_ENOSPC.format(file=self.filename))
        real(self)
    monkeypatch.setattr(h5py.File, "flush", flush)


def no_room_left(monkeypatch) -> None:
    """The disk has 100 kB free after the run: too little for its ParaView files."""
    import flexmbs.disk
    monkeypatch.setattr(flexmbs.disk, "free_bytes", lambda path: 100_000)


def run_into(path, monkeypatch, room, error="hdf5"):
    fill_after(monkeypatch, room, error)
    fm.run(bar_model(), store=path, on_output=lambda t, x: None, **RUN)


def no_room_at_all(monkeypatch) -> None:
    monkeypatch.setattr(h5py.File, "flush", lambda self: (_ for _ in ()).throw(
        OSError(errno.ENOSPC, "No space left on device")))


def create_on_a_full_disk(path, monkeypatch):
    no_room_at_all(monkeypatch)
    io.ResultsFile(path)


def start_without_room_for_the_reserve(path, monkeypatch):
    results_file = io.ResultsFile(path)
    real = Path.write_bytes
    monkeypatch.setattr(Path, "write_bytes", lambda self, data: (
        (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device")) if self.name.endswith(".reserve")
        else real(self, data)))
    fm.run(bar_model(), store=results_file, **RUN)


def summary_files(out, monkeypatch, name):
    no_room_for(monkeypatch, name)
    write_results(out, {"t": np.arange(3.0), "x": np.zeros((3, 2))}, {"status": "finished"})


CASES = [  # (description, call(tmp_path, monkeypatch), message it now prints; {tmp} is tmp_path)
    ("fm.run(store=...): HDF5's error after 10 of 21 outputs",
     lambda tmp, mp: run_into(tmp / "r.h5", mp, 10),
     "no space left on device: 10 outputs kept in {tmp}/r.h5"),
    ("fm.run(store=...): OSError(ENOSPC) at the first output",
     lambda tmp, mp: run_into(tmp / "r.h5", mp, 0, "oserror"),
     "no space left on device: 0 outputs kept in {tmp}/r.h5"),
    ("ResultsFile(path): the new file's header does not fit",
     lambda tmp, mp: create_on_a_full_disk(tmp / "r.h5", mp),
     "no space left on device: 0 outputs kept in {tmp}/r.h5"),
    ("fm.run(store=ResultsFile): no room for the writer's reserve",
     lambda tmp, mp: start_without_room_for_the_reserve(tmp / "r.h5", mp),
     "no space left on device: 0 outputs kept in {tmp}/r.h5; run 'run' could not start"),
    ("write_results: results.npz",
     lambda tmp, mp: summary_files(tmp / "o", mp, "results"),
     "no space left on device: 0 outputs kept in {tmp}/o/results.npz; the run's 3 outputs and its summary.json "
     "could not be written"),
    ("write_results: summary.json",
     lambda tmp, mp: summary_files(tmp / "o", mp, "summary"),
     "no space left on device: 3 outputs kept in {tmp}/o/results.npz; summary.json could not be written"),
]


@pytest.mark.parametrize(("call", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_full_disk_names_what_was_kept(call, message, tmp_path, monkeypatch):
    with pytest.raises(io.DiskFullError) as info:
        call(tmp_path, monkeypatch)
    assert str(info.value) == message.format(tmp=tmp_path)
    assert isinstance(info.value, OSError) and info.value.errno == errno.ENOSPC
    assert str(pickle.loads(pickle.dumps(info.value))) == str(info.value)        # from a sweep's worker
    assert not list(tmp_path.rglob(".*.reserve")) and not list(tmp_path.rglob(".*.part*"))


def test_the_file_keeps_the_outputs_before_and_says_disk_full(tmp_path, monkeypatch):
    path = tmp_path / "r.h5"
    with pytest.raises(io.DiskFullError) as info:
        run_into(path, monkeypatch, 10)
    monkeypatch.undo()
    back = fm.load_results(path)
    assert back.status == io.DISK_FULL == "disk full" and back.message == str(info.value)
    assert io.list_runs(path) == {"run": "disk full"}
    ref = fm.run(bar_model(), **RUN)
    np.testing.assert_array_equal(back.t, ref.t[:10])
    np.testing.assert_allclose(back.displacement, ref.displacement[:10], rtol=1e-12, atol=1e-20)
    assert read_superblock(path).flags == 0                     # closed: read in HDF5's normal mode


def test_a_run_that_fits_leaves_no_reserve(tmp_path):
    res = fm.run(bar_model(), store=tmp_path / "r.h5", **RUN)
    assert res.status == "finished" and sorted(p.name for p in tmp_path.iterdir()) == ["r.h5"]


def test_a_full_disk_when_the_run_records_its_end(tmp_path, monkeypatch):
    """The run finished, its outputs are on disk, the disk fills while its status and works are
    written: "disk full", every output, and the status the run had."""
    from flexmbs.io import store
    path, real, calls = tmp_path / "r.h5", store._record, []

    def record(*args, **kwargs):
        calls.append(args[2])
        if len(calls) == 1:
            raise RuntimeError(HDF5_ENOSPC.format(file=path))
        real(*args, **kwargs)
    monkeypatch.setattr(store, "_record", record)
    with pytest.raises(io.DiskFullError) as info:
        fm.run(bar_model(), store=path, **RUN)
    assert calls == ["finished", "disk full"]
    assert str(info.value) == (f"no space left on device: 21 outputs kept in {path}; the run had ended "
                               "(finished: Reached t_end = 0.002.); its works are lost")
    back = fm.load_results(path)
    assert back.status == "disk full" and len(back.t) == 21 and "W_loads" not in back.energies


FAKE_CASE = '''"""A tiny spinning bar whose results file fills the disk."""
import flexmbs as fm
from flexmbs.case import write_results

DEFAULTS = dict(summary=False)


def run(out=None, summary=False):
    model = fm.Model(fm.generate.line(3, 1.0), fm.Bar2(fm.Material(E=1e9, rho=1000.0), 1e-4),
                     motion=fm.motion.ConstantRotation(10.0), fixed=[("start", "all")])
    if summary:                       # a multibody case: its own results.npz and summary.json
        res = fm.run(model, t_end=2e-3, dt_out=2e-4, store=False)
        write_results(out, {"t": res.t}, {"status": res.status})
        return {"status": res.status, "t": res.t}
    return fm.run(model, t_end=2e-3, dt_out=2e-4, on_output=lambda t, x: None)
'''


@pytest.fixture
def cases_dir(tmp_path):
    d = tmp_path / "cases"
    d.mkdir()
    (d / "filler.py").write_text(FAKE_CASE)
    return d


@pytest.mark.parametrize(("args", "fake", "message"), [
    ([], lambda mp: fill_after(mp, 4), "no space left on device: 4 outputs kept in {out}/results.h5"),
    ([], no_room_at_all, "no space left on device: 0 outputs kept in {out}/results.h5"),
    (["--set", "summary=true"], lambda mp: no_room_for(mp, "summary"),
     "no space left on device: 11 outputs kept in {out}/results.npz; summary.json could not be written"),
    ([], no_room_for_paraview,
     "no space left on device: 11 outputs kept in {out}/results.h5; {out}/paraview.h5 could not be written"),
    ([], no_room_left,
     "no space left on device: 11 outputs kept in {out}/results.h5; {out}/paraview.h5 could not be written"),
], ids=["results.h5", "results.h5 not even created", "summary.json", "paraview.h5", "paraview.h5 predicted"])
def test_flexmbs_run_on_a_full_disk_exits_74_with_the_message(args, fake, message, tmp_path, capsys, cases_dir):
    out = tmp_path / "o"
    with pytest.MonkeyPatch.context() as mp:
        fake(mp)
        code = cli.main(["run", "filler", "--cases", str(cases_dir), "--out", str(out), *args])
    captured = capsys.readouterr()
    assert code == cli.EXIT_IO == 74
    assert captured.err.strip().splitlines()[-1] == "flexmbs run: error: " + message.format(out=out)
    assert "Traceback" not in captured.err
    assert not list(out.glob("paraview*"))                      # not attempted, or removed
    if fake not in (no_room_for_paraview, no_room_left):
        assert "stopped, the disk is full" in captured.out
    if not args and fake not in (no_room_for_paraview, no_room_left, no_room_at_all):
        assert fm.load_results(out / "results.h5").status == "disk full"
        assert "run filler: disk full, 4 outputs to t = 0.0006 s" in captured.out


# ------------------------------------------------------------------------------ a real full disk
@pytest.fixture
def tmpfs(tmp_path):
    """A 1 MiB tmpfs (root only; skipped where mount is not permitted)."""
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"mount not permitted: {done.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def python(script: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=600)


FILL = '''
def fill_when(t_fill, directory):
    """An on_output that, from t_fill on, fills the disk of ``directory`` with a ballast file: another
    program taking the space during the run, which the size check before the run cannot foresee."""
    import errno, os
    done = []

    def on_output(t, x):
        if t < t_fill or done:
            return
        done.append(t)
        fd = os.open(os.path.join(directory, "ballast"), os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, bytes(65536))
        except OSError as err:
            if err.errno != errno.ENOSPC:
                raise
        finally:
            os.close(fd)
    return on_output
'''


@pytest.mark.slow
def test_fm_run_on_a_real_full_disk(tmpfs):
    """The run fits the free disk when it starts (the size check passes); another writer then fills
    the disk at t = 5e-4 s: the run keeps the outputs written before."""
    path = tmpfs / "r.h5"
    done = python(FILL + f"""
import flexmbs as fm
from test_results_io import bar_model
try:
    fm.run(bar_model(n_el=100), formulation="hamilton", t_end=2e-3, dt_out=2e-5, store={str(path)!r},
           on_output=fill_when(5e-4, {str(tmpfs)!r}))
except fm.io.DiskFullError as err:
    print(err.kept)
    print(err)
""", tmpfs.parent)
    assert done.returncode == 0, done.stderr[-2000:]           # before: 139, a segmentation fault
    kept, message = done.stdout.splitlines()
    assert message == f"no space left on device: {kept} outputs kept in {path}" and int(kept) > 10
    back = fm.load_results(path)
    assert back.status == "disk full" and back.message == message and len(back.t) == int(kept)
    ref = fm.run(bar_model(n_el=100), formulation="hamilton", t_end=2e-3, t_eval=back.t)
    np.testing.assert_allclose(back.displacement, ref.displacement, rtol=1e-6, atol=1e-9 * np.abs(ref.displacement).max())
    assert not list(tmpfs.glob(".*.reserve"))


@pytest.mark.slow
def test_flexmbs_run_on_a_real_full_disk(tmpfs, cases_dir):
    """As above, through `flexmbs run`: the disk is filled by another writer at t = 5e-4 s."""
    out = tmpfs / "o"
    (cases_dir / "filler.py").write_text(
        FAKE_CASE.replace("line(3,", "line(100,").replace("dt_out=2e-4, on_output=lambda t, x: None",
                                                          f"dt_out=2e-5, on_output=fill_when(5e-4, {str(out)!r})")
        + FILL)
    done = subprocess.run([sys.executable, "-m", "flexmbs", "run", "filler", "--cases", str(cases_dir),
                           "--out", str(out)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 74, (done.returncode, done.stderr[-2000:])          # before: 139
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    kept = len(fm.load_results(out / "results.h5").t)
    assert last == f"flexmbs run: error: no space left on device: {kept} outputs kept in {out}/results.h5"
    assert io.list_runs(out / "results.h5") == {"filler": "disk full"} and kept > 10
