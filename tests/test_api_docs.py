"""The API reference matches the code (issue 11, item 9): the documented defaults of `run` and
`simulate` are the signatures' defaults, every parameter has its own entry, and docs/api.md
covers the quadrature, the assembly and every integrator with each of its options."""
from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

import flexmbs as fm
from flexmbs.integrators import INTEGRATORS, simulate

ROOT = Path(__file__).resolve().parents[1]
API = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")


def parameter_entries(func) -> dict[str, str]:
    """name -> type line of each entry of the numpydoc Parameters section (grouped names split)."""
    doc = inspect.getdoc(func)
    section = re.search(r"^Parameters\n-+\n(.*?)(?=^\w[\w ]*\n-+\n|\Z)", doc, re.MULTILINE | re.DOTALL).group(1)
    entries = {}
    for line in section.splitlines():
        if line and not line[0].isspace():
            names, _, kind = line.partition(" : ")
            for name in names.split(","):
                entries[name.strip().lstrip("*")] = kind.strip()
    return entries


@pytest.mark.parametrize("func", [fm.run, simulate], ids=["run", "simulate"])
def test_every_parameter_documented_with_its_real_default(func):
    entries = parameter_entries(func)
    for name, p in inspect.signature(func).parameters.items():
        assert name in entries, f"{func.__name__}: `{name}` has no entry of its own"
        kind = entries[name]
        if p.default is inspect.Parameter.empty or p.kind is p.VAR_KEYWORD:
            continue
        match = re.search(r"default (.+)$", kind)
        if match:
            assert ast.literal_eval(match.group(1)) == p.default, f"{func.__name__}: `{name}` documented {kind!r}"
        else:
            assert p.default is None and "optional" in kind, f"{func.__name__}: `{name}` = {p.default!r}, " \
                                                             f"documented {kind!r}"
    if func is fm.run:                      # the defaults the issue found misreported
        assert entries["atol"] == entries["h"] == "float, optional"


def test_api_reference_covers_quadrature_assembly_and_every_integrator():
    directives = re.findall(r"^::: ([\w.]+)(?:\n    options:\n(?:      .*\n)*?      members: \[([^\]]*)\])?",
                            API, re.MULTILINE)
    documented = set()
    for target, members in directives:
        documented.add(target)
        documented.update(f"{target}.{m.strip()}" for m in members.replace("\n", " ").split(",") if m.strip())
    assert {"flexmbs.quadrature.quadrature", "flexmbs.assembly.assembler.Assembler",
            "flexmbs.assembly.invariants.assemble_invariants", "flexmbs.analysis.run"} <= documented
    for name, cls in INTEGRATORS.items():
        assert f"{cls.__module__}.{cls.__name__}" in documented, f"integrator {name!r} ({cls.__name__}) not in api.md"
        docs = " ".join(inspect.getdoc(c) or "" for c in cls.__mro__)
        for option, default in cls.option_defaults().items():
            assert f"{option}" in docs, f"option {option!r} of {name!r} is not in its docstrings"


def test_the_site_loads_nothing_from_the_network():
    """MathJax is served with the site (docs/hooks.py copies it from django-static-mathjax)."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert not re.findall(r"^\s*-\s*(?:https?:)?//", config, re.MULTILINE)          # no CDN script or style
    assert "javascripts/mathjax/tex-mml-chtml.js" in config
    for page in (ROOT / "docs").glob("*.md"):
        assert not re.search(r"<(?:script|link)[^>]+(?:src|href)=[\"'](?:https?:)?//", page.read_text("utf-8")), page
    hooks = (ROOT / "docs" / "hooks.py").read_text(encoding="utf-8")
    assert "django-static-mathjax" in hooks and "MATHJAX_DEST = \"javascripts/mathjax\"" in hooks
