"""A progress bar for runs, drawn with rich, only on a terminal and only for long runs.

`flexmbs.run` reports its simulated time to the innermost `display` block; without one it
reports nothing.  The bar appears once a run has taken ``min_seconds`` (default 1 s), is
redrawn at most ten times a second (the integrator's ``progress`` callback is called after
every step, so it must be cheap) and is removed when the run ends.  It is never shown when
the console is not a terminal (a pipe, a file, CI) or when ``enabled=False`` (``--quiet``).

Examples
--------
>>> from flexmbs import progress
>>> with progress.display():                              # doctest: +SKIP
...     res = flexmbs.run(model, t_end=1.0)
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["Display", "display", "current"]

REFRESH_S = 0.1


class Display:
    """Progress bars on a rich console for the runs inside a `display` block.

    Parameters
    ----------
    enabled : bool, optional
        Default: when the console is a terminal.
    min_seconds : float
        A run's bar appears only after it has taken this long.
    console : rich.console.Console, optional
        Default: a console on stderr.
    """

    def __init__(self, enabled: bool | None = None, min_seconds: float = 1.0, console=None):
        from rich.console import Console
        self.console = console if console is not None else Console(stderr=True)
        self.enabled = self.console.is_terminal if enabled is None else bool(enabled)
        self.min_seconds = float(min_seconds)

    @contextmanager
    def task(self, description: str, t0: float, t_end: float):
        """A callback ``progress(t)`` for one run from ``t0`` to ``t_end`` [s]."""
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
    def counter(self, description: str, total: int):
        """A callback ``progress(done, total)`` for a number of tasks (e.g. the cases of a sweep)."""
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


_DISPLAY: ContextVar[Display | None] = ContextVar("flexmbs_progress", default=None)


def current() -> Display | None:
    """The `Display` of the innermost `display` block, or None."""
    return _DISPLAY.get()


@contextmanager
def display(enabled: bool | None = None, min_seconds: float = 1.0, console=None):
    """Show a progress bar for every `flexmbs.run` inside the block (see `Display`)."""
    token = _DISPLAY.set(Display(enabled, min_seconds, console))
    try:
        yield _DISPLAY.get()
    finally:
        _DISPLAY.reset(token)
