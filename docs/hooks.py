"""MkDocs hook: the page "Cases" (cases.md), generated at build time from cases/*.py.

Each case's module docstring and DEFAULTS become its section, so the page cannot drift from
the scripts.  Cases are found as `flexmbs cases` finds them (`flexmbs.cli.discover_cases`).
"""
from __future__ import annotations

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
        lines += [f"## {name}", "", f"*{title.strip()}*", "", "```text", body.strip() or "(no description)", "```",
                  "", "| key | default |", "| --- | --- |"]
        lines += [f"| `{k}` | `{_value(v)}` |" for k, v in module.DEFAULTS.items()]
        lines += ["", "```bash", f"flexmbs params {name}                  # the keys, their defaults and types",
                  f"flexmbs run {name} --set KEY=VALUE --out out/{name}", "```", ""]
    return "\n".join(lines) + "\n"


def on_files(files, config):
    files.append(File.generated(config, PAGE, content=cases_markdown()))
    return files
