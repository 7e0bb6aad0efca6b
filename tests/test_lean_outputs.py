"""The whole process outside the solve (issue 22, start-up): what a run computes and writes after
its integration, vectorised over the outputs, must equal what the per-output code gave.

Each test compares the batched result with the per-output one it replaced, on a short run.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.analysis import output_times
from flexmbs.compiled import Unsupported, kernel_status
from flexmbs.formulations.stabilization import violations

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))

import triple_pendulum  # noqa: E402

KERNEL = kernel_status().installed


def triple_run(coordinates: str, method: str):
    """The triple pendulum over 0.05 s, 11 outputs (index3-alpha, or AB4 on the index-1 equations)."""
    system = triple_pendulum.build(coordinates)
    options = dict(method=method, h=1e-3) if method == "index3-alpha" else dict(method=method, h=1e-3,
                                                                                 formulation="lagrange")
    res = fm.run(system, t_end=0.05, t_eval=output_times(0.05, 0.005), **options)
    assert res.status == "finished", res.message
    return system, res


@pytest.mark.skipif(not KERNEL, reason="the compiled kernel is not installed")
@pytest.mark.parametrize("coordinates, method", [("euler-parameters", "index3-alpha"), ("natural", "AB4")])
def test_triple_pendulum_violations_from_one_kernel_call_equal_the_per_output_ones(coordinates, method):
    """||C|| and ||C_q q' + C_t|| of all outputs from `CompiledSystem.terms_history` equal
    `stabilization.violations` output by output (the kernel and the numpy joints agree to round-off)."""
    system, res = triple_run(coordinates, method)
    batched = triple_pendulum.constraint_violations(system, res.t, res.q, res.v)
    looped = np.array([violations(system, t, q, v) for t, q, v in zip(res.t, res.q, res.v)])
    assert batched.shape == (len(res.t), 2)
    np.testing.assert_allclose(batched, looped, rtol=1e-6, atol=1e-13)


def test_triple_pendulum_violations_fall_back_to_one_evaluation_per_output(monkeypatch):
    """A System the kernel does not evaluate (here: `System.compiled` refusing) still gets its
    violations, from the numpy joints output by output."""
    system, res = triple_run("euler-parameters", "index3-alpha")

    def refuse(self):
        raise Unsupported("not packable (test)")
    monkeypatch.setattr(type(system), "compiled", refuse)
    batched = triple_pendulum.constraint_violations(system, res.t, res.q, res.v)
    looped = np.array([violations(system, t, q, v) for t, q, v in zip(res.t, res.q, res.v)])
    np.testing.assert_array_equal(batched, looped)


def _properties(path) -> dict:
    """Every object of an HDF5 file: shape, limits, chunks, type, creation properties, data and
    attributes (value, type class, string kind, shape); groups: creation properties."""
    import h5py
    out = {}
    with h5py.File(path) as f:
        def describe(key, obj):
            plist = obj.id.get_create_plist()
            attrs = {}
            for name in obj.attrs:
                aid = obj.attrs.get_id(name)
                attrs[name] = (obj.attrs[name], type(aid.get_type()).__name__, aid.get_type().get_cset(),
                               aid.get_type().is_variable_str(), aid.shape)
            if isinstance(obj, h5py.Dataset):
                out[key] = (obj.shape, obj.maxshape, obj.chunks, obj.dtype, h5py.check_string_dtype(obj.dtype),
                            obj.fillvalue, plist.get_fill_time(), plist.get_alloc_time(), plist.get_obj_track_times(),
                            plist.get_attr_creation_order(), plist.get_layout(),
                            obj[()].tolist() if obj.size else None, attrs)
            else:
                out[key] = ("group", plist.get_obj_track_times(), plist.get_link_creation_order(),
                            plist.get_attr_creation_order(), attrs)
        f.visititems(describe)
    return out


def test_low_level_datasets_and_text_attributes_are_those_of_h5pys_high_level_calls(tmp_path):
    """`flexmbs.io.h5create` makes what ``Group.create_dataset`` and ``attrs[...] = str`` make (a
    time series with its units, a body's nodes in new groups, integer cells, string and float
    dimension values), property by property."""
    import h5py
    from flexmbs.io.h5create import new_dataset, open_object, set_attribute
    labels = np.array(["x", "y", "z"], dtype=h5py.string_dtype())
    with h5py.File(tmp_path / "high.h5", "w", libver=("v110", "latest")) as f:
        g = f.create_group("run")
        ds = g.create_dataset("bodies/b1/position", shape=(0, 3), maxshape=(None, 3), chunks=(1365, 3), dtype="f8")
        ds.attrs["columns"] = '["T", "V"]'
        ds.attrs["units"] = "m or rad"
        g.create_dataset("bodies/b1/nodes", data=np.arange(24.0).reshape(8, 3))
        g.create_dataset("cells/hexahedron", data=np.arange(8, dtype=np.int64)[None])
        g.create_dataset("axis", data=labels)
        g.create_dataset("node", data=np.zeros(8, dtype="f4"))
        g.create_dataset("empty", data=np.zeros((0, 3)))
    with h5py.File(tmp_path / "low.h5", "w", libver=("v110", "latest")) as f:
        g = f.create_group("run")
        ds = new_dataset(g.id, "bodies/b1/position", shape=(0, 3), maxshape=(None, 3), chunks=(1365, 3), dtype="f8")
        set_attribute(ds, "columns", '["T", "V"]')
        set_attribute(ds, "units", "m or rad")
        new_dataset(g.id, "bodies/b1/nodes", np.arange(24.0).reshape(8, 3))
        new_dataset(g.id, "cells/hexahedron", np.arange(8, dtype=np.int64)[None])
        new_dataset(g.id, "axis", labels)
        new_dataset(g.id, "node", np.zeros(8, dtype="f4"))
        new_dataset(g.id, "empty", np.zeros((0, 3)))
        assert open_object(g.id, "no/such") is None and open_object(g.id, "bodies/b1") is not None
    high, low = _properties(tmp_path / "high.h5"), _properties(tmp_path / "low.h5")
    assert len(high) == 10                  # run, bodies, bodies/b1, cells and six datasets
    assert {k: v for k, v in low.items() if high.get(k) != v} == {}
    assert set(low) == set(high)


def _subcommands(parser):
    """The subparsers of a parser by command word."""
    import argparse
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


@pytest.mark.parametrize("command", ["run", "params", "cases", "bench", "results", "export", "view", "mesh", "info",
                                     "sweep", "fmu"])
def test_the_parser_of_one_command_helps_as_the_full_parser(command):
    """`flexmbs.cli.build_parser(COMMAND)` builds that command's parser only, the one argparse
    parses (the others cost about 10 ms of argparse and gettext in every run): its help is the
    full parser's."""
    from flexmbs.cli import COMMAND_WORDS, build_parser
    assert command in COMMAND_WORDS
    full, one = build_parser(), build_parser(command)
    assert set(_subcommands(one)) == {command} and set(_subcommands(full)) == set(COMMAND_WORDS)
    assert _subcommands(one)[command].format_help() == _subcommands(full)[command].format_help()


