/* interpose.h — finding the real definition of a symbol we wrap.
 *
 * A wrapper forwards to the *next* definition of its own name (dlsym RTLD_NEXT), so
 * another preloaded tool behind us still sees the call.  When the next definition
 * lives in a library loaded RTLD_LOCAL (mpi4py loads libmpi that way), RTLD_NEXT
 * finds nothing; we then look in the already loaded library by soname
 * (dlopen RTLD_NOLOAD, which never loads anything new).  The library never has a
 * direct reference to MPI, so it loads into any process (a shell, mpirun). */
#ifndef UNBLOCK_INTERPOSE_H
#define UNBLOCK_INTERPOSE_H

#include "core/core.h"

/* The next definition of `name` after this library, or NULL.  Re-entry from inside
 * dlsym on the same thread returns NULL instead of recursing. */
void *unblock_dlsym_next(const char *name);

/* The next definition, else the one in the first of the ':'-separated `sonames`
 * that is already loaded, else NULL. */
void *unblock_dlsym_next_or_in(const char *name, const char *sonames);

/* `name` as defined by the first loaded object whose path contains `part` (its
 * own definition, also where this library's shadows it), or NULL: for a
 * library whose soname changes with its version. */
void *unblock_dlsym_in_object(const char *name, const char *part);

/* The address of the data object `name` as the program uses it: the global scope
 * first, because a program that references it gets a copy relocation and the
 * library's own copy is then unused; else the first loaded library of `sonames`. */
void *unblock_dlsym_data(const char *name, const char *sonames);

/* Like unblock_dlsym_next but never NULL: a libc symbol that cannot be found is a
 * broken installation, reported once, then the process aborts. */
void *unblock_real_libc(const char *name);

#ifdef UNBLOCK_LINK_WRAP
/* The link-time variant (ld --wrap=X): the program's references to X reach
 * __wrap_X, and __real_X is the original.  No lookup at run time. */
#define UNBLOCK_WRAP(name) __wrap_##name
#define UNBLOCK_REAL_DECL(ret, name, params) \
    typedef ret(*unblock_real_##name##_t) params; \
    extern ret __real_##name params
#define UNBLOCK_REAL(name) (__real_##name)
#define UNBLOCK_REAL_IF_KNOWN(name) (__real_##name)
#define UNBLOCK_REAL_KNOWN(real) ((void)(real), 1)
#else
/* The preloaded library: a wrapper has the symbol's own name. */
#define UNBLOCK_WRAP(name) name

/* Declares the pointer type and cache of the real `name` with signature `params`. */
#define UNBLOCK_REAL_DECL(ret, name, params) \
    typedef ret(*unblock_real_##name##_t) params; \
    static unblock_real_##name##_t unblock_real_##name

/* The real `name` as resolved so far (NULL before its first call), for a path
 * that calls nothing else: it leaves the lookup to a path that may make it. */
#define UNBLOCK_REAL_IF_KNOWN(name) (unblock_real_##name)
#define UNBLOCK_REAL_KNOWN(real) ((real) != NULL)

/* The real libc `name`, resolved once (a benign race: both threads store the same). */
#define UNBLOCK_REAL(name) \
    ({ \
        unblock_real_##name##_t real_ = unblock_real_##name; \
        if (unblock_unlikely(real_ == NULL)) \
            real_ = unblock_real_##name = (unblock_real_##name##_t)unblock_real_libc(#name); \
        real_; \
    })
#endif

#endif
