/* dfbuffer._interchange: module init (multi-phase): assembles the types,
 * the method tables and the state of every other file, and adds the public
 * IntEnums.
 *
 * Nothing else depends on this file; the module definition and the state
 * accessors every file needs live in state.c.
 */
#include "common.h"
#include "state.h"
#include "api.h"
#include "kernels.h"
#include "outward.h"
#include "arrow.h"
#include "exchange.h"
#include "matrix.h"
#include "probe.h"
#include "pandas.h"
#include "ops.h"
#include "readers.h"

typedef struct {
    const char *name;
    long value;
} enum_item;

static const enum_item native_items[] = {
    {"RAW", DFB_NATIVE_RAW},
    {"NUMPY", DFB_NATIVE_NUMPY},
    {"ARROW", DFB_NATIVE_ARROW},
    {"DLPACK", DFB_NATIVE_DLPACK},
    {"CUDA_ARRAY_INTERFACE", DFB_NATIVE_CUDA_ARRAY_INTERFACE},
    {"BUFFER_PROTOCOL", DFB_NATIVE_BUFFER_PROTOCOL},
    {"ARRAY_INTERFACE", DFB_NATIVE_ARRAY_INTERFACE},
    {"INTERCHANGE", DFB_NATIVE_INTERCHANGE},
    {NULL, 0},
};

static const enum_item device_items[] = {
    {"CPU", kDLCPU},
    {"CUDA", kDLCUDA},
    {"CUDA_HOST", kDLCUDAHost},
    {"CPU_PINNED", kDLCUDAHost}, /* the interchange protocol's name */
    {"OPENCL", kDLOpenCL},
    {"VULKAN", kDLVulkan},
    {"METAL", kDLMetal},
    {"VPI", kDLVPI},
    {"ROCM", kDLROCM},
    {"ROCM_HOST", kDLROCMHost},
    {"EXT_DEV", kDLExtDev},
    {"CUDA_MANAGED", kDLCUDAManaged},
    {"ONE_API", kDLOneAPI},
    {"WEBGPU", kDLWebGPU},
    {"HEXAGON", kDLHexagon},
    {"MAIA", kDLMAIA},
    {"TRN", kDLTrn},
    {NULL, 0},
};

static const enum_item dtype_kind_items[] = {
    {"INT", 0},     {"UINT", 1},      {"FLOAT", 2},        {"BOOL", 20},
    {"STRING", 21}, {"DATETIME", 22}, {"CATEGORICAL", 23}, {NULL, 0},
};

static const enum_item null_type_items[] = {
    {"NON_NULLABLE", 0}, {"USE_NAN", 1},      {"USE_SENTINEL", 2},
    {"USE_BITMASK", 3},  {"USE_BYTEMASK", 4}, {NULL, 0},
};

/* Returns a new IntEnum class named `name` in module dfbuffer, or NULL with
   an exception set. */
static PyObject *
make_int_enum(PyObject *intenum, const char *name, const enum_item *items,
              const char *doc)
{
    PyObject *members = PyList_New(0);
    if (members == NULL) {
        return NULL;
    }
    for (const enum_item *it = items; it->name != NULL; it++) {
        PyObject *pair = Py_BuildValue("(sl)", it->name, it->value);
        if (pair == NULL || PyList_Append(members, pair) < 0) {
            Py_XDECREF(pair);
            Py_DECREF(members);
            return NULL;
        }
        Py_DECREF(pair);
    }
    PyObject *args = Py_BuildValue("(sN)", name, members);
    if (args == NULL) {
        return NULL;
    }
    PyObject *kwargs = Py_BuildValue("{ss}", "module", "dfbuffer");
    if (kwargs == NULL) {
        Py_DECREF(args);
        return NULL;
    }
    PyObject *cls = PyObject_Call(intenum, args, kwargs);
    Py_DECREF(args);
    Py_DECREF(kwargs);
    if (cls == NULL) {
        return NULL;
    }
    PyObject *d = PyUnicode_FromString(doc);
    if (d == NULL || PyObject_SetAttrString(cls, "__doc__", d) < 0) {
        Py_XDECREF(d);
        Py_DECREF(cls);
        return NULL;
    }
    Py_DECREF(d);
    return cls;
}

