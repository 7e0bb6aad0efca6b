"""What creating results.h5 costs: the store's calls of a run replayed on a new file (issue 22).

    python benchmarks/bench_h5_create.py [--repeat 30] [--cases triple,slider-crank,bar] [--cold [--before DIR]]
    python benchmarks/bench_h5_create.py --synthetic 10,30,100,300 [--repeat 15]

Each case runs once through ``flexmbs run`` in this process (its store calls recorded: the run's
opening with its meshes, its blocks of outputs, its end with the multipliers or works), then the
same calls are replayed ``--repeat`` times on a new results.h5 and timed by CPU time
(``time.process_time``): the file's creation, the run's opening (group, meshes), the creation of
its time series with their dimension scales (``RunWriter._create``, SWMR switch included), the
labelling inside it (`label_dimensions`), and the end (``_record``: the datasets written at the
end and their labels).  Each timing is printed for the scales attached one axis at a time by
HDF5's ``H5DSattach_scale`` (``per-axis``), by `flexmbs.io.h5create.attach_scales` writing the
lists itself (``bulk``) and as flexmbs does (``default``: in bulk from ``BULK_FROM`` datasets),
replayed in turns so the machine's load falls on all alike: least and median [ms].

``--cold``: each replay in a new process (the recorded calls pickled), the first store of that
process, as in a ``flexmbs run`` process: HDF5's first conversions between two types, h5py's first
calls and flexmbs's empty caches are in it; ``--before DIR`` adds a row for the checkout DIR as it
is (e.g. ``git archive COMMIT | tar -x -C DIR``).  ``--synthetic 10,30,100,300``: instead, the time
of one `attach_scales` call that attaches ``t`` and ``axis`` to N new series, per axis and in bulk.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import pickle
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

ROOT = Path(os.environ.get("BENCH_H5_ROOT", Path(__file__).resolve().parents[1]))    # a --before child: DIR
sys.path.insert(0, str(ROOT))

import flexmbs.io.h5create as h5create  # noqa: E402
import flexmbs.io.store as store  # noqa: E402
from flexmbs.cli import main as flexmbs_main  # noqa: E402

CASES = {
    "triple": ["triple_pendulum", "--set", "t_end=2", "--set", "coordinates=euler-parameters",
               "--set", "integrator=index3-alpha", "--set", "stabilization=none"],
    "slider-crank": ["slider_crank", "--set", "coupled=true"],
    "bar": ["rotating_bar"],
}


PHASES = ("file", "open run", "series", "labelling", "attaching", "end", "whole store")


def per_axis(labels) -> None:
    """The scales attached one axis at a time, by HDF5's ``H5DSattach_scale``."""
    for ds, scales in labels:
        for axis, scale in enumerate(scales):
            if scale is not None:
                h5py.h5ds.attach_scale(ds, scale, axis)


def record_calls(case: str, out: Path) -> dict:
    """The store calls of the case's first run: open_run's arguments, the blocks of outputs, finish's."""
    calls = {}
    open_run, append_many, finish = store.ResultsFile.open_run, store.RunWriter.append_many, store.RunWriter.finish

    def opening(self, name=None, **kw):
        writer = open_run(self, name, **kw)
        if "open" not in calls:
            calls.update(open=(self.metadata, name, kw), writer=writer, appends=[])
        return writer

    def appending(self, fields):
        if self is calls["writer"]:
            calls["appends"].append(fields)
        return append_many(self, fields)

    def finishing(self, *args, **kw):
        if self is calls["writer"]:
            calls.setdefault("finish", (args, kw))
        return finish(self, *args, **kw)
    store.ResultsFile.open_run, store.RunWriter.append_many, store.RunWriter.finish = opening, appending, finishing
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            flexmbs_main(["run", *CASES[case], "-q", "--no-plots", "--out", str(out)])
    finally:
        store.ResultsFile.open_run, store.RunWriter.append_many, store.RunWriter.finish = open_run, append_many, finish
    return calls


@contextlib.contextmanager
def timing(spent: dict):
    """Time (CPU) the phases of the store into ``spent``: name -> seconds, summed over calls."""
    patched = [(store.ResultsFile, "_create", "file"), (store.RunWriter, "__init__", "open run"),
               (store.RunWriter, "_create", "series"), (store, "label_dimensions", "labelling"),
               (h5create, "attach_scales", "attaching"), (store, "_record", "end")]
    patched = [(owner, name, label) for owner, name, label in patched if hasattr(owner, name)]   # --before
    originals = [(owner, name, getattr(owner, name)) for owner, name, _ in patched]
    for owner, name, label in patched:
        def timed(*args, _call=getattr(owner, name), _label=label, **kw):
            t0 = time.process_time()
            try:
                return _call(*args, **kw)
            finally:
                spent[_label] = spent.get(_label, 0.0) + time.process_time() - t0
        setattr(owner, name, timed)
    try:
        yield
    finally:
        for owner, name, call in originals:
            setattr(owner, name, call)


