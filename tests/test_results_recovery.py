"""Damaged results files fail fast and give back what they still hold (issue 11, item 3).

Before, `load_results`, `flexmbs results` and `flexmbs export` opened files in HDF5's SWMR
read mode, which retries a failed metadata read for hours: a truncated file hung them.  Every
check that opens a damaged file runs in a subprocess under a timeout, so that a regression
fails the test instead of hanging the suite.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.io import DamagedFileError
from flexmbs.io.recovery import RepairedView, lookup3, read_superblock
from flexmbs.io import store
from flexmbs.io.store import LIBVER, ResultsFile

ROOT = Path(__file__).resolve().parents[1]


def test_lookup3_matches_jenkins_published_values():
    """hashlittle test values printed by the driver of Jenkins' lookup3.c (2006)."""
    assert lookup3(b"") == 0xDEADBEEF
    assert lookup3(b"", 0xDEADBEEF) == 0xBD5B7DDE
    assert lookup3(b"Four score and seven years ago") == 0x17770551
    assert lookup3(b"Four score and seven years ago", 1) == 0xCD628161


def bar_model():
    mesh = fm.generate.line(4, 1.0)
    bar = fm.Bar2(fm.Material(E=210e9, rho=50_000.0), area=0.2e-4)
    return fm.Model(mesh, bar, motion=fm.motion.ConstantRotation(15.0), fixed=[("start", "all")],
                    loads=[fm.NodalLoad("end", "u", 1.0, lambda t: np.sin(200.0 * t))])


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``clean``: two finished runs; ``killed``: the same file with a third run, copied while it
    was being written (the state a killed writer leaves: consistency flags set).  Chunks of
    256 bytes (instead of 32 kB) spread each time series over many chunks, as in a long run."""
    tmp = tmp_path_factory.mktemp("files")
    res = fm.run(bar_model(), t_end=0.006, dt_out=5e-5)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(store, "CHUNK_BYTES", 256)
        rf = ResultsFile(tmp / "writing.h5")
        rf.add(res, "first")
        rf.add(res, "second")
        shutil.copy(rf.path, tmp / "clean.h5")
        writer = rf.open_run("third", nodes=res.nodes, cells=res.cells)
        for i in range(100):
            writer.append({"t": res.t[i], "displacement": res.displacement[i]})
        shutil.copy(rf.path, tmp / "killed.h5")        # flushed, flags set: as if killed here
        writer.finish()
    return {"clean": tmp / "clean.h5", "killed": tmp / "killed.h5"}


def test_superblock_and_repaired_view(files):
    clean, killed = read_superblock(files["clean"]), read_superblock(files["killed"])
    assert clean.version == 3 and clean.flags == 0 and clean.eof == clean.size
    assert killed.open_for_writing and not killed.truncated
    with pytest.raises(OSError, match="already open for write"):
        h5py.File(files["killed"], "r")                # what HDF5's normal read mode says
    data = files["clean"].read_bytes()
    cut = files["clean"].with_name("cut.h5")
    cut.write_bytes(data[:len(data) // 2])
    sb = read_superblock(cut)
    assert sb.truncated and sb.size == len(data) // 2 and sb.eof == len(data)
    with RepairedView(cut, sb) as view:                 # ends where the file ends, and says so
        assert view.seek(0, 2) == len(data) // 2
        view.seek(0)
        head = view.read(len(sb.header))
    assert int.from_bytes(head[28:36], "little") == len(data) // 2 and head[36:44] == sb.header[36:44]
    sb = read_superblock(files["killed"])
    with RepairedView(files["killed"], sb) as view:
        head = view.read(len(sb.header))
    assert head[11] == 0 and head[:11] == sb.header[:11] and head[12:-4] == sb.header[12:-4]
    patched = files["killed"].with_name("patched_header.h5")
    patched.write_bytes(head)
    assert read_superblock(patched).flags == 0          # its checksum holds (else a ValueError)


PROBE = textwrap.dedent("""
    import io, json, sys
    from contextlib import redirect_stdout, redirect_stderr
    import numpy as np
    import flexmbs as fm
    from flexmbs.cli import main
    out = {}
    for path in sys.argv[1:]:
        r = out[path] = {}
        try:
            r["runs"] = fm.io.list_runs(path)
        except ValueError as err:
            r["list_error"] = [type(err).__name__, str(err)]
        for run in r.get("runs", {}):
            try:
                res = fm.load_results(path, run)
                r[run] = {"status": res.status, "message": res.message, "n": len(res.t),
                          "t": res.t.tolist(), "u": np.where(np.isnan(res.displacement), None,
                                                                    res.displacement).tolist()}
            except ValueError as err:
                r[run] = {"error": [type(err).__name__, str(err)]}
        for command in (["results", path], ["export", path, "--out", path + "_paraview"]):
            text = io.StringIO()
            with redirect_stdout(text), redirect_stderr(text):
                code = main(command)
            r[command[0]] = [code, text.getvalue()]
    print(json.dumps(out))
