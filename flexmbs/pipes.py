"""Command-line entry points that end quietly when the reader of their output goes away.

``flexmbs results FILE | head`` or ``python cases/bricard.py | head`` close the pipe before
the program has printed everything; the next write raises BrokenPipeError.  `call_quietly`
runs an entry point and turns that into exit status 1 without a traceback, pointing stdout
at os.devnull so that the interpreter's last flush does not fail again (the way the Python
documentation of the signal module, "Note on SIGPIPE", advises).
"""
from __future__ import annotations

import os
import sys
from typing import Callable

__all__ = ["call_quietly", "EXIT_BROKEN_PIPE"]

EXIT_BROKEN_PIPE = 1


def call_quietly(main: Callable[..., int | None], *args) -> int | None:
    """``main(*args)``, with stdout flushed; EXIT_BROKEN_PIPE, silently, if the pipe was closed."""
    try:
        code = main(*args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
