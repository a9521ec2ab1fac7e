"""dfbuffer.iter_matrices: batches of batch_size rows of any frame or Arrow stream,
re-chunked across the source's batch borders, with to_matrix's values and one dtype
for the whole stream fixed from the schema."""

from __future__ import annotations

import decimal
import weakref

import nanoarrow as na
import numpy as np
import pandas as pd

try:
    import polars as pl
except ImportError:  # no free-threaded wheel: the polars sources skip
    pl = None
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import dfbuffer

SOURCE_BATCH = 10
SIZES = [1, 7, SOURCE_BATCH, 25, 1000]
ROWS = 57


def numeric_table(rows: int = ROWS) -> pa.Table:
    i = np.arange(rows)
    nulls = i % 5 == 2
    return pa.table({
        "b": pa.array(i % 3 == 0, mask=nulls),
        "i8": pa.array((i % 100).astype(np.int8)),
        "i64": pa.array(i * 1000, mask=nulls),
        "u32": pa.array(i.astype(np.uint32)),
        "f32": pa.array(i.astype(np.float32) / 4, mask=i % 7 == 1),
        "f64": pa.array(i / 3.0),
        "f16": pa.array((i / 8).astype(np.float16)),
    })


def batches_of(t: pa.Table, sizes) -> pa.RecordBatchReader:
    """A reader over batches of the given sizes (0 allowed) covering the table."""
    out, pos = [], 0
    for n in sizes:
        out.append(t.slice(pos, n).combine_chunks().to_batches()[0] if n else
                   pa.RecordBatch.from_pylist([], schema=t.schema))
        pos += n
    assert pos == t.num_rows
    return pa.RecordBatchReader.from_batches(t.schema, out)


def reader(t: pa.Table, size: int = SOURCE_BATCH) -> pa.RecordBatchReader:
    return pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=size))