def test_a_help_before_the_command_word_lists_every_command(capsys):
    from flexmbs.cli import COMMAND_WORDS, main
    with pytest.raises(SystemExit) as stop:
        main(["-h", "run", "x"])
    assert stop.value.code == 0
    listed = capsys.readouterr().out
    assert all(f"    {name}" in listed for name in COMMAND_WORDS), listed


@pytest.mark.parametrize("argv", [["run", "triple_pendulum", "-q", "--set", "t_end=1", "--no-plots", "--out", "o"],
                                  ["--cases", "c", "-v", "run", "x.toml", "--every", "3"],
                                  ["export", "o", "--run", "r", "--every", "2"], ["results", "o"],
                                  ["sweep", "c", "--grid", "h=1,2", "--workers", "2"], ["params", "c"], ["cases"],
                                  ["mesh", "info", "m.msh"], ["view", "o", "--clim", "0", "1", "--view", "xy"]])
def test_the_parser_of_one_command_reads_its_arguments_as_the_full_parser(argv):
    from flexmbs.cli import _command_index, build_parser
    i = _command_index(argv)
    assert vars(build_parser(argv[i]).parse_args(argv)) == vars(build_parser().parse_args(argv))


def _case_info_by_ast(path: Path):
    """(is a case, summary) as the command read a case file before: ``ast``, top-level assignments of
    DEFAULTS and a ``def run``, the first line of the docstring."""
    import ast
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            names.update(t.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                         if isinstance(t, ast.Name))
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    doc = (ast.get_docstring(tree) or "").strip()
    return {"DEFAULTS", "run"} <= names, doc.splitlines()[0] if doc else ""


