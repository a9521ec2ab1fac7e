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