def check_stream(ms, whole, batch_size, *, drop_last=False):
    rows = whole.shape[0]
    want = [batch_size] * (rows // batch_size)
    if rows % batch_size and not drop_last:
        want.append(rows % batch_size)
    assert [m.shape[0] for m in ms] == want
    assert len({m.dtype for m in ms}) <= 1
    join = np.ma.concatenate if np.ma.isMaskedArray(whole) else np.concatenate
    got = join(ms) if ms else np.empty((0, whole.shape[1]), whole.dtype)
    n = got.shape[0]
    np.testing.assert_array_equal(got, whole[:n])
    if np.ma.isMaskedArray(whole):
        assert np.ma.getmaskarray(got).tolist() == np.ma.getmaskarray(whole[:n]).tolist()


@pytest.mark.parametrize("batch_size", SIZES)
@pytest.mark.parametrize("nulls", ["fill", "mask", "always_mask"])
def test_values_as_to_matrix(batch_size, nulls):
    t = numeric_table()
    ms = list(dfbuffer.iter_matrices(reader(t), batch_size, nulls=nulls))
    assert ms[0].dtype == np.float64           # nullable ints: float64 by the schema
    whole = dfbuffer.to_matrix(t, nulls=nulls, dtype=ms[0].dtype)
    check_stream(ms, whole, batch_size)
    if nulls != "fill":
        assert all(isinstance(m, np.ma.MaskedArray) for m in ms)


@pytest.mark.parametrize("batch_size", SIZES)
def test_uneven_and_empty_source_batches(batch_size):
    t = numeric_table()
    src = batches_of(t, [3, 0, 0, 20, 1, 0, 33, 0])
    ms = list(dfbuffer.iter_matrices(src, batch_size, dtype=np.float32))
    assert all(m.dtype == np.float32 and m.flags.c_contiguous for m in ms)
    check_stream(ms, dfbuffer.to_matrix(t, dtype=np.float32), batch_size)


@pytest.mark.parametrize("batch_size", [7, SOURCE_BATCH])
def test_drop_last(batch_size):
    t = numeric_table()
    ms = list(dfbuffer.iter_matrices(reader(t), batch_size, drop_last=True))
    check_stream(ms, dfbuffer.to_matrix(t, dtype=np.float64), batch_size, drop_last=True)


def test_columns_and_order():
    t = numeric_table()
    ms = list(dfbuffer.iter_matrices(reader(t), 7, columns=["f64", "u32"], order="F"))
    assert all(m.flags.f_contiguous and m.dtype == np.float64 for m in ms)
    check_stream(ms, dfbuffer.to_matrix(t, columns=["f64", "u32"]), 7)
    with pytest.raises(KeyError):
        list(dfbuffer.iter_matrices(reader(t), 7, columns=["nope"]))


def test_dtype_fixed_by_the_schema_not_the_values():
    # nulls only in the second source batch: every batch float64 all the same
    nullable = pa.table({"x": pa.array([1, 2, 3, None, 5, 6])})
    ms = list(dfbuffer.iter_matrices(reader(nullable, 3), 3))
    assert [m.dtype for m in ms] == [np.float64, np.float64]
    assert ms[0].tolist() == [[1.0], [2.0], [3.0]] and np.isnan(ms[1][0, 0])
    # a non-nullable field keeps its type
    sch = pa.schema([pa.field("x", pa.int64(), nullable=False),
                     pa.field("b", pa.bool_(), nullable=False)])
    strict = pa.table({"x": [1, 2, 3, 4], "b": [True, False, True, True]}, schema=sch)
    ms = list(dfbuffer.iter_matrices(reader(strict, 3), 2))
    assert [m.dtype for m in ms] == [np.int64, np.int64]
    assert np.concatenate(ms).tolist() == [[1, 1], [2, 0], [3, 1], [4, 1]]
    # bool alone, non-nullable: bool
    ms = list(dfbuffer.iter_matrices(reader(strict, 3), 3, columns=["b"]))
    assert ms[0].dtype == np.bool_
    # nulls="mask" and "raise" do not promote
    ms = list(dfbuffer.iter_matrices(reader(nullable, 3), 3, nulls="mask"))
    assert [m.dtype for m in ms] == [np.int64, np.int64]
    assert ms[1].mask[:, 0].tolist() == [True, False, False]
    it = dfbuffer.iter_matrices(reader(nullable, 3), 3, nulls="raise")
    assert next(it).dtype == np.int64
    with pytest.raises(ValueError, match="null"):
        next(it)


def test_decimals_dictionary_run_end():
    dec = pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-3.5")] * 4,
                   pa.decimal128(9, 2))
    t = pa.table({
        "d": dec,
        "c": pa.array(["a", "b", "c", "b"] * 3).dictionary_encode(),
        "r": pc.run_end_encode(pa.array([1, 1, 1, 2, 2, None, 3, 3, 3, 3, 4, 4])),
    })
    with pytest.raises(TypeError, match="'d'"):
        next(dfbuffer.iter_matrices(reader(t, 5), 4))
    for size in (1, 4, 5, 7, 20):
        ms = list(dfbuffer.iter_matrices(reader(t, 5), size, columns=["d", "r"],
                                         decimals="float64"))
        check_stream(ms, dfbuffer.to_matrix(t, columns=["d", "r"], decimals="float64"),
                     size)
        ms = list(dfbuffer.iter_matrices(reader(t, 5), size, columns=["c"], dtype=np.int16))
        check_stream(ms, dfbuffer.to_matrix(t, columns=["c"], dtype=np.int16), size)


def test_refused_types_raise_to_matrix_errors():
    t = pa.table({"s": ["a", "b"], "x": [1.0, 2.0]})
    with pytest.raises(TypeError, match="column 's' has a string type"):
        next(dfbuffer.iter_matrices(reader(t), 1))
    ms = list(dfbuffer.iter_matrices(reader(t), 1, on_unsupported="skip"))
    assert [m.tolist() for m in ms] == [[[1.0]], [[2.0]]]


