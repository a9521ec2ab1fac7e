"""Hostile pandas frames: the one pandas frame reader (pandas_frame.c, which reads a frame's
blocks in place for to_matrix, from_dataframe and dfbuffer.pandas) given block managers that lie,
frames whose class or blocks change between two reads, and column selections whose items
run code.  Each call ends in the values the frame showed when it was read, or in a clean
Python exception; never a crash (the suite runs under ASan + UBSan in CI).

The fake block managers are real pandas DataFrames whose ``_mgr`` is replaced: pandas reads
its axes from it, so the frame's columns, length and blocks are all the fake's.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import warnings
import weakref
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

import dfbuffer
import dfbuffer.pandas


class Locs:
    """A block's ``mgr_locs``: positions of its rows among the frame's columns."""

    def __init__(self, positions, dtype=np.intp):
        self.as_array = np.asarray(positions, dtype=dtype)


class Block:
    """A block: ``values`` is (n positions, n rows), or a masked extension array."""

    def __init__(self, positions, values, dtype=np.intp):
        self.mgr_locs = Locs(positions, dtype)
        self.values = values


class Manager:
    """A block manager: axes [columns, rows] and the blocks."""

    def __init__(self, columns, nrows, blocks):
        self.axes = [pd.Index(columns), pd.RangeIndex(nrows)]
        self.blocks = tuple(blocks)


def frame_over(mgr) -> pd.DataFrame:
    """An exact pandas.DataFrame whose block manager is `mgr`."""
    df = pd.DataFrame()
    object.__setattr__(df, "_mgr", mgr)
    return df


def matrix_or_clean_error(df, **kw):
    """to_matrix's result, or None after a clean exception."""
    try:
        return dfbuffer.to_matrix(df, **kw)
    except (TypeError, ValueError, BufferError, KeyError, AttributeError, IndexError):
        return None


# --------------------------------------------------------------- blocks that lie


def test_fake_blocks_read_in_place_with_any_strides():
    base = np.arange(24.0).reshape(2, 12)
    reversed_rows = base[:, ::-3]  # negative stride along the rows
    df = frame_over(Manager(["x", "y"], 4, [Block([1, 0], reversed_rows)]))
    out = dfbuffer.to_matrix(df)
    np.testing.assert_array_equal(out, reversed_rows[::-1].T)
    # a broadcast block (stride 0) and an unaligned one
    bcast = np.broadcast_to(np.arange(3, dtype=np.int64), (1, 3))
    raw = np.zeros(3 * 8 + 1, dtype=np.uint8)
    unaligned = raw[1:].view(np.int64).reshape(1, 3)
    unaligned[...] = [7, 8, 9]
    df = frame_over(Manager(["a", "b"], 3, [Block([0], bcast), Block([1], unaligned)]))
    np.testing.assert_array_equal(dfbuffer.to_matrix(df), [[0, 7], [1, 8], [2, 9]])


@pytest.mark.parametrize("positions, values, why", [
    ([0, 5], np.zeros((2, 3)), "position past the columns"),
    ([-1, 0], np.zeros((2, 3)), "negative position"),
    ([0, 0], np.zeros((2, 3)), "one column twice"),
    ([0], np.zeros((2, 3)), "more rows in the block than positions"),
    ([0, 1], np.zeros((2, 4)), "block longer than the frame"),
    ([0, 1], np.zeros((2, 2)), "block shorter than the frame"),
    ([0, 1], np.zeros(6), "1-D values"),
    ([0, 1], np.zeros((2, 3, 1)), "3-D values"),
    ([0, 1], [[0.0] * 3] * 2, "a list, not an array"),
    ([0, 1], np.zeros((2, 3), dtype=object), "object values"),
    ([0, 1], np.zeros((2, 3), dtype="S4"), "bytes values"),
    ([0, 1], np.zeros((2, 3), dtype=">f8"), "non-native order"),
    ([0, 1], np.zeros((2, 3), dtype="c16"), "complex values"),
    ([0, 1], np.zeros((2, 3), dtype=[("f", "f8")]), "structured values"),
])
def test_fake_blocks_that_lie_refused(positions, values, why):
    """A block that is not what a pandas block is, is not read in place: to_matrix then
    asks pandas' Arrow export, which cannot export a fake manager (a clean error)."""
    df = frame_over(Manager(["a", "b"], 3, [Block(positions, values)]))
    assert matrix_or_clean_error(df) is None, why


