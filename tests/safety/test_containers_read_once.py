"""Every public function reads a producer's container once: another thread moving the
columns of a pandas frame or the items of a dict while a call reads it never makes a
column come back holding another column's values.

Each column's values name it: column ``c<k>`` holds only ``k`` (and its dtype is the
k-th of ``DTYPES``), so a name read at one moment paired with values read at another
shows.  The writer thread only ever leaves the container in states where every name
goes with its own values (whole block managers swapped, as ``del df[c]``,
``df.drop(..., inplace=True)`` and ``df.sort_index(axis=1, inplace=True)`` swap them;
dict items moved, added and removed), so every outcome is consistent whichever moment a
read sees, or a clean error of the kinds listed (a column missing at that moment).  The
assertions hold for any interleaving: they depend on no timing, only on how often a
mix would be caught.  The iterations are bounded; nothing is timed.

A pandas frame is mutated with the GIL on only (``PANDAS_FRAME_MUTATION``, see
test_racing_containers.py); the dict tests run on free-threaded CPython too, where the
other thread runs truly at the same time.
"""

from __future__ import annotations

import gc
import sys
import warnings
import weakref
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from test_racing_containers import PANDAS_FRAME_MUTATION, mutating

import dfbuffer
import dfbuffer.pandas as dpd

ROUNDS = 20
N = 16
DTYPES = ["int8", "int16", "int32", "int64", "float32", "float64", "Int64", "str"]
NAMES = [f"c{k}" for k in range(len(DTYPES))]
NUMERIC = NAMES[:6]  # the columns to_matrix takes
# a column missing at the moment of the read (KeyError), or a read pandas refuses
REFUSED = (KeyError, ValueError, IndexError, TypeError)


def column(k: int) -> object:
    """Column ``c<k>``: N values that all name it."""
    dt = DTYPES[k]
    if dt == "str":
        return [str(k)] * N
    if dt == "Int64":
        return pd.array([k] * N, dtype="Int64")
    return np.full(N, k, dtype=dt)


def frame(names: list[str]) -> pd.DataFrame:
    return pd.DataFrame({n: column(int(n[1:])) for n in names})


def check_values(name: str, values: object) -> None:
    """``values`` are column ``name``'s: each is its number (or its str)."""
    k = int(name[1:])
    got = np.asarray(values, dtype=object).tolist()
    assert len(got) == N, name
    assert all(v == k or v == str(k) for v in got), (name, got[:3])


def check_names(names: list[str]) -> None:
    assert len(set(names)) == len(names), names
    assert set(names) <= set(NAMES) | {"c9"}, names


def check_table(t: pa.Table) -> None:
    check_names(t.column_names)
    for name, col in zip(t.column_names, t.columns, strict=True):
        check_values(name, col.to_pylist())


def check_mapping(got: dict) -> None:
    check_names(list(got))
    for name, values in got.items():
        check_values(name, values)


def check_frame(got: pd.DataFrame) -> None:
    check_names([str(c) for c in got.columns])
    for j, name in enumerate(got.columns):
        check_values(str(name), got.iloc[:, j].tolist())


def check_schema(sch: dfbuffer.Schema, dtypes: dict[str, str]) -> None:
    """Each name has its own column's type (``dtypes``: name -> schema type string)."""
    check_names(sch.names)
    for c in sch.columns:
        assert dfbuffer._schema._type_string(c) == dtypes[c.name], c.name


def check_matrix(m: np.ndarray, names: list[str]) -> None:
    """The columns of ``m`` are those of ``names``, in that order."""
    assert m.shape == (N, len(names))
    for j, name in enumerate(names):
        check_values(name, m[:, j].tolist())


def count_ok(calls: list[Callable[[], None]], rounds: int) -> int:
    """Runs each call ``rounds`` times; the number that read (not refused)."""
    ok = 0
    for _ in range(rounds):
        for call in calls:
            try:
                call()
            except REFUSED:
                continue
            ok += 1
    return ok


# -- pandas frames ------------------------------------------------------------

