"""to_matrix reads a mapping's values and a pandas frame's non-block columns (categoricals,
Periods, Sparse, Arrow-backed, ...) in C (matrix_mapping.c, matrix_pandas.c): under a
writer thread that replaces the container's items or rewrites a value's memory, and in
reference cycles.  Each outcome is the result of one state of the container (or a clean
exception of the kinds listed); nothing the call read is held after it."""

from __future__ import annotations

import gc
import sys
import weakref

import numpy as np
import pandas as pd
import pytest
from racing import flipping
from test_racing_containers import PANDAS_FRAME_MUTATION, REFUSED, mutating

import dfbuffer

N = 64
ROUNDS = 150


def _mapping() -> dict:
    return {
        "f": np.arange(N, dtype=np.float64),
        "m": np.ma.MaskedArray(np.arange(N, dtype=np.int32), mask=np.arange(N) % 3 == 0),
        "c": pd.Categorical(np.array(["x", "y"])[np.arange(N) % 2]),
        "i": pd.Series(pd.array(np.arange(N), dtype="Int64")),
        "s": np.arange(2 * N, dtype=np.int16)[::2],  # a strided view
    }


def _check_mapping(m: np.ma.MaskedArray) -> None:
    assert m.shape == (N, 5)
    np.testing.assert_array_equal(m[:, 0], np.arange(N))
    np.testing.assert_array_equal(np.ma.getmaskarray(m[:, 1]), np.arange(N) % 3 == 0)
    np.testing.assert_array_equal(m[:, 2], np.arange(N) % 2)
    np.testing.assert_array_equal(m[:, 3], np.arange(N))
    np.testing.assert_array_equal(m[:, 4], 2 * np.arange(N))


def test_mapping_values_replaced_while_to_matrix_reads():
    d = _mapping()

    def step() -> None:
        fresh = _mapping()
        for k in ("f", "m", "c", "i", "s"):
            d[k] = fresh[k]  # equal values in new arrays, the old ones dropped
        d["x"] = np.zeros(N + 1)  # a ragged column, then gone again
        del d["x"]

    ok = 0
    with mutating(step):
        for _ in range(ROUNDS):
            try:
                m = dfbuffer.to_matrix(d, dtype=np.float64, nulls="mask")
            except REFUSED:
                continue  # the ragged state: ValueError naming 'x'
            _check_mapping(m)
            ok += 1
    assert ok > 0


def test_masked_value_rewritten_while_to_matrix_reads():
    values = np.arange(N * 64, dtype=np.float64)
    mask = np.zeros(N * 64, dtype=bool)
    data = {"v": np.ma.MaskedArray(values, mask=mask, copy=False),
            "w": pd.Series(pd.array(values.astype(np.int64), dtype="Int64"))}
    # the mask to_matrix reads, as bytes for the writer
    target = np.ma.getmaskarray(data["v"]).view(np.uint8)
    good, bad = np.zeros_like(target), np.ones_like(target)
    with flipping(target, good, bad):
        for _ in range(ROUNDS):
            m = dfbuffer.to_matrix(data, nulls="mask")
            # each cell is its value or a null, whatever the mask was meanwhile
            kept = ~np.ma.getmaskarray(m[:, 0])
            np.testing.assert_array_equal(np.ma.getdata(m[:, 0])[kept], values[kept])
            np.testing.assert_array_equal(m[:, 1], values)


@PANDAS_FRAME_MUTATION
def test_pandas_other_columns_replaced_while_to_matrix_reads():
    def frame_values() -> dict:
        return {
            "f": np.arange(N, dtype=np.float64),
            "c": pd.Categorical(np.array(["x", "y"])[np.arange(N) % 2]),
            "p": pd.period_range("2020", periods=N, freq="D").array,
            "sp": pd.arrays.SparseArray(np.arange(N) % 4),
        }

    df = pd.DataFrame(frame_values())
    ordinals = np.asarray(df["p"].array.asi8)

    def step() -> None:
        fresh = frame_values()
        df["c"] = fresh["c"]  # a new array, the old one dropped
        df["p"] = fresh["p"]
        df["x"] = pd.Categorical(["z"] * N)
        del df["x"]

    ok = 0
    with mutating(step):
        for _ in range(ROUNDS):
            try:
                m = dfbuffer.to_matrix(df, columns=["f", "c", "p", "sp"], dtype=np.int64,
                                       period="ordinal")
            except REFUSED:
                continue
            np.testing.assert_array_equal(m[:, 0], np.arange(N))
            np.testing.assert_array_equal(m[:, 1], np.arange(N) % 2)
            np.testing.assert_array_equal(m[:, 2], ordinals)
            np.testing.assert_array_equal(m[:, 3], np.arange(N) % 4)
            ok += 1
    assert ok > 0


def test_mapping_in_a_reference_cycle_is_collected():
    class Holder(dict):
        pass

    m = Holder(_mapping())
    m["self"] = m  # not a column: never selected
    ref = weakref.ref(m)
    cat = weakref.ref(m["c"])
    got = dfbuffer.to_matrix(m, columns=["f", "m", "c", "i", "s"], dtype=np.float64,
                             nulls="mask")
    _check_mapping(got)
    del m
    gc.collect()
    assert ref() is None and cat() is None


def test_pandas_frame_with_other_columns_in_a_reference_cycle_is_collected():
    df = pd.DataFrame({
        "f": np.arange(N, dtype=np.float64),
        "c": pd.Categorical(np.array(["x", "y"])[np.arange(N) % 2]),
        "p": pd.period_range("2020", periods=N, freq="D").array,
        "a": pd.array(pd.date_range("2020", periods=N, tz="UTC")),
    })
    df.attrs["self"] = df
    ref = weakref.ref(df)
    m = dfbuffer.to_matrix(df, dtype=np.int64, period="ordinal", on_unsupported="skip")
    assert m.shape == (N, 3)
    del df
    gc.collect()
    assert ref() is None


@pytest.mark.skipif(not hasattr(sys, "getrefcount"), reason="no sys.getrefcount")
def test_the_values_are_not_held_after_the_call():
    d = _mapping()
    before = {k: sys.getrefcount(v) for k, v in d.items()}
    for _ in range(3):
        dfbuffer.to_matrix(d, dtype=np.float64)
    assert {k: sys.getrefcount(v) for k, v in d.items()} == before
