"""Memory a describe or decode step makes (run-end values decoded, a dictionary's values
gathered, their bitmaps) is owned by the column that points into it for as long as that
column lives: to_matrix, from_dataframe and to_arrow read it after the step that made it.

The columns are larger than NumPy's small-block cache (1 KiB), so a freed block goes back
to the allocator.  Proof of a use after free needs the ASan build and the system malloc
(CONTRIBUTING.md, "C that reads producer memory")::

    PYTHONMALLOC=malloc ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \\
    LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so)" \\
    PYTHONPATH=build/asan/stage python -m pytest -q -p no:cacheprovider \\
        tests/kernels/test_decoded_lifetime.py

(to_matrix on a run-end column read its decoded values after they were freed: an ASan
heap-use-after-free; the regular build's allocator hid it.)"""

from __future__ import annotations

import gc

import numpy as np
import pyarrow as pa
import pytest

import dfbuffer

N = 3000


def run_end_float() -> pa.Array:
    return pa.RunEndEncodedArray.from_arrays([1000, 2000, N], pa.array([1.5, None, -2.0]))


def run_end_int() -> pa.Array:
    return pa.RunEndEncodedArray.from_arrays([7, N], pa.array([3, 9], pa.int32()))


def dictionary_float() -> pa.Array:
    idx = pa.array(np.arange(N) % 3, pa.int8(), mask=np.arange(N) % 5 == 0)
    return pa.DictionaryArray.from_arrays(idx, pa.array([0.25, 4.0, 8.5]))


def run_end_string() -> pa.Array:
    return pa.RunEndEncodedArray.from_arrays([5, N], pa.array(["a", "bc"]))


def dictionary_string() -> pa.Array:
    return pa.DictionaryArray.from_arrays(
        pa.array(np.arange(N) % 2, pa.int16()), pa.array(["x", "yz"])
    )


NUMERIC = [run_end_float, run_end_int, dictionary_float]
ALL = [*NUMERIC, run_end_string, dictionary_string]


def table(make) -> pa.Table:
    # two chunks, and a plain column beside the decoded one
    a = make()
    return pa.table(
        {"d": pa.chunked_array([a.slice(0, 1200), a.slice(1200)]), "x": np.arange(N, dtype="f8")}
    )


def want(make) -> np.ndarray:
    return np.asarray(make().to_pylist(), dtype=object)


def churn() -> None:
    # reuse freed blocks of the sizes the decoded columns had
    junk = [np.full(N * k, 7, np.uint8) for k in (1, 2, 4, 8) for _ in range(4)]
    del junk
    gc.collect()


@pytest.mark.parametrize("make", NUMERIC, ids=lambda f: f.__name__)
def test_to_matrix_reads_decoded_columns_while_they_live(make):
    got = dfbuffer.to_matrix(table(make), dtype="f8")
    a = make()
    w = a.indices.to_pylist() if isinstance(a, pa.DictionaryArray) else a.to_pylist()
    exp = np.array([np.nan if v is None else v for v in w], dtype="f8")  # codes of a dictionary
    np.testing.assert_array_equal(got[:, 0], exp)
    np.testing.assert_array_equal(got[:, 1], np.arange(N, dtype="f8"))


@pytest.mark.parametrize("make", ALL, ids=lambda f: f.__name__)
def test_from_dataframe_results_own_their_decoded_memory(make):
    d = dfbuffer.from_dataframe(table(make))
    churn()
    got = d["d"]
    w = want(make)
    mask = np.ma.getmaskarray(got)
    assert mask.tolist() == [v is None for v in w]
    assert [g for g, m in zip(np.ma.getdata(got).tolist(), mask, strict=True) if not m] == [
        v for v in w if v is not None
    ]


@pytest.mark.parametrize(
    ("make", "via_dict"),
    [(m, False) for m in ALL] + [(m, True) for m in NUMERIC],  # a dict: number arrays
    ids=lambda v: getattr(v, "__name__", "from_dataframe" if v else "table"),
)
def test_to_arrow_of_decoded_columns_outlives_the_source(make, via_dict):
    t = table(make)
    out = pa.table(dfbuffer.to_arrow(dfbuffer.from_dataframe(t) if via_dict else t))
    del t
    churn()
    got = out.column("d").to_pylist()
    assert got == want(make).tolist()