/* Adds the IntEnums to module `m` and its state.  Returns 0 or -1. */
static int
add_enums(PyObject *m, dfb_state *st)
{
    PyObject *intenum = dfb_import_attr("enum", "IntEnum");
    if (intenum == NULL) {
        return -1;
    }
    struct {
        const char *name;
        const enum_item *items;
        PyObject **slot;
        const char *doc;
    } enums[] = {
        {"NativeFormat", native_items, &st->native_format,
         "The protocol through which a Buffer's memory reached dfbuffer.\n\n"
         "An IntEnum: Buffer.native gives the member.\n"
         "\n"
         "Examples\n"
         "--------\n"
         ">>> import numpy as np\n"
         ">>> import dfbuffer\n"
         ">>> dfbuffer.Buffer.from_object(np.zeros(2)).native\n"
         "<NativeFormat.NUMPY: 1>"},
        {"DeviceType", device_items, &st->device_type,
         "DLPack device types (DLDeviceType values).\n\n"
         "An IntEnum; a member compares equal to its int, as DLPack's\n"
         "__dlpack_device__() gives it.\n"
         "\n"
         "Examples\n"
         "--------\n"
         ">>> import numpy as np\n"
         ">>> import dfbuffer\n"
         ">>> dfbuffer.Buffer.from_object(np.zeros(2)).__dlpack_device__()\n"
         "(<DeviceType.CPU: 1>, 0)\n"
         ">>> dfbuffer.DeviceType.CUDA == 2\n"
         "True"},
        {"DtypeKind", dtype_kind_items, &st->dtype_kind,
         "The DataFrame interchange protocol's DtypeKind.\n\n"
         "An IntEnum of the kinds in the first item of an interchange dtype\n"
         "tuple (kind, bit_width, format, endianness).\n"
         "\n"
         "Examples\n"
         "--------\n"
         ">>> import dfbuffer\n"
         ">>> dfbuffer.DtypeKind(21)\n"
         "<DtypeKind.STRING: 21>"},
        {"ColumnNullType", null_type_items, &st->column_null_type,
         "The DataFrame interchange protocol's ColumnNullType.\n\n"
         "An IntEnum of the kinds in the first item of describe_null.\n"
         "\n"
         "Examples\n"
         "--------\n"
         ">>> import pandas as pd\n"
         ">>> import dfbuffer\n"
         ">>> col = pd.DataFrame({\"x\": "
         "[1.5]}).__dataframe__().get_column(0)\n"
         ">>> dfbuffer.ColumnNullType(col.describe_null[0])\n"
         "<ColumnNullType.USE_NAN: 1>"},
    };
    for (size_t i = 0; i < sizeof(enums) / sizeof(enums[0]); i++) {
        PyObject *cls = make_int_enum(intenum, enums[i].name, enums[i].items,
                                      enums[i].doc);
        if (cls == NULL) {
            Py_DECREF(intenum);
            return -1;
        }
        *enums[i].slot = Py_NewRef(cls);
        if (PyModule_AddObject(m, enums[i].name, cls) < 0) {
            Py_DECREF(cls);
            Py_DECREF(intenum);
            return -1;
        }
    }
    Py_DECREF(intenum);
    return 0;
}

PyDoc_STRVAR(
    copy_error_doc,
    "A copy is needed, but copy=False (or allow_copy=False) forbids it.\n\n"
    "Raised by every function that takes copy= or allow_copy= where the\n"
    "result cannot be had without a copy; the message names the keyword\n"
    "given.  A ValueError, as NumPy 2 raises for\n"
    "numpy.asarray(x, copy=False), and a RuntimeError, as dfbuffer raised\n"
    "before.\n"
    "\n"
    "Parameters\n"
    "----------\n"
    "message : str\n"
    "    What needs the copy and the keyword that forbids it.\n"
    "\n"
    "Examples\n"
    "--------\n"
    ">>> import pyarrow as pa\n"
    ">>> import dfbuffer\n"
    ">>> try:\n"
    "...     dfbuffer.from_dataframe(pa.table({\"b\": [True]}), copy=False)\n"
    "... except dfbuffer.CopyError as e:\n"
    "...     print(e)\n"
    "column 'b': converting bit-packed booleans needs a copy, which "
    "copy=False forbids");