def test_out_is_reused():
    t = numeric_table()
    out = np.empty((7, 7), np.float32)
    seen = []
    for m in dfbuffer.iter_matrices(reader(t), 7, out=out):
        assert m.__array_interface__["data"][0] == out.__array_interface__["data"][0]
        seen.append(m.copy())
    check_stream(seen, dfbuffer.to_matrix(t, dtype=np.float32), 7)
    assert seen[-1].shape == (57 % 7, 7)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("nulls", ["fill", "mask"])
def test_out_orders_and_masks(order, nulls):
    t = numeric_table()
    out = np.empty((10, 7), np.float64, order=order)
    seen = []
    for m in dfbuffer.iter_matrices(batches_of(t, [3, 9, 45]), 10, out=out, nulls=nulls):
        assert np.shares_memory(np.ma.getdata(m), out)
        assert m.shape[0] == 10 or m is not out
        seen.append(m.copy())
    check_stream(seen, dfbuffer.to_matrix(t, nulls=nulls, dtype=np.float64), 10)


def test_out_refused():
    t = numeric_table()
    with pytest.raises(ValueError, match="shape"):
        dfbuffer.iter_matrices(reader(t), 7, out=np.empty((6, 7)))
    with pytest.raises(ValueError, match=r"shape \(7, 6\), the stream gives \(7, 7\)"):
        next(dfbuffer.iter_matrices(reader(t), 7, out=np.empty((7, 6))))
    with pytest.raises(ValueError, match="dtype"):
        dfbuffer.iter_matrices(reader(t), 7, dtype=np.float32, out=np.empty((7, 7)))
    with pytest.raises(ValueError, match="does not cast"):
        next(dfbuffer.iter_matrices(reader(t), 7, out=np.empty((7, 7), np.int64)))
    with pytest.raises(ValueError, match="F-ordered"):
        dfbuffer.iter_matrices(reader(t), 7, order="C", out=np.empty((7, 7), order="F"))
    with pytest.raises(ValueError, match="contiguous"):
        dfbuffer.iter_matrices(reader(t), 7, out=np.empty((7, 14))[:, ::2])
    ro = np.empty((7, 7))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        dfbuffer.iter_matrices(reader(t), 7, out=ro)
    with pytest.raises(TypeError):
        dfbuffer.iter_matrices(reader(t), 7, out=[[0.0] * 7] * 7)


@pytest.mark.parametrize("fn", ["iter_matrices", "iter_batches"])
def test_batch_size_refused(fn):
    t = numeric_table()
    call = getattr(dfbuffer, fn)
    for bad in (0, -1, -(2**70)):
        with pytest.raises(ValueError, match=f"at least 1, got {bad}"):
            call(t, bad)
    for bad in (True, False, np.True_, 2.0, 2.5, "3", None, np.float64(4)):
        with pytest.raises(TypeError):
            call(t, bad)
    # any integer (NumPy's too); one larger than the source gives one batch of it all
    for size in (np.int8(ROWS), 2**63, 10**30):
        got = list(call(reader(t), size))
        assert len(got) == 1
        assert len(got[0] if fn == "iter_matrices" else got[0]["f64"]) == ROWS
    assert len(list(call({"x": np.arange(3)}, 10**30))) == 1


