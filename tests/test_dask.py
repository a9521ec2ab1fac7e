"""dfbuffer on dask.distributed: the example examples/dask_partitions.py run on a LocalCluster
with two worker processes (loopback only, no dashboard, every wait bounded), and the
out-of-band framing of Buffers by distributed's serialisation."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

import dfbuffer  # noqa: E402

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "examples" / "dask_partitions.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("dask_partitions", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    try:
        yield mod
    finally:
        del sys.modules[spec.name]


def test_example_on_local_cluster(example):
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, worker_dashboard_address=None) as cluster, \
            Client(cluster, timeout="60s") as client:
        assert len(client.scheduler_info()["workers"]) == 2
        # the workers import the example's functions by name, as they would a package's
        client.upload_file(str(EXAMPLE))
        checks = example.run(client, n=4_000, npartitions=4, timeout=120)
    failed = [name for name, ok in checks.items() if not ok]
    assert not failed, failed
    assert len(checks) == 13


def test_distributed_frames_carry_buffer_out_of_band(example):
    from distributed.protocol import dumps, loads, to_serialize

    buf = dfbuffer.Buffer.from_object(np.arange(50_000, dtype="u1"))
    info = example.out_of_band_frames(buf)
    assert info["serializer"] == "pickle"
    assert info["data_frames"] == 1 and info["data_frame_is_buffer_memory"]
    assert info["pickle_frame_bytes"] < 1000 and info["round_trip_equal"]
    # the wire message: the Buffer's bytes are one frame of their own, not in any pickle
    frames = dumps({"payload": to_serialize(buf)})
    big = [f for f in frames if memoryview(f).nbytes == buf.nbytes]
    assert len(big) == 1
    assert np.frombuffer(memoryview(big[0]), np.uint8).ctypes.data == buf.ptr  # no copy
    assert sum(memoryview(f).nbytes for f in frames) < buf.nbytes + 1000
    back = loads(frames)["payload"]
    assert isinstance(back, dfbuffer.Buffer) and np.array_equal(np.asarray(back), np.asarray(buf))
