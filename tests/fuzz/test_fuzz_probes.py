"""Fuzz: drawn class hierarchies through Buffer.from_object's batched protocol probes, with
the documented order (tests/base/test_probe_batches.py's ``expected``) as the oracle.

Drawn: up to four Python classes, each with up to two earlier ones (diamonds included) and
optionally ``int`` (a static base, answered from the probe cache) as bases; a subset of the
nine protocol names ``from_object`` looks for on each class (every member raises
``Tried(name)`` when used); optionally a ``__getattr__`` hook on the leaf (then the instance
dict is not probed); and the callables among the names set on the instance.  The protocol
taken must be the one the oracle picks from the names the probes can see: those defined
along the MRO, plus the instance dict's for a type with the generic attribute hook."""

from __future__ import annotations

import pytest
from fuzz_settings import FUZZ
from hypothesis import assume, event, given
from hypothesis import strategies as st
from test_probe_batches import CALLABLES, NAMES, expected, members, raiser, used

pytestmark = pytest.mark.fuzz

names = st.frozensets(st.sampled_from(NAMES))
HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by Python code


def _getattr(self, name):
    raise AttributeError(name)


@st.composite
def hierarchies(draw):
    classes = []
    n = draw(st.integers(1, 4))
    for i in range(n):
        picked = []
        if classes:
            picked = draw(st.lists(st.sampled_from(classes), min_size=1, max_size=2, unique=True))
        bases = tuple(picked) + ((int,) if draw(st.booleans()) else ())
        ns = members(draw(names))
        if i == n - 1 and draw(st.booleans()):
            ns["__getattr__"] = _getattr
        try:
            cls = type(f"C{i}", bases or (object,), ns)
        except TypeError:  # no consistent MRO, or layouts that cannot be combined
            assume(False)
        classes.append(cls)
    return classes[-1], draw(st.frozensets(st.sampled_from(sorted(CALLABLES))))


@FUZZ
@given(hierarchies())
def test_protocol_taken_follows_the_names_the_probes_see(h):
    cls, on_instance = h
    obj = cls(3) if issubclass(cls, int) else cls()
    for n in on_instance:
        setattr(obj, n, raiser(n).__get__(obj))
    seen = {n for c in cls.__mro__ for n in vars(c) if n in NAMES}
    # the generic attribute hook: no Python class along the MRO defines either hook
    python_classes = [c for c in cls.__mro__ if c.__flags__ & HEAPTYPE]
    generic = not any(
        "__getattr__" in vars(c) or "__getattribute__" in vars(c) for c in python_classes
    )
    if generic:
        seen |= on_instance
    want = expected(frozenset(seen))
    event(
        f"generic hook: {generic}; int base: {issubclass(cls, int)}; "
        f"classes in the MRO: {len(python_classes)}"
    )
    for _ in range(2):  # the second call meets the probe caches
        got = used(obj)
        assert got in want
    event(f"taken: {got}")