/* Creates dfbuffer.CopyError (a subclass of ValueError and RuntimeError)
   into st->copy_error and module `m`.  Returns 0, or -1 with an exception
   set. */
static int
add_copy_error(PyObject *m, dfb_state *st)
{
    PyObject *bases = PyTuple_Pack(2, PyExc_ValueError, PyExc_RuntimeError);
    if (bases == NULL) {
        return -1;
    }
    st->copy_error = PyErr_NewExceptionWithDoc("dfbuffer.CopyError",
                                               copy_error_doc, bases, NULL);
    Py_DECREF(bases);
    if (st->copy_error == NULL) {
        return -1;
    }
    return PyModule_AddObjectRef(m, "CopyError", st->copy_error);
}

/* Py_mod_exec slot.  Returns 0, or -1 with an exception set. */
static int
module_exec(PyObject *m)
{
    dfb_state *st = dfb_state_from_module(m);
    /* NumPy supports only the main interpreter, and so does dfbuffer: a
       legacy subinterpreter would load this module and then fail later in
       NumPy.  (Isolated ones are refused by Py_mod_multiple_interpreters.) */
    if (PyInterpreterState_Get() != PyInterpreterState_Main()) {
        PyErr_SetString(PyExc_ImportError,
                        "dfbuffer._interchange can only be loaded in the "
                        "main interpreter, not in a subinterpreter (NumPy "
                        "does not support subinterpreters)");
        return -1;
    }
    if (dfb_numpy_import() < 0) {
        return -1;
    }
    if (dfb_exit_watch_init(m) < 0) {
        return -1;
    }
    st->buffer_type =
        (PyTypeObject *)PyType_FromModuleAndSpec(m, &dfb_buffer_spec, NULL);
    if (st->buffer_type == NULL) {
        return -1;
    }
    /* DLPack 1.3's C exchange API, a capsule over a static const table */
    if (dfb_dlpack_exchange_attach(st->buffer_type) < 0) {
        return -1;
    }
    if (PyModule_AddType(m, st->buffer_type) < 0) {
        return -1;
    }
    st->export_type = (PyTypeObject *)PyType_FromModuleAndSpec(
        m, &dfb_export_holder_spec, NULL);
    if (st->export_type == NULL) {
        return -1;
    }
    /* the GC-tracked holders of imported Arrow arrays, of their column
       nodes and of imported DLPack tensors */
    st->arrow_holder_type = (PyTypeObject *)PyType_FromModuleAndSpec(
        m, &dfb_arrow_holder_spec, NULL);
    st->array_node_type = st->arrow_holder_type == NULL
                              ? NULL
                              : (PyTypeObject *)PyType_FromModuleAndSpec(
                                    m, &dfb_array_node_spec, NULL);
    st->dlpack_owner_type = st->array_node_type == NULL
                                ? NULL
                                : (PyTypeObject *)PyType_FromModuleAndSpec(
                                      m, &dfb_dlpack_owner_spec, NULL);
    if (st->dlpack_owner_type == NULL) {
        return -1;
    }
    if (add_enums(m, st) < 0 || add_copy_error(m, st) < 0) {
        return -1;
    }
    if (dfb_state_names_init(st) < 0 || dfb_convert_state_init(st) < 0) {
        return -1;
    }
    if (PyModule_AddFunctions(m, dfb_convert_methods) < 0 ||
        PyModule_AddFunctions(m, dfb_arrow_methods) < 0 ||
        PyModule_AddFunctions(m, dfb_arrow_interchange_methods) < 0 ||
        PyModule_AddFunctions(m, dfb_arrow_table_export_methods) < 0 ||
        PyModule_AddFunctions(m, dfb_export_methods) < 0 ||
        PyModule_AddFunctions(m, dfb_matrix_methods) < 0 ||
        PyModule_AddFunctions(m, dfb_schema_methods) < 0 ||
        PyModule_AddFunctions(m, dfb_pandas_methods) < 0 ||
        PyModule_AddFunctions(m, dfb_type_info_methods) < 0 ||
        PyModule_AddFunctions(m, dfb_protocol_methods) < 0 ||
        PyModule_AddFunctions(m, dfb_pandas_frame_methods) < 0) {
        return -1;
    }
    if (dfb_categorical_state_init(m, st) < 0) {
        return -1;
    }
    if (dfb_ixview_state_init(m, st) < 0) {
        return -1;
    }
    if (dfb_arrow_batches_state_init(m, st) < 0) {
        return -1;
    }
    if (dfb_frame_op_init(m) < 0) {
        return -1;
    }
    if (PyModule_AddIntConstant(m, "MAXDIM", DFB_MAXDIM) < 0 ||
        PyModule_AddIntConstant(m, "DLPACK_MAJOR_VERSION",
                                DLPACK_MAJOR_VERSION) < 0 ||
        PyModule_AddIntConstant(m, "DLPACK_MINOR_VERSION",
                                DLPACK_MINOR_VERSION) < 0) {
        return -1;
    }
    if (dfb_capi_add(m, st) < 0) {
        return -1;
    }
    return 0;
}