@pytest.mark.parametrize("dtype", [np.int32, np.uint64, np.float64, object])
def test_fake_block_positions_of_other_dtypes(dtype):
    """mgr_locs.as_array must be exactly intp: anything else is not read as positions."""
    df = frame_over(Manager(["a"], 2, [Block([0], np.ones((1, 2)), dtype=dtype)]))
    assert matrix_or_clean_error(df) is None
    df = frame_over(Manager(["a"], 2, [Block([0], np.ones((1, 2)))]))
    np.testing.assert_array_equal(matrix_or_clean_error(df), [[1.0], [1.0]])


def test_fake_manager_whose_blocks_are_not_a_tuple():
    mgr = Manager(["a"], 2, [Block([0], np.ones((1, 2)))])
    mgr.blocks = [mgr.blocks[0]]  # a list
    assert matrix_or_clean_error(frame_over(mgr)) is None
    mgr.blocks = None
    assert matrix_or_clean_error(frame_over(mgr)) is None
    del mgr.blocks
    assert matrix_or_clean_error(frame_over(mgr)) is None


class Raising:
    def __get__(self, obj, cls=None):
        raise RuntimeError("hostile block")


def test_fake_block_attributes_that_raise():
    class BadValues(Block):
        values = Raising()

        def __init__(self):
            self.mgr_locs = Locs([0])

    class BadLocs(Block):
        mgr_locs = Raising()

        def __init__(self):
            self.values = np.ones((1, 2))

    for blk in (BadValues(), BadLocs()):
        df = frame_over(Manager(["a"], 2, [blk]))
        # not read in place; pandas' export of the fake then fails cleanly
        with pytest.raises((RuntimeError, AttributeError)):
            dfbuffer.to_matrix(df)


def test_fake_masked_arrays_checked():
    """A masked column (IntegerArray) is read in place through _data and _mask, each
    checked to be a 1-D ndarray of the frame's length; _mask must be bool."""
    good = pd.array([1, None, 3], dtype="Int64")
    df = frame_over(Manager(["a"], 3, [Block([0], good)]))
    out = dfbuffer.to_matrix(df)
    np.testing.assert_array_equal(out, [[1.0], [np.nan], [3.0]])
    for attr, bad in (("_data", np.zeros(5, np.int64)), ("_mask", np.zeros(3, np.int8)),
                      ("_mask", np.zeros((3, 1), bool)), ("_data", [1, 2, 3])):
        arr = pd.array([1, None, 3], dtype="Int64")
        object.__setattr__(arr, attr, bad)
        df = frame_over(Manager(["a"], 3, [Block([0], arr)]))
        assert matrix_or_clean_error(df) is None, attr


# ------------------------------------------------- frames that change between reads


class Shifty(str):
    """A column label that runs `action` whenever dfbuffer (or pandas) hashes it."""

    action = None

    def __hash__(self):
        if Shifty.action is not None:
            Shifty.action()
        return str.__hash__(self)

    def __eq__(self, other):
        if Shifty.action is not None:
            Shifty.action()
        return str.__eq__(self, other)

    def __str__(self):
        if Shifty.action is not None:
            Shifty.action()
        return str.__str__(self)


@pytest.fixture
def shifty():
    yield Shifty
    Shifty.action = None