def replay(calls: dict, path: Path) -> dict:
    """The recorded calls on a new file at ``path``; the CPU time of each phase [s]."""
    spent = {}
    metadata, name, kw = calls["open"]
    args, finish_kw = calls["finish"]
    with timing(spent):
        t0 = time.process_time()
        results_file = store.ResultsFile(path, metadata)
        writer = results_file.open_run(name, **kw)
        for fields in calls["appends"]:
            writer.append_many(fields)
        writer.finish(*args, **finish_kw)
        spent["whole store"] = time.process_time() - t0
    return spent


MODES = ("per-axis", "bulk", "default")


@contextlib.contextmanager
def attaching(mode: str):
    """The scales attached "per-axis" (H5DSattach_scale, `per_axis`), in "bulk" (`attach_scales` with
    ``BULK_FROM`` 0) or as flexmbs does by "default" (in bulk from ``BULK_FROM`` datasets); "before":
    an older checkout as it is."""
    saved = {k: getattr(h5create, k) for k in ("attach_scales", "BULK_FROM") if hasattr(h5create, k)}
    if mode == "per-axis":
        h5create.attach_scales = per_axis
    elif mode == "bulk":
        h5create.BULK_FROM = 0
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(h5create, k, v)


def replay_cold(pickled: Path, mode: str, path: Path, root: Path | None = None) -> dict:
    """`replay` of the pickled calls in a new process, the scales attached as ``mode`` says
    (`attaching`; "before": the checkout ``root`` as it is)."""
    env = {**os.environ, **({"BENCH_H5_ROOT": str(root)} if root else {})}
    out = subprocess.run([sys.executable, __file__, "--replay", str(pickled), "--mode", mode, "--out", str(path)],
                         check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.splitlines()[-1])


def synthetic(n: int, mode: str, path: Path) -> float:
    """CPU time [s] of attaching ``t`` and ``axis`` to ``n`` new series of shape (0, 3) in one call."""
    with h5py.File(path, "w", libver=store.LIBVER) as f:
        t = h5create.new_dataset(f.id, "t", dtype="f8", shape=(0,), maxshape=(None,), chunks=(4096,))
        axis = h5create.new_dataset(f.id, "axis", np.array(["x", "y", "z"], dtype=h5py.string_dtype()))
        h5py.h5ds.set_scale(t, b"t")
        h5py.h5ds.set_scale(axis, b"axis")
        series = [h5create.new_dataset(f.id, f"bodies/b{k}/position", dtype="f8", shape=(0, 3), maxshape=(None, 3),
                                       chunks=(1365, 3)) for k in range(n)]
        with attaching(mode):
            t0 = time.process_time()
            h5create.attach_scales([(ds, [t, axis]) for ds in series])
            return time.process_time() - t0


def cell(runs: list) -> str:
    return f"{1e3 * min(runs):.1f} / {1e3 * statistics.median(runs):.1f}"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--cases", default="triple,slider-crank")
    parser.add_argument("--cold", action="store_true", help="each replay in a new process")
    parser.add_argument("--before", type=Path, help="with --cold: a row for an older checkout DIR as it is")
    parser.add_argument("--synthetic", help="N,N,...: attach t and axis to N series in one call instead")
    parser.add_argument("--replay", help=argparse.SUPPRESS)           # a --cold child: the pickled calls
    parser.add_argument("--mode", default="default", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.replay:
        with open(args.replay, "rb") as f:
            calls = pickle.load(f)
        with attaching(args.mode):
            print(json.dumps(replay(calls, Path(args.out))))
        return
    print(f"# {platform.node()}, {platform.machine()}, Python {platform.python_version()}, "
          f"h5py {h5py.__version__}, HDF5 {h5py.version.hdf5_version}; CPU time [ms], least / median "
          f"of {args.repeat}" + (", each the first store of a new process" if args.cold else ""))
    with tempfile.TemporaryDirectory() as tmp:
        if args.synthetic:
            print("| series | per-axis | bulk |\n|---:|---:|---:|")
            for n in map(int, args.synthetic.split(",")):
                times = {mode: [synthetic(n, mode, Path(tmp) / f"{mode}.h5") for _ in range(args.repeat)]
                         for mode in ("per-axis", "bulk")}
                print(f"| {n} | {cell(times['per-axis'])} | {cell(times['bulk'])} |")
            return
        print("| case | attach | " + " | ".join(PHASES) + " |")
        print("|---|---|" + "---:|" * len(PHASES))
        for case in args.cases.split(","):
            calls = record_calls(case, Path(tmp) / case)
            pickled = Path(tmp) / f"{case}.pickle"
            with open(pickled, "wb") as f:
                pickle.dump({k: v for k, v in calls.items() if k != "writer"}, f)
            times = {mode: [] for mode in (*MODES, *(["before"] if args.cold and args.before else []))}
            for k in range(args.repeat):
                for mode in times:
                    path = Path(tmp) / f"{case}-{mode}-{k}.h5"
                    if args.cold:
                        times[mode].append(replay_cold(pickled, mode, path, args.before if mode == "before" else None))
                        continue
                    with attaching(mode):
                        times[mode].append(replay(calls, path))
            for mode, runs in times.items():
                print(f"| {case} | {mode} | " + " | ".join(cell([r[p] for r in runs]) if p in runs[0] else "-"
                                                          for p in PHASES) + " |")


if __name__ == "__main__":
    main()
