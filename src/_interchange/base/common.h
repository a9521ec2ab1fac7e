/* dfbuffer: what every C file of the extension shares.
 *
 * Include this first in every file that uses Python or NumPy.  state.c
 * defines DFB_IMPORT_ARRAY before including it (it holds the NumPy API
 * table); every other file shares the table through PY_ARRAY_UNIQUE_SYMBOL.
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

#include "compat.h"

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

/* Interned attribute and method names, made once by module exec
   (dfb_state_names_init, state.c); each name once, whichever files use
   it.  Strings only: no GC. */
typedef struct {
    /* the interchange protocol */
    PyObject *ptr;
    PyObject *bufsize;
    PyObject *dlpack_device; /* "__dlpack_device__" */
    PyObject *size;
    PyObject *offset;
    PyObject *dtype;
    PyObject *describe_null;
    PyObject *num_chunks;
    PyObject *get_chunks;
    PyObject *get_buffers;
    PyObject *describe_categorical;
    PyObject *data;
    PyObject *validity;
    PyObject *offsets;
    PyObject *categories;
    PyObject *dataframe; /* "__dataframe__" */
    PyObject *allow_copy;
    PyObject *column_names;
    PyObject *get_column;
    PyObject *is_dictionary;
    PyObject *null_count;
    PyObject *length;
    PyObject *nulls;
    /* the other protocols (probes) */
    PyObject *arrow_c_array;         /* "__arrow_c_array__" */
    PyObject *arrow_c_stream;        /* "__arrow_c_stream__" */
    PyObject *arrow_c_device_array;  /* "__arrow_c_device_array__" */
    PyObject *arrow_c_device_stream; /* "__arrow_c_device_stream__" */
    PyObject *cuda_array_interface;  /* "__cuda_array_interface__" */
    PyObject *array_interface;       /* "__array_interface__" */
    PyObject *dlpack;                /* "__dlpack__" */
    PyObject *dlpack_c_exchange_api; /* "__dlpack_c_exchange_api__" */
    PyObject *requires_grad;
    PyObject *array_method;       /* "__array__" */
    PyObject *arrow_array_method; /* "__arrow_array__" */
    PyObject *copy;
    PyObject *pyarrow;
    PyObject *Array;
    PyObject *ChunkedArray;
    PyObject *is_conj;
    PyObject *is_neg;
    /* pandas (the fast path) */
    PyObject *pandas;
    PyObject *DataFrame;
    PyObject *RangeIndex;
    PyObject *items;
    PyObject *to_numpy;
    PyObject *iloc;
    PyObject *index;
} dfb_names;

/* Constant tuples for vectorcall, made with the names (no GC). */
typedef struct {
    PyObject *allow_copy_kw;  /* ("allow_copy",) */
    PyObject *max_version_kw; /* ("max_version",) */
    PyObject *copy_kw;        /* ("copy",) */
    PyObject
        *dlpack_version; /* (DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION) */
} dfb_consts;

/* The datetime dtypes the converters give, made once by module exec
   (dfb_convert_state_init, convert.c): M8[s], M8[ms], M8[us], M8[ns],
   m8[s], m8[ms], m8[us], m8[ns], M8[D], in this order. */
#define DFB_N_DATETIME 9
typedef struct {
    PyArray_Descr *datetime[DFB_N_DATETIME];
} dfb_dtypes;

/* dtype.c's memo of the last plain interchange dtype tuple read by
   buffer_to_ndarray (dfb_ix_dtype_plain_memo): the tuple (strong, visited
   by the module's traverse) and the dfb_format fields it parsed to. */
typedef struct {
    PyObject *tuple;
    int type;
    int bits;
    char byteorder;
    dfb_mutex lock; /* guards the fields above (compat.h) */
} dfb_ix_dtype_memo;

/* Per-module state (multi-phase init; no C globals hold Python objects). */
typedef struct {
    PyTypeObject *buffer_type;       /* dfbuffer.Buffer */
    PyTypeObject *export_type;       /* import.c's buffer-export holder */
    PyTypeObject *arrow_holder_type; /* arrow_import.c's array holder */
    PyTypeObject *array_node_type;   /* arrow_passthrough.c's array node */
    PyTypeObject *dlpack_owner_type; /* dlpack.c's imported tensor owner */
    PyObject *native_format;         /* IntEnum class dfbuffer.NativeFormat */
    PyObject *device_type;           /* IntEnum class dfbuffer.DeviceType */
    PyObject *dtype_kind;            /* IntEnum class dfbuffer.DtypeKind */
    PyObject *column_null_type; /* IntEnum class dfbuffer.ColumnNullType */
    PyObject *ma_masked_array;  /* numpy.ma.MaskedArray, imported lazily
                                   (written once, under lazy_lock) */
    dfb_mutex lazy_lock;        /* guards ma_masked_array (compat.h) */
    dfb_names str;              /* interned names (no GC) */
    dfb_consts tup;             /* constant tuples (no GC) */
    dfb_dtypes descr; /* cached dtypes (no GC: they hold no references) */
    PyObject *categorical_codes; /* type dfbuffer.CategoricalCodes */
    PyObject *copy_error; /* exception dfbuffer.CopyError (args.c raises it) */
    /* ixview.c: the struct sequence types _IxField and _IxChunk */
    PyTypeObject *ixview_field_type;
    PyTypeObject *ixview_chunk_type;
    dfb_ix_dtype_memo ix_dtype_memo; /* dtype.c: strong tuple, visited */
    /* arrow_batches.c: the types _ArrowBatch and _ArrowBatchReader */
    PyTypeObject *arrow_batch_type;
    PyTypeObject *arrow_batch_reader_type;
} dfb_state;

#endif /* DFBUFFER_COMMON_H */
