"""to_matrix(stream) and from_dataframe(stream): an Arrow stream read whole, group by
group at bounded memory, giving what the same functions give for all its batches at
once (``pa.Table.from_batches(batches)``), with every option, from every stream producer.

The group size is lowered (``_stream_group_bytes``) so that small streams cross many
group borders: each group is filled or converted and dropped before the next is read.
"""

from __future__ import annotations

import decimal
import gc
import threading
import weakref

import nanoarrow as na
import numpy as np
import pyarrow as pa
import pytest
from racing import flipping

import dfbuffer
from dfbuffer._interchange import _stream_group_bytes

try:
    import polars as pl
except ImportError:  # no free-threaded wheel: the polars sources skip
    pl = None

# uneven source batches, empty ones among them
SIZES = [0, 3, 1, 0, 7, 2, 0, 11, 5, 0, 4, 1, 9, 0]
ROWS = sum(SIZES)


@pytest.fixture(params=[1, 200, None], ids=["group_per_batch", "small_groups", "one_group"])
def group_bytes(request):
    """The group size for the test: every batch its own group, a few batches per
    group, or the default (these streams are one group)."""
    before = _stream_group_bytes()
    if request.param is not None:
        _stream_group_bytes(request.param)
    yield request.param
    _stream_group_bytes(before)


def batches(t: pa.Table, sizes=SIZES) -> list[pa.RecordBatch]:
    out, pos = [], 0
    for n in sizes:
        out.append(
            t.slice(pos, n).combine_chunks().to_batches()[0]
            if n
            else pa.RecordBatch.from_pylist([], schema=t.schema)
        )
        pos += n
    assert pos == t.num_rows
    return out


def stream(bs: list[pa.RecordBatch], schema: pa.Schema) -> pa.RecordBatchReader:
    """A reader over a generator: its length unknown, read once."""
    return pa.RecordBatchReader.from_batches(schema, (b for b in bs))


