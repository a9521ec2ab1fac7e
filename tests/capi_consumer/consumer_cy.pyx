# A Cython consumer of dfbuffer's C API through dfbuffer/capi.pxd.
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_New
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc

from dfbuffer cimport capi

capi.import_dfbuffer()

cdef long freed_blocks = 0


cdef void _free_block(object cap) noexcept:
    global freed_blocks
    free(PyCapsule_GetPointer(cap, "consumer_cy.block"))
    freed_blocks += 1


def freed():
    return freed_blocks


def make(Py_ssize_t n):
    """A Buffer of n int64 0, 1, ... over malloc'd memory owned by a capsule."""
    cdef int64_t *p = <int64_t *>malloc(max(n, 1) * sizeof(int64_t))
    if p == NULL:
        raise MemoryError()
    cdef Py_ssize_t i
    for i in range(n):
        p[i] = i
    owner = PyCapsule_New(p, "consumer_cy.block", _free_block)
    return capi.DfBuffer_New(p, n * 8, owner, b"<i8", 1, &n, NULL,
                             capi.DFBUFFER_DEVICE_CPU, 0, 1)


def info(buf):
    cdef capi.DfBuffer_Info inf
    capi.DfBuffer_GetInfo(buf, &inf)
    return {"ndim": inf.ndim, "shape": tuple(inf.shape[i] for i in range(inf.ndim)),
            "itemsize": inf.itemsize, "readonly": inf.readonly,
            "is_buffer": capi.DfBuffer_Check(buf)}


def column(col):
    return capi.DfBuffer_ColumnToNdarray(col, capi.DFBUFFER_NULLS_FILL)


def api():
    return (capi.DfBuffer_API.abi_version, capi.DfBuffer_API.api_version)
