"""One vocabulary across the converting functions: the nulls= words, copy= (NumPy 2
semantics, allow_copy= its alias), nulls="always_mask", a mapping of arrays as a frame
everywhere, the lazy-frame TypeError and the keyword-only columns= of to_arrow."""

import gc
import warnings
import weakref

import numpy as np
import pandas as pd

try:
    import polars as pl
except ImportError:  # no free-threaded wheel: the polars cases skip
    pl = None
import pyarrow as pa
import pytest
from run_end_arrays import run_end_array

import dfbuffer


def _frames():
    # the same logical columns through three producers
    return {
        "pyarrow": pa.table({"x": [1.5, None, 3.0], "i": [1, 2, 3]}),
        "polars": pl.DataFrame({"x": [1.5, None, 3.0], "i": [1, 2, 3]}) if pl else None,
        "pandas": pd.DataFrame({"x": [1.5, np.nan, 3.0], "i": [1, 2, 3]}),
    }


def _frame(name):
    df = _frames()[name]
    if df is None:
        pytest.skip(f"{name} is not installed")
    return df


# ---- nulls= words ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["pyarrow", "polars", "pandas"])
def test_fill_is_one_word_in_every_function(name):
    df = _frame(name)
    cols = dfbuffer.from_dataframe(df, nulls="fill")
    np.testing.assert_array_equal(cols["x"], [1.5, np.nan, 3.0])
    m = dfbuffer.to_matrix(df, nulls="fill")
    np.testing.assert_array_equal(m[:, 0], [1.5, np.nan, 3.0])
    assert type(m) is np.ndarray


def test_to_matrix_default_is_fill():
    t = pa.table({"x": [1.0, None]})
    np.testing.assert_array_equal(dfbuffer.to_matrix(t), dfbuffer.to_matrix(t, nulls="fill"))


@pytest.mark.parametrize(
    "call",
    [
        lambda t, **k: dfbuffer.from_dataframe(t, **k)["x"],
        lambda t, **k: dfbuffer.column_to_ndarray(t.column("x"), **k),
        lambda t, **k: dfbuffer.to_matrix(t, **k)[:, 0],
    ],
    ids=["from_dataframe", "column_to_ndarray", "to_matrix"],
)
def test_nan_is_a_deprecated_spelling_of_fill(call):
    t = pa.table({"x": [1.0, None, 3.0]})
    with pytest.warns(DeprecationWarning, match="nulls='nan' is deprecated, use nulls='fill'"):
        old = call(t, nulls="nan")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = call(t, nulls="fill")
    np.testing.assert_array_equal(old, new)
    assert type(old) is type(new)


def test_nan_warning_raised_as_error_propagates():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DeprecationWarning):
            dfbuffer.to_matrix(pa.table({"x": [1.0]}), nulls="nan")


def test_an_unknown_word_names_the_choices_not_the_deprecated_one():
    with pytest.raises(ValueError, match="'mask', 'fill', 'raise' or 'always_mask'") as ei:
        dfbuffer.to_matrix(pa.table({"x": [1.0]}), nulls="zero")
    assert "nan" not in str(ei.value)


# ---- nulls="always_mask" -------------------------------------------------------------


@pytest.mark.parametrize("name", ["pyarrow", "polars", "pandas"])
def test_always_mask_type_depends_only_on_the_schema(name):
    df = _frame(name)
    cols = dfbuffer.from_dataframe(df, nulls="always_mask")
    for col in cols.values():
        assert isinstance(col, np.ma.MaskedArray)
        assert col.mask.shape == col.shape
    assert cols["i"].mask.tolist() == [False] * 3
    if name != "pandas":  # pandas' float NaN is a value of a NumPy column, not masked
        assert cols["x"].mask.tolist() == [False, True, False]
    # without the option the null-free column is a plain array
    assert type(dfbuffer.from_dataframe(df)["i"]) is np.ndarray


def test_always_mask_keeps_the_data_zero_copy():
    t = pa.table({"i": pa.array(np.arange(5, dtype=np.int64))})
    plain = dfbuffer.from_dataframe(t)["i"]
    masked = dfbuffer.from_dataframe(t, nulls="always_mask")["i"]
    assert np.shares_memory(plain, masked.data)
    assert not masked.mask.any()