def frame_calls(df: pd.DataFrame, dtypes: dict[str, str]) -> list[Callable[[], None]]:
    """Every public function that reads pandas frame ``df`` (or pandas' interchange
    object over it), each checking what it gives."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas' __dataframe__ is deprecated
        ix = df.__dataframe__()
    pair = ["c1", "c4"]
    return [
        lambda: check_mapping(dfbuffer.from_dataframe(df)),
        lambda: check_mapping(dfbuffer.from_dataframe(df, columns=pair)),
        lambda: check_mapping(dfbuffer.from_dataframe(ix)),
        lambda: check_matrix(dfbuffer.to_matrix(df, columns=pair), pair),
        lambda: check_matrix(dfbuffer.to_matrix(df, columns=pair, on_unsupported="skip"),
                             pair),
        lambda: check_table(pa.table(dfbuffer.to_arrow(df))),
        lambda: check_table(pa.table(dfbuffer.to_arrow(df, columns=pair))),
        lambda: check_table(pa.table(dfbuffer.to_arrow(df, on_unsupported="skip"))),
        lambda: check_table(pa.table(dfbuffer.to_interchange(df))),
        lambda: check_schema(dfbuffer.schema(df), dtypes),
        lambda: check_frame(dpd.from_dataframe(ix)),
    ]


def type_strings() -> dict[str, str]:
    sch = dfbuffer.schema(frame(NAMES))
    return {c.name: dfbuffer._schema._type_string(c) for c in sch.columns}


@PANDAS_FRAME_MUTATION
def test_pandas_frame_columns_moved_while_read():
    """A thread swaps the frame's block manager for ones of other column orders and
    with a column left out: every function's columns are one manager's."""
    orders = [NAMES, NAMES[::-1], NAMES[2:] + NAMES[:2], [n for n in NAMES if n != "c3"]]
    mgrs = [frame(o)._mgr for o in orders]
    df = frame(NAMES)
    step_no = [0]

    def step() -> None:
        # object.__setattr__, as pandas swaps it (del df[c], drop/sort_index inplace)
        object.__setattr__(df, "_mgr", mgrs[step_no[0] % len(mgrs)])
        step_no[0] += 1

    calls = frame_calls(df, type_strings())
    with mutating(step):
        ok = count_ok(calls, ROUNDS)
    assert ok > 0


@PANDAS_FRAME_MUTATION
def test_pandas_frame_columns_deleted_by_pandas_while_read():
    """As above with pandas' own operations: a thread deletes columns (``del df[c]``,
    ``df.pop(c)``, each setting a new block manager) and puts the whole frame back,
    every function's columns are one moment's."""
    full = frame(NAMES)
    df = full.copy()
    step_no = [0]

    def step() -> None:
        i = step_no[0]
        step_no[0] += 1
        if i % 3 == 0:
            del df["c2"]
        elif i % 3 == 1:
            df.pop("c5")
        else:
            object.__setattr__(df, "_mgr", full._mgr)

    calls = frame_calls(df, type_strings())
    with mutating(step):
        ok = count_ok(calls, ROUNDS // 2)
    assert ok > 0


# -- dicts --------------------------------------------------------------------

def mapping_calls(d: dict) -> list[Callable[[], None]]:
    """Every public function that reads dict ``d`` of NumPy columns."""
    pair = ["c1", "c4"]
    return [
        lambda: check_mapping(dfbuffer.from_dataframe(d)),
        lambda: check_mapping(dfbuffer.from_dataframe(d, columns=pair)),
        lambda: check_matrix(dfbuffer.to_matrix(d, columns=pair), pair),
        lambda: check_matrix(dfbuffer.to_matrix(d, columns=pair, on_unsupported="skip"),
                             pair),
        lambda: check_table(pa.table(dfbuffer.to_arrow(d))),
        lambda: check_table(pa.table(dfbuffer.to_arrow(d, columns=pair))),
        lambda: check_table(pa.table(dfbuffer.to_interchange(d))),
        lambda: check_schema(dfbuffer.schema(d), MAPPING_TYPES),
        lambda: check_frame(dpd.from_dataframe(d)),
    ]


MAPPING_TYPES = {n: t for n, t in zip(NUMERIC, ["int8", "int16", "int32", "int64",
                                                "float32", "float64"], strict=True)}
MAPPING_TYPES["c9"] = "int64"


def test_dict_items_moved_while_read():
    """A thread moves a dict's items (pop and insert again: the order changes with the
    names going along) and adds and removes one: every function pairs each name with
    its own value, and no name twice."""
    d = {n: column(int(n[1:])) for n in NUMERIC}
    nine = np.full(N, 9, dtype="int64")

    def step() -> None:
        for n in ("c1", "c3", "c0"):
            d[n] = d.pop(n)
        d["c9"] = nine
        del d["c9"]

    calls = mapping_calls(d)
    with mutating(step):
        ok = count_ok(calls, ROUNDS)
    assert ok > 0


def test_dict_values_read_once_with_their_keys():
    """Without another thread: a dict subclass whose values() would disagree with its
    keys (a second pass over it) is read by every function in one pass of its items."""

    class Moving(dict):
        """Each keys() / values() / iteration pass moves the first item to the end, as
        a racing writer could between two passes; items() is one consistent pass."""

        def _move(self) -> None:
            k = next(iter(dict.keys(self)))
            dict.__setitem__(self, k, dict.pop(self, k))

        def __iter__(self):
            it = list(dict.keys(self))
            self._move()
            return iter(it)

        def keys(self):
            it = list(dict.keys(self))
            self._move()
            return it

        def values(self):
            it = list(dict.values(self))
            self._move()
            return it

    for call in mapping_calls(Moving({n: column(int(n[1:])) for n in NUMERIC})):
        call()


# -- no new reference kept -------------------------------------------------------

def test_snapshots_keep_nothing_after_the_call():
    """The frames and dicts a call reads in place of the caller's (a frame over the
    manager read once, a copy of the items) are dropped with the call's results: a
    pandas frame in a reference cycle is collected, and a dict is referenced as
    often as before."""
    df = frame(NAMES)
    object.__setattr__(df, "cycle", [df])  # not in attrs, which pandas deep-copies
    d = {n: column(int(n[1:])) for n in NUMERIC}
    before = sys.getrefcount(d)
    refs = [weakref.ref(df), weakref.ref(df._mgr)]
    results = [
        dfbuffer.to_arrow(df), dfbuffer.to_interchange(df), dfbuffer.schema(df),
        dfbuffer.from_dataframe(df, columns=["c1"]),
        dfbuffer.to_matrix(df, columns=NUMERIC, on_unsupported="skip"),
        dfbuffer.to_arrow(d), dfbuffer.schema(d), dfbuffer.to_matrix(d, on_unsupported="skip"),
    ]
    assert results[0].num_rows == N and results[5].num_rows == N
    del df, results
    for _ in range(3):
        gc.collect()
    assert [r() for r in refs] == [None, None]
    assert sys.getrefcount(d) == before


@pytest.mark.parametrize("kind", ["pandas", "mapping"])
def test_table_answers_with_a_snapshot(kind):
    """``_frame_source`` hands the Python readers what the container held when read
    once: a frame over the caller's manager (a later swap does not reach it), a dict
    copy of the caller's items (a later change does not reach it)."""
    from dfbuffer._interchange import _frame_source

    if kind == "pandas":
        df = frame(NAMES[:2])
        got, snap, _ = _frame_source(df)
        assert got == "pandas" and snap is not df and snap._mgr is df._mgr
        object.__setattr__(df, "_mgr", frame(NAMES[2:4])._mgr)
        assert list(snap.columns) == NAMES[:2]
    else:
        d = {"c0": column(0)}
        got, snap, _ = _frame_source(d)
        assert got == "mapping" and snap == d and snap is not d
        d["c1"] = column(1)
        assert list(snap) == ["c0"]


