/* dfbuffer: reading an Arrow schema without its data.
 *
 * _arrow_schema(obj) describes the schema of an Arrow PyCapsule producer
 * (__arrow_c_schema__, else the schema of __arrow_c_stream__, else the
 * schema capsule of __arrow_c_array__) as Python dicts, for
 * dfbuffer.schema.  dfb_arrow_index_columns reads pandas' "pandas" schema
 * metadata, which marks the columns that hold a pandas index.
 */
#include "common.h"
#include "args.h"
#include "model.h"
#include "arrow.h"
#include "mem.h"
#include "types.h"

#include <string.h>

/* Nesting depth beyond which a schema is refused (a cycle or a bomb). */
#define MAX_SCHEMA_DEPTH 64

/* Returns a new dict str -> str of the Arrow metadata `md` (NULL: an empty
   dict; undecodable bytes kept through surrogateescape), or NULL with an
   exception set (ValueError for a negative count or length). */
static PyObject *
metadata_dict(const char *md)
{
    PyObject *d = PyDict_New();
    int32_t n;
    const char *p;
    if (d == NULL) {
        return NULL;
    }
    if (dfb_metadata_first(md, &n, &p) < 0) {
        goto malformed;
    }
    for (int32_t i = 0; i < n; i++) {
        dfb_metadata_entry e;
        if (dfb_metadata_next(md, &p, &e) < 0) {
            goto malformed;
        }
        PyObject *k =
            PyUnicode_DecodeUTF8(e.key, e.key_len, "surrogateescape");
        PyObject *v =
            k ? PyUnicode_DecodeUTF8(e.value, e.value_len, "surrogateescape")
              : NULL;
        int r = v ? PyDict_SetItem(d, k, v) : -1;
        Py_XDECREF(k);
        Py_XDECREF(v);
        if (r < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return d;
malformed:
    Py_DECREF(d);
    PyErr_SetString(PyExc_ValueError,
                    "Arrow metadata with a negative count or length, or "
                    "one beyond 2**31 - 1 bytes");
    return NULL;
}

/* Returns the end of the JSON string starting at the quote `p` (one past
   its closing quote), or NULL if it does not end before `end`. */
static const char *
skip_json_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\') {
            p++;
        }
        else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* Returns a new reference to the parsed value of the top-level key
   "index_columns" of the JSON object `js` (`len` bytes), Py_None when there
   is none, or NULL with an exception set.  Only that value is handed to
   json.loads: pandas' metadata describes every column and can be large. */
static PyObject *
index_columns_value(const char *js, int32_t len)
{
    static const char key[] = "\"index_columns\"";
    const size_t klen = sizeof(key) - 1;
    const char *p = js, *end = js + len;
    int depth = 0;
    while (p < end) {
        char c = *p;
        if (c == '"') {
            const char *q = skip_json_string(p, end);
            if (q == NULL) {
                break;
            }
            if (depth == 1 && (size_t)(q - p) == klen &&
                dfb_memcmp(p, key, klen) == 0) {
                while (q < end &&
                       (*q == ' ' || *q == '\n' || *q == '\t' || *q == '\r')) {
                    q++;
                }
                if (q < end && *q == ':') {
                    /* the value: up to the matching close at depth 1 */
                    const char *v = q + 1, *e = v;
                    int d = 0;
                    while (e < end) {
                        if (*e == '"') {
                            e = skip_json_string(e, end);
                            if (e == NULL) {
                                break;
                            }
                            continue;
                        }
                        if (*e == '[' || *e == '{') {
                            d++;
                        }
                        else if (*e == ']' || *e == '}') {
                            if (d == 0) {
                                break;
                            }
                            if (--d == 0) {
                                e++;
                                break;
                            }
                        }
                        else if (*e == ',' && d == 0) {
                            break;
                        }
                        e++;
                    }
                    if (e == NULL) {
                        break;
                    }
                    PyObject *json = PyImport_ImportModule("json");
                    if (json == NULL) {
                        return NULL;
                    }
                    PyObject *r = PyObject_CallMethod(json, "loads", "s#", v,
                                                      (Py_ssize_t)(e - v));
                    Py_DECREF(json);
                    return r;
                }
            }
            p = q;
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
        }
        else if (c == '}' || c == ']') {
            depth--;
        }
        p++;
    }
    Py_RETURN_NONE;
}

/* Returns the parsed "index_columns" of the "pandas" metadata of `s` (new
   reference; Py_None when there is none), or NULL with an exception set
   (MemoryError only: unreadable metadata gives Py_None). */
static PyObject *
pandas_index_columns(const struct ArrowSchema *s)
{
    dfb_metadata_entry e;
    if (dfb_metadata_find(s->metadata, "pandas", 6, &e) != 1) {
        Py_RETURN_NONE;
    }
    PyObject *r = index_columns_value(e.value, e.value_len);
    if (r == NULL) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError)) {
            return NULL;
        }
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return r;
}

