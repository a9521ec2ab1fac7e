"""Run-end encoded pyarrow arrays built the same way on every supported pyarrow.

``pa.RunEndEncodedArray.from_arrays`` takes its run ends as an Array only from pyarrow 17
(pyarrow 16, the declared minimum, raises "TypeError: an integer is required" there);
``pa.Array.from_buffers`` with the two children builds the same array on every version and
keeps the run ends' own buffer, which the racing tests rewrite."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc


def run_end_array(run_ends: pa.Array | Sequence[int], values: pa.Array,
                  run_end_type: pa.DataType | None = None) -> pa.Array:
    """The run-end encoded array of ``values`` whose runs end at ``run_ends`` (an Array,
    or ints of ``run_end_type``, int32 by default), validated."""
    if not isinstance(run_ends, pa.Array):
        run_ends = pa.array(run_ends, run_end_type or pa.int32())
    length = run_ends[-1].as_py() if len(run_ends) else 0
    arr = pa.Array.from_buffers(pa.run_end_encoded(run_ends.type, values.type), length,
                                [None], children=[run_ends, values])
    arr.validate(full=True)
    return arr


def run_end_encode(values, run_end_type: pa.DataType | None = None) -> pa.Array:
    """pyarrow's run-end encoding of ``values`` (a list), run ends int32 by default."""
    return pc.run_end_encode(pa.array(values), run_end_type=run_end_type or pa.int32())
