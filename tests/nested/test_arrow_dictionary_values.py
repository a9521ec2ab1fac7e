"""Dictionary-encoded Arrow columns of every value type: nested values (lists, large
lists, structs, maps, fixed-size lists, unions), binary and decimal values, decoded by
from_dataframe and column_to_ndarray (pyarrow's ``to_pylist`` is the oracle) or kept as
codes with ``categorical="codes"``; plain, sliced, chunked, with null codes and null
values, below lists and structs; codes rewritten while they convert."""

from __future__ import annotations

import decimal
import gc
import weakref

import numpy as np
import pyarrow as pa
import pytest
from racing import N, race
from test_arrow_nested import to_py

import dfbuffer

CODES = [0, 1, None, 2, 1, 0, 2]


def _builds_nested_dictionaries() -> bool:
    try:
        pa.DictionaryArray.from_arrays(pa.array([0], pa.int8()), pa.array([[1]]))
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, TypeError):
        return False
    return True


needs_nested_dictionaries = pytest.mark.skipif(
    not _builds_nested_dictionaries(),
    reason=f"pyarrow {pa.__version__} cannot build a dictionary array of nested values",
)


def dictionary(values, codes=CODES, index="int8"):
    try:
        return pa.DictionaryArray.from_arrays(pa.array(codes, pa.type_for_alias(index)), values)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, TypeError) as e:
        pytest.skip(f"pyarrow {pa.__version__} cannot build this dictionary array: {e}")


def value_arrays():
    out = {
        "list": pa.array([[1, 2], None, [3, None]]),
        "large_list": pa.array([[1.5], [], None], pa.large_list(pa.float64())),
        "struct": pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": "z"}]),
        "map": pa.array([[("k", 1)], None, []], pa.map_(pa.string(), pa.int64())),
        "fixed_size_list": pa.array([[1, 2], [3, None], None], pa.list_(pa.int64(), 2)),
        "list_of_structs": pa.array([[{"a": 1}], None, [{"a": None}, None]]),
        "binary": pa.array([b"a", b"bb", None]),
        "large_binary": pa.array([b"a", None, b"ccc"], pa.large_binary()),
        "fixed_size_binary": pa.array([b"ab", b"cd", None], pa.binary(2)),
        "decimal": pa.array(
            [decimal.Decimal("1.50"), None, decimal.Decimal("-2.25")], pa.decimal128(6, 2)
        ),
    }
    if hasattr(pa, "binary_view"):
        out["binary_view"] = pa.array([b"a", b"b" * 20, None], pa.binary_view())
    return out


VALUES = value_arrays()


def expected(arr):
    vals = arr.to_pylist()
    if pa.types.is_map(arr.type.value_type):
        return [None if v is None else [tuple(e) for e in v] for v in vals]
    return vals


def categories_py(cats):
    """to_py of categories; a 2-D (fixed-size list) row wholly masked is None."""
    if isinstance(cats, np.ma.MaskedArray) and cats.ndim == 2:
        return [None if np.ma.getmaskarray(r).all() else to_py(r) for r in cats]
    return to_py(cats)


def column(arr, **kw):
    return dfbuffer.from_dataframe(pa.table({"c": arr}), **kw)["c"]


@pytest.mark.parametrize("kind", VALUES)
def test_dictionary_decoded_like_to_pylist(kind):
    arr = dictionary(VALUES[kind])
    want = expected(arr)
    got = column(arr)
    assert to_py(got) == want
    assert np.ma.getmaskarray(got).tolist() == [v is None for v in want]
    assert to_py(dfbuffer.column_to_ndarray(arr)) == want
    for start, stop in [(1, 5), (3, 7), (2, 2)]:
        part = arr.slice(start, stop - start)
        assert to_py(column(part)) == expected(part)
    ch = pa.chunked_array([arr.slice(0, 3), arr.slice(3)])
    assert to_py(column(ch)) == want
    assert to_py(dfbuffer.column_to_ndarray(ch)) == want
    # chunks with dictionaries of their own
    other = dictionary(VALUES[kind].slice(1), [1, 0, None])
    mixed = pa.chunked_array([arr, other])
    assert to_py(column(mixed)) == want + expected(other)
    filled = column(arr, nulls="fill")
    assert type(filled) is np.ndarray and to_py(filled) == want
    with pytest.raises(ValueError, match="null"):
        column(arr, nulls="raise")


@pytest.mark.parametrize("kind", VALUES)
def test_dictionary_codes_keep_the_codes(kind):
    arr = dictionary(VALUES[kind])
    got = column(arr, categorical="codes")
    assert isinstance(got, dfbuffer.CategoricalCodes)
    assert np.ma.filled(got.codes, -1).tolist() == [-1 if c is None else c for c in CODES]
    cats = categories_py(got.categories)
    want_cats = arr.dictionary.to_pylist()
    if pa.types.is_map(arr.type.value_type):
        want_cats = [None if v is None else [tuple(e) for e in v] for v in want_cats]
    assert cats == want_cats
    assert [None if c is None else cats[c] for c in CODES] == to_py(column(arr))
    filled = column(arr, categorical="codes", nulls="fill")
    assert filled.codes.tolist() == [-1 if c is None else c for c in CODES]
    ch = pa.chunked_array([arr.slice(0, 3), arr.slice(3)])
    got = dfbuffer.column_to_ndarray(ch, categorical="codes")
    assert np.ma.filled(got.codes, -1).tolist() == [-1 if c is None else c for c in CODES]


