"""Frames holding every type DataFusion, DuckDB and polars produce convert.

Each engine builds one frame (two rows: values, then nulls) with one column per type it
can produce; dfbuffer reads the engine's object itself (its Arrow PyCapsule stream) and
the values must equal pyarrow's ``to_pylist`` of the same stream, through
``from_dataframe``, ``column_to_ndarray``, ``schema``, ``to_arrow``, ``to_matrix`` (the
numeric columns) and the ``to_interchange`` view read back by dfbuffer.  Each engine is
skipped when it is not installed, or older than the version its SQL needs."""

from __future__ import annotations

import datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import dfbuffer

# string and binary views, decimal32/64 and the extension types need pyarrow 18 as the
# oracle (the oldest supported pyarrow, 16, runs the module as skipped)
if not hasattr(pa, "bool8"):
    pytest.skip("pyarrow < 18 cannot read every type these engines make", allow_module_level=True)


def _py(x):
    """A converted value as Python values (masked, None or NaN: None; records as
    tuples; the frames hold no NaN values)."""
    if x is None or x is np.ma.masked:
        return None
    if isinstance(x, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(x)
        rows = mask.reshape(len(x), -1).all(axis=1) if x.ndim > 1 else mask
        return [None if m else _py(v) for v, m in zip(x.data, rows, strict=True)]
    if isinstance(x, np.ndarray):
        return [_py(v) for v in x]
    if isinstance(x, dict):
        return {k: _py(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_py(v) for v in x)
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and np.isnan(x):  # a null filled inside a list row
        return None
    return x


def _expected(col: pa.ChunkedArray) -> list:
    """pyarrow's values; temporal values as their integers (datetime64 units follow
    Arrow's), maps as lists of tuples."""
    t = col.type
    if pa.types.is_timestamp(t) or pa.types.is_duration(t) or pa.types.is_date(t):
        bits = pa.int32() if pa.types.is_date32(t) else pa.int64()
        ints = pa.chunked_array([c.view(bits) for c in col.chunks], bits)
        return ints.to_pylist()
    vals = col.to_pylist()
    if pa.types.is_map(t):
        return [None if v is None else [tuple(e) for e in v] for v in vals]
    return vals


def _got(res, t: pa.DataType) -> list:
    """A dfbuffer result as comparable values (temporal: their integers)."""
    if pa.types.is_timestamp(t) or pa.types.is_duration(t) or pa.types.is_date(t):
        return _py(np.ma.asarray(res).astype(np.int64))
    return _py(res)


NUMERIC = (pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean)


class _Only:
    def __init__(self, ix) -> None:
        self._ix = ix

    def __dataframe__(self, nan_as_null=False, allow_copy=True):
        return self._ix


def _check_frame(frame, known: dict[str, list] | None = None) -> pa.Table:
    """Every conversion of `frame` against pyarrow's reading of the same stream (the
    values of `known` columns given, where pyarrow has no Python values for the type)."""
    known = known or {}
    table = pa.table(frame)
    names = table.column_names
    got = dfbuffer.from_dataframe(frame)
    assert list(got) == names
    for name in names:
        col = table.column(name)
        want = known[name] if name in known else _expected(col)
        assert _got(got[name], col.type) == want, (name, col.type)
        if not pa.types.is_struct(col.type):  # a struct array is a frame, not a column
            assert _got(dfbuffer.column_to_ndarray(col), col.type) == want, name
    sch = dfbuffer.schema(frame)
    assert sch.names == names
    assert [c.name for c in sch if c.type == "other"] == [], sch
    # to_arrow: every column as pyarrow reads it, of the same type (extension types too)
    out = pa.table(dfbuffer.to_arrow(frame))
    for name in names:
        assert out.column(name).type == table.column(name).type, name
        if name in known:
            assert _py(dfbuffer.column_to_ndarray(out.column(name))) == known[name]
            continue
        assert _expected(out.column(name)) == _expected(table.column(name)), name
    # to_matrix: the numbers, nulls as NaN
    nums = [n for n in names if any(f(table.column(n).type) for f in NUMERIC)]
    mat = dfbuffer.to_matrix(frame, columns=nums, dtype="float64")
    want_m = [[np.nan if v is None else float(v) for v in table.column(n).to_pylist()]
              for n in nums]
    np.testing.assert_array_equal(mat, np.array(want_m, dtype=np.float64).T)
    # the interchange view, read back by dfbuffer's interchange consumer
    ix = dfbuffer.to_interchange(frame, on_unsupported="skip")
    back = dfbuffer.from_dataframe(_Only(ix))
    assert set(back) <= set(names) and "x" in back
    for name, res in back.items():
        col = table.column(name)
        if name in known:
            assert _py(res) == known[name], name
        elif pa.types.is_time(col.type) or pa.types.is_dictionary(col.type):
            assert _py(res) == _expected(col), name
        else:
            assert _got(res, col.type) == _expected(col), name
    return table


# ---------------------------------------------------------------------------
# DataFusion

DATAFUSION_COLUMNS = {
    "x": "arrow_cast(1, 'Int64')",
    "i8": "arrow_cast(-1, 'Int8')",
    "i16": "arrow_cast(-2, 'Int16')",
    "i32": "arrow_cast(-3, 'Int32')",
    "u8": "arrow_cast(1, 'UInt8')",
    "u16": "arrow_cast(2, 'UInt16')",
    "u32": "arrow_cast(3, 'UInt32')",
    "u64": "arrow_cast(4, 'UInt64')",
    "f16": "arrow_cast(1.5, 'Float16')",
    "f32": "arrow_cast(1.5, 'Float32')",
    "f64": "arrow_cast(2.5, 'Float64')",
    "b": "true",
    "d32dec": "arrow_cast(1.25, 'Decimal32(5, 2)')",
    "d64dec": "arrow_cast(-1.25, 'Decimal64(12, 2)')",
    "d128": "arrow_cast(1.25, 'Decimal128(10, 2)')",
    "d256": "arrow_cast(-1.25, 'Decimal256(60, 2)')",
    "s": "'text'",
    "ls": "arrow_cast('large', 'LargeUtf8')",
    "sv": "arrow_cast('a view longer than twelve bytes', 'Utf8View')",
    "bin": "arrow_cast('ab', 'Binary')",
    "lbin": "arrow_cast('ab', 'LargeBinary')",
    "bv": "arrow_cast('ab', 'BinaryView')",
    "fsb": "arrow_cast(arrow_cast('ab', 'Binary'), 'FixedSizeBinary(2)')",
    "d32": "date '2020-01-02'",
    "d64": "arrow_cast(date '2020-01-02', 'Date64')",
    "t64ns": "time '01:02:03.25'",
    "t32s": "arrow_cast(time '01:02:03', 'Time32(Second)')",
    "t32ms": "arrow_cast(time '01:02:03.5', 'Time32(Millisecond)')",
    "t64us": "arrow_cast(time '01:02:03.25', 'Time64(Microsecond)')",
    "ts": "timestamp '2020-01-02 03:04:05.123456'",
    "tstz": "arrow_cast(timestamp '2020-01-02 03:04:05', "
            "'Timestamp(Second, Some(\"Asia/Kathmandu\"))')",
    "tsms": "arrow_cast(timestamp '2020-01-02 03:04:05', 'Timestamp(Millisecond, None)')",
    "tsoff": "arrow_cast('2020-01-02T03:04:05', 'Timestamp(Nanosecond, Some(\"+05:45\"))')",
    "dur": "arrow_cast(3, 'Duration(Second)')",
    "durns": "arrow_cast(arrow_cast(3, 'Int64'), 'Duration(Nanosecond)')",
    "iv": "interval '1 month 2 days 3 seconds'",
    "iym": "arrow_cast('1 month', 'Interval(YearMonth)')",
    "idt": "arrow_cast('2 days 3 seconds', 'Interval(DayTime)')",
    "l": "make_array(1, 2, 3)",
    "ll": "arrow_cast(make_array(1, 2), 'LargeList(Int64)')",
    "lv": "arrow_cast(make_array(1, 2), 'ListView(Int64)')",
    "fsl": "arrow_cast(make_array(1.5, 2.5), 'FixedSizeList(2, Float64)')",
    "ls2": "make_array('a', 'b')",
    "st": "named_struct('a', 1, 'b', 'x', 'c', make_array(1.5))",
    "m": "map(['k1', 'k2'], [1, 2])",
    "dict": "arrow_cast('cat', 'Dictionary(Int32, Utf8)')",
    "dicti": "arrow_cast(3, 'Dictionary(Int8, Int64)')",
    "n": "null",
}


def test_datafusion_frame_of_every_type():
    datafusion = pytest.importorskip("datafusion", minversion="55")
    ctx = datafusion.SessionContext()
    cols = ", ".join(f"case when i = 0 then {e} end as {n}"
                     for n, e in DATAFUSION_COLUMNS.items())
    df = ctx.sql(f"select {cols} from (values (0), (1)) as t(i) order by i")
    # pyarrow has no Python values for month and day-time intervals: the records
    table = _check_frame(df, known={"iym": [(1,), None], "idt": [(2, 3000), None]})
    types = {f.name: f.type for f in table.schema}
    # the frame holds what the SQL asked for (a DataFusion that folds a type into
    # another would test less: fail loudly)
    assert pa.types.is_string_view(types["sv"]) and pa.types.is_binary_view(types["bv"])
    assert pa.types.is_decimal(types["d256"]) and pa.types.is_interval(types["iv"])
    assert pa.types.is_fixed_size_list(types["fsl"]) and pa.types.is_map(types["m"])
    assert table.column("t64ns").to_pylist() == [datetime.time(1, 2, 3, 250000), None]


# ---------------------------------------------------------------------------
# DuckDB

DUCKDB_COLUMNS = {
    "x": "1::BIGINT",
    "i8": "-1::TINYINT",
    "i16": "-2::SMALLINT",
    "i32": "-3::INTEGER",
    "i128": "(2::HUGEINT ** 100)::HUGEINT",
    "u8": "1::UTINYINT",
    "u16": "2::USMALLINT",
    "u32": "3::UINTEGER",
    "u64": "4::UBIGINT",
    "u128": "5::UHUGEINT",
    "f32": "1.5::FLOAT",
    "f64": "2.5::DOUBLE",
    "b": "true",
    "d16": "1.5::DECIMAL(4,1)",
    "d32": "-1.25::DECIMAL(9,2)",
    "d64": "1.125::DECIMAL(18,3)",
    "d128": "12345678901234567890.5::DECIMAL(38,10)",
    "s": "'text'",
    "bl": "'\\xAA\\x00ab'::BLOB",
    "bit": "'101'::BIT",
    "dt": "date '2020-01-02'",
    "t": "time '01:02:03.5'",
    "ttz": "'01:02:03+02'::TIMETZ",
    "ts": "timestamp '2020-01-02 03:04:05.123456'",
    "tss": "'2020-01-02 03:04:05'::TIMESTAMP_S",
    "tsms": "'2020-01-02 03:04:05'::TIMESTAMP_MS",
    "tsns": "'2020-01-02 03:04:05'::TIMESTAMP_NS",
    "tstz": "'2020-01-02 03:04:05+00'::TIMESTAMPTZ",
    "iv": "interval 3 day",
    "uu": "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::UUID",
    "en": "'b'::ENUM('a', 'b')",
    "js": "'{\"a\": 1}'::JSON",
    "l": "[1, 2, NULL]",
    "arr": "[1.5, 2.5]::DOUBLE[2]",
    "st": "{'a': 1, 'b': 'x'}",
    "m": "map([1, 2], ['p', 'q'])",
    "un": "union_value(k := 2)::UNION(k INT, t VARCHAR)",
    "ll": "[[1, 2], NULL, [3]]",
    "lst": "[{'a': 1, 'b': [1.5]}, NULL]",
    "stl": "{'a': [1, 2], 'm': map(['k'], [date '2020-01-02'])}",
    "arrs": "[{'x': 1}, {'x': 2}]::STRUCT(x INT)[2]",
    "vi": "123456789012345678901234567890::VARINT",
    "n": "NULL",
}

# DuckDB settings that change its Arrow output (each tried; one the version does not
# know is left out)
DUCKDB_SETTINGS = {
    "default": [],
    "lossless": ["SET arrow_lossless_conversion = true"],
    "views": ["SET arrow_output_version = '1.5'", "SET produce_arrow_string_view = true",
              "SET arrow_output_list_view = true"],
}


@pytest.mark.parametrize("settings", sorted(DUCKDB_SETTINGS))
def test_duckdb_frame_of_every_type(settings):
    duckdb = pytest.importorskip("duckdb", minversion="1.1")
    con = duckdb.connect()
    for stmt in DUCKDB_SETTINGS[settings]:
        try:
            con.execute(stmt)
        except duckdb.Error:
            pytest.skip(f"this DuckDB has no {stmt!r}")
    known = {}
    for n, e in DUCKDB_COLUMNS.items():
        try:  # an older DuckDB lacks a type (VARINT came in 1.1): left out
            con.sql(f"select {e}").fetchall()
        except duckdb.Error:
            continue
        known[n] = e
    assert {"x", "d128", "un", "en", "iv", "lst"} <= set(known)
    cols = ", ".join(f"case when i = 0 then {e} end as {n}" for n, e in known.items())
    rel = con.sql(f"select {cols} from range(2) t(i) order by i")
    table = _check_frame(rel)
    assert pa.types.is_union(table.schema.field("un").type)
    assert pa.types.is_dictionary(table.schema.field("en").type)


# ---------------------------------------------------------------------------
# polars


def _polars_frame(pl):
    import decimal

    cols = {
        "x": pl.Series([1, None], dtype=pl.Int64),
        "i8": pl.Series([-1, None], dtype=pl.Int8),
        "u64": pl.Series([2**63, None], dtype=pl.UInt64),
        "f32": pl.Series([1.5, None], dtype=pl.Float32),
        "b": pl.Series([True, None]),
        "dec": pl.Series([decimal.Decimal("1.25"), None], dtype=pl.Decimal(10, 2)),
        "s": pl.Series(["a view longer than twelve bytes", None]),
        "bin": pl.Series([b"\x00ab", None], dtype=pl.Binary),
        "d": pl.Series([datetime.date(2020, 1, 2), None]),
        "t": pl.Series([datetime.time(1, 2, 3, 4), None]),
        "ts": pl.Series([datetime.datetime(2020, 1, 2, 3), None]).dt.replace_time_zone(
            "Asia/Kathmandu"),
        "tsns": pl.Series([datetime.datetime(2020, 1, 2, 3), None],
                          dtype=pl.Datetime("ns")),
        "dur": pl.Series([datetime.timedelta(seconds=3), None]),
        "l": pl.Series([[1, None], None]),
        "arr": pl.Series([[1.0, 2.0], None], dtype=pl.Array(pl.Float64, 2)),
        "st": pl.Series([{"a": 1, "b": "x"}, None]),
        "cat": pl.Series(["a", None], dtype=pl.Categorical),
        "en": pl.Series(["b", None], dtype=pl.Enum(["a", "b"])),
        "n": pl.Series([None, None], dtype=pl.Null),
        "lst": pl.Series([[{"a": 1, "t": datetime.time(1)}], None]),
        "stl": pl.Series([{"a": [1.5, None], "b": b"x"}, None]),
        "ldec": pl.Series([[decimal.Decimal("1.5")], None], dtype=pl.List(pl.Decimal(5, 1))),
        "aa": pl.Series([[[1, 2], [3, 4]], None], dtype=pl.Array(pl.Int32, (2, 2))),
        "lcat": pl.Series([["a", "b"], None], dtype=pl.List(pl.Categorical)),
    }
    if hasattr(pl, "Float16"):
        cols["f16"] = pl.Series([1.5, None], dtype=pl.Float16)
    return pl.DataFrame(cols)


def test_polars_frame_of_every_type():
    pl = pytest.importorskip("polars", minversion="1.6")
    _check_frame(_polars_frame(pl))


def test_polars_128_bit_integers_are_refused_by_name():
    # polars exports Int128 / UInt128 in a format of its own ('_pli128'), which no Arrow
    # reader knows: NotImplementedError naming the column, or left out on request
    pl = pytest.importorskip("polars")
    if not hasattr(pl, "Int128"):
        pytest.skip("this polars has no Int128")
    df = pl.DataFrame({"i": pl.Series([2**100, None], dtype=pl.Int128), "x": [1, 2]})
    try:
        fmt = dfbuffer.schema(df)["i"].format
    except NotImplementedError:  # a polars that exports no Arrow type for it
        pytest.skip("this polars does not export Int128")
    if fmt in ("d:38,0", "d:39,0"):  # a polars that exports a decimal
        assert dfbuffer.from_dataframe(df)["i"].tolist()[0] == 2**100
        return
    with pytest.raises(NotImplementedError, match=f"column 'i'.*{fmt}"):
        dfbuffer.from_dataframe(df)
    assert list(dfbuffer.from_dataframe(df, on_unsupported="skip")) == ["x"]


def test_null_array_with_its_legacy_buffer():
    # polars exports a null column with one (NULL) buffer, as older Arrow writers did;
    # the spec's null type has none: both are read
    pl = pytest.importorskip("polars")
    df = pl.DataFrame({"n": pl.Series([None, None], dtype=pl.Null),
                       "s": pl.Series([{"a": None}, None], dtype=pl.Struct({"a": pl.Null}))})
    got = dfbuffer.from_dataframe(df)
    assert _py(got["n"]) == [None, None]
    assert _py(got["s"]) == [{"a": None}, None]
    assert _py(dfbuffer.column_to_ndarray(pa.nulls(2))) == [None, None]
    assert pc.is_null(pa.table(df).column("n")).to_pylist() == [True, True]
