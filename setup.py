"""The compiled kernel of flexmbs (csrc/index3_kernel.c), built when a C compiler is present.

Everything else is in pyproject.toml.  The extension is optional: without a compiler the
install goes on and flexmbs runs its numpy path (flexmbs.compiled says why).  It is a
top-level module, ``_flexmbs_kernel``, so that a source checkout that imports ``flexmbs`` from
the working tree (the test command of the README) still finds the installed kernel.

Before the build, csrc/kernel_schema.h is generated from the declaration of the kernel's rows
in flexmbs/kernel_schema.py (loaded by its path with the flexmbs/frozen.py it imports: they need
only the standard library), so that the C side reads every row by the names the Python side packs
it with (docs/design.md, "The kernel's schema").
"""
import importlib
import sys
import types
from pathlib import Path

from setuptools import Extension, setup

ROOT = Path(__file__).resolve().parent


def load_schema():
    """flexmbs/kernel_schema.py loaded by its path, with the flexmbs/frozen.py it imports: the
    package ``flexmbs`` stands in as an empty module whose ``__path__`` is flexmbs/, so that its
    ``__init__`` (numpy, ...) is not run; the stand-in is removed afterwards."""
    package = types.ModuleType("flexmbs")
    package.__path__ = [str(ROOT / "flexmbs")]
    saved = {name: sys.modules.pop(name) for name in ("flexmbs", "flexmbs.frozen", "flexmbs.kernel_schema")
             if name in sys.modules}
    sys.modules["flexmbs"] = package
    try:
        return importlib.import_module("flexmbs.kernel_schema")
    finally:
        for name in ("flexmbs", "flexmbs.frozen", "flexmbs.kernel_schema"):
            sys.modules.pop(name, None)
        sys.modules.update(saved)


def write_schema_header() -> None:
    """csrc/kernel_schema.h from flexmbs/kernel_schema.py's `c_header` (rewritten only when it changes)."""
    schema = load_schema()
    header, text = ROOT / "csrc" / "kernel_schema.h", schema.c_header()
    if not header.is_file() or header.read_text() != text:
        header.write_text(text)


write_schema_header()
setup(ext_modules=[Extension("_flexmbs_kernel", sources=["csrc/index3_kernel.c"], depends=["csrc/kernel_schema.h"],
                             optional=True, extra_compile_args=["-O3", "-std=c99"])])
