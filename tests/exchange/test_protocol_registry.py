"""The protocol registry of Buffer.from_object (src/_interchange/exchange/protocols.c):
one table of (name, priority, importer, yields) that drives from_object, the report and the docs."""

from __future__ import annotations

import importlib.util
import os
import re

import numpy as np
import pytest

import dfbuffer
from dfbuffer import _interchange

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tool():
    path = os.path.join(ROOT, "tools", "protocol_docs.py")
    spec = importlib.util.spec_from_file_location("protocol_docs", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_table_is_ordered_and_complete():
    rows = _interchange._protocols()
    assert [p for _, p, _, _ in rows] == list(range(1, len(rows) + 1))
    names = [n for n, _, _, _ in rows]
    assert len(set(names)) == len(names)
    # the seed's six protocols are all there, the two Python-object ones last
    for proto in (
        "__dlpack__",
        "buffer protocol",
        "__array_interface__",
        "__cuda_array_interface__",
        "__array__",
        "__arrow_array__",
    ):
        assert proto in names
    assert names[-2:] == ["__arrow_array__", "__array__"]
    assert all(y and imp.startswith("dfb_") for _, _, imp, y in rows)


def test_each_importer_is_a_function_of_the_extension():
    src = os.path.join(ROOT, "src", "_interchange")
    text = "".join(
        open(os.path.join(d, f)).read()
        for d, _, files in os.walk(src)
        for f in files
        if f.endswith(".c")
    )
    for _, _, imp, _ in _interchange._protocols():
        assert re.search(rf"^{imp}\(", text, re.M), imp


def test_the_docs_are_generated_from_the_table():
    """docs/design.md, api.md and requirements.md (L-33) hold the order as the registry
    states it; run `PYTHONPATH=build/dev/stage tools/protocol_docs.py` after changing it."""
    assert _tool().stale(_interchange._protocols(), write=False) == []


def test_the_check_notices_a_changed_order():
    tool = _tool()
    rows = list(_interchange._protocols())
    rows[0], rows[1] = rows[1], rows[0]
    assert set(tool.stale(rows, write=False)) == set(tool.DOCS)


def test_the_type_error_names_every_protocol_in_order():
    with pytest.raises(TypeError) as e:
        dfbuffer.Buffer.from_object(object())
    msg, at = str(e.value), 0
    for name, _, _, _ in _interchange._protocols():
        at = msg.index(name, at) + len(name)  # each after the one before


def test_the_report_lists_the_order_and_both_new_protocols():
    from dfbuffer._report import build_report, render

    report = build_report()
    order = report["from_object_order"]
    assert order == [n for n, _, _, _ in _interchange._protocols()]
    text = render(report)
    assert "__arrow_array__" in text and "\n  16. __array__" in text
    rows = {(r["producer"], r["path"]): r for r in report["rows"]}
    for key in (("numpy", "__array__ import"), ("pandas", "__arrow_array__ import")):
        assert rows[key]["status"] == "ok", rows[key]
        assert rows[key]["zero_copy"] is True, rows[key]


def test_one_host_readable_device_predicate():
    host = {t.name for t in dfbuffer.DeviceType if _interchange._host_readable(t)}
    assert host == {"CPU", "CUDA_HOST", "ROCM_HOST", "CUDA_MANAGED"}
    assert not _interchange._host_readable(-1) and not _interchange._host_readable(2**70)
    with pytest.raises(TypeError):
        _interchange._host_readable("CPU")
    from dfbuffer.testing import HOST_DEVICES

    assert {t.name for t in HOST_DEVICES} == host
    # a Buffer on a device the predicate refuses is not readable on the host
    b = dfbuffer.Buffer(1 << 20, 8, owner=None, device=(dfbuffer.DeviceType.CUDA, 0), readonly=True)
    with pytest.raises(BufferError):
        memoryview(b)
    x = np.arange(2, dtype=np.int32)
    pinned = dfbuffer.Buffer(x.ctypes.data, 8, owner=x, device=(dfbuffer.DeviceType.CUDA_HOST, 0))
    assert bytes(memoryview(pinned)) == x.tobytes()
