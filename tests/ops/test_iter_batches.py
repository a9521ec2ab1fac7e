"""dfbuffer.iter_batches: dicts of NumPy columns of batch_size rows of any frame or
Arrow stream, by from_dataframe's result rule, zero-copy inside a source batch, each
column's type fixed by the schema."""

from __future__ import annotations

import datetime
import decimal
import weakref

import nanoarrow as na
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import dfbuffer

ROWS = 41
SIZES = [1, 7, 10, 1000]


def reader(t: pa.Table, size: int = 10) -> pa.RecordBatchReader:
    return pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=size))


def plain(v):
    """A result value as plain Python (arrays to lists, masked to None)."""
    if isinstance(v, dfbuffer.CategoricalCodes):
        return ("codes", plain(v.codes), plain(v.categories))
    if isinstance(v, np.ma.MaskedArray):
        return [None if m else plain(x) for x, m in zip(v.data, np.ma.getmaskarray(v), strict=True)]
    if isinstance(v, np.ndarray):
        return [plain(x) for x in v.tolist()] if v.dtype != object else [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, float) and v != v:
        return "nan"
    return v


def joined(batches, name):
    out = []
    for b in batches:
        out.extend(plain(b[name]))
    return out


def mixed_table(rows: int = ROWS) -> pa.Table:
    i = np.arange(rows)
    nulls = i % 6 == 4
    ts = np.datetime64("2024-01-01T00:00:00", "us") + i.astype("m8[h]")
    return pa.table({
        "b": pa.array(i % 2 == 0, mask=nulls),
        "i16": pa.array(i.astype(np.int16), mask=nulls),
        "u8": pa.array((i % 200).astype(np.uint8)),
        "f": pa.array(i / 4.0, mask=i % 9 == 0),
        "f16": pa.array((i / 2).astype(np.float16)),
        "dec": pa.array([None if k % 5 == 0 else decimal.Decimal(k) / 4 for k in range(rows)],
                        pa.decimal128(10, 2)),
        "ts": pa.array(ts, pa.timestamp("us", tz="Europe/Paris"), mask=nulls),
        "date": pa.array([datetime.date(2020, 1, 1 + k % 28) for k in range(rows)]),
        "s": pa.array([None if k % 7 == 3 else f"s{k}" for k in range(rows)]),
        "ls": pa.array([f"{k}" * (k % 4) for k in range(rows)], pa.large_string()),
        "cat": pa.array([["x", "y", "z", None][k % 4] for k in range(rows)]).dictionary_encode(),
        "ree": pc.run_end_encode(pa.array([k // 5 if k % 11 else None for k in range(rows)])),
        "l": pa.array([None if k % 8 == 1 else list(range(k % 3)) for k in range(rows)]),
        "st": pa.array([{"a": k, "b": str(k)} for k in range(rows)]),
    })


@pytest.mark.parametrize("batch_size", SIZES)
@pytest.mark.parametrize("nulls", ["mask", "fill", "always_mask"])
def test_values_as_from_dataframe(batch_size, nulls):
    t = mixed_table()
    whole = dfbuffer.from_dataframe(t, nulls=nulls)
    got = list(dfbuffer.iter_batches(reader(t), batch_size, nulls=nulls))
    want = [batch_size] * (ROWS // batch_size) + ([ROWS % batch_size] if ROWS % batch_size else [])
    assert [len(next(iter(b.values()))) for b in got] == want
    for name in whole:
        assert joined(got, name) == plain(whole[name]), name
        assert all(list(b) == list(whole) for b in got)


def test_types_fixed_by_the_schema():
    # nulls in the second source batch only
    t = pa.table({"i": pa.array([1, 2, 3, None, 5, 6]), "s": ["a", "b", "c", None, "e", "f"]})
    got = list(dfbuffer.iter_batches(reader(t, 3), 3))
    assert all(isinstance(b["i"], np.ma.MaskedArray) and b["i"].dtype == np.int64 for b in got)
    assert all(isinstance(b["s"], np.ma.MaskedArray) for b in got)
    assert got[0]["i"].mask.tolist() == [False] * 3
    got = list(dfbuffer.iter_batches(reader(t, 3), 3, nulls="fill"))
    assert [b["i"].dtype for b in got] == [np.float64, np.float64]
    assert got[0]["i"].tolist() == [1.0, 2.0, 3.0] and np.isnan(got[1]["i"][0])
    # non-nullable fields are plain arrays of their type
    sch = pa.schema([pa.field("i", pa.int64(), nullable=False)])
    strict = pa.table({"i": [1, 2, 3, 4]}, schema=sch)
    for nulls in ("mask", "fill"):
        got = list(dfbuffer.iter_batches(reader(strict, 3), 2, nulls=nulls))
        assert all(type(b["i"]) is np.ndarray and b["i"].dtype == np.int64 for b in got)
    # raise: the batch with the null raises
    it = dfbuffer.iter_batches(reader(t, 3), 3, nulls="raise", columns=["i"])
    assert next(it)["i"].tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="column 'i' has 1 null value"):
        next(it)


def test_zero_copy_inside_a_source_batch():
    x = np.arange(30.0)
    t = pa.table({"x": x})
    addr = t.column("x").chunks[0].buffers()[1].address
    got = list(dfbuffer.iter_batches(reader(t, 10), 5))
    for k, b in enumerate(got):
        assert b["x"].ctypes.data == addr + 5 * k * 8        # views of the producer
        assert not b["x"].flags.writeable
    spans = list(dfbuffer.iter_batches(reader(t, 10), 7))   # 7..13 spans a border: a copy
    assert spans[1]["x"].tolist() == list(range(7, 14))
    with pytest.raises(RuntimeError):
        list(dfbuffer.iter_batches(reader(t, 10), 7, copy=False))
    assert list(dfbuffer.iter_batches(reader(t, 10), 5, copy=False))[1]["x"].tolist() == [
        5.0, 6.0, 7.0, 8.0, 9.0]


def test_options_pass_through():
    t = mixed_table()
    got = list(dfbuffer.iter_batches(reader(t), 7, columns=["cat", "s", "st", "dec"],
                                     categorical="codes", strings="stringdtype",
                                     structs="flatten", decimals="float64"))
    whole = dfbuffer.from_dataframe(t, columns=["cat", "s", "st", "dec"], categorical="codes",
                                    strings="stringdtype", structs="flatten",
                                    decimals="float64")
    assert list(got[0]) == list(whole) == ["cat", "s", "st.a", "st.b", "dec"]
    assert isinstance(got[0]["cat"], dfbuffer.CategoricalCodes)
    assert got[0]["dec"].dtype == np.float64
    for name in whole:
        if name == "cat":
            codes = [c for b in got for c in plain(b["cat"].codes)]
            assert codes == plain(whole["cat"].codes)
        else:
            assert joined(got, name) == plain(whole[name]), name
    with pytest.raises(KeyError):
        next(dfbuffer.iter_batches(reader(t), 7, columns=["nope"]))


def test_dictionaries_differing_between_source_batches():
    sch = pa.schema([("c", pa.dictionary(pa.int32(), pa.string()))])
    b1 = pa.record_batch([pa.DictionaryArray.from_arrays([0, 1, 0], ["a", "b"])], schema=sch)
    b2 = pa.record_batch([pa.DictionaryArray.from_arrays([1, 0, None], ["z", "y"])],
                         schema=sch)
    got = list(dfbuffer.iter_batches(pa.RecordBatchReader.from_batches(sch, [b1, b2]), 4))
    assert joined(got, "c") == ["a", "b", "a", "y", "z", None]


def test_sources_and_drop_last():
    t = pa.table({"x": np.arange(ROWS) / 2, "y": np.arange(ROWS, dtype=np.int32)})
    for src in (reader(t), t, na.ArrayStream(t), t.to_pandas(),
                {"x": t.column("x").to_numpy(), "y": t.column("y").to_numpy()}):
        got = list(dfbuffer.iter_batches(src, 8, drop_last=True))
        assert [len(b["x"]) for b in got] == [8] * 5
        assert joined(got, "y") == list(range(40))
    df = pd.DataFrame({"m": pd.array([1, None, 3], dtype="Int64"), "n": [1, 2, 3]})
    got = list(dfbuffer.iter_batches(df, 1))
    assert all(isinstance(b["m"], np.ma.MaskedArray) and type(b["n"]) is np.ndarray
               for b in got)
    got = list(dfbuffer.iter_batches({"m": np.ma.array([1, 2, 3], mask=[0, 1, 0])}, 2))
    assert all(isinstance(b["m"], np.ma.MaskedArray) for b in got)
    # labels that are not str: keyed by str(label), as from_dataframe keys them
    df = pd.DataFrame({0: [1, 2, 3], 1: pd.array([1, None, 3], dtype="Int64")})
    for nulls in ("mask", "fill"):
        got = list(dfbuffer.iter_batches(df, 2, nulls=nulls))
        assert [list(b) for b in got] == [["0", "1"]] * 2
        assert joined(got, "0") == [1, 2, 3]
        assert joined(got, "1") == ([1, None, 3] if nulls == "mask" else [1.0, "nan", 3.0])
    got = list(dfbuffer.iter_batches({0: np.arange(3), "y": np.arange(3.0)}, 2))
    assert joined(got, "0") == [0, 1, 2]


def test_empty_and_zero_row_batches():
    t = mixed_table(0)
    assert list(dfbuffer.iter_batches(reader(t), 3)) == []
    x = pa.table({"x": np.arange(6.0)})
    empty = pa.record_batch({"x": pa.array([], pa.float64())})
    parts = [empty, x.slice(0, 2).to_batches()[0], empty, empty, x.slice(2, 4).to_batches()[0],
             empty]
    got = list(dfbuffer.iter_batches(pa.RecordBatchReader.from_batches(x.schema, parts), 3))
    assert [b["x"].tolist() for b in got] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_lazy_and_bounded():
    alive: set[int] = set()

    def gen():
        for k in range(10):
            values = np.full(100, float(k))
            alive.add(k)
            weakref.finalize(values, alive.discard, k)
            yield pa.record_batch({"x": values})
            del values

    schema = pa.schema([("x", pa.float64())])
    peak = 0
    for batch_size in (30, 150):
        for b in dfbuffer.iter_batches(pa.RecordBatchReader.from_batches(schema, gen()),
                                       batch_size):
            peak = max(peak, len(alive))
            del b
    assert 1 <= peak <= 2


def test_a_mapping_of_buffers_is_sliced_as_buffers():
    # a Buffer value is a column as an ndarray is: sliced into Buffers over its memory,
    # each batch what from_dataframe / to_matrix give for those rows
    values = np.arange(5, dtype=np.int8)
    src = {"c": dfbuffer.Buffer.from_object(values), "d": np.arange(5.0)}
    got = list(dfbuffer.iter_batches(src, 2))
    assert [b["c"].tolist() for b in got] == [[0, 1], [2, 3], [4]]
    assert all(type(b["c"]) is np.ndarray and b["c"].dtype == np.int8 for b in got)
    assert np.shares_memory(got[0]["c"], values)
    mats = list(dfbuffer.iter_matrices(src, 2))
    np.testing.assert_array_equal(np.concatenate(mats), dfbuffer.to_matrix(src))
    assert mats[0].dtype == dfbuffer.to_matrix(src).dtype
    bools = {"b": dfbuffer.Buffer.from_object(np.array([True, False]))}
    with pytest.raises(TypeError, match="column 'b': bool Buffers"):
        list(dfbuffer.iter_batches(bools, 1))  # refused as from_dataframe refuses it
