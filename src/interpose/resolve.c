/* resolve.c — see interpose.h. */
#define _GNU_SOURCE
#include "interpose/interpose.h"
#include "core/log.h"

#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The test hook UNBLOCK_TEST_RESOLVE_SIGNAL=N: the first lookup made while
 * signal N has a handler sends N to this thread inside it (with the lookup's
 * signals held, the handler runs after it: tests/programs/resolvesig.c). */
static int test_signal = -1; /* -1: not read yet; 0: none, or sent */
static void resolve_test_signal(void)
{
    if (__builtin_expect(test_signal == 0, 1))
        return;
    if (test_signal < 0) {
        const char *e = getenv("UNBLOCK_TEST_RESOLVE_SIGNAL");
        test_signal = e ? atoi(e) : 0;
        if (test_signal <= 0 || test_signal >= _NSIG)
            test_signal = 0;
        if (test_signal == 0)
            return;
    }
    unsigned long act[4] = { 0 }; /* the kernel's sigaction: the handler first */
    if (syscall(SYS_rt_sigaction, test_signal, NULL, act, _NSIG / 8) == 0 &&
        act[0] > (unsigned long)SIG_IGN) {
        int sig = test_signal;
        test_signal = 0;
        syscall(SYS_tgkill, (pid_t)syscall(SYS_getpid), (pid_t)syscall(SYS_gettid), sig);
    }
}

/* A lookup runs with the thread's signals blocked (raw system calls: the
 * wrappers' own lookups come through here).  A handler that ran inside dlsym
 * and called a wrapper whose real function was not yet known found this
 * thread resolving, got NULL and jumped there (serial.writebehind.sigwrite,
 * 2-4 runs in 100 beside other tests: the program's first write resolved
 * while a timer's handler wrote); held, the handler runs after the lookup.
 * glibc's sigfillset leaves out the signals of its own threads' machinery. */
static void resolve_begin(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, old, _NSIG / 8);
    unblock_tls.resolving = 1;
    resolve_test_signal();
}

static void resolve_end(const sigset_t *old)
{
    unblock_tls.resolving = 0;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, _NSIG / 8);
}

void *unblock_dlsym_next(const char *name)
{
    if (unblock_tls.resolving)
        return NULL;
    sigset_t old;
    resolve_begin(&old);
    void *p = dlsym(RTLD_NEXT, name);
    resolve_end(&old);
    return p;
}

static void *dlsym_in(const char *name, const char *sonames);

void *unblock_dlsym_next_or_in(const char *name, const char *sonames)
{
    void *p = unblock_dlsym_next(name);
    return p != NULL ? p : dlsym_in(name, sonames);
}

void *unblock_dlsym_data(const char *name, const char *sonames)
{
    if (unblock_tls.resolving)
        return NULL;
    sigset_t old;
    resolve_begin(&old);
    void *p = dlsym(RTLD_DEFAULT, name);
    resolve_end(&old);
    return p != NULL ? p : dlsym_in(name, sonames);
}

#ifndef UNBLOCK_LINK_WRAP
/* `name` as the already loaded object `file` defines it (dlopen RTLD_NOLOAD: its
 * own definition first), or NULL. */
static void *dlsym_loaded(const char *file, const char *name)
{
    void *p = NULL;
    sigset_t old;
    resolve_begin(&old);
    void *h = dlopen(file, RTLD_LAZY | RTLD_NOLOAD);
    if (h != NULL) {
        p = dlsym(h, name);
        dlclose(h); /* drops only the reference NOLOAD took */
    }
    resolve_end(&old);
    return p;
}

struct scan {
    const char *part, *name;
    void *p;
};

static int scan_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct scan *s = data;
    if (info->dlpi_name == NULL || strstr(info->dlpi_name, s->part) == NULL)
        return 0;
    s->p = dlsym_loaded(info->dlpi_name, s->name);
    return s->p != NULL;
}
#endif

void *unblock_dlsym_in_object(const char *name, const char *part)
{
#ifdef UNBLOCK_LINK_WRAP
    (void)name, (void)part;
    return NULL;
#else
    if (unblock_tls.resolving)
        return NULL;
    struct scan s = { part, name, NULL };
    dl_iterate_phdr(scan_object, &s);
    return s.p;
#endif
}

static void *dlsym_in(const char *name, const char *sonames)
{
    void *p = NULL;
#ifdef UNBLOCK_LINK_WRAP
    /* Linked into the program: nothing is loaded RTLD_LOCAL behind our back, and a
     * static program cannot dlopen. */
    (void)sonames;
    return p;
#else
    if (sonames == NULL)
        return NULL;
    char buf[256];
    const char *s = sonames;
    while (*s) {
        const char *end = strchr(s, ':');
        size_t n = end ? (size_t)(end - s) : strlen(s);
        if (n > 0 && n < sizeof(buf)) {
            memcpy(buf, s, n);
            buf[n] = '\0';
            if ((p = dlsym_loaded(buf, name)) != NULL)
                return p;
        }
        if (!end)
            break;
        s = end + 1;
    }
    return NULL;
#endif
}

void *unblock_real_libc(const char *name)
{
    void *p = unblock_dlsym_next(name);
    if (p == NULL && !unblock_tls.resolving) {
        unblock_log(UNBLOCK_LOG_ERROR, "cannot find the C library's %s; aborting", name);
        abort();
    }
    return p;
}
