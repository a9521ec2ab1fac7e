"""Hypothesis-drawn *valid* Arrow arrays whose logical length no buffer backs: run-end
encoded arrays (int16/32/64 run ends) of up to 2**63 - 1 rows, null arrays, structs with no
children, fixed-size lists of width 0, large lists and list views over such children
(list views sharing their child, row after row), structs of them, dictionaries of one
such value and run-end arrays of them, sliced.  pyarrow validates each (full).

Every entry point (column_to_ndarray, from_dataframe, structs="flatten", to_matrix,
schema, to_arrow, to_interchange(...).get_buffers(), dfbuffer.pandas) either refuses with a
clean exception (ValueError or MemoryError, before allocating; NotImplementedError for a
format it does not convert; TypeError for to_matrix of a non-numeric column) or gives the
right result: as many rows as the array, and pyarrow's values where the array is small.
Never a crash, also under ASan + UBSan (docs/requirements.md, "Fuzzing")."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from fuzz_settings import FUZZ, FUZZ_SEED
from hypothesis import assume, given
from hypothesis import strategies as st
from run_end_arrays import run_end_array

import dfbuffer
import dfbuffer.pandas

# Logical lengths: small ones (converted and compared) and ones no machine can hold
# (2**40 values and more): nothing in between, where a conversion could really allocate
# gigabytes.
SMALL = st.integers(0, 6)
HUGE = st.sampled_from([2**40, 2**45, 2**52, 2**61, 2**62, 2**63 - 1]) | st.integers(
    2**40, 2**63 - 1
)
LENGTHS = SMALL | HUGE

# the value types of the small arrays inside (run-end values, dictionaries)
VALUE_TYPES = [pa.int8(), pa.int64(), pa.float64(), pa.bool_(), pa.string(), pa.null(),
               pa.int16(), pa.binary()]


def small_values(n: int) -> st.SearchStrategy:
    """A plain array of n values (some null) of a drawn type."""

    def make(t: pa.DataType, draw_values) -> pa.Array:
        return pa.array(draw_values, t)

    def values_for(t: pa.DataType) -> st.SearchStrategy:
        if pa.types.is_null(t):
            v = st.none()
        elif pa.types.is_boolean(t):
            v = st.booleans() | st.none()
        elif pa.types.is_integer(t):
            v = st.integers(-100, 100) | st.none()
        elif pa.types.is_floating(t):
            v = st.floats(-10, 10, allow_nan=False) | st.none()
        elif pa.types.is_string(t):
            v = st.sampled_from(["", "x", "yz", None])
        else:
            v = st.sampled_from([b"", b"\x00", b"ab", None])
        return st.lists(v, min_size=n, max_size=n).map(lambda vals: make(t, vals))

    return st.sampled_from(VALUE_TYPES).flatmap(values_for)


def null_array(n: int) -> pa.Array:
    return pa.Array.from_buffers(pa.null(), n, [None])


def struct_without_children(n: int) -> pa.Array:
    return pa.StructArray.from_buffers(pa.struct([]), n, [None], children=[])


def fixed_list_of_width_0(n: int, t: pa.DataType) -> pa.Array:
    return pa.FixedSizeListArray.from_buffers(pa.list_(t, 0), n, [None],
                                              children=[pa.array([], t)])


@st.composite
def run_end(draw, n: int, values: st.SearchStrategy | None = None) -> pa.Array:
    """A run-end encoded array of n > 0 rows in 1 to 3 runs."""
    widths = [pa.int64()] + ([pa.int32()] if n < 2**31 else []) + (
        [pa.int16()] if n < 2**15 else [])
    ends = sorted(set(draw(st.lists(positions(n).filter(bool), max_size=2))) | {n})
    if values is None:
        vals = draw(small_values(len(ends)))
    else:
        vals = draw(values)
        assume(len(vals) >= len(ends))
        vals = vals.slice(0, len(ends))
    return run_end_array(ends, vals, draw(st.sampled_from(widths)))


@st.composite
def base(draw, n: int | None = None) -> pa.Array:
    """An array of n rows (drawn when None) that holds (almost) no buffer."""
    if n is None:
        n = draw(LENGTHS)
    kinds = ["null", "struct", "fsl0"] + (["run_end"] if n > 0 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "null":
        return null_array(n)
    if kind == "struct":
        return struct_without_children(n)
    if kind == "fsl0":
        return fixed_list_of_width_0(n, draw(st.sampled_from([pa.int8(), pa.float64(),
                                                               pa.string()])))
    return draw(run_end(n))


def positions(n: int) -> st.SearchStrategy:
    """A position in [0, n] near either end: the pieces between two such positions are
    small (at most 64) or huge (n less at most 128), never in between."""
    return st.integers(0, min(n, 64)) | st.integers(max(0, n - 64), n)


@st.composite
def piece(draw, n: int) -> tuple[int, int]:
    """(start, length) of a part of [0, n): small or huge, never gigabytes that a
    conversion could really allocate on the machine running the test."""
    a, b = sorted([draw(positions(n)), draw(positions(n))])
    return a, b - a


@st.composite
def cuts(draw, length: int, rows: int) -> list[int]:
    """rows + 1 sorted offsets from 0 to length, each gap small or huge."""
    inner = sorted(draw(st.lists(positions(length), min_size=rows - 1, max_size=rows - 1)))
    return [0, *inner, length]


@st.composite
def huge_arrays(draw, depth: int) -> pa.Array:
    """A valid array drawn from the bases and, to `depth` levels, the compositions."""
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        arr = draw(base())
    else:
        kind = draw(st.sampled_from(["large_list", "list", "list_view", "struct",
                                     "dictionary", "run_end_of"]))
        child = draw(huge_arrays(depth - 1))
        n = len(child)
        rows = draw(st.integers(1, 4))
        if kind == "large_list":
            offs = pa.array(draw(cuts(n, rows)), pa.int64())
            arr = pa.LargeListArray.from_arrays(offs, child)
        elif kind == "list":
            assume(n < 2**31)
            arr = pa.ListArray.from_arrays(pa.array(draw(cuts(n, rows)), pa.int32()), child)
        elif kind == "list_view":
            # rows sharing the child: each views all of it, or a drawn part
            spans = draw(st.lists(piece(n) | st.just((0, n)), min_size=rows, max_size=rows))
            offs = pa.array([o for o, _ in spans], pa.int64())
            sizes = pa.array([s for _, s in spans], pa.int64())
            arr = pa.LargeListViewArray.from_arrays(offs, sizes, child)
        elif kind == "struct":
            other = draw(base(n))
            arr = pa.StructArray.from_arrays([child, other], ["a", "b"])
        elif kind == "dictionary":
            # one value: the child's first row (a huge list, a struct, ...)
            assume(n > 0 and not pa.types.is_null(child.type)
                   and not pa.types.is_run_end_encoded(child.type))
            codes = draw(st.lists(st.sampled_from([0, None]), min_size=1, max_size=5))
            arr = pa.DictionaryArray.from_arrays(pa.array(codes, pa.int8()), child.slice(0, 1))
        else:
            # a run-end array of 2**40 and more rows whose values are the child's rows
            assume(n > 0 and not pa.types.is_run_end_encoded(child.type))
            arr = draw(run_end(draw(HUGE), st.just(child)))
    if len(arr) > 0 and draw(st.booleans()):
        arr = arr.slice(*draw(piece(len(arr))))
    try:
        arr.validate(full=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        assume(False)
    return arr


def logical_values(arr: pa.Array) -> int | None:
    """The values the array stands for, all levels counted, or None beyond 2**16."""
    total = 0
    stack = [arr]
    while stack:
        a = stack.pop()
        total += len(a)
        if total > 2**16:
            return None
        t = a.type
        if pa.types.is_run_end_encoded(t):
            stack.append(a.values)  # a value's nested rows, repeated: counted once
            continue
        if isinstance(a, pa.DictionaryArray):
            stack.append(a.dictionary)
        elif pa.types.is_struct(t):
            stack.extend(a.field(i) for i in range(t.num_fields))
        elif pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
            sizes = a.sizes.to_numpy(zero_copy_only=False)
            total += int(np.nan_to_num(sizes.astype(float)).sum())
            if total > 2**16:
                return None
            stack.append(a.values)
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            stack.append(a.values)
    return total


ENTRY_POINTS = {
    "column_to_ndarray": lambda t: dfbuffer.column_to_ndarray(t.column(0)),
    "from_dataframe": lambda t: dfbuffer.from_dataframe(t)["c"],
    "structs=flatten": lambda t: dfbuffer.from_dataframe(t, structs="flatten"),
    "to_matrix": lambda t: dfbuffer.to_matrix(t),
    "schema": lambda t: dfbuffer.schema(t),
    "to_arrow": lambda t: pa.table(dfbuffer.to_arrow(t)),
    "to_interchange": lambda t: dfbuffer.to_interchange(t).get_column(0).get_buffers(),
    "pandas": lambda t: dfbuffer.pandas.from_dataframe(t),
}

# what each entry point may refuse with; anything else (or a crash) fails
REFUSALS = (ValueError, MemoryError, NotImplementedError)


def run_entry(name: str, t: pa.Table):
    try:
        return ENTRY_POINTS[name](t)
    except REFUSALS:
        return None
    except TypeError:
        # to_matrix takes bool, integer and float columns only
        if name != "to_matrix":
            raise
        return None


@FUZZ
@FUZZ_SEED
@given(arr=huge_arrays(2), data=st.data())
def test_huge_logical_lengths_never_crash(arr, data):
    chunked = data.draw(st.booleans()) and len(arr) > 1
    col = arr
    if chunked:
        cut = data.draw(positions(len(arr)).filter(lambda c: 0 < c < len(arr)))
        col = pa.chunked_array([arr.slice(0, cut), arr.slice(cut)])
    t = pa.table({"c": col})
    small = logical_values(arr) is not None
    for name in ENTRY_POINTS:
        got = run_entry(name, t)
        if got is None:
            continue
        if name in ("column_to_ndarray", "from_dataframe"):
            assert len(got) == len(arr)
            if small and not pa.types.is_dictionary(arr.type):
                assert _canon(_plain(got)) == _canon(arr.to_pylist())
        elif name == "to_arrow":
            got.validate(full=True)
            assert got.num_rows == len(arr)
            assert got.column(0).to_pylist() == col.to_pylist() if small else True
        elif name == "schema":
            assert list(got.names) == ["c"]


def _plain(x):
    """A converted value as plain Python (None for nulls, lists for arrays)."""
    if x is None or x is np.ma.masked:
        return None
    if isinstance(x, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(x)
        return [None if np.all(m) else _plain(v) for v, m in zip(x.data, mask, strict=True)]
    if isinstance(x, np.ndarray):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and np.isnan(x):
        return None
    return x


def _canon(v):
    """Lists whose every value is None compare as None: a null fixed-size list row
    converts to a row of masked values (as in test_fuzz_nested.py)."""
    if isinstance(v, list):
        v = [_canon(e) for e in v]
        return None if v and all(e is None for e in v) else v
    if isinstance(v, dict):
        return {k: _canon(e) for k, e in v.items()}
    return v
