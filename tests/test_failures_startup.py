"""Bad input of the lazily imported package and of the start-up benchmark (issue 22, item 2):
each call and the message it now prints.  A misspelt public name is an AttributeError naming it
(Python's traceback adds "Did you mean" from ``dir(flexmbs)``), not an ImportError of some
submodule."""
import importlib.util
from pathlib import Path

import pytest

import flexmbs
from flexmbs.lazy import LazyModule

ROOT = Path(__file__).resolve().parents[1]


def bench_startup():
    spec = importlib.util.spec_from_file_location("bench_startup", ROOT / "benchmarks" / "bench_startup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def attribute(name):
    return lambda: getattr(flexmbs, name)


def from_import(name):
    return lambda: exec(f"from flexmbs import {name}", {})


def bench(*argv):
    return lambda: bench_startup().main(list(argv))


FAILURES = [
    ("flexmbs.Modle", attribute("Modle"), AttributeError, "module 'flexmbs' has no attribute 'Modle'"),
    ("flexmbs.__wrapped__ (a dunder probed by tools)", attribute("__wrapped__"), AttributeError,
     "module 'flexmbs' has no attribute '__wrapped__'"),
    ("from flexmbs import Modle", from_import("Modle"), ImportError, "cannot import name 'Modle' from 'flexmbs'"),
    ("flexmbs.io.load_result (the lazy subpackage)", lambda: getattr(importlib.import_module("flexmbs.io"), "load_result"),
     AttributeError, "module 'flexmbs.io' has no attribute 'load_result'"),
    ("from flexmbs.io import ResultFile", lambda: exec("from flexmbs.io import ResultFile", {}), ImportError,
     "cannot import name 'ResultFile' from 'flexmbs.io'"),
    ("LazyModule('scipy.sparce').csr_array: the misspelt module at its first use",
     lambda: LazyModule("scipy.sparce").csr_array, ModuleNotFoundError, "No module named 'scipy.sparce'"),
    ("LazyModule('scipy.sparse').csr_arrey", lambda: LazyModule("scipy.sparse").csr_arrey, AttributeError,
     "Module 'scipy.sparse' has no attribute 'csr_arrey'"),     # scipy's own message
    ("bench_startup.py --rounds 0", bench("--rounds", "0"), SystemExit, "--rounds must be at least 1, got 0"),
    ("bench_startup.py --checkout DIR (no label)", bench("--checkout", str(ROOT)), SystemExit,
     "--checkout expects LABEL=DIR with DIR/flexmbs/__init__.py, got"),
    ("bench_startup.py --checkout old=/nowhere", bench("--checkout", "old=/nowhere"), SystemExit,
     "--checkout expects LABEL=DIR with DIR/flexmbs/__init__.py, got 'old=/nowhere'"),
]


@pytest.mark.parametrize("call, error, message", [row[1:] for row in FAILURES], ids=[row[0] for row in FAILURES])
def test_bad_input_is_named(call, error, message, capsys):
    with pytest.raises(error) as info:
        call()
    printed = str(info.value) if error is not SystemExit else capsys.readouterr().err
    assert message in printed
