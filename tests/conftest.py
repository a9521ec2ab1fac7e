import gc
import os

import pytest


@pytest.fixture
def collect():
    """Run a full garbage collection (three passes) and return a callable doing it again."""

    def _collect():
        for _ in range(3):
            gc.collect()

    _collect()
    return _collect


_frozen_for = [None]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before the first test of each module (and before any of its fixtures): collect, then
    move everything still alive (numpy, pandas, pyarrow, torch, and what earlier modules
    kept) into the GC's permanent generation.  The many explicit gc.collect() calls of the
    lifetime tests then only walk what the current module creates; with one session-wide
    freeze they walked everything earlier tests left behind (most of the suite's time).
    Objects a module creates are never frozen before its own tests ran, so a test that
    needs an object collected still sees it collected."""
    module = getattr(item, "module", None)
    if module is not _frozen_for[0]:
        _frozen_for[0] = module
        gc.collect()
        gc.freeze()


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session):
    """Let test modules start their child processes as they are imported
    (tests/background.py): the runner executes them one after the other, beside collection
    and then the in-process tests.  Not under ``--collect-only``."""
    import background

    if not session.config.option.collectonly:
        background.enable()


def pytest_collection_finish(session):
    """Keep only the child processes of modules with collected tests."""
    import background

    owners = {os.path.abspath(str(item.path)) for item in session.items}
    background.keep(owners)


def pytest_unconfigure(config):
    import background

    background.stop()
