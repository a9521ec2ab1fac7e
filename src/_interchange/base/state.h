/* dfbuffer: the interface of state.c: the module definition and the state
 * accessors every file shares, and the NumPy C API table (this file imports
 * it).
 */
#ifndef DFBUFFER_STATE_H
#define DFBUFFER_STATE_H

#include "common.h"
#include "common.h"

/* the module definition (module.c fills in its slots at init). */
extern PyModuleDef dfb_module_def;

/* imports the NumPy C API table.  Returns 0, or -1 with an
   exception set.  Called once by module exec. */
int
dfb_numpy_import(void);

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

/* creates st->str and st->tup.  Returns 0, or -1 with an
   exception set (what was made so far stays for dfb_state_names_clear).
   Called once by module exec. */
int
dfb_state_names_init(dfb_state *st);

/* releases st->str and st->tup (idempotent).  Cannot fail. */
void
dfb_state_names_clear(dfb_state *st);

/* Stores interned strings of names[0..n) in out[0..n) (new references).
   Returns 0, or -1 with an exception set (the slots filled so far stay for
   the caller's clear function). */
int
dfb_intern_strings(PyObject **out, const char *const *names, int n);

/* drops a strong reference from any thread, with or
   without the GIL (the DLPack deleters and the Arrow export's release
   callback share it): takes the GIL with PyGILState_Ensure in normal
   operation; while the interpreter is finalizing, decrefs only if the
   calling thread holds the GIL and leaks otherwise (taking the GIL then can
   hang or end the thread); after finalization, leaks.  Never fails. */
void
dfb_decref_any_thread(PyObject *obj);

/* on 3.11/3.12 registers the atexit callback that tells
   dfb_decref_any_thread the interpreter is shutting down (3.13+ asks
   Py_IsFinalizing; nothing to do).  Called by module exec.  Returns 0, or
   -1 with an exception set. */
int
dfb_exit_watch_init(PyObject *module);

#endif /* DFBUFFER_STATE_H */
