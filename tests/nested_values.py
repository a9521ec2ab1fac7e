"""Converted nested values as plain Python, to compare with pyarrow's ``to_pylist``."""

from __future__ import annotations

import math

import numpy as np


def to_py(x):
    """A converted value as Python lists, dicts, tuples and scalars (masked, NaN: None)."""
    if x is None or x is np.ma.masked:
        return None
    if isinstance(x, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(x)
        if x.ndim == 1:
            return [None if m else to_py(v) for v, m in zip(x.data, mask, strict=True)]
        return [
            None if m.all() else to_py(np.ma.MaskedArray(v, m) if m.any() else v)
            for v, m in zip(x.data, mask, strict=True)
        ]
    if isinstance(x, np.ndarray):
        return [to_py(v) for v in x]
    if isinstance(x, dict):
        return {k: to_py(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(to_py(v) for v in x)
    if isinstance(x, np.datetime64) and np.isnat(x):
        return None
    if isinstance(x, np.generic):
        x = x.item()  # rows inside objects hold filled values: NaN where null
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


def canon(x):
    """Lists whose every value is None compare as None: a null fixed-size list row
    converts to a row of masked or filled values, which cannot be told from a row of
    nulls."""
    if isinstance(x, list):
        x = [canon(v) for v in x]
        return None if x and all(v is None for v in x) else x
    if isinstance(x, tuple):
        return tuple(canon(v) for v in x)
    if isinstance(x, dict):
        return {k: canon(v) for k, v in x.items()}
    return x