/* Marks in `skip` the children of `s` named in `meta` (pandas'
   index_columns list; other entries are ignored).  Returns the number
   marked, or -1 with an exception set. */
static int
mark_index_columns(const struct ArrowSchema *s, PyObject *meta, uint8_t *skip)
{
    int marked = 0;
    if (!PyList_Check(meta)) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(meta); i++) {
        PyObject *name = PyList_GET_ITEM(meta, i);
        if (!PyUnicode_Check(name)) {
            continue; /* {"kind": "range", ...}: not stored as a column */
        }
        const char *u = PyUnicode_AsUTF8(name);
        if (u == NULL) {
            return -1;
        }
        /* the last unmarked child of that name: pyarrow appends the index
           columns after the data columns */
        for (int64_t c = s->n_children - 1; c >= 0; c--) {
            const char *cn = s->children[c]->name;
            if (!skip[c] && cn != NULL && strcmp(cn, u) == 0) {
                skip[c] = 1;
                marked++;
                break;
            }
        }
    }
    return marked;
}

int
dfb_arrow_index_columns(const struct ArrowSchema *s, uint8_t *skip)
{
    if (s->metadata == NULL || s->n_children <= 0) {
        return 0;
    }
    PyObject *meta = pandas_index_columns(s);
    if (meta == NULL) {
        return -1;
    }
    int r = mark_index_columns(s, meta, skip);
    Py_DECREF(meta);
    return r;
}

/* The keys of the dicts describe_schema makes, made once per
   _arrow_schema call (interned strs; the caller owns them). */
enum {
    K_NAME,
    K_FORMAT,
    K_NULLABLE,
    K_ORDERED,
    K_METADATA,
    K_DICT,
    K_CHILDREN,
    K_COUNT
};
static const char *const key_names[K_COUNT] = {
    "name",     "format",     "nullable", "dictionary_ordered",
    "metadata", "dictionary", "children"};

/* Returns a new dict describing schema node `s` (name, format, nullable,
   dictionary_ordered, metadata, dictionary, children; `keys` its keys), or
   NULL with an exception set. */
