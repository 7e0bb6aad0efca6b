"""The documentation states what the code measures now (issue 20, item 14).

- Every table of measured numbers in docs/benchmarks.md is preceded, within its section, by a
  line ``Measured: YYYY-MM-DD ...`` naming the script that produced it (an existing
  ``benchmarks/*.py`` or ``cases/*.py``), so that each number can be regenerated when the code it
  measures changes.  "no script kept" no longer excuses a table (the last three such tables
  got their scripts).  The rule's own failures are a table of bad snippets and the message each
  now gives.
- The cart pendulum's period (docs/quasi_velocities.md): the closed form of small oscillations,
  the energy integral at the case's amplitude, and the period the run measures agree.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS_MD = ROOT / "docs" / "benchmarks.md"
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
SCRIPT = re.compile(r"\b(?:benchmarks|cases)/\w+\.py\b")
FENCE = "```"
NO_SCRIPT = "no script kept"
#: tables measured by code that was not kept as a script (each says so on its 'Measured:' line);
#: this number may only go down: write the script in benchmarks/ and cite it instead
UNSCRIPTED_TABLES = 0


def unsourced_tables(text: str, name: str, root: Path = ROOT) -> list[str]:
    """One message per Markdown table of ``text`` that has no ``Measured:`` line between the
    heading above it and the table, or whose line lacks a date or an existing script."""
    problems, heading, measured, in_fence = [], "the start of the file", [], False
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith(FENCE):
            in_fence = not in_fence
        if in_fence:
            continue
        if line.startswith("#"):
            heading, measured = line.strip(), []
        elif line.startswith("Measured:"):
            measured.append(line)
        elif re.match(r"\s*\|\s*:?-{3,}", line) and i > 0 and lines[i - 1].lstrip().startswith("|"):
            where = f"{name}:{i} (the table under {heading!r})"
            if not measured:
                problems.append(f"{where}: no line 'Measured: YYYY-MM-DD, `benchmarks/<script>.py ...`' "
                                "between the heading and the table")
                continue
            last = measured[-1]
            if not DATE.search(last):
                problems.append(f"{where}: its 'Measured:' line has no date YYYY-MM-DD: {last!r}")
            scripts = SCRIPT.findall(last)
            if not scripts:
                problems.append(f"{where}: its 'Measured:' line names no script benchmarks/*.py or cases/*.py: "
                                f"{last!r}")
            missing = [s for s in scripts if not (root / s).is_file()]
            if missing:
                problems.append(f"{where}: its 'Measured:' line names scripts that do not exist: {missing}")
    return problems


def test_every_table_in_benchmarks_md_cites_its_script_and_date():
    problems = unsourced_tables(BENCHMARKS_MD.read_text(encoding="utf-8"), "docs/benchmarks.md")
    assert not problems, "\n".join(problems)


def test_no_new_table_without_a_script():
    text = BENCHMARKS_MD.read_text(encoding="utf-8")
    unscripted = [line for line in text.splitlines() if line.startswith("Measured:") and NO_SCRIPT in line]
    assert len(unscripted) <= UNSCRIPTED_TABLES, (
        f"docs/benchmarks.md has {len(unscripted)} 'Measured:' lines with {NO_SCRIPT!r}, at most "
        f"{UNSCRIPTED_TABLES} allowed: write the measurement as a script in benchmarks/ and cite it")


TABLE = "| a | b |\n|---|---:|\n| 1 | 2 |\n"
BAD_SNIPPETS = [
    ("no Measured line", "## 1. Speed\n\nSome text.\n\n" + TABLE,
     "x.md:5 (the table under '## 1. Speed'): no line 'Measured: YYYY-MM-DD"),
    ("a Measured line of another section", "## 1. A\n\nMeasured: 2026-11-27, `benchmarks/bench_multibody.py`\n\n"
     "## 2. B\n\n" + TABLE,
     "x.md:7 (the table under '## 2. B'): no line 'Measured:"),
    ("no date", "## 1. A\n\nMeasured: `benchmarks/bench_multibody.py`, last week\n\n" + TABLE,
     "its 'Measured:' line has no date YYYY-MM-DD"),
    ("no script", "## 1. A\n\nMeasured: 2026-11-27, by hand\n\n" + TABLE,
     "its 'Measured:' line names no script benchmarks/*.py or cases/*.py"),
    ("a script that does not exist", "## 1. A\n\nMeasured: 2026-11-27, `benchmarks/bench_nothing.py`\n\n" + TABLE,
     "names scripts that do not exist: ['benchmarks/bench_nothing.py']"),
    ("no script, and says so", "## 1. A\n\nMeasured: 2026-11-27, no script kept: timers in the code\n\n" + TABLE,
     "its 'Measured:' line names no script benchmarks/*.py or cases/*.py"),
    ("a table in a code block is not a table", "## 1. A\n\n```text\n" + TABLE + "```\n", None),
    ("a sourced table", "## 1. A\n\nMeasured: 2026-11-27, `cases/cart_pendulum.py --table`\n\n" + TABLE, None),
]


@pytest.mark.parametrize(("snippet", "message"), [p[1:] for p in BAD_SNIPPETS], ids=[p[0] for p in BAD_SNIPPETS])
def test_the_source_rule_names_what_is_missing(snippet, message):
    problems = unsourced_tables(snippet, "x.md")
    if message is None:
        assert problems == []
    else:
        assert len(problems) == 1 and message in problems[0], problems


# -- the cart pendulum's period ------------------------------------------------------------------------
sys.path.insert(0, str(ROOT / "cases"))
import cart_pendulum  # noqa: E402
from _comparison import run_formulation  # noqa: E402


def test_small_oscillation_period_closed_form():
    # J0 = 2 m l^2/3 - m^2 l^2/M = 2/3 - 1/4.2 = 3/7 kg m^2, K0 = g l (2 m + 2 m_w) = 2.4 g N m
    # with m_c = 2, m = 1, m_w = 0.2 kg, l = 1 m (docs/quasi_velocities.md, the derivation)
    assert cart_pendulum.small_oscillation_period() == pytest.approx(2 * np.pi * np.sqrt(3 / 7 / (2.4 * 9.81)),
                                                                      rel=1e-14)
    assert cart_pendulum.small_oscillation_period() == pytest.approx(0.84772, abs=1e-5)


def test_energy_integral_tends_to_the_closed_form_for_small_swings():
    T0 = cart_pendulum.small_oscillation_period()
    small = cart_pendulum.energy_integral_period((0.01, -0.01, 0.0), (0.0, 0.0, 0.0))
    assert small == pytest.approx(T0, rel=5e-4)              # the lengthening grows like the amplitude^2
    assert small > T0


def test_the_run_measures_the_energy_integral_period():
    res, summary = run_formulation(cart_pendulum.build(), "volterra", rtol=1e-9, t_end=2.0,
                                   dt_out=0.01)
    # measured in the run of docs/quasi_velocities.md: 1.0007 s over 50 s
    assert summary["period_measured_s"] == pytest.approx(summary["period_energy_integral_s"], rel=1e-4)
    assert summary["period_energy_integral_s"] == pytest.approx(1.00074, abs=1e-5)
    assert summary["period_small_oscillation_s"] == pytest.approx(0.84772, abs=1e-5)


def test_measured_period_needs_two_swings():
    t = np.linspace(0.0, 0.5, 51)
    q = np.stack([np.sin(2 * np.pi * t), 0 * t, 0 * t], axis=1)
    assert np.isnan(cart_pendulum.measured_period(t, q, None))
    t = np.linspace(0.0, 3.0, 301)
    q = np.stack([np.sin(2 * np.pi * t / 0.9 + 0.3), 0 * t, 0 * t], axis=1)
    assert cart_pendulum.measured_period(t, q, None) == pytest.approx(0.9, rel=1e-3)


# -- the scripts print what the rule asks for -------------------------------------------------------------
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_build  # noqa: E402
import bench_coupled_cases  # noqa: E402
import bench_multibody  # noqa: E402
import bench_orderings  # noqa: E402
import bench_sparse_step_parts  # noqa: E402

from flexmbs.compiled import kernel_status  # noqa: E402

NO_KERNEL = pytest.mark.skipif(not kernel_status().installed, reason="bench_coupled_cases compares the numpy path "
                               "with the compiled kernel, which is not installed")
QUICK = [bench_multibody, bench_build, pytest.param(bench_coupled_cases, marks=NO_KERNEL), bench_sparse_step_parts,
         bench_orderings]


@pytest.mark.slow
@pytest.mark.parametrize("script", QUICK, ids=["bench_multibody", "bench_build", "bench_coupled_cases",
                                               "bench_sparse_step_parts", "bench_orderings"])
def test_quick_output_pasted_under_a_heading_follows_the_rule(script, capsys):
    assert script.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Measured: ") and "quick mode" in out
    assert unsourced_tables("## A section\n\n" + out, "pasted.md") == []


BAD_GRIDS = [
    (["--grids", "40x8"], "a grid is three cell counts like 40x8x8, got '40x8'"),
    (["--grids", "40x8x0"], "a grid needs at least one cell in each direction, got '40x8x0'"),
    (["--grids", "ax8x8"], "a grid is three cell counts like 40x8x8, got 'ax8x8'"),
]


@pytest.mark.parametrize(("argv", "message"), BAD_GRIDS, ids=[" ".join(a) for a, _ in BAD_GRIDS])
def test_bench_build_names_a_bad_grid(argv, message, capsys):
    with pytest.raises(SystemExit):
        bench_build.main(argv)
    assert message in capsys.readouterr().err


def test_a_run_shorter_than_two_swings_says_the_period_was_not_measured(capsys):
    res, summary = run_formulation(cart_pendulum.build(), "volterra", rtol=1e-6, t_end=0.5, dt_out=0.05)
    assert summary["period_measured_s"] is None
    cart_pendulum.print_periods(summary)
    assert "period of theta_1 not measured (fewer than two swings in the run)" in capsys.readouterr().out