@pytest.mark.parametrize("entry", ["to_matrix", "from_dataframe", "pandas"])
def test_blocks_replaced_while_labels_are_read(entry, shifty):
    """A label's hash, eq or str swaps the frame's block manager for one of another
    length: the result is one frame's values or the other's, or a clean error."""
    df = pd.DataFrame({Shifty("a"): [1.0, 2.0, 3.0], Shifty("b"): [4.0, 5.0, 6.0]})
    other = pd.DataFrame({"a": [9.0], "b": [8.0]})._mgr
    before = {"a": [1.0, 2.0, 3.0], "b": [4.0, 5.0, 6.0]}
    after = {"a": [9.0], "b": [8.0]}
    swapped = []

    def swap():
        if not swapped:
            swapped.append(True)
            object.__setattr__(df, "_mgr", other)

    shifty.action = swap
    try:
        if entry == "to_matrix":
            out = dfbuffer.to_matrix(df)
            got = {"a": out[:, 0].tolist(), "b": out[:, 1].tolist()}
        elif entry == "from_dataframe":
            got = {k: np.asarray(v).tolist() for k, v in dfbuffer.from_dataframe(df).items()}
        else:
            res = dfbuffer.pandas.from_dataframe(df)
            got = {str(k): res[k].tolist() for k in res.columns}
    except (TypeError, ValueError, BufferError, KeyError):
        return
    finally:
        shifty.action = None
    assert got in (before, after)


@pytest.mark.parametrize("entry", ["to_matrix", "from_dataframe"])
def test_class_changed_while_labels_are_read(entry, shifty):
    """A label's str turns the frame into a subclass (no longer exactly a DataFrame) in
    the middle of the read: the values are still the frame's."""

    class Sub(pd.DataFrame):
        pass

    df = pd.DataFrame({Shifty("a"): [1, 2], Shifty("b"): [3, 4]})
    shifty.action = lambda: object.__setattr__(df, "__class__", Sub)
    try:
        if entry == "to_matrix":
            out = dfbuffer.to_matrix(df, dtype="i8")
            assert out.tolist() == [[1, 3], [2, 4]]
        else:
            got = dfbuffer.from_dataframe(df)
            assert {k: np.asarray(v).tolist() for k, v in got.items()} == {
                "a": [1, 2], "b": [3, 4]}
    except (TypeError, ValueError, BufferError, KeyError):
        pass
    finally:
        shifty.action = None


def test_blocks_swapped_from_a_block_attribute():
    """Reading one fake block replaces another fake block's arrays on the manager: the
    arrays read first are kept alive by dfbuffer, so the values are the first read's."""
    first = np.array([[1.0, 2.0]])
    mgr = Manager(["a", "b"], 2, [])

    class Swapping(Block):
        @property
        def values(self):
            mgr.blocks = (Block([0], np.array([[7.0, 7.0]])),)
            frame.__dict__.pop("_mgr", None)
            gc.collect()
            return np.array([[3.0, 4.0]])

        def __init__(self):
            self.mgr_locs = Locs([1])

    mgr.blocks = (Block([0], first), Swapping())
    frame = frame_over(mgr)
    del first
    out = matrix_or_clean_error(frame)
    if out is not None:
        np.testing.assert_array_equal(out, [[1.0, 3.0], [2.0, 4.0]])


# --------------------------------------------------------- selections that run code


@pytest.mark.parametrize("entry", ["to_matrix", "from_dataframe"])
@pytest.mark.parametrize("source", ["pandas", "arrow", "interchange"])
def test_selection_list_cleared_by_an_item(entry, source):
    """An item of ``columns=`` whose str clears the very list being read: dfbuffer reads
    its own copy of the selection (this crashed to_matrix)."""
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    obj = {"pandas": df, "arrow": __import__("pyarrow").table(df),
           "interchange": df.__dataframe__()}[source]
    sel: list = []

    class Clears:
        def __str__(self):
            sel.clear()
            return "a"

    sel.extend([Clears(), "b", "a"])
    fn = getattr(dfbuffer, entry)
    try:
        out = fn(obj, columns=sel)
    except (TypeError, KeyError, ValueError):
        return
    if entry == "to_matrix":
        np.testing.assert_array_equal(out, [[1.0, 3.0, 1.0], [2.0, 4.0, 2.0]])
    else:
        assert list(out) in (["a", "b"], ["a", "b", "a"])