static PyObject *
describe_schema(const struct ArrowSchema *s, int depth, PyObject *const *keys)
{
    if (depth > MAX_SCHEMA_DEPTH) {
        PyErr_SetString(PyExc_ValueError, "Arrow schema nested too deeply");
        return NULL;
    }
    if (s == NULL || s->format == NULL) {
        PyErr_SetString(PyExc_ValueError, "Arrow schema without a format");
        return NULL;
    }
    if (s->n_children < 0 || (s->n_children > 0 && s->children == NULL)) {
        PyErr_SetString(PyExc_ValueError, "Arrow schema with bad children");
        return NULL;
    }
    PyObject *dict = Py_None, *children = NULL, *md = NULL, *res = NULL;
    Py_INCREF(dict);
    if (s->dictionary != NULL) {
        Py_DECREF(dict);
        dict = describe_schema(s->dictionary, depth + 1, keys);
        if (dict == NULL) {
            return NULL;
        }
    }
    children = PyList_New(s->n_children);
    if (children == NULL) {
        goto done;
    }
    for (int64_t c = 0; c < s->n_children; c++) {
        PyObject *ch = describe_schema(s->children[c], depth + 1, keys);
        if (ch == NULL) {
            goto done;
        }
        PyList_SET_ITEM(children, c, ch);
    }
    md = metadata_dict(s->metadata);
    if (md == NULL) {
        goto done;
    }
    PyObject *vals[K_COUNT] = {NULL};
    vals[K_NAME] =
        s->name ? PyUnicode_DecodeUTF8(s->name, (Py_ssize_t)strlen(s->name),
                                       "surrogateescape")
                : Py_NewRef(Py_None);
    vals[K_FORMAT] = PyUnicode_FromString(s->format);
    if (vals[K_NAME] == NULL || vals[K_FORMAT] == NULL) {
        Py_XDECREF(vals[K_NAME]);
        Py_XDECREF(vals[K_FORMAT]);
        goto done;
    }
    vals[K_NULLABLE] = (s->flags & ARROW_FLAG_NULLABLE) ? Py_True : Py_False;
    vals[K_ORDERED] =
        (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) ? Py_True : Py_False;
    vals[K_METADATA] = md;
    vals[K_DICT] = dict;
    vals[K_CHILDREN] = children;
    res = PyDict_New();
    for (int k = 0; res != NULL && k < K_COUNT; k++) {
        if (PyDict_SetItem(res, keys[k], vals[k]) < 0) {
            Py_CLEAR(res);
        }
    }
    Py_DECREF(vals[K_NAME]);
    Py_DECREF(vals[K_FORMAT]);
done:
    Py_XDECREF(md);
    Py_XDECREF(children);
    Py_DECREF(dict);
    return res;
}

/* Calls method `name` of `obj` without arguments; NULL without an
   exception when `obj` has no such attribute.  New reference. */
static PyObject *
call_if_present(PyObject *obj, const char *name)
{
    PyObject *m = PyObject_GetAttrString(obj, name);
    if (m == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
        }
        return NULL;
    }
    PyObject *r = PyObject_CallNoArgs(m);
    Py_DECREF(m);
    return r;
}

/* Returns the schema pointer of capsule `cap` named `name`, or NULL with
   TypeError / ValueError set. */
static void *
capsule_ptr(PyObject *cap, const char *name)
{
    if (!PyCapsule_IsValid(cap, name)) {
        PyErr_Format(PyExc_TypeError, "expected a PyCapsule named '%s'", name);
        return NULL;
    }
    return PyCapsule_GetPointer(cap, name);
}

PyDoc_STRVAR(arrow_schema_doc,
             "_arrow_schema(obj)\n--\n\n"
             "Private helper of dfbuffer.schema: the Arrow schema of an "
             "Arrow PyCapsule\n"
             "producer as a dict {name, format, nullable, "
             "dictionary_ordered, metadata,\n"
             "dictionary, children, index_columns, pandas_index} "
             "(index_columns: the\n"
             "positions of the children that pandas' metadata marks as the "
             "index;\n"
             "pandas_index: that metadata's parsed index_columns, or None), "
             "without\n"
             "reading data.\n"
             "None when obj speaks no Arrow PyCapsule interface.");

/* _arrow_schema(obj).  Returns a new dict, None, or NULL with an
   exception set. */
