"""MkDocs hooks: the page "Cases" (cases.md), generated at build time from cases/*.py, and
MathJax served with the site.

Each case's module docstring and DEFAULTS become its section, so the page cannot drift from
the scripts.  Cases are found as `flexmbs cases` finds them (`flexmbs.cli.discover_cases`).

MathJax (its es5 ``tex-mml-chtml.js`` component, the CHTML fonts and its Apache-2.0 LICENSE)
is copied into the site under ``javascripts/mathjax/`` from the PyPI package
django-static-mathjax (a plain copy of MathJax's release files, no dependencies; in the docs
extra), so that the theory pages render offline (docs/design.md, "MathJax with the site").
"""
from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

from mkdocs.structure.files import File

log = logging.getLogger("mkdocs.hooks.cases")
ROOT = Path(__file__).resolve().parents[1]
PAGE = "cases.md"


def _value(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (tuple, list)):
        return ", ".join(_value(x) for x in v)
    return repr(v) if isinstance(v, str) else str(v)


def cases_markdown() -> str:
    from flexmbs import cli
    cases = cli.discover_cases(ROOT / "cases")
    lines = ["# Cases", "",
             "Every script in `cases/` that follows the case protocol (a module docstring, a `DEFAULTS` dict "
             "and `run(out=None, **params)`). This page is generated from the scripts when the documentation "
             "is built. Run a case with `flexmbs run CASE --set KEY=VALUE ... --out DIR`, or run the "
             "script itself: `python cases/CASE.py --key-with-dashes VALUE --out DIR`.", ""]
    for name, info in cases.items():
        try:
            module = cli.load_case(info)
        except Exception as err:            # NOTE: a warning, so that the strict build fails with it
            log.warning("case %s (%s) cannot be imported: %s: %s", name, info.path, type(err).__name__, err)
            continue
        doc = (module.__doc__ or "").strip()
        title, _, body = doc.partition("\n")
        lines += [f"## {name}", "", f"*{title.strip()}*", ""]
        if getattr(module, "RUN_TIME", None):
            lines += [f"Run time at the defaults: {module.RUN_TIME} on a 2-core machine.", ""]
        lines += ["```text", body.strip() or "(no description)", "```", "", "| key | default |", "| --- | --- |"]
        lines += [f"| `{k}` | `{_value(v)}` |" for k, v in module.DEFAULTS.items()]
        lines += ["", "```bash", f"flexmbs params {name}                  # the keys, their defaults and types",
                  f"flexmbs run {name} --set KEY=VALUE --out out/{name}", "```", ""]
    return "\n".join(lines) + "\n"


MATHJAX_DEST = "javascripts/mathjax"
MATHJAX_FILES = ["tex-mml-chtml.js", "output/chtml/fonts/woff-v2/*.woff"]    # relative to MathJax's es5/


def mathjax_files() -> list[tuple[str, Path]]:
    """(site path, source file) of the MathJax files the pages load; [] if the package is missing."""
    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        return []
    root = Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax"
    es5 = root / "es5"
    found = [(f"{MATHJAX_DEST}/{p.relative_to(es5).as_posix()}", p) for pattern in MATHJAX_FILES
             for p in sorted(es5.glob(pattern))]
    if not (es5 / "tex-mml-chtml.js").is_file() or not (root / "LICENSE").is_file():
        return []
    return found + [(f"{MATHJAX_DEST}/LICENSE", root / "LICENSE")]


def on_files(files, config):
    files.append(File.generated(config, PAGE, content=cases_markdown()))
    mathjax = mathjax_files()
    if not mathjax:                         # NOTE: a warning, so that the strict build fails with it
        log.warning("MathJax is not installed: the formulas would not render. Install the docs extra "
                    "(pip install \".[docs]\"), which brings the package django-static-mathjax")
    for dest, src in mathjax:
        files.append(File.generated(config, dest, abs_src_path=str(src)))
    return files
