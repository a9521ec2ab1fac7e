"""One argument parser for every module function (args.c, requirement L-37): a wrong call or
an option of the wrong type is a TypeError, a str option that names no choice a ValueError,
whichever function is called."""

import numpy as np
import pyarrow as pa
import pytest

import dfbuffer
from dfbuffer import _interchange as ix


def _calls():
    t = pa.table({"a": [1, 2]})
    col = t.__dataframe__().get_column(0)
    return {
        "column_to_ndarray": lambda **kw: dfbuffer.column_to_ndarray(col, **kw),
        "from_dataframe": lambda **kw: dfbuffer.from_dataframe(t, **kw),
        "_arrow_to_ndarray": lambda **kw: ix._arrow_to_ndarray(t["a"], **kw),
        "_arrow_from_dataframe": lambda **kw: ix._arrow_from_dataframe(t, **kw),
    }


@pytest.mark.parametrize("name", sorted(_calls()))
@pytest.mark.parametrize("bad", [1, None, b"mask", 1.5])
def test_nulls_of_the_wrong_type_is_a_type_error(name, bad):
    with pytest.raises(TypeError, match="nulls must be a str"):
        _calls()[name](nulls=bad)


@pytest.mark.parametrize("name", sorted(_calls()))
def test_nulls_naming_no_mode_is_a_value_error(name):
    msg = "nulls must be 'mask', 'fill', 'raise' or 'always_mask', not 'drop'"
    with pytest.raises(ValueError, match=msg):
        _calls()[name](nulls="drop")
    assert _calls()[name](nulls="fill") is not None


@pytest.mark.parametrize("option", ["categorical", "strings"])
def test_conversion_options_type_and_value(option):
    t = pa.table({"a": [1, 2]})
    with pytest.raises(TypeError, match=f"{option} must be a str"):
        dfbuffer.from_dataframe(t, **{option: 1})
    with pytest.raises(ValueError, match=f"{option} must be"):
        dfbuffer.from_dataframe(t, **{option: "nope"})


def test_to_matrix_options_type_and_value():
    t = pa.table({"a": [1.0, 2.0]})
    with pytest.raises(TypeError, match="order must be a str"):
        dfbuffer.to_matrix(t, order=1)
    with pytest.raises(ValueError, match="order must be 'C' or 'F', not 'K'"):
        dfbuffer.to_matrix(t, order="K")
    with pytest.raises(TypeError, match="nulls must be a str"):
        dfbuffer.to_matrix(t, nulls=0)
    np.testing.assert_array_equal(dfbuffer.to_matrix(t, order="F"), [[1.0], [2.0]])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda t: dfbuffer.from_dataframe(t, "mask"), "takes 1 positional argument but 2"),
        (lambda t: dfbuffer.from_dataframe(t, bogus=1), "unexpected keyword argument 'bogus'"),
        (lambda t: dfbuffer.from_dataframe(), "missing required argument 'obj'"),
        (lambda t: dfbuffer.to_matrix(t, "f8"), "takes 1 positional argument but 2"),
        (lambda t: ix._arrow_import(t, True, 3), "takes 2 positional arguments but 3"),
        (lambda t: ix._arrow_schema(), "missing required argument 'obj'"),
        (lambda t: ix._arrow_buffer(t["a"], obj=1), "multiple values for argument 'obj'"),
    ],
)
def test_wrong_calls_are_type_errors(call, message):
    t = pa.table({"a": [1, 2]})
    with pytest.raises(TypeError, match=message):
        call(t)


def test_private_functions_take_keywords():
    t = pa.table({"a": [1, 2]})
    res = ix._arrow_to_ndarray(obj=t["a"], nulls="fill", allow_copy=False)
    np.testing.assert_array_equal(res, [1, 2])
    assert ix._arrow_import(t, allow_copy=True)[0] is True
    assert ix._arrow_schema(obj=t)["format"] == "+s"
