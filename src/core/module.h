/* module.h — how the core knows the runtime's modules: only by the tables of hooks
 * they register (as Darshan's core knows its modules by the records they register).
 *
 * A module (memory, protect, fileio, comm, mpiio, ...) declares one table with
 * UNBLOCK_MODULE(); the linker gathers every table into the section
 * "unblock_modules", and the core walks that section.  No module is named here,
 * and no core file includes a module's header: the core calls only these hooks.
 *
 * Order.  Each table carries `order` (the UNBLOCK_ORDER_* layer below); the core
 * calls the hooks of the lower layers first at start-up, in the fork parent and
 * child, and in the report, and those of the higher layers first on the way down
 * (fork prepare, quiesce, exit, exec and fatal drains): what the program sees as
 * "in flight" is finished from the top (messages, then file blocks), and the
 * memory module, which copies the heap for a fork child holding the heap lock,
 * prepares last and reopens first, as pthread_atfork's own order would have it.
 *
 * Every hook is optional (NULL).  The fatal-signal drain is called from a signal
 * handler and must be async-signal-safe; so is walking the tables (a static
 * array). */
#ifndef UNBLOCK_MODULE_H
#define UNBLOCK_MODULE_H

#include "core/core.h"

#include <stdarg.h>

/* The layers, lowest first.  A module may call only modules of lower layers
 * directly (scripts/folder-graph checks it); upward calls go through these hooks
 * or through hook pointers the upper module installs in the lower one. */
enum {
    UNBLOCK_ORDER_MEMORY = 10,
    UNBLOCK_ORDER_PROTECT = 20,
    UNBLOCK_ORDER_PROGRESS = 30,
    UNBLOCK_ORDER_FILEIO = 40,
    UNBLOCK_ORDER_COMM = 50,
    UNBLOCK_ORDER_MPIIO = 60,
};

/* The per-process report being written (stats.c): a module's `stats` hook adds
 * its top-level members with unblock_emit, each ending in ",\n". */
typedef struct unblock_emitter unblock_emitter_t;
void unblock_emit(unblock_emitter_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* `s` if it may stand inside a JSON string as it is, else "?". */
const char *unblock_json_safe(const char *s);

/* One line `"key": value,` per counter, at the given indent, in table order. */
typedef struct {
    const char *key;
    const unblock_counter_t *c;
} unblock_stat_key_t;
void unblock_emit_counters(unblock_emitter_t *e, const char *indent, const unblock_stat_key_t *keys,
                           unsigned n);

typedef struct unblock_module {
    const char *name;
    int order;
    /* In the constructor of the program's process (after options and role), and
     * only where the process is accelerated. */
    void (*init)(void);
    /* pthread_atfork's three, for every fork (also of pass-through processes). */
    void (*fork_prepare)(void);
    void (*fork_parent)(void);
    void (*fork_child)(void);
    /* Before the process is copied, replaced or ended (fork, exec, system, exit):
     * nothing of the program may stay in flight. */
    void (*quiesce)(void);
    /* At exit (destructor, _exit): write out what is buffered; report errors the
     * program never consumed. */
    void (*exit_drain)(void);
    /* Before an exec replaces the process (not a vfork child's), after quiesce:
     * write what nothing else would write once the process is gone (the exec
     * may still fail: the program then goes on). */
    void (*exec_drain)(void);
    /* A fatal signal at its default action: write what is buffered, now.
     * Async-signal-safe. */
    void (*fatal_drain)(void);
    /* Its part of the per-process report. */
    void (*stats)(unblock_emitter_t *e);
} unblock_module_t;

/* Declares the module table `var`; the initialiser follows:
 *   UNBLOCK_MODULE(fileio_module) = { .name = "fileio", .order = ..., ... }; */
#define UNBLOCK_MODULE(var) \
    __attribute__((used, section("unblock_modules"), aligned(sizeof(void *)))) \
    const unblock_module_t var

/* The hooks of every module, in the order described above. */
void unblock_modules_init(void);
void unblock_modules_quiesce(void);
void unblock_modules_exit_drain(void);
void unblock_modules_exec_drain(void);
void unblock_modules_fatal_drain(void); /* async-signal-safe */
void unblock_modules_stats(unblock_emitter_t *e);
/* Installs the fork hooks (pthread_atfork) once; the memory module calls it as
 * early as it can (its first allocation), so that handlers registered after it
 * prepare before it and reopen after it. */
void unblock_modules_atfork(void);

#endif
