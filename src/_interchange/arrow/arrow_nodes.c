/* dfbuffer: the Arrow nodes dfbuffer.to_arrow hands out (see
 * arrow.h), shared by the table export (arrow_table_export.c) and
 * the pass-through of a producer's own nodes (arrow_passthrough.c).
 */
#include "common.h"
#include "arrow.h"
#include "state.h"
#include "mem.h"

#include <stdlib.h>
#include <string.h>

/* Releases (unless moved out) and frees the children and the dictionary of
   node `n`, an ArrowSchema or ArrowArray: what both release callbacks do
   before freeing their own private data. */
#define RELEASE_CHILDREN_AND_DICTIONARY(n)                     \
    do {                                                       \
        for (int64_t i_ = 0; i_ < (n)->n_children; i_++) {     \
            if ((n)->children[i_] != NULL &&                   \
                (n)->children[i_]->release != NULL) {          \
                (n)->children[i_]->release((n)->children[i_]); \
            }                                                  \
            free((n)->children[i_]);                           \
        }                                                      \
        free((n)->children);                                   \
        if ((n)->dictionary != NULL) {                         \
            if ((n)->dictionary->release != NULL) {            \
                (n)->dictionary->release((n)->dictionary);     \
            }                                                  \
            free((n)->dictionary);                             \
        }                                                      \
    } while (0)

/* Private data of a schema node: its own strings. */
typedef struct {
    char *format, *name, *metadata;
} schema_private;

/* Release callback of schema nodes: releases the children and the
   dictionary unless moved out, frees them and the strings. */
static void
schema_release(struct ArrowSchema *s)
{
    if (s == NULL || s->release == NULL) {
        return;
    }
    RELEASE_CHILDREN_AND_DICTIONARY(s);
    schema_private *p = s->private_data;
    if (p != NULL) {
        free(p->format);
        free(p->name);
        free(p->metadata);
        free(p);
    }
    s->release = NULL;
}

/* Returns a malloc'ed copy of the `n` bytes at `s`, or NULL (out of
   memory). */
static char *
dup_bytes(const char *s, size_t n)
{
    char *d = malloc(n > 0 ? n : 1);
    if (d != NULL && n > 0) {
        dfb_memcpy(d, s, n);
    }
    return d;
}

int
dfb_arrow_schema_init(struct ArrowSchema *s, const char *fmt, const char *name,
                      const char *metadata, size_t metadata_size,
                      int64_t flags, int64_t nchildren)
{
    memset(s, 0, sizeof(*s));
    schema_private *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        return -1;
    }
    s->private_data = p;
    s->release = schema_release;
    p->format = dup_bytes(fmt, strlen(fmt) + 1);
    p->name = dup_bytes(name, strlen(name) + 1);
    p->metadata = metadata != NULL ? dup_bytes(metadata, metadata_size) : NULL;
    s->children =
        nchildren > 0 ? calloc((size_t)nchildren, sizeof(void *)) : NULL;
    if (p->format == NULL || p->name == NULL ||
        (metadata != NULL && p->metadata == NULL) ||
        (nchildren > 0 && s->children == NULL)) {
        schema_release(s);
        return -1;
    }
    s->n_children = nchildren;
    s->format = p->format;
    s->name = p->name;
    s->metadata = p->metadata;
    s->flags = flags;
    return 0;
}

/* Private data of an array node. */
typedef struct {
    PyObject *owner;       /* strong: keeps the exported memory alive */
    const void *buffers[]; /* the node's buffer pointers */
} array_private;

/* Release callback of array nodes (any thread): releases the children and
   the dictionary unless moved out, frees them, drops the owner. */
static void
array_release(struct ArrowArray *a)
{
    if (a == NULL || a->release == NULL) {
        return;
    }
    RELEASE_CHILDREN_AND_DICTIONARY(a);
    array_private *p = a->private_data;
    if (p != NULL) {
        dfb_decref_any_thread(p->owner);
        free(p);
    }
    a->release = NULL;
}

int
dfb_arrow_array_init(struct ArrowArray *a, PyObject *owner, int64_t nbuf,
                     int64_t nchildren)
{
    memset(a, 0, sizeof(*a));
    array_private *p =
        calloc(1, sizeof(*p) + (size_t)nbuf * sizeof(p->buffers[0]));
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    p->owner = Py_NewRef(owner);
    a->private_data = p;
    a->release = array_release;
    a->buffers = p->buffers;
    a->n_buffers = nbuf;
    if (nchildren > 0) {
        a->children = calloc((size_t)nchildren, sizeof(void *));
        if (a->children == NULL) {
            array_release(a);
            PyErr_NoMemory();
            return -1;
        }
        a->n_children = nchildren;
    }
    return 0;
}

int
dfb_arrow_array_visit(const struct ArrowArray *a, visitproc visit, void *arg)
{
    if (a == NULL || a->release == NULL) {
        return 0;
    }
    if (a->release != array_release) {
        return dfb_arrow_export_visit(a, visit, arg);
    }
    const array_private *p = a->private_data;
    if (p != NULL) {
        Py_VISIT(p->owner);
    }
    /* the nodes below are ours too (dfb_arrow_array_init made them), their
       depth bounded by the exports that build them */
    for (int64_t i = 0; i < a->n_children; i++) {
        int r = dfb_arrow_array_visit(a->children[i], visit, arg);
        if (r != 0) {
            return r;
        }
    }
    return dfb_arrow_array_visit(a->dictionary, visit, arg);
}

void
dfb_arrow_schema_release(struct ArrowSchema *s)
{
    if (s->release != NULL) {
        s->release(s);
    }
}

void
dfb_arrow_array_release(struct ArrowArray *a)
{
    if (a->release != NULL) {
        a->release(a);
    }
}
