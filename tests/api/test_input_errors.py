"""A newcomer's bad input gets an error that names the public function called and says
what to do, with the type docs/api.md ("Errors for inputs that are no frame") gives:
TypeError for what is no frame or column, ValueError for a frame of the wrong shape.
Inputs a function reads (non-str column names; duplicate names where the result can
hold them) are checked to be read."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dfbuffer

try:
    import polars as pl
except ImportError:  # no free-threaded wheel: the LazyFrame case skips
    pl = None

try:
    import dfbuffer.pandas as dpd
except ImportError:  # the front end needs a pandas it supports
    dpd = None


def _rows():
    yield {"a": 1}


def _lazy():
    if pl is None:
        pytest.skip("polars not installed")
    return pl.LazyFrame({"a": [1, 2]})


INPUTS = {
    "list of dicts": lambda: [{"a": 1}, {"a": 2}],
    "structured ndarray": lambda: np.zeros(2, dtype=[("a", "i8"), ("b", "f8")]),
    "2-D array": lambda: np.ones((2, 2)),
    "None": lambda: None,
    "generator": _rows,
    "ragged mapping": lambda: {"a": np.arange(2), "b": np.arange(3)},
    "mapping with a list value": lambda: {"a": [1, 2]},
    "mapping with a 2-D value": lambda: {"a": np.ones((2, 2))},
    "duplicate column names": lambda: pd.DataFrame([[1, 2]], columns=["a", "a"]),
    "non-str column names": lambda: pd.DataFrame({0: [1, 2], 1: [3, 4]}),
    "polars LazyFrame": _lazy,
}

FUNCTIONS = {
    "from_dataframe": dfbuffer.from_dataframe,
    "column_to_ndarray": dfbuffer.column_to_ndarray,
    "to_matrix": dfbuffer.to_matrix,
    "to_arrow": dfbuffer.to_arrow,
    "to_interchange": dfbuffer.to_interchange,
    "schema": dfbuffer.schema,
    "dfbuffer.pandas.from_dataframe": dpd.from_dataframe if dpd is not None else None,
}

# what each function does with each input: an exception type, or None (read)
_FRAME = {
    "list of dicts": TypeError,
    "structured ndarray": TypeError,
    "2-D array": TypeError,
    "None": TypeError,
    "generator": TypeError,
    "ragged mapping": ValueError,
    "mapping with a list value": TypeError,
    "mapping with a 2-D value": ValueError,
    "duplicate column names": ValueError,  # one array, one Arrow field per name
    "non-str column names": None,  # names compared as str()
    "polars LazyFrame": TypeError,
}
EXPECTED = {
    "from_dataframe": _FRAME,
    "to_arrow": _FRAME,
    "to_interchange": _FRAME,
    # a matrix, a Schema and a pandas DataFrame hold columns of one name
    "to_matrix": {**_FRAME, "duplicate column names": None},
    "schema": {**_FRAME, "duplicate column names": None},
    "dfbuffer.pandas.from_dataframe": {**_FRAME, "duplicate column names": None},
    # one column: an array of another shape is a ValueError, a mapping no column
    "column_to_ndarray": {**{k: TypeError for k in _FRAME},
                          "2-D array": ValueError,
                          "duplicate column names": ValueError,
                          "non-str column names": None},
}

# what the message says to do, beyond naming the function
HINTS = {
    "list of dicts": "pandas.DataFrame(rows)",
    "structured ndarray": "a[name]",
    "polars LazyFrame": ".collect()",
    "mapping with a list value": "np.asarray(...)",
}


@pytest.mark.parametrize("case", list(INPUTS))
@pytest.mark.parametrize("func", list(FUNCTIONS))
def test_bad_input_names_the_function(func, case):
    f = FUNCTIONS[func]
    if f is None:
        pytest.skip("dfbuffer.pandas needs a pandas it supports")
    obj = INPUTS[case]()
    expected = EXPECTED[func][case]
    if expected is None:
        assert f(obj) is not None
        return
    with pytest.raises(expected) as info:
        f(obj)
    msg = str(info.value)
    assert f"{func.rsplit('.', 1)[-1]}()" in msg, msg
    if func != "column_to_ndarray" or case == "polars LazyFrame":
        hint = HINTS.get(case)
        assert hint is None or hint in msg, msg


@pytest.mark.parametrize("func", [f for f in FUNCTIONS if f != "column_to_ndarray"])
def test_a_mapping_value_is_named_with_its_shape(func):
    f = FUNCTIONS[func]
    if f is None:
        pytest.skip("dfbuffer.pandas needs a pandas it supports")
    with pytest.raises(ValueError, match=r"column 'a': .*\(\) takes 1-D columns, got an "
                                         r"array of shape \(2, 2\)"):
        f({"a": np.ones((2, 2))})
    with pytest.raises(TypeError, match=r"column 'a': .*pass np\.asarray\(\.\.\.\)"):
        f({"a": [1, 2]})


def test_one_column_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"column_to_ndarray\(\) takes 1-D columns, got an "
                                         r"array of shape \(2, 2\)"):
        dfbuffer.column_to_ndarray(np.ones((2, 2)))
    with pytest.raises(TypeError, match=r"column_to_ndarray\(\) .*np\.asarray"):
        dfbuffer.column_to_ndarray([1, 2])
    with pytest.raises(TypeError, match=r"a mapping of columns is a frame, read by "
                                        r"from_dataframe\(\)"):
        dfbuffer.column_to_ndarray({"a": np.arange(2)})


_FRAME_FUNCTIONS = ["from_dataframe", "to_matrix", "to_arrow", "to_interchange", "schema",
                    "dfbuffer.pandas.from_dataframe"]


@pytest.mark.parametrize("name", ["list of dicts", "structured ndarray", "2-D array", "None",
                                  "generator", "polars LazyFrame"])
def test_every_frame_function_gives_one_message_but_for_its_name(name):
    messages = {}
    for func in _FRAME_FUNCTIONS:
        fn = FUNCTIONS[func]
        if fn is None:
            continue
        with pytest.raises(TypeError) as ei:
            fn(INPUTS[name]())
        called = func.rsplit(".", 1)[-1]
        msg = str(ei.value)
        assert msg.startswith(f"{called}() "), msg
        messages[func] = msg[len(called):]
    assert len(set(messages.values())) == 1, messages