def test_out_of_other_kinds_refused():
    t = numeric_table()
    with pytest.raises(TypeError, match="numpy.ndarray, got MaskedArray"):
        dfbuffer.iter_matrices(reader(t), 7, out=np.ma.zeros((7, 7)))
    for shape in ((7,), (7, 7, 1), (0, 7)):
        with pytest.raises(ValueError, match="shape"):
            dfbuffer.iter_matrices(reader(t), 7, out=np.empty(shape))
    # a dtype no matrix has: at the call, as to_matrix words it
    for dt in (np.complex64, np.longdouble, ">f8", "m8[s]", object, "V8"):
        with pytest.raises(ValueError, match=r"out has dtype dtype\(.*float16/32/64 in "
                                             "native byte order expected"):
            dfbuffer.iter_matrices(reader(t), 7, out=np.empty((7, 7), dt))
    # a dtype the stream's float64 does not cast to under same_kind: at the first batch
    for dt in (np.int64, np.bool_, np.uint8):
        it = dfbuffer.iter_matrices(reader(t), 7, out=np.empty((7, 7), dt))
        with pytest.raises(ValueError, match="does not cast"):
            next(it)
    assert next(dfbuffer.iter_matrices(reader(t), 7, out=np.empty((7, 7), np.float16))
                ).dtype == np.float16


@pytest.mark.parametrize("order", ["C", "F"])
def test_out_overlapping_the_source_refused(order):
    """An ``out`` sharing memory with the rows a batch reads (a mapping or pandas column,
    or an Arrow batch, viewing out) is refused at that batch by to_matrix's ValueError,
    the batch named; the batches before it come whole."""
    pd = pytest.importorskip("pandas")
    out = np.empty((3, 2), order=order)
    flat = out.reshape(-1, order="A")                  # a view of out's 6 values
    flat[:] = np.arange(6.0) + 100
    first = pa.record_batch({"x": pa.array(np.arange(3.0)), "y": pa.array(np.arange(3.0))})
    inside = pa.record_batch({"x": pa.array(flat[:3]), "y": pa.array(flat[3:])})
    assert np.shares_memory(np.frombuffer(inside.column(0).buffers()[1]), out)
    sources = [
        ("arrow", pa.RecordBatchReader.from_batches(first.schema, [first, inside]), 2),
        ("arrow, across a border", pa.RecordBatchReader.from_batches(
            first.schema, [first.slice(0, 2), inside, first.slice(2)]), 1),
        ("mapping", {"x": flat[:3], "y": flat[3:]}, 1),
        ("pandas", pd.DataFrame({"x": flat[:3], "y": flat[3:]}, copy=False), 1),
    ]
    for name, src, bad in sources:
        got = []
        with pytest.raises(ValueError, match="out shares memory with column 'x'") as err:
            for m in dfbuffer.iter_matrices(src, 3, out=out):
                got.append(m.copy())
        assert len(got) == bad - 1, name
        assert got == [] or got[0].tolist() == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]
        assert err.value.__notes__ == [
            f"dfbuffer.iter_matrices: batch {bad} (rows {3 * bad - 3} to {3 * bad - 1} of "
            "the source) failed"], name


def test_a_view_of_out_kept_is_overwritten():
    """As io.RawIOBase.readinto's buffer: what a consumer keeps of a batch (the batch
    itself, a view, a torch or DLPack view) shows the next batch's rows, a copy does
    not."""
    t = pa.table({"x": np.arange(10.0), "y": np.arange(10.0) * 10})
    out = np.empty((4, 2))
    it = dfbuffer.iter_matrices(t.to_reader(max_chunksize=3), 4, out=out)
    first = next(it)
    column, copied, dl = first[:, 1], first.copy(), np.from_dlpack(first)
    assert first.tolist() == [[0.0, 0.0], [1.0, 10.0], [2.0, 20.0], [3.0, 30.0]]
    second = next(it)
    assert second.base is first.base or second is first or np.shares_memory(second, first)
    assert first.tolist() == second.tolist() == [[4, 40], [5, 50], [6, 60], [7, 70]]
    assert column.tolist() == [40.0, 50.0, 60.0, 70.0] and dl.tolist() == first.tolist()
    assert copied.tolist() == [[0.0, 0.0], [1.0, 10.0], [2.0, 20.0], [3.0, 30.0]]
    last = next(it)                                   # the short one: out[:2]
    assert last.shape == (2, 2) and np.shares_memory(last, out)
    assert first[:2].tolist() == [[8, 80], [9, 90]] and first[2:].tolist() == [[6, 60],
                                                                              [7, 70]]


