"""Producer memory rewritten by another thread during every kind of conversion.

A thread keeps rewriting a hand-written producer's offsets or codes (NumPy arrays,
tests/racing.py) between a good state and a bad one (offsets beyond the data or
decreasing, codes beyond the categories) while a conversion reads them.  Every outcome
must be a result some snapshot of the memory could give (here: the good one, since any
bad value read makes the element unusable) or a clean ValueError / BufferError; never a
crash, a wrong value or an allocation sized by garbage.  The C API converter has its
race test in test_capi.py (it needs the consumer built there).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from producers import Frame, categorical, chunked, primitive, strings
from racing import (
    NCATS,
    N,
    as_list,
    bad_offsets,
    category_column,
    codes_of,
    offsets_of,
    race,
    string_values,
    values_equal,
)

import dfbuffer
import dfbuffer.pandas

# ---------------------------------------------------------------------------
# The two StringDType crashes (SIGSEGV, or a terabyte-sized allocation, before the
# offsets were read through core's checked reader), made certain: numpy.dtypes'
# StringDType, which the converter calls after validating the column and before
# reading its offsets, is wrapped so that the producer's offsets turn bad right
# then.  The result is the column as validated (its offsets read before the call)
# or a ValueError; never a crash.


def rewrite_when_stringdtype_is_made(monkeypatch, offs: np.ndarray, bad: np.ndarray) -> list:
    real = np.dtypes.StringDType
    calls = []

    def rewriting(*args, **kwargs):
        calls.append(1)
        offs[...] = bad
        return real(*args, **kwargs)

    monkeypatch.setattr(np.dtypes, "StringDType", rewriting)
    return calls


def as_validated_or_refused(col, expected: list) -> None:
    """The StringDType conversion of ``col`` gives ``expected`` (the offsets read
    before they turned bad) or refuses them with ValueError."""
    try:
        res = dfbuffer.column_to_ndarray(col, strings="stringdtype")
    except ValueError as e:
        assert "outside" in str(e)
    else:
        assert as_list(res) == expected


@pytest.mark.parametrize("large", [False, True])
def test_stringdtype_offsets_rewritten_after_validation(monkeypatch, large):
    values = string_values(1000)
    col = strings(values, large=large)
    offs = offsets_of(col)
    bad = offs.copy()
    bad[1:] = np.iinfo(offs.dtype).max  # far beyond the data, still non-decreasing
    calls = rewrite_when_stringdtype_is_made(monkeypatch, offs, bad)
    as_validated_or_refused(col, values)
    assert calls


def test_stringdtype_category_offsets_rewritten_after_validation(monkeypatch):
    col, expected, targets = category_column()
    offs, _, _ = targets[1]
    cats = col.describe_categorical["categories"]
    bad = offs + cats.get_buffers()["data"][0]._x.nbytes  # every span just past the data
    calls = rewrite_when_stringdtype_is_made(monkeypatch, offs, bad)
    as_validated_or_refused(col, expected)
    assert calls


# The same under a racing writer


@pytest.mark.parametrize("large", [False, True])
def test_stringdtype_strings_with_offsets_rewritten(large):
    values = string_values()
    col = strings(values, large=large)
    offs = offsets_of(col)

    def convert():
        return dfbuffer.column_to_ndarray(col, strings="stringdtype")

    race(convert, values_equal(values), [(offs, offs.copy(), bad_offsets(offs))])


def test_stringdtype_categories_with_offsets_rewritten():
    col, expected, targets = category_column()
    race(
        lambda: dfbuffer.column_to_ndarray(col, strings="stringdtype"),
        values_equal(expected),
        targets[1:],  # the categories' offsets only: read again for every row
    )


# ---------------------------------------------------------------------------
# Every output mode


@pytest.mark.parametrize("large", [False, True])
def test_object_strings(large):
    values = string_values()
    col = strings(values, large=large)
    offs = offsets_of(col)
    race(
        lambda: dfbuffer.column_to_ndarray(col, nulls="fill"),
        values_equal(values),
        [(offs, offs.copy(), bad_offsets(offs))],
    )


@pytest.mark.parametrize("mode", ["object", "stringdtype"])
def test_categorical_decoded(mode):
    col, expected, targets = category_column(large=mode == "object")
    race(
        lambda: dfbuffer.column_to_ndarray(col, nulls="fill", strings=mode),
        values_equal(expected),
        targets,
    )


def test_categorical_fixed_width_categories_decoded():
    """int64 categories: decoded without the GIL (decode_fixed)."""
    cats_values = np.arange(NCATS, dtype=np.int64) * 10
    good = (np.arange(N) * 13 % NCATS).astype(np.int32)
    col = categorical(good, primitive(cats_values), code_dtype=np.int32, null="none")
    codes = codes_of(col)
    bad = codes.copy()
    bad[1::2] = -5
    expected = (cats_values[good]).tolist()
    race(
        lambda: dfbuffer.column_to_ndarray(col),
        values_equal(expected),
        [(codes, codes.copy(), bad)],
    )


def test_categorical_codes_unified():
    """categorical='codes' over two chunks with different categories: the codes are
    remapped to the unified categories (each code read once and checked)."""
    a, exp_a, tg_a = category_column()
    b_cats = strings([f"other-{k}" for k in range(NCATS)])
    good_b = (np.arange(N) % NCATS).astype(np.int16)
    b = categorical(good_b, b_cats, code_dtype=np.int16)
    exp = exp_a + [f"other-{k}" for k in good_b.tolist()]
    col = chunked(a, b)

    def check(res) -> None:
        codes = np.ma.filled(res.codes, -1)
        cats = np.asarray(res.categories, dtype=object)
        got = [None if c < 0 else cats[c] for c in codes.tolist()]
        assert got == exp

    race(lambda: dfbuffer.column_to_ndarray(col, categorical="codes"), check, tg_a)


def arrow_strings(values: list[str], offs: np.ndarray, data: np.ndarray) -> pa.Array:
    return pa.Array.from_buffers(
        pa.string(), len(values), [None, pa.py_buffer(offs), pa.py_buffer(data)]
    )


def test_to_interchange_joined_strings():
    """to_interchange over Arrow memory (NumPy buffers wrapped by pyarrow): joining
    two chunks copies the strings, reading the offsets again."""
    chunks, targets, values = [], [], []
    for k in range(2):
        vals = [f"v{k}-{i % 1000:04d}" for i in range(N // 2)]
        enc = [v.encode() for v in vals]
        offs = np.zeros(len(enc) + 1, np.int32)
        offs[1:] = np.cumsum([len(e) for e in enc])
        data = np.frombuffer(b"".join(enc), np.uint8).copy()
        chunks.append(arrow_strings(vals, offs, data))
        targets.append((offs, offs.copy(), bad_offsets(offs)))
        values += vals
    ix = dfbuffer.to_interchange(pa.table({"s": pa.chunked_array(chunks)}))

    def convert():
        bufs = ix.get_column(0).get_buffers()
        o = np.asarray(bufs["offsets"][0]).view(np.int32)
        d = bytes(np.asarray(bufs["data"][0]).view(np.uint8))
        return [d[o[i] : o[i + 1]].decode() for i in range(len(o) - 1)]

    race(convert, values_equal(values), targets[:1], rounds=6)


def test_to_interchange_joined_dictionary_codes():
    """Two dictionary chunks with different dictionaries: the joined codes are
    remapped, each read once and checked against its dictionary."""
    codes = [(np.arange(N // 2) % 3).astype(np.int32), (np.arange(N // 2) % 2).astype(np.int32)]
    dicts = [pa.array(["a", "b", "c"]), pa.array(["c", "d"])]
    chunks = [
        pa.DictionaryArray.from_buffers(pa.dictionary(pa.int32(), pa.string()), N // 2,
                                        [None, pa.py_buffer(c)], d)
        for c, d in zip(codes, dicts, strict=True)
    ]
    expected = [dicts[k][int(v)].as_py() for k in range(2) for v in codes[k]]
    ix = dfbuffer.to_interchange(pa.table({"c": pa.chunked_array(chunks)}))
    bad = codes[1].copy()
    bad[1::2] = 7

    def convert():
        col = ix.get_column(0)
        cats = dfbuffer.column_to_ndarray(col.describe_categorical["categories"])
        c = np.asarray(col.get_buffers()["data"][0]).view(np.int32)
        return [cats[v] for v in c.tolist()]

    race(convert, values_equal(expected), [(codes[1], codes[1].copy(), bad)], rounds=6)


def test_to_matrix_categorical_codes():
    """to_matrix gives categoricals' codes as numbers: each one read is the good or
    the bad value of that row (the snapshot of that element)."""
    col, _, targets = category_column()
    codes, good, bad = targets[0]
    df = Frame({"c": col})

    def check(res) -> None:
        v = res[:, 0]
        assert ((v == good) | (v == bad)).all()

    race(lambda: dfbuffer.to_matrix(df, dtype=np.float64, nulls="mask"), check, targets[:1])


def test_pandas_front_end():
    values = string_values()
    scol = strings(values)
    ccol, cexp, ctargets = category_column()
    offs = offsets_of(scol)
    df = Frame({"s": scol, "c": ccol})

    def column(s: pd.Series) -> list:
        v = s.to_numpy(dtype=object)
        v[s.isna().to_numpy()] = None
        return v.tolist()

    def check(res: pd.DataFrame) -> None:
        assert column(res["s"]) == values
        assert column(res["c"]) == cexp

    # the categorical's codes are the producer's memory in the result (zero-copy,
    # as pandas' own consumer gives them): the categories' offsets are rewritten
    race(
        lambda: dfbuffer.pandas.from_dataframe(df),
        check,
        [(offs, offs.copy(), bad_offsets(offs)), ctargets[1]],
        rounds=4,
    )


def test_to_matrix_pandas_broadcast_and_reversed_views():
    """to_matrix of a pandas frame read in place through views of any stride: a
    broadcast block (stride 0) whose one row is rewritten, and a masked column whose
    reversed mask flips between two states.  Each element read is the good or the
    bad value of its source (of its own mask byte), never a neighbour's or garbage."""
    # every byte of each value tells its column and state apart
    good_row = np.array([0x1111111111111111, 0x2222222222222222, 0x3333333333333333,
                         0x4444444444444444], dtype=np.uint64).view(np.float64)
    bad_row = np.array([0x5555555555555555, 0x6666666666666666, 0x7676767676767676,
                        0x1313131313131313], dtype=np.uint64).view(np.float64)
    row = good_row.copy()
    maskbase = np.zeros(N, np.uint8)
    good_mask = (np.arange(N) % 3 == 0).astype(np.uint8)
    bad_mask = 1 - good_mask
    np.copyto(maskbase, good_mask)
    vals = np.arange(N, dtype="i8")
    col = pd.arrays.IntegerArray(vals[::-1], maskbase.view(bool)[::-1])
    cols = {c: np.broadcast_to(row[j : j + 1], (N,)) for j, c in enumerate("abcd")}
    df = pd.DataFrame({**cols, "m": col}, copy=False)
    assert np.shares_memory(df["a"].to_numpy(), row)
    assert np.shares_memory(df["m"].array._mask, maskbase)
    rev_good, rev_bad = good_mask[::-1].astype(bool), bad_mask[::-1].astype(bool)

    def check(res) -> None:
        # byte by byte: a writer's copy may be torn within a value (ASan's memcpy
        # moves single bytes), but no byte comes from a neighbour or from garbage
        block = np.ascontiguousarray(np.ma.getdata(res)[:, :4]).view(np.uint8)
        good_b, bad_b = good_row.view(np.uint8), bad_row.view(np.uint8)
        assert ((block == good_b) | (block == bad_b)).all()
        nulls = np.ma.getmaskarray(res)[:, 4]
        assert ((nulls == rev_good) | (nulls == rev_bad)).all()
        np.testing.assert_array_equal(np.ma.getdata(res)[~nulls, 4], vals[::-1][~nulls])

    targets = [(row, good_row, bad_row), (maskbase, good_mask, bad_mask)]
    race(lambda: dfbuffer.to_matrix(df, nulls="mask"), check, targets, rounds=6)
    race(lambda: dfbuffer.to_matrix(df, nulls="mask", order="F"), check, targets, rounds=4)
