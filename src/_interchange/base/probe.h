/* dfbuffer: cheap protocol probes (type-level look-ups of special methods,
 * names interned once in the module state).  See docs/design.md, "Probes and
 * fast paths".
 */
#ifndef DFBUFFER_PROBE_H
#define DFBUFFER_PROBE_H

#include "common.h"

/* Pure-C kernels (bit unpacking, NaN scans, categorical decoding, mask
   concatenation) release the GIL for inputs of at least this many
   elements, so other Python threads run meanwhile. */
#define DFB_NOGIL_MIN 65536

/* Runs statement `stmt` (which must not touch any Python object) without
   the GIL when `n` >= DFB_NOGIL_MIN and this thread holds the GIL. */
#define DFB_NOGIL_IF(n, stmt)                             \
    do {                                                  \
        if ((n) >= DFB_NOGIL_MIN && PyGILState_Check()) { \
            Py_BEGIN_ALLOW_THREADS;                       \
            stmt;                                         \
            Py_END_ALLOW_THREADS;                         \
        }                                                 \
        else {                                            \
            stmt;                                         \
        }                                                 \
    } while (0)

/* Probe ids: each names a field of dfb_state.str (dfb_probe_name) and a
   bit of the per-type probe cache.  The last two are not probes: their
   constants are st->tup.max_version_kw and st->tup.dlpack_version. */
enum {
    DFB_PN_ITEMS = 0,
    DFB_PN_DTYPE,
    DFB_PN_TO_NUMPY,
    DFB_PN_ILOC,
    DFB_PN_INDEX,
    DFB_PN_ARROW_ARRAY,  /* "__arrow_c_array__" */
    DFB_PN_ARROW_STREAM, /* "__arrow_c_stream__" */
    DFB_PN_GET_BUFFERS,
    DFB_PN_CAI, /* "__cuda_array_interface__" */
    DFB_PN_DLPACK,
    DFB_PN_DLPACK_DEVICE,
    DFB_PN_IS_CONJ,
    DFB_PN_IS_NEG,
    DFB_PN_PANDAS,
    DFB_PN_DATAFRAME,
    DFB_PN_RANGE_INDEX,
    DFB_PN_PTR,
    DFB_PN_BUFSIZE,
    DFB_PN_ARRAY_INTERFACE,     /* "__array_interface__" */
    DFB_PN_ARROW_DEVICE_ARRAY,  /* "__arrow_c_device_array__" */
    DFB_PN_ARROW_DEVICE_STREAM, /* "__arrow_c_device_stream__" */
    DFB_PN_ARROW_ARRAY_METHOD,  /* "__arrow_array__" (pyarrow's protocol) */
    DFB_PN_ARRAY_METHOD,        /* "__array__" */
    DFB_PN_DLPACK_EXCHANGE,     /* "__dlpack_c_exchange_api__" */
    DFB_PN_MAX_VERSION_KW,      /* the tuple ("max_version",) */
    DFB_PN_VERSION,             /* the tuple (DLPACK_MAJOR, DLPACK_MINOR) */
    DFB_PN_COUNT
};

/* The bit of probe id `which` in a probe mask (dfb_probe_mask). */
#define DFB_PB(which) ((uint32_t)1 << (which))
/* The two host Arrow PyCapsule names, __arrow_c_array__ and
   __arrow_c_stream__. */
#define DFB_PB_ARROW_HOST \
    (DFB_PB(DFB_PN_ARROW_ARRAY) | DFB_PB(DFB_PN_ARROW_STREAM))

/* Returns the interned name (borrowed, in st->str) of probe id `which`
   (a DFB_PN_* below DFB_PN_MAX_VERSION_KW).  Cannot fail. */
PyObject *
dfb_probe_name(dfb_state *st, int which);

/* Looks `name` up on the type of `obj` along its MRO, as CPython looks up
   special methods: the instance, its __getattr__ and the metatype are not
   consulted and no descriptor is called.  Returns 1 with a new reference
   in *out, 0 with *out = NULL when absent, or -1 with an exception set. */
int
dfb_type_lookup(PyObject *obj, PyObject *name, PyObject **out);

/* Returns 1 if the type of `obj` defines `name` (dfb_type_lookup), 0 if
   not, -1 with an exception set. */
int
dfb_type_has(PyObject *obj, PyObject *name);

/* A protocol probe: 1 if the type of `obj` defines `name`, or, for an
   object whose type has no custom attribute hook (tp_getattro is the
   generic one, so no __getattr__ can run), its instance __dict__ holds it;
   0 if neither, -1 with an exception set.  Never calls a descriptor or a
   __getattr__. */
int
dfb_probe_has(PyObject *obj, PyObject *name);

/* dfb_probe_has for the interned name of probe id `which` (a DFB_PN_*
   index), answered from a per-thread cache for static types (their MRO and
   dicts cannot change from Python, and they are never freed; a heap type's
   static bases too), and, for a heap type, inside an open scope on `obj`
   (below) from the scope's record, so that one conversion reads each probe
   once.  Same returns. */
int
dfb_probe(dfb_state *st, PyObject *obj, int which);

/* dfb_probe for each probe id whose bit (DFB_PB) is set in `want`, in
   one walk of the type's MRO (each dict read once, the instance dict
   once): returns the bits of the names found (>= 0), or -1 with an
   exception set.  Probing names together answers exactly what probing
   them one by one would (a probe has no effect but the record). */
int
dfb_probe_mask(dfb_state *st, PyObject *obj, uint32_t want);

/* Opens the probe scope of one conversion of `obj` (which the caller holds
   until the scope is closed): until dfb_probe_scope_close(st, token), each
   dfb_probe on `obj` is answered once and then from the record.  Scopes
   are per thread; opening replaces the thread's open scope (a nested
   conversion): the outer one then just probes again.  Returns
   the token.  Cannot fail. */
uint64_t
dfb_probe_scope_open(dfb_state *st, PyObject *obj);

/* Closes the scope `token` if it is still the open one (else nothing).
   Must be called before the caller of dfb_probe_scope_open returns.
   Cannot fail. */
void
dfb_probe_scope_close(dfb_state *st, uint64_t token);

/* Fetches the protocol attribute of probe id `which` of `obj` if dfb_probe
   finds its name: 1 with a new reference in *out, 0 with *out = NULL when
   absent or when the attribute raised AttributeError (a property refusing,
   like torch's __cuda_array_interface__ on a CPU tensor), -1 with an
   exception set. */
int
dfb_probe_get(dfb_state *st, PyObject *obj, int which, PyObject **out);

/* Calls the protocol method of probe id `which` of `obj` without
   arguments, as CPython calls special methods: a plain Python function
   found along the MRO of a heap type is called with `obj` directly (no
   attribute hook such as a Python __getattr__, no bound method); anything
   else through obj.<name>().  Returns the new result, or NULL with an
   exception set. */
PyObject *
dfb_probe_call(dfb_state *st, PyObject *obj, int which);

/* dfb_probe_has with a C string name (interned on each call; for callers
   without the module state).  Same returns. */
int
dfb_probe_has_str(PyObject *obj, const char *name);

/* Returns 1 if `obj` speaks __arrow_c_array__ or __arrow_c_stream__, or
   else __arrow_c_device_array__ or __arrow_c_device_stream__ (dfb_probe),
   0 if none, -1 with an exception set. */
int
dfb_type_is_arrow_producer(dfb_state *st, PyObject *obj);

#endif /* DFBUFFER_PROBE_H */