def test_arguments_refused():
    t = numeric_table()
    with pytest.raises(ValueError, match="at least 1"):
        dfbuffer.iter_matrices(t, 0)
    with pytest.raises(TypeError):
        dfbuffer.iter_matrices(t, 2.0)
    with pytest.raises(ValueError, match="nulls"):
        dfbuffer.iter_matrices(t, 2, nulls="zero")
    with pytest.raises(ValueError, match="order"):
        dfbuffer.iter_matrices(t, 2, order="K")
    with pytest.raises(TypeError):
        dfbuffer.iter_matrices(object(), 2)
    if pl is not None:
        with pytest.raises(TypeError, match="collect"):
            dfbuffer.iter_matrices(pl.DataFrame({"x": [1]}).lazy(), 2)


def test_empty_streams():
    t = numeric_table(0)
    assert list(dfbuffer.iter_matrices(reader(t), 3)) == []
    assert list(dfbuffer.iter_matrices(pa.RecordBatchReader.from_batches(t.schema, []), 3)) == []
    assert list(dfbuffer.iter_matrices(batches_of(t, [0, 0]), 3)) == []


def sources(t: pa.Table):
    """The same rows from every kind of source."""
    yield "reader", reader(t)
    yield "table", t
    yield "scanner", __import__("pyarrow.dataset").dataset.dataset(t).scanner(
        batch_size=SOURCE_BATCH).to_reader()
    yield "nanoarrow", na.ArrayStream(t)
    if pl is not None:
        yield "polars", pl.from_arrow(t)
    if pl is not None and hasattr(pl.LazyFrame, "collect_batches"):  # polars 1.32+
        yield "polars_batches", pl.from_arrow(t).lazy().collect_batches(
            chunk_size=SOURCE_BATCH)
    yield "pandas", t.to_pandas()
    yield "mapping", {k: t.column(k).to_numpy() for k in t.column_names}
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.register("t", t)
    yield "duckdb", con.sql("select * from t")


@pytest.mark.parametrize("batch_size", [1, 7, 1000])
def test_every_source(batch_size):
    t = pa.table({"x": np.arange(ROWS) / 2, "y": np.arange(ROWS, dtype=np.int32)})
    whole = dfbuffer.to_matrix(t)
    for name, src in sources(t):
        ms = list(dfbuffer.iter_matrices(src, batch_size))
        assert all(m.dtype == np.float64 for m in ms), name
        check_stream(ms, whole, batch_size)


def test_non_nullable_numpy_sources_keep_their_type():
    ms = list(dfbuffer.iter_matrices({"x": np.arange(5), "y": np.arange(5) * 2}, 2))
    assert [m.dtype for m in ms] == [np.int64] * 3
    df = pd.DataFrame({"x": np.arange(5), "m": pd.array([1, 2, 3, 4, 5], dtype="Int64")})
    ms = list(dfbuffer.iter_matrices(df, 2, columns=["x"]))
    assert [m.dtype for m in ms] == [np.int64] * 3
    ms = list(dfbuffer.iter_matrices(df, 2))               # a masked column: float64
    assert [m.dtype for m in ms] == [np.float64] * 3
    assert np.concatenate(ms).tolist() == dfbuffer.to_matrix(df, dtype=np.float64).tolist()


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("nulls", ["fill"])
def test_small_batches_converted_in_groups(nulls, drop_last):
    """Batches far smaller than a source batch are converted a group at a time (one
    to_matrix call, each batch a view of its rows): the same values, shapes and dtype
    as one by one, across source borders and at the stream's end."""
    t = numeric_table(2500)
    src = batches_of(t, [1000, 3, 997, 500])
    ms = list(dfbuffer.iter_matrices(src, 7, nulls=nulls, drop_last=drop_last))
    assert any(m.base is not None and m.base.shape[0] > 7 for m in ms)  # groups formed
    assert all(m.flags.c_contiguous and m.dtype == np.float64 for m in ms)
    whole = dfbuffer.to_matrix(t, nulls=nulls, dtype=np.float64)
    check_stream(ms, whole, 7, drop_last=drop_last)
    out = np.empty((7, whole.shape[1]), np.float32)  # groups through out= too
    src = batches_of(t, [1000, 3, 997, 500])
    got = []
    for m in dfbuffer.iter_matrices(src, 7, nulls=nulls, drop_last=drop_last, out=out):
        assert np.shares_memory(m, out) and m.shape[0] <= 7
        got.append(m.copy())
    check_stream(got, whole.astype(np.float32), 7, drop_last=drop_last)
    # where a batch's own values would decide its type or raise, no groups are formed
    masked = list(dfbuffer.iter_matrices(batches_of(t, [2500]), 7, nulls="mask"))
    assert not any(m.base is not None and m.base.shape[0] > 7 for m in masked)