def whole(bs: list[pa.RecordBatch], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_batches(bs, schema)


def null_mask(i: np.ndarray, every: int, at: int) -> np.ndarray:
    return i % every == at


def matrix_table(kind: str) -> pa.Table:
    """Numeric columns to_matrix takes, with the null kind `kind`: none, some
    everywhere, or only in the last rows (the type changes late)."""
    i = np.arange(ROWS)
    if kind == "none":
        m = np.zeros(ROWS, bool)
    elif kind == "some":
        m = null_mask(i, 5, 2)
    else:  # late: the last source batch alone has a null
        m = i == ROWS - 3
    return pa.table(
        {
            "b": pa.array(i % 3 == 0, mask=m),
            "i8": pa.array((i % 100).astype(np.int8)),
            "i64": pa.array(i * 1000 - 7, mask=m),
            "u32": pa.array(i.astype(np.uint32)),
            "f16": pa.array((i / 8).astype(np.float16)),
            "f32": pa.array(i.astype(np.float32) / 4, mask=m),
            "f64": pa.array(i / 3.0),
            "dict": pa.array((i % 4).astype(str)).dictionary_encode(),
            "dec": pa.array([decimal.Decimal(int(v)) / 4 for v in i], pa.decimal128(10, 2)),
            "null": pa.nulls(ROWS, pa.null()) if kind != "none" else pa.array(i % 2),
        }
    )


def same_matrix(got, want) -> None:
    assert type(got) is type(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.flags.c_contiguous == want.flags.c_contiguous
    assert got.flags.f_contiguous == want.flags.f_contiguous
    np.testing.assert_array_equal(np.ma.getdata(got), np.ma.getdata(want))
    if isinstance(want, np.ma.MaskedArray):
        np.testing.assert_array_equal(got.mask, want.mask)


def both_matrices(t: pa.Table, **kw):
    bs = batches(t)
    try:
        want = dfbuffer.to_matrix(whole(bs, t.schema), **kw)
    except (TypeError, ValueError) as e:
        with pytest.raises(type(e)):
            dfbuffer.to_matrix(stream(bs, t.schema), **kw)
        return None, None
    return dfbuffer.to_matrix(stream(bs, t.schema), **kw), want


@pytest.mark.parametrize("kind", ["none", "some", "late"])
@pytest.mark.parametrize("nulls", ["fill", "mask", "always_mask", "raise"])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize(
    "columns", [["i64"], ["b", "i8"], ["i8", "u32"], ["i8", "f16"], ["i64", "f32", "f64"], None]
)
def test_matrix_is_the_whole_tables(group_bytes, kind, nulls, order, columns):
    t = matrix_table(kind)
    if columns is None:
        columns = ["b", "i8", "i64", "u32", "f16", "f32", "f64", "null"]
    got, want = both_matrices(t, nulls=nulls, order=order, columns=columns)
    if want is not None:
        same_matrix(got, want)


@pytest.mark.parametrize("kind", ["none", "some", "late"])
@pytest.mark.parametrize(
    "kw",
    [
        {"dtype": np.float32},
        {"dtype": np.int64},
        {"dtype": np.int16, "columns": ["dict", "i8"]},
        {"decimals": "float64", "columns": ["dec", "f64"]},
        {"on_unsupported": "skip"},
        {"columns": ["f64", "f64", "i8"]},
        {"columns": []},
    ],
)
def test_matrix_options_are_the_whole_tables(group_bytes, kind, kw):
    got, want = both_matrices(matrix_table(kind), **kw)
    if want is not None:
        same_matrix(got, want)


def test_matrix_refusals_are_the_whole_tables(group_bytes):
    t = matrix_table("some")
    with pytest.raises(TypeError, match="'dict'"):
        dfbuffer.to_matrix(stream(batches(t), t.schema))
    with pytest.raises(ValueError, match="column 'i64' has .* null"):
        dfbuffer.to_matrix(stream(batches(t), t.schema), columns=["i64"], nulls="raise")
    with pytest.raises(dfbuffer.CopyError):
        dfbuffer.to_matrix(stream(batches(t), t.schema), copy=False)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("nulls", ["fill", "mask"])
def test_matrix_out_is_written_batch_by_batch(group_bytes, order, nulls):
    t = matrix_table("late")
    cols = ["i64", "f32", "f64"]
    want = dfbuffer.to_matrix(t, columns=cols, nulls=nulls)
    out = np.full((ROWS, 3), -1.0, order=order)
    got = dfbuffer.to_matrix(stream(batches(t), t.schema), columns=cols, nulls=nulls, out=out)
    assert np.ma.getdata(got) is out or np.ma.getdata(got).base is out
    np.testing.assert_array_equal(out, np.ma.getdata(want))
    for rows in (ROWS - 1, ROWS + 1):
        with pytest.raises(ValueError, match="out has shape"):
            dfbuffer.to_matrix(
                stream(batches(t), t.schema), columns=cols, out=np.empty((rows, 3), order=order)
            )
    # an integer out takes the batches until the null, as it refuses the whole table
    with pytest.raises(ValueError, match="out has dtype .*int64.* promote to .*float64"):
        dfbuffer.to_matrix(t, columns=["i64"], out=np.empty((ROWS, 1), np.int64))
    with pytest.raises(ValueError, match="out has dtype .*int64.* promote to .*float64"):
        dfbuffer.to_matrix(
            stream(batches(t), t.schema), columns=["i64"], out=np.empty((ROWS, 1), np.int64)
        )


def test_nullable_integers_follow_the_values_as_for_the_whole_table(group_bytes):
    """The stream's dtype is the whole table's: a nullable integer column without a
    null stays int64 (unlike iter_matrices, which fixes the type from the schema before
    the first batch); its first null, in any batch, makes the whole result float64."""
    i = np.arange(ROWS)
    for mask, dtype in ((None, np.int64), (i == ROWS - 1, np.float64), (i == 3, np.float64)):
        t = pa.table({"x": pa.array(i, mask=mask)})
        assert t.schema.field("x").nullable
        got = dfbuffer.to_matrix(stream(batches(t), t.schema))
        assert got.dtype == dtype
        assert dfbuffer.to_matrix(t).dtype == dtype
        want = i.astype(dtype)
        if mask is not None:
            want[mask] = np.nan
        np.testing.assert_array_equal(got[:, 0], want)


def frame_table(kind: str) -> pa.Table:
    """A column of every type family from_dataframe reads."""
    i = np.arange(ROWS)
    m = {"none": np.zeros(ROWS, bool), "some": null_mask(i, 4, 1), "late": i == ROWS - 2}[kind]
    words = np.array(["a", "bb", "ccc", "", "d"])[i % 5]
    return pa.table(
        {
            "i16": pa.array(i.astype(np.int16), mask=m),
            "u64": pa.array(i.astype(np.uint64)),
            "f64": pa.array(i / 7, mask=m),
            "b": pa.array(i % 2 == 0, mask=m),
            "ts": pa.array(i.astype("datetime64[ms]"), mask=m),
            "tz": pa.array(i.astype("datetime64[us]"), pa.timestamp("us", "Asia/Kathmandu")),
            "dur": pa.array(i.astype("timedelta64[ns]"), mask=m),
            "date": pa.array(i.astype("datetime64[D]"), pa.date32(), mask=m),
            "dec": pa.array([decimal.Decimal(int(v)) / 8 for v in i], pa.decimal128(12, 3), mask=m),
            "s": pa.array(words, mask=m),
            "ls": pa.array(words).cast(pa.large_string()),  # (pyarrow 16 takes no NumPy strs)
            "bin": pa.array([w.encode() for w in words], pa.binary(), mask=m),
            "l": pa.array([[int(v)] * (v % 3) for v in i], pa.list_(pa.int32()), mask=m),
        }
    )


def dictionaries(kind: str) -> tuple[list[pa.RecordBatch], pa.Schema]:
    """A dictionary column whose batches have different dictionaries (values seen in
    different orders), with nulls of the kind."""
    bs, pos = [], 0
    for n in SIZES:
        i = np.arange(pos, pos + n)
        vals = np.array(["x", "y", "z", "w"])[(i * 7 + pos) % 4]
        m = {"none": None, "some": i % 3 == 0, "late": i == ROWS - 2}[kind]
        d = pa.DictionaryArray.from_arrays(
            pa.array(np.unique(vals, return_inverse=True)[1].astype(np.int8), mask=m),
            pa.array(np.unique(vals)) if n else pa.array([], pa.string()),
        )
        ints = pa.array(i.astype(np.int64) % 3).dictionary_encode()
        bs.append(
            pa.record_batch(
                [d, pa.DictionaryArray.from_arrays(ints.indices.cast(pa.int8()), ints.dictionary)],
                names=["d", "n"],
            )
        )
        pos += n
    return bs, bs[-1].schema


def same_column(got, want, name: str) -> None:
    if isinstance(want, dfbuffer.CategoricalCodes):
        assert isinstance(got, dfbuffer.CategoricalCodes), name
        same_column(got.codes, want.codes, name)
        same_column(got.categories, want.categories, name)
        assert got.ordered == want.ordered
        return
    assert type(got) is type(want), name
    assert got.dtype == want.dtype, name
    assert got.shape == want.shape, name
    if isinstance(want, np.ma.MaskedArray):
        np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
        got, want = got.compressed(), want.compressed()
    if want.dtype.kind == "O":
        assert [repr(v) for v in got.tolist()] == [repr(v) for v in want.tolist()], name
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


def same_dict(got: dict, want: dict) -> None:
    assert list(got) == list(want)
    for k in want:
        same_column(got[k], want[k], k)


def both_dicts(bs, schema, **kw) -> None:
    try:
        want = dfbuffer.from_dataframe(whole(bs, schema), **kw)
    except (TypeError, ValueError, NotImplementedError) as e:
        with pytest.raises(type(e)):
            dfbuffer.from_dataframe(stream(bs, schema), **kw)
        return
    same_dict(dfbuffer.from_dataframe(stream(bs, schema), **kw), want)


@pytest.mark.parametrize("kind", ["none", "some", "late"])
@pytest.mark.parametrize("nulls", ["mask", "fill", "always_mask", "raise"])
@pytest.mark.parametrize(
    "kw", [{}, {"strings": "stringdtype"}, {"decimals": "float64"}, {"columns": ["s", "i16"]}]
)
def test_dict_is_the_whole_tables(group_bytes, kind, nulls, kw):
    t = frame_table(kind)
    both_dicts(batches(t), t.schema, nulls=nulls, **kw)


@pytest.mark.parametrize("kind", ["none", "some", "late"])
@pytest.mark.parametrize("nulls", ["mask", "fill", "always_mask"])
@pytest.mark.parametrize("categorical", ["decode", "codes"])
def test_dictionaries_are_the_whole_tables(group_bytes, kind, nulls, categorical):
    bs, schema = dictionaries(kind)
    both_dicts(bs, schema, nulls=nulls, categorical=categorical)


def test_one_batch_stays_zero_copy():
    """A stream of one group is converted as before: zero-copy, read-only views."""
    x = np.arange(100.0)
    t = pa.table({"x": x})
    got = dfbuffer.from_dataframe(stream(t.to_batches(), t.schema))
    assert np.shares_memory(got["x"], x) and not got["x"].flags.writeable


def test_joining_groups_is_a_copy_that_copy_false_refuses(group_bytes):
    t = frame_table("none").select(["f64"])
    if group_bytes is None:
        with pytest.raises(dfbuffer.CopyError):  # several chunks: joined, as for a table
            dfbuffer.from_dataframe(whole(batches(t), t.schema), copy=False)
    with pytest.raises(dfbuffer.CopyError):
        dfbuffer.from_dataframe(stream(batches(t), t.schema), copy=False)
    got = dfbuffer.from_dataframe(stream(batches(t), t.schema), copy=True)
    assert got["f64"].flags.writeable and got["f64"].base is None


def producers(t: pa.Table, chunk: int):
    """The same rows as every library's stream."""
    yield (
        "nanoarrow",
        na.ArrayStream(pa.RecordBatchReader.from_batches(t.schema, t.to_batches(chunk))),
    )
    if pl is not None and hasattr(pl.LazyFrame, "collect_batches"):  # polars 1.32+
        yield "polars_batches", pl.from_arrow(t).lazy().collect_batches(chunk_size=chunk)
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.register("t", t)
    yield "duckdb", con.sql("select * from t")


def test_every_stream_producer(group_bytes):
    i = np.arange(5000)
    t = pa.table(
        {
            "x": pa.array(i / 2, mask=i % 9 == 4),
            "y": pa.array(i.astype(np.int32)),
            "s": pa.array((i % 11).astype(str)),
        }
    )
    want_m = dfbuffer.to_matrix(t, columns=["x", "y"], nulls="mask")
    want_d = dfbuffer.from_dataframe(t)
    for _name, src in producers(t, 333):
        got = dfbuffer.to_matrix(src, columns=["x", "y"], nulls="mask")
        same_matrix(got, want_m)
    for name, src in producers(t, 333):
        got = dfbuffer.from_dataframe(src)
        # polars and duckdb read strings as string views or large strings: the same str
        assert list(got) == list(want_d), name
        for k in want_d:
            same_column(got[k], want_d[k], f"{name}: {k}")


def failing(bs, at: int, made: list):
    for k, b in enumerate(bs):
        if k == at:
            raise RuntimeError(f"producer broke before batch {k}")
        made.append(weakref.ref(b))
        yield b


@pytest.mark.parametrize("func", ["to_matrix", "from_dataframe"])
def test_a_stream_that_fails_names_the_batch_and_leaks_nothing(group_bytes, func):
    i = np.arange(40_000)
    t = pa.table({"x": i / 2.0, "y": i})
    bs = t.to_batches(max_chunksize=4000)
    made: list = []
    reader = pa.RecordBatchReader.from_batches(t.schema, failing(bs, 6, made))
    with pytest.raises(ValueError, match=r"get_next failed at batch 6 .*producer broke"):
        getattr(dfbuffer, func)(reader)
    del reader, bs
    gc.collect()
    assert len(made) == 6 and all(r() is None for r in made)


@pytest.mark.parametrize("func", ["to_matrix", "from_dataframe"])
@pytest.mark.parametrize(
    "bad",
    [
        pa.record_batch({"x": np.arange(3.0), "y": np.arange(3.0)}),
        pa.record_batch({"x": pa.array(["a", "b", "c"])}),
    ],
    ids=["more_columns", "other_layout"],
)
def test_a_schema_that_changes_midway_is_a_clear_error(group_bytes, func, bad):
    """A batch whose layout is not the schema's (pyarrow's from_batches hands it on
    unchecked) is refused, naming it.  A batch of another type of the same layout
    (int64 under a float64 schema) cannot be told apart: Arrow's C structs carry no
    type."""
    a = pa.record_batch({"x": np.arange(3.0)})
    reader = pa.RecordBatchReader.from_batches(a.schema, iter([a, a, bad]))
    with pytest.raises(ValueError, match="batch 2 of the Arrow stream does not match"):
        getattr(dfbuffer, func)(reader)


@pytest.mark.parametrize("func", ["to_matrix", "from_dataframe"])
def test_earlier_batches_are_released_as_the_stream_is_read(group_bytes, func):
    """Bounded memory: when batch k is asked for, the batches two and more before it
    (each its own group here) have been filled and dropped; the result holds none."""
    if group_bytes != 1:
        pytest.skip("one group per batch")
    owners: list = []
    alive_at: list[int] = []

    def gen():
        for k in range(12):
            gc.collect()
            alive_at.append(sum(r() is not None for r in owners[: max(k - 1, 0)]))
            x = np.arange(k * 1000, k * 1000 + 1000, dtype=np.float64)
            owners.append(weakref.ref(x))
            yield pa.record_batch({"x": pa.array(x)})  # zero-copy: x owns the memory

    schema = pa.schema([("x", pa.float64())])
    res = getattr(dfbuffer, func)(pa.RecordBatchReader.from_batches(schema, gen()))
    assert alive_at == [0] * 12
    gc.collect()
    assert all(r() is None for r in owners)
    got = res if func == "to_matrix" else res["x"]
    np.testing.assert_array_equal(np.ravel(got), np.arange(12_000.0))


class CyclicProducer:
    """A stream producer in a reference cycle with its own result."""

    def __init__(self, t: pa.Table) -> None:
        self.t = t
        self.me = self
        self.result = None
        self.exports = 0

    def __arrow_c_stream__(self, requested_schema=None):
        self.exports += 1
        return pa.RecordBatchReader.from_batches(
            self.t.schema, (b for b in self.t.to_batches(max_chunksize=7))
        ).__arrow_c_stream__(requested_schema)


@pytest.mark.parametrize("func", ["to_matrix", "from_dataframe"])
def test_reference_cycles_are_collected(group_bytes, func):
    t = pa.table({"x": np.arange(50.0), "y": np.arange(50)})
    p = CyclicProducer(t)
    p.result = getattr(dfbuffer, func)(p)
    assert p.exports == 1  # exported exactly once
    got = p.result if func == "to_matrix" else np.column_stack(list(p.result.values()))
    np.testing.assert_array_equal(got, np.column_stack([np.arange(50.0), np.arange(50)]))
    ref = weakref.ref(p)
    del p, got
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("func", ["to_matrix", "from_dataframe"])
def test_a_racing_writer_gives_old_or_new_values(group_bytes, func):
    """A thread rewrites the NumPy array behind one source batch while the stream is
    read: no crash, and every value is the old or the new one, byte for byte."""
    n = 20_000
    target = np.arange(n, dtype=np.float64)
    good = target.copy()
    bad = -good - 0.5
    other = np.arange(n, 2 * n, dtype=np.float64)
    schema = pa.schema([("x", pa.float64())])
    with flipping(target, good, bad):
        for _ in range(6):
            bs = [pa.record_batch({"x": pa.array(target)}), pa.record_batch({"x": pa.array(other)})]
            res = getattr(dfbuffer, func)(pa.RecordBatchReader.from_batches(schema, iter(bs)))
            col = np.ravel(res if func == "to_matrix" else res["x"]).copy()
            # byte by byte, as every racing test here: a writer's copy may be torn
            # within a value (ASan's memcpy moves single bytes), but no byte comes from
            # a neighbour or from garbage
            first = col[:n].view(np.uint8).reshape(n, 8)
            ok = (first == good.view(np.uint8).reshape(n, 8)) | (
                first == bad.view(np.uint8).reshape(n, 8)
            )
            assert ok.all()
            assert col[n:].tobytes() == other.tobytes()


def test_threads_read_streams_at_once(group_bytes):
    t = matrix_table("some")
    cols = ["i64", "f32", "f64"]
    want = dfbuffer.to_matrix(t, columns=cols)
    errors: list = []

    def work() -> None:
        try:
            for _ in range(20):
                got = dfbuffer.to_matrix(stream(batches(t), t.schema), columns=cols)
                np.testing.assert_array_equal(got, want)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_large_stream_crosses_groups_at_the_default_size(order):
    """48 MB of output at the default group size (16 MiB): the output grows (by realloc,
    or column by column for F order), an integer column's late null casts the rows
    filled so far in several parts, and a second read takes the block the first left."""
    n, size = 1_500_000, 100_000
    schema = pa.schema([("i", pa.int64()), ("f", pa.float64()), ("j", pa.int32())])

    def gen():
        for start in range(0, n, size):
            i = np.arange(start, start + size)
            mask = i == n - 5  # one null, in the last batch
            yield pa.record_batch(
                [pa.array(i, mask=mask), pa.array(i / 4), pa.array(i.astype(np.int32))],
                schema=schema,
            )

    want = dfbuffer.to_matrix(pa.Table.from_batches(list(gen()), schema), order=order)
    assert want.dtype == np.float64
    for _ in range(2):
        got = dfbuffer.to_matrix(pa.RecordBatchReader.from_batches(schema, gen()), order=order)
        same_matrix(got, want)
        assert got.base is None and got.flags.owndata
        del got


@pytest.mark.parametrize("func", ["to_matrix", "from_dataframe"])
def test_a_stream_of_one_chunk_larger_than_a_group(group_bytes, func):
    """A table of one chunk larger than a group (the in-memory producers' usual case;
    it is filled at once, its length known: benchmarks/bench_matrix.py times it):
    from_dataframe stays zero-copy and to_matrix gives one exact, owned matrix."""
    x = np.arange(4096.0)
    t = pa.table({"x": x, "y": x[::-1].copy()})
    got = getattr(dfbuffer, func)(t)
    if func == "from_dataframe":
        assert np.shares_memory(got["x"], x) or np.shares_memory(
            got["x"], t.column("x").chunk(0).to_numpy())
        assert got["y"].tolist() == x[::-1].tolist()
    else:
        assert got.shape == (4096, 2) and got.flags.c_contiguous and got.flags.owndata
        assert got[:, 1].tolist() == x[::-1].tolist()
    # two chunks, the first past the group size: grouped (when groups are small), the
    # same values
    t2 = pa.Table.from_batches(t.to_batches(max_chunksize=2048))
    got2 = getattr(dfbuffer, func)(t2)
    if func == "from_dataframe":
        assert got2["x"].tolist() == x.tolist()
    else:
        assert got2.tolist() == got.tolist()
