"""No object reads another object's private attributes (the brief's style rule, docs/design.md
"Private attributes stay private").

An AST walk over every module of the package and of cases/: an attribute ``x._name`` (one leading underscore, not a
dunder) read or deleted on anything but ``self``/``cls`` is a finding, unless ``_name`` belongs to the
module itself -- a module-level name, a class or function of the module, a name it imports, or an
attribute its own classes define (``self._name = ...``, ``def _name``, a class-level ``_name``), so that a
class's ``__eq__`` or a batch of one module's bodies may read the private data of its siblings.
``super()._name`` and ``Cls._name`` with ``Cls`` a class of the module (``cls`` spelled out in a static
method) are a class using its own inherited private names and are allowed too.
"""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import flexmbs

PACKAGE = Path(flexmbs.__file__).parent
CASES = PACKAGE.parent / "cases"

#: (module path relative to flexmbs/, attribute read as ``ast.unparse``) -> the reason it stays
ALLOWED: dict[tuple[str, str], str] = {}


@lru_cache(maxsize=None)
def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the AST of ``path``, parsed and walked once for all tests of this file."""
    return tuple(ast.walk(ast.parse(path.read_text())))


def own_names(all_nodes) -> set[str]:
    """The names the module owns: its top-level and class-level definitions, its imports, and the
    attributes its classes set on ``self``."""
    names = set()
    for node in all_nodes:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            names.add(node.attr)
    return names


def is_super_call(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super")


def private_reads(path: Path) -> list[str]:
    """The reads of another object's private attributes in ``path``, as "file:line code"."""
    all_nodes = nodes(path)
    own = own_names(all_nodes)
    classes = {node.name for node in all_nodes if isinstance(node, ast.ClassDef)}
    rel = path.relative_to(PACKAGE).as_posix() if path.is_relative_to(PACKAGE) else f"../cases/{path.name}"
    found = []
    for node in all_nodes:
        if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Load, ast.Del))):
            continue
        attr = node.attr
        if not attr.startswith("_") or attr.startswith("__"):
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id in ("self", "cls", *classes):
            continue
        if attr in own or is_super_call(value):
            continue
        text = ast.unparse(node)
        if (rel, text) not in ALLOWED:
            found.append(f"flexmbs/{rel}:{node.lineno} {text}")
    return found


def test_no_private_reads_across_objects():
    paths = sorted(PACKAGE.rglob("*.py")) + sorted(CASES.glob("*.py"))
    found = [hit for path in paths for hit in private_reads(path)]
    assert not found, ("reads of another object's private attribute (add a public accessor on its owner, "
                       "docs/design.md 'Private attributes stay private'):\n" + "\n".join(found))


def test_the_walk_finds_a_private_read(tmp_path):
    """The walk flags a read of another object's private attribute and passes the module's own."""
    src = tmp_path / "m.py"
    src.write_text("class A:\n    def __init__(self):\n        self._mine = 1\n\n"
                   "    def __eq__(self, other):\n        return self._mine == other._mine\n\n"
                   "def f(model):\n    return model._Kg\n")
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path
    try:
        assert private_reads(src) == ["flexmbs/m.py:9 model._Kg"]
    finally:
        PACKAGE = saved


def test_allowed_entries_are_still_needed():
    """Every allow-list entry still occurs (a stale entry would hide nothing and mislead)."""
    texts = {(p.relative_to(PACKAGE).as_posix(), ast.unparse(n))
             for p in PACKAGE.rglob("*.py") for n in nodes(p)
             if isinstance(n, ast.Attribute)}
    assert not [key for key in ALLOWED if key not in texts]