def test_always_mask_on_one_column_and_codes():
    arr = dfbuffer.column_to_ndarray(pa.array([1, 2]), nulls="always_mask")
    assert isinstance(arr, np.ma.MaskedArray) and arr.tolist() == [1, 2]
    res = dfbuffer.column_to_ndarray(
        pa.array(["a", "b", "a"]).dictionary_encode(), categorical="codes", nulls="always_mask"
    )
    assert isinstance(res, dfbuffer.CategoricalCodes)
    assert isinstance(res.codes, np.ma.MaskedArray) and res.codes.tolist() == [0, 1, 0]
    assert not isinstance(res.categories, np.ma.MaskedArray)


def test_always_mask_to_matrix_is_masked_without_nulls():
    m = dfbuffer.to_matrix(pa.table({"x": [1.0, 2.0]}), nulls="always_mask")
    assert isinstance(m, np.ma.MaskedArray) and not m.mask.any()


# ---- copy= ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["pyarrow", "polars", "pandas"])
def test_copy_true_gives_fresh_writable_memory(name):
    df = _frame(name)
    shared = dfbuffer.from_dataframe(df)["i"]
    assert not shared.flags.writeable  # zero-copy over the producer's memory
    fresh = dfbuffer.from_dataframe(df, copy=True)
    for col in fresh.values():
        assert col.flags.writeable
    assert not np.shares_memory(fresh["i"], shared)
    fresh["i"][0] = 100  # the producer's memory is untouched
    assert dfbuffer.from_dataframe(df)["i"][0] == 1


def test_copy_true_copies_masked_data_and_mask():
    t = pa.table({"i": [1, None, 3]})
    a = dfbuffer.from_dataframe(t, copy=True)["i"]
    b = dfbuffer.from_dataframe(t, copy=True)["i"]
    assert isinstance(a, np.ma.MaskedArray)
    assert not np.shares_memory(a.data, b.data) and not np.shares_memory(a.mask, b.mask)
    assert a.data.flags.writeable


def test_copy_true_on_column_and_codes():
    arr = pa.array(np.arange(4.0))
    col = dfbuffer.column_to_ndarray(arr, copy=True)
    assert col.flags.writeable and col.tolist() == [0.0, 1.0, 2.0, 3.0]
    res = dfbuffer.column_to_ndarray(
        pa.array(["a", "b"]).dictionary_encode(), categorical="codes", copy=True
    )
    assert res.codes.flags.writeable and res.codes.tolist() == [0, 1]


def test_copy_none_is_zero_copy():
    x = np.arange(6.0)
    t = pa.table({"x": x})
    assert np.shares_memory(dfbuffer.from_dataframe(t, copy=None)["x"], x)
    assert np.shares_memory(dfbuffer.column_to_ndarray(t.column("x"), copy=None), x)


@pytest.mark.parametrize(
    "call",
    [
        lambda c, **k: dfbuffer.from_dataframe(pa.table({"s": c}), **k),
        lambda c, **k: dfbuffer.column_to_ndarray(c, **k),
    ],
    ids=["from_dataframe", "column_to_ndarray"],
)
def test_copy_false_raises_where_a_copy_is_needed(call):
    strings = pa.array(["a", "b"])  # str objects: always a copy
    with pytest.raises(dfbuffer.CopyError, match=r"needs a copy, which copy=False forbids"):
        call(strings, copy=False)
    # the alias: the message names the keyword given
    with pytest.raises(dfbuffer.CopyError, match=r"which allow_copy=False forbids"):
        call(strings, allow_copy=False)
    assert call(strings, allow_copy=True) is not None


def test_copy_error_is_numpys_value_error_and_the_former_runtime_error():
    assert issubclass(dfbuffer.CopyError, ValueError)
    assert issubclass(dfbuffer.CopyError, RuntimeError)
    assert dfbuffer.CopyError is dfbuffer._interchange.CopyError
    assert "CopyError" in dfbuffer.__all__


