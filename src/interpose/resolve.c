/* resolve.c — see interpose.h. */
#define _GNU_SOURCE
#include "interpose/interpose.h"
#include "core/log.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

void *unblock_dlsym_next(const char *name)
{
    if (unblock_tls.resolving)
        return NULL;
    unblock_tls.resolving = 1;
    void *p = dlsym(RTLD_NEXT, name);
    unblock_tls.resolving = 0;
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
    unblock_tls.resolving = 1;
    void *p = dlsym(RTLD_DEFAULT, name);
    unblock_tls.resolving = 0;
    return p != NULL ? p : dlsym_in(name, sonames);
}

#ifndef UNBLOCK_LINK_WRAP
/* `name` as the already loaded object `file` defines it (dlopen RTLD_NOLOAD: its
 * own definition first), or NULL. */
static void *dlsym_loaded(const char *file, const char *name)
{
    void *p = NULL;
    unblock_tls.resolving = 1;
    void *h = dlopen(file, RTLD_LAZY | RTLD_NOLOAD);
    if (h != NULL) {
        p = dlsym(h, name);
        dlclose(h); /* drops only the reference NOLOAD took */
    }
    unblock_tls.resolving = 0;
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
