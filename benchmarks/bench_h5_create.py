"""What creating results.h5 costs: the store's calls of a run replayed on a new file (issue 22).

    python benchmarks/bench_h5_create.py [--repeat 30] [--cases triple,slider-crank,bar]

Each case runs once through ``flexmbs run`` in this process (its store calls recorded: the run's
opening with its meshes, its blocks of outputs, its end with the multipliers or works), then the
same calls are replayed ``--repeat`` times on a new results.h5 and timed by CPU time
(``time.process_time``): the file's creation, the run's opening (group, meshes), the creation of
its time series with their dimension scales (``RunWriter._create``, SWMR switch included), the
labelling inside it (`label_dimensions`), and the end (``_record``: the datasets written at the
end and their labels).  Each timing is printed for the scales attached one axis at a time by
HDF5's ``H5DSattach_scale`` (``per-axis``) and by `flexmbs.io.h5create.attach_scales`
(``bulk``), replayed in turns so the machine's load falls on both alike: least and median [ms].

``--cold``: each replay in a new process (the recorded calls pickled), the first store of that
process, as in a ``flexmbs run`` process: HDF5's first conversions between two types, h5py's first
calls and flexmbs's empty caches are in it.
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


ATTACH = {"per-axis": per_axis, "bulk": getattr(h5create, "attach_scales", None), "before": None}


def replay_cold(pickled: Path, attach: str, path: Path, root: Path | None = None) -> dict:
    """`replay` of the pickled calls in a new process with ``attach`` ("per-axis" or "bulk"; "before":
    the checkout ``root`` as it is)."""
    env = {**os.environ, **({"BENCH_H5_ROOT": str(root)} if root else {})}
    out = subprocess.run([sys.executable, __file__, "--replay", str(pickled), "--attach", attach, "--out", str(path)],
                         check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--cases", default="triple,slider-crank")
    parser.add_argument("--cold", action="store_true", help="each replay in a new process")
    parser.add_argument("--before", type=Path, help="with --cold: a row for an older checkout DIR as it is")
    parser.add_argument("--replay", help=argparse.SUPPRESS)           # a --cold child: the pickled calls
    parser.add_argument("--attach", default="bulk", choices=ATTACH, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.replay:
        if args.attach != "before":
            h5create.attach_scales = ATTACH[args.attach]
        with open(args.replay, "rb") as f:
            calls = pickle.load(f)
        print(json.dumps(replay(calls, Path(args.out))))
        return
    bulk = h5create.attach_scales
    print(f"# {platform.node()}, {platform.machine()}, Python {platform.python_version()}, "
          f"h5py {h5py.__version__}, HDF5 {h5py.version.hdf5_version}; CPU time [ms], least / median "
          f"of {args.repeat}" + (", each the first store of a new process" if args.cold else ""))
    print("| case | attach | " + " | ".join(PHASES)
          + " |")
    print("|---|---|" + "---:|" * len(PHASES))
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases.split(","):
            calls = record_calls(case, Path(tmp) / case)
            pickled = Path(tmp) / f"{case}.pickle"
            with open(pickled, "wb") as f:
                pickle.dump({k: v for k, v in calls.items() if k != "writer"}, f)
            times = {"per-axis": [], "bulk": [], **({"before": []} if args.cold and args.before else {})}
            for k in range(args.repeat):
                for label in times:
                    attach = ATTACH[label]
                    if args.cold:
                        times[label].append(replay_cold(pickled, label, Path(tmp) / f"{case}-{label}-{k}.h5",
                                                        args.before if label == "before" else None))
                        continue
                    h5create.attach_scales = attach
                    try:
                        times[label].append(replay(calls, Path(tmp) / f"{case}-{label}-{k}.h5"))
                    finally:
                        h5create.attach_scales = bulk
            for label, runs in times.items():
                cells = [f"{1e3 * min(r[p] for r in runs):.1f} / {1e3 * statistics.median(r[p] for r in runs):.1f}"
                         if p in runs[0] else "-" for p in PHASES]
                print(f"| {case} | {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