def _period_frame():
    df = pd.DataFrame({"p": pd.period_range("2020-01-01", periods=3, freq="D")})
    df.iloc[1, 0] = pd.NaT
    return df


@pytest.mark.parametrize("path", ["frame", "series", "__dataframe__", "to_interchange"])
@pytest.mark.parametrize("keyword", ["copy", "allow_copy"])
def test_copy_false_refuses_filling_period_ordinals(path, keyword):
    # NaT filled as NaN makes float64 ordinals, a copy: refused as for any int64 column
    df = _period_frame()
    if path == "series":
        def call(**k):
            return dfbuffer.column_to_ndarray(df["p"], **k)
    else:
        src = {"frame": df, "__dataframe__": df.__dataframe__(),
               "to_interchange": dfbuffer.to_interchange(df)}[path]

        def call(**k):
            return dfbuffer.from_dataframe(src, **k)["p"]
    filled = call(period="ordinal", nulls="fill")
    assert filled.dtype == np.float64 and np.isnan(filled[1])
    with pytest.raises(dfbuffer.CopyError, match=rf"column 'p'.* {keyword}=False forbids"):
        call(period="ordinal", nulls="fill", **{keyword: False})
    # masked: the ordinals are pandas' own, no copy
    masked = call(period="ordinal", nulls="mask", **{keyword: False})
    assert masked.mask.tolist() == [False, True, False]


def test_views_and_the_pandas_front_end_raise_copy_error():
    import dfbuffer.pandas

    t = pa.table({"x": pa.chunked_array([[1.0], [2.0]])})
    col = dfbuffer.to_interchange(t, allow_copy=False).get_column(0)
    with pytest.raises(dfbuffer.CopyError, match="allow_copy=False forbids"):
        col.get_buffers()
    views = pa.table({"s": pa.array(["a", "b"], pa.string_view())})
    with pytest.raises(dfbuffer.CopyError, match="allow_copy=False forbids"):
        dfbuffer.pandas.from_dataframe(views, allow_copy=False)


def test_buffer_array_refuses_a_dtype_copy():
    b = dfbuffer.Buffer.from_object(np.arange(3, dtype=np.int32))
    with pytest.raises(dfbuffer.CopyError, match="copy=False forbids"):
        b.__array__(np.float64, copy=False)


def test_copy_false_allows_zero_copy():
    x = np.arange(3, dtype=np.int32)
    assert np.shares_memory(dfbuffer.column_to_ndarray(pa.array(x), copy=False), x)


def test_copy_and_allow_copy_together_is_a_type_error():
    with pytest.raises(TypeError, match="copy= or its alias allow_copy="):
        dfbuffer.from_dataframe(pa.table({"x": [1]}), copy=True, allow_copy=True)
    with pytest.raises(TypeError, match="copy= or its alias allow_copy="):
        dfbuffer.column_to_ndarray(pa.array([1]), copy=None, allow_copy=False)


def test_to_matrix_copy():
    t = pa.table({"x": [1.0, 2.0]})
    assert dfbuffer.to_matrix(t, copy=True).flags.writeable
    assert dfbuffer.to_matrix(t, copy=None).shape == (2, 1)
    with pytest.raises(dfbuffer.CopyError, match="always copies.* copy=False forbids"):
        dfbuffer.to_matrix(t, copy=False)


def test_to_matrix_takes_allow_copy_as_the_alias_of_copy():
    t = pa.table({"x": [1.0, 2.0]})
    assert dfbuffer.to_matrix(t, allow_copy=True).tolist() == [[1.0], [2.0]]
    with pytest.raises(dfbuffer.CopyError, match="always copies.* allow_copy=False forbids"):
        dfbuffer.to_matrix(t, allow_copy=False)
    with pytest.raises(TypeError, match=r"to_matrix\(\) takes copy= or its alias allow_copy="):
        dfbuffer.to_matrix(t, copy=None, allow_copy=True)


# ---- option types: no truth value is guessed -------------------------------------------


def _dp():
    return pytest.importorskip("dfbuffer.pandas").from_dataframe


