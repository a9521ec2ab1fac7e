"""dfbuffer on dask.distributed: the example examples/dask_partitions.py run on a LocalCluster
with two worker processes (loopback only, no dashboard, every wait bounded), and the
out-of-band framing of Buffers by distributed's serialisation."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import sys

import numpy as np
import pytest
from child_processes import ChildProcess, Command, scratch_dir

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


# The cluster runs in a child process (tests/child_processes.py), which starts as the test
# is collected, so that it runs while the tests before this module run; the child prints
# what the test checks.
_CLUSTER_CHILD = r"""
import importlib.util, json, sys
from dask.distributed import Client, LocalCluster

if __name__ == "__main__":
    spec = importlib.util.spec_from_file_location("dask_partitions", sys.argv[1])
    example = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = example
    spec.loader.exec_module(example)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, worker_dashboard_address=None) as cluster, \
            Client(cluster, timeout="60s") as client:
        workers = len(client.scheduler_info()["workers"])
        # the workers import the example's functions by name, as they would a package's
        client.upload_file(sys.argv[1])
        checks = example.run(client, n=4_000, npartitions=4, timeout=120)
    print(json.dumps({"workers": workers, "checks": checks}))
"""


def _cluster_command() -> Command:
    env = dict(os.environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(dfbuffer.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH", "")) if p)
    script = scratch_dir() / "dask_cluster_child.py"
    script.write_text(_CLUSTER_CHILD)
    return Command([sys.executable, script, EXAMPLE], env=env, timeout=300)


_CLUSTER = ChildProcess(_cluster_command)


@pytest.mark.child_process(_CLUSTER)
def test_example_on_local_cluster():
    proc = _CLUSTER.result()
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["workers"] == 2
    checks = out["checks"]
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