@pytest.mark.parametrize("path", sorted((ROOT / "cases").glob("*.py")), ids=lambda p: p.stem)
def test_case_files_read_from_their_code_objects_as_with_ast(path):
    """`flexmbs.cli._case_info` (the names and docstring of the file's code object) tells the cases
    and their summaries as the ``ast`` reading did, for every file of cases/."""
    from flexmbs.cli import _case_info
    info = _case_info(path)
    is_case, summary = _case_info_by_ast(path)
    assert (info is not None) == is_case
    assert info is None or (info.name, info.summary) == (path.stem, summary)


@pytest.mark.parametrize("source, summary", [
    ('"""First line.\n\n    More."""\nDEFAULTS = dict(a=1)\ndef run(out=None, **p):\n    return p\n', "First line."),
    ('# a comment first\n"""  Indented\n  summary  """\nDEFAULTS: dict = {}\ndef run(out=None):\n    pass\n',
     "Indented"),
    ('DEFAULTS = {}\n"""not a docstring"""\ndef run(out=None):\n    pass\n', ""),
    ('"""A script."""\nDEFAULTS = {}\n', None),                                # no run: not a case
    ('"""A script."""\ndef run():\n    DEFAULTS = {}\n', None),                 # DEFAULTS not at the top level
])
def test_case_info_of_small_files(tmp_path, source, summary):
    from flexmbs.cli import _case_info
    path = tmp_path / "case_x.py"
    path.write_text(source)
    info = _case_info(path)
    assert (None if info is None else info.summary) == summary


def test_free_bytes_is_shutils_free_space(tmp_path):
    """`flexmbs.disk.free_bytes` (os.statvfs) gives what ``shutil.disk_usage(path).free`` gives (both
    asked of a file system other processes write to: equal within 64 MB)."""
    import shutil
    from flexmbs.disk import free_bytes
    for path in (tmp_path, ROOT):
        assert free_bytes(path) > 0 and abs(free_bytes(path) - shutil.disk_usage(path).free) < 2 ** 26


def test_a_run_without_the_command_line_loads_no_shutil(tmp_path):
    """`flexmbs.run` checks the free disk (results file, ParaView files) without importing shutil,
    whose import pulls bz2 and lzma (argparse imports it, so a run by `flexmbs run` still does)."""
    import subprocess
    code = ("import sys\nsys.path.insert(0, 'cases')\nimport triple_pendulum as tp\nimport flexmbs.io as io\n"
            "with io.recording(sys.argv[1]):\n"
            "    tp.run(out=None, t_end=0.01, coordinates='euler-parameters', integrator='index3-alpha', "
            "stabilization='none', plots=False)\n"
            "print(sorted(m for m in ('shutil', 'bz2', 'lzma') if m in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "results.h5")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[-2] == "[]", proc.stdout
