import gc

import pytest


@pytest.fixture
def collect():
    """Run a full garbage collection (three passes) and return a callable doing it again."""

    def _collect():
        for _ in range(3):
            gc.collect()

    _collect()
    return _collect


def pytest_collection_finish(session):
    """Move everything alive after collection (numpy, pandas, pyarrow, torch, ...) into the
    permanent generation, so that the many explicit gc.collect() calls of the lifetime tests
    only walk what the tests themselves create."""
    gc.collect()
    gc.freeze()
