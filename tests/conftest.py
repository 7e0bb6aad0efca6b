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


@pytest.fixture(autouse=True)
def progress_of_one_test():
    """A case's ``main`` shows progress for the rest of its program (`flexmbs.progress.for_program`);
    in the test process that is the rest of its test: the block restores "no display" after it."""
    from flexmbs import progress
    with progress.display(enabled=False):
        yield