# every public function and the option keywords it takes, each called on a small frame
_OPTION_CALLS = {
    "from_dataframe": (lambda **k: dfbuffer.from_dataframe(_frame("pandas"), **k),
                       ("copy", "allow_copy", "nulls", "categorical", "strings", "structs",
                        "decimals", "on_unsupported", "period")),
    "column_to_ndarray": (lambda **k: dfbuffer.column_to_ndarray(pa.array([1.0]), **k),
                          ("copy", "allow_copy", "nulls", "categorical", "strings",
                           "decimals", "period")),
    "to_matrix": (lambda **k: dfbuffer.to_matrix(_frame("pandas"), **k),
                  ("copy", "allow_copy", "nulls", "order", "structs", "decimals",
                   "on_unsupported", "period")),
    "to_arrow": (lambda **k: dfbuffer.to_arrow(_frame("pandas"), **k), ("on_unsupported",)),
    "to_interchange": (lambda **k: dfbuffer.to_interchange(_frame("pandas"), **k),
                       ("allow_copy", "on_unsupported")),
    "schema": (lambda **k: dfbuffer.schema(_frame("pandas"), **k),
               ("structs", "on_unsupported")),
    "from_dataframe(pandas)": (lambda **k: _dp()(pa.table({"x": [1.0]}), **k),
                               ("allow_copy",)),
}
_FLAG_CASES = [(kw, func) for func, (_, kws) in _OPTION_CALLS.items()
               for kw in kws if kw in ("copy", "allow_copy")]
_CHOICE_CASES = [(kw, func) for func, (_, kws) in _OPTION_CALLS.items()
                 for kw in kws if kw not in ("copy", "allow_copy")]


def _name(func):
    return "from_dataframe" if func == "from_dataframe(pandas)" else func


@pytest.mark.parametrize(("keyword", "func"), _FLAG_CASES)
@pytest.mark.parametrize("value", ["no", 1, 0, 1.0, [], "False"])
def test_copy_keywords_take_only_none_and_bools(keyword, func, value):
    call, _ = _OPTION_CALLS[func]
    allowed = "None, True or False" if keyword == "copy" else "True or False"
    with pytest.raises(TypeError, match=rf"{_name(func)}\(\) {keyword} must be {allowed}, "
                       rf"not {type(value).__name__}"):
        call(**{keyword: value})


@pytest.mark.parametrize(("keyword", "func"), _FLAG_CASES)
def test_copy_keywords_take_numpy_bools(keyword, func):
    # what a NumPy comparison gives, as NumPy's own copy= takes it
    call, _ = _OPTION_CALLS[func]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        call(**{keyword: np.True_})


def test_buffer_from_object_allow_copy_takes_only_bools():
    a = np.arange(3)
    assert dfbuffer.Buffer.from_object(a, allow_copy=np.False_).size == 3
    with pytest.raises(TypeError, match=r"from_object\(\) allow_copy must be True or False, "
                       "not str"):
        dfbuffer.Buffer.from_object(a, allow_copy="no")


def test_allow_copy_none_is_a_type_error():
    # copy=None is "copy where needed"; allow_copy has no third state
    with pytest.raises(TypeError, match="allow_copy must be True or False, not NoneType"):
        dfbuffer.from_dataframe(pa.table({"x": [1]}), allow_copy=None)


@pytest.mark.parametrize(("keyword", "func"), _CHOICE_CASES)
def test_str_options_given_a_non_str_are_type_errors(keyword, func):
    call, _ = _OPTION_CALLS[func]
    with pytest.raises(TypeError, match=rf"{_name(func)}\(\) {keyword} must be a str \("):
        call(**{keyword: 1})
    with pytest.raises(ValueError, match=rf"{_name(func)}\(\) {keyword} must be '"):
        call(**{keyword: "no such word"})


# ---- keyword-only after the first argument ---------------------------------------------


@pytest.mark.parametrize("func", [f for f in _OPTION_CALLS if f != "to_arrow"])
def test_a_second_positional_argument_is_a_type_error(func):
    fn = {"from_dataframe(pandas)": lambda *a: _dp()(*a)}.get(
        func, getattr(dfbuffer, func, None))
    first = pa.array([1.0]) if func == "column_to_ndarray" else pa.table({"x": [1.0]})
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        fn(first, None)