static PyObject *
arrow_schema_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                PyObject *kwnames)
{
    static const char *const kw[] = {"obj", NULL};
    static const dfb_argspec spec = {"_arrow_schema", kw, 1, 1};
    PyObject *obj = NULL;
    if (dfb_parse_args(&spec, NULL, args, nargs, kwnames, &obj) < 0) {
        return NULL;
    }
    PyObject *cap = call_if_present(obj, "__arrow_c_schema__");
    PyObject *keep = NULL, *res = NULL;
    struct ArrowSchema own;
    const struct ArrowSchema *s = NULL;
    memset(&own, 0, sizeof(own));
    if (cap == NULL && PyErr_Occurred()) {
        return NULL;
    }
    if (cap != NULL) {
        s = capsule_ptr(cap, "arrow_schema");
        keep = cap;
    }
    else if ((cap = call_if_present(obj, "__arrow_c_stream__")) != NULL) {
        struct ArrowArrayStream *st = capsule_ptr(cap, "arrow_array_stream");
        if (st != NULL) {
            if (st->release == NULL || st->get_schema == NULL) {
                PyErr_SetString(PyExc_ValueError,
                                "the Arrow stream was released");
            }
            else if (st->get_schema(st, &own) != 0 || own.release == NULL) {
                const char *e =
                    st->get_last_error ? st->get_last_error(st) : NULL;
                PyErr_Format(PyExc_ValueError,
                             "the Arrow stream's get_schema failed: %s",
                             e ? e : "(no message)");
                memset(&own, 0, sizeof(own));
            }
            else {
                s = &own;
            }
        }
        keep = cap; /* its destructor releases the unconsumed stream */
    }
    else if (PyErr_Occurred()) {
        return NULL;
    }
    else if ((cap = call_if_present(obj, "__arrow_c_array__")) != NULL) {
        keep = cap;
        if (!PyTuple_Check(cap) || PyTuple_GET_SIZE(cap) != 2) {
            PyErr_SetString(PyExc_TypeError,
                            "__arrow_c_array__() must return a 2-tuple");
        }
        else {
            s = capsule_ptr(PyTuple_GET_ITEM(cap, 0), "arrow_schema");
        }
    }
    else if (PyErr_Occurred()) {
        return NULL;
    }
    else {
        Py_RETURN_NONE;
    }
    PyObject *keys[K_COUNT] = {NULL};
    int nkeys = 0;
    while (s != NULL && nkeys < K_COUNT &&
           (keys[nkeys] = PyUnicode_InternFromString(key_names[nkeys])) !=
               NULL) {
        nkeys++;
    }
    if (s != NULL && nkeys == K_COUNT) {
        res = describe_schema(s, 0, keys);
        if (res != NULL) {
            int64_t n = s->n_children;
            uint8_t *skip = PyMem_Calloc(n > 0 ? (size_t)n : 1, 1);
            PyObject *idx = skip ? PyList_New(0) : PyErr_NoMemory();
            PyObject *meta = idx == NULL ? NULL : pandas_index_columns(s);
            int r = meta == NULL ? -1 : mark_index_columns(s, meta, skip);
            if (meta != NULL &&
                PyDict_SetItemString(res, "pandas_index", meta) < 0) {
                r = -1;
            }
            Py_XDECREF(meta);
            for (int64_t c = 0; r > 0 && c < n; c++) {
                if (skip[c]) {
                    PyObject *ci = PyLong_FromLongLong(c);
                    if (ci == NULL || PyList_Append(idx, ci) < 0) {
                        r = -1;
                    }
                    Py_XDECREF(ci);
                }
            }
            PyMem_Free(skip);
            if (r < 0 || PyDict_SetItemString(res, "index_columns", idx) < 0) {
                Py_CLEAR(res);
            }
            Py_XDECREF(idx);
        }
    }
    for (int k = 0; k < nkeys; k++) {
        Py_DECREF(keys[k]);
    }
    if (own.release != NULL) {
        own.release(&own);
    }
    Py_XDECREF(keep);
    return res;
}

PyMethodDef dfb_schema_methods[] = {
    {"_arrow_schema", (PyCFunction)(void (*)(void))arrow_schema_py,
     METH_FASTCALL | METH_KEYWORDS, arrow_schema_doc},
    {NULL},
};

/* pandas_index_columns for pandas_fast.c (see arrow.h). */
PyObject *
dfb_arrow_pandas_index(const struct ArrowSchema *s)
{
    return pandas_index_columns(s);
}
