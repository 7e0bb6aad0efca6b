"""Progress of runs and other long tasks: a bar on a terminal, periodic lines elsewhere.

`flexmbs.run` reports its simulated time to the innermost `display` block; without one it
reports nothing.  On a terminal a rich progress bar appears once a run has taken
``min_seconds`` (default 1 s), is redrawn at most ten times a second (the integrator's
``progress`` callback is called after every step, so it must be cheap) and is removed when
the run ends.  Off a terminal (a pipe, a log file, a CI job) a line such as

.. code:: text

    rotating_bar: t = 0.05 / 0.1 s (50 %), 31 s elapsed, ~31 s left

is written every ``line_seconds`` (default 10 s) instead, so that a long run shows it is
alive.  ``enabled=False`` (``--quiet``) shows neither; ``enabled=True`` forces the bar.
`Display.counter` does the same for a count of tasks (the cases of a sweep, the frames of
a GIF).  `flexmbs.integrators.simulate` reports to the innermost display too, so the
multibody cases, which call it directly, show the same bar and lines.  A script's ``main``
sets the display for the rest of the program with `for_program` (``flexmbs.case.parse_case_args``
does so for every case script).

Examples
--------
>>> from flexmbs import progress
>>> with progress.display():                              # doctest: +SKIP
...     res = flexmbs.run(model, t_end=1.0)
"""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["Display", "display", "current", "for_program", "LINE_SECONDS"]

REFRESH_S = 0.1
LINE_SECONDS = 10.0     # off a terminal: seconds between two progress lines of a task


class Display:
    """Progress of the runs and counted tasks inside a `display` block (module docstring).

    Parameters
    ----------
    enabled : bool, optional
        True: a bar; False: nothing; None (default): a bar on a terminal, else periodic lines.
    min_seconds : float
        A task's bar or first line appears only after it has taken this long [s].
    console : rich.console.Console, optional
        Default: a console on stderr, made when a bar is first drawn (rich is not imported by
        a display that draws none: ``enabled=False``, or stderr plainly not a terminal).
    line_seconds : float
        Off a terminal: seconds between two progress lines.
    """

    def __init__(self, enabled: bool | None = None, min_seconds: float = 1.0, console=None,
                 line_seconds: float = LINE_SECONDS):
        self._console = console
        terminal = None
        if enabled is None:
            terminal = False if console is None and _plainly_not_a_terminal() else self.console.is_terminal
        self.enabled = terminal if enabled is None else bool(enabled)
        self.lines = enabled is None and not terminal
        self.min_seconds = float(min_seconds)
        self.line_seconds = float(line_seconds)

    @property
    def console(self):
        """The rich console of the bars; the default one (stderr) is made at its first use, so
        that a display that draws no bar (``--quiet``, or off a terminal) does not import rich
        (0.03-0.07 s of CPU)."""
        if self._console is None:
            from rich.console import Console
            self._console = Console(stderr=True)
        return self._console

    def _line(self, text: str) -> None:
        file = sys.stderr if self._console is None else self._console.file
        file.write(text + "\n")
        file.flush()

    def _line_timer(self):
        start = time.perf_counter()
        return {"start": start, "next": start + max(self.min_seconds, self.line_seconds)}

    def _due(self, state) -> tuple[bool, float]:
        now = time.perf_counter()
        if now < state["next"]:
            return False, now - state["start"]
        state["next"] = now + self.line_seconds
        return True, now - state["start"]

    @contextmanager
    def task(self, description: str, t0: float, t_end: float):
        """A callback ``progress(t)`` for one run from ``t0`` to ``t_end`` [s]."""
        if self.lines and t_end > t0:
            state = self._line_timer()

            def line(t: float) -> None:
                due, elapsed = self._due(state)
                if not due:
                    return
                f = min(max((t - t0) / (t_end - t0), 0.0), 1.0)
                left = f", ~{elapsed * (1.0 - f) / f:.0f} s left" if f > 0 else ""
                self._line(f"{description}: t = {t:.4g} / {t_end:.4g} s ({100 * f:.0f} %), "
                           f"{elapsed:.0f} s elapsed{left}")

            yield line
            return
        if not self.enabled or not t_end > t0:
            yield None
            return
        state = {"bar": None, "task": None, "next": time.perf_counter() + self.min_seconds}

        def progress(t: float) -> None:
            now = time.perf_counter()
            if now < state["next"]:
                return
            state["next"] = now + REFRESH_S
            if state["bar"] is None:
                state["bar"] = self._bar()
                state["bar"].start()
                state["task"] = state["bar"].add_task(description, total=t_end - t0, t=t, t_end=t_end)
            state["bar"].update(state["task"], completed=min(t - t0, t_end - t0), t=t)

        try:
            yield progress
        finally:
            if state["bar"] is not None:
                state["bar"].stop()

    @contextmanager
    def counter(self, description: str, total: int, unit: str = ""):
        """A callback ``progress(done)`` for a number of tasks (e.g. the cases of a sweep, the
        frames of a GIF); ``unit`` names them in the progress lines."""
        if self.lines and total > 0:
            state = self._line_timer()
            what = f" {unit}" if unit else ""

            def line(done: int, total: int = total) -> None:
                due, elapsed = self._due(state)
                if due:
                    self._line(f"{description}: {done} / {total}{what}, {elapsed:.0f} s elapsed")

            yield line
            return
        if not self.enabled or total <= 0:
            yield None
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                       console=self.console, transient=True)
        task = bar.add_task(description, total=total)
        bar.start()
        try:
            yield lambda done, total=total: bar.update(task, completed=done)
        finally:
            bar.stop()

    def _bar(self):
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn, \
            TimeRemainingColumn
        return Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                        TextColumn("t = {task.fields[t]:.4g} / {task.fields[t_end]:.4g} s"),
                        TimeElapsedColumn(), TimeRemainingColumn(), console=self.console,
                        transient=True)


def _plainly_not_a_terminal() -> bool:
    """True where rich's ``Console(stderr=True).is_terminal`` is False by its last test alone:
    stderr is no tty and neither TTY_COMPATIBLE (0 or 1) nor FORCE_COLOR decides otherwise (rich
    13 to 15).  There the display knows it without making a console, and rich is not imported."""
    if os.environ.get("TTY_COMPATIBLE", "") in ("0", "1") or "FORCE_COLOR" in os.environ:
        return False
    try:
        return not sys.stderr.isatty()
    except (AttributeError, ValueError):           # no stderr, or a closed one: rich says False too
        return True


_DISPLAY: ContextVar[Display | None] = ContextVar("flexmbs_progress", default=None)


def current() -> Display | None:
    """The `Display` of the innermost `display` block, or None."""
    return _DISPLAY.get()


@contextmanager
def display(enabled: bool | None = None, min_seconds: float = 1.0, console=None,
            line_seconds: float = LINE_SECONDS):
    """Show the progress of every `flexmbs.run` (and counted task) inside the block (see `Display`)."""
    token = _DISPLAY.set(Display(enabled, min_seconds, console, line_seconds))
    try:
        yield _DISPLAY.get()
    finally:
        _DISPLAY.reset(token)


def for_program(enabled: bool | None = None, min_seconds: float = 1.0, console=None,
                line_seconds: float = LINE_SECONDS) -> Display:
    """Show the progress of every run for the rest of the program (a script's ``main``, which
    has no block around its work: `display` is the block form); returns the `Display`."""
    shown = Display(enabled, min_seconds, console, line_seconds)
    _DISPLAY.set(shown)
    return shown