class _PairlessItems(Mapping):
    """A mapping whose items() are not (key, value) pairs."""

    def __getitem__(self, key):
        return column(0)

    def __iter__(self):
        return iter(["c0"])

    def __len__(self):
        return 1

    def items(self):
        return [("c0",)]


@pytest.mark.parametrize("fn", [dfbuffer.from_dataframe, dfbuffer.to_arrow, dfbuffer.schema,
                                dfbuffer.to_matrix, dfbuffer.to_interchange])
def test_mapping_items_that_are_not_pairs_refused(fn):
    """A mapping is read through its items() alone, which must be (key, value) pairs."""
    with pytest.raises(TypeError, match=r"items\(\) must be \(key, value\) pairs"):
        fn(_PairlessItems())


def test_pandas_frame_snapshot_keeps_the_attrs():
    """The frame read once carries the caller's attrs, which pandas' Arrow export puts
    in the schema's metadata (pandas 3 and newer)."""
    if int(pd.__version__.split(".")[0]) < 3:
        pytest.skip("pandas 2's Arrow export leaves attrs out of the metadata")
    df = frame(NAMES[:2] + ["c7"])
    df.attrs["source"] = "sensor"
    assert dfbuffer.schema(df).metadata["pandas"]["attributes"] == {"source": "sensor"}
    assert dfbuffer.schema(frame(NAMES[:1] + ["c7"])).metadata["pandas"]["attributes"] == {}