def test_nested_dictionary_codes_of_different_chunk_dictionaries_refused():
    arr = dictionary(VALUES["list"])
    other = dictionary(pa.array([[9]]), [0, 0])
    with pytest.raises(NotImplementedError, match="'c'.*decode"):
        column(pa.chunked_array([arr, other]), categorical="codes")
    assert to_py(column(pa.chunked_array([arr, other]))) == expected(arr) + [[9], [9]]


def test_ordered_nested_dictionary():
    try:
        arr = pa.DictionaryArray.from_arrays(
            pa.array([1, 0], pa.int16()), pa.array([[1], [2]]), ordered=True
        )
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, TypeError) as e:
        pytest.skip(f"pyarrow {pa.__version__} cannot build this dictionary array: {e}")
    got = column(arr, categorical="codes")
    assert got.ordered is True and got.codes.tolist() == [1, 0]


def test_nested_dictionaries_below_lists_and_structs():
    inner = dictionary(pa.array([[1], [2, 3], None]), [0, 1, 0, 2, None])
    outer = pa.ListArray.from_arrays(pa.array([0, 2, 5], pa.int32()), inner)
    assert to_py(column(outer)) == outer.to_pylist()
    assert to_py(column(outer.slice(1))) == outer.slice(1).to_pylist()
    st = pa.StructArray.from_arrays([inner, pa.array(range(5))], ["d", "i"])
    assert to_py(column(st)) == st.to_pylist()
    flat = dfbuffer.from_dataframe(pa.table({"s": st}), structs="flatten")
    assert to_py(flat["s.d"]) == [v["d"] for v in st.to_pylist()]


def test_bad_codes_raise():
    arr = dictionary(pa.array([[1], [2]]), [0, 1])
    codes = np.array([0, 5], np.int8)
    bad = pa.DictionaryArray.from_buffers(arr.type, 2, [None, pa.py_buffer(codes)],
                                          arr.dictionary)
    with pytest.raises(ValueError, match="'c'.*codes"):
        column(bad)
    with pytest.raises(ValueError, match="'c'.*codes"):
        column(bad, categorical="codes")


@needs_nested_dictionaries
def test_decoded_rows_keep_the_dictionary_alive():
    data = np.arange(3000, dtype=np.int64)
    gc.collect()
    before = pa.total_allocated_bytes()
    values = pa.ListArray.from_arrays(pa.array(np.arange(0, 3001, 3, dtype=np.int32)),
                                      pa.array(data + 1))
    table = pa.table({"c": pa.DictionaryArray.from_arrays(pa.array([2, 0, 2], pa.int32()),
                                                          values)})
    ref = weakref.ref(table)
    got = dfbuffer.from_dataframe(table)["c"]
    del table, values
    gc.collect()
    assert ref() is None
    assert got[0].tolist() == [7, 8, 9] and not got[0].flags.writeable
    holder = {"rows": got}
    holder["self"] = holder
    del got, holder
    gc.collect()
    assert pa.total_allocated_bytes() <= before


@needs_nested_dictionaries
@pytest.mark.parametrize("categorical", ["decode", "codes"])
def test_nested_dictionary_codes_rewritten(categorical):
    values = pa.array([[i, i + 1] for i in range(4)])
    good = (np.arange(N) % 4).astype(np.int16)
    codes = good.copy()
    bad = good.copy()
    bad[1::2] = 4  # one past the dictionary
    bad[::7] = -1
    typ = pa.dictionary(pa.int16(), values.type)
    arr = pa.DictionaryArray.from_buffers(typ, N, [None, pa.py_buffer(codes)], values)
    want = [[c, c + 1] for c in good.tolist()]

    def convert():
        return column(arr, categorical=categorical)

    def check(res):
        if categorical == "codes":
            # the codes are a view of the memory the writer rewrites: only their
            # number and the categories are the snapshot's
            assert to_py(res.categories) == values.to_pylist() and len(res.codes) == N
        else:
            assert to_py(res) == want

    race(convert, check, [(codes, good, bad)])


def test_pandas_front_end_decodes_nested_dictionaries():
    pytest.importorskip("pandas")
    import dfbuffer.pandas

    table = pa.table(
        {
            "l": dictionary(VALUES["list"]),
            "f": dictionary(VALUES["fixed_size_list"]),
            "s": dictionary(VALUES["struct"]),
            "b": dictionary(pa.array([b"a", b"bb", b"c"])),
        }
    )
    df = dfbuffer.pandas.from_dataframe(table)
    for name in ("l", "f", "s"):
        assert df[name].dtype == object
        assert [to_py(v) for v in df[name]] == table.column(name).to_pylist()
    assert df["b"].dtype == "category"
    assert [None if v != v else v for v in df["b"]] == table.column("b").to_pylist()
