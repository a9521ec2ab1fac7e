"""Property test: random layouts (dtype, length, column offset, null
representation, chunking, nulls mode) from the hand-written producers,
checked against values computed with NumPy.  Lengths and offsets straddle
byte and 64-bit word boundaries of the bitmaps."""

from __future__ import annotations

import numpy as np
import pytest
from producers import (
    INT_FLOAT_DTYPES,
    USE_SENTINEL,
    bools_bitpacked,
    chunked,
    nonnative,
    primitive,
    strings,
    with_mask,
)

import dfbuffer

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

DTYPES = [
    *INT_FLOAT_DTYPES,
    "?",
    "bits",
    "str",
    "M8",
]
NULLS = ["none", "bitmask0", "bitmask1", "bytemask0", "bytemask1", "sentinel"]
EDGE = st.sampled_from([0, 1, 7, 8, 9, 31, 63, 64, 65, 127, 128, 129])


def raw(dtype, n: int):
    """n values of dtype from drawn bytes: one draw per column (fast), shrinking to 0."""
    dt = np.dtype(dtype)
    k = n * dt.itemsize
    return st.binary(min_size=k, max_size=k).map(lambda b: np.frombuffer(b, dt).copy())


def values_for(dtype: str, n: int):
    """Values of one column, drawn (not generated from a seed) so failures shrink."""
    if dtype in ("bits", "?"):
        return raw(np.uint8, n).map(lambda v: (v & 1).astype(bool))
    if dtype == "str":  # string lengths
        return raw(np.uint8, n).map(lambda v: (v % 5).astype(np.int64))
    if dtype == "M8":  # microseconds within +-2**40 (no NaT)
        return raw(np.int64, n).map(lambda v: v % 2**41 - 2**40)
    dt = np.dtype(dtype)
    if dt.kind == "f":  # finite values, as NaN would mean null under USE_NAN elsewhere
        return raw(dt, n).map(lambda v: np.nan_to_num(v, nan=0.5, posinf=1.0, neginf=-1.0))
    return raw(dt, n)


@st.composite
def layouts(draw, dtype=None):
    if dtype is None:
        dtype = draw(st.sampled_from(DTYPES))
    n = draw(st.one_of(EDGE, st.integers(0, 300)))
    offset = draw(st.one_of(EDGE, st.integers(0, 700)))
    nulls = draw(st.sampled_from(NULLS))
    swap = draw(st.booleans()) and dtype not in ("bits", "str", "M8", "?", "i1", "u1")
    values = draw(values_for(dtype, n))
    validity = draw(st.sampled_from(["all valid", "all null", "drawn"]))
    if validity == "drawn":
        valid = draw(raw(np.uint8, n).map(lambda v: (v & 1).astype(bool)))
    else:
        valid = np.full(n, validity == "all valid")
    large = draw(st.booleans())
    return dtype, n, offset, nulls, swap, values, valid, large


def build(dtype, n, offset, nulls, swap, values, valid, large):
    """(column, expected values, expected validity)."""
    if dtype in ("bits", "str") and nulls.startswith(("bytemask", "bitmask1", "sentinel")):
        nulls = "bitmask0"
    if dtype in ("?", "f2", "f4", "f8") and nulls == "sentinel":
        nulls = "none"  # sentinels are integers (floats use NaN)
    valid = valid.copy()
    if nulls == "none":
        valid[:] = True
    if dtype == "bits":
        v = values
        col = bools_bitpacked(v, offset=offset, valid=None if nulls == "none" else valid)
        return col, v, valid
    if dtype == "str":
        vals = [
            None if not ok else "x" * int(k) + "é"
            for ok, k in zip(valid, values, strict=True)
        ]
        exp = np.empty(n, dtype=object)
        exp[:] = vals
        return strings(vals, offset=offset, large=large), exp, valid
    if dtype == "M8":
        raw = values
        exp = raw.view("M8[us]")
        dt = np.dtype("i8")
        v = raw
    else:
        dt = np.dtype(dtype)
        v = values
        exp = v
    if swap:
        v = v.astype(nonnative(v.dtype))
    kw = {}
    if dtype == "M8":
        kw = dict(col_dtype=(22, 64, "tsu:UTC", "="))
    if nulls == "sentinel":
        sentinel = np.array(-1 if dt.kind != "f" else -1.5).astype(dt)
        v = v.copy()
        v[v == sentinel] = 0 if dt.kind != "f" else 0.5
        exp = v.astype(v.dtype.newbyteorder("=")) if dtype != "M8" else v.view("M8[us]")
        v[~valid] = sentinel
        s = sentinel.item() if dtype != "M8" else -1
        col = primitive(
            v, offset=offset, null=(USE_SENTINEL, s), null_count=int((~valid).sum()), **kw
        )
        return col, exp, valid
    if nulls == "none":
        return primitive(v, offset=offset, **kw), exp, valid
    kind = "bitmask" if nulls.startswith("bitmask") else "bytemask"
    col = with_mask(v, valid, kind=kind, null_value=int(nulls[-1]), offset=offset, **kw)
    return col, exp, valid


def check(res, exp, valid, mode):
    n = len(exp)
    assert res.shape == (n,)
    if valid.all() or mode == "mask":
        if valid.all():
            assert type(res) is np.ndarray
            np.testing.assert_array_equal(res, exp)
            return
        assert isinstance(res, np.ma.MaskedArray)
        np.testing.assert_array_equal(np.ma.getmaskarray(res), ~valid)
        np.testing.assert_array_equal(np.asarray(res.data)[valid], exp[valid])
        return
    # fill
    assert type(res) is np.ndarray
    if exp.dtype == object:
        assert all(res[~valid] == None)  # noqa: E711
    elif exp.dtype.kind == "M":
        assert np.isnat(res[~valid]).all()
    else:
        assert res.dtype.kind == "f"
        assert np.isnan(res[~valid]).all()
    np.testing.assert_array_equal(res[valid], exp[valid])


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(layout=layouts(), mode=st.sampled_from(["mask", "fill", "raise"]))
def test_random_layouts(layout, mode):
    col, exp, valid = build(*layout)
    if mode == "raise" and not valid.all():
        with pytest.raises(ValueError):
            dfbuffer.column_to_ndarray(col, nulls=mode)
        return
    check(dfbuffer.column_to_ndarray(col, nulls=mode), exp, valid, mode)


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(
    parts=st.sampled_from([d for d in DTYPES if d != "M8"]).flatmap(
        lambda d: st.lists(layouts(d), min_size=1, max_size=4)
    ),
    mode=st.sampled_from(["mask", "fill"]),
)
def test_random_chunks(parts, mode):
    cols, exps, valids = [], [], []
    for p in parts:
        col, exp, valid = build(*p)
        cols.append(col)
        exps.append(exp)
        valids.append(valid)
    res = dfbuffer.column_to_ndarray(chunked(*cols), nulls=mode)
    check(res, np.concatenate(exps), np.concatenate(valids), mode)
