"""Fixtures shared by several test files."""
import logging

import pytest


@pytest.fixture
def restore_logging():
    """`flexmbs.cli.main` configures the root logger for a terminal; undo it after the test
    (its handler would otherwise write to a captured stream pytest has closed)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for h in list(root.handlers):
        root.removeHandler(h)
    for h in handlers:
        root.addHandler(h)
    root.setLevel(level)
    logging.captureWarnings(False)