def test_buffer_to_ndarray_takes_two_positional_arguments():
    ix = dfbuffer.to_interchange(pa.table({"x": [1.0, 2.0]}))
    buf, dtype = ix.get_column(0).get_buffers()["data"]
    assert dfbuffer.buffer_to_ndarray(buf, dtype, offset=1).tolist() == [2.0]
    with pytest.raises(TypeError, match="takes 2 positional arguments"):
        dfbuffer.buffer_to_ndarray(buf, dtype, 1)


# ---- a mapping of arrays is a frame ----------------------------------------------------


def test_from_dataframe_reads_a_mapping():
    x = np.arange(4.0)
    b = dfbuffer.Buffer.from_object(np.arange(4, dtype=np.int16))
    res = dfbuffer.from_dataframe({"x": x, "b": b, 3: pa.array([1, None, 3, 4])})
    assert list(res) == ["x", "b", "3"]
    assert np.shares_memory(res["x"], x)
    assert res["b"].dtype == np.int16 and res["b"].tolist() == [0, 1, 2, 3]
    assert isinstance(res["3"], np.ma.MaskedArray)
    assert list(dfbuffer.from_dataframe({"x": x, "y": x}, columns=["y"])) == ["y"]
    with pytest.raises(KeyError, match="z"):
        dfbuffer.from_dataframe({"x": x}, columns=["z"])


def test_mapping_column_errors_name_the_column():
    with pytest.raises(ValueError, match="column 'm'.*1-D"):
        dfbuffer.from_dataframe({"m": np.zeros((2, 2))})
    with pytest.raises(TypeError, match="column 'o'"):
        dfbuffer.from_dataframe({"o": object()})


def test_mapping_skips_unsupported_columns():
    # a dictionary whose values are run-end encoded: not read
    ree = run_end_array([2], pa.array([5]))
    bad = pa.DictionaryArray.from_arrays(pa.array([0], pa.int8()), ree)
    data = {"t": bad, "x": np.arange(1)}
    with pytest.raises(NotImplementedError, match="column 't'"):
        dfbuffer.from_dataframe(data)
    assert list(dfbuffer.from_dataframe(data, on_unsupported="skip")) == ["x"]


def test_mapping_is_a_frame_in_every_function():
    data = {"x": np.arange(3.0), "y": np.arange(3, dtype=np.int64)}
    np.testing.assert_array_equal(dfbuffer.to_matrix(data), np.column_stack([data["x"], data["y"]]))
    assert dfbuffer.schema(data).names == ["x", "y"]
    assert list(dfbuffer.to_interchange(data).column_names()) == ["x", "y"]
    assert pa.table(dfbuffer.to_arrow(data)).column_names == ["x", "y"]


def test_mapping_result_keeps_its_arrays_alive():
    x = np.arange(5.0)
    ref = weakref.ref(x)
    res = dfbuffer.from_dataframe({"x": x})
    del x
    gc.collect()
    assert ref() is not None
    assert res["x"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    del res
    gc.collect()
    assert ref() is None


class _CyclicMapping(dict):
    pass


def test_mapping_in_a_reference_cycle_is_collected():
    m = _CyclicMapping(x=np.arange(3.0))
    m.self = m  # a cycle through the instance dict
    ref = weakref.ref(m)
    res = dfbuffer.from_dataframe(m)
    assert res["x"].tolist() == [0.0, 1.0, 2.0]
    del m, res
    gc.collect()
    assert ref() is None


class _MutatingArray:
    """A column whose __array__ changes the mapping being read."""

    def __init__(self, owner):
        self.owner = owner

    def __array__(self, dtype=None, copy=None):
        self.owner.clear()
        self.owner["late"] = np.arange(9)
        return np.arange(3.0)


def test_mapping_changed_while_read_is_read_as_it_was():
    m = {}
    m["a"] = _MutatingArray(m)
    m["b"] = np.arange(3, dtype=np.int8)
    res = dfbuffer.from_dataframe(m)
    assert list(res) == ["a", "b"]
    assert res["b"].tolist() == [0, 1, 2]


# ---- lazy frames ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [dfbuffer.from_dataframe, dfbuffer.to_matrix, dfbuffer.schema, dfbuffer.to_arrow,
     dfbuffer.to_interchange],
    ids=lambda f: f.__name__,
)
def test_a_lazy_frame_is_told_to_collect(fn):
    with pytest.raises(TypeError, match=r"lazy frame \(LazyFrame\).*\.collect\(\)"):
        fn(pytest.importorskip("polars").LazyFrame({"a": [1]}))


