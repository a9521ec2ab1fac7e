"""Instruction counts per call of the fast paths' sub-microsecond calls (load-independent).

The interchange-buffer calls, the polars calls and ``Buffer.from_object`` of each producer
of the benchmark's section 3, each beside the producer's own fastest export (needs
valgrind, numpy, pandas, pyarrow, polars and torch).

    PYTHONPATH=<stage> python benchmarks/callgrind_fast_paths.py [name,name,...]

Runs itself under ``valgrind --tool=callgrind --collect-atstart=no
--toggle-collect=builtin_eval --dump-after=builtin_eval`` with PYTHONHASHSEED=0: each
statement is looped 200 and 2200 times inside ``eval`` (after a warm-up round), and the
count per call is (count(2200) - count(200)) / 2000.  The loop alone ("none") is in both
sides of every ratio.  Count both sides of a comparison on the same build type (the counts
recorded so far used a ``-Dbuildtype=debugoptimized`` build).
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import tempfile
import warnings

STMTS = {
    "none": "None",
    "b2n": "b2n(buf, dtype)",
    "pa_calls": "buf.ptr; buf.bufsize; buf.__dlpack_device__()",
    "dlpack_nd": "np.from_dlpack(a)",
    "fo_pd": "fo(pdbuf)",
    "pd_calls": "pdbuf.ptr; pdbuf.bufsize; pdbuf.__dlpack_device__()",
    "dlpack_pd": "np.from_dlpack(pdbuf)",
    "c2n_pl": "c2n(s)",
    "fo_pl": "fo(s)",
    "pl_peer": "s.to_numpy()",
    "fo_nd": "fo(a)",
    "nd_peer": "memoryview(a)",
    "fo_bytes": "fo(data)",
    "bytes_peer": "memoryview(data)",
    "fo_pa": "fo(pa_arr)",
    "pa_peer": "np.from_dlpack(pa_arr)",
    "fo_nul": "fo(pa_nulls)",
    "nul_peer": "np.frombuffer(pa_nulls.buffers()[1], 'f8')",
    "fo_pabuf": "fo(pa_buf)",
    "pabuf_peer": "memoryview(pa_buf)",
    "fo_torch": "fo(t)",
    "torch_peer": "np.from_dlpack(t)",
}
# Buffer.from_object (or column_to_ndarray) of a producer -> the producer's own export
PAIRS = {
    "c2n_pl": "pl_peer",
    "fo_pl": "pl_peer",
    "fo_nd": "nd_peer",
    "fo_bytes": "bytes_peer",
    "fo_pa": "pa_peer",
    "fo_nul": "nul_peer",
    "fo_pabuf": "pabuf_peer",
    "fo_torch": "torch_peer",
    "fo_pd": "dlpack_pd",
}
N1, N2 = 200, 2200


def child(names: list[str]) -> None:
    import numpy as np
    import pandas as pd
    import polars as pl
    import pyarrow as pa
    import torch

    import dfbuffer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        col = pa.table({"a": np.arange(1000.0)}).__dataframe__().get_column(0)
        buf, dtype = col.get_buffers()["data"]
        pcol = pd.DataFrame({"a": np.arange(1000.0)}).__dataframe__().get_column(0)
        pdbuf = pcol.get_buffers()["data"][0]
    pa_arr = pa.array(np.arange(1000.0))
    g = {
        "np": np,
        "buf": buf,
        "dtype": dtype,
        "pdbuf": pdbuf,
        "a": np.arange(1000.0),
        "b2n": dfbuffer.buffer_to_ndarray,
        "fo": dfbuffer.Buffer.from_object,
        "c2n": dfbuffer.column_to_ndarray,
        "s": pl.Series("a", np.arange(1000.0)),
        "data": b"x" * 4096,
        "pa_arr": pa_arr,
        "pa_nulls": pa.array([1.0, None] * 500),
        "pa_buf": pa_arr.buffers()[1],
        "t": torch.arange(1000.0),
    }
    codes = [
        (f"{name}:{n}", compile(f"for _ in range({n}):\n    {STMTS[name]}\n", name, "exec"))
        for name in names
        for n in (N1, N2)
    ]
    for _, c in codes:  # warm-up: specialised bytecode, caches, memos
        eval(c, g)
    print("ORDER", ",".join(k for k, _ in codes), flush=True)
    for _, c in codes:
        eval(c, g)


def main() -> None:
    names = sys.argv[1].split(",") if len(sys.argv) > 1 else list(STMTS)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        env = dict(os.environ, PYTHONHASHSEED="0")
        r = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--collect-atstart=no",
                "--toggle-collect=builtin_eval",
                "--dump-after=builtin_eval",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "--child",
                ",".join(names),
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        order = next(ln for ln in r.stdout.splitlines() if ln.startswith("ORDER")).split()[1]
        order = order.split(",")
        parts = sorted(glob.glob(out + ".*"), key=lambda f: int(f.rsplit(".", 1)[1]))
        totals = []
        for f in parts[-len(order) :]:
            with open(f) as fh:
                m = re.search(r"^(?:summary|totals): (\d+)", fh.read(), re.M)
            totals.append(int(m.group(1)) if m else 0)
        got = dict(zip(order, totals, strict=True))
    per = {n: (got[f"{n}:{N2}"] - got[f"{n}:{N1}"]) / (N2 - N1) for n in names}
    for n in names:
        print(f"{n:10s} {per[n]:9.1f}  {STMTS[n]}")
    if {"b2n", "pa_calls", "dlpack_nd"} <= set(per):
        print(
            f"buffer_to_ndarray / np.from_dlpack(ndarray): {per['b2n'] / per['dlpack_nd']:.2f}x;"
            f" dfbuffer's share: {per['b2n'] - per['pa_calls']:.0f} instructions"
        )
    for n, peer in PAIRS.items():
        if n in per and peer in per:
            print(f"{STMTS[n]} / {STMTS[peer]}: {per[n] / per[peer]:.2f}x")
    if {"fo_pd", "pd_calls", "dlpack_pd"} <= set(per):
        print(
            f"from_object(pandas buffer) / np.from_dlpack(buf): "
            f"{per['fo_pd'] / per['dlpack_pd']:.2f}x (pandas' calls alone "
            f"{per['pd_calls'] / per['dlpack_pd']:.2f}x); dfbuffer's share: "
            f"{per['fo_pd'] - per['pd_calls']:.0f} instructions"
        )


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2].split(","))
    else:
        main()