# ---------------------------------------------------------------------------
# to_matrix's decoding of run-end encoded values the describer leaves as runs (bools),
# and a mapping's pandas array read as a frame column


def test_to_matrix_run_end_bools_with_racing_run_ends():
    n_runs, run = 4096, 3
    good = (np.arange(1, n_runs + 1) * run).astype(np.int32)
    ends = good.copy()
    values = pa.array(np.arange(n_runs) % 3 == 0)
    run_ends = pa.Array.from_buffers(pa.int32(), n_runs, [None, pa.py_buffer(ends)])
    ree = pa.RunEndEncodedArray.from_buffers(
        pa.run_end_encoded(pa.int32(), pa.bool_()), run * n_runs, [None], 0, 0,
        [run_ends, values])
    bad = good.copy()
    bad[1::2] = 1  # not increasing: runs that go backwards
    want = np.repeat(np.arange(n_runs) % 3 == 0, run)
    table = pa.table({"r": ree})

    def check(res) -> None:
        np.testing.assert_array_equal(res[:, 0], want)

    ok, refused = race(lambda: dfbuffer.to_matrix(table), check, [(ends, good, bad)])
    assert ok + refused == 8


def test_mapping_pandas_categorical_with_racing_codes():
    value = pd.Categorical(np.tile(["a", "b", "c"], 1000))
    codes = value.codes  # the Categorical's own codes, read through the frame
    if not codes.flags.writeable:
        codes.setflags(write=True)
    good = codes.copy()
    bad = good.copy()
    bad[::7] = 120  # beyond the three categories

    def check(res) -> None:
        assert res["c"].tolist() == np.tile(["a", "b", "c"], 1000).tolist()

    def convert():
        try:
            return dfbuffer.from_dataframe({"c": value})
        except NotImplementedError as e:
            # pandas' Arrow export (pyarrow) refused a bad code: a clean refusal
            assert "pandas' Arrow export failed" in str(e)
            raise ValueError(str(e)) from e

    ok, refused = race(convert, check, [(codes, good, bad)])
    assert ok + refused == 8
