"""Every public function and class of dfbuffer has a numpydoc docstring (Parameters,
Returns, Raises, Examples as they apply), and its examples run (doctest)."""

from __future__ import annotations

import doctest
import enum
import importlib
import inspect
import warnings

import pytest

import dfbuffer
import dfbuffer.testing


def _public() -> dict[str, object]:
    objs: dict[str, object] = {}
    for mod in (dfbuffer, dfbuffer.testing):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if callable(obj):
                objs[f"{mod.__name__}.{name}"] = obj
    objs["dfbuffer.Buffer.from_object"] = dfbuffer.Buffer.from_object
    try:
        front = importlib.import_module("dfbuffer.pandas")
    except ImportError:  # the front end needs a pandas it supports
        pass
    else:
        objs["dfbuffer.pandas.from_dataframe"] = front.from_dataframe
    return objs


PUBLIC = _public()


def _sections(obj: object) -> list[str]:
    if isinstance(obj, type) and issubclass(obj, enum.Enum):
        return ["Examples"]
    if isinstance(obj, type):
        return ["Parameters", "Examples"]
    try:
        takes_args = bool(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        takes_args = True
    return (["Parameters"] if takes_args else []) + ["Returns", "Raises", "Examples"]


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_numpydoc_sections(name):
    obj = PUBLIC[name]
    doc = inspect.getdoc(obj) or ""
    for section in _sections(obj):
        assert f"\n{section}\n{'-' * len(section)}\n" in doc, f"{name}: no {section} section"


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_docstring_examples_run(name):
    obj = PUBLIC[name]
    parser = doctest.DocTestParser()
    test = parser.get_doctest(inspect.getdoc(obj) or "", {}, name, None, 0)
    assert test.examples, f"{name} has no example"
    for ex in test.examples:  # an example of an optional peer skips where it is missing
        words = ex.source.split()
        if words[:1] in (["import"], ["from"]) and len(words) > 1:
            pytest.importorskip(words[1].split(".")[0])
    # verbose=False: doctest otherwise turns verbose when "-v" is in sys.argv (pytest -v)
    # and reports every passing example through `out`
    runner = doctest.DocTestRunner(verbose=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # pandas' __dataframe__
        runner.run(test, out=lambda text: pytest.fail(text, pytrace=False))
    assert runner.failures == 0
