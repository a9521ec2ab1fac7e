"""Buffer exports and imports against NumPy, measured in one run.

    PYTHONPATH=build/dev/stage python benchmarks/bench_buffer.py [--number N] [--repeat R]

Each case times dfbuffer's side and the peer's side with timeit (best of R repeats of N
calls, the two sides timed alternately so that machine load hits both alike) and prints
the ratio ours / peer.  A case whose function raises NotImplementedError (a feature not
landed yet) is reported as skipped.  To add a case, append a Case in build_cases().
torch and pyarrow cases run where those are installed (the hand-off to tensor libraries:
np.asarray, np.from_dlpack and torch.from_dlpack of a Buffer against the same call on an
ndarray, and a pyarrow array handed on through a Buffer), and np.asarray of objects offering
NumPy only __array_interface__, __array_struct__ or __array__: what a Buffer could offer
besides the buffer protocol, which NumPy tries first.
benchmarks/bench_import.py covers Buffer.from_object against more producers.
"""

from __future__ import annotations

import argparse
import timeit
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import dfbuffer

try:  # optional peers: their cases are left out where they are missing
    import pyarrow
except ImportError:
    pyarrow = None
try:
    import torch
except ImportError:
    torch = None


@dataclass
class Case:
    name: str
    ours: Callable[[], object]
    peer: Callable[[], object]
    peer_name: str
    goal: float | None = None  # max ratio ours / peer, None = informative


def make_inputs(n: int = 1000) -> tuple[np.ndarray, dfbuffer.Buffer]:
    arr = np.arange(n, dtype=np.float64)
    buf = dfbuffer.Buffer(arr.ctypes.data, arr.nbytes, owner=arr, dtype=arr.dtype)
    return arr, buf


class _ByInterface:
    """What a Buffer could offer NumPy besides the buffer protocol, each alone on an
    object without it (NumPy reads these only from objects without the buffer protocol):
    a kept ``__array_interface__`` dict, a kept ``__array_struct__`` capsule (below), or an
    ``__array__`` returning a kept ndarray (_ByArrayMethod)."""

    __slots__ = ("__array_interface__", "_arr")

    def __init__(self, arr: np.ndarray) -> None:
        self._arr = arr
        self.__array_interface__ = arr.__array_interface__


class _ByStruct:
    __slots__ = ("__array_struct__", "_arr")

    def __init__(self, arr: np.ndarray) -> None:
        self._arr = arr
        self.__array_struct__ = arr.__array_struct__


class _ByArrayMethod:
    __slots__ = ("_arr",)

    def __init__(self, arr: np.ndarray) -> None:
        self._arr = arr

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return self._arr


