"""columns= is one selector in every function: names matched as str() of the column
labels, the same TypeError / KeyError text everywhere, a repeated name repeated where the
result can hold it (docs/api.md, "One vocabulary")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dfbuffer
from dfbuffer._interchange import _select_columns

FUNCTIONS = {
    "from_dataframe": dfbuffer.from_dataframe,
    "to_matrix": dfbuffer.to_matrix,
    "to_arrow": lambda obj, **k: pa.table(dfbuffer.to_arrow(obj, **k)),
    "to_interchange": lambda obj, **k: pa.table(dfbuffer.to_interchange(obj, **k)),
    "schema": dfbuffer.schema,
}


def _names(func, got):
    if func == "to_matrix":
        return got.shape[1]
    if func == "schema":
        return got.names
    return list(got.column_names) if isinstance(got, pa.Table) else list(got)


def _sources():
    df0 = pd.DataFrame({0: [1.0, 2.0], 1: [3.0, 4.0]})
    return {
        "pandas": df0,
        "pyarrow": pa.table({"0": [1.0, 2.0], "1": [3.0, 4.0]}),
        "mapping": {"0": np.array([1.0, 2.0]), "1": np.array([3.0, 4.0])},
        "interchange": dfbuffer.to_interchange(pa.table({"0": [1.0, 2.0], "1": [3.0, 4.0]})),
    }


@pytest.mark.parametrize("source", ["pandas", "pyarrow", "mapping", "interchange"])
@pytest.mark.parametrize("func", list(FUNCTIONS))
def test_a_name_is_matched_as_str_of_the_label(func, source):
    obj = _sources()[source]
    by_int = FUNCTIONS[func](obj, columns=[1])
    by_str = FUNCTIONS[func](obj, columns=["1"])
    assert _names(func, by_int) == _names(func, by_str)
    if func == "from_dataframe":
        assert list(by_int) == ["1"] and by_int["1"].tolist() == [3.0, 4.0]
    if func == "to_matrix":
        assert by_int.tolist() == [[3.0], [4.0]]


@pytest.mark.parametrize("source", ["pandas", "pyarrow", "mapping", "interchange"])
@pytest.mark.parametrize("func", list(FUNCTIONS))
def test_errors_have_one_text(func, source):
    obj = _sources()[source]
    with pytest.raises(KeyError) as ei:
        FUNCTIONS[func](obj, columns=["1", "zz"])
    assert ei.value.args == ("column 'zz' is not in the frame",)
    for bare in ("1", b"1"):
        with pytest.raises(TypeError) as ti:
            FUNCTIONS[func](obj, columns=bare)
        assert str(ti.value) == "columns must be a sequence of column names, not a single string"
    with pytest.raises(TypeError, match="^columns must be a sequence of column names"):
        FUNCTIONS[func](obj, columns=5)


def test_a_repeated_name_is_repeated_where_the_result_can_hold_it():
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    assert dfbuffer.to_matrix(df, columns=["b", "a", "b"]).tolist() == [[3, 1, 3], [4, 2, 4]]
    assert pa.table(dfbuffer.to_arrow(df, columns=["b", "b"])).column_names == ["b", "b"]
    # a dict (and a Schema) holds one entry per name: the name once, in first order
    got = dfbuffer.from_dataframe(df, columns=["b", "a", "b"])
    assert list(got) == ["b", "a"] and got["b"].tolist() == [3.0, 4.0]
    assert dfbuffer.schema(df, columns=["b", "a", "b"]).names == ["b", "a"]


def test_a_name_several_columns_share_is_ambiguous_when_selected():
    df = pd.DataFrame([[1.0, 2.0, 3.0]], columns=["a", "a", "b"])
    for fn in (dfbuffer.from_dataframe, dfbuffer.to_matrix):
        with pytest.raises(ValueError, match="column name 'a' is ambiguous"):
            fn(df, columns=["a"])
        assert fn(df, columns=["b"]) is not None


def test_the_private_selector_returns_positions():
    assert _select_columns(["a", "b", "c"], ["c", "a", "c"]) == [2, 0, 2]
    assert _select_columns(["0", "1"], [1]) == [1]
    assert _select_columns(["a"], None) == [0]
    with pytest.raises(KeyError, match="is not in the frame"):
        _select_columns(["a"], ["b"])


@pytest.mark.parametrize("func", ["from_dataframe", "to_matrix", "schema"])
def test_flattened_selection_has_the_same_key_error(func):
    t = pa.table({"s": pa.array([{"a": 1.0}]), "x": [2.0]})
    with pytest.raises(KeyError) as ei:
        getattr(dfbuffer, func)(t, structs="flatten", columns=["s.a", "zz"])
    assert ei.value.args == ("column 'zz' is not in the frame",)