def test_deprecated_nulls_nan_warns_once_and_reads_as_fill():
    t = numeric_table(2500)
    with pytest.warns(DeprecationWarning, match="nulls='nan' is deprecated") as rec:
        ms = list(dfbuffer.iter_matrices(batches_of(t, [1000, 3, 997, 500]), 7, nulls="nan"))
    assert len([w for w in rec if w.category is DeprecationWarning]) == 1
    fill = list(dfbuffer.iter_matrices(batches_of(t, [1000, 3, 997, 500]), 7, nulls="fill"))
    assert len(ms) == len(fill)
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(ms, fill, strict=True))
    with pytest.warns(DeprecationWarning, match="nulls='nan' is deprecated") as rec:
        bs = list(dfbuffer.iter_batches(batches_of(t, [1000, 1500]), 700, nulls="nan"))
    assert len([w for w in rec if w.category is DeprecationWarning]) == 1
    assert sum(len(next(iter(b.values()))) for b in bs) == 2500


def test_single_use_stream_read_once():
    src = na.ArrayStream(numeric_table())
    ms = list(dfbuffer.iter_matrices(src, 20))
    assert sum(len(m) for m in ms) == ROWS
    with pytest.raises(RuntimeError, match="released"):
        src.__arrow_c_stream__()


def test_lazy_and_bounded():
    """The stream is pulled one source batch at a time: at most two source batches'
    memory is alive at any point of the iteration."""
    alive: set[int] = set()
    made = []

    def gen():
        for k in range(12):
            values = np.full(100, float(k))
            alive.add(k)
            weakref.finalize(values, alive.discard, k)
            made.append(k)
            yield pa.record_batch({"x": values})
            del values

    schema = pa.schema([("x", pa.float64())])
    for batch_size in (30, 100, 150):
        alive.clear()
        made.clear()
        it = dfbuffer.iter_matrices(pa.RecordBatchReader.from_batches(schema, gen()),
                                    batch_size)
        assert made == []                       # nothing read before the first next()
        peak = 0
        rows = 0
        for m in it:
            rows += len(m)
            peak = max(peak, len(alive))
            assert len(made) <= (rows + batch_size) // 100 + 1     # never read ahead
        assert rows == 1200 and peak <= 2, (batch_size, peak)
        del it


def test_torch_from_dlpack_zero_copy():
    torch = pytest.importorskip("torch")
    t = numeric_table()
    for m in dfbuffer.iter_matrices(reader(t), 16, dtype=np.float32):
        x = torch.from_dlpack(m)
        assert x.data_ptr() == m.ctypes.data and tuple(x.shape) == m.shape
        m[0, 0] = 123.0
        assert x[0, 0].item() == 123.0
