/* dfbuffer: the Arrow C data interface (structs declared from the spec)
 * and the PyCapsule interface, both ways.
 */
#ifndef DFBUFFER_ARROW_H
#define DFBUFFER_ARROW_H

#include "common.h"
#include "convert.h"

/* The Arrow C data and C stream interface structs: declared once, in the
   public C API header (under the spec's standard guards). */
#include "dfbuffer/dfbuffer.h"

/* The Arrow C device data interface (declared from its specification): an
   ArrowArray whose buffers live on a device, and a stream of them.  The
   device type values are DLPack's DLDeviceType values. */
#ifndef ARROW_C_DEVICE_DATA_INTERFACE
#define ARROW_C_DEVICE_DATA_INTERFACE

typedef int32_t ArrowDeviceType;

#define ARROW_DEVICE_CPU 1
#define ARROW_DEVICE_CUDA 2
#define ARROW_DEVICE_CUDA_HOST 3
#define ARROW_DEVICE_OPENCL 4
#define ARROW_DEVICE_VULKAN 7
#define ARROW_DEVICE_METAL 8
#define ARROW_DEVICE_VPI 9
#define ARROW_DEVICE_ROCM 10
#define ARROW_DEVICE_ROCM_HOST 11
#define ARROW_DEVICE_EXT_DEV 12
#define ARROW_DEVICE_CUDA_MANAGED 13
#define ARROW_DEVICE_ONEAPI 14
#define ARROW_DEVICE_WEBGPU 15
#define ARROW_DEVICE_HEXAGON 16

struct ArrowDeviceArray {
    struct ArrowArray array; /* its release releases everything, the
                                sync_event included */
    int64_t device_id;
    ArrowDeviceType device_type;
    void *sync_event;    /* NULL, or an event to wait on before any access */
    int64_t reserved[3]; /* zero */
};

#endif /* ARROW_C_DEVICE_DATA_INTERFACE */

#ifndef ARROW_C_DEVICE_STREAM_INTERFACE
#define ARROW_C_DEVICE_STREAM_INTERFACE

struct ArrowDeviceArrayStream {
    ArrowDeviceType device_type; /* of every array it gives */
    int (*get_schema)(struct ArrowDeviceArrayStream *,
                      struct ArrowSchema *out);
    int (*get_next)(struct ArrowDeviceArrayStream *,
                    struct ArrowDeviceArray *out);
    const char *(*get_last_error)(struct ArrowDeviceArrayStream *);
    void (*release)(struct ArrowDeviceArrayStream *);
    void *private_data;
};

#endif /* ARROW_C_DEVICE_STREAM_INTERFACE */

/* Returns 1 if `obj` speaks the Arrow PyCapsule interface
   (__arrow_c_array__ or __arrow_c_stream__), 0 if not, -1 on error. */
int
dfb_arrow_is_producer(PyObject *obj);

/* column_to_ndarray for an Arrow producer of one column (Array,
   ChunkedArray, Series, ...).  Returns a new reference or NULL with an
   exception set (NotImplementedError naming the format for unsupported
   types). */
PyObject *
dfb_arrow_column_to_ndarray(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                            int allow_copy);

/* from_dataframe for an Arrow producer of a table (RecordBatch, Table,
   DataFrame, stream): a dict name -> array.  Returns a new reference or
   NULL with an exception set. */
PyObject *
dfb_arrow_from_dataframe(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                         int allow_copy);

/* dfb_arrow_from_dataframe converting only the columns `sel` selects
   (NULL: all), in the order asked for (KeyError for an unknown name).
   With opts->structs_flatten, sel->names becomes the flattened names
   selected (a struct's name: its leaves), for dfb_colsel_finish. */
PyObject *
dfb_arrow_from_dataframe_cols(dfb_state *st, PyObject *obj,
                              const dfb_opts *opts, int allow_copy,
                              dfb_colsel *sel);

/* Buffer.from_object fallback for objects with __arrow_c_array__ (or a
   one-chunk __arrow_c_stream__): returns a new read-only Buffer over the
   values of a 1-D fixed-width primitive Arrow array (elements [offset,
   offset + length); nulls, if any, are not masked), whose owner is the
   holder of the imported ArrowArray ("dfbuffer.arrow_array" capsule).
   `dtype` (NULL/None: the Arrow type's) may override the element type at
   equal itemsize.  NULL with NotImplementedError for other layouts
   (strings, bit-packed bools, dictionaries, nested), TypeError /
   ValueError for bad producers. */
PyObject *
dfb_arrow_buffer_from_object(dfb_state *st, PyObject *obj, PyObject *dtype);

/* Module-level functions of arrow_functions.c (the test-only
   _arrow_to_ndarray, _arrow_from_dataframe, _arrow_buffer), added by module
   init. */
extern PyMethodDef dfb_arrow_methods[];

/* Module-level function of arrow_interchange.c (_arrow_import, the private
   helper of dfbuffer.to_interchange), added by module init. */
extern PyMethodDef dfb_arrow_interchange_methods[];

/* arrow_table_export.c: _arrow_table_schema and _arrow_table_stream, the
   Arrow structs of dfbuffer.to_arrow. */
extern PyMethodDef dfb_arrow_table_export_methods[];

/* capi.c: converts an ArrowArray + ArrowSchema a C caller moves in (both
   marked released in the caller's structs on return, success or error;
   each release callback runs exactly once, now or when the last array
   viewing the memory goes): one column to an ndarray (as_dict 0; a
   struct array is one column of dicts, as column_to_ndarray), or a
   record batch / column to a dict name -> ndarray (as_dict 1).  Returns a
   new reference or NULL with ValueError (released or malformed input),
   NotImplementedError or RuntimeError set. */
PyObject *
dfb_arrow_from_c(dfb_state *st, struct ArrowArray *array,
                 struct ArrowSchema *schema, int as_dict, const dfb_opts *opts,
                 int allow_copy);

/* capi.c: from_dataframe on an ArrowArrayStream a C caller moves in (marked
   released in the caller's struct on return; released by dfbuffer once,
   after its last chunk was read): a new dict name -> ndarray, chunks
   concatenated, or NULL with an exception set. */
PyObject *
dfb_arrow_stream_from_c(dfb_state *st, struct ArrowArrayStream *stream,
                        const dfb_opts *opts, int allow_copy);

#endif /* DFBUFFER_ARROW_H */