def test_selection_items_with_hostile_eq_hash_and_index(shifty):
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    sel: list = []
    shifty.action = lambda: sel.clear()
    sel.extend([Shifty("a"), Shifty("b")])
    out = matrix_or_clean_error(df, columns=sel)
    if out is not None:
        np.testing.assert_array_equal(out, [[1.0, 3.0], [2.0, 4.0]])

    class Index:
        def __index__(self):
            raise RuntimeError("no")

        def __str__(self):
            return "b"

    np.testing.assert_array_equal(dfbuffer.to_matrix(df, columns=[Index()]), [[3.0], [4.0]])

    class BadStr:
        def __str__(self):
            raise RuntimeError("hostile")

    with pytest.raises(RuntimeError, match="hostile"):
        dfbuffer.to_matrix(df, columns=[BadStr()])


def test_interchange_column_names_cleared_by_a_name():
    """An interchange producer whose column names' str clears the list it returned."""
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    ix = df.__dataframe__()
    names: list = []

    class Clears:
        def __str__(self):
            names.clear()
            return "a"

    class Producer:
        def __getattr__(self, name):
            return getattr(ix, name)

        def column_names(self):
            names[:] = [Clears(), "b"]
            return names

        def __dataframe__(self, nan_as_null=False, allow_copy=True):
            return self

    out = matrix_or_clean_error(Producer())
    if out is not None:
        np.testing.assert_array_equal(out, [[1.0, 3.0], [2.0, 4.0]])


@pytest.mark.parametrize("new_rows", [1, 3, 5])
def test_manager_swapped_by_its_blocks_property(new_rows):
    """The manager's ``blocks`` swaps the frame's manager for one of another length while
    to_matrix reads it: blocks are read in place only when their shape is the length read
    before; otherwise the fake is refused (a clean error from pandas' export)."""
    frame = None

    class Swapping(Manager):
        @property
        def blocks(self):
            object.__setattr__(frame, "_mgr", Manager(
                ["a"], new_rows, [Block([0], np.full((1, new_rows), 2.0))]))
            return (Block([0], np.full((1, new_rows), 2.0)),)

        @blocks.setter
        def blocks(self, value):
            pass

    frame = frame_over(Swapping(["a"], 3, []))
    out = matrix_or_clean_error(frame)
    if new_rows == 3:
        np.testing.assert_array_equal(out, np.full((3, 1), 2.0))
    else:
        assert out is None


# ------------------------------------------- one reader for from_dataframe and to_matrix


def _outcome(fn, df):
    """("ok", {column: values}) or ("error", exception type) for one entry point."""
    try:
        got = fn(df)
    except (TypeError, ValueError, BufferError, KeyError, AttributeError, IndexError) as e:
        return "error", type(e)
    if isinstance(got, np.ndarray):
        return "ok", {c: got[:, i].tolist() for i, c in enumerate(df.columns)}
    return "ok", {k: np.asarray(v).tolist() for k, v in got.items()}