""")


def probe(paths, timeout=120):
    """list_runs, load_results of every run, `flexmbs results` and `flexmbs export` of each file,
    in a subprocess that must finish within ``timeout`` seconds."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *map(str, paths)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_truncated_files_fail_fast_and_keep_the_outputs_before_the_cut(files, tmp_path):
    fractions = (0.001, 0.2, 0.4, 0.6, 0.75, 0.85, 0.9, 0.97, 0.995)
    cuts = {}
    for kind, source in files.items():
        data = source.read_bytes()
        for q in fractions:
            path = tmp_path / f"{kind}_{q}.h5"
            path.write_bytes(data[:int(q * len(data))])
            cuts[path] = (kind, int(q * len(data)))
        if kind != "clean":                               # HDF5 opens only the clean file as it is
            continue
        # and a cut inside the node coordinates of the last run: that run is lost, the runs before
        # it are whole (where a fraction falls depends on the writer's block sizes)
        with h5py.File(source, "r", locking=False) as f:
            last = max(f, key=lambda run: f[run]["nodes"].id.get_offset())
            at = f[last]["nodes"].id.get_offset() + 8
        path = tmp_path / f"{kind}_in_nodes_of_{last}.h5"
        path.write_bytes(data[:at])
        cuts[path] = (kind, at)
    seen = probe(cuts)                                    # the subprocess's timeout: no hang
    whole = {kind: {run: fm.load_results(path, run) for run in fm.io.list_runs(path)} for kind, path in files.items()}
    counts = {"nothing": 0, "run lost": 0, "part of a run": 0, "whole run": 0}
    for path, (kind, size) in cuts.items():
        r = seen[str(path)]
        for command in ("results", "export"):            # exit status 1 and the damage named
            code, text = r[command]
            assert code == 1 and "is damaged" in text and f"ends at byte {size} " in text, (path.name, text)
        if "list_error" in r:
            name, message = r["list_error"]
            assert name == "DamagedFileError" and "Nothing can be recovered" in message
            counts["nothing"] += 1
            continue
        for run, ref in whole[kind].items():
            got = r[run]
            if "error" in got:
                assert got["error"][0] == "DamagedFileError" and f"Run {run!r} cannot be recovered" in got["error"][1]
                assert r["runs"][run] == "damaged"
                counts["run lost"] += 1
                continue
            n = got["n"]
            # the outputs recovered are the first n written, exactly (stored values, no arithmetic)
            np.testing.assert_array_equal(got["t"], ref.t[:n])
            u = np.array(got["u"], dtype=float).reshape(n, *ref.displacement.shape[1:])
            if "lost: " in got["message"] and "displacement" in got["message"].split("lost: ")[1].split(";")[0]:
                assert np.isnan(u).all()                  # a lost series is NaN, never zeros
            else:
                np.testing.assert_array_equal(u, ref.displacement[:n])
            if got["status"] == "damaged":
                assert f"{n} of the run's {len(ref.t)} outputs were recovered" in got["message"]
                assert r["runs"][run] == "damaged"
                counts["part of a run" if n < len(ref.t) else "whole run"] += 1
            else:                                         # the cut came after all of this run
                assert n == len(ref.t) and got["status"] == ref.status
                assert "the file is truncated after this run's data" in got["message"]
                counts["whole run"] += 1
    assert all(counts.values()), counts                   # every outcome was met


def test_corrupted_files_fail_fast(files, tmp_path):
    """Bytes overwritten in the middle: a clean file and a killed writer's file fail at once with
    "damaged"; a file that is not HDF5 at all is named as such."""
    paths = []
    for kind in ("clean", "killed"):
        data = bytearray(files[kind].read_bytes())
        for start in (48, len(data) // 2, len(data) - 3000):      # after the superblock, mid-file, near the end
            data[start:start + 2000] = np.random.default_rng(start).bytes(2000)
        paths.append(tmp_path / f"{kind}_corrupt.h5")
        paths[-1].write_bytes(bytes(data))
    seen = probe(paths)
    for path in paths:
        r = seen[str(path)]
        texts = [r["results"][1], r["export"][1]] + [json.dumps(v) for v in r.values()]
        assert r["results"][0] == 1 and any("damaged" in t for t in texts), r["results"]
    not_hdf5 = tmp_path / "text.h5"
    not_hdf5.write_text("x" * 2000)
    with pytest.raises(ValueError, match="cannot read .* as an HDF5 results file"):
        fm.load_results(not_hdf5)
    tiny = tmp_path / "tiny.h5"
    tiny.write_bytes(files["clean"].read_bytes()[:30])
    with pytest.raises(DamagedFileError, match="shorter than its HDF5 superblock"):
        fm.load_results(tiny)


def test_a_file_written_by_another_hdf5_user_is_not_taken_for_results(tmp_path):
    path = tmp_path / "other.h5"
    with h5py.File(path, "w", libver=LIBVER) as f:
        f["x"] = np.arange(3.0)
    with pytest.raises(ValueError, match="not a flexmbs results file"):
        fm.load_results(path)


@pytest.mark.slow
def test_another_process_reads_a_file_while_it_is_written(tmp_path):
    """The normal read mode through `RepairedView` instead of SWMR: a reader in another process
    sees a growing, always readable run (a read that catches the writer mid-flush is repeated)."""
    path = tmp_path / "live.h5"
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        import numpy as np, flexmbs as fm
        from tests.test_results_recovery import bar_model
        def started(t, x):
            if t == 0.0:
                print("writing", flush=True)
        fm.run(bar_model(), t_end=0.01, dt_out=4e-5, method="RK45", store={str(path)!r}, on_output=started)
    """)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "writing"
        counts, deadline = [], time.monotonic() + 60
        while writer.poll() is None and time.monotonic() < deadline:
            res = fm.load_results(path)                 # raises if a read fails for good
            counts.append(len(res.t))
    finally:
        writer.kill() if writer.poll() is None else None
        writer.wait()
    assert writer.returncode == 0 and len(counts) >= 5 and counts == sorted(counts), counts
    final = fm.load_results(path)
    assert final.status == "finished" and len(final.t) == 251 and counts[-1] <= 251