static int
module_traverse(PyObject *m, visitproc visit, void *arg)
{
    dfb_state *st = dfb_state_from_module(m);
    Py_VISIT(st->buffer_type);
    Py_VISIT(st->export_type);
    Py_VISIT(st->arrow_holder_type);
    Py_VISIT(st->array_node_type);
    Py_VISIT(st->dlpack_owner_type);
    Py_VISIT(st->native_format);
    Py_VISIT(st->device_type);
    Py_VISIT(st->dtype_kind);
    Py_VISIT(st->column_null_type);
    Py_VISIT(st->ma_masked_array);
    Py_VISIT(st->categorical_codes);
    Py_VISIT(st->copy_error);
    Py_VISIT(st->ixview_field_type);
    Py_VISIT(st->ixview_chunk_type);
    Py_VISIT(st->ix_dtype_memo.tuple);
    Py_VISIT(st->arrow_batch_type);
    Py_VISIT(st->arrow_batch_reader_type);
    return 0;
}

static int
module_clear(PyObject *m)
{
    dfb_state *st = dfb_state_from_module(m);
    Py_CLEAR(st->buffer_type);
    Py_CLEAR(st->export_type);
    Py_CLEAR(st->arrow_holder_type);
    Py_CLEAR(st->array_node_type);
    Py_CLEAR(st->dlpack_owner_type);
    Py_CLEAR(st->native_format);
    Py_CLEAR(st->device_type);
    Py_CLEAR(st->dtype_kind);
    Py_CLEAR(st->column_null_type);
    Py_CLEAR(st->ma_masked_array);
    Py_CLEAR(st->categorical_codes);
    Py_CLEAR(st->copy_error);
    dfb_state_names_clear(st);
    Py_CLEAR(st->ixview_field_type);
    Py_CLEAR(st->ixview_chunk_type);
    dfb_convert_state_clear(st);
    Py_CLEAR(st->ix_dtype_memo.tuple);
    Py_CLEAR(st->arrow_batch_type);
    Py_CLEAR(st->arrow_batch_reader_type);
    return 0;
}

static void
module_free(void *m)
{
    module_clear((PyObject *)m);
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
#if PY_VERSION_HEX >= 0x030C0000
    /* NumPy itself cannot be loaded in several interpreters. */
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
#ifdef Py_mod_gil
    /* Safe without the GIL (docs/design.md, rule 6): a free-threaded
       interpreter keeps the GIL off when it imports us. */
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

PyMODINIT_FUNC
PyInit__interchange(void)
{
    /* state.c defines the module definition (every file finds the state
       through it); what it runs, which names every other file, is filled
       in here, before the first use. */
    dfb_module_def.m_slots = module_slots;
    dfb_module_def.m_traverse = module_traverse;
    dfb_module_def.m_clear = module_clear;
    dfb_module_def.m_free = module_free;
    return PyModuleDef_Init(&dfb_module_def);
}
