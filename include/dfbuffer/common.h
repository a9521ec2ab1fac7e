/* dfbuffer: what every C file of the extension shares.
 *
 * Include this first in every file that uses Python or NumPy.  module.c
 * defines DFB_IMPORT_ARRAY before including it; every other file shares the
 * NumPy API table through PY_ARRAY_UNIQUE_SYMBOL.
 */
#ifndef DFBUFFER_COMMON_H
#define DFBUFFER_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#define NPY_TARGET_VERSION NPY_2_0_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL dfbuffer_ARRAY_API
#ifndef DFB_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include <dlpack/dlpack.h>

#include "dfbuffer/compat.h"

#include <stdint.h>

/* At most this many dimensions (NumPy's own limit). */
#define DFB_MAXDIM 64

/* Values of dfbuffer.NativeFormat: the protocol the memory came through. */
typedef enum {
    DFB_NATIVE_RAW = 0,
    DFB_NATIVE_NUMPY = 1,
    DFB_NATIVE_ARROW = 2,
    DFB_NATIVE_DLPACK = 3,
    DFB_NATIVE_CUDA_ARRAY_INTERFACE = 4,
    DFB_NATIVE_BUFFER_PROTOCOL = 5,
    DFB_NATIVE_ARRAY_INTERFACE = 6,
    DFB_NATIVE_INTERCHANGE = 7,
    DFB_NATIVE_COUNT = 8
} dfb_native;

/* Slots in the module state for convert.c: interned names, cached dtypes. */
#define DFB_STATE_NAMES 40

/* Slots in the module state for probe.c: interned names (probe.h). */
#define DFB_PROBE_NAMES 24
/* One entry of probe.c's cache of protocol names found on static types. */
typedef struct {
    const PyTypeObject *tp; /* a static (never freed) type, or NULL */
    uint32_t known;         /* bit i: probe name i looked up */
    uint32_t present;       /* bit i: probe name i defined along the MRO */
} dfb_probe_entry;
#define DFB_PROBE_CACHE 64
/* Per-module state (multi-phase init; no C globals hold Python objects). */
typedef struct {
    PyTypeObject *buffer_type;  /* dfbuffer.Buffer */
    PyTypeObject *export_type;  /* import.c's buffer-export holder */
    PyObject *native_format;    /* IntEnum class dfbuffer.NativeFormat */
    PyObject *device_type;      /* IntEnum class dfbuffer.DeviceType */
    PyObject *dtype_kind;       /* IntEnum class dfbuffer.DtypeKind */
    PyObject *column_null_type; /* IntEnum class dfbuffer.ColumnNullType */
    PyObject *ma_masked_array;  /* numpy.ma.MaskedArray, imported lazily */
    PyObject *names[DFB_STATE_NAMES];       /* convert.c: interned attribute
                                               names and cached datetime
                                               dtypes (no cycles: no GC) */
    PyObject *probe_names[DFB_PROBE_NAMES]; /* probe.c: interned names and
                                               constant tuples (no GC) */
    dfb_probe_entry probe_cache[DFB_PROBE_CACHE]; /* probe.c: no objects */
    PyObject *categorical_codes; /* type dfbuffer.CategoricalCodes */
    /* ixview.c: the struct sequence types _IxField and _IxChunk */
    PyTypeObject *ixview_field_type;
    PyTypeObject *ixview_chunk_type;
} dfb_state;

extern PyModuleDef dfb_module_def;

/* Returns the state of the module that defined `tp`, or NULL with
   TypeError set when `tp` does not come from this module. */
dfb_state *
dfb_state_from_type(PyTypeObject *tp);

/* Returns the state of module object `m` (never NULL for our module). */
dfb_state *
dfb_state_from_module(PyObject *m);

/* Returns a new reference to member `value` of IntEnum class `cls`, or NULL
   with an exception set. */
PyObject *
dfb_enum_member(PyObject *cls, long value);

/* Stores interned strings of names[0..n) in out[0..n) (new references).
   Returns 0, or -1 with an exception set (the slots filled so far stay for
   the caller's clear function). */
int
dfb_intern_strings(PyObject **out, const char *const *names, int n);

#endif /* DFBUFFER_COMMON_H */