_F8 = np.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize("positions, values, why", [
    ([1, 0], _F8, "a good block, columns swapped"),
    ([1, 0], np.arange(18.0).reshape(2, 9)[:, ::-3], "negative strides"),
    ([0, 1], np.asfortranarray(_F8), "Fortran order"),
    ([0, 1], np.broadcast_to(np.arange(3, dtype=np.int64), (2, 3)), "a broadcast block"),
    ([0, 5], _F8, "position past the columns"),
    ([-1, 0], _F8, "negative position"),
    ([0, 0], _F8, "one column twice"),
    ([0], _F8, "more rows in the block than positions"),
    ([0, 1], np.zeros((2, 4)), "block longer than the frame"),
    ([0, 1], np.zeros(6), "1-D values"),
    ([0, 1], [[0.0] * 3] * 2, "a list, not an array"),
    ([0, 1], np.zeros((2, 3), dtype="S4"), "bytes values"),
    ([0, 1], np.zeros((2, 3), dtype=">f8"), "non-native order"),
])
def test_from_dataframe_and_to_matrix_read_a_frame_alike(positions, values, why):
    """from_dataframe and to_matrix read a pandas frame through one reader: a block
    manager it accepts gives both the same values (from_dataframe read such fakes
    through pandas' Series API before, which a fake manager cannot serve), and one it
    refuses sends both to pandas' Arrow export, which fails alike on the fake."""
    df = frame_over(Manager(["a", "b"], 3, [Block(positions, values)]))
    m = _outcome(dfbuffer.to_matrix, df)
    d = _outcome(dfbuffer.from_dataframe, df)
    assert m == d, why
    good = why in ("a good block, columns swapped", "negative strides", "Fortran order",
                   "a broadcast block")
    assert (m[0] == "ok") == good, why


def test_one_reader_refuses_a_manager_for_both_entries():
    """A block of unreadable positions next to a good one: the whole manager is refused
    by both entries (not half read by one of them)."""
    good = Block([0], np.ones((1, 3)))
    bad = Block([1], np.ones((1, 3)), dtype=np.int32)
    df = frame_over(Manager(["a", "b"], 3, [good, bad]))
    assert _outcome(dfbuffer.to_matrix, df)[0] == "error"
    assert _outcome(dfbuffer.from_dataframe, df)[0] == "error"
    # and with the positions fixed, both read it
    df = frame_over(Manager(["a", "b"], 3, [good, Block([1], np.zeros((1, 3)))]))
    assert _outcome(dfbuffer.to_matrix, df) == _outcome(dfbuffer.from_dataframe, df) == (
        "ok", {"a": [1.0] * 3, "b": [0.0] * 3})


def test_from_dataframe_holds_the_block_it_read():
    """The array from_dataframe hands out keeps the fake block's memory alive after the
    frame, its manager and the block are gone."""
    values = np.zeros((2, 3))  # owns its memory (no base to collapse to)
    values[1] = [3.0, 4.0, 5.0]
    ref = weakref.ref(values)
    df = frame_over(Manager(["a", "b"], 3, [Block([0, 1], values)]))
    out = dfbuffer.from_dataframe(df)
    del df, values
    gc.collect()
    assert ref() is not None
    assert out["b"].tolist() == [3.0, 4.0, 5.0] and not out["b"].flags.writeable
    del out
    gc.collect()
    assert ref() is None


@contextlib.contextmanager
def managers_swapped(df: pd.DataFrame, *frames: pd.DataFrame) -> Iterator[None]:
    """Inside the block, another thread sets ``df``'s block manager to each of
    ``frames``' in turn, again and again (object.__setattr__, as pandas does)."""
    mgrs = [f._mgr for f in frames]
    stop = threading.Event()

    def writer():
        i = 0
        while not stop.is_set():
            object.__setattr__(df, "_mgr", mgrs[i % len(mgrs)])
            i += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()