def build_cases() -> list[Case]:
    arr, buf = make_inputs()
    arr2 = np.arange(12.0).reshape(3, 4)[:, ::2]
    buf2 = dfbuffer.Buffer(
        arr2.ctypes.data, 88, owner=arr2, dtype="f8", shape=arr2.shape, strides=arr2.strides
    )
    mv = memoryview(arr)
    by_interface = _ByInterface(arr)
    by_struct = _ByStruct(arr)
    by_method = _ByArrayMethod(arr)
    from_dlpack = np.from_dlpack
    asarray = np.asarray
    pa_arr = pyarrow.array(arr) if pyarrow is not None else None
    pa_cases = (
        []
        if pa_arr is None
        else [
            Case(
                "np.from_dlpack(Buffer.from_object(pa))",
                lambda: from_dlpack(dfbuffer.Buffer.from_object(pa_arr)),
                lambda: from_dlpack(pa_arr),
                "np.from_dlpack(pyarrow.Array)",
            ),
            Case(
                "np.asarray(Buffer.from_object(pa))",
                lambda: asarray(dfbuffer.Buffer.from_object(pa_arr)),
                lambda: pa_arr.to_numpy(),
                "pyarrow.Array.to_numpy()",
            ),
        ]
    )
    torch_cases = (
        []
        if torch is None
        else [
            Case(
                "torch.from_dlpack(buf)",
                lambda: torch.from_dlpack(buf),
                lambda: torch.from_dlpack(arr),
                "torch.from_dlpack(ndarray)",
                1.5,
            ),
        ]
    )
    return [
        Case("np.from_dlpack(buf)", lambda: from_dlpack(buf), lambda: from_dlpack(arr),
             "np.from_dlpack(ndarray)", 1.5),
        Case("np.from_dlpack(strided buf)", lambda: from_dlpack(buf2),
             lambda: from_dlpack(arr2), "np.from_dlpack(strided ndarray)", 1.5),
        Case("buf.__dlpack__(max_version=(1, 0))",
             lambda: buf.__dlpack__(max_version=(1, 0)),
             lambda: arr.__dlpack__(max_version=(1, 0)), "ndarray.__dlpack__(...)"),
        Case("np.asarray(buf)", lambda: asarray(buf), lambda: asarray(arr),
             "np.asarray(ndarray)", 1.5),
        Case("np.asarray(memoryview(ndarray))", lambda: asarray(mv), lambda: asarray(arr),
             "np.asarray(ndarray)"),
        Case("np.asarray(buf)", lambda: asarray(buf), lambda: asarray(mv),
             "np.asarray(memoryview)"),
        Case("np.asarray(__array_interface__ obj)", lambda: asarray(by_interface),
             lambda: asarray(arr), "np.asarray(ndarray)"),
        Case("np.asarray(__array_struct__ obj)", lambda: asarray(by_struct),
             lambda: asarray(arr), "np.asarray(ndarray)"),
        Case("np.asarray(__array__ obj)", lambda: asarray(by_method),
             lambda: asarray(arr), "np.asarray(ndarray)"),
        Case("buf.__array__()", lambda: buf.__array__(), lambda: arr.view(),
             "ndarray.view()"),
        Case("memoryview(buf)", lambda: memoryview(buf), lambda: memoryview(arr),
             "memoryview(ndarray)"),
        Case("buf.__array_interface__", lambda: buf.__array_interface__,
             lambda: arr.__array_interface__, "ndarray.__array_interface__"),
        Case("Buffer.from_object(ndarray)", lambda: dfbuffer.Buffer.from_object(arr),
             lambda: memoryview(arr), "memoryview(ndarray)", 3.0),
        *torch_cases,
        *pa_cases,
    ]  # fmt: skip


def best_pair(
    ours: Callable[[], object], peer: Callable[[], object], number: int, repeat: int
) -> tuple[float, float]:
    """Best time per call (ns) of each, timed alternately so that load hits both alike."""
    t_ours = t_peer = float("inf")
    for _ in range(repeat):
        t_ours = min(t_ours, timeit.timeit(ours, number=number))
        t_peer = min(t_peer, timeit.timeit(peer, number=number))
    return t_ours / number * 1e9, t_peer / number * 1e9


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--number", type=int, default=1_000)
    p.add_argument("--repeat", type=int, default=200)
    args = p.parse_args()
    print(f"numpy {np.__version__}, dfbuffer {dfbuffer.__version__}; best of "
          f"{args.repeat} x {args.number} calls")  # fmt: skip
    print(f"{'dfbuffer':40} {'ns':>8}   {'peer':34} {'ns':>8} {'ratio':>6}  goal")
    for c in build_cases():
        try:
            c.ours()
        except NotImplementedError:
            print(f"{c.name:40} {'skipped (not implemented yet)':>8}")
            continue
        ours, peer = best_pair(c.ours, c.peer, args.number, args.repeat)
        ratio = ours / peer
        goal = "" if c.goal is None else f"<= {c.goal}x " + ("ok" if ratio <= c.goal else "MISSED")
        print(f"{c.name:40} {ours:8.0f}   {c.peer_name:34} {peer:8.0f} {ratio:6.2f}  {goal}")


if __name__ == "__main__":
    main()
