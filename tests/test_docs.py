"""The code in the documentation runs: every fenced ```python block of README.md and docs/*.md.

Each block is executed on its own, in a fresh namespace, with the working directory set to a
temporary directory (so blocks that write files leave nothing behind).  A block whose first
line is the comment ``# not run`` is skipped.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
SKIP_MARK = "# not run"


def python_blocks(path: Path) -> list[tuple[int, str]]:
    """(line number of the opening fence, code) of each ```python block in ``path``."""
    text = path.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in FENCE.finditer(text)]


def _cases():
    for path in DOC_FILES:
        if not path.is_file():
            continue
        for line, code in python_blocks(path):
            rel = path.relative_to(ROOT).as_posix()
            marks = [pytest.mark.skip(reason=f"marked {SKIP_MARK!r}")] \
                if code.lstrip().splitlines()[:1] == [SKIP_MARK] else []
            yield pytest.param(rel, line, code, id=f"{rel}:{line}", marks=marks)


CASES = list(_cases())


def test_readme_has_a_python_example():
    assert any(rel == "README.md" for rel, *_ in (c.values for c in CASES))


def test_block_parser():
    text = "x\n```python\na = 1\n```\n```bash\nls\n```\n```python\n# not run\nraise SystemExit\n```\n"
    tmp_blocks = [(m.group(1)) for m in FENCE.finditer(text)]
    assert tmp_blocks == ["a = 1\n", "# not run\nraise SystemExit\n"]


@pytest.mark.parametrize(("doc", "line", "code"), CASES)
def test_doc_block_runs(doc, line, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace = {"__name__": "__doc_block__"}
    exec(compile(code, f"{doc}:{line}", "exec"), namespace)
