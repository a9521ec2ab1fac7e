"""dfbuffer on dask.distributed: the example examples/dask_partitions.py run on a LocalCluster
with two worker processes (loopback only, the HTTP server on a free port, every wait
bounded), and the out-of-band framing of Buffers by distributed's serialisation."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import sys

import pytest
from child_processes import ChildProcess, Command, scratch_dir

import dfbuffer

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "dask_partitions.py"

# Both tests run in child processes (tests/child_processes.py), which start as the tests
# are collected, so that they run while the tests before this module run; each child
# prints what its test checks.  dask and distributed are imported only there (a second
# of this process' time otherwise): found or not without importing them.
_MISSING = [m for m in ("dask", "distributed") if importlib.util.find_spec(m) is None]
pytestmark = pytest.mark.skipif(bool(_MISSING), reason=f"could not import {_MISSING}")

_CLUSTER_CHILD = r"""
import importlib.util, json, sys
from dask.distributed import Client, LocalCluster

if __name__ == "__main__":
    spec = importlib.util.spec_from_file_location("dask_partitions", sys.argv[1])
    example = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = example
    spec.loader.exec_module(example)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", worker_dashboard_address=None) as cluster, \
            Client(cluster, timeout="60s") as client:
        workers = len(client.scheduler_info()["workers"])
        # the workers import the example's functions by name, as they would a package's
        client.upload_file(sys.argv[1])
        checks = example.run(client, n=4_000, npartitions=4, timeout=120)
    print(json.dumps({"workers": workers, "checks": checks}))
"""


# distributed's serialisation of a Buffer: the example's out_of_band_frames, then the
# wire message distributed.protocol.dumps makes and loads reads back
_FRAMES_CHILD = r"""
import importlib.util, json, sys
import numpy as np
from distributed.protocol import dumps, loads, to_serialize
import dfbuffer

spec = importlib.util.spec_from_file_location("dask_partitions", sys.argv[1])
example = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = example
spec.loader.exec_module(example)
buf = dfbuffer.Buffer.from_object(np.arange(50_000, dtype="u1"))
info = example.out_of_band_frames(buf)
frames = dumps({"payload": to_serialize(buf)})
big = [f for f in frames if memoryview(f).nbytes == buf.nbytes]
back = loads(frames)["payload"]
print(json.dumps({
    "info": info,
    "nbytes": buf.nbytes,
    "buffer_sized_frames": len(big),
    "frame_is_buffer_memory": [
        int(np.frombuffer(memoryview(f), np.uint8).ctypes.data) == buf.ptr for f in big],
    "total_frame_bytes": sum(memoryview(f).nbytes for f in frames),
    "back_is_buffer": isinstance(back, dfbuffer.Buffer),
    "back_equal": bool(np.array_equal(np.asarray(back), np.asarray(buf))),
}))
"""


def _child_command(name: str, code: str) -> Command:
    env = dict(os.environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(dfbuffer.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH", "")) if p)
    script = scratch_dir() / f"dask_{name}_child.py"
    script.write_text(code)
    return Command([sys.executable, script, EXAMPLE], env=env, timeout=300)


_CLUSTER = None if _MISSING else ChildProcess(lambda: _child_command("cluster", _CLUSTER_CHILD))
_FRAMES = None if _MISSING else ChildProcess(lambda: _child_command("frames", _FRAMES_CHILD))


def _output(job: ChildProcess) -> dict:
    proc = job.result()
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.child_process(_CLUSTER)
def test_example_on_local_cluster():
    out = _output(_CLUSTER)
    assert out["workers"] == 2
    checks = out["checks"]
    failed = [name for name, ok in checks.items() if not ok]
    assert not failed, failed
    assert len(checks) == 15


@pytest.mark.child_process(_FRAMES)
def test_distributed_frames_carry_buffer_out_of_band():
    out = _output(_FRAMES)
    info = out["info"]
    assert info["serializer"] == "pickle"
    assert info["data_frames"] == 1 and info["data_frame_is_buffer_memory"]
    assert info["pickle_frame_bytes"] < 1000 and info["round_trip_equal"]
    # the wire message: the Buffer's bytes are one frame of their own, not in any pickle
    assert out["buffer_sized_frames"] == 1
    assert out["frame_is_buffer_memory"] == [True]  # no copy
    assert out["total_frame_bytes"] < out["nbytes"] + 1000
    assert out["back_is_buffer"] and out["back_equal"]