@pytest.mark.parametrize("entry", ["to_matrix", "from_dataframe"])
def test_manager_swapped_by_a_racing_thread(entry):
    """A thread swaps the frame's block manager between two of different lengths while
    the frame is read: every result is one manager's values, or a clean error.  With the
    GIL off the swap can land between any two reads, so the reader reads `_mgr` once and
    everything (names, length, blocks) from that one manager."""
    a = pd.DataFrame({"x": np.arange(1000.0), "y": np.arange(1000.0) * 2})
    b = pd.DataFrame({"x": np.full(7, -1.0), "y": np.full(7, -2.0)})
    df = pd.DataFrame({"x": a["x"].copy(), "y": a["y"].copy()})
    with managers_swapped(df, a, b):
        for _ in range(200):
            try:
                if entry == "to_matrix":
                    out = dfbuffer.to_matrix(df)
                    got = (out[:, 0].tolist(), out[:, 1].tolist())
                else:
                    res = dfbuffer.from_dataframe(df)
                    got = (np.asarray(res["x"]).tolist(), np.asarray(res["y"]).tolist())
            except (TypeError, ValueError, BufferError, KeyError, AttributeError):
                continue
            assert got in (
                (a["x"].tolist(), a["y"].tolist()),
                (b["x"].tolist(), b["y"].tolist()),
            )


def test_manager_swapped_under_a_column_read_by_pandas():
    """As above, with a string column, which from_dataframe reads through pandas' own
    export after the NumPy blocks: that export reads a frame over the manager the
    blocks came from, so both columns are always one manager's."""
    a = pd.DataFrame({"x": np.arange(300.0), "s": [f"a{i}" for i in range(300)]})
    b = pd.DataFrame({"x": np.full(5, -1.0), "s": ["b"] * 5})
    df = a.copy()
    want = [(f["x"].tolist(), f["s"].tolist()) for f in (a, b)]
    with managers_swapped(df, a, b):
        for _ in range(100):
            res = dfbuffer.from_dataframe(df)
            got = (np.asarray(res["x"]).tolist(), np.asarray(res["s"]).tolist())
            assert got in want


def test_manager_swapped_under_to_matrix_of_an_arrow_column():
    """to_matrix of a frame with a pyarrow-backed column, which its blocks do not serve:
    the export it falls back to reads a frame over the manager read, so every matrix is
    one manager's even when a thread swaps the manager between the two reads."""
    pytest.importorskip("pyarrow")
    a = pd.DataFrame({"x": np.arange(300.0),
                      "p": pd.array(np.arange(300.0) + 0.5, dtype="float64[pyarrow]")})
    b = pd.DataFrame({"x": np.full(5, -1.0), "p": pd.array([-2.0] * 5, dtype="float64[pyarrow]")})
    df = a.copy()
    want = [(f["x"].tolist(), f["p"].tolist()) for f in (a, b)]
    with managers_swapped(df, a, b):
        for _ in range(100):
            m = dfbuffer.to_matrix(df)
            assert (m[:, 0].tolist(), m[:, 1].tolist()) in want

def test_array_manager_frames_read_in_place():
    """pandas 2's ArrayManager (one 1-D array per column, no blocks) is read by the same
    reader: NumPy columns zero-copy for from_dataframe, in place for to_matrix."""
    if int(pd.__version__.split(".")[0]) >= 3:
        pytest.skip("pandas 3 has no ArrayManager")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the option is deprecated
        pd.set_option("mode.data_manager", "array")
        try:
            df = pd.DataFrame({"a": [1.0, np.nan, 3.0], "b": [1, 2, 3],
                               "c": pd.array([1, None, 3], dtype="Int64"),
                               "s": ["x", "y", "z"]})
        finally:
            pd.set_option("mode.data_manager", "block")
    assert type(df._mgr).__name__ == "ArrayManager"
    out = dfbuffer.from_dataframe(df)
    assert np.shares_memory(out["a"], df["a"].to_numpy())
    assert np.shares_memory(out["b"], df["b"].to_numpy())
    assert np.ma.getmaskarray(out["c"]).tolist() == [False, True, False]
    assert out["s"].tolist() == ["x", "y", "z"]
    np.testing.assert_array_equal(
        dfbuffer.to_matrix(df, columns=["a", "b", "c"]),
        [[1.0, 1.0, 1.0], [np.nan, 2.0, np.nan], [3.0, 3.0, 3.0]])
    with pytest.raises(TypeError, match="'s'"):
        dfbuffer.to_matrix(df)
