"""The Arrow device import (``__arrow_c_device_array__`` / ``__arrow_c_device_stream__``)
of two builds of dfbuffer, timed in one run.

    python benchmarks/bench_arrow_device.py STAGE_A STAGE_B [--rounds N] [--repeat N]

STAGE_A and STAGE_B are staged builds (``tools/devbuild`` prints the path, e.g.
build/dev/stage).  Each round runs one child process per build, alternating A and B, and
each child prints the best-of-``--repeat`` time per case; the report gives, per case, the
median over rounds of both builds and the ratio B / A (< 1: B is faster).  Times are CPU
time of the process (time.process_time), which other processes on a loaded machine
disturb less than wall time.

Cases: pyarrow CPU arrays forced through the device half of the PyCapsule interface
(``DeviceOnly``) into Buffer.from_object, column_to_ndarray and to_interchange (a 5-column
record batch, every buffer touched), and the hand-written fake-CUDA producers of the tests
(tests/_arrow_device_ctypes.py: one device array, a 4-chunk device stream; ctypes builds
the structs on every call, which both builds pay alike), and a pure-C device producer:
dfbuffer's own ``__arrow_c_device_array__`` of a Buffer on (fake) CUDA memory, imported
back by Buffer.from_object and to_interchange (the import is most of that time).  One CPU
case times the ordinary to_interchange path (ixview.c over the describer): a pyarrow table
of 16 columns in 8 record batches, every chunk's buffers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def child(repeat: int) -> dict:
    sys.path.insert(0, os.path.join(HERE, "..", "tests"))
    import numpy as np
    import pyarrow as pa
    from _arrow_device_ctypes import Column, DeviceArray, DeviceOnly, DeviceStream

    import dfbuffer

    fake = 0x7F0000100000
    small = pa.array(np.arange(16, dtype=np.int64))
    rb = pa.record_batch({
        "i": pa.array(np.arange(1000), mask=np.arange(1000) % 7 == 0),
        "f": pa.array(np.arange(1000, dtype=np.float64)),
        "b": pa.array(np.arange(1000) % 3 == 0),
        "s": pa.array([f"s{i}" for i in range(1000)]),
        "c": pa.array([f"c{i % 10}" for i in range(1000)]).dictionary_encode(),
    })

    def from_object():
        for _ in range(200):
            dfbuffer.Buffer.from_object(DeviceOnly(small))

    def column():
        for _ in range(200):
            dfbuffer.column_to_ndarray(DeviceOnly(small))

    def interchange():
        for _ in range(50):
            df = dfbuffer.to_interchange(DeviceOnly(rb))
            for c in df.get_columns():
                c.get_buffers()

    # the CPU path of to_interchange (ixview.c), for its describer calls
    rng = np.random.default_rng(0)
    cols = {}
    for k in range(4):
        v = rng.integers(-1000, 1000, 2000)
        cols[f"i{k}"] = pa.array(v, mask=rng.random(2000) < 0.1)
        cols[f"f{k}"] = pa.array(rng.random(2000))
        cols[f"s{k}"] = pa.array([f"s{x}" for x in v])
        cols[f"c{k}"] = pa.array([f"c{x % 20}" for x in v]).dictionary_encode()
    table = pa.Table.from_batches(pa.table(cols).to_batches(max_chunksize=250)).slice(3)

    def ixview():
        for _ in range(10):
            df = dfbuffer.to_interchange(table)
            for c in df.get_columns():
                for ch in c.get_chunks():
                    ch.get_buffers()

    # a pure-C device producer: dfbuffer's own export of a (fake) CUDA Buffer
    cbuf = dfbuffer.Buffer(fake, 64, owner=object(), dtype="i8", device=(2, 1))

    def cuda_roundtrip():
        for _ in range(200):
            dfbuffer.Buffer.from_object(DeviceOnly(cbuf))

    def cuda_roundtrip_ix():
        for _ in range(50):
            dfbuffer.to_interchange(DeviceOnly(cbuf)).get_column(0).get_buffers()

    def cuda_array():
        for _ in range(50):
            dfbuffer.Buffer.from_object(DeviceArray(Column("l", 8, [0, fake])))

    def cuda_stream():
        batches = [(Column("l", 8, [0, fake + 64 * k]), None, 0) for k in range(4)]
        for _ in range(20):
            df = dfbuffer.to_interchange(DeviceStream(Column("l", 0, []), batches))
            for ch in df.get_column(0).get_chunks():
                ch.get_buffers()

    cases = {"from_object(small)": from_object, "column_to_ndarray(small)": column,
             "to_interchange(5 cols)": interchange,
             "CPU to_interchange(16 cols x 8 chunks)": ixview,
             "CUDA Buffer export -> from_object": cuda_roundtrip,
             "CUDA Buffer export -> to_interchange": cuda_roundtrip_ix,
             "fake CUDA from_object": cuda_array,
             "fake CUDA stream to_interchange": cuda_stream}
    out = {}
    for name, fn in cases.items():
        fn()
        best = float("inf")
        for _ in range(repeat):
            t0 = time.process_time()
            fn()
            best = min(best, time.process_time() - t0)
        out[name] = best
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("stages", nargs="*")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.repeat)))
        return
    if len(args.stages) != 2:
        ap.error("give two staged builds: STAGE_A STAGE_B")
    runs: dict[str, list[dict]] = {s: [] for s in args.stages}
    for _ in range(args.rounds):
        for stage in args.stages:
            env = dict(os.environ, PYTHONPATH=os.path.abspath(stage))
            res = subprocess.run([sys.executable, __file__, "--child", "--repeat",
                                  str(args.repeat)], env=env, check=True,
                                 capture_output=True, text=True)
            runs[stage].append(json.loads(res.stdout))
    a, b = args.stages
    print(f"A = {a}\nB = {b}\n(median over {args.rounds} rounds of best-of-{args.repeat})")
    print(f"{'case':40s} {'A ms':>9s} {'B ms':>9s} {'B / A':>7s}")
    for case in runs[a][0]:
        ta = statistics.median(r[case] for r in runs[a]) * 1e3
        tb = statistics.median(r[case] for r in runs[b]) * 1e3
        print(f"{case:40s} {ta:9.3f} {tb:9.3f} {tb / ta:7.3f}")


if __name__ == "__main__":
    main()