def test_collect_attribute_error_other_than_attribute_is_kept():
    class Odd:
        @property
        def collect(self):
            raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        dfbuffer.from_dataframe(Odd())


# ---- keyword-only columns= of to_arrow -----------------------------------------------


def test_to_arrow_positional_columns_is_deprecated():
    t = pa.table({"a": [1], "b": [2]})
    with pytest.warns(DeprecationWarning, match="columns=..."):
        old = dfbuffer.to_arrow(t, ["b"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = dfbuffer.to_arrow(t, columns=["b"])
    assert old.column_names == new.column_names == ["b"]
    with pytest.raises(TypeError, match="one positional argument"):
        dfbuffer.to_arrow(t, ["a"], columns=["b"])


# ---- on_unsupported= of to_matrix -------------------------------------------------------


@pytest.mark.parametrize("make", [lambda d: d,
                                  lambda d: pytest.importorskip("polars").from_pandas(d),
                                  pa.Table.from_pandas],
                         ids=["pandas", "polars", "pyarrow"])
def test_to_matrix_skips_the_columns_it_does_not_take(make):
    df = pd.DataFrame({"a": [1, 2], "s": ["x", "y"], "t": pd.to_datetime(["2020", "2021"]),
                       "f": [0.5, 1.5]})
    src = make(df)
    with pytest.raises(TypeError, match="column 's'"):
        dfbuffer.to_matrix(src)
    m = dfbuffer.to_matrix(src, on_unsupported="skip")
    np.testing.assert_array_equal(m, [[1.0, 0.5], [2.0, 1.5]])
    assert dfbuffer.to_matrix(src, on_unsupported="skip", columns=["f", "s"]).tolist() == [
        [0.5], [1.5]]
    with pytest.raises(KeyError):
        dfbuffer.to_matrix(src, on_unsupported="skip", columns=["nope"])
    with pytest.raises(ValueError, match="on_unsupported"):
        dfbuffer.to_matrix(src, on_unsupported="drop")


def test_to_matrix_skip_follows_the_rule_of_dtype_and_decimals():
    t = pa.table({"c": pa.array(["a", "b"]).dictionary_encode(), "i": [1, 2],
                  "d": pa.array([1, 2], pa.decimal128(5, 1))})
    assert dfbuffer.to_matrix(t, on_unsupported="skip").tolist() == [[1], [2]]
    # categoricals give their codes with a dtype; decimals with decimals="float64"
    assert dfbuffer.to_matrix(t, on_unsupported="skip", dtype=np.int8).tolist() == [
        [0, 1], [1, 2]]
    assert dfbuffer.to_matrix(t, on_unsupported="skip", decimals="float64").tolist() == [
        [1.0, 1.0], [2.0, 2.0]]


def test_mapping_column_errors_of_to_arrow_name_the_column():
    with pytest.raises(TypeError, match="column 's'"):
        dfbuffer.to_matrix({"a": np.arange(2), "s": np.array(["x", "y"], dtype=object)})


class _CopyingProducer:
    """An __array__ producer that can only hand out a copy (NumPy 2's refusal)."""

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a copy is needed")
        return np.arange(3)


@pytest.mark.parametrize("keyword", ["copy", "allow_copy"])
def test_array_refusal_names_the_keyword_given(keyword):
    # Buffer.from_object's documented BufferError, naming the caller's keyword
    with pytest.raises(BufferError, match=rf"no copy was allowed \({keyword}=False\)"):
        dfbuffer.column_to_ndarray(_CopyingProducer(), **{keyword: False})
    with pytest.raises(BufferError, match=r"\(allow_copy=False\)"):
        dfbuffer.Buffer.from_object(_CopyingProducer(), allow_copy=False)
