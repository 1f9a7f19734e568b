/* module.c — walks the module tables (module.h) that the linker gathered into the
 * section "unblock_modules".  Owns nothing but the order in which they are called;
 * calls nothing outside core/ except the hooks themselves. */
#define _GNU_SOURCE
#include "core/module.h"

#include <pthread.h>

/* The linker defines these for a section whose name is a C identifier.  Weak and
 * hidden: a build without any module (none today) sees an empty range. */
extern const unblock_module_t __start_unblock_modules[] __attribute__((weak, visibility("hidden")));
extern const unblock_module_t __stop_unblock_modules[] __attribute__((weak, visibility("hidden")));

#define MODULES_MAX 16

/* The tables sorted by order, lowest first: filled once, by the first caller
 * (the constructor, or the memory module's first allocation before it), on one
 * thread: the process has no other thread yet at either point. */
static const unblock_module_t *sorted[MODULES_MAX];
static unsigned nsorted;
static int sorted_done;

static void sort_modules(void)
{
    if (__atomic_load_n(&sorted_done, __ATOMIC_ACQUIRE))
        return;
    unsigned n = 0;
    for (const unblock_module_t *m = __start_unblock_modules; m && m < __stop_unblock_modules;
         m++) {
        if (n == MODULES_MAX)
            break;
        unsigned j = n++;
        while (j > 0 && sorted[j - 1]->order > m->order) {
            sorted[j] = sorted[j - 1];
            j--;
        }
        sorted[j] = m;
    }
    nsorted = n;
    __atomic_store_n(&sorted_done, 1, __ATOMIC_RELEASE);
}

/* Calls hook `h` of every module, lowest order first (up) or last (down). */
#define CALL_UP(h) \
    do { \
        sort_modules(); \
        for (unsigned i_ = 0; i_ < nsorted; i_++) \
            if (sorted[i_]->h) \
                sorted[i_]->h(); \
    } while (0)
#define CALL_DOWN(h) \
    do { \
        sort_modules(); \
        for (unsigned i_ = nsorted; i_-- > 0;) \
            if (sorted[i_]->h) \
                sorted[i_]->h(); \
    } while (0)

void unblock_modules_init(void) { CALL_UP(init); }
void unblock_modules_quiesce(void) { CALL_DOWN(quiesce); }
void unblock_modules_exit_drain(void) { CALL_DOWN(exit_drain); }
void unblock_modules_exec_drain(void) { CALL_DOWN(exec_drain); }

void unblock_modules_fatal_drain(void)
{
    /* From a signal handler: the tables were sorted in the constructor. */
    if (!__atomic_load_n(&sorted_done, __ATOMIC_ACQUIRE))
        return;
    for (unsigned i = nsorted; i-- > 0;)
        if (sorted[i]->fatal_drain)
            sorted[i]->fatal_drain();
}

void unblock_modules_stats(unblock_emitter_t *e)
{
    sort_modules();
    for (unsigned i = 0; i < nsorted; i++)
        if (sorted[i]->stats)
            sorted[i]->stats(e);
}

static void fork_prepare(void) { CALL_DOWN(fork_prepare); }
static void fork_parent(void) { CALL_UP(fork_parent); }

static void fork_child(void)
{
    CALL_UP(fork_child);
    unblock_core_fork_child();
}

void unblock_modules_atfork(void)
{
    static int installed;
    if (__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL))
        return;
    sort_modules();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}
