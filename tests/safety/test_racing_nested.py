"""Producer memory rewritten by another thread while nested Arrow columns convert.

A thread rewrites the offsets of a list, large list or map, the offsets and sizes of
a list view, or the type ids and offsets of a union (NumPy memory handed to pyarrow
zero-copy, tests/racing.py) between a good state and a bad one while from_dataframe
reads them.  Every outcome is the good column or a clean ValueError; never a crash or
a row read outside the child.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from racing import N, bad_offsets, race
from run_end_arrays import run_end_array

import dfbuffer


def convert(arr):
    return lambda: dfbuffer.from_dataframe(pa.table({"c": arr}))["c"]


@pytest.mark.parametrize("kind", ["list", "large_list", "map"])
def test_list_offsets_rewritten(kind):
    width = np.int64 if kind == "large_list" else np.int32
    good = (np.arange(N + 1) * 2).astype(width)
    offs = good.copy()
    values = pa.array(np.arange(2 * N, dtype=np.int64))
    if kind == "map":
        typ = pa.map_(pa.int64(), pa.int64())
        child = pa.StructArray.from_arrays([values, values], fields=[typ.key_field, typ.item_field])
    else:
        typ = pa.list_(pa.int64()) if kind == "list" else pa.large_list(pa.int64())
        child = values
    arr = pa.Array.from_buffers(typ, N, [None, pa.py_buffer(offs)], children=[child])

    def check(res):
        assert len(res) == N
        if kind == "map":
            assert res[N - 1] == [(2 * N - 2, 2 * N - 2), (2 * N - 1, 2 * N - 1)]
        else:
            rows = np.stack(list(res))
            assert rows.shape == (N, 2) and (rows.ravel() == np.arange(2 * N)).all()

    race(convert(arr), check, [(offs, good, bad_offsets(good))])


@pytest.mark.parametrize("large", [False, True])
def test_list_view_offsets_and_sizes_rewritten(large):
    width = np.int64 if large else np.int32
    good_offs = (np.arange(N) * 2).astype(width)
    good_sizes = np.full(N, 2, dtype=width)
    offs, sizes = good_offs.copy(), good_sizes.copy()
    bad_sizes = good_sizes.copy()
    bad_sizes[1::2] = np.iinfo(width).max
    typ = pa.large_list_view(pa.int64()) if large else pa.list_view(pa.int64())
    arr = pa.Array.from_buffers(
        typ, N, [None, pa.py_buffer(offs), pa.py_buffer(sizes)],
        children=[pa.array(np.arange(2 * N, dtype=np.int64))],
    )

    def check(res):
        rows = np.stack(list(res))
        assert rows.shape == (N, 2) and (rows.ravel() == np.arange(2 * N)).all()

    race(
        convert(arr),
        check,
        [(offs, good_offs, bad_offsets(good_offs)), (sizes, good_sizes, bad_sizes)],
    )


def test_dense_union_ids_and_offsets_rewritten():
    good_ids = (np.arange(N) % 2).astype(np.int8)
    good_offs = (np.arange(N) // 2).astype(np.int32)
    ids, offs = good_ids.copy(), good_offs.copy()
    bad_ids = good_ids.copy()
    bad_ids[1::2] = 99
    typ = pa.dense_union([pa.field("i", pa.int64()), pa.field("s", pa.string())])
    half = (N + 1) // 2
    ints = pa.array(np.arange(half, dtype=np.int64))
    strs = pa.array([f"s{k}" for k in range(half)])
    arr = pa.Array.from_buffers(
        typ, N, [None, pa.py_buffer(ids), pa.py_buffer(offs)], children=[ints, strs]
    )
    want = arr.to_pylist()

    def check(res):
        assert res.tolist() == want

    race(
        convert(arr),
        check,
        [(ids, good_ids, bad_ids), (offs, good_offs, bad_offsets(good_offs))],
    )


def test_sparse_union_ids_rewritten():
    good_ids = (np.arange(N) % 3 == 0).astype(np.int8)
    ids = good_ids.copy()
    bad_ids = good_ids.copy()
    bad_ids[::5] = -3
    typ = pa.sparse_union([pa.field("a", pa.int64()), pa.field("b", pa.float64())])
    a = pa.array(np.arange(N, dtype=np.int64))
    b = pa.array(np.arange(N, dtype=np.float64) / 2)
    arr = pa.Array.from_buffers(typ, N, [None, pa.py_buffer(ids)], children=[a, b])
    want = arr.to_pylist()

    def check(res):
        assert res.tolist() == want

    race(convert(arr), check, [(ids, good_ids, bad_ids)])


def test_run_end_encoded_nested_run_ends_rewritten():
    # run ends of structs rewritten between increasing ends and ends that go backwards:
    # the good rows or a clean ValueError
    good = (np.arange(1, N + 1) * 2).astype(np.int32)
    bad = good.copy()
    bad[1::2] = 1
    ends = good.copy()
    values = pa.StructArray.from_arrays([pa.array(np.arange(N, dtype=np.int64))], names=["a"])
    arr = run_end_array(pa.Array.from_buffers(pa.int32(), N, [None, pa.py_buffer(ends)]),
                        values)
    want = arr.to_pylist()

    def check(res):
        assert res.tolist() == want

    race(convert(arr), check, [(ends, good, bad)])
