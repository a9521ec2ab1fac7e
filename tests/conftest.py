import gc
import pathlib
import sys

import pytest

# The test modules live in folders that mirror src (base/, arrow/, kernels/, safety/, ...)
# and import each other's producers and cases by module name (test_arrow_bad's Producer,
# test_no_leaks' check): every such folder is on sys.path, after pytest's own entries, so
# a module imports alone as it does in the whole suite.  The helpers (producers.py,
# racing.py, ...) are here, in tests/, which pytest puts on sys.path for this file.
_TESTS = pathlib.Path(__file__).resolve().parent
for _folder in sorted(_TESTS.iterdir()):
    if _folder.is_dir() and any(_folder.glob("test_*.py")) and str(_folder) not in sys.path:
        sys.path.append(str(_folder))


@pytest.fixture
def collect():
    """Run a full garbage collection (three passes) and return a callable doing it again.
    What is still alive after the first one (the module, earlier tests' survivors) is
    moved into the GC's permanent generation, as before each module (see below): the
    test's own collections then walk only what the test creates, not what the hundreds
    of tests before it in the module left alive (pytest's reports among them)."""

    def _collect():
        for _ in range(3):
            gc.collect()

    _collect()
    gc.freeze()
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


def _child_processes(item):
    """The ChildProcess objects an item names with @pytest.mark.child_process (None
    stands for a child process the platform cannot run)."""
    for mark in item.iter_markers("child_process"):
        yield from (job for job in mark.args if job is not None)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "child_process(*jobs): the test reads these tests/child_processes.ChildProcess "
        "results; they start as the test is collected",
    )


def pytest_itemcollected(item):
    """Start the child processes a collected test names (tests/child_processes.py): the
    runner executes them one after the other, beside collection and then the in-process
    tests.  Not under ``--collect-only``."""
    import child_processes

    if not item.config.option.collectonly:
        for job in _child_processes(item):
            child_processes.start(job)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    """Run the tests that read child processes after all the others (each group in its
    collected order): their child processes then have the whole in-process run to finish
    on the second core, instead of a test waiting for a child process while the tests
    after it could have run."""
    readers = [item for item in items if next(_child_processes(item), None) is not None]
    if readers:
        keep = {id(item) for item in readers}
        items[:] = [item for item in items if id(item) not in keep] + readers


def pytest_collection_finish(session):
    """Skip the child processes that no selected test names."""
    import child_processes

    child_processes.keep({id(job) for item in session.items for job in _child_processes(item)})


def pytest_unconfigure(config):
    import child_processes

    child_processes.stop()
